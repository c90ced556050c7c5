"""A tiny refund service: the code the example change edits."""


class Gateway:
    """Records calls to the payment provider."""

    def __init__(self):
        self.cancelled = []

    def cancel_payment_intent(self, intent_id):
        self.cancelled.append(intent_id)


class Order:
    def __init__(self, order_id, intent_id):
        self.order_id = order_id
        self.intent_id = intent_id
        self.status = "paid"


def refund(order, gateway):
    """Refunds an order: marks it refunded.

    The change claims to void the PaymentIntent too, but forgot to call the gateway.
    """
    order.status = "refunded"
    return order
