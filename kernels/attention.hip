// scaled_dot_product_attention helpers around the vendor BLAS (src/device/gpu/attention.rs):
// the scores S = scale * Q K^T come from a batched GEMM in f32; these kernels turn them into
// probabilities (row softmax with the attention mask and the causal limit) and, for the backward,
// dS = P * (dP - rowsum(P * dP)) * scale. All buffers are f32, rows of `sk` scores; row r
// is query r % sq of its batch. One block per row (grid-stride over rows).
#include "common.h"

RB_DEVICE float rb_att_neg_inf() { return __int_as_float(0xff800000); }

// Block-wide max (op 0) or sum (op 1); every thread gets the result.
RB_DEVICE float rb_att_block(float v, int op) {
  __shared__ float sh[32];
  int lane = threadIdx.x % RB_WARP_SIZE, w = threadIdx.x / RB_WARP_SIZE;
  int nw = blockDim.x / RB_WARP_SIZE;
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
    float o = rb_shfl_down(v, d);
    v = op == 0 ? fmaxf(v, o) : v + o;
  }
  if (lane == 0) sh[w] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < nw; i++) v = op == 0 ? fmaxf(v, sh[i]) : v + sh[i];
    sh[0] = v;
  }
  __syncthreads();
  v = sh[0];
  __syncthreads();
  return v;
}

// Keys query i may see (a prefix): causal 0 none, 1 top-left (j <= i), 2 bottom-right
// (j <= i + sk - sq).
RB_DEVICE rb_u64 rb_att_keys(rb_u64 i, rb_u64 sq, rb_u64 sk, int causal) {
  if (causal == 1) return i + 1 < sk ? i + 1 : sk;
  if (causal == 2) {
    rb_u64 lim = i + 1 + sk;
    if (lim <= sq) return 0;
    return lim - sq < sk ? lim - sq : sk;
  }
  return sk;
}

// The additive value of mask element `off`: kind 1 bool (0 or -inf), 2 f32, 3 f16, 4 bf16.
RB_DEVICE float rb_att_mask(const void* m, int kind, rb_u64 off) {
  if (kind == 1) return ((const rb_u8*)m)[off] ? 0.0f : rb_att_neg_inf();
  if (kind == 2) return ((const float*)m)[off];
  if (kind == 3) return rb_half_to_f32(((const rb_u16*)m)[off]);
  return rb_bfloat_to_f32(((const rb_u16*)m)[off]);
}

// In place: S (scaled scores) -> P (probabilities; 0 past the causal limit). Row r is
// query i = r % sq of batch b = r / sq; with a mask (mkind != 0) element (b, i, j) is at
// (b / minner) * mso + (b % minner) * msi + i * msq + j * msk. A row whose scores are all
// -inf gives zeros (PyTorch's _safe_softmax); a NaN score makes the row NaN.
RB_KERNEL void rb_att_softmax(float* s, rb_u64 rows, rb_u64 sq, rb_u64 sk, int causal,
                              const void* mask, int mkind, rb_u64 minner, rb_u64 mso,
                              rb_u64 msi, rb_u64 msq, rb_u64 msk) {
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    float* row = s + r * sk;
    rb_u64 i = r % sq, b = r / sq;
    rb_u64 nk = rb_att_keys(i, sq, sk, causal);
    if (mkind != 0) {
      rb_u64 base = (b / minner) * mso + (b % minner) * msi + i * msq;
      for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) row[j] += rb_att_mask(mask, mkind, base + j * msk);
    }
    float m = rb_att_neg_inf();
    for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) m = fmaxf(m, row[j]);
    m = rb_att_block(m, 0);
    if (m == rb_att_neg_inf()) m = 0.0f;
    float z = 0.0f;
    for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) z += expf(row[j] - m);
    z = rb_att_block(z, 1);
    float inv = z == 0.0f ? 0.0f : 1.0f / z;
    for (rb_u64 j = threadIdx.x; j < sk; j += blockDim.x)
      row[j] = j < nk ? expf(row[j] - m) * inv : 0.0f;
  }
}

