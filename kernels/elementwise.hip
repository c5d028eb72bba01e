// Elementwise kernels: fill, counter-based random numbers, casts, unary and broadcasting
// binary ops. Semantics match the CPU device (src/device/cpu/elementwise.rs); dtype codes
// are rb_dtype's (0 f32, 1 f16, 2 bf16, 3 i32, 4 i64, 5 bool).
#include "common.h"

// ---- op codes: what an `op` / `act` argument holds. Defined once, in Rust
// (src/device/gpu/kernels.rs); its unit tests check these values and every switch's labels.
#define RB_UNARY_RELU 0
#define RB_UNARY_SIGMOID 1
#define RB_UNARY_TANH 2
#define RB_UNARY_GELU 3
#define RB_UNARY_GELU_TANH 4
#define RB_UNARY_SILU 5
#define RB_UNARY_NEG 6
#define RB_UNARY_ABS 7
#define RB_UNARY_SQRT 8
#define RB_UNARY_EXP 9
#define RB_UNARY_LOG 10
#define RB_UNARY_SIN 11
#define RB_UNARY_COS 12
#define RB_UNARY_CLAMP 13
#define RB_UNARY_HARDSWISH 14
#define RB_UNARY_LEAKY_RELU 15
#define RB_UNARY_ELU 16
#define RB_UNARY_SELU 17
#define RB_UNARY_CELU 18
#define RB_UNARY_HARDSIGMOID 19
#define RB_UNARY_SOFTPLUS 20
#define RB_UNARY_SOFTSIGN 21
#define RB_UNARY_MISH 22
#define RB_UNARY_ERF 23
#define RB_UNARY_SIGN 24
#define RB_UNARY_FLOOR 25
#define RB_UNARY_CEIL 26
#define RB_UNARY_ROUND 27
#define RB_UNARY_RECIPROCAL 28
#define RB_BINARY_ADD 0
#define RB_BINARY_SUB 1
#define RB_BINARY_MUL 2
#define RB_BINARY_DIV 3
#define RB_BINARY_POW 4
#define RB_BINARY_MAXIMUM 5
#define RB_BINARY_MINIMUM 6

// ---- fill: replicate one encoded element ------------------------------------------------
RB_KERNEL void rb_fill_b1(rb_u8* d, rb_u64 n, rb_u64 v) { for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) d[i] = (rb_u8)v; }
RB_KERNEL void rb_fill_b2(rb_u16* d, rb_u64 n, rb_u64 v) { for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) d[i] = (rb_u16)v; }
RB_KERNEL void rb_fill_b4(rb_u32* d, rb_u64 n, rb_u64 v) { for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) d[i] = (rb_u32)v; }
RB_KERNEL void rb_fill_b8(rb_u64* d, rb_u64 n, rb_u64 v) { for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) d[i] = v; }

// ---- random: the counter RNG of src/ops/random.rs -----------------------------------------
RB_DEVICE rb_u64 rb_hash64(rb_u64 seed, rb_u64 counter) {
  rb_u64 z = seed * 0x9E3779B97F4A7C15ull + counter * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
RB_DEVICE float rb_uniform(rb_u64 seed, rb_u64 c) {
  return ((float)(rb_hash64(seed, c) >> 40) + 1.0f) * (1.0f / 16777216.0f);
}
RB_DEVICE float rb_normal(rb_u64 seed, rb_u64 i) {
  float u1 = rb_uniform(seed, 2 * i), u2 = rb_uniform(seed, 2 * i + 1);
  float r = sqrtf(-2.0f * logf(u1));
  float a = 6.28318530717958647692f * u2;
  return __fmul_rn(r, cosf(a));
}
template <typename T> RB_DEVICE void rb_randn_t(T* d, rb_u64 n, rb_u64 seed) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) rb_from_f32(d + i, rb_normal(seed, i));
}
RB_KERNEL void rb_randn_f32(float* d, rb_u64 n, rb_u64 s) { rb_randn_t(d, n, s); }
RB_KERNEL void rb_randn_f16(rb_f16* d, rb_u64 n, rb_u64 s) { rb_randn_t(d, n, s); }
RB_KERNEL void rb_randn_bf16(rb_bf16* d, rb_u64 n, rb_u64 s) { rb_randn_t(d, n, s); }

RB_KERNEL void rb_randint(void* d, int is64, rb_u64 n, rb_i64 low, rb_i64 high, rb_u64 seed) {
  rb_u64 range = (rb_u64)high - (rb_u64)low;
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 v = (rb_i64)((rb_u64)low + __umul64hi(rb_hash64(seed, i), range));
    if (is64) ((rb_i64*)d)[i] = v; else ((rb_i32*)d)[i] = (rb_i32)v;
  }
}

