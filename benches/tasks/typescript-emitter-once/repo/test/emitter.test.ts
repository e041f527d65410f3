import { test } from "node:test";
import assert from "node:assert/strict";
import { Emitter } from "../src/index.ts";

type Events = { ping: number; note: string };

test("on receives every emit", () => {
  const events = new Emitter<Events>();
  const seen: number[] = [];
  events.on("ping", (n) => seen.push(n));
  events.emit("ping", 1);
  events.emit("ping", 2);
  assert.deepEqual(seen, [1, 2]);
});

test("the function returned by on unsubscribes", () => {
  const events = new Emitter<Events>();
  const seen: number[] = [];
  const stop = events.on("ping", (n) => seen.push(n));
  events.emit("ping", 1);
  stop();
  events.emit("ping", 2);
  assert.deepEqual(seen, [1]);
  assert.equal(events.listenerCount("ping"), 0);
});

test("listeners only hear their own event", () => {
  const events = new Emitter<Events>();
  const notes: string[] = [];
  events.on("note", (s) => notes.push(s));
  events.emit("ping", 1);
  events.emit("note", "hello");
  assert.deepEqual(notes, ["hello"]);
});

test("a listener removed during emit does not break the others", () => {
  const events = new Emitter<Events>();
  const seen: string[] = [];
  const stopA = events.on("ping", () => {
    seen.push("a");
    stopA();
  });
  events.on("ping", () => seen.push("b"));
  events.emit("ping", 0);
  events.emit("ping", 0);
  assert.deepEqual(seen, ["a", "b", "b"]);
});

test("clear removes listeners", () => {
  const events = new Emitter<Events>();
  events.on("ping", () => {});
  events.on("note", () => {});
  events.clear("ping");
  assert.equal(events.listenerCount("ping"), 0);
  assert.equal(events.listenerCount("note"), 1);
  events.clear();
  assert.equal(events.listenerCount("note"), 0);
});
