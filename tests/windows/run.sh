#!/usr/bin/env bash
# The Windows build, end to end under wine: cross-builds tandem.exe for x86_64-pc-windows-gnu
# (mingw-w64), puts the ProcessPrng stand-in wine 8 lacks beside it, and runs the wine suite
# (tests/suite/windows.rs) with the same driver, mock model and fake editor as the rest.
#
#   tests/windows/run.sh            needs: rustup target x86_64-pc-windows-gnu, mingw-w64, wine
#
# WINEPREFIX defaults to ~/.cache/tandem-wine (created on first use, ~20 s).
set -euo pipefail
cd "$(dirname "$0")/../.."

target=x86_64-pc-windows-gnu
cargo build --locked --target "$target" --bin tandem
out="target/$target/debug"
x86_64-w64-mingw32-gcc -shared -O2 -o "$out/bcryptprimitives.dll" \
  tests/windows/bcryptprimitives.c -ladvapi32

export WINEPREFIX="${WINEPREFIX:-$HOME/.cache/tandem-wine}"
export WINEDEBUG=-all
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  mkdir -p "$WINEPREFIX"
  wineboot --init >/dev/null 2>&1 || true
  wineserver --wait || true
fi
# The binary starts at all (a missing DLL shows here, not as a hung test).
wine "$out/tandem.exe" --version

TANDEM_TEST_WINE_EXE="$PWD/$out/tandem.exe" \
  cargo test --locked --all-features --test all -- --ignored --test-threads 2 suite::windows
