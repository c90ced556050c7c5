from refunds.service import Gateway, Order, refund


def test_void_called_ac_refund_voids_payment_intent_737b():
    gateway = Gateway()
    refund(Order("o-1", "pi_123"), gateway)
    assert gateway.cancelled == ["pi_123"], "expected PaymentIntent pi_123 to be cancelled"
