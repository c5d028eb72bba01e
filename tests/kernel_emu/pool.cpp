// Host emulation check of kernels/pool.hip's pooling kernels (scripts/check-pool-emu.sh):
// every GPU thread of a launch runs in turn on the CPU (these kernels share nothing between
// threads), and the results are compared with a float64 reference of PyTorch's rules (the
// CPU device's): max pooling's first maximum in scan order with NaN winning (the last
// NaN, as PyTorch), average pooling's divisor (count_include_pad, padding after,
// divisor_override), ceil_mode, dilation. Covers the forward fast paths, the generic and
// channels-last forward, max pooling with indices, and the backward gathers (arg-max pass +
// gather; fast 2D/1D and generic, channels-first and channels-last, 32- and 64-bit
// indices), max pooling with indices and its scatter in both layouts, adaptive average and
// max pooling (forward, backward gathers, the bad-index report; both layouts), f32/f16/bf16,
// NaN and ties; in f64 (values beyond f32's precision) max/avg pooling, max pooling with
// indices and its in-order scatter (both layouts), adaptive pooling, the convolutions.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

struct rb_dim3 { unsigned x = 0, y = 0, z = 0; };
struct alignas(16) float4 { float x, y, z, w; };
static rb_dim3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define __shared__ static
#define warpSize 32
inline float __uint_as_float(unsigned i) { float f; memcpy(&f, &i, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned i; memcpy(&i, &f, 4); return i; }
inline float __fmaf_rn(float a, float b, float c) { return std::fma(a, b, c); }
inline float __fmul_rn(float a, float b) { return a * b; }
inline void __syncthreads() {}
inline void __syncwarp() {}
template <typename T> T __shfl_down_sync(unsigned, T v, int) { return v; }
template <typename T> T __shfl_xor_sync(unsigned, T v, int) { return v; }
inline float atomicAdd(float* p, float v) { float o = *p; *p = o + v; return o; }
inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) {
  unsigned long long o = *p; if (v < o) *p = v; return o;
}
#include "pool_host.h"

static void launch(size_t n, const std::function<void()>& f) {
  const unsigned block = 256;
  size_t blocks = (n + block - 1) / block;
  if (blocks > (1u << 20)) blocks = 1u << 20;
  gridDim = {(unsigned)blocks, 1, 1};
  blockDim = {block, 1, 1};
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < block; ++t) {
      blockIdx = {b, 0, 0};
      threadIdx = {t, 0, 0};
      f();
    }
}

struct Geom {
  int nd;
  long n, c;
  long in[3], out[3], k[3], s[3], p[3], pa[3], d[3];
  long divisor;
  int kind;  // 0 max, 1 avg
  int include_pad;
  long in_vol() const { return in[0] * in[1] * in[2]; }
  long out_vol() const { return out[0] * out[1] * out[2]; }
};

static long out_size(long i, long k, long s, long p, long pa, long d, bool ceil) {
  long num = i + p + pa - (d * (k - 1) + 1);
  long o = (ceil ? (num + s - 1) / s : num / s) + 1;
  if (ceil && (o - 1) * s >= i + p) --o;
  return o;
}

