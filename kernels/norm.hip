// Softmax and normalization kernels, forward and backward. Semantics match the CPU device
// (src/device/cpu/softmax.rs, src/device/cpu/norm.rs) and the float64 references of src/ops/nn.rs; f16/bf16 compute in
// f32; statistics buffers (mean, rstd, partial sums) are f32.
//
// Rows that fit in registers (softmax over the last dim, layer_norm, rms_norm): each row is
// read once into registers and written once. A row belongs to one warp (short rows, several
// rows per block) or to one block; each thread holds N chunks of V elements (V = 4 when the
// row length and the pointers allow vector loads), chunk c of the row at c = i * threads + t.
// Longer rows and the other layouts use loops over global memory (a few passes per set).
#include "common.h"
#include "rows.h"

// ---- softmax / log_softmax over rows held in registers ------------------------------------
template <typename T, int V, int N, bool WARP>
RB_DEVICE void rb_softmax_rows(const T* x, T* y, rb_u64 rows, int cols, int logm, float* sh) {
  const rb_rowmap<WARP> map;
  const int chunks = cols / V;
  for (rb_u64 row = map.row0; row < rows; row += map.rstride) {
    const rb_u64 base = row * (rb_u64)cols;
    float v[N][V];
    float m = RB_NEG_INF;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
        rb_ldv<T, V>(x, base + (rb_u64)c * V, v[i]);
#pragma unroll
        for (int j = 0; j < V; ++j) m = fmaxf(m, v[i][j]);
      }
    }
    m = rb_max<WARP>(m, sh);
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (i * map.nt + map.t < chunks) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float e = expf(v[i][j] - m);
          s += e;
          if (!logm) v[i][j] = e;
        }
      }
    }
    s = rb_sum<WARP>(s, sh);
    const float off = m + logf(s), inv = 1.0f / s;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
#pragma unroll
        for (int j = 0; j < V; ++j) v[i][j] = logm ? v[i][j] - off : v[i][j] * inv;
        rb_stv<T, V>(y, base + (rb_u64)c * V, v[i]);
      }
    }
  }
}

// dx = y * (dy - sum(dy * y)) (softmax) or dy - exp(y) * sum(dy) (log_softmax).
template <typename T, int V, int N, bool WARP>
RB_DEVICE void rb_softmax_bwd_rows(const T* y, const T* dy, T* dx, rb_u64 rows, int cols, int logm, float* sh) {
  const rb_rowmap<WARP> map;
  const int chunks = cols / V;
  for (rb_u64 row = map.row0; row < rows; row += map.rstride) {
    const rb_u64 base = row * (rb_u64)cols;
    float yv[N][V], gv[N][V];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
        rb_ldv<T, V>(y, base + (rb_u64)c * V, yv[i]);
        rb_ldv<T, V>(dy, base + (rb_u64)c * V, gv[i]);
#pragma unroll
        for (int j = 0; j < V; ++j) s += logm ? gv[i][j] : gv[i][j] * yv[i][j];
      }
    }
    s = rb_sum<WARP>(s, sh);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
#pragma unroll
        for (int j = 0; j < V; ++j)
          gv[i][j] = logm ? gv[i][j] - expf(yv[i][j]) * s : yv[i][j] * (gv[i][j] - s);
        rb_stv<T, V>(dx, base + (rb_u64)c * V, gv[i]);
      }
    }
  }
}

// Backward: dx = rs * (g - mean(g) - xhat * mean(g * xhat)) with g = dy * w (rms: without
// the mean(g) term); dw/db column sums accumulate per warp/block into part[slot][2][cols].
// g is rounded once (__fmul_rn): a set of one value then gets exactly 0, not the product's
// rounding error that an fma contracted into `g - mean(g)` would leave.
template <typename T, int V, int N, bool WARP>
RB_DEVICE void rb_rownorm_bwd_rows(const T* x, const T* w, const T* dy, T* dx, float* part,
                                   rb_u64 rows, int cols, float eps, int rms, float* sh) {
  const rb_rowmap<WARP> map;
  const int chunks = cols / V;
  const float inv_n = 1.0f / (float)cols;
  float aw[N][V], ab[N][V];
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int j = 0; j < V; ++j) { aw[i][j] = 0.0f; ab[i][j] = 0.0f; }
  for (rb_u64 row = map.row0; row < rows; row += map.rstride) {
    const rb_u64 base = row * (rb_u64)cols;
    float xv[N][V], gv[N][V];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
        rb_ldv<T, V>(x, base + (rb_u64)c * V, xv[i]);
        rb_ldv<T, V>(dy, base + (rb_u64)c * V, gv[i]);
#pragma unroll
        for (int j = 0; j < V; ++j) s += xv[i][j];
      }
    }
    float mu = 0.0f;
    if (!rms) mu = rb_sum<WARP>(s, sh) * inv_n;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (i * map.nt + map.t < chunks) {
#pragma unroll
        for (int j = 0; j < V; ++j) { const float d = xv[i][j] - mu; q += d * d; }
      }
    }
    const float rs = 1.0f / sqrtf(rb_sum<WARP>(q, sh) * inv_n + eps);
    float sg = 0.0f, sgx = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
        float wv[V];
        if (w) rb_ldv<T, V>(w, (rb_u64)c * V, wv);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          const float xh = (xv[i][j] - mu) * rs;
          aw[i][j] += gv[i][j] * xh;
          ab[i][j] += gv[i][j];
          const float g = w ? __fmul_rn(gv[i][j], wv[j]) : gv[i][j];
          xv[i][j] = xh;
          gv[i][j] = g;
          sg += g;
          sgx += g * xh;
        }
      }
    }
    if (WARP) {
      sg = rb_warp_allsum(sg);
      sgx = rb_warp_allsum(sgx);
    } else {
      rb_block_sum2(&sg, &sgx, sh);
    }
    const float mg = rms ? 0.0f : sg * inv_n, mgx = sgx * inv_n;
    if (dx) {
#pragma unroll
      for (int i = 0; i < N; ++i) {
        const int c = i * map.nt + map.t;
        if (c < chunks) {
#pragma unroll
          for (int j = 0; j < V; ++j) xv[i][j] = rs * (gv[i][j] - mg - xv[i][j] * mgx);
          rb_stv<T, V>(dx, base + (rb_u64)c * V, xv[i]);
        }
      }
    }
  }
  if (part) {
    float* pw = part + map.slot * 2 * (rb_u64)cols;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
#pragma unroll
        for (int j = 0; j < V; ++j) {
          pw[c * V + j] = aw[i][j];
          pw[cols + c * V + j] = ab[i][j];
        }
      }
    }
  }
}

