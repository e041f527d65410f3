#!/usr/bin/env python3
"""Whole-process benchmarks of the release binary over real stdio.

    cargo build --release && python3 benches/process.py [--runs 21] [--only NAME ...]

Measures (medians; min and max in brackets):
  startup    spawn -> initialize answer, spawn -> session/new answer, idle RSS after it
  keys       spawn -> initialize answer with the key in the environment, in the file
             `tandem login` writes, and in that file after the system keyring was asked
  load       session/load of a stored 2,000- and 20,000-message session, and RSS after
  stream     100,000 chunks from a loopback SSE model server sent as fast as it can:
             chunks/s reaching the client and the latency each chunk adds
  tool       read_file round trips through fs/read_text_file answered at once by the client
  write      write_file of 1 KB and of 3 MB on disk (no editor fs): call-to-call time
  size       the release binary's size
Prints a table and, with --json FILE, writes the figures as JSON.
"""

import argparse
import http.server
import json
import os
import re
import shutil
import socketserver
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INIT = {"protocolVersion": 1, "clientCapabilities": {}}


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def summary(values, unit, digits=2):
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
        "n": len(values),
        "unit": unit,
    }


class Agent:
    """tandem over stdio; `env` is complete (plus PATH)."""

    def __init__(self, binary, args, env):
        full = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [binary, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, env=full, bufsize=1 << 16,
        )
        self.next_id = 0

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params, on_message=None):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            raw = self.proc.stdout.readline()
            if not raw:
                raise SystemExit(f"tandem exited during {method}")
            if b'"method"' not in raw[:40] or b'"id"' in raw[:40]:
                message = json.loads(raw)
                if message.get("id") == rid and "method" not in message:
                    return message
                if on_message:
                    on_message(message)
            elif on_message:
                on_message(raw)

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def scratch_env(scratch):
    return {
        "HOME": scratch,
        "TANDEM_HOME": os.path.join(scratch, "data"),
        "XDG_CONFIG_HOME": os.path.join(scratch, "config"),
        "RUST_LOG": "error",
    }


def bench_startup(binary, runs, scratch):
    replay = ["--replay", os.path.join(ROOT, "fixtures/demo/hello.json")]
    t_init, t_new, rss = [], [], []
    for _ in range(runs):
        agent = Agent(binary, replay, scratch_env(scratch))
        agent.request("initialize", INIT)
        t1 = time.perf_counter()
        agent.request("session/new", {"cwd": scratch, "mcpServers": []})
        t2 = time.perf_counter()
        time.sleep(0.2)
        rss.append(rss_kib(agent.proc.pid) / 1024)
        agent.close()
        t_init.append((t1 - agent.started) * 1000)
        t_new.append((t2 - agent.started) * 1000)
    return {
        "spawn_to_initialize_ms": summary(t_init, "ms"),
        "spawn_to_session_new_ms": summary(t_new, "ms"),
        "idle_rss_mib": summary(rss, "MiB", 1),
    }


def bench_keys(binary, runs, scratch):
    """spawn -> initialize with no replay, by where the key is: the environment, the file
    `tandem login` writes, or that file after the system keyring was asked first (the default
    for an editor that sets no variable)."""
    config = os.path.join(scratch, "config", "tandem")
    os.makedirs(config, exist_ok=True)
    with open(os.path.join(config, "credentials.toml"), "w") as f:
        f.write('[keys]\n"https://api.openai.com/v1" = "sk-bench"\n')
    os.chmod(os.path.join(config, "credentials.toml"), 0o600)
    cases = {
        "key_in_env": {"OPENAI_API_KEY": "sk-bench", "TANDEM_CREDENTIAL_STORE": "file"},
        "key_in_file": {"TANDEM_CREDENTIAL_STORE": "file"},
        "keyring_then_file": {},
    }
    times = {name: [] for name in cases}
    for _ in range(runs):
        for name, extra in cases.items():
            env = {**scratch_env(scratch), "PATH": os.environ.get("PATH", ""), **extra}
            agent = Agent(binary, [], env)
            agent.request("initialize", INIT)
            times[name].append((time.perf_counter() - agent.started) * 1000)
            agent.close()
    return {f"spawn_to_initialize_{name}_ms": summary(v, "ms") for name, v in times.items()}


