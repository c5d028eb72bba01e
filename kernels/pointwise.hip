// Pointwise kernels beyond elementwise.hip: unary and binary backwards, comparisons, where,
// and the fused DNN pointwise ops (add+relu, mul+add, bias+activation epilogue, column sums).
// Semantics match the CPU device (src/device/cpu/elementwise.rs, src/device/cpu/blas.rs);
// f16/bf16 compute in f32. Names carry a `pw` prefix so this file never clashes with
// another kernel file or with additions to common.h (the op-code #defines below are the
// exceptions: elementwise.hip's, with the same names and values).
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
#define RB_COMPARE_EQ 0
#define RB_COMPARE_NE 1
#define RB_COMPARE_LT 2
#define RB_COMPARE_LE 3
#define RB_COMPARE_GT 4
#define RB_COMPARE_GE 5
#define RB_ACT_NONE 0
#define RB_ACT_RELU 1
#define RB_ACT_GELU 2
#define RB_ACT_GELU_TANH 3

#define RB_PW_MAX_DIMS 16

// Broadcast walks: the merged output shape and each operand's element strides
// (BroadcastLayout of src/base/shape.rs). Two operands, and three.
struct RbPwLayout2 {
  rb_i64 nd;
  rb_i64 shape[RB_PW_MAX_DIMS];
  rb_i64 s0[RB_PW_MAX_DIMS];
  rb_i64 s1[RB_PW_MAX_DIMS];
};
struct RbPwLayout3 {
  rb_i64 nd;
  rb_i64 shape[RB_PW_MAX_DIMS];
  rb_i64 s0[RB_PW_MAX_DIMS];
  rb_i64 s1[RB_PW_MAX_DIMS];
  rb_i64 s2[RB_PW_MAX_DIMS];
};

RB_DEVICE void rb_pw_offsets2(const RbPwLayout2& l, rb_u64 lin, rb_i64* o0, rb_i64* o1) {
  rb_i64 a = 0, b = 0;
  for (int d = (int)l.nd - 1; d >= 0; --d) {
    rb_u64 e = (rb_u64)l.shape[d];
    rb_i64 k = (rb_i64)(lin % e);
    lin /= e;
    a += k * l.s0[d];
    b += k * l.s1[d];
  }
  *o0 = a;
  *o1 = b;
}
RB_DEVICE void rb_pw_offsets3(const RbPwLayout3& l, rb_u64 lin, rb_i64* o0, rb_i64* o1, rb_i64* o2) {
  rb_i64 a = 0, b = 0, c = 0;
  for (int d = (int)l.nd - 1; d >= 0; --d) {
    rb_u64 e = (rb_u64)l.shape[d];
    rb_i64 k = (rb_i64)(lin % e);
    lin /= e;
    a += k * l.s0[d];
    b += k * l.s1[d];
    c += k * l.s2[d];
  }
  *o0 = a;
  *o1 = b;
  *o2 = c;
}

// 16-byte vectors. Plain loads and stores: on an H200, streaming (ld/st.global.cs) hints
// made compare and where 5-9% slower.
struct alignas(16) rb_pw_f4 { float x, y, z, w; };

// ---- unary backward (op: an RB_UNARY_* code) -------------------------------------------
RB_DEVICE float rb_pw_sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
RB_DEVICE float rb_pw_unary_grad(int op, float x, float g, float p0, float p1) {
  switch (op) {
    case RB_UNARY_RELU: return x <= 0.0f ? 0.0f : g;  // threshold_backward: a NaN x passes g
    case RB_UNARY_SIGMOID: { float s = rb_pw_sigmoid(x); return g * s * (1.0f - s); }
    case RB_UNARY_TANH: { float t = tanhf(x); return g * (1.0f - t * t); }
    case RB_UNARY_GELU: {
      float cdf = 0.5f * (1.0f + erff(x * 0.70710678118654752440f));
      float pdf = expf(-0.5f * x * x) * 0.3989422804014327f;
      return g * (cdf + x * pdf);
    }
    case RB_UNARY_GELU_TANH: {
      const float beta = 0.7978846f, kappa = 0.044715f;
      float t = tanhf(beta * (x + kappa * x * x * x));
      return g * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * beta * (1.0f + 3.0f * kappa * x * x));
    }
    case RB_UNARY_SILU: { float s = rb_pw_sigmoid(x); return g * s * (1.0f + x * (1.0f - s)); }
    case RB_UNARY_HARDSWISH: return x < -3.0f ? 0.0f : (x <= 3.0f ? g * (x / 3.0f + 0.5f) : g);
    case RB_UNARY_NEG: return -g;
    case RB_UNARY_ABS: return x > 0.0f ? g : (x < 0.0f ? -g : 0.0f * g);
    case RB_UNARY_SQRT: return g / (2.0f * sqrtf(x));
    case RB_UNARY_EXP: return g * expf(x);
    case RB_UNARY_LOG: return g / x;
    case RB_UNARY_SIN: return g * cosf(x);
    case RB_UNARY_COS: return -g * sinf(x);
    case RB_UNARY_LEAKY_RELU: return x > 0.0f ? g : g * p0;
    case RB_UNARY_ELU: return x <= 0.0f ? g * p0 * expf(x) : g;
    case RB_UNARY_SELU: return x <= 0.0f ? g * 1.7580993408473766f * expf(x) : g * 1.0507009873554805f;
    case RB_UNARY_CELU: return x <= 0.0f ? g * expf(x * (1.0f / p0)) : g;
    case RB_UNARY_HARDSIGMOID: return (x > -3.0f && x < 3.0f) ? g / 6.0f : 0.0f;
    case RB_UNARY_SOFTPLUS: {
      if (x * p0 > p1) return g;
      float z = expf(x * p0);
      return g * z / (z + 1.0f);
    }
    case RB_UNARY_SOFTSIGN: { float d = 1.0f + fabsf(x); return g / (d * d); }
    case RB_UNARY_MISH: {
      float s = rb_pw_sigmoid(x), t = tanhf(log1pf(expf(x)));
      return g * (t + x * s * (1.0f - t * t));
    }
    case RB_UNARY_ERF: return g * 1.1283791670955126f * expf(-(x * x));
    case RB_UNARY_SIGN:
    case RB_UNARY_FLOOR:
    case RB_UNARY_CEIL:
    case RB_UNARY_ROUND: return 0.0f;
    case RB_UNARY_RECIPROCAL: { float r = 1.0f / x; return -g * (r * r); }
    case RB_UNARY_CLAMP:
    default: return (x >= p0 && x <= p1) ? g : 0.0f;
  }
}
// dx may alias x or dy: every element is read before it is written, by the same thread.
template <typename T>
RB_DEVICE void rb_pw_unary_bwd_t(const T* x, const T* dy, T* dx, rb_u64 n, int op, float p0, float p1) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride())
    rb_from_f32(dx + i, rb_pw_unary_grad(op, rb_to_f32(x[i]), rb_to_f32(dy[i]), p0, p1));
}
RB_KERNEL void rb_pw_unary_bwd_f32(const float* x, const float* dy, float* dx, rb_u64 n, int op, float p0, float p1) { rb_pw_unary_bwd_t(x, dy, dx, n, op, p0, p1); }
RB_KERNEL void rb_pw_unary_bwd_f16(const rb_f16* x, const rb_f16* dy, rb_f16* dx, rb_u64 n, int op, float p0, float p1) { rb_pw_unary_bwd_t(x, dy, dx, n, op, p0, p1); }
RB_KERNEL void rb_pw_unary_bwd_bf16(const rb_bf16* x, const rb_bf16* dy, rb_bf16* dx, rb_u64 n, int op, float p0, float p1) { rb_pw_unary_bwd_t(x, dy, dx, n, op, p0, p1); }

