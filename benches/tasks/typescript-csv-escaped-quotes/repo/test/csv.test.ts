import { test } from "node:test";
import assert from "node:assert/strict";
import { CsvError, parseCsv, parseCsvLine } from "../src/index.ts";

test("splits plain fields", () => {
  assert.deepEqual(parseCsvLine("a,b,c"), ["a", "b", "c"]);
});

test("keeps empty fields", () => {
  assert.deepEqual(parseCsvLine("a,,c,"), ["a", "", "c", ""]);
});

test("quoted fields may contain the delimiter", () => {
  assert.deepEqual(parseCsvLine('1,"Smith, John",x'), ["1", "Smith, John", "x"]);
});

test("a doubled quote inside a quoted field is one quote", () => {
  assert.deepEqual(parseCsvLine('a,"say ""hi""",c'), ["a", 'say "hi"', "c"]);
});

test("custom delimiter", () => {
  assert.deepEqual(parseCsvLine("a;b;c", ";"), ["a", "b", "c"]);
});

test("unterminated quote is an error", () => {
  assert.throws(() => parseCsvLine('a,"oops'), CsvError);
});

test("header mode returns records", () => {
  const text = "name,qty\r\napple,3\npear,10\n";
  assert.deepEqual(parseCsv(text, { header: true }), [
    { name: "apple", qty: "3" },
    { name: "pear", qty: "10" },
  ]);
});

test("header mode rejects short rows", () => {
  assert.throws(() => parseCsv("a,b\n1\n", { header: true }), /line 2/);
});
