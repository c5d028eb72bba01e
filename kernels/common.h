// common.h: one kernel source for both vendors. Compiled by hiprtc (AMD), NVRTC (NVIDIA)
// and, offline, by hipcc. No standard or vendor header is included: NVRTC has none of them
// on its default path, so the few types and conversions the kernels need are defined here.
#pragma once

#if defined(__HIPCC_RTC__) || defined(__HIP_PLATFORM_AMD__) || defined(__HIP__)
#define RB_HIP 1
#else
#define RB_CUDA 1
#endif

typedef unsigned char rb_u8;
typedef unsigned short rb_u16;
typedef unsigned int rb_u32;
typedef int rb_i32;
typedef long long rb_i64;
typedef unsigned long long rb_u64;
typedef signed char rb_i8;
typedef short rb_i16;

#define RB_KERNEL extern "C" __global__
#define RB_DEVICE __device__ __forceinline__

// The warp/wavefront width of the device the code runs on: 64 on CDNA, 32 on RDNA and
// NVIDIA. Never assume 32.
#define RB_WARP_SIZE warpSize

// Shuffles over a full warp (CUDA needs the participation mask; HIP's wavefront is 64 wide).
#if defined(RB_HIP)
template <typename T> RB_DEVICE T rb_shfl_down(T v, int delta) { return __shfl_down(v, delta); }
template <typename T> RB_DEVICE T rb_shfl_xor(T v, int mask) { return __shfl_xor(v, mask); }
#else
template <typename T> RB_DEVICE T rb_shfl_down(T v, int delta) { return __shfl_down_sync(0xffffffffu, v, delta); }
template <typename T> RB_DEVICE T rb_shfl_xor(T v, int mask) { return __shfl_xor_sync(0xffffffffu, v, mask); }
#endif

// Sum over a warp; lane 0 holds the result.
RB_DEVICE float rb_warp_sum(float v) {
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) v += rb_shfl_down(v, d);
  return v;
}

