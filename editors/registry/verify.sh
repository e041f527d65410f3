#!/usr/bin/env bash
# tandem's ACP registry entry, checked against the registry's rules with archives served from
# this machine:
#   editors/registry/verify.sh [ARCHIVES_DIR]     (default target/distrib, from
#                                                  editors/release/build.sh)
# Writes the entry (agent_json.py, for the archives found) into a folder named after its id,
# as the registry keeps it, with icon.svg beside it, and runs check.py on it: the entry
# against protocol/registry/agent.schema.json and the registry's field rules, every archive's
# download and sha256, the icon's size and colours, and a launch of this machine's archive
# from an empty environment with the registry validator's initialize, which needs an `agent`
# or `terminal` auth method. check.py --self-test first proves each rule catches what it
# should. The "every OS" rule is waived for a system no archive was built for here.
set -euo pipefail
cd "$(dirname "$0")/../.."
archives=$(realpath "${1:-target/distrib}")
work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# jsonschema (and its URI format check) in a venv of its own (a system Python may refuse pip),
# in a folder named for the pins under TANDEM_REGISTRY_CHECK_CACHE; `.complete` marks a
# finished install.
pins=("jsonschema==4.25.1" "rfc3986-validator==0.1.1")
venv="${TANDEM_REGISTRY_CHECK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tandem-registry-check}/$(printf '%s-' "${pins[@]}")"
if [ ! -f "$venv/.complete" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "${pins[@]}"
  touch "$venv/.complete"
fi

echo "== check.py --self-test: each of the registry's rules catches a broken entry"
"$venv/bin/python" editors/registry/check.py --self-test

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$archives" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
  sleep 0.1
done

entry="$work/tandem"
mkdir "$entry"
# Binary archives only: the npx package is proven from its tarballs (editors/npm/verify.sh),
# since it is not on the npm registry until a release publishes it.
python3 editors/registry/agent_json.py --archives "$archives" --base-url "http://127.0.0.1:$port" \
  --npm-package "" --out "$entry/agent.json"
cp editors/registry/icon.svg "$entry/icon.svg"
echo "== the entry"
cat "$entry/agent.json"

# A system with no archive here is waived, and said so: macOS links only on a hosted runner,
# and CI builds the static Linux archive alone. A release's entry, made from every published
# archive, is checked with no waiver (RELEASING.md, step 4).
waive=()
for family in darwin linux windows; do
  if ! grep -q "\"$family-" "$entry/agent.json"; then
    waive+=(--waive-os "$family")
  fi
done
echo "== check.py: the entry, its archives, its icon, and a launch from an empty environment"
"$venv/bin/python" editors/registry/check.py "$entry" "${waive[@]}"
