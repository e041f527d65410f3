#!/usr/bin/env bash
# The other systems' builds, proven on one Linux x86_64 machine (README, "Supported systems"):
#   1. macOS (aarch64 and x86_64): type-checked with zero warnings (no SDK here to link with)
#   2. static Linux, x86_64-unknown-linux-musl: the whole integration suite
#   3. static Linux, aarch64-unknown-linux-musl: built, and a handshake under qemu-aarch64
#   4. Windows, x86_64-pc-windows-gnu: the wine suite (tests/windows/run.sh)
# Installs the Rust targets, zig and cargo-zigbuild (PyPI), mingw-w64, wine and qemu (apt)
# when they are missing. Run from anywhere: tests/platforms/run.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

apt_install() { .ci/apt-install "$@"; }
rustup target add aarch64-apple-darwin x86_64-apple-darwin x86_64-unknown-linux-musl \
  aarch64-unknown-linux-musl x86_64-pc-windows-gnu >/dev/null
# zig and cargo-zigbuild from PyPI, in a venv of their own (a system Python may refuse pip).
zig_venv="${XDG_CACHE_HOME:-$HOME/.cache}/tandem-zig"
if ! command -v cargo-zigbuild >/dev/null 2>&1; then
  if [ ! -x "$zig_venv/bin/cargo-zigbuild" ]; then
    python3 -m venv "$zig_venv"
    "$zig_venv/bin/python" -m pip install --quiet "ziglang==0.17.1" "cargo-zigbuild==0.24.0"
  fi
  export PATH="$zig_venv/bin:$PATH"
fi
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || apt_install mingw-w64
command -v wine >/dev/null 2>&1 || apt_install wine
command -v qemu-aarch64-static >/dev/null 2>&1 || apt_install qemu-user-static
# CI sets TANDEM_PRUNE_TARGETS=1 to free each target's build directory once it is done.
prune() {
  if [ "${TANDEM_PRUNE_TARGETS:-0}" = 1 ]; then rm -rf "target/$1"; fi
}

echo "== macOS: cargo check, warnings are errors"
for target in aarch64-apple-darwin x86_64-apple-darwin; do
  RUSTFLAGS="-D warnings" cargo-zigbuild check --locked --all-features --target "$target"
done
prune aarch64-apple-darwin
prune x86_64-apple-darwin

echo "== static Linux x86_64 (musl): the whole integration suite"
cargo-zigbuild test --locked --all-features --target x86_64-unknown-linux-musl
prune x86_64-unknown-linux-musl

echo "== static Linux aarch64 (musl): a build and a handshake under qemu"
# The dev profile keeps CI short; the code is the same as the release build's.
cargo-zigbuild build --locked --target aarch64-unknown-linux-musl --bin tandem
arm="target/aarch64-unknown-linux-musl/debug/tandem"
if readelf -l "$arm" | grep -q INTERP; then echo "$arm is not statically linked" >&2; exit 1; fi
answer=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' \
  | env -i PATH="$PATH" HOME="$(mktemp -d)" OPENAI_API_KEY=x qemu-aarch64-static "$arm")
echo "$answer"
echo "$answer" | grep -q '"protocolVersion":1' || { echo "no initialize answer from the aarch64 build" >&2; exit 1; }
prune aarch64-unknown-linux-musl

echo "== Windows (x86_64-pc-windows-gnu) under wine"
tests/windows/run.sh
prune x86_64-pc-windows-gnu