WORDS = "the a fix test build error value field module function struct file return change".split()


def words(i, n):
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(n))


def write_transcript(path, session, cwd, messages):
    """A stored session of `messages` messages: user, assistant with a tool call, result."""
    at = "2026-11-21T06:00:00.000Z"
    with open(path, "w") as f:
        f.write(json.dumps({"v": 1, "at": at, "type": "meta", "id": session, "cwd": cwd}) + "\n")
        f.write(json.dumps({"v": 1, "at": at, "type": "settings", "mode": "ask", "model": "replay",
                            "reasoning_effort": "medium"}) + "\n")
        for i in range(messages):
            kind = i % 3
            if kind == 0:
                record = {"type": "user", "parts": [{"text": words(i, 40)}]}
            elif kind == 1:
                record = {"type": "assistant", "text": words(i, 30), "reasoning": words(i, 20),
                          "tool_calls": [{"id": f"c{i}", "name": "read_file",
                                          "arguments": json.dumps({"path": f"src/f{i}.rs"})}]}
            else:
                record = {"type": "tool_result", "call_id": f"c{i - 1}", "content": words(i, 60)}
            f.write(json.dumps({"v": 1, "at": at, **record}) + "\n")


def bench_load(binary, runs, scratch):
    out = {}
    cwd = os.path.join(scratch, "project")
    os.makedirs(cwd, exist_ok=True)
    env = scratch_env(scratch)
    sessions = os.path.join(env["TANDEM_HOME"], "sessions")
    os.makedirs(sessions, exist_ok=True)
    for messages in (2000, 20000):
        session = f"bench-load-{messages}"
        write_transcript(os.path.join(sessions, f"{session}.jsonl"), session, cwd, messages)
        agent = Agent(binary, ["--replay", os.path.join(ROOT, "fixtures/demo/hello.json")], env)
        agent.request("initialize", INIT)
        times, replayed = [], []
        for _ in range(max(3, runs // 2)):
            count = [0]
            t0 = time.perf_counter()
            agent.request("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []},
                          on_message=lambda m: count.__setitem__(0, count[0] + 1))
            times.append((time.perf_counter() - t0) * 1000)
            replayed.append(count[0])
            agent.request("session/close", {"sessionId": session})
        agent.request("session/load", {"sessionId": session, "cwd": cwd, "mcpServers": []})
        time.sleep(0.2)
        out[f"session_load_{messages}_ms"] = summary(times, "ms", 1)
        out[f"session_load_{messages}_updates"] = replayed[0]
        out[f"rss_after_load_{messages}_mib"] = round(rss_kib(agent.proc.pid) / 1024, 1)
        agent.close()
    return out


class SseModel(http.server.BaseHTTPRequestHandler):
    """Answers every chat request with `chunks` SSE chunks, written as fast as the socket
    takes them; each carries the CLOCK_MONOTONIC time (ns) its block was sent."""

    chunks = 100_000
    block = 64
    rate = None  # chunks/s; None: as fast as the socket takes them
    sent = {}

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        head = b'data: {"choices":[{"index":0,"delta":{"content":"'
        tail = b' "}}]}\n\n'
        first = time.monotonic_ns()
        for start in range(0, self.chunks, self.block):
            if self.rate:
                due = first + int(start * 1e9 / self.rate)
                while (ahead := due - time.monotonic_ns()) > 0:
                    time.sleep(ahead / 1e9)
            stamp = str(time.monotonic_ns()).encode()
            n = min(self.block, self.chunks - start)
            self.wfile.write((head + stamp + tail) * n)
            self.wfile.flush()
        last = time.monotonic_ns()
        finish = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
        usage = b'data: {"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":10}}\n\n'
        self.wfile.write(finish + usage + b"data: [DONE]\n\n")
        self.wfile.flush()
        SseModel.sent = {"first_ns": first, "last_ns": last}


def bench_stream(binary, scratch, rate=None):
    SseModel.rate = rate
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), SseModel)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    env = {**scratch_env(scratch), "OPENAI_BASE_URL": f"http://127.0.0.1:{port}/v1",
           "TANDEM_MODEL": "bench"}
    agent = Agent(binary, [], env)
    agent.request("initialize", INIT)
    session = agent.request("session/new", {"cwd": scratch, "mcpServers": []})["result"]["sessionId"]
    stamp = re.compile(rb'"text":"((?:\d+ )+)"')
    latencies = []
    arrivals = []
    updates = [0]

    def on_message(raw):
        now = time.monotonic_ns()
        if isinstance(raw, dict):
            return
        found = stamp.search(raw)
        if not found:
            return
        updates[0] += 1
        for sent in found.group(1).split():
            latencies.append(now - int(sent))
            arrivals.append(now)

    t0 = time.monotonic_ns()
    answer = agent.request("session/prompt", {"sessionId": session,
                                              "prompt": [{"type": "text", "text": "go"}]},
                           on_message=on_message)
    agent.close()
    server.shutdown()
    assert answer["result"]["stopReason"] == "end_turn", answer
    sent = SseModel.sent
    chunks = len(latencies)
    mock_rate = SseModel.chunks / max(1e-9, (sent["last_ns"] - sent["first_ns"]) / 1e9)
    agent_rate = chunks / max(1e-9, (arrivals[-1] - sent["first_ns"]) / 1e9)
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] / 1e6
    return {
        "chunks_sent": SseModel.chunks,
        "chunks_received": chunks,
        "updates_received": updates[0],
        "mock_chunks_per_s": round(mock_rate),
        "agent_chunks_per_s": round(agent_rate),
        "added_latency_p50_ms": round(pct(0.50), 3),
        "added_latency_p99_ms": round(pct(0.99), 3),
        "prompt_total_ms": round((time.monotonic_ns() - t0) / 1e6, 1),
    }


