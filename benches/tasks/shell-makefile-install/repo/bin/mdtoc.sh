#!/bin/sh
# mdtoc - print a table of contents for the ## and ### headings of a Markdown file.
#
#   usage: mdtoc FILE
#
# Headings inside ``` fences are skipped. Anchors follow GitHub's rules for
# plain ASCII titles: lower case, punctuation dropped, spaces become dashes.
set -eu

if [ $# -ne 1 ]; then
  echo "usage: mdtoc FILE" >&2
  exit 2
fi
if [ ! -f "$1" ]; then
  echo "mdtoc: $1: no such file" >&2
  exit 1
fi

awk '
/^```/ { fence = !fence; next }
fence  { next }
/^###? / {
  sub_level = ($0 ~ /^### /)
  title = $0
  sub(/^#+ +/, "", title)
  sub(/ +#* *$/, "", title)
  anchor = tolower(title)
  gsub(/[^a-z0-9 _-]/, "", anchor)
  gsub(/ /, "-", anchor)
  printf "%s- [%s](#%s)\n", (sub_level ? "  " : ""), title, anchor
}' "$1"
