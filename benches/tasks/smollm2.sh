#!/usr/bin/env bash
# The task suite against a real server: llama.cpp's llama-server with SmolLM2-135M, the model
# tests/real-model/setup.sh builds and caches. Proves the runner's real path (a real server's
# usage, streaming, tool calls, the limits) end to end; a 135M model solves little, and the
# figures say so. Arguments go to run.py (e.g. --agent codex-acp to compare, --tasks 'rust-*').
#
#   tests/real-model/setup.sh && benches/tasks/smollm2.sh [--out DIR] [run.py flags...]
#
# Limits keep it to minutes on 2 cores: 4 model requests and 180 s per task, at most 256
# generated tokens per answer, greedy sampling so a rerun takes the same path. The answer cap
# is the bench proxy's (--max-answer-tokens), the same for every agent: llama-server's -n
# caps only a request that names no limit of its own, and agents name one (tandem asks a
# local server for a quarter of its window, 2,048 tokens here). The
# context is the model's own 8,192 tokens; TANDEM_BENCH_CTX=16384 stretches it (past what the
# model was trained on, so it reads the far end poorly) for an agent whose first request is
# longer than that: codex-acp's is about 9,300 tokens.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${TANDEM_REAL_MODEL_CACHE:-$HOME/.cache/tandem-real-model}"
server="$cache/bin/llama-server"
model="$cache/SmolLM2-135M-Instruct.Q4_1.gguf"
[ -x "$server" ] && [ -f "$model" ] || { echo "smollm2.sh: run tests/real-model/setup.sh first" >&2; exit 2; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ctx=${TANDEM_BENCH_CTX:-8192}
# The server's log: TANDEM_BENCH_SERVER_LOG keeps it; otherwise it goes with the run.
log=${TANDEM_BENCH_SERVER_LOG:-$(mktemp)}
[ -n "${TANDEM_BENCH_SERVER_LOG:-}" ] || trap_log=$log
"$server" -m "$model" --host 127.0.0.1 --port "$port" -c "$ctx" -np 1 -n 256 -t "$(nproc)" \
  --override-kv "llama.context_length=int:$(( ctx > 8192 ? ctx : 8192 ))" \
  --temp 0 --seed 1 --jinja --chat-template-file "$root/tests/real-model/smollm2-tools.jinja" \
  >"$log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null; rm -f "${trap_log:-}"' EXIT
ready=""
for _ in $(seq 1 600); do
  if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=1)" 2>/dev/null; then
    ready=1
    break
  fi
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "smollm2.sh: llama-server exited:" >&2; cat "$log" >&2; exit 1
  fi
  sleep 0.1
done
[ -n "$ready" ] || { echo "smollm2.sh: llama-server did not become ready:" >&2; cat "$log" >&2; exit 1; }

python3 "$here/run.py" --base-url "http://127.0.0.1:$port/v1" --model SmolLM2-135M-Instruct \
  --max-requests 4 --max-answer-tokens 256 --timeout 180 --out "$root/target/bench-tasks/smollm2" "$@"
