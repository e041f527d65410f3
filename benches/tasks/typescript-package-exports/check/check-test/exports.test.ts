import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as parseModule from "../src/parse.ts";
import * as formatModule from "../src/format.ts";

// These imports resolve through the package's own "exports" map (package self-reference).

test("the main entry resolves to src/index.ts", async () => {
  const main = await import("@acme/units");
  assert.equal(main.parseQuantity, parseModule.parseQuantity);
  assert.equal(main.parseAs, parseModule.parseAs);
  assert.equal(main.formatQuantity, formatModule.formatQuantity);
  assert.equal(main.UnitError, parseModule.UnitError);
  assert.equal(main.formatQuantity(main.parseQuantity("90 min")), "1.5 h");
});

test("the parse subpath resolves to src/parse.ts", async () => {
  const parse = await import("@acme/units/parse");
  assert.equal(parse.parseQuantity, parseModule.parseQuantity);
  assert.equal(parse.parseAs, parseModule.parseAs);
  assert.equal(parse.parseAs("3 km", "m"), 3000);
});

test("the format subpath resolves to src/format.ts", async () => {
  const format = await import("@acme/units/format");
  assert.equal(format.formatQuantity, formatModule.formatQuantity);
  assert.equal("parseQuantity" in format, false);
});

for (const specifier of [
  "@acme/units/internal/table",
  "@acme/units/internal/table.ts",
  "@acme/units/src/internal/table.ts",
  "@acme/units/src/internal/table",
  "@acme/units/src/parse.ts",
  "@acme/units/src/index.ts",
  "@acme/units/index",
  "@acme/units/table",
]) {
  test(`deep import ${specifier} is not exported`, async () => {
    await assert.rejects(import(specifier));
  });
}

test("package.json is still the same package", () => {
  const pkg = JSON.parse(readFileSync("package.json", "utf8"));
  assert.equal(pkg.name, "@acme/units");
  assert.equal(pkg.type, "module");
  assert.ok(pkg.exports, "package.json has an exports field");
});
