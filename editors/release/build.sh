#!/usr/bin/env bash
# One command for everything a release publishes that this machine can build:
#   editors/release/build.sh [TARGET...]
# - the archives, by dist (cargo-dist, configured in Cargo.toml), each with its .sha256,
#   in target/distrib/ (tandem-<target>.tar.gz, or .zip for Windows);
# - the ACP registry entry for them: target/distrib/registry/tandem/{agent.json,icon.svg};
# - the npm packages: target/distrib/npm/*.tgz.
# Default targets: static Linux x86_64 and aarch64 (musl) and Windows x86_64 (GNU toolchain).
# macOS needs Apple's SDK to link and Windows MSVC/ARM64 needs Microsoft's: those archives
# come from the workflow dist generated (.github/workflows/release.yml) on hosted runners.
# TANDEM_RELEASE_URL sets where agent.json says the archives are (default: the GitHub
# release of this version). Installs what it needs: dist, cargo-zigbuild and cargo-xwin
# (PyPI, through .ci/cross-tools), Rust targets, musl-tools and mingw-w64 (apt).
set -euo pipefail
cd "$(dirname "$0")/../.."

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-pc-windows-gnu)
fi

apt_install() { .ci/apt-install "$@"; }

# dist from PyPI with the helpers it calls (cargo-zigbuild for aarch64 Linux, cargo-xwin for
# Windows), pinned, in the virtualenv .ci/cross-tools keeps.
PATH="$(.ci/cross-tools):$PATH"
export PATH
rustup target add "${targets[@]}" >/dev/null
for target in "${targets[@]}"; do
  case "$target" in
    x86_64-unknown-linux-musl)
      command -v musl-gcc >/dev/null 2>&1 || apt_install musl-tools
      # ring's C parts, compiled for musl.
      export CC_x86_64_unknown_linux_musl=musl-gcc ;;
    *-windows-gnu)
      command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || apt_install mingw-w64 ;;
  esac
done

version=$(cargo metadata --format-version 1 --no-deps --locked \
  | python3 -c 'import json,sys; print(next(p for p in json.load(sys.stdin)["packages"] if p["name"] == "tandem")["version"])')
repository=$(cargo metadata --format-version 1 --no-deps --locked \
  | python3 -c 'import json,sys; print(next(p for p in json.load(sys.stdin)["packages"] if p["name"] == "tandem")["repository"])')

rm -rf target/distrib
target_args=()
for target in "${targets[@]}"; do target_args+=(--target "$target"); done
dist build --artifacts=local "${target_args[@]}"

base_url="${TANDEM_RELEASE_URL:-$repository/releases/download/v$version}"
mkdir -p target/distrib/registry/tandem
python3 editors/registry/agent_json.py --archives target/distrib --base-url "$base_url" \
  --out target/distrib/registry/tandem/agent.json
cp editors/registry/icon.svg target/distrib/registry/tandem/icon.svg
python3 editors/npm/pack.py --archives target/distrib --out target/distrib/npm >/dev/null

echo "== built (version $version)"
for file in target/distrib/*.tar.gz target/distrib/*.zip target/distrib/npm/*.tgz; do
  [ -e "$file" ] && printf '%10s  %s\n' "$(stat -c %s "$file")" "$file"
done
cat target/distrib/*.sha256