// Window o's valid positions (flat within the plane), in scan order.
static std::vector<long> window(const Geom& g, long o) {
  long oi[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
  std::vector<long> r;
  long st[3];
  for (int d = 0; d < 3; ++d) st[d] = oi[d] * g.s[d] - g.p[d];
  for (long a = 0; a < g.k[0]; ++a) {
    long z = st[0] + a * g.d[0];
    if (z < 0 || z >= g.in[0]) continue;
    for (long b = 0; b < g.k[1]; ++b) {
      long y = st[1] + b * g.d[1];
      if (y < 0 || y >= g.in[1]) continue;
      for (long c = 0; c < g.k[2]; ++c) {
        long x = st[2] + c * g.d[2];
        if (x < 0 || x >= g.in[2]) continue;
        r.push_back((z * g.in[1] + y) * g.in[2] + x);
      }
    }
  }
  return r;
}

static double divisor(const Geom& g, long o) {
  if (g.divisor) return (double)g.divisor;
  long oi[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
  double div = 1;
  for (int d = 0; d < 3; ++d) {
    long start = oi[d] * g.s[d] - g.p[d];
    long end = std::min(start + g.k[d], g.in[d] + g.pa[d]);
    long size = g.include_pad ? end - start : std::min(end, g.in[d]) - std::max(start, 0L);
    div *= (double)std::max(size, 0L);
  }
  return div;
}

// Channels-first references over planes.
static void reference(const Geom& g, const std::vector<double>& x, const std::vector<double>& dy,
                      std::vector<double>& y, std::vector<double>& dx) {
  long iv = g.in_vol(), ov = g.out_vol(), planes = g.n * g.c;
  y.assign(planes * ov, 0);
  dx.assign(planes * iv, 0);
  for (long pl = 0; pl < planes; ++pl) {
    const double* xp = &x[pl * iv];
    for (long o = 0; o < ov; ++o) {
      auto w = window(g, o);
      double gy = dy[pl * ov + o];
      if (g.kind == 0) {
        double m = -INFINITY;
        long best = -1;
        for (long i : w) {
          double v = xp[i];
          if (v > m || std::isnan(v)) m = v;
          if (best < 0 || v > xp[best] || std::isnan(v)) best = i;
        }
        y[pl * ov + o] = m;
        if (best >= 0) dx[pl * iv + best] += gy;
      } else {
        double s = 0, div = divisor(g, o);
        for (long i : w) s += xp[i];
        y[pl * ov + o] = s / div;
        for (long i : w) dx[pl * iv + i] += gy / div;
      }
    }
  }
}

static RbPool rb_pool(const Geom& g, bool nc_is_batch) {
  RbPool r;
  r.nc = nc_is_batch ? g.n : g.n * g.c;
  for (int d = 0; d < 3; ++d) {
    r.in[d] = g.in[d]; r.out[d] = g.out[d]; r.k[d] = g.k[d]; r.s[d] = g.s[d];
    r.p[d] = g.p[d]; r.pa[d] = g.pa[d]; r.d[d] = g.d[d];
  }
  r.divisor = g.divisor;
  r.kind = g.kind;
  r.include_pad = g.include_pad;
  return r;
}

// The fast path's variant name ("k3s2", "k1x2s2"...) and arguments, as src/device/gpu/pool.rs.
static bool fast(const Geom& g, std::string* var, RbPool2* l, long* threads) {
  for (int d = 0; d < 3; ++d) if (g.d[d] != 1) return false;
  if (g.in[0] != 1 || g.out[0] != 1 || g.k[0] != 1 || g.p[0] || g.pa[0]) return false;
  bool one_d = g.in[1] == 1 && g.out[1] == 1 && g.k[1] == 1 && g.p[1] == 0 && g.pa[1] == 0;
  long k = g.k[2], s = g.s[2], vh;
  if (one_d) {
    if (!((k == 2 || k == 3) && s == 2)) return false;
    *var = "k1x" + std::to_string(k) + "s2";
    vh = 1;
  } else {
    if (g.k[1] != k || g.s[1] != s) return false;
    if ((k == 2 || k == 3) && s == 2) vh = 2;
    else if (k == 3 && s == 1) vh = 4;
    else return false;
    *var = "k" + std::to_string(k) + "s" + std::to_string(s);
  }
  long planes = g.n * g.c, ohb = (g.out[1] + vh - 1) / vh;
  *l = RbPool2{(rb_u32)planes, (rb_u32)g.in[1], (rb_u32)g.in[2], (rb_u32)g.out[1], (rb_u32)g.out[2],
               (rb_u32)ohb, (rb_i32)g.p[1], (rb_i32)g.p[2], (rb_i32)(g.in[1] + g.pa[1]),
               (rb_i32)(g.in[2] + g.pa[2]), (float)g.divisor, g.include_pad};
  *threads = planes * ohb * g.out[2];
  return true;
}

// Through the kernels' accumulator (f32 for f32/f16/bf16, double for f64).
template <typename T> static std::vector<T> to_t(const std::vector<double>& v) {
  std::vector<T> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) rb_acc_st(&r[i], (rb_acc_t<T>)v[i]);
  return r;
}
template <typename T> static std::vector<double> to_d(const std::vector<T>& v) {
  std::vector<double> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = rb_acc_ld(v[i]);
  return r;
}
// NCHW <-> NHWC of [N, C, vol].
static std::vector<double> last(const std::vector<double>& v, long n, long c, long vol) {
  std::vector<double> r(v.size());
  for (long a = 0; a < n; ++a) for (long b = 0; b < c; ++b) for (long i = 0; i < vol; ++i)
    r[(a * vol + i) * c + b] = v[(a * c + b) * vol + i];
  return r;
}
static std::vector<double> first(const std::vector<double>& v, long n, long c, long vol) {
  std::vector<double> r(v.size());
  for (long a = 0; a < n; ++a) for (long b = 0; b < c; ++b) for (long i = 0; i < vol; ++i)
    r[(a * c + b) * vol + i] = v[(a * vol + i) * c + b];
  return r;
}

static int failures = 0, checks = 0;
static void compare(const std::string& what, const std::vector<double>& got, const std::vector<double>& want,
                    double tol) {
  ++checks;
  for (size_t i = 0; i < want.size(); ++i) {
    double a = got[i], b = want[i];
    bool ok = (std::isnan(a) && std::isnan(b)) || a == b || std::fabs(a - b) <= tol * (1 + std::fabs(b));
    if (!ok) {
      if (failures < 20) printf("FAIL %s at %zu: got %g want %g\n", what.c_str(), i, a, b);
      ++failures;
      return;
    }
  }
}

// Rounds a reference to T (the kernels compute in f32 and store T).
template <typename T> static std::vector<double> round_t(const std::vector<double>& v) { return to_d(to_t<T>(v)); }

// The fast paths through their templates (the kernels are these with K, S, VH fixed).
template <typename T, int KH, int KW, int S, int VH>
static void fast_one(int kind, const std::vector<T>& x, const std::vector<T>& dy, std::vector<T>& y,
                     std::vector<T>& dx, std::vector<rb_u8>& arg, const RbPool2& l, long threads, long total) {
  if (kind == 0) {
    launch(threads, [&] { rb_pool2_fwd_t<T, KH, KW, S, 0, VH>(x.data(), y.data(), l); });
    launch(threads, [&] { rb_pool2_arg_t<T, KH, KW, S, VH>(x.data(), arg.data(), l); });
    launch(total, [&] { rb_pool2_bwd_t<T, KH, KW, S, 0>(arg.data(), dy.data(), dx.data(), l); });
  } else {
    launch(threads, [&] { rb_pool2_fwd_t<T, KH, KW, S, 1, VH>(x.data(), y.data(), l); });
    launch(total, [&] { rb_pool2_bwd_t<T, KH, KW, S, 1>(nullptr, dy.data(), dx.data(), l); });
  }
}

template <typename T>
static void fast_run(const std::string& v, int kind, const std::vector<T>& x, const std::vector<T>& dy,
                     std::vector<T>& y, std::vector<T>& dx, std::vector<rb_u8>& arg, const RbPool2& l,
                     long threads, long total) {
  if (v == "k2s2") fast_one<T, 2, 2, 2, 2>(kind, x, dy, y, dx, arg, l, threads, total);
  else if (v == "k3s2") fast_one<T, 3, 3, 2, 2>(kind, x, dy, y, dx, arg, l, threads, total);
  else if (v == "k3s1") fast_one<T, 3, 3, 1, 4>(kind, x, dy, y, dx, arg, l, threads, total);
  else if (v == "k1x2s2") fast_one<T, 1, 2, 2, 1>(kind, x, dy, y, dx, arg, l, threads, total);
  else if (v == "k1x3s2") fast_one<T, 1, 3, 2, 1>(kind, x, dy, y, dx, arg, l, threads, total);
  else { printf("FAIL unknown variant %s\n", v.c_str()); ++failures; }
}

template <typename T, typename I>
static void generic_run(const Geom& g, bool cl, const std::vector<T>& x, const std::vector<T>& dy,
                        std::vector<T>& dx) {
  RbPool l = rb_pool(g, true);
  long outputs = g.n * g.c * g.out_vol(), total = g.n * g.c * g.in_vol();
  long kvol = g.k[0] * g.k[1] * g.k[2];
  if (g.kind != 0) {
    launch(total, [&] { rb_pool_gather_t<T, I, rb_u8, 0>(nullptr, dy.data(), dx.data(), l, g.c, cl); });
  } else if (kvol < 255) {
    std::vector<rb_u8> a(outputs, 77);
    launch(outputs, [&] { rb_pool_arg_t<T, I, rb_u8>(x.data(), a.data(), l, g.c, cl); });
    launch(total, [&] { rb_pool_gather_t<T, I, rb_u8, 1>(a.data(), dy.data(), dx.data(), l, g.c, cl); });
  } else {
    std::vector<int> a(outputs, 77);
    launch(outputs, [&] { rb_pool_arg_t<T, I, int>(x.data(), a.data(), l, g.c, cl); });
    launch(total, [&] { rb_pool_gather_t<T, I, int, 1>(a.data(), dy.data(), dx.data(), l, g.c, cl); });
  }
}

static std::mt19937_64 rng(12345);
static long rnd(long lo, long hi) { return lo + (long)(rng() % (unsigned long)(hi - lo + 1)); }

template <typename T>
static void run_case(const Geom& g, const char* tname, double tol, const std::string& tag) {
  long iv = g.in_vol(), ov = g.out_vol(), planes = g.n * g.c;
  std::vector<double> xv(planes * iv), dyv(planes * ov);
  // Small integers: many ties; a few NaN and -inf in max pooling.
  for (auto& v : xv) v = (double)rnd(-3, 3) * 0.5;
  for (auto& v : dyv) v = (double)rnd(-8, 8) * 0.25;
  if (g.kind == 0) {
    for (int i = 0; i < 3 && xv.size() > 4; ++i) xv[rnd(0, xv.size() - 1)] = NAN;
    xv[rnd(0, xv.size() - 1)] = -INFINITY;
  }
  xv = round_t<T>(xv);
  dyv = round_t<T>(dyv);
  std::vector<double> yref, dxref;
  reference(g, xv, dyv, yref, dxref);
  yref = round_t<T>(yref);
  std::string what = tag + " " + tname;
  auto x = to_t<T>(xv), dy = to_t<T>(dyv);
  // Generic forward (64- and 32-bit indices), channels-first.
  for (int i32 = 0; i32 < 2; ++i32) {
    std::vector<T> y(planes * ov);
    RbPool l = rb_pool(g, false);
    if (i32) launch(planes * ov, [&] { rb_pool_fwd_t<T, int>(x.data(), y.data(), l); });
    else launch(planes * ov, [&] { rb_pool_fwd_t<T, rb_i64>(x.data(), y.data(), l); });
    compare(what + " generic fwd i32=" + std::to_string(i32), to_d(y), yref, 0);
  }
  // Channels-last forward (V = 1 and, when 4 divides C, 4 channels a thread), both index
  // types; max pooling with indices (both index types agree, the values are the maxima).
  for (int i32 = 0; i32 < 2; ++i32) {
    auto xl = to_t<T>(last(xv, g.n, g.c, iv));
    RbPool l = rb_pool(g, true);
    for (int v4 = 0; v4 < 2; ++v4) {
      if (v4 && g.c % 4) continue;
      std::vector<T> y(planes * ov);
      long threads = g.n * ov * (v4 ? g.c / 4 : g.c);
      launch(threads, [&] {
        if (v4 && i32) rb_pool_nhwc_fwd_t<T, int, 4>(xl.data(), y.data(), l, g.c);
        else if (v4) rb_pool_nhwc_fwd_t<T, rb_i64, 4>(xl.data(), y.data(), l, g.c);
        else if (i32) rb_pool_nhwc_fwd_t<T, int, 1>(xl.data(), y.data(), l, g.c);
        else rb_pool_nhwc_fwd_t<T, rb_i64, 1>(xl.data(), y.data(), l, g.c);
      });
      compare(what + " nhwc fwd v4=" + std::to_string(v4) + " i32=" + std::to_string(i32),
              first(to_d(y), g.n, g.c, ov), yref, 0);
    }
  }
  if (g.kind == 0) {
    RbPool l = rb_pool(g, false);
    std::vector<T> y32(planes * ov), y64(planes * ov);
    std::vector<rb_i64> i32v(planes * ov, -5), i64v(planes * ov, -7);
    launch(planes * ov, [&] { rb_pool_fwd_idx_t<T, int>(x.data(), y32.data(), i32v.data(), l); });
    launch(planes * ov, [&] { rb_pool_fwd_idx_t<T, rb_i64>(x.data(), y64.data(), i64v.data(), l); });
    compare(what + " fwd_idx values", to_d(y32), yref, 0);
    ++checks;
    if (i32v != i64v) {
      printf("FAIL %s fwd_idx: the int and 64-bit kernels' indices differ\n", what.c_str());
      ++failures;
    }
    // Channels last: the same values and indices, permuted; the backward scatters (NCHW
    // and NHWC) agree with the reference where the indices are PyTorch's arg-max.
    auto xl = to_t<T>(last(xv, g.n, g.c, iv));
    RbPool lc = rb_pool(g, true);
    std::vector<double> i64d(i64v.begin(), i64v.end());
    auto i64l = last(i64d, g.n, g.c, ov);
    for (int i32 = 0; i32 < 2; ++i32) {
      std::vector<T> yl(planes * ov);
      std::vector<rb_i64> il(planes * ov, -3);
      launch(planes * ov, [&] {
        if (i32) rb_pool_nhwc_fwd_idx_t<T, int>(xl.data(), yl.data(), il.data(), lc, g.c);
        else rb_pool_nhwc_fwd_idx_t<T, rb_i64>(xl.data(), yl.data(), il.data(), lc, g.c);
      });
      compare(what + " nhwc fwd_idx values i32=" + std::to_string(i32), first(to_d(yl), g.n, g.c, ov), yref, 0);
      std::vector<double> ild(il.begin(), il.end());
      compare(what + " nhwc fwd_idx indices i32=" + std::to_string(i32), ild, i64l, 0);
    }
    // (A window with no valid position has PyTorch's index past the plane: no scatter.)
    bool in_plane = true;
    for (rb_i64 v : i64v) in_plane = in_plane && v >= 0 && v < iv;
    std::vector<double> want(planes * iv, 0);
    for (long p = 0; p < planes && in_plane; ++p)
      for (long o = 0; o < ov; ++o) want[p * iv + i64v[p * ov + o]] += dyv[p * ov + o];
    for (int cl = 0; cl < 2 && in_plane; ++cl) {
      std::vector<float> acc(planes * iv, 0.0f);
      rb_u64 bad = ~0ull;
      std::vector<rb_i64> idx(planes * ov);
      for (long k = 0; k < planes * ov; ++k) idx[k] = (rb_i64)(cl ? i64l[k] : i64d[k]);
      auto dyl = to_t<T>(cl ? last(dyv, g.n, g.c, ov) : dyv);
      launch(planes * ov, [&] {
        if (cl) rb_pool_nhwc_bwd_idx_t<T>(dyl.data(), idx.data(), planes * ov, ov, iv, g.c, acc.data(), &bad);
        else rb_pool_bwd_idx_t<T>(dyl.data(), idx.data(), planes * ov, ov, iv, acc.data(), &bad);
      });
      std::vector<double> got(acc.begin(), acc.end());
      if (cl) got = first(got, g.n, g.c, iv);
      compare(what + " bwd_idx scatter cl=" + std::to_string(cl), got, want, tol);
      ++checks;
      if (bad != ~0ull) { printf("FAIL %s bwd_idx cl=%d: bad index reported\n", what.c_str(), cl); ++failures; }
    }
  }
  // Generic backward: both layouts, both index types.
  for (int cl = 0; cl < 2; ++cl) {
    auto xl = cl ? to_t<T>(last(xv, g.n, g.c, iv)) : x;
    auto dyl = cl ? to_t<T>(last(dyv, g.n, g.c, ov)) : dy;
    for (int i32 = 0; i32 < 2; ++i32) {
      std::vector<T> dx(planes * iv);
      for (auto& e : dx) rb_from_f32(&e, 12345.0f);
      if (i32) generic_run<T, int>(g, cl, xl, dyl, dx);
      else generic_run<T, rb_i64>(g, cl, xl, dyl, dx);
      auto got = to_d(dx);
      if (cl) got = first(got, g.n, g.c, iv);
      compare(what + " gather bwd cl=" + std::to_string(cl) + " i32=" + std::to_string(i32), got, dxref, tol);
    }
  }
  std::string var;
  RbPool2 l2;
  long threads;
  if (fast(g, &var, &l2, &threads)) {
    std::vector<T> y(planes * ov), dx(planes * iv);
    for (auto& e : y) rb_from_f32(&e, 12345.0f);
    for (auto& e : dx) rb_from_f32(&e, 12345.0f);
    std::vector<rb_u8> arg(planes * ov, 77);
    fast_run<T>(var, g.kind, x, dy, y, dx, arg, l2, threads, planes * iv);
    compare(what + " fast fwd " + var, to_d(y), yref, 0);
    compare(what + " fast bwd " + var, to_d(dx), dxref, tol);
  }
}

static bool make(Geom& g, int nd, const long* in, const long* k, const long* s, const long* p, const long* pa,
                 const long* d, bool ceil) {
  for (int i = 0; i < 3; ++i) {
    int j = i - (3 - nd);
    g.in[i] = j >= 0 ? in[j] : 1;
    g.k[i] = j >= 0 ? k[j] : 1;
    g.s[i] = j >= 0 ? s[j] : 1;
    g.p[i] = j >= 0 ? p[j] : 0;
    g.pa[i] = j >= 0 ? pa[j] : 0;
    g.d[i] = j >= 0 ? d[j] : 1;
    if (g.p[i] * 2 > g.k[i] || g.pa[i] * 2 > g.k[i]) return false;
    if (g.in[i] + g.p[i] + g.pa[i] < g.d[i] * (g.k[i] - 1) + 1) return false;
    g.out[i] = out_size(g.in[i], g.k[i], g.s[i], g.p[i], g.pa[i], g.d[i], ceil);
  }
  g.nd = nd;
  return true;
}

// ---- adaptive pooling (rb_adaptive_fwd_t / rb_adaptive_bwd_t): both layouts, both index
// types, against a float64 reference (PyTorch's windows; max: first maximum, last NaN, the
// window's first position when all are -inf; backward: the gather of the scatter, shared
// maxima adding up; a bad index reported at its output).
static long ad_lo(long o, long in, long out) { return (o * in) / out; }
static long ad_hi(long o, long in, long out) { return ((o + 1) * in + out - 1) / out; }

template <typename T>
static void adaptive_case(long n, long c, const long* in, const long* out, const char* tname, double tol,
                          const std::string& tag) {
  long iv = in[0] * in[1] * in[2], ov = out[0] * out[1] * out[2], planes = n * c;
  std::vector<double> xv(planes * iv), dyv(planes * ov);
  for (auto& v : xv) v = (double)rnd(-3, 3) * 0.5;
  for (auto& v : dyv) v = (double)rnd(-8, 8) * 0.25;
  if (std::is_same<T, double>::value) {
    // Beyond f32's precision (ties remain where neither moved).
    for (auto& v : xv) v += (double)rnd(0, 1) * 1e-9;
    for (auto& v : dyv) v += (double)rnd(0, 1) * 1e-10;
  }
  for (int i = 0; i < 2 && xv.size() > 4; ++i) xv[rnd(0, xv.size() - 1)] = NAN;
  xv[rnd(0, xv.size() - 1)] = -INFINITY;
  xv = round_t<T>(xv);
  dyv = round_t<T>(dyv);
  // references, channels first
  std::vector<double> yavg(planes * ov), ymax(planes * ov), dxavg(planes * iv, 0), dxmax(planes * iv, 0);
  std::vector<rb_i64> imax(planes * ov);
  for (long p = 0; p < planes; ++p)
    for (long o = 0; o < ov; ++o) {
      long oi[3] = {o / (out[1] * out[2]), (o / out[2]) % out[1], o % out[2]};
      long lo[3], hi[3];
      for (int d = 0; d < 3; ++d) { lo[d] = ad_lo(oi[d], in[d], out[d]); hi[d] = ad_hi(oi[d], in[d], out[d]); }
      double s = 0, m = -INFINITY;
      long best = (lo[0] * in[1] + lo[1]) * in[2] + lo[2], cnt = 0;
      for (long z = lo[0]; z < hi[0]; ++z) for (long y = lo[1]; y < hi[1]; ++y) for (long x = lo[2]; x < hi[2]; ++x) {
        long i = (z * in[1] + y) * in[2] + x;
        double v = xv[p * iv + i];
        s += v; ++cnt;
        if (v > m || std::isnan(v)) { m = v; best = i; }
      }
      yavg[p * ov + o] = s / cnt;
      ymax[p * ov + o] = m;
      imax[p * ov + o] = best;
      for (long z = lo[0]; z < hi[0]; ++z) for (long y = lo[1]; y < hi[1]; ++y) for (long x = lo[2]; x < hi[2]; ++x)
        dxavg[p * iv + (z * in[1] + y) * in[2] + x] += dyv[p * ov + o] / cnt;
      dxmax[p * iv + best] += dyv[p * ov + o];
    }
  yavg = round_t<T>(yavg);
  ymax = round_t<T>(ymax);
  std::string what = tag + " " + tname;
  for (int cl = 0; cl < 2; ++cl) {
    RbAdaptive g;
    g.blocks = cl ? n : n * c;
    g.cb = cl ? c : 1;
    for (int d = 0; d < 3; ++d) { g.in[d] = in[d]; g.out[d] = out[d]; }
    auto x = to_t<T>(cl ? last(xv, n, c, iv) : xv);
    auto dy = to_t<T>(cl ? last(dyv, n, c, ov) : dyv);
    std::vector<double> idxd(imax.begin(), imax.end());
    std::vector<rb_i64> idx_in(planes * ov);
    {
      auto il = cl ? last(idxd, n, c, ov) : idxd;
      for (size_t i = 0; i < il.size(); ++i) idx_in[i] = (rb_i64)il[i];
    }
    auto back = [&](const std::vector<T>& v, long vol) { auto d = to_d(v); return cl ? first(d, n, c, vol) : d; };
    for (int i32 = 0; i32 < 2; ++i32) {
      std::string w = what + " cl=" + std::to_string(cl) + " i32=" + std::to_string(i32);
      std::vector<T> y(planes * ov), y2(planes * ov), dx(planes * iv), dx2(planes * iv);
      std::vector<rb_i64> idx(planes * ov, -9);
      rb_u64 bad = ~0ull;
      launch(planes * ov, [&] {
        if (i32) { rb_adaptive_fwd_t<T, int, 0>(x.data(), y.data(), nullptr, g); rb_adaptive_fwd_t<T, int, 1>(x.data(), y2.data(), idx.data(), g); }
        else { rb_adaptive_fwd_t<T, rb_i64, 0>(x.data(), y.data(), nullptr, g); rb_adaptive_fwd_t<T, rb_i64, 1>(x.data(), y2.data(), idx.data(), g); }
      });
      compare(w + " avg fwd", back(y, ov), yavg, tol);
      compare(w + " max fwd", back(y2, ov), ymax, 0);
      ++checks;
      if (idx != idx_in) { printf("FAIL %s max indices\n", w.c_str()); ++failures; }
      launch(planes * iv, [&] {
        if (i32) { rb_adaptive_bwd_t<T, int, 0>(dy.data(), nullptr, dx.data(), g, nullptr); rb_adaptive_bwd_t<T, int, 1>(dy.data(), idx_in.data(), dx2.data(), g, &bad); }
        else { rb_adaptive_bwd_t<T, rb_i64, 0>(dy.data(), nullptr, dx.data(), g, nullptr); rb_adaptive_bwd_t<T, rb_i64, 1>(dy.data(), idx_in.data(), dx2.data(), g, &bad); }
      });
      compare(w + " avg bwd", back(dx, iv), dxavg, tol);
      compare(w + " max bwd", back(dx2, iv), dxmax, tol);
      ++checks;
      if (bad != ~0ull) { printf("FAIL %s max bwd reported a bad index at %llu\n", w.c_str(), (unsigned long long)bad); ++failures; }
      // An index moved outside its window (if it has another position) is reported there.
      if (iv > 1 && planes > 0) {
        auto broken = idx_in;
        long at = rnd(0, broken.size() - 1);
        broken[at] = broken[at] == 0 ? iv - 1 : 0;
        long o = cl ? (at / c) % ov : at % ov;
        long oi[3] = {o / (out[1] * out[2]), (o / out[2]) % out[1], o % out[2]};
        long j = broken[at], jj[3] = {j / (in[1] * in[2]), (j / in[2]) % in[1], j % in[2]};
        bool inside = true;
        for (int d = 0; d < 3; ++d) inside = inside && jj[d] >= ad_lo(oi[d], in[d], out[d]) && jj[d] < ad_hi(oi[d], in[d], out[d]);
        bad = ~0ull;
        launch(planes * iv, [&] {
          if (i32) rb_adaptive_bwd_t<T, int, 1>(dy.data(), broken.data(), dx2.data(), g, &bad);
          else rb_adaptive_bwd_t<T, rb_i64, 1>(dy.data(), broken.data(), dx2.data(), g, &bad);
        });
        ++checks;
        if (inside ? bad != ~0ull : bad != (rb_u64)at) {
          printf("FAIL %s bad index at %ld (inside=%d): reported %llu\n", w.c_str(), at, (int)inside, (unsigned long long)bad);
          ++failures;
        }
      }
    }
  }
}

static int adaptive_cases() {
  int cases = 0;
  for (int it = 0; it < 150; ++it) {
    int nd = (int)rnd(1, 3);
    long in[3] = {1, 1, 1}, out[3] = {1, 1, 1};
    for (int d = 3 - nd; d < 3; ++d) {
      in[d] = rnd(1, nd == 3 ? 6 : 11);
      out[d] = rnd(1, nd == 3 ? 6 : 11);
    }
    long n = rnd(1, 2), c = rnd(1, 5);
    char tag[160];
    snprintf(tag, sizeof tag, "adaptive %d in=[%ld,%ld,%ld] out=[%ld,%ld,%ld] n=%ld c=%ld", it, in[0], in[1], in[2],
             out[0], out[1], out[2], n, c);
    adaptive_case<float>(n, c, in, out, "f32", 1e-5, tag);
    adaptive_case<rb_f16>(n, c, in, out, "f16", 2e-3, tag);
    adaptive_case<rb_bf16>(n, c, in, out, "bf16", 1.6e-2, tag);
    adaptive_case<double>(n, c, in, out, "f64", 1e-15, tag);
    ++cases;
  }
  return cases;
}

// PyTorch's index of window o (PoolGeom::torch_argmax): the first maximum in scan order, the
// last NaN, a window without a valid position its start moved past the padding by whole
// dilations.
static long torch_index(const Geom& g, const double* xp, long o) {
  long best = -1;
  for (long i : window(g, o))
    if (best < 0 || xp[i] > xp[best] || std::isnan(xp[i])) best = i;
  if (best >= 0) return best;
  long oi[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]}, st[3];
  for (int d = 0; d < 3; ++d) {
    st[d] = oi[d] * g.s[d] - g.p[d];
    while (st[d] < 0) st[d] += g.d[d];
  }
  return (st[0] * g.in[1] + st[1]) * g.in[2] + st[2];
}

