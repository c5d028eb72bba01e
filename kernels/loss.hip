// Losses (mse, bce, nll, cross_entropy; also with class weights and class probabilities)
// forward and backward (src/device/gpu/loss.rs), rope and rope_cached,
// weighted_sum (src/device/gpu/transformer.rs). Semantics: src/ops/nn.rs (float64 reference)
// and the CPU device (src/device/cpu/loss.rs, src/device/cpu/transformer.rs).
// Every element type is loaded as f32 and computed in f32; f16/bf16 are stored back rounded.
//
// Reductions are deterministic: each block of an item kernel writes one partial (loss sum,
// valid-item count, first out-of-range target index) and one block of rb_loss_final_* adds
// the partials in a fixed order (in f64). No float atomics anywhere.
#include "common.h"

#define RB_NOBAD 0x7fffffffffffffffll
RB_DEVICE float rb_neg_inf() { return __int_as_float(0xff800000); }
RB_DEVICE float rb_nan() { return __int_as_float(0x7fc00000); }

// Class index `i` of an i32 (is64 = 0) or i64 target.
RB_DEVICE rb_i64 rb_tgt(const void* t, int is64, rb_u64 i) {
  return is64 ? ((const rb_i64*)t)[i] : (rb_i64)((const rb_i32*)t)[i];
}

// Loss kinds (LossKind of src/ops/nn.rs; the codes of src/device/gpu/kernels.rs, checked by
// its tests); RB_LOSS_COUNT only counts and checks class targets.
#define RB_LOSS_MSE 0
#define RB_LOSS_BCE 1
#define RB_LOSS_NLL 2
#define RB_LOSS_CE 3
#define RB_LOSS_COUNT 4

// Block-wide sum of (s, c) and min of bad; thread 0 holds the result. blockDim.x is a
// multiple of the warp size and at most 1024.
RB_DEVICE void rb_block_combine(float& s, int& c, rb_i64& bad) {
  __shared__ float ss[32];
  __shared__ int sc[32];
  __shared__ rb_i64 sb[32];
  int lane = threadIdx.x % RB_WARP_SIZE, w = threadIdx.x / RB_WARP_SIZE;
  int nw = blockDim.x / RB_WARP_SIZE;
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
    s += rb_shfl_down(s, d);
    c += rb_shfl_down(c, d);
    rb_i64 o = rb_shfl_down(bad, d);
    bad = o < bad ? o : bad;
  }
  if (lane == 0) { ss[w] = s; sc[w] = c; sb[w] = bad; }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < nw; i++) {
      s += ss[i];
      c += sc[i];
      bad = sb[i] < bad ? sb[i] : bad;
    }
  }
  __syncthreads();
}

// Online log-sum-exp state (m = running max, s = sum of exp(x - m)) merged with another.
RB_DEVICE void rb_lse_merge(float& m, float& s, float m2, float s2) {
  float M = fmaxf(m, m2);
  if (M == rb_neg_inf()) return;
  float a = (m == rb_neg_inf()) ? 0.0f : s * expf(m - M);
  float b = (m2 == rb_neg_inf()) ? 0.0f : s2 * expf(m2 - M);
  s = a + b;
  m = M;
}

// Block-wide merge of (m, s, sum); every thread gets the result.
RB_DEVICE void rb_block_lse(float& m, float& s, float& sum) {
  __shared__ float sm[32], sv[32], su[32];
  int lane = threadIdx.x % RB_WARP_SIZE, w = threadIdx.x / RB_WARP_SIZE;
  int nw = blockDim.x / RB_WARP_SIZE;
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
    float m2 = rb_shfl_down(m, d), s2 = rb_shfl_down(s, d);
    sum += rb_shfl_down(sum, d);
    rb_lse_merge(m, s, m2, s2);
  }
  if (lane == 0) { sm[w] = m; sv[w] = s; su[w] = sum; }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < nw; i++) {
      rb_lse_merge(m, s, sm[i], sv[i]);
      sum += su[i];
    }
    sm[0] = m; sv[0] = s; su[0] = sum;
  }
  __syncthreads();
  m = sm[0]; s = sv[0]; sum = su[0];
  __syncthreads();
}

// exp(v - m) as exp2(v log2(e) - m log2(e)): one FMA and one hardware exp2.
#define RB_LOG2E 1.4426950408889634f

// Adds value v to the online state.
RB_DEVICE void rb_online1(float v, float& m, float& s, float& sum) {
  sum += v;
  if (v > m) {
    s = (m == rb_neg_inf() ? 0.0f : s * exp2f((m - v) * RB_LOG2E)) + 1.0f;
    m = v;
  } else {
    s += exp2f((v - m) * RB_LOG2E);
  }
}
// Adds four values (one rescale at most).
RB_DEVICE void rb_online4(const float* v, float& m, float& s, float& sum) {
  float mx = fmaxf(fmaxf(v[0], v[1]), fmaxf(v[2], v[3]));
  sum += (v[0] + v[1]) + (v[2] + v[3]);
  if (mx > m) {
    s = (m == rb_neg_inf()) ? 0.0f : s * exp2f((m - mx) * RB_LOG2E);
    m = mx;
  }
  if (m == rb_neg_inf()) return;  // all -inf so far
  float ml = -m * RB_LOG2E;
  s += (exp2f(fmaf(v[0], RB_LOG2E, ml)) + exp2f(fmaf(v[1], RB_LOG2E, ml))) +
       (exp2f(fmaf(v[2], RB_LOG2E, ml)) + exp2f(fmaf(v[3], RB_LOG2E, ml)));
}

// Four consecutive elements at p (aligned to four elements) as f32.
RB_DEVICE void rb_load4(const float* p, float* v) {
  float4 q = *(const float4*)p;
  v[0] = q.x; v[1] = q.y; v[2] = q.z; v[3] = q.w;
}
RB_DEVICE void rb_load4(const rb_f16* p, float* v) {
  uint2 q = *(const uint2*)p;
  v[0] = rb_half_to_f32((rb_u16)(q.x & 0xffffu)); v[1] = rb_half_to_f32((rb_u16)(q.x >> 16));
  v[2] = rb_half_to_f32((rb_u16)(q.y & 0xffffu)); v[3] = rb_half_to_f32((rb_u16)(q.y >> 16));
}
RB_DEVICE void rb_load4(const rb_bf16* p, float* v) {
  uint2 q = *(const uint2*)p;
  v[0] = rb_bfloat_to_f32((rb_u16)(q.x & 0xffffu)); v[1] = rb_bfloat_to_f32((rb_u16)(q.x >> 16));
  v[2] = rb_bfloat_to_f32((rb_u16)(q.y & 0xffffu)); v[3] = rb_bfloat_to_f32((rb_u16)(q.y >> 16));
}

// (max, sum of exp, plain sum) of one contiguous row of c logits, over the whole block.
// vec: the row is aligned to four elements and c % 4 == 0.
template <typename T>
RB_DEVICE void rb_row_lse(const T* row, rb_u64 c, int vec, float& m, float& s, float& sum) {
  m = rb_neg_inf(); s = 0.0f; sum = 0.0f;
  rb_u64 bd = blockDim.x;
  if (vec) {
    rb_u64 n4 = c / 4, j = threadIdx.x;
    for (; j + 3 * bd < n4; j += 4 * bd) {
      float v[4][4];
#pragma unroll
      for (int u = 0; u < 4; u++) rb_load4(row + (j + u * bd) * 4, v[u]);
#pragma unroll
      for (int u = 0; u < 4; u++) rb_online4(v[u], m, s, sum);
    }
    for (; j < n4; j += bd) {
      float v[4];
      rb_load4(row + j * 4, v);
      rb_online4(v, m, s, sum);
    }
  } else {
    for (rb_u64 j = threadIdx.x; j < c; j += bd) rb_online1(rb_to_f32(row[j]), m, s, sum);
  }
  rb_block_lse(m, s, sum);
}

