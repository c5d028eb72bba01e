#!/usr/bin/env python3
"""Times the decode attention kernel (kernels/flash_attention.hip's rb_fa_dec_*) by itself.

A batch-1 decode step's attention as the Llama anchor has it (32 heads of 128, f16, a KV
cache of --sk keys, --layers distinct caches so that L2 holds none of them), compiled from
the repository's kernel sources by CuPy's NVRTC under each SET of defines, launched with the
library's arguments (one query row per head: the `_r1` kernel; the splits' last block
merges, as inside a device graph), --layers launches per replay of a CUDA graph. Prints per
set: the microseconds per launch (graph replay / launches), the kernel's own duration from
torch.profiler, the bytes of K and V over that, and the largest difference from PyTorch's
scaled_dot_product_attention. Beside them: PyTorch's SDPA in the same kind of graph, and a
plain read of the same K and V (a 16-byte-vector sum, many blocks): the bandwidth a kernel
that reads each byte once can have at this size.

    python3 scripts/attn_probe.py [--sk 2048] [--layers 8] "SET" ...
A SET is words NAME=VALUE (compile defines, e.g. RB_FA_DEC_U1=8) and split=N (key splits
per head; default the library's plan: 4 blocks per SM, at least 64 keys a split),
kernel=NAME (default rb_fa_dec_f16_d128_r1), block=THREADS (128), nomerge=1 (the splits'
partials only: the merge's cost by difference) and fresh=P (the kernel's `fresh` position:
row P loaded after the wait, the rest of the first round before; no kernel runs before it
here, so this checks the results, not the overlap). An empty SET: the defaults.
"""

import argparse
import json
import math
import os
import sys

import cupy as cp
import torch

H, HD = 32, 128
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def source(path, kname):
    """The kernel file with common.h pasted in and only `kname` instantiated (fast compiles)."""
    text = open(path).read()
    common = open(os.path.join(ROOT, "kernels", "common.h")).read()
    keep = []
    for line in text.replace('#include "common.h"', common).splitlines():
        if line.startswith(("RB_FA_FWD(", "RB_FA_BWD(", "RB_FA_BWD_DOT(", "RB_FA_COMBINE(")):
            continue
        if line.startswith(("RB_FA_DEC(", "RB_FA_DEC_C8(")) and f"({kname}," not in line:
            continue
        keep.append(line)
    return "\n".join(keep) + "\n"


READ_SRC = r"""
extern "C" __global__ void rd(const uint4* a, const uint4* b, unsigned long long n, unsigned* o) {
  unsigned acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    uint4 x = a[i], y = b[i];
    acc ^= x.x ^ x.y ^ x.z ^ x.w ^ y.x ^ y.y ^ y.z ^ y.w;
  }
  if (acc == 0x12345678u) o[0] = acc;
}
"""


