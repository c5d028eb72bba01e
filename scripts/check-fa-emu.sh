#!/usr/bin/env bash
# Runs kernels/flash_attention.hip on the CPU under a small emulation of the GPU execution
# model (tests/kernel_emu/prelude.h: a host thread per GPU thread, barriers for
# __syncthreads and the warp shuffles, mma.sync m16n8k16 and MFMA 16x16x16 emulated from
# their documented fragment layouts) and checks the forward (with split-KV decoding), the
# one-row decoding kernel rb_fa_dec_* (its splits merged by rb_fa_combine_*, or by each
# unit's last block through counters, with and without the `fresh` position) and the
# backward against float64 references, for each of the kernels' code paths:
#   nv (sm_80+ mma.sync, warp 32), cdna (gfx90a MFMA, wave64), rdna (gfx1030 scalar, wave32).
# No GPU needed; it checks the tiling, masking, online softmax, GQA and fragment ownership
# logic, not the real instructions (the device suite does that on a GPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${RB_EMU_OUT:-$root/build/fa-emu}
cxx=${CXX_EMU:-$(command -v clang++-15 || command -v clang++ || echo /usr/lib/llvm-15/bin/clang++)}
mkdir -p "$out"
python3 - "$root" "$out" <<'PY'
import sys
root, out = sys.argv[1], sys.argv[2]
src = open(f"{root}/kernels/flash_attention.hip").read()
common = open(f"{root}/kernels/common.h").read().replace("#pragma once", "")
# Host code: the integer half conversions instead of the PTX ones, mma.sync emulated.
common = common.replace("#if defined(RB_CUDA)\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {",
                        "#if 0\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {")
common = common.replace("RB_DEVICE rb_u16 rb_f32_to_bfloat_arith(float f) {\n"
                        "#if defined(RB_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
                        "RB_DEVICE rb_u16 rb_f32_to_bfloat_arith(float f) {\n#if 0")
i = common.index("template <int H>\nRB_DEVICE void rb_mma_m16n8k16(")
j = common.index("// ldmatrix.sync", i)
common = (common[:i] + "template <int H>\nRB_DEVICE void rb_mma_m16n8k16(float* c, rb_u32 a0, "
          "rb_u32 a1, rb_u32 a2, rb_u32 a3, rb_u32 b0, rb_u32 b1) { emu_mma<H>(c, a0, a1, a2, a3, "
          "b0, b1); }\n" + common[j:])
i = common.index("template <bool TRANS> RB_DEVICE void rb_mma_ldsm_x4(")
j = common.index("#endif", i)
common = (common[:i] + "template <bool TRANS> RB_DEVICE void rb_mma_ldsm_x4(rb_u32* r, "
          "const rb_u16* row) { emu_ldsm<TRANS>(r, row); }\n" + common[j:])
open(f"{out}/fa_host.h", "w").write(src.replace('#include "common.h"', common))
PY
declare -A flags=(
    [nv]="-D__CUDA_ARCH__=800"
    [cdna]="-DEMU_W=64 -DEMU_CDNA -D__HIP__ -D__AMDGCN_WAVEFRONT_SIZE=64 -D__gfx90a__"
    [rdna]="-D__HIP__ -D__AMDGCN_WAVEFRONT_SIZE=32 -D__gfx1030__"
)
fail=0
for path in nv cdna rdna; do
    for t in fwd bwd; do
        read -r -a f <<< "${flags[$path]}"
        "$cxx" -std=c++20 -O1 -I "$out" -I "$root/tests/kernel_emu" "${f[@]}" \
            "$root/tests/kernel_emu/fa_$t.cpp" -o "$out/fa_${t}_$path" -lpthread
        for h in 0 1 2; do
            if "$out/fa_${t}_$path" "$h" > "$out/fa_${t}_${path}_$h.log" 2>&1; then
                echo "fa-emu $path $t dtype $h: ok ($(grep -c 'err\|rel' "$out/fa_${t}_${path}_$h.log") cases)"
            else
                echo "fa-emu $path $t dtype $h: FAILED"; cat "$out/fa_${t}_${path}_$h.log"; fail=1
            fi
        done
    done
done
exit $fail
