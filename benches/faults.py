#!/usr/bin/env python3
"""Load, leak and kill runs: many sessions over real stdio, and nothing acknowledged is lost.

    cargo build --release && python3 benches/faults.py load  [--sessions 50] [--prompts 2050]
    cargo build --release && python3 benches/faults.py leak  [--prompts 6000] [--cycle 500]
    cargo build --release && python3 benches/faults.py kill  [--sessions 30] [--kills 20]
    cargo build --release && sudo python3 benches/faults.py disk [--sessions 6] [--prompts 42]

A loopback model server answers each chat request by echoing the marker in the last user
message ("answer to turn-…"), in ten streamed pieces a few milliseconds apart; a prompt that
names a tool first gets a `list_dir` call, then the answer. The bench is the editor: one
reader thread takes every line tandem writes and hands each response to the request that
waits for it.

load  N sessions prompt at once, each in its own thread, until P prompts were sent; at random
      a prompt is cancelled mid-stream (`session/cancel`), or its session closed and loaded
      again. Every request must be answered exactly once. Then the process ends (stdin
      closed), a new one loads every session, and every turn that was acknowledged
      (`end_turn`) must be there with its answer, in order.
leak  Cycles of sessions opened, prompted and closed, until P prompts: RSS, threads and open
      file descriptors after each cycle.
kill  N sessions prompt at once; at a random moment tandem is killed with SIGKILL; a new
      process loads every session and checks every acknowledged turn, then the sessions
      prompt on. Repeated K times.
disk  (root: it mounts a tmpfs) The data directory on a 512 KiB tmpfs; N sessions prompt at
      once until P prompts (long ones, so the disk fills); then the tmpfs grows to 64 MiB
      (space returns), the sessions prompt once more, the process ends, and a new one loads
      every session and checks every acknowledged turn.
Prints one JSON object; exits 1 when a check failed.
"""

