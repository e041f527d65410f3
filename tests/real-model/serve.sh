#!/usr/bin/env bash
# Starts llama-server with SmolLM2-135M on a free loopback port (after setup.sh) and waits
# until /health answers; prints the base URL to give tandem, then keeps serving until
# interrupted.
#
#   tests/real-model/serve.sh            # then: OPENAI_BASE_URL=<printed URL> tandem --provider llamacpp
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${TANDEM_REAL_MODEL_CACHE:-$HOME/.cache/tandem-real-model}"
port="${PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
"$cache/bin/llama-server" -m "$cache/SmolLM2-135M-Instruct.Q4_1.gguf" --host 127.0.0.1 \
  --port "$port" -c 4096 -n 512 -t 2 --temp 0 --jinja --chat-template-file "$here/smollm2-tools.jinja" \
  --log-disable &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT INT TERM
for _ in $(seq 1 300); do
  if python3 -c "import urllib.request,sys; urllib.request.urlopen('http://127.0.0.1:$port/health', timeout=1)" 2>/dev/null; then
    echo "http://127.0.0.1:$port/v1"
    wait $pid
    exit $?
  fi
  kill -0 $pid 2>/dev/null || { echo "llama-server exited" >&2; exit 1; }
  sleep 0.1
done
echo "llama-server did not become healthy in 30 s" >&2
exit 1
