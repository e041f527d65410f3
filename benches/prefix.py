#!/usr/bin/env python3
"""How much of each request a real llama-server has to process: tandem drives a session of
ten model requests (a tool loop, a mode switch, a config-option change, more tool loops)
against llama-server with SmolLM2-135M, through a proxy that reads the server's own
`timings` (prompt_n: tokens processed, cache_n: tokens reused from its cache).

The proxy lets llama-server read every request in full (it asks for one generated token) and
answers tandem from a script, so the session takes the same path whatever the tiny model
would say. Target: after the first request, each request processes at most the tokens added
since the previous one plus 64.

    tests/real-model/setup.sh                      # once: llama-server and the model
    python3 benches/prefix.py [--binary target/release/tandem] [--json out.json]
"""

import argparse
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from process import INIT, ROOT, Agent, scratch_env  # noqa: E402

SLACK = 64

# What "the model" answers, request by request: a tool call (name, arguments) or text.
SCRIPT = [
    ("read_file", {"path": "README.md"}),
    ("list_dir", {"path": "."}),
    "It is a small project.",
    "Edits are free now.",
    ("grep", {"pattern": "fn "}),
    "Found it.",
    "Read-only from here.",
    ("read_file", {"path": "src/lib.rs"}),
    ("read_file", {"path": "src/main.rs"}),
    "Both read.",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sse(chunks):
    return b"".join(b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"


def scripted(step, n):
    """The SSE answer for request n."""
    base = {"id": f"r{n}", "object": "chat.completion.chunk", "model": "m"}
    if isinstance(step, str):
        return sse([
            {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": step}}]},
            {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        ])
    name, args = step
    call = {"index": 0, "id": f"call{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}
    return sse([
        {**base, "choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [call]}}]},
        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ])


class Proxy(http.server.BaseHTTPRequestHandler):
    upstream = ""
    seen = []
    bodies = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_response(404)
        self.end_headers()

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if not self.path.endswith("/chat/completions"):
            # tandem asking the server about itself (Ollama's /api/show): not this server.
            self.do_GET()
            return
        Proxy.bodies.append(body)
        n = len(Proxy.seen)
        forwarded = {**body, "stream": False, "max_tokens": 1}
        forwarded.pop("stream_options", None)
        request = urllib.request.Request(
            Proxy.upstream + "/v1/chat/completions", json.dumps(forwarded).encode(),
            {"content-type": "application/json"})
        with urllib.request.urlopen(request, timeout=600) as r:
            answer = json.loads(r.read())
        timings = answer.get("timings", {})
        Proxy.seen.append({
            "processed": timings.get("prompt_n", 0),
            "cached": timings.get("cache_n", 0),
            "tools": len(body.get("tools", [])),
        })
        step = SCRIPT[n] if n < len(SCRIPT) else "Done."
        payload = scripted(step, n)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def start_llama(cache):
    port = free_port()
    server = subprocess.Popen([
        os.path.join(cache, "bin/llama-server"), "-m",
        os.path.join(cache, "SmolLM2-135M-Instruct.Q4_1.gguf"), "--host", "127.0.0.1",
        "--port", str(port), "-c", "8192", "-np", "1", "-t", "2", "--temp", "0", "--jinja",
        "--chat-template-file", os.path.join(ROOT, "tests/real-model/smollm2-tools.jinja"),
        "--log-disable"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(url + "/health", timeout=1)
            return server, url
        except Exception:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("llama-server did not start")


def run_session(binary, proxy_url):
    scratch = tempfile.mkdtemp(prefix="tandem-prefix-")
    project = os.path.join(scratch, "project")
    shutil.copytree(os.path.join(ROOT, "fixtures/workspaces/small"), project)
    env = {**scratch_env(scratch), "OPENAI_BASE_URL": proxy_url + "/v1",
           "TANDEM_MODEL": "smollm2", "TANDEM_PROVIDER": "llamacpp"}
    agent = Agent(binary, [], env)
    agent.request("initialize", INIT)
    session = agent.request("session/new", {"cwd": project, "mcpServers": []})["result"]["sessionId"]

    def prompt(text):
        answer = agent.request("session/prompt", {"sessionId": session,
                                                  "prompt": [{"type": "text", "text": text}]})
        assert answer.get("result", {}).get("stopReason") == "end_turn", answer

    prompt("What is this project?")                                  # 3 requests, 2 tools
    agent.request("session/set_mode", {"sessionId": session, "modeId": "accept-edits"})
    prompt("Go on.")                                                 # after a mode switch
    agent.request("session/set_config_option",
                  {"sessionId": session, "configId": "mode", "value": "ask"})
    prompt("Where are the functions?")                               # config change + tool
    agent.request("session/set_mode", {"sessionId": session, "modeId": "read-only"})
    prompt("Stay read-only.")
    prompt("Read both source files.")                                # 3 requests, 2 tools
    agent.close()
    shutil.rmtree(scratch, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--json")
    parser.add_argument("--dump", help="write the first request's body here")
    args = parser.parse_args()
    cache = os.environ.get("TANDEM_REAL_MODEL_CACHE",
                           os.path.expanduser("~/.cache/tandem-real-model"))
    llama, upstream = start_llama(cache)
    Proxy.upstream, Proxy.seen = upstream, []
    port = free_port()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", port), Proxy)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        run_session(args.binary, f"http://127.0.0.1:{port}")
    finally:
        httpd.shutdown()
        llama.kill()
    rows, worst, met = [], 0, True
    for i, seen in enumerate(Proxy.seen):
        total = seen["processed"] + seen["cached"]
        added = total - (Proxy.seen[i - 1]["processed"] + Proxy.seen[i - 1]["cached"]) if i else total
        over = seen["processed"] - added
        if i:
            worst = max(worst, over)
            met = met and over <= SLACK
        rows.append({"request": i + 1, "prompt_tokens": total, "added": added,
                     "processed": seen["processed"], "cached": seen["cached"], "over_added": over})
    print(f"{'req':>3} {'prompt':>7} {'added':>6} {'processed':>9} {'cached':>7} {'over':>5}")
    for r in rows:
        print(f"{r['request']:>3} {r['prompt_tokens']:>7} {r['added']:>6} {r['processed']:>9} "
              f"{r['cached']:>7} {r['over_added']:>5}")
    first = rows[0]["prompt_tokens"] if rows else 0
    print(f"first request: {first} tokens; worst excess after it: {worst} (target <= {SLACK}): "
          f"{'met' if met else 'NOT met'}")
    if args.dump and Proxy.bodies:
        with open(args.dump, "w") as f:
            json.dump(Proxy.bodies[0], f, indent=1)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"requests": rows, "first_request_tokens": first,
                       "worst_excess": worst, "target_met": met}, f, indent=1)


if __name__ == "__main__":
    main()
