"""JSON-RPC 2.0 over newline-delimited JSON on an agent's stdio: the editor's end of ACP.

One thread reads the agent's stdout. Answers to our requests wake their waiters;
notifications go to `on_notification`; the agent's requests (fs/*, terminal/*, permission)
each run on a thread of their own, since `terminal/wait_for_exit` may block for minutes, and
their result or `RpcError` is written back.
"""

import json
import os
import signal
import subprocess
import threading


MAX_LINE = 64 << 20


class RpcError(Exception):
    """A JSON-RPC error to send back (or one the agent sent us)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


class AgentGone(Exception):
    """The agent's stdout closed."""


class Connection:
    """An agent process and the protocol on its stdio."""

    def __init__(self, argv, env, cwd, stderr_path, on_request, on_notification):
        self._stderr = open(stderr_path, "wb")
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
            env=env, cwd=cwd, start_new_session=True,
        )
        self._on_request = on_request
        self._on_notification = on_notification
        self._write_lock = threading.Lock()
        self._pending = {}
        self._pending_lock = threading.Lock()
        self._next_id = 0
        self.gone = threading.Event()
        self.protocol_errors = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _send(self, message):
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        with self._write_lock:
            try:
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                self.gone.set()

    def request(self, method, params, timeout=None):
        """Sends a request and waits for its answer; raises RpcError, AgentGone or TimeoutError."""
        with self._pending_lock:
            self._next_id += 1
            rid = self._next_id
            waiter = {"event": threading.Event(), "message": None}
            self._pending[rid] = waiter
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        deadline_hit = not self._wait(waiter["event"], timeout)
        with self._pending_lock:
            self._pending.pop(rid, None)
        if deadline_hit:
            raise TimeoutError(method)
        message = waiter["message"]
        if message is None:
            raise AgentGone(method)
        if "error" in message:
            error = message["error"] if isinstance(message["error"], dict) else {
                "code": 0, "message": f"a malformed error: {message['error']!r:.200}"}
            raise RpcError(error.get("code", 0), str(error.get("message", "")))
        return message.get("result")

    def _wait(self, event, timeout):
        """Waits for `event`, or the agent's end, or `timeout` seconds; False on timeout."""
        step = 0.05
        waited = 0.0
        while not event.is_set():
            if self.gone.is_set():
                return True
            event.wait(step)
            waited += step
            if timeout is not None and waited >= timeout:
                return event.is_set()
        return True

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _read(self):
        while True:
            raw = self.proc.stdout.readline(MAX_LINE + 1)
            if not raw:
                break
            if len(raw) > MAX_LINE and not raw.endswith(b"\n"):
                self.protocol_errors.append(f"a line longer than {MAX_LINE >> 20} MiB")
                while raw and not raw.endswith(b"\n"):  # skip the rest of it
                    raw = self.proc.stdout.readline(MAX_LINE)
                continue
            line = raw.strip()
            if line:
                try:
                    self._dispatch(line)
                except Exception as error:  # one bad message must not stop the reading
                    self.protocol_errors.append(f"{type(error).__name__} on {line[:200]!r}")
        self.gone.set()
        with self._pending_lock:
            for waiter in self._pending.values():
                waiter["event"].set()

    def _dispatch(self, line):
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError("not an object")
        if "method" in message and "id" in message:
            threading.Thread(target=self._answer, args=(message,), daemon=True).start()
        elif "method" in message:
            params = message.get("params")
            self._on_notification(message["method"], params if isinstance(params, dict) else {})
        else:
            with self._pending_lock:
                waiter = self._pending.get(message.get("id"))
            if waiter:
                waiter["message"] = message
                waiter["event"].set()

    def _answer(self, message):
        reply = {"jsonrpc": "2.0", "id": message["id"]}
        try:
            reply["result"] = self._on_request(message["method"], message.get("params") or {})
        except RpcError as error:
            reply["error"] = {"code": error.code, "message": error.message}
        except Exception as error:  # a bug in the runner must not hang the agent
            reply["error"] = {"code": -32603, "message": f"{type(error).__name__}: {error}"}
        self._send(reply)

    def close(self, grace=3.0):
        """Closes stdin, waits `grace` seconds, then kills the agent's whole process group."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        self._reader.join(5)
        if not self._reader.is_alive():
            self.proc.stdout.close()
        self._stderr.close()
