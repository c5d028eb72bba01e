// pool.hip: pooling with PyTorch's exact semantics (src/ops/pool.rs), for both vendors.
// Max pooling: NaN propagates, ties and the gradient go to the first position in scan order
// (among NaNs the last, as PyTorch's kernels: every NaN replaces the maximum), dilation
// allowed. Average pooling: the divisor of PyTorch (windows clipped to the padded
// input; count_include_pad counts padding; divisor_override). The padding may differ before
// and after. ceil_mode is in the output sizes. The backward passes are gathers (one thread
// per input element; max pooling reads an arg-max pass's buffer): deterministic, no
// atomics (scripts/check-pool-emu.sh runs them on the CPU against references). Max pooling
// with indices uses PyTorch's arg-max (the last NaN wins) and its backward scatters
// through the indices (f32 atomics; f64 one thread per plane, in order, no atomics). Also
// adaptive average and max pooling (1D/2D/3D, both layouts; backward gathers; f64 in
// double), and the convolution epilogues of src/device/gpu/conv.rs (bias + activation, bias
// grad, the RbPad copy).
#include "common.h"

// ---- op codes: what an `op` / `act` argument holds. Defined once, in Rust
// (src/device/gpu/kernels.rs); its unit tests check these values and every switch's labels.
#define RB_ACT_NONE 0
#define RB_ACT_RELU 1
#define RB_ACT_GELU 2
#define RB_ACT_GELU_TANH 3

// RbPool of src/device/gpu/pool.rs: spatial extents padded at the front to three dims.
struct RbPool {
  rb_i64 nc;
  rb_i64 in[3];
  rb_i64 out[3];
  rb_i64 k[3];
  rb_i64 s[3];
  rb_i64 p[3];         // padding before (where windows start)
  rb_i64 pa[3];        // padding after (average windows are clipped to in + pa)
  rb_i64 d[3];
  rb_i64 divisor;      // average: divisor_override when nonzero
  rb_i32 kind;         // 0 max, 1 average
  rb_i32 include_pad;  // average: count_include_pad
};

// The accumulator of an element type (PyTorch's opmath): float for f32/f16/bf16, double for
// f64. Kernels written over it (rb_acc_ld / rb_acc_st convert) run their f64 instantiations
// in double with the float kernels' code and semantics.
template <typename T> struct RbAcc { typedef float type; };
template <> struct RbAcc<double> { typedef double type; };
template <typename T> using rb_acc_t = typename RbAcc<T>::type;
template <typename T> RB_DEVICE float rb_acc_ld(T v) { return rb_to_f32(v); }
RB_DEVICE double rb_acc_ld(double v) { return v; }
template <typename T> RB_DEVICE void rb_acc_st(T* p, float v) { rb_from_f32(p, v); }
RB_DEVICE void rb_acc_st(double* p, double v) { *p = v; }

// The geometry in index type I: int when every index fits (fast division), else 64-bit.
template <typename I> struct RbPoolG {
  I nc, in[3], out[3], k[3], s[3], p[3], pa[3], d[3];
  rb_i64 divisor;
  int kind, include_pad;
};
template <typename I> RB_DEVICE RbPoolG<I> rb_pool_g(const RbPool& g) {
  RbPoolG<I> r;
  r.nc = (I)g.nc;
  for (int i = 0; i < 3; ++i) {
    r.in[i] = (I)g.in[i]; r.out[i] = (I)g.out[i]; r.k[i] = (I)g.k[i];
    r.s[i] = (I)g.s[i]; r.p[i] = (I)g.p[i]; r.pa[i] = (I)g.pa[i]; r.d[i] = (I)g.d[i];
  }
  r.divisor = g.divisor;
  r.kind = g.kind;
  r.include_pad = g.include_pad;
  return r;
}
template <typename I> RB_DEVICE I rb_imin(I a, I b) { return a < b ? a : b; }
template <typename I> RB_DEVICE I rb_imax(I a, I b) { return a > b ? a : b; }

// Average pooling's divisor at output position (o0, o1, o2), in A.
template <typename I, typename A = float> RB_DEVICE A rb_pool_div(const RbPoolG<I>& g, I o0, I o1, I o2) {
  if (g.divisor != 0) return (A)g.divisor;
  I oi[3] = {o0, o1, o2};
  A div = 1;
  for (int d = 0; d < 3; ++d) {
    I start = oi[d] * g.s[d] - g.p[d];
    I end = rb_imin<I>(start + g.k[d], g.in[d] + g.pa[d]);
    I size = g.include_pad ? end - start : rb_imin<I>(end, g.in[d]) - rb_imax<I>(start, 0);
    div *= (A)rb_imax<I>(size, 0);
  }
  return div;
}

// Flat index (within the plane) of the max of window (o0, o1, o2): first in scan order,
// a NaN wins over numbers (the last NaN, as PyTorch); -1 for a window without a valid
// position. `m` gets the value.
template <typename T, typename I>
RB_DEVICE I rb_pool_argmax(const T* xp, const RbPoolG<I>& g, I o0, I o1, I o2, rb_acc_t<T>* m, I cs = 1) {
  I s0 = o0 * g.s[0] - g.p[0], s1 = o1 * g.s[1] - g.p[1], s2 = o2 * g.s[2] - g.p[2];
  I best = -1;
  rb_acc_t<T> bm = rb_bits_f32(0xff800000u);  // -inf
  for (I a = 0; a < g.k[0]; ++a) {
    I z = s0 + a * g.d[0];
    if (z < 0 || z >= g.in[0]) continue;
    for (I b = 0; b < g.k[1]; ++b) {
      I y = s1 + b * g.d[1];
      if (y < 0 || y >= g.in[1]) continue;
      I row = (z * g.in[1] + y) * g.in[2];
      for (I c = 0; c < g.k[2]; ++c) {
        I x = s2 + c * g.d[2];
        if (x < 0 || x >= g.in[2]) continue;
        rb_acc_t<T> v = rb_acc_ld(xp[(row + x) * cs]);
        if (best < 0 || v > bm || v != v) {
          best = row + x;
          bm = v;
        }
      }
    }
  }
  *m = bm;
  return best;
}

template <typename T, typename I> RB_DEVICE void rb_pool_fwd_t(const T* x, T* y, const RbPool& g64) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  I o12 = g.out[1] * g.out[2];
  I ov = g.out[0] * o12;
  I iv = g.in[0] * g.in[1] * g.in[2];
  I total = g.nc * ov;
  for (I idx = (I)rb_gid(); idx < total; idx += (I)rb_gstride()) {
    I nc = idx / ov, o = idx - nc * ov;
    I o0 = o / o12, r = o - o0 * o12;
    I o1 = r / g.out[2], o2 = r - o1 * g.out[2];
    const T* xp = x + (rb_i64)nc * iv;
    rb_acc_t<T> res;
    if (g.kind == 0) {
      rb_pool_argmax<T, I>(xp, g, o0, o1, o2, &res);
    } else {
      I s0 = o0 * g.s[0] - g.p[0], s1 = o1 * g.s[1] - g.p[1], s2 = o2 * g.s[2] - g.p[2];
      rb_acc_t<T> acc = 0.0f;
      for (I a = 0; a < g.k[0]; ++a) {
        I z = s0 + a;
        if (z < 0 || z >= g.in[0]) continue;
        for (I b = 0; b < g.k[1]; ++b) {
          I yy = s1 + b;
          if (yy < 0 || yy >= g.in[1]) continue;
          const T* row = xp + (z * g.in[1] + yy) * g.in[2];
          for (I c = 0; c < g.k[2]; ++c) {
            I xx = s2 + c;
            if (xx < 0 || xx >= g.in[2]) continue;
            acc += rb_acc_ld(row[xx]);
          }
        }
      }
      res = acc / rb_pool_div<I, rb_acc_t<T> >(g, o0, o1, o2);
    }
    rb_acc_st(y + idx, res);
  }
}

// The output positions along one dimension whose windows may contain input position i:
// [lo, hi]; membership is checked by the caller (dilation).
template <typename I> RB_DEVICE void rb_pool_range(const RbPoolG<I>& g, int d, I i, I* lo, I* hi) {
  I first = i + g.p[d] - (g.k[d] - 1) * g.d[d];
  *lo = first <= 0 ? 0 : (first + g.s[d] - 1) / g.s[d];
  *hi = rb_imin<I>((i + g.p[d]) / g.s[d], g.out[d] - 1);
}

// True when window position o of dimension d covers input position i.
template <typename I> RB_DEVICE bool rb_pool_covers(const RbPoolG<I>& g, int d, I o, I i) {
  I r = i + g.p[d] - o * g.s[d];
  return r >= 0 && r % g.d[d] == 0 && r / g.d[d] < g.k[d];
}

