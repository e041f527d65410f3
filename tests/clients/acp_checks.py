"""What every client in this suite checks, shared by python_client.py and acpx_client.py:
each message from tandem against the Python SDK's pydantic model for its method (and each
response against the model of the request it answers), the SDK's own logged errors, and
small readers of the updates a prompt produced.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Any

from acp import schema as S
from pydantic import BaseModel, ValidationError


# What tandem may send us, and the SDK model each one must parse as.
INCOMING = {
    "session/update": S.SessionNotification,
    "session/request_permission": S.RequestPermissionRequest,
    "fs/read_text_file": S.ReadTextFileRequest,
    "fs/write_text_file": S.WriteTextFileRequest,
}
# Our requests, and the SDK model each answer must parse as.
RESPONSES = {
    "initialize": S.InitializeResponse,
    "session/new": S.NewSessionResponse,
    "session/load": S.LoadSessionResponse,
    "session/resume": S.ResumeSessionResponse,
    "session/list": S.ListSessionsResponse,
    "session/prompt": S.PromptResponse,
}


class Failure(Exception):
    pass


def short(message: Any, limit: int = 600) -> str:
    text = json.dumps(message, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


class Watch:
    """Everything seen on the wire in one tandem process, and every problem with it."""

    def __init__(self, log_path: Path) -> None:
        self.log = log_path.open("a", encoding="utf-8")
        self.problems: list[str] = []
        self.pending: dict[Any, str] = {}
        self.updates: list[dict[str, Any]] = []  # raw session/update params, in order
        self.requests: list[dict[str, Any]] = []  # raw requests from tandem, in order

    def observe(self, event: Any) -> None:
        message = event.message
        incoming = event.direction.value == "incoming"
        self.log.write(("<- " if incoming else "-> ") + json.dumps(message) + "\n")
        self.log.flush()
        try:
            if incoming:
                self._incoming(message)
            else:
                self._outgoing(message)
        except Exception as exc:  # noqa: BLE001 - the SDK would only log it
            self.problems.append(f"checking {short(message)}: {exc!r}")

    def _outgoing(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            self.pending[message["id"]] = message["method"]
        elif "error" in message and "method" not in message:
            error = message["error"]
            # The one error we answer on purpose: a read of a file that is not there (the
            # SDK turns our FileNotFoundError into -32603, as any client built on it does).
            if error.get("code") == -32603 and "No such file" in json.dumps(error):
                return
            self.problems.append(f"the SDK answered tandem's request with an error: {short(message)}")

    def _incoming(self, message: dict[str, Any]) -> None:
        if message.get("jsonrpc") != "2.0":
            self.problems.append(f"not JSON-RPC 2.0: {short(message)}")
        method = message.get("method")
        if method is not None:
            if method.startswith("_"):
                return  # an extension; the protocol lets clients ignore them
            model = INCOMING.get(method)
            if model is None:
                self.problems.append(f"unexpected method {method}: {short(message)}")
                return
            self._validate(model, message.get("params"), message)
            if method == "session/update":
                self.updates.append(message["params"])
            elif "id" in message:
                self.requests.append(message)
            else:
                self.problems.append(f"{method} came as a notification: {short(message)}")
            return
        sent = self.pending.pop(message.get("id"), None)
        if sent is None:
            self.problems.append(f"a response to no request of ours: {short(message)}")
            return
        if "result" in message:
            model = RESPONSES.get(sent)
            if model is not None:
                result = message["result"]
                self._validate(model, result if result is not None else {}, message)

    def _validate(self, model: type[BaseModel], value: Any, message: dict[str, Any]) -> None:
        try:
            parsed = model.model_validate(value)
        except ValidationError as exc:
            self.problems.append(f"does not validate as {model.__name__}: {short(message)}\n{exc}")
            return
        # The SDK's models are lenient on purpose: an optional field whose value does not
        # validate becomes None, silently. The client never sees what tandem sent, so that
        # counts as a failure here.
        dumped = parsed.model_dump(mode="json", by_alias=True)
        lost = changes(value, dumped)
        if lost:
            self.problems.append(
                f"the SDK's {model.__name__} drops or changes {', '.join(lost)}: {short(message)}"
            )

    def check(self) -> None:
        problems, self.problems = self.problems, []
        if problems:
            raise Failure("\n".join(problems))


def changes(raw: Any, parsed: Any, path: str = "") -> list[str]:
    """Where `parsed` (the SDK's reading of `raw`, dumped back to JSON) lost or changed a value
    `raw` had: a field the model knows that came out null, a list that came out shorter, a
    value that came out different. A field the model does not know comes out absent, and the
    protocol allows those, so that is not counted; a null in `raw` counts as absent."""
    if isinstance(raw, dict):
        if not isinstance(parsed, dict):
            return [path or "the whole value"]
        out = []
        for key, value in raw.items():
            if value is not None and key in parsed:
                out += changes(value, parsed[key], f"{path}.{key}" if path else key)
        return out
    if isinstance(raw, list):
        if not isinstance(parsed, list) or len(parsed) != len(raw):
            return [f"{path}[]"]
        out = []
        for i, (a, b) in enumerate(zip(raw, parsed)):
            out += changes(a, b, f"{path}[{i}]")
        return out
    return [] if raw == parsed else [path or "the whole value"]


class LoggedErrors(logging.Handler):
    """The SDK logs (and otherwise swallows) failures in handlers and background tasks."""

    def __init__(self) -> None:
        super().__init__(level=logging.ERROR)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        # Our read of a missing file raises on purpose (see Watch._outgoing).
        if record.exc_info and isinstance(record.exc_info[1], FileNotFoundError):
            return
        self.records.append(self.format(record))


def text_of(updates: list[dict[str, Any]], kind: str) -> str:
    out = []
    for params in updates:
        update = params["update"]
        if update.get("sessionUpdate") == kind and update.get("content", {}).get("type") == "text":
            out.append(update["content"]["text"])
    return "".join(out)


def tool_calls(updates: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Tool calls by id, each the merge of its tool_call and tool_call_update messages (a
    repeated id merges into one entry; `started_ids` shows the repeats)."""
    calls: dict[str, dict[str, Any]] = {}
    for params in updates:
        update = params["update"]
        if update.get("sessionUpdate") in ("tool_call", "tool_call_update"):
            call = calls.setdefault(update.get("toolCallId"), {})
            call.update({k: v for k, v in update.items() if v is not None})
    return calls


def started_ids(updates: list[dict[str, Any]]) -> list[str]:
    """The id of every tool_call message, in order, repeats included."""
    return [
        p["update"].get("toolCallId") for p in updates if p["update"].get("sessionUpdate") == "tool_call"
    ]


def check_calls(before: list[dict[str, Any]], updates: list[dict[str, Any]]) -> None:
    """Every call in `updates` starts with an id new to the session (`before` is what the
    client saw earlier), and every tool_call_update names a call already started."""
    seen = set(started_ids(before))
    for params in updates:
        update = params["update"]
        kind = update.get("sessionUpdate")
        if kind == "tool_call":
            if update.get("toolCallId") in seen:
                raise Failure(
                    f"tool call id {update['toolCallId']} was already used in this session: {short(update)}"
                )
            seen.add(update.get("toolCallId"))
        elif kind == "tool_call_update" and update.get("toolCallId") not in seen:
            raise Failure(f"an update for a tool call never started: {short(update)}")


def all_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def only_call(updates: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    calls = list(tool_calls(updates).values())
    if len(calls) != 1 or calls[0].get("kind") != kind or calls[0].get("status") != "completed":
        raise Failure(f"want one completed {kind} call, got {short(calls)}")
    return calls[0]


def report(client: str, session_id: Any, failures: list[tuple[str, str]], summary: str) -> int:
    """Prints a client run's result (each failure with its step, or one ok line); the exit code."""
    for step, detail in failures:
        print(f"{client}: FAILED at step '{step}': {detail}", file=sys.stderr)
    if failures:
        return 1
    print(f"{client}: ok (session {session_id}, {summary})")
    return 0