// ---- forward: one item per thread (mse, bce, nll, strided cross_entropy, count) ---------
// out: per-item losses when `none`; ps/pc/pb: one partial per block.
template <typename T>
RB_DEVICE void rb_loss_items_t(int kind, const T* x, const void* tg, int is64, rb_u64 items,
                               rb_u64 c, rb_u64 inner, rb_i64 ign, float ls, int none, T* out,
                               float* ps, int* pc, rb_i64* pb) {
  float s = 0.0f;
  int cnt = 0;
  rb_i64 bad = RB_NOBAD;
  for (rb_u64 r = rb_gid(); r < items; r += rb_gstride()) {
    float l = 0.0f;
    if (kind == RB_LOSS_MSE) {
      float e = rb_to_f32(x[r]) - rb_to_f32(((const T*)tg)[r]);
      l = e * e;
      cnt++;
    } else if (kind == RB_LOSS_BCE) {
      float xv = rb_to_f32(x[r]), t = rb_to_f32(((const T*)tg)[r]);
      l = -(t * fmaxf(logf(xv), -100.0f) + (1.0f - t) * fmaxf(logf(1.0f - xv), -100.0f));
      cnt++;
    } else {
      rb_i64 t = rb_tgt(tg, is64, r);
      if (t == ign) {
        l = 0.0f;
      } else if (t < 0 || t >= (rb_i64)c) {
        bad = (rb_i64)r < bad ? (rb_i64)r : bad;
        l = rb_nan();
      } else {
        cnt++;
        rb_u64 ni = r / inner, i = r % inner;
        const T* base = x + ni * c * inner + i;
        if (kind == RB_LOSS_NLL) {
          l = -rb_to_f32(base[(rb_u64)t * inner]);
        } else if (kind == RB_LOSS_CE) {
          float m = rb_neg_inf(), se = 0.0f, sum = 0.0f;
          for (rb_u64 k = 0; k < c; k++) rb_online1(rb_to_f32(base[k * inner]), m, se, sum);
          float xt = rb_to_f32(base[(rb_u64)t * inner]);
          l = m + logf(se) - (1.0f - ls) * xt - ls / (float)c * sum;
        }
      }
    }
    if (none && kind != RB_LOSS_COUNT) rb_from_f32(out + r, l);
    else s += l;
  }
  rb_block_combine(s, cnt, bad);
  if (threadIdx.x == 0) {
    ps[blockIdx.x] = s;
    pc[blockIdx.x] = cnt;
    pb[blockIdx.x] = bad;
  }
}

// ---- the reduced loss (rb_loss_final_t, or a one-block rb_ce_rows_t) ------------------
// The reduced loss from the sum `s` of `c` valid items (red: 0 none, no output; 1 mean,
// divided by the valid count; 2 sum), and the status words.
template <typename T>
RB_DEVICE void rb_loss_store(int red, double s, rb_i64 c, rb_i64 bad, T* out, rb_i64* status) {
  if (red == 1) rb_from_f32(out, (float)(s / (double)c));
  else if (red == 2) rb_from_f32(out, (float)s);
  status[0] = bad;
  ((double*)status)[1] = (double)c;
}

// ---- forward: cross_entropy over contiguous rows (inner == 1), one fused pass per row ----
// One warp per row: no block barrier inside a row, so the warps of a block drift apart and
// keep loads in flight while others reduce. The target index is loaded together with the
// row, and the target's logit is picked from registers (no dependent load).
RB_DEVICE void rb_warp_lse(float& m, float& s, float& sum, float& xt) {
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
    float m2 = rb_shfl_xor(m, d), s2 = rb_shfl_xor(s, d);
    sum += rb_shfl_xor(sum, d);
    xt += rb_shfl_xor(xt, d);
    rb_lse_merge(m, s, m2, s2);
  }
}

// With `status` (a grid of one block), the block also does rb_loss_final_t's work: its one
// partial is the whole sum, so the reduced loss and the status come out the same.
template <typename T>
RB_DEVICE void rb_ce_rows_t(const T* x, const void* tg, int is64, rb_u64 rows, rb_u64 c,
                            rb_i64 ign, float ls, int vec, int none, T* out, float* ps, int* pc,
                            rb_i64* pb, int red, rb_i64* status) {
  rb_u64 lane = threadIdx.x % RB_WARP_SIZE;
  rb_u64 warp = rb_gid() / RB_WARP_SIZE, nwarps = rb_gstride() / RB_WARP_SIZE;
  float bs = 0.0f;
  int bc = 0;
  rb_i64 bad = RB_NOBAD;
  for (rb_u64 r = warp; r < rows; r += nwarps) {
    rb_i64 t = rb_tgt(tg, is64, r);
    const T* row = x + r * c;
    float m = rb_neg_inf(), s = 0.0f, sum = 0.0f, xt = 0.0f;
    if (vec) {
      rb_u64 n4 = c / 4, j = lane, W = RB_WARP_SIZE;
      for (; j + 3 * W < n4; j += 4 * W) {
        float v[4][4];
#pragma unroll
        for (int u = 0; u < 4; u++) rb_load4(row + (j + u * W) * 4, v[u]);
#pragma unroll
        for (int u = 0; u < 4; u++) {
          rb_u64 o = (rb_u64)t - (j + u * W) * 4;  // the target's lane and slot, if here
          if (o < 4) xt = o == 0 ? v[u][0] : o == 1 ? v[u][1] : o == 2 ? v[u][2] : v[u][3];
          rb_online4(v[u], m, s, sum);
        }
      }
      for (; j < n4; j += W) {
        float v[4];
        rb_load4(row + j * 4, v);
        rb_u64 o = (rb_u64)t - j * 4;
        if (o < 4) xt = o == 0 ? v[0] : o == 1 ? v[1] : o == 2 ? v[2] : v[3];
        rb_online4(v, m, s, sum);
      }
    } else {
      for (rb_u64 j = lane; j < c; j += RB_WARP_SIZE) {
        float v = rb_to_f32(row[j]);
        xt += ((rb_i64)j == t) ? v : 0.0f;
        rb_online1(v, m, s, sum);
      }
    }
    rb_warp_lse(m, s, sum, xt);
    float l;
    if (t == ign) {
      l = 0.0f;
    } else if (t < 0 || t >= (rb_i64)c) {
      bad = (rb_i64)r < bad ? (rb_i64)r : bad;
      l = rb_nan();
    } else {
      l = m + logf(s) - (1.0f - ls) * xt - ls / (float)c * sum;
      if (lane == 0) bc++;
    }
    if (lane == 0) {
      if (none) rb_from_f32(out + r, l);
      else bs += l;
    }
  }
  // Lane 0 of each warp holds the warp's sum and count; the others add zeros.
  rb_block_combine(bs, bc, bad);
  if (threadIdx.x == 0) {
    ps[blockIdx.x] = bs;
    pc[blockIdx.x] = bc;
    pb[blockIdx.x] = bad;
    if (status) rb_loss_store(red, (double)bs, (rb_i64)bc, bad, out, status);
  }
}

