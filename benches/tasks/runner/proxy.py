"""The model end: a counting proxy in front of the endpoint every agent is pointed at.

Each agent talks to `http://127.0.0.1:PORT/<the endpoint's path>`; the proxy forwards every
request to the endpoint as it is (with the endpoint's key put in place of the stand-in the
agents hold), streams the answer back as it comes, and reads the
server's own `usage` out of it (chat completions, the Responses API and Anthropic's Messages
API, streamed or not) to count model requests and prompt and completion tokens per task. A
streamed chat completion that does not ask for usage gets `stream_options.include_usage`
added, so every agent's tokens are counted the same way. With an answer cap (run.py's
`--max-answer-tokens`), each request's own limit (`max_tokens`, `max_completion_tokens`,
`max_output_tokens`) is lowered to it, or the API's field set to it when the request names
none: llama-server's `-n` gives way to a request's own limit, so only the proxy can hold every
agent to the same cap. Past the task's request limit the proxy answers 400 and tells the
runner, which cancels the turn.

With `--replay`, the endpoint is `ReplayServer` (scripted.py) on another port, behind the same
proxy, so replay runs are counted exactly as real ones.
"""

import http.client
import http.server
import json
import threading
import urllib.parse

MODEL_PATHS = ("/chat/completions", "/responses", "/messages", "/completions")
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate", "host", "content-length",
              "accept-encoding"}
MAX_BODY = 64 << 20


class Counter:
    """One task's model traffic."""

    def __init__(self, limit):
        self.limit = limit
        self.requests = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.without_usage = 0
        self.errors = 0
        self.limit_hit = threading.Event()
        self.lock = threading.Lock()

    def as_dict(self):
        return {"requests": self.requests, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "requests_without_usage": self.without_usage, "model_errors": self.errors}


