// Optimizer steps in place, one fused pass each: SGD (momentum, dampening, nesterov, weight
// decay) and Adam/AdamW (amsgrad). PyTorch's formulas as src/ops/optim.rs states them, in f32;
// state buffers are rounded to their dtype before they are used, as the CPU device does
// (src/device/cpu/optim.rs).
#include "common.h"

// SgdAttrs of src/ops/optim.rs as the f32/f16/bf16 kernels take it, rounded to float
// (src/device/gpu/optim.rs: RbSgdArgs).
struct RbSgdArgs {
  float lr, momentum, dampening, weight_decay;
  int nesterov, first_step;
};

// Rounds v through T (the value the buffer holds once stored).
template <typename T> RB_DEVICE float rb_opt_round(float v) {
  T t;
  rb_from_f32(&t, v);
  return rb_to_f32(t);
}

// Element i of one SGD step.
template <typename T>
RB_DEVICE void rb_sgd_one(T* p, const T* g, T* buf, rb_u64 i, const RbSgdArgs& a) {
  float pv = rb_to_f32(p[i]);
  float d = rb_to_f32(g[i]);
  if (a.weight_decay != 0.0f) d += a.weight_decay * pv;
  if (a.momentum != 0.0f) {
    float b = a.first_step ? d : a.momentum * rb_to_f32(buf[i]) + (1.0f - a.dampening) * d;
    rb_from_f32(buf + i, b);
    b = rb_opt_round<T>(b);
    d = a.nesterov ? d + a.momentum * b : b;
  }
  rb_from_f32(p + i, pv - a.lr * d);
}
template <typename T>
RB_DEVICE void rb_sgd_t(T* p, const T* g, T* buf, rb_u64 n, const RbSgdArgs& a) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) rb_sgd_one(p, g, buf, i, a);
}
RB_KERNEL void rb_sgd_f32(float* p, const float* g, float* buf, rb_u64 n, RbSgdArgs a) { rb_pdl_enter(); rb_sgd_t(p, g, buf, n, a); }
RB_KERNEL void rb_sgd_f16(rb_f16* p, const rb_f16* g, rb_f16* buf, rb_u64 n, RbSgdArgs a) { rb_pdl_enter(); rb_sgd_t(p, g, buf, n, a); }
RB_KERNEL void rb_sgd_bf16(rb_bf16* p, const rb_bf16* g, rb_bf16* buf, rb_u64 n, RbSgdArgs a) { rb_pdl_enter(); rb_sgd_t(p, g, buf, n, a); }

// Up to RB_SGD_MULTI tensors' SGD steps with the same attributes in one launch (the
// executor's grouped optimizer steps, PyTorch's foreach SGD): their elements numbered one
// after another, tensor j's from start[j] (src/device/gpu/optim.rs: RbSgdMulti).
#define RB_SGD_MULTI 8
struct RbSgdMulti {
  void* p[RB_SGD_MULTI];
  const void* g[RB_SGD_MULTI];
  void* buf[RB_SGD_MULTI];
  rb_u64 start[RB_SGD_MULTI + 1];
  int count;
};
template <typename T>
RB_DEVICE void rb_sgd_multi_t(const RbSgdMulti& t, const RbSgdArgs& a) {
  const rb_u64 total = t.start[t.count];
  for (rb_u64 i = rb_gid(); i < total; i += rb_gstride()) {
    int j = 0;
    while (j + 1 < t.count && i >= t.start[j + 1]) ++j;
    rb_sgd_one((T*)t.p[j], (const T*)t.g[j], (T*)t.buf[j], i - t.start[j], a);
  }
}
RB_KERNEL void rb_sgd_multi_f32(RbSgdMulti t, RbSgdArgs a) { rb_pdl_enter(); rb_sgd_multi_t<float>(t, a); }
RB_KERNEL void rb_sgd_multi_f16(RbSgdMulti t, RbSgdArgs a) { rb_pdl_enter(); rb_sgd_multi_t<rb_f16>(t, a); }
RB_KERNEL void rb_sgd_multi_bf16(RbSgdMulti t, RbSgdArgs a) { rb_pdl_enter(); rb_sgd_multi_t<rb_bf16>(t, a); }

// AdamAttrs plus the host-computed bias corrections (src/device/gpu/optim.rs: RbAdamArgs).
struct RbAdamArgs {
  float lr, beta1, beta2, eps, weight_decay;
  float step_size;  // lr / (1 - beta1^step)
  float bc2_sqrt;   // sqrt(1 - beta2^step)
  int amsgrad, decoupled;
};

