"""Where the agent's commands and the hidden checks run: in bubblewrap when it works here.

The sandbox sees the whole file system read-only, the task's workspace read-write, a fresh
/tmp (with the agent's own temporary folder bound into it, read-write: an agent that
sandboxes its own commands, as tandem does, hands its terminal a policy file it wrote there
and keeps the commands' private temp folders there), no network and its own process ids,
and dies with the runner. Where bwrap is missing
(macOS, Windows, a container without user namespaces) commands run unconfined and the report
says so: the workspace is a throwaway copy, but the agent's commands are not held to it.
"""

import os
import shutil
import subprocess

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
                    [bwrap, *_flags("/", "/"), "true"], stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, timeout=20,
                )
                _WORKS = probe.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                _WORKS = False
    return _WORKS


def _flags(workspace, cwd, shared=()):
    flags = [
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
    ]
    for path in shared:
        flags += ["--bind", path, path]
    if workspace != "/":
        flags += ["--bind", workspace, workspace]
    return flags + ["--chdir", cwd]


def wrap(argv, workspace, cwd, mode, shared=()):
    """`argv` as it should be started: inside bwrap when `mode` is "bwrap", where the
    folders in `shared` can be written too."""
    if mode != "bwrap":
        return argv
    return [shutil.which("bwrap"), *_flags(workspace, cwd, shared), "--", *argv]


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
