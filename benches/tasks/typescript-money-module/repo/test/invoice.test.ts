import { test } from "node:test";
import assert from "node:assert/strict";
import { formatMoney, invoiceTotals } from "../src/invoice.ts";
import { renderInvoice } from "../src/render.ts";
import { invoiceToCsv, lineItemFromForm } from "../src/export.ts";
import { sample } from "./fixtures.ts";

test("totals apply the discount before tax", () => {
  const totals = invoiceTotals(sample);
  assert.deepEqual(totals, { subtotal: 331699, discount: 5000, tax: 26953, total: 353652 });
  assert.equal(formatMoney(totals.total, sample.currency), "$3,536.52");
});

test("rendered invoice ends with the total", () => {
  const text = renderInvoice(sample);
  assert.match(text, /^INVOICE INV-2024-0117\n/);
  assert.match(text, /Discount\s+-\$50\.00\n/);
  assert.match(text, /Total\s+\$3,536\.52\n$/);
});

test("csv export quotes descriptions with commas", () => {
  const csv = invoiceToCsv(sample).split("\n");
  assert.equal(csv[1], 'INV-2024-0117,CONS-HR,"Consulting, hourly",12,$150.00,"$1,800.00"');
});

test("form input is parsed into a line item", () => {
  const item = lineItemFromForm({ sku: " X1 ", description: "Widget", quantity: "4", price: "$2.50" }, "USD");
  assert.deepEqual(item, { sku: "X1", description: "Widget", quantity: 4, unitPrice: 250 });
});
