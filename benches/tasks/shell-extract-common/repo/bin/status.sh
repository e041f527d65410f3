#!/bin/sh
# status.sh - show which release is live and how many are kept.
#
#   usage: status.sh [-c CONF]
set -eu

PROG=status

log() {
  printf '[%s] %s\n' "$PROG" "$*" >&2
}

die() {
  log "error: $*"
  exit 1
}

# conf_get FILE KEY [DEFAULT] - print the value of "KEY = value" in FILE.
# Blank lines and lines starting with # or ; are ignored. Without a DEFAULT a
# missing key is an error.
conf_get() {
  _val=$(awk -v key="$2" '
    /^[[:space:]]*([#;]|$)/ { next }
    {
      k = $0
      sub(/[[:space:]]*=.*/, "", k)
      sub(/^[[:space:]]+/, "", k)
      if (k == key) {
        v = $0
        sub(/^[^=]*=[[:space:]]*/, "", v)
        sub(/[[:space:]]+$/, "", v)
        print v
        exit
      }
    }' "$1")
  if [ -n "$_val" ]; then
    printf '%s\n' "$_val"
  elif [ $# -ge 3 ]; then
    printf '%s\n' "$3"
  else
    die "$1: missing key '$2'"
  fi
}

conf=deploy.conf
while getopts c: opt; do
  case $opt in
    c) conf=$OPTARG ;;
    *) echo "usage: status.sh [-c CONF]" >&2; exit 2 ;;
  esac
done

[ -f "$conf" ] || die "no config file: $conf"
name=$(conf_get "$conf" name)
target=$(conf_get "$conf" target releases)

current=none
if [ -L "$target/current" ]; then
  current=$(readlink "$target/current")
fi

count=0
for d in "$target/$name"-*; do
  if [ -d "$d" ] && [ ! -L "$d" ]; then
    count=$((count + 1))
  fi
done

echo "app: $name"
echo "current: $current"
echo "releases: $count"
