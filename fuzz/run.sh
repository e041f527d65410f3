#!/usr/bin/env bash
# Fuzzes tandem's whole message path (tandem::harness) with libFuzzer through cargo-fuzz;
# with FUZZ_TARGET=command_line, the permission layer's shell parser instead.
#
#   fuzz/run.sh [SECONDS]       # default 600; extra libFuzzer flags in FUZZ_FLAGS
#   FUZZ_TARGET=command_line fuzz/run.sh 600
#
# Needs a nightly toolchain (rustup toolchain install nightly); installs cargo-fuzz if it is
# missing. The corpus grows in fuzz/corpus/ (not committed), starting from fuzz/seeds/;
# a crash or hang lands in fuzz/artifacts/message_path/ and is replayed with
#   cargo +nightly fuzz run message_path fuzz/artifacts/message_path/<file>
# Worth keeping inputs go to fuzz/seeds/, which CI replays on stable
# (tests/suite/fuzz_corpus.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-600}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
target="${FUZZ_TARGET:-message_path}"
case "$target" in
  message_path) seeds=fuzz/seeds ;;
  command_line) seeds=fuzz/seeds-command ;;
  *) echo "unknown FUZZ_TARGET $target (message_path or command_line)" >&2; exit 2 ;;
esac
mkdir -p "fuzz/corpus/$target"
# -timeout: one run longer than this is a hang (tandem's own limit inside is 30 s).
# -rss_limit_mb: the runtime and libFuzzer's own bookkeeping fit well within this.
cargo +nightly fuzz run "$target" "fuzz/corpus/$target" "$seeds" -- \
  -max_total_time="$seconds" -timeout=40 -rss_limit_mb=4096 -max_len=65536 \
  -print_final_stats=1 ${FUZZ_FLAGS:-} 2>&1 | tee fuzz/last-run.log
