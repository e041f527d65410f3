"""Files in the task's workspace, opened so that nothing outside it can be reached.

A path is taken apart and walked from the workspace one folder at a time, each opened by the
descriptor of the one before without following a symbolic link, so a folder a command swaps
for a link between a check and the open cannot redirect the runner; links are refused (the
runner follows none). Only regular files are read or written, never a device or a pipe, and a
read stops at `MAX_READ` bytes.
"""

import os
import stat

MAX_READ = 64 << 20
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


class Refused(Exception):
    """The path cannot be used; the message says why."""


def parts(workspace, path):
    """`path`'s components below `workspace`, or Refused when it is not inside."""
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        raise Refused("path must be an absolute path")
    relative = os.path.relpath(os.path.normpath(path), os.path.normpath(workspace))
    if relative == "." or relative.startswith(".." + os.sep) or relative == "..":
        raise Refused(f"{path} is outside the task's workspace")
    return relative.split(os.sep)


def _folder(workspace, names, create):
    """A descriptor of the folder `names` leads to from the workspace."""
    fd = os.open(workspace, _DIR)
    try:
        for name in names:
            try:
                child = os.open(name, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(name, 0o755, dir_fd=fd)
                child = os.open(name, _DIR, dir_fd=fd)
            os.close(fd)
            fd = child
        return fd
    except OSError:
        os.close(fd)
        raise


def _open(workspace, path, flags, create_folders):
    names = parts(workspace, path)
    try:
        folder = _folder(workspace, names[:-1], create_folders)
    except NotADirectoryError:
        raise Refused(f"{path}: a folder on the way is a link or a file")
    except FileNotFoundError:
        raise FileNotFoundError(path)
    except OSError as error:
        raise Refused(f"{path}: {error.strerror}")
    try:
        fd = os.open(names[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0),
                     0o644, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as error:
        raise Refused(f"{path}: {error.strerror}")
    finally:
        os.close(folder)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise Refused(f"{path} is a {'folder' if stat.S_ISDIR(mode) else 'special file'}")
    return fd


def read(workspace, path):
    """The file's text (UTF-8, bad bytes replaced); FileNotFoundError or Refused."""
    fd = _open(workspace, path, os.O_RDONLY, create_folders=False)
    with open(fd, "rb") as f:
        data = f.read(MAX_READ + 1)
    if len(data) > MAX_READ:
        raise Refused(f"{path} is larger than {MAX_READ >> 20} MiB")
    return data.decode("utf-8", errors="replace")


def write(workspace, path, content):
    """Replaces (or creates) the file with `content`, making its folders; Refused if not."""
    fd = _open(workspace, path, os.O_WRONLY | os.O_CREAT, create_folders=True)
    with open(fd, "w", encoding="utf-8", newline="") as f:
        f.truncate(0)
        f.write(content)