// ---- cast (PyTorch rules: floats to integers truncate, non-zero to bool is true) -----------
RB_DEVICE double rb_load_any(const void* p, int dt, rb_u64 i) {
  switch (dt) {
    case 0: return (double)((const float*)p)[i];
    case 1: return (double)rb_half_to_f32(((const rb_u16*)p)[i]);
    case 2: return (double)rb_bfloat_to_f32(((const rb_u16*)p)[i]);
    case 3: return (double)((const rb_i32*)p)[i];
    case 4: return (double)((const rb_i64*)p)[i];
    case 6: return ((const double*)p)[i];
    case 7: return (double)((const rb_i8*)p)[i];
    case 8: return (double)((const rb_u8*)p)[i];
    case 9: return (double)((const rb_i16*)p)[i];
    default: return ((const rb_u8*)p)[i] != 0 ? 1.0 : 0.0;
  }
}
RB_DEVICE rb_i64 rb_f64_to_i64(double v) {  // Rust's saturating `as`
  if (v != v) return 0;
  if (v >= 9223372036854775807.0) return 9223372036854775807ll;
  if (v <= -9223372036854775808.0) return (-9223372036854775807ll - 1);
  return (rb_i64)v;
}
RB_DEVICE void rb_store_any(void* p, int dt, rb_u64 i, double v) {
  switch (dt) {
    case 0: ((float*)p)[i] = (float)v; break;
    case 1: ((rb_u16*)p)[i] = rb_f32_to_half((float)v); break;
    case 2: ((rb_u16*)p)[i] = rb_f32_to_bfloat((float)v); break;
    case 3: ((rb_i32*)p)[i] = (rb_i32)rb_f64_to_i64(v); break;
    case 4: ((rb_i64*)p)[i] = rb_f64_to_i64(v); break;
    case 6: ((double*)p)[i] = v; break;
    case 7: ((rb_i8*)p)[i] = (rb_i8)rb_f64_to_i64(v); break;
    case 8: ((rb_u8*)p)[i] = (rb_u8)rb_f64_to_i64(v); break;
    case 9: ((rb_i16*)p)[i] = (rb_i16)rb_f64_to_i64(v); break;
    default: ((rb_u8*)p)[i] = v != 0.0 ? 1 : 0; break;
  }
}
RB_KERNEL void rb_cast(const void* src, int sdt, void* dst, int ddt, rb_u64 n) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    if (sdt == 4 && ddt == 4) ((rb_i64*)dst)[i] = ((const rb_i64*)src)[i];
    else rb_store_any(dst, ddt, i, rb_load_any(src, sdt, i));
  }
}

// f32 <-> f16/bf16 (H: 0 f16, 1 bf16), 8 elements per thread as 16-byte vectors: the bits
// of rb_cast (whose f32 -> double -> f32 round trip quiets a signaling NaN: so do these).
// Thread i < n / 8 maps elements [8i, 8i + 8); thread n / 8 the last n % 8 one by one.
struct alignas(16) rb_f4c { float v[4]; };
RB_DEVICE float rb_quiet(float f) { return f != f ? __uint_as_float(__float_as_uint(f) | 0x00400000u) : f; }
template <int H> RB_DEVICE void rb_cast_f32_h8_t(const float* x, rb_u16* y, rb_u64 n) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    const rb_f4c a = ((const rb_f4c*)x)[2 * i], b = ((const rb_f4c*)x)[2 * i + 1];
    rb_h8 o;
#pragma unroll
    for (int j = 0; j < 4; ++j) { o.v[j] = rb_hstore<H>(a.v[j]); o.v[j + 4] = rb_hstore<H>(b.v[j]); }
    ((rb_h8*)y)[i] = o;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e) y[e] = rb_hstore<H>(x[e]);
  }
}
template <int H> RB_DEVICE void rb_cast_h8_f32_t(const rb_u16* x, float* y, rb_u64 n) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    const rb_h8 v = ((const rb_h8*)x)[i];
    rb_f4c a, b;
#pragma unroll
    for (int j = 0; j < 4; ++j) { a.v[j] = rb_quiet(rb_hload<H>(v.v[j])); b.v[j] = rb_quiet(rb_hload<H>(v.v[j + 4])); }
    ((rb_f4c*)y)[2 * i] = a;
    ((rb_f4c*)y)[2 * i + 1] = b;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e) y[e] = rb_quiet(rb_hload<H>(x[e]));
  }
}
RB_KERNEL void rb_cast_f32_h8_f16(const float* x, rb_u16* y, rb_u64 n) { rb_pdl_enter(); rb_cast_f32_h8_t<0>(x, y, n); }
RB_KERNEL void rb_cast_f32_h8_bf16(const float* x, rb_u16* y, rb_u64 n) { rb_pdl_enter(); rb_cast_f32_h8_t<1>(x, y, n); }
RB_KERNEL void rb_cast_h8_f32_f16(const rb_u16* x, float* y, rb_u64 n) { rb_pdl_enter(); rb_cast_h8_f32_t<0>(x, y, n); }
RB_KERNEL void rb_cast_h8_f32_bf16(const rb_u16* x, float* y, rb_u64 n) { rb_pdl_enter(); rb_cast_h8_f32_t<1>(x, y, n); }

