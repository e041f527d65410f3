"""A scripted chat-completions server: each model request gets the task's next scripted turn.

It serves a task's `replay.json` (the format of `tandem --replay`, crates/model/src/replay.rs) over
`/v1/chat/completions`, streamed or not, and `/v1/models`. Like a real server it refuses a
request that does not answer every tool call of its previous turn (a tool message per call
id, after the assistant message that made them), so a run that drops a call result fails
here as it would against OpenAI. Its `usage` is an estimate: a token per 4 bytes of the
request body and of the answer. Past the last turn it answers that the script is over.
"""

import http.server
import json
import math
import threading
import time

from .proxy import send_body

MODEL_ID = "bench-replay"


class ReplayServer:
    """The scripted endpoint; `load` a task's script before its run."""

    def __init__(self):
        self.turns = []
        self.index = 0
        self.expected_calls = []
        self.lock = threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def load(self, path):
        with open(path, encoding="utf-8") as f:
            script = json.load(f)
        with self.lock:
            self.turns = script["turns"]
            self.index = 0
            self.expected_calls = []

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def _handler(self):
        replay = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.split("?")[0].rstrip("/").endswith("/models"):
                    body = {"object": "list", "data": [
                        {"id": MODEL_ID, "object": "model", "owned_by": "tandem-bench"}]}
                    return send_body(self, 200, {"Content-Type": "application/json"},
                                 json.dumps(body).encode())
                _error(self, 404, f"no route for GET {self.path}")

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if not self.path.split("?")[0].endswith("/chat/completions"):
                    return _error(self, 404, f"the replay server speaks chat completions, "
                                             f"not {self.path}")
                try:
                    request = json.loads(body)
                    messages = request["messages"]
                except (ValueError, KeyError, TypeError):
                    return _error(self, 400, "the body must be JSON with `messages`")
                replay.answer(self, request, messages, len(body))

        return Handler

    def answer(self, handler, request, messages, body_bytes):
        with self.lock:
            missing = _unanswered(messages, self.expected_calls)
            if missing:
                return _error(handler, 400, "an assistant message with tool_calls must be "
                                            f"followed by a tool message for each call; none "
                                            f"for {', '.join(missing)}")
            if self.index < len(self.turns):
                turn = self.turns[self.index]
            else:
                turn = {"events": [{"text": "(The scripted run has no more turns.)"}]}
            self.index += 1
            calls = _calls(turn, self.index)
            self.expected_calls = [c["id"] for c in calls]
        delay = (turn.get("delay_ms") or 0) / 1000
        finish = turn.get("finish_reason") or ("tool_calls" if calls else "stop")
        texts = [e["text"] for e in turn["events"] if "text" in e]
        thoughts = [e["thought"] for e in turn["events"] if "thought" in e]
        produced = sum(len(t) for t in texts + thoughts) + sum(
            len(c["function"]["arguments"]) for c in calls)
        usage = {"prompt_tokens": math.ceil(body_bytes / 4),
                 "completion_tokens": math.ceil(produced / 4)}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if request.get("stream"):
            _stream(handler, request, turn, calls, finish, usage, delay)
        else:
            message = {"role": "assistant", "content": "".join(texts) or None}
            if thoughts:
                message["reasoning_content"] = "".join(thoughts)
            if calls:
                message["tool_calls"] = calls
            body = {"id": "replay", "object": "chat.completion", "created": int(time.time()),
                    "model": MODEL_ID, "usage": usage,
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
            send_body(handler, 200, {"Content-Type": "application/json"}, json.dumps(body).encode())


def _calls(turn, number):
    calls = []
    for event in turn["events"]:
        call = event.get("tool_call")
        if call:
            calls.append({
                "id": call.get("id") or f"call_{number}_{len(calls) + 1}", "type": "function",
                "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
            })
    return calls


def _unanswered(messages, expected):
    """The call ids of the previous turn with no tool message after their assistant message."""
    if not expected:
        return []
    for position, message in enumerate(messages):
        ids = [c.get("id") for c in (message.get("tool_calls") or [])]
        if message.get("role") == "assistant" and set(expected) <= set(ids):
            answered = {m.get("tool_call_id") for m in messages[position + 1:]
                        if m.get("role") == "tool"}
            return [i for i in expected if i not in answered]
    return expected


def _stream(handler, request, turn, calls, finish, usage, delay):
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Transfer-Encoding", "chunked")
    handler.end_headers()

    def chunk(delta, finish_reason=None, **extra):
        data = {"id": "replay", "object": "chat.completion.chunk", "created": int(time.time()),
                "model": MODEL_ID, "choices": [{"index": 0, "delta": delta,
                                                "finish_reason": finish_reason}], **extra}
        line = b"data: " + json.dumps(data).encode() + b"\n\n"
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        handler.wfile.flush()

    try:
        chunk({"role": "assistant", "content": ""})
        for event in turn["events"]:
            if delay:
                time.sleep(delay)
            if "thought" in event:
                chunk({"reasoning_content": event["thought"]})
            elif "text" in event:
                chunk({"content": event["text"]})
        for index, call in enumerate(calls):
            chunk({"tool_calls": [{"index": index, **call}]})
        chunk({}, finish)
        if (request.get("stream_options") or {}).get("include_usage"):
            data = {"id": "replay", "object": "chat.completion.chunk", "model": MODEL_ID,
                    "choices": [], "usage": usage}
            line = b"data: " + json.dumps(data).encode() + b"\n\n"
            handler.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        done = b"data: [DONE]\n\n"
        handler.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(done), done))
        handler.wfile.flush()
    except OSError:
        pass


def _error(handler, status, message):
    body = {"error": {"message": message, "type": "invalid_request_error"}}
    send_body(handler, status, {"Content-Type": "application/json"}, json.dumps(body).encode())
