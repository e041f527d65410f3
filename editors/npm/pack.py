#!/usr/bin/env python3
"""Builds tandem's npm packages from the release archives and packs them.

`tandem-acp` is the package users run (`npx tandem-acp`); its `bin` is tandem-acp.js, which
starts the binary from `tandem-acp-<os>-<cpu>`, one package per platform with `os`/`cpu`
set, listed as optional dependencies so npm installs only the one that fits (the layout
codex-acp and esbuild use). Platforms without an archive are listed but not packed.

    editors/npm/pack.py --archives target/distrib --out target/npm
"""

import argparse
import json
import shutil
import stat
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
NAME = "tandem-acp"

sys.path.insert(0, str(ROOT / "editors" / "release"))
import archives as dist  # noqa: E402


def extract_binary(archive: Path, dest: Path) -> None:
    """Copies the tandem binary out of a dist archive into dest (executable)."""
    dest.write_bytes(dist.read_binary(archive))
    dest.chmod(dest.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def common(cargo: dict) -> dict:
    return {
        "version": cargo["version"],
        "license": cargo["license"],
        "repository": {"type": "git", "url": f"git+{cargo['repository']}.git"},
        "homepage": cargo["repository"],
    }



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archives", type=Path, default=ROOT / "target" / "distrib")
    parser.add_argument("--out", type=Path, default=ROOT / "target" / "npm")
    args = parser.parse_args()
    # npm pack runs inside each package: the paths must not depend on the working directory.
    args.archives = args.archives.resolve()
    args.out = args.out.resolve()
    cargo = dist.package_fields()
    version = cargo["version"]
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)

    packed = []
    platforms = [npm for (_, npm) in dist.PLATFORMS]
    for (_, platform), targets in dist.PLATFORMS.items():
        archive = dist.find(args.archives, targets)
        if archive is None:
            print(f"no archive for {platform}: its package is listed but not packed", file=sys.stderr)
            continue
        os_name, cpu = platform.split("-")
        pkg_dir = args.out / f"{NAME}-{platform}"
        (pkg_dir / "bin").mkdir(parents=True)
        extract_binary(archive, pkg_dir / "bin" / ("tandem.exe" if os_name == "win32" else "tandem"))
        shutil.copy(ROOT / "LICENSE", pkg_dir / "LICENSE")
        manifest = {
            "name": f"{NAME}-{platform}",
            "description": f"The tandem binary for {platform}; installed by {NAME}.",
            **common(cargo),
            "os": [os_name],
            "cpu": [cpu],
            "files": ["bin", "LICENSE"],
            "preferUnplugged": True,
        }
        (pkg_dir / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
        packed.append(pkg_dir)

    main_dir = args.out / NAME
    (main_dir / "bin").mkdir(parents=True)
    shutil.copy(HERE / "tandem-acp.js", main_dir / "bin" / "tandem-acp.js")
    shutil.copy(ROOT / "LICENSE", main_dir / "LICENSE")
    shutil.copy(HERE / "README.md", main_dir / "README.md")
    manifest = {
        "name": NAME,
        "description": cargo["description"],
        **common(cargo),
        "keywords": ["acp", "agent-client-protocol", "coding-agent", "zed", "openai", "ollama"],
        "bin": {NAME: "bin/tandem-acp.js", "tandem": "bin/tandem-acp.js"},
        "files": ["bin", "LICENSE", "README.md"],
        "engines": {"node": ">=18"},
        "optionalDependencies": {f"{NAME}-{platform}": version for platform in platforms},
    }
    (main_dir / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    packed.append(main_dir)

    for pkg_dir in packed:
        subprocess.run(["npm", "pack", "--silent", "--pack-destination", str(args.out)], cwd=pkg_dir, check=True, stdout=subprocess.DEVNULL)
    for tgz in sorted(args.out.glob("*.tgz")):
        print(tgz)
    return 0


if __name__ == "__main__":
    sys.exit(main())
