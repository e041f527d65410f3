"""Discount codes: a percentage off, or a fixed amount off above a minimum spend."""

from __future__ import annotations

from dataclasses import dataclass

from .cart import Cart, parse_money


@dataclass(frozen=True)
class Discount:
    code: str
    percent: int = 0
    amount_off: int = 0  # cents
    minimum_spend: int = 0  # cents

    def apply(self, cart: Cart) -> int:
        """How many cents this discount takes off the cart (never more than the subtotal)."""
        subtotal = cart.subtotal()
        if subtotal < self.minimum_spend:
            return 0
        off = subtotal * self.percent // 100 + self.amount_off
        return min(off, subtotal)


def parse_discount(spec: str) -> Discount:
    """Parse admin-panel specs like "SPRING10: 10%" or "BIGSPEND: $15 over $100"."""
    code, _, rule = spec.partition(":")
    code, rule = code.strip().upper(), rule.strip()
    if not code or not rule:
        raise ValueError(f"bad discount spec: {spec!r}")
    if rule.endswith("%"):
        return Discount(code, percent=int(rule[:-1]))
    amount, _, minimum = rule.partition(" over ")
    return Discount(
        code,
        amount_off=parse_money(amount),
        minimum_spend=parse_money(minimum) if minimum else 0,
    )
