// The register-row building blocks of kernels/norm.hip (softmax, layer_norm, rms_norm over
// rows held in registers), shared with kernels/blas.hip, whose decode product normalizes its
// result in its last block with the same arithmetic as rb_rownorm_pre_rows_* (equal bits).
// Included after common.h (the runtime compiler pastes both; see src/device/gpu/jit.rs).
#pragma once

#define RB_NEG_INF __int_as_float(0xff800000u)

// ---- reductions: every participating thread gets the result -----------------------------
RB_DEVICE float rb_warp_allsum(float v) {
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) v += rb_shfl_xor(v, d);
  return v;
}
RB_DEVICE float rb_warp_allmax(float v) {
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) v = fmaxf(v, rb_shfl_xor(v, d));
  return v;
}
// Block-wide; `sh` holds at least 2 * 32 floats; blockDim.x is a multiple of the warp size.
RB_DEVICE float rb_block_sum(float v, float* sh) {
  v = rb_warp_allsum(v);
  const int lane = threadIdx.x % RB_WARP_SIZE, wid = threadIdx.x / RB_WARP_SIZE;
  const int nw = blockDim.x / RB_WARP_SIZE;
  __syncthreads();
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  return rb_warp_allsum(lane < nw ? sh[lane] : 0.0f);
}
RB_DEVICE float rb_block_max(float v, float* sh) {
  v = rb_warp_allmax(v);
  const int lane = threadIdx.x % RB_WARP_SIZE, wid = threadIdx.x / RB_WARP_SIZE;
  const int nw = blockDim.x / RB_WARP_SIZE;
  __syncthreads();
  if (lane == 0) sh[wid] = v;
  __syncthreads();
  return rb_warp_allmax(lane < nw ? sh[lane] : RB_NEG_INF);
}
RB_DEVICE void rb_block_sum2(float* a, float* b, float* sh) {
  float x = rb_warp_allsum(*a), y = rb_warp_allsum(*b);
  const int lane = threadIdx.x % RB_WARP_SIZE, wid = threadIdx.x / RB_WARP_SIZE;
  const int nw = blockDim.x / RB_WARP_SIZE;
  __syncthreads();
  if (lane == 0) { sh[wid] = x; sh[32 + wid] = y; }
  __syncthreads();
  *a = rb_warp_allsum(lane < nw ? sh[lane] : 0.0f);
  *b = rb_warp_allsum(lane < nw ? sh[32 + lane] : 0.0f);
}
template <bool WARP> RB_DEVICE float rb_sum(float v, float* sh) { return WARP ? rb_warp_allsum(v) : rb_block_sum(v, sh); }
template <bool WARP> RB_DEVICE float rb_max(float v, float* sh) { return WARP ? rb_warp_allmax(v) : rb_block_max(v, sh); }

// ---- V consecutive elements as floats ----------------------------------------------------
template <typename T, int V> struct alignas(sizeof(T) * V) rb_vec { T v[V]; };
// The row kernels' loads and stores only feed and take arithmetic (a NaN anywhere in a row
// makes the row's results NaN whatever its payload): the one-instruction f16 conversions.
template <typename T, int V> RB_DEVICE void rb_ldv(const T* p, rb_u64 i, float* out) {
  rb_vec<T, V> a = *(const rb_vec<T, V>*)(p + i);
#pragma unroll
  for (int j = 0; j < V; ++j) out[j] = rb_to_f32_arith(a.v[j]);
}
template <typename T, int V> RB_DEVICE void rb_stv(T* p, rb_u64 i, const float* in) {
  rb_vec<T, V> a;
#pragma unroll
  for (int j = 0; j < V; ++j) rb_from_f32_arith(&a.v[j], in[j]);
  *(rb_vec<T, V>*)(p + i) = a;
}

