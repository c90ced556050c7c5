from refunds.service import Order


def test_new_order_is_paid():
    assert Order("o-1", "pi_1").status == "paid"
