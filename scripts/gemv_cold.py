"""Decode matrix-vector variants over a whole Llama-7B-shaped step's weights (cold L2), on the
lent GPU, without a Rust build. y[out] = W[out, in] . x[in], f16, f32 accumulation.

The weights of LAYERS layers are distinct tensors, so every product streams its matrix from
DRAM as in the real step (one matrix repeated back to back sits in L2 and reads faster than
memory). The products per layer are those the executor launches at O3 (the grouped ones):
q/k/v as one 12288x4096 product, o 4096x4096, gate/up as one 22016x4096 product, down
4096x11008. Each variant runs the 4*LAYERS products captured in one CUDA graph; the figure is
the graph's replay time and the bytes of all the weights over it, beside PyTorch's matmul
chain captured the same way and a device copy of 1 GiB.

Variant (R, U, S, B, P, H): R rows per warp group, U 16-byte loads in flight per lane and
row, S warps splitting one row's k (partial sums through shared memory), B threads per
block, P: 0 one block per R * groups rows, else P blocks per SM looping over the rows
(persistent), H: 1 the weight loads carry the L2::256B prefetch-size hint.

    python3 scripts/gemv_cold.py [LAYERS]

Measured on an H100 (the earlier per-weight version of this script, q/k/v/o and gate/up
separate): one warp per row 0.88 of copy, eight warps per row with U 2 0.93.
"""
import statistics
import sys
import cupy as cp
import torch

LAYERS = int(sys.argv[1]) if len(sys.argv) > 1 else 8

SRC = r'''
#include <cuda_fp16.h>
struct alignas(16) v16 { unsigned int w[4]; };
template <int H> __device__ __forceinline__ v16 ldnc(const v16* p) {
  v16 r;
  if (H)
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3]) : "l"(p));
  else
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
// interleaving k in 512-byte steps; U vectors per lane and row in flight. Blocks loop over
// the row blocks (one pass unless the grid is smaller than the rows: persistent).
template <int R, int U, int S, int H>
__device__ void gemv(const __half* W, const __half* x, __half* y, int m, int k) {
  __shared__ float part[32][4];
  const int lane = threadIdx.x & 31;
  const int wib = threadIdx.x >> 5;
  const int grp = wib / S, sub = wib % S;
  const int groups = (blockDim.x >> 5) / S;
  const int kv = k / 8;
  const v16* xv = (const v16*)x;
  for (int blk = blockIdx.x; blk * groups * R < m; blk += gridDim.x) {
    const int row0 = (blk * groups + grp) * R;
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
            if (i < kv) a[r][u] = ldnc<H>((const v16*)(W + (long long)row * k) + i);
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
      continue;
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
    __syncthreads();
  }
}
#define K(R, U, S, H) extern "C" __global__ void g_##R##_##U##_##S##_##H(const __half* W, const __half* x, __half* y, int m, int k) { gemv<R, U, S, H>(W, x, y, m, k); }
KERNELS
'''
# (R, U, S, B, P, H)
variants = [
    (1, 8, 2, 128, 0, 0),  # the executor's grouped defaults on the H200 (k 4096; S 4 at 11008)
    (1, 8, 2, 128, 0, 1), (1, 8, 1, 128, 0, 0), (1, 8, 1, 128, 0, 1), (1, 16, 1, 128, 0, 0),
    (1, 16, 1, 128, 0, 1), (1, 4, 4, 128, 0, 0), (1, 4, 4, 128, 0, 1), (2, 4, 1, 128, 0, 0),
    (2, 4, 1, 128, 0, 1), (2, 8, 1, 128, 0, 1), (2, 4, 2, 128, 0, 1), (4, 4, 1, 128, 0, 1),
    (1, 8, 1, 256, 0, 1), (1, 16, 1, 256, 0, 1), (1, 8, 2, 256, 0, 1), (1, 4, 8, 256, 0, 1),
    (1, 2, 8, 256, 0, 1), (1, 8, 1, 64, 0, 1), (1, 16, 1, 64, 0, 1), (2, 8, 1, 64, 0, 1),
    (1, 8, 1, 128, 4, 1), (1, 8, 1, 128, 8, 1), (1, 16, 1, 128, 4, 1), (1, 16, 1, 128, 8, 1),
    (1, 8, 2, 128, 8, 1), (1, 8, 1, 256, 4, 1), (1, 16, 1, 256, 4, 1), (2, 8, 1, 128, 4, 1),
    (1, 8, 1, 64, 16, 1), (1, 16, 1, 64, 16, 1),
]
# The down product (k 11008) runs the same variant with S raised as the executor does.
kern = sorted({(R, U, S, H) for R, U, S, B, P, H in variants})
SRC = SRC.replace("KERNELS", " ".join(f"K({R},{U},{S},{H})" for R, U, S, H in kern))
mod = cp.RawModule(code=SRC, options=("--std=c++17", "-arch=sm_90"))
sms = torch.cuda.get_device_properties(0).multi_processor_count

