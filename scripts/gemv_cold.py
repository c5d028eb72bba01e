"""Decode matrix-vector variants over a whole Llama-7B-shaped step's weights (cold L2), on the
lent GPU, without a Rust build. y[out] = W[out, in] . x[in], f16, f32 accumulation.

The weights of LAYERS layers (q, k, v, o: 4096x4096; gate, up: 11008x4096; down: 4096x11008)
are distinct tensors, so every product streams its matrix from DRAM as in the real step (one
matrix repeated back to back sits in the 50 MB L2 and reads faster than memory). Each variant
runs the 7*LAYERS products captured in one CUDA graph; the figure is the graph's replay time
and the bytes of all the weights over it, beside PyTorch's F.linear chain captured the same
way and a device copy of 1 GiB.

Variant (R, U, S, B): R rows per warp group, U 16-byte loads in flight per lane and row, S
warps splitting one row's k (partial sums through shared memory), B threads per block.

    python3 scripts/gemv_cold.py [LAYERS]
"""
import statistics
import sys
import cupy as cp
import torch
import torch.nn.functional as F

LAYERS = int(sys.argv[1]) if len(sys.argv) > 1 else 8

SRC = r'''
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
// A block of B threads: (B/32)/S groups of S warps; a group computes R rows, its S warps
// interleaving k in 512-byte steps; U vectors per lane and row in flight.
template <int R, int U, int S>
__device__ void gemv(const __half* W, const __half* x, __half* y, int m, int k) {
  __shared__ float part[32][4];
  const int lane = threadIdx.x & 31;
  const int wib = threadIdx.x >> 5;
  const int grp = wib / S, sub = wib % S;
  const int groups = (blockDim.x >> 5) / S;
  const int row0 = (blockIdx.x * groups + grp) * R;
  const int kv = k / 8;
  const v16* xv = (const v16*)x;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.f;
  if (row0 < m) {
    for (int base = sub * 32 * U + lane; base < kv; base += 32 * U * S) {
      v16 a[R][U];
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int u = 0; u < U; ++u) {
          const int i = base + u * 32;
          const int row = min(row0 + r, m - 1);
          if (i < kv) a[r][u] = ldnc((const v16*)(W + (long long)row * k) + i);
        }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = base + u * 32;
        if (i < kv) {
          const v16 b = xv[i];
#pragma unroll
          for (int r = 0; r < R; ++r) acc[r] += dot8(a[r][u], b);
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float s = acc[r];
    for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffffu, s, d);
    acc[r] = s;
  }
  if (S == 1) {
    if (lane == 0)
#pragma unroll
      for (int r = 0; r < R; ++r) if (row0 + r < m) y[row0 + r] = __float2half(acc[r]);
    return;
  }
  if (lane == 0)
#pragma unroll
    for (int r = 0; r < R; ++r) part[wib][r] = acc[r];
  __syncthreads();
  if (sub == 0 && lane < R && row0 + lane < m) {
    float s = 0.f;
    for (int j = 0; j < S; ++j) s += part[grp * S + j][lane];
    y[row0 + lane] = __float2half(s);
  }
}
#define K(R, U, S) extern "C" __global__ void g_##R##_##U##_##S(const __half* W, const __half* x, __half* y, int m, int k) { gemv<R, U, S>(W, x, y, m, k); }
K(1,4,1) K(1,8,1) K(1,16,1) K(2,4,1) K(2,8,1) K(4,4,1) K(1,4,2) K(1,8,2) K(1,4,4) K(1,8,4) K(2,4,2) K(2,8,2) K(1,2,8) K(1,4,8) K(4,2,2)
'''
mod = cp.RawModule(code=SRC, options=("--std=c++17", "-arch=sm_90"))
variants = [(1, 4, 1, 256), (1, 8, 1, 256), (1, 16, 1, 256), (2, 4, 1, 256), (2, 8, 1, 256),
            (4, 4, 1, 256), (1, 4, 2, 256), (1, 8, 2, 256), (1, 4, 4, 256), (1, 8, 4, 256),
            (2, 4, 2, 256), (2, 8, 2, 256), (1, 2, 8, 256), (1, 4, 8, 256), (4, 2, 2, 256),
            (1, 8, 1, 128), (1, 4, 4, 128), (1, 8, 2, 512), (1, 4, 8, 512)]

shapes = [(4096, 4096)] * 4 + [(11008, 4096)] * 2 + [(4096, 11008)]
Ws = [[torch.randn(o, i, device="cuda", dtype=torch.float16) * 0.02 for o, i in shapes]
      for _ in range(LAYERS)]
xs = {i: torch.randn(i, device="cuda", dtype=torch.float16) for i in (4096, 11008)}
ys = [[torch.empty(o, device="cuda", dtype=torch.float16) for o, _ in shapes] for _ in range(LAYERS)]
gb = sum(o * i * 2 for o, i in shapes) * LAYERS / 1e9


def replay_us(body, reps=20):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        body()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        body()
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True); b = torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        ts.append(a.elapsed_time(b) * 1e3)
    return statistics.median(ts)


n = 1 << 28
a = torch.randn(n, device="cuda"); b = torch.empty_like(a)
for _ in range(3):
    b.copy_(a)
torch.cuda.synchronize()
ts = []
for _ in range(10):
    e0 = torch.cuda.Event(enable_timing=True); e1 = torch.cuda.Event(enable_timing=True)
    e0.record(); b.copy_(a); e1.record(); e1.synchronize(); ts.append(e0.elapsed_time(e1))
copy = 2 * n * 4 / statistics.median(ts) / 1e6
print(f"copy_d2d_1GiB {copy:7.1f} GB/s; {LAYERS} layers, {gb:.2f} GB of weights")
del a, b


def torch_chain():
    for L in range(LAYERS):
        for j, (o, i) in enumerate(shapes):
            torch.matmul(Ws[L][j], xs[i], out=ys[L][j])


us = replay_us(torch_chain)
refs = [[y.clone() for y in row] for row in ys]
print(f"torch F.linear chain       {us:9.1f} us {gb / us * 1e6:8.1f} GB/s  {gb / us * 1e6 / copy:5.3f} of copy")
for R, U, S, B in variants:
    f = mod.get_function(f"g_{R}_{U}_{S}")
    per_block = R * (B // 32) // S

    def chain():
        st = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        for L in range(LAYERS):
            for j, (o, i) in enumerate(shapes):
                grid = ((o + per_block - 1) // per_block,)
                f(grid, (B,), (Ws[L][j].data_ptr(), xs[i].data_ptr(), ys[L][j].data_ptr(),
                               cp.int32(o), cp.int32(i)), stream=st)

    us = replay_us(chain)
    err = max((ys[L][j].float() - refs[L][j].float()).abs().max().item()
              for L in range(LAYERS) for j in range(len(shapes)))
    print(f"R{R} U{U:<2d} S{S} B{B:<4d}          {us:9.1f} us {gb / us * 1e6:8.1f} GB/s  "
          f"{gb / us * 1e6 / copy:5.3f} of copy  err {err:.1e}")
