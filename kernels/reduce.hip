// Reductions over the middle dimension of a contiguous [outer, r, inner] tensor, argmax, and
// the reduction backwards, for f32, f16, bf16 and f64 (f64 results are stored unrounded). Semantics match the CPU device (src/device/cpu/reduce.rs):
// every op accumulates in f64 (sums and products exactly as the contract says; max/min are
// exact in any precision), max/min propagate NaN, the mean of nothing is NaN.
// Op codes: 0 sum, 1 mean, 2 max, 3 min, 4 prod. All indexing is 64-bit.
//
// Kernel shapes (chosen by src/device/gpu/reduce.rs):
// * inner == 1, long rows:   rb_reduce_rows_*  (a block per row, or per chunk of a row when
//                            there are few rows: partials in f64, then rb_reduce_combine_*),
//                            16-byte vector loads after a scalar head that aligns the row.
// * inner == 1, short rows:  rb_reduce_rows_warp_* (a warp per row).
// * inner > 1:               rb_reduce_cols_*  (32 columns x 8 row-lanes per block, coalesced;
//                            the r axis split over grid.z when there are few blocks).
// * outer == inner == 1:     rb_reduce_full_* (one launch: chunks per block, the last block
//                            to finish combines the f64 partials).
#include "common.h"

struct alignas(16) rb_v16 { rb_u32 a, b, c, d; };

RB_DEVICE double rb_ld(float v) { return (double)v; }
RB_DEVICE double rb_ld(rb_f16 v) { return (double)rb_to_f32(v); }
RB_DEVICE double rb_ld(rb_bf16 v) { return (double)rb_to_f32(v); }
RB_DEVICE double rb_ld(double v) { return v; }
// Stores an f64 result: rounded once to f32 and then to the half format (the CPU's rule);
// f64 tensors keep it as is.
RB_DEVICE void rb_red_put(float* p, double v) { *p = (float)v; }
RB_DEVICE void rb_red_put(rb_f16* p, double v) { rb_from_f32(p, (float)v); }
RB_DEVICE void rb_red_put(rb_bf16* p, double v) { rb_from_f32(p, (float)v); }
RB_DEVICE void rb_red_put(double* p, double v) { *p = v; }
// argmax compares in the element's own precision (f32 for the half formats, f64 for f64).
RB_DEVICE float rb_am_ld(float v) { return v; }
RB_DEVICE float rb_am_ld(rb_f16 v) { return rb_to_f32(v); }
RB_DEVICE float rb_am_ld(rb_bf16 v) { return rb_to_f32(v); }
RB_DEVICE double rb_am_ld(double v) { return v; }

RB_DEVICE double rb_red_init(int op) {
  switch (op) {
    case 2: return -__longlong_as_double(0x7ff0000000000000ll);  // -inf
    case 3: return __longlong_as_double(0x7ff0000000000000ll);   // +inf
    case 4: return 1.0;
    default: return 0.0;
  }
}

RB_DEVICE double rb_red_combine(int op, double a, double v) {
  switch (op) {
    case 2: return (v != v || v > a) ? v : a;  // a NaN accumulator stays NaN
    case 3: return (v != v || v < a) ? v : a;
    case 4: return a * v;
    default: return a + v;
  }
}

RB_DEVICE double rb_red_finish(int op, double v, rb_u64 r) {
  if (op == 1) return v / (double)r;  // 0 / 0 is NaN: the mean of nothing
  return v;
}

// Combine over a whole warp with a butterfly: every lane gets the result.
RB_DEVICE double rb_warp_all(int op, double v) {
  for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) v = rb_red_combine(op, v, rb_shfl_xor(v, d));
  return v;
}

// Combine over the block (blockDim.x a multiple of the warp size, at most 32 warps); the
// result is valid in thread 0. Every thread of the block must call it.
RB_DEVICE double rb_block_all(int op, double v, double* sh) {
  const int lane = threadIdx.x % RB_WARP_SIZE, w = threadIdx.x / RB_WARP_SIZE;
  const int nw = blockDim.x / RB_WARP_SIZE;
  v = rb_warp_all(op, v);
  if (lane == 0) sh[w] = v;
  __syncthreads();
  if (w == 0) v = rb_warp_all(op, lane < nw ? sh[lane] : rb_red_init(op));
  __syncthreads();
  return v;
}

