"""The tasks: loading `task.toml`, a fresh workspace per run, and the hidden check.

A workspace is a copy of the task's `repo/` at the run's `project` folder, made a git
repository with one commit (most projects are, and agents read `git status`). What the agent
changed is told by comparing lstat manifests taken before and after (git is never run on a
repository the agent has had its hands on). The check puts `check/` in place over it without
following anything the agent left there, and runs `check` with `sh -c` in the sandbox, with a
time limit.
"""

import fnmatch
import glob
import os
import platform
import shutil
import stat
import subprocess
import tempfile
import tomllib

from . import files, sandbox

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


def run_check(task, path, sandbox_mode, env, visible=()):
    """(passed, the last 4,000 characters of the check's output). Anything that goes wrong
    (a workspace the agent left in a shape the check's files cannot be put into) is a fail."""
    try:
        _disarm(task, path)
        place_check(task, path)
    except (OSError, files.Refused) as error:
        return False, f"[the check's files could not be put in place: {error}]"
    argv = sandbox.wrap(["sh", "-c", task.check], path, path, sandbox_mode, visible=visible,
                        env=env)
    with tempfile.TemporaryFile() as out:
        try:
            done = subprocess.run(argv, cwd=path, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT, timeout=task.check_timeout,
                                  start_new_session=True)
            passed, note = done.returncode == 0, ""
        except subprocess.TimeoutExpired:
            passed, note = False, f"\n[check timed out after {task.check_timeout} s]"
        out.seek(max(out.seek(0, os.SEEK_END) - 4000, 0))
        return passed, (out.read().decode("utf-8", "replace") + note)[-4000:]


# Files that change how a check's own tools run rather than what they test: cargo settings (a
# `runner` that runs nothing), a pinned toolchain, a module that shadows Python's unittest or
# is imported at every start. Removed before the check unless the task's project has them.
TOOL_HIJACKS = (".cargo", "rust-toolchain", "rust-toolchain.toml", "unittest.py", "unittest",
                "sitecustomize.py", "usercustomize.py", "conftest.py")


def _disarm(task, path):
    for name in TOOL_HIJACKS:
        if os.path.lexists(os.path.join(task.folder, "repo", name)):
            continue
        target = os.path.join(path, name)
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        elif os.path.lexists(target):
            os.unlink(target)


def place_check(task, path):
    """Copies the task's check/ files into the workspace, replacing whatever the agent left at
    their places (a link, a folder, a file where a folder goes) rather than writing through it:
    each file is written by the same link-refusing walk as the agent's own writes, after any
    link or wrong kind of entry on its way has been removed."""
    source = os.path.join(task.folder, "check")
    for folder, _, names in os.walk(source):
        for name in names:
            relative = os.path.relpath(os.path.join(folder, name), source)
            _clear_way(path, relative.split(os.sep))
            with open(os.path.join(folder, name), encoding="utf-8", newline="") as f:
                files.write(path, os.path.join(path, relative), f.read())
            mode = os.stat(os.path.join(folder, name)).st_mode & 0o777
            os.chmod(os.path.join(path, relative), mode, follow_symlinks=False)


def _clear_way(workspace, parts):
    """Removes links, and entries of the wrong kind, along `parts` below `workspace`."""
    here = workspace
    for i, name in enumerate(parts):
        here = os.path.join(here, name)
        last = i == len(parts) - 1
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode) or (last and not stat.S_ISREG(mode)) or (
                not last and not stat.S_ISDIR(mode)):
            if stat.S_ISDIR(mode) and not stat.S_ISLNK(mode):
                shutil.rmtree(here)
            else:
                os.unlink(here)
            return


def manifest(path):
    """What the workspace holds: relative path -> (kind, size, modification time), build
    output and git's folder left out. Read with lstat only: no tool of the agent's runs."""
    skip = {".git", "target", "node_modules", "__pycache__"}
    found = {}
    for folder, folders, names in os.walk(path):
        folders[:] = [f for f in folders if f not in skip]
        for name in names + [f for f in folders if os.path.islink(os.path.join(folder, f))]:
            full = os.path.join(folder, name)
            info = os.lstat(full)
            found[os.path.relpath(full, path)] = (stat.S_IFMT(info.st_mode), info.st_size,
                                                  info.st_mtime_ns)
    return found


def changed(before, after):
    """The files added, changed or removed between two manifests (at most 50)."""
    paths = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    return paths[:50]


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
