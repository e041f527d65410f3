#!/bin/sh
# Hidden check: no broken links, each fixed link points at the intended page, and
# the pages themselves were not renamed, moved or duplicated.
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
fail=0
ok()  { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }

out=$(sh tools/checklinks.sh 2>&1) && ok "checklinks passes" || bad "checklinks passes: $out"

pages=$(find . -name '*.md' ! -path './tests/*' | sort | tr '\n' ' ')
want='./README.md ./docs/configuration.md ./docs/faq.md ./docs/getting-started.md ./docs/guides/hooks.md ./docs/guides/plugins.md ./docs/index.md ./docs/upgrade-notes.md '
[ "$pages" = "$want" ] && ok "same set of pages" || bad "same set of pages (got: $pages)"

# link FILE TEXT EXPECTED: the link [TEXT](...) in FILE resolves to EXPECTED
link() {
  target=$(sed -n "s/.*\[$2\](\([^)]*\)).*/\1/p" "$1" | head -n 1)
  if [ -z "$target" ]; then
    bad "$1: link [$2] still there"
    return
  fi
  path=${target%%#*}
  got=$(realpath -m "$(dirname "$1")/$path")
  exp=$(realpath -m "$3")
  if [ "$got" = "$exp" ]; then ok "$1: [$2] -> $3"
  else bad "$1: [$2] -> $3 (links to $target)"
  fi
}

link README.md "configuration reference" docs/configuration.md
link README.md "Getting started" docs/getting-started.md
link docs/index.md "Configuration" docs/configuration.md
link docs/index.md "Writing plugins" docs/guides/plugins.md
link docs/index.md "Hooks" docs/guides/hooks.md
link docs/index.md "Upgrade notes" docs/upgrade-notes.md
link docs/guides/plugins.md "documentation index" docs/index.md
link docs/guides/plugins.md "Configuration" docs/configuration.md
link docs/guides/hooks.md "the FAQ" docs/faq.md
link docs/guides/hooks.md "plugins" docs/guides/plugins.md
link docs/faq.md "upgrade notes" docs/upgrade-notes.md
link docs/faq.md "configuration keys" docs/configuration.md

# external links and in-page anchors are left as they were
grep -q '](https://example.com/lanternd)' docs/index.md && ok "external link kept" || bad "external link kept"
grep -q '](mailto:dev@example.com)' README.md && ok "mailto link kept" || bad "mailto link kept"
grep -q '](configuration.md#keys)' docs/faq.md && ok "anchor link kept" || bad "anchor link kept"

[ "$fail" -eq 0 ] || { echo "link check failed"; exit 1; }
echo "link check passed"