template <typename T, typename I>
RB_DEVICE void rb_pool_bwd_t(const T* x, const T* dy, T* dx, const RbPool& g64) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  I ov = g.out[0] * g.out[1] * g.out[2];
  I i12 = g.in[1] * g.in[2];
  I iv = g.in[0] * i12;
  I total = g.nc * iv;
  for (I idx = (I)rb_gid(); idx < total; idx += (I)rb_gstride()) {
    I nc = idx / iv, i = idx - nc * iv;
    I i0 = i / i12, r = i - i0 * i12;
    I i1 = r / g.in[2], i2 = r - i1 * g.in[2];
    const T* xp = x + (rb_i64)nc * iv;
    const T* dyp = dy + (rb_i64)nc * ov;
    I lo0, hi0, lo1, hi1, lo2, hi2;
    rb_pool_range<I>(g, 0, i0, &lo0, &hi0);
    rb_pool_range<I>(g, 1, i1, &lo1, &hi1);
    rb_pool_range<I>(g, 2, i2, &lo2, &hi2);
    rb_acc_t<T> acc = 0.0f;
    for (I o0 = lo0; o0 <= hi0; ++o0) {
      if (!rb_pool_covers<I>(g, 0, o0, i0)) continue;
      for (I o1 = lo1; o1 <= hi1; ++o1) {
        if (!rb_pool_covers<I>(g, 1, o1, i1)) continue;
        for (I o2 = lo2; o2 <= hi2; ++o2) {
          if (!rb_pool_covers<I>(g, 2, o2, i2)) continue;
          I o = (o0 * g.out[1] + o1) * g.out[2] + o2;
          const rb_acc_t<T> gy = rb_acc_ld(dyp[o]);
          if (g.kind == 0) {
            rb_acc_t<T> m;
            if (rb_pool_argmax<T, I>(xp, g, o0, o1, o2, &m) == i) acc += gy;
          } else {
            acc += gy / rb_pool_div<I, rb_acc_t<T> >(g, o0, o1, o2);
          }
        }
      }
    }
    rb_acc_st(dx + idx, acc);
  }
}

// PyTorch's arg-max of max_pool*_with_indices (src/ops/pool.rs, PoolGeom::torch_argmax): the
// first largest value in scan order, the LAST NaN, the first valid position when all are
// -inf; a window with no valid position gives -inf at its start moved past the padding by
// whole dilations. Returns the flat index within the plane; `m` gets the value.
template <typename T, typename I>
RB_DEVICE I rb_pool_torch_argmax(const T* xp, const RbPoolG<I>& g, I o0, I o1, I o2, rb_acc_t<T>* m, I cs = 1) {
  I s0 = o0 * g.s[0] - g.p[0], s1 = o1 * g.s[1] - g.p[1], s2 = o2 * g.s[2] - g.p[2];
  I best = -1;
  rb_acc_t<T> bm = rb_bits_f32(0xff800000u);  // -inf
  for (I a = 0; a < g.k[0]; ++a) {
    I z = s0 + a * g.d[0];
    if (z < 0 || z >= g.in[0]) continue;
    for (I b = 0; b < g.k[1]; ++b) {
      I y = s1 + b * g.d[1];
      if (y < 0 || y >= g.in[1]) continue;
      I row = (z * g.in[1] + y) * g.in[2];
      for (I c = 0; c < g.k[2]; ++c) {
        I x = s2 + c * g.d[2];
        if (x < 0 || x >= g.in[2]) continue;
        rb_acc_t<T> v = rb_acc_ld(xp[(row + x) * cs]);
        if (best < 0 || v > bm || v != v) {
          best = row + x;
          bm = v;
        }
      }
    }
  }
  if (best < 0) {
    while (s0 < 0) s0 += g.d[0];
    while (s1 < 0) s1 += g.d[1];
    while (s2 < 0) s2 += g.d[2];
    best = (s0 * g.in[1] + s1) * g.in[2] + s2;
  }
  *m = bm;
  return best;
}

template <typename T, typename I>
RB_DEVICE void rb_pool_fwd_idx_t(const T* x, T* y, rb_i64* idx, const RbPool& g64) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  I o12 = g.out[1] * g.out[2];
  I ov = g.out[0] * o12;
  I iv = g.in[0] * g.in[1] * g.in[2];
  I total = g.nc * ov;
  for (I i = (I)rb_gid(); i < total; i += (I)rb_gstride()) {
    I nc = i / ov, o = i - nc * ov;
    I o0 = o / o12, r = o - o0 * o12;
    I o1 = r / g.out[2], o2 = r - o1 * g.out[2];
    rb_acc_t<T> m;
    I best = rb_pool_torch_argmax<T, I>(x + (rb_i64)nc * iv, g, o0, o1, o2, &m);
    rb_acc_st(y + i, m);
    idx[i] = (rb_i64)best;
  }
}

// Channels last (`nc` = N, x [N, spatial, C], y and idx [N, out spatial, C]): one thread
// per output element, consecutive threads consecutive channels; the same arg-max and index
// values as channels first.
template <typename T, typename I>
RB_DEVICE void rb_pool_nhwc_fwd_idx_t(const T* x, T* y, rb_i64* idx, const RbPool& g64, rb_i64 c64) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  const I C = (I)c64;
  const I o12 = g.out[1] * g.out[2];
  const I ov = g.out[0] * o12;
  const I iv = g.in[0] * g.in[1] * g.in[2];
  const I total = g.nc * ov * C;
  for (I t = (I)rb_gid(); t < total; t += (I)rb_gstride()) {
    const I q = t / C, c = t - q * C;
    const I n = q / ov, o = q - n * ov;
    const I o0 = o / o12, r = o - o0 * o12;
    const I o1 = r / g.out[2], o2 = r - o1 * g.out[2];
    rb_acc_t<T> m;
    I best = rb_pool_torch_argmax<T, I>(x + (rb_i64)n * iv * C + c, g, o0, o1, o2, &m, C);
    rb_acc_st(y + t, m);
    idx[t] = (rb_i64)best;
  }
}

// Output i's index into its plane when it lies in [0, iv); otherwise i is recorded in *bad
// (the first such position, atomicMin; the host reads it back) and the result is -1.
RB_DEVICE rb_i64 rb_pool_idx_at(const rb_i64* idx, rb_u64 i, rb_i64 iv, rb_u64* bad) {
  const rb_i64 j = idx[i];
  if (j >= 0 && j < iv) return j;
  atomicMin((unsigned long long*)bad, (unsigned long long)i);
  return -1;
}

// dx (f32, zeroed) += dy scattered through the indices of each plane (atomics: windows may
// share their maximum); a bad index (rb_pool_idx_at) is skipped.
template <typename T>
RB_DEVICE void rb_pool_bwd_idx_t(const T* dy, const rb_i64* idx, rb_u64 total, rb_i64 ov, rb_i64 iv,
                                 float* acc, rb_u64* bad) {
  for (rb_u64 i = rb_gid(); i < total; i += rb_gstride()) {
    const rb_i64 j = rb_pool_idx_at(idx, i, iv, bad);
    if (j < 0) continue;
    rb_i64 plane = (rb_i64)i / ov;
    atomicAdd(acc + plane * iv + j, rb_to_f32(dy[i]));
  }
}

// The scatter above in channels last: dy, idx [N, ov, C], acc [N, iv, C].
template <typename T>
RB_DEVICE void rb_pool_nhwc_bwd_idx_t(const T* dy, const rb_i64* idx, rb_u64 total, rb_i64 ov, rb_i64 iv, rb_i64 c,
                                      float* acc, rb_u64* bad) {
  for (rb_u64 i = rb_gid(); i < total; i += rb_gstride()) {
    const rb_i64 j = rb_pool_idx_at(idx, i, iv, bad);
    if (j < 0) continue;
    const rb_i64 n = (rb_i64)i / (ov * c), ch = (rb_i64)i % c;
    atomicAdd(acc + (n * iv + j) * c + ch, rb_to_f32(dy[i]));
  }
}

// The f64 scatter, without atomics (their order would change the sums): one thread per
// fiber, `fibers` = N * c of dy, idx [N, ov, c] and dx [N, iv, c] (channels first: the N*C
// planes with c = 1), adds its outputs' gradients in output order into dx (zeroed by the
// host), as the CPU does: deterministic, the CPU's sums exactly. Bad indices as above.
RB_KERNEL void rb_pool_bwd_idx_f64(const double* dy, const rb_i64* idx, rb_u64 fibers, rb_i64 ov, rb_i64 iv,
                                   rb_i64 c, double* dx, rb_u64* bad) {
  for (rb_u64 f = rb_gid(); f < fibers; f += rb_gstride()) {
    const rb_i64 n = (rb_i64)f / c, ch = (rb_i64)f % c;
    for (rb_i64 o = 0; o < ov; ++o) {
      const rb_u64 i = (rb_u64)((n * ov + o) * c + ch);
      const rb_i64 j = rb_pool_idx_at(idx, i, iv, bad);
      if (j >= 0) dx[(n * iv + j) * c + ch] += dy[i];
    }
  }
}

// Suffix _i32: every index (elements of x and y, plus a grid stride) fits in int.
#define RB_POOL_KERNELS(SFX, T)                                                                              \
  RB_KERNEL void rb_pool_fwd_##SFX(const T* x, T* y, RbPool g) { rb_pool_fwd_t<T, rb_i64>(x, y, g); }       \
  RB_KERNEL void rb_pool_fwd_##SFX##_i32(const T* x, T* y, RbPool g) { rb_pool_fwd_t<T, int>(x, y, g); }    \
  RB_KERNEL void rb_pool_bwd_##SFX(const T* x, const T* dy, T* dx, RbPool g) { rb_pool_bwd_t<T, rb_i64>(x, dy, dx, g); } \
  RB_KERNEL void rb_pool_bwd_##SFX##_i32(const T* x, const T* dy, T* dx, RbPool g) { rb_pool_bwd_t<T, int>(x, dy, dx, g); }
RB_POOL_KERNELS(f32, float)
RB_POOL_KERNELS(f16, rb_f16)
RB_POOL_KERNELS(bf16, rb_bf16)

