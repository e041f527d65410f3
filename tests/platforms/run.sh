#!/usr/bin/env bash
# The other systems' builds, proven on one Linux x86_64 machine (docs/platforms.md):
#   static-linux  static Linux, x86_64-unknown-linux-musl: the whole integration suite
#                 (tests/all) driving the static binary over real stdio
#   macos         macOS (aarch64 and x86_64): type-checked with zero warnings, both targets in
#                 one cargo invocation (no SDK here to link with)
#   aarch64       static Linux, aarch64-unknown-linux-musl: built, and a handshake under qemu
#   windows       Windows, x86_64-pc-windows-gnu: the wine suite (tests/windows/run.sh)
#
#   tests/platforms/run.sh [PART...]     # default: all four, in that order
#
# The static Linux suite is the host's own test build (tests/all) driving a musl binary built
# with the same features (TANDEM_TEST_BIN; see tests/common/mod.rs), so the suite itself is not
# compiled a second time. Installs the Rust targets, zig and cargo-zigbuild (PyPI, through
# .ci/cross-tools), mingw-w64, wine and qemu (apt) when they are
# missing. Run from anywhere.
set -euo pipefail
cd "$(dirname "$0")/../.."

parts=("$@")
if [ ${#parts[@]} -eq 0 ]; then
  parts=(static-linux macos aarch64 windows)
fi
for part in "${parts[@]}"; do
  case $part in
    static-linux | macos | aarch64 | windows) ;;
    *) echo "run.sh: unknown part '$part' (static-linux, macos, aarch64, windows)" >&2; exit 2 ;;
  esac
done

apt_install() { .ci/apt-install "$@"; }
PATH="$(.ci/cross-tools):$PATH"
export PATH

static_linux() {
  rustup target add x86_64-unknown-linux-musl >/dev/null
  # With every feature, as the host's test build has them: the suite tests what they add.
  cargo-zigbuild build --locked --all-features --target x86_64-unknown-linux-musl --bin tandem
  # The real path, as tandem finds itself (target/ may be a link to a cache).
  local bin
  bin=$(realpath target/x86_64-unknown-linux-musl/debug/tandem)
  if readelf -l "$bin" | grep -q INTERP; then echo "$bin is not statically linked" >&2; exit 1; fi
  TANDEM_TEST_BIN="$bin" cargo test --locked --all-features --test all
}

macos() {
  rustup target add aarch64-apple-darwin x86_64-apple-darwin >/dev/null
  RUSTFLAGS="-D warnings" cargo-zigbuild check --locked --all-features \
    --target aarch64-apple-darwin --target x86_64-apple-darwin
}

aarch64() {
  rustup target add aarch64-unknown-linux-musl >/dev/null
  command -v qemu-aarch64-static >/dev/null 2>&1 || apt_install qemu-user-static
  # The dev profile keeps CI short; the code is the same as the release build's.
  cargo-zigbuild build --locked --target aarch64-unknown-linux-musl --bin tandem
  local arm="target/aarch64-unknown-linux-musl/debug/tandem" answer
  if readelf -l "$arm" | grep -q INTERP; then echo "$arm is not statically linked" >&2; exit 1; fi
  answer=$(printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}' \
    | env -i PATH="$PATH" HOME="$(mktemp -d)" OPENAI_API_KEY=x qemu-aarch64-static "$arm")
  echo "$answer"
  echo "$answer" | grep -q '"protocolVersion":1' || { echo "no initialize answer from the aarch64 build" >&2; exit 1; }
}

windows() {
  rustup target add x86_64-pc-windows-gnu >/dev/null
  command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || apt_install mingw-w64
  command -v wine >/dev/null 2>&1 || apt_install wine
  tests/windows/run.sh
}

for part in "${parts[@]}"; do
  echo "== $part"
  case $part in
    static-linux) static_linux ;;
    macos) macos ;;
    aarch64) aarch64 ;;
    windows) windows ;;
  esac
done