// Thread `tid` of `nth` folds its share of p[0, n) into acc: a scalar head up to the first
// 16-byte boundary, 16-byte vectors (four in flight), a scalar tail.
template <typename T>
RB_DEVICE double rb_accum(int op, const T* p, rb_u64 n, rb_u64 tid, rb_u64 nth, double acc) {
  const int E = 16 / sizeof(T);
  rb_u64 mis = ((rb_u64)p & 15) / sizeof(T);
  rb_u64 head = mis ? (rb_u64)E - mis : 0;
  if (head > n) head = n;
  if (tid < head) acc = rb_red_combine(op, acc, rb_ld(p[tid]));
  const rb_v16* v = (const rb_v16*)(p + head);
  const rb_u64 nv = (n - head) / E;
  double acc2 = rb_red_init(op);
  rb_u64 i = tid;
  for (; i + 3 * nth < nv; i += 4 * nth) {
    rb_v16 q0 = v[i], q1 = v[i + nth], q2 = v[i + 2 * nth], q3 = v[i + 3 * nth];
    const T* e0 = (const T*)&q0;
    const T* e1 = (const T*)&q1;
    const T* e2 = (const T*)&q2;
    const T* e3 = (const T*)&q3;
#pragma unroll
    for (int j = 0; j < E; ++j) {
      acc = rb_red_combine(op, acc, rb_ld(e0[j]));
      acc2 = rb_red_combine(op, acc2, rb_ld(e1[j]));
    }
#pragma unroll
    for (int j = 0; j < E; ++j) {
      acc = rb_red_combine(op, acc, rb_ld(e2[j]));
      acc2 = rb_red_combine(op, acc2, rb_ld(e3[j]));
    }
  }
  for (; i < nv; i += nth) {
    rb_v16 q0 = v[i];
    const T* e0 = (const T*)&q0;
#pragma unroll
    for (int j = 0; j < E; ++j) acc = rb_red_combine(op, acc, rb_ld(e0[j]));
  }
  for (rb_u64 k = head + nv * E + tid; k < n; k += nth) acc = rb_red_combine(op, acc, rb_ld(p[k]));
  return rb_red_combine(op, acc, acc2);
}

// A block per (row chunk, row). splits == 1: y[o] is written; otherwise the f64 partial of
// chunk s goes to part[s * outer + o] and rb_reduce_combine finishes.
template <typename T>
RB_DEVICE void rb_reduce_rows_t(int op, const T* x, T* y, double* part, rb_u64 outer, rb_u64 r,
                                rb_u64 splits, rb_u64 chunk) {
  __shared__ double sh[32];
  const rb_u64 s = blockIdx.x;
  const rb_u64 b = s * chunk;
  const rb_u64 e = (b + chunk < r) ? b + chunk : r;
  for (rb_u64 o = blockIdx.y; o < outer; o += gridDim.y) {
    double acc = rb_red_init(op);
    if (b < e) acc = rb_accum(op, x + o * r + b, e - b, threadIdx.x, blockDim.x, acc);
    acc = rb_block_all(op, acc, sh);
    if (threadIdx.x == 0) {
      if (splits == 1) rb_red_put(y + o, rb_red_finish(op, acc, r));
      else part[s * outer + o] = acc;
    }
  }
}

// The full reduction in one launch: block b folds its chunk of x[0, n) into part[b]; the
// last block to finish (a self-resetting ticket: atomicInc wraps to 0 after gridDim.x - 1,
// so *ticket is 0 again when the kernel ends) combines the partials and writes y[0].
// `ticket` belongs to one stream (kernels on a stream run in order).
template <typename T>
RB_DEVICE void rb_reduce_full_t(int op, const T* x, T* y, double* part, rb_u32* ticket, rb_u64 n,
                                rb_u64 chunk) {
  __shared__ double sh[32];
  __shared__ int last;
  const rb_u64 b = (rb_u64)blockIdx.x * chunk;
  const rb_u64 e = (b + chunk < n) ? b + chunk : n;
  double acc = rb_red_init(op);
  if (b < e) acc = rb_accum(op, x + b, e - b, threadIdx.x, blockDim.x, acc);
  acc = rb_block_all(op, acc, sh);
  if (threadIdx.x == 0) {
    ((volatile double*)part)[blockIdx.x] = acc;
    __threadfence();
    const rb_u32 t = atomicInc(ticket, gridDim.x - 1);
    last = (t == gridDim.x - 1);
  }
  __syncthreads();
  if (!last) return;
  __threadfence();
  acc = rb_red_init(op);
  for (rb_u64 i = threadIdx.x; i < gridDim.x; i += blockDim.x)
    acc = rb_red_combine(op, acc, ((volatile double*)part)[i]);
  acc = rb_block_all(op, acc, sh);
  if (threadIdx.x == 0) rb_red_put(y, rb_red_finish(op, acc, n));
}

