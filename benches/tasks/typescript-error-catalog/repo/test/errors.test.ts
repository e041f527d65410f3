import { test } from "node:test";
import assert from "node:assert/strict";
import { CATALOG, describe, lintCatalog, toResponse, UNKNOWN } from "../src/index.ts";

test("the catalogue is well formed", () => {
  assert.deepEqual(lintCatalog(), []);
  assert.ok(CATALOG.length > 1000);
});

test("describe finds entries by code", () => {
  assert.deepEqual(describe("AUTH-1030"), {
    code: "AUTH-1030",
    status: 404,
    retryable: false,
    message: "The login attempt was not found",
  });
  assert.equal(describe("NOPE-0000"), UNKNOWN);
});

test("retryable errors carry a Retry-After header", () => {
  const response = toResponse("AUTH-1029", "upstream idp slow");
  assert.equal(response.status, 504);
  assert.equal(response.headers["retry-after"], "5");
  assert.deepEqual(response.body.error, {
    code: "AUTH-1029",
    message: "The API key request timed out",
    retryable: true,
    detail: "upstream idp slow",
  });
});

test("other errors do not", () => {
  const response = toResponse("ADM-1414");
  assert.equal(response.status, 413);
  assert.equal(response.headers["retry-after"], undefined);
});

test("lint catches duplicates and bad statuses", () => {
  const bad = [
    { code: "X-0001", status: 400, retryable: false, message: "a" },
    { code: "X-0001", status: 200, retryable: false, message: "b" },
  ];
  assert.deepEqual(lintCatalog(bad), ["X-0001: duplicate code", "X-0001: status 200 is not an error"]);
});
