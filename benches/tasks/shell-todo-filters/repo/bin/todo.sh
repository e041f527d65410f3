#!/bin/sh
# todo.sh - a tiny todo list kept in a plain text file.
#
#   todo.sh add TEXT...   add an item
#   todo.sh list          list every item with its number
#   todo.sh done N        mark item N as done
#
# Items live in $TODO_FILE (default: ./todo.txt), one per line; a line starting
# with "x " is done. Words like +home or +work in an item's text are tags.
set -u

file=${TODO_FILE:-todo.txt}

usage() {
  cat >&2 <<'USAGE'
usage: todo.sh add TEXT...
       todo.sh list
       todo.sh done N
USAGE
  exit 2
}

count_items() {
  if [ -f "$file" ]; then
    awk 'END { print NR }' "$file"
  else
    echo 0
  fi
}

cmd_add() {
  [ $# -ge 1 ] || usage
  printf '%s\n' "$*" >> "$file"
  echo "added item $(count_items)"
}

cmd_list() {
  [ $# -eq 0 ] || usage
  [ -f "$file" ] || return 0
  awk '{
    if (substr($0, 1, 2) == "x ")
      printf "%3d [x] %s\n", NR, substr($0, 3)
    else
      printf "%3d [ ] %s\n", NR, $0
  }' "$file"
}

cmd_done() {
  [ $# -eq 1 ] || usage
  case $1 in
    ''|*[!0-9]*) echo "todo.sh: not an item number: $1" >&2; exit 2 ;;
  esac
  total=$(count_items)
  if [ "$1" -lt 1 ] || [ "$1" -gt "$total" ]; then
    echo "todo.sh: no item $1" >&2
    exit 1
  fi
  tmp="$file.tmp.$$"
  awk -v n="$1" 'NR == n && substr($0, 1, 2) != "x " { $0 = "x " $0 } { print }' \
    "$file" > "$tmp" && mv "$tmp" "$file"
  echo "done: item $1"
}

[ $# -ge 1 ] || usage
cmd=$1
shift
case $cmd in
  add)  cmd_add "$@" ;;
  list) cmd_list "$@" ;;
  done) cmd_done "$@" ;;
  *)    usage ;;
esac
