import { test } from "node:test";
import assert from "node:assert/strict";
import { Store } from "../src/index.ts";

test("subscribers see changes", () => {
  const store = new Store(1);
  const seen: Array<[number, number]> = [];
  store.subscribe((current, previous) => seen.push([current, previous]));
  store.set(2);
  store.set((n) => n * 10);
  assert.deepEqual(seen, [[2, 1], [20, 2]]);
  assert.equal(store.get(), 20);
});

test("setting the same value does not notify", () => {
  const store = new Store("a");
  let calls = 0;
  store.subscribe(() => calls++);
  store.set("a");
  assert.equal(calls, 0);
});