// ---- the final reduction: one block adds the partials in a fixed order ----------------
// red: 0 none (no output), 1 mean (divided by the valid count), 2 sum.
// status[0] = first out-of-range item (or RB_NOBAD); status[1] = the valid count (as f64).
template <typename T>
RB_DEVICE void rb_loss_final_t(const float* ps, const int* pc, const rb_i64* pb, rb_u64 nb,
                               int red, T* out, rb_i64* status) {
  __shared__ double ss[256];
  __shared__ rb_i64 sc[256], sb[256];
  double s = 0.0;
  rb_i64 c = 0, bad = RB_NOBAD;
  for (rb_u64 i = threadIdx.x; i < nb; i += blockDim.x) {
    s += (double)ps[i];
    c += pc[i];
    bad = pb[i] < bad ? pb[i] : bad;
  }
  unsigned tid = threadIdx.x;
  ss[tid] = s; sc[tid] = c; sb[tid] = bad;
  __syncthreads();
  // A fixed tree (blockDim.x = 256): the same partials always add in the same order.
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (tid < h) {
      ss[tid] += ss[tid + h];
      sc[tid] += sc[tid + h];
      sb[tid] = sb[tid + h] < sb[tid] ? sb[tid + h] : sb[tid];
    }
    __syncthreads();
  }
  if (tid == 0) rb_loss_store(red, ss[0], sc[0], sb[0], out, status);
}

// ---- backward ---------------------------------------------------------------------------
// The upstream gradient of item r: grad_out[r] (none), grad_out[0] (sum), grad_out[0] / count
// (mean; count = *cnt, the valid-target count, or inv_n for mse/bce when cnt is null).
template <typename T>
RB_DEVICE float rb_gup(const T* go, int red, rb_u64 r, const double* cnt, float inv_n) {
  if (red == 0) return rb_to_f32(go[r]);
  float g = rb_to_f32(go[0]);
  if (red == 1) g = cnt ? (float)((double)g / *cnt) : g * inv_n;
  return g;
}

template <typename T>
RB_DEVICE void rb_loss_bwd_elem_t(int kind, const T* x, const T* t, const T* go, T* gi,
                                  rb_u64 n, int red, float inv_n) {
  for (rb_u64 r = rb_gid(); r < n; r += rb_gstride()) {
    float g = rb_gup(go, red, r, (const double*)0, inv_n);
    float xv = rb_to_f32(x[r]), tv = rb_to_f32(t[r]);
    float v;
    if (kind == RB_LOSS_MSE) v = 2.0f * (xv - tv) * g;
    else v = (xv - tv) / fmaxf((1.0f - xv) * xv, 1e-12f) * g;
    rb_from_f32(gi + r, v);
  }
}

// nll backward, one thread per input element.
template <typename T>
RB_DEVICE void rb_nll_bwd_t(const void* tg, int is64, const T* go, T* gi, rb_u64 n, rb_u64 c,
                            rb_u64 inner, rb_i64 ign, int red, const double* cnt) {
  rb_u64 total = n * c * inner;
  for (rb_u64 e = rb_gid(); e < total; e += rb_gstride()) {
    rb_u64 i = e % inner, cl = (e / inner) % c, ni = e / (inner * c);
    rb_u64 r = ni * inner + i;
    rb_i64 t = rb_tgt(tg, is64, r);
    float v = 0.0f;
    if (t != ign && t == (rb_i64)cl) v = -rb_gup(go, red, r, cnt, 0.0f);
    rb_from_f32(gi + e, v);
  }
}

// cross_entropy backward over contiguous rows: one block per row, two passes.
// `count_here` (mean over a few rows, in a replayed device graph whose first run checked the
// targets): each block counts the valid targets itself instead of reading `cnt` from a
// counting pass (the same integer, so the same divisor).
template <typename T>
RB_DEVICE void rb_ce_bwd_rows_t(const T* x, const void* tg, int is64, const T* go, T* gi,
                                rb_u64 rows, rb_u64 c, rb_i64 ign, float ls, int vec, int red,
                                const double* cnt, int count_here) {
  __shared__ double here;
  if (count_here) {
    float zs = 0.0f;
    int n = 0;
    rb_i64 zb = RB_NOBAD;
    for (rb_u64 r = threadIdx.x; r < rows; r += blockDim.x) {
      rb_i64 t = rb_tgt(tg, is64, r);
      n += (t != ign && t >= 0 && t < (rb_i64)c) ? 1 : 0;
    }
    rb_block_combine(zs, n, zb);
    if (threadIdx.x == 0) here = (double)n;
    __syncthreads();
    cnt = &here;
  }
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    rb_i64 t = rb_tgt(tg, is64, r);
    T* grow = gi + r * c;
    if (t == ign || t < 0 || t >= (rb_i64)c) {
      for (rb_u64 j = threadIdx.x; j < c; j += blockDim.x) rb_from_f32(grow + j, 0.0f);
      continue;
    }
    const T* row = x + r * c;
    float m, s, sum;
    rb_row_lse(row, c, vec, m, s, sum);
    float lse = m + logf(s);
    float g = rb_gup(go, red, r, cnt, 0.0f);
    float u = ls / (float)c;
    for (rb_u64 j = threadIdx.x; j < c; j += blockDim.x) {
      float p = expf(rb_to_f32(row[j]) - lse);
      float oh = (j == (rb_u64)t) ? 1.0f - ls : 0.0f;
      rb_from_f32(grow + j, (p - oh - u) * g);
    }
  }
}

// cross_entropy backward with classes strided by inner: one thread per item.
template <typename T>
RB_DEVICE void rb_ce_bwd_strided_t(const T* x, const void* tg, int is64, const T* go, T* gi,
                                   rb_u64 items, rb_u64 c, rb_u64 inner, rb_i64 ign, float ls,
                                   int red, const double* cnt) {
  for (rb_u64 r = rb_gid(); r < items; r += rb_gstride()) {
    rb_u64 ni = r / inner, i = r % inner;
    const T* base = x + ni * c * inner + i;
    T* gb = gi + ni * c * inner + i;
    rb_i64 t = rb_tgt(tg, is64, r);
    if (t == ign || t < 0 || t >= (rb_i64)c) {
      for (rb_u64 k = 0; k < c; k++) rb_from_f32(gb + k * inner, 0.0f);
      continue;
    }
    float m = rb_neg_inf(), s = 0.0f, sum = 0.0f;
    for (rb_u64 k = 0; k < c; k++) rb_online1(rb_to_f32(base[k * inner]), m, s, sum);
    float lse = m + logf(s);
    float g = rb_gup(go, red, r, cnt, 0.0f);
    float u = ls / (float)c;
    for (rb_u64 k = 0; k < c; k++) {
      float p = expf(rb_to_f32(base[k * inner]) - lse);
      float oh = (k == (rb_u64)t) ? 1.0f - ls : 0.0f;
      rb_from_f32(gb + k * inner, (p - oh - u) * g);
    }
  }
}

// ---- rope: one thread per rotated pair; angles in f64 --------------------------------
template <typename T>
RB_DEVICE void rb_rope_t(const T* x, T* y, rb_u64 vecs, rb_u64 seq, rb_u64 inner, rb_u64 dim,
                         double log_base, rb_i64 offset, int inverse) {
  rb_u64 half = dim / 2, total = vecs * half;
  for (rb_u64 e = rb_gid(); e < total; e += rb_gstride()) {
    rb_u64 v = e / half, i = e % half;
    rb_u64 s = (v / inner) % seq;
    double inv = exp(-2.0 * (double)i / (double)dim * log_base);
    double th = (double)(offset + (rb_i64)s) * inv;
    if (inverse) th = -th;
    float sn = (float)sin(th), cs = (float)cos(th);
    rb_u64 b = v * dim;
    float a = rb_to_f32(x[b + i]), c = rb_to_f32(x[b + i + half]);
    rb_from_f32(y + b + i, a * cs - c * sn);
    rb_from_f32(y + b + i + half, c * cs + a * sn);
  }
}