// ---- early launch (NVIDIA's programmatic dependent launch, sm_90 and later) --------------
// The host launches the kernels of the families in src/device/gpu/kernels.rs `EARLY` with
// the programmatic-serialization attribute where the device has it: such a kernel's blocks
// may start while the stream's previous kernel is still running, so each begins with
// rb_pdl_enter(), before it reads or writes any memory: `griddepcontrol.wait` returns once
// the previous kernels have completed and their writes are visible, then
// `griddepcontrol.launch_dependents` lets the next early kernel start (after the wait, so at
// most one kernel is ever ahead of the completed ones). What a kernel may do before it:
// arithmetic on its arguments and rb_prefetch_l2 (an L2 prefetch binds nothing: a later write
// by the running kernel still wins). Elsewhere (AMD, older NVIDIA, a plain launch) both are
// no-ops and the stream orders the kernels as usual.
RB_DEVICE void rb_pdl_enter() {
#if defined(RB_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
// Asks for the 128-byte line at p in L2 (no register, no ordering): weights a kernel reads
// once, requested before rb_pdl_enter so their first bytes arrive while the previous kernel
// finishes.
RB_DEVICE void rb_prefetch_l2(const void* p) {
#if defined(RB_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
#else
  (void)p;
#endif
}

// A rotated pair (rope): (a, b) by the angle of cos c and sin s, a * c - b * s and
// b * c + a * s with the fused operations spelled out, so every kernel that rotates (rope,
// rope_cached, rope_store, the grouped products' rope epilogue) gives the same bits whatever
// its compiler would contract.
RB_DEVICE float rb_rot_a(float a, float b, float c, float s) { return __fmaf_rn(a, c, -__fmul_rn(b, s)); }
RB_DEVICE float rb_rot_b(float a, float b, float c, float s) { return __fmaf_rn(b, c, __fmul_rn(a, s)); }

// ---- f16 and bf16 as bits, converted with integer operations (round to nearest even) ----
struct rb_f16 { rb_u16 bits; };
struct rb_bf16 { rb_u16 bits; };

RB_DEVICE float rb_bits_f32(rb_u32 u) { return __uint_as_float(u); }
RB_DEVICE rb_u32 rb_f32_bits(float f) { return __float_as_uint(f); }

RB_DEVICE float rb_half_to_f32_int(rb_u16 h) {
  rb_u32 sign = ((rb_u32)h & 0x8000u) << 16;
  rb_u32 exp = (h >> 10) & 0x1fu;
  rb_u32 man = h & 0x3ffu;
  if (exp == 0x1fu) return rb_bits_f32(sign | 0x7f800000u | (man << 13));
  if (exp == 0) {
    float v = (float)man * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -v : v;
  }
  return rb_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

RB_DEVICE rb_u16 rb_f32_to_half_int(float f) {
  rb_u32 x = rb_f32_bits(f);
  rb_u32 sign = (x >> 16) & 0x8000u;
  rb_u32 exp = (x >> 23) & 0xffu;
  rb_u32 man = x & 0x7fffffu;
  if (exp == 0xffu) return (rb_u16)(sign | 0x7c00u | (man ? (0x200u | (man >> 13)) : 0u));
  int e = (int)exp - 127 + 15;
  if (e >= 0x1f) return (rb_u16)(sign | 0x7c00u);
  if (e <= 0) {
    if (14 - e > 24) return (rb_u16)sign;
    man |= 0x800000u;
    rb_u32 hm = man >> (14 - e);
    rb_u32 rb = 1u << (13 - e);
    if ((man & rb) && (man & (3u * rb - 1u))) hm += 1u;
    return (rb_u16)(sign | hm);
  }
  rb_u32 r = sign | ((rb_u32)e << 10) | (man >> 13);
  if ((man & 0x1000u) && (man & 0x2fffu)) r += 1u;
  return (rb_u16)r;
}

// The conversions the kernels call. On NVIDIA one cvt instruction each (the integer routines
// above cost about 20 instructions per element, which bounded the half kernels by issue rather
// than memory); the same bits as the integer routines: round to nearest even, subnormals kept,
// and NaN payloads as above (cvt would canonicalize them). Elsewhere the integer routines.
#if defined(RB_CUDA)
RB_DEVICE float rb_half_to_f32(rb_u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  const rb_u32 nan = (((rb_u32)h & 0x8000u) << 16) | 0x7f800000u | (((rb_u32)h & 0x3ffu) << 13);
  return ((rb_u32)h & 0x7fffu) > 0x7c00u ? rb_bits_f32(nan) : f;
}
RB_DEVICE rb_u16 rb_f32_to_half(float f) {
  rb_u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  const rb_u32 x = rb_f32_bits(f);
  const rb_u16 nan = (rb_u16)(((x >> 16) & 0x8000u) | 0x7e00u | ((x & 0x7fffffu) >> 13));
  return (x & 0x7fffffffu) > 0x7f800000u ? nan : h;
}
// f16 -> f32 for arithmetic in one instruction: a NaN stays a NaN but its payload is not
// kept (it cannot reach a sum of products anyway). For the matrix-vector and decode-attention
// kernels, which are bound by issue as soon as a conversion costs more (kernels/blas.hip).
RB_DEVICE float rb_half_to_f32_arith(rb_u16 h) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
  return f;
}
// f32 -> f16 of a computed value in one instruction: a NaN becomes f16's canonical NaN (no
// payload to keep: it came out of arithmetic). For the row kernels (kernels/norm.hip).
RB_DEVICE rb_u16 rb_f32_to_half_arith(float f) {
  rb_u16 h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
}
#else
RB_DEVICE float rb_half_to_f32(rb_u16 h) { return rb_half_to_f32_int(h); }
RB_DEVICE rb_u16 rb_f32_to_half(float f) { return rb_f32_to_half_int(f); }
RB_DEVICE float rb_half_to_f32_arith(rb_u16 h) { return rb_half_to_f32_int(h); }
RB_DEVICE rb_u16 rb_f32_to_half_arith(float f) { return rb_f32_to_half_int(f); }
#endif

RB_DEVICE float rb_bfloat_to_f32(rb_u16 h) { return rb_bits_f32(((rb_u32)h) << 16); }


RB_DEVICE rb_u16 rb_f32_to_bfloat(float f) {
  rb_u32 u = rb_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (rb_u16)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (rb_u16)(u >> 16);
}
// f32 -> bf16 of a computed value: one cvt on NVIDIA sm_80+ (round to nearest even; a NaN
// becomes bf16's canonical NaN), else the routine above.
RB_DEVICE rb_u16 rb_f32_to_bfloat_arith(float f) {
#if defined(RB_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  rb_u16 h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  return rb_f32_to_bfloat(f);
#endif
}

// Load any float element as f32, store f32 as any float element.
RB_DEVICE float rb_to_f32(float x) { return x; }
RB_DEVICE float rb_to_f32(rb_f16 x) { return rb_half_to_f32(x.bits); }
RB_DEVICE float rb_to_f32(rb_bf16 x) { return rb_bfloat_to_f32(x.bits); }
RB_DEVICE void rb_from_f32(float* p, float v) { *p = v; }
RB_DEVICE void rb_from_f32(rb_f16* p, float v) { p->bits = rb_f32_to_half(v); }
RB_DEVICE void rb_from_f32(rb_bf16* p, float v) { p->bits = rb_f32_to_bfloat(v); }
// The same for values that only feed arithmetic, or come out of it (NaN stays NaN, its payload
// is not kept): one instruction each way for f16 on NVIDIA.
RB_DEVICE float rb_to_f32_arith(float x) { return x; }
RB_DEVICE float rb_to_f32_arith(rb_f16 x) { return rb_half_to_f32_arith(x.bits); }
RB_DEVICE float rb_to_f32_arith(rb_bf16 x) { return rb_bfloat_to_f32(x.bits); }
RB_DEVICE void rb_from_f32_arith(float* p, float v) { *p = v; }
RB_DEVICE void rb_from_f32_arith(rb_f16* p, float v) { p->bits = rb_f32_to_half_arith(v); }
RB_DEVICE void rb_from_f32_arith(rb_bf16* p, float v) { p->bits = rb_f32_to_bfloat_arith(v); }

// f16/bf16 as raw bits, the format a template argument (H: 0 f16, 1 bf16), and 16 bytes of
// them: the vectorized half kernels load 8 elements at once, compute in f32, round once.
template <int H> RB_DEVICE float rb_hload(rb_u16 b) { return H ? rb_bfloat_to_f32(b) : rb_half_to_f32(b); }
template <int H> RB_DEVICE rb_u16 rb_hstore(float v) { return H ? rb_f32_to_bfloat(v) : rb_f32_to_half(v); }
struct alignas(16) rb_h8 { rb_u16 v[8]; };

// The linear index of this thread and the grid stride, in 64 bits.
RB_DEVICE rb_u64 rb_gid() { return (rb_u64)blockIdx.x * blockDim.x + threadIdx.x; }
RB_DEVICE rb_u64 rb_gstride() { return (rb_u64)gridDim.x * blockDim.x; }

// ReLU as PyTorch computes it: NaN propagates (fmaxf(NaN, 0) would give 0).
RB_DEVICE float rb_relu(float v) { return v < 0.0f ? 0.0f : v; }

// ---- Matrix-core tiles: one warp computes a 16x16 f32 tile C += A B (inner 16) ----
// The one interface the attention kernels are written against; per vendor behind #if:
//   * NVIDIA sm_80+ f16/bf16: two `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}` (PTX);
//   * AMD CDNA (gfx90a, gfx94x) f16/bf16: `__builtin_amdgcn_mfma_f32_16x16x16f16` /
//     `..._16x16x16bf16_1k` (wave64);
//   * everything else (gfx1030 and other targets without these, and f32 on every target: f32
//     stays exact, no TF32): scalar FMAs over the same ownership scheme.
// Element formats (the template argument H): 0 f16, 1 bf16 (both stored as rb_u16 bits),
// 2 f32 (stored as float). Operands are read from shared memory:
//   A 16x16 row-major: element (m, k) at a[m * lda + k];
//   B (inner k, cols n), BKN false: element (k, n) at b[n * ldb + k] (B^T row-major, e.g. K
//     rows for S = Q K^T); BKN true: element (k, n) at b[k * ldb + n] (row-major, e.g. V).
// For the f16/bf16 NVIDIA path `lda` and `ldb` (BKN false) are even and the tiles 4-byte aligned.
// Fragment ownership: lane l (l = threadIdx.x % RB_MMA_W) holds RB_MMA_ACC floats of C; its
// element i is C(rb_mma_row(i), rb_mma_col(i)):
//   NVIDIA (RB_MMA_ACC 8, g = l / 4, t = l % 4): i = 4 nt + e, nt the 8-column half:
//     row g + 8 ((e >> 1) & 1), col 8 nt + 2 t + (e & 1);
//   CDNA MFMA (RB_MMA_ACC 4): row 4 (l / 16) + i, col l % 16;
//   scalar (RB_MMA_ACC 256 / RB_MMA_W): row l % 16, col (l / 16) RB_MMA_ACC + i.
// The row of element i is the same in every tile a lane holds, so per-row statistics can be
// combined element-wise over tiles and then over the lanes of a row (rb_mma_row_max/sum).
#if defined(RB_HIP) && defined(__AMDGCN_WAVEFRONT_SIZE)
#define RB_MMA_W __AMDGCN_WAVEFRONT_SIZE
#elif defined(RB_HIP) && (defined(__gfx900__) || defined(__gfx906__) || defined(__gfx908__) || \
                          defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) ||  \
                          defined(__gfx942__))
