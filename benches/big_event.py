#!/usr/bin/env python3
"""CPU and memory of one huge server-sent event: parsing must be linear in the bytes received.

    cargo build --release && python3 benches/big_event.py [--sizes 1 8 32] [--runs 3]

A loopback model server answers `tandem exec` with one chat-completions chunk whose content
is SIZE MiB, written in 1 KiB pieces as a network delivers a large event, then the usual
finish chunk and `[DONE]`. For each size it reports, over the runs (median, with min and max),
the whole process's CPU seconds (user + system) and peak RSS, from the kernel's accounting of
the finished child. A parser that re-reads the unfinished line for each piece is quadratic:
its CPU grows 64 times from 1 to 8 MiB; a linear one about 8 times.
"""

import argparse
import http.server
import json
import os
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIECE = 1024


def chunk(delta, finish=None):
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "model": "m",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    size = 0


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
        # Only the model request gets the event: discovery's probes (Ollama's /api/show) are
        # not what is measured.
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        text = "x" * (self.server.size - 200)
        event = b"data: " + json.dumps(chunk({"content": text})).encode() + b"\n\n"
        for at in range(0, len(event), PIECE):
            self.wfile.write(event[at:at + PIECE])
        tail = [chunk({}, "stop")]
        for c in tail:
            self.wfile.write(b"data: " + json.dumps(c).encode() + b"\n\n")
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


def run_once(binary, base_url, home, cwd):
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": home,
        "TANDEM_HOME": os.path.join(home, "data"),
        "OPENAI_BASE_URL": base_url,
        "OPENAI_API_KEY": "bench",
        "TANDEM_MODEL": "m",
    }
    child = subprocess.Popen(
        [binary, "exec", "--cwd", cwd, "say it"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    # The child's own accounting, taken as it is reaped.
    _, status, usage = os.wait4(child.pid, 0)
    err = child.stderr.read().decode(errors="replace")
    if status != 0:
        sys.exit(f"tandem exec failed ({status}):\n{err[-2000:]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--sizes", type=int, nargs="*", default=[1, 8, 32])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    print(f"{'event':>8} {'cpu s (median [min max])':>28} {'peak RSS MiB (median [min max])':>34}")
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        for size in args.sizes:
            server.size = size * 1024 * 1024
            runs = [run_once(args.binary, base_url, home, cwd) for _ in range(args.runs)]
            cpu = [r[0] for r in runs]
            rss = [r[1] for r in runs]
            print(
                f"{size:>5} MiB {statistics.median(cpu):>10.2f} [{min(cpu):.2f} {max(cpu):.2f}]"
                f"{'':>8}{statistics.median(rss):>10.1f} [{min(rss):.1f} {max(rss):.1f}]"
            )
    server.shutdown()


if __name__ == "__main__":
    main()
