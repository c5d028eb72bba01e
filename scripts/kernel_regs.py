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
import os

import cupy as cp

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def prepare(path):
    """The source with the library's headers pasted in, as jit::prepare makes it for CUDA."""
    heads = {
        '#include "common.h"': "common.h",
        '#include "rows.h"': "rows.h",
    }
    out = []
    for line in open(path).read().splitlines():
        t = line.strip()
        if t in heads:
            text = open(os.path.join(ROOT, "kernels", heads[t])).read()
            out.extend(x for x in text.splitlines() if x.strip() != "#pragma once")
        elif t in ("#include <hip/hip_runtime.h>", '#include "hip/hip_runtime.h"'):
            out.append("")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


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
