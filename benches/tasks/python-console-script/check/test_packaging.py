"""Hidden check: the pyproject declares a working `logtail` console script and Python >= 3.10."""

import contextlib
import importlib
import io
import re
import sys
import tempfile
import tomllib
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent


def load_pyproject():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def _version(text):
    return tuple(int(part) for part in text.split("."))


def _pad(parts, length):
    return parts + (0,) * (length - len(parts))


def allows(spec, version):
    """A small PEP 440 subset, enough for requires-python: does `spec` admit `version`?"""
    v = _version(version)
    for clause in filter(None, (c.strip() for c in spec.split(","))):
        match = re.fullmatch(r"(~=|===|==|!=|<=|>=|<|>)\s*([0-9]+(?:\.[0-9]+)*)(\.\*)?", clause)
        if not match:
            raise AssertionError(f"cannot read requires-python clause {clause!r}")
        op, target, wildcard = match.group(1), _version(match.group(2)), match.group(3)
        if wildcard:
            if op not in ("==", "!="):
                raise AssertionError(f"wildcard only with == or !=: {clause!r}")
            same = _pad(v, len(target))[: len(target)] == target
            ok = same if op == "==" else not same
        else:
            n = max(len(v), len(target))
            a, b = _pad(v, n), _pad(target, n)
            if op in ("==", "==="):
                ok = a == b
            elif op == "!=":
                ok = a != b
            elif op == "<=":
                ok = a <= b
            elif op == ">=":
                ok = a >= b
            elif op == "<":
                ok = a < b
            elif op == ">":
                ok = a > b
            else:  # ~=
                prefix = target[:-1]
                ok = a >= b and _pad(v, len(prefix))[: len(prefix)] == prefix
        if not ok:
            return False
    return True


def resolve(entry):
    target = entry.split("[", 1)[0].strip()
    module_name, _, attr = target.partition(":")
    obj = importlib.import_module(module_name.strip())
    for part in filter(None, attr.strip().split(".")):
        obj = getattr(obj, part)
    return obj


def run_script(func, argv):
    """Call a console-script target the way the generated wrapper does: sys.exit(func())."""
    out = io.StringIO()
    old_argv = sys.argv
    sys.argv = ["logtail", *argv]
    try:
        with contextlib.redirect_stdout(out):
            try:
                code = func()
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.argv = old_argv
    return code, out.getvalue()


class ProjectMetadataTest(unittest.TestCase):
    def setUp(self):
        self.project = load_pyproject()["project"]

    def test_existing_metadata_kept(self):
        data = load_pyproject()
        self.assertEqual(self.project["name"], "logtail")
        self.assertEqual(self.project["version"], "0.4.1")
        self.assertEqual(data["build-system"]["build-backend"], "setuptools.build_meta")
        self.assertEqual(data["tool"]["setuptools"]["packages"]["find"]["include"], ["logtail*"])

    def test_requires_python_310_or_newer(self):
        spec = self.project.get("requires-python")
        self.assertIsInstance(spec, str, "project.requires-python is missing")
        for old in ("3.7", "3.8", "3.9", "3.9.18"):
            self.assertFalse(allows(spec, old), f"{spec!r} still admits Python {old}")
        for new in ("3.10", "3.10.0", "3.11", "3.11.7", "3.12", "3.13"):
            self.assertTrue(allows(spec, new), f"{spec!r} rejects Python {new}")

    def test_logtail_console_script(self):
        scripts = self.project.get("scripts", {})
        self.assertIn("logtail", scripts, "no `logtail` entry in [project.scripts]")
        self.assertNotIn("logtail", self.project.get("gui-scripts", {}))
        func = resolve(scripts["logtail"])
        self.assertTrue(callable(func))

        code, out = run_script(func, ["--version"])
        self.assertIn(code, (0, None))
        self.assertIn("0.4.1", out)

        with tempfile.TemporaryDirectory() as tmp:
            log = Path(tmp) / "app.log"
            log.write_text('{"level": "error", "message": "disk full"}\n{"level": "info", "message": "ok"}\n')
            code, out = run_script(func, [str(log), "--level", "error"])
        self.assertIn(code, (0, None))
        self.assertEqual(out, "ERROR    disk full\n")


if __name__ == "__main__":
    unittest.main()
