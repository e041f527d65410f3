#!/bin/sh
# deploy.sh - copy the build into a new release folder and point "current" at it.
#
#   usage: deploy.sh [-n] [-c CONF]
#
#   -n       dry run: print what would happen
#   -c CONF  config file (default: ./deploy.conf)
set -eu

PROG=deploy

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

dry=0
conf=deploy.conf
while getopts nc: opt; do
  case $opt in
    n) dry=1 ;;
    c) conf=$OPTARG ;;
    *) echo "usage: deploy.sh [-n] [-c CONF]" >&2; exit 2 ;;
  esac
done

[ -f "$conf" ] || die "no config file: $conf"
name=$(conf_get "$conf" name)
version=$(conf_get "$conf" version)
src=$(conf_get "$conf" source build)
target=$(conf_get "$conf" target releases)

[ -d "$src" ] || die "source folder not found: $src"
release="$name-$version"
dest="$target/$release"

if [ "$dry" -eq 1 ]; then
  echo "would copy $src to $dest"
  echo "would point $target/current at $release"
  exit 0
fi

[ ! -e "$dest" ] || die "release already exists: $dest"
mkdir -p "$target"
cp -R "$src" "$dest"
rm -f "$target/current"
ln -s "$release" "$target/current"
log "deployed $release"
echo "$dest"