// The register-row kernels, one per (dtype, V, N, warp-or-block).
#define RB_ROWS_KERNELS(SUF, T, V, N, WARP)                                                       \
  RB_KERNEL void rb_softmax_rows_##SUF(const T* x, T* y, rb_u64 rows, int cols, int logm) { rb_pdl_enter();      \
    __shared__ float sh[64];                                                                      \
    rb_softmax_rows<T, V, N, WARP>(x, y, rows, cols, logm, sh);                                   \
  }                                                                                               \
  RB_KERNEL void rb_softmax_bwd_rows_##SUF(const T* y, const T* dy, T* dx, rb_u64 rows, int cols, \
                                           int logm) { rb_pdl_enter();                                            \
    __shared__ float sh[64];                                                                      \
    rb_softmax_bwd_rows<T, V, N, WARP>(y, dy, dx, rows, cols, logm, sh);                          \
  }                                                                                               \
  RB_KERNEL void rb_rownorm_rows_##SUF(const T* x, const T* w, const T* b, T* y, float* mean,     \
                                       float* rstd, rb_u64 rows, int cols, float eps, int rms) { rb_pdl_enter();  \
    __shared__ float sh[64];                                                                      \
    rb_rownorm_rows<T, V, N, WARP, false>(x, w, b, y, mean, rstd, rows, cols, eps, rms, sh);      \
  }                                                                                               \
  RB_KERNEL void rb_rownorm_pre_rows_##SUF(const T* x, const T* w, const T* b, T* y, float* mean, \
                                           float* rstd, rb_u64 rows, int cols, float eps,         \
                                           int rms) { rb_pdl_enter();                                             \
    __shared__ float sh[64];                                                                      \
    rb_rownorm_rows<T, V, N, WARP, true>(x, w, b, y, mean, rstd, rows, cols, eps, rms, sh);       \
  }                                                                                               \
  RB_KERNEL void rb_rownorm_bwd_rows_##SUF(const T* x, const T* w, const T* dy, T* dx,           \
                                           float* part, rb_u64 rows, int cols, float eps,         \
                                           int rms) { rb_pdl_enter();                                             \
    __shared__ float sh[64];                                                                      \
    rb_rownorm_bwd_rows<T, V, N, WARP>(x, w, dy, dx, part, rows, cols, eps, rms, sh);             \
  }

