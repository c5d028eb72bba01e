#!/usr/bin/env bash
# Fetches the real ROCm development headers from Debian (suite unstable by default: ROCm 6.4)
# into build/rocm-headers/ WITHOUT changing the system: a private apt configuration
# (scripts/rocm-apt.sh) whose one source is the system's own Debian mirror, `apt-get download`
# into build/apt/, and `dpkg -x` into build/rocm-headers/.  Idempotent: lists are refreshed at
# most once a day, .debs are kept, and the unpack is redone only when the set of .debs changes.
#
# Prints, last, the include directory (build/rocm-headers/usr/include).
#
# Env: RB_APT_SUITE (default unstable), RB_DEBIAN_MIRROR (override the mirror),
#      RB_APT_MAX_AGE (seconds between list refreshes, default 86400).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/rocm-apt.sh
source "$here/rocm-apt.sh"

# hip_runtime_api.h + hiprtc.h (libamdhip64-dev), rocblas.h (librocblas-dev), miopen.h
# (libmiopen-dev), rccl.h (librccl-dev); hsa/ and amd_comgr/ are what the HIP headers
# themselves include.
# hipblaslt.h (libhipblaslt-dev) with hipblas-common.h (libhipblas-common-dev).
PACKAGES=(libamdhip64-dev librocblas-dev libmiopen-dev librccl-dev libhsa-runtime-dev libamd-comgr-dev
          libhipblaslt-dev libhipblas-common-dev)
dest="$RB_ROOT/build/rocm-headers"

rb_apt_setup
rb_apt_update
mapfile -t debs < <(rb_apt_download "${PACKAGES[@]}")

stamp=$(for d in "${debs[@]}"; do basename "$d"; done | sort | tr '\n' ' ')
if [ ! -f "$dest/.stamp" ] || [ "$(cat "$dest/.stamp")" != "$stamp" ]; then
    rm -rf "$dest.tmp"
    mkdir -p "$dest.tmp"
    for d in "${debs[@]}"; do
        echo "fetch-rocm-headers: unpacking $(basename "$d")" >&2
        dpkg -x "$d" "$dest.tmp"
    done
    echo "$stamp" > "$dest.tmp/.stamp"
    rm -rf "$dest"
    mv "$dest.tmp" "$dest"
fi
for h in hip/hip_runtime_api.h hip/hiprtc.h rocblas/rocblas.h miopen/miopen.h rccl/rccl.h hipblaslt/hipblaslt.h; do
    if [ ! -f "$dest/usr/include/$h" ]; then
        echo "fetch-rocm-headers: $h missing from the unpacked packages" >&2
        exit 1
    fi
done
echo "fetch-rocm-headers: $(echo "$stamp" | wc -w) packages ($stamp) in $dest" >&2
echo "$dest/usr/include"
