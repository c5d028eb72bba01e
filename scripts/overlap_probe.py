#!/usr/bin/env python3
"""How much a decode layer's attention gains by running beside its k/v products (the lent GPU).

Per layer of LAYERS (distinct weights and caches, so nothing sits in L2): the k/v products as
one 8192x4096 f16 matrix-vector product (scripts/gemv_cold.py's kernel at the executor's
grouped shape: four vectors per lane, four warps per row, 128 threads) and the one-row decode
attention (kernels/flash_attention.hip's rb_fa_dec_f16_d128_r1, 32 heads of 128 against SK
keys, the splits' last block merging). Captured in CUDA graphs: each alone, one after the
other, and the two on forked streams (an upper bound for a fused or early-launched form).
Also the q product alone (4096x4096), the q/k/v product (12288x4096) then the attention (the
executor's order), and the q product then the attention on one stream beside the k/v product
on another (the "split attention" form: the attention needs only q, the k/v products need
nothing of it). Prints microseconds per layer.

    python3 scripts/overlap_probe.py [--sk 2048] [--layers 8]

H200, 2026-11-30 (attention: 128 registers, four blocks per SM fill the register file), us per
layer at the library's 16 key splits (4 blocks per SM) / 8 splits (2 per SM):
attention alone 14.31 / 14.85, k/v product alone 19.00 / 19.00, q alone 11.47 / 11.42,
k/v then attention 33.49 / 34.10, the two forked 28.46 / 26.75, q/k/v then attention
40.88 / 41.53, q then attention beside k/v 39.19 / 42.71. The split attention's bound is
1.7 us a layer (13.6 us a step of 1030): the q -> attention chain (25.8 us) is the critical
path, and the attention's four blocks per SM leave no room for the products' blocks. Not
built.
"""
import argparse
import math
import os
import sys

import cupy as cp
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_probe  # noqa: E402

H, HD = 32, 128

