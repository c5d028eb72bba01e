#!/usr/bin/env bash
# Runs kernels/norm.hip's channels-last batch_norm kernels on the CPU under the emulation of
# tests/kernel_emu/prelude.h (a host thread per GPU thread; __syncthreads a barrier), in the
# sequence src/device/gpu/norm.rs launches them, against a float64 reference
# (tests/kernel_emu/bn_nhwc.cpp). No GPU needed; it checks the indexing, the partial
# combination and the semantics, not the real instructions (the device suite does that).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${RB_EMU_OUT:-$root/build/bn-emu}
cxx=${CXX_EMU:-$(command -v clang++-15 || command -v clang++ || command -v g++)}
mkdir -p "$out"
python3 - "$root" "$out" <<'PY'
import sys
root, out = sys.argv[1], sys.argv[2]
src = open(f"{root}/kernels/norm.hip").read()
common = open(f"{root}/kernels/common.h").read().replace("#pragma once", "")
# Host code: the integer half conversions instead of the PTX ones; no mma/ldmatrix asm.
common = common.replace("#if defined(RB_CUDA)\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {",
                        "#if 0\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {")
open(f"{out}/norm_host.h", "w").write(src.replace('#include "common.h"', common))
PY
"$cxx" -std=c++20 -O1 -w -I "$out" -I "$root/tests/kernel_emu" -I "$root/kernels" "$root/tests/kernel_emu/bn_nhwc.cpp" \
    -o "$out/bn_emu" -lpthread
"$out/bn_emu"
