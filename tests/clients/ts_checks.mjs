// What the TypeScript SDK client in this suite checks: every message from tandem against the
// SDK's own zod schema for its method (and every answer against the schema of the request it
// answers), values the lenient schemas would silently drop, what the SDK logs, and small
// readers of the updates a prompt produced. ts_client.mjs is the scenario that uses them.

import { appendFileSync } from "node:fs";

/** What tandem may send us and the SDK schema each one must parse as (`incoming`), and our
 * requests with the schema each answer must parse as (`responses`), from the SDK's zod
 * module, which is loaded at run time from wherever the SDK was installed. */
export const schemasOf = (zod) => ({
  incoming: {
  "session/update": zod.zSessionNotification,
  "session/request_permission": zod.zRequestPermissionRequest,
  "fs/read_text_file": zod.zReadTextFileRequest,
  "fs/write_text_file": zod.zWriteTextFileRequest,
  "terminal/create": zod.zCreateTerminalRequest,
  "terminal/output": zod.zTerminalOutputRequest,
  "terminal/release": zod.zReleaseTerminalRequest,
  "terminal/wait_for_exit": zod.zWaitForTerminalExitRequest,
  "terminal/kill": zod.zKillTerminalRequest,
  },
  responses: {
  initialize: zod.zInitializeResponse,
  "session/new": zod.zNewSessionResponse,
  "session/load": zod.zLoadSessionResponse,
  "session/resume": zod.zResumeSessionResponse,
  "session/list": zod.zListSessionsResponse,
  "session/prompt": zod.zPromptResponse,
  },
});

export class Failure extends Error {}

export const short = (value, limit = 600) => {
  const text = JSON.stringify(value);
  return text.length <= limit ? text : text.slice(0, limit) + "…";
};

// Everything the SDK logs is a failure: it logs what it would otherwise swallow.
const logged = [];
for (const level of ["error", "warn"]) {
  const original = console[level].bind(console);
  console[level] = (...parts) => {
    logged.push(parts.map((p) => (typeof p === "string" ? p : short(p))).join(" "));
    original(...parts);
  };
}

/** Where `parsed` (the SDK's reading of `raw`) lost or changed a value `raw` had: a field
 * the schema knows that came out undefined, a list that came out shorter, a value that came
 * out different. A field the schema does not know comes out absent, and the protocol allows
 * those, so that is not counted; a null in `raw` counts as absent. */
export function changes(raw, parsed, path = "") {
  const at = (key) => (path ? `${path}.${key}` : String(key));
  if (Array.isArray(raw)) {
    if (!Array.isArray(parsed) || parsed.length !== raw.length) return [`${path}[]`];
    return raw.flatMap((item, i) => changes(item, parsed[i], `${path}[${i}]`));
  }
  if (raw !== null && typeof raw === "object") {
    if (parsed === null || typeof parsed !== "object") return [path || "the whole value"];
    return Object.entries(raw).flatMap(([key, value]) => {
      if (value === null || !(key in parsed)) return [];
      return changes(value, parsed[key], at(key));
    });
  }
  return raw === parsed ? [] : [path || "the whole value"];
}

/** Everything seen on the wire with one tandem process, and every problem with it. */
export class Watch {
  constructor(logPath, schemas) {
    this.logPath = logPath;
    this.schemas = schemas;
    this.problems = [];
    this.pending = new Map();
    this.updates = []; // raw session/update params, in order
  }

  record(direction, message) {
    appendFileSync(this.logPath, `${direction} ${JSON.stringify(message)}\n`);
    try {
      if (direction === "<-") this.incoming(message);
      else this.outgoing(message);
    } catch (error) {
      this.problems.push(`checking ${short(message)}: ${error}`);
    }
  }

  outgoing(message) {
    if ("method" in message && "id" in message) {
      this.pending.set(message.id, message.method);
    } else if ("error" in message && !("method" in message)) {
      // The one error we answer on purpose: a read of a file that is not there.
      if (message.error.code === -32002) return;
      this.problems.push(`we answered tandem's request with an error: ${short(message)}`);
    }
  }

