#!/usr/bin/env python3
"""The same scripted session over each wire API: what tandem sends per request.

tandem drives one session (a thinking tool loop, a mode switch, more tool loops) against a
scripted server that speaks chat completions, OpenAI's Responses API and Anthropic's
Messages API, answering every request the same way in each API's own events (reasoning with
a signature or encrypted content, then a call or the answer). For each API it reports, per
request: the body's bytes, its tokens (bytes / 4), the share of its prompt (tools, system,
messages, in the order the server reads them) that is the previous request's prompt unchanged
from its start (what a server's prefix cache can reuse; the first request after a new prompt
also carries the new user message), and on
the Messages API the share of the prompt (tools, system, messages) before the last
`cache_control` breakpoint, which Anthropic reads from its cache (goal: >= 90% from the
second request).

    cargo build --release
    python3 benches/wire.py [--binary target/release/tandem] [--json out.json]
"""

import argparse
import hashlib
import http.server
import json
import os
import shutil
import socket
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from process import INIT, ROOT, Agent, scratch_env  # noqa: E402

# What "the model" does, request by request: (thought, call) or (thought, answer text).
SCRIPT = [
    ("The readme first.", ("read_file", {"path": "README.md"})),
    ("Now the listing.", ("list_dir", {"path": "."})),
    ("Enough to say.", "It is a small project."),
    ("Edits are allowed now.", "Noted."),
    ("Search for functions.", ("grep", {"pattern": "fn "})),
    ("Found them.", "Two functions."),
    ("Read both.", ("read_file", {"path": "src/lib.rs"})),
    ("And the other.", ("read_file", {"path": "src/main.rs"})),
    ("Both read.", "Both are short."),
]

APIS = ["chat-completions", "responses", "anthropic-messages"]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sign(text):
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def chat_events(n, thought, act):
    base = {"id": f"r{n}", "object": "chat.completion.chunk", "model": "m"}
    first = {"role": "assistant", "reasoning_content": thought}
    out = [{**base, "choices": [{"index": 0, "delta": first}]}]
    if isinstance(act, str):
        out.append({**base, "choices": [{"index": 0, "delta": {"content": act}}]})
        finish = "stop"
    else:
        call = {"index": 0, "id": f"call{n}", "type": "function",
                "function": {"name": act[0], "arguments": json.dumps(act[1])}}
        out.append({**base, "choices": [{"index": 0, "delta": {"tool_calls": [call]}}]})
        finish = "tool_calls"
    out.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    out.append({**base, "choices": [], "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
    return [(None, e) for e in out] + [(None, "[DONE]")]


def responses_events(n, thought, act):
    reasoning = {"type": "reasoning", "id": f"rs_{n}",
                 "summary": [{"type": "summary_text", "text": thought}],
                 "encrypted_content": "enc-" + sign(thought)}
    out = [("response.created", {"type": "response.created", "response": {"status": "in_progress"}}),
           ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0,
                                           "item": {"type": "reasoning", "id": f"rs_{n}", "summary": []}}),
           ("response.reasoning_summary_text.delta",
            {"type": "response.reasoning_summary_text.delta", "item_id": f"rs_{n}", "delta": thought}),
           ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0,
                                          "item": reasoning})]
    if isinstance(act, str):
        item = {"type": "message", "id": f"msg_{n}", "role": "assistant",
                "content": [{"type": "output_text", "text": act}]}
        out.append(("response.output_text.delta", {"type": "response.output_text.delta",
                                                   "item_id": f"msg_{n}", "delta": act}))
    else:
        item = {"type": "function_call", "id": f"fc_{n}", "call_id": f"call{n}",
                "name": act[0], "arguments": json.dumps(act[1])}
        out.append(("response.output_item.added", {"type": "response.output_item.added",
                                                   "output_index": 1, "item": {**item, "arguments": ""}}))
    out.append(("response.output_item.done", {"type": "response.output_item.done",
                                              "output_index": 1, "item": item}))
    usage = {"input_tokens": 100, "output_tokens": 10}
    out.append(("response.completed", {"type": "response.completed",
                                       "response": {"status": "completed", "usage": usage}}))
    return out


def anthropic_events(n, thought, act):
    start = {"type": "message_start", "message": {"usage": {"input_tokens": 100, "output_tokens": 1}}}
    out = [("message_start", start),
           ("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
           ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "thinking_delta", "thinking": thought}}),
           ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "signature_delta", "signature": sign(thought)}}),
           ("content_block_stop", {"type": "content_block_stop", "index": 0})]
    if isinstance(act, str):
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": act}
        reason = "end_turn"
    else:
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": act[0], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(act[1])}
        reason = "tool_use"
    out += [("content_block_start", {"type": "content_block_start", "index": 1, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": reason},
                               "usage": {"output_tokens": 10}}),
            ("message_stop", {"type": "message_stop"})]
    return out