// A warp per row (short rows).
template <typename T>
RB_DEVICE void rb_reduce_rows_warp_t(int op, const T* x, T* y, rb_u64 outer, rb_u64 r) {
  const rb_u64 lane = threadIdx.x % RB_WARP_SIZE;
  const rb_u64 wpb = blockDim.x / RB_WARP_SIZE;
  const rb_u64 nwarps = (rb_u64)gridDim.x * wpb;
  for (rb_u64 o = (rb_u64)blockIdx.x * wpb + threadIdx.x / RB_WARP_SIZE; o < outer; o += nwarps) {
    double acc = rb_accum(op, x + o * r, r, lane, RB_WARP_SIZE, rb_red_init(op));
    acc = rb_warp_all(op, acc);
    if (lane == 0) rb_red_put(y + o, rb_red_finish(op, acc, r));
  }
}

// Blocks of 32 columns x 8 row-lanes; grid (column tiles, outer, splits of r). splits == 1:
// y is written; otherwise part[z * outer * inner + o * inner + c] and a combine pass.
template <typename T>
RB_DEVICE void rb_reduce_cols_t(int op, const T* x, T* y, double* part, rb_u64 outer, rb_u64 r,
                                rb_u64 inner, rb_u64 splits, rb_u64 chunk) {
  __shared__ double sh[8][33];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  const rb_u64 c = (rb_u64)blockIdx.x * 32 + tx;
  const rb_u64 z = blockIdx.z;
  const rb_u64 b = z * chunk;
  const rb_u64 e = (b + chunk < r) ? b + chunk : r;
  for (rb_u64 o = blockIdx.y; o < outer; o += gridDim.y) {
    double acc = rb_red_init(op);
    if (c < inner) {
      const T* p = x + o * r * inner + c;
      rb_u64 k = b + ty;
      for (; k + 8 < e; k += 16) {
        double v0 = rb_ld(p[k * inner]), v1 = rb_ld(p[(k + 8) * inner]);
        acc = rb_red_combine(op, rb_red_combine(op, acc, v0), v1);
      }
      if (k < e) acc = rb_red_combine(op, acc, rb_ld(p[k * inner]));
    }
    sh[ty][tx] = acc;
    __syncthreads();
    if (ty == 0 && c < inner) {
      for (int j = 1; j < 8; ++j) acc = rb_red_combine(op, acc, sh[j][tx]);
      if (splits == 1) rb_red_put(y + o * inner + c, rb_red_finish(op, acc, r));
      else part[z * outer * inner + o * inner + c] = acc;
    }
    __syncthreads();
  }
}

// y[g] = finish(combine over z < nz of part[z * ng + g]): a warp per output.
template <typename T>
RB_DEVICE void rb_reduce_combine_t(int op, const double* part, T* y, rb_u64 ng, rb_u64 nz, rb_u64 r) {
  const rb_u64 lane = threadIdx.x % RB_WARP_SIZE;
  const rb_u64 wpb = blockDim.x / RB_WARP_SIZE;
  const rb_u64 nwarps = (rb_u64)gridDim.x * wpb;
  for (rb_u64 g = (rb_u64)blockIdx.x * wpb + threadIdx.x / RB_WARP_SIZE; g < ng; g += nwarps) {
    double acc = rb_red_init(op);
    for (rb_u64 z = lane; z < nz; z += RB_WARP_SIZE) acc = rb_red_combine(op, acc, part[z * ng + g]);
    acc = rb_warp_all(op, acc);
    if (lane == 0) rb_red_put(y + g, rb_red_finish(op, acc, r));
  }
}

// ---- argmax: a warp per group, (value, index) pairs; the first NaN, else the first max ----
template <typename V>
RB_DEVICE bool rb_am_beats(V v, rb_i64 i, V bv, rb_i64 bi) {
  if (i < 0) return false;
  if (bi < 0) return true;
  if (bv != bv) return (v != v) && i < bi;
  if (v != v) return true;
  if (v > bv) return true;
  return v == bv && i < bi;
}