import argparse
import http.server
import json
import os
import random
import shutil
import signal
import socketserver
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Model(http.server.BaseHTTPRequestHandler):
    """Echoes the last user message's marker; a message naming a tool gets a call first."""

    protocol_version = "HTTP/1.1"
    pause = 0.003

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.send_error(404)

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        if not self.path.endswith("/chat/completions"):
            self.send_error(404)
            return
        messages = body.get("messages", [])
        last_user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
        text = last_user.get("content", "")
        if isinstance(text, list):
            text = " ".join(p.get("text", "") for p in text if isinstance(p, dict))
        marker = next((w for w in text.split() if w.startswith("turn-")), "turn-?")
        wants_tool = "tool" in text.split() and messages and messages[-1].get("role") == "user"
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        try:
            if wants_tool:
                call = {"index": 0, "id": f"call-{marker}", "type": "function",
                        "function": {"name": "list_dir", "arguments": json.dumps({"path": "."})}}
                self.event({"tool_calls": [call]})
                self.event({}, "tool_calls")
            else:
                answer = f"answer to {marker}"
                step = max(1, len(answer) // 10)
                for at in range(0, len(answer), step):
                    self.event({"content": answer[at:at + step]})
                    time.sleep(self.pause)
                self.event({}, "stop")
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def event(self, delta, finish=None):
        chunk = {"id": "c", "object": "chat.completion.chunk", "model": "m",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
        self.wfile.flush()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class Agent:
    """tandem over stdio with a reader thread; requests may be sent from any thread."""

    def __init__(self, binary, env, cwd):
        self.proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.lock = threading.Condition()
        self.write_lock = threading.Lock()
        self.next_id = 0
        self.answers = {}
        self.answer_count = {}
        self.updates = {}
        self.gone = False
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for raw in self.proc.stdout:
            message = json.loads(raw)
            with self.lock:
                if "method" not in message:
                    rid = message.get("id")
                    self.answer_count[rid] = self.answer_count.get(rid, 0) + 1
                    self.answers[rid] = message
                    self.lock.notify_all()
                elif message["method"] == "session/update":
                    params = message["params"]
                    self.updates.setdefault(params["sessionId"], []).append(params["update"])
        with self.lock:
            self.gone = True
            self.lock.notify_all()

    def send(self, method, params, notify=False):
        with self.lock:
            self.next_id += 1
            rid = self.next_id
        line = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            line["id"] = rid
        try:
            with self.write_lock:
                self.proc.stdin.write(json.dumps(line).encode() + b"\n")
                self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            return None
        return rid

    def wait(self, rid, timeout=120):
        deadline = time.time() + timeout
        with self.lock:
            while rid not in self.answers:
                if self.gone or time.time() > deadline:
                    return None
                self.lock.wait(min(1.0, deadline - time.time()))
            return self.answers.pop(rid)

    def request(self, method, params, timeout=120):
        rid = self.send(method, params)
        return None if rid is None else self.wait(rid, timeout)

    def take_updates(self, session):
        with self.lock:
            return self.updates.pop(session, [])

    def close(self):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        return self.proc.wait(timeout=120)

    def stats(self):
        pid = self.proc.pid
        rss = threads = 0
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("Threads:"):
                    threads = int(line.split()[1])
        return {"rss_kib": rss, "threads": threads, "fds": len(os.listdir(f"/proc/{pid}/fd"))}


class Bench:
    """A scratch home and project, the model server, and the acknowledged turns."""

    def __init__(self, binary):
        self.binary = binary
        self.scratch = tempfile.mkdtemp(prefix="tandem-faults-")
        self.project = os.path.join(self.scratch, "project")
        shutil.copytree(os.path.join(ROOT, "fixtures/workspaces/small"), self.project)
        self.server = Server(("127.0.0.1", 0), Model)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": self.scratch,
            "TANDEM_HOME": os.path.join(self.scratch, "data"),
            "XDG_CONFIG_HOME": os.path.join(self.scratch, "config"),
            "OPENAI_BASE_URL": f"http://127.0.0.1:{self.server.server_address[1]}/v1",
            "OPENAI_API_KEY": "bench",
            "TANDEM_MODEL": "m",
            "RUST_LOG": "error",
        }
        os.makedirs(os.path.join(self.scratch, "config", "tandem"))
        # Every tool runs without asking: the bench answers no permission requests.
        with open(os.path.join(self.scratch, "config", "tandem", "config.toml"), "w") as f:
            f.write('mode = "full-access"\n')
        self.acked = {}  # session -> markers acknowledged with end_turn, in order
        self.problems = []

    def start(self):
        agent = Agent(self.binary, self.env, self.project)
        agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        return agent

    def new_session(self, agent):
        answer = agent.request("session/new", {"cwd": self.project, "mcpServers": []})
        session = answer["result"]["sessionId"]
        self.acked.setdefault(session, [])
        return session

    def prompt(self, agent, session, marker, tool=False, cancel_after=None, padding=""):
        words = f"please {marker}" + (" tool" if tool else "") + padding
        rid = agent.send("session/prompt", {"sessionId": session,
                                            "prompt": [{"type": "text", "text": words}]})
        if rid is None:
            return None
        if cancel_after is not None:
            time.sleep(cancel_after)
            agent.send("session/cancel", {"sessionId": session}, notify=True)
        answer = agent.wait(rid)
        if answer is None:
            return None
        stop = answer.get("result", {}).get("stopReason")
        if stop == "end_turn":
            self.acked[session].append(marker)
        elif stop != "cancelled":
            self.problems.append(f"{marker}: {json.dumps(answer)[:300]}")
        return stop

    def check_loaded(self, agent, sessions):
        """Loads every session; returns how many acknowledged turns were missing."""
        missing = 0
        for session in sessions:
            answer = agent.request("session/load", {"sessionId": session, "cwd": self.project,
                                                    "mcpServers": []})
            if answer is None or "error" in answer:
                self.problems.append(f"load {session}: {answer}")
                missing += len(self.acked[session])
                continue
            replayed = agent.take_updates(session)
            asked = [u["content"]["text"] for u in replayed
                     if u.get("sessionUpdate") == "user_message_chunk"
                     and u.get("content", {}).get("type") == "text"]
            said = "".join(u["content"].get("text", "") for u in replayed
                           if u.get("sessionUpdate") == "agent_message_chunk")
            markers = [w for text in asked for w in text.split() if w.startswith("turn-")]
            position = 0
            for marker in self.acked[session]:
                try:
                    position = markers.index(marker, position) + 1
                except ValueError:
                    missing += 1
                    self.problems.append(f"{session}: {marker} missing after load")
                    continue
                if f"answer to {marker}" not in said:
                    missing += 1
                    self.problems.append(f"{session}: {marker} lost its answer")
        return missing


def run_load(bench, sessions_n, prompts, seed):
    rng = random.Random(seed)
    agent = bench.start()
    sessions = [bench.new_session(agent) for _ in range(sessions_n)]
    sent = [0]
    counts = {"end_turn": 0, "cancelled": 0, "reloads": 0, "no_answer": 0}
    lock = threading.Lock()

    def worker(index, session):
        local = random.Random(seed * 1000 + index)
        while True:
            with lock:
                if sent[0] >= prompts:
                    return
                sent[0] += 1
                n = sent[0]
            marker = f"turn-{n}"
            roll = local.random()
            cancel = local.uniform(0, 0.03) if roll < 0.1 else None
            stop = bench.prompt(agent, session, marker, tool=local.random() < 0.3,
                                cancel_after=cancel)
            with lock:
                counts[stop if stop in counts else "no_answer"] += 1
            if local.random() < 0.03:
                agent.request("session/close", {"sessionId": session})
                loaded = agent.request("session/load", {"sessionId": session,
                                                        "cwd": bench.project, "mcpServers": []})
                agent.take_updates(session)
                if loaded is None or "error" in loaded:
                    bench.problems.append(f"reload {session}: {loaded}")
                with lock:
                    counts["reloads"] += 1

    started = time.time()
    threads = [threading.Thread(target=worker, args=(i, s)) for i, s in enumerate(sessions)]
    rng.shuffle(threads)
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.time() - started
    twice = sum(1 for n in agent.answer_count.values() if n != 1)
    agent.close()
    fresh = bench.start()
    acked = sum(len(v) for v in bench.acked.values())
    missing = bench.check_loaded(fresh, sessions)
    fresh.close()
    return {"run": "load", "sessions": sessions_n, "prompts": prompts, "wall_s": round(wall, 1),
            **counts, "answered_other_than_once": twice, "acknowledged": acked,
            "missing_after_reload": missing}


def run_leak(bench, prompts, cycle, per_session):
    agent = bench.start()
    samples = []
    done = 0
    started = time.time()
    while done < prompts:
        in_cycle = min(cycle, prompts - done)
        while in_cycle > 0:
            session = bench.new_session(agent)
            for _ in range(min(per_session, in_cycle)):
                done += 1
                in_cycle -= 1
                bench.prompt(agent, session, f"turn-{done}", tool=done % 3 == 0)
                agent.take_updates(session)
            agent.request("session/close", {"sessionId": session})
        samples.append({"prompts": done, **agent.stats()})
    wall = time.time() - started
    agent.close()
    failed = done - sum(len(v) for v in bench.acked.values())
    return {"run": "leak", "prompts": done, "wall_s": round(wall, 1), "failed": failed,
            "first": samples[0], "last": samples[-1],
            "rss_kib_range": [min(s["rss_kib"] for s in samples),
                              max(s["rss_kib"] for s in samples)],
            "threads_range": [min(s["threads"] for s in samples),
                              max(s["threads"] for s in samples)],
            "fds_range": [min(s["fds"] for s in samples), max(s["fds"] for s in samples)]}


def run_kill(bench, sessions_n, kills, seed):
    rng = random.Random(seed)
    agent = bench.start()
    sessions = [bench.new_session(agent) for _ in range(sessions_n)]
    counter = [0]
    lock = threading.Lock()
    lost = 0
    checked = 0
    for round_ in range(kills + 1):
        stop = threading.Event()

        def worker(session, agent=agent, stop=stop):
            while not stop.is_set():
                with lock:
                    counter[0] += 1
                    marker = f"turn-{counter[0]}"
                if bench.prompt(agent, session, marker, tool=rng.random() < 0.3) is None:
                    return

        threads = [threading.Thread(target=worker, args=(s,)) for s in sessions]
        for t in threads:
            t.start()
        time.sleep(rng.uniform(0.2, 1.5))
        if round_ < kills:
            os.kill(agent.proc.pid, signal.SIGKILL)
            agent.proc.wait()
        stop.set()
        for t in threads:
            t.join()
        if round_ == kills:
            agent.close()
        agent = bench.start()
        lost += bench.check_loaded(agent, sessions)
        checked += 1
    agent.close()
    return {"run": "kill", "sessions": sessions_n, "kills": kills, "loads_checked": checked,
            "acknowledged": sum(len(v) for v in bench.acked.values()), "lost": lost}


def run_disk(bench, sessions_n, prompts):
    data = bench.env["TANDEM_HOME"]
    os.makedirs(data, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", data], check=True)
    try:
        agent = bench.start()
        sessions = [bench.new_session(agent) for _ in range(sessions_n)]
        counter = [0]
        lock = threading.Lock()
        stops = {}
        padding = " words" * 4000

        def worker(session):
            while True:
                with lock:
                    if counter[0] >= prompts:
                        return
                    counter[0] += 1
                    marker = f"turn-{counter[0]}"
                stop = bench.prompt(agent, session, marker, padding=padding)
                with lock:
                    stops[stop] = stops.get(stop, 0) + 1

        threads = [threading.Thread(target=worker, args=(s,)) for s in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        status = agent.request("_tandem/status", {})
        unsaved = sum((s.get("unsaved") or {}).get("records", 0) for s in status["result"].get("sessions", []))
        df = os.statvfs(data)
        free_while_full = df.f_bavail * df.f_frsize
        subprocess.run(["mount", "-o", "remount,size=64m", data], check=True)
        for session in sessions:
            counter[0] += 1
            bench.prompt(agent, session, f"turn-{counter[0]}")
        agent.close()
        fresh = bench.start()
        missing = bench.check_loaded(fresh, sessions)
        fresh.close()
    finally:
        subprocess.run(["umount", "-l", data], check=False)
    return {"run": "disk", "sessions": sessions_n, "prompts": prompts,
            "stop_reasons": {str(k): v for k, v in stops.items()},
            "unsaved_records_while_full": unsaved, "free_bytes_while_full": free_while_full,
            "acknowledged": sum(len(v) for v in bench.acked.values()),
            "missing_after_reload": missing}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", choices=["load", "leak", "kill", "disk"])
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--sessions", type=int, default=None)
    parser.add_argument("--prompts", type=int, default=None)
    parser.add_argument("--cycle", type=int, default=500, help="leak: prompts per cycle")
    parser.add_argument("--per-session", type=int, default=20, help="leak: prompts per session")
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bench = Bench(args.binary)
    try:
        if args.run == "load":
            result = run_load(bench, args.sessions or 50, args.prompts or 2050, args.seed)
        elif args.run == "leak":
            result = run_leak(bench, args.prompts or 6000, args.cycle, args.per_session)
        elif args.run == "kill":
            result = run_kill(bench, args.sessions or 30, args.kills, args.seed)
        else:
            result = run_disk(bench, args.sessions or 6, args.prompts or 42)
    finally:
        bench.server.shutdown()
        shutil.rmtree(bench.scratch, ignore_errors=True)
    result["problems"] = bench.problems[:10]
    print(json.dumps(result))
    bad = result.get("missing_after_reload", 0) or result.get("lost", 0) \
        or result.get("answered_other_than_once", 0) or bench.problems
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