// ---- unary (op: an RB_UNARY_* code) ----------------------------------------------------
RB_DEVICE float rb_unary_f(int op, float x, float p0, float p1) {
  switch (op) {
    case RB_UNARY_RELU: return rb_relu(x);
    case RB_UNARY_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case RB_UNARY_TANH: return tanhf(x);
    case RB_UNARY_GELU: return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f));
    case RB_UNARY_GELU_TANH: return 0.5f * x * (1.0f + tanhf(0.7978846f * (x + 0.044715f * x * x * x)));
    case RB_UNARY_SILU: return x / (1.0f + expf(-x));
    case RB_UNARY_HARDSWISH: return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case RB_UNARY_NEG: return -x;
    case RB_UNARY_ABS: return fabsf(x);
    case RB_UNARY_SQRT: return sqrtf(x);
    case RB_UNARY_EXP: return expf(x);
    case RB_UNARY_LOG: return logf(x);
    case RB_UNARY_SIN: return sinf(x);
    case RB_UNARY_COS: return cosf(x);
    case RB_UNARY_LEAKY_RELU: return x > 0.0f ? x : x * p0;
    case RB_UNARY_ELU: return x <= 0.0f ? p0 * expm1f(x) : x;
    case RB_UNARY_SELU: return x <= 0.0f ? 1.7580993408473766f * expm1f(x) : 1.0507009873554805f * x;
    case RB_UNARY_CELU: return x <= 0.0f ? p0 * expm1f(x * (1.0f / p0)) : x;
    case RB_UNARY_HARDSIGMOID: return x != x ? x : fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case RB_UNARY_SOFTPLUS: return x * p0 > p1 ? x : log1pf(expf(x * p0)) / p0;
    case RB_UNARY_SOFTSIGN: return x / (1.0f + fabsf(x));
    case RB_UNARY_MISH: return x * tanhf(log1pf(expf(x)));
    case RB_UNARY_ERF: return erff(x);
    case RB_UNARY_SIGN: return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);  // NaN: 0, as PyTorch
    case RB_UNARY_FLOOR: return floorf(x);
    case RB_UNARY_CEIL: return ceilf(x);
    case RB_UNARY_ROUND: return rintf(x);  // half to even
    case RB_UNARY_RECIPROCAL: return 1.0f / x;
    case RB_UNARY_CLAMP:
    default: return x != x ? x : fminf(fmaxf(x, p0), p1);  // NaN propagates, as in PyTorch
  }
}
template <typename T> RB_DEVICE void rb_unary_t(const T* x, T* y, rb_u64 n, int op, float p0, float p1) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) rb_from_f32(y + i, rb_unary_f(op, rb_to_f32(x[i]), p0, p1));
}
RB_KERNEL void rb_unary_f32(const float* x, float* y, rb_u64 n, int op, float p0, float p1) { rb_unary_t(x, y, n, op, p0, p1); }
RB_KERNEL void rb_unary_f16(const rb_f16* x, rb_f16* y, rb_u64 n, int op, float p0, float p1) { rb_unary_t(x, y, n, op, p0, p1); }
// 16-byte vectors of f32.
struct alignas(16) rb_f4 { float x, y, z, w; };
RB_DEVICE rb_f4 rb_unary_f4(int op, rb_f4 v, float p0, float p1) {
  v.x = rb_unary_f(op, v.x, p0, p1); v.y = rb_unary_f(op, v.y, p0, p1);
  v.z = rb_unary_f(op, v.z, p0, p1); v.w = rb_unary_f(op, v.w, p0, p1);
  return v;
}
// f32 fast path, one kernel per op (the op folds at compile time): each thread maps
// RB_EW_UNROLL 16-byte vectors a block-stride apart, all loads issued before any store; one
// block per blockDim * RB_EW_UNROLL vectors (no grid-stride loop). Measured on an H200
// (64M f32 relu, 256 threads): 1 vector per thread 0.967x of cudaMemcpy's bandwidth, 2: 0.930x,
// 4: 0.925x, the old grid-stride loop 0.955x; streaming (ld/st.global.cs) hints made it slower.
#define RB_EW_UNROLL 1
template <int OP>
RB_DEVICE void rb_unary_f32_x4_t(const rb_f4* x, rb_f4* y, rb_u64 n4, float p0, float p1) {
  const rb_u64 base = (rb_u64)blockIdx.x * blockDim.x * RB_EW_UNROLL + threadIdx.x;
  rb_f4 v[RB_EW_UNROLL];
#pragma unroll
  for (int k = 0; k < RB_EW_UNROLL; ++k) {
    rb_u64 i = base + (rb_u64)k * blockDim.x;
    if (i < n4) v[k] = x[i];
  }
#pragma unroll
  for (int k = 0; k < RB_EW_UNROLL; ++k) {
    rb_u64 i = base + (rb_u64)k * blockDim.x;
    if (i < n4) y[i] = rb_unary_f4(OP, v[k], p0, p1);
  }
}
// One kernel per op, named by it: rb_unary_f32_x4_<op> (the op names of kernels.rs).
#define RB_UNARY_X4(NAME, OP) \
  RB_KERNEL void rb_unary_f32_x4_##NAME(const rb_f4* x, rb_f4* y, rb_u64 n4, float p0, float p1) { rb_unary_f32_x4_t<OP>(x, y, n4, p0, p1); }
