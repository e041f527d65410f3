"""The tasks: loading `task.toml`, a fresh workspace per run, and the hidden check.

A workspace is a copy of the task's `repo/` in a new temporary folder, made a git repository
with one commit (most projects are, and agents read `git status`), so what the agent changed
is `git diff`. The check copies `check/` over it and runs `check` with `sh -c` in the
sandbox, with a time limit.
"""

import glob
import os
import platform
import shutil
import subprocess
import tomllib

from . import sandbox

TASKS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CATEGORIES = ("bugfix", "feature", "refactor", "config", "large-file", "multi-step")
LANGUAGES = ("rust", "python", "typescript", "shell")
NODE_VERSION = "22.23.3"  # Node runs .ts files itself from 22.18
GIT = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.invalid",
       "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.invalid"}


class Task:
    def __init__(self, folder):
        self.id = os.path.basename(folder)
        self.folder = folder
        with open(os.path.join(folder, "task.toml"), "rb") as f:
            spec = tomllib.load(f)
        self.statement = spec["statement"].strip()
        self.category = spec["category"]
        self.language = spec["language"]
        self.check = spec["check"]
        self.check_timeout = spec.get("check_timeout", 180)
        if self.category not in CATEGORIES or self.language not in LANGUAGES:
            raise SystemExit(f"run.py: {self.id}: unknown category or language")
        self.replay = os.path.join(folder, "replay.json")


def load(patterns):
    """Every task, or those whose id matches one of the glob `patterns`."""
    import fnmatch
    folders = sorted(d for d in glob.glob(os.path.join(TASKS_DIR, "*"))
                     if os.path.isfile(os.path.join(d, "task.toml")))
    tasks = [Task(d) for d in folders]
    if patterns:
        tasks = [t for t in tasks if any(fnmatch.fnmatch(t.id, p) for p in patterns)]
    if not tasks:
        raise SystemExit("run.py: no task matches")
    return tasks


def workspace(task, scratch):
    """A fresh copy of the task's repo/ at `scratch`/project, committed to git when git is here.

    Every task of a run gets the same path, so what an agent puts before the task in its
    prompt (a system prompt naming the folder) is the same from task to task: a server's
    prefix cache reuses it, and greedy sampling is not steered by a random folder name.
    """
    path = os.path.join(scratch, "project")
    shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(os.path.join(task.folder, "repo"), path)
    if shutil.which("git"):
        env = {**os.environ, **GIT}
        for argv in (["git", "init", "-q"], ["git", "add", "-A"],
                     ["git", "commit", "-q", "-m", "the task's starting point"]):
            subprocess.run(argv, cwd=path, env=env, check=True, stdout=subprocess.DEVNULL)
    return path


def run_check(task, path, sandbox_mode, env):
    """(passed, the last 4,000 characters of the check's output)."""
    shutil.copytree(os.path.join(task.folder, "check"), path, dirs_exist_ok=True)
    argv = sandbox.wrap(["sh", "-c", task.check], path, path, sandbox_mode)
    try:
        done = subprocess.run(argv, cwd=path, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=task.check_timeout, start_new_session=True)
    except subprocess.TimeoutExpired as timeout:
        out = (timeout.output or b"").decode("utf-8", "replace")
        return False, (out + f"\n[check timed out after {task.check_timeout} s]")[-4000:]
    return done.returncode == 0, done.stdout.decode("utf-8", "replace")[-4000:]


def node_dir(cache):
    """A folder holding a Node that runs .ts files (≥ 22.18): the machine's, or one from npm."""
    found = shutil.which("node")
    if found and _node_at_least(found, (22, 18)):
        return os.path.dirname(found)
    machine = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(
        platform.machine().lower())
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    if not machine or not system:
        raise SystemExit("run.py: the TypeScript tasks need Node >= 22.18 on PATH")
    package = f"node-{system}-{machine}"
    where = os.path.join(cache, f"node-{NODE_VERSION}")
    bin_dir = os.path.join(where, "node_modules", package, "bin")
    if not os.path.exists(os.path.join(bin_dir, "node")):
        if not shutil.which("npm"):
            raise SystemExit("run.py: the TypeScript tasks need Node >= 22.18 (or npm to get it)")
        os.makedirs(where, exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", where,
                        f"{package}@{NODE_VERSION}"], check=True, stdout=subprocess.DEVNULL)
    return bin_dir


def _node_at_least(node, wanted):
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20)
        parts = tuple(int(p) for p in out.stdout.strip().lstrip("v").split(".")[:2])
        return parts >= wanted
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return False
