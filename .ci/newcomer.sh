#!/usr/bin/env bash
# The newcomer check: what a new user does, where a new user does it. A fresh clone of this commit in
# a new 0700 directory (mktemp -d) as root — the install path the jail's uid 65534 cannot read —
# then the README's first command, a Python run on both tiers through the CLI, and the README's
# examples (plus a smoke run) on Node 22 and 24. The full `npm test` runs once, in .ci/run's checkout.
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
[ "$(stat -c %a "$home")" = 700 ] || { echo "newcomer: $home is not 0700" >&2; exit 1; }
echo "== newcomer: clone into $home (0700, uid $(id -u))"
git clone -q "$src" "$home/wasmcell"
cd "$home/wasmcell"
export PATH="$PWD/node_modules/.bin:$PATH"

echo "== newcomer: npm ci && npm start"
npm ci --no-audit --no-fund >/dev/null
npm start

if [ "$(id -u)" = 0 ]; then
  echo "== newcomer: doctor says the runtime files are staged for the jail's uid, and that it works"
  report="$(node dist/cli/main.js doctor || true)"
  echo "$report" | grep -E '^  ok  staging +[0-9]+ runtime path\(s\).* are staged under ' || {
    echo "newcomer: doctor does not report working staging from the 0700 install:" >&2
    echo "$report" >&2
    exit 1
  }
fi

echo "== newcomer: Python on both tiers from the 0700 install"
for engine in pyodide native; do
  out="$(node dist/cli/main.js run -e 'sum(range(10))' --lang python --engine "$engine")"
  echo "$engine: $out"
  [ "$out" = 45 ] || { echo "newcomer: the $engine run printed '$out', not 45" >&2; exit 1; }
done

echo "== newcomer: README examples on Node 22 and 24, from the 0700 install"
node --test --test-concurrency=1 test/node-versions.test.ts
