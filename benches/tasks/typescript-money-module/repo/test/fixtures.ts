import type { Invoice } from "../src/invoice.ts";

export const sample: Invoice = {
  number: "INV-2024-0117",
  customer: "Harbor & Pine Ltd",
  currency: "USD",
  issuedOn: "2024-03-05",
  taxRate: 0.0825,
  discount: 5000,
  items: [
    { sku: "CONS-HR", description: "Consulting, hourly", quantity: 12, unitPrice: 15000 },
    { sku: "LIC-PRO", description: "Pro licence (annual)", quantity: 3, unitPrice: 49900 },
    { sku: "SUP-EXT", description: "Extended support", quantity: 1, unitPrice: 1999 },
  ],
};