#define RB_ROWS_NS(TS, T, V)                      \
  RB_ROWS_KERNELS(TS##_v##V##_n1_w, T, V, 1, true)  \
  RB_ROWS_KERNELS(TS##_v##V##_n2_w, T, V, 2, true)  \
  RB_ROWS_KERNELS(TS##_v##V##_n4_w, T, V, 4, true)  \
  RB_ROWS_KERNELS(TS##_v##V##_n1_b, T, V, 1, false) \
  RB_ROWS_KERNELS(TS##_v##V##_n2_b, T, V, 2, false) \
  RB_ROWS_KERNELS(TS##_v##V##_n4_b, T, V, 4, false) \
  RB_ROWS_KERNELS(TS##_v##V##_n8_b, T, V, 8, false)

RB_ROWS_NS(f32, float, 1)
RB_ROWS_NS(f32, float, 4)
RB_ROWS_NS(f16, rb_f16, 1)
RB_ROWS_NS(f16, rb_f16, 4)
RB_ROWS_NS(bf16, rb_bf16, 1)
RB_ROWS_NS(bf16, rb_bf16, 4)

// ---- column sums of per-slot partials: out[j] = sum_s part[s][half][j] ---------------------
// Block (32, 8): 32 columns, 8 slot lanes; grid.x = ceil(cols / 32).
template <typename T>
RB_DEVICE void rb_colsum_parts(const float* part, rb_u64 slots, rb_u64 cols, T* dw, T* db) {
  __shared__ float sw[8][33], sb[8][33];
  const rb_u64 j = (rb_u64)blockIdx.x * 32 + threadIdx.x;
  float aw = 0.0f, ab = 0.0f;
  if (j < cols) {
    for (rb_u64 s = threadIdx.y; s < slots; s += 8) {
      aw += part[s * 2 * cols + j];
      ab += part[s * 2 * cols + cols + j];
    }
  }
  sw[threadIdx.y][threadIdx.x] = aw;
  sb[threadIdx.y][threadIdx.x] = ab;
  __syncthreads();
  if (threadIdx.y == 0 && j < cols) {
    for (int k = 1; k < 8; ++k) { aw += sw[k][threadIdx.x]; ab += sb[k][threadIdx.x]; }
    if (dw) rb_from_f32(dw + j, aw);
    if (db) rb_from_f32(db + j, ab);
  }
}

// ---- softmax over long rows (inner == 1): online max/sum pass, then a write pass ----------
template <typename T>
RB_DEVICE void rb_softmax_loop(const T* x, T* y, rb_u64 rows, rb_u64 cols, int logm) {
  __shared__ float sh[64];
  for (rb_u64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    T* yr = y + row * cols;
    float m = RB_NEG_INF, s = 0.0f;
    for (rb_u64 k = threadIdx.x; k < cols; k += blockDim.x) {
      const float v = rb_to_f32(xr[k]);
      if (v > m) { s = (m == RB_NEG_INF ? 0.0f : s * expf(m - v)) + 1.0f; m = v; }
      else if (v != RB_NEG_INF) s += expf(v - m);
    }
    const float bm = rb_block_max(m, sh);
    // An all -inf row: every value NaN, as exp(-inf - -inf) gives on the CPU.
    const float ts = m == RB_NEG_INF ? 0.0f : s * expf(m - bm);
    const float bs = rb_block_sum(ts, sh);
    const float off = bm + logf(bs), inv = 1.0f / bs;
    for (rb_u64 k = threadIdx.x; k < cols; k += blockDim.x) {
      const float v = rb_to_f32(xr[k]);
      rb_from_f32(yr + k, logm ? v - off : expf(v - bm) * inv);
    }
  }
}

// ---- softmax over a strided dim (inner > 1): one thread per (outer, inner) column ----------
template <typename T>
RB_DEVICE void rb_softmax_strided(const T* x, T* y, rb_u64 outer, rb_u64 dim, rb_u64 inner, int logm) {
  const rb_u64 ncol = outer * inner;
  for (rb_u64 c = rb_gid(); c < ncol; c += rb_gstride()) {
    const rb_u64 o = c / inner, i = c % inner;
    const rb_u64 base = o * dim * inner + i;
    float m = RB_NEG_INF, s = 0.0f;
    for (rb_u64 k = 0; k < dim; ++k) {
      const float v = rb_to_f32(x[base + k * inner]);
      if (v > m) { s = (m == RB_NEG_INF ? 0.0f : s * expf(m - v)) + 1.0f; m = v; }
      else if (v != RB_NEG_INF) s += expf(v - m);
    }
    const float off = m + logf(s), inv = 1.0f / s;
    for (rb_u64 k = 0; k < dim; ++k) {
      const float v = rb_to_f32(x[base + k * inner]);
      rb_from_f32(y + base + k * inner, logm ? v - off : expf(v - m) * inv);
    }
  }
}
template <typename T>
RB_DEVICE void rb_softmax_bwd_strided(const T* y, const T* dy, T* dx, rb_u64 outer, rb_u64 dim, rb_u64 inner, int logm) {
  const rb_u64 ncol = outer * inner;
  for (rb_u64 c = rb_gid(); c < ncol; c += rb_gstride()) {
    const rb_u64 o = c / inner, i = c % inner;
    const rb_u64 base = o * dim * inner + i;
    float s = 0.0f;
    for (rb_u64 k = 0; k < dim; ++k) {
      const float g = rb_to_f32(dy[base + k * inner]);
      s += logm ? g : g * rb_to_f32(y[base + k * inner]);
    }
    for (rb_u64 k = 0; k < dim; ++k) {
      const float g = rb_to_f32(dy[base + k * inner]), yv = rb_to_f32(y[base + k * inner]);
      rb_from_f32(dx + base + k * inner, logm ? g - expf(yv) * s : yv * (g - s));
    }
  }
}
template <typename T>
RB_DEVICE void rb_softmax_bwd_loop(const T* y, const T* dy, T* dx, rb_u64 rows, rb_u64 cols, int logm) {
  __shared__ float sh[64];
  for (rb_u64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const rb_u64 base = row * cols;
    float s = 0.0f;
    for (rb_u64 k = threadIdx.x; k < cols; k += blockDim.x) {
      const float g = rb_to_f32(dy[base + k]);
      s += logm ? g : g * rb_to_f32(y[base + k]);
    }
    s = rb_block_sum(s, sh);
    for (rb_u64 k = threadIdx.x; k < cols; k += blockDim.x) {
      const float g = rb_to_f32(dy[base + k]), yv = rb_to_f32(y[base + k]);
      rb_from_f32(dx + base + k, logm ? g - expf(yv) * s : yv * (g - s));
    }
  }
}

// ---- normalization of contiguous sets (group_norm; layer/rms norm of long rows) ------------
// Set s covers [s * len, (s + 1) * len); element k has channel (s % groups) * cpg + k / hw.
// One block per set: mean (skipped for rms), variance, then the write pass.
template <typename T>
RB_DEVICE void rb_set_stats(const T* xs, rb_u64 len, float eps, int rms, float* sh, float* mu_out, float* rs_out) {
  float mu = 0.0f;
  if (!rms) {
    float s = 0.0f;
    for (rb_u64 k = threadIdx.x; k < len; k += blockDim.x) s += rb_to_f32(xs[k]);
    mu = rb_block_sum(s, sh) / (float)len;
  }
  float q = 0.0f;
  for (rb_u64 k = threadIdx.x; k < len; k += blockDim.x) { const float d = rb_to_f32(xs[k]) - mu; q += d * d; }
  *mu_out = mu;
  *rs_out = 1.0f / sqrtf(rb_block_sum(q, sh) / (float)len + eps);
}
template <typename T>
RB_DEVICE void rb_setnorm(const T* x, const T* w, const T* b, T* y, float* mean, float* rstd, rb_u64 sets,
                          rb_u64 len, rb_u64 groups, rb_u64 cpg, rb_u64 hw, float eps, int rms) {
  __shared__ float sh[64];
  for (rb_u64 s = blockIdx.x; s < sets; s += gridDim.x) {
    const T* xs = x + s * len;
    T* ys = y + s * len;
    float mu, rs;
    rb_set_stats(xs, len, eps, rms, sh, &mu, &rs);
    const rb_u64 ch0 = (s % groups) * cpg;
    for (rb_u64 k = threadIdx.x; k < len; k += blockDim.x) {
      const rb_u64 ch = ch0 + k / hw;
      float o = (rb_to_f32(xs[k]) - mu) * rs;
      if (w) o *= rb_to_f32(w[ch]);
      if (b) o += rb_to_f32(b[ch]);
      rb_from_f32(ys + k, o);
    }
    if (threadIdx.x == 0) {
      if (mean) mean[s] = mu;
      if (rstd) rstd[s] = rs;
    }
  }
}

// group_norm backward: per set, the per-channel sums of dy and dy * xhat go to
// part[n][2][c] (the dw/db partials of sample n), then dx of the set.
template <typename T>
RB_DEVICE void rb_groupnorm_bwd(const T* x, const T* w, const T* dy, T* dx, float* part, rb_u64 sets,
                                rb_u64 len, rb_u64 groups, rb_u64 cpg, rb_u64 hw, rb_u64 c, float eps) {
  __shared__ float sh[64];
  for (rb_u64 s = blockIdx.x; s < sets; s += gridDim.x) {
    const rb_u64 base = s * len, ni = s / groups, ch0 = (s % groups) * cpg;
    float mu, rs;
    rb_set_stats(x + base, len, eps, 0, sh, &mu, &rs);
    float sg = 0.0f, sgx = 0.0f;
    for (rb_u64 cc = 0; cc < cpg; ++cc) {
      const rb_u64 cb = base + cc * hw;
      float a = 0.0f, bsum = 0.0f;
      for (rb_u64 k = threadIdx.x; k < hw; k += blockDim.x) {
        const float g = rb_to_f32(dy[cb + k]);
        a += g * (rb_to_f32(x[cb + k]) - mu) * rs;
        bsum += g;
      }
      rb_block_sum2(&a, &bsum, sh);
      const float wc = w ? rb_to_f32(w[ch0 + cc]) : 1.0f;
      sg += wc * bsum;
      sgx += wc * a;
      if (threadIdx.x == 0) {
        part[ni * 2 * c + ch0 + cc] = a;
        part[ni * 2 * c + c + ch0 + cc] = bsum;
      }
    }
    if (dx) {
      const float mg = sg / (float)len, mgx = sgx / (float)len;
      for (rb_u64 k = threadIdx.x; k < len; k += blockDim.x) {
        const float wc = w ? rb_to_f32(w[ch0 + k / hw]) : 1.0f;
        const float g = __fmul_rn(rb_to_f32(dy[base + k]), wc), xh = (rb_to_f32(x[base + k]) - mu) * rs;
        rb_from_f32(dx + base + k, rs * (g - mg - xh * mgx));
      }
    }
  }
}

// layer/rms norm backward of long rows: dx per row (one block per row), and the row
// statistics to stats[row] = (mean, rstd) for the column pass below.
template <typename T>
RB_DEVICE void rb_rownorm_bwd_loop(const T* x, const T* w, const T* dy, T* dx, float* stats, rb_u64 rows,
                                   rb_u64 cols, float eps, int rms) {
  __shared__ float sh[64];
  for (rb_u64 r = blockIdx.x; r < rows; r += gridDim.x) {
    const rb_u64 base = r * cols;
    float mu, rs;
    rb_set_stats(x + base, cols, eps, rms, sh, &mu, &rs);
    if (threadIdx.x == 0) { stats[2 * r] = mu; stats[2 * r + 1] = rs; }
    if (!dx) continue;
    float sg = 0.0f, sgx = 0.0f;
    for (rb_u64 k = threadIdx.x; k < cols; k += blockDim.x) {
      const float g = __fmul_rn(rb_to_f32(dy[base + k]), w ? rb_to_f32(w[k]) : 1.0f);
      sg += g;
      sgx += g * (rb_to_f32(x[base + k]) - mu) * rs;
    }
    rb_block_sum2(&sg, &sgx, sh);
    const float mg = rms ? 0.0f : sg / (float)cols, mgx = sgx / (float)cols;
    for (rb_u64 k = threadIdx.x; k < cols; k += blockDim.x) {
      const float g = __fmul_rn(rb_to_f32(dy[base + k]), w ? rb_to_f32(w[k]) : 1.0f);
      const float xh = (rb_to_f32(x[base + k]) - mu) * rs;
      rb_from_f32(dx + base + k, rs * (g - mg - xh * mgx));
    }
  }
}
// Column partials of dw = sum(dy * xhat), db = sum(dy) over the row chunk blockIdx.y:
// part[chunk][2][cols].
template <typename T>
RB_DEVICE void rb_rownorm_cols(const T* x, const T* dy, const float* stats, float* part, rb_u64 rows,
                               rb_u64 cols, rb_u64 rows_per_chunk) {
  const rb_u64 j = (rb_u64)blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  const rb_u64 r0 = (rb_u64)blockIdx.y * rows_per_chunk;
  const rb_u64 r1 = r0 + rows_per_chunk < rows ? r0 + rows_per_chunk : rows;
  float aw = 0.0f, ab = 0.0f;
  for (rb_u64 r = r0; r < r1; ++r) {
    const float g = rb_to_f32(dy[r * cols + j]);
    aw += g * (rb_to_f32(x[r * cols + j]) - stats[2 * r]) * stats[2 * r + 1];
    ab += g;
  }
  part[(rb_u64)blockIdx.y * 2 * cols + j] = aw;
  part[(rb_u64)blockIdx.y * 2 * cols + cols + j] = ab;
}

// ---- batch_norm: element k of a channel's n * hw elements ----------------------------------
RB_DEVICE rb_u64 rb_bn_index(rb_u64 k, rb_u64 hw, rb_u64 c, rb_u64 ch) { return ((k / hw) * c + ch) * hw + k % hw; }

// ---- batch_norm split over blocks: per (channel, slice) partial statistics, a per-channel
// combine, and elementwise passes over the whole tensor, one (sample, channel) plane a block.
// Calls f(i) for element offsets i of channel ch's flattened elements [k0, k1), a contiguous
// run of each plane at a time (no division per element).
template <typename F>
RB_DEVICE void rb_bn_slice(rb_u64 k0, rb_u64 k1, rb_u64 hw, rb_u64 c, rb_u64 ch, F f) {
  rb_u64 k = k0;
  while (k < k1) {
    const rb_u64 ni = k / hw, pend = (ni + 1) * hw, e = pend < k1 ? pend : k1;
    const rb_u64 base = (ni * c + ch) * hw - ni * hw;  // element k of the channel is x[base + k]
    for (rb_u64 j = k + threadIdx.x; j < e; j += blockDim.x) f(base + j);
    k = e;
  }
}
// Block b: channel b / splits, slice b % splits of the channel's n * hw elements;
// part[b] = (count, mean, M2) of the slice (two passes over it, the second from cache).
template <typename T>
RB_DEVICE void rb_bn_partial(const T* x, float* part, rb_u64 n, rb_u64 c, rb_u64 hw, rb_u64 splits) {
  __shared__ float sh[64];
  const rb_u64 ch = blockIdx.x / splits, sp = blockIdx.x % splits, len = n * hw;
  const rb_u64 per = (len + splits - 1) / splits;
  const rb_u64 k0 = sp * per < len ? sp * per : len, k1 = k0 + per < len ? k0 + per : len;
  const float cnt = (float)(k1 - k0);
  float s = 0.0f;
  rb_bn_slice(k0, k1, hw, c, ch, [&](rb_u64 i) { s += rb_to_f32(x[i]); });
  const float mu = cnt > 0.0f ? rb_block_sum(s, sh) / cnt : 0.0f;
  float q = 0.0f;
  rb_bn_slice(k0, k1, hw, c, ch, [&](rb_u64 i) {
    const float d = rb_to_f32(x[i]) - mu;
    q += d * d;
  });
  q = rb_block_sum(q, sh);
  if (threadIdx.x == 0) {
    part[3 * blockIdx.x] = cnt;
    part[3 * blockIdx.x + 1] = mu;
    part[3 * blockIdx.x + 2] = q;
  }
}
// One thread per channel: stats[2 ch] = mean, stats[2 ch + 1] = rstd, from the partials
// (training; Chan's combination; running stats and save_* updated) or the running stats.
template <typename T>
RB_DEVICE void rb_bn_finalize(const float* part, rb_u64 splits, rb_u64 c, T* rmean, T* rvar, float* stats, float* smean,
                              float* sinv, int training, float momentum, float eps) {
  const rb_u64 ch = rb_gid();
  if (ch >= c) return;
  float mu, rs;
  if (training) {
    float na = 0.0f, ma = 0.0f, m2 = 0.0f;
    for (rb_u64 s = 0; s < splits; ++s) {
      const float* p = part + 3 * (ch * splits + s);
      const float nb = p[0];
      if (nb == 0.0f) continue;
      const float nn = na + nb, d = p[1] - ma;
      ma += d * (nb / nn);
      m2 += p[2] + d * d * (na * nb / nn);
      na = nn;
    }
    const float var = m2 / na;
    mu = ma;
    rs = 1.0f / sqrtf(var + eps);
    if (rmean && rvar) {
      rb_from_f32(rmean + ch, (1.0f - momentum) * rb_to_f32(rmean[ch]) + momentum * mu);
      rb_from_f32(rvar + ch, (1.0f - momentum) * rb_to_f32(rvar[ch]) + momentum * var * na / (na - 1.0f));
    }
    if (smean) smean[ch] = mu;
    if (sinv) sinv[ch] = rs;
  } else {
    mu = rb_to_f32(rmean[ch]);
    rs = 1.0f / sqrtf(rb_to_f32(rvar[ch]) + eps);
  }
  stats[2 * ch] = mu;
  stats[2 * ch + 1] = rs;
}
// y = (x - mean) * rstd * w + b, one plane of hw elements (V at a time) per block iteration.
template <typename T, int V>
RB_DEVICE void rb_bn_apply(const T* x, const T* w, const T* b, const float* stats, T* y, rb_u64 planes, rb_u64 c,
                           rb_u64 hw) {
  const rb_u64 nv = hw / V;
  for (rb_u64 p = blockIdx.x; p < planes; p += gridDim.x) {
    const rb_u64 ch = p % c;
    const float mu = stats[2 * ch], rs = stats[2 * ch + 1];
    const float wc = w ? rb_to_f32(w[ch]) : 1.0f, bc = b ? rb_to_f32(b[ch]) : 0.0f;
    for (rb_u64 j = threadIdx.x; j < nv; j += blockDim.x) {
      float v[V];
      rb_ldv<T, V>(x, p * hw + j * V, v);
#pragma unroll
      for (int t = 0; t < V; ++t) v[t] = (v[t] - mu) * rs * wc + bc;
      rb_stv<T, V>(y, p * hw + j * V, v);
    }
  }
}
// Backward partials per (channel, slice): part[b] = (sum dy * xhat, sum dy).
template <typename T>
RB_DEVICE void rb_bn_bwd_partial(const T* x, const T* dy, const float* stats, float* part, rb_u64 n, rb_u64 c,
                                 rb_u64 hw, rb_u64 splits) {
  __shared__ float sh[64];
  const rb_u64 ch = blockIdx.x / splits, sp = blockIdx.x % splits, len = n * hw;
  const rb_u64 per = (len + splits - 1) / splits;
  const rb_u64 k0 = sp * per < len ? sp * per : len, k1 = k0 + per < len ? k0 + per : len;
  const float mu = stats[2 * ch], rs = stats[2 * ch + 1];
  float a = 0.0f, sb = 0.0f;
  rb_bn_slice(k0, k1, hw, c, ch, [&](rb_u64 i) {
    const float g = rb_to_f32(dy[i]);
    a += g * (rb_to_f32(x[i]) - mu) * rs;
    sb += g;
  });
  rb_block_sum2(&a, &sb, sh);
  if (threadIdx.x == 0) {
    part[2 * blockIdx.x] = a;
    part[2 * blockIdx.x + 1] = sb;
  }
}
// One thread per channel: dw, db, and sums[2 ch] = (sum dy * xhat, sum dy).
template <typename T>
RB_DEVICE void rb_bn_bwd_finalize(const float* part, rb_u64 splits, rb_u64 c, float* sums, T* dw, T* db) {
  const rb_u64 ch = rb_gid();
  if (ch >= c) return;
  float a = 0.0f, sb = 0.0f;
  for (rb_u64 s = 0; s < splits; ++s) {
    a += part[2 * (ch * splits + s)];
    sb += part[2 * (ch * splits + s) + 1];
  }
  sums[2 * ch] = a;
  sums[2 * ch + 1] = sb;
  if (dw) rb_from_f32(dw + ch, a);
  if (db) rb_from_f32(db + ch, sb);
}
// dx per plane: training w * rs * (dy - mean(dy) - xhat * mean(dy * xhat)), eval dy * w * rs.
template <typename T>
RB_DEVICE void rb_bn_bwd_apply(const T* x, const T* w, const T* dy, const float* stats, const float* sums, T* dx,
                               rb_u64 planes, rb_u64 c, rb_u64 hw, float inv_len, int training) {
  for (rb_u64 p = blockIdx.x; p < planes; p += gridDim.x) {
    const rb_u64 ch = p % c;
    const float mu = stats[2 * ch], rs = stats[2 * ch + 1];
    const float wc = w ? rb_to_f32(w[ch]) : 1.0f;
    const float mg = sums[2 * ch + 1] * inv_len, mgx = sums[2 * ch] * inv_len;
    for (rb_u64 j = threadIdx.x; j < hw; j += blockDim.x) {
      const rb_u64 i = p * hw + j;
      const float g = rb_to_f32(dy[i]);
      if (training) {
        const float xh = (rb_to_f32(x[i]) - mu) * rs;
        rb_from_f32(dx + i, wc * rs * (g - mg - xh * mgx));
      } else {
        rb_from_f32(dx + i, g * wc * rs);
      }
    }
  }
}

#define RB_BN_KERNELS(TS, T)                                                                                      \
  RB_KERNEL void rb_bn_partial_##TS(const T* x, float* part, rb_u64 n, rb_u64 c, rb_u64 hw, rb_u64 splits) {      \
    rb_bn_partial(x, part, n, c, hw, splits);                                                                     \
  }                                                                                                               \
  RB_KERNEL void rb_bn_finalize_##TS(const float* part, rb_u64 splits, rb_u64 c, T* rmean, T* rvar, float* stats, \
                                     float* smean, float* sinv, int training, float momentum, float eps) {        \
    rb_bn_finalize(part, splits, c, rmean, rvar, stats, smean, sinv, training, momentum, eps);                    \
  }                                                                                                               \
  RB_KERNEL void rb_bn_apply_##TS##_v1(const T* x, const T* w, const T* b, const float* stats, T* y,              \
                                       rb_u64 planes, rb_u64 c, rb_u64 hw) {                                      \
    rb_bn_apply<T, 1>(x, w, b, stats, y, planes, c, hw);                                                          \
  }                                                                                                               \
  RB_KERNEL void rb_bn_apply_##TS##_v4(const T* x, const T* w, const T* b, const float* stats, T* y,              \
                                       rb_u64 planes, rb_u64 c, rb_u64 hw) {                                      \
    rb_bn_apply<T, 4>(x, w, b, stats, y, planes, c, hw);                                                          \
  }                                                                                                               \
  RB_KERNEL void rb_bn_bwd_partial_##TS(const T* x, const T* dy, const float* stats, float* part, rb_u64 n,       \
                                        rb_u64 c, rb_u64 hw, rb_u64 splits) {                                     \
    rb_bn_bwd_partial(x, dy, stats, part, n, c, hw, splits);                                                      \
  }                                                                                                               \
  RB_KERNEL void rb_bn_bwd_finalize_##TS(const float* part, rb_u64 splits, rb_u64 c, float* sums, T* dw, T* db) { \
    rb_bn_bwd_finalize(part, splits, c, sums, dw, db);                                                            \
  }                                                                                                               \
  RB_KERNEL void rb_bn_bwd_apply_##TS(const T* x, const T* w, const T* dy, const float* stats, const float* sums, \
                                      T* dx, rb_u64 planes, rb_u64 c, rb_u64 hw, float inv_len, int training) {   \
    rb_bn_bwd_apply(x, w, dy, stats, sums, dx, planes, c, hw, inv_len, training);                                 \
  }