def usage_in(event):
    """(prompt, completion) tokens named in one JSON body or stream event, or None."""
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    if kind == "message_start":  # Anthropic: input counts, output so far
        usage = (event.get("message") or {}).get("usage") or {}
        prompt = sum(usage.get(k) or 0 for k in
                     ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        return (prompt, 0)
    if kind == "message_delta":  # Anthropic: the output count, cumulative
        return ("output", (event.get("usage") or {}).get("output_tokens") or 0)
    if kind in ("response.completed", "response.incomplete", "response.failed"):
        event = event.get("response") or {}
    usage = event.get("usage")
    if not isinstance(usage, dict):
        return None
    if "prompt_tokens" in usage or "completion_tokens" in usage:
        return (usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
    if "input_tokens" in usage or "output_tokens" in usage:
        prompt = sum(usage.get(k) or 0 for k in
                     ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"))
        return (prompt, usage.get("output_tokens") or 0)
    return None


class UsageReader:
    """Follows one answer's bytes (a JSON body or an SSE stream) and keeps its usage."""

    def __init__(self, streamed):
        self.streamed = streamed
        self.buffer = b""
        self.prompt = None
        self.completion = None

    def feed(self, data):
        self.buffer += data
        if not self.streamed:
            return
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            self._line(line.strip())

    def _line(self, line):
        if not line.startswith(b"data:"):
            return
        try:
            self._take(usage_in(json.loads(line[5:].strip())))
        except ValueError:
            pass

    def _take(self, found):
        if found is None:
            return
        if found[0] == "output":
            self.completion = found[1]
            return
        prompt, completion = found
        if prompt or self.prompt is None:
            self.prompt = prompt
        if completion or self.completion is None:
            self.completion = completion

    def finish(self):
        if self.streamed:
            self._line(self.buffer.strip())
        else:
            try:
                self._take(usage_in(json.loads(self.buffer)))
            except ValueError:
                pass
        if self.prompt is None and self.completion is None:
            return None
        return (self.prompt or 0, self.completion or 0)


class Proxy:
    """The counting proxy; `counter` is swapped per task."""

    def __init__(self, upstream, key=None, answer_cap=None):
        self.key = key
        self.answer_cap = answer_cap
        parsed = urllib.parse.urlsplit(upstream.rstrip("/"))
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise SystemExit(f"run.py: --base-url must be an http(s) URL, not {upstream!r}")
        self.scheme = parsed.scheme
        self.host = parsed.hostname
        self.port = parsed.port or (443 if parsed.scheme == "https" else 80)
        self.prefix = parsed.path
        self.counter = Counter(None)
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}{self.prefix}"

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def _connection(self):
        if self.scheme == "https":
            return http.client.HTTPSConnection(self.host, self.port, timeout=900)
        return http.client.HTTPConnection(self.host, self.port, timeout=900)

    def _handler(self):
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if proxy.allowed(self.path, get=True):
                    proxy.forward(self, None)
                else:
                    proxy.not_found(self)

            def do_POST(self):
                body = read_body(self)
                if body is None:
                    self.close_connection = True
                    return send_body(self, 400, {"Content-Type": "application/json"},
                                     b'{"error":{"message":"bench proxy: unreadable body"}}')
                if proxy.allowed(self.path, get=False):
                    proxy.forward(self, body)
                else:
                    proxy.not_found(self)

        return Handler

    def allowed(self, path, get):
        """Only the endpoint's model routes (and its model list) pass: nothing else of the
        server is the agent's, and no spelling of a path slips past the request count."""
        route = path.split("?")[0]
        if not route.startswith(self.prefix + "/"):
            return False
        rest = route[len(self.prefix):]
        if get:
            return rest in ("/models", "/v1/models") or rest.startswith("/models/")
        return rest in MODEL_PATHS or rest in tuple("/v1" + p for p in MODEL_PATHS)

    @staticmethod
    def not_found(handler):
        send_body(handler, 404, {"Content-Type": "application/json"},
                  b'{"error":{"message":"bench proxy: only the model routes are served"}}')


    def forward(self, handler, body):
        counter = self.counter
        is_model = body is not None
        streamed = False
        if is_model:
            with counter.lock:
                over = counter.limit is not None and counter.requests >= counter.limit
                if not over:
                    counter.requests += 1
            if over:
                counter.limit_hit.set()
                return self._refuse(handler)
            body, streamed = self._shaped(handler.path, body)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Host"] = self.host if self.port in (80, 443) else f"{self.host}:{self.port}"
        if self.key:
            # The agents hold a stand-in; the endpoint's key is added here, on its way out,
            # so no agent (nor a command it runs, nor the model it is talking to) has it.
            for name in list(headers):
                if name.lower() == "authorization":
                    headers[name] = f"Bearer {self.key}"
                elif name.lower() in ("x-api-key", "api-key", "x-goog-api-key"):
                    headers[name] = self.key
        if body is not None:
            headers["Content-Length"] = str(len(body))
        connection = self._connection()
        try:
            connection.request(handler.command, handler.path, body=body, headers=headers)
            answer = connection.getresponse()
        except OSError as error:
            if is_model:
                with counter.lock:
                    counter.errors += 1
            message = json.dumps({"error": {"message": f"bench proxy: {error}"}}).encode()
            return send_body(handler, 502, {"Content-Type": "application/json"}, message)
        reader = UsageReader(streamed and "event-stream" in (answer.getheader("Content-Type") or ""))
        handler.send_response(answer.status, answer.reason)
        for key, value in answer.getheaders():
            if key.lower() not in HOP_BY_HOP:
                handler.send_header(key, value)
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        counted = False
        expected = answer.length  # None when chunked or closed-delimited
        received = 0
        try:
            while True:
                try:
                    chunk = answer.read1(65536)
                except http.client.HTTPException:
                    chunk = None
                if chunk is None or (not chunk and expected is not None and received < expected):
                    # The server broke off: end the agent's answer without its last chunk,
                    # so it sees a failed stream, and count a model error.
                    status = 599
                    break
                if not chunk:
                    status = answer.status
                    break
                received += len(chunk)
                if is_model:
                    reader.feed(chunk)
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
            # Counted before the answer's end reaches the agent, so the tally is complete by
            # the time the agent can act on it.
            if is_model:
                self._count(counter, status, reader.finish())
                counted = True
            if status == 599:
                handler.close_connection = True
                return
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except OSError:
            pass  # the agent hung up (a cancelled turn)
        finally:
            connection.close()
            if is_model and not counted:
                self._count(counter, answer.status, reader.finish())

    @staticmethod
    def _count(counter, status, usage):
        with counter.lock:
            if status >= 400:
                counter.errors += 1
            elif usage is None:
                counter.without_usage += 1
            else:
                counter.prompt_tokens += usage[0]
                counter.completion_tokens += usage[1]

    def _shaped(self, path, body):
        """The body to send (asking for usage, within the answer cap), and whether the answer
        streams."""
        try:
            request = json.loads(body)
        except ValueError:
            return body, False
        if not isinstance(request, dict):
            return body, False
        route = path.split("?")[0]
        streamed = bool(request.get("stream"))
        changed = False
        if streamed and route.endswith("/chat/completions"):
            options = request.get("stream_options") or {}
            if not options.get("include_usage"):
                request["stream_options"] = {**options, "include_usage": True}
                changed = True
        if self.answer_cap is not None:
            changed = cap_answer(route, request, self.answer_cap) or changed
        if changed:
            body = json.dumps(request).encode()
        return body, streamed

    @staticmethod
    def _refuse(handler):
        message = {"error": {"message": "the task's model request limit is reached",
                             "type": "invalid_request_error", "code": "bench_request_limit"}}
        send_body(handler, 400, {"Content-Type": "application/json"}, json.dumps(message).encode())


LIMIT_FIELDS = ("max_tokens", "max_completion_tokens", "max_output_tokens")


def cap_answer(route, request, cap):
    """Holds `request`'s answer to at most `cap` tokens: each limit it names is lowered to
    `cap`, or, naming none, its API's field is set. Whether it changed."""
    named = [f for f in LIMIT_FIELDS if isinstance(request.get(f), int)]
    if not named:
        field = "max_output_tokens" if route.endswith("/responses") else "max_tokens"
        request[field] = cap
        return True
    changed = False
    for field in named:
        if request[field] > cap:
            request[field] = cap
            changed = True
    return changed


def read_body(handler):
    """The request's body, by Content-Length or chunked; None when it cannot be read."""
    if "chunked" in (handler.headers.get("Transfer-Encoding") or "").lower():
        body = b""
        while True:
            size_line = handler.rfile.readline(1024)
            try:
                size = int(size_line.split(b";")[0].strip(), 16)
            except ValueError:
                return None
            if size == 0:
                while handler.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return body
            body += handler.rfile.read(size)
            handler.rfile.readline(1024)
            if len(body) > MAX_BODY:
                return None
    try:
        length = int(handler.headers.get("Content-Length") or 0)
    except ValueError:
        return None
    return handler.rfile.read(length) if 0 <= length <= MAX_BODY else None


def send_body(handler, status, headers, body):
    handler.send_response(status)
    for key, value in headers.items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    try:
        handler.wfile.write(body)
    except OSError:
        pass
