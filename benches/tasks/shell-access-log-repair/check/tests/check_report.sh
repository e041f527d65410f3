#!/bin/sh
# Hidden check: the log is repaired (bin/report.sh is the original, restored by the check).
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
fail=0
ok()  { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }

out=$(sh bin/report.sh data/access.log 2>&1); st=$?
[ "$st" -eq 0 ] && ok "report runs" || bad "report runs (exit $st: $out)"
if [ "$out" = "$(cat tests/expected_report.txt)" ]; then
  ok "report matches"
else
  bad "report matches"
  printf '  expected:\n%s\n  got:\n%s\n' "$(cat tests/expected_report.txt)" "$out"
fi
n=$(awk 'END { print NR }' data/access.log)
[ "$n" = 4500 ] && ok "4500 requests in the log" || bad "4500 requests in the log (got $n)"
sum=$(sed 's/[[:space:]]*$//' data/access.log | cksum)
[ "$sum" = "3557289563 229702" ] && ok "log restored exactly" || bad "log restored exactly"

[ "$fail" -eq 0 ] || { echo "report check failed"; exit 1; }
echo "report check passed"
