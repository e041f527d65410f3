"""The editor's side of a session: files, terminals, permission answers, and the tally.

Every path the agent names must be absolute and lie inside the task's workspace, reached
without following a link (files.py). Terminals run the agent's command (its `command` and
`args`, as ACP gives them) in the sandbox, in a process group of their own, their output
kept to `outputByteLimit` from the end (1 MiB when the agent names none), at most 16 at once.
Permission requests are answered by policy: allow (once), allow always, or reject. Once the
task is over every request is refused.
"""

import os
import queue
import signal
import subprocess
import threading
import time

from . import files, sandbox
from .acp import RpcError

INVALID_PARAMS = -32602
NOT_FOUND = -32002
METHOD_NOT_FOUND = -32601
# A terminal's output kept when the agent names no limit, and terminals open at once.
DEFAULT_OUTPUT_LIMIT = 1 << 20
MAX_TERMINALS = 16

# Which option a policy picks, by ACP option kind, in order of preference.
POLICIES = {
    "allow": ("allow_once", "allow_always"),
    "allow-always": ("allow_always", "allow_once"),
    "reject": ("reject_once", "reject_always"),
}


class Tally:
    """What one session did, as the editor saw it."""

    def __init__(self):
        self.tool_calls = {}  # id -> {"kind", "status", "title"}
        self.permission_requests = 0
        self.permissions_rejected = 0
        self.fs_reads = 0
        self.fs_writes = 0
        self.terminals = 0
        self.answer = []
        self.lock = threading.Lock()

    def update(self, update):
        if not isinstance(update, dict):
            raise ValueError("a session/update without an update object")
        kind = update.get("sessionUpdate")
        with self.lock:
            if kind in ("tool_call", "tool_call_update"):
                call = self.tool_calls.setdefault(update.get("toolCallId"), {})
                for key in ("kind", "status", "title"):
                    if update.get(key) is not None:
                        call[key] = update[key]
                for item in update.get("content") or []:
                    inner = item.get("content") if isinstance(item, dict) else None
                    if isinstance(inner, dict) and inner.get("type") == "text":
                        call["text"] = str(inner.get("text"))[-300:]
            elif kind == "agent_message_chunk":
                content = update.get("content") or {}
                if content.get("type") == "text":
                    self.answer.append(content.get("text", ""))

    def failed_edits(self):
        return sum(1 for c in self.tool_calls.values()
                   if c.get("kind") == "edit" and c.get("status") == "failed")

    def failures(self):
        """The failed calls' titles and the end of what they said, for the report."""
        return [f"{c.get('title')}: {c.get('text', '')}" for c in self.tool_calls.values()
                if c.get("status") == "failed"][:10]

    def failed_calls(self):
        return sum(1 for c in self.tool_calls.values() if c.get("status") == "failed")


class _Spawner:
    """Starts processes from one thread that lives as long as the runner. bwrap's
    --die-with-parent follows the *thread* that started it, and the thread answering a
    terminal/create ends as soon as it has answered: started there, a command was killed
    mid-run."""

    def __init__(self):
        self.queue = queue.Queue()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            start, box, done = self.queue.get()
            try:
                box["value"] = start()
            except Exception as error:
                box["error"] = error
            done.set()

    def start(self, start):
        box, done = {}, threading.Event()
        self.queue.put((start, box, done))
        done.wait()
        if "error" in box:
            raise box["error"]
        return box["value"]


SPAWNER = _Spawner()


class Terminal:
    def __init__(self, argv, env, cwd, limit):
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.lock = threading.Lock()
        self.proc = SPAWNER.start(lambda: subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=env, cwd=cwd, start_new_session=True,
        ))
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            chunk = self.proc.stdout.read1(65536)
            if not chunk:
                self.proc.stdout.close()
                break
            with self.lock:
                self.output += chunk
                if self.limit is not None and len(self.output) > self.limit:
                    cut = len(self.output) - self.limit
                    # Keep whole UTF-8 characters: skip continuation bytes at the new start.
                    while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                        cut += 1
                    del self.output[:cut]
                    self.truncated = True

    def status(self):
        code = self.proc.poll()
        if code is None:
            return None
        self.reader.join(5)
        if code < 0:
            return {"exitCode": None, "signal": signal.Signals(-code).name}
        return {"exitCode": code, "signal": None}

    def kill(self):
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