RB_BN_KERNELS(f32, float)
RB_BN_KERNELS(f16, rb_f16)
RB_BN_KERNELS(bf16, rb_bf16)

// ---- channels-last batch_norm: x [rows = N * spatial, C], the channel the fastest index.
// Partials per (channel, slice of rows) in the channels-first kernels' layout, so
// rb_bn_finalize and rb_bn_bwd_finalize combine them unchanged. A partial block is 32
// channels (lanes: neighbouring channels of one row, so loads coalesce) by blockDim.x / 32
// row groups (RB_BN_NHWC_MAX_THREADS at most); block b takes channel chunk b / splits and
// row slice b % splits. Each thread keeps shifted sums of its rows (shift: its first value,
// so the variance does not cancel for data far from 0); the row groups combine in shared
// memory in a fixed order (Chan's formula), deterministic.
#define RB_BN_NHWC_MAX_THREADS 1024

RB_DEVICE void rb_bn_nhwc_rows(rb_u64 rows, rb_u64 splits, rb_u64 sp, rb_u64* r0, rb_u64* r1) {
  const rb_u64 per = (rows + splits - 1) / splits;
  *r0 = sp * per < rows ? sp * per : rows;
  *r1 = *r0 + per < rows ? *r0 + per : rows;
}

template <typename T>
RB_DEVICE void rb_bn_nhwc_partial(const T* x, float* part, rb_u64 rows, rb_u64 c, rb_u64 splits) {
  __shared__ float sn[RB_BN_NHWC_MAX_THREADS], sm[RB_BN_NHWC_MAX_THREADS], sq[RB_BN_NHWC_MAX_THREADS];
  const unsigned lane = threadIdx.x % 32, grp = threadIdx.x / 32, groups = blockDim.x / 32;
  const rb_u64 chunk = blockIdx.x / splits, sp = blockIdx.x % splits, ch = chunk * 32 + lane;
  rb_u64 r0, r1;
  rb_bn_nhwc_rows(rows, splits, sp, &r0, &r1);
  float cnt = 0.0f, mean = 0.0f, m2 = 0.0f;
  if (ch < c && r0 + grp < r1) {
    const float k = rb_to_f32(x[(r0 + grp) * c + ch]);
    float s1 = 0.0f, s2 = 0.0f;
    for (rb_u64 r = r0 + grp; r < r1; r += groups) {
      const float d = rb_to_f32(x[r * c + ch]) - k;
      s1 += d;
      s2 += d * d;
      cnt += 1.0f;
    }
    mean = k + s1 / cnt;
    m2 = s2 - s1 * (s1 / cnt);
    if (m2 < 0.0f) m2 = 0.0f;
  }
  sn[threadIdx.x] = cnt;
  sm[threadIdx.x] = mean;
  sq[threadIdx.x] = m2;
  __syncthreads();
  if (grp == 0 && ch < c) {
    float na = 0.0f, ma = 0.0f, qa = 0.0f;
    for (unsigned g = 0; g < groups; ++g) {
      const unsigned t = g * 32 + lane;
      const float nb = sn[t];
      if (nb == 0.0f) continue;
      const float nn = na + nb, d = sm[t] - ma;
      ma += d * (nb / nn);
      qa += sq[t] + d * d * (na * nb / nn);
      na = nn;
    }
    float* p = part + 3 * (ch * splits + sp);
    p[0] = na;
    p[1] = ma;
    p[2] = qa;
  }
}

