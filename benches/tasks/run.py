#!/usr/bin/env python3
"""The task suite: any ACP agent, any model, the same small jobs, and how many it solved.

The runner is the editor. For each task it copies the task's project into a fresh folder,
starts the agent there over ACP stdio, answers its `fs/*`, `terminal/*` (in bubblewrap where
it runs) and permission requests, sends the task's statement as the prompt, applies the time
and model-request limits, and then runs the task's hidden check. Every agent is pointed at
one counting proxy in front of the endpoint, so requests and tokens come from the server's
own `usage`, measured the same way for every agent.

    python3 benches/tasks/run.py --replay                      # tandem, scripted runs: 24/24
    python3 benches/tasks/run.py --base-url http://127.0.0.1:8080/v1 --model qwen3-coder \\
        [--api-key-env OPENAI_API_KEY] [--agent tandem] [--agent codex-acp] [--tasks 'rust-*']
    python3 benches/tasks/run.py --verify-checks               # every check fails untouched

Writes report.json and report.md to --out (target/bench-tasks). Standard library only;
Python >= 3.11. Task format: benches/tasks/FORMAT.md.
"""

import argparse
import datetime
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from runner import agents, report, sandbox, tasks  # noqa: E402
from runner.proxy import Proxy  # noqa: E402
from runner.scripted import MODEL_ID, ReplayServer  # noqa: E402
from runner.session import Options, run_task  # noqa: E402

APIS = ("chat-completions", "responses", "anthropic-messages")


def parse():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], epilog=agents.__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    where = parser.add_argument_group("the model")
    where.add_argument("--base-url", help="the endpoint every agent is pointed at")
    where.add_argument("--model", help="the model id sent to it")
    where.add_argument("--api-key-env", metavar="VAR",
                       help="environment variable holding the endpoint's key (default: a dummy)")
    where.add_argument("--api", choices=APIS, default="chat-completions",
                       help="wire API the agents speak (default chat-completions)")
    where.add_argument("--replay", action="store_true",
                       help="serve each task's replay.json instead (tandem's scripted runs)")
    run = parser.add_argument_group("the run")
    run.add_argument("--agent", action="append", metavar="NAME[=COMMAND]",
                     help="an agent to run (repeat to compare; default tandem)")
    run.add_argument("--tasks", action="append", metavar="GLOB", help="task ids (repeatable)")
    run.add_argument("--max-requests", type=int, default=30, help="model requests per task")
    run.add_argument("--timeout", type=float, default=600, help="seconds per task's turn")
    run.add_argument("--max-answer-tokens", type=int, metavar="N",
                     help="hold every agent's answers to N tokens (the proxy lowers each "
                          "request's own limit; default: what each agent asks for)")
    run.add_argument("--permissions", choices=("allow", "allow-always", "reject"),
                     default="allow", help="how permission requests are answered")
    run.add_argument("--sandbox", choices=("auto", "bwrap", "none"), default="auto",
                     help="where commands and checks run (auto: bwrap when it works)")
    run.add_argument("--out", default=os.path.join(agents.ROOT, "target", "bench-tasks"),
                     help="folder for report.json and report.md")
    run.add_argument("--keep", action="store_true", help="keep the workspaces")
    run.add_argument("--require", metavar="N|all",
                     help="exit 1 unless every agent solved N tasks (or all)")
    run.add_argument("--require-clean", action="store_true",
                     help="exit 1 if any agent could not open a session, exited mid-task or "
                          "wrote anything but JSON-RPC to stdout (a run that reports, whatever "
                          "it solved)")
    run.add_argument("--verify-checks", action="store_true",
                     help="only check that every hidden check fails on its untouched repo")
    args = parser.parse_args()
    if not args.verify_checks and not args.replay and not (args.base_url and args.model):
        parser.error("give --base-url and --model, or --replay")
    if args.replay and (args.base_url or args.api != "chat-completions"):
        parser.error("--replay serves chat completions itself: no --base-url or --api")
    return args


def verify_checks(selected, sandbox_mode, scratch, node):
    """Every check must fail on its untouched repo; returns the ids where it passed."""
    env = agents.base_env(tempfile.mkdtemp(prefix="home-", dir=scratch))
    if node:
        env["PATH"] = node + os.pathsep + env["PATH"]
    passing = []
    for task in selected:
        path = tasks.workspace(task, scratch)
        passed, output = tasks.run_check(task, path, sandbox_mode, env,
                                         visible=[node] if node else ())
        print(f"{task.id:<36} {'PASSES untouched' if passed else 'fails untouched (good)'}",
              file=sys.stderr)
        if passed:
            passing.append(task.id)
    return passing


