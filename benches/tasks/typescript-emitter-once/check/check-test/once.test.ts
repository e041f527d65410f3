import { test } from "node:test";
import assert from "node:assert/strict";
import { Emitter } from "../src/emitter.ts";

type Events = { ping: number; note: string };

test("once runs on the next emit only, with its payload", () => {
  const events = new Emitter<Events>();
  const seen: number[] = [];
  events.once("ping", (n) => seen.push(n));
  events.emit("ping", 1);
  events.emit("ping", 2);
  events.emit("ping", 3);
  assert.deepEqual(seen, [1]);
});

test("a once listener is removed after it runs", () => {
  const events = new Emitter<Events>();
  events.once("ping", () => {});
  assert.equal(events.listenerCount("ping"), 1);
  events.emit("ping", 1);
  assert.equal(events.listenerCount("ping"), 0);
});

test("once returns a function that unsubscribes before it runs", () => {
  const events = new Emitter<Events>();
  let calls = 0;
  const stop = events.once("ping", () => calls++);
  assert.equal(typeof stop, "function");
  stop();
  events.emit("ping", 1);
  assert.equal(calls, 0);
  assert.equal(events.listenerCount("ping"), 0);
});

test("unsubscribing after it ran is harmless and leaves other listeners", () => {
  const events = new Emitter<Events>();
  const seen: string[] = [];
  const stop = events.once("ping", () => seen.push("once"));
  events.on("ping", () => seen.push("on"));
  events.emit("ping", 1);
  stop();
  stop();
  events.emit("ping", 2);
  assert.deepEqual(seen, ["once", "on", "on"]);
  assert.equal(events.listenerCount("ping"), 1);
});

test("once listeners keep their place among the others", () => {
  const events = new Emitter<Events>();
  const seen: string[] = [];
  events.on("ping", () => seen.push("a"));
  events.once("ping", () => seen.push("b"));
  events.on("ping", () => seen.push("c"));
  events.emit("ping", 0);
  events.emit("ping", 0);
  assert.deepEqual(seen, ["a", "b", "c", "a", "c"]);
});

test("other events do not use up a once listener", () => {
  const events = new Emitter<Events>();
  const seen: number[] = [];
  events.once("ping", (n) => seen.push(n));
  events.emit("note", "hello");
  assert.equal(events.listenerCount("ping"), 1);
  events.emit("ping", 7);
  assert.deepEqual(seen, [7]);
});

test("a once listener that emits the same event again still runs once", () => {
  const events = new Emitter<Events>();
  let calls = 0;
  events.once("ping", (n) => {
    calls++;
    if (n < 3) events.emit("ping", n + 1);
  });
  events.emit("ping", 0);
  assert.equal(calls, 1);
});

test("several once listeners all run once", () => {
  const events = new Emitter<Events>();
  const seen: string[] = [];
  events.once("note", (s) => seen.push(`x:${s}`));
  events.once("note", (s) => seen.push(`y:${s}`));
  events.emit("note", "1");
  events.emit("note", "2");
  assert.deepEqual(seen, ["x:1", "y:1"]);
  assert.equal(events.listenerCount("note"), 0);
});

test("on, off and emit behave as before", () => {
  const events = new Emitter<Events>();
  const seen: number[] = [];
  const listener = (n: number) => seen.push(n);
  events.on("ping", listener);
  events.emit("ping", 1);
  events.off("ping", listener);
  events.emit("ping", 2);
  assert.deepEqual(seen, [1]);
  assert.equal(events.listenerCount("ping"), 0);
});
