#!/bin/sh
# rotate.sh - rotate the *.log files in a directory, keeping KEEP old copies.
#
#   usage: rotate.sh [-k KEEP] DIR
#
# Each DIR/NAME.log is moved to NAME.log.1 (older copies shift to .2, .3, ...,
# anything past KEEP is deleted) and an empty NAME.log is left in its place.
set -u

keep=3

usage() {
  echo "usage: rotate.sh [-k KEEP] DIR" >&2
  exit 2
}

while getopts k: opt; do
  case $opt in
    k) keep=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage
case $keep in
  ''|*[!0-9]*|0) echo "rotate.sh: KEEP must be a positive number" >&2; exit 2 ;;
esac

dir=$1
if [ ! -d "$dir" ]; then
  echo "rotate.sh: $dir: not a directory" >&2
  exit 1
fi

rotated=0
for log in $(ls $dir/*.log 2>/dev/null); do
  # drop the oldest copy, then shift the others up by one
  rm -f $log.$keep
  i=$((keep - 1))
  while [ $i -ge 1 ]; do
    if [ -f $log.$i ]; then
      mv $log.$i $log.$((i + 1))
    fi
    i=$((i - 1))
  done
  mv $log $log.1
  : > $log
  rotated=$((rotated + 1))
done

echo "rotated $rotated file(s)"
