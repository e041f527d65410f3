import unittest

from shop.cart import Cart
from shop.discounts import parse_discount
from shop.invoice import render_invoice


class InvoiceTest(unittest.TestCase):
    def test_invoice_with_discount(self):
        cart = Cart()
        cart.add("MUG", "$9.50", quantity=2)
        cart.add("TEAPOT", "$42.00")
        text = render_invoice(cart, parse_discount("spring10: 10%"))
        totals = {}
        for line in text.splitlines()[2:]:
            label, amount = line.rsplit(None, 1)
            totals[label.strip()] = amount
        self.assertEqual(
            totals,
            {
                "Subtotal": "$61.00",
                "Discount SPRING10": "-$6.10",
                "Tax": "$4.39",
                "Total": "$59.29",
            },
        )
        self.assertTrue(text.startswith("MUG            2 x      $9.50       $19.00\n"))

    def test_fixed_discount_needs_minimum_spend(self):
        cart = Cart()
        cart.add("MUG", "$9.50")
        discount = parse_discount("BIGSPEND: $15 over $100")
        self.assertEqual(discount.apply(cart), 0)
        cart.add("LAMP", "$120")
        self.assertEqual(discount.apply(cart), 1500)