#define RB_MMA_W 64
#else
#define RB_MMA_W 32
#endif
#if defined(RB_CUDA) && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define RB_MMA_NV 1
#define RB_MMA_ACC 8
#elif defined(RB_HIP) && (defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || \
                          defined(__gfx942__)) && RB_MMA_W == 64
#define RB_MMA_CDNA 1
#define RB_MMA_ACC 4
#else
#define RB_MMA_ACC (256 / RB_MMA_W)
#endif

RB_DEVICE int rb_mma_lane() { return (int)(threadIdx.x % RB_MMA_W); }

// Element i's row and column in its 16x16 tile (the halves path when H < 2 and a matrix
// core exists; f32 always takes the scalar scheme: see rb_mma16).
template <int H> RB_DEVICE int rb_mma_row(int i) {
  int l = rb_mma_lane();
#if defined(RB_MMA_NV)
  if (H < 2) return l / 4 + 8 * ((i >> 1) & 1);
#elif defined(RB_MMA_CDNA)
  if (H < 2) return 4 * (l / 16) + i;
#endif
  (void)i;
  return l % 16;
}
template <int H> RB_DEVICE int rb_mma_col(int i) {
  int l = rb_mma_lane();
#if defined(RB_MMA_NV)
  if (H < 2) return 8 * (i >> 2) + 2 * (l % 4) + (i & 1);
#elif defined(RB_MMA_CDNA)
  if (H < 2) return l % 16;
#endif
  return (l / 16) * RB_MMA_ACC + i;
}

