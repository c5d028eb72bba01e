#!/usr/bin/env bash
# Compile-time conformance of src/device/gpu/vendor/hip.rs with the real ROCm headers.
#  1. tests/amd/hip_rs_decls.inc is up to date with hip.rs (tests/amd/gen_conformance.py --check).
#  2. tests/amd/conformance.cpp compiles (g++ -std=c++17 -fsyntax-only) against Debian
#     unstable's ROCm 6.4 headers (scripts/fetch-rocm-headers.sh), every library required.
#  3. Where the system has HIP headers of another major version (bookworm's libamdhip64-dev
#     5.2, installed with hipcc), the same file compiles against them too (libraries whose
#     headers are absent there are skipped, as are the HIP-6-only items).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cxx=${CXX:-g++}
flags=(-std=c++17 -fsyntax-only -Wall -Wextra -D__HIP_PLATFORM_AMD__ -D__HIP_DISABLE_CPP_FUNCTIONS__ -I tests/amd)

if [ ! -f src/device/gpu/vendor/hip.rs ]; then
    echo "check-amd-conformance: src/device/gpu/vendor/hip.rs does not exist on this branch" >&2
    exit 1
fi
python3 tests/amd/gen_conformance.py --check
summary=$(sed -n 3p tests/amd/hip_rs_decls.inc | sed 's|^// ||')

inc=$(scripts/fetch-rocm-headers.sh)
ver() { sed -n 's/^#define HIP_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$1/hip/hip_version.h" | paste -sd.; }
count() { "$cxx" "${flags[@]/-fsyntax-only/-E}" -P "$@" tests/amd/conformance.cpp 2>/dev/null |
    grep -c 'abi::fn_same<abi_rs::\|but the ROCm header says otherwise' || true; }

echo "check-amd-conformance: hip.rs declares $summary"
"$cxx" "${flags[@]}" -DRB_REQUIRE_ALL -isystem "$inc" tests/amd/conformance.cpp
echo "ok    conformance.cpp vs ROCm $(ver "$inc") headers ($inc): $(count -DRB_REQUIRE_ALL -isystem "$inc") checks of hip.rs items hold"

if [ -f /usr/include/hip/hip_version.h ]; then
    "$cxx" "${flags[@]}" tests/amd/conformance.cpp
    echo "ok    conformance.cpp vs system ROCm $(ver /usr/include) headers (/usr/include): $(count) checks of hip.rs items hold"
else
    echo "skip  no system HIP headers (/usr/include/hip): only the ROCm $(ver "$inc") check ran"
fi