RB_UNARY_X4(relu, RB_UNARY_RELU) RB_UNARY_X4(sigmoid, RB_UNARY_SIGMOID)
RB_UNARY_X4(tanh, RB_UNARY_TANH) RB_UNARY_X4(gelu, RB_UNARY_GELU)
RB_UNARY_X4(gelu_tanh, RB_UNARY_GELU_TANH) RB_UNARY_X4(silu, RB_UNARY_SILU)
RB_UNARY_X4(neg, RB_UNARY_NEG) RB_UNARY_X4(abs, RB_UNARY_ABS) RB_UNARY_X4(sqrt, RB_UNARY_SQRT)
RB_UNARY_X4(exp, RB_UNARY_EXP) RB_UNARY_X4(log, RB_UNARY_LOG) RB_UNARY_X4(sin, RB_UNARY_SIN)
RB_UNARY_X4(cos, RB_UNARY_COS) RB_UNARY_X4(clamp, RB_UNARY_CLAMP)
RB_UNARY_X4(hardswish, RB_UNARY_HARDSWISH)
RB_UNARY_X4(leaky_relu, RB_UNARY_LEAKY_RELU)
RB_UNARY_X4(elu, RB_UNARY_ELU)
RB_UNARY_X4(selu, RB_UNARY_SELU)
RB_UNARY_X4(celu, RB_UNARY_CELU)
RB_UNARY_X4(hardsigmoid, RB_UNARY_HARDSIGMOID)
RB_UNARY_X4(softplus, RB_UNARY_SOFTPLUS)
RB_UNARY_X4(softsign, RB_UNARY_SOFTSIGN)
RB_UNARY_X4(mish, RB_UNARY_MISH)
RB_UNARY_X4(erf, RB_UNARY_ERF)
RB_UNARY_X4(sign, RB_UNARY_SIGN)
RB_UNARY_X4(floor, RB_UNARY_FLOOR)
RB_UNARY_X4(ceil, RB_UNARY_CEIL)
RB_UNARY_X4(round, RB_UNARY_ROUND)
RB_UNARY_X4(reciprocal, RB_UNARY_RECIPROCAL)
// f16/bf16 fast path, one kernel per op and format (rb_unary_h8_<f16|bf16>_<op>): a 16-byte
// vector of 8 halves per thread, f32 math, one rounding on store (the scalar kernels' bits).
// Thread i < n / 8 maps elements [8i, 8i + 8); thread n / 8 the last n % 8 one by one.
template <int OP, int H>
RB_DEVICE void rb_unary_h8_t(const rb_u16* x, rb_u16* y, rb_u64 n, float p0, float p1) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    rb_h8 v = ((const rb_h8*)x)[i];
#pragma unroll
    for (int j = 0; j < 8; ++j) v.v[j] = rb_hstore<H>(rb_unary_f(OP, rb_hload<H>(v.v[j]), p0, p1));
    ((rb_h8*)y)[i] = v;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e) y[e] = rb_hstore<H>(rb_unary_f(OP, rb_hload<H>(x[e]), p0, p1));
  }
}
#define RB_UNARY_H8(NAME, OP)                                                                          \
  RB_KERNEL void rb_unary_h8_f16_##NAME(const rb_u16* x, rb_u16* y, rb_u64 n, float p0, float p1) {  \
    rb_unary_h8_t<OP, 0>(x, y, n, p0, p1);                                                             \
  }                                                                                                    \
  RB_KERNEL void rb_unary_h8_bf16_##NAME(const rb_u16* x, rb_u16* y, rb_u64 n, float p0, float p1) { \
    rb_unary_h8_t<OP, 1>(x, y, n, p0, p1);                                                             \
  }
RB_UNARY_H8(relu, RB_UNARY_RELU) RB_UNARY_H8(sigmoid, RB_UNARY_SIGMOID)
RB_UNARY_H8(tanh, RB_UNARY_TANH) RB_UNARY_H8(gelu, RB_UNARY_GELU)
RB_UNARY_H8(gelu_tanh, RB_UNARY_GELU_TANH) RB_UNARY_H8(silu, RB_UNARY_SILU)
RB_UNARY_H8(neg, RB_UNARY_NEG) RB_UNARY_H8(abs, RB_UNARY_ABS) RB_UNARY_H8(sqrt, RB_UNARY_SQRT)
RB_UNARY_H8(exp, RB_UNARY_EXP) RB_UNARY_H8(log, RB_UNARY_LOG) RB_UNARY_H8(sin, RB_UNARY_SIN)
RB_UNARY_H8(cos, RB_UNARY_COS) RB_UNARY_H8(clamp, RB_UNARY_CLAMP)
RB_UNARY_H8(hardswish, RB_UNARY_HARDSWISH)
RB_UNARY_H8(leaky_relu, RB_UNARY_LEAKY_RELU)
RB_UNARY_H8(elu, RB_UNARY_ELU)
RB_UNARY_H8(selu, RB_UNARY_SELU)
RB_UNARY_H8(celu, RB_UNARY_CELU)
RB_UNARY_H8(hardsigmoid, RB_UNARY_HARDSIGMOID)
RB_UNARY_H8(softplus, RB_UNARY_SOFTPLUS)
RB_UNARY_H8(softsign, RB_UNARY_SOFTSIGN)
RB_UNARY_H8(mish, RB_UNARY_MISH)
RB_UNARY_H8(erf, RB_UNARY_ERF)
RB_UNARY_H8(sign, RB_UNARY_SIGN)
RB_UNARY_H8(floor, RB_UNARY_FLOOR)
RB_UNARY_H8(ceil, RB_UNARY_CEIL)
RB_UNARY_H8(round, RB_UNARY_ROUND)
RB_UNARY_H8(reciprocal, RB_UNARY_RECIPROCAL)
RB_KERNEL void rb_unary_bf16(const rb_bf16* x, rb_bf16* y, rb_u64 n, int op, float p0, float p1) { rb_unary_t(x, y, n, op, p0, p1); }

