"""The editor's side of a session: files, terminals, permission answers, and the tally.

Every path the agent names must be absolute and lie inside the task's workspace (through
symlinks). Terminals run the agent's command (its `command` and `args`, as ACP gives them) in
the sandbox, in a process group of their own, their output kept to `outputByteLimit` from the
end. Permission requests are answered by policy: allow (once), allow always, or reject.
"""

import os
import signal
import stat
import subprocess
import threading
import time

from . import sandbox
from .acp import RpcError

INVALID_PARAMS = -32602
NOT_FOUND = -32002
METHOD_NOT_FOUND = -32601

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
        kind = update.get("sessionUpdate")
        with self.lock:
            if kind in ("tool_call", "tool_call_update"):
                call = self.tool_calls.setdefault(update.get("toolCallId"), {})
                for key in ("kind", "status", "title"):
                    if update.get(key) is not None:
                        call[key] = update[key]
            elif kind == "agent_message_chunk":
                content = update.get("content") or {}
                if content.get("type") == "text":
                    self.answer.append(content.get("text", ""))

    def failed_edits(self):
        return sum(1 for c in self.tool_calls.values()
                   if c.get("kind") == "edit" and c.get("status") == "failed")

    def failed_calls(self):
        return sum(1 for c in self.tool_calls.values() if c.get("status") == "failed")


class Terminal:
    def __init__(self, argv, env, cwd, limit):
        self.limit = limit
        self.output = bytearray()
        self.truncated = False
        self.lock = threading.Lock()
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            env=env, cwd=cwd, start_new_session=True,
        )
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

    def __init__(self, workspace, sandbox_mode, policy, env, tally, shared=()):
        self.workspace = workspace
        self.shared = shared
        self.sandbox_mode = sandbox_mode
        self.choices = POLICIES[policy]
        self.env = env
        self.tally = tally
        self.terminals = {}
        self.next_terminal = 0
        self.lock = threading.Lock()
        self.closed = False

    def handle(self, method, params):
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

    def _path(self, params):
        path = params.get("path")
        if not isinstance(path, str) or not os.path.isabs(path):
            raise RpcError(INVALID_PARAMS, "path must be an absolute path")
        if not sandbox.inside(self.workspace, path):
            raise RpcError(INVALID_PARAMS, f"{path} is outside the task's workspace")
        return path

    def read_text_file(self, params):
        path = self._path(params)
        self.tally.fs_reads += 1
        try:
            fd = self._open(path, os.O_RDONLY)
        except FileNotFoundError:
            raise RpcError(NOT_FOUND, f"no such file: {path}")
        except (IsADirectoryError, OSError) as error:
            raise RpcError(INVALID_PARAMS, f"cannot read {path}: {error.strerror or error}")
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            os.close(fd)
            raise RpcError(INVALID_PARAMS, f"{path} is a directory")
        with open(fd, encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
        line, limit = params.get("line"), params.get("limit")
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            end = len(lines) if limit is None else start + limit
            text = "".join(lines[start:end])
        return {"content": text}

    def write_text_file(self, params):
        path = self._path(params)
        content = params.get("content")
        if not isinstance(content, str):
            raise RpcError(INVALID_PARAMS, "content must be a string")
        self.tally.fs_writes += 1
        os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            fd = self._open(path, os.O_WRONLY | os.O_CREAT)
        except OSError as error:
            raise RpcError(INVALID_PARAMS, f"cannot write {path}: {error.strerror or error}")
        with open(fd, "w", encoding="utf-8", newline="") as f:
            f.truncate(0)  # only now: the file opened is known to be the workspace's
            f.write(content)
        return {}

    def _open(self, path, flags):
        """Opens `path` without following a link at its end, then checks that what was opened
        lies in the workspace (Linux: by the descriptor, so a folder swapped for a link by a
        command between the check and the open is caught). Raises RpcError if not."""
        fd = os.open(os.path.realpath(path), flags | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0),
                     0o644)
        link = f"/proc/self/fd/{fd}"
        opened = os.readlink(link) if os.path.islink(link) else path
        if not sandbox.inside(self.workspace, opened):
            os.close(fd)
            raise RpcError(INVALID_PARAMS, f"{path} is outside the task's workspace")
        return fd

    def request_permission(self, params):
        self.tally.permission_requests += 1
        options = params.get("options") or []
        for kind in self.choices:
            for option in options:
                if option.get("kind") == kind:
                    if kind.startswith("reject"):
                        self.tally.permissions_rejected += 1
                    return {"outcome": {"outcome": "selected", "optionId": option["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}

    def terminal_create(self, params):
        command = params.get("command")
        if not isinstance(command, str) or not command:
            raise RpcError(INVALID_PARAMS, "command must be a non-empty string")
        cwd = params.get("cwd") or self.workspace
        if not sandbox.inside(self.workspace, cwd):
            raise RpcError(INVALID_PARAMS, f"cwd {cwd} is outside the task's workspace")
        env = dict(self.env)
        for pair in params.get("env") or []:
            env[pair["name"]] = pair["value"]
        argv = sandbox.wrap([command, *(params.get("args") or [])], self.workspace, cwd,
                            self.sandbox_mode, self.shared)
        with self.lock:
            if self.closed:
                raise RpcError(INVALID_PARAMS, "the session is over")
            self.next_terminal += 1
            terminal_id = f"term-{self.next_terminal}"
            try:
                self.terminals[terminal_id] = Terminal(argv, env, cwd, params.get("outputByteLimit"))
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
