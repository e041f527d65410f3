"""The release archives dist builds (tandem-<target>.tar.gz, or .zip for Windows): which target
serves each platform, where the tandem binary sits inside, and the package fields (version,
description, ...) they are published with. Shared by editors/registry/agent_json.py,
editors/registry/check.py and editors/npm/pack.py."""

import tarfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (ACP registry platform, npm platform) -> the dist targets that serve it, preferred first.
PLATFORMS = {
    ("darwin-aarch64", "darwin-arm64"): ["aarch64-apple-darwin"],
    ("darwin-x86_64", "darwin-x64"): ["x86_64-apple-darwin"],
    ("linux-aarch64", "linux-arm64"): ["aarch64-unknown-linux-musl"],
    ("linux-x86_64", "linux-x64"): ["x86_64-unknown-linux-musl"],
    ("windows-aarch64", "win32-arm64"): ["aarch64-pc-windows-msvc"],
    ("windows-x86_64", "win32-x64"): ["x86_64-pc-windows-msvc", "x86_64-pc-windows-gnu"],
}


def package_fields() -> dict:
    """The `tandem` package's fields in the root Cargo.toml, those it takes from the workspace
    (`version.workspace = true`) read from `[workspace.package]`."""
    manifest = tomllib.loads((ROOT / "Cargo.toml").read_text())
    shared = manifest.get("workspace", {}).get("package", {})
    return {
        key: shared[key] if isinstance(value, dict) and value.get("workspace") else value
        for key, value in manifest["package"].items()
    }


def find(archives: Path, targets: list[str]) -> Path | None:
    """The archive in `archives` for the first of `targets` that was built."""
    for target in targets:
        for suffix in (".tar.gz", ".zip"):
            path = archives / f"tandem-{target}{suffix}"
            if path.is_file():
                return path
    return None


def binary_member(archive: Path) -> str:
    """The archive's path of the tandem binary."""
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            names = z.namelist()
    else:
        with tarfile.open(archive, "r:gz") as t:
            names = [m.name for m in t.getmembers() if m.isfile()]
    for name in names:
        if name.rsplit("/", 1)[-1] in ("tandem", "tandem.exe"):
            return name
    raise SystemExit(f"{archive} holds no tandem binary: {names}")


def read_binary(archive: Path) -> bytes:
    """The tandem binary's bytes."""
    name = binary_member(archive)
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as z:
            return z.read(name)
    with tarfile.open(archive, "r:gz") as t:
        source = t.extractfile(name)
        assert source is not None
        return source.read()