// ---- binary with broadcasting through element strides -------------------------------------
#define RB_MAX_DIMS 16
struct RbLayout {
  rb_i64 nd;
  rb_i64 shape[RB_MAX_DIMS];
  rb_i64 sa[RB_MAX_DIMS];
  rb_i64 sb[RB_MAX_DIMS];
};

RB_DEVICE float rb_binary_f(int op, float a, float b) {
  switch (op) {
    case RB_BINARY_ADD: return a + b;
    case RB_BINARY_SUB: return a - b;
    case RB_BINARY_MUL: return __fmul_rn(a, b);
    case RB_BINARY_DIV: return a / b;
    case RB_BINARY_POW: return powf(a, b);
    case RB_BINARY_MAXIMUM: return (a != a || b != b) ? __int_as_float(0x7fc00000) : fmaxf(a, b);
    case RB_BINARY_MINIMUM:
    default: return (a != a || b != b) ? __int_as_float(0x7fc00000) : fminf(a, b);
  }
}
// f64 tensors compute in double (PyTorch's opmath for double).
RB_DEVICE double rb_binary_d(int op, double a, double b) {
  switch (op) {
    case RB_BINARY_ADD: return a + b;
    case RB_BINARY_SUB: return a - b;
    case RB_BINARY_MUL: return __dmul_rn(a, b);
    case RB_BINARY_DIV: return a / b;
    case RB_BINARY_POW: return pow(a, b);
    case RB_BINARY_MAXIMUM: return (a != a || b != b) ? a + b : fmax(a, b);
    case RB_BINARY_MINIMUM:
    default: return (a != a || b != b) ? a + b : fmin(a, b);
  }
}
RB_DEVICE rb_i64 rb_binary_i(int op, rb_i64 a, rb_i64 b) {
  rb_u64 ua = (rb_u64)a, ub = (rb_u64)b;
  switch (op) {
    case RB_BINARY_ADD: return (rb_i64)(ua + ub);
    case RB_BINARY_SUB: return (rb_i64)(ua - ub);
    case RB_BINARY_MUL: return (rb_i64)(ua * ub);
    case RB_BINARY_DIV: return b == 0 ? 0 : (a == (-9223372036854775807ll - 1) && b == -1) ? 0 : a / b;
    case RB_BINARY_POW: {
      if (b < 0) return 0;
      rb_u64 e = ub > 0xffffffffull ? 0xffffffffull : ub, r = 1, base = ua;
      while (e) { if (e & 1) r *= base; base *= base; e >>= 1; }
      return (rb_i64)r;
    }
    case RB_BINARY_MAXIMUM: return a > b ? a : b;
    case RB_BINARY_MINIMUM:
    default: return a < b ? a : b;
  }
}

RB_DEVICE void rb_offsets(const RbLayout& l, rb_u64 lin, rb_i64* oa, rb_i64* ob) {
  rb_i64 a = 0, b = 0;
  for (int d = (int)l.nd - 1; d >= 0; --d) {
    rb_i64 e = l.shape[d];
    rb_i64 k = (rb_i64)(lin % (rb_u64)e);
    lin /= (rb_u64)e;
    a += k * l.sa[d];
    b += k * l.sb[d];
  }
  *oa = a;
  *ob = b;
}

