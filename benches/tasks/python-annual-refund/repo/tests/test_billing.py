import unittest

from billing import (
    PLANS,
    SeatCountError,
    UnknownPlan,
    active_plans,
    get_plan,
    period_price_cents,
    prorated_refund_cents,
    tax_cents,
    upgrade_charge_cents,
)
from billing.plans import TAX_RATES


class CatalogueTest(unittest.TestCase):
    def test_codes_match_keys(self):
        for code, plan in PLANS.items():
            self.assertEqual(code, plan.code)
            self.assertIn(plan.interval, ("monthly", "annual"))

    def test_unknown_plan(self):
        with self.assertRaises(UnknownPlan):
            get_plan("platinum-monthly")

    def test_active_plans_skip_legacy(self):
        self.assertTrue(all(not p.legacy for p in active_plans("annual")))
        self.assertIn(get_plan("team-annual"), active_plans("annual"))


class PriceTest(unittest.TestCase):
    def test_plain_price(self):
        self.assertEqual(period_price_cents("team-monthly", 4), 6000)

    def test_volume_discount(self):
        self.assertEqual(period_price_cents("business-monthly", 100), 261000)

    def test_seat_limits(self):
        with self.assertRaises(SeatCountError):
            period_price_cents("starter-monthly", 6)


class RefundTest(unittest.TestCase):
    def test_monthly_refund(self):
        # 4 seats of team-monthly cost $60.00; 10 of 30 days used leaves 2/3.
        self.assertEqual(prorated_refund_cents("team-monthly", 4, 10), 4000)

    def test_nothing_used_is_full_refund(self):
        self.assertEqual(prorated_refund_cents("starter-monthly", 1, 0), 900)

    def test_monthly_upgrade(self):
        self.assertEqual(upgrade_charge_cents("starter-monthly", "team-monthly", 2, 15), 600)


class TaxTest(unittest.TestCase):
    def test_unknown_region_is_untaxed(self):
        self.assertEqual(tax_cents(10000, "XX-01"), 0)

    def test_rounds_half_up(self):
        region = next(code for code, rate in TAX_RATES.items() if rate == "7.50")
        self.assertEqual(tax_cents(1010, region), 76)


if __name__ == "__main__":
    unittest.main()
