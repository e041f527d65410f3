#!/usr/bin/env python3
"""Memory of runaway answers: endless model streams, one and several at once, over real stdio.

    cargo build --release && python3 benches/runaway.py [--streams 1 8] [--piece 64] [--runs 1]

A loopback model server answers every chat-completions request with a stream that never
ends: chunks of PIECE bytes of text each, as fast as the socket takes them. tandem runs as
the stdio agent; the bench acts as an editor that reads every line it is sent, opens N
sessions and prompts them all at once, and waits for every prompt's answer (each must stop
on its own: tandem cuts a response at `max_response_bytes`, and the responses read at once
share twice that). It reports, per N, tandem's peak RSS (VmHWM), the wall time, how every
prompt ended, and the bytes its data directory holds afterwards (the transcripts), then sends
each session one more prompt against a short normal answer to show it is still usable.
"""

import argparse
import http.server
import json
import os
import socketserver
import statistics
import subprocess
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chunk(delta, finish=None):
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    piece = 64
    endless = True
    sent = 0
    requests = 0


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        if not self.path.endswith("/models"):
            self.send_error(404)
            return
        body = b'{"data":[{"id":"m","object":"model"}]}'
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        self.rfile.read(length)
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        self.server.requests += 1
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        if not self.server.endless:
            for c in [chunk({"content": "short and done"}), chunk({}, "stop")]:
                self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
            self.wfile.write(b"data: [DONE]\n\n")
            return
        event = b"data: " + json.dumps(chunk({"content": "y" * self.server.piece})).encode() + b"\n\n"
        batch = event * max(1, 65536 // len(event))
        try:
            while True:
                self.wfile.write(batch)
                self.server.sent += len(batch)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def dir_bytes(path):
    total = 0
    for top, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(top, name))
            except OSError:
                pass
    return total


class Agent:
    """The bench's editor: one reader thread takes every line tandem writes."""

    def __init__(self, binary, env, cwd):
        self.proc = subprocess.Popen(
            [binary],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=cwd,
        )
        self.next_id = 0
        self.answers = {}
        self.cond = threading.Condition()
        self.update_bytes = 0
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for raw in self.proc.stdout:
            message = json.loads(raw)
            with self.cond:
                if "method" not in message and "id" in message:
                    self.answers[message["id"]] = message
                    self.cond.notify_all()
                else:
                    self.update_bytes += len(raw)

    def send(self, method, params):
        with self.cond:
            self.next_id += 1
            rid = self.next_id
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        return rid

    def wait(self, rid, timeout=600):
        deadline = time.time() + timeout
        with self.cond:
            while rid not in self.answers:
                left = deadline - time.time()
                if left <= 0:
                    raise SystemExit(f"no answer to request {rid} in {timeout} s")
                self.cond.wait(left)
            return self.answers.pop(rid)

    def request(self, method, params):
        return self.wait(self.send(method, params))

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=120)


def run_once(binary, base_url, streams, server):
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        data = os.path.join(home, "data")
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": home,
            "XDG_CONFIG_HOME": os.path.join(home, "config"),
            "TANDEM_HOME": data,
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "bench",
            "TANDEM_MODEL": "m",
            "RUST_LOG": "error",
        }
        agent = Agent(binary, env, cwd)
        agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        sessions = []
        for _ in range(streams):
            answer = agent.request("session/new", {"cwd": cwd, "mcpServers": []})
            sessions.append(answer["result"]["sessionId"])
        server.endless = True
        server.sent = 0
        server.requests = 0
        started = time.time()
        ids = [
            agent.send("session/prompt", {"sessionId": s, "prompt": [{"type": "text", "text": "go"}]})
            for s in sessions
        ]
        peak = 0
        outcomes = []
        for rid in ids:
            while True:
                try:
                    answer = agent.wait(rid, timeout=0.2)
                    break
                except SystemExit:
                    peak = max(peak, vm_hwm_kib(agent.proc.pid))

            outcome = answer.get("result", {}).get("stopReason") or answer.get("error", {}).get("message", "?")
            outcomes.append(outcome[:90])
        wall = time.time() - started
        peak = max(peak, vm_hwm_kib(agent.proc.pid))
        server.endless = False
        usable = 0
        for s in sessions:
            answer = agent.request("session/prompt", {"sessionId": s, "prompt": [{"type": "text", "text": "again"}]})
            usable += answer.get("result", {}).get("stopReason") == "end_turn"
        agent.close()
        return {
            "streams": streams,
            "peak_rss_mib": round(peak / 1024, 1),
            "wall_s": round(wall, 1),
            "server_sent_mib": round(server.sent / 2**20, 1),
            "model_requests": server.requests,
            "editor_got_mib": round(agent.update_bytes / 2**20, 1),
            "data_dir_kib": round(dir_bytes(data) / 1024, 1),
            "usable_after": f"{usable}/{streams}",
            "outcomes": sorted(set(outcomes)),
        }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--streams", type=int, nargs="*", default=[1, 8])
    parser.add_argument("--piece", type=int, default=64, help="text bytes per streamed chunk")
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.piece = args.piece
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    for streams in args.streams:
        runs = [run_once(args.binary, base_url, streams, server) for _ in range(args.runs)]
        result = runs[0]
        if len(runs) > 1:
            result["peak_rss_mib"] = statistics.median(r["peak_rss_mib"] for r in runs)
            result["peak_rss_mib_all"] = [r["peak_rss_mib"] for r in runs]
        print(json.dumps(result), flush=True)
    server.shutdown()


if __name__ == "__main__":
    main()
