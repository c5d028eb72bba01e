#!/usr/bin/env python3
"""Compiles every kernels/*.hip with NVRTC for an NVIDIA architecture, as the runtime does
(scripts/kernel_source.py's prepare, jit.rs's for CUDA; --std=c++17), to PTX, and
fails on any error. No GPU needed: only libnvrtc (the pip wheel nvidia-cuda-nvrtc-cu12 has
it; NVRTC=path/to/libnvrtc.so.12 names one).

    python3 scripts/check-nvrtc.py [--arch compute_90] [-D NAME=VALUE ...] [FILE ...]
"""

import argparse
import ctypes
import glob
import os
import sys

from kernel_source import ROOT, prepare


def find_nvrtc():
    if os.environ.get("NVRTC"):
        return os.environ["NVRTC"]
    for base in sys.path + ["/tmp/nvrtc/x"]:
        hit = glob.glob(os.path.join(base, "nvidia/cuda_nvrtc/lib/libnvrtc.so.*"))
        if hit:
            return hit[0]
    return "libnvrtc.so"


def summarize_regs(log):
    """ptxas -v's lines as 'kernel: N registers, S bytes spilled, M bytes shared'."""
    out, name = [], None
    for line in log.splitlines():
        if "Compiling entry function" in line:
            name = line.split("'")[1]
        elif "Used" in line and name:
            regs = line.split("Used")[1].split("registers")[0].strip()
            smem = line.split("registers")[1].strip(" ,")
            out.append(f"  {name}: {regs} registers, {smem}")
        elif "spill" in line and name and out and " 0 bytes spill stores" not in line:
            out[-1] += f" [{line.strip()}]"
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="compute_90")
    ap.add_argument("-D", action="append", default=[])
    ap.add_argument("-X", action="append", default=[], help="a raw NVRTC option (e.g. -X=--ptxas-options=-v)")
    ap.add_argument("--regs", action="store_true", help="print each kernel's registers and spills (sm_ arch)")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    lib = ctypes.CDLL(find_nvrtc())
    files = a.files or sorted(glob.glob(os.path.join(ROOT, "kernels/*.hip")))
    failed = 0
    for f in files:
        src = prepare(f).encode()
        prog = ctypes.c_void_p()
        r = lib.nvrtcCreateProgram(ctypes.byref(prog), src, os.path.basename(f).encode(), 0, None, None)
        if r:
            sys.exit(f"nvrtcCreateProgram: {r}")
        opts = [f"--gpu-architecture={a.arch}".encode(), b"--std=c++17"] + [f"-D{d}".encode() for d in a.D] + [x.encode() for x in a.X]
        if a.regs:
            opts.append(b"--ptxas-options=-v")
        arr = (ctypes.c_char_p * len(opts))(*opts)
        r = lib.nvrtcCompileProgram(prog, len(opts), arr)
        n = ctypes.c_size_t()
        lib.nvrtcGetProgramLogSize(prog, ctypes.byref(n))
        log = ctypes.create_string_buffer(n.value)
        lib.nvrtcGetProgramLog(prog, log)
        text = log.value.decode(errors="replace").strip()
        if a.regs and r == 0:
            text = summarize_regs(text)
        print(f"{'ok  ' if r == 0 else 'FAIL'}  {os.path.basename(f)}" + (f"\n{text}" if text else ""))
        failed += r != 0
        lib.nvrtcDestroyProgram(ctypes.byref(prog))
    print(f"check-nvrtc: {len(files) - failed} compiled, {failed} failed ({a.arch}, {' '.join(a.D)})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
