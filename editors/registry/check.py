#!/usr/bin/env python3
"""Checks tandem's ACP registry entry against what the registry requires before it lists an agent.

    editors/registry/check.py ENTRY_DIR [--waive-os darwin]
    editors/registry/check.py --self-test

ENTRY_DIR holds the entry as the registry keeps it: agent.json and icon.svg, in a folder named
after the entry's id. The rules are the registry's published ones (its README, FORMAT.md and
AUTHENTICATION.md, and the schema in protocol/registry/agent.schema.json); the code is
tandem's own:

1. the entry: valid against the schema; the id is the folder's name; the version is
   Cargo.toml's; binary builds for every operating system (darwin, linux, windows; --waive-os
   names one this machine cannot build); every archive URL pinned to the version (no
   /latest/), and every archive pinned by its sha256; an npx package pinned to the version;
2. every archive: downloads, and its SHA-256 is the one the entry pins;
3. the icon: an SVG of 16x16, square, drawn in currentColor (no fill or stroke of its own);
4. the launch: this machine's archive unpacks, `cmd` is in it, and started from an empty
   environment (no key, an empty home) it answers the registry validator's `initialize`
   with protocol version 1 and at least one auth method of type `agent` or `terminal` (a
   `type`, or `_meta` "terminal-auth" / "agent-auth"), then exits 0 when its input closes.

--self-test runs each rule on entries made wrong on purpose and fails unless each is caught.
Needs the jsonschema package (verify.sh installs it in a venv of its own).
"""

import argparse
import hashlib
import json
import os
import platform
import re
import select
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import xml.etree.ElementTree as ElementTree
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "editors" / "release"))
import archives as dist  # noqa: E402
SCHEMA = ROOT / "protocol" / "registry" / "agent.schema.json"
OS_FAMILIES = ("darwin", "linux", "windows")
PLAIN_PAINT = {"currentcolor", "none", "inherit"}
# What the registry's validator sends: a client that runs terminals and edits files, and
# that can run a terminal login.
VALIDATOR_INITIALIZE = {
    "protocolVersion": 1,
    "clientInfo": {"name": "registry-check", "version": "1"},
    "clientCapabilities": {
        "fs": {"readTextFile": True, "writeTextFile": True},
        "terminal": True,
        "_meta": {"terminal_output": True, "terminal-auth": True},
    },
}


def entry_problems(agent: dict, folder: str, version: str, waived: set[str]) -> list[str]:
    """What is wrong with the entry itself (rule 1)."""
    import jsonschema

    schema = json.loads(SCHEMA.read_text())
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    problems = [f"schema: {e.message} at /{'/'.join(map(str, e.path))}" for e in validator.iter_errors(agent)]
    if problems:
        return problems
    if agent["id"] != folder:
        problems.append(f"the id {agent['id']!r} is not the folder's name {folder!r}")
    if agent["version"] != version:
        problems.append(f"the version {agent['version']} is not Cargo.toml's {version}")
    binary = agent["distribution"].get("binary", {})
    if binary:
        present = {name.split("-")[0] for name in binary}
        for family in OS_FAMILIES:
            if family not in present and family not in waived:
                problems.append(f"no binary build for {family}")
    for name, target in binary.items():
        url = target["archive"]
        if "/latest/" in url:
            problems.append(f"{name}: the archive URL follows /latest/ instead of the version")
        pinned = re.search(r"/download/v?(\d+\.\d+\.\d+)/", url)
        if pinned and pinned.group(1) != agent["version"]:
            problems.append(f"{name}: the archive URL is for {pinned.group(1)}, not {agent['version']}")
        if "sha256" not in target:
            problems.append(f"{name}: the archive is not pinned by a sha256")
    npx = agent["distribution"].get("npx")
    if npx and not npx["package"].endswith(f"@{agent['version']}"):
        problems.append(f"npx: the package {npx['package']!r} is not pinned to {agent['version']}")
    return problems


