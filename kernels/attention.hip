// scaled_dot_product_attention helpers around the vendor BLAS (src/device/gpu/attention.rs):
// the scores S = scale * Q K^T come from a batched GEMM in f32; these kernels turn them into
// probabilities (row softmax with PyTorch's top-left causal mask) and, for the backward,
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

// Keys query row r may see.
RB_DEVICE rb_u64 rb_att_keys(rb_u64 r, rb_u64 sq, rb_u64 sk, int causal) {
  if (!causal) return sk;
  rb_u64 i = r % sq + 1;
  return i < sk ? i : sk;
}

// In place: S (scaled scores) -> P (probabilities; 0 past the causal limit).
RB_KERNEL void rb_att_softmax(float* s, rb_u64 rows, rb_u64 sq, rb_u64 sk, int causal) {
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    float* row = s + r * sk;
    rb_u64 nk = rb_att_keys(r, sq, sk, causal);
    float m = rb_att_neg_inf();
    for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) m = fmaxf(m, row[j]);
    m = rb_att_block(m, 0);
    float z = 0.0f;
    for (rb_u64 j = threadIdx.x; j < nk; j += blockDim.x) z += expf(row[j] - m);
    z = rb_att_block(z, 1);
    float inv = 1.0f / z;
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
