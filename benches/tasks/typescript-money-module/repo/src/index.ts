export { formatMoney, invoiceTotals, lineTotal, parseMoney } from "./invoice.ts";
export type { Currency, Invoice, LineItem, Totals } from "./invoice.ts";
export { renderInvoice } from "./render.ts";
export { invoiceToCsv, lineItemFromForm } from "./export.ts";