class Editor:
    """Answers one agent's requests for one task's workspace."""

    def __init__(self, workspace, sandbox_mode, policy, env, tally, shared=(), visible=()):
        self.workspace = workspace
        self.shared = shared
        self.visible = visible
        self.sandbox_mode = sandbox_mode
        self.choices = POLICIES[policy]
        self.env = env
        self.tally = tally
        self.terminals = {}
        self.next_terminal = 0
        self.lock = threading.Lock()
        self.closed = False

    def handle(self, method, params):
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        handler = {
            "fs/read_text_file": self.read_text_file,
            "fs/write_text_file": self.write_text_file,
            "session/request_permission": self.request_permission,
            "terminal/create": self.terminal_create,
            "terminal/output": self.terminal_output,
            "terminal/wait_for_exit": self.terminal_wait,
            "terminal/kill": self.terminal_kill,
            "terminal/release": self.terminal_release,
        }.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, f"method not found: {method}")
        return handler(params)

    def on_notification(self, method, params):
        if method == "session/update":
            self.tally.update(params.get("update") or {})

    def _closed(self):
        if self.closed:
            raise RpcError(INVALID_PARAMS, "the task is over")

    def read_text_file(self, params):
        self._closed()
        path = params.get("path")
        try:
            text = files.read(self.workspace, path)
        except FileNotFoundError:
            raise RpcError(NOT_FOUND, f"no such file: {path}")
        except files.Refused as refused:
            raise RpcError(INVALID_PARAMS, str(refused))
        self.tally.fs_reads += 1
        line, limit = params.get("line"), params.get("limit")
        if line is not None or limit is not None:
            if not all(v is None or (isinstance(v, int) and v >= 0) for v in (line, limit)):
                raise RpcError(INVALID_PARAMS, "line and limit must be non-negative integers")
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = len(lines) if limit is None else start + limit
            text = "".join(lines[start:end])
        return {"content": text}

    def write_text_file(self, params):
        self._closed()
        path, content = params.get("path"), params.get("content")
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "content must be a string")
        try:
            files.write(self.workspace, path, content)
        except (files.Refused, FileNotFoundError) as refused:
            raise RpcError(INVALID_PARAMS, str(refused))
        self.tally.fs_writes += 1
        return {}

    def request_permission(self, params):
        self._closed()
        self.tally.permission_requests += 1
        options = [o for o in params.get("options") or [] if isinstance(o, dict)]
        for kind in self.choices:
            for option in options:
                if option.get("kind") == kind and "optionId" in option:
                    if kind.startswith("reject"):
                        self.tally.permissions_rejected += 1
                    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}

    def terminal_create(self, params):
        command = params.get("command")
        if not isinstance(command, str) or not command:
            raise RpcError(INVALID_PARAMS, "command must be a non-empty string")
        args = params.get("args") or []
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise RpcError(INVALID_PARAMS, "args must be a list of strings")
        cwd = params.get("cwd") or self.workspace
        if not isinstance(cwd, str) or not sandbox.inside(self.workspace, cwd):
            raise RpcError(INVALID_PARAMS, f"cwd {cwd} is outside the task's workspace")
        limit = params.get("outputByteLimit")
        if limit is None:
            limit = DEFAULT_OUTPUT_LIMIT
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
            raise RpcError(INVALID_PARAMS, "outputByteLimit must be a non-negative integer")
        env = dict(self.env)
        for pair in params.get("env") or []:
            name = pair.get("name") if isinstance(pair, dict) else None
            value = pair.get("value") if isinstance(pair, dict) else None
            if not (isinstance(name, str) and isinstance(value, str) and name
                    and "=" not in name and "\0" not in name + value):
                raise RpcError(INVALID_PARAMS, "env entries must be {name, value} strings")
            env[name] = value
        argv = [command, *args]
        if self.sandbox_mode == "bwrap":
            # The agent's variables are set inside the sandbox, never on bwrap itself (an
            # LD_PRELOAD there would run outside it).
            argv = sandbox.wrap(argv, self.workspace, cwd, "bwrap", self.shared, self.visible,
                                env)
            env = self.env
        with self.lock:
            if self.closed:
                raise RpcError(INVALID_PARAMS, "the session is over")
            self.next_terminal += 1
            terminal_id = f"term-{self.next_terminal}"
            try:
                if len(self.terminals) >= MAX_TERMINALS:
                    raise RpcError(INVALID_PARAMS, f"at most {MAX_TERMINALS} terminals at once")
                self.terminals[terminal_id] = Terminal(argv, env, cwd, limit)
            except OSError as error:
                raise RpcError(INVALID_PARAMS, f"cannot start {command}: {error}")
        self.tally.terminals += 1
        return {"terminalId": terminal_id}

    def _terminal(self, params):
        with self.lock:
            terminal = self.terminals.get(params.get("terminalId"))
        if terminal is None:
            raise RpcError(INVALID_PARAMS, f"no terminal {params.get('terminalId')}")
        return terminal

    def terminal_output(self, params):
        terminal = self._terminal(params)
        status = terminal.status()
        with terminal.lock:
            output = terminal.output.decode("utf-8", errors="replace")
            truncated = terminal.truncated
        result = {"output": output, "truncated": truncated}
        if status is not None:
            result["exitStatus"] = status
        return result

    def terminal_wait(self, params):
        terminal = self._terminal(params)
        while terminal.status() is None:
            time.sleep(0.05)
        return terminal.status()

    def terminal_kill(self, params):
        self._terminal(params).kill()
        return {}

    def terminal_release(self, params):
        terminal = self._terminal(params)
        terminal.kill()
        with self.lock:
            self.terminals.pop(params.get("terminalId"), None)
        return {}

    def close(self):
        """Kills every terminal left (the session is over)."""
        with self.lock:
            self.closed = True
            terminals = list(self.terminals.values())
            self.terminals.clear()
        for terminal in terminals:
            terminal.kill()
