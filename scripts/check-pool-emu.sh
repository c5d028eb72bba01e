#!/usr/bin/env bash
# Runs kernels/pool.hip's pooling kernels on the CPU (tests/kernel_emu/pool.cpp: each GPU
# thread of a launch in turn; these kernels share nothing between threads) and checks them
# against a float64 reference of PyTorch's rules: the forward fast paths and generic
# forward, the backward gathers (max pooling's arg-max pass; fast 2D/1D and generic;
# channels-first and channels-last; 32- and 64-bit indices), max pooling with indices and
# its scatter (both layouts), adaptive average and max pooling (forward, backward gathers,
# the bad-index report; both layouts), f32/f16/bf16, NaN and ties; and the f64 convolutions
# (rb_conv_*_f64: forward with bias/relu, data, weight and bias gradients) and f64 max/avg
# pooling (rb_pool_fwd_f64, rb_pool_bwd_f64), f64 max pooling with indices (both layouts,
# PyTorch's indices) and its in-order scatter (rb_pool_bwd_idx_f64, a bad index), f64
# adaptive average and max pooling (the adaptive kernels instantiated for double).
# No GPU needed; it checks the indexing and the semantics, not the real instructions (the
# device suite does that on a GPU).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${RB_EMU_OUT:-$root/build/pool-emu}
cxx=${CXX_EMU:-$(command -v clang++-15 || command -v clang++ || command -v g++)}
mkdir -p "$out"
python3 - "$root" "$out" <<'PY'
import sys
root, out = sys.argv[1], sys.argv[2]
src = open(f"{root}/kernels/pool.hip").read()
common = open(f"{root}/kernels/common.h").read().replace("#pragma once", "")
# Host code: the integer half conversions instead of the PTX ones.
common = common.replace("#if defined(RB_CUDA)\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {",
                        "#if 0\nRB_DEVICE float rb_half_to_f32(rb_u16 h) {")
open(f"{out}/pool_host.h", "w").write(src.replace('#include "common.h"', common))
PY
"$cxx" -std=c++20 -O1 -w -I "$out" "$root/tests/kernel_emu/pool.cpp" -o "$out/pool_emu"
"$out/pool_emu"
