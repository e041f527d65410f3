#!/usr/bin/env python3
"""Memory with a hostile line on stdin: one 200 MiB line without a newline, then a normal
`initialize`. Prints the codes of both answers (the long line gets -32600, initialize is
answered) and the process's peak and current RSS (VmHWM, VmRSS) before it exits.

  cargo build --release && python3 benches/hostile_line.py [--limit BYTES] [--binary PATH]

`--limit` sets TANDEM_MAX_MESSAGE_BYTES (default: tandem's own, 64 MiB). Linux only (/proc).
"""

import argparse
import json
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(ROOT, "target/release/tandem"))
    parser.add_argument("--limit", help="TANDEM_MAX_MESSAGE_BYTES")
    parser.add_argument("--mib", type=int, default=200, help="size of the hostile line")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "RUST_LOG": "error"}
        if args.limit:
            env["TANDEM_MAX_MESSAGE_BYTES"] = args.limit
        fixture = os.path.join(ROOT, "fixtures/demo/hello.json")
        agent = subprocess.Popen([args.binary, "--replay", fixture], stdin=subprocess.PIPE,
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
        block = b"x" * (1 << 20)
        for _ in range(args.mib):
            agent.stdin.write(block)
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                "params": {"protocolVersion": 1}}
        agent.stdin.write(b"\n" + json.dumps(init).encode() + b"\n")
        agent.stdin.flush()
        answers = [json.loads(agent.stdout.readline()) for _ in range(2)]
        with open(f"/proc/{agent.pid}/status") as status:
            memory = {line.split(":")[0]: int(line.split()[1]) for line in status
                      if line.startswith(("VmHWM", "VmRSS"))}
        agent.stdin.close()
        agent.wait()
    codes = [a.get("error", {}).get("code", "answered") for a in answers]
    print(f"limit {args.limit or 'default'}: answers {codes}; peak RSS "
          f"{memory['VmHWM'] / 1024:.1f} MiB, RSS after {memory['VmRSS'] / 1024:.1f} MiB")


if __name__ == "__main__":
    main()