// f64 max pooling with indices (rb_pool_fwd_idx_f64[_i32], rb_pool_nhwc_fwd_idx_f64[_i32]) and
// its scatter (rb_pool_bwd_idx_f64, both layouts): the values exactly, PyTorch's indices, the
// scatter's sums exactly (in output order, as the CPU), a bad index reported and skipped.
static void f64_indices(const Geom& g, const std::vector<double>& x, const std::vector<double>& dy,
                        const std::vector<double>& yref, const std::string& tag) {
  long iv = g.in_vol(), ov = g.out_vol(), planes = g.n * g.c;
  std::vector<double> iref(planes * ov);
  for (long p = 0; p < planes; ++p)
    for (long o = 0; o < ov; ++o) iref[p * ov + o] = (double)torch_index(g, &x[p * iv], o);
  auto xl = last(x, g.n, g.c, iv), dyl = last(dy, g.n, g.c, ov), irefl = last(iref, g.n, g.c, ov);
  for (int cl = 0; cl < 2; ++cl)
    for (int i32 = 0; i32 < 2; ++i32) {
      std::vector<double> y(planes * ov, NAN);
      std::vector<rb_i64> idx(planes * ov, -5);
      RbPool l = rb_pool(g, cl);
      launch(planes * ov, [&] {
        if (cl && i32) rb_pool_nhwc_fwd_idx_t<double, int>(xl.data(), y.data(), idx.data(), l, g.c);
        else if (cl) rb_pool_nhwc_fwd_idx_t<double, rb_i64>(xl.data(), y.data(), idx.data(), l, g.c);
        else if (i32) rb_pool_fwd_idx_t<double, int>(x.data(), y.data(), idx.data(), l);
        else rb_pool_fwd_idx_t<double, rb_i64>(x.data(), y.data(), idx.data(), l);
      });
      std::string w = tag + " f64 fwd_idx cl=" + std::to_string(cl) + " i32=" + std::to_string(i32);
      compare(w + " values", cl ? first(y, g.n, g.c, ov) : y, yref, 0);
      compare(w + " indices", std::vector<double>(idx.begin(), idx.end()), cl ? irefl : iref, 0);
    }
  // The scatter where every index is in its plane (a window without a valid position has
  // PyTorch's index past the plane), then with one index broken.
  bool in_plane = true;
  for (double v : iref) in_plane = in_plane && v >= 0 && v < iv;
  if (!in_plane || planes * ov == 0) return;
  for (int cl = 0; cl < 2; ++cl) {
    const auto& iv_d = cl ? irefl : iref;
    const auto& dys = cl ? dyl : dy;
    for (int broken = 0; broken < 2; ++broken) {
      std::vector<rb_i64> idx(iv_d.begin(), iv_d.end());
      long at = broken ? rnd(0, idx.size() - 1) : -1;
      if (broken) idx[at] = rnd(0, 1) ? iv : -1;
      // The reference in the layout's memory order: fiber (n, ch), outputs in order.
      long c = cl ? g.c : 1, fibers = cl ? g.n * g.c : planes;
      std::vector<double> want(planes * iv, 0.0);
      for (long f = 0; f < fibers; ++f)
        for (long o = 0; o < ov; ++o) {
          long n = f / c, ch = f % c, i = (n * ov + o) * c + ch;
          if (i != at) want[(n * iv + idx[i]) * c + ch] += dys[i];
        }
      std::vector<double> dx(planes * iv, 0.0);  // zeroed by the host
      rb_u64 bad = ~0ull;
      launch(fibers, [&] { rb_pool_bwd_idx_f64(dys.data(), idx.data(), fibers, ov, iv, c, dx.data(), &bad); });
      std::string w = tag + " f64 bwd_idx cl=" + std::to_string(cl) + " broken=" + std::to_string(broken);
      compare(w, dx, want, 0);
      ++checks;
      if (bad != (broken ? (rb_u64)at : ~0ull)) {
        printf("FAIL %s: bad reported %llu, want %ld\n", w.c_str(), (unsigned long long)bad, at);
        ++failures;
      }
    }
  }
}

