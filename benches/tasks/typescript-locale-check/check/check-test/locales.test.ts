import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { flatten, placeholders } from "../src/i18n.ts";
import type { Messages } from "../src/i18n.ts";

function load(path: string): Messages {
  return JSON.parse(readFileSync(path, "utf8"));
}

const en = flatten(load("locales/en.json"));

// Keys that had a problem in the original files; every other translation must be kept.
const FIXED: { [locale: string]: string[] } = {
  de: ["cart.empty.cta", "checkout.errors.cardDeclined", "orders.shippedOn"],
  fr: ["nav.help", "cart.subtotal", "account.deleteConfirm", "cart.legacyBanner"],
};
// Keys that were missing or empty: they need a real translation, not the English text.
const NEW: { [locale: string]: string[] } = {
  de: ["cart.empty.cta", "checkout.errors.cardDeclined"],
  fr: ["nav.help", "account.deleteConfirm"],
};

test("en.json is unchanged", () => {
  assert.deepEqual(load("locales/en.json"), load("check-test/en.orig.json"));
});

for (const locale of ["de", "fr"]) {
  const flat = flatten(load(`locales/${locale}.json`));
  const original = flatten(load(`check-test/${locale}.orig.json`));

  test(`${locale}: same keys as en`, () => {
    assert.deepEqual([...flat.keys()].sort(), [...en.keys()].sort());
  });

  test(`${locale}: placeholders match en and nothing is empty`, () => {
    for (const [key, english] of en) {
      const message = flat.get(key) ?? "";
      assert.notEqual(message.trim(), "", key);
      assert.deepEqual(placeholders(message), placeholders(english), key);
    }
  });

  test(`${locale}: existing translations are kept`, () => {
    for (const [key, message] of original) {
      if (FIXED[locale].includes(key)) continue;
      assert.equal(flat.get(key), message, key);
    }
  });

  test(`${locale}: missing strings are translated, not copied from English`, () => {
    for (const key of NEW[locale]) {
      assert.notEqual(flat.get(key), en.get(key), key);
    }
  });
}

test("the placeholder fixes keep the translated text", () => {
  const de = flatten(load("locales/de.json"));
  const fr = flatten(load("locales/fr.json"));
  assert.match(de.get("orders.shippedOn") ?? "", /\{date\}/);
  assert.notEqual(de.get("orders.shippedOn"), en.get("orders.shippedOn"));
  assert.match(fr.get("cart.subtotal") ?? "", /\{amount\}/);
  assert.notEqual(fr.get("cart.subtotal"), en.get("cart.subtotal"));
  assert.equal(fr.has("cart.legacyBanner"), false);
});
