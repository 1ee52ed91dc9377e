#!/usr/bin/env bash
# Brings CPython's own Lib/test for a Python version Debian stable does not package (3.14, Pyodide's
# interpreter) from Debian unstable: libpython<V>-testsuite holds the test modules and their data,
# libpython<V>-stdlib holds test/__init__.py and test/support/, and the pure-Python twins of C modules
# that Pyodide's stdlib leaves out and the tests import (_pydecimal, zoneinfo/_zoneinfo.py). The packages are downloaded with an
# apt configuration of their own (sources, lists and cache under the target directory) and unpacked
# there, never installed: the machine's apt sources, package state and Python stay as they are.
#
#   bash scripts/fetch-cpython-tests.sh 3.14 /var/cache/cpython-tests
#   WASMCELL_CPYTHON_TESTS_PYODIDE=/var/cache/cpython-tests/3.14/test npm run conformance -- cpython:pyodide
#
# Prints the test directory and the packages' version. Exits non-zero when unstable no longer has the
# version (the caller then runs without it and says so).
set -euo pipefail
version=${1:?usage: fetch-cpython-tests.sh VERSION DIR}
dir=${2:?usage: fetch-cpython-tests.sh VERSION DIR}
work="$dir/$version"
rm -rf "$work/apt" "$work/test"
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/deb"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main" \
  >"$work/apt/sources.list"
apt=(
  -o "Dir::Etc::SourceList=$work/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache" -o Dir::State::status=/dev/null
  -o APT::Sandbox::User=root
)
apt-get "${apt[@]}" update -qq
(cd "$work/apt/deb" && apt-get "${apt[@]}" download -qq "libpython$version-testsuite" "libpython$version-stdlib")
lib="./usr/lib/python$version"
for deb in "$work"/apt/deb/*.deb; do
  dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/apt" "$lib/test"
done
dpkg-deb --fsys-tarfile "$work"/apt/deb/libpython"$version"-stdlib_*.deb |
  tar -x -C "$work/apt" "$lib/_pydecimal.py" "$lib/zoneinfo/_zoneinfo.py"
rm -rf "$work/zoneinfo" "$work/_pydecimal.py"
mv "$work/apt/$lib/test" "$work/apt/$lib/_pydecimal.py" "$work/apt/$lib/zoneinfo" "$work/"
packaged=$(dpkg-deb -f "$work"/apt/deb/libpython"$version"-testsuite_*.deb Version)
rm -rf "$work/apt"
echo "$packaged" >"$work/debian-version"
echo "$work/test (Debian $packaged)"
