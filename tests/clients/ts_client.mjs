#!/usr/bin/env node
// Drives tandem through one session with the TypeScript ACP SDK (@agentclientprotocol/sdk on
// npm) as the client, the way an editor built on that SDK would: the SDK's app API
// (client().onRequest(...).connectWith(ndJsonStream(...))), a real disk behind fs/*, and
// real processes behind terminal/*.
//
// The SDK parses the params of every request and notification it receives with its zod
// schemas, but it does not check responses, a request that fails to parse is answered with
// an error tandem sees and we do not, and a notification that fails to parse is only
// console.error'd. So this client also watches the stream: every message from tandem is
// parsed with the SDK's zod schema for its method (and every response with the schema of the
// request it answers), every error we send back and everything the SDK logs is a failure,
// and each step checks them before it passes.
//
// Usage: node ts_client.mjs --sdk NODE_MODULES --tandem BIN --fixture FILE --workspace DIR
//                           --data-dir DIR --log DIR

import { spawn } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { pathToFileURL } from "node:url";

import {
  Failure,
  Watch,
  checkCalls,
  schemasOf,
  short,
  startedIds,
  textOf,
  toolCalls,
} from "./ts_checks.mjs";

const CLIENT = "ts-sdk";

const { values: args } = parseArgs({
  options: {
    sdk: { type: "string" },
    tandem: { type: "string" },
    fixture: { type: "string" },
    workspace: { type: "string" },
    "data-dir": { type: "string" },
    log: { type: "string" },
  },
});
for (const name of ["sdk", "tandem", "fixture", "workspace", "data-dir", "log"]) {
  if (!args[name]) {
    console.error(`${CLIENT}: --${name} is required`);
    process.exit(2);
  }
}
const tandem = resolve(args.tandem);
const fixture = resolve(args.fixture);
const workspace = resolve(args.workspace);
const dataDir = resolve(args["data-dir"]);

// The SDK is installed outside this repository; load it (and its generated zod schemas,
// which its package exports do not list) from there.
const sdkEntry = createRequire(join(resolve(args.sdk), "noop.js")).resolve("@agentclientprotocol/sdk");
const acp = await import(pathToFileURL(sdkEntry).href);
const zod = await import(pathToFileURL(join(dirname(sdkEntry), "..", "schema", "zod.gen.js")).href);
const schemas = schemasOf(zod);

/** Real processes behind terminal/*. */
class Terminals {
  constructor() {
    this.next = 1;
    this.all = new Map();
    this.created = [];
  }