// f64 max/avg pooling (rb_pool_fwd_f64, the gather rb_pool_bwd_f64): values beyond f32's
// precision, ties, NaN and -inf, against the float64 reference.
static void run_f64(const Geom& g, const std::string& tag) {
  long iv = g.in_vol(), ov = g.out_vol(), planes = g.n * g.c;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(planes * iv), dy(planes * ov);
  for (auto& v : x) v = (double)rnd(-3, 3) * 0.5 + (rnd(0, 1) ? 1e-9 : 0.0);
  for (auto& v : dy) v = u(rng);
  if (g.kind == 0) {
    for (int i = 0; i < 3 && x.size() > 4; ++i) x[rnd(0, x.size() - 1)] = NAN;
    if (!x.empty()) x[rnd(0, x.size() - 1)] = -INFINITY;
  }
  std::vector<double> yref, dxref;
  reference(g, x, dy, yref, dxref);
  std::vector<double> y(planes * ov, NAN), dx(planes * iv, NAN);
  RbPool l = rb_pool(g, false);
  launch(y.size(), [&] { rb_pool_fwd_f64(x.data(), y.data(), l); });
  launch(dx.size(), [&] { rb_pool_bwd_f64(x.data(), dy.data(), dx.data(), l); });
  compare(tag + " f64 fwd", y, yref, 1e-15);
  compare(tag + " f64 bwd", dx, dxref, 1e-13);
  if (g.kind == 0) f64_indices(g, x, dy, yref, tag);
}