// ---- weighted_sum: y[o, e] = sum_k w[o, k] x[o, k, e] ----------------------------------
template <typename T>
RB_DEVICE void rb_wsum_t(const T* x, const T* w, T* y, rb_u64 outer, rb_u64 n, rb_u64 d) {
  rb_u64 total = outer * d;
  for (rb_u64 j = rb_gid(); j < total; j += rb_gstride()) {
    rb_u64 o = j / d, e = j % d;
    float acc = 0.0f;
    const T* xo = x + o * n * d + e;
    const T* wo = w + o * n;
    for (rb_u64 k = 0; k < n; k++) acc += rb_to_f32(wo[k]) * rb_to_f32(xo[k * d]);
    rb_from_f32(y + j, acc);
  }
}
// dx[o, k, e] = w[o, k] dy[o, e]
template <typename T>
RB_DEVICE void rb_wsum_dx_t(const T* w, const T* dy, T* dx, rb_u64 outer, rb_u64 n, rb_u64 d) {
  rb_u64 total = outer * n * d;
  for (rb_u64 j = rb_gid(); j < total; j += rb_gstride()) {
    rb_u64 e = j % d, ok = j / d, o = ok / n;
    rb_from_f32(dx + j, rb_to_f32(w[ok]) * rb_to_f32(dy[o * d + e]));
  }
}
// dw[o, k] = sum_e x[o, k, e] dy[o, e]: one warp per (o, k).
template <typename T>
RB_DEVICE void rb_wsum_dw_t(const T* x, const T* dy, T* dw, rb_u64 outer, rb_u64 n, rb_u64 d) {
  rb_u64 lane = threadIdx.x % RB_WARP_SIZE;
  rb_u64 warp = rb_gid() / RB_WARP_SIZE, nwarps = rb_gstride() / RB_WARP_SIZE;
  for (rb_u64 ok = warp; ok < outer * n; ok += nwarps) {
    rb_u64 o = ok / n;
    float acc = 0.0f;
    for (rb_u64 e = lane; e < d; e += RB_WARP_SIZE)
      acc += rb_to_f32(x[ok * d + e]) * rb_to_f32(dy[o * d + e]);
    acc = rb_warp_sum(acc);
    if (lane == 0) rb_from_f32(dw + ok, acc);
  }
}

// ---- entry points, one per element type ------------------------------------------------
#define RB_LOSS_ENTRIES(S, T)                                                                    \
  RB_KERNEL void rb_loss_items_##S(int kind, const T* x, const void* tg, int is64, rb_u64 items, \
                                   rb_u64 c, rb_u64 inner, rb_i64 ign, float ls, int none,       \
                                   T* out, float* ps, int* pc, rb_i64* pb) {                     \
    rb_loss_items_t(kind, x, tg, is64, items, c, inner, ign, ls, none, out, ps, pc, pb);        \
  }                                                                                              \
  RB_KERNEL void rb_ce_rows_##S(const T* x, const void* tg, int is64, rb_u64 rows, rb_u64 c,     \
                                rb_i64 ign, float ls, int vec, int none, T* out, float* ps,      \
                                int* pc, rb_i64* pb, int red, rb_i64* status) { rb_pdl_enter();                  \
    rb_ce_rows_t(x, tg, is64, rows, c, ign, ls, vec, none, out, ps, pc, pb, red, status);       \
  }                                                                                              \
  RB_KERNEL void rb_loss_final_##S(const float* ps, const int* pc, const rb_i64* pb, rb_u64 nb, \
                                   int red, T* out, rb_i64* status) { rb_pdl_enter();                            \
    rb_loss_final_t(ps, pc, pb, nb, red, out, status);                                          \
  }                                                                                              \
  RB_KERNEL void rb_loss_bwd_elem_##S(int kind, const T* x, const T* t, const T* go, T* gi,      \
                                      rb_u64 n, int red, float inv_n) {                          \
    rb_loss_bwd_elem_t(kind, x, t, go, gi, n, red, inv_n);                                      \
  }                                                                                              \
  RB_KERNEL void rb_nll_bwd_##S(const void* tg, int is64, const T* go, T* gi, rb_u64 n,          \
                                rb_u64 c, rb_u64 inner, rb_i64 ign, int red,                     \
                                const double* cnt) {                                             \
    rb_nll_bwd_t(tg, is64, go, gi, n, c, inner, ign, red, cnt);                                 \
  }                                                                                              \
  RB_KERNEL void rb_ce_bwd_rows_##S(const T* x, const void* tg, int is64, const T* go, T* gi,    \
                                    rb_u64 rows, rb_u64 c, rb_i64 ign, float ls, int vec,        \
                                    int red, const double* cnt, int count_here) { rb_pdl_enter();                \
    rb_ce_bwd_rows_t(x, tg, is64, go, gi, rows, c, ign, ls, vec, red, cnt, count_here);         \
  }                                                                                              \
  RB_KERNEL void rb_ce_bwd_strided_##S(const T* x, const void* tg, int is64, const T* go,        \
                                       T* gi, rb_u64 items, rb_u64 c, rb_u64 inner, rb_i64 ign,  \
                                       float ls, int red, const double* cnt) {                   \
    rb_ce_bwd_strided_t(x, tg, is64, go, gi, items, c, inner, ign, ls, red, cnt);               \
  }                                                                                              \
  RB_KERNEL void rb_rope_##S(const T* x, T* y, rb_u64 vecs, rb_u64 seq, rb_u64 inner,            \
                             rb_u64 dim, double log_base, rb_i64 offset, int inverse) {          \
    rb_rope_t(x, y, vecs, seq, inner, dim, log_base, offset, inverse);                          \
  }                                                                                              \
  RB_KERNEL void rb_wsum_##S(const T* x, const T* w, T* y, rb_u64 outer, rb_u64 n, rb_u64 d) {   \
    rb_wsum_t(x, w, y, outer, n, d);                                                             \
  }                                                                                              \
  RB_KERNEL void rb_wsum_dx_##S(const T* w, const T* dy, T* dx, rb_u64 outer, rb_u64 n,          \
                                rb_u64 d) {                                                      \
    rb_wsum_dx_t(w, dy, dx, outer, n, d);                                                        \
  }                                                                                              \
  RB_KERNEL void rb_wsum_dw_##S(const T* x, const T* dy, T* dw, rb_u64 outer, rb_u64 n,          \
                                rb_u64 d) {                                                      \
    rb_wsum_dw_t(x, dy, dw, outer, n, d);                                                        \
  }

RB_LOSS_ENTRIES(f32, float)
RB_LOSS_ENTRIES(f16, rb_f16)
RB_LOSS_ENTRIES(bf16, rb_bf16)

// ---- losses with class weights / class-probability targets (LossExt of src/ops/nn.rs) ----
// tmode: 0 i32 class indices, 1 i64 class indices, 2 class probabilities (T, input-shaped).
// w: [c] class weights (nll, cross_entropy) or input-shaped weights (bce); null: ones.
// G: threads per item, 1 or the warp width (contiguous rows, inner == 1); blockDim.x is a
// multiple of G and the G threads of an item are consecutive lanes of one warp.
// Each block writes one partial: loss sum, summed weight of the items (the divisor of mean:
// w[t] of each non-ignored class target, 1 per item otherwise), first out-of-range item.

// Block-wide sum of (s, sw) and min of bad; thread 0 holds the result.
RB_DEVICE void rb_block_combine_w(float& s, float& sw, rb_i64& bad) {
  __shared__ float ss[32], sws[32];
  __shared__ rb_i64 sb[32];
  int lane = threadIdx.x % RB_WARP_SIZE, w = threadIdx.x / RB_WARP_SIZE;
  int nw = blockDim.x / RB_WARP_SIZE;
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
    s += rb_shfl_down(s, d);
    sw += rb_shfl_down(sw, d);
    rb_i64 o = rb_shfl_down(bad, d);
    bad = o < bad ? o : bad;
  }
  if (lane == 0) { ss[w] = s; sws[w] = sw; sb[w] = bad; }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < nw; i++) {
      s += ss[i];
      sw += sws[i];
      bad = sb[i] < bad ? sb[i] : bad;
    }
  }
  __syncthreads();
}