// Max pooling with indices, both layouts: f32, f16, bf16 and f64 (in double).
#define RB_POOL_FWD_IDX_KERNELS(SFX, T)                                                                      \
  RB_KERNEL void rb_pool_fwd_idx_##SFX(const T* x, T* y, rb_i64* idx, RbPool g) { rb_pool_fwd_idx_t<T, rb_i64>(x, y, idx, g); } \
  RB_KERNEL void rb_pool_fwd_idx_##SFX##_i32(const T* x, T* y, rb_i64* idx, RbPool g) { rb_pool_fwd_idx_t<T, int>(x, y, idx, g); } \
  RB_KERNEL void rb_pool_nhwc_fwd_idx_##SFX(const T* x, T* y, rb_i64* idx, RbPool g, rb_i64 c) { rb_pool_nhwc_fwd_idx_t<T, rb_i64>(x, y, idx, g, c); } \
  RB_KERNEL void rb_pool_nhwc_fwd_idx_##SFX##_i32(const T* x, T* y, rb_i64* idx, RbPool g, rb_i64 c) { rb_pool_nhwc_fwd_idx_t<T, int>(x, y, idx, g, c); }
RB_POOL_FWD_IDX_KERNELS(f32, float)
RB_POOL_FWD_IDX_KERNELS(f16, rb_f16)
RB_POOL_FWD_IDX_KERNELS(bf16, rb_bf16)
RB_POOL_FWD_IDX_KERNELS(f64, double)

// The f32-atomic scatters (f64: rb_pool_bwd_idx_f64 above).
#define RB_POOL_BWD_IDX_KERNELS(SFX, T)                                                                      \
  RB_KERNEL void rb_pool_bwd_idx_##SFX(const T* dy, const rb_i64* idx, rb_u64 total, rb_i64 ov, rb_i64 iv, float* acc, rb_u64* bad) { \
    rb_pool_bwd_idx_t<T>(dy, idx, total, ov, iv, acc, bad);                                                   \
  }                                                                                                           \
  RB_KERNEL void rb_pool_nhwc_bwd_idx_##SFX(const T* dy, const rb_i64* idx, rb_u64 total, rb_i64 ov, rb_i64 iv, rb_i64 c, float* acc, rb_u64* bad) { \
    rb_pool_nhwc_bwd_idx_t<T>(dy, idx, total, ov, iv, c, acc, bad);                                         \
  }
RB_POOL_BWD_IDX_KERNELS(f32, float)
RB_POOL_BWD_IDX_KERNELS(f16, rb_f16)
RB_POOL_BWD_IDX_KERNELS(bf16, rb_bf16)

// ---- channels-last (NHWC / NDHWC) pooling: x [N, D, H, W, C], y [N, OD, OH, OW, C]; the
// geometry is RbPool's with `nc` = N and the channel count `c` apart. A thread handles V
// consecutive channels of one output (forward) or input (backward) position: lanes read
// neighbouring channels, so every load coalesces. Same semantics as the NCHW kernels above
// (the backward is the same gather, no atomics).
template <typename T, typename I, int V>
RB_DEVICE void rb_pool_nhwc_fwd_t(const T* x, T* y, const RbPool& g64, rb_i64 c64) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  const I C = (I)c64, CV = C / V;
  const I ov = g.out[0] * g.out[1] * g.out[2];
  const I iv = g.in[0] * g.in[1] * g.in[2];
  const I total = g.nc * ov * CV;
  for (I t = (I)rb_gid(); t < total; t += (I)rb_gstride()) {
    const I q = t / CV;  // (n, o0, o1, o2) flat
    const I c0 = (t - q * CV) * V;
    I r = q;
    const I o2 = r % g.out[2]; r /= g.out[2];
    const I o1 = r % g.out[1]; r /= g.out[1];
    const I o0 = r % g.out[0];
    const I n = r / g.out[0];
    const T* xp = x + (rb_i64)n * iv * C + c0;
    I s0 = o0 * g.s[0] - g.p[0], s1 = o1 * g.s[1] - g.p[1], s2 = o2 * g.s[2] - g.p[2];
    float acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = g.kind == 0 ? rb_bits_f32(0xff800000u) : 0.0f;
    for (I a = 0; a < g.k[0]; ++a) {
      I z = s0 + a * g.d[0];
      if (z < 0 || z >= g.in[0]) continue;
      for (I b = 0; b < g.k[1]; ++b) {
        I yy = s1 + b * g.d[1];
        if (yy < 0 || yy >= g.in[1]) continue;
        for (I cc = 0; cc < g.k[2]; ++cc) {
          I xx = s2 + cc * g.d[2];
          if (xx < 0 || xx >= g.in[2]) continue;
          const T* p = xp + ((z * g.in[1] + yy) * g.in[2] + xx) * C;
#pragma unroll
          for (int v = 0; v < V; ++v) {
            float val = rb_to_f32(p[v]);
            if (g.kind != 0) {
              acc[v] += val;
            } else if (val > acc[v] || val != val) {
              acc[v] = val;
            }
          }
        }
      }
    }
    float div = g.kind == 0 ? 1.0f : rb_pool_div<I>(g, o0, o1, o2);
    T* yp = y + (rb_i64)q * C + c0;
#pragma unroll
    for (int v = 0; v < V; ++v) rb_from_f32(yp + v, g.kind == 0 ? acc[v] : acc[v] / div);
  }
}

template <typename T, typename I, int V>
RB_DEVICE void rb_pool_nhwc_bwd_t(const T* x, const T* dy, T* dx, const RbPool& g64, rb_i64 c64) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  const I C = (I)c64, CV = C / V;
  const I ov = g.out[0] * g.out[1] * g.out[2];
  const I iv = g.in[0] * g.in[1] * g.in[2];
  const I total = g.nc * iv * CV;
  for (I t = (I)rb_gid(); t < total; t += (I)rb_gstride()) {
    const I q = t / CV;  // (n, i0, i1, i2) flat
    const I c0 = (t - q * CV) * V;
    I r = q;
    const I i2 = r % g.in[2]; r /= g.in[2];
    const I i1 = r % g.in[1]; r /= g.in[1];
    const I i0 = r % g.in[0];
    const I n = r / g.in[0];
    const I i = (i0 * g.in[1] + i1) * g.in[2] + i2;
    const T* xp = x + (rb_i64)n * iv * C + c0;
    const T* dyp = dy + (rb_i64)n * ov * C + c0;
    I lo0, hi0, lo1, hi1, lo2, hi2;
    rb_pool_range<I>(g, 0, i0, &lo0, &hi0);
    rb_pool_range<I>(g, 1, i1, &lo1, &hi1);
    rb_pool_range<I>(g, 2, i2, &lo2, &hi2);
    float acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = 0.0f;
    for (I o0 = lo0; o0 <= hi0; ++o0) {
      if (!rb_pool_covers<I>(g, 0, o0, i0)) continue;
      for (I o1 = lo1; o1 <= hi1; ++o1) {
        if (!rb_pool_covers<I>(g, 1, o1, i1)) continue;
        for (I o2 = lo2; o2 <= hi2; ++o2) {
          if (!rb_pool_covers<I>(g, 2, o2, i2)) continue;
          const I o = (o0 * g.out[1] + o1) * g.out[2] + o2;
          const float div = g.kind == 0 ? 1.0f : rb_pool_div<I>(g, o0, o1, o2);
#pragma unroll
          for (int v = 0; v < V; ++v) {
            float gy = rb_to_f32(dyp[o * C + v]);
            if (g.kind == 0) {
              float m;
              if (rb_pool_argmax<T, I>(xp + v, g, o0, o1, o2, &m, C) == i) acc[v] += gy;
            } else {
              acc[v] += gy / div;
            }
          }
        }
      }
    }
    T* dxp = dx + (rb_i64)q * C + c0;
#pragma unroll
    for (int v = 0; v < V; ++v) rb_from_f32(dxp + v, acc[v]);
  }
}

// rb_pool_nhwc_<fwd|bwd>_<dtype>_v<V>[_i32]: V channels per thread (V divides C).
#define RB_POOL_NHWC_ONE(SFX, T, V, ISFX, I)                                                             \
  RB_KERNEL void rb_pool_nhwc_fwd_##SFX##_v##V##ISFX(const T* x, T* y, RbPool g, rb_i64 c) {             \
    rb_pool_nhwc_fwd_t<T, I, V>(x, y, g, c);                                                             \
  }                                                                                                      \
  RB_KERNEL void rb_pool_nhwc_bwd_##SFX##_v##V##ISFX(const T* x, const T* dy, T* dx, RbPool g, rb_i64 c) { \
    rb_pool_nhwc_bwd_t<T, I, V>(x, dy, dx, g, c);                                                        \
  }
#define RB_POOL_NHWC_KERNELS(SFX, T)                                                                     \
  RB_POOL_NHWC_ONE(SFX, T, 1, , rb_i64)                                                                  \
  RB_POOL_NHWC_ONE(SFX, T, 1, _i32, int)                                                                 \
  RB_POOL_NHWC_ONE(SFX, T, 4, , rb_i64)                                                                  \
  RB_POOL_NHWC_ONE(SFX, T, 4, _i32, int)
RB_POOL_NHWC_KERNELS(f32, float)
RB_POOL_NHWC_KERNELS(f16, rb_f16)
RB_POOL_NHWC_KERNELS(bf16, rb_bf16)

