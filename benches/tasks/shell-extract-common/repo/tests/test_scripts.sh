#!/bin/sh
# Run with: sh tests/test_scripts.sh
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
expect() {
  if [ "$2" = "$3" ]; then echo "ok   - $1"
  else echo "FAIL - $1"; printf '  expected:\n%s\n  got:\n%s\n' "$2" "$3"; fail=1
  fi
}

cd "$tmp" || exit 1
mkdir build
echo hi > build/index.html
cat > deploy.conf <<'CONF'
name = shop
version = 2.0
target = out
CONF

expect "status before any deploy" "app: shop
current: none
releases: 0" "$(sh "$here/bin/status.sh")"
expect "dry run" "would copy build to out/shop-2.0
would point out/current at shop-2.0" "$(sh "$here/bin/deploy.sh" -n)"
expect "deploy prints the release folder" "out/shop-2.0" "$(sh "$here/bin/deploy.sh" 2>/dev/null)"
expect "deployed files" "hi" "$(cat out/shop-2.0/index.html 2>/dev/null)"
expect "status after deploy" "app: shop
current: shop-2.0
releases: 1" "$(sh "$here/bin/status.sh")"

sh "$here/bin/deploy.sh" >/dev/null 2>&1
expect "deploying the same version twice fails" 1 $?

printf 'version = 3\n' > broken.conf
err=$(sh "$here/bin/deploy.sh" -c broken.conf 2>&1 >/dev/null)
expect "missing key is reported" "[deploy] error: broken.conf: missing key 'name'" "$err"

[ "$fail" -eq 0 ] || { echo "some tests failed"; exit 1; }
echo "all tests passed"