// The coefficient a[k] of class k of a cross_entropy item, whose loss is
// sum_k a[k] (lse - x[k]): w[k] (t[k] (1 - ls) + ls/c) for probabilities, else
// ls/c w[k] + (1 - ls) w[t] [k == t].
template <typename T>
RB_DEVICE float rb_ce_coef(int tmode, const T* tp, const T* w, rb_u64 k, rb_u64 inner, rb_i64 t,
                           float wt, float ls, float u) {
  float wk = w ? rb_to_f32(w[k]) : 1.0f;
  if (tmode == 2) return wk * (rb_to_f32(tp[k * inner]) * (1.0f - ls) + u);
  return u * wk + ((rb_i64)k == t ? (1.0f - ls) * wt : 0.0f);
}

// Merges the online state and the sum A of the G lanes of an item (every lane gets them).
RB_DEVICE void rb_group_lse(float& m, float& s, float& a, float& ax, int G) {
  for (int d = G / 2; d > 0; d >>= 1) {
    float m2 = rb_shfl_xor(m, d), s2 = rb_shfl_xor(s, d);
    a += rb_shfl_xor(a, d);
    ax += rb_shfl_xor(ax, d);
    rb_lse_merge(m, s, m2, s2);
  }
}

// Adds v to the online (max, sum of exp) state.
RB_DEVICE void rb_online_lse(float v, float& m, float& s) {
  if (v > m) {
    s = (m == rb_neg_inf() ? 0.0f : s * exp2f((m - v) * RB_LOG2E)) + 1.0f;
    m = v;
  } else {
    s += exp2f((v - m) * RB_LOG2E);
  }
}

// The class target of item r (tmode 0/1) checked: 1 valid, 0 ignored, -1 out of range.
RB_DEVICE int rb_wtarget(const void* tg, int tmode, rb_u64 r, rb_u64 c, rb_i64 ign, rb_i64& t) {
  if (tmode == 2) { t = -1; return 1; }
  t = rb_tgt(tg, tmode, r);
  if (t == ign) return 0;
  if (t < 0 || t >= (rb_i64)c) return -1;
  return 1;
}

// kind: RB_LOSS_BCE, RB_LOSS_NLL, RB_LOSS_CE, or RB_LOSS_COUNT (only the divisor and the target check).
template <typename T>
RB_DEVICE void rb_wloss_items_t(int kind, const T* x, const void* tg, int tmode, const T* w,
                                rb_u64 items, rb_u64 c, rb_u64 inner, rb_i64 ign, float ls, int G,
                                int none, T* out, float* ps, float* pw, rb_i64* pb) {
  float s = 0.0f, sw = 0.0f;
  rb_i64 bad = RB_NOBAD;
  int lane = (int)(threadIdx.x % (unsigned)G);
  rb_u64 ng = rb_gstride() / (rb_u64)G;
  float u = ls / (float)c;
  for (rb_u64 r = rb_gid() / (rb_u64)G; r < items; r += ng) {
    float l = 0.0f, wr = 0.0f;
    if (kind == RB_LOSS_BCE) {
      float xv = rb_to_f32(x[r]), t = rb_to_f32(((const T*)tg)[r]);
      l = -(t * fmaxf(logf(xv), -100.0f) + (1.0f - t) * fmaxf(logf(1.0f - xv), -100.0f));
      if (w) l *= rb_to_f32(w[r]);
      wr = 1.0f;
    } else {
      rb_i64 t;
      int st = rb_wtarget(tg, tmode, r, c, ign, t);
      if (st < 0) {
        bad = (rb_i64)r < bad ? (rb_i64)r : bad;
        l = rb_nan();
      } else if (st > 0) {
        float wt = (tmode != 2 && w) ? rb_to_f32(w[t]) : 1.0f;
        wr = tmode == 2 ? 1.0f : wt;
        rb_u64 ni = r / inner, i = r % inner;
        const T* base = x + ni * c * inner + i;
        if (kind == RB_LOSS_NLL) {
          l = -wt * rb_to_f32(base[(rb_u64)t * inner]);
        } else if (kind == RB_LOSS_CE) {
          const T* tp = tmode == 2 ? (const T*)tg + ni * c * inner + i : (const T*)0;
          float m = rb_neg_inf(), se = 0.0f, a = 0.0f, ax = 0.0f;
          for (rb_u64 k = lane; k < c; k += G) {
            float v = rb_to_f32(base[k * inner]);
            float ak = rb_ce_coef(tmode, tp, w, k, inner, t, wt, ls, u);
            rb_online_lse(v, m, se);
            a += ak;
            ax += ak * v;
          }
          rb_group_lse(m, se, a, ax, G);
          l = (m + logf(se)) * a - ax;
        }
      }
    }
    if (lane == 0) {
      if (none && kind != RB_LOSS_COUNT) rb_from_f32(out + r, l);
      else s += l;
      sw += wr;
    }
  }
  rb_block_combine_w(s, sw, bad);
  if (threadIdx.x == 0) {
    ps[blockIdx.x] = s;
    pw[blockIdx.x] = sw;
    pb[blockIdx.x] = bad;
  }
}

// Adds the partials in a fixed order (blockDim.x = 256). red: 0 none (no output), 1 mean
// (divided by div when > 0, else by the summed weight), 2 sum. status[0] = first
// out-of-range item (or RB_NOBAD), status[1] = the divisor of mean (as f64).
template <typename T>
RB_DEVICE void rb_wloss_final_t(const float* ps, const float* pw, const rb_i64* pb, rb_u64 nb,
                                int red, double div, T* out, rb_i64* status) {
  __shared__ double ss[256], sw[256];
  __shared__ rb_i64 sb[256];
  double s = 0.0, w = 0.0;
  rb_i64 bad = RB_NOBAD;
  for (rb_u64 i = threadIdx.x; i < nb; i += blockDim.x) {
    s += (double)ps[i];
    w += (double)pw[i];
    bad = pb[i] < bad ? pb[i] : bad;
  }
  unsigned tid = threadIdx.x;
  ss[tid] = s; sw[tid] = w; sb[tid] = bad;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (tid < h) {
      ss[tid] += ss[tid + h];
      sw[tid] += sw[tid + h];
      sb[tid] = sb[tid + h] < sb[tid] ? sb[tid + h] : sb[tid];
    }
    __syncthreads();
  }
  if (tid == 0) {
    double dv = div > 0.0 ? div : sw[0];
    if (red == 1) rb_from_f32(out, (float)(ss[0] / dv));
    else if (red == 2) rb_from_f32(out, (float)ss[0]);
    status[0] = sb[0];
    ((double*)status)[1] = dv;
  }
}

