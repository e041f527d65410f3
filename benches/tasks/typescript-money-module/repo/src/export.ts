import { formatMoney, lineTotal, parseMoney } from "./invoice.ts";
import type { Currency, Invoice, LineItem } from "./invoice.ts";

function csvField(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

/** One CSV row per line item, with the amounts formatted for spreadsheets. */
export function invoiceToCsv(invoice: Invoice): string {
  const header = "invoice,sku,description,quantity,unit_price,line_total";
  const rows = invoice.items.map((item) =>
    [
      invoice.number,
      item.sku,
      item.description,
      String(item.quantity),
      formatMoney(item.unitPrice, invoice.currency),
      formatMoney(lineTotal(item), invoice.currency),
    ]
      .map(csvField)
      .join(","),
  );
  return [header, ...rows].join("\n") + "\n";
}

/** Reads a line item from the admin form, where prices are typed as text. */
export function lineItemFromForm(
  form: { sku: string; description: string; quantity: string; price: string },
  currency: Currency,
): LineItem {
  const quantity = Number(form.quantity);
  if (!Number.isInteger(quantity) || quantity <= 0) {
    throw new RangeError(`quantity must be a positive whole number, got ${JSON.stringify(form.quantity)}`);
  }
  return {
    sku: form.sku.trim(),
    description: form.description.trim(),
    quantity,
    unitPrice: parseMoney(form.price, currency),
  };
}
