#!/usr/bin/env bash
# Every symbol hip.rs's dyn_symbols! tables declare is exported by the ROCm 6.4 libraries of
# Debian unstable (fetched with the private apt configuration of scripts/rocm-apt.sh into
# build/, unpacked with dpkg -x, read with `nm -D`; nothing is loaded or installed).  This
# complements tests/amd_loader.rs, which dlopens the HIP 5.2 runtime installed on the system:
# together they cover the HIP 5 and HIP 6 sonames the loader searches.
#   REQUIRED symbols must be exported; OPTIONAL ones are listed when absent.
# rocBLAS (librocblas4, ~280 MB) is checked only with RB_AMD_EXPORTS_ROCBLAS=1, hipBLASLt
# (libhipblaslt1, ~160 MB) only with RB_AMD_EXPORTS_HIPBLASLT=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/rocm-apt.sh
source "$here/rocm-apt.sh"
hip_rs="$RB_ROOT/src/device/gpu/vendor/hip.rs"

# library (from the symbols' prefix) -> package and library file glob (inside the package)
declare -A PKG=([hip]=libamdhip64-6 [hiprtc]=libhiprtc6 [rocblas]=librocblas4 [miopen]=libmiopen1 [nccl]=librccl1 [hipblaslt]=libhipblaslt1)
declare -A LIB=([hip]='libamdhip64.so.6*' [hiprtc]='libhiprtc.so.6*' [rocblas]='librocblas.so.4*' [miopen]='libMIOpen.so.1*' [nccl]='librccl.so.1*' [hipblaslt]='libhipblaslt.so.1*')
libof() { case "$1" in hiprtc*) echo hiprtc ;; hipblasLt*) echo hipblaslt ;; hip*) echo hip ;; rocblas*) echo rocblas ;; miopen*) echo miopen ;; nccl*) echo nccl ;; *) echo "?" ;; esac; }

# "table kind symbol" lines from hip.rs
entries=$(sed 's|//.*||' "$hip_rs" | awk '
    /dyn_symbols!/ { t=1; next }
    t && /pub struct/ { for (i=1;i<=NF;i++) if ($i=="struct") { name=$(i+1); sub(/\{.*/,"",name) } next }
    t && /^}/ { t=0; next }
    t && $1 ~ /^(req|opt)$/ { s=$2; sub(/:.*/,"",s); print name, $1, s }')
[ -n "$entries" ] || { echo "check-amd-exports: no dyn_symbols! entries found in $hip_rs" >&2; exit 1; }

rb_apt_setup
rb_apt_update
fail=0
for table in $(awk '{print $1}' <<< "$entries" | uniq); do
    lib=$(libof "$(awk -v t="$table" '$1==t {print $3; exit}' <<< "$entries")")
    pkg=${PKG[$lib]:-}
    if [ -z "$pkg" ]; then
        echo "FAIL  table $table: no Debian package known for it (add it to PKG/LIB in $0)"
        fail=1; continue
    fi
    if [ "$lib" = rocblas ] && [ "${RB_AMD_EXPORTS_ROCBLAS:-0}" != 1 ]; then
        echo "skip  $table ($pkg is ~280 MB; RB_AMD_EXPORTS_ROCBLAS=1 checks it)"
        continue
    fi
    if [ "$lib" = hipblaslt ] && [ "${RB_AMD_EXPORTS_HIPBLASLT:-0}" != 1 ]; then
        echo "skip  $table ($pkg is ~160 MB; RB_AMD_EXPORTS_HIPBLASLT=1 checks it)"
        continue
    fi
    deb=$(rb_apt_download "$pkg")
    dir="$RB_APT_DIR/x/$(basename "$deb" .deb)"
    [ -d "$dir" ] || { mkdir -p "$dir.tmp" && dpkg -x "$deb" "$dir.tmp" && mv "$dir.tmp" "$dir"; }
    so=$(find "$dir" -name "${LIB[$lib]}" -type f | head -n1)
    [ -n "$so" ] || { echo "FAIL  $table: ${LIB[$lib]} not in $pkg"; fail=1; continue; }
    exported=$(nm -D --defined-only "$so" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
    req_missing=() opt_missing=() n=0
    while read -r _ kind sym; do
        n=$((n + 1))
        if ! grep -qxF "$sym" <<< "$exported"; then
            if [ "$kind" = req ]; then req_missing+=("$sym"); else opt_missing+=("$sym"); fi
        fi
    done < <(awk -v t="$table" '$1==t' <<< "$entries")
    if [ ${#req_missing[@]} -gt 0 ]; then
        echo "FAIL  $table: $(basename "$so") ($pkg $(basename "$deb" | cut -d_ -f2)) lacks REQUIRED ${req_missing[*]}"
        fail=1
    else
        echo "ok    $table: $(basename "$so") ($pkg $(basename "$deb" | cut -d_ -f2)) exports all $n declared symbols${opt_missing:+ except optional ${opt_missing[*]}}"
    fi
done
exit $fail