GEMV = r'''
#include <cuda_fp16.h>
struct alignas(16) v16 { unsigned int w[4]; };
__device__ __forceinline__ v16 ldnc(const v16* p) {
  v16 r;
  asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3]) : "l"(p));
  return r;
}
__device__ __forceinline__ float dot8(const v16& a, const v16& b) {
  float s = 0.f;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    float2 fa = __half22float2(*(const __half2*)&a.w[j]);
    float2 fb = __half22float2(*(const __half2*)&b.w[j]);
    s += fa.x * fb.x + fa.y * fb.y;
  }
  return s;
}
// one row per block of 4 warps, 4 vectors per lane in flight
extern "C" __global__ void kv(const __half* W, const __half* x, __half* y, int m, int k) {
  __shared__ float part[4];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int row = blockIdx.x;
  const int kvn = k / 8;
  const v16* xv = (const v16*)x;
  float acc = 0.f;
  for (int base = w * 128 + lane; base < kvn; base += 512) {
    v16 a[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) if (base + u * 32 < kvn) a[u] = ldnc((const v16*)(W + (long long)row * k) + base + u * 32);
#pragma unroll
    for (int u = 0; u < 4; ++u) if (base + u * 32 < kvn) acc += dot8(a[u], xv[base + u * 32]);
  }
  for (int d = 16; d > 0; d >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, d);
  if (lane == 0) part[w] = acc;
  __syncthreads();
  if (threadIdx.x == 0) y[row] = __float2half(part[0] + part[1] + part[2] + part[3]);
}
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sk", type=int, default=2048)
    ap.add_argument("--layers", type=int, default=8)
    ap.add_argument("--reps", type=int, default=4)
    a = ap.parse_args()
    dev = torch.device("cuda")
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    L, sk = a.layers, a.sk
    g = torch.Generator(device=dev).manual_seed(0)
    f16 = torch.float16
    q = [torch.randn(1, H, 1, HD, device=dev, dtype=f16, generator=g) for _ in range(L)]
    k = [torch.randn(1, H, sk, HD, device=dev, dtype=f16, generator=g) * 0.5 for _ in range(L)]
    v = [torch.randn(1, H, sk, HD, device=dev, dtype=f16, generator=g) for _ in range(L)]
    W = [torch.randn(8192, 4096, device=dev, dtype=f16, generator=g) * 0.02 for _ in range(L)]
    Wq = [torch.randn(4096, 4096, device=dev, dtype=f16, generator=g) * 0.02 for _ in range(L)]
    W3 = [torch.randn(12288, 4096, device=dev, dtype=f16, generator=g) * 0.02 for _ in range(L)]
    x = torch.randn(4096, device=dev, dtype=f16, generator=g)
    y = [torch.empty(12288, device=dev, dtype=f16) for _ in range(L)]
    kname = "rb_fa_dec_f16_d128_r1"
    src = os.path.join(attn_probe.ROOT, "kernels", "flash_attention.hip")
    afn = cp.RawModule(code=attn_probe.source(src, kname),
                       options=("--gpu-architecture=sm_90", "--std=c++17")).get_function(kname)
    gfn = cp.RawModule(code=GEMV, options=("--std=c++17", "-arch=sm_90")).get_function("kv")
    print(f"registers: attention {afn.num_regs}, product {gfn.num_regs}", flush=True)
    u64, i32, i64 = cp.uint64, cp.int32, cp.int64
    out = [torch.empty(1, H, 1, HD, device=dev, dtype=f16) for _ in range(L)]
    res = {}
    for per_cu in (4, 2):
        nsplit = max(1, min(per_cu * sms // H, math.ceil(sk / 64)))
        rnd = 4 * 2 * 4
        kps = math.ceil(math.ceil(sk / nsplit) / rnd) * rnd
        nsplit = math.ceil(sk / kps)
        po = [torch.empty(H * nsplit * HD, device=dev, dtype=torch.float32) for _ in range(L)]
        pml = [torch.empty(H * nsplit * 2, device=dev, dtype=torch.float32) for _ in range(L)]
        cnt = [torch.zeros(H, device=dev, dtype=torch.int32) for _ in range(L)]

        def attn(i):
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                afn((H, nsplit, 1), (128, 1, 1), (
                    u64(q[i].data_ptr()), u64(k[i].data_ptr()), u64(v[i].data_ptr()),
                    u64(out[i].data_ptr()), u64(0), u64(po[i].data_ptr()), u64(pml[i].data_ptr()),
                    i32(1), i32(1), i32(1), i64(1), i64(sk), i32(HD), i32(HD),
                    cp.float32(1 / math.sqrt(HD)), i32(0), u64(0), i32(0), u64(1), u64(0), u64(0),
                    u64(0), u64(0), i32(nsplit), i64(kps), u64(cnt[i].data_ptr()), u64(0), i32(1)))

        def prod(i):
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                gfn((8192,), (128,), (u64(W[i].data_ptr()), u64(x.data_ptr()),
                                      u64(y[i].data_ptr()), i32(8192), i32(4096)))

        def prodq(i):
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                gfn((4096,), (128,), (u64(Wq[i].data_ptr()), u64(x.data_ptr()),
                                      u64(y[i].data_ptr()), i32(4096), i32(4096)))

        def prod3(i):
            with cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream):
                gfn((12288,), (128,), (u64(W3[i].data_ptr()), u64(x.data_ptr()),
                                       u64(y[i].data_ptr()), i32(12288), i32(4096)))

        side = torch.cuda.Stream()

        def qfirst(i):
            main_s = torch.cuda.current_stream()
            side.wait_stream(main_s)
            prodq(i)
            attn(i)
            with torch.cuda.stream(side):
                prod(i)
            main_s.wait_stream(side)

        def both(i):
            main_s = torch.cuda.current_stream()
            side.wait_stream(main_s)
            attn(i)
            with torch.cuda.stream(side):
                prod(i)
            main_s.wait_stream(side)

        bodies = {
            "attention alone": lambda: [attn(i) for i in range(L)],
            "kv product alone": lambda: [prod(i) for i in range(L)],
            "product then attention": lambda: [(prod(i), attn(i)) for i in range(L)],
            "forked (concurrent)": lambda: [both(i) for i in range(L)],
            "qkv product then attention": lambda: [(prod3(i), attn(i)) for i in range(L)],
            "q, attention | kv forked": lambda: [qfirst(i) for i in range(L)],
            "q product alone": lambda: [prodq(i) for i in range(L)],
        }
        for name, body in bodies.items():
            us, _ = attn_probe.graph_time(body, a.reps, L)
            res[(per_cu, name)] = us
            print(f"per_cu={per_cu} split={nsplit:3d} {name:26s} {us:8.2f} us/layer", flush=True)
        ref = torch.nn.functional.scaled_dot_product_attention(q[0].float(), k[0].float(), v[0].float())
        print(f"  attention maxerr {(out[0].float() - ref).abs().max().item():.2e}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