// Backward partials per (channel, slice): part[2 (ch splits + slice)] = (sum dy * xhat,
// sum dy), the row groups summed in a fixed order.
template <typename T>
RB_DEVICE void rb_bn_nhwc_bwd_partial(const T* x, const T* dy, const float* stats, float* part, rb_u64 rows, rb_u64 c,
                                      rb_u64 splits) {
  __shared__ float sa[RB_BN_NHWC_MAX_THREADS], sb[RB_BN_NHWC_MAX_THREADS];
  const unsigned lane = threadIdx.x % 32, grp = threadIdx.x / 32, groups = blockDim.x / 32;
  const rb_u64 chunk = blockIdx.x / splits, sp = blockIdx.x % splits, ch = chunk * 32 + lane;
  rb_u64 r0, r1;
  rb_bn_nhwc_rows(rows, splits, sp, &r0, &r1);
  float a = 0.0f, b = 0.0f;
  if (ch < c) {
    const float mu = stats[2 * ch], rs = stats[2 * ch + 1];
    for (rb_u64 r = r0 + grp; r < r1; r += groups) {
      const float g = rb_to_f32(dy[r * c + ch]);
      a += g * (rb_to_f32(x[r * c + ch]) - mu) * rs;
      b += g;
    }
  }
  sa[threadIdx.x] = a;
  sb[threadIdx.x] = b;
  __syncthreads();
  if (grp == 0 && ch < c) {
    float ta = 0.0f, tb = 0.0f;
    for (unsigned g = 0; g < groups; ++g) {
      ta += sa[g * 32 + lane];
      tb += sb[g * 32 + lane];
    }
    part[2 * (ch * splits + sp)] = ta;
    part[2 * (ch * splits + sp) + 1] = tb;
  }
}