// ---- fast 2D forward paths (src/device/gpu/pool.rs picks them at run time): a 2D or 1D
// problem (no depth), no dilation, every index in 32 bits, a square window K x K with stride
// S fixed at compile time (1D: a 1 x K window, KH = 1). Memory-bound: one thread per output
// column (lanes of a warp read neighbouring columns, so the loads coalesce) and VH
// consecutive output rows (rows shared by overlapping windows are loaded once, and the
// index arithmetic, 32-bit, is paid once per VH outputs). Same results as rb_pool_fwd_t:
// NaN propagates in max pooling, a window with no valid position gives -inf; average
// pooling divides as PyTorch does (count_include_pad, padding after, divisor_override).
struct RbPool2 {
  rb_u32 planes, ih, iw, oh, ow, ohb;  // ohb = ceil(oh / VH)
  rb_i32 ph, pw;                       // padding before
  rb_i32 eh, ew;                       // average: windows are clipped to in + pad_after
  float divisor;                       // divisor_override, or 0
  rb_i32 include_pad;
};

RB_DEVICE float rb_pool2_size(int o, int s, int k, int p, int in, int e, int include_pad) {
  int start = o * s - p;
  int end = start + k < e ? start + k : e;
  int size = include_pad ? end - start : (end < in ? end : in) - (start > 0 ? start : 0);
  return (float)(size > 0 ? size : 0);
}

template <typename T, int KH, int KW, int S, int AVG, int VH>
RB_DEVICE void rb_pool2_fwd_t(const T* __restrict__ x, T* __restrict__ y, const RbPool2& g) {
  const rb_u32 total = g.planes * g.ohb * g.ow;
  const int SH = KH == 1 ? 1 : S;
  for (rb_u32 t = (rb_u32)rb_gid(); t < total; t += (rb_u32)rb_gstride()) {
    const rb_u32 q = t / g.ow;
    const int ow = (int)(t - q * g.ow);
    const rb_u32 pl = q / g.ohb;
    const int oh0 = (int)(q - pl * g.ohb) * VH;
    const T* xp = x + (rb_u64)pl * g.ih * g.iw;
    const int w0 = ow * S - g.pw;
    bool cv[KW];
#pragma unroll
    for (int c = 0; c < KW; ++c) cv[c] = (unsigned)(w0 + c) < g.iw;
    float acc[VH];
#pragma unroll
    for (int j = 0; j < VH; ++j) acc[j] = AVG ? 0.0f : rb_bits_f32(0xff800000u);
    const int h0 = oh0 * SH - g.ph;
#pragma unroll
    for (int r = 0; r < (VH - 1) * SH + KH; ++r) {
      const int h = h0 + r;
      if ((unsigned)h >= g.ih) continue;
      const T* row = xp + h * (int)g.iw + w0;
      float v[KW];
#pragma unroll
      for (int c = 0; c < KW; ++c) v[c] = cv[c] ? rb_to_f32(row[c]) : (AVG ? 0.0f : rb_bits_f32(0xff800000u));
#pragma unroll
      for (int j = 0; j < VH; ++j) {
        const int kr = r - j * SH;
        if (kr < 0 || kr >= KH) continue;
#pragma unroll
        for (int c = 0; c < KW; ++c) {
          if (AVG) {
            acc[j] += v[c];
          } else if (v[c] > acc[j] || v[c] != v[c]) {
            // A NaN wins and stays (nothing compares greater than it).
            acc[j] = v[c];
          }
        }
      }
    }
    T* yp = y + ((rb_u64)pl * g.oh + oh0) * g.ow + ow;
#pragma unroll
    for (int j = 0; j < VH; ++j) {
      float res = acc[j];
      if (AVG) {
        float div = g.divisor;
        if (div == 0.0f) {
          div = rb_pool2_size(ow, S, KW, g.pw, g.iw, g.ew, g.include_pad) *
                rb_pool2_size(oh0 + j, SH, KH, g.ph, g.ih, g.eh, g.include_pad);
        }
        res = res / div;
      }
      if (oh0 + j < (int)g.oh) rb_from_f32(yp + (rb_u64)j * g.ow, res);
    }
  }
}

// rb_pool2_fwd_<dtype>_<max|avg>_k<K>s<S>: the variants of RB_POOL2_VARIANTS in
// src/device/gpu/pool.rs (VH 2 for stride 2, 4 for stride 1; 1D windows `_k1x<K>`, VH 1).
#define RB_POOL2_ONE(SFX, T, NAME, KH, KW, S, AVG, VH)                                       \
  RB_KERNEL void rb_pool2_fwd_##SFX##_##NAME(const T* x, T* y, RbPool2 g) {                 \
    rb_pool2_fwd_t<T, KH, KW, S, AVG, VH>(x, y, g);                                          \
  }
#define RB_POOL2_KERNELS(SFX, T)                                                             \
  RB_POOL2_ONE(SFX, T, max_k2s2, 2, 2, 2, 0, 2)                                              \
  RB_POOL2_ONE(SFX, T, max_k3s2, 3, 3, 2, 0, 2)                                              \
  RB_POOL2_ONE(SFX, T, max_k3s1, 3, 3, 1, 0, 4)                                              \
  RB_POOL2_ONE(SFX, T, avg_k2s2, 2, 2, 2, 1, 2)                                              \
  RB_POOL2_ONE(SFX, T, avg_k3s2, 3, 3, 2, 1, 2)                                              \
  RB_POOL2_ONE(SFX, T, avg_k3s1, 3, 3, 1, 1, 4)                                              \
  RB_POOL2_ONE(SFX, T, max_k1x2s2, 1, 2, 2, 0, 1)                                            \
  RB_POOL2_ONE(SFX, T, max_k1x3s2, 1, 3, 2, 0, 1)                                            \
  RB_POOL2_ONE(SFX, T, avg_k1x2s2, 1, 2, 2, 1, 1)                                            \
  RB_POOL2_ONE(SFX, T, avg_k1x3s2, 1, 3, 2, 1, 1)
RB_POOL2_KERNELS(f32, float)
RB_POOL2_KERNELS(f16, rb_f16)
RB_POOL2_KERNELS(bf16, rb_bf16)

// ---- pooling backward as gathers, no atomics (src/device/gpu/pool.rs pool_backward). Max
// pooling first writes the arg-max of every window into an index buffer laid out like y:
// the position within the window, (a * k1 + b) * k2 + c, of its maximum (the first in scan
// order, a NaN wins over numbers, the last NaN among NaNs: PyTorch's and the CPU's rule), or
// all ones (RB_POOL_NONE) for a window without a valid position. IT is rb_u8 when the
// window has fewer than 255 positions, else int. Then one thread per input element sums
// the gradients of the windows that cover it and whose arg-max it is (max), or dy / the
// window's divisor over every covering window (average). Both kernels take both layouts:
// `cl` channels-last ([N, spatial, C]), else channels-first ([N, C, spatial]); the
// geometry's `nc` is the batch N, `c64` the channels.
#define RB_POOL_NONE(IT) ((IT)~0)

template <typename T, typename I, typename IT>
RB_DEVICE void rb_pool_arg_t(const T* x, IT* arg, const RbPool& g64, rb_i64 c64, int cl) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  const I C = (I)c64;
  const I o12 = g.out[1] * g.out[2];
  const I ov = g.out[0] * o12;
  const I iv = g.in[0] * g.in[1] * g.in[2];
  const I total = g.nc * C * ov;
  const I cs = cl ? C : 1;
  for (I t = (I)rb_gid(); t < total; t += (I)rb_gstride()) {
    I n, c, o;
    if (cl) {
      const I q = t / C;
      c = t - q * C;
      n = q / ov;
      o = q - n * ov;
    } else {
      const I p = t / ov;
      o = t - p * ov;
      n = p / C;
      c = p - n * C;
    }
    const I o0 = o / o12, r = o - o0 * o12;
    const I o1 = r / g.out[2], o2 = r - o1 * g.out[2];
    const T* xp = x + (cl ? (rb_i64)n * iv * C + c : ((rb_i64)n * C + c) * iv);
    const I s0 = o0 * g.s[0] - g.p[0], s1 = o1 * g.s[1] - g.p[1], s2 = o2 * g.s[2] - g.p[2];
    I best = -1;
    float bm = rb_bits_f32(0xff800000u);  // -inf
    for (I a = 0; a < g.k[0]; ++a) {
      const I z = s0 + a * g.d[0];
      if (z < 0 || z >= g.in[0]) continue;
      for (I b = 0; b < g.k[1]; ++b) {
        const I y = s1 + b * g.d[1];
        if (y < 0 || y >= g.in[1]) continue;
        const I row = (z * g.in[1] + y) * g.in[2];
        for (I cc = 0; cc < g.k[2]; ++cc) {
          const I xx = s2 + cc * g.d[2];
          if (xx < 0 || xx >= g.in[2]) continue;
          const float v = rb_to_f32(xp[(row + xx) * cs]);
          if (best < 0 || v > bm || v != v) {
            best = (a * g.k[1] + b) * g.k[2] + cc;
            bm = v;
          }
        }
      }
    }
    arg[t] = best < 0 ? RB_POOL_NONE(IT) : (IT)best;
  }
}

