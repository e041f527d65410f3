import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { CATALOG } from "../src/catalog.ts";
import { describe, lintCatalog, toResponse } from "../src/errors.ts";

const CODE = "PAY-1105"; // "The card issuer is temporarily unavailable"

test("issuer-unavailable is a retryable 503", () => {
  const def = describe(CODE);
  assert.equal(def.code, CODE);
  assert.match(def.message, /issuer/i);
  assert.equal(def.status, 503);
  assert.equal(def.retryable, true);
});

test("its response tells clients to retry later", () => {
  const response = toResponse(CODE);
  assert.equal(response.status, 503);
  assert.equal(response.body.error.retryable, true);
  assert.equal(response.headers["retry-after"], "30");
});

test("the code appears once and the catalogue still lints clean", () => {
  assert.equal(CATALOG.filter((def) => def.code === CODE).length, 1);
  assert.deepEqual(lintCatalog(), []);
});

test("every other entry is unchanged", () => {
  assert.equal(CATALOG.length, 2736);
  const rows = CATALOG.filter((def) => def.code !== CODE)
    .map((def) => [def.code, def.status, def.retryable, def.message])
    .sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const digest = createHash("sha256").update(JSON.stringify(rows)).digest("hex");
  assert.equal(digest, "88eb11308f5e37c05bff1016774eb0dc1d3d8b9f8c16cf85a84bc7cef720065c");
});
