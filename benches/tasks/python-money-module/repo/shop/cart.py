"""The shopping cart, plus the helpers that turn money strings into cents and back."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation


def parse_money(text: str) -> int:
    """Parse "$1,234.50", "12", "-3.5" or "$-3.50" into integer cents."""
    cleaned = text.strip().replace(",", "").replace(" ", "")
    negative = cleaned.startswith("-")
    cleaned = cleaned.lstrip("-").lstrip("$").lstrip("-")
    if not cleaned:
        raise ValueError(f"not an amount: {text!r}")
    try:
        amount = Decimal(cleaned)
    except InvalidOperation:
        raise ValueError(f"not an amount: {text!r}") from None
    cents = int((amount * 100).quantize(Decimal("1"), rounding=ROUND_HALF_UP))
    return -cents if negative or text.strip().startswith("$-") else cents


def format_money(cents: int) -> str:
    """Format integer cents as "$1,234.50" (negative amounts as "-$3.50")."""
    sign = "-" if cents < 0 else ""
    dollars, rest = divmod(abs(cents), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


@dataclass
class Line:
    sku: str
    unit_price: int  # cents
    quantity: int = 1

    @property
    def total(self) -> int:
        return self.unit_price * self.quantity


@dataclass
class Cart:
    lines: list[Line] = field(default_factory=list)

    def add(self, sku: str, price: str | int, quantity: int = 1) -> Line:
        if quantity < 1:
            raise ValueError("quantity must be positive")
        unit_price = parse_money(price) if isinstance(price, str) else price
        for line in self.lines:
            if line.sku == sku and line.unit_price == unit_price:
                line.quantity += quantity
                return line
        line = Line(sku, unit_price, quantity)
        self.lines.append(line)
        return line

    def subtotal(self) -> int:
        return sum(line.total for line in self.lines)

    def describe(self) -> str:
        return f"{len(self.lines)} line(s), {format_money(self.subtotal())}"