// MAX: 1 max pooling through `arg` (of type IT), 0 average pooling (`arg` unused).
template <typename T, typename I, typename IT, int MAX>
RB_DEVICE void rb_pool_gather_t(const IT* arg, const T* dy, T* dx, const RbPool& g64, rb_i64 c64, int cl) {
  RbPoolG<I> g = rb_pool_g<I>(g64);
  const I C = (I)c64;
  const I ov = g.out[0] * g.out[1] * g.out[2];
  const I i12 = g.in[1] * g.in[2];
  const I iv = g.in[0] * i12;
  const I total = g.nc * C * iv;
  const I cs = cl ? C : 1;
  for (I t = (I)rb_gid(); t < total; t += (I)rb_gstride()) {
    I n, c, i;
    if (cl) {
      const I q = t / C;
      c = t - q * C;
      n = q / iv;
      i = q - n * iv;
    } else {
      const I p = t / iv;
      i = t - p * iv;
      n = p / C;
      c = p - n * C;
    }
    const I i0 = i / i12, r = i - i0 * i12;
    const I i1 = r / g.in[2], i2 = r - i1 * g.in[2];
    // Element o of this (n, c)'s output is at ybase + o * cs.
    const I ybase = cl ? n * ov * C + c : (n * C + c) * ov;
    I lo0, hi0, lo1, hi1, lo2, hi2;
    rb_pool_range<I>(g, 0, i0, &lo0, &hi0);
    rb_pool_range<I>(g, 1, i1, &lo1, &hi1);
    rb_pool_range<I>(g, 2, i2, &lo2, &hi2);
    float acc = 0.0f;
    for (I o0 = lo0; o0 <= hi0; ++o0) {
      const I r0 = i0 + g.p[0] - o0 * g.s[0];
      if (r0 % g.d[0] != 0 || r0 / g.d[0] >= g.k[0]) continue;
      for (I o1 = lo1; o1 <= hi1; ++o1) {
        const I r1 = i1 + g.p[1] - o1 * g.s[1];
        if (r1 % g.d[1] != 0 || r1 / g.d[1] >= g.k[1]) continue;
        for (I o2 = lo2; o2 <= hi2; ++o2) {
          const I r2 = i2 + g.p[2] - o2 * g.s[2];
          if (r2 % g.d[2] != 0 || r2 / g.d[2] >= g.k[2]) continue;
          const I at = ybase + ((o0 * g.out[1] + o1) * g.out[2] + o2) * cs;
          if (MAX) {
            const I local = ((r0 / g.d[0]) * g.k[1] + r1 / g.d[1]) * g.k[2] + r2 / g.d[2];
            if ((I)arg[at] == local) acc += rb_to_f32(dy[at]);
          } else {
            acc += rb_to_f32(dy[at]) / rb_pool_div<I>(g, o0, o1, o2);
          }
        }
      }
    }
    rb_from_f32(dx + t, acc);
  }
}

// rb_pool_arg_<dtype>_a<8|32>[_i32], rb_pool_gather_<dtype>_<avg|max_a8|max_a32>[_i32].
#define RB_POOL_GATHER_ONE(SFX, T, ISFX, I)                                                                \
  RB_KERNEL void rb_pool_arg_##SFX##_a8##ISFX(const T* x, rb_u8* a, RbPool g, rb_i64 c, int cl) {         \
    rb_pool_arg_t<T, I, rb_u8>(x, a, g, c, cl);                                                            \
  }                                                                                                        \
  RB_KERNEL void rb_pool_arg_##SFX##_a32##ISFX(const T* x, int* a, RbPool g, rb_i64 c, int cl) {          \
    rb_pool_arg_t<T, I, int>(x, a, g, c, cl);                                                              \
  }                                                                                                        \
  RB_KERNEL void rb_pool_gather_##SFX##_avg##ISFX(const rb_u8* a, const T* dy, T* dx, RbPool g, rb_i64 c, int cl) { \
    rb_pool_gather_t<T, I, rb_u8, 0>(a, dy, dx, g, c, cl);                                                 \
  }                                                                                                        \
  RB_KERNEL void rb_pool_gather_##SFX##_max_a8##ISFX(const rb_u8* a, const T* dy, T* dx, RbPool g, rb_i64 c, int cl) { \
    rb_pool_gather_t<T, I, rb_u8, 1>(a, dy, dx, g, c, cl);                                                 \
  }                                                                                                        \
  RB_KERNEL void rb_pool_gather_##SFX##_max_a32##ISFX(const int* a, const T* dy, T* dx, RbPool g, rb_i64 c, int cl) { \
    rb_pool_gather_t<T, I, int, 1>(a, dy, dx, g, c, cl);                                                   \
  }
#define RB_POOL_GATHER_KERNELS(SFX, T)                                                                     \
  RB_POOL_GATHER_ONE(SFX, T, , rb_i64)                                                                     \
  RB_POOL_GATHER_ONE(SFX, T, _i32, int)
RB_POOL_GATHER_KERNELS(f32, float)
RB_POOL_GATHER_KERNELS(f16, rb_f16)
RB_POOL_GATHER_KERNELS(bf16, rb_bf16)

// The fast 2D/1D backward paths (the windows of the fast forward paths, channels-first):
// the arg-max pass with rb_pool2_fwd_t's structure (one thread per output column and VH
// output rows; the window position as a byte), then one thread per input element, whose
// covering windows (at most ceil(K/S) per dimension) follow from K and S known at compile
// time; lanes take neighbouring columns, so the loads of arg and dy and the stores of dx
// coalesce.
template <typename T, int KH, int KW, int S, int VH>
RB_DEVICE void rb_pool2_arg_t(const T* __restrict__ x, rb_u8* __restrict__ arg, const RbPool2& g) {
  const rb_u32 total = g.planes * g.ohb * g.ow;
  const int SH = KH == 1 ? 1 : S;
  for (rb_u32 t = (rb_u32)rb_gid(); t < total; t += (rb_u32)rb_gstride()) {
    const rb_u32 q = t / g.ow;
    const int ow = (int)(t - q * g.ow);
    const rb_u32 pl = q / g.ohb;
    const int oh0 = (int)(q - pl * g.ohb) * VH;
    const T* xp = x + (rb_u64)pl * g.ih * g.iw;
    const int w0 = ow * S - g.pw;
    bool cv[KW];
#pragma unroll
    for (int c = 0; c < KW; ++c) cv[c] = (unsigned)(w0 + c) < g.iw;
    float m[VH];
    int best[VH];
#pragma unroll
    for (int j = 0; j < VH; ++j) {
      m[j] = rb_bits_f32(0xff800000u);
      best[j] = -1;
    }
    const int h0 = oh0 * SH - g.ph;
#pragma unroll
    for (int r = 0; r < (VH - 1) * SH + KH; ++r) {
      const int h = h0 + r;
      if ((unsigned)h >= g.ih) continue;
      const T* row = xp + h * (int)g.iw + w0;
      float v[KW];
#pragma unroll
      for (int c = 0; c < KW; ++c) v[c] = cv[c] ? rb_to_f32(row[c]) : 0.0f;
#pragma unroll
      for (int j = 0; j < VH; ++j) {
        const int kr = r - j * SH;
        if (kr < 0 || kr >= KH) continue;
#pragma unroll
        for (int c = 0; c < KW; ++c) {
          if (cv[c] && (best[j] < 0 || v[c] > m[j] || v[c] != v[c])) {
            best[j] = kr * KW + c;
            m[j] = v[c];
          }
        }
      }
    }
    rb_u8* ap = arg + ((rb_u64)pl * g.oh + oh0) * g.ow + ow;
#pragma unroll
    for (int j = 0; j < VH; ++j) {
      if (oh0 + j < (int)g.oh) ap[(rb_u64)j * g.ow] = best[j] < 0 ? RB_POOL_NONE(rb_u8) : (rb_u8)best[j];
    }
  }
}

template <typename T, int KH, int KW, int S, int AVG>
RB_DEVICE void rb_pool2_bwd_t(const rb_u8* __restrict__ arg, const T* __restrict__ dy, T* __restrict__ dx,
                              const RbPool2& g) {
  const rb_u32 total = g.planes * g.ih * g.iw;
  const int SH = KH == 1 ? 1 : S;
  for (rb_u32 t = (rb_u32)rb_gid(); t < total; t += (rb_u32)rb_gstride()) {
    const rb_u32 q = t / g.iw;
    const int w = (int)(t - q * g.iw);
    const rb_u32 pl = q / g.ih;
    const int h = (int)(q - pl * g.ih);
    // Window o covers position i (padded: i + p) when o * S <= i + p <= o * S + K - 1.
    const int nh = h + g.ph, nw = w + g.pw;
    const int hlo = nh - KH + 1 <= 0 ? 0 : (nh - KH + SH) / SH;
    const int hhi = nh / SH < (int)g.oh - 1 ? nh / SH : (int)g.oh - 1;
    const int wlo = nw - KW + 1 <= 0 ? 0 : (nw - KW + S) / S;
    const int whi = nw / S < (int)g.ow - 1 ? nw / S : (int)g.ow - 1;
    float acc = 0.0f;
    for (int oy = hlo; oy <= hhi; ++oy) {
      const rb_u32 orow = ((rb_u32)pl * g.oh + (rb_u32)oy) * g.ow;
      for (int ox = wlo; ox <= whi; ++ox) {
        if (AVG) {
          float div = g.divisor;
          if (div == 0.0f) {
            div = rb_pool2_size(ox, S, KW, g.pw, g.iw, g.ew, g.include_pad) *
                  rb_pool2_size(oy, SH, KH, g.ph, g.ih, g.eh, g.include_pad);
          }
          acc += rb_to_f32(dy[orow + ox]) / div;
        } else if ((int)arg[orow + ox] == (nh - oy * SH) * KW + (nw - ox * S)) {
          // dy is read only where this element is the window's arg-max.
          acc += rb_to_f32(dy[orow + ox]);
        }
      }
    }
    rb_from_f32(dx + t, acc);
  }
}