template <typename T>
RB_DEVICE void rb_argmax_t(const T* x, rb_i64* y, rb_u64 outer, rb_u64 r, rb_u64 inner) {
  const rb_u64 lane = threadIdx.x % RB_WARP_SIZE;
  const rb_u64 wpb = blockDim.x / RB_WARP_SIZE;
  const rb_u64 nwarps = (rb_u64)gridDim.x * wpb;
  const rb_u64 ng = outer * inner;
  for (rb_u64 g = (rb_u64)blockIdx.x * wpb + threadIdx.x / RB_WARP_SIZE; g < ng; g += nwarps) {
    const rb_u64 o = g / inner, i = g % inner;
    const T* p = x + o * r * inner + i;
    decltype(rb_am_ld(*p)) bv = 0;
    rb_i64 bi = -1;
    for (rb_u64 k = lane; k < r; k += RB_WARP_SIZE) {
      const auto v = rb_am_ld(p[k * inner]);
      if (rb_am_beats(v, (rb_i64)k, bv, bi)) { bv = v; bi = (rb_i64)k; }
    }
    for (int d = RB_WARP_SIZE / 2; d > 0; d >>= 1) {
      const auto ov = rb_shfl_xor(bv, d);
      rb_i64 oi = rb_shfl_xor(bi, d);
      if (rb_am_beats(ov, oi, bv, bi)) { bv = ov; bi = oi; }
    }
    if (lane == 0) y[g] = bi;
  }
}

// ---- backward ----------------------------------------------------------------------------
// Per-group statistics for max/min (the extreme, how many elements equal it) and prod (the
// product of the non-zero elements, how many are zero): st[2g], st[2g+1]. A warp per group.
template <typename T>
RB_DEVICE void rb_reduce_stats_t(int op, const T* x, double* st, rb_u64 outer, rb_u64 r, rb_u64 inner) {
  const rb_u64 lane = threadIdx.x % RB_WARP_SIZE;
  const rb_u64 wpb = blockDim.x / RB_WARP_SIZE;
  const rb_u64 nwarps = (rb_u64)gridDim.x * wpb;
  const rb_u64 ng = outer * inner;
  for (rb_u64 g = (rb_u64)blockIdx.x * wpb + threadIdx.x / RB_WARP_SIZE; g < ng; g += nwarps) {
    const rb_u64 o = g / inner, i = g % inner;
    const T* p = x + o * r * inner + i;
    double a, b = 0.0;
    if (op == 4) {
      a = 1.0;
      for (rb_u64 k = lane; k < r; k += RB_WARP_SIZE) {
        double v = rb_ld(p[k * inner]);
        if (v == 0.0) b += 1.0; else a *= v;
      }
      a = rb_warp_all(4, a);
      b = rb_warp_all(0, b);
    } else {
      a = rb_red_init(op);
      for (rb_u64 k = lane; k < r; k += RB_WARP_SIZE) a = rb_red_combine(op, a, rb_ld(p[k * inner]));
      a = rb_warp_all(op, a);
      for (rb_u64 k = lane; k < r; k += RB_WARP_SIZE) b += (rb_ld(p[k * inner]) == a) ? 1.0 : 0.0;
      b = rb_warp_all(0, b);
    }
    if (lane == 0) { st[2 * g] = a; st[2 * g + 1] = b; }
  }
}

// dx over all outer * r * inner elements; st is unused for sum and mean.
template <typename T>
RB_DEVICE void rb_reduce_backward_t(int op, const T* x, const T* dy, T* dx, const double* st,
                                    rb_u64 outer, rb_u64 r, rb_u64 inner) {
  const rb_u64 n = outer * r * inner;
  for (rb_u64 e = rb_gid(); e < n; e += rb_gstride()) {
    const rb_u64 o = e / (r * inner), i = e % inner;
    const rb_u64 g = o * inner + i;
    const double gu = rb_ld(dy[g]);
    double out;
    if (op == 0) out = gu;
    else if (op == 1) out = gu / (double)r;
    else {
      const double v = rb_ld(x[e]), a = st[2 * g], b = st[2 * g + 1];
      if (op == 4) out = b == 0.0 ? gu * a / v : (b == 1.0 && v == 0.0 ? gu * a : 0.0);
      else out = v == a ? gu / b : 0.0;
    }
    rb_red_put(dx + e, out);
  }
}

