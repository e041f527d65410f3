#!/bin/sh
# Run with: sh tests/test_md.sh   (or: make test)
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {
  if [ "$2" = "$3" ]; then echo "ok   - $1"
  else echo "FAIL - $1"; printf '  expected:\n%s\n  got:\n%s\n' "$2" "$3"; fail=1
  fi
}

cat > "$tmp/doc.md" <<'DOC'
# Title

Some intro text here.

## Getting Started

```sh
## not a heading
echo one two three
```

### Install (the easy way)

## FAQ & Help
DOC

expect "toc" "- [Getting Started](#getting-started)
  - [Install (the easy way)](#install-the-easy-way)
- [FAQ & Help](#faq--help)" "$(sh "$here/bin/mdtoc.sh" "$tmp/doc.md")"
expect "word count skips code" "18" "$(sh "$here/bin/mdwc.sh" "$tmp/doc.md")"
expect "word count from stdin" "3" "$(echo 'one two three' | sh "$here/bin/mdwc.sh")"
expect "several files" "18 $tmp/doc.md
18 $tmp/doc.md
36 total" "$(sh "$here/bin/mdwc.sh" "$tmp/doc.md" "$tmp/doc.md")"

[ "$fail" -eq 0 ] || { echo "some tests failed"; exit 1; }
echo "all tests passed"
