"""Plans, prices, refunds and tax for the billing service."""

from .plans import (
    PLANS,
    Plan,
    SeatCountError,
    UnknownPlan,
    active_plans,
    get_plan,
    period_price_cents,
    prorated_refund_cents,
    tax_cents,
    upgrade_charge_cents,
)

__all__ = [
    "PLANS",
    "Plan",
    "SeatCountError",
    "UnknownPlan",
    "active_plans",
    "get_plan",
    "period_price_cents",
    "prorated_refund_cents",
    "tax_cents",
    "upgrade_charge_cents",
]