// The elementwise passes over [rows, C], V channels a thread per step (V divides C): the
// channel of each step follows by addition (no division per element).
template <typename T, int V>
RB_DEVICE void rb_bn_nhwc_apply(const T* x, const T* w, const T* b, const float* stats, T* y, rb_u64 total, rb_u64 c) {
  const rb_u64 nv = total / V, cv = c / V, stride = rb_gstride();
  const rb_u64 step = stride % cv;
  rb_u64 j = rb_gid(), cj = j % cv;
  for (; j < nv; j += stride) {
    float v[V];
    rb_ldv<T, V>(x, j * V, v);
#pragma unroll
    for (int t = 0; t < V; ++t) {
      const rb_u64 ch = cj * V + t;
      const float wc = w ? rb_to_f32(w[ch]) : 1.0f, bc = b ? rb_to_f32(b[ch]) : 0.0f;
      v[t] = (v[t] - stats[2 * ch]) * stats[2 * ch + 1] * wc + bc;
    }
    rb_stv<T, V>(y, j * V, v);
    cj += step;
    if (cj >= cv) cj -= cv;
  }
}

// dx: training w * rs * (dy - mean(dy) - xhat * mean(dy * xhat)), eval dy * w * rs.
template <typename T, int V>
RB_DEVICE void rb_bn_nhwc_bwd_apply(const T* x, const T* w, const T* dy, const float* stats, const float* sums, T* dx,
                                    rb_u64 total, rb_u64 c, float inv_len, int training) {
  const rb_u64 nv = total / V, cv = c / V, stride = rb_gstride();
  const rb_u64 step = stride % cv;
  rb_u64 j = rb_gid(), cj = j % cv;
  for (; j < nv; j += stride) {
    float g[V], xv[V];
    rb_ldv<T, V>(dy, j * V, g);
    if (training) rb_ldv<T, V>(x, j * V, xv);
#pragma unroll
    for (int t = 0; t < V; ++t) {
      const rb_u64 ch = cj * V + t;
      const float mu = stats[2 * ch], rs = stats[2 * ch + 1];
      const float wc = w ? rb_to_f32(w[ch]) : 1.0f;
      if (training) {
        const float mg = sums[2 * ch + 1] * inv_len, mgx = sums[2 * ch] * inv_len;
        const float xh = (xv[t] - mu) * rs;
        g[t] = wc * rs * (g[t] - mg - xh * mgx);
      } else {
        g[t] = g[t] * wc * rs;
      }
    }
    rb_stv<T, V>(dx, j * V, g);
    cj += step;
    if (cj >= cv) cj -= cv;
  }
}

