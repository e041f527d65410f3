#!/usr/bin/env python3
"""Writes tandem's ACP registry entry (agent.json) for the version in Cargo.toml.

Each `distribution.binary` platform points at the archive `dist` built for it
(tandem-<target>.tar.gz or .zip) under --base-url, pinned by its sha256, with `cmd` the path
of the binary inside that archive, read from the archive itself. Without --require-all, platforms whose archive is
missing are left out (a local check has no macOS build); a release entry needs all six.

    editors/registry/agent_json.py --archives target/distrib \
        --base-url https://github.com/OWNER/tandem/releases/download/v0.1.0 --require-all
"""

import argparse
import hashlib
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "editors" / "release"))
import archives as dist  # noqa: E402


def sha256_of(archive: Path) -> str:
    """The archive's SHA-256, which the registry and its clients check after downloading; the
    `.sha256` file the release writes beside it must agree."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    written = archive.with_name(archive.name + ".sha256")
    if written.is_file() and written.read_text().split()[0].lower() != digest:
        raise SystemExit(f"{written} does not match {archive.name} ({digest})")
    return digest


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archives", type=Path, default=ROOT / "target" / "distrib")
    parser.add_argument("--base-url", required=True, help="where the archives are downloaded from")
    parser.add_argument("--out", type=Path, default=None, help="file to write (default: stdout)")
    parser.add_argument("--require-all", action="store_true", help="fail unless all six platforms are built")
    parser.add_argument("--npm-package", default="tandem-acp", help="the npm wrapper's name; '' leaves npx out")
    args = parser.parse_args()

    cargo = dist.package_fields()
    version = cargo["version"]
    binary = {}
    missing = []
    for (platform, _), targets in dist.PLATFORMS.items():
        archive = dist.find(args.archives, targets)
        if archive is None:
            missing.append(platform)
            continue
        binary[platform] = {
            "archive": f"{args.base_url.rstrip('/')}/{archive.name}",
            "sha256": sha256_of(archive),
            "cmd": "./" + dist.binary_member(archive).removeprefix("./"),
        }
    if missing and args.require_all:
        print(f"no archive for {', '.join(missing)} in {args.archives}", file=sys.stderr)
        return 1
    if not binary:
        print(f"no archives in {args.archives}; build them with editors/release/build.sh", file=sys.stderr)
        return 1
    distribution = {"binary": binary}
    if args.npm_package:
        distribution["npx"] = {"package": f"{args.npm_package}@{version}"}
    entry = {
        "id": "tandem",
        "name": "tandem",
        "version": version,
        "description": "Fast, small coding agent for any OpenAI-compatible model: OpenAI, "
        "OpenRouter, Ollama, llama.cpp, vLLM, LM Studio and more. Edits and commands go "
        "through your editor for review.",
        "repository": cargo["repository"],
        "authors": ["tandem contributors"],
        "license": cargo["license"],
        "distribution": distribution,
    }
    text = json.dumps(entry, indent=2) + "\n"
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    else:
        sys.stdout.write(text)
    if missing:
        print(f"left out (no archive): {', '.join(missing)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