// In place: dP -> dS = P * (dP - sum_j P dP) * scale.
RB_KERNEL void rb_att_dscores(const float* p, float* dp, rb_u64 rows, rb_u64 sk, float scale) {
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const float* pr = p + r * sk;
    float* dr = dp + r * sk;
    float dot = 0.0f;
    for (rb_u64 j = threadIdx.x; j < sk; j += blockDim.x) dot += pr[j] * dr[j];
    dot = rb_att_block(dot, 1);
    for (rb_u64 j = threadIdx.x; j < sk; j += blockDim.x) dr[j] = pr[j] * (dr[j] - dot) * scale;
  }
}

// ---- f64: the kernels above in double (src/device/gpu/attention.rs's f64 GEMM path). The
// scores come unscaled from a double GEMM (its alpha is f32): the softmax applies `scale`.
RB_DEVICE double rb_att_neg_inf_d() { return __longlong_as_double(0xfff0000000000000ll); }

RB_DEVICE double rb_att_block_d(double v, int op) {
  __shared__ double shd[32];
  int lane = threadIdx.x % RB_WARP_SIZE, w = threadIdx.x / RB_WARP_SIZE;
  int nw = blockDim.x / RB_WARP_SIZE;
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
    double o = rb_shfl_down(v, d);
    v = op == 0 ? fmax(v, o) : v + o;
  }
  if (lane == 0) shd[w] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < nw; i++) v = op == 0 ? fmax(v, shd[i]) : v + shd[i];
    shd[0] = v;
  }
  __syncthreads();
  v = shd[0];
  __syncthreads();
  return v;
}

// Mask kinds as rb_att_mask, plus 5: f64.
RB_DEVICE double rb_att_mask_d(const void* m, int kind, rb_u64 off) {
  if (kind == 5) return ((const double*)m)[off];
  if (kind == 1) return ((const rb_u8*)m)[off] ? 0.0 : rb_att_neg_inf_d();
  return (double)rb_att_mask(m, kind, off);
}

RB_KERNEL void rb_att_softmax_f64(double* s, rb_u64 rows, rb_u64 sq, rb_u64 sk, int causal,
                                  const void* mask, int mkind, rb_u64 minner, rb_u64 mso,
                                  rb_u64 msi, rb_u64 msq, rb_u64 msk, double scale) {
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    double* row = s + r * sk;
    rb_u64 i = r % sq, b = r / sq;
    rb_u64 nk = rb_att_keys(i, sq, sk, causal);
    rb_u64 base = (b / minner) * mso + (b % minner) * msi + i * msq;
    for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) {
      double v = row[j] * scale;
      if (mkind != 0) v += rb_att_mask_d(mask, mkind, base + j * msk);
      row[j] = v;
    }
    double m = rb_att_neg_inf_d();
    for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) m = fmax(m, row[j]);
    m = rb_att_block_d(m, 0);
    if (m == rb_att_neg_inf_d()) m = 0.0;
    double z = 0.0;
    for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) z += exp(row[j] - m);
    z = rb_att_block_d(z, 1);
    double inv = z == 0.0 ? 0.0 : 1.0 / z;
    for (rb_u64 j = threadIdx.x; j < sk; j += blockDim.x)
      row[j] = j < nk ? exp(row[j] - m) * inv : 0.0;
  }
}

RB_KERNEL void rb_att_dscores_f64(const double* p, double* dp, rb_u64 rows, rb_u64 sk,
                                  double scale) {
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const double* pr = p + r * sk;
    double* dr = dp + r * sk;
    double dot = 0.0;
    for (rb_u64 j = threadIdx.x; j < sk; j += blockDim.x) dot += pr[j] * dr[j];
    dot = rb_att_block_d(dot, 1);
    for (rb_u64 j = threadIdx.x; j < sk; j += blockDim.x) dr[j] = pr[j] * (dr[j] - dot) * scale;
  }
}
