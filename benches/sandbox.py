#!/usr/bin/env python3
"""Latency the command sandbox adds: `true` through `tandem sandbox` against `true` alone.

    cargo build --release && python3 benches/sandbox.py [--runs 300] [--bin PATH] [--creates N]

Both are started the way tandem starts a local command: `sh -c true`, one after the other in
alternation so both see the same machine, RUNS times each. The sandboxed one is
`tandem sandbox --policy FILE -- sh -c true` with the policy a session in this checkout would
have (the repository writable, `.git` and `.tandem` read-only, no new repository in it, the
user's key folders hidden, the network off). Reports the median and quartiles of each, the
median added latency, and the median of the pairwise ratios.

`--bin` times another build; `--baseline OLD` times an older build too, in the same
alternation (plain, old, new), and reports how the added cost changed;
`--creates N` makes the command create N files in the workspace instead (`O_CREAT` opens,
which the sandbox's pid 1 makes on the command's behalf), to show that cost per file.
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
        "noRepositories": [ROOT],
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
    parser.add_argument("--bin", default=BIN)
    parser.add_argument("--creates", type=int, default=0)
    parser.add_argument("--baseline", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tandem-sandbox-bench-") as folder:
        temp = os.path.join(folder, "tmp")
        os.mkdir(temp)
        path = os.path.join(folder, "policy.json")
        with open(path, "w") as f:
            json.dump(policy(temp), f)
        line = "true"
        if args.creates:
            scratch = os.path.join(ROOT, "target", "sandbox-bench")
            os.makedirs(scratch, exist_ok=True)
            line = f"cd {scratch} && for i in $(seq {args.creates}); do : > f$i; done"
        plain = ["sh", "-c", line]
        boxed = [args.bin, "sandbox", "--policy", path, "--"] + plain
        old = [args.baseline, "sandbox", "--policy", path, "--"] + plain if args.baseline else None
        for argv in [plain, boxed] + ([old] if old else []):  # warm the page cache
            timed(argv)
        a, b, c = [], [], []
        for _ in range(args.runs):
            a.append(timed(plain))
            b.append(timed(boxed))
            if old:
                c.append(timed(old))
    added = statistics.median(b) - statistics.median(a)
    ratio = statistics.median([y / x for x, y in zip(a, b)])
    print(f"runs: {args.runs} each, alternating")
    print(f"sh -c {line!r}: {quartiles(a)}")
    print(f"tandem sandbox -- the same:  {quartiles(b)}")
    print(f"added by the sandbox: {added:.2f} ms (median of pairwise ratios {ratio:.2f}x)")
    if old:
        before = statistics.median(c) - statistics.median(a)
        print(f"baseline's sandbox:          {quartiles(c)}")
        print(f"added by the baseline's: {before:.2f} ms; this build's added cost is {added / before:.2f}x it")


if __name__ == "__main__":
    main()