// Backward, one item per G threads. The upstream gradient: go[r] (none), go[0] (sum),
// go[0] / divisor (mean; *cnt when cnt is not null, else div).
template <typename T>
RB_DEVICE void rb_wloss_bwd_t(int kind, const T* x, const void* tg, int tmode, const T* w,
                              const T* go, T* gi, rb_u64 items, rb_u64 c, rb_u64 inner, rb_i64 ign,
                              float ls, int G, int red, const double* cnt, double div) {
  int lane = (int)(threadIdx.x % (unsigned)G);
  rb_u64 ng = rb_gstride() / (rb_u64)G;
  float u = ls / (float)c;
  for (rb_u64 r = rb_gid() / (rb_u64)G; r < items; r += ng) {
    float g = rb_to_f32(go[red == 0 ? r : 0]);
    if (red == 1) g = (float)((double)g / (cnt ? *cnt : div));
    if (kind == RB_LOSS_BCE) {
      float xv = rb_to_f32(x[r]), tv = rb_to_f32(((const T*)tg)[r]);
      float v = (xv - tv) / fmaxf((1.0f - xv) * xv, 1e-12f) * g;
      if (w) v *= rb_to_f32(w[r]);
      rb_from_f32(gi + r, v);
      continue;
    }
    rb_u64 ni = r / inner, i = r % inner;
    const T* base = x + ni * c * inner + i;
    T* gb = gi + ni * c * inner + i;
    rb_i64 t;
    if (rb_wtarget(tg, tmode, r, c, ign, t) <= 0) {
      for (rb_u64 k = lane; k < c; k += G) rb_from_f32(gb + k * inner, 0.0f);
      continue;
    }
    float wt = (tmode != 2 && w) ? rb_to_f32(w[t]) : 1.0f;
    if (kind == RB_LOSS_NLL) {
      for (rb_u64 k = lane; k < c; k += G)
        rb_from_f32(gb + k * inner, (rb_i64)k == t ? -wt * g : 0.0f);
      continue;
    }
    const T* tp = tmode == 2 ? (const T*)tg + ni * c * inner + i : (const T*)0;
    float m = rb_neg_inf(), se = 0.0f, a = 0.0f, ax = 0.0f;
    for (rb_u64 k = lane; k < c; k += G) {
      rb_online_lse(rb_to_f32(base[k * inner]), m, se);
      a += rb_ce_coef(tmode, tp, w, k, inner, t, wt, ls, u);
    }
    rb_group_lse(m, se, a, ax, G);
    float lse = m + logf(se);
    for (rb_u64 k = lane; k < c; k += G) {
      float p = expf(rb_to_f32(base[k * inner]) - lse);
      float ak = rb_ce_coef(tmode, tp, w, k, inner, t, wt, ls, u);
      rb_from_f32(gb + k * inner, (p * a - ak) * g);
    }
  }
}

// ---- rope_cached: one thread per rotated pair or copied feature -------------------------
// cs/sn: [max_pos, rot/2]; pos: position ids (is64) or null (the sequence index), read at
// (o / pos_group) * seq + s. An id outside [0, max_pos) stores its index at *bad (any one
// of them) and the pair is written as NaN.
template <typename T>
RB_DEVICE void rb_rope_cached_t(const T* x, const T* cs, const T* sn, const void* pos, int is64,
                                T* y, rb_u64 vecs, rb_u64 seq, rb_u64 inner, rb_u64 dim,
                                rb_u64 rot, rb_u64 max_pos, rb_u64 pos_group, int interleaved,
                                int inverse, rb_i64* bad) {
  rb_u64 half = rot / 2, per = half + (dim - rot), total = vecs * per;
  for (rb_u64 e = rb_gid(); e < total; e += rb_gstride()) {
    rb_u64 v = e / per, j = e % per, b = v * dim;
    if (j >= half) {
      rb_u64 f = rot + (j - half);
      if (y != x) y[b + f] = x[b + f];
      continue;
    }
    rb_u64 os = v / inner, s = os % seq;
    rb_u64 ia = interleaved ? 2 * j : j, ib = interleaved ? 2 * j + 1 : j + half;
    rb_i64 p = (rb_i64)s;
    if (pos) {
      rb_u64 pi = (os / seq / pos_group) * seq + s;
      p = rb_tgt(pos, is64, pi);
      if (p < 0 || p >= (rb_i64)max_pos) {
        if (bad) *bad = (rb_i64)pi;  // NULL inside a device-graph capture
        rb_from_f32(y + b + ia, rb_nan());
        rb_from_f32(y + b + ib, rb_nan());
        continue;
      }
    }
    float c = rb_to_f32(cs[(rb_u64)p * half + j]), sv = rb_to_f32(sn[(rb_u64)p * half + j]);
    if (inverse) sv = -sv;
    float a = rb_to_f32(x[b + ia]), bb = rb_to_f32(x[b + ib]);
    rb_from_f32(y + b + ia, rb_rot_a(a, bb, c, sv));
    rb_from_f32(y + b + ib, rb_rot_b(a, bb, c, sv));
  }
}

// ---- rope_store: a decode step's new-token tensors in one launch (the executor's
// rope_cached + index_copy of one position, src/device/gpu/transformer.rs) -------------------
// Up to three parts of n elements (vectors of `dim`), each rotated as rb_rope_cached_t does
// with the one position p = pos[0] (`rotate`) or copied, then written to y, or with a cache
// (t > 0) into the cache's slot p along its dim: element e goes to (e / inner) * t * inner +
// p * inner + e % inner (index_copy's layout). One thread per rotated pair (or copied pair)
// or trailing feature. p outside [0, max_pos) makes a rotated part's pairs NaN (rope_cached);
// outside [0, t) skips a store (index_copy's scatter): what both do inside a device graph.
template <typename T>
RB_DEVICE void rb_rope_store_unit(rb_u64 e, const T* x, T* y, int rotate, rb_u64 inner, rb_u64 t,
                                  const T* cs, const T* sn, rb_i64 p, rb_u64 dim, rb_u64 rot,
                                  rb_u64 max_pos, int interleaved) {
  rb_u64 half = rot / 2, per = half + (dim - rot);
  rb_u64 v = e / per, j = e % per, b = v * dim;
  if (t && (p < 0 || p >= (rb_i64)t)) return;
  auto at = [&](rb_u64 i) -> T* {
    return t ? y + (i / inner) * t * inner + (rb_u64)p * inner + i % inner : y + i;
  };
  if (j >= half) {
    rb_u64 f = b + rot + (j - half);
    *at(f) = x[f];
    return;
  }
  rb_u64 ia = b + (interleaved ? 2 * j : j), ib = b + (interleaved ? 2 * j + 1 : j + half);
  if (!rotate) {
    *at(ia) = x[ia];
    *at(ib) = x[ib];
    return;
  }
  if (p < 0 || p >= (rb_i64)max_pos) {
    rb_from_f32(at(ia), rb_nan());
    rb_from_f32(at(ib), rb_nan());
    return;
  }
  float c = rb_to_f32(cs[(rb_u64)p * half + j]), sv = rb_to_f32(sn[(rb_u64)p * half + j]);
  float a = rb_to_f32(x[ia]), bb = rb_to_f32(x[ib]);
  rb_from_f32(at(ia), rb_rot_a(a, bb, c, sv));
  rb_from_f32(at(ib), rb_rot_b(a, bb, c, sv));
}
#define RB_ROPE_STORE_PART(T, I) const T *x##I, T *y##I, rb_u64 n##I, int r##I, rb_u64 in##I, rb_u64 t##I
template <typename T>
RB_DEVICE void rb_rope_store_t(const T* cs, const T* sn, const void* pos, int is64, rb_u64 dim,
                               rb_u64 rot, rb_u64 max_pos, int interleaved, RB_ROPE_STORE_PART(T, 0),
                               RB_ROPE_STORE_PART(T, 1), RB_ROPE_STORE_PART(T, 2)) {
  const rb_u64 per = rot / 2 + (dim - rot);
  const rb_u64 u0 = n0 / dim * per, u1 = n1 / dim * per, u2 = n2 / dim * per;
  const rb_i64 p = rb_tgt(pos, is64, 0);
  for (rb_u64 e = rb_gid(); e < u0 + u1 + u2; e += rb_gstride()) {
    if (e < u0)
      rb_rope_store_unit(e, x0, y0, r0, in0, t0, cs, sn, p, dim, rot, max_pos, interleaved);
    else if (e < u0 + u1)
      rb_rope_store_unit(e - u0, x1, y1, r1, in1, t1, cs, sn, p, dim, rot, max_pos, interleaved);
    else
      rb_rope_store_unit(e - u0 - u1, x2, y2, r2, in2, t2, cs, sn, p, dim, rot, max_pos, interleaved);
  }
}
#define RB_ROPE_STORE(S, T)                                                                          \
  RB_KERNEL void rb_rope_store_##S(const T* cs, const T* sn, const void* pos, int is64, rb_u64 dim, \
                                   rb_u64 rot, rb_u64 max_pos, int interleaved,                     \
                                   RB_ROPE_STORE_PART(T, 0), RB_ROPE_STORE_PART(T, 1),                    \
                                   RB_ROPE_STORE_PART(T, 2)) {                                         \
    rb_pdl_enter();                                                                                 \
    rb_rope_store_t(cs, sn, pos, is64, dim, rot, max_pos, interleaved, x0, y0, n0, r0, in0, t0, x1, \
                    y1, n1, r1, in1, t1, x2, y2, n2, r2, in2, t2);                                  \
  }
