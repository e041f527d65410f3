import ast
import importlib
import unittest
from pathlib import Path

import shop

MONEY_HELPERS = {"parse_money", "format_money"}
PACKAGE_DIR = Path(shop.__file__).resolve().parent


class MoneyModuleTest(unittest.TestCase):
    def test_helpers_live_in_shop_money(self):
        from shop.money import format_money, parse_money

        self.assertEqual(parse_money("$1,234.50"), 123450)
        self.assertEqual(parse_money(" 7 "), 700)
        self.assertEqual(parse_money("0.015"), 2)
        self.assertEqual(parse_money("-3.5"), -350)
        self.assertEqual(parse_money("$-3.50"), -350)
        for junk in ("", "$", "abc", "1.2.3"):
            with self.assertRaises(ValueError):
                parse_money(junk)
        self.assertEqual(format_money(123450), "$1,234.50")
        self.assertEqual(format_money(0), "$0.00")
        self.assertEqual(format_money(-350), "-$3.50")
        self.assertEqual(format_money(100000000), "$1,000,000.00")

    def test_defined_once_in_money_module(self):
        definitions = {}
        for path in PACKAGE_DIR.rglob("*.py"):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in MONEY_HELPERS:
                    definitions.setdefault(node.name, []).append(path.relative_to(PACKAGE_DIR).as_posix())
        self.assertEqual(definitions, {"parse_money": ["money.py"], "format_money": ["money.py"]})

    def test_other_modules_use_the_same_functions(self):
        money = importlib.import_module("shop.money")
        for name in ("shop.cart", "shop.discounts", "shop.invoice"):
            module = importlib.import_module(name)
            for helper in MONEY_HELPERS:
                if hasattr(module, helper):
                    self.assertIs(getattr(module, helper), getattr(money, helper), f"{name}.{helper}")


class BehaviourKeptTest(unittest.TestCase):
    def test_cart_and_invoice(self):
        from shop.cart import Cart
        from shop.discounts import parse_discount
        from shop.invoice import render_invoice

        cart = Cart()
        cart.add("MUG", "$9.50", quantity=2)
        cart.add("LAMP", "$1,120")
        self.assertEqual(cart.subtotal(), 113900)
        self.assertEqual(cart.describe(), "2 line(s), $1,139.00")
        discount = parse_discount("bigspend: $15 over $100")
        self.assertEqual((discount.amount_off, discount.minimum_spend), (1500, 10000))
        text = render_invoice(cart, discount)
        self.assertIn("-$15.00", text)
        self.assertIn("$1,139.00", text)
        self.assertTrue(text.rstrip().endswith("$1,213.92"))


if __name__ == "__main__":
    unittest.main()
