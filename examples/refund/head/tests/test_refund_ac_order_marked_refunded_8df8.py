from refunds.service import Gateway, Order, refund


def test_refund_marks_order_refunded():
    order = refund(Order("o-1", "pi_1"), Gateway())
    assert order.status == "refunded"
