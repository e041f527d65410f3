import { formatMoney, invoiceTotals, lineTotal } from "./invoice.ts";
import type { Invoice } from "./invoice.ts";

const WIDTH = 56;

function row(left: string, right: string): string {
  const gap = Math.max(1, WIDTH - left.length - right.length);
  return left + " ".repeat(gap) + right;
}

/** Renders an invoice as fixed-width plain text, for emails and the CLI. */
export function renderInvoice(invoice: Invoice): string {
  const money = (amount: number) => formatMoney(amount, invoice.currency);
  const totals = invoiceTotals(invoice);
  const lines = [
    `INVOICE ${invoice.number}`,
    `Customer: ${invoice.customer}`,
    `Issued:   ${invoice.issuedOn}`,
    "-".repeat(WIDTH),
  ];
  for (const item of invoice.items) {
    lines.push(row(`${item.quantity} x ${item.description}`, money(lineTotal(item))));
  }
  lines.push("-".repeat(WIDTH));
  lines.push(row("Subtotal", money(totals.subtotal)));
  if (totals.discount > 0) {
    lines.push(row("Discount", money(-totals.discount)));
  }
  lines.push(row(`Tax (${Math.round(invoice.taxRate * 10000) / 100}%)`, money(totals.tax)));
  lines.push(row("Total", money(totals.total)));
  return lines.join("\n") + "\n";
}