  create({ command, args = [], env = [], cwd, outputByteLimit }) {
    const id = `term-${this.next++}`;
    const child = spawn(command, args, {
      cwd: cwd ?? workspace,
      env: { ...process.env, ...Object.fromEntries(env.map((v) => [v.name, v.value])) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const term = { child, output: "", truncated: false, exit: null, limit: outputByteLimit };
    term.exited = new Promise((done) => {
      child.on("close", (code, signal) => {
        term.exit = { exitCode: code, signal: signal ?? null };
        done();
      });
      child.on("error", (error) => {
        term.output += String(error);
        term.exit = { exitCode: 127, signal: null };
        done();
      });
    });
    const take = (chunk) => {
      term.output += chunk.toString("utf8");
      if (term.limit != null && Buffer.byteLength(term.output) > term.limit) {
        term.output = Buffer.from(term.output).subarray(-term.limit).toString("utf8");
        term.truncated = true;
      }
    };
    child.stdout.on("data", take);
    child.stderr.on("data", take);
    this.all.set(id, term);
    this.created.push({ id, command, args, term });
    return { terminalId: id };
  }

  get(id) {
    const term = this.all.get(id);
    if (!term) throw acp.RequestError.resourceNotFound(id);
    return term;
  }
}

const env = () => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  RUST_LOG: process.env.RUST_LOG ?? "",
  TANDEM_HOME: dataDir,
  XDG_CONFIG_HOME: join(dataDir, "config"),
  XDG_DATA_HOME: join(dataDir, "share"),
});

const withTimeout = (promise, seconds, what) =>
  Promise.race([
    promise,
    new Promise((_, fail) =>
      setTimeout(() => fail(new Failure(`${what}: no answer within ${seconds} s`)), seconds * 1000).unref(),
    ),
  ]);

const state = { step: "start", sessionId: "", prompts: [], firstIds: new Set(), failures: [] };

/** One step: a failed check is recorded and the run goes on to the next step, so one run
 * names every check that fails; anything else (an error answer, a timeout, a lost
 * connection) ends the run. */
async function stage(name, body) {
  state.step = name;
  try {
    await body();
  } catch (error) {
    if (!(error instanceof Failure)) throw error;
    state.failures.push([name, error.message]);
  }
}

/** Runs `body(ctx, watch, editor)` against a fresh tandem process. */
async function tandemProcess(name, body) {
  const watch = new Watch(join(args.log, `${CLIENT}.${name}.ndjson`), schemas);
  const editor = { permissions: [], reads: [], writes: [], terminals: new Terminals() };
  const stderrPath = join(args.log, `${CLIENT}.${name}.stderr`);
  const child = spawn(tandem, ["--replay", fixture], {
    cwd: workspace,
    env: env(),
    stdio: ["pipe", "pipe", "pipe"],
  });
  child.stderr.on("data", (chunk) => appendFileSync(stderrPath, chunk));
  const exited = new Promise((done) => child.on("close", (code, signal) => done({ code, signal })));

  const app = acp
    .client({ name: "tandem-client-suite-ts" })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      editor.permissions.push(params);
      const allow =
        params.options.find((o) => o.kind === "allow_once") ??
        params.options.find((o) => o.kind.startsWith("allow"));
      if (!allow) throw new Failure(`no allow option among ${short(params.options)}`);
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      editor.reads.push(params.path);
      if (!existsSync(params.path)) throw acp.RequestError.resourceNotFound(params.path);
      let content = readFileSync(params.path, "utf8");
      if (params.line != null || params.limit != null) {
        const lines = content.split(/(?<=\n)/);
        const start = Math.max((params.line ?? 1) - 1, 0);
        content = lines.slice(start, params.limit != null ? start + params.limit : undefined).join("");
      }
      return { content };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      editor.writes.push(params.path);
      writeFileSync(params.path, params.content);
      return {};
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => editor.terminals.create(params))
    .onRequest(acp.methods.client.terminal.output, ({ params }) => {
      const term = editor.terminals.get(params.terminalId);
      return { output: term.output, truncated: term.truncated, exitStatus: term.exit ?? undefined };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => {
      const term = editor.terminals.get(params.terminalId);
      await term.exited;
      return term.exit;
    })
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => {
      editor.terminals.get(params.terminalId).child.kill("SIGKILL");
      return {};
    })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => {
      const term = editor.terminals.get(params.terminalId);
      if (term.exit === null) term.child.kill("SIGKILL");
      editor.terminals.all.delete(params.terminalId);
      return {};
    })
    .onNotification(acp.methods.client.session.update, () => {
      // checked from the raw stream, in arrival order
    });

  const stream = watch.wrap(acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout)));
  try {
    await app.connectWith(stream, (ctx) => body(ctx, watch, editor));
  } finally {
    child.stdin.end();
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
    await exited;
    clearTimeout(timer);
  }
  await stage(`end of the ${name} process`, () => watch.check());
}

async function initialize(ctx, watch) {
  state.step = "initialize";
  const init = await ctx.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: true },
    clientInfo: { name: "tandem-client-suite-ts", version: "1" },
  });
  await stage("initialize", () => {
    if (init.protocolVersion !== 1) throw new Failure(`protocolVersion ${init.protocolVersion}, want 1`);
    if (!init.agentCapabilities?.loadSession) throw new Failure(`loadSession not advertised: ${short(init)}`);
    if (!init.agentCapabilities?.sessionCapabilities?.list) {
      throw new Failure("sessionCapabilities.list not advertised");
    }
    watch.check();
  });
}

/** Sends one prompt; the updates it brought. Checked here for every prompt: the stop reason,
 * that every update names this session, and that no tool call id the client has already
 * seen in this session starts again. */
async function prompt(ctx, watch, text, want = "end_turn") {
  state.prompts.push(text);
  const start = watch.updates.length;
  const response = await withTimeout(
    ctx.request(acp.methods.agent.session.prompt, {
      sessionId: state.sessionId,
      prompt: [{ type: "text", text }],
    }),
    60,
    "session/prompt",
  );
  const updates = watch.updates.slice(start);
  if (response.stopReason !== want) throw new Failure(`stopReason ${response.stopReason}, want ${want}`);
  for (const p of updates) {
    if (p.sessionId !== state.sessionId) throw new Failure(`an update for another session: ${short(p)}`);
  }
  try {
    checkCalls(watch.updates.slice(0, start), updates);
  } catch (error) {
    // recorded, and the step goes on to its own checks
    if (!(error instanceof Failure)) throw error;
    state.failures.push([state.step, error.message]);
  }
  watch.check();
  return updates;
}

const onlyCall = (updates, kind) => {
  const calls = [...toolCalls(updates).values()];
  if (calls.length !== 1 || calls[0].kind !== kind || calls[0].status !== "completed") {
    throw new Failure(`want one completed ${kind} call, got ${short(calls)}`);
  }
  return calls[0];
};

const answerOf = (updates) => textOf(updates, "agent_message_chunk");