template <int H, typename S> RB_DEVICE float rb_mma_ld(S x);
template <> RB_DEVICE float rb_mma_ld<0, rb_u16>(rb_u16 x) { return rb_half_to_f32(x); }
template <> RB_DEVICE float rb_mma_ld<1, rb_u16>(rb_u16 x) { return rb_bfloat_to_f32(x); }
template <> RB_DEVICE float rb_mma_ld<2, float>(float x) { return x; }
template <int H, typename S> RB_DEVICE S rb_mma_st(float v);
template <> RB_DEVICE rb_u16 rb_mma_st<0, rb_u16>(float v) { return rb_f32_to_half(v); }
template <> RB_DEVICE rb_u16 rb_mma_st<1, rb_u16>(float v) { return rb_f32_to_bfloat(v); }
template <> RB_DEVICE float rb_mma_st<2, float>(float v) { return v; }

// The scalar scheme: element i of lane l is C(l % 16, (l / 16) RB_MMA_ACC + i).
template <int H, bool BKN, typename S>
RB_DEVICE void rb_mma16_scalar(float* acc, const S* a, int lda, const S* b, int ldb) {
  int l = rb_mma_lane(), r = l % 16, c0 = (l / 16) * RB_MMA_ACC;
  for (int k = 0; k < 16; k++) {
    float av = rb_mma_ld<H, S>(a[r * lda + k]);
#pragma unroll
    for (int i = 0; i < RB_MMA_ACC; i++) {
      float bv = rb_mma_ld<H, S>(BKN ? b[k * ldb + c0 + i] : b[(c0 + i) * ldb + k]);
      acc[i] = fmaf(av, bv, acc[i]);
    }
  }
}