#define RB_BN_NHWC_KERNELS(TS, T)                                                                                   \
  RB_KERNEL void rb_bn_nhwc_partial_##TS(const T* x, float* part, rb_u64 rows, rb_u64 c, rb_u64 splits) {          \
    rb_bn_nhwc_partial(x, part, rows, c, splits);                                                                   \
  }                                                                                                                 \
  RB_KERNEL void rb_bn_nhwc_bwd_partial_##TS(const T* x, const T* dy, const float* stats, float* part, rb_u64 rows, \
                                             rb_u64 c, rb_u64 splits) {                                             \
    rb_bn_nhwc_bwd_partial(x, dy, stats, part, rows, c, splits);                                                    \
  }                                                                                                                 \
  RB_KERNEL void rb_bn_nhwc_apply_##TS##_v1(const T* x, const T* w, const T* b, const float* stats, T* y,           \
                                            rb_u64 total, rb_u64 c) {                                               \
    rb_bn_nhwc_apply<T, 1>(x, w, b, stats, y, total, c);                                                            \
  }                                                                                                                 \
  RB_KERNEL void rb_bn_nhwc_apply_##TS##_v4(const T* x, const T* w, const T* b, const float* stats, T* y,           \
                                            rb_u64 total, rb_u64 c) {                                               \
    rb_bn_nhwc_apply<T, 4>(x, w, b, stats, y, total, c);                                                            \
  }                                                                                                                 \
  RB_KERNEL void rb_bn_nhwc_bwd_apply_##TS##_v1(const T* x, const T* w, const T* dy, const float* stats,            \
                                                const float* sums, T* dx, rb_u64 total, rb_u64 c, float inv_len,    \
                                                int training) {                                                     \
    rb_bn_nhwc_bwd_apply<T, 1>(x, w, dy, stats, sums, dx, total, c, inv_len, training);                             \
  }                                                                                                                 \
  RB_KERNEL void rb_bn_nhwc_bwd_apply_##TS##_v4(const T* x, const T* w, const T* dy, const float* stats,            \
                                                const float* sums, T* dx, rb_u64 total, rb_u64 c, float inv_len,    \
                                                int training) {                                                     \
    rb_bn_nhwc_bwd_apply<T, 4>(x, w, dy, stats, sums, dx, total, c, inv_len, training);                             \
  }

RB_BN_NHWC_KERNELS(f32, float)
RB_BN_NHWC_KERNELS(f16, rb_f16)
RB_BN_NHWC_KERNELS(bf16, rb_bf16)

