#!/usr/bin/env bash
# The npm packages as a user gets them, from their tarballs:
#   editors/npm/verify.sh [NPM_DIR]        (default target/distrib/npm, from
#                                           editors/release/build.sh)
# installs tandem-acp and this platform's package into an empty directory, then starts
# `npx tandem-acp` from an empty environment (no key) and sends the registry's initialize;
# prints the time from spawn to the answer. The wrapper must pass stdio through untouched:
# the answer is the first line on stdout.
set -euo pipefail
cd "$(dirname "$0")/../.."
packages=$(realpath "${1:-target/distrib/npm}")
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) platform=linux-x64 ;;
  Linux-aarch64) platform=linux-arm64 ;;
  Darwin-arm64) platform=darwin-arm64 ;;
  Darwin-x86_64) platform=darwin-x64 ;;
  *) echo "no tandem npm package for $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
main=$(ls "$packages"/tandem-acp-[0-9]*.tgz)
native=$(ls "$packages"/tandem-acp-"$platform"-[0-9]*.tgz)
project=$(mktemp -d)
trap 'rm -rf "$project"' EXIT
echo "== npm install of $(basename "$main") and $(basename "$native") into an empty directory"
(cd "$project" && npm install --no-audit --no-fund --loglevel=error "$main" "$native")
test -x "$project/node_modules/.bin/tandem-acp"

echo "== npx tandem-acp from an empty environment: initialize"
home="$project/home"
mkdir "$home"
python3 - "$project" "$home" "$PATH" <<'PY'
import json, subprocess, sys, time
project, home, path = sys.argv[1:4]
init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": 1,
    "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
    "clientCapabilities": {"terminal": True, "fs": {"readTextFile": True, "writeTextFile": True},
                           "_meta": {"terminal_output": True, "terminal-auth": True}}}}
times = []
for attempt in range(5):
    started = time.perf_counter()
    proc = subprocess.Popen(["npx", "--no-install", "tandem-acp"], cwd=project,
                            env={"PATH": path, "HOME": home},
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write(json.dumps(init) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    times.append((time.perf_counter() - started) * 1000)
    proc.stdin.close()
    status = proc.wait(timeout=30)
    answer = json.loads(line)
    methods = answer["result"]["authMethods"]
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 1, answer
    assert methods and methods[0]["id"] == "api-key", methods
    assert status == 0, (status, proc.stderr.read())
    assert "`npx tandem-acp login`" in methods[0]["description"], methods
# npx puts no `tandem` on the PATH: the advice tandem gives names the command as run.
proc = subprocess.run(["npx", "--no-install", "tandem-acp", "exec", "hi"], cwd=project,
                      env={"PATH": path, "HOME": home}, capture_output=True, text=True, timeout=60)
assert proc.returncode == 2, (proc.returncode, proc.stderr)
assert "run `npx tandem-acp login` in a terminal" in proc.stderr, proc.stderr
print("  ✓ without a key, npx tandem-acp exec says to run `npx tandem-acp login`")
times.sort()
print(f"  ✓ answered by tandem {answer['result']['agentInfo']['version']} through npx; "
      f"spawn to answer: median {times[len(times) // 2]:.0f} ms of {len(times)} (min {times[0]:.0f}, max {times[-1]:.0f})")
PY
