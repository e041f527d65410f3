import { test } from "node:test";
import assert from "node:assert/strict";
import { createTranslator, flatten, interpolate, placeholders } from "../src/i18n.ts";

test("flatten makes dotted keys", () => {
  assert.deepEqual([...flatten({ a: { b: "x", c: { d: "y" } }, e: "z" })], [
    ["a.b", "x"],
    ["a.c.d", "y"],
    ["e", "z"],
  ]);
});

test("placeholders are sorted and unique", () => {
  assert.deepEqual(placeholders("{b} and {a} and {b}"), ["a", "b"]);
  assert.deepEqual(placeholders("none"), []);
});

test("interpolate fills known params and keeps unknown ones", () => {
  assert.equal(interpolate("Hi {name}, {missing}", { name: "Ada" }), "Hi Ada, {missing}");
});

test("translator uses the locale's strings", () => {
  const t = createTranslator("de");
  assert.equal(t("nav.home"), "Startseite");
  assert.equal(t("account.greeting", { name: "Jo" }), "Hallo, Jo!");
});

test("translator falls back to English, then to the key", () => {
  const t = createTranslator("xx");
  assert.equal(t("cart.itemCount", { count: 3 }), "3 items");
  assert.equal(t("no.such.key"), "no.such.key");
});