def bench_tool(binary, scratch):
    calls = 300
    project = os.path.join(scratch, "tool-project")
    os.makedirs(project, exist_ok=True)
    # Different files: the same call over and over would be stopped by the loop guard.
    for i in range(calls):
        with open(os.path.join(project, f"f{i}.txt"), "w") as f:
            f.write("hello\n" * 20)
    turns = [{"events": [{"tool_call": {"id": f"r{i}", "name": "read_file",
                                        "arguments": {"path": f"f{i}.txt"}}}]}
             for i in range(calls)]
    turns.append({"events": [{"text": "done"}], "finish_reason": "stop"})
    fixture = os.path.join(scratch, "tool-replay.json")
    with open(fixture, "w") as f:
        json.dump({"turns": turns}, f)
    config = os.path.join(scratch, "tool-config.toml")
    with open(config, "w") as f:
        f.write(f"max_turn_requests = {calls + 10}\n")
    agent = Agent(binary, ["--replay", fixture, "--config", config], scratch_env(scratch))
    agent.request("initialize", {"protocolVersion": 1, "clientCapabilities":
                                 {"fs": {"readTextFile": True, "writeTextFile": True}}})
    session = agent.request("session/new", {"cwd": project, "mcpServers": []})["result"]["sessionId"]
    asked = []

    def on_message(message):
        if isinstance(message, dict) and message.get("method") == "fs/read_text_file":
            asked.append(time.perf_counter())
            agent.send({"jsonrpc": "2.0", "id": message["id"], "result": {"content": "hello\n" * 20}})

    t0 = time.perf_counter()
    answer = agent.request("session/prompt", {"sessionId": session,
                                              "prompt": [{"type": "text", "text": "read"}]},
                           on_message=on_message)
    total = time.perf_counter() - t0
    agent.close()
    assert answer["result"]["stopReason"] == "end_turn", answer
    gaps = [(b - a) * 1000 for a, b in zip(asked, asked[1:])]
    return {
        "tool_calls": len(asked),
        "read_round_trip_ms": summary(gaps, "ms", 3),
        "prompt_total_ms": round(total * 1000, 1),
    }