#if defined(RB_MMA_NV)
RB_DEVICE rb_u32 rb_mma_pair(const rb_u16* p) { return *(const rb_u32*)p; }
template <int H>
RB_DEVICE void rb_mma_m16n8k16(float* c, rb_u32 a0, rb_u32 a1, rb_u32 a2, rb_u32 a3, rb_u32 b0,
                               rb_u32 b1) {
  if (H == 0)
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  else
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
// ldmatrix.sync.aligned.m8n8.x4[.trans].shared.b16: lane l gives the address of row l % 8
// of 8x8 matrix l / 8 (16 bytes, 16-byte aligned); register j of lane l receives matrix j's
// elements (row l / 4, cols 2 (l % 4), +1), or with TRANS (rows 2 (l % 4), +1, col l / 4).
template <bool TRANS> RB_DEVICE void rb_mma_ldsm_x4(rb_u32* r, const rb_u16* row) {
  rb_u32 addr;
  asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(addr) : "l"(row));
  if (TRANS)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
#endif

#if defined(RB_MMA_CDNA)
typedef float rb_f32x4 __attribute__((ext_vector_type(4)));
typedef short rb_s16x4 __attribute__((ext_vector_type(4)));
typedef _Float16 rb_h16x4 __attribute__((ext_vector_type(4)));
#endif

// C (16x16, RB_MMA_ACC floats per lane as above) += A B. Every lane of the warp calls it.
template <int H, bool BKN, typename S>
RB_DEVICE void rb_mma16(float* acc, const S* a, int lda, const S* b, int ldb) {
#if defined(RB_MMA_NV)
  if (H < 2) {
    const rb_u16* A = (const rb_u16*)a;
    const rb_u16* B = (const rb_u16*)b;
    int l = rb_mma_lane(), g = l / 4, t = l % 4;
    rb_u32 a0 = rb_mma_pair(A + g * lda + 2 * t), a1 = rb_mma_pair(A + (g + 8) * lda + 2 * t);
    rb_u32 a2 = rb_mma_pair(A + g * lda + 2 * t + 8);
    rb_u32 a3 = rb_mma_pair(A + (g + 8) * lda + 2 * t + 8);
#pragma unroll
    for (int nt = 0; nt < 2; nt++) {
      int n = nt * 8 + g;
      rb_u32 b0, b1;
      if (BKN) {
        b0 = (rb_u32)B[(2 * t) * ldb + n] | ((rb_u32)B[(2 * t + 1) * ldb + n] << 16);
        b1 = (rb_u32)B[(2 * t + 8) * ldb + n] | ((rb_u32)B[(2 * t + 9) * ldb + n] << 16);
      } else {
        b0 = rb_mma_pair(B + n * ldb + 2 * t);
        b1 = rb_mma_pair(B + n * ldb + 2 * t + 8);
      }
      rb_mma_m16n8k16<H>(acc + 4 * nt, a0, a1, a2, a3, b0, b1);
    }
    return;
  }
#elif defined(RB_MMA_CDNA)
  if (H < 2) {
    const rb_u16* A = (const rb_u16*)a;
    const rb_u16* B = (const rb_u16*)b;
    int l = rb_mma_lane(), r = l % 16, k0 = 4 * (l / 16);
    rb_s16x4 av, bv;
#pragma unroll
    for (int e = 0; e < 4; e++) {
      av[e] = (short)A[r * lda + k0 + e];
      bv[e] = (short)(BKN ? B[(k0 + e) * ldb + r] : B[r * ldb + k0 + e]);
    }
    rb_f32x4 c = {acc[0], acc[1], acc[2], acc[3]};
    if (H == 0)
      c = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(rb_h16x4, av),
                                                __builtin_bit_cast(rb_h16x4, bv), c, 0, 0, 0);
    else
      c = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(av, bv, c, 0, 0, 0);
#pragma unroll
    for (int e = 0; e < 4; e++) acc[e] = c[e];
    return;
  }
#endif
  rb_mma16_scalar<H, BKN, S>(acc, a, lda, b, ldb);
}