template <typename T> RB_DEVICE void rb_binary_ft(const T* a, const T* b, T* o, rb_u64 n, int op, const RbLayout& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 ia, ib;
    rb_offsets(l, i, &ia, &ib);
    rb_from_f32(o + i, rb_binary_f(op, rb_to_f32(a[ia]), rb_to_f32(b[ib])));
  }
}
template <typename T> RB_DEVICE void rb_binary_it(const T* a, const T* b, T* o, rb_u64 n, int op, const RbLayout& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 ia, ib;
    rb_offsets(l, i, &ia, &ib);
    o[i] = (T)rb_binary_i(op, (rb_i64)a[ia], (rb_i64)b[ib]);
  }
}
// Same-shape f32 operands: no index arithmetic; 16-byte loads, two vectors per thread.
RB_DEVICE rb_f4 rb_binary_f4(int op, rb_f4 a, rb_f4 b) {
  a.x = rb_binary_f(op, a.x, b.x); a.y = rb_binary_f(op, a.y, b.y);
  a.z = rb_binary_f(op, a.z, b.z); a.w = rb_binary_f(op, a.w, b.w);
  return a;
}
RB_KERNEL void rb_binary_f32_flat_v4(const rb_f4* a, const rb_f4* b, rb_f4* o, rb_u64 n4, int op) {
  const rb_u64 s = rb_gstride();
  rb_u64 i = rb_gid();
  for (; i + s < n4; i += 2 * s) {
    rb_f4 a0 = a[i], b0 = b[i], a1 = a[i + s], b1 = b[i + s];
    o[i] = rb_binary_f4(op, a0, b0);
    o[i + s] = rb_binary_f4(op, a1, b1);
  }
  if (i < n4) o[i] = rb_binary_f4(op, a[i], b[i]);
}
RB_KERNEL void rb_binary_f32_flat(const float* a, const float* b, float* o, rb_u64 n, int op) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) o[i] = rb_binary_f(op, a[i], b[i]);
}
// f16/bf16 fast path, one kernel per op and format (rb_binary_h8_<f16|bf16>_<op>): 8 halves
// per thread, f32 math, one rounding. Output element e reads operand element e % p of each
// operand, its period p (BroadcastLayout::period): n for a same-shape operand, 1 for a scalar,
// a multiple of 8 for a trailing-dimensions broadcast (a bias row): so 8 consecutive outputs
// read one aligned vector (or one scalar). Thread n / 8 maps the last n % 8 one by one.
template <int H> RB_DEVICE rb_h8 rb_hvec(const rb_u16* p, rb_u64 period, rb_u64 e) {
  if (period == 1) {
    rb_h8 v;
    const rb_u16 s = p[0];
#pragma unroll
    for (int j = 0; j < 8; ++j) v.v[j] = s;
    return v;
  }
  return *(const rb_h8*)(p + (e < period ? e : e % period));
}
template <int OP, int H>
RB_DEVICE void rb_binary_h8_t(const rb_u16* a, const rb_u16* b, rb_u16* o, rb_u64 n, rb_u64 pa, rb_u64 pb) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    const rb_h8 va = rb_hvec<H>(a, pa, i * 8), vb = rb_hvec<H>(b, pb, i * 8);
    rb_h8 v;
#pragma unroll
    for (int j = 0; j < 8; ++j) v.v[j] = rb_hstore<H>(rb_binary_f(OP, rb_hload<H>(va.v[j]), rb_hload<H>(vb.v[j])));
    ((rb_h8*)o)[i] = v;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e)
      o[e] = rb_hstore<H>(rb_binary_f(OP, rb_hload<H>(a[e % pa]), rb_hload<H>(b[e % pb])));
  }
}
#define RB_BINARY_H8(NAME, OP)                                                                         \
  RB_KERNEL void rb_binary_h8_f16_##NAME(const rb_u16* a, const rb_u16* b, rb_u16* o, rb_u64 n,       \
                                         rb_u64 pa, rb_u64 pb) {                                      \
    rb_binary_h8_t<OP, 0>(a, b, o, n, pa, pb);                                                         \
  }                                                                                                    \
  RB_KERNEL void rb_binary_h8_bf16_##NAME(const rb_u16* a, const rb_u16* b, rb_u16* o, rb_u64 n,      \
                                          rb_u64 pa, rb_u64 pb) {                                     \
    rb_binary_h8_t<OP, 1>(a, b, o, n, pa, pb);                                                         \
  }
RB_BINARY_H8(add, RB_BINARY_ADD) RB_BINARY_H8(sub, RB_BINARY_SUB) RB_BINARY_H8(mul, RB_BINARY_MUL)
RB_BINARY_H8(div, RB_BINARY_DIV) RB_BINARY_H8(pow, RB_BINARY_POW)
RB_BINARY_H8(maximum, RB_BINARY_MAXIMUM) RB_BINARY_H8(minimum, RB_BINARY_MINIMUM)
RB_KERNEL void rb_binary_f32(const float* a, const float* b, float* o, rb_u64 n, int op, RbLayout l) { rb_binary_ft(a, b, o, n, op, l); }
RB_KERNEL void rb_binary_f16(const rb_f16* a, const rb_f16* b, rb_f16* o, rb_u64 n, int op, RbLayout l) { rb_binary_ft(a, b, o, n, op, l); }
RB_KERNEL void rb_binary_bf16(const rb_bf16* a, const rb_bf16* b, rb_bf16* o, rb_u64 n, int op, RbLayout l) { rb_binary_ft(a, b, o, n, op, l); }
RB_KERNEL void rb_binary_i32(const rb_i32* a, const rb_i32* b, rb_i32* o, rb_u64 n, int op, RbLayout l) { rb_binary_it(a, b, o, n, op, l); }
RB_KERNEL void rb_binary_i64(const rb_i64* a, const rb_i64* b, rb_i64* o, rb_u64 n, int op, RbLayout l) { rb_binary_it(a, b, o, n, op, l); }
// The small integers compute in 64 bits and wrap to their width, as the CPU's.
RB_KERNEL void rb_binary_i8(const rb_i8* a, const rb_i8* b, rb_i8* o, rb_u64 n, int op, RbLayout l) { rb_binary_it(a, b, o, n, op, l); }
RB_KERNEL void rb_binary_u8(const rb_u8* a, const rb_u8* b, rb_u8* o, rb_u64 n, int op, RbLayout l) { rb_binary_it(a, b, o, n, op, l); }
RB_KERNEL void rb_binary_i16(const rb_i16* a, const rb_i16* b, rb_i16* o, rb_u64 n, int op, RbLayout l) { rb_binary_it(a, b, o, n, op, l); }
RB_KERNEL void rb_binary_f64(const double* a, const double* b, double* o, rb_u64 n, int op, RbLayout l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 ia, ib;
    rb_offsets(l, i, &ia, &ib);
    o[i] = rb_binary_d(op, a[ia], b[ib]);
  }
}

