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
#else
RB_DEVICE float rb_half_to_f32(rb_u16 h) { return rb_half_to_f32_int(h); }
RB_DEVICE rb_u16 rb_f32_to_half(float f) { return rb_f32_to_half_int(f); }
#endif

RB_DEVICE float rb_bfloat_to_f32(rb_u16 h) { return rb_bits_f32(((rb_u32)h) << 16); }

RB_DEVICE rb_u16 rb_f32_to_bfloat(float f) {
  rb_u32 u = rb_f32_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (rb_u16)((u >> 16) | 0x40u);  // quiet NaN
  u += 0x7fffu + ((u >> 16) & 1u);
  return (rb_u16)(u >> 16);
}

// Load any float element as f32, store f32 as any float element.
RB_DEVICE float rb_to_f32(float x) { return x; }
RB_DEVICE float rb_to_f32(rb_f16 x) { return rb_half_to_f32(x.bits); }
RB_DEVICE float rb_to_f32(rb_bf16 x) { return rb_bfloat_to_f32(x.bits); }
RB_DEVICE void rb_from_f32(float* p, float v) { *p = v; }
RB_DEVICE void rb_from_f32(rb_f16* p, float v) { p->bits = rb_f32_to_half(v); }
RB_DEVICE void rb_from_f32(rb_bf16* p, float v) { p->bits = rb_f32_to_bfloat(v); }

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