// Orders a warp's shared-memory writes before its lanes read each other's (the fallback
// paths below write a tile, then read it as an operand).
RB_DEVICE void rb_warp_sync() {
#if defined(RB_HIP)
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_wave_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
#else
  __syncwarp();
#endif
}

// An A operand (16x16) held for reuse: on NVIDIA f16/bf16 the four mma.sync registers
// (loaded once), elsewhere where it lies in shared memory (read by each product).
template <int H, typename S> struct rb_mma_afrag {
  rb_u32 r[4];
  const S* p;
  int ld;
};

// Loads A (row-major, element (m, k) at a[m * lda + k], as rb_mma16 reads it).
template <int H, typename S>
RB_DEVICE void rb_mma_load_a(rb_mma_afrag<H, S>& f, const S* a, int lda) {
  f.p = a;
  f.ld = lda;
#if defined(RB_MMA_NV)
  if (H < 2) {
    const rb_u16* A = (const rb_u16*)a;
    int l = rb_mma_lane(), g = l / 4, t = l % 4;
    f.r[0] = rb_mma_pair(A + g * lda + 2 * t);
    f.r[1] = rb_mma_pair(A + (g + 8) * lda + 2 * t);
    f.r[2] = rb_mma_pair(A + g * lda + 2 * t + 8);
    f.r[3] = rb_mma_pair(A + (g + 8) * lda + 2 * t + 8);
  }
#endif
}

// A from a 16x16 f32 tile in the accumulator layout (RB_MMA_ACC values per lane, e.g. the
// probabilities of attention), rounded to the element format. On NVIDIA f16/bf16 the
// accumulator layout is the A fragment's (no memory); elsewhere the tile is written to
// `scratch` (16 rows of `ld` elements, private to the warp) and read from there.
template <int H, typename S>
RB_DEVICE void rb_mma_a_from_acc(rb_mma_afrag<H, S>& f, const float* c, S* scratch, int ld) {
#if defined(RB_MMA_NV)
  if (H < 2) {
#pragma unroll
    for (int j = 0; j < 4; j++)
      f.r[j] = (rb_u32)rb_hstore<H == 1>(c[2 * j]) | ((rb_u32)rb_hstore<H == 1>(c[2 * j + 1]) << 16);
    return;
  }
#endif
  rb_warp_sync();  // earlier reads of the scratch tile are done
#pragma unroll
  for (int i = 0; i < RB_MMA_ACC; i++) scratch[rb_mma_row<H>(i) * ld + rb_mma_col<H>(i)] = rb_mma_st<H, S>(c[i]);
  rb_warp_sync();
  f.p = scratch;
  f.ld = ld;
}

