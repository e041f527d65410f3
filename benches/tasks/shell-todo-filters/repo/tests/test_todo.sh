#!/bin/sh
# Run with: sh tests/test_todo.sh
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
TODO_FILE="$tmp/todo.txt"
export TODO_FILE
fail=0

todo() { sh "$here/bin/todo.sh" "$@"; }

expect() {
  # expect DESCRIPTION EXPECTED ACTUAL
  if [ "$2" = "$3" ]; then
    echo "ok   - $1"
  else
    echo "FAIL - $1"
    printf '  expected:\n%s\n  got:\n%s\n' "$2" "$3"
    fail=1
  fi
}

expect "list on a missing file prints nothing" "" "$(todo list)"
expect "add reports the item number" "added item 1" "$(todo add buy milk +home)"
todo add write report +work >/dev/null
todo add call plumber >/dev/null
expect "done marks an item" "done: item 2" "$(todo done 2)"
expect "list shows numbers and state" "  1 [ ] buy milk +home
  2 [x] write report +work
  3 [ ] call plumber" "$(todo list)"

todo done 9 >/dev/null 2>&1
expect "done on a missing item exits 1" 1 $?
todo frobnicate >/dev/null 2>&1
expect "unknown command exits 2" 2 $?

if [ "$fail" -ne 0 ]; then
  echo "some tests failed"
  exit 1
fi
echo "all tests passed"