#define RB_NORM_LOOP_KERNELS(TS, T)                                                                          \
  RB_KERNEL void rb_colsum_parts_##TS(const float* part, rb_u64 slots, rb_u64 cols, T* dw, T* db) {          \
    rb_colsum_parts(part, slots, cols, dw, db);                                                              \
  }                                                                                                          \
  RB_KERNEL void rb_softmax_loop_##TS(const T* x, T* y, rb_u64 rows, rb_u64 cols, int logm) {                \
    rb_softmax_loop(x, y, rows, cols, logm);                                                                 \
  }                                                                                                          \
  RB_KERNEL void rb_softmax_strided_##TS(const T* x, T* y, rb_u64 outer, rb_u64 dim, rb_u64 inner, int logm) { \
    rb_softmax_strided(x, y, outer, dim, inner, logm);                                                       \
  }                                                                                                          \
  RB_KERNEL void rb_softmax_bwd_loop_##TS(const T* y, const T* dy, T* dx, rb_u64 rows, rb_u64 cols, int logm) { \
    rb_softmax_bwd_loop(y, dy, dx, rows, cols, logm);                                                        \
  }                                                                                                          \
  RB_KERNEL void rb_softmax_bwd_strided_##TS(const T* y, const T* dy, T* dx, rb_u64 outer, rb_u64 dim,       \
                                             rb_u64 inner, int logm) {                                       \
    rb_softmax_bwd_strided(y, dy, dx, outer, dim, inner, logm);                                              \
  }                                                                                                          \
  RB_KERNEL void rb_setnorm_##TS(const T* x, const T* w, const T* b, T* y, float* mean, float* rstd,         \
                                 rb_u64 sets, rb_u64 len, rb_u64 groups, rb_u64 cpg, rb_u64 hw, float eps,   \
                                 int rms) {                                                                  \
    rb_setnorm(x, w, b, y, mean, rstd, sets, len, groups, cpg, hw, eps, rms);                                \
  }                                                                                                          \
  RB_KERNEL void rb_groupnorm_bwd_##TS(const T* x, const T* w, const T* dy, T* dx, float* part, rb_u64 sets, \
                                       rb_u64 len, rb_u64 groups, rb_u64 cpg, rb_u64 hw, rb_u64 c,           \
                                       float eps) {                                                          \
    rb_groupnorm_bwd(x, w, dy, dx, part, sets, len, groups, cpg, hw, c, eps);                                \
  }                                                                                                          \
  RB_KERNEL void rb_rownorm_bwd_loop_##TS(const T* x, const T* w, const T* dy, T* dx, float* stats,          \
                                          rb_u64 rows, rb_u64 cols, float eps, int rms) {                    \
    rb_rownorm_bwd_loop(x, w, dy, dx, stats, rows, cols, eps, rms);                                          \
  }                                                                                                          \
  RB_KERNEL void rb_rownorm_cols_##TS(const T* x, const T* dy, const float* stats, float* part, rb_u64 rows, \
                                      rb_u64 cols, rb_u64 rows_per_chunk) {                                  \
    rb_rownorm_cols(x, dy, stats, part, rows, cols, rows_per_chunk);                                         \
  }

RB_NORM_LOOP_KERNELS(f32, float)
RB_NORM_LOOP_KERNELS(f16, rb_f16)
RB_NORM_LOOP_KERNELS(bf16, rb_bf16)

// ---- f64 softmax / log_softmax and their backward: a block (256 threads) per (outer, inner)
// group, grid-stride over groups, double throughout with the float64 reference formulas of
// src/ops/nn.rs (softmax_ref: the max ignores NaN as fmax does, (x - m) - log(s)).
// y/dx may alias the inputs: each thread reads an element before writing it, and the
// reductions finish (block barriers) before any write.
RB_DEVICE double rb_sm_block_d(double v, int is_max, double* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (unsigned h = blockDim.x / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) {
      const double o = sh[threadIdx.x + h];
      sh[threadIdx.x] = is_max ? fmax(sh[threadIdx.x], o) : sh[threadIdx.x] + o;
    }
    __syncthreads();
  }
  const double r = sh[0];
  __syncthreads();
  return r;
}
RB_KERNEL void rb_softmax_d_f64(const double* x, double* y, rb_u64 outer, rb_u64 dim, rb_u64 inner, int logm) {
  __shared__ double sh[256];
  for (rb_u64 g = blockIdx.x; g < outer * inner; g += gridDim.x) {
    const rb_u64 o = g / inner, i = g % inner;
    const double* xp = x + o * dim * inner + i;
    double* yp = y + o * dim * inner + i;
    double m = -__longlong_as_double(0x7ff0000000000000ll);
    for (rb_u64 k = threadIdx.x; k < dim; k += blockDim.x) m = fmax(m, xp[k * inner]);
    m = rb_sm_block_d(m, 1, sh);
    double s = 0.0;
    for (rb_u64 k = threadIdx.x; k < dim; k += blockDim.x) s += exp(xp[k * inner] - m);
    s = rb_sm_block_d(s, 0, sh);
    const double ls = log(s);
    for (rb_u64 k = threadIdx.x; k < dim; k += blockDim.x) {
      const double v = xp[k * inner];
      yp[k * inner] = logm ? v - m - ls : exp(v - m) / s;
    }
  }
}
RB_KERNEL void rb_softmax_bwd_d_f64(const double* y, const double* dy, double* dx, rb_u64 outer, rb_u64 dim, rb_u64 inner, int logm) {
  __shared__ double sh[256];
  for (rb_u64 g = blockIdx.x; g < outer * inner; g += gridDim.x) {
    const rb_u64 o = g / inner, i = g % inner;
    const rb_u64 base = o * dim * inner + i;
    double s = 0.0;
    for (rb_u64 k = threadIdx.x; k < dim; k += blockDim.x) {
      const rb_u64 e = base + k * inner;
      s += logm ? dy[e] : dy[e] * y[e];
    }
    s = rb_sm_block_d(s, 0, sh);
    for (rb_u64 k = threadIdx.x; k < dim; k += blockDim.x) {
      const rb_u64 e = base + k * inner;
      const double yv = y[e], gv = dy[e];
      dx[e] = logm ? gv - exp(yv) * s : yv * (gv - s);
    }
  }
}