RB_ROPE_STORE(f32, float)
RB_ROPE_STORE(f16, rb_f16)
RB_ROPE_STORE(bf16, rb_bf16)

#define RB_LOSS_EXT_ENTRIES(S, T)                                                                \
  RB_KERNEL void rb_wloss_items_##S(int kind, const T* x, const void* tg, int tmode, const T* w, \
                                    rb_u64 items, rb_u64 c, rb_u64 inner, rb_i64 ign, float ls,  \
                                    int G, int none, T* out, float* ps, float* pw, rb_i64* pb) { \
    rb_wloss_items_t(kind, x, tg, tmode, w, items, c, inner, ign, ls, G, none, out, ps, pw, pb);\
  }                                                                                              \
  RB_KERNEL void rb_wloss_final_##S(const float* ps, const float* pw, const rb_i64* pb,          \
                                    rb_u64 nb, int red, double div, T* out, rb_i64* status) {    \
    rb_wloss_final_t(ps, pw, pb, nb, red, div, out, status);                                     \
  }                                                                                              \
  RB_KERNEL void rb_wloss_bwd_##S(int kind, const T* x, const void* tg, int tmode, const T* w,   \
                                  const T* go, T* gi, rb_u64 items, rb_u64 c, rb_u64 inner,      \
                                  rb_i64 ign, float ls, int G, int red, const double* cnt,       \
                                  double div) {                                                  \
    rb_wloss_bwd_t(kind, x, tg, tmode, w, go, gi, items, c, inner, ign, ls, G, red, cnt, div);   \
  }                                                                                              \
  RB_KERNEL void rb_rope_cached_##S(const T* x, const T* cs, const T* sn, const void* pos,       \
                                    int is64, T* y, rb_u64 vecs, rb_u64 seq, rb_u64 inner,       \
                                    rb_u64 dim, rb_u64 rot, rb_u64 max_pos, rb_u64 pos_group,    \
                                    int interleaved, int inverse, rb_i64* bad) { rb_pdl_enter();                 \
    rb_rope_cached_t(x, cs, sn, pos, is64, y, vecs, seq, inner, dim, rot, max_pos, pos_group,    \
                     interleaved, inverse, bad);                                                 \
  }

RB_LOSS_EXT_ENTRIES(f32, float)
RB_LOSS_EXT_ENTRIES(f16, rb_f16)
RB_LOSS_EXT_ENTRIES(bf16, rb_bf16)

// ---- f64 losses: every kind (mse, bce, nll, cross_entropy; class weights, class
// probabilities) in double, one thread per item, with the formulas of the CPU device
// (src/device/cpu/loss.rs: the weighted/probability forms, which the plain losses are with
// unit weights). tmode and w as the weighted kernels above (tmode 0 for mse/bce; w null:
// ones). Each block writes one partial in double (loss sum, summed weight, first bad item);
// rb_loss_final_d_f64 adds them in a fixed order.
RB_DEVICE double rb_nan_d() { return __longlong_as_double(0x7ff8000000000000ll); }

// Block-wide sum of (s, sw) and min of bad in double; thread 0 holds the result.
RB_DEVICE void rb_block_combine_d(double& s, double& sw, rb_i64& bad) {
  __shared__ double ss[32], sws[32];
  __shared__ rb_i64 sb[32];
  int lane = threadIdx.x % RB_WARP_SIZE, w = threadIdx.x / RB_WARP_SIZE;
  int nw = blockDim.x / RB_WARP_SIZE;
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
    s += rb_shfl_down(s, d);
    sw += rb_shfl_down(sw, d);
    rb_i64 o = rb_shfl_down(bad, d);
    bad = o < bad ? o : bad;
  }
  if (lane == 0) { ss[w] = s; sws[w] = sw; sb[w] = bad; }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int i = 1; i < nw; i++) {
      s += ss[i];
      sw += sws[i];
      bad = sb[i] < bad ? sb[i] : bad;
    }
  }
  __syncthreads();
}

// log-sum-exp of one item's logits base[k * inner], k < c: the max (ignoring NaN, as
// f64::max), then the sum of exp(x - max).
RB_DEVICE double rb_lse_d(const double* base, rb_u64 c, rb_u64 inner) {
  double m = -__longlong_as_double(0x7ff0000000000000ll);
  for (rb_u64 k = 0; k < c; k++) m = fmax(m, base[k * inner]);
  double s = 0.0;
  for (rb_u64 k = 0; k < c; k++) s += exp(base[k * inner] - m);
  return m + log(s);
}

// The coefficient a[k] of a cross_entropy item (its loss is sum_k a[k] (lse - x[k])).
RB_DEVICE double rb_ce_coef_d(int tmode, const double* tp, const double* w, rb_u64 k,
                              rb_u64 inner, rb_i64 t, double wt, double ls, double u) {
  double wk = w ? w[k] : 1.0;
  if (tmode == 2) return wk * (tp[k * inner] * (1.0 - ls) + u);
  return u * wk + ((rb_i64)k == t ? (1.0 - ls) * wt : 0.0);
}

// kind: RB_LOSS_MSE, RB_LOSS_BCE, RB_LOSS_NLL, RB_LOSS_CE, or RB_LOSS_COUNT (the divisor and
// the target check only). none: per-item losses to out.
RB_KERNEL void rb_loss_items_d_f64(int kind, const double* x, const void* tg, int tmode,
                                   const double* w, rb_u64 items, rb_u64 c, rb_u64 inner,
                                   rb_i64 ign, double ls, int none, double* out, double* ps,
                                   double* pw, rb_i64* pb) {
  double s = 0.0, sw = 0.0;
  rb_i64 bad = RB_NOBAD;
  double u = ls / (double)c;
  for (rb_u64 r = rb_gid(); r < items; r += rb_gstride()) {
    double l = 0.0, wr = 0.0;
    if (kind == RB_LOSS_MSE || kind == RB_LOSS_BCE) {
      double xv = x[r], t = ((const double*)tg)[r];
      if (kind == RB_LOSS_MSE) {
        double e = xv - t;
        l = e * e;
      } else {
        l = -(t * fmax(log(xv), -100.0) + (1.0 - t) * fmax(log(1.0 - xv), -100.0));
      }
      if (w) l = w[r] * l;
      wr = 1.0;
    } else {
      rb_i64 t;
      int st = rb_wtarget(tg, tmode, r, c, ign, t);
      if (st < 0) {
        bad = (rb_i64)r < bad ? (rb_i64)r : bad;
        l = rb_nan_d();
      } else if (st > 0) {
        double wt = (tmode != 2 && w) ? w[t] : 1.0;
        wr = tmode == 2 ? 1.0 : wt;
        rb_u64 ni = r / inner, i = r % inner;
        const double* base = x + ni * c * inner + i;
        if (kind == RB_LOSS_NLL) {
          l = -wt * base[(rb_u64)t * inner];
        } else if (kind == RB_LOSS_CE) {
          const double* tp = tmode == 2 ? (const double*)tg + ni * c * inner + i : (const double*)0;
          double lse = rb_lse_d(base, c, inner);
          for (rb_u64 k = 0; k < c; k++)
            l += rb_ce_coef_d(tmode, tp, w, k, inner, t, wt, ls, u) * (lse - base[k * inner]);
        }
      }
    }
    if (none && kind != RB_LOSS_COUNT) out[r] = l;
    else s += l;
    sw += wr;
  }
  rb_block_combine_d(s, sw, bad);
  if (threadIdx.x == 0) {
    ps[blockIdx.x] = s;
    pw[blockIdx.x] = sw;
    pb[blockIdx.x] = bad;
  }
}