def graph_time(fn, reps, launches):
    """Microseconds per launch of `fn` (which makes `launches` launches) in a CUDA graph."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    for _ in range(5):
        g.replay()
    torch.cuda.synchronize()
    best = []
    for _ in range(5):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(10):
            g.replay()
        b.record()
        b.synchronize()
        best.append(a.elapsed_time(b) * 1000.0 / 10 / (reps * launches))
    best.sort()
    return best[len(best) // 2], g


def kernel_us(g, names):
    """Average CUDA duration (us) of kernels whose name contains one of `names` over a replay."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            g.replay()
        torch.cuda.synchronize()
    tot, cnt = 0.0, 0
    for e in prof.events():
        if e.device_type.name == "CUDA" and any(n in e.name for n in names):
            tot += e.time_range.end - e.time_range.start
            cnt += 1
    return tot / cnt if cnt else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sk", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--src", default=os.path.join(ROOT, "kernels", "flash_attention.hip"))
    ap.add_argument("--sms", type=int, default=0)
    ap.add_argument("sets", nargs="*")
    a = ap.parse_args()
    dev = torch.device("cuda")
    sms = a.sms or torch.cuda.get_device_properties(0).multi_processor_count
    L, sk = a.layers, a.sk
    gen = torch.Generator(device=dev).manual_seed(0)
    q = [torch.randn(1, H, 1, HD, device=dev, dtype=torch.float16, generator=gen) for _ in range(L)]
    k = [torch.randn(1, H, sk, HD, device=dev, dtype=torch.float16, generator=gen) * 0.5 for _ in range(L)]
    v = [torch.randn(1, H, sk, HD, device=dev, dtype=torch.float16, generator=gen) for _ in range(L)]
    ref = torch.nn.functional.scaled_dot_product_attention(q[0].float(), k[0].float(), v[0].float())
    nbytes = 2 * H * sk * HD * 2
    results = []

    def put(name, us, kus, err=None):
        r = dict(name=name, us=us, kernel_us=kus, gbps=nbytes / (kus * 1e3), err=err)
        results.append(r)
        print(f"{name:58s} {us:8.2f} us/launch  kernel {kus:7.2f} us  {r['gbps']:7.0f} GB/s"
              + ("" if err is None else f"  maxerr {err:.2e}"), flush=True)

    # PyTorch's SDPA.
    outs = [torch.empty_like(x) for x in q]

    def tsdpa():
        for i in range(L):
            outs[i].copy_(torch.nn.functional.scaled_dot_product_attention(q[i], k[i], v[i]))

    us, g = graph_time(tsdpa, a.reps, L)
    put("torch_sdpa", us, kernel_us(g, ["flash", "fmha", "attention", "Attention", "splitKV"]),
        (outs[0].float() - ref).abs().max().item())
    # A plain read of the same bytes.
    rd = cp.RawModule(code=READ_SRC, options=("--std=c++17",)).get_function("rd")
    sink = cp.zeros(1, dtype=cp.uint32)
    u64 = cp.uint64
    n16 = H * sk * HD * 2 // 16
    for blocks_per_sm in (4, 8, 16):
        grid = sms * blocks_per_sm

        def tread():
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                for i in range(L):
                    rd((grid,), (256,), (u64(k[i].data_ptr()), u64(v[i].data_ptr()), u64(n16), sink))

        us, g = graph_time(tread, a.reps, L)
        put(f"read_kv_{blocks_per_sm}_per_sm", us, kernel_us(g, ["rd"]))

    for st in a.sets or [""]:
        defs, split, kname, merge, block = [], None, "rb_fa_dec_f16_d128_r1", True, 128
        fresh = None
        for w in st.split():
            n, _, val = w.partition("=")
            if n == "split":
                split = int(val)
            elif n == "nomerge":
                merge = False
            elif n == "block":
                block = int(val)
            elif n == "fresh":
                fresh = torch.tensor([int(val)], device=dev, dtype=torch.int64)
            elif n == "kernel":
                kname = val
            else:
                defs.append(f"-D{n}={val}")
        u1 = 4
        for d in defs:
            if d.startswith("-DRB_FA_DEC_U1="):
                u1 = int(d.split("=")[1])
        per_cu = 4
        for d in defs:
            if d.startswith("-DRB_FA_DEC_PER_CU="):
                per_cu = int(d.split("=")[1])
        rnd = block // 32 * 2 * u1
        nsplit = split or max(1, min(per_cu * sms // H, math.ceil(sk / 64)))
        kps = math.ceil(math.ceil(sk / nsplit) / rnd) * rnd
        nsplit = math.ceil(sk / kps)
        try:
            mod = cp.RawModule(code=source(a.src, kname),
                               options=("--gpu-architecture=sm_90", "--std=c++17", *defs))
            fn = mod.get_function(kname)
            print(f"[{st}] regs {fn.num_regs} local {fn.local_size_bytes} B", flush=True)
        except Exception as e:  # a variant that does not compile
            print(f"[{st}] compile failed: {str(e)[:2000]}", flush=True)
            continue
        out = [torch.empty(1, H, 1, HD, device=dev, dtype=torch.float16) for _ in range(L)]
        po = [torch.empty(H * nsplit * HD, device=dev, dtype=torch.float32) for _ in range(L)]
        pml = [torch.empty(H * nsplit * 2, device=dev, dtype=torch.float32) for _ in range(L)]
        cnt = [torch.zeros(H, device=dev, dtype=torch.int32) for _ in range(L)]
        scale = 1.0 / math.sqrt(HD)
        i32, i64 = cp.int32, cp.int64

        def tdec():
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                for i in range(L):
                    fn((H, nsplit, 1), (block, 1, 1), (
                        u64(q[i].data_ptr()), u64(k[i].data_ptr()), u64(v[i].data_ptr()),
                        u64(out[i].data_ptr()), u64(0), u64(po[i].data_ptr()), u64(pml[i].data_ptr()), i32(1), i32(1), i32(1), i64(1), i64(sk),
                        i32(HD), i32(HD), cp.float32(scale), i32(0), u64(0), i32(0), u64(1), u64(0),
                        u64(0), u64(0), u64(0), i32(nsplit), i64(kps), u64(cnt[i].data_ptr() if merge else 0),
                        u64(0 if fresh is None else fresh.data_ptr()), i32(1)))

        tdec()
        torch.cuda.synchronize()
        err = (out[0].float() - ref).abs().max().item() if merge else None
        us, g = graph_time(tdec, a.reps, L)
        put(f"dec [{st}] split={nsplit} kps={kps}", us, kernel_us(g, [kname]), err)
    if os.environ.get("OUT"):
        with open(os.path.join(os.environ["OUT"], "attn_probe.json"), "a") as f:
            f.write(json.dumps(results) + "\n")


if __name__ == "__main__":
    sys.exit(main())