// ---- f64 convolutions (rb_conv_*_f64): random grouped/strided/dilated/padded 1D-3D
// geometries (output extents as a transposed convolution with output_padding may leave them:
// at most the full formula), against a scatter-form float64 reference.
static int conv_f64_cases() {
  int cases = 0;
  for (int it = 0; it < 120; ++it) {
    RbConv64 g{};
    int nd = (int)rnd(1, 3);
    g.groups = rnd(1, 3);
    g.c_in = g.groups * rnd(1, 3);
    g.c_out = g.groups * rnd(1, 3);
    g.n = rnd(1, 2);
    bool ok = true;
    for (int d = 0; d < 3; ++d) {
      if (d < 3 - nd) {
        g.in[d] = g.k[d] = g.out[d] = g.s[d] = g.d[d] = 1;
        g.p[d] = 0;
        continue;
      }
      g.in[d] = rnd(1, 7); g.k[d] = rnd(1, 3); g.s[d] = rnd(1, 3); g.d[d] = rnd(1, 2); g.p[d] = rnd(0, 2);
      long full = (g.in[d] + 2 * g.p[d] - g.d[d] * (g.k[d] - 1) - 1);
      if (full < 0) { ok = false; break; }
      full = full / g.s[d] + 1;
      g.out[d] = it % 5 == 0 && full > 1 ? full - 1 : full;
    }
    if (!ok) continue;
    ++cases;
    const long cpg = g.c_in / g.groups, kpg = g.c_out / g.groups;
    const long iv = g.in[0] * g.in[1] * g.in[2], ov = g.out[0] * g.out[1] * g.out[2], kv = g.k[0] * g.k[1] * g.k[2];
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(g.n * g.c_in * iv), w(g.c_out * cpg * kv), b(g.c_out), dy(g.n * g.c_out * ov);
    for (auto* v : {&x, &w, &b, &dy})
      for (auto& e : *v) e = u(rng) + 1e-9;
    // Scatter-form reference: every (n, co, ci, tap, output) term once.
    std::vector<double> ry(dy.size()), rdx(x.size(), 0.0), rdw(w.size(), 0.0), rdb(g.c_out, 0.0);
    for (long n = 0; n < g.n; ++n)
      for (long co = 0; co < g.c_out; ++co)
        for (long o = 0; o < ov; ++o) ry[(n * g.c_out + co) * ov + o] = b[co];
    for (long n = 0; n < g.n; ++n)
      for (long co = 0; co < g.c_out; ++co)
        for (long cl = 0; cl < cpg; ++cl)
          for (long t = 0; t < kv; ++t)
            for (long o = 0; o < ov; ++o) {
              long ta[3] = {t / (g.k[1] * g.k[2]), (t / g.k[2]) % g.k[1], t % g.k[2]};
              long oa[3] = {o / (g.out[1] * g.out[2]), (o / g.out[2]) % g.out[1], o % g.out[2]};
              long ia[3];
              bool in = true;
              for (int d = 0; d < 3; ++d) {
                ia[d] = oa[d] * g.s[d] - g.p[d] + ta[d] * g.d[d];
                in = in && ia[d] >= 0 && ia[d] < g.in[d];
              }
              if (!in) continue;
              long ci = (co / kpg) * cpg + cl;
              long xi = (n * g.c_in + ci) * iv + (ia[0] * g.in[1] + ia[1]) * g.in[2] + ia[2];
              long wi = (co * cpg + cl) * kv + t, yi = (n * g.c_out + co) * ov + o;
              ry[yi] += x[xi] * w[wi];
              rdx[xi] += dy[yi] * w[wi];
              rdw[wi] += dy[yi] * x[xi];
            }
    for (long i = 0; i < (long)dy.size(); ++i) rdb[(i / ov) % g.c_out] += dy[i];
    std::vector<double> y(ry.size(), NAN), yr(ry.size(), NAN), dx(x.size(), NAN), dw(w.size(), NAN), db(g.c_out, NAN);
    launch(y.size(), [&] { rb_conv_fwd_f64(x.data(), w.data(), b.data(), y.data(), g, RB_ACT_NONE); });
    launch(yr.size(), [&] { rb_conv_fwd_f64(x.data(), w.data(), nullptr, yr.data(), g, RB_ACT_RELU); });
    launch(dx.size(), [&] { rb_conv_bwd_data_f64(dy.data(), w.data(), dx.data(), g); });
    launch(dw.size(), [&] { rb_conv_bwd_weight_f64(x.data(), dy.data(), dw.data(), g); });
    launch(db.size(), [&] { rb_conv_bias_grad_f64(dy.data(), db.data(), g.n, g.c_out, ov); });
    std::vector<double> relu(ry.size());
    for (long i = 0; i < (long)ry.size(); ++i) {
      double v = ry[i] - b[(i / ov) % g.c_out];
      relu[i] = v < 0 ? 0 : v;
    }
    std::string tag = "conv f64 case " + std::to_string(it);
    compare(tag + " forward", y, ry, 1e-13);
    compare(tag + " forward relu no bias", yr, relu, 1e-13);
    compare(tag + " backward data", dx, rdx, 1e-13);
    compare(tag + " backward weight", dw, rdw, 1e-13);
    compare(tag + " bias grad", db, rdb, 1e-13);
  }
  return cases;
}

