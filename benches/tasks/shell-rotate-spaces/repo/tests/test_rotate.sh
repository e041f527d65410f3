#!/bin/sh
# Run with: sh tests/test_rotate.sh
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

check() {
  # check DESCRIPTION COMMAND...
  desc=$1; shift
  if "$@"; then
    echo "ok   - $desc"
  else
    echo "FAIL - $desc"
    fail=1
  fi
}

is_empty() { [ -f "$1" ] && [ ! -s "$1" ]; }

echo "app line" > "$tmp/app.log"
echo "web line" > "$tmp/web server.log"

out=$(sh "$here/bin/rotate.sh" "$tmp" 2>&1)
status=$?

check "exit status is 0" [ "$status" -eq 0 ]
check "reports two rotated files" [ "$out" = "rotated 2 file(s)" ]
check "app.log.1 holds the old content" [ "$(cat "$tmp/app.log.1" 2>/dev/null)" = "app line" ]
check "app.log is empty again" is_empty "$tmp/app.log"
check "'web server.log.1' holds the old content" [ "$(cat "$tmp/web server.log.1" 2>/dev/null)" = "web line" ]
check "'web server.log' is empty again" is_empty "$tmp/web server.log"

if [ "$fail" -ne 0 ]; then
  echo "some tests failed"
  exit 1
fi
echo "all tests passed"