// Same-shape fast path, one kernel per op and dtype (rb_pw_unary_bwd_v_<dtype>_<op>): 16-byte
// vectors (4 f32 or 8 halves) of x and dy per thread, the op folded at compile time, the
// scalar kernels' bits. Thread i < n / W maps elements [Wi, Wi + W); thread n / W maps the
// last n % W one by one. dx may alias x or dy (each thread reads its elements first).
template <int OP> RB_DEVICE void rb_pw_unary_bwd_f4_t(const float* x, const float* dy, float* dx, rb_u64 n, float p0, float p1) {
  const rb_u64 i = rb_gid(), n4 = n / 4;
  if (i < n4) {
    const rb_pw_f4 a = ((const rb_pw_f4*)x)[i], g = ((const rb_pw_f4*)dy)[i];
    rb_pw_f4 o;
    o.x = rb_pw_unary_grad(OP, a.x, g.x, p0, p1);
    o.y = rb_pw_unary_grad(OP, a.y, g.y, p0, p1);
    o.z = rb_pw_unary_grad(OP, a.z, g.z, p0, p1);
    o.w = rb_pw_unary_grad(OP, a.w, g.w, p0, p1);
    ((rb_pw_f4*)dx)[i] = o;
  } else if (i == n4) {
    for (rb_u64 e = n4 * 4; e < n; ++e) dx[e] = rb_pw_unary_grad(OP, x[e], dy[e], p0, p1);
  }
}
template <int OP, int H> RB_DEVICE void rb_pw_unary_bwd_h8_t(const rb_u16* x, const rb_u16* dy, rb_u16* dx, rb_u64 n, float p0, float p1) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    const rb_h8 a = ((const rb_h8*)x)[i], g = ((const rb_h8*)dy)[i];
    rb_h8 o;
#pragma unroll
    for (int j = 0; j < 8; ++j) o.v[j] = rb_hstore<H>(rb_pw_unary_grad(OP, rb_hload<H>(a.v[j]), rb_hload<H>(g.v[j]), p0, p1));
    ((rb_h8*)dx)[i] = o;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e)
      dx[e] = rb_hstore<H>(rb_pw_unary_grad(OP, rb_hload<H>(x[e]), rb_hload<H>(dy[e]), p0, p1));
  }
}
#define RB_PW_UNARY_BWD_V(NAME, OP)                                                                       \
  RB_KERNEL void rb_pw_unary_bwd_v_f32_##NAME(const float* x, const float* dy, float* dx, rb_u64 n,      \
                                              float p0, float p1) {                                     \
    rb_pw_unary_bwd_f4_t<OP>(x, dy, dx, n, p0, p1);                                                      \
  }                                                                                                       \
  RB_KERNEL void rb_pw_unary_bwd_v_f16_##NAME(const rb_u16* x, const rb_u16* dy, rb_u16* dx, rb_u64 n,   \
                                              float p0, float p1) {                                     \
    rb_pw_unary_bwd_h8_t<OP, 0>(x, dy, dx, n, p0, p1);                                                   \
  }                                                                                                       \
  RB_KERNEL void rb_pw_unary_bwd_v_bf16_##NAME(const rb_u16* x, const rb_u16* dy, rb_u16* dx, rb_u64 n,  \
                                               float p0, float p1) {                                    \
    rb_pw_unary_bwd_h8_t<OP, 1>(x, dy, dx, n, p0, p1);                                                   \
  }
