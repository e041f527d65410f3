export type Currency = "USD" | "EUR" | "GBP" | "JPY";

export interface LineItem {
  sku: string;
  description: string;
  quantity: number;
  /** Unit price in minor units (cents). */
  unitPrice: number;
}

export interface Invoice {
  number: string;
  customer: string;
  currency: Currency;
  issuedOn: string;
  items: LineItem[];
  /** Tax rate as a fraction, e.g. 0.2 for 20%. */
  taxRate: number;
  /** Discount in minor units, applied before tax. */
  discount?: number;
}

export interface Totals {
  subtotal: number;
  discount: number;
  tax: number;
  total: number;
}

const SYMBOLS: { [C in Currency]: string } = { USD: "$", EUR: "€", GBP: "£", JPY: "¥" };
const DECIMALS: { [C in Currency]: number } = { USD: 2, EUR: 2, GBP: 2, JPY: 0 };

/** Formats an amount in minor units, e.g. `formatMoney(123456, "USD")` is `"$1,234.56"`. */
export function formatMoney(amount: number, currency: Currency): string {
  if (!Number.isInteger(amount)) {
    throw new RangeError(`amount must be whole minor units, got ${amount}`);
  }
  const decimals = DECIMALS[currency];
  const sign = amount < 0 ? "-" : "";
  const abs = Math.abs(amount);
  const major = Math.floor(abs / 10 ** decimals);
  const minor = abs % 10 ** decimals;
  const grouped = major.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const fraction = decimals > 0 ? "." + minor.toString().padStart(decimals, "0") : "";
  return `${sign}${SYMBOLS[currency]}${grouped}${fraction}`;
}

/** Parses a user-entered amount ("1,234.5", "$12", "-3.07") into minor units. */
export function parseMoney(text: string, currency: Currency): number {
  const decimals = DECIMALS[currency];
  const cleaned = text.trim().replace(SYMBOLS[currency], "").replace(/,/g, "");
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(cleaned);
  if (!match) {
    throw new SyntaxError(`not an amount: ${JSON.stringify(text)}`);
  }
  const [, minus, whole, fraction = ""] = match;
  if (fraction.length > decimals) {
    throw new SyntaxError(`${currency} amounts have at most ${decimals} decimals: ${JSON.stringify(text)}`);
  }
  const minor = Number(whole) * 10 ** decimals + Number(fraction.padEnd(decimals, "0") || "0");
  return minus ? -minor : minor;
}

export function lineTotal(item: LineItem): number {
  return item.quantity * item.unitPrice;
}

export function invoiceTotals(invoice: Invoice): Totals {
  const subtotal = invoice.items.reduce((sum, item) => sum + lineTotal(item), 0);
  const discount = Math.min(invoice.discount ?? 0, subtotal);
  const tax = Math.round((subtotal - discount) * invoice.taxRate);
  return { subtotal, discount, tax, total: subtotal - discount + tax };
}
