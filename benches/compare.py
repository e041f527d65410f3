#!/usr/bin/env python3
"""tandem beside the best-known ACP agents: start-up and memory, measured the same way.

    cargo build --release && python3 benches/compare.py [--runs 5] [--keep DIR] [--vs BINARY]

Installs @zed-industries/codex-acp and @zed-industries/claude-agent-acp from npm into a
temporary directory (needs node and npm; nothing else is installed), then for each agent
and for tandem: spawns it, sends `initialize`, then `session/new` (codex-acp first takes
`authenticate` with its OPENAI_API_KEY method, as an editor does), and records
  - spawn -> initialize answer (ms)
  - spawn -> session/new answer (ms), and whether that answer was a session or an error
  - RSS of the whole process tree 300 ms after that answer (MiB)
A std-only program that answers each line (benches/bare/bare.rs, built with rustc -O) is the
floor: its row gives tandem's ratio to it. Runs alternate between the agents, so a busy
moment slows all of them. Medians over --runs. No model is contacted: keys are dummies and nobody prompts, so an agent
that needs a network or an account to open a session answers session/new with an error,
which the table says. Prints a table with each figure's ratio to tandem's.
"""

import argparse
import json
import os
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = {
    "codex-acp": ("@zed-industries/codex-acp@0.16.0", "codex-acp", "openai-api-key"),
    "claude-agent-acp": ("@zed-industries/claude-agent-acp@0.23.1", "claude-agent-acp", None),
}


def tree_rss_mib(pid):
    """VmRSS of `pid` and every descendant."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
        except OSError:
            continue
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        todo.extend(children.get(p, []))
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def kill_tree(proc):
    try:
        os.killpg(proc.pid, 9)
    except OSError:
        pass
    proc.wait()


def measure(cmd, env, cwd, auth):
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=env, cwd=cwd, start_new_session=True)

    def send(message):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def answer(rid, limit=60):
        end = time.time() + limit
        while time.time() < end:
            ready, _, _ = select.select([proc.stdout], [], [], 0.2)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:
                return None
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("id") == rid and "method" not in message:
                return message
        return None

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": 1, "clientCapabilities":
                         {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}}})
        if answer(1) is None:
            return None
        t_init = (time.perf_counter() - started) * 1000
        if auth:
            send({"jsonrpc": "2.0", "id": 2, "method": "authenticate", "params": {"methodId": auth}})
            answer(2)
        send({"jsonrpc": "2.0", "id": 3, "method": "session/new",
              "params": {"cwd": cwd, "mcpServers": []}})
        reply = answer(3)
        t_new = (time.perf_counter() - started) * 1000
        time.sleep(0.3)
        rss = tree_rss_mib(proc.pid)
        ok = bool(reply and "result" in reply)
        error = None if ok else (reply or {}).get("error", {"message": "no answer"}).get("message")
        return t_init, t_new, rss, ok, error
    finally:
        kill_tree(proc)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--keep", help="install the peers here and keep them (reused if present)")
    parser.add_argument("--vs", metavar="BINARY",
                        help="another tandem build (an earlier commit's), measured in the same "
                             "alternation as the row 'tandem (vs)'")
    parser.add_argument("--only", nargs="+", metavar="AGENT",
                        help="only these rows (tandem is always measured): codex-acp, "
                             "claude-agent-acp, 'bare program'")
    args = parser.parse_args()

    where = args.keep or tempfile.mkdtemp(prefix="tandem-peers-")
    os.makedirs(where, exist_ok=True)
    home = os.path.join(where, "home")
    project = os.path.join(where, "project")
    for d in (home, project, os.path.join(home, ".codex")):
        os.makedirs(d, exist_ok=True)
    packages = [spec for spec, _, _ in PEERS.values()]
    if not all(os.path.exists(os.path.join(where, "node_modules/.bin", b)) for _, b, _ in PEERS.values()):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", where, *packages],
                       check=True, stdout=subprocess.DEVNULL)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "CODEX_HOME": os.path.join(home, ".codex"),
        "TANDEM_HOME": os.path.join(home, "tandem"),
        "OPENAI_API_KEY": "sk-dummy-for-benchmarks",
        "ANTHROPIC_API_KEY": "sk-ant-dummy-for-benchmarks",
        "RUST_LOG": "error",
    }
    agents = {"tandem": ([args.binary], None)}
    for name, (_, binary, auth) in PEERS.items():
        agents[name] = ([os.path.join(where, "node_modules/.bin", binary)], auth)
    # The floor: a std-only Rust program that answers each line (benches/bare/bare.rs).
    bare = os.path.join(where, "bare")
    subprocess.run(["rustc", "-O", "-o", bare, os.path.join(ROOT, "benches/bare/bare.rs")], check=True)
    agents["bare program"] = ([bare], None)

    if args.only:
        agents = {n: a for n, a in agents.items() if n == "tandem" or n in args.only}
    if args.vs:
        agents["tandem (vs)"] = ([args.vs], None)
    measured = {name: [] for name in agents}
    for _ in range(args.runs):
        for name, (cmd, auth) in agents.items():
            result = measure(cmd, env, project, auth)
            if result:
                measured[name].append(result)
    rows = {}
    for name, runs in measured.items():
        if not runs:
            rows[name] = None
            continue
        rows[name] = {
            "initialize_ms": statistics.median(r[0] for r in runs),
            "session_new_ms": statistics.median(r[1] for r in runs),
            "rss_mib": statistics.median(r[2] for r in runs),
            "session_new": "session" if all(r[3] for r in runs) else f"error: {runs[0][4]}",
            "runs": len(runs),
        }
    if not args.keep:
        shutil.rmtree(where, ignore_errors=True)

    base = rows["tandem"]
    print(f"{'agent':<18} {'spawn->initialize':>20} {'spawn->session/new':>20} {'RSS (tree)':>16}  session/new answer")
    for name, row in rows.items():
        if row is None:
            print(f"{name:<18} did not answer initialize")
            continue
        if name == "bare program":  # the ratio that matters: tandem's to the floor
            cell = lambda key, unit: f"{row[key]:.1f} {unit} (tandem {base[key] / row[key]:.1f}x)"
        elif name == "tandem (vs)":  # an earlier build: close ratios need decimals
            cell = lambda key, unit: f"{row[key]:.1f} {unit} ({row[key] / base[key]:.2f}x)"
        else:
            cell = lambda key, unit: (f"{row[key]:.1f} {unit}" if name == "tandem"
                                      else f"{row[key]:.1f} {unit} ({row[key] / base[key]:.0f}x)")
        print(f"{name:<18} {cell('initialize_ms', 'ms'):>20} {cell('session_new_ms', 'ms'):>20} "
              f"{cell('rss_mib', 'MiB'):>16}  {row['session_new']}")
    print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    sys.exit(main())