// Where a thread's rows and chunks are: WARP -> one row per warp, else one row per block.
template <bool WARP> struct rb_rowmap {
  int t, nt;
  rb_u64 row0, rstride, slot;
  // one: this block alone takes row 0 (block rows; rb_gemv_norm_tail's last block).
  RB_DEVICE rb_rowmap(bool one = false) {
    if (WARP) {
      const int wpb = blockDim.x / RB_WARP_SIZE;
      t = threadIdx.x % RB_WARP_SIZE;
      nt = RB_WARP_SIZE;
      slot = (rb_u64)blockIdx.x * wpb + threadIdx.x / RB_WARP_SIZE;
      row0 = slot;
      rstride = (rb_u64)gridDim.x * wpb;
    } else {
      t = threadIdx.x;
      nt = blockDim.x;
      slot = blockIdx.x;
      row0 = blockIdx.x;
      rstride = gridDim.x;
    }
    if (one) row0 = 0, rstride = 1, slot = 0;
  }
};

// ---- layer_norm (rms = 0) and rms_norm (rms = 1) over rows held in registers --------------
template <typename T, int V, int N, bool WARP, bool EARLY>
RB_DEVICE void rb_rownorm_rows(const T* x, const T* w, const T* b, T* y, float* mean, float* rstd,
                               rb_u64 rows, int cols, float eps, int rms, float* sh,
                               bool one = false) {
  const rb_rowmap<WARP> map(one);
  const int chunks = cols / V;
  const float inv_n = 1.0f / (float)cols;
  for (rb_u64 row = map.row0; row < rows; row += map.rstride) {
    const rb_u64 base = row * (rb_u64)cols;
    // PRE (the rb_rownorm_pre_rows_* entries, which the host takes for a few rows): the
    // weight and bias load beside the row, before the reductions whose latency they would
    // otherwise follow (a one-row rms_norm of a decode step is that latency); only for
    // plans of at most 256 threads (V = 4, N <= 4): the registers of larger blocks would
    // not fit (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES at 544 threads, N = 8). Many rows keep
    // the late loads: the extra registers cost occupancy (layer_norm f16 16384x4096 on the
    // H100: 222 us with them).
    constexpr bool PRE = EARLY && V == 4 && N <= 4;
    float v[N][V], wv[N][V], bv[N][V];
    float s = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
        rb_ldv<T, V>(x, base + (rb_u64)c * V, v[i]);
        if (PRE && w) rb_ldv<T, V>(w, (rb_u64)c * V, wv[i]);
        if (PRE && b) rb_ldv<T, V>(b, (rb_u64)c * V, bv[i]);
#pragma unroll
        for (int j = 0; j < V; ++j) s += v[i][j];
      }
    }
    float mu = 0.0f;
    if (!rms) mu = rb_sum<WARP>(s, sh) * inv_n;
    float q = 0.0f;
#pragma unroll
    for (int i = 0; i < N; ++i) {
      if (i * map.nt + map.t < chunks) {
#pragma unroll
        for (int j = 0; j < V; ++j) { const float d = v[i][j] - mu; q += d * d; }
      }
    }
    const float rs = 1.0f / sqrtf(rb_sum<WARP>(q, sh) * inv_n + eps);
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const int c = i * map.nt + map.t;
      if (c < chunks) {
        if (!PRE && w) rb_ldv<T, V>(w, (rb_u64)c * V, wv[i]);
        if (!PRE && b) rb_ldv<T, V>(b, (rb_u64)c * V, bv[i]);
#pragma unroll
        for (int j = 0; j < V; ++j) {
          float o = (v[i][j] - mu) * rs;
          if (w) o *= wv[i][j];
          if (b) o += bv[i][j];
          v[i][j] = o;
        }
        rb_stv<T, V>(y, base + (rb_u64)c * V, v[i]);
      }
    }
    if (map.t == 0) {
      if (mean) mean[row] = mu;
      if (rstd) rstd[row] = rs;
    }
  }
}
