#!/usr/bin/env python3
"""Latency the command sandbox adds: `true` through `tandem sandbox` against `true` alone.

    cargo build --release && python3 benches/sandbox.py [--runs 300]

Both are started the way tandem starts a local command: `sh -c true`, one after the other in
alternation so both see the same machine, RUNS times each. The sandboxed one is
`tandem sandbox --policy FILE -- sh -c true` with the policy a session in this checkout would
have (the repository writable, `.git` and `.tandem` read-only, the
user's key folders hidden, the network off). Reports the median and quartiles of each, the
median added latency, and the median of the pairwise ratios.
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release", "tandem")


def policy(temp):
    home = os.path.expanduser("~")
    return {
        "writable": [ROOT],
        "readOnly": [os.path.join(ROOT, p) for p in (".git", ".tandem")],
        "hidden": [os.path.join(home, p) for p in (".ssh", ".gnupg", ".aws", ".config/tandem")],
        "network": False,
        "temp": temp,
    }


def timed(argv):
    start = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def quartiles(xs):
    q = statistics.quantiles(xs, n=4)
    return f"median {statistics.median(xs):.2f} ms (quartiles {q[0]:.2f}–{q[2]:.2f})"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tandem-sandbox-bench-") as folder:
        temp = os.path.join(folder, "tmp")
        os.mkdir(temp)
        path = os.path.join(folder, "policy.json")
        with open(path, "w") as f:
            json.dump(policy(temp), f)
        plain = ["sh", "-c", "true"]
        boxed = [BIN, "sandbox", "--policy", path, "--"] + plain
        for argv in (plain, boxed):  # warm the page cache
            timed(argv)
        a, b = [], []
        for _ in range(args.runs):
            a.append(timed(plain))
            b.append(timed(boxed))
    added = statistics.median(b) - statistics.median(a)
    ratio = statistics.median([y / x for x, y in zip(a, b)])
    print(f"runs: {args.runs} each, alternating")
    print(f"sh -c true:                    {quartiles(a)}")
    print(f"tandem sandbox -- sh -c true:  {quartiles(b)}")
    print(f"added by the sandbox: {added:.2f} ms (median of pairwise ratios {ratio:.2f}x)")


if __name__ == "__main__":
    main()
