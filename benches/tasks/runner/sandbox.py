"""Where the agent's commands and the hidden checks run: in bubblewrap when it works here.

A sandboxed command sees the system read-only, but not the user's home folder (keys, ssh,
editor and agent configs) beyond the toolchains on PATH that live there, nor the task suite
itself (the hidden checks and scripted solutions), nor /run's sockets; it writes only the
task's workspace and a fresh /tmp (with the agent's own temporary folder bound into it: an
agent that sandboxes its own commands, as tandem does, hands its terminal a policy file it
wrote there); it has no network, its own process ids and session, and dies with the runner.
Its environment is the runner's clean one plus what the agent asked for, set inside the
sandbox (never on bwrap itself).

The agent process runs in a process-id namespace of its own (`agent_argv`), so nothing it
starts outlives its task, however it detaches. Its files are not confined: an agent that
edits in-process rather than through fs/* is trusted with the machine like any program the
user runs.

Where bwrap is missing (macOS, a container without user namespaces) everything runs
unconfined and the report says so.
"""

import os
import shutil
import subprocess

TASKS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_WORKS = None


def available():
    """Whether bwrap runs a command here (checked once)."""
    global _WORKS
    if _WORKS is None:
        bwrap = shutil.which("bwrap")
        _WORKS = False
        if bwrap:
            try:
                probe = subprocess.run(
                    [bwrap, *_flags("/tmp", "/tmp", ()), "--", "true"],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=20)
                _WORKS = probe.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                _WORKS = False
    return _WORKS


def _home_tools(home):
    """The folders directly under `home` that hold a toolchain on PATH (~/.cargo, ~/.pyenv)."""
    tools = set()
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        real = os.path.realpath(entry) if entry else ""
        if real.startswith(home + os.sep):
            tools.add(os.path.join(home, real[len(home) + 1:].split(os.sep)[0]))
    for key in ("RUSTUP_HOME", "CARGO_HOME"):
        if os.environ.get(key):
            tools.add(os.path.realpath(os.environ[key]))
    rustup = os.path.join(home, ".rustup")
    if os.path.isdir(rustup):
        tools.add(rustup)
    return sorted(t for t in tools if os.path.isdir(t))


def _flags(workspace, cwd, shared, visible=()):
    home = os.path.realpath(os.path.expanduser("~"))
    flags = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
             "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts",
             "--new-session", "--die-with-parent"]
    hidden = [home, TASKS_DIR, "/run", "/var/run", "/tmp"]
    for path in hidden:
        if os.path.isdir(path) and not os.path.islink(path):
            flags += ["--tmpfs", path]
    for path in [*_home_tools(home), *visible]:
        if os.path.exists(path):
            flags += ["--ro-bind", path, path]
    for path in shared:
        flags += ["--bind", path, path]
    if workspace != "/":
        flags += ["--bind", workspace, workspace]
    return flags + ["--chdir", cwd]


def wrap(argv, workspace, cwd, mode, shared=(), visible=(), env=None):
    """`argv` as it should be started: inside bwrap when `mode` is "bwrap", where the folders
    in `shared` can be written too and those in `visible` read, with `env` set inside."""
    if mode != "bwrap":
        return argv
    settings = []
    for name, value in (env or {}).items():
        settings += ["--setenv", name, value]
    return [shutil.which("bwrap"), *_flags(workspace, cwd, shared, visible), "--clearenv",
            *settings, "--", *argv]


def agent_argv(argv, mode):
    """The agent's command: in a process-id namespace of its own when bwrap works, so every
    process it starts ends with it."""
    if mode != "bwrap":
        return argv
    return [shutil.which("bwrap"), "--dev-bind", "/", "/", "--proc", "/proc", "--unshare-pid",
            "--die-with-parent", "--", *argv]


def choose(requested):
    """The sandbox mode for a run: "bwrap", or "none"; `requested` is auto, bwrap or none."""
    if requested == "none":
        return "none"
    if available():
        return "bwrap"
    if requested == "bwrap":
        raise SystemExit("run.py: --sandbox bwrap was asked for, but bwrap does not run here")
    return "none"


def inside(workspace, path):
    """Whether `path` (absolute) resolves inside `workspace`, through symlinks."""
    real_ws = os.path.realpath(workspace)
    real = os.path.realpath(path)
    return real == real_ws or real.startswith(real_ws + os.sep)