template <typename T>
RB_DEVICE void rb_adam_t(T* p, const T* g, T* m, T* v, T* vmax, rb_u64 n, const RbAdamArgs& a) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    float pv = rb_to_f32(p[i]);
    float gv = rb_to_f32(g[i]);
    if (a.decoupled) pv *= 1.0f - a.lr * a.weight_decay;
    else if (a.weight_decay != 0.0f) gv += a.weight_decay * pv;
    float mv = rb_to_f32(m[i]);
    mv = mv + (gv - mv) * (1.0f - a.beta1);
    float vv = rb_to_f32(v[i]) * a.beta2 + (1.0f - a.beta2) * gv * gv;
    rb_from_f32(m + i, mv);
    rb_from_f32(v + i, vv);
    mv = rb_opt_round<T>(mv);
    float second = rb_opt_round<T>(vv);
    if (a.amsgrad) {
      float mx = fmaxf(rb_to_f32(vmax[i]), second);
      rb_from_f32(vmax + i, mx);
      second = rb_opt_round<T>(mx);
    }
    float denom = sqrtf(second) / a.bc2_sqrt + a.eps;
    rb_from_f32(p + i, pv - a.step_size * mv / denom);
  }
}
RB_KERNEL void rb_adam_f32(float* p, const float* g, float* m, float* v, float* vmax, rb_u64 n, RbAdamArgs a) { rb_adam_t(p, g, m, v, vmax, n, a); }
RB_KERNEL void rb_adam_f16(rb_f16* p, const rb_f16* g, rb_f16* m, rb_f16* v, rb_f16* vmax, rb_u64 n, RbAdamArgs a) { rb_adam_t(p, g, m, v, vmax, n, a); }
RB_KERNEL void rb_adam_bf16(rb_bf16* p, const rb_bf16* g, rb_bf16* m, rb_bf16* v, rb_bf16* vmax, rb_u64 n, RbAdamArgs a) { rb_adam_t(p, g, m, v, vmax, n, a); }

// ---- f64: the float64 references of src/ops/optim.rs (sgd_reference, adam_reference) in
// double, with the exact double hyperparameters; the CPU device evaluates the same
// references.

// SgdAttrs in double (src/device/gpu/optim.rs: RbSgdArgsD).
struct RbSgdArgsD {
  double lr, momentum, dampening, weight_decay;
  int nesterov, first_step;
};

RB_KERNEL void rb_sgd_f64(double* p, const double* g, double* buf, rb_u64 n, RbSgdArgsD a) { rb_pdl_enter();
  const double lr = a.lr, mom = a.momentum, damp = a.dampening, wd = a.weight_decay;
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    const double pv = p[i];
    double d = g[i];
    if (wd != 0.0) d += wd * pv;
    if (mom != 0.0) {
      const double b = a.first_step ? d : mom * buf[i] + (1.0 - damp) * d;
      buf[i] = b;
      d = a.nesterov ? d + mom * b : b;
    }
    p[i] = pv - lr * d;
  }
}

// AdamAttrs in double plus the bias corrections (src/device/gpu/optim.rs: RbAdamArgsD).
struct RbAdamArgsD {
  double lr, beta1, beta2, eps, weight_decay;
  double step_size;  // lr / (1 - beta1^step)
  double bc2_sqrt;   // sqrt(1 - beta2^step)
  int amsgrad, decoupled;
};

RB_KERNEL void rb_adam_f64(double* p, const double* g, double* m, double* v, double* vmax,
                           rb_u64 n, RbAdamArgsD a) {
  for (rb_u64 i = rb_gid(); i < n; i += rb_gstride()) {
    double pv = p[i];
    double gv = g[i];
    if (a.decoupled) pv *= 1.0 - a.lr * a.weight_decay;
    else if (a.weight_decay != 0.0) gv += a.weight_decay * pv;
    const double mv = a.beta1 * m[i] + (1.0 - a.beta1) * gv;
    const double vv = a.beta2 * v[i] + (1.0 - a.beta2) * gv * gv;
    m[i] = mv;
    v[i] = vv;
    double second = vv;
    if (a.amsgrad) {
      const double mx = fmax(vmax[i], vv);  // as f64::max: a NaN operand gives the other
      vmax[i] = mx;
      second = mx;
    }
    const double denom = sqrt(second) / a.bc2_sqrt + a.eps;
    p[i] = pv - a.step_size * mv / denom;
  }
}