RB_PW_UNARY_BWD_V(relu, RB_UNARY_RELU) RB_PW_UNARY_BWD_V(sigmoid, RB_UNARY_SIGMOID)
RB_PW_UNARY_BWD_V(tanh, RB_UNARY_TANH) RB_PW_UNARY_BWD_V(gelu, RB_UNARY_GELU)
RB_PW_UNARY_BWD_V(gelu_tanh, RB_UNARY_GELU_TANH) RB_PW_UNARY_BWD_V(silu, RB_UNARY_SILU)
RB_PW_UNARY_BWD_V(neg, RB_UNARY_NEG) RB_PW_UNARY_BWD_V(abs, RB_UNARY_ABS)
RB_PW_UNARY_BWD_V(sqrt, RB_UNARY_SQRT) RB_PW_UNARY_BWD_V(exp, RB_UNARY_EXP)
RB_PW_UNARY_BWD_V(log, RB_UNARY_LOG) RB_PW_UNARY_BWD_V(sin, RB_UNARY_SIN)
RB_PW_UNARY_BWD_V(cos, RB_UNARY_COS) RB_PW_UNARY_BWD_V(clamp, RB_UNARY_CLAMP)
RB_PW_UNARY_BWD_V(hardswish, RB_UNARY_HARDSWISH)
RB_PW_UNARY_BWD_V(leaky_relu, RB_UNARY_LEAKY_RELU)
RB_PW_UNARY_BWD_V(elu, RB_UNARY_ELU)
RB_PW_UNARY_BWD_V(selu, RB_UNARY_SELU)
RB_PW_UNARY_BWD_V(celu, RB_UNARY_CELU)
RB_PW_UNARY_BWD_V(hardsigmoid, RB_UNARY_HARDSIGMOID)
RB_PW_UNARY_BWD_V(softplus, RB_UNARY_SOFTPLUS)
RB_PW_UNARY_BWD_V(softsign, RB_UNARY_SOFTSIGN)
RB_PW_UNARY_BWD_V(mish, RB_UNARY_MISH)
RB_PW_UNARY_BWD_V(erf, RB_UNARY_ERF)
RB_PW_UNARY_BWD_V(sign, RB_UNARY_SIGN)
RB_PW_UNARY_BWD_V(floor, RB_UNARY_FLOOR)
RB_PW_UNARY_BWD_V(ceil, RB_UNARY_CEIL)
RB_PW_UNARY_BWD_V(round, RB_UNARY_ROUND)
RB_PW_UNARY_BWD_V(reciprocal, RB_UNARY_RECIPROCAL)

// ---- binary backward: ga/gb (contiguous, either NULL) from a, b, dy walked by layout -------
RB_DEVICE void rb_pw_binary_grad(int op, float a, float b, float g, float* da, float* db) {
  switch (op) {
    case RB_BINARY_ADD: *da = g; *db = g; return;
    case RB_BINARY_SUB: *da = g; *db = -g; return;
    case RB_BINARY_MUL: *da = g * b; *db = g * a; return;
    case RB_BINARY_DIV: *da = g / b; *db = -g * ((a / b) / b); return;  // PyTorch's form: no b*b to overflow
    case RB_BINARY_POW:
      *da = b == 0.0f ? 0.0f : g * b * powf(a, b - 1.0f);
      *db = (a == 0.0f && b >= 0.0f) ? 0.0f : g * powf(a, b) * logf(a);
      return;
    case RB_BINARY_MAXIMUM:
    case RB_BINARY_MINIMUM:
    default: {
      // PyTorch: where(a == b, g / 2, g), zeroed for the operand that loses; comparisons
      // with NaN are false, so a NaN operand and the other both get g.
      float h = a == b ? g * 0.5f : g;
      bool is_max = op == RB_BINARY_MAXIMUM;
      bool a_loses = is_max ? a < b : a > b, b_loses = is_max ? a > b : a < b;
      *da = a_loses ? 0.0f : h;
      *db = b_loses ? 0.0f : h;
      return;
    }
  }
}
template <typename T>
RB_DEVICE void rb_pw_binary_bwd_t(const T* a, const T* b, const T* dy, T* ga, T* gb, rb_u64 n, int op, const RbPwLayout3& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 oa, ob, od;
    rb_pw_offsets3(l, i, &oa, &ob, &od);
    float da, db;
    rb_pw_binary_grad(op, rb_to_f32(a[oa]), rb_to_f32(b[ob]), rb_to_f32(dy[od]), &da, &db);
    if (ga) rb_from_f32(ga + i, da);
    if (gb) rb_from_f32(gb + i, db);
  }
}
RB_KERNEL void rb_pw_binary_bwd_f32(const float* a, const float* b, const float* dy, float* ga, float* gb, rb_u64 n, int op, RbPwLayout3 l) { rb_pw_binary_bwd_t(a, b, dy, ga, gb, n, op, l); }
RB_KERNEL void rb_pw_binary_bwd_f16(const rb_f16* a, const rb_f16* b, const rb_f16* dy, rb_f16* ga, rb_f16* gb, rb_u64 n, int op, RbPwLayout3 l) { rb_pw_binary_bwd_t(a, b, dy, ga, gb, n, op, l); }
RB_KERNEL void rb_pw_binary_bwd_bf16(const rb_bf16* a, const rb_bf16* b, const rb_bf16* dy, rb_bf16* ga, rb_bf16* gb, rb_u64 n, int op, RbPwLayout3 l) { rb_pw_binary_bwd_t(a, b, dy, ga, gb, n, op, l); }

// f64: the same formulas in double (BinaryOp::grad_reference).
RB_DEVICE void rb_pw_binary_grad_d(int op, double a, double b, double g, double* da, double* db) {
  switch (op) {
    case RB_BINARY_ADD: *da = g; *db = g; return;
    case RB_BINARY_SUB: *da = g; *db = -g; return;
    case RB_BINARY_MUL: *da = g * b; *db = g * a; return;
    case RB_BINARY_DIV: *da = g / b; *db = -g * ((a / b) / b); return;
    case RB_BINARY_POW:
      *da = b == 0.0 ? 0.0 : g * b * pow(a, b - 1.0);
      *db = (a == 0.0 && b >= 0.0) ? 0.0 : g * pow(a, b) * log(a);
      return;
    case RB_BINARY_MAXIMUM:
    case RB_BINARY_MINIMUM:
    default: {
      const double h = a == b ? g / 2.0 : g;
      const bool is_max = op == RB_BINARY_MAXIMUM;
      const bool a_loses = is_max ? a < b : a > b, b_loses = is_max ? a > b : a < b;
      *da = a_loses ? 0.0 : h;
      *db = b_loses ? 0.0 : h;
      return;
    }
  }
}
RB_KERNEL void rb_pw_binary_bwd_f64(const double* a, const double* b, const double* dy, double* ga, double* gb, rb_u64 n, int op, RbPwLayout3 l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 oa, ob, od;
    rb_pw_offsets3(l, i, &oa, &ob, &od);
    double da, db;
    rb_pw_binary_grad_d(op, a[oa], b[ob], dy[od], &da, &db);
    if (ga) ga[i] = da;
    if (gb) gb[i] = db;
  }
}

