// Host emulation of the GPU execution model for kernels/flash_attention.hip (testing only).
#include <cmath>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <thread>
#include <barrier>
#include <functional>
#include <memory>
struct rb_dim3 { unsigned x = 0, y = 0, z = 0; };
thread_local rb_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __shared__ static
#ifndef EMU_W
#define EMU_W 32
#endif
#define warpSize EMU_W
inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
std::barrier<>* g_block_bar;
std::barrier<>* g_warp_bar[64];
inline void __syncthreads() { g_block_bar->arrive_and_wait(); }
inline void __syncwarp() { g_warp_bar[threadIdx.x / EMU_W]->arrive_and_wait(); }
#define __builtin_amdgcn_wave_barrier() __syncwarp()
#define __builtin_amdgcn_fence(order, scope) ((void)0)
static unsigned g_xchu[64][64][8];
#include <mutex>
#include <atomic>
static std::mutex g_atomic;
inline double __longlong_as_double(long long v) {
  double d;
  std::memcpy(&d, &v, sizeof d);
  return d;
}
inline long long __double_as_longlong(double d) {
  long long v;
  std::memcpy(&v, &d, sizeof v);
  return v;
}
inline float atomicAdd(float* p, float v) { std::lock_guard<std::mutex> g(g_atomic); float o = *p; *p = o + v; return o; }
// (the atomics take a mutex, which orders memory for every thread that takes it)
inline unsigned atomicAdd(unsigned* p, unsigned v) {
  std::lock_guard<std::mutex> g(g_atomic);
  unsigned o = *p;
  *p = o + v;
  return o;
}
inline unsigned atomicExch(unsigned* p, unsigned v) {
  std::lock_guard<std::mutex> g(g_atomic);
  unsigned o = *p;
  *p = v;
  return o;
}
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline int emu_warp() { return threadIdx.x / EMU_W; }
inline int emu_lane() { return threadIdx.x % EMU_W; }
// The exchange copies the value's bits (any type of at most 8 bytes passes exactly: 64-bit
// integers such as the losses' RB_NOBAD would not survive a trip through double).
static unsigned long long g_xchb[64][64];
template <typename T> T emu_shfl_xor(T v, int x) {
  static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
  int w = emu_warp(), l = emu_lane();
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof v);
  g_xchb[w][l] = b;
  g_warp_bar[w]->arrive_and_wait();
  T r;
  memcpy(&r, &g_xchb[w][l ^ x], sizeof r);
  g_warp_bar[w]->arrive_and_wait();
  return r;
}
template <typename T> T __shfl_xor_sync(unsigned, T v, int x) { return emu_shfl_xor(v, x); }
template <typename T> T __shfl_xor(T v, int x) { return emu_shfl_xor(v, x); }
template <typename T> T emu_shfl_down(T v, int x) {
  static_assert(sizeof(T) <= 8, "shuffled values are at most 8 bytes");
  int w = emu_warp(), l = emu_lane();
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof v);
  g_xchb[w][l] = b;
  g_warp_bar[w]->arrive_and_wait();
  T r = v;
  if (l + x < EMU_W) memcpy(&r, &g_xchb[w][l + x], sizeof r);
  g_warp_bar[w]->arrive_and_wait();
  return r;
}
template <typename T> T __shfl_down_sync(unsigned, T v, int x) { return emu_shfl_down(v, x); }
template <typename T> T __shfl_down(T v, int x) { return emu_shfl_down(v, x); }
inline float emu_h2f(unsigned short h, int H) {
  if (H == 1) return __uint_as_float(((unsigned)h) << 16);
  unsigned sign = (h & 0x8000u) << 16, e = (h >> 10) & 31, m = h & 1023;
  if (e == 31) return __uint_as_float(sign | 0x7f800000u | (m << 13));
  if (e == 0) { float v = m * 5.9604644775390625e-8f; return sign ? -v : v; }
  return __uint_as_float(sign | ((e + 112) << 23) | (m << 13));
}
// mma.sync.m16n8k16 as PTX documents the fragments (g = lane / 4, t = lane % 4).
template <int H>
inline void emu_mma(float* c, unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
  int w = emu_warp(), l = emu_lane();
  unsigned* s = g_xchu[w][l];
  s[0] = a0; s[1] = a1; s[2] = a2; s[3] = a3; s[4] = b0; s[5] = b1;
  g_warp_bar[w]->arrive_and_wait();
  float A[16][16], B[16][8];
  for (int ln = 0; ln < 32; ln++) {
    int g = ln / 4, t = ln % 4;
    unsigned* f = g_xchu[w][ln];
    for (int e = 0; e < 2; e++) {
      A[g][2 * t + e] = emu_h2f((f[0] >> (16 * e)) & 0xffff, H);
      A[g + 8][2 * t + e] = emu_h2f((f[1] >> (16 * e)) & 0xffff, H);
      A[g][2 * t + 8 + e] = emu_h2f((f[2] >> (16 * e)) & 0xffff, H);
      A[g + 8][2 * t + 8 + e] = emu_h2f((f[3] >> (16 * e)) & 0xffff, H);
      B[2 * t + e][g] = emu_h2f((f[4] >> (16 * e)) & 0xffff, H);
      B[2 * t + 8 + e][g] = emu_h2f((f[5] >> (16 * e)) & 0xffff, H);
    }
  }
  g_warp_bar[w]->arrive_and_wait();
  int g = l / 4, t = l % 4;
  for (int e = 0; e < 4; e++) {
    int r = g + 8 * (e >> 1), cc = 2 * t + (e & 1);
    float acc = c[e];
    for (int k = 0; k < 16; k++) acc += A[r][k] * B[k][cc];
    c[e] = acc;
  }
}
// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16 as PTX documents it: lane l gives row
// l % 8 of matrix l / 8; register j of lane l gets matrix j's (row l/4, cols 2(l%4), +1),
// transposed: (rows 2(l%4), +1, col l/4).
static const unsigned short* g_rows[64][64];
template <bool TRANS> inline void emu_ldsm(unsigned* r, const unsigned short* row) {
  int w = emu_warp(), l = emu_lane();
  if (((unsigned long long)row & 15) != 0) { fprintf(stderr, "ldmatrix row not 16-byte aligned\n"); abort(); }
  g_rows[w][l] = row;
  g_warp_bar[w]->arrive_and_wait();
  for (int j = 0; j < 4; j++) {
    unsigned lo, hi;
    if (!TRANS) {
      const unsigned short* p = g_rows[w][j * 8 + l / 4];
      lo = p[2 * (l % 4)]; hi = p[2 * (l % 4) + 1];
    } else {
      lo = g_rows[w][j * 8 + 2 * (l % 4)][l / 4];
      hi = g_rows[w][j * 8 + 2 * (l % 4) + 1][l / 4];
    }
    r[j] = lo | (hi << 16);
  }
  g_warp_bar[w]->arrive_and_wait();
}
#ifdef EMU_CDNA
typedef float emu_f4 __attribute__((ext_vector_type(4)));
typedef short emu_s4 __attribute__((ext_vector_type(4)));
typedef _Float16 emu_h4 __attribute__((ext_vector_type(4)));
// v_mfma_f32_16x16x16: lane l holds A[l%16][4(l/16)+e], B[4(l/16)+e][l%16], D[4(l/16)+i][l%16].
template <int H>
inline emu_f4 emu_mfma(emu_s4 a, emu_s4 b, emu_f4 c) {
  int w = emu_warp(), l = emu_lane();
  unsigned* s = g_xchu[w][l];
  for (int e = 0; e < 4; e++) { s[e] = (unsigned short)a[e]; s[4 + e] = (unsigned short)b[e]; }
  g_warp_bar[w]->arrive_and_wait();
  float A[16][16], B[16][16];
  for (int ln = 0; ln < 64; ln++)
    for (int e = 0; e < 4; e++) {
      A[ln % 16][4 * (ln / 16) + e] = emu_h2f(g_xchu[w][ln][e], H);
      B[4 * (ln / 16) + e][ln % 16] = emu_h2f(g_xchu[w][ln][4 + e], H);
    }
  g_warp_bar[w]->arrive_and_wait();
  emu_f4 d = c;
  for (int i = 0; i < 4; i++) {
    float acc = c[i];
    for (int k = 0; k < 16; k++) acc += A[4 * (l / 16) + i][k] * B[k][l % 16];
    d[i] = acc;
  }
  return d;
}
#define __builtin_amdgcn_mfma_f32_16x16x16f16(a, b, c, x, y, z) \
  emu_mfma<0>(__builtin_bit_cast(emu_s4, a), __builtin_bit_cast(emu_s4, b), c)
#define __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(a, b, c, x, y, z) emu_mfma<1>(a, b, c)
#endif
// Runs kernel `f` over the grid, one block at a time, a host thread per GPU thread.
inline void emu_launch(rb_dim3 grid, unsigned block, std::function<void()> f) {
  for (unsigned by = 0; by < grid.y; by++)
    for (unsigned bx = 0; bx < grid.x; bx++) {
      std::barrier<> bb(block);
      g_block_bar = &bb;
      std::vector<std::unique_ptr<std::barrier<>>> wb;
      for (unsigned w = 0; w < block / EMU_W; w++) {
        wb.emplace_back(new std::barrier<>(EMU_W));
        g_warp_bar[w] = wb.back().get();
      }
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < block; t++)
        ts.emplace_back([&, t] {
          threadIdx = {t, 0, 0}; blockIdx = {bx, by, 0}; blockDim = {block, 1, 1}; gridDim = grid;
          f();
        });
      for (auto& t : ts) t.join();
    }
}