def bench_write(binary, scratch, size, calls, runs):
    """`write_file` of `size` bytes through tandem's own file layer (an editor without `fs`,
    so tandem writes on disk, records the change and answers): the median time from one
    call's completion to the next's, over `runs` sessions of `calls` writes each."""
    project = os.path.join(scratch, f"write-project-{size}")
    os.makedirs(project, exist_ok=True)
    line = "x" * 63 + "\n"
    content = line * max(1, size // len(line))
    turns = [{"events": [{"tool_call": {"id": f"w{i}", "name": "write_file",
                                        "arguments": {"path": f"out{i}.txt", "content": content}}}]}
             for i in range(calls)]
    turns.append({"events": [{"text": "done"}], "finish_reason": "stop"})
    fixture = os.path.join(scratch, f"write-replay-{size}.json")
    with open(fixture, "w") as f:
        json.dump({"turns": turns}, f)
    config = os.path.join(scratch, "write-config.toml")
    with open(config, "w") as f:
        f.write(f"max_turn_requests = {calls + 10}\n")
    gaps = []
    for _ in range(runs):
        for name in os.listdir(project):
            os.remove(os.path.join(project, name))
        env = {**scratch_env(scratch), "TANDEM_MODE": "accept-edits"}
        agent = Agent(binary, ["--replay", fixture, "--config", config], env)
        agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        session = agent.request("session/new", {"cwd": project, "mcpServers": []})["result"]["sessionId"]
        done = []

        def on_message(raw):
            if isinstance(raw, dict):
                return
            if b'"tool_call_update"' in raw and b'"completed"' in raw:
                done.append(time.perf_counter())

        answer = agent.request("session/prompt", {"sessionId": session,
                                                  "prompt": [{"type": "text", "text": "write"}]},
                               on_message=on_message)
        agent.close()
        assert answer["result"]["stopReason"] == "end_turn", answer
        assert len(done) == calls, (len(done), calls)
        gaps += [(b - a) * 1000 for a, b in zip(done, done[1:])]
    return {"calls": calls * runs, "write_call_ms": summary(gaps, "ms", 3)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--only", nargs="*", default=["startup", "keys", "load", "stream", "tool", "write", "size"])
    parser.add_argument("--json")
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="tandem-bench-")
    results = {}
    try:
        if "startup" in args.only:
            results.update(bench_startup(args.binary, args.runs, scratch))
        if "keys" in args.only:
            results.update(bench_keys(args.binary, args.runs, scratch))
        if "load" in args.only:
            results.update(bench_load(args.binary, args.runs, scratch))
        if "stream" in args.only:
            results.update(stream_flood=bench_stream(args.binary, scratch))
            results.update(stream_paced_100k=bench_stream(args.binary, scratch, rate=100_000))
            results.update(stream_paced_20k=bench_stream(args.binary, scratch, rate=20_000))
        if "tool" in args.only:
            results.update(tool=bench_tool(args.binary, scratch))
        if "write" in args.only:
            results.update(write_1kb=bench_write(args.binary, scratch, 1024, 100, 5))
            results.update(write_3mb=bench_write(args.binary, scratch, 3 * 1024 * 1024, 12, 3))
        if "size" in args.only:
            results["binary_mb"] = round(os.path.getsize(args.binary) / 1e6, 1)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(results, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