// Adds the partials in a fixed order (blockDim.x = 256). red: 0 none (no output), 1 mean
// (divided by div when > 0, else by the summed weight), 2 sum. status[0] = first
// out-of-range item (or RB_NOBAD), status[1] = the divisor of mean (as f64).
RB_KERNEL void rb_loss_final_d_f64(const double* ps, const double* pw, const rb_i64* pb,
                                   rb_u64 nb, int red, double div, double* out, rb_i64* status) {
  __shared__ double ss[256], sw[256];
  __shared__ rb_i64 sb[256];
  double s = 0.0, w = 0.0;
  rb_i64 bad = RB_NOBAD;
  for (rb_u64 i = threadIdx.x; i < nb; i += blockDim.x) {
    s += ps[i];
    w += pw[i];
    bad = pb[i] < bad ? pb[i] : bad;
  }
  unsigned tid = threadIdx.x;
  ss[tid] = s; sw[tid] = w; sb[tid] = bad;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (tid < h) {
      ss[tid] += ss[tid + h];
      sw[tid] += sw[tid + h];
      sb[tid] = sb[tid + h] < sb[tid] ? sb[tid + h] : sb[tid];
    }
    __syncthreads();
  }
  if (tid == 0) {
    double dv = div > 0.0 ? div : sw[0];
    if (red == 1) *out = ss[0] / dv;
    else if (red == 2) *out = ss[0];
    status[0] = sb[0];
    ((double*)status)[1] = dv;
  }
}

// Backward, one thread per item. The upstream gradient: go[r] (none), go[0] (sum), go[0] /
// divisor (mean; *cnt when cnt is not null, else div). Ignored (and out-of-range) items get
// zero gradients.
RB_KERNEL void rb_loss_bwd_d_f64(int kind, const double* x, const void* tg, int tmode,
                                 const double* w, const double* go, double* gi, rb_u64 items,
                                 rb_u64 c, rb_u64 inner, rb_i64 ign, double ls, int red,
                                 const double* cnt, double div) {
  double u = ls / (double)c;
  for (rb_u64 r = rb_gid(); r < items; r += rb_gstride()) {
    double g = go[red == 0 ? r : 0];
    if (red == 1) g = g / (cnt ? *cnt : div);
    if (kind == RB_LOSS_MSE || kind == RB_LOSS_BCE) {
      double xv = x[r], tv = ((const double*)tg)[r];
      double v = kind == RB_LOSS_MSE ? 2.0 * (xv - tv) : (xv - tv) / fmax((1.0 - xv) * xv, 1e-12);
      if (w) v = w[r] * v;
      gi[r] = v * g;
      continue;
    }
    rb_u64 ni = r / inner, i = r % inner;
    const double* base = x + ni * c * inner + i;
    double* gb = gi + ni * c * inner + i;
    rb_i64 t;
    if (rb_wtarget(tg, tmode, r, c, ign, t) <= 0) {
      for (rb_u64 k = 0; k < c; k++) gb[k * inner] = 0.0;
      continue;
    }
    double wt = (tmode != 2 && w) ? w[t] : 1.0;
    if (kind == RB_LOSS_NLL) {
      for (rb_u64 k = 0; k < c; k++) gb[k * inner] = (rb_i64)k == t ? -wt * g : 0.0;
      continue;
    }
    const double* tp = tmode == 2 ? (const double*)tg + ni * c * inner + i : (const double*)0;
    double lse = rb_lse_d(base, c, inner);
    double a = 0.0;
    for (rb_u64 k = 0; k < c; k++) a += rb_ce_coef_d(tmode, tp, w, k, inner, t, wt, ls, u);
    for (rb_u64 k = 0; k < c; k++) {
      double p = exp(base[k * inner] - lse);
      gb[k * inner] = (p * a - rb_ce_coef_d(tmode, tp, w, k, inner, t, wt, ls, u)) * g;
    }
  }
}

// ---- f64 rope and rope_cached: the kernels above in double (angles, products) ----------
RB_KERNEL void rb_rope_f64(const double* x, double* y, rb_u64 vecs, rb_u64 seq, rb_u64 inner,
                           rb_u64 dim, double log_base, rb_i64 offset, int inverse) {
  rb_u64 half = dim / 2, total = vecs * half;
  for (rb_u64 e = rb_gid(); e < total; e += rb_gstride()) {
    rb_u64 v = e / half, i = e % half;
    rb_u64 s = (v / inner) % seq;
    double inv = exp(-2.0 * (double)i / (double)dim * log_base);
    double th = (double)(offset + (rb_i64)s) * inv;
    if (inverse) th = -th;
    double sn = sin(th), cs = cos(th);
    rb_u64 b = v * dim;
    double a = x[b + i], c = x[b + i + half];
    y[b + i] = a * cs - c * sn;
    y[b + i + half] = c * cs + a * sn;
  }
}

RB_KERNEL void rb_rope_cached_f64(const double* x, const double* cs, const double* sn,
                                  const void* pos, int is64, double* y, rb_u64 vecs, rb_u64 seq,
                                  rb_u64 inner, rb_u64 dim, rb_u64 rot, rb_u64 max_pos,
                                  rb_u64 pos_group, int interleaved, int inverse, rb_i64* bad) { rb_pdl_enter();
  rb_u64 half = rot / 2, per = half + (dim - rot), total = vecs * per;
  for (rb_u64 e = rb_gid(); e < total; e += rb_gstride()) {
    rb_u64 v = e / per, j = e % per, b = v * dim;
    if (j >= half) {
      rb_u64 f = rot + (j - half);
      if (y != x) y[b + f] = x[b + f];
      continue;
    }
    rb_u64 os = v / inner, s = os % seq;
    rb_u64 ia = interleaved ? 2 * j : j, ib = interleaved ? 2 * j + 1 : j + half;
    rb_i64 p = (rb_i64)s;
    if (pos) {
      rb_u64 pi = (os / seq / pos_group) * seq + s;
      p = rb_tgt(pos, is64, pi);
      if (p < 0 || p >= (rb_i64)max_pos) {
        if (bad) *bad = (rb_i64)pi;  // NULL inside a device-graph capture
        y[b + ia] = rb_nan_d();
        y[b + ib] = rb_nan_d();
        continue;
      }
    }
    double c = cs[(rb_u64)p * half + j], sv = sn[(rb_u64)p * half + j];
    if (inverse) sv = -sv;
    double a = x[b + ia], bb = x[b + ib];
    y[b + ia] = a * c - bb * sv;
    y[b + ib] = bb * c + a * sv;
  }
}