class Server(http.server.BaseHTTPRequestHandler):
    bodies = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.end_headers()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        n = len(Server.bodies)
        thought, act = SCRIPT[n] if n < len(SCRIPT) else ("Done.", "Done.")
        if self.path.endswith("/chat/completions"):
            events = chat_events(n, thought, act)
        elif self.path.endswith("/responses"):
            events = responses_events(n, thought, act)
        elif self.path.endswith("/messages"):
            events = anthropic_events(n, thought, act)
        else:
            self.do_GET()
            return
        Server.bodies.append(body)
        payload = b""
        for name, data in events:
            text = data if isinstance(data, str) else json.dumps(data)
            payload += (f"event: {name}\n" if name else "").encode() + b"data: " + text.encode() + b"\n\n"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def run_session(binary, url, api):
    scratch = tempfile.mkdtemp(prefix="tandem-wire-")
    project = os.path.join(scratch, "project")
    shutil.copytree(os.path.join(ROOT, "fixtures/workspaces/small"), project)
    env = {**scratch_env(scratch), "OPENAI_BASE_URL": url + "/v1", "OPENAI_API_KEY": "sk-bench-0000",
           "TANDEM_API": api, "TANDEM_MODEL": "claude-sonnet-4-5" if api == "anthropic-messages" else "o4-mini"}
    agent = Agent(binary, [], env)
    agent.request("initialize", INIT)
    session = agent.request("session/new", {"cwd": project, "mcpServers": []})["result"]["sessionId"]

    def prompt(text):
        answer = agent.request("session/prompt", {"sessionId": session,
                                                  "prompt": [{"type": "text", "text": text}]})
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer

    prompt("What is this project?")                       # 3 requests, 2 tools
    agent.request("session/set_mode", {"sessionId": session, "modeId": "accept-edits"})
    prompt("Go on.")
    prompt("Where are the functions?")                    # 2 requests, 1 tool
    prompt("Read both source files.")                     # 3 requests, 2 tools
    agent.close()
    shutil.rmtree(scratch, ignore_errors=True)


def items(api, body):
    """The prompt of a request in the order the server reads it, one piece per tool, system
    block and message (Messages: per content block), cache markers left out (they mark where
    the cache ends, not what is read)."""
    def bare(value):
        if isinstance(value, dict):
            return {k: bare(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, (list, tuple)):
            return [bare(v) for v in value]
        return value
    out = [("tool", t) for t in body.get("tools", [])]
    if api == "chat-completions":
        out += [("message", m) for m in body.get("messages", [])]
    elif api == "responses":
        out += [("instructions", body.get("instructions"))]
        out += [("item", i) for i in body.get("input", [])]
    else:
        system = body.get("system", [])
        out += [("system", b) for b in (system if isinstance(system, list) else [system])]
        for m in body.get("messages", []):
            content = m.get("content")
            for block in content if isinstance(content, list) else [content]:
                out.append((m.get("role"), block))
    return [json.dumps(bare(piece), separators=(",", ":")) for piece in out]


def extends(previous, current):
    """The share of `current`'s bytes in the pieces it shares, unchanged, from the start with
    `previous`."""
    shared = 0
    for a, b in zip(previous, current):
        if a != b:
            break
        shared += len(b)
    return shared / (sum(len(p) for p in current) or 1)


def cached_share(body):
    """Anthropic: the share of the prompt (tools, system, messages, in the order the API reads
    them) up to the end of the last block carrying cache_control."""
    parts = []
    for tool in body.get("tools", []):
        parts.append(tool)
    for block in body.get("system", []) if isinstance(body.get("system"), list) else []:
        parts.append(block)
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            parts.extend(content)
        else:
            parts.append(content)
    sizes = [len(json.dumps(p)) for p in parts]
    total = sum(sizes) or 1
    last = max((i for i, p in enumerate(parts) if isinstance(p, dict) and "cache_control" in p), default=-1)
    return sum(sizes[: last + 1]) / total


def report(api, bodies):
    rows = []
    previous = None
    for i, body in enumerate(bodies):
        text = json.dumps(body, separators=(",", ":"))
        pieces = items(api, body)
        row = {"request": i + 1, "bytes": len(text), "tokens": len(text) // 4,
               "extends_previous": round(extends(previous, pieces), 3) if previous else None}
        if api == "anthropic-messages":
            row["under_cache_breakpoint"] = round(cached_share(body), 3)
        rows.append(row)
        previous = pieces
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--json")
    args = parser.parse_args()
    port = free_port()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Server)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    results = {}
    try:
        for api in APIS:
            Server.bodies = []
            run_session(args.binary, f"http://127.0.0.1:{port}", api)
            results[api] = report(api, Server.bodies)
    finally:
        httpd.shutdown()
    for api, rows in results.items():
        print(f"\n{api}: {len(rows)} requests, {sum(r['bytes'] for r in rows)} bytes in all")
        head = f"{'req':>3} {'bytes':>7} {'tokens':>6} {'extends prev':>12}"
        print(head + (f" {'cached':>7}" if api == "anthropic-messages" else ""))
        for r in rows:
            ext = "-" if r["extends_previous"] is None else f"{r['extends_previous']:.1%}"
            line = f"{r['request']:>3} {r['bytes']:>7} {r['tokens']:>6} {ext:>12}"
            if "under_cache_breakpoint" in r:
                line += f" {r['under_cache_breakpoint']:>7.1%}"
            print(line)
        if api == "anthropic-messages":
            later = [r["under_cache_breakpoint"] for r in rows[1:]]
            low = min(later) if later else 0
            print(f"under a breakpoint from the second request: lowest {low:.1%} (goal >= 90%): "
                  f"{'met' if low >= 0.9 else 'NOT met'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
