"""The report: per task and in total, per agent, as JSON and as a Markdown table.

With one agent the table has a row per task; with two or more (the same tasks, endpoint and
model) each task's row shows every agent side by side, and the totals compare them.
"""

import json

FIELDS = ("requests", "prompt_tokens", "completion_tokens", "wall_s", "turn_s", "tool_calls",
          "permission_requests", "failed_edits", "model_errors")


def totals(results):
    total = {"tasks": len(results), "solved": sum(1 for r in results if r["solved"])}
    for field in FIELDS:
        total[field] = round(sum(r.get(field) or 0 for r in results), 2)
    total["requests_without_usage"] = sum(r.get("requests_without_usage") or 0 for r in results)
    by_category = {}
    for r in results:
        solved, count = by_category.get(r["category"], (0, 0))
        by_category[r["category"]] = (solved + bool(r["solved"]), count + 1)
    total["by_category"] = {k: f"{s}/{n}" for k, (s, n) in sorted(by_category.items())}
    by_language = {}
    for r in results:
        solved, count = by_language.get(r["language"], (0, 0))
        by_language[r["language"]] = (solved + bool(r["solved"]), count + 1)
    total["by_language"] = {k: f"{s}/{n}" for k, (s, n) in sorted(by_language.items())}
    return total


def build(meta, runs):
    """The JSON report: `runs` maps an agent's name to its results."""
    return {**meta, "agents": {name: {"totals": totals(results), "tasks": results}
                               for name, results in runs.items()}}


def write(report, json_path, markdown_path):
    with open(json_path, "w") as f:
        json.dump(report, f, indent=1)
    with open(markdown_path, "w") as f:
        f.write(markdown(report))


def markdown(report):
    agents = report["agents"]
    names = list(agents)
    lines = [f"# Task suite: {report['endpoint']} · model `{report['model']}`", "",
             f"{report['started']} · sandbox: {report['sandbox']} · permissions: "
             f"{report['permissions']} · limits: {report['max_requests']} model requests, "
             f"{report['timeout']} s per task"
             + (f", {report['max_answer_tokens']} tokens per answer"
                if report.get("max_answer_tokens") else "")
             + (" · tokens estimated by the replay server "
                                                  "(bytes / 4)" if report.get("replay") else ""),
             ""]
    versions = report.get("versions") or {}
    if versions:
        lines += ["Agents: " + "; ".join(
            f"{name} {v.get('version') or '(version unknown)'} (`{v.get('command')}`)"
            for name, v in versions.items()), ""]
    lines += ["| agent | solved | model requests | prompt tokens | completion tokens | "
              "wall time | tool calls | permission requests | failed edits | model errors |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for name in names:
        t = agents[name]["totals"]
        lines.append(f"| {name} | {t['solved']}/{t['tasks']} | {t['requests']} | "
                     f"{t['prompt_tokens']:,} | {t['completion_tokens']:,} | {t['wall_s']:.1f} s | "
                     f"{t['tool_calls']} | {t['permission_requests']} | {t['failed_edits']} | "
                     f"{t['model_errors']} |")
    if len(names) > 1:
        base = agents[names[0]]["totals"]
        for name in names[1:]:
            t = agents[name]["totals"]
            ratio = lambda key: f"{t[key] / base[key]:.2f}×" if base[key] else "–"
            lines.append(f"\n{name} against {names[0]}: prompt tokens {ratio('prompt_tokens')}, "
                         f"model requests {ratio('requests')}, time in the turn {ratio('turn_s')}.")
    unusaged = {n: agents[n]["totals"]["requests_without_usage"] for n in names}
    if any(unusaged.values()):
        lines.append("\nRequests whose answer carried no usage (not in the token counts): " +
                     ", ".join(f"{n} {c}" for n, c in unusaged.items()) + ".")
    lines += ["", "By category: " + "; ".join(
        f"{name} " + ", ".join(f"{k} {v}" for k, v in agents[name]["totals"]["by_category"].items())
        for name in names), ""]
    lines += _task_table(agents, names)
    return "\n".join(lines) + "\n"


def _task_table(agents, names):
    header = "| task | category |" + "".join(f" {n} |" for n in names)
    lines = [header, "|---|---|" + "---|" * len(names)]
    rows = {}
    for name in names:
        for r in agents[name]["tasks"]:
            rows.setdefault((r["task"], r["category"]), {})[name] = r
    for (task, category), by_agent in rows.items():
        cells = []
        for name in names:
            r = by_agent.get(name)
            if r is None:
                cells.append("–")
                continue
            mark = "✓" if r["solved"] else "✗"
            how = "" if r.get("ended_by") == "answer" else f", {r.get('ended_by')}"
            cells.append(f"{mark} {r['requests']} req, {r['prompt_tokens'] + r['completion_tokens']:,}"
                         f" tok, {r['wall_s']:.1f} s{how}")
        lines.append(f"| {task} | {category} |" + "".join(f" {c} |" for c in cells))
    return lines
