#!/usr/bin/env bash
# Compiles every kernels/*.hip offline for AMD with Debian's hipcc (clang-15, HIP 5.2):
#   hipcc --genco --offload-arch=gfx90a,gfx940,gfx1030
# and fails on any error.  Each output code object must hold a bundle for every target.
#
# The runtime compiles these sources with hiprtc, which supplies the HIP device environment
# (blockIdx, warpSize, __shfl_*, ...) implicitly; offline, `-include hip/hip_runtime.h` gives
# the same environment (a source that includes it itself is unaffected: include guards).
#
# Env: KERNELS_DIR (default kernels/), HIPCC (default hipcc), RB_AMD_ARCHS (default
#      gfx90a,gfx940,gfx1030), RB_KERNEL_FLAGS (extra flags, e.g. the runtime's defines).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
kdir=${KERNELS_DIR:-$root/kernels}
hipcc=${HIPCC:-hipcc}
archs=${RB_AMD_ARCHS:-gfx90a,gfx940,gfx1030}
out=${RB_KERNEL_OUT:-$root/build/amd-kernels}
mkdir -p "$out"

if ! command -v "$hipcc" >/dev/null; then
    echo "check-kernels: $hipcc not found (run scripts/install-hipcc.sh)" >&2
    exit 1
fi
bundler=""
for b in clang-offload-bundler /usr/lib/llvm-15/bin/clang-offload-bundler; do
    if command -v "$b" >/dev/null 2>&1; then bundler=$b; break; fi
done

shopt -s nullglob
files=("$kdir"/*.hip)
if [ ${#files[@]} -eq 0 ]; then
    echo "check-kernels: no .hip files in $kdir" >&2
    exit 1
fi
# hipcc's perl driver asks rocm_agent_enumerator for the local GPU only when no
# --offload-arch is given; silence its traceback on GPU-less machines anyway.
export ROCM_TARGET_LST=${ROCM_TARGET_LST:-/dev/null}
read -r -a extra <<< "${RB_KERNEL_FLAGS:-}"
# Compile in parallel (one job per core, at most RB_KERNEL_JOBS), report in file order.
jobs=${RB_KERNEL_JOBS:-$(nproc)}
compile() {  # file -> $out/<name>.{co,log,secs,rc}
    local f=$1 name
    name=$(basename "$f" .hip)
    rm -f "$out/$name.co"
    local start rc=0
    start=$(date +%s.%N)
    "$hipcc" --genco --offload-arch="$archs" -std=c++17 -O3 -Wall \
        -include hip/hip_runtime.h -I "$kdir" "${extra[@]}" "$f" -o "$out/$name.co" >"$out/$name.log" 2>&1 || rc=$?
    [ -s "$out/$name.co" ] || rc=${rc/#0/1}
    awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }' > "$out/$name.secs"
    echo "$rc" > "$out/$name.rc"
}
running=0
for f in "${files[@]}"; do
    compile "$f" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
wait

pass=0 fail=0
for f in "${files[@]}"; do
    name=$(basename "$f" .hip)
    obj="$out/$name.co" log="$out/$name.log"
    if [ "$(cat "$out/$name.rc")" = 0 ]; then
        targets=""
        if [ -n "$bundler" ]; then
            targets=$("$bundler" --list --type=o --input="$obj" | grep amdgcn | sed 's/.*--//' | sort | tr '\n' ' ')
            for a in ${archs//,/ }; do
                if ! grep -qw "$a" <<< "$targets"; then
                    echo "FAIL  $name.hip: code object lacks $a (has: $targets)"
                    fail=$((fail + 1))
                    continue 2
                fi
            done
        fi
        warn=$(grep -c 'warning:' "$log" || true)
        echo "ok    $name.hip -> $(stat -c %s "$obj") bytes, targets: ${targets:-?}($(cat "$out/$name.secs")s, $warn warnings)"
        if [ "$warn" -gt 0 ]; then sed 's/^/      /' "$log"; fi
        pass=$((pass + 1))
    else
        echo "FAIL  $name.hip:"
        sed 's/^/      /' "$log"
        fail=$((fail + 1))
    fi
done
echo "check-kernels: $pass compiled, $fail failed ($hipcc --genco --offload-arch=$archs, $($hipcc --version 2>/dev/null | grep -m1 -i 'hip version' || true))"
[ "$fail" -eq 0 ]
