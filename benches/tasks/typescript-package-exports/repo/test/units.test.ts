import { test } from "node:test";
import assert from "node:assert/strict";
import { formatQuantity, parseAs, parseQuantity, UnitError } from "../src/index.ts";

test("parses into base units", () => {
  assert.deepEqual(parseQuantity("1.5 km"), { value: 1500, dimension: "length" });
  assert.deepEqual(parseQuantity("250g"), { value: 250, dimension: "mass" });
  assert.deepEqual(parseQuantity("2 KiB"), { value: 2048, dimension: "data" });
});

test("rejects unknown units and junk", () => {
  assert.throws(() => parseQuantity("3 parsecs"), UnitError);
  assert.throws(() => parseQuantity("km 3"), UnitError);
});

test("parseAs converts between units of one dimension", () => {
  assert.equal(parseAs("2 h", "min"), 120);
  assert.throws(() => parseAs("2 h", "kg"), UnitError);
});

test("formats with the largest readable unit", () => {
  assert.equal(formatQuantity(parseQuantity("1500 m")), "1.5 km");
  assert.equal(formatQuantity(parseQuantity("90 min")), "1.5 h");
  assert.equal(formatQuantity(parseQuantity("512 B")), "512 B");
  assert.equal(formatQuantity(parseQuantity("0.5 mm")), "0.5 mm");
  assert.equal(formatQuantity(parseQuantity("1 km"), { unit: "m" }), "1000 m");
});