// rb_pool2_arg_<dtype>_max_<window> and rb_pool2_bwd_<dtype>_<max|avg>_<window>: the
// windows of RB_POOL2_KERNELS.
#define RB_POOL2_BWD_ONE(SFX, T, NAME, KH, KW, S, VH)                                        \
  RB_KERNEL void rb_pool2_arg_##SFX##_max_##NAME(const T* x, rb_u8* a, RbPool2 g) {         \
    rb_pool2_arg_t<T, KH, KW, S, VH>(x, a, g);                                               \
  }                                                                                          \
  RB_KERNEL void rb_pool2_bwd_##SFX##_max_##NAME(const rb_u8* a, const T* dy, T* dx, RbPool2 g) { \
    rb_pool2_bwd_t<T, KH, KW, S, 0>(a, dy, dx, g);                                           \
  }                                                                                          \
  RB_KERNEL void rb_pool2_bwd_##SFX##_avg_##NAME(const rb_u8* a, const T* dy, T* dx, RbPool2 g) { \
    rb_pool2_bwd_t<T, KH, KW, S, 1>(a, dy, dx, g);                                           \
  }
#define RB_POOL2_BWD_KERNELS(SFX, T)                                                         \
  RB_POOL2_BWD_ONE(SFX, T, k2s2, 2, 2, 2, 2)                                                 \
  RB_POOL2_BWD_ONE(SFX, T, k3s2, 3, 3, 2, 2)                                                 \
  RB_POOL2_BWD_ONE(SFX, T, k3s1, 3, 3, 1, 4)                                                 \
  RB_POOL2_BWD_ONE(SFX, T, k1x2s2, 1, 2, 2, 1)                                               \
  RB_POOL2_BWD_ONE(SFX, T, k1x3s2, 1, 3, 2, 1)
RB_POOL2_BWD_KERNELS(f32, float)
RB_POOL2_BWD_KERNELS(f16, rb_f16)
RB_POOL2_BWD_KERNELS(bf16, rb_bf16)

// ---- adaptive pooling (adaptive_{avg,max}_pool{1,2,3}d, src/ops/pool.rs AdaptiveGeom):
// window o of an extent `in` pooled to `out` is [floor(o*in/out), ceil((o+1)*in/out)).
// Memory: `blocks` blocks of `cb` interleaved channels (channels first: the N*C planes,
// cb = 1; channels last: the N samples, cb = C, element (position, c) at position*C + c).
// Forward: one thread per output element, consecutive threads consecutive channels
// (channels last) or output columns (channels first). Backward: a gather, one thread per
// input element over the outputs whose windows cover it: no atomics, deterministic.
struct RbAdaptive {
  rb_i64 blocks;
  rb_i64 cb;
  rb_i64 in[3];
  rb_i64 out[3];
};

template <typename I> RB_DEVICE I rb_ad_lo(I o, I in, I out) { return (o * in) / out; }
template <typename I> RB_DEVICE I rb_ad_hi(I o, I in, I out) { return ((o + 1) * in + out - 1) / out; }

// MAX: PyTorch's arg-max (src/ops/pool.rs adaptive_max_reference): the first maximum in
// scan order, the last NaN, the window's first position when every value is -inf; idx gets
// the flat position within the plane.
template <typename T, typename I, int MAX>
RB_DEVICE void rb_adaptive_fwd_t(const T* __restrict__ x, T* __restrict__ y, rb_i64* __restrict__ idx,
                                 const RbAdaptive& g) {
  const I cb = (I)g.cb;
  const I in0 = (I)g.in[0], in1 = (I)g.in[1], in2 = (I)g.in[2];
  const I out0 = (I)g.out[0], out1 = (I)g.out[1], out2 = (I)g.out[2];
  const I o12 = out1 * out2, ov = out0 * o12, iv = in0 * in1 * in2;
  const I total = (I)g.blocks * ov * cb;
  for (I t = (I)rb_gid(); t < total; t += (I)rb_gstride()) {
    const I q = t / cb, c = t - q * cb;
    const I b = q / ov, o = q - b * ov;
    const I o0 = o / o12, r = o - o0 * o12;
    const I o1 = r / out2, o2 = r - o1 * out2;
    const I h0 = rb_ad_lo<I>(o0, in0, out0), h1 = rb_ad_hi<I>(o0, in0, out0);
    const I y0 = rb_ad_lo<I>(o1, in1, out1), y1 = rb_ad_hi<I>(o1, in1, out1);
    const I x0 = rb_ad_lo<I>(o2, in2, out2), x1 = rb_ad_hi<I>(o2, in2, out2);
    const T* xb = x + (rb_i64)b * iv * cb + c;
    rb_acc_t<T> acc = MAX ? rb_bits_f32(0xff800000u) : 0.0f;  // -inf
    I best = (h0 * in1 + y0) * in2 + x0;
    for (I z = h0; z < h1; ++z) {
      for (I yy = y0; yy < y1; ++yy) {
        const I row = (z * in1 + yy) * in2;
        for (I xx = x0; xx < x1; ++xx) {
          const rb_acc_t<T> v = rb_acc_ld(xb[(rb_i64)(row + xx) * cb]);
          if (!MAX) {
            acc += v;
          } else if (v > acc || v != v) {
            acc = v;
            best = row + xx;
          }
        }
      }
    }
    if (MAX) {
      rb_acc_st(y + t, acc);
      idx[t] = (rb_i64)best;
    } else {
      rb_acc_st(y + t, acc / (rb_acc_t<T>)((h1 - h0) * (y1 - y0) * (x1 - x0)));
    }
  }
}

// The gather: window o covers input position i along a dim exactly for
// o in [floor(i*out/in), ceil((i+1)*out/in) - 1]. MAX adds dy where the output's index is
// this element, and the element at each window's first position checks that window's index
// (one check per output): one outside the window is recorded in *bad (the first such
// output, flat in dy; atomicMin, read back by the host) and contributes nothing.
template <typename T, typename I, int MAX>
RB_DEVICE void rb_adaptive_bwd_t(const T* __restrict__ dy, const rb_i64* __restrict__ idx, T* __restrict__ dx,
                                 const RbAdaptive& g, rb_u64* bad) {
  const I cb = (I)g.cb;
  const I in0 = (I)g.in[0], in1 = (I)g.in[1], in2 = (I)g.in[2];
  const I out0 = (I)g.out[0], out1 = (I)g.out[1], out2 = (I)g.out[2];
  const I i12 = in1 * in2, iv = in0 * i12, ov = out0 * out1 * out2;
  const I total = (I)g.blocks * iv * cb;
  for (I t = (I)rb_gid(); t < total; t += (I)rb_gstride()) {
    const I q = t / cb, c = t - q * cb;
    const I b = q / iv, i = q - b * iv;
    const I i0 = i / i12, r = i - i0 * i12;
    const I i1 = r / in2, i2 = r - i1 * in2;
    const I a0 = (i0 * out0) / in0, e0 = ((i0 + 1) * out0 + in0 - 1) / in0;
    const I a1 = (i1 * out1) / in1, e1 = ((i1 + 1) * out1 + in1 - 1) / in1;
    const I a2 = (i2 * out2) / in2, e2 = ((i2 + 1) * out2 + in2 - 1) / in2;
    const rb_i64 base = (rb_i64)b * ov * cb + c;
    rb_acc_t<T> acc = 0.0f;
    for (I o0 = a0; o0 < e0; ++o0) {
      const I h0 = rb_ad_lo<I>(o0, in0, out0), h1 = rb_ad_hi<I>(o0, in0, out0);
      for (I o1 = a1; o1 < e1; ++o1) {
        const I y0 = rb_ad_lo<I>(o1, in1, out1), y1 = rb_ad_hi<I>(o1, in1, out1);
        for (I o2 = a2; o2 < e2; ++o2) {
          const I x0 = rb_ad_lo<I>(o2, in2, out2), x1 = rb_ad_hi<I>(o2, in2, out2);
          const rb_i64 at = base + (rb_i64)((o0 * out1 + o1) * out2 + o2) * cb;
          if (!MAX) {
            acc += rb_acc_ld(dy[at]) / (rb_acc_t<T>)((h1 - h0) * (y1 - y0) * (x1 - x0));
            continue;
          }
          const rb_i64 j = idx[at];
          if (j == (rb_i64)i) acc += rb_acc_ld(dy[at]);
          if (i0 == h0 && i1 == y0 && i2 == x0) {
            bool ok = j >= 0 && j < (rb_i64)iv;
            if (ok) {
              const I jj = (I)j, j0 = jj / i12, jr = jj - j0 * i12, j1 = jr / in2, j2 = jr - j1 * in2;
              ok = j0 >= h0 && j0 < h1 && j1 >= y0 && j1 < y1 && j2 >= x0 && j2 < x1;
            }
            if (!ok) atomicMin((unsigned long long*)bad, (unsigned long long)at);
          }
        }
      }
    }
    rb_acc_st(dx + t, acc);
  }
}

