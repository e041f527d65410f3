"""Plain-text invoices for the order confirmation email."""

from __future__ import annotations

from typing import Optional

from .cart import Cart, format_money
from .discounts import Discount

TAX_RATE_PERCENT = 8


def invoice_lines(cart: Cart, discount: Optional[Discount] = None) -> list[str]:
    lines = []
    for line in cart.lines:
        lines.append(f"{line.sku:<12} {line.quantity:>3} x {format_money(line.unit_price):>10}  {format_money(line.total):>11}")
    subtotal = cart.subtotal()
    off = discount.apply(cart) if discount else 0
    taxable = subtotal - off
    tax = (taxable * TAX_RATE_PERCENT + 50) // 100
    lines.append(f"{'Subtotal':<30} {format_money(subtotal):>11}")
    if off:
        lines.append(f"{'Discount ' + discount.code:<30} {format_money(-off):>11}")
    lines.append(f"{'Tax':<30} {format_money(tax):>11}")
    lines.append(f"{'Total':<30} {format_money(taxable + tax):>11}")
    return lines


def render_invoice(cart: Cart, discount: Optional[Discount] = None) -> str:
    return "\n".join(invoice_lines(cart, discount)) + "\n"