// ---- C = beta * C for column-major batches (GEMM with k = 0) -------------------------------
template <typename T> RB_DEVICE void rb_scale_cm_t(T* c, rb_i64 m, rb_i64 n, rb_i64 ldc, rb_i64 batch, rb_i64 stride, float beta) {
  rb_u64 total = (rb_u64)m * n * batch;
  for (rb_u64 i = rb_gid(); i < total; i += rb_gstride()) {
    rb_i64 r = (rb_i64)(i % (rb_u64)m), rest = (rb_i64)(i / (rb_u64)m);
    rb_i64 col = rest % n, bi = rest / n;
    T* p = c + bi * stride + col * ldc + r;
    rb_from_f32(p, beta == 0.0f ? 0.0f : beta * rb_to_f32(*p));
  }
}
RB_KERNEL void rb_scale_cm_f32(float* c, rb_i64 m, rb_i64 n, rb_i64 ldc, rb_i64 batch, rb_i64 stride, float beta) { rb_scale_cm_t(c, m, n, ldc, batch, stride, beta); }
RB_KERNEL void rb_scale_cm_f16(rb_f16* c, rb_i64 m, rb_i64 n, rb_i64 ldc, rb_i64 batch, rb_i64 stride, float beta) { rb_scale_cm_t(c, m, n, ldc, batch, stride, beta); }
RB_KERNEL void rb_scale_cm_bf16(rb_bf16* c, rb_i64 m, rb_i64 n, rb_i64 ldc, rb_i64 batch, rb_i64 stride, float beta) { rb_scale_cm_t(c, m, n, ldc, batch, stride, beta); }
RB_KERNEL void rb_scale_cm_f64(double* c, rb_i64 m, rb_i64 n, rb_i64 ldc, rb_i64 batch, rb_i64 stride, float beta) {
  rb_u64 total = (rb_u64)m * n * batch;
  for (rb_u64 i = rb_gid(); i < total; i += rb_gstride()) {
    rb_i64 r = (rb_i64)(i % (rb_u64)m), rest = (rb_i64)(i / (rb_u64)m);
    rb_i64 col = rest % n, bi = rest / n;
    double* p = c + bi * stride + col * ldc + r;
    *p = beta == 0.0f ? 0.0 : (double)beta * *p;
  }
}

