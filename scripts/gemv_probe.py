"""Matrix-vector (decode) kernel variants timed beside PyTorch on the lent GPU, without a
Rust build: y[out] = W[out, in] . x[in], f16, f32 accumulation. Each variant is a template
instance of one kernel (R rows per warp, U 16-byte loads in flight per lane and row, NC: the
weights read with non-caching loads that skip L1). Prints us and GB/s per (shape, variant)
and the copy bandwidth of the same run; checks each result against F.linear.

Caution: each shape repeats one matrix, and a 4096x4096 f16 matrix (32 MB) stays in the
H100's 50 MB L2, so the back-to-back figures overstate what a decode step (every matrix read
once from memory) gets; scripts/gemv_cold.py times the whole step's distinct weights.

    python3 scripts/gemv_probe.py
"""
import statistics
import cupy as cp
import torch
import torch.nn.functional as F

SRC = r'''
#include <cuda_fp16.h>
struct alignas(16) v16 { unsigned int w[4]; };
template <int NC> __device__ __forceinline__ v16 ld(const v16* p) {
  v16 r;
  if (NC) {
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r.w[0]), "=r"(r.w[1]), "=r"(r.w[2]), "=r"(r.w[3]) : "l"(p));
  } else {
    r = *p;
  }
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
// One warp computes R rows; k a multiple of 8; each lane U vectors per row in flight.
template <int R, int U, int NC>
__device__ void gemv(const __half* W, const __half* x, __half* y, int m, int k) {
  const int lane = threadIdx.x & 31;
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int row0 = warp * R;
  if (row0 >= m) return;
  const int kv = k / 8;
  const v16* xv = (const v16*)x;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.f;
  for (int base = lane; base < kv; base += 32 * U) {
    v16 a[R][U];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int u = 0; u < U; ++u) {
        const int i = base + u * 32;
        const int row = min(row0 + r, m - 1);
        if (i < kv) a[r][u] = ld<NC>((const v16*)(W + (long long)row * k) + i);
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
#pragma unroll
  for (int r = 0; r < R; ++r) {
    float s = acc[r];
    for (int d = 16; d > 0; d >>= 1) s += __shfl_xor_sync(0xffffffffu, s, d);
    if (lane == 0 && row0 + r < m) y[row0 + r] = __float2half(s);
  }
}
#define K(R, U, NC) extern "C" __global__ void g_##R##_##U##_##NC(const __half* W, const __half* x, __half* y, int m, int k) { gemv<R, U, NC>(W, x, y, m, k); }
K(1,4,0) K(1,4,1) K(1,8,0) K(1,8,1) K(2,4,0) K(2,4,1) K(2,2,1) K(4,2,1) K(4,1,1) K(1,16,1)
'''
mod = cp.RawModule(code=SRC, options=("--std=c++17",))
variants = ["1_4_0", "1_4_1", "1_8_1", "2_4_1", "2_2_1", "4_2_1", "1_16_1"]


def bench(fn, iters=50, warm=10):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    return statistics.median(ts)


n = 1 << 28
a = torch.randn(n, device="cuda"); b = torch.empty_like(a)
ms = bench(lambda: b.copy_(a)); print(f"copy_d2d_1GiB {ms*1e3:9.1f} us  {2*n*4/ms/1e6:7.1f} GB/s")
del a, b
for out, inp in [(4096, 4096), (11008, 4096), (4096, 11008)]:
    W = torch.randn(out, inp, device="cuda", dtype=torch.float16) * 0.02
    x = torch.randn(1, inp, device="cuda", dtype=torch.float16)
    gb = W.numel() * 2 / 1e9
    ref = F.linear(x, W)
    ms = bench(lambda: F.linear(x, W))
    def many_t():
        for _ in range(50):
            F.linear(x, W)
    ms50 = bench(many_t, iters=10, warm=2) / 50
    print(f"torch  {out}x{inp} {ms*1e3:8.1f} us {gb/ms*1e3:7.1f} GB/s  back-to-back {ms50*1e3:7.1f} us {gb/ms50*1e3:7.1f} GB/s")
    y = torch.empty(out, device="cuda", dtype=torch.float16)
    for v in variants:
        R = int(v.split("_")[0])
        f = mod.get_function("g_" + v)
        warps = (out + R - 1) // R
        for block in (128, 256):
            grid = ((warps * 32 + block - 1) // block,)
            stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
            def run():
                f(grid, (block,), (W.data_ptr(), x.data_ptr(), y.data_ptr(), cp.int32(out), cp.int32(inp)),
                  stream=stream)
            run(); torch.cuda.synchronize()
            err = (y.float() - ref.float().flatten()).abs().max().item()
            ms = bench(run)
            # Back to back (50 launches between one pair of events): the kernel's own time
            # once the launches run ahead of the GPU.
            def many():
                for _ in range(50):
                    run()
            ms50 = bench(many, iters=10, warm=2) / 50
            print(f"  {v:8s} b{block:<4d} {ms*1e3:8.1f} us {gb/ms*1e3:7.1f} GB/s  back-to-back "
                  f"{ms50*1e3:7.1f} us {gb/ms50*1e3:7.1f} GB/s  err {err:.1e}")
