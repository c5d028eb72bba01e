#!/usr/bin/env bash
# Runs kernels/data.hip's topk, scatter, arange and integer cumsum kernels on the CPU under the emulation of
# the GPU execution model in tests/kernel_emu/prelude.h (a host thread per GPU thread,
# barriers for __syncthreads), with the grids, blocks and arguments src/device/gpu/data.rs
# uses, and checks them against plain references (tests/kernel_emu/data_ops.cpp). No GPU
# needed; it checks the bitonic network, the selection path, the per-fiber scatter walk and
# the bad-index reporting, not the real instructions (the device suite does that on a GPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${RB_EMU_OUT:-$root/build/data-emu}
cxx=${CXX_EMU:-$(command -v clang++-15 || command -v clang++ || echo /usr/lib/llvm-15/bin/clang++)}
mkdir -p "$out"
python3 - "$root" "$out" <<'PY'
import sys
root, out = sys.argv[1], sys.argv[2]
src = open(f"{root}/kernels/data.hip").read()
common = open(f"{root}/kernels/common.h").read().replace("#pragma once", "")
# Host code: the integer half conversions instead of the PTX ones.
common = common.replace("#if defined(RB_CUDA)\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {",
                        "#if 0\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {")
open(f"{out}/data_host.h", "w").write(src.replace('#include "common.h"', common))
PY
"$cxx" -std=c++20 -O1 -w -I "$out" -I "$root/tests/kernel_emu" \
    "$root/tests/kernel_emu/data_ops.cpp" -o "$out/data_ops" -lpthread
"$out/data_ops"