// rb_adaptive_<fwd|bwd>_<dtype>_<avg|max>[_i32] (_i32: every index fits in int); f64 in
// double.
#define RB_ADAPTIVE_ONE(SFX, T, ISFX, I)                                                                   \
  RB_KERNEL void rb_adaptive_fwd_##SFX##_avg##ISFX(const T* x, T* y, rb_i64* idx, RbAdaptive g) {          \
    rb_adaptive_fwd_t<T, I, 0>(x, y, idx, g);                                                              \
  }                                                                                                        \
  RB_KERNEL void rb_adaptive_fwd_##SFX##_max##ISFX(const T* x, T* y, rb_i64* idx, RbAdaptive g) {          \
    rb_adaptive_fwd_t<T, I, 1>(x, y, idx, g);                                                              \
  }                                                                                                        \
  RB_KERNEL void rb_adaptive_bwd_##SFX##_avg##ISFX(const T* dy, const rb_i64* idx, T* dx, RbAdaptive g, rb_u64* bad) { \
    rb_adaptive_bwd_t<T, I, 0>(dy, idx, dx, g, bad);                                                       \
  }                                                                                                        \
  RB_KERNEL void rb_adaptive_bwd_##SFX##_max##ISFX(const T* dy, const rb_i64* idx, T* dx, RbAdaptive g, rb_u64* bad) { \
    rb_adaptive_bwd_t<T, I, 1>(dy, idx, dx, g, bad);                                                       \
  }
#define RB_ADAPTIVE_KERNELS(SFX, T)                                                                        \
  RB_ADAPTIVE_ONE(SFX, T, , rb_i64)                                                                        \
  RB_ADAPTIVE_ONE(SFX, T, _i32, int)
RB_ADAPTIVE_KERNELS(f32, float)
RB_ADAPTIVE_KERNELS(f16, rb_f16)
RB_ADAPTIVE_KERNELS(bf16, rb_bf16)
RB_ADAPTIVE_KERNELS(f64, double)

// ---- convolution epilogues ----------------------------------------------------------------
// act: an RB_ACT_* code (none, relu, gelu (erf), gelu (tanh)).
RB_DEVICE float rb_act(int act, float v) {
  switch (act) {
    case RB_ACT_RELU: return rb_relu(v);
    case RB_ACT_GELU: return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f));
    case RB_ACT_GELU_TANH: return 0.5f * v * (1.0f + tanhf(0.7978846f * (v + 0.044715f * v * v * v)));
    case RB_ACT_NONE:
    default: return v;
  }
}

// y[n, c, sp] = act((y + bias[c]) + r) over n*channels*sp elements (bias and r may be null;
// r has y's shape): a convolution's epilogue where the DNN library did not fuse it, and its
// residual add. Grid-stride over the elements, 32-bit index arithmetic where the tensor
// allows it; the host launches a thread per 4 elements (RB_BIAS_ACT_PER).
#define RB_BIAS_ACT_PER 4
template <typename T, typename I>
RB_DEVICE void rb_bias_act_loop(T* y, const T* bias, const T* r, I channels, I sp, I total, int act) {
  for (I i = (I)rb_gid(); i < total; i += (I)rb_gstride()) {
    float v = rb_to_f32(y[i]);
    if (bias) v += rb_to_f32(bias[(i / sp) % channels]);
    if (r) v += rb_to_f32(r[i]);
    rb_from_f32(y + i, rb_act(act, v));
  }
}
template <typename T>
RB_DEVICE void rb_bias_act_t(T* y, const T* bias, const T* r, rb_i64 channels, rb_i64 sp, rb_u64 total, int act) {
  if (total < 0xffffffffull)
    rb_bias_act_loop<T, rb_u32>(y, bias, r, (rb_u32)channels, (rb_u32)sp, (rb_u32)total, act);
  else
    rb_bias_act_loop<T, rb_u64>(y, bias, r, (rb_u64)channels, (rb_u64)sp, total, act);
}
// f32 where a channel's run is a multiple of 4 and y, r are 16-byte aligned: 4 elements (of
// one channel) a load.
RB_DEVICE void rb_bias_act_f32x4(float* y, const float* bias, const float* r, rb_u32 channels, rb_u32 sp4, rb_u32 total4, int act) {
  float4* y4 = (float4*)y;
  const float4* r4 = (const float4*)r;
  for (rb_u32 q = (rb_u32)rb_gid(); q < total4; q += (rb_u32)rb_gstride()) {
    float4 v = y4[q];
    float b = bias ? bias[(q / sp4) % channels] : 0.0f;
    v.x += b; v.y += b; v.z += b; v.w += b;
    if (r) {
      float4 u = r4[q];
      v.x += u.x; v.y += u.y; v.z += u.z; v.w += u.w;
    }
    v.x = rb_act(act, v.x); v.y = rb_act(act, v.y); v.z = rb_act(act, v.z); v.w = rb_act(act, v.w);
    y4[q] = v;
  }
}
RB_KERNEL void rb_bias_act_f32(float* y, const float* b, const float* r, rb_i64 c, rb_i64 sp, rb_u64 n, int act) {
  if (sp % 4 == 0 && n / 4 < 0xffffffffull && ((rb_u64)y & 15) == 0 && ((rb_u64)r & 15) == 0)
    rb_bias_act_f32x4(y, b, r, (rb_u32)c, (rb_u32)(sp / 4), (rb_u32)(n / 4), act);
  else
    rb_bias_act_t(y, b, r, c, sp, n, act);
}
RB_KERNEL void rb_bias_act_f16(rb_f16* y, const rb_f16* b, const rb_f16* r, rb_i64 c, rb_i64 sp, rb_u64 n, int act) { rb_bias_act_t(y, b, r, c, sp, n, act); }
RB_KERNEL void rb_bias_act_bf16(rb_bf16* y, const rb_bf16* b, const rb_bf16* r, rb_i64 c, rb_i64 sp, rb_u64 n, int act) { rb_bias_act_t(y, b, r, c, sp, n, act); }

