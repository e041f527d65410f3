#!/bin/sh
# report.sh - summarise an access log.
#
#   usage: report.sh LOGFILE
#
# One request per line, six space-separated fields:
#   TIMESTAMP             METHOD PATH        STATUS BYTES DURATION
#   2024-05-14T09:12:44Z  GET    /api/cart   200    1834  21ms
set -eu

if [ $# -ne 1 ]; then
  echo "usage: report.sh LOGFILE" >&2
  exit 2
fi

awk '
function malformed() {
  print "report.sh: malformed record" > "/dev/stderr"
  failed = 1
  exit 1
}
NF != 6 { malformed() }
$1 !~ /^[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$/ { malformed() }
$2 !~ /^(GET|HEAD|POST|PUT|PATCH|DELETE)$/ { malformed() }
$3 !~ /^\// { malformed() }
$4 !~ /^[1-5][0-9][0-9]$/ { malformed() }
$5 !~ /^[0-9]+$/ { malformed() }
$6 !~ /^[0-9]+ms$/ { malformed() }
{
  n++
  class[substr($4, 1, 1)]++
  bytes += $5
  ms = substr($6, 1, length($6) - 2) + 0
  total_ms += ms
  if (ms > slow_ms) { slow_ms = ms; slow = $2 " " $3 " at " $1 }
  if (n == 1) first = $1
  last = $1
}
END {
  if (failed) exit 1
  if (n == 0) { print "no requests"; exit 0 }
  printf "period: %s .. %s\n", first, last
  printf "requests: %d\n", n
  for (c = 2; c <= 5; c++) printf "  %dxx: %d\n", c, class[c]
  printf "bytes: %d\n", bytes
  printf "avg duration: %dms\n", int(total_ms / n + 0.5)
  printf "slowest: %dms %s\n", slow_ms, slow
}' "$1"