  incoming(message) {
    if (message.jsonrpc !== "2.0") this.problems.push(`not JSON-RPC 2.0: ${short(message)}`);
    if ("method" in message) {
      if (message.method.startsWith("_")) return; // an extension; clients may ignore them
      const schema = this.schemas.incoming[message.method];
      if (!schema) {
        this.problems.push(`unexpected method ${message.method}: ${short(message)}`);
        return;
      }
      this.validate(schema, message.params, message);
      if (message.method === "session/update") this.updates.push(message.params);
      else if (!("id" in message)) this.problems.push(`${message.method} came as a notification`);
      return;
    }
    const sent = this.pending.get(message.id);
    this.pending.delete(message.id);
    if (sent === undefined) {
      this.problems.push(`a response to no request of ours: ${short(message)}`);
      return;
    }
    const response = this.schemas.responses[sent];
    if ("result" in message && response) {
      this.validate(response, message.result ?? {}, message);
    }
  }

  validate(schema, value, message) {
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      this.problems.push(`does not parse with the SDK's schema: ${short(message)}\n${parsed.error}`);
      return;
    }
    // The SDK's schemas are lenient on purpose: an optional field whose value does not parse
    // becomes undefined and a list item that does not parse is skipped, silently. The client
    // never sees what tandem sent, so that counts as a failure here.
    const lost = changes(value, parsed.data);
    if (lost.length) {
      this.problems.push(`the SDK's schema drops or changes ${lost.join(", ")}: ${short(message)}`);
    }
  }

  check() {
    const problems = this.problems.splice(0);
    if (problems.length) throw new Failure(problems.join("\n"));
    const errors = logged.splice(0);
    if (errors.length) throw new Failure(`the SDK logged errors:\n${errors.join("\n")}`);
  }

  /** The stream the SDK sees, with every message passing through `record`. */
  wrap(stream) {
    const watch = this;
    const readable = stream.readable.pipeThrough(
      new TransformStream({
        transform(message, controller) {
          watch.record("<-", message);
          controller.enqueue(message);
        },
      }),
    );
    const writer = stream.writable.getWriter();
    const writable = new WritableStream({
      async write(message) {
        watch.record("->", message);
        await writer.write(message);
      },
      async close() {
        await writer.close();
      },
      async abort(reason) {
        await writer.abort(reason);
      },
    });
    return { readable, writable };
  }
}

export const textOf = (updates, kind) =>
  updates
    .map((p) => p.update)
    .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
    .map((u) => u.content.text)
    .join("");

/** Tool calls by id, each the merge of its tool_call and tool_call_update messages (a
 * repeated id merges into one entry; `startedIds` shows the repeats). */
export const toolCalls = (updates) => {
  const calls = new Map();
  for (const { update } of updates) {
    if (update.sessionUpdate === "tool_call" || update.sessionUpdate === "tool_call_update") {
      const call = calls.get(update.toolCallId) ?? {};
      for (const [k, v] of Object.entries(update)) if (v != null) call[k] = v;
      calls.set(update.toolCallId, call);
    }
  }
  return calls;
};

/** The id of every tool_call message, in order, repeats included. */
export const startedIds = (updates) =>
  updates.filter((p) => p.update.sessionUpdate === "tool_call").map((p) => p.update.toolCallId);

/** Every call in `updates` starts with an id new to the session (`before` is what the client
 * saw earlier), and every tool_call_update names a call already started. */
export const checkCalls = (before, updates) => {
  const seen = new Set(startedIds(before));
  for (const { update } of updates) {
    if (update.sessionUpdate === "tool_call") {
      if (seen.has(update.toolCallId)) {
        throw new Failure(`tool call id ${update.toolCallId} was already used in this session: ${short(update)}`);
      }
      seen.add(update.toolCallId);
    } else if (update.sessionUpdate === "tool_call_update" && !seen.has(update.toolCallId)) {
      throw new Failure(`an update for a tool call never started: ${short(update)}`);
    }
  }
};
