// Losses (mse, bce, nll, cross_entropy) forward and backward (src/device/gpu/loss.rs), rope,
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

template <typename T>
RB_DEVICE void rb_ce_rows_t(const T* x, const void* tg, int is64, rb_u64 rows, rb_u64 c,
                            rb_i64 ign, float ls, int vec, int none, T* out, float* ps, int* pc,
                            rb_i64* pb) {
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
  if (tid == 0) {
    s = ss[0];
    c = sc[0];
    if (red == 1) rb_from_f32(out, (float)(s / (double)c));
    else if (red == 2) rb_from_f32(out, (float)s);
    status[0] = sb[0];
    ((double*)status)[1] = (double)c;
  }
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
template <typename T>
RB_DEVICE void rb_ce_bwd_rows_t(const T* x, const void* tg, int is64, const T* go, T* gi,
                                rb_u64 rows, rb_u64 c, rb_i64 ign, float ls, int vec, int red,
                                const double* cnt) {
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
                                int* pc, rb_i64* pb) {                                           \
    rb_ce_rows_t(x, tg, is64, rows, c, ign, ls, vec, none, out, ps, pc, pb);                    \
  }                                                                                              \
  RB_KERNEL void rb_loss_final_##S(const float* ps, const int* pc, const rb_i64* pb, rb_u64 nb, \
                                   int red, T* out, rb_i64* status) {                            \
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
                                    int red, const double* cnt) {                                \
    rb_ce_bwd_rows_t(x, tg, is64, go, gi, rows, c, ign, ls, vec, red, cnt);                     \
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
