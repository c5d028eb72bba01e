#!/usr/bin/env python3
"""Registers and local memory of built-in kernels, as NVRTC compiles them for the GPU here.

Prepares a source as the library does (src/device/gpu/jit.rs `prepare`: kernels/common.h and
kernels/rows.h pasted in, the HIP runtime header dropped), compiles it with CuPy's NVRTC for
the device's architecture (defines as `-DNAME=VALUE` words), and prints each named kernel's
registers per thread, local (spill) bytes and the blocks of `--block` threads that fit on one
SM by registers. A quick check of a kernel change's occupancy before timing it.

    python3 scripts/kernel_regs.py kernels/blas.hip rb_gemv_grp_f16_v rb_gemv_grp_f16_vg \
        [-D NAME=VALUE ...] [--block 128]
"""

import argparse

import cupy as cp
from kernel_source import prepare


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("kernels", nargs="+")
    ap.add_argument("-D", action="append", default=[], help="NAME=VALUE compile define")
    ap.add_argument("--block", type=int, default=128)
    a = ap.parse_args()
    dev = cp.cuda.Device()
    cc = dev.compute_capability
    opts = (f"--gpu-architecture=sm_{cc}", "--std=c++17", *(f"-D{d}" for d in a.D))
    mod = cp.RawModule(code=prepare(a.source), options=opts)
    regs_per_sm = dev.attributes["MaxRegistersPerMultiprocessor"]
    for k in a.kernels:
        fn = mod.get_function(k)
        per_block = fn.num_regs * a.block
        fit = regs_per_sm // per_block if per_block else 0
        print(f"{k}: {fn.num_regs} registers, {fn.local_size_bytes} B local, "
              f"{fit} blocks of {a.block} by registers", flush=True)


if __name__ == "__main__":
    main()
