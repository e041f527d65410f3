#!/usr/bin/env python3
"""Drives tandem through one session with acpx (the headless ACP command-line client on npm),
the way a script or another agent would: `acpx --agent CMD ...` with `sessions new`, one
`prompt` per step, `cancel`, `sessions list`, and a prompt after the first tandem process is
gone, which makes acpx start a new one and `session/resume` the session.

acpx keeps one tandem process per session alive between its invocations (its "queue
owner"), advertises fs and terminal capabilities itself, answers permission requests from
--approve-all, and with --format json prints the session's JSON-RPC messages on stdout,
which is what the checks read. tandem is started through a small wrapper that also copies
every message both ways to a log, and every message tandem sent is validated afterwards
against the Python SDK's models (acpx's own SDK only logs what does not parse).

acpx keeps its state under $HOME, so the caller gives it a scratch HOME.

Usage: acpx_client.py --acpx BIN --tandem BIN --fixture FILE --workspace DIR --data-dir DIR
                      --log DIR --home DIR
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from acp_checks import (
    INCOMING,
    RESPONSES,
    Failure,
    changes,
    check_calls,
    only_call,
    report,
    short,
    started_ids,
    text_of,
    tool_calls,
)
from pydantic import ValidationError

CLIENT = "acpx"


class Run:
    def __init__(self, args: argparse.Namespace) -> None:
        self.acpx = str(Path(args.acpx).resolve())
        self.tandem = str(Path(args.tandem).resolve())
        self.fixture = str(Path(args.fixture).resolve())
        self.workspace = Path(args.workspace).resolve()
        self.data_dir = Path(args.data_dir).resolve()
        self.log_dir = Path(args.log).resolve()
        self.home = Path(args.home).resolve()
        self.step = "start"
        self.failures: list[tuple[str, str]] = []
        self.session_id = ""
        self.updates: list[dict[str, Any]] = []  # every session/update acpx printed, in order
        self.prompts: list[str] = []
        self.wire_in = self.log_dir / f"{CLIENT}.to-tandem.ndjson"
        self.wire_out = self.log_dir / f"{CLIENT}.from-tandem.ndjson"
        self.agent = self.log_dir / f"{CLIENT}.agent.sh"
        self.agent.write_text(
            "#!/usr/bin/env bash\n"
            "# tandem as acpx starts it, with every message copied to a log both ways.\n"
            f"export TANDEM_HOME={shlex.quote(str(self.data_dir))}\n"
            f"export XDG_CONFIG_HOME={shlex.quote(str(self.data_dir / 'config'))}\n"
            f"export XDG_DATA_HOME={shlex.quote(str(self.data_dir / 'share'))}\n"
            f"tee -a {shlex.quote(str(self.wire_in))} "
            f"| {shlex.quote(self.tandem)} --replay {shlex.quote(self.fixture)} "
            f"2>>{shlex.quote(str(self.log_dir / (CLIENT + '.stderr')))} "
            f"| tee -a {shlex.quote(str(self.wire_out))}\n"
        )
        self.agent.chmod(0o755)
        self.transcript = (self.log_dir / f"{CLIENT}.commands.log").open("a", encoding="utf-8")

    def stage(self, name: str):
        run = self

        class Stage:
            def __enter__(self):
                run.step = name

            def __exit__(self, kind, exc, tb):
                if isinstance(exc, Failure):
                    run.failures.append((name, str(exc)))
                    return True
                return False

        return Stage()

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["HOME"] = str(self.home)
        return env

    def command(self, *argv: str, ttl: int = 120) -> list[str]:
        # The queue owner keeps tandem alive for `ttl` idle seconds: long enough that the
        # whole first part runs in one tandem process, which plays the fixture's turns in order.
        return [
            self.acpx,
            "--agent",
            str(self.agent),
            "--cwd",
            str(self.workspace),
            "--approve-all",
            "--format",
            "json",
            "--ttl",
            str(ttl),
            *argv,
        ]

    def acpx_run(self, *argv: str, timeout: float = 60, ok: tuple[int, ...] = (0,)):
        """Runs acpx; its stdout as JSON lines."""
        argv_full = self.command(*argv)
        started = time.monotonic()
        try:
            done = subprocess.run(
                argv_full,
                env=self.env(),
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise Failure(f"`acpx {' '.join(argv)}` did not finish within {timeout} s") from exc
        self.record(argv, done.returncode, done.stdout, done.stderr, time.monotonic() - started)
        if done.returncode not in ok:
            raise Failure(
                f"`acpx {' '.join(argv)}` exited {done.returncode}:\n{done.stderr.strip()[-2000:]}"
            )
        return parse_lines(done.stdout, argv)

    def record(self, argv, code, stdout, stderr, seconds) -> None:
        self.transcript.write(
            f"$ acpx {' '.join(shlex.quote(a) for a in argv)}  # exit {code}, {seconds:.1f} s\n"
            f"{stdout}{stderr}\n"
        )
        self.transcript.flush()

    def prompt(self, text: str, want: str = "end_turn") -> list[dict[str, Any]]:
        """One `acpx prompt`; the session/update params it printed."""
        self.prompts.append(text)
        messages = self.acpx_run("prompt", text)
        return self.turn(messages, text, want)

    def turn(self, messages: list[dict[str, Any]], text: str, want: str) -> list[dict[str, Any]]:
        prompt_ids = [
            m["id"]
            for m in messages
            if m.get("method") == "session/prompt"
            and any(b.get("text") == text for b in m["params"].get("prompt", []))
        ]
        if len(prompt_ids) != 1:
            raise Failure(f"acpx printed no session/prompt for {text!r}")
        answers = [m for m in messages if "method" not in m and m.get("id") == prompt_ids[0]]
        if len(answers) != 1 or "result" not in answers[0]:
            raise Failure(f"no result for the session/prompt: {short(answers)}")
        reason = answers[0]["result"].get("stopReason")
        updates = [
            m["params"] for m in messages if m.get("method") == "session/update"
        ]
        for params in updates:
            if params.get("sessionId") != self.session_id:
                raise Failure(f"an update for another session: {short(params)}")
        before = self.updates
        self.updates = before + updates
        if reason != want:
            raise Failure(f"stopReason {reason!r}, want {want!r}")
        try:
            check_calls(before, updates)
        except Failure as exc:  # recorded, and the step goes on to its own checks
            self.failures.append((self.step, str(exc)))
        return updates

    def requests(self, messages, method: str) -> list[dict[str, Any]]:
        return [m for m in messages if m.get("method") == method and "id" in m]

    def owner_pid(self) -> int | None:
        status = self.acpx_run("status")
        for item in status:
            if item.get("status") == "alive" and item.get("pid"):
                return int(item["pid"])
        return None

    def main(self) -> None:
        with self.stage("sessions new"):
            created = self.acpx_run("sessions", "new")
            wire = read_wire(self.wire_out)
            news = [m for m in wire if "result" in m and "sessionId" in (m["result"] or {})]
            if len(news) != 1:
                raise Failure(f"want one session/new answer from tandem, got {short(news)}")
            self.session_id = news[0]["result"]["sessionId"]
            if not any(self.session_id in json.dumps(c) for c in created):
                raise Failure(f"acpx did not report session {self.session_id}: {short(created)}")
        if not self.session_id:
            raise Failure("no session to go on with")

        with self.stage("plain answer"):
            updates = self.prompt("Say something plain.")
            answer = text_of(updates, "agent_message_chunk")
            if "PLAIN-ANSWER: tandem is listening." not in answer:
                raise Failure(f"answer text is {answer!r}")
            if "no tools needed" not in text_of(updates, "agent_thought_chunk"):
                raise Failure("the thought did not arrive as agent_thought_chunk")

        with self.stage("read a file"):
            self.prompts.append("Read the README.")
            messages = self.acpx_run("prompt", "Read the README.")
            updates = self.turn(messages, "Read the README.", "end_turn")
            reads = [r["params"]["path"] for r in self.requests(messages, "fs/read_text_file")]
            if str(self.workspace / "README.md") not in reads:
                raise Failure(f"no fs/read_text_file for README.md; reads were {reads}")
            only_call(updates, "read")
            if "READ-DONE" not in text_of(updates, "agent_message_chunk"):
                raise Failure("the answer after the read did not arrive")

        with self.stage("edit with permission"):
            self.prompts.append("Add the missing test.")
            messages = self.acpx_run("prompt", "Add the missing test.")
            updates = self.turn(messages, "Add the missing test.", "end_turn")
            if len(self.requests(messages, "session/request_permission")) != 1:
                raise Failure("the edit did not ask session/request_permission")
            lib = self.workspace / "src" / "lib.rs"
            if "fn greets" not in lib.read_text() or "TODO: add a test" in lib.read_text():
                raise Failure(f"src/lib.rs on disk did not change:\n{lib.read_text()}")
            if not self.requests(messages, "fs/write_text_file"):
                raise Failure("the edit did not go through fs/write_text_file")
            edit = only_call(updates, "edit")
            if not any(c.get("type") == "diff" for c in edit.get("content") or []):
                raise Failure(f"the edit call shows no diff: {short(edit)}")

        with self.stage("create a new file"):
            updates = self.prompt("Create notes/created.txt.")
            created = self.workspace / "notes" / "created.txt"
            if not created.exists():
                calls = list(tool_calls(updates).values())
                raise Failure(f"notes/created.txt was not created; the call ended as {short(calls)}")
            if created.read_text() != "CREATED-BY-TANDEM\n":
                raise Failure(f"notes/created.txt holds {created.read_text()!r}")

        with self.stage("run a command"):
            self.prompts.append("Run echo.")
            messages = self.acpx_run("prompt", "Run echo.")
            updates = self.turn(messages, "Run echo.", "end_turn")
            if len(self.requests(messages, "session/request_permission")) != 1:
                raise Failure("the command did not ask session/request_permission")
            run = only_call(updates, "execute")
            # acpx advertises terminals: the command runs in acpx's, and tandem reads its output
            # back with terminal/output.
            if not self.requests(messages, "terminal/create"):
                raise Failure("the command did not run in acpx's terminal (no terminal/create)")
            outputs = [
                m for m in messages if "result" in m and "hi-from-tandem" in json.dumps(m["result"])
            ]
            if not outputs and "hi-from-tandem" not in json.dumps(run.get("content")):
                raise Failure(f"the command's output did not reach the client: {short(run)}")

        with self.stage("cancel while streaming"):
            self.prompts.append("Answer slowly.")
            slow = subprocess.Popen(
                self.command("prompt", "Answer slowly."),
                env=self.env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            started = time.monotonic()
            lines: list[str] = []
            assert slow.stdout is not None
            for line in slow.stdout:
                lines.append(line)
                if "SLOW-CHUNK" in line:
                    break
                if time.monotonic() - started > 20:
                    slow.kill()
                    raise Failure("no chunk of the slow answer arrived within 20 s")
            self.acpx_run("cancel")
            try:
                rest, err = slow.communicate(timeout=30)
            except subprocess.TimeoutExpired as exc:
                slow.kill()
                raise Failure("the cancelled prompt did not end within 30 s") from exc
            stdout = "".join(lines) + rest
            self.record(["prompt", "Answer slowly."], slow.returncode, stdout, err, time.monotonic() - started)
            messages = parse_lines(stdout, ["prompt", "Answer slowly."])
            updates = self.turn(messages, "Answer slowly.", "cancelled")
            if text_of(updates, "agent_message_chunk").count("SLOW-CHUNK") >= 100:
                raise Failure("the whole slow answer streamed: the cancel stopped nothing")
            if not any(m.get("method") == "session/cancel" for m in read_wire(self.wire_in)):
                raise Failure("acpx never sent session/cancel")

        with self.stage("sessions list"):
            listed = self.acpx_run("sessions", "list")
            if self.session_id not in json.dumps(listed):
                raise Failure(f"session {self.session_id} not in `acpx sessions list`: {short(listed)}")
            if not any(m.get("method") == "session/list" for m in read_wire(self.wire_in)):
                raise Failure("acpx listed its own records instead of asking tandem (no session/list)")

        with self.stage("tool call ids"):
            ids = started_ids(self.updates)
            if len(ids) != 4 or len(set(ids)) != 4:
                raise Failure(f"want 4 distinct tool call ids, got {ids}")

        self.step = "stop the first tandem process"
        pid = self.owner_pid()
        if pid is None:
            raise Failure("acpx status shows no live queue owner to stop")
        os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            if self.owner_pid() is None:
                break
            time.sleep(0.2)
        else:
            raise Failure(f"acpx's queue owner {pid} did not stop within 20 s of SIGTERM")

        with self.stage("session/resume in a second process"):
            inits_before = len([m for m in read_wire(self.wire_in) if m.get("method") == "initialize"])
            updates = self.prompt("Say something plain again.")
            wire_in = read_wire(self.wire_in)
            inits = [m for m in wire_in if m.get("method") == "initialize"]
            if len(inits) != inits_before + 1:
                raise Failure("acpx did not start a new tandem process")
            resumes = [m for m in wire_in if m.get("method") in ("session/resume", "session/load")]
            if not resumes or resumes[-1]["params"].get("sessionId") != self.session_id:
                raise Failure(f"the new process did not resume or load the session: {short(resumes[-1:])}")
            answers = [m for m in read_wire(self.wire_out) if m.get("id") == resumes[-1]["id"] and "method" not in m]
            if not answers or "result" not in answers[-1]:
                raise Failure(f"tandem refused {resumes[-1]['method']}: {short(answers)}")
            if "PLAIN-ANSWER" not in text_of(updates, "agent_message_chunk"):
                raise Failure("no answer after the resume")

        with self.stage("tool call ids after resume"):
            # The fixture's call has the id every earlier call had: the prompt's own check
            # fails if the client sees it again.
            updates = self.prompt("Read the README again.")
            only_call(updates, "read")

        with self.stage("every message tandem sent validates"):
            validate_wire(read_wire(self.wire_in), read_wire(self.wire_out))

        with self.stage("close"):
            self.acpx_run("sessions", "close")


def parse_lines(stdout: str, argv) -> list[dict[str, Any]]:
    out = []
    for line in stdout.splitlines():
        if not line.strip():
            continue
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError as exc:
            raise Failure(f"`acpx {' '.join(argv)}` printed a line that is not JSON: {line[:300]}") from exc
    return out


def read_wire(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                out.append({"unparsed": line})
    return out


def validate_wire(sent: list[dict[str, Any]], received: list[dict[str, Any]]) -> None:
    """Every message tandem sent parses with the Python SDK's model for its method, or for
    the request it answers, and loses nothing in the parse. Request ids restart with every
    tandem process, so answers are matched to requests in order."""
    problems = []
    pending: dict[Any, list[str]] = {}
    for message in sent:
        if "method" in message and "id" in message:
            pending.setdefault(message["id"], []).append(message["method"])
    for message in received:
        if "unparsed" in message or message.get("jsonrpc") != "2.0":
            problems.append(f"not a JSON-RPC 2.0 message: {short(message)}")
            continue
        if "method" in message:
            if message["method"].startswith("_"):
                continue
            model = INCOMING.get(message["method"])
            if message["method"].startswith("terminal/"):
                continue  # acpx answers these; the Python SDK parses them only when asked to
            if model is None:
                problems.append(f"unexpected method {message['method']}: {short(message)}")
                continue
            value = message.get("params")
        else:
            methods = pending.get(message.get("id")) or []
            method = methods.pop(0) if methods else None
            model = RESPONSES.get(method or "")
            if model is None or "result" not in message:
                continue
            value = message["result"] if message["result"] is not None else {}
        try:
            parsed = model.model_validate(value)
        except ValidationError as exc:
            problems.append(f"does not validate as {model.__name__}: {short(message)}\n{exc}")
            continue
        lost = changes(value, parsed.model_dump(mode="json", by_alias=True))
        if lost:
            problems.append(f"the SDK's {model.__name__} drops or changes {', '.join(lost)}: {short(message)}")
    if problems:
        raise Failure("\n".join(problems))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    for name in ("acpx", "tandem", "fixture", "workspace", "data-dir", "log", "home"):
        parser.add_argument(f"--{name}", required=True)
    run = Run(parser.parse_args())
    try:
        run.main()
    except Failure as exc:
        run.failures.append((run.step, f"{exc} (the run stopped here)"))
    except Exception as exc:  # noqa: BLE001 - every failure is reported the same way
        run.failures.append((run.step, f"{type(exc).__name__}: {exc} (the run stopped here)"))
    finally:
        # Never leave a queue owner (and its tandem) behind.
        try:
            pid = run.owner_pid()
            if pid:
                os.kill(pid, signal.SIGTERM)
        except Exception:  # noqa: BLE001
            pass
        # acpx puts its queue sockets in /tmp/acpx-<hash of HOME>; it leaves the folder.
        sockets = Path("/tmp") / f"acpx-{hashlib.sha256(str(run.home).encode()).hexdigest()[:10]}"
        with contextlib.suppress(OSError):
            sockets.rmdir()
    return report(CLIENT, run.session_id, run.failures, f"{len(run.prompts)} prompts, 2 tandem processes after sessions new")


if __name__ == "__main__":
    sys.exit(main())