shapes = [(12288, 4096), (4096, 4096), (22016, 4096), (4096, 11008)]
Ws = [[torch.randn(o, i, device="cuda", dtype=torch.float16) * 0.02 for o, i in shapes]
      for _ in range(LAYERS)]
xs = {i: torch.randn(i, device="cuda", dtype=torch.float16) for i in (4096, 11008)}
ys = [[torch.empty(o, device="cuda", dtype=torch.float16) for o, _ in shapes] for _ in range(LAYERS)]
gb = sum(o * i * 2 for o, i in shapes) * LAYERS / 1e9


def replay_us(body, reps=30):
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
print(f"{torch.cuda.get_device_name(0)}, {sms} SMs")
print(f"copy_d2d_1GiB {copy:7.1f} GB/s; {LAYERS} layers, {gb:.2f} GB of weights")


def torch_chain():
    for L in range(LAYERS):
        for j, (o, i) in enumerate(shapes):
            torch.matmul(Ws[L][j], xs[i], out=ys[L][j])


us = replay_us(torch_chain)
refs = [[y.clone() for y in row] for row in ys]
print(f"torch matmul chain                 {us:9.1f} us {gb / us * 1e6:8.1f} GB/s  {gb / us * 1e6 / copy:5.3f} of copy")
results = []
for R, U, S, B, P, H in variants:
    def chain():
        st = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        for L in range(LAYERS):
            for j, (o, i) in enumerate(shapes):
                s = S
                while i >= 2 * s * 32 * 8 * U and s * 2 <= B // 32 and S > 1:
                    s *= 2  # more warps per row for the long k, as the executor splits
                f = mod.get_function(f"g_{R}_{U}_{s if (R, U, s, H) in kern else S}_{H}")
                s = s if (R, U, s, H) in kern else S
                per_block = R * (B // 32) // s
                blocks = (o + per_block - 1) // per_block
                grid = (min(blocks, P * sms) if P else blocks,)
                f(grid, (B,), (Ws[L][j].data_ptr(), xs[i].data_ptr(), ys[L][j].data_ptr(),
                               cp.int32(o), cp.int32(i)), stream=st)

    try:
        us = replay_us(chain)
    except Exception as e:  # a variant that does not launch (resources) is reported, not fatal
        print(f"R{R} U{U:<2d} S{S} B{B:<4d} P{P:<2d} H{H}  failed: {e}")
        continue
    err = max((ys[L][j].float() - refs[L][j].float()).abs().max().item()
              for L in range(LAYERS) for j in range(len(shapes)))
    results.append((us, (R, U, S, B, P, H)))
    print(f"R{R} U{U:<2d} S{S} B{B:<4d} P{P:<2d} H{H}       {us:9.1f} us {gb / us * 1e6:8.1f} GB/s  "
          f"{gb / us * 1e6 / copy:5.3f} of copy  err {err:.1e}", flush=True)
results.sort()
print("best:", ", ".join(f"{v} {us:.1f} us" for us, v in results[:5]))