int main() {
  int cases = 0;
  for (int it = 0; it < 400; ++it) {
    Geom g{};
    int nd = (int)rnd(1, 3);
    long in[3], k[3], s[3], p[3], pa[3], d[3];
    bool fastish = it % 2 == 0;  // the fast paths' windows
    long kk = rnd(2, 3), ss = kk == 3 ? rnd(1, 2) : 2;
    for (int i = 0; i < nd; ++i) {
      in[i] = rnd(1, nd == 3 ? 7 : 13);
      k[i] = fastish ? kk : rnd(1, 4);
      s[i] = fastish ? ss : rnd(1, 3);
      p[i] = rnd(0, k[i] / 2);
      pa[i] = rnd(0, 1) ? p[i] : rnd(0, k[i] / 2);
      d[i] = fastish ? 1 : rnd(1, 2);
    }
    if (nd == 3 && fastish && it % 4 == 0) nd = 2;  // more 2D fast cases
    bool ceil = rnd(0, 1);
    g.n = rnd(1, 2);
    g.c = rnd(1, 5);
    g.kind = (int)rnd(0, 1);
    g.include_pad = (int)rnd(0, 1);
    g.divisor = g.kind && rnd(0, 3) == 0 ? rnd(1, 7) : 0;
    if (g.kind == 1) for (int i = 0; i < nd; ++i) d[i] = 1;
    if (!make(g, nd, in, k, s, p, pa, d, ceil)) continue;
    ++cases;
    char tag[256];
    snprintf(tag, sizeof tag, "case %d nd=%d in=[%ld,%ld,%ld] k=[%ld,%ld,%ld] s=[%ld,%ld,%ld] p=[%ld,%ld,%ld] "
             "pa=[%ld,%ld,%ld] d=[%ld,%ld,%ld] ceil=%d kind=%d incl=%d div=%ld", it, nd, g.in[0], g.in[1],
             g.in[2], g.k[0], g.k[1], g.k[2], g.s[0], g.s[1], g.s[2], g.p[0], g.p[1], g.p[2], g.pa[0], g.pa[1],
             g.pa[2], g.d[0], g.d[1], g.d[2], (int)ceil, g.kind, g.include_pad, g.divisor);
    run_case<float>(g, "f32", 1e-5, tag);
    run_case<rb_f16>(g, "f16", 2e-3, tag);
    run_case<rb_bf16>(g, "bf16", 1.6e-2, tag);
    run_f64(g, tag);
  }
  // A window of 255 positions or more: the int arg-max buffer.
  {
    Geom g{};
    long in[2] = {17, 19}, k[2] = {16, 17}, s[2] = {1, 2}, p[2] = {3, 8}, pa[2] = {0, 1}, d[2] = {1, 1};
    if (make(g, 2, in, k, s, p, pa, d, true)) {
      g.n = 1; g.c = 3; g.kind = 0;
      run_case<float>(g, "f32", 1e-5, "large window");
      ++cases;
    }
  }
  cases += adaptive_cases();
  cases += conv_f64_cases();
  printf("pool emu: %d geometries, %d comparisons, %d failures\n", cases, checks, failures);
  return failures ? 1 : 0;
}