async function firstProcess(ctx, watch, editor) {
  await initialize(ctx, watch);

  state.step = "session/new";
  const created = await ctx.request(acp.methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  state.sessionId = created.sessionId;
  await stage("session/new", () => {
    if (created.modes && created.modes.currentModeId !== "ask") {
      throw new Failure(`the session starts in mode ${created.modes.currentModeId}, want ask`);
    }
    watch.check();
  });

  await stage("plain answer", async () => {
    const updates = await prompt(ctx, watch, "Say something plain.");
    if (!answerOf(updates).includes("PLAIN-ANSWER: tandem is listening.")) {
      throw new Failure(`answer text is ${JSON.stringify(answerOf(updates))}`);
    }
    if (!textOf(updates, "agent_thought_chunk").includes("no tools needed")) {
      throw new Failure("the thought did not arrive as agent_thought_chunk");
    }
  });

  await stage("read a file", async () => {
    const updates = await prompt(ctx, watch, "Read the README.");
    const readme = join(workspace, "README.md");
    if (!editor.reads.includes(readme)) throw new Failure(`no fs/read_text_file for ${readme}: ${editor.reads}`);
    onlyCall(updates, "read");
    if (!answerOf(updates).includes("READ-DONE")) throw new Failure("the answer after the read did not arrive");
  });

  await stage("edit with permission", async () => {
    const asked = editor.permissions.length;
    const updates = await prompt(ctx, watch, "Add the missing test.");
    if (editor.permissions.length !== asked + 1) throw new Failure("the edit did not ask session/request_permission");
    const lib = join(workspace, "src", "lib.rs");
    const libText = readFileSync(lib, "utf8");
    if (!libText.includes("fn greets") || libText.includes("TODO: add a test")) {
      throw new Failure(`src/lib.rs on disk did not change:\n${libText}`);
    }
    if (!editor.writes.includes(lib)) throw new Failure(`no fs/write_text_file for ${lib}: ${editor.writes}`);
    const edit = onlyCall(updates, "edit");
    if (!(edit.content ?? []).some((c) => c.type === "diff")) throw new Failure(`no diff shown: ${short(edit)}`);
  });

  await stage("create a new file", async () => {
    const updates = await prompt(ctx, watch, "Create notes/created.txt.");
    const note = join(workspace, "notes", "created.txt");
    if (!existsSync(note)) {
      const calls = [...toolCalls(updates).values()];
      throw new Failure(`notes/created.txt was not created; the call ended as ${short(calls)}`);
    }
    if (readFileSync(note, "utf8") !== "CREATED-BY-TANDEM\n") throw new Failure("notes/created.txt has other text");
    if (!answerOf(updates).includes("WRITE-DONE")) throw new Failure("the answer after the write did not arrive");
  });

  await stage("run a command", async () => {
    const asked = editor.permissions.length;
    const updates = await prompt(ctx, watch, "Run echo.");
    if (editor.permissions.length !== asked + 1) {
      throw new Failure("the command did not ask session/request_permission");
    }
    const run = onlyCall(updates, "execute");
    // The terminal capability was advertised: the command runs in our terminal, and the call
    // shows that terminal (or its output).
    const terms = editor.terminals.created;
    if (terms.length !== 1) throw new Failure(`want one terminal/create, got ${terms.length}`);
    if (!terms[0].term.output.includes("hi-from-tandem")) {
      throw new Failure(`the terminal printed ${JSON.stringify(terms[0].term.output)}`);
    }
    const content = run.content ?? [];
    const shown = content.some((c) => c.type === "terminal" && c.terminalId === terms[0].id);
    if (!shown && !JSON.stringify(content).includes("hi-from-tandem")) {
      throw new Failure(`the call shows neither the terminal nor the output: ${short(run)}`);
    }
  });

  await stage("cancel while streaming", async () => {
    const start = watch.updates.length;
    state.prompts.push("Answer slowly.");
    const slow = ctx.request(acp.methods.agent.session.prompt, {
      sessionId: state.sessionId,
      prompt: [{ type: "text", text: "Answer slowly." }],
    });
    let settled = false;
    slow.then(
      () => (settled = true),
      () => (settled = true),
    );
    const deadline = Date.now() + 10_000;
    while (!answerOf(watch.updates.slice(start)).includes("SLOW-CHUNK") && !settled) {
      if (Date.now() > deadline) throw new Failure("no chunk of the slow answer arrived within 10 s");
      await new Promise((r) => setTimeout(r, 50));
    }
    await ctx.notify(acp.methods.agent.session.cancel, { sessionId: state.sessionId });
    const cancelled = await withTimeout(slow, 15, "the cancelled session/prompt");
    if (cancelled.stopReason !== "cancelled") {
      throw new Failure(`stopReason ${cancelled.stopReason}, want cancelled`);
    }
    const chunks = answerOf(watch.updates.slice(start)).split("SLOW-CHUNK").length - 1;
    if (chunks >= 100) throw new Failure("the whole slow answer streamed: the cancel stopped nothing");
    watch.check();
  });

  await stage("session/list", async () => {
    const listed = await ctx.request(acp.methods.agent.session.list, { cwd: workspace });
    const ids = listed.sessions.map((s) => s.sessionId);
    if (!ids.includes(state.sessionId)) throw new Failure(`session ${state.sessionId} not in session/list: ${ids}`);
    watch.check();
  });

  await stage("tool call ids", () => {
    const ids = startedIds(watch.updates);
    state.firstIds = new Set(ids);
    if (ids.length !== 4 || state.firstIds.size !== 4) throw new Failure(`want 4 distinct tool call ids, got ${ids}`);
  });
}

async function secondProcess(ctx, watch) {
  await initialize(ctx, watch);

  state.step = "session/load in a second process";
  await ctx.request(acp.methods.agent.session.load, {
    sessionId: state.sessionId,
    cwd: workspace,
    mcpServers: [],
  });
  const history = [...watch.updates];
  await stage("session/load in a second process", () => {
    watch.check();
    const users = textOf(history, "user_message_chunk");
    const missing = state.prompts.filter((p) => !users.includes(p));
    if (missing.length) {
      throw new Failure(`the replayed history lacks the user's messages ${short(missing)}; it has ${short(users)}`);
    }
    const answers = answerOf(history);
    for (const marker of ["PLAIN-ANSWER", "READ-DONE", "EDIT-DONE", "WRITE-DONE", "COMMAND-DONE"]) {
      if (!answers.includes(marker)) throw new Failure(`the replayed history lacks the answer ${marker}`);
    }
    const replayed = startedIds(history);
    const same = replayed.length === state.firstIds.size && replayed.every((id) => state.firstIds.has(id));
    if (!same) throw new Failure(`replayed tool call ids ${replayed} != live ids ${[...state.firstIds]}`);
  });

  await stage("session/load replays the command's output", () => {
    const commands = [...toolCalls(history).values()].filter((c) => c.kind === "execute");
    if (commands.length !== 1) throw new Failure(`want one replayed command, got ${short(commands)}`);
    const content = commands[0].content ?? [];
    // The terminal was released with the process that made it: the output must come as text.
    if (content.some((c) => c.type === "terminal")) {
      throw new Failure(`the command replays as a terminal reference: ${short(commands[0])}`);
    }
    if (!JSON.stringify(content).includes("hi-from-tandem")) {
      throw new Failure(`the replayed command lacks its output: ${short(commands[0])}`);
    }
  });

  await stage("prompt after load", async () => {
    const updates = await prompt(ctx, watch, "Say something plain again.");
    if (!answerOf(updates).includes("PLAIN-ANSWER")) throw new Failure("no answer after session/load");
  });

  await stage("tool call ids after load", async () => {
    // The fixture's call has the id every earlier call had: the prompt's own check fails if
    // the client sees it again.
    const updates = await prompt(ctx, watch, "Read the README again.");
    onlyCall(updates, "read");
  });
}

async function thirdProcess(ctx, watch) {
  await initialize(ctx, watch);

  state.step = "session/resume in a third process";
  await ctx.request(acp.methods.agent.session.resume, {
    sessionId: state.sessionId,
    cwd: workspace,
    mcpServers: [],
  });
  await stage("session/resume in a third process", () => watch.check());

  await stage("prompt after resume", async () => {
    const updates = await prompt(ctx, watch, "Say something plain once more.");
    if (!answerOf(updates).includes("PLAIN-ANSWER")) throw new Failure("no answer after session/resume");
  });

  await stage("session/list after resume", async () => {
    const listed = await ctx.request(acp.methods.agent.session.list, { cwd: workspace });
    if (!listed.sessions.some((s) => s.sessionId === state.sessionId)) {
      throw new Failure("the session is gone from session/list");
    }
    watch.check();
  });
}

try {
  await withTimeout(
    (async () => {
      await tandemProcess("first", firstProcess);
      await tandemProcess("second", secondProcess);
      await tandemProcess("third", thirdProcess);
    })(),
    240,
    "the whole run",
  );
} catch (error) {
  let detail = error instanceof Failure ? error.message : String(error?.stack ?? error);
  if (error instanceof acp.RequestError) {
    detail = `tandem answered with error ${error.code} ${error.message}: ${short(error.data ?? null)}`;
  }
  state.failures.push([state.step, `${detail} (the run stopped here)`]);
}
for (const [step, detail] of state.failures) {
  process.stderr.write(`${CLIENT}: FAILED at step '${step}': ${detail}\n`);
}
if (state.failures.length) process.exit(1);
console.log(`${CLIENT}: ok (session ${state.sessionId}, ${state.prompts.length} prompts, 3 processes)`);
process.exit(0);