// ---- comparisons: bytes 0/1 (op: an RB_COMPARE_* code) ------------------------------------
template <typename U> RB_DEVICE rb_u8 rb_pw_cmp(int op, U a, U b) {
  switch (op) {
    case RB_COMPARE_EQ: return a == b;
    case RB_COMPARE_NE: return a != b;
    case RB_COMPARE_LT: return a < b;
    case RB_COMPARE_LE: return a <= b;
    case RB_COMPARE_GT: return a > b;
    case RB_COMPARE_GE:
    default: return a >= b;
  }
}
RB_DEVICE float rb_pw_key(float v) { return v; }
RB_DEVICE float rb_pw_key(rb_f16 v) { return rb_to_f32(v); }
RB_DEVICE float rb_pw_key(rb_bf16 v) { return rb_to_f32(v); }
RB_DEVICE rb_i64 rb_pw_key(rb_i32 v) { return v; }
RB_DEVICE rb_i64 rb_pw_key(rb_i64 v) { return v; }
RB_DEVICE int rb_pw_key(rb_u8 v) { return v != 0; }
RB_DEVICE double rb_pw_key(double v) { return v; }
RB_DEVICE rb_i64 rb_pw_key(rb_i8 v) { return v; }
RB_DEVICE rb_i64 rb_pw_key(rb_i16 v) { return v; }
// u8 tensors share bool's storage type: a wrapper gives them their own (numeric) key.
struct rb_u8v { rb_u8 v; };
RB_DEVICE rb_i64 rb_pw_key(rb_u8v v) { return v.v; }
template <typename T>
RB_DEVICE void rb_pw_compare_t(const T* a, const T* b, rb_u8* o, rb_u64 n, int op, const RbPwLayout2& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 oa, ob;
    rb_pw_offsets2(l, i, &oa, &ob);
    o[i] = rb_pw_cmp(op, rb_pw_key(a[oa]), rb_pw_key(b[ob]));
  }
}
RB_KERNEL void rb_pw_compare_f32(const float* a, const float* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_f16(const rb_f16* a, const rb_f16* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_bf16(const rb_bf16* a, const rb_bf16* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_i32(const rb_i32* a, const rb_i32* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_i64(const rb_i64* a, const rb_i64* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_bool(const rb_u8* a, const rb_u8* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_f64(const double* a, const double* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_i8(const rb_i8* a, const rb_i8* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_u8(const rb_u8v* a, const rb_u8v* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }
RB_KERNEL void rb_pw_compare_i16(const rb_i16* a, const rb_i16* b, rb_u8* o, rb_u64 n, int op, RbPwLayout2 l) { rb_pw_compare_t(a, b, o, n, op, l); }

// Same-shape f32 operands (a, b 16-byte aligned, o 4-byte aligned): each thread compares
// groups of 4 (two 16-byte loads, one 4-byte store), RB_PW_UNROLL groups a block-stride
// apart, all loads issued first. Bytes moved: 9 per element. The last partial group is done
// element by element.
#define RB_PW_UNROLL 4
RB_DEVICE rb_u32 rb_pw_cmp4(int op, rb_pw_f4 a, rb_pw_f4 b) {
  return (rb_u32)rb_pw_cmp(op, a.x, b.x) | ((rb_u32)rb_pw_cmp(op, a.y, b.y) << 8) |
         ((rb_u32)rb_pw_cmp(op, a.z, b.z) << 16) | ((rb_u32)rb_pw_cmp(op, a.w, b.w) << 24);
}
RB_KERNEL void rb_pw_compare_f32_flat(const float* a, const float* b, rb_u8* o, rb_u64 n, int op) {
  const rb_u64 groups = n / 4;
  const rb_u64 base = (rb_u64)blockIdx.x * blockDim.x * RB_PW_UNROLL + threadIdx.x;
  rb_pw_f4 va[RB_PW_UNROLL], vb[RB_PW_UNROLL];
#pragma unroll
  for (int k = 0; k < RB_PW_UNROLL; ++k) {
    rb_u64 g = base + (rb_u64)k * blockDim.x;
    if (g < groups) {
      va[k] = ((const rb_pw_f4*)a)[g];
      vb[k] = ((const rb_pw_f4*)b)[g];
    }
  }
#pragma unroll
  for (int k = 0; k < RB_PW_UNROLL; ++k) {
    rb_u64 g = base + (rb_u64)k * blockDim.x;
    if (g < groups) ((rb_u32*)o)[g] = rb_pw_cmp4(op, va[k], vb[k]);
  }
  if (blockIdx.x == 0 && threadIdx.x < n - groups * 4) {
    rb_u64 i = groups * 4 + threadIdx.x;
    o[i] = rb_pw_cmp(op, a[i], b[i]);
  }
}

// ---- where: out = cond ? a : b (one pass, no temporary) -------------------------------------
template <typename T>
RB_DEVICE void rb_pw_where_t(const rb_u8* c, const T* a, const T* b, T* o, rb_u64 n, const RbPwLayout3& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 oc, oa, ob;
    rb_pw_offsets3(l, i, &oc, &oa, &ob);
    o[i] = c[oc] ? a[oa] : b[ob];
  }
}
RB_KERNEL void rb_pw_where_b1(const rb_u8* c, const rb_u8* a, const rb_u8* b, rb_u8* o, rb_u64 n, RbPwLayout3 l) { rb_pw_where_t(c, a, b, o, n, l); }
RB_KERNEL void rb_pw_where_b2(const rb_u8* c, const rb_u16* a, const rb_u16* b, rb_u16* o, rb_u64 n, RbPwLayout3 l) { rb_pw_where_t(c, a, b, o, n, l); }
RB_KERNEL void rb_pw_where_b4(const rb_u8* c, const rb_u32* a, const rb_u32* b, rb_u32* o, rb_u64 n, RbPwLayout3 l) { rb_pw_where_t(c, a, b, o, n, l); }
RB_KERNEL void rb_pw_where_b8(const rb_u8* c, const rb_u64* a, const rb_u64* b, rb_u64* o, rb_u64 n, RbPwLayout3 l) { rb_pw_where_t(c, a, b, o, n, l); }

// Same-shape 4-byte elements (a, b, o 16-byte aligned, c 4-byte aligned): groups of 4 as
// above. Bytes moved: 13 per element.
RB_DEVICE rb_pw_f4 rb_pw_sel4(rb_u32 c, rb_pw_f4 a, rb_pw_f4 b) {
  rb_pw_f4 r;
  r.x = (c & 0xffu) ? a.x : b.x;
  r.y = (c & 0xff00u) ? a.y : b.y;
  r.z = (c & 0xff0000u) ? a.z : b.z;
  r.w = (c & 0xff000000u) ? a.w : b.w;
  return r;
}
RB_KERNEL void rb_pw_where_b4_flat(const rb_u8* c, const float* a, const float* b, float* o, rb_u64 n) {
  const rb_u64 groups = n / 4;
  const rb_u64 base = (rb_u64)blockIdx.x * blockDim.x * RB_PW_UNROLL + threadIdx.x;
  rb_u32 vc[RB_PW_UNROLL];
  rb_pw_f4 va[RB_PW_UNROLL], vb[RB_PW_UNROLL];
#pragma unroll
  for (int k = 0; k < RB_PW_UNROLL; ++k) {
    rb_u64 g = base + (rb_u64)k * blockDim.x;
    if (g < groups) {
      vc[k] = ((const rb_u32*)c)[g];
      va[k] = ((const rb_pw_f4*)a)[g];
      vb[k] = ((const rb_pw_f4*)b)[g];
    }
  }
#pragma unroll
  for (int k = 0; k < RB_PW_UNROLL; ++k) {
    rb_u64 g = base + (rb_u64)k * blockDim.x;
    if (g < groups) ((rb_pw_f4*)o)[g] = rb_pw_sel4(vc[k], va[k], vb[k]);
  }
  if (blockIdx.x == 0 && threadIdx.x < n - groups * 4) {
    rb_u64 i = groups * 4 + threadIdx.x;
    o[i] = c[i] ? a[i] : b[i];
  }
}

// ---- f16/bf16 same-shape fast paths (H: 0 f16, 1 bf16): 16-byte vectors of 8 halves (a, b,
// x, y, o 16-byte aligned; bool vectors of 8 bytes, 8-byte aligned), the comparison folded at
// compile time (one switch per launch, outside the loop), compared in f32 as rb_pw_key does.
// Thread i < n / 8 maps elements [8i, 8i + 8); thread n / 8 the last n % 8 one by one.
template <int OP, int H> RB_DEVICE void rb_pw_compare_h8_t(const rb_u16* a, const rb_u16* b, rb_u8* o, rb_u64 n) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    const rb_h8 va = ((const rb_h8*)a)[i], vb = ((const rb_h8*)b)[i];
    rb_u64 bits = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j)
      bits |= (rb_u64)rb_pw_cmp(OP, rb_hload<H>(va.v[j]), rb_hload<H>(vb.v[j])) << (8 * j);
    ((rb_u64*)o)[i] = bits;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e) o[e] = rb_pw_cmp(OP, rb_hload<H>(a[e]), rb_hload<H>(b[e]));
  }
}
template <int H> RB_DEVICE void rb_pw_compare_h8_op(const rb_u16* a, const rb_u16* b, rb_u8* o, rb_u64 n, int op) {
  switch (op) {
    case RB_COMPARE_EQ: rb_pw_compare_h8_t<RB_COMPARE_EQ, H>(a, b, o, n); return;
    case RB_COMPARE_NE: rb_pw_compare_h8_t<RB_COMPARE_NE, H>(a, b, o, n); return;
    case RB_COMPARE_LT: rb_pw_compare_h8_t<RB_COMPARE_LT, H>(a, b, o, n); return;
    case RB_COMPARE_LE: rb_pw_compare_h8_t<RB_COMPARE_LE, H>(a, b, o, n); return;
    case RB_COMPARE_GT: rb_pw_compare_h8_t<RB_COMPARE_GT, H>(a, b, o, n); return;
    case RB_COMPARE_GE:
    default: rb_pw_compare_h8_t<RB_COMPARE_GE, H>(a, b, o, n); return;
  }
}
RB_KERNEL void rb_pw_compare_h8_f16(const rb_u16* a, const rb_u16* b, rb_u8* o, rb_u64 n, int op) { rb_pw_compare_h8_op<0>(a, b, o, n, op); }
RB_KERNEL void rb_pw_compare_h8_bf16(const rb_u16* a, const rb_u16* b, rb_u8* o, rb_u64 n, int op) { rb_pw_compare_h8_op<1>(a, b, o, n, op); }

// where(c, a, b) on 2-byte elements: 8 condition bytes and two 16-byte vectors per thread.
RB_KERNEL void rb_pw_where_b2_flat(const rb_u8* c, const rb_u16* a, const rb_u16* b, rb_u16* o, rb_u64 n) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    const rb_u64 cv = ((const rb_u64*)c)[i];
    const rb_h8 va = ((const rb_h8*)a)[i], vb = ((const rb_h8*)b)[i];
    rb_h8 r;
#pragma unroll
    for (int j = 0; j < 8; ++j) r.v[j] = ((cv >> (8 * j)) & 0xffu) ? va.v[j] : vb.v[j];
    ((rb_h8*)o)[i] = r;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e) o[e] = c[e] ? a[e] : b[e];
  }
}

