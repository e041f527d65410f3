#!/usr/bin/env python3
"""Soak: thousands of prompts through one tandem process over real stdio, with its RSS.

    cargo build --release && python3 benches/soak.py [--turns 2000] [--per-session 100]

Each prompt runs two model requests from the replay fixture fixtures/bench/soak.json (a
read_file tool call, then a streamed answer), so a turn exercises the transport, the
session actor, the tool loop, the transcript and usage reporting. Sessions are opened,
prompted --per-session times and closed, so leaks per session and per turn both show.

Prints one JSON object: turns, wall time, turns/s, and VmRSS (KiB) after the first 50
turns (warm), at the end, and the most seen in between. Exits 1 if any prompt did not end
with end_turn.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from process import rss_kib  # benches/process.py, beside this script

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Agent:
    def __init__(self, binary, env):
        self.proc = subprocess.Popen(
            [binary, "--replay", os.path.join(ROOT, "fixtures/bench/soak.json")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.next_id = 0

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()
        updates = 0
        while True:
            raw = self.proc.stdout.readline()
            if not raw:
                raise SystemExit(f"tandem exited during {method}")
            message = json.loads(raw)
            if message.get("id") == rid and "method" not in message:
                return message, updates
            updates += 1

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=2000)
    parser.add_argument("--per-session", type=int, default=100)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    args = parser.parse_args()

    scratch = tempfile.mkdtemp(prefix="tandem-soak-")
    project = os.path.join(scratch, "project")
    shutil.copytree(os.path.join(ROOT, "fixtures/workspaces/small"), project)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": scratch,
        "TANDEM_HOME": os.path.join(scratch, "data"),
        "XDG_CONFIG_HOME": os.path.join(scratch, "config"),
        "RUST_LOG": "warn",
    }
    agent = Agent(args.binary, env)
    agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    pid = agent.proc.pid
    samples = []
    warm = None
    failures = 0
    updates = 0
    session = None
    started = time.perf_counter()
    for turn in range(args.turns):
        if turn % args.per_session == 0:
            if session:
                agent.request("session/close", {"sessionId": session})
            reply, _ = agent.request("session/new", {"cwd": project, "mcpServers": []})
            session = reply["result"]["sessionId"]
        reply, seen = agent.request(
            "session/prompt",
            {"sessionId": session, "prompt": [{"type": "text", "text": f"turn {turn}: what is this?"}]},
        )
        updates += seen
        if reply.get("result", {}).get("stopReason") != "end_turn":
            failures += 1
        if turn + 1 == 50:
            warm = rss_kib(pid)
        if (turn + 1) % 100 == 0:
            samples.append(rss_kib(pid))
    wall = time.perf_counter() - started
    end = rss_kib(pid)
    code = agent.close()
    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps({
        "turns": args.turns,
        "per_session": args.per_session,
        "updates": updates,
        "failed_turns": failures,
        "exit_code": code,
        "wall_s": round(wall, 2),
        "turns_per_s": round(args.turns / wall, 1),
        "rss_kib_after_50_turns": warm,
        "rss_kib_end": end,
        "rss_kib_max_sampled": max(samples + [end]),
        "rss_kib_every_100_turns": samples,
    }, indent=1))
    return 1 if failures or code != 0 else 0


if __name__ == "__main__":
    sys.exit(main())