// C += A B with A a held fragment (B as rb_mma16 reads it).
template <int H, bool BKN, typename S>
RB_DEVICE void rb_mma16_af(float* acc, const rb_mma_afrag<H, S>& f, const S* b, int ldb) {
#if defined(RB_MMA_NV)
  if (H < 2) {
    const rb_u16* B = (const rb_u16*)b;
    int l = rb_mma_lane(), j = l / 8;
#if !defined(RB_NO_LDMATRIX)
    // Both 8-column halves' (b0, b1) in one ldmatrix: matrices (k 0-7 | 8-15) x (n 0-7 | 8-15)
    // (ldb even and the rows 16-byte aligned: the kernels' tiles are).
    rb_u32 r[4];
    if (BKN)
      rb_mma_ldsm_x4<true>(r, B + ((j & 1) * 8 + l % 8) * ldb + (j >> 1) * 8);
    else
      rb_mma_ldsm_x4<false>(r, B + ((j >> 1) * 8 + l % 8) * ldb + (j & 1) * 8);
    rb_mma_m16n8k16<H>(acc, f.r[0], f.r[1], f.r[2], f.r[3], r[0], r[1]);
    rb_mma_m16n8k16<H>(acc + 4, f.r[0], f.r[1], f.r[2], f.r[3], r[2], r[3]);
#else
    int g = l / 4, t = l % 4;
    (void)j;
#pragma unroll
    for (int nt = 0; nt < 2; nt++) {
      int n = nt * 8 + g;
      rb_u32 b0, b1;
      if (BKN) {
        b0 = (rb_u32)B[(2 * t) * ldb + n] | ((rb_u32)B[(2 * t + 1) * ldb + n] << 16);
        b1 = (rb_u32)B[(2 * t + 8) * ldb + n] | ((rb_u32)B[(2 * t + 9) * ldb + n] << 16);
      } else {
        b0 = rb_mma_pair(B + n * ldb + 2 * t);
        b1 = rb_mma_pair(B + n * ldb + 2 * t + 8);
      }
      rb_mma_m16n8k16<H>(acc + 4 * nt, f.r[0], f.r[1], f.r[2], f.r[3], b0, b1);
    }
#endif
    return;
  }
#endif
  rb_mma16<H, BKN, S>(acc, f.p, f.ld, b, ldb);
}

// Each v[i] becomes the max (op 0) or the sum (op 1) of its row over the 16 columns of the
// tile (the lanes and elements that share row rb_mma_row(i)).
template <int H> RB_DEVICE void rb_mma_row_reduce(float* v, int op) {
#define RB_MMA_RED(x, y) (op == 0 ? fmaxf((x), (y)) : (x) + (y))
#if defined(RB_MMA_NV)
  if (H < 2) {
    float r0 = RB_MMA_RED(RB_MMA_RED(v[0], v[1]), RB_MMA_RED(v[4], v[5]));
    float r1 = RB_MMA_RED(RB_MMA_RED(v[2], v[3]), RB_MMA_RED(v[6], v[7]));
    for (int x = 1; x <= 2; x <<= 1) {
      r0 = RB_MMA_RED(r0, rb_shfl_xor(r0, x));
      r1 = RB_MMA_RED(r1, rb_shfl_xor(r1, x));
    }
    v[0] = v[1] = v[4] = v[5] = r0;
    v[2] = v[3] = v[6] = v[7] = r1;
    return;
  }
#elif defined(RB_MMA_CDNA)
  if (H < 2) {
#pragma unroll
    for (int i = 0; i < 4; i++)
      for (int x = 1; x <= 8; x <<= 1) v[i] = RB_MMA_RED(v[i], rb_shfl_xor(v[i], x));
    return;
  }
#endif
  float r = v[0];
#pragma unroll
  for (int i = 1; i < RB_MMA_ACC; i++) r = RB_MMA_RED(r, v[i]);
  for (int x = 16; x < RB_MMA_W; x <<= 1) r = RB_MMA_RED(r, rb_shfl_xor(r, x));
#pragma unroll
  for (int i = 0; i < RB_MMA_ACC; i++) v[i] = r;
#undef RB_MMA_RED
}
