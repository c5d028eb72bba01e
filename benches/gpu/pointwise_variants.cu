// Reproducer of the kernel-variant measurements quoted in kernels/elementwise.hip and
// kernels/pointwise.hip (relu, compare-gt and where on 64M f32; cudaEvent medians).
// Not built by cargo. On an NVIDIA machine: nvcc -O3 -arch=sm_90 -o mb pointwise_variants.cu && ./mb
// Microbenchmark of kernel variants for relu / compare-gt / where on 64M f32 (H200).
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>
typedef unsigned long long u64;
struct __align__(16) f4 { float x, y, z, w; };
__device__ __forceinline__ f4 ldcs(const f4* p) { f4 v; asm("ld.global.cs.v4.f32 {%0,%1,%2,%3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "l"(p)); return v; }
__device__ __forceinline__ void stcs(f4* p, f4 v) { asm volatile("st.global.cs.v4.f32 [%0], {%1,%2,%3,%4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w) : "memory"); }

__device__ __forceinline__ f4 relu4(f4 v) { v.x = fmaxf(v.x, 0.f); v.y = fmaxf(v.y, 0.f); v.z = fmaxf(v.z, 0.f); v.w = fmaxf(v.w, 0.f); return v; }

// U1: grid-stride, 2 vectors per thread (old).
__global__ void u1(const f4* x, f4* y, u64 n4) {
  u64 s = (u64)gridDim.x * blockDim.x, i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + s < n4; i += 2 * s) { f4 a = x[i], b = x[i + s]; y[i] = relu4(a); y[i + s] = relu4(b); }
  if (i < n4) y[i] = relu4(x[i]);
}
// Block tile, U vectors per thread, load mode L (0 plain, 1 cs, 2 ldg), store mode S (0 plain, 1 cs).
template <int U, int L, int S> __global__ void ut(const f4* x, f4* y, u64 n4) {
  u64 base = (u64)blockIdx.x * blockDim.x * U + threadIdx.x;
  f4 v[U];
#pragma unroll
  for (int k = 0; k < U; ++k) { u64 i = base + (u64)k * blockDim.x; if (i < n4) { if (L == 1) v[k] = ldcs(x + i); else if (L == 2) { float4 t = __ldg((const float4*)(x + i)); v[k].x = t.x; v[k].y = t.y; v[k].z = t.z; v[k].w = t.w; } else v[k] = x[i]; } }
#pragma unroll
  for (int k = 0; k < U; ++k) { u64 i = base + (u64)k * blockDim.x; if (i < n4) { if (S) stcs(y + i, relu4(v[k])); else y[i] = relu4(v[k]); } }
}
// Persistent grid-stride, 4 vectors per iteration.
__global__ void up(const f4* x, f4* y, u64 n4) {
  u64 s = (u64)gridDim.x * blockDim.x, i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + 3 * s < n4; i += 4 * s) { f4 a = x[i], b = x[i + s], c = x[i + 2 * s], d = x[i + 3 * s]; y[i] = relu4(a); y[i + s] = relu4(b); y[i + 2 * s] = relu4(c); y[i + 3 * s] = relu4(d); }
  for (; i < n4; i += s) y[i] = relu4(x[i]);
}
// memcpy-like copy kernel for reference.
__global__ void cpy(const f4* x, f4* y, u64 n4) { u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; if (i < n4) y[i] = x[i]; }

__device__ __forceinline__ unsigned gt4(f4 a, f4 b) { return (unsigned)(a.x > b.x) | ((unsigned)(a.y > b.y) << 8) | ((unsigned)(a.z > b.z) << 16) | ((unsigned)(a.w > b.w) << 24); }
// Compare: groups of 4 per thread-slot, U per thread, L load mode.
template <int U, int L> __global__ void ct(const f4* a, const f4* b, unsigned* o, u64 g4) {
  u64 base = (u64)blockIdx.x * blockDim.x * U + threadIdx.x;
  f4 va[U], vb[U];
#pragma unroll
  for (int k = 0; k < U; ++k) { u64 i = base + (u64)k * blockDim.x; if (i < g4) { va[k] = L ? ldcs(a + i) : a[i]; vb[k] = L ? ldcs(b + i) : b[i]; } }
#pragma unroll
  for (int k = 0; k < U; ++k) { u64 i = base + (u64)k * blockDim.x; if (i < g4) o[i] = gt4(va[k], vb[k]); }
}
// Compare: 16 elements per thread contiguous, one 16-byte store.
__global__ void c16(const f4* a, const f4* b, uint4* o, u64 g16) {
  u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g16) return;
  f4 A[4], B[4];
#pragma unroll
  for (int k = 0; k < 4; ++k) { A[k] = a[4 * i + k]; B[k] = b[4 * i + k]; }
  uint4 r; r.x = gt4(A[0], B[0]); r.y = gt4(A[1], B[1]); r.z = gt4(A[2], B[2]); r.w = gt4(A[3], B[3]);
  o[i] = r;
}
__device__ __forceinline__ f4 sel4(unsigned c, f4 a, f4 b) { f4 r; r.x = (c & 0xffu) ? a.x : b.x; r.y = (c & 0xff00u) ? a.y : b.y; r.z = (c & 0xff0000u) ? a.z : b.z; r.w = (c & 0xff000000u) ? a.w : b.w; return r; }
template <int U, int L, int S> __global__ void wt(const unsigned* c, const f4* a, const f4* b, f4* o, u64 g4) {
  u64 base = (u64)blockIdx.x * blockDim.x * U + threadIdx.x;
  unsigned vc[U]; f4 va[U], vb[U];
#pragma unroll
  for (int k = 0; k < U; ++k) { u64 i = base + (u64)k * blockDim.x; if (i < g4) { vc[k] = c[i]; va[k] = L ? ldcs(a + i) : a[i]; vb[k] = L ? ldcs(b + i) : b[i]; } }
#pragma unroll
  for (int k = 0; k < U; ++k) { u64 i = base + (u64)k * blockDim.x; if (i < g4) { if (S) stcs(o + i, sel4(vc[k], va[k], vb[k])); else o[i] = sel4(vc[k], va[k], vb[k]); } }
}

template <class F> float med(F f) {
  for (int i = 0; i < 5; ++i) f();
  cudaDeviceSynchronize();
  std::vector<float> t;
  cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
  for (int i = 0; i < 30; ++i) { cudaEventRecord(s); f(); cudaEventRecord(e); cudaEventSynchronize(e); float ms; cudaEventElapsedTime(&ms, s, e); t.push_back(ms); }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1000.f;
}
int main() {
  const u64 n = 1ull << 26, n4 = n / 4;
  float *x, *y, *z, *big0, *big1; unsigned char* c;
  cudaMalloc(&x, n * 4); cudaMalloc(&y, n * 4); cudaMalloc(&z, n * 4); cudaMalloc(&c, n);
  cudaMalloc(&big0, 4ull << 28); cudaMalloc(&big1, 4ull << 28);
  cudaMemset(x, 0x3f, n * 4); cudaMemset(y, 0x40, n * 4); cudaMemset(big0, 1, 4ull << 28);
  float cp = med([&] { cudaMemcpyAsync(big1, big0, 4ull << 28, cudaMemcpyDeviceToDevice); });
  printf("memcpy 1GiB %.1f us -> %.0f GB/s\n", cp, 8.0 * (1 << 28) / cp / 1e3);
  double bw = 8.0 * (1 << 28) / cp / 1e3;
  auto rep = [&](const char* name, float us, double bytes) { printf("%-34s %8.1f us  %6.0f GB/s  %.3fx copy\n", name, us, bytes / us / 1e3, bytes / us / 1e3 / bw); };
  const f4 *X = (const f4*)x; f4* Y = (f4*)y;
  rep("copy kernel 64M", med([&] { cpy<<<(n4 + 255) / 256, 256>>>(X, Y, n4); }), 8.0 * n);
  rep("U1 gridstride 2xf4 (old)", med([&] { u64 blocks = std::min<u64>((n4 / 2 + 255) / 256, 1 << 20); u1<<<blocks, 256>>>(X, Y, n4); }), 8.0 * n);
#define UT(U, L, S, B) rep("UT U=" #U " L=" #L " S=" #S " B=" #B, med([&] { ut<U, L, S><<<(n4 + B * U - 1) / (B * U), B>>>(X, Y, n4); }), 8.0 * n);
  UT(1, 0, 0, 256) UT(2, 0, 0, 256) UT(4, 0, 0, 256) UT(8, 0, 0, 256) UT(4, 1, 1, 256) UT(4, 1, 0, 256) UT(4, 0, 1, 256) UT(4, 2, 0, 256)
  UT(2, 0, 0, 128) UT(4, 0, 0, 128) UT(2, 0, 0, 512) UT(4, 0, 0, 512) UT(2, 1, 1, 256) UT(1, 1, 1, 256)
  for (int k : {2, 4, 8, 16}) { char nm[64]; sprintf(nm, "UP persistent 132x%d blocks 256", k); rep(nm, med([&] { up<<<132 * k, 256>>>(X, Y, n4); }), 8.0 * n); }
  // compare / where
  const f4* Z = (const f4*)y;
#define CT(U, L, B) rep("CT U=" #U " L=" #L " B=" #B, med([&] { ct<U, L><<<(n4 + B * U - 1) / (B * U), B>>>(X, Z, (unsigned*)c, n4); }), 9.0 * n);
  CT(1, 0, 256) CT(2, 0, 256) CT(4, 0, 256) CT(4, 1, 256) CT(8, 0, 256) CT(4, 0, 128) CT(2, 0, 512)
  rep("C16 contiguous 16/thread B=256", med([&] { c16<<<(n / 16 + 255) / 256, 256>>>(X, Z, (uint4*)c, n / 16); }), 9.0 * n);
  rep("C16 contiguous 16/thread B=128", med([&] { c16<<<(n / 16 + 127) / 128, 128>>>(X, Z, (uint4*)c, n / 16); }), 9.0 * n);
#define WT(U, L, S, B) rep("WT U=" #U " L=" #L " S=" #S " B=" #B, med([&] { wt<U, L, S><<<(n4 + B * U - 1) / (B * U), B>>>((const unsigned*)c, X, Z, (f4*)z, n4); }), 13.0 * n);
  WT(1, 0, 0, 256) WT(2, 0, 0, 256) WT(4, 0, 0, 256) WT(4, 1, 1, 256) WT(4, 1, 0, 256) WT(4, 0, 1, 256) WT(8, 0, 0, 256) WT(2, 0, 0, 512) WT(4, 0, 0, 128)
  cudaError_t err = cudaDeviceSynchronize();
  printf("status: %s\n", cudaGetErrorString(err));
}
