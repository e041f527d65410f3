#!/usr/bin/env python3
"""Drives tandem through one session with the Python ACP SDK (`agent-client-protocol` on
PyPI) as the client, the way an editor built on that SDK would.

The SDK parses every message with its pydantic models. It does not always let a failure
reach the caller: a request from the agent that does not parse is answered with -32602 and
a notification that does not parse is only logged. So this client also watches the raw
stream: every message from tandem is validated against the SDK's model for its method (and
every response against the model of the request it answers), every error the SDK sends
back and every error it logs is a failure, and each step checks them before it passes.

Usage: python_client.py --tandem BIN --fixture FILE --workspace DIR --data-dir DIR --log DIR
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import sys
from pathlib import Path

import acp
from acp import schema as S

from acp_checks import (
    Failure,
    LoggedErrors,
    Watch,
    all_text,
    check_calls,
    only_call,
    report,
    short,
    started_ids,
    text_of,
    tool_calls,
)

CLIENT = "python-sdk"

class Editor:
    """The client side: a real disk, and a user who allows whatever is asked."""

    def __init__(self, watch: Watch) -> None:
        self.watch = watch
        self.permissions: list[S.RequestPermissionRequest] = []
        self.reads: list[str] = []
        self.writes: list[str] = []

    async def request_permission(self, session_id, tool_call, options, **kwargs):
        self.permissions.append(
            S.RequestPermissionRequest(session_id=session_id, tool_call=tool_call, options=options)
        )
        allow = [o for o in options if o.kind == "allow_once"] or [
            o for o in options if o.kind.startswith("allow")
        ]
        if not allow:
            raise Failure(f"no allow option among {[o.kind for o in options]}")
        return S.RequestPermissionResponse(
            outcome=S.AllowedOutcome(outcome="selected", option_id=allow[0].option_id)
        )

    async def session_update(self, session_id, update, **kwargs):
        pass  # checked from the raw stream, in arrival order

    async def read_text_file(self, session_id, path, line=None, limit=None, **kwargs):
        self.reads.append(path)
        text = Path(path).read_text(encoding="utf-8")  # a missing file raises, as in any client
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return S.ReadTextFileResponse(content=text)

    async def write_text_file(self, session_id, path, content, **kwargs):
        self.writes.append(path)
        Path(path).write_text(content, encoding="utf-8")
        return S.WriteTextFileResponse()

    async def ext_method(self, method, params):
        raise acp.RequestError.method_not_found(method)

    async def ext_notification(self, method, params):
        pass

    def on_connect(self, conn) -> None:
        pass


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        args.tandem = str(Path(args.tandem).resolve())
        args.fixture = str(Path(args.fixture).resolve())
        args.data_dir = str(Path(args.data_dir).resolve())
        self.workspace = Path(args.workspace).resolve()
        self.log_dir = Path(args.log)
        self.step = "start"
        self.failures: list[tuple[str, str]] = []
        self.first_ids: set[str] = set()
        self.prompts: list[str] = []
        self.session_id = ""
        self.logged = LoggedErrors()
        logging.getLogger().addHandler(self.logged)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "RUST_LOG")}
        env.update(
            TANDEM_HOME=self.args.data_dir,
            XDG_CONFIG_HOME=str(Path(self.args.data_dir) / "config"),
            XDG_DATA_HOME=str(Path(self.args.data_dir) / "share"),
        )
        return env

    @contextlib.contextmanager
    def stage(self, name: str):
        """One step: a failed check is recorded and the run goes on to the next step, so one
        run names every check that fails; anything else (an error answer, a timeout, a lost
        connection) ends the run."""
        self.step = name
        try:
            yield
        except Failure as exc:
            self.failures.append((name, str(exc)))

    async def process(self, name: str, body) -> None:
        """Runs `body(conn, watch, editor)` against a fresh tandem process."""
        watch = Watch(self.log_dir / f"{CLIENT}.{name}.ndjson")
        editor = Editor(watch)
        stderr = (self.log_dir / f"{CLIENT}.{name}.stderr").open("ab")
        try:
            async with acp.spawn_agent_process(
                editor,
                self.args.tandem,
                "--replay",
                self.args.fixture,
                env=self.env(),
                cwd=str(self.workspace),
                transport_kwargs={"stderr": stderr, "limit": 64 * 1024 * 1024},
                observers=[watch.observe],
            ) as (conn, proc):
                await body(conn, watch, editor)
            with self.stage(f"end of the {name} process"):
                self.checked(watch)
        finally:
            stderr.close()

    def checked(self, watch: Watch) -> None:
        watch.check()
        records, self.logged.records = self.logged.records, []
        if records:
            raise Failure("the SDK logged errors:\n" + "\n".join(records))

    async def initialize(self, conn, watch: Watch) -> None:
        self.step = "initialize"
        init = await conn.initialize(
            protocol_version=acp.PROTOCOL_VERSION,
            client_capabilities=S.ClientCapabilities(
                fs=S.FileSystemCapabilities(read_text_file=True, write_text_file=True),
                terminal=False,
            ),
            client_info=S.Implementation(name="tandem-client-suite-python", version="1"),
        )
        with self.stage("initialize"):
            if init.protocol_version != 1:
                raise Failure(f"protocolVersion {init.protocol_version}, want 1")
            caps = init.agent_capabilities
            if not caps or not caps.load_session:
                raise Failure(f"loadSession not advertised: {init.model_dump_json(by_alias=True)}")
            if not caps.session_capabilities or caps.session_capabilities.list is None:
                raise Failure("sessionCapabilities.list not advertised")
            self.checked(watch)

    async def prompt(self, conn, watch: Watch, text: str, want: str = "end_turn"):
        """Sends one prompt; the updates it brought. Checked here for every prompt: the stop
        reason, that every update names this session, and that no tool call id the client has
        already seen in this session starts again."""
        self.prompts.append(text)
        start = len(watch.updates)
        response = await asyncio.wait_for(
            conn.prompt(session_id=self.session_id, prompt=[acp.text_block(text)]), 60
        )
        updates = watch.updates[start:]
        if response.stop_reason != want:
            raise Failure(f"stopReason {response.stop_reason!r}, want {want!r}")
        for params in updates:
            if params["sessionId"] != self.session_id:
                raise Failure(f"an update for another session: {short(params)}")
        try:
            check_calls(watch.updates[:start], updates)
        except Failure as exc:  # recorded, and the step goes on to its own checks
            self.failures.append((self.step, str(exc)))
        self.checked(watch)
        return updates

    async def first_process(self, conn, watch: Watch, editor: Editor) -> None:
        await self.initialize(conn, watch)

        self.step = "session/new"
        new = await conn.new_session(cwd=str(self.workspace), mcp_servers=[])
        self.session_id = new.session_id
        with self.stage("session/new"):
            if new.modes is not None and new.modes.current_mode_id != "ask":
                raise Failure(f"the session starts in mode {new.modes.current_mode_id}, want ask")
            self.checked(watch)

        with self.stage("plain answer"):
            updates = await self.prompt(conn, watch, "Say something plain.")
            answer = text_of(updates, "agent_message_chunk")
            if "PLAIN-ANSWER: tandem is listening." not in answer:
                raise Failure(f"answer text is {answer!r}")
            if "no tools needed" not in text_of(updates, "agent_thought_chunk"):
                raise Failure("the thought did not arrive as agent_thought_chunk")

        with self.stage("read a file"):
            updates = await self.prompt(conn, watch, "Read the README.")
            readme = str(self.workspace / "README.md")
            if readme not in editor.reads:
                raise Failure(f"no fs/read_text_file for {readme}; reads were {editor.reads}")
            only_call(updates, "read")
            if "READ-DONE" not in text_of(updates, "agent_message_chunk"):
                raise Failure("the answer after the read did not arrive")

        with self.stage("edit with permission"):
            before = len(editor.permissions)
            updates = await self.prompt(conn, watch, "Add the missing test.")
            if len(editor.permissions) != before + 1:
                raise Failure("the edit did not ask session/request_permission")
            lib = self.workspace / "src" / "lib.rs"
            if "fn greets" not in lib.read_text() or "TODO: add a test" in lib.read_text():
                raise Failure(f"src/lib.rs on disk did not change:\n{lib.read_text()}")
            if str(lib) not in editor.writes:
                raise Failure(f"no fs/write_text_file for {lib}; writes were {editor.writes}")
            edit = only_call(updates, "edit")
            if not any(c.get("type") == "diff" for c in edit.get("content") or []):
                raise Failure(f"the edit call shows no diff: {short(edit)}")

        with self.stage("create a new file"):
            updates = await self.prompt(conn, watch, "Create notes/created.txt.")
            created = self.workspace / "notes" / "created.txt"
            if not created.exists():
                calls = list(tool_calls(updates).values())
                raise Failure(f"notes/created.txt was not created; the call ended as {short(calls)}")
            if created.read_text() != "CREATED-BY-TANDEM\n":
                raise Failure(f"notes/created.txt holds {created.read_text()!r}")
            if "WRITE-DONE" not in text_of(updates, "agent_message_chunk"):
                raise Failure("the answer after the write did not arrive")

        with self.stage("run a command"):
            before = len(editor.permissions)
            updates = await self.prompt(conn, watch, "Run echo.")
            if len(editor.permissions) != before + 1:
                raise Failure("the command did not ask session/request_permission")
            run = only_call(updates, "execute")
            # No terminal capability was advertised: tandem runs the command itself and shows
            # the output as text.
            if "hi-from-tandem" not in all_text(run.get("content")):
                raise Failure(f"the command's output did not reach the client: {short(run)}")

        with self.stage("cancel while streaming"):
            start = len(watch.updates)
            self.prompts.append("Answer slowly.")
            task = asyncio.ensure_future(
                conn.prompt(session_id=self.session_id, prompt=[acp.text_block("Answer slowly.")])
            )
            for _ in range(200):
                if "SLOW-CHUNK" in text_of(watch.updates[start:], "agent_message_chunk") or task.done():
                    break
                await asyncio.sleep(0.05)
            else:
                raise Failure("no chunk of the slow answer arrived within 10 s")
            await conn.cancel(session_id=self.session_id)
            response = await asyncio.wait_for(task, 15)
            if response.stop_reason != "cancelled":
                raise Failure(f"stopReason {response.stop_reason!r}, want 'cancelled'")
            chunks = text_of(watch.updates[start:], "agent_message_chunk").count("SLOW-CHUNK")
            if chunks >= 100:
                raise Failure("the whole slow answer streamed: the cancel stopped nothing")
            self.checked(watch)

        with self.stage("session/list"):
            listed = await conn.list_sessions(cwd=str(self.workspace))
            ids = [s.session_id for s in listed.sessions]
            if self.session_id not in ids:
                raise Failure(f"session {self.session_id} not in session/list: {ids}")
            self.checked(watch)

        with self.stage("tool call ids"):
            ids = started_ids(watch.updates)
            self.first_ids = set(ids)
            if len(ids) != 4 or len(self.first_ids) != 4:
                raise Failure(f"want 4 distinct tool call ids, got {ids}")

    async def second_process(self, conn, watch: Watch, editor: Editor) -> None:
        await self.initialize(conn, watch)

        self.step = "session/load in a second process"
        await conn.load_session(cwd=str(self.workspace), session_id=self.session_id, mcp_servers=[])
        with self.stage("session/load in a second process"):
            self.checked(watch)
            history = list(watch.updates)
            users = text_of(history, "user_message_chunk")
            missing = [p for p in self.prompts if p not in users]
            if missing:
                raise Failure(f"the replayed history lacks the user's messages {missing}; it has {users!r}")
            answers = text_of(history, "agent_message_chunk")
            for marker in ("PLAIN-ANSWER", "READ-DONE", "EDIT-DONE", "WRITE-DONE", "COMMAND-DONE"):
                if marker not in answers:
                    raise Failure(f"the replayed history lacks the answer {marker}")
            replayed = started_ids(history)
            if sorted(replayed) != sorted(self.first_ids):
                raise Failure(f"replayed tool call ids {replayed} != live ids {sorted(self.first_ids)}")

        with self.stage("session/load replays the command's output"):
            commands = [c for c in tool_calls(history).values() if c.get("kind") == "execute"]
            if len(commands) != 1:
                raise Failure(f"want one replayed command, got {short(commands)}")
            content = commands[0].get("content") or []
            if any(c.get("type") == "terminal" for c in content):
                raise Failure(f"the command replays as a terminal reference: {short(commands[0])}")
            if "hi-from-tandem" not in all_text(content):
                raise Failure(f"the replayed command lacks its output: {short(commands[0])}")

        with self.stage("prompt after load"):
            updates = await self.prompt(conn, watch, "Say something plain again.")
            if "PLAIN-ANSWER" not in text_of(updates, "agent_message_chunk"):
                raise Failure("no answer after session/load")

        with self.stage("tool call ids after load"):
            # The fixture's call has the id every earlier call had: the prompt's own check
            # fails if the client sees it again.
            updates = await self.prompt(conn, watch, "Read the README again.")
            only_call(updates, "read")

    async def third_process(self, conn, watch: Watch, editor: Editor) -> None:
        await self.initialize(conn, watch)

        self.step = "session/resume in a third process"
        await conn.resume_session(cwd=str(self.workspace), session_id=self.session_id, mcp_servers=[])
        with self.stage("session/resume in a third process"):
            self.checked(watch)

        with self.stage("prompt after resume"):
            updates = await self.prompt(conn, watch, "Say something plain once more.")
            if "PLAIN-ANSWER" not in text_of(updates, "agent_message_chunk"):
                raise Failure("no answer after session/resume")

        with self.stage("session/list after resume"):
            listed = await conn.list_sessions(cwd=str(self.workspace))
            if self.session_id not in [s.session_id for s in listed.sessions]:
                raise Failure("the session is gone from session/list")
            self.checked(watch)

    async def main(self) -> None:
        await self.process("first", self.first_process)
        await self.process("second", self.second_process)
        await self.process("third", self.third_process)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tandem", required=True)
    parser.add_argument("--fixture", required=True)
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--log", required=True)
    args = parser.parse_args()
    run = Run(args)
    try:
        asyncio.run(asyncio.wait_for(run.main(), 240))
    except Exception as exc:  # noqa: BLE001 - every failure is reported the same way
        if isinstance(exc, acp.RequestError):
            detail = f"tandem answered with error {exc.code} {exc}: {json.dumps(exc.data)}"
        elif isinstance(exc, asyncio.TimeoutError):
            detail = "timed out"
        else:
            detail = f"{type(exc).__name__}: {exc}"
        run.failures.append((run.step, detail + " (the run stopped here)"))
    return report(CLIENT, run.session_id, run.failures, f"{len(run.prompts)} prompts, 3 processes")


if __name__ == "__main__":
    sys.exit(main())
