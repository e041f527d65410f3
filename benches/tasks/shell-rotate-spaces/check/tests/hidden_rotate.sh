#!/bin/sh
# Hidden check for rotate.sh: names with spaces, repeated rotation, empty dirs.
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok()  { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }
content() { cat "$1" 2>/dev/null; }

# 1. a directory whose own name has spaces, logs with spaces, rotated three times
d="$tmp/ci  logs"
mkdir -p "$d"
echo keep > "$d/notes.txt"
for round in one two three; do
  echo "a $round" > "$d/a b.log"
  echo "c $round" > "$d/c.log"
  echo "x $round" > "$d/x  y z.log"
  out=$(sh "$here/bin/rotate.sh" -k 2 "$d" 2>&1); st=$?
  [ "$st" -eq 0 ] && ok "round $round exits 0" || bad "round $round exits 0 (got $st: $out)"
  [ "$out" = "rotated 3 file(s)" ] && ok "round $round count" || bad "round $round count (got: $out)"
done
[ "$(content "$d/a b.log.1")" = "a three" ] && ok "'a b.log.1' newest" || bad "'a b.log.1' newest"
[ "$(content "$d/a b.log.2")" = "a two" ] && ok "'a b.log.2' older" || bad "'a b.log.2' older"
[ ! -e "$d/a b.log.3" ] && ok "'a b.log.3' removed (keep 2)" || bad "'a b.log.3' removed (keep 2)"
[ "$(content "$d/x  y z.log.1")" = "x three" ] && ok "double space name .1" || bad "double space name .1"
[ "$(content "$d/x  y z.log.2")" = "x two" ] && ok "double space name .2" || bad "double space name .2"
[ "$(content "$d/c.log.2")" = "c two" ] && ok "c.log.2" || bad "c.log.2"
[ -f "$d/a b.log" ] && [ ! -s "$d/a b.log" ] && ok "'a b.log' recreated empty" || bad "'a b.log' recreated empty"
[ "$(content "$d/notes.txt")" = keep ] && ok "non-log file untouched" || bad "non-log file untouched"
extra=$(cd "$d" && ls | grep -v -e '^a b\.log' -e '^c\.log' -e '^x  y z\.log' -e '^notes\.txt$')
[ -z "$extra" ] && ok "no stray files" || bad "no stray files: $extra"

# 2. a directory without any logs
e="$tmp/empty dir"
mkdir -p "$e"
out=$(sh "$here/bin/rotate.sh" "$e" 2>&1); st=$?
[ "$st" -eq 0 ] && [ "$out" = "rotated 0 file(s)" ] && ok "empty dir" || bad "empty dir (got $st: $out)"
[ -z "$(ls -A "$e")" ] && ok "empty dir stays empty" || bad "empty dir stays empty: $(ls -A "$e")"

# 3. default KEEP is still 3
f="$tmp/def"
mkdir -p "$f"
for n in 1 2 3 4 5; do
  echo "v$n" > "$f/svc.log"
  sh "$here/bin/rotate.sh" "$f" >/dev/null 2>&1
done
[ "$(content "$f/svc.log.3")" = v3 ] && [ ! -e "$f/svc.log.4" ] && ok "default keep 3" || bad "default keep 3"

# 4. errors
sh "$here/bin/rotate.sh" "$tmp/missing" >/dev/null 2>&1
[ $? -eq 1 ] && ok "missing dir exits 1" || bad "missing dir exits 1"

[ "$fail" -eq 0 ] || { echo "hidden tests failed"; exit 1; }
echo "hidden tests passed"
