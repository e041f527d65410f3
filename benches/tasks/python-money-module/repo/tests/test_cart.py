import unittest

from shop.cart import Cart, format_money, parse_money


class MoneyTest(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_money("$1,234.50"), 123450)
        self.assertEqual(parse_money("12"), 1200)
        self.assertEqual(parse_money("0.015"), 2)
        self.assertEqual(parse_money("-3.5"), -350)
        self.assertEqual(parse_money("$-3.50"), -350)

    def test_parse_rejects_junk(self):
        for text in ("", "$", "abc", "1.2.3"):
            with self.subTest(text=text):
                with self.assertRaises(ValueError):
                    parse_money(text)

    def test_format(self):
        self.assertEqual(format_money(123450), "$1,234.50")
        self.assertEqual(format_money(5), "$0.05")
        self.assertEqual(format_money(-350), "-$3.50")


class CartTest(unittest.TestCase):
    def test_add_merges_same_sku_and_price(self):
        cart = Cart()
        cart.add("MUG", "$9.50")
        cart.add("MUG", 950, quantity=2)
        self.assertEqual(len(cart.lines), 1)
        self.assertEqual(cart.subtotal(), 2850)

    def test_describe(self):
        cart = Cart()
        cart.add("POSTER", "$1,200")
        self.assertEqual(cart.describe(), "1 line(s), $1,200.00")
