#!/bin/sh
# mdwc - count the words of Markdown files, leaving out ``` code blocks.
#
#   usage: mdwc [FILE...]     (standard input when no FILE is given)
#
# With several files it prints one "COUNT FILE" line each and a total.
set -eu

count() {
  awk '/^```/ { fence = !fence; next } !fence { n += NF } END { print n + 0 }' "$@"
}

if [ $# -eq 0 ]; then
  count
  exit 0
fi
if [ $# -eq 1 ]; then
  count "$1"
  exit 0
fi
total=0
for f in "$@"; do
  n=$(count "$f")
  echo "$n $f"
  total=$((total + n))
done
echo "$total total"
