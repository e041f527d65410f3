#!/bin/sh
# Hidden check: log/die/conf_get live in lib/common.sh, both scripts use it, and
# the scripts behave as before from any directory.
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
ok()  { echo "ok   - $1"; }
bad() { echo "FAIL - $1"; fail=1; }
expect() {
  if [ "$2" = "$3" ]; then ok "$1"
  else bad "$1"; printf '  expected:\n%s\n  got:\n%s\n' "$2" "$3"
  fi
}

# --- shape -------------------------------------------------------------------
lib="$here/lib/common.sh"
[ -f "$lib" ] && ok "lib/common.sh exists" || { bad "lib/common.sh exists"; echo "hidden tests failed"; exit 1; }
for s in deploy status; do
  f="$here/bin/$s.sh"
  if grep -Eq '^[[:space:]]*(function[[:space:]]+)?(log|die|conf_get)[[:space:]]*(\(|\{)' "$f"; then
    bad "bin/$s.sh no longer defines log/die/conf_get itself"
  else
    ok "bin/$s.sh no longer defines log/die/conf_get itself"
  fi
  grep -q 'common\.sh' "$f" && ok "bin/$s.sh uses lib/common.sh" || bad "bin/$s.sh uses lib/common.sh"
done
for fn in log die conf_get; do
  grep -Eq "^[[:space:]]*(function[[:space:]]+)?$fn[[:space:]]*(\(|\{)" "$lib" \
    && ok "lib defines $fn" || bad "lib defines $fn"
done

# --- the library on its own --------------------------------------------------
cat > "$tmp/t.conf" <<'CONF'
# comment
  name   =  my shop  
; other comment
empty =
CONF
out=$(cd "$tmp" && PROG=t sh -c '. "$1"; conf_get t.conf name' sh "$lib" 2>/dev/null)
expect "conf_get from the library" "my shop" "$out"
out=$(cd "$tmp" && PROG=t sh -c '. "$1"; conf_get t.conf port 8080' sh "$lib" 2>/dev/null)
expect "conf_get default" "8080" "$out"
err=$(cd "$tmp" && PROG=t sh -c '. "$1"; conf_get t.conf port; echo survived' sh "$lib" 2>&1)
case $err in
  *"missing key 'port'"*) ok "conf_get missing key reports" ;;
  *) bad "conf_get missing key reports (got: $err)" ;;
esac
case $err in
  *survived*) bad "conf_get missing key stops the script" ;;
  *) ok "conf_get missing key stops the script" ;;
esac
(cd "$tmp" && PROG=t sh -c '. "$1"; die "boom"; exit 0' sh "$lib" >/dev/null 2>&1)
[ $? -ne 0 ] && ok "die exits non-zero" || bad "die exits non-zero"

# --- behaviour, run from a directory without lib/ ------------------------------
w="$tmp/work dir"
mkdir -p "$w/site/css"
echo page > "$w/site/index.html"
echo 'body{}' > "$w/site/css/app.css"
cat > "$w/prod.conf" <<'CONF'
name = blog
version = 0.9
source = site
target = rel
CONF
cd "$w" || exit 1
expect "status before deploy" "app: blog
current: none
releases: 0" "$(sh "$here/bin/status.sh" -c prod.conf 2>&1)"
expect "dry run" "would copy site to rel/blog-0.9
would point rel/current at blog-0.9" "$(sh "$here/bin/deploy.sh" -n -c prod.conf 2>&1)"
[ ! -e rel ] && ok "dry run changes nothing" || bad "dry run changes nothing"
out=$(sh "$here/bin/deploy.sh" -c prod.conf 2>"$tmp/err")
expect "deploy output" "rel/blog-0.9" "$out"
expect "deploy log line" "[deploy] deployed blog-0.9" "$(cat "$tmp/err")"
expect "deployed tree" "body{}" "$(cat rel/blog-0.9/css/app.css 2>/dev/null)"
sed 's/0\.9/1.0/' prod.conf > next.conf
sh "$here/bin/deploy.sh" -c next.conf >/dev/null 2>&1
expect "status after two deploys" "app: blog
current: blog-1.0
releases: 2" "$(sh "$here/bin/status.sh" -c next.conf 2>&1)"
err=$(sh "$here/bin/deploy.sh" -c next.conf 2>&1 >/dev/null); st=$?
expect "redeploy fails" "1" "$st"
expect "redeploy message" "[deploy] error: release already exists: rel/blog-1.0" "$err"
printf 'target = rel\n' > nameless.conf
err=$(sh "$here/bin/status.sh" -c nameless.conf 2>&1 >/dev/null); st=$?
expect "status missing key exit" "1" "$st"
expect "status missing key message" "[status] error: nameless.conf: missing key 'name'" "$err"
err=$(sh "$here/bin/status.sh" -c nope.conf 2>&1 >/dev/null); st=$?
expect "status without config" "1:[status] error: no config file: nope.conf" "$st:$err"
err=$(sh "$here/bin/deploy.sh" -c nope.conf 2>&1 >/dev/null); st=$?
expect "deploy without config" "1:[deploy] error: no config file: nope.conf" "$st:$err"

[ "$fail" -eq 0 ] || { echo "hidden tests failed"; exit 1; }
echo "hidden tests passed"
