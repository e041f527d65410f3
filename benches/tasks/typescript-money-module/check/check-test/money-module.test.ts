import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { formatCents, parseCents } from "../src/money.ts";
import * as invoiceModule from "../src/invoice.ts";
import * as indexModule from "../src/index.ts";
import { renderInvoice } from "../src/render.ts";
import { invoiceToCsv, lineItemFromForm } from "../src/export.ts";
import type { Invoice } from "../src/index.ts";

const invoice: Invoice = {
  number: "INV-7",
  customer: "Okafor Studio",
  currency: "EUR",
  issuedOn: "2024-11-30",
  taxRate: 0.19,
  discount: 1000,
  items: [
    { sku: "PR-A", description: "Print run, A3", quantity: 250, unitPrice: 120 },
    { sku: "DS", description: 'Design "hero" banner', quantity: 1, unitPrice: 45000 },
  ],
};

test("formatCents lives in src/money.ts and formats as before", () => {
  assert.equal(formatCents(123456, "USD"), "$1,234.56");
  assert.equal(formatCents(5, "EUR"), "€0.05");
  assert.equal(formatCents(-250, "GBP"), "-£2.50");
  assert.equal(formatCents(1500000, "JPY"), "¥1,500,000");
  assert.equal(formatCents(0, "USD"), "$0.00");
  assert.throws(() => formatCents(1.5, "USD"), RangeError);
});

test("parseCents lives in src/money.ts and parses as before", () => {
  assert.equal(parseCents("1,234.56", "USD"), 123456);
  assert.equal(parseCents(" $12 ", "USD"), 1200);
  assert.equal(parseCents("0.5", "EUR"), 50);
  assert.equal(parseCents("-3.07", "GBP"), -307);
  assert.equal(parseCents("¥980", "JPY"), 980);
  assert.throws(() => parseCents("12.345", "USD"), SyntaxError);
  assert.throws(() => parseCents("1.5", "JPY"), SyntaxError);
  assert.throws(() => parseCents("twelve", "USD"), SyntaxError);
});

test("the package entry point exports the new names", () => {
  const index = indexModule as { [name: string]: unknown };
  assert.equal(index.formatCents, formatCents);
  assert.equal(index.parseCents, parseCents);
  assert.equal(typeof index.invoiceTotals, "function");
  assert.equal(typeof index.renderInvoice, "function");
});

test("the old names are gone from the modules", () => {
  for (const mod of [invoiceModule, indexModule] as Array<{ [name: string]: unknown }>) {
    assert.equal("formatMoney" in mod, false);
    assert.equal("parseMoney" in mod, false);
  }
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

test("no source or test file mentions the old names", () => {
  const offenders = [...sourceFiles("src"), ...sourceFiles("test")].filter((path) =>
    /\b(formatMoney|parseMoney)\b/.test(readFileSync(path, "utf8")),
  );
  assert.deepEqual(offenders, []);
});

test("rendering and export behave as before", () => {
  assert.equal(
    renderInvoice(invoice),
    [
      "INVOICE INV-7",
      "Customer: Okafor Studio",
      "Issued:   2024-11-30",
      "-".repeat(56),
      "250 x Print run, A3                              €300.00",
      '1 x Design "hero" banner                         €450.00',
      "-".repeat(56),
      "Subtotal                                         €750.00",
      "Discount                                         -€10.00",
      "Tax (19%)                                        €140.60",
      "Total                                            €880.60",
      "",
    ].join("\n"),
  );
  assert.equal(
    invoiceToCsv(invoice),
    "invoice,sku,description,quantity,unit_price,line_total\n" +
      'INV-7,PR-A,"Print run, A3",250,€1.20,€300.00\n' +
      'INV-7,DS,"Design ""hero"" banner",1,€450.00,€450.00\n',
  );
  assert.deepEqual(
    lineItemFromForm({ sku: "K", description: "Kit", quantity: "2", price: "€1,050.5" }, "EUR"),
    { sku: "K", description: "Kit", quantity: 2, unitPrice: 105050 },
  );
});
