import { test } from "node:test";
import assert from "node:assert/strict";
import { CsvError, parseCsv, parseCsvLine } from "../src/index.ts";

test("escaped quote at the start and end of a field", () => {
  assert.deepEqual(parseCsvLine('"""quoted"""'), ['"quoted"']);
});

test("a field that is only an escaped quote", () => {
  assert.deepEqual(parseCsvLine('x,"""",y'), ["x", '"', "y"]);
});

test("an empty quoted field stays empty", () => {
  assert.deepEqual(parseCsvLine('"",b,""'), ["", "b", ""]);
});

test("escaped quotes next to the delimiter inside quotes", () => {
  assert.deepEqual(parseCsvLine('"a "","" b",c'), ['a "," b', "c"]);
});

test("escaped quotes with a custom delimiter", () => {
  assert.deepEqual(parseCsvLine('1;"12"" pipe; steel";ok', ";"), ["1", '12" pipe; steel', "ok"]);
});

test("several escaped quotes in a row", () => {
  assert.deepEqual(parseCsvLine('"a""""b"'), ['a""b']);
});

test("escaped quotes survive header mode", () => {
  const text = 'id,title\n7,"The ""Best"" Guide"\n8,plain\n';
  assert.deepEqual(parseCsv(text, { header: true }), [
    { id: "7", title: 'The "Best" Guide' },
    { id: "8", title: "plain" },
  ]);
});

test("a quoted field ending in an escaped quote is still terminated correctly", () => {
  assert.throws(() => parseCsvLine('a,"open ""'), CsvError);
  assert.deepEqual(parseCsvLine('a,"closed """'), ["a", 'closed "']);
});

test("plain behaviour is unchanged", () => {
  assert.deepEqual(parseCsvLine("a,,c,"), ["a", "", "c", ""]);
  assert.deepEqual(parseCsvLine('1,"Smith, John",x'), ["1", "Smith, John", "x"]);
  assert.deepEqual(parseCsv("a,b\n\n1,2\n"), [["a", "b"], ["1", "2"]]);
});