// ---- f64 unary ops and their backward (op: an RB_UNARY_* code; every op). Computed in
// double with the float64 reference formulas of src/ops/elementwise.rs
// (UnaryOp::reference / grad_reference), as the CPU does; p0/p1 are the op's f32
// parameters widened to double, as the reference widens them.
#define RB_SELU_ALPHA_D 1.6732632423543772848170429916717
#define RB_SELU_SCALE_D 1.0507009873554804934193349852946
RB_DEVICE double rb_sigmoid_d(double x) { return 1.0 / (1.0 + exp(-x)); }
RB_DEVICE double rb_unary_d(int op, double x, double lo, double hi) {
  switch (op) {
    case RB_UNARY_RELU: return x < 0.0 ? 0.0 : x;
    case RB_UNARY_SIGMOID: return rb_sigmoid_d(x);
    case RB_UNARY_TANH: return tanh(x);
    case RB_UNARY_GELU: return 0.5 * x * (1.0 + erf(x / 1.4142135623730950488));
    case RB_UNARY_GELU_TANH: {
      const double c = sqrt(2.0 / 3.14159265358979323846);
      return 0.5 * x * (1.0 + tanh(c * (x + 0.044715 * x * x * x)));
    }
    case RB_UNARY_SILU: return x / (1.0 + exp(-x));
    // Rust's clamp keeps a NaN (x * NaN is NaN either way).
    case RB_UNARY_HARDSWISH: return x * fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case RB_UNARY_NEG: return -x;
    case RB_UNARY_ABS: return fabs(x);
    case RB_UNARY_SQRT: return sqrt(x);
    case RB_UNARY_EXP: return exp(x);
    case RB_UNARY_LOG: return log(x);
    case RB_UNARY_SIN: return sin(x);
    case RB_UNARY_COS: return cos(x);
    case RB_UNARY_LEAKY_RELU: return x > 0.0 ? x : x * lo;
    case RB_UNARY_ELU: return x <= 0.0 ? lo * expm1(x) : x;
    case RB_UNARY_SELU: return x <= 0.0 ? (RB_SELU_ALPHA_D * RB_SELU_SCALE_D) * expm1(x) : x * RB_SELU_SCALE_D;
    case RB_UNARY_CELU: return x <= 0.0 ? lo * expm1(x * (1.0 / lo)) : x;
    case RB_UNARY_HARDSIGMOID: return x != x ? x : fmin(fmax(x + 3.0, 0.0), 6.0) / 6.0;
    case RB_UNARY_SOFTPLUS: return x * lo > hi ? x : log1p(exp(x * lo)) / lo;
    case RB_UNARY_SOFTSIGN: return x / (1.0 + fabs(x));
    case RB_UNARY_MISH: return x * tanh(log1p(exp(x)));
    case RB_UNARY_ERF: return erf(x);
    case RB_UNARY_SIGN: return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : 0.0);  // NaN: 0, as PyTorch
    case RB_UNARY_FLOOR: return floor(x);
    case RB_UNARY_CEIL: return ceil(x);
    case RB_UNARY_ROUND: return rint(x);  // half to even
    case RB_UNARY_RECIPROCAL: return 1.0 / x;
    case RB_UNARY_CLAMP:
    default: return x != x ? x : fmin(fmax(x, lo), hi);
  }
}
RB_DEVICE double rb_unary_bwd_d(int op, double x, double dy, double lo, double hi) {
  switch (op) {
    case RB_UNARY_RELU: return x <= 0.0 ? 0.0 : dy;
    case RB_UNARY_SIGMOID: {
      const double s = rb_sigmoid_d(x);
      return dy * s * (1.0 - s);
    }
    case RB_UNARY_TANH: {
      const double t = tanh(x);
      return dy * (1.0 - t * t);
    }
    case RB_UNARY_GELU: {
      const double cdf = 0.5 * (1.0 + erf(x / 1.4142135623730950488));
      const double pdf = exp(-0.5 * x * x) / sqrt(2.0 * 3.14159265358979323846);
      return dy * (cdf + x * pdf);
    }
    case RB_UNARY_GELU_TANH: {
      const double beta = sqrt(2.0 / 3.14159265358979323846), kappa = 0.044715;
      const double t = tanh(beta * (x + kappa * x * x * x));
      return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * beta * (1.0 + 3.0 * kappa * x * x));
    }
    case RB_UNARY_SILU: {
      const double s = rb_sigmoid_d(x);
      return dy * s * (1.0 + x * (1.0 - s));
    }
    case RB_UNARY_HARDSWISH: return x < -3.0 ? 0.0 : (x <= 3.0 ? dy * (x / 3.0 + 0.5) : dy);
    case RB_UNARY_NEG: return -dy;
    case RB_UNARY_ABS: return x > 0.0 ? dy : (x < 0.0 ? -dy : 0.0 * dy);
    case RB_UNARY_SQRT: return dy / (2.0 * sqrt(x));
    case RB_UNARY_EXP: return dy * exp(x);
    case RB_UNARY_LOG: return dy / x;
    case RB_UNARY_SIN: return dy * cos(x);
    case RB_UNARY_COS: return -dy * sin(x);
    case RB_UNARY_LEAKY_RELU: return x > 0.0 ? dy : dy * lo;
    case RB_UNARY_ELU: return x <= 0.0 ? dy * lo * exp(x) : dy;
    case RB_UNARY_SELU: return x <= 0.0 ? dy * (RB_SELU_ALPHA_D * RB_SELU_SCALE_D) * exp(x) : dy * RB_SELU_SCALE_D;
    case RB_UNARY_CELU: return x <= 0.0 ? dy * exp(x * (1.0 / lo)) : dy;
    case RB_UNARY_HARDSIGMOID: return (x > -3.0 && x < 3.0) ? dy / 6.0 : 0.0;
    case RB_UNARY_SOFTPLUS: {
      if (x * lo > hi) return dy;
      const double z = exp(x * lo);
      return dy * z / (z + 1.0);
    }
    case RB_UNARY_SOFTSIGN: {
      const double d = 1.0 + fabs(x);
      return dy / (d * d);
    }
    case RB_UNARY_MISH: {
      const double s = rb_sigmoid_d(x), t = tanh(log1p(exp(x)));
      return dy * (t + x * s * (1.0 - t * t));
    }
    case RB_UNARY_ERF: return dy * 1.1283791670955125739 * exp(-(x * x));
    case RB_UNARY_SIGN:
    case RB_UNARY_FLOOR:
    case RB_UNARY_CEIL:
    case RB_UNARY_ROUND: return 0.0;
    case RB_UNARY_RECIPROCAL: {
      const double r = 1.0 / x;
      return -dy * (r * r);
    }
    case RB_UNARY_CLAMP:
    default: return (x >= lo && x <= hi) ? dy : 0.0;
  }
}
RB_KERNEL void rb_unary_d_f64(const double* x, double* y, rb_u64 n, int op, float p0, float p1) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) y[i] = rb_unary_d(op, x[i], (double)p0, (double)p1);
}
RB_KERNEL void rb_unary_bwd_d_f64(const double* x, const double* dy, double* dx, rb_u64 n, int op, float p0, float p1) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) dx[i] = rb_unary_bwd_d(op, x[i], dy[i], (double)p0, (double)p1);
}
