#!/usr/bin/env bash
# The CMake-package test (`make test-cmake`): installs rocm-backend into a fresh temporary
# prefix, moves the prefix elsewhere (the package must be relocatable), checks that no path
# of this build machine is inside the installed config files, then configures, builds (with
# -Wall -Wextra -Werror) and runs tests/cmake_consumer against the shared and the static
# library, and a pkg-config client as well. Prints "cmake consumer: N passed, M failed".
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
MAKE=${MAKE:-make}
VENV=${VENV:-.venv}
if [ -x "$VENV/bin/cmake" ]; then CMAKE="$VENV/bin/cmake"; else CMAKE=$(command -v cmake); fi
gen=()
if command -v ninja >/dev/null 2>&1 || [ -x "$VENV/bin/ninja" ]; then
  gen=(-G Ninja)
  [ -x "$VENV/bin/ninja" ] && gen+=(-DCMAKE_MAKE_PROGRAM="$repo/$VENV/bin/ninja")
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rb-cmake-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
ok()   { echo "  ok   $*"; passed=$((passed + 1)); }
fail() { echo "  FAIL $*"; failed=$((failed + 1)); }

"$MAKE" -s --no-print-directory install PROFILE="${PROFILE:-release}" PREFIX="$tmp/staging" >/dev/null
mv "$tmp/staging" "$tmp/prefix"   # relocated after install
prefix="$tmp/prefix"
for f in lib/librocm_backend.so lib/librocm_backend.a include/rocm_backend.h include/rocm_backend.hpp \
         lib/cmake/RocmBackend/RocmBackendConfig.cmake \
         lib/cmake/RocmBackend/RocmBackendConfigVersion.cmake lib/pkgconfig/rocm_backend.pc; do
  if [ -f "$prefix/$f" ]; then ok "installed $f"; else fail "missing $f"; fi
done
if grep -rlF -e "$repo" -e "$tmp/staging" "$prefix/lib/cmake" "$prefix/lib/pkgconfig" "$prefix/include"; then
  fail "an absolute build or install path is inside the installed files (above)"
else
  ok "no absolute path of the build machine in the CMake/pkg-config files"
fi

echo "  $("$CMAKE" --version | head -n 1)"
if "$CMAKE" -S tests/cmake_consumer -B "$tmp/build" "${gen[@]}" -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_C_COMPILER="${CC:-cc}" -DCMAKE_CXX_COMPILER="${CXX:-c++}" -DCMAKE_BUILD_TYPE=Release >"$tmp/configure.log" 2>&1; then
  ok "find_package(RocmBackend 0.1 REQUIRED) configures (and 1.0 is refused)"
  grep -F "RocmBackend" "$tmp/configure.log" | sed 's/^/     /'
else
  cat "$tmp/configure.log"; fail "configure"
fi
if "$CMAKE" --build "$tmp/build" >"$tmp/build.log" 2>&1; then
  ok "consumers build with -Wall -Wextra -Werror against both targets (C++17: -pedantic, rocm_backend.hpp, and with ASan+UBSan)"
else
  cat "$tmp/build.log"; fail "build"
fi
for kind in shared static cxx cxx_asan; do
  if out=$(TMPDIR="$tmp" UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$tmp/build/consumer_$kind" 2>&1); then
    ok "$out"
  else
    echo "$out"; fail "consumer_$kind"
  fi
done
# examples/convnet.cpp: batch 4, 3 timed runs (it checks the executor against eager calls)
if out=$("$tmp/build/consumer_convnet" 4 3 2>&1); then
  ok "$out"
else
  echo "$out"; fail "consumer_convnet"
fi
# (grep without -q: an early exit would SIGPIPE the producer, which pipefail reports as a
# failure; under load that happened.)
if nm -D --defined-only "$tmp/build/consumer_static" 2>/dev/null | grep rb_version >/dev/null ||
   nm --defined-only "$tmp/build/consumer_static" | grep ' T rb_version' >/dev/null; then
  ok "consumer_static carries the library itself"
else
  fail "consumer_static does not contain rb_version"
fi
if ldd "$tmp/build/consumer_shared" | grep -F "$prefix/lib/librocm_backend.so" >/dev/null; then
  ok "consumer_shared loads librocm_backend.so from the prefix"
else
  ldd "$tmp/build/consumer_shared"; fail "consumer_shared does not load the installed library"
fi

if command -v pkg-config >/dev/null 2>&1; then
  flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs rocm_backend)
  if "${CC:-cc}" -std=c99 -Wall -Wextra -Werror -DRB_CONSUMER_KIND='"pkg-config"' tests/cmake_consumer/main.c \
       -o "$tmp/pc_consumer" $flags -lm && out=$(LD_LIBRARY_PATH="$prefix/lib" "$tmp/pc_consumer"); then
    ok "$out"
  else
    fail "pkg-config client ($flags)"
  fi
else
  echo "  skip pkg-config client (no pkg-config)"
fi
echo "cmake consumer: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
