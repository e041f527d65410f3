import { test } from "node:test";
import assert from "node:assert/strict";
import { formatMoney, parseMoney } from "../src/invoice.ts";

test("formatMoney groups thousands and pads cents", () => {
  assert.equal(formatMoney(123456, "USD"), "$1,234.56");
  assert.equal(formatMoney(5, "EUR"), "€0.05");
  assert.equal(formatMoney(-250, "GBP"), "-£2.50");
  assert.equal(formatMoney(1500000, "JPY"), "¥1,500,000");
});

test("formatMoney rejects fractional minor units", () => {
  assert.throws(() => formatMoney(1.5, "USD"), RangeError);
});

test("parseMoney reads what people type", () => {
  assert.equal(parseMoney("1,234.56", "USD"), 123456);
  assert.equal(parseMoney(" $12 ", "USD"), 1200);
  assert.equal(parseMoney("0.5", "EUR"), 50);
  assert.equal(parseMoney("-3.07", "GBP"), -307);
  assert.equal(parseMoney("¥980", "JPY"), 980);
});

test("parseMoney rejects junk and extra decimals", () => {
  assert.throws(() => parseMoney("12.345", "USD"), SyntaxError);
  assert.throws(() => parseMoney("1.5", "JPY"), SyntaxError);
  assert.throws(() => parseMoney("twelve", "USD"), SyntaxError);
});
