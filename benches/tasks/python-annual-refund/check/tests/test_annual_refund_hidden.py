import unittest

from billing import PLANS, period_price_cents, prorated_refund_cents, upgrade_charge_cents


class AnnualRefundTest(unittest.TestCase):
    def test_team_annual_after_100_days(self):
        # 4 seats x $150.00 = $600.00 paid; 265 of 365 days unused.
        self.assertEqual(prorated_refund_cents("team-annual", 4, 100), 60000 * 265 // 365)
        self.assertEqual(prorated_refund_cents("team-annual", 4, 100), 43561)

    def test_whole_year(self):
        self.assertEqual(prorated_refund_cents("starter-annual", 1, 0), 9000)
        self.assertEqual(prorated_refund_cents("starter-annual", 3, 365), 0)

    def test_late_cancellation_is_allowed(self):
        # 20 seats x $290.00 = $5,800.00 paid.
        for days in (357, 360, 364):
            with self.subTest(days=days):
                self.assertEqual(
                    prorated_refund_cents("business-annual", 20, days),
                    580000 * (365 - days) // 365,
                )

    def test_past_the_year_is_rejected(self):
        with self.assertRaises(ValueError):
            prorated_refund_cents("team-annual", 2, 366)
        with self.assertRaises(ValueError):
            prorated_refund_cents("team-annual", 2, -1)

    def test_every_annual_plan_uses_a_365_day_year(self):
        for code, plan in sorted(PLANS.items()):
            if plan.interval != "annual":
                continue
            seats = plan.min_seats
            paid = period_price_cents(code, seats)
            for days in (0, 1, 180, 300, 365):
                self.assertEqual(
                    prorated_refund_cents(code, seats, days),
                    paid * (365 - days) // 365,
                    f"{code} after {days} days",
                )

    def test_monthly_unchanged(self):
        self.assertEqual(prorated_refund_cents("team-monthly", 4, 10), 4000)
        self.assertEqual(prorated_refund_cents("team-monthly", 4, 30), 0)
        with self.assertRaises(ValueError):
            prorated_refund_cents("team-monthly", 4, 31)

    def test_annual_upgrade(self):
        # starter-annual $90/seat -> team-annual $150/seat, 2 seats, 73 days in:
        # (30000 - 18000) * 292 / 365 = 9600
        self.assertEqual(upgrade_charge_cents("starter-annual", "team-annual", 2, 73), 9600)


if __name__ == "__main__":
    unittest.main()