// ---- fused where(a op b, x, y): one pass, no bool temporary -------------------------------
struct RbPwLayout4 {
  rb_i64 nd;
  rb_i64 shape[RB_PW_MAX_DIMS];
  rb_i64 s0[RB_PW_MAX_DIMS];
  rb_i64 s1[RB_PW_MAX_DIMS];
  rb_i64 s2[RB_PW_MAX_DIMS];
  rb_i64 s3[RB_PW_MAX_DIMS];
};
template <typename T>
RB_DEVICE void rb_pw_where_cmp_t(const T* a, const T* b, const T* x, const T* y, T* o, rb_u64 n, int op, const RbPwLayout4& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_u64 lin = i;
    rb_i64 oa = 0, ob = 0, ox = 0, oy = 0;
    for (int d = (int)l.nd - 1; d >= 0; --d) {
      rb_u64 e = (rb_u64)l.shape[d];
      rb_i64 k = (rb_i64)(lin % e);
      lin /= e;
      oa += k * l.s0[d];
      ob += k * l.s1[d];
      ox += k * l.s2[d];
      oy += k * l.s3[d];
    }
    o[i] = rb_pw_cmp(op, rb_pw_key(a[oa]), rb_pw_key(b[ob])) ? x[ox] : y[oy];
  }
}
RB_KERNEL void rb_pw_where_cmp_f32(const float* a, const float* b, const float* x, const float* y, float* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_f16(const rb_f16* a, const rb_f16* b, const rb_f16* x, const rb_f16* y, rb_f16* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_bf16(const rb_bf16* a, const rb_bf16* b, const rb_bf16* x, const rb_bf16* y, rb_bf16* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_i32(const rb_i32* a, const rb_i32* b, const rb_i32* x, const rb_i32* y, rb_i32* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_i64(const rb_i64* a, const rb_i64* b, const rb_i64* x, const rb_i64* y, rb_i64* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_bool(const rb_u8* a, const rb_u8* b, const rb_u8* x, const rb_u8* y, rb_u8* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_f64(const double* a, const double* b, const double* x, const double* y, double* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_i8(const rb_i8* a, const rb_i8* b, const rb_i8* x, const rb_i8* y, rb_i8* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_u8(const rb_u8v* a, const rb_u8v* b, const rb_u8v* x, const rb_u8v* y, rb_u8v* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }
RB_KERNEL void rb_pw_where_cmp_i16(const rb_i16* a, const rb_i16* b, const rb_i16* x, const rb_i16* y, rb_i16* o, rb_u64 n, int op, RbPwLayout4 l) { rb_pw_where_cmp_t(a, b, x, y, o, n, op, l); }

// where(a op b, x, y) on same-shape f16/bf16 (the fast-path rules above); `self` as below.
template <int OP, int H>
RB_DEVICE void rb_pw_where_cmp_h8_t(const rb_u16* a, const rb_u16* b, const rb_u16* x, const rb_u16* y, rb_u16* o, rb_u64 n, int self) {
  const rb_u64 i = rb_gid(), n8 = n / 8;
  if (i < n8) {
    const rb_h8 va = ((const rb_h8*)a)[i], vb = ((const rb_h8*)b)[i];
    const rb_h8 vx = self ? va : ((const rb_h8*)x)[i], vy = self ? vb : ((const rb_h8*)y)[i];
    rb_h8 r;
#pragma unroll
    for (int j = 0; j < 8; ++j) r.v[j] = rb_pw_cmp(OP, rb_hload<H>(va.v[j]), rb_hload<H>(vb.v[j])) ? vx.v[j] : vy.v[j];
    ((rb_h8*)o)[i] = r;
  } else if (i == n8) {
    for (rb_u64 e = n8 * 8; e < n; ++e) o[e] = rb_pw_cmp(OP, rb_hload<H>(a[e]), rb_hload<H>(b[e])) ? x[e] : y[e];
  }
}
template <int H>
RB_DEVICE void rb_pw_where_cmp_h8_op(const rb_u16* a, const rb_u16* b, const rb_u16* x, const rb_u16* y, rb_u16* o, rb_u64 n, int op, int self) {
  switch (op) {
    case RB_COMPARE_EQ: rb_pw_where_cmp_h8_t<RB_COMPARE_EQ, H>(a, b, x, y, o, n, self); return;
    case RB_COMPARE_NE: rb_pw_where_cmp_h8_t<RB_COMPARE_NE, H>(a, b, x, y, o, n, self); return;
    case RB_COMPARE_LT: rb_pw_where_cmp_h8_t<RB_COMPARE_LT, H>(a, b, x, y, o, n, self); return;
    case RB_COMPARE_LE: rb_pw_where_cmp_h8_t<RB_COMPARE_LE, H>(a, b, x, y, o, n, self); return;
    case RB_COMPARE_GT: rb_pw_where_cmp_h8_t<RB_COMPARE_GT, H>(a, b, x, y, o, n, self); return;
    case RB_COMPARE_GE:
    default: rb_pw_where_cmp_h8_t<RB_COMPARE_GE, H>(a, b, x, y, o, n, self); return;
  }
}
RB_KERNEL void rb_pw_where_cmp_h8_f16(const rb_u16* a, const rb_u16* b, const rb_u16* x, const rb_u16* y, rb_u16* o, rb_u64 n, int op, int self) { rb_pw_where_cmp_h8_op<0>(a, b, x, y, o, n, op, self); }
RB_KERNEL void rb_pw_where_cmp_h8_bf16(const rb_u16* a, const rb_u16* b, const rb_u16* x, const rb_u16* y, rb_u16* o, rb_u64 n, int op, int self) { rb_pw_where_cmp_h8_op<1>(a, b, x, y, o, n, op, self); }

// Same-shape f32 operands, all 16-byte aligned: groups of 4 as above. `self` != 0 means the
// caller passed x == a and y == b (torch.where(a > b, a, b)), so only a and b are loaded:
// 12 bytes per element; otherwise 20.
RB_DEVICE float rb_pw_sel1(int op, float a, float b, float x, float y) { return rb_pw_cmp(op, a, b) ? x : y; }
RB_KERNEL void rb_pw_where_cmp_f32_flat(const float* a, const float* b, const float* x, const float* y, float* o, rb_u64 n, int op, int self) {
  const rb_u64 groups = n / 4;
  const rb_u64 base = (rb_u64)blockIdx.x * blockDim.x * RB_PW_UNROLL + threadIdx.x;
  rb_pw_f4 va[RB_PW_UNROLL], vb[RB_PW_UNROLL], vx[RB_PW_UNROLL], vy[RB_PW_UNROLL];
#pragma unroll
  for (int k = 0; k < RB_PW_UNROLL; ++k) {
    rb_u64 g = base + (rb_u64)k * blockDim.x;
    if (g < groups) {
      va[k] = ((const rb_pw_f4*)a)[g];
      vb[k] = ((const rb_pw_f4*)b)[g];
      if (!self) {
        vx[k] = ((const rb_pw_f4*)x)[g];
        vy[k] = ((const rb_pw_f4*)y)[g];
      }
    }
  }
#pragma unroll
  for (int k = 0; k < RB_PW_UNROLL; ++k) {
    rb_u64 g = base + (rb_u64)k * blockDim.x;
    if (g < groups) {
      rb_pw_f4 px = self ? va[k] : vx[k], py = self ? vb[k] : vy[k], r;
      r.x = rb_pw_sel1(op, va[k].x, vb[k].x, px.x, py.x);
      r.y = rb_pw_sel1(op, va[k].y, vb[k].y, px.y, py.y);
      r.z = rb_pw_sel1(op, va[k].z, vb[k].z, px.z, py.z);
      r.w = rb_pw_sel1(op, va[k].w, vb[k].w, px.w, py.w);
      ((rb_pw_f4*)o)[g] = r;
    }
  }
  if (blockIdx.x == 0 && threadIdx.x < n - groups * 4) {
    rb_u64 i = groups * 4 + threadIdx.x;
    o[i] = rb_pw_sel1(op, a[i], b[i], x[i], y[i]);
  }
}

// ---- fused DNN pointwise ops ----------------------------------------------------------------
// out = max(a + b, 0) with broadcasting.
template <typename T>
RB_DEVICE void rb_pw_add_relu_t(const T* a, const T* b, T* o, rb_u64 n, const RbPwLayout2& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 oa, ob;
    rb_pw_offsets2(l, i, &oa, &ob);
    rb_from_f32(o + i, rb_relu(rb_to_f32(a[oa]) + rb_to_f32(b[ob])));
  }
}
RB_KERNEL void rb_pw_add_relu_f32(const float* a, const float* b, float* o, rb_u64 n, RbPwLayout2 l) { rb_pw_add_relu_t(a, b, o, n, l); }
RB_KERNEL void rb_pw_add_relu_f16(const rb_f16* a, const rb_f16* b, rb_f16* o, rb_u64 n, RbPwLayout2 l) { rb_pw_add_relu_t(a, b, o, n, l); }
RB_KERNEL void rb_pw_add_relu_bf16(const rb_bf16* a, const rb_bf16* b, rb_bf16* o, rb_u64 n, RbPwLayout2 l) { rb_pw_add_relu_t(a, b, o, n, l); }
// Same-shape f32, 16-byte aligned: groups of 4, tail element by element.
RB_KERNEL void rb_pw_add_relu_f32_flat(const float* a, const float* b, float* o, rb_u64 n) {
  const rb_u64 groups = n / 4;
  for (rb_u64 g = rb_gid(); g < groups; g += rb_gstride()) {
    rb_pw_f4 x = ((const rb_pw_f4*)a)[g], y = ((const rb_pw_f4*)b)[g];
    x.x = rb_relu(x.x + y.x); x.y = rb_relu(x.y + y.y);
    x.z = rb_relu(x.z + y.z); x.w = rb_relu(x.w + y.w);
    ((rb_pw_f4*)o)[g] = x;
  }
  if (rb_gid() < n - groups * 4) {
    rb_u64 i = groups * 4 + rb_gid();
    o[i] = rb_relu(a[i] + b[i]);
  }
}

// out = a * b + c (one rounding: fma) with broadcasting.
template <typename T>
RB_DEVICE void rb_pw_mul_add_t(const T* a, const T* b, const T* c, T* o, rb_u64 n, const RbPwLayout3& l) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    rb_i64 oa, ob, oc;
    rb_pw_offsets3(l, i, &oa, &ob, &oc);
    rb_from_f32(o + i, fmaf(rb_to_f32(a[oa]), rb_to_f32(b[ob]), rb_to_f32(c[oc])));
  }
}
RB_KERNEL void rb_pw_mul_add_f32(const float* a, const float* b, const float* c, float* o, rb_u64 n, RbPwLayout3 l) { rb_pw_mul_add_t(a, b, c, o, n, l); }
RB_KERNEL void rb_pw_mul_add_f16(const rb_f16* a, const rb_f16* b, const rb_f16* c, rb_f16* o, rb_u64 n, RbPwLayout3 l) { rb_pw_mul_add_t(a, b, c, o, n, l); }
RB_KERNEL void rb_pw_mul_add_bf16(const rb_bf16* a, const rb_bf16* b, const rb_bf16* c, rb_bf16* o, rb_u64 n, RbPwLayout3 l) { rb_pw_mul_add_t(a, b, c, o, n, l); }

// GEMM epilogue, in place on row-major y [m, n]: y = act(y + bias[col]); act: an RB_ACT_*
// code (none, relu, gelu (erf), gelu (tanh)). bias may be NULL.
RB_DEVICE float rb_pw_act(int act, float v) {
  switch (act) {
    case RB_ACT_RELU: return rb_relu(v);
    case RB_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    case RB_ACT_GELU_TANH: return 0.5f * v * (1.0f + tanhf(0.7978846f * (v + 0.044715f * v * v * v)));
    case RB_ACT_NONE:
    default: return v;
  }
}
template <typename T>
RB_DEVICE void rb_pw_bias_act_t(T* y, const T* bias, rb_u64 total, rb_u64 n, int act) {
  for (rb_u64 i = rb_gid(); i < total; i += rb_gstride()) {
    float v = rb_to_f32(y[i]);
    if (bias) v += rb_to_f32(bias[i % n]);
    rb_from_f32(y + i, rb_pw_act(act, v));
  }
}
RB_KERNEL void rb_pw_bias_act_f32(float* y, const float* bias, rb_u64 total, rb_u64 n, int act) { rb_pdl_enter(); rb_pw_bias_act_t(y, bias, total, n, act); }
RB_KERNEL void rb_pw_bias_act_f16(rb_f16* y, const rb_f16* bias, rb_u64 total, rb_u64 n, int act) { rb_pdl_enter(); rb_pw_bias_act_t(y, bias, total, n, act); }
RB_KERNEL void rb_pw_bias_act_bf16(rb_bf16* y, const rb_bf16* bias, rb_u64 total, rb_u64 n, int act) { rb_pdl_enter(); rb_pw_bias_act_t(y, bias, total, n, act); }

// The same epilogue in 16-byte vectors (n a multiple of the vector width, y and bias 16-byte
// aligned), with the column from a 2-D grid instead of a 64-bit remainder per element (that
// remainder and the 2-byte accesses held the scalar kernel to a third of the copy bandwidth
// on a 4096 x 4096 f16 output). fill: y = bias broadcast over the rows (the bytes copied;
// act ignored), else y = act(y + bias) (bias may be NULL). Threads x: the row's vectors;
// blocks y: rows, grid-strided.
struct alignas(16) rb_pw_v16 { rb_u32 w[4]; };
template <typename T>
RB_DEVICE void rb_pw_bias_act_vt(T* y, const T* bias, rb_u64 rows, rb_u64 n, int act, int fill) {
  const int V = 16 / (int)sizeof(T);
  const rb_u64 c = (rb_u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (c * V >= n) return;
  rb_pw_v16 bv;
  if (bias) bv = ((const rb_pw_v16*)bias)[c];
  for (rb_u64 r = blockIdx.y; r < rows; r += gridDim.y) {
    rb_pw_v16* at = (rb_pw_v16*)(y + r * n) + c;
    if (fill) {
      *at = bv;
      continue;
    }
    rb_pw_v16 yv = *at;
    const T* ye = (const T*)&yv;
    const T* be = (const T*)&bv;
    T* oe = (T*)&yv;
#pragma unroll
    for (int e = 0; e < V; ++e) {
      float v = rb_to_f32(ye[e]);
      if (bias) v += rb_to_f32(be[e]);
      rb_from_f32(oe + e, rb_pw_act(act, v));
    }
    *at = yv;
  }
}
RB_KERNEL void rb_pw_bias_act_v_f32(float* y, const float* bias, rb_u64 rows, rb_u64 n, int act, int fill) { rb_pdl_enter(); rb_pw_bias_act_vt(y, bias, rows, n, act, fill); }
RB_KERNEL void rb_pw_bias_act_v_f16(rb_f16* y, const rb_f16* bias, rb_u64 rows, rb_u64 n, int act, int fill) { rb_pdl_enter(); rb_pw_bias_act_vt(y, bias, rows, n, act, fill); }
RB_KERNEL void rb_pw_bias_act_v_bf16(rb_bf16* y, const rb_bf16* bias, rb_u64 rows, rb_u64 n, int act, int fill) { rb_pdl_enter(); rb_pw_bias_act_vt(y, bias, rows, n, act, fill); }

// Column sums of row-major x [rows, cols] into out [cols]. Block (32, RB_PW_SUM_Y): the x
// threads take 32 adjacent columns (coalesced rows), the y threads stride over rows; the
// partial sums meet in shared memory. Accumulates in f32. With `h` (a relu's input or
// output), each element is first relu_backward(h, x) = (h <= 0 ? 0 : x) (a NaN h passes
// x), written to `dy` and summed: a training step's gradient through a relu and the bias
// gradient of the linear before it, in one pass.
#define RB_PW_SUM_Y 8
template <typename T>
RB_DEVICE void rb_pw_sum_rows_t(const T* x, T* out, rb_u64 rows, rb_u64 cols, const T* h,
                                T* dy) {
  __shared__ float part[RB_PW_SUM_Y][33];
  rb_u64 col = (rb_u64)blockIdx.x * 32 + threadIdx.x;
  float acc = 0.0f;
  if (col < cols) {
    for (rb_u64 r = threadIdx.y; r < rows; r += RB_PW_SUM_Y) {
      rb_u64 i = r * cols + col;
      float v = rb_to_f32(x[i]);
      if (h) {
        if (rb_to_f32(h[i]) <= 0.0f) v = 0.0f;
        rb_from_f32(dy + i, v);  // exact: v is an element of x, or 0
      }
      acc += v;
    }
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < cols) {
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < RB_PW_SUM_Y; ++k) s += part[k][threadIdx.x];
    rb_from_f32(out + col, s);
  }
}
#define RB_PW_SUM_ROWS(S, T)                                                              \
  RB_KERNEL void rb_pw_sum_rows_##S(const T* x, T* out, rb_u64 rows, rb_u64 cols, const T* h, \
                                    T* dy) { rb_pdl_enter();                                                \
    rb_pw_sum_rows_t(x, out, rows, cols, h, dy);                                            \
  }
RB_PW_SUM_ROWS(f32, float)
RB_PW_SUM_ROWS(f16, rb_f16)
RB_PW_SUM_ROWS(bf16, rb_bf16)