def main():
    args = parse()
    selected = tasks.load(args.tasks)
    if args.replay:
        unscripted = [t.id for t in selected if not os.path.isfile(t.replay)]
        if unscripted:
            raise SystemExit(f"run.py: no replay.json in {', '.join(unscripted)}")
    sandbox_mode = sandbox.choose(args.sandbox)
    scratch = tempfile.mkdtemp(prefix="tandem-bench-")
    node = (tasks.node_dir(agents.CACHE)
            if any(t.language == "typescript" for t in selected) else None)
    try:
        if args.verify_checks:
            passing = verify_checks(selected, sandbox_mode, scratch, node)
            print(f"{len(selected) - len(passing)}/{len(selected)} checks fail untouched")
            return 1 if passing else 0
        return run(args, selected, sandbox_mode, scratch, node)
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)
        else:
            print(f"workspaces kept in {scratch}", file=sys.stderr)


def run(args, selected, sandbox_mode, scratch, node):
    replay = ReplayServer() if args.replay else None
    upstream = replay.base_url if replay else args.base_url
    real_key = os.environ.get(args.api_key_env, "") if args.api_key_env else None
    if args.api_key_env and not real_key:
        raise SystemExit(f"run.py: {args.api_key_env} is not set")
    proxy = Proxy(upstream, real_key, args.max_answer_tokens)
    key = "sk-bench-stand-in"  # what agents hold; the proxy swaps in the real key
    model = MODEL_ID if replay else args.model
    endpoint = agents.Endpoint(proxy.base_url, model, key, args.api)
    options = Options(scratch=scratch, node_dir=node, max_requests=args.max_requests,
                      timeout=args.timeout, permissions=args.permissions, sandbox=sandbox_mode,
                      keep=args.keep)
    specs = args.agent or ["tandem"]
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    runs = {}
    for spec in specs:
        results = []
        for task in selected:
            result = run_task(task, spec, endpoint, proxy, replay, options)
            results.append(result)
            print(f"{result['agent']:<12} {task.id:<36} {'solved' if result['solved'] else 'FAILED':<7}"
                  f" {result['requests']:>3} req {result['wall_s']:>7.1f} s  {result['ended_by']}"
                  + (f"  ({result['error']})" if result.get("error") else ""), file=sys.stderr)
        runs[_unique(results[0]["agent"] if results else spec, runs)] = results
    proxy.close()
    if replay:
        replay.close()
    meta = {"endpoint": "replay (each task's replay.json)" if replay else args.base_url,
            "model": model, "api": args.api, "started": started, "sandbox": sandbox_mode,
            "permissions": args.permissions, "max_requests": args.max_requests,
            "max_answer_tokens": args.max_answer_tokens,
            "timeout": args.timeout, "replay": bool(replay),
            "versions": {name: {"version": results[0].get("agent_version"),
                                "command": results[0].get("agent_command")}
                         for name, results in runs.items() if results}}
    full = report.build(meta, runs)
    os.makedirs(args.out, exist_ok=True)
    json_path, md_path = os.path.join(args.out, "report.json"), os.path.join(args.out, "report.md")
    report.write(full, json_path, md_path)
    print(report.markdown(full))
    print(f"report: {json_path} and {md_path}", file=sys.stderr)
    return _verdict(args.require, full) | _clean(args.require_clean, full)


def _unique(name, taken):
    candidate, n = name, 2
    while candidate in taken:
        candidate, n = f"{name}-{n}", n + 1
    return candidate


def _clean(required, full):
    """1 when `required` and some run broke down: no session, the agent gone, a bad line."""
    if not required:
        return 0
    broken = []
    for name, run in full["agents"].items():
        for task in run["tasks"]:
            why = (task.get("protocol_errors") or
                   (task.get("ended_by") == "agent exited" and "the agent exited") or
                   (task.get("ended_by") == "error" and str(task.get("error")).startswith(
                       ("setting up the session", "cannot start")) and task["error"]))
            if why:
                broken.append(f"{name} on {task['task']}: {why}")
    for line in broken:
        print(f"run.py: {line}", file=sys.stderr)
    return 1 if broken else 0


def _verdict(require, full):
    if not require:
        return 0
    short = []
    for name, run in full["agents"].items():
        totals = run["totals"]
        wanted = totals["tasks"] if require == "all" else int(require)
        if totals["solved"] < wanted:
            short.append(f"{name} solved {totals['solved']}/{totals['tasks']}, wanted {wanted}")
    for line in short:
        print(f"run.py: {line}", file=sys.stderr)
    return 1 if short else 0


if __name__ == "__main__":
    sys.exit(main())