#define RB_REDUCE_KERNELS(S, T)                                                                   \
  RB_KERNEL void rb_reduce_rows_##S(int op, const T* x, T* y, double* part, rb_u64 outer,         \
                                    rb_u64 r, rb_u64 splits, rb_u64 chunk) {                      \
    rb_reduce_rows_t(op, x, y, part, outer, r, splits, chunk);                                    \
  }                                                                                               \
  RB_KERNEL void rb_reduce_full_##S(int op, const T* x, T* y, double* part, rb_u32* ticket,       \
                                    rb_u64 n, rb_u64 chunk) {                                     \
    rb_reduce_full_t(op, x, y, part, ticket, n, chunk);                                           \
  }                                                                                               \
  RB_KERNEL void rb_reduce_rows_warp_##S(int op, const T* x, T* y, rb_u64 outer, rb_u64 r) {      \
    rb_reduce_rows_warp_t(op, x, y, outer, r);                                                    \
  }                                                                                               \
  RB_KERNEL void rb_reduce_cols_##S(int op, const T* x, T* y, double* part, rb_u64 outer,         \
                                    rb_u64 r, rb_u64 inner, rb_u64 splits, rb_u64 chunk) {        \
    rb_reduce_cols_t(op, x, y, part, outer, r, inner, splits, chunk);                             \
  }                                                                                               \
  RB_KERNEL void rb_reduce_combine_##S(int op, const double* part, T* y, rb_u64 ng, rb_u64 nz,    \
                                       rb_u64 r) {                                                \
    rb_reduce_combine_t(op, part, y, ng, nz, r);                                                  \
  }                                                                                               \
  RB_KERNEL void rb_argmax_##S(const T* x, rb_i64* y, rb_u64 outer, rb_u64 r, rb_u64 inner) {     \
    rb_argmax_t(x, y, outer, r, inner);                                                           \
  }                                                                                               \
  RB_KERNEL void rb_reduce_stats_##S(int op, const T* x, double* st, rb_u64 outer, rb_u64 r,      \
                                     rb_u64 inner) {                                              \
    rb_reduce_stats_t(op, x, st, outer, r, inner);                                                \
  }                                                                                               \
  RB_KERNEL void rb_reduce_backward_##S(int op, const T* x, const T* dy, T* dx, const double* st, \
                                        rb_u64 outer, rb_u64 r, rb_u64 inner) {                   \
    rb_reduce_backward_t(op, x, dy, dx, st, outer, r, inner);                                     \
  }

RB_REDUCE_KERNELS(f32, float)
RB_REDUCE_KERNELS(f16, rb_f16)
RB_REDUCE_KERNELS(bf16, rb_bf16)
RB_REDUCE_KERNELS(f64, double)

// ---- integer sum / prod (rb_sum_dtype, rb_prod_dtype with an integer dtype) --------------
// Wrapping two's-complement arithmetic in 64 bits (truncated to 32 for i32, which equals
// wrapping in 32 bits throughout). A block (256 threads, a power of two) per output group,
// grid-stride over groups; threads stride over r, then a shared-memory tree combines them.
template <typename T>
RB_DEVICE void rb_reduce_int_t(int prod, const T* x, T* y, rb_u64 outer, rb_u64 r, rb_u64 inner) {
  __shared__ rb_u64 acc[256];
  const rb_u64 groups = outer * inner;
  for (rb_u64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const rb_u64 o = g / inner, i = g % inner;
    rb_u64 a = prod ? 1ull : 0ull;
    for (rb_u64 k = threadIdx.x; k < r; k += blockDim.x) {
      const rb_u64 v = (rb_u64)(rb_i64)x[(o * r + k) * inner + i];
      a = prod ? a * v : a + v;
    }
    acc[threadIdx.x] = a;
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) {
        const rb_u64 b = acc[threadIdx.x + s];
        acc[threadIdx.x] = prod ? acc[threadIdx.x] * b : acc[threadIdx.x] + b;
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) y[g] = (T)(rb_i64)acc[0];
    __syncthreads();
  }
}

RB_KERNEL void rb_reduce_int_i32(int prod, const rb_i32* x, rb_i32* y, rb_u64 outer, rb_u64 r, rb_u64 inner) { rb_reduce_int_t(prod, x, y, outer, r, inner); }
RB_KERNEL void rb_reduce_int_i64(int prod, const rb_i64* x, rb_i64* y, rb_u64 outer, rb_u64 r, rb_u64 inner) { rb_reduce_int_t(prod, x, y, outer, r, inner); }
