#!/usr/bin/env bash
# The ACP registry's own checks on tandem's entry, against archives served from this machine:
#   editors/registry/verify.sh [ARCHIVES_DIR]     (default target/distrib, from
#                                                  editors/release/build.sh)
# 1. agent.json (made by agent_json.py for the archives found) passes the registry's entry
#    validation (agent.schema.json, versions, archive URLs reachable) and icon.svg its icon
#    rules: build_registry.py's functions. Only the "every OS" rule is waived when no macOS
#    archive was built here (macOS links only on a hosted runner).
# 2. verify_agents.py downloads the archive for this platform, unpacks it and starts `cmd`.
# 3. verify_agents.py --auth-check (client.py) sends its initialize from an empty
#    environment with no key and needs an `agent` or `terminal` auth method.
# The registry's scripts run unchanged, from editors/registry/upstream/ (see its README).
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

# jsonschema for the schema check, in a venv of its own (a system Python may refuse pip).
venv="${XDG_CACHE_HOME:-$HOME/.cache}/tandem-registry-check"
if ! "$venv/bin/python" -c "import jsonschema" 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet "jsonschema==4.25.1"
fi

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "$port" --bind 127.0.0.1 --directory "$archives" >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/')" 2>/dev/null && break
  sleep 0.1
done

registry="$work/registry"
cp -r editors/registry/upstream "$registry"
mkdir "$registry/tandem"
# Binary archives only: the npx package is proven from its tarballs (editors/npm/verify.sh),
# since it is not on the npm registry until a release publishes it.
python3 editors/registry/agent_json.py --archives "$archives" --base-url "http://127.0.0.1:$port" \
  --npm-package "" --out "$registry/tandem/agent.json"
cp editors/registry/icon.svg "$registry/tandem/icon.svg"
echo "== the entry"
cat "$registry/tandem/agent.json"

echo "== the registry's entry and icon validation (build_registry.py)"
"$venv/bin/python" - "$registry" <<'PY'
import json
import sys
from pathlib import Path

registry = Path(sys.argv[1])
sys.path.insert(0, str(registry / ".github" / "workflows"))
import build_registry as b  # noqa: E402

agent = json.loads((registry / "tandem" / "agent.json").read_text())
schema = b.load_schema(registry)
assert b.HAS_JSONSCHEMA and schema, "jsonschema and agent.schema.json are needed"
errors = b.validate_agent(agent, "tandem", schema)
no_macos = not any(p.startswith("darwin-") for p in agent["distribution"]["binary"])
waived = [e for e in errors if no_macos and e.startswith("Binary distribution must include builds for all operating systems. Missing: darwin")]
errors = [e for e in errors if e not in waived]
errors += b.validate_distribution_versions(agent["version"], agent["distribution"])
errors += b.validate_distribution_urls(agent["distribution"])
errors += b.validate_icon(registry / "tandem" / "icon.svg")
for w in waived:
    print(f"  waived here: {w} (built on a hosted macOS runner)")
for e in errors:
    print(f"  ✗ {e}")
if errors:
    sys.exit(1)
print(f"  ✓ agent.json valid; {len(agent['distribution']['binary'])} archives reachable; icon ok")
PY

echo "== verify_agents.py: download, unpack, start"
env -i PATH="$PATH" HOME="$work/home" python3 "$registry/.github/workflows/verify_agents.py" -a tandem -t binary
echo "== verify_agents.py --auth-check: initialize from an empty environment, no key"
env -i PATH="$PATH" HOME="$work/home" python3 "$registry/.github/workflows/verify_agents.py" -a tandem -t binary --auth-check --clean
