#!/bin/sh
# checklinks.sh - report relative Markdown links whose target file is missing.
#
#   usage: tools/checklinks.sh [FILE...]
#
# With no FILE it checks README.md and every .md file under docs/. Links to
# http(s):// and mailto: addresses and in-page anchors (#...) are skipped; a
# "#section" suffix on a file link is ignored. Exit status 1 when a link is broken.
set -u

if [ $# -eq 0 ]; then
  set -- README.md $(find docs -name '*.md' | sort)
fi

report=$(
  for f in "$@"; do
    dir=$(dirname "$f")
    # one "LINE<TAB>TARGET" line per inline link [text](target)
    awk '{
      s = $0
      while (match(s, /\]\([^)]*\)/)) {
        print NR "\t" substr(s, RSTART + 2, RLENGTH - 3)
        s = substr(s, RSTART + RLENGTH)
      }
    }' "$f" | while IFS='	' read -r line target; do
      case $target in
        ''|'#'*|http://*|https://*|mailto:*) continue ;;
      esac
      path=${target%%#*}
      if [ ! -e "$dir/$path" ]; then
        echo "$f:$line: broken link: $target"
      fi
    done
  done
)

if [ -n "$report" ]; then
  printf '%s\n' "$report"
  echo "$(printf '%s\n' "$report" | wc -l | tr -d ' ') broken link(s)"
  exit 1
fi
echo "all links ok"