def download(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as answer:
        return answer.read()


def archive_problems(binary: dict, fetch=download) -> tuple[list[str], dict[str, bytes]]:
    """Rule 2: every archive downloads and has the pinned SHA-256; returns the bytes too."""
    problems, fetched = [], {}
    for name, target in binary.items():
        try:
            data = fetch(target["archive"])
        except Exception as error:  # noqa: BLE001 (any failure to download is the finding)
            problems.append(f"{name}: {target['archive']} does not download: {error}")
            continue
        digest = hashlib.sha256(data).hexdigest()
        if digest != target.get("sha256", "").lower():
            problems.append(f"{name}: the archive's sha256 is {digest}, the entry pins {target.get('sha256')}")
        fetched[name] = data
    return problems, fetched


def paint_values(svg: str) -> list[str]:
    """Every fill and stroke the SVG sets, as attributes or in style."""
    values = re.findall(r"\b(?:fill|stroke)\s*=\s*[\"']([^\"']*)[\"']", svg, re.IGNORECASE)
    for style in re.findall(r"\bstyle\s*=\s*[\"']([^\"']*)[\"']", svg, re.IGNORECASE):
        values += re.findall(r"\b(?:fill|stroke)\s*:\s*([^;]+)", style, re.IGNORECASE)
    return [v.strip() for v in values]


def icon_problems(svg: str) -> list[str]:
    """Rule 3: a 16x16 square SVG in currentColor."""
    try:
        root = ElementTree.fromstring(svg)
    except ElementTree.ParseError as error:
        return [f"icon: not well-formed XML: {error}"]
    if not root.tag.endswith("svg"):
        return ["icon: the root element is not <svg>"]
    problems = []
    size = None
    width, height = root.get("width"), root.get("height")
    if width and height:
        size = (width.removesuffix("px"), height.removesuffix("px"))
    elif root.get("viewBox"):
        parts = root.get("viewBox", "").replace(",", " ").split()
        size = tuple(parts[2:4]) if len(parts) == 4 else None
    if size is None:
        problems.append("icon: no width and height, and no viewBox")
    else:
        try:
            w, h = float(size[0]), float(size[1])
            if (w, h) != (16, 16):
                problems.append(f"icon: {size[0]}x{size[1]}, not 16x16")
        except ValueError:
            problems.append(f"icon: a size that is not a number: {size}")
    for value in paint_values(svg):
        if value.lower() not in PLAIN_PAINT:
            problems.append(f"icon: a colour of its own ({value}); draw in currentColor")
    if "currentcolor" not in svg.lower():
        problems.append("icon: currentColor is not used, so it would not follow the editor's theme")
    return problems


def this_platform() -> str:
    system = {"Linux": "linux", "Darwin": "darwin", "Windows": "windows"}[platform.system()]
    machine = platform.machine().lower()
    return f"{system}-{'aarch64' if machine in ('arm64', 'aarch64') else 'x86_64'}"


def unpack(name: str, data: bytes, into: Path) -> None:
    archive = into / name
    archive.write_bytes(data)
    if name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(into)
    else:
        with tarfile.open(archive) as t:
            t.extractall(into, filter="data")


def auth_type(method: dict) -> str:
    """A method's type as a registry client reads it: `type`, else the `_meta` key, else agent."""
    if method.get("type"):
        return method["type"]
    meta = method.get("_meta") or {}
    if "terminal-auth" in meta:
        return "terminal"
    return "agent"


def handshake_problems(answer: dict | None) -> list[str]:
    """Rule 4's answer: protocol version 1 and an `agent` or `terminal` auth method."""
    if not answer or "result" not in answer:
        return [f"launch: no initialize answer ({answer})"]
    result = answer["result"]
    problems = []
    if result.get("protocolVersion") != 1:
        problems.append(f"launch: protocol version {result.get('protocolVersion')}, not 1")
    types = [auth_type(m) for m in result.get("authMethods", [])]
    if not any(t in ("agent", "terminal") for t in types):
        problems.append(f"launch: no auth method of type agent or terminal (found {types})")
    return problems


def read_line(process: subprocess.Popen, timeout: float) -> str | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([process.stdout], [], [], 0.1)
        if ready:
            return process.stdout.readline()
        if process.poll() is not None:
            return None
    return None


def launch_problems(target: dict, archive_name: str, data: bytes) -> list[str]:
    """Rule 4: unpack, find `cmd`, start it from an empty environment, shake hands."""
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch) / "unpacked"
        home = Path(scratch) / "home"
        folder.mkdir()
        home.mkdir()
        unpack(archive_name, data, folder)
        program = folder / target["cmd"].removeprefix("./")
        if not program.is_file():
            return [f"launch: {target['cmd']} is not in the archive"]
        program.chmod(program.stat().st_mode | 0o755)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home)}
        process = subprocess.Popen(
            [str(program), *target.get("args", [])], cwd=folder, env=env, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        try:
            request = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": VALIDATOR_INITIALIZE}
            process.stdin.write(json.dumps(request) + "\n")
            process.stdin.flush()
            line = read_line(process, 60)
            try:
                answer = json.loads(line) if line else None
            except json.JSONDecodeError:
                return [f"launch: stdout is not JSON-RPC: {line[:200]!r}"]
            problems = handshake_problems(answer)
            process.stdin.close()
            code = process.wait(timeout=10)
            if code != 0:
                problems.append(f"launch: exit code {code} when its input closed: {process.stderr.read()[-500:]}")
            rest = process.stdout.read().strip()
            if rest:
                problems.append(f"launch: unasked output on stdout: {rest[:200]!r}")
            if not problems:
                methods = ", ".join(f"{m['id']}({auth_type(m)})" for m in answer["result"]["authMethods"])
                print(f"  ✓ {this_platform()}: started from an empty environment; auth methods {methods}")
            return problems
        finally:
            if process.poll() is None:
                process.kill()


def check(entry_dir: Path, waived: set[str]) -> list[str]:
    agent = json.loads((entry_dir / "agent.json").read_text())
    problems = entry_problems(agent, entry_dir.name, dist.package_fields()["version"], waived)
    for family in sorted(waived):
        print(f"  waived here: a {family} build (none was built on this machine)")
    binary = agent.get("distribution", {}).get("binary", {})
    more, fetched = archive_problems(binary)
    problems += more
    if not more:
        print(f"  ✓ {len(fetched)} archives download and match their sha256")
    problems += icon_problems((entry_dir / "icon.svg").read_text())
    here = this_platform()
    if here in fetched:
        name = binary[here]["archive"].rsplit("/", 1)[-1]
        problems += launch_problems(binary[here], name, fetched[here])
    else:
        problems.append(f"launch: no archive for this machine ({here}) to start")
    return problems


def self_test() -> int:
    """Each rule, fed something wrong on purpose, must say so."""
    good_svg = '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16"><path fill="currentColor" d="M0 0h16v16H0z"/></svg>'
    data = b"archive bytes"
    digest = hashlib.sha256(data).hexdigest()
    target = {"archive": "https://example.com/releases/download/v1.2.3/t.tar.gz", "cmd": "./t", "sha256": digest}
    agent = {"id": "t", "name": "t", "version": "1.2.3", "description": "d",
             "distribution": {"binary": {"linux-x86_64": target, "darwin-aarch64": target, "windows-x86_64": target}}}

    def altered(change) -> dict:
        copy = json.loads(json.dumps(agent))
        change(copy)
        return copy

    cases = [
        ("a good entry", entry_problems(agent, "t", "1.2.3", set()), False),
        ("another folder", entry_problems(agent, "u", "1.2.3", set()), True),
        ("another version", entry_problems(agent, "t", "1.2.4", set()), True),
        ("no windows", entry_problems(altered(lambda a: a["distribution"]["binary"].pop("windows-x86_64")), "t", "1.2.3", set()), True),
        ("no darwin, waived", entry_problems(altered(lambda a: a["distribution"]["binary"].pop("darwin-aarch64")), "t", "1.2.3", {"darwin"}), False),
        ("no sha256", entry_problems(altered(lambda a: a["distribution"]["binary"]["linux-x86_64"].pop("sha256")), "t", "1.2.3", set()), True),
        ("a bad sha256", entry_problems(altered(lambda a: a["distribution"]["binary"]["linux-x86_64"].update(sha256="xyz")), "t", "1.2.3", set()), True),
        ("/latest/", entry_problems(altered(lambda a: a["distribution"]["binary"]["linux-x86_64"].update(archive="https://e.com/releases/latest/download/t.tar.gz")), "t", "1.2.3", set()), True),
        ("an unknown field", entry_problems(altered(lambda a: a["distribution"]["binary"]["linux-x86_64"].update(extra="1")), "t", "1.2.3", set()), True),
        ("npx unpinned", entry_problems(altered(lambda a: a["distribution"].update(npx={"package": "t@latest"})), "t", "1.2.3", set()), True),
        ("the pinned archive", archive_problems({"linux-x86_64": target}, lambda _: data)[0], False),
        ("another archive", archive_problems({"linux-x86_64": target}, lambda _: b"other")[0], True),
        ("an archive that is gone", archive_problems({"linux-x86_64": target}, lambda _: (_ for _ in ()).throw(OSError("404")))[0], True),
        ("a good icon", icon_problems(good_svg), False),
        ("a 32x32 icon", icon_problems(good_svg.replace('"16"', '"32"')), True),
        ("a coloured icon", icon_problems(good_svg.replace("currentColor", "#ff0000")), True),
        ("a styled colour", icon_problems(good_svg.replace('fill="currentColor"', 'style="fill: red" stroke="currentColor"')), True),
        ("not an svg", icon_problems("<png/>"), True),
        ("a terminal method", handshake_problems({"result": {"protocolVersion": 1, "authMethods": [{"id": "k", "name": "k", "type": "terminal"}]}}), False),
        ("a _meta terminal method", handshake_problems({"result": {"protocolVersion": 1, "authMethods": [{"id": "k", "name": "k", "type": "env_var", "_meta": {"terminal-auth": {}}}]}}), True),
        ("only env_var", handshake_problems({"result": {"protocolVersion": 1, "authMethods": [{"id": "k", "name": "k", "type": "env_var"}]}}), True),
        ("no methods", handshake_problems({"result": {"protocolVersion": 1, "authMethods": []}}), True),
        ("protocol 2", handshake_problems({"result": {"protocolVersion": 2, "authMethods": [{"id": "k", "name": "k"}]}}), True),
    ]
    failed = 0
    for name, problems, expected in cases:
        if bool(problems) != expected:
            failed += 1
            print(f"  ✗ self-test: {name}: {'missed' if expected else 'wrongly found'} {problems}")
    print(f"  self-test: {len(cases) - failed} of {len(cases)} rules hold")
    return 1 if failed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("entry", type=Path, nargs="?", help="the folder holding agent.json and icon.svg")
    parser.add_argument("--waive-os", action="append", default=[], choices=OS_FAMILIES)
    parser.add_argument("--self-test", action="store_true")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    if args.entry is None:
        parser.error("give the entry's folder, or --self-test")
    problems = check(args.entry, set(args.waive_os))
    for problem in problems:
        print(f"  ✗ {problem}")
    if not problems:
        print("  ✓ the entry, its archives, its icon and its launch meet the registry's rules")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