// db[c] = sum over n and sp of dy[n, c, sp]: one block per channel, 256 threads.
#define RB_BG_THREADS 256
template <typename T>
RB_DEVICE void rb_bias_grad_t(const T* dy, T* db, rb_i64 batch, rb_i64 channels, rb_i64 sp) {
  __shared__ float part[RB_BG_THREADS];
  rb_i64 c = blockIdx.x;
  float acc = 0.0f;
  for (rb_i64 j = threadIdx.x; j < batch * sp; j += blockDim.x) {
    rb_i64 n = j / sp, s = j % sp;
    acc += rb_to_f32(dy[(n * channels + c) * sp + s]);
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = RB_BG_THREADS / 2; w > 0; w >>= 1) {
    if ((int)threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) rb_from_f32(db + c, part[0]);
}
RB_KERNEL void rb_bias_grad_f32(const float* dy, float* db, rb_i64 b, rb_i64 c, rb_i64 sp) { rb_bias_grad_t(dy, db, b, c, sp); }
RB_KERNEL void rb_bias_grad_f16(const rb_f16* dy, rb_f16* db, rb_i64 b, rb_i64 c, rb_i64 sp) { rb_bias_grad_t(dy, db, b, c, sp); }
RB_KERNEL void rb_bias_grad_bf16(const rb_bf16* dy, rb_bf16* db, rb_i64 b, rb_i64 c, rb_i64 sp) { rb_bias_grad_t(dy, db, b, c, sp); }

// ---- dst[nc, a, b, c] = src[nc, a, b, c] inside src's extents, else 0 (a zero-padding or
// cropping copy; the convolution geometries cuDNN/MIOpen cannot express directly).
struct RbPad {
  rb_i64 nc;
  rb_i64 src[3];
  rb_i64 dst[3];
};
template <typename T> RB_DEVICE void rb_pad_copy_t(const T* src, T* dst, const RbPad& g) {
  rb_i64 dv = g.dst[0] * g.dst[1] * g.dst[2], sv = g.src[0] * g.src[1] * g.src[2];
  rb_u64 total = (rb_u64)(g.nc * dv);
  for (rb_u64 idx = rb_gid(); idx < total; idx += rb_gstride()) {
    rb_i64 nc = (rb_i64)idx / dv, i = (rb_i64)idx % dv;
    rb_i64 a = i / (g.dst[1] * g.dst[2]), b = (i / g.dst[2]) % g.dst[1], c = i % g.dst[2];
    T v;
    if (a < g.src[0] && b < g.src[1] && c < g.src[2]) {
      v = src[nc * sv + (a * g.src[1] + b) * g.src[2] + c];
    } else {
      v = (T)0;
    }
    dst[idx] = v;
  }
}
RB_KERNEL void rb_pad_copy_b2(const rb_u16* s, rb_u16* d, RbPad g) { rb_pad_copy_t(s, d, g); }
RB_KERNEL void rb_pad_copy_b4(const rb_u32* s, rb_u32* d, RbPad g) { rb_pad_copy_t(s, d, g); }

// ---- f64 convolution (MIOpen has no double; PyTorch on ROCm runs its own slow_conv2d):
// direct, deterministic kernels in double over NC(D)HW tensors, spatial extents padded at the
// front to three dims (RbConv64 of src/device/gpu/conv.rs). Forward: one thread per output
// element (sum over c_in/groups x the window, then bias and activation); data gradient: one
// thread per input element gathering the outputs whose windows hold it; weight gradient: one
// thread per weight element summing over the batch and the output positions; bias gradient:
// one thread per output channel. No atomics.
struct RbConv64 {
  rb_i64 n, c_in, c_out, groups;
  rb_i64 in[3];
  rb_i64 k[3];
  rb_i64 out[3];
  rb_i64 s[3];
  rb_i64 p[3];
  rb_i64 d[3];
};

RB_DEVICE double rb_act_f64(int act, double v) {
  switch (act) {
    case RB_ACT_RELU: return v < 0.0 ? 0.0 : v;
    case RB_ACT_GELU: return 0.5 * v * (1.0 + erf(v / 1.4142135623730950488));
    case RB_ACT_GELU_TANH: {
      const double c = sqrt(2.0 / 3.14159265358979323846);
      return 0.5 * v * (1.0 + tanh(c * (v + 0.044715 * v * v * v)));
    }
    case RB_ACT_NONE:
    default: return v;
  }
}

// y[n, co, o] = act(bias[co] + sum_{ci, window} x[n, g*cpg + ci, o*s - p + k*d] * w[co, ci, k]).
RB_KERNEL void rb_conv_fwd_f64(const double* x, const double* w, const double* bias, double* y, RbConv64 g,
                               int act) {
  const rb_i64 cpg = g.c_in / g.groups, kpg = g.c_out / g.groups;
  const rb_i64 ov = g.out[0] * g.out[1] * g.out[2], iv = g.in[0] * g.in[1] * g.in[2];
  const rb_i64 kv = g.k[0] * g.k[1] * g.k[2];
  const rb_u64 total = (rb_u64)(g.n * g.c_out * ov);
  for (rb_u64 idx = rb_gid(); idx < total; idx += rb_gstride()) {
    const rb_i64 o = (rb_i64)idx % ov, nco = (rb_i64)idx / ov;
    const rb_i64 co = nco % g.c_out, n = nco / g.c_out;
    const rb_i64 o0 = o / (g.out[1] * g.out[2]), o1 = (o / g.out[2]) % g.out[1], o2 = o % g.out[2];
    const rb_i64 grp = co / kpg;
    double acc = 0.0;
    for (rb_i64 ci = 0; ci < cpg; ++ci) {
      const double* xp = x + (n * g.c_in + grp * cpg + ci) * iv;
      const double* wp = w + (co * cpg + ci) * kv;
      for (rb_i64 a = 0; a < g.k[0]; ++a) {
        const rb_i64 z = o0 * g.s[0] - g.p[0] + a * g.d[0];
        if (z < 0 || z >= g.in[0]) continue;
        for (rb_i64 b = 0; b < g.k[1]; ++b) {
          const rb_i64 yy = o1 * g.s[1] - g.p[1] + b * g.d[1];
          if (yy < 0 || yy >= g.in[1]) continue;
          for (rb_i64 c = 0; c < g.k[2]; ++c) {
            const rb_i64 xx = o2 * g.s[2] - g.p[2] + c * g.d[2];
            if (xx < 0 || xx >= g.in[2]) continue;
            acc += xp[(z * g.in[1] + yy) * g.in[2] + xx] * wp[(a * g.k[1] + b) * g.k[2] + c];
          }
        }
      }
    }
    if (bias) acc += bias[co];
    y[idx] = rb_act_f64(act, acc);
  }
}

// The output positions along dimension `dim` whose windows hold input position i at tap a:
// o with o*s - p + a*d == i; returns -1 when there is none.
RB_DEVICE rb_i64 rb_conv_tap_out(const RbConv64& g, int dim, rb_i64 i, rb_i64 a) {
  const rb_i64 r = i + g.p[dim] - a * g.d[dim];
  if (r < 0 || r % g.s[dim] != 0) return -1;
  const rb_i64 o = r / g.s[dim];
  return o < g.out[dim] ? o : -1;
}

// dx[n, ci, i] = sum_{co of ci's group, taps} dy[n, co, o(i, tap)] * w[co, ci % cpg, tap].
RB_KERNEL void rb_conv_bwd_data_f64(const double* dy, const double* w, double* dx, RbConv64 g) {
  const rb_i64 cpg = g.c_in / g.groups, kpg = g.c_out / g.groups;
  const rb_i64 ov = g.out[0] * g.out[1] * g.out[2], iv = g.in[0] * g.in[1] * g.in[2];
  const rb_i64 kv = g.k[0] * g.k[1] * g.k[2];
  const rb_u64 total = (rb_u64)(g.n * g.c_in * iv);
  for (rb_u64 idx = rb_gid(); idx < total; idx += rb_gstride()) {
    const rb_i64 i = (rb_i64)idx % iv, nci = (rb_i64)idx / iv;
    const rb_i64 ci = nci % g.c_in, n = nci / g.c_in;
    const rb_i64 i0 = i / (g.in[1] * g.in[2]), i1 = (i / g.in[2]) % g.in[1], i2 = i % g.in[2];
    const rb_i64 grp = ci / cpg, cl = ci % cpg;
    double acc = 0.0;
    for (rb_i64 co = grp * kpg; co < (grp + 1) * kpg; ++co) {
      const double* dyp = dy + (n * g.c_out + co) * ov;
      const double* wp = w + (co * cpg + cl) * kv;
      for (rb_i64 a = 0; a < g.k[0]; ++a) {
        const rb_i64 o0 = rb_conv_tap_out(g, 0, i0, a);
        if (o0 < 0) continue;
        for (rb_i64 b = 0; b < g.k[1]; ++b) {
          const rb_i64 o1 = rb_conv_tap_out(g, 1, i1, b);
          if (o1 < 0) continue;
          for (rb_i64 c = 0; c < g.k[2]; ++c) {
            const rb_i64 o2 = rb_conv_tap_out(g, 2, i2, c);
            if (o2 < 0) continue;
            acc += dyp[(o0 * g.out[1] + o1) * g.out[2] + o2] * wp[(a * g.k[1] + b) * g.k[2] + c];
          }
        }
      }
    }
    dx[idx] = acc;
  }
}

// dw[co, cl, tap] = sum_{n, o} dy[n, co, o] * x[n, grp*cpg + cl, o*s - p + tap*d].
RB_KERNEL void rb_conv_bwd_weight_f64(const double* x, const double* dy, double* dw, RbConv64 g) {
  const rb_i64 cpg = g.c_in / g.groups, kpg = g.c_out / g.groups;
  const rb_i64 ov = g.out[0] * g.out[1] * g.out[2], iv = g.in[0] * g.in[1] * g.in[2];
  const rb_i64 kv = g.k[0] * g.k[1] * g.k[2];
  const rb_u64 total = (rb_u64)(g.c_out * cpg * kv);
  for (rb_u64 idx = rb_gid(); idx < total; idx += rb_gstride()) {
    const rb_i64 t = (rb_i64)idx % kv, cocl = (rb_i64)idx / kv;
    const rb_i64 cl = cocl % cpg, co = cocl / cpg;
    const rb_i64 a = t / (g.k[1] * g.k[2]), b = (t / g.k[2]) % g.k[1], c = t % g.k[2];
    const rb_i64 ci = (co / kpg) * cpg + cl;
    double acc = 0.0;
    for (rb_i64 n = 0; n < g.n; ++n) {
      const double* xp = x + (n * g.c_in + ci) * iv;
      const double* dyp = dy + (n * g.c_out + co) * ov;
      for (rb_i64 o0 = 0; o0 < g.out[0]; ++o0) {
        const rb_i64 z = o0 * g.s[0] - g.p[0] + a * g.d[0];
        if (z < 0 || z >= g.in[0]) continue;
        for (rb_i64 o1 = 0; o1 < g.out[1]; ++o1) {
          const rb_i64 yy = o1 * g.s[1] - g.p[1] + b * g.d[1];
          if (yy < 0 || yy >= g.in[1]) continue;
          for (rb_i64 o2 = 0; o2 < g.out[2]; ++o2) {
            const rb_i64 xx = o2 * g.s[2] - g.p[2] + c * g.d[2];
            if (xx < 0 || xx >= g.in[2]) continue;
            acc += dyp[(o0 * g.out[1] + o1) * g.out[2] + o2] * xp[(z * g.in[1] + yy) * g.in[2] + xx];
          }
        }
      }
    }
    dw[idx] = acc;
  }
}

// db[co] = sum_{n, o} dy[n, co, o]: one thread per output channel.
RB_KERNEL void rb_conv_bias_grad_f64(const double* dy, double* db, rb_i64 batch, rb_i64 channels, rb_i64 sp) {
  for (rb_u64 c = rb_gid(); c < (rb_u64)channels; c += rb_gstride()) {
    double acc = 0.0;
    for (rb_i64 n = 0; n < batch; ++n) {
      const double* p = dy + (n * channels + (rb_i64)c) * sp;
      for (rb_i64 s = 0; s < sp; ++s) acc += p[s];
    }
    db[c] = acc;
  }
}

// ---- f64 pooling, channels first: the generic forward (one thread per output) and the
// backward gather (one thread per input element; max pooling recomputes each covering
// window's arg-max) above, in double (64-bit indices): same semantics (NaN propagates, ties
// and the gradient go to the first maximum in scan order, the last NaN; PyTorch's divisor).
RB_KERNEL void rb_pool_fwd_f64(const double* x, double* y, RbPool g) { rb_pool_fwd_t<double, rb_i64>(x, y, g); }
RB_KERNEL void rb_pool_bwd_f64(const double* x, const double* dy, double* dx, RbPool g) {
  rb_pool_bwd_t<double, rb_i64>(x, dy, dx, g);
}
