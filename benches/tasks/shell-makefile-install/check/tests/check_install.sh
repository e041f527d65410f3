#!/bin/sh
# Hidden check: `make install` / `make uninstall` with PREFIX and DESTDIR.
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok()  { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }

# staged install into a custom prefix
stage="$tmp/stage"
if make install DESTDIR="$stage" PREFIX=/opt/md >"$tmp/log" 2>&1; then
  ok "make install DESTDIR=... PREFIX=/opt/md"
else
  bad "make install DESTDIR=... PREFIX=/opt/md"; cat "$tmp/log"
fi
bindir="$stage/opt/md/bin"
for t in mdtoc mdwc; do
  if [ -f "$bindir/$t" ] && [ -x "$bindir/$t" ]; then ok "$t installed and executable"
  else bad "$t installed and executable"; fi
  if cmp -s "bin/$t.sh" "$bindir/$t"; then ok "$t is a copy of bin/$t.sh"
  else bad "$t is a copy of bin/$t.sh"; fi
done
leftover=$(ls "$bindir" 2>/dev/null | grep '\.sh$')
[ -z "$leftover" ] && ok "no .sh names installed" || bad "no .sh names installed: $leftover"
exp=$(sh bin/mdtoc.sh README.md)
got=$("$bindir/mdtoc" README.md 2>&1)
[ -n "$exp" ] && [ "$exp" = "$got" ] && ok "installed mdtoc runs" || bad "installed mdtoc runs: $got"
got=$(echo 'a b c d' | "$bindir/mdwc" 2>&1)
[ "$got" = 4 ] && ok "installed mdwc runs" || bad "installed mdwc runs: $got"
[ -f bin/mdtoc.sh ] && [ -f bin/mdwc.sh ] && ok "sources left in place" || bad "sources left in place"

# installing again over an existing install works
make install DESTDIR="$stage" PREFIX=/opt/md >/dev/null 2>&1 && ok "install twice" || bad "install twice"

# uninstall removes exactly what install put there
echo keep > "$bindir/other-tool"
if make uninstall DESTDIR="$stage" PREFIX=/opt/md >"$tmp/log" 2>&1; then
  ok "make uninstall"
else
  bad "make uninstall"; cat "$tmp/log"
fi
[ ! -e "$bindir/mdtoc" ] && [ ! -e "$bindir/mdwc" ] && ok "uninstall removed the tools" || bad "uninstall removed the tools"
[ -f "$bindir/other-tool" ] && ok "uninstall left other files alone" || bad "uninstall left other files alone"

# PREFIX defaults to /usr/local
stage2="$tmp/stage2"
make install DESTDIR="$stage2" >/dev/null 2>&1
[ -x "$stage2/usr/local/bin/mdtoc" ] && [ -x "$stage2/usr/local/bin/mdwc" ] \
  && ok "default PREFIX is /usr/local" || bad "default PREFIX is /usr/local"

# the existing targets still work
make lint >/dev/null 2>&1 && ok "make lint" || bad "make lint"
make test >/dev/null 2>&1 && ok "make test" || bad "make test"

[ "$fail" -eq 0 ] || { echo "install checks failed"; exit 1; }
echo "install checks passed"
