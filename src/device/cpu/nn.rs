//! Softmax, normalization, losses and transformer ops on the CPU. f16/bf16 load to f32;
//! statistics accumulate in f64. Rows run in parallel on the device's pool.

use super::CpuDevice;
use super::elem::FloatElem;
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::device::nn::NnOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{
    AttentionDesc, BatchNormDesc, GroupNormDesc, LossDesc, LossKind, Reduction, RopeDesc,
    RowNormDesc, SoftmaxDesc, WeightedSumDesc,
};
use crate::{Error, Result, with_float_type};
use parking_lot::Mutex;

/// Elements per parallel task.
const GRAIN: usize = 1 << 15;

/// Rows per task so that a task touches about `GRAIN` elements.
fn row_grain(width: usize) -> usize {
    (GRAIN / width.max(1)).max(1)
}

#[inline(always)]
unsafe fn ld<T: FloatElem>(p: SendPtr<T>, i: usize) -> f32 {
    // SAFETY: caller's contract (i is inside the buffer).
    unsafe { (*p.get().add(i)).to_f32() }
}

#[inline(always)]
unsafe fn st<T: FloatElem>(p: SendPtr<T>, i: usize, v: f32) {
    // SAFETY: caller's contract.
    unsafe { *p.get().add(i) = T::from_f32(v) }
}

fn sp<T>(p: DevPtr) -> SendPtr<T> {
    SendPtr(p.as_mut_ptr::<T>())
}

/// An optional per-column parameter (NULL: `default`).
#[derive(Clone, Copy)]
struct Param<T> {
    p: SendPtr<T>,
    present: bool,
}

impl<T: FloatElem> Param<T> {
    fn new(p: DevPtr) -> Self {
        Param {
            p: sp(p),
            present: !p.is_null(),
        }
    }
    #[inline(always)]
    fn get(&self, i: usize, default: f32) -> f32 {
        if self.present {
            // SAFETY: a present parameter holds the elements the desc says.
            unsafe { ld(self.p, i) }
        } else {
            default
        }
    }
}

/// Runs `f(start, end, acc)` over `0..n` in parallel, each task with its own zeroed `acc` of
/// `width` f64, and returns the sum of the accumulators.
fn par_reduce(
    n: usize,
    grain: usize,
    width: usize,
    f: impl Fn(usize, usize, &mut [f64]) + Sync,
) -> Vec<f64> {
    let total = Mutex::new(vec![0.0f64; width]);
    for_range(n, grain, |s, e| {
        let mut acc = vec![0.0f64; width];
        f(s, e, &mut acc);
        let mut t = total.lock();
        for (a, b) in t.iter_mut().zip(&acc) {
            *a += b;
        }
    });
    total.into_inner()
}

// ------------------------------------------------------------------------------ fast exp

/// `a * b + c`, fused when `FMA` (only inside functions compiled with the `fma` feature).
#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

/// `exp(x)` in f32 for `x <= 88` (larger inputs give exp(88)), NaN-propagating, within
/// 2 ulp of the exact value: Cephes' expf (range reduction to |r| <= ln2/2 and a degree-6
/// polynomial) written without branches so loops over it vectorize.
#[inline(always)]
pub fn exp_f32(x: f32) -> f32 {
    exp_f32_impl::<false>(x)
}

#[inline(always)]
fn exp_f32_impl<const FMA: bool>(x: f32) -> f32 {
    let x = if x < -87.336_54 { -87.336_54 } else { x };
    let x = if x > 88.0 { 88.0 } else { x };
    // Round x*log2(e) to the nearest integer with the 1.5*2^23 trick: t's low mantissa bits
    // hold n.
    let t = madd::<FMA>(x, std::f32::consts::LOG2_E, 12_582_912.0);
    let n = t - 12_582_912.0;
    let r = madd::<FMA>(n, 2.121_944_4e-4, madd::<FMA>(n, -0.693_359_4, x));
    let mut p = 1.987_569_1e-4_f32;
    p = madd::<FMA>(p, r, 1.398_199_9e-3);
    p = madd::<FMA>(p, r, 8.333_452e-3);
    p = madd::<FMA>(p, r, 4.166_579_6e-2);
    p = madd::<FMA>(p, r, 1.666_666_5e-1);
    p = madd::<FMA>(p, r, 0.5);
    let y = madd::<FMA>(p, r * r, r) + 1.0;
    let pow2 = f32::from_bits(t.to_bits().wrapping_sub(0x4B40_0000 - 127) << 23);
    y * pow2
}

const LANES: usize = 32;

/// Softmax / log-softmax of contiguous f32 rows of `dim` (the hot loop, vectorized by lanes).
#[inline(always)]
fn softmax_rows_body<const FMA: bool>(x: &[f32], y: &mut [f32], dim: usize, log: bool) {
    for (xr, yr) in x.chunks_exact(dim).zip(y.chunks_exact_mut(dim)) {
        let mut acc = [f32::NEG_INFINITY; LANES];
        let xc = xr.chunks_exact(LANES);
        let tail = xc.remainder();
        for c in xc {
            for l in 0..LANES {
                acc[l] = if c[l] > acc[l] { c[l] } else { acc[l] };
            }
        }
        let mut m = f32::NEG_INFINITY;
        for &v in acc.iter().chain(tail) {
            m = if v > m { v } else { m };
        }
        if m == f32::NEG_INFINITY {
            // All -inf (PyTorch gives NaN), or NaNs that the comparisons skipped.
            yr.fill(f32::NAN);
            continue;
        }
        let mut sacc = [0.0f32; LANES];
        let mut s = 0.0f32;
        if log {
            let xc = xr.chunks_exact(LANES);
            let tail = xc.remainder();
            for c in xc {
                for l in 0..LANES {
                    sacc[l] += exp_f32_impl::<FMA>(c[l] - m);
                }
            }
            for &v in tail {
                s += exp_f32_impl::<FMA>(v - m);
            }
            s += sacc.iter().sum::<f32>();
            let off = m + s.ln();
            for (o, &v) in yr.iter_mut().zip(xr) {
                *o = v - off;
            }
        } else {
            let xc = xr.chunks_exact(LANES);
            let tail = xc.remainder();
            let mut yc = yr.chunks_exact_mut(LANES);
            for (c, o) in xc.zip(&mut yc) {
                for l in 0..LANES {
                    let e = exp_f32_impl::<FMA>(c[l] - m);
                    o[l] = e;
                    sacc[l] += e;
                }
            }
            for (o, &v) in yc.into_remainder().iter_mut().zip(tail) {
                let e = exp_f32_impl::<FMA>(v - m);
                *o = e;
                s += e;
            }
            s += sacc.iter().sum::<f32>();
            let inv = 1.0 / s;
            for o in yr.iter_mut() {
                *o *= inv;
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
fn softmax_rows_avx512(x: &[f32], y: &mut [f32], dim: usize, log: bool) {
    softmax_rows_body::<true>(x, y, dim, log)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn softmax_rows_avx2(x: &[f32], y: &mut [f32], dim: usize, log: bool) {
    softmax_rows_body::<true>(x, y, dim, log)
}

fn softmax_rows(x: &[f32], y: &mut [f32], dim: usize, log: bool) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F.
            return unsafe { softmax_rows_avx512(x, y, dim, log) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU has AVX2 and FMA.
            return unsafe { softmax_rows_avx2(x, y, dim, log) };
        }
    }
    softmax_rows_body::<false>(x, y, dim, log)
}

fn softmax_typed<T: FloatElem>(d: &SoftmaxDesc, x: DevPtr, y: DevPtr) {
    let (xp, yp) = (sp::<T>(x), sp::<T>(y));
    let (dim, inner, log) = (d.dim, d.inner, d.log);
    if inner == 1 {
        let is_f32 = std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>();
        for_range(d.outer, row_grain(dim), move |r0, r1| {
            let n = (r1 - r0) * dim;
            // SAFETY: rows r0..r1 of x and y; tasks are disjoint.
            unsafe {
                if is_f32 && super::softmax_x86::available() {
                    #[cfg(target_arch = "x86_64")]
                    super::softmax_x86::softmax_rows(
                        xp.get().add(r0 * dim) as *const f32,
                        yp.get().add(r0 * dim) as *mut f32,
                        r1 - r0,
                        dim,
                        log,
                    );
                } else if is_f32 {
                    let xs = std::slice::from_raw_parts(xp.get().add(r0 * dim) as *const f32, n);
                    let ys = std::slice::from_raw_parts_mut(yp.get().add(r0 * dim) as *mut f32, n);
                    softmax_rows(xs, ys, dim, log);
                } else {
                    let mut xs = vec![0.0f32; dim];
                    let mut ys = vec![0.0f32; dim];
                    for r in r0..r1 {
                        for (k, v) in xs.iter_mut().enumerate() {
                            *v = ld(xp, r * dim + k);
                        }
                        softmax_rows(&xs, &mut ys, dim, log);
                        for (k, v) in ys.iter().enumerate() {
                            st(yp, r * dim + k, *v);
                        }
                    }
                }
            }
        });
        return;
    }
    // Softmax over a strided dim: one column (outer, inner index) at a time.
    for_range(d.outer * inner, row_grain(dim), move |c0, c1| {
        for c in c0..c1 {
            let (o, i) = (c / inner, c % inner);
            let at = |k: usize| (o * dim + k) * inner + i;
            // SAFETY: indices inside [outer, dim, inner]; columns are disjoint.
            unsafe {
                let mut m = f32::NEG_INFINITY;
                for k in 0..dim {
                    m = m.max(ld(xp, at(k)));
                }
                if m == f32::NEG_INFINITY {
                    for k in 0..dim {
                        st(yp, at(k), f32::NAN);
                    }
                    continue;
                }
                let mut s = 0.0f32;
                for k in 0..dim {
                    s += exp_f32(ld(xp, at(k)) - m);
                }
                let (off, inv) = (m + s.ln(), 1.0 / s);
                for k in 0..dim {
                    let v = ld(xp, at(k));
                    st(yp, at(k), if log { v - off } else { exp_f32(v - m) * inv });
                }
            }
        }
    });
}

fn softmax_backward_typed<T: FloatElem>(d: &SoftmaxDesc, y: DevPtr, dy: DevPtr, dx: DevPtr) {
    let (yp, dyp, dxp) = (sp::<T>(y), sp::<T>(dy), sp::<T>(dx));
    let (dim, inner, log) = (d.dim, d.inner, d.log);
    for_range(d.outer * inner, row_grain(dim), move |c0, c1| {
        for c in c0..c1 {
            let (o, i) = (c / inner, c % inner);
            let at = |k: usize| (o * dim + k) * inner + i;
            // SAFETY: indices inside the buffers; columns are disjoint.
            unsafe {
                let mut s = 0.0f32;
                for k in 0..dim {
                    s += if log {
                        ld(dyp, at(k))
                    } else {
                        ld(dyp, at(k)) * ld(yp, at(k))
                    };
                }
                for k in 0..dim {
                    let (yv, g) = (ld(yp, at(k)), ld(dyp, at(k)));
                    st(
                        dxp,
                        at(k),
                        if log { g - yv.exp() * s } else { yv * (g - s) },
                    );
                }
            }
        }
    });
}

// ------------------------------------------------------------------------- normalization

/// Mean and 1/sqrt(biased var + eps) of `n` values `get(k)`, in f64 (two passes).
#[inline(always)]
fn stats(n: usize, eps: f64, get: impl Fn(usize) -> f32) -> (f64, f64) {
    let nf = n.max(1) as f64;
    let mut s = 0.0f64;
    for k in 0..n {
        s += get(k) as f64;
    }
    let m = s / nf;
    let mut v = 0.0f64;
    for k in 0..n {
        let t = get(k) as f64 - m;
        v += t * t;
    }
    (m, 1.0 / (v / nf + eps).sqrt())
}

/// dx of a normalized set: `rstd/m * (m*g - sum(g) - xhat*sum(g*xhat))` with `g = gk(k)`.
#[inline(always)]
fn norm_set_backward(
    len: usize,
    mean: f64,
    rstd: f64,
    x: impl Fn(usize) -> f32,
    g: impl Fn(usize) -> f32,
    mut out: impl FnMut(usize, f32),
) {
    let (mut sg, mut sgx) = (0.0f64, 0.0f64);
    for k in 0..len {
        let xh = (x(k) as f64 - mean) * rstd;
        sg += g(k) as f64;
        sgx += g(k) as f64 * xh;
    }
    let m = len as f64;
    for k in 0..len {
        let xh = (x(k) as f64 - mean) * rstd;
        out(k, (rstd / m * (m * g(k) as f64 - sg - xh * sgx)) as f32);
    }
}

#[allow(clippy::too_many_arguments)]
fn layer_norm_typed<T: FloatElem>(
    d: &RowNormDesc,
    rms: bool,
    x: DevPtr,
    w: DevPtr,
    b: DevPtr,
    y: DevPtr,
    mean: DevPtr,
    rstd: DevPtr,
) {
    let (xp, yp) = (sp::<T>(x), sp::<T>(y));
    let (wp, bp) = (Param::<T>::new(w), Param::<T>::new(b));
    let (mp, rp) = (Param::<f32>::new(mean), Param::<f32>::new(rstd));
    let (cols, eps) = (d.cols, d.eps);
    for_range(d.rows, row_grain(cols), move |r0, r1| {
        for r in r0..r1 {
            let base = r * cols;
            // SAFETY: row r of x, y and the stats; rows are disjoint.
            unsafe {
                let get = |k: usize| ld(xp, base + k);
                let (m, rs) = if rms {
                    let mut s = 0.0f64;
                    for k in 0..cols {
                        s += (get(k) as f64) * (get(k) as f64);
                    }
                    (0.0, 1.0 / (s / cols.max(1) as f64 + eps).sqrt())
                } else {
                    stats(cols, eps, get)
                };
                let (mf, rf) = (m as f32, rs as f32);
                for k in 0..cols {
                    st(
                        yp,
                        base + k,
                        (get(k) - mf) * rf * wp.get(k, 1.0) + bp.get(k, 0.0),
                    );
                }
                if mp.present {
                    *mp.p.get().add(r) = mf;
                }
                if rp.present {
                    *rp.p.get().add(r) = rf;
                }
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn layer_norm_backward_typed<T: FloatElem>(
    d: &RowNormDesc,
    rms: bool,
    x: DevPtr,
    w: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    dw: DevPtr,
    db: DevPtr,
) {
    let (xp, dyp, dxp) = (sp::<T>(x), sp::<T>(dy), sp::<T>(dx));
    let wp = Param::<T>::new(w);
    let (cols, eps) = (d.cols, d.eps);
    let want_dx = !dx.is_null();
    let sums = par_reduce(d.rows, row_grain(cols), 2 * cols, |r0, r1, acc| {
        for r in r0..r1 {
            let base = r * cols;
            // SAFETY: row r of each buffer; dx rows are disjoint.
            unsafe {
                let xg = |k: usize| ld(xp, base + k);
                let g = |k: usize| ld(dyp, base + k) * wp.get(k, 1.0);
                let (m, rs) = if rms {
                    let mut s = 0.0f64;
                    for k in 0..cols {
                        s += (xg(k) as f64) * (xg(k) as f64);
                    }
                    (0.0, 1.0 / (s / cols as f64 + eps).sqrt())
                } else {
                    stats(cols, eps, xg)
                };
                if want_dx {
                    if rms {
                        let mut sgx = 0.0f64;
                        for k in 0..cols {
                            sgx += g(k) as f64 * xg(k) as f64;
                        }
                        let c = rs * rs * rs * sgx / cols as f64;
                        for k in 0..cols {
                            st(dxp, base + k, (rs * g(k) as f64 - c * xg(k) as f64) as f32);
                        }
                    } else {
                        norm_set_backward(cols, m, rs, xg, g, |k, v| st(dxp, base + k, v));
                    }
                }
                for k in 0..cols {
                    let gy = ld(dyp, base + k) as f64;
                    acc[k] += gy * (xg(k) as f64 - m) * rs;
                    acc[cols + k] += gy;
                }
            }
        }
    });
    write_f64::<T>(dw, &sums[..cols]);
    write_f64::<T>(db, &sums[cols..]);
}

/// Stores f64 values to an optional buffer of `T`.
fn write_f64<T: FloatElem>(p: DevPtr, vals: &[f64]) {
    if p.is_null() {
        return;
    }
    let q = sp::<T>(p);
    for (i, v) in vals.iter().enumerate() {
        // SAFETY: the buffer holds vals.len() elements (the desc's contract).
        unsafe { st(q, i, *v as f32) };
    }
}

#[allow(clippy::too_many_arguments)]
fn group_norm_typed<T: FloatElem>(
    d: &GroupNormDesc,
    x: DevPtr,
    w: DevPtr,
    b: DevPtr,
    y: DevPtr,
    mean: DevPtr,
    rstd: DevPtr,
) {
    let (xp, yp) = (sp::<T>(x), sp::<T>(y));
    let (wp, bp) = (Param::<T>::new(w), Param::<T>::new(b));
    let (mp, rp) = (Param::<f32>::new(mean), Param::<f32>::new(rstd));
    let d = *d;
    let cpg = d.c / d.groups;
    let len = cpg * d.hw;
    for_range(d.n * d.groups, row_grain(len), move |s0, s1| {
        for set in s0..s1 {
            let (ni, g) = (set / d.groups, set % d.groups);
            let base = (ni * d.c + g * cpg) * d.hw;
            // SAFETY: the set's block of x and y; sets are disjoint.
            unsafe {
                let (m, rs) = stats(len, d.eps, |k| ld(xp, base + k));
                for k in 0..len {
                    let ch = g * cpg + k / d.hw;
                    let v = (ld(xp, base + k) as f64 - m) * rs;
                    st(yp, base + k, v as f32 * wp.get(ch, 1.0) + bp.get(ch, 0.0));
                }
                if mp.present {
                    *mp.p.get().add(set) = m as f32;
                }
                if rp.present {
                    *rp.p.get().add(set) = rs as f32;
                }
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn group_norm_backward_typed<T: FloatElem>(
    d: &GroupNormDesc,
    x: DevPtr,
    w: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    dw: DevPtr,
    db: DevPtr,
) {
    let (xp, dyp, dxp) = (sp::<T>(x), sp::<T>(dy), sp::<T>(dx));
    let wp = Param::<T>::new(w);
    let d = *d;
    let cpg = d.c / d.groups;
    let len = cpg * d.hw;
    let want_dx = !dx.is_null();
    let sums = par_reduce(d.n * d.groups, row_grain(len), 2 * d.c, |s0, s1, acc| {
        for set in s0..s1 {
            let (ni, g) = (set / d.groups, set % d.groups);
            let base = (ni * d.c + g * cpg) * d.hw;
            // SAFETY: the set's block of each buffer; sets are disjoint.
            unsafe {
                let xg = |k: usize| ld(xp, base + k);
                let (m, rs) = stats(len, d.eps, xg);
                if want_dx {
                    let gk = |k: usize| ld(dyp, base + k) * wp.get(g * cpg + k / d.hw, 1.0);
                    norm_set_backward(len, m, rs, xg, gk, |k, v| st(dxp, base + k, v));
                }
                for k in 0..len {
                    let ch = g * cpg + k / d.hw;
                    let gy = ld(dyp, base + k) as f64;
                    acc[ch] += gy * (xg(k) as f64 - m) * rs;
                    acc[d.c + ch] += gy;
                }
            }
        }
    });
    write_f64::<T>(dw, &sums[..d.c]);
    write_f64::<T>(db, &sums[d.c..]);
}

/// Mean and rstd of channel `ch`: the batch's (training) or the running stats (eval).
///
/// # Safety
/// The pointers hold the elements the desc says.
unsafe fn bn_stats<T: FloatElem>(
    d: &BatchNormDesc,
    xp: SendPtr<T>,
    rm: Param<T>,
    rv: Param<T>,
    ch: usize,
) -> (f64, f64) {
    if d.training {
        let hw = d.hw;
        let c = d.c;
        // SAFETY: caller's contract.
        stats(d.n * hw, d.eps, |k| unsafe {
            ld(xp, ((k / hw) * c + ch) * hw + k % hw)
        })
    } else {
        let (m, v) = (rm.get(ch, 0.0) as f64, rv.get(ch, 1.0) as f64);
        (m, 1.0 / (v + d.eps).sqrt())
    }
}

impl NnOps for CpuDevice {
    fn softmax(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &SoftmaxDesc,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        let name = if d.log { "log_softmax" } else { "softmax" };
        with_float_type!(dtype, name, T => softmax_typed::<T>(d, x, y));
        Ok(())
    }

    fn softmax_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &SoftmaxDesc,
        y: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        let name = if d.log {
            "log_softmax_backward"
        } else {
            "softmax_backward"
        };
        with_float_type!(dtype, name, T => softmax_backward_typed::<T>(d, y, dy, dx));
        Ok(())
    }

    fn layer_norm(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        y: DevPtr,
        mean: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "layer_norm", T => layer_norm_typed::<T>(d, false, x, w, b, y, mean, rstd));
        Ok(())
    }

    fn layer_norm_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "layer_norm_backward", T =>
            layer_norm_backward_typed::<T>(d, false, x, w, dy, dx, dw, db));
        Ok(())
    }

    fn rms_norm(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        y: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "rms_norm", T =>
            layer_norm_typed::<T>(d, true, x, w, DevPtr::NULL, y, DevPtr::NULL, rstd));
        Ok(())
    }

    fn rms_norm_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "rms_norm_backward", T =>
            layer_norm_backward_typed::<T>(d, true, x, w, dy, dx, dw, DevPtr::NULL));
        Ok(())
    }

    fn group_norm(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &GroupNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        y: DevPtr,
        mean: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "group_norm", T => group_norm_typed::<T>(d, x, w, b, y, mean, rstd));
        Ok(())
    }

    fn group_norm_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &GroupNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "group_norm_backward", T =>
            group_norm_backward_typed::<T>(d, x, w, dy, dx, dw, db));
        Ok(())
    }

    fn batch_norm(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        y: DevPtr,
        save_mean: DevPtr,
        save_invstd: DevPtr,
    ) -> Result<()> {
        if !d.training && (running_mean.is_null() || running_var.is_null()) {
            return Err(Error::invalid(
                "batch_norm: running_mean and running_var are required in eval mode",
            ));
        }
        with_float_type!(dtype, "batch_norm", T => {
            let (xp, yp) = (sp::<T>(x), sp::<T>(y));
            let (wp, bp) = (Param::<T>::new(w), Param::<T>::new(b));
            let (rm, rv) = (Param::<T>::new(running_mean), Param::<T>::new(running_var));
            let (sm, si) = (Param::<f32>::new(save_mean), Param::<f32>::new(save_invstd));
            let d = *d;
            for_range(d.c, row_grain(d.n * d.hw), move |c0, c1| {
                for ch in c0..c1 {
                    // SAFETY: channel ch of every buffer; channels are disjoint.
                    unsafe {
                        let (m, rs) = bn_stats(&d, xp, rm, rv, ch);
                        let (wc, bc) = (wp.get(ch, 1.0), bp.get(ch, 0.0));
                        for ni in 0..d.n {
                            let base = (ni * d.c + ch) * d.hw;
                            for k in 0..d.hw {
                                let v = ((ld(xp, base + k) as f64 - m) * rs) as f32;
                                st(yp, base + k, v * wc + bc);
                            }
                        }
                        if d.training {
                            if rm.present && rv.present {
                                let cnt = (d.n * d.hw) as f64;
                                let var = 1.0 / (rs * rs) - d.eps;
                                let mo = d.momentum;
                                let nm = (1.0 - mo) * ld(rm.p, ch) as f64 + mo * m;
                                let nv = (1.0 - mo) * ld(rv.p, ch) as f64
                                    + mo * var * cnt / (cnt - 1.0);
                                st(rm.p, ch, nm as f32);
                                st(rv.p, ch, nv as f32);
                            }
                            if sm.present {
                                *sm.p.get().add(ch) = m as f32;
                            }
                            if si.present {
                                *si.p.get().add(ch) = rs as f32;
                            }
                        }
                    }
                }
            });
        });
        Ok(())
    }

    fn batch_norm_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        if !d.training && (running_mean.is_null() || running_var.is_null()) {
            return Err(Error::invalid(
                "batch_norm_backward: running_mean and running_var are required in eval mode",
            ));
        }
        with_float_type!(dtype, "batch_norm_backward", T => {
            let (xp, dyp, dxp) = (sp::<T>(x), sp::<T>(dy), sp::<T>(dx));
            let wp = Param::<T>::new(w);
            let (rm, rv) = (Param::<T>::new(running_mean), Param::<T>::new(running_var));
            let (dwp, dbp) = (Param::<T>::new(dw), Param::<T>::new(db));
            let want_dx = !dx.is_null();
            let d = *d;
            let hw = d.hw;
            let c = d.c;
            for_range(d.c, row_grain(d.n * d.hw), move |c0, c1| {
                for ch in c0..c1 {
                    // SAFETY: channel ch of every buffer; channels are disjoint.
                    unsafe {
                        let (m, rs) = bn_stats(&d, xp, rm, rv, ch);
                        let idx = |k: usize| ((k / hw) * c + ch) * hw + k % hw;
                        let len = d.n * hw;
                        let wc = wp.get(ch, 1.0);
                        let xg = |k: usize| ld(xp, idx(k));
                        let g = |k: usize| ld(dyp, idx(k)) * wc;
                        if want_dx {
                            if d.training {
                                norm_set_backward(len, m, rs, xg, g, |k, v| st(dxp, idx(k), v));
                            } else {
                                for k in 0..len {
                                    st(dxp, idx(k), (g(k) as f64 * rs) as f32);
                                }
                            }
                        }
                        let (mut sw, mut sb) = (0.0f64, 0.0f64);
                        for k in 0..len {
                            let gy = ld(dyp, idx(k)) as f64;
                            sw += gy * (xg(k) as f64 - m) * rs;
                            sb += gy;
                        }
                        if dwp.present {
                            st(dwp.p, ch, sw as f32);
                        }
                        if dbp.present {
                            st(dbp.p, ch, sb as f32);
                        }
                    }
                }
            });
        });
        Ok(())
    }

    fn loss(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &LossDesc,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        out: DevPtr,
    ) -> Result<()> {
        let cnt = check_targets(d, target, target_dtype)?;
        with_float_type!(dtype, d.kind.name(), T => loss_typed::<T>(d, input, target, target_dtype, out, cnt));
        Ok(())
    }

    fn loss_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &LossDesc,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        let cnt = check_targets(d, target, target_dtype)?;
        with_float_type!(dtype, d.kind.name(), T =>
            loss_backward_typed::<T>(d, input, target, target_dtype, grad_out, grad_input, cnt));
        Ok(())
    }

    fn rope(&self, _s: RawStream, dtype: DType, d: &RopeDesc, x: DevPtr, y: DevPtr) -> Result<()> {
        with_float_type!(dtype, "rope", T => rope_typed::<T>(d, x, y));
        Ok(())
    }

    fn attention(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "scaled_dot_product_attention", T => attention_typed::<T>(d, q, k, v, out));
        Ok(())
    }

    fn attention_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "scaled_dot_product_attention_backward", T =>
            attention_backward_typed::<T>(d, q, k, v, dout, dq, dk, dv));
        Ok(())
    }

    fn weighted_sum(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &WeightedSumDesc,
        x: DevPtr,
        w: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "weighted_sum", T => {
            let (xp, wp, yp) = (sp::<T>(x), sp::<T>(w), sp::<T>(y));
            let d = *d;
            for_range(d.outer, row_grain(d.n * d.d), move |o0, o1| {
                let mut acc = vec![0.0f32; d.d];
                for o in o0..o1 {
                    acc.fill(0.0);
                    // SAFETY: block o of each buffer; blocks are disjoint.
                    unsafe {
                        for k in 0..d.n {
                            let wk = ld(wp, o * d.n + k);
                            let base = (o * d.n + k) * d.d;
                            for (e, a) in acc.iter_mut().enumerate() {
                                *a += wk * ld(xp, base + e);
                            }
                        }
                        for (e, a) in acc.iter().enumerate() {
                            st(yp, o * d.d + e, *a);
                        }
                    }
                }
            });
        });
        Ok(())
    }

    fn weighted_sum_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &WeightedSumDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "weighted_sum_backward", T => {
            let (xp, wp, dyp) = (sp::<T>(x), sp::<T>(w), sp::<T>(dy));
            let (dxp, dwp) = (Param::<T>::new(dx), Param::<T>::new(dw));
            let d = *d;
            for_range(d.outer, row_grain(d.n * d.d), move |o0, o1| {
                for o in o0..o1 {
                    // SAFETY: block o of each buffer; blocks are disjoint.
                    unsafe {
                        for k in 0..d.n {
                            let wk = ld(wp, o * d.n + k);
                            let base = (o * d.n + k) * d.d;
                            let mut s = 0.0f32;
                            for e in 0..d.d {
                                let g = ld(dyp, o * d.d + e);
                                s += ld(xp, base + e) * g;
                                if dxp.present {
                                    st(dxp.p, base + e, wk * g);
                                }
                            }
                            if dwp.present {
                                st(dwp.p, o * d.n + k, s);
                            }
                        }
                    }
                }
            });
        });
        Ok(())
    }
}

// ---------------------------------------------------------------------------------- losses

/// Reads class index `i` of an i32/i64 target.
///
/// # Safety
/// `p` holds more than `i` elements of `dt`.
#[inline(always)]
unsafe fn target_at(p: DevPtr, dt: DType, i: usize) -> i64 {
    // SAFETY: caller's contract.
    unsafe {
        if dt == DType::I32 {
            *p.as_ptr::<i32>().add(i) as i64
        } else {
            *p.as_ptr::<i64>().add(i)
        }
    }
}

/// Checks class targets (in range or ignore_index) and returns the divisor of `mean`.
fn check_targets(d: &LossDesc, target: DevPtr, dt: DType) -> Result<f64> {
    if !d.kind.is_class() {
        return Ok(d.items() as f64);
    }
    if !matches!(dt, DType::I32 | DType::I64) {
        return Err(Error::dtype(format!(
            "{}: target dtype {dt} is not i32 or i64",
            d.kind.name()
        )));
    }
    let mut cnt = 0usize;
    for i in 0..d.items() {
        // SAFETY: the target holds items() elements.
        let t = unsafe { target_at(target, dt, i) };
        if t == d.ignore_index {
            continue;
        }
        if t < 0 || t as u64 >= d.c as u64 {
            return Err(Error::invalid(format!(
                "{}: target {t} at index {i} is out of range [0, {})",
                d.kind.name(),
                d.c
            )));
        }
        cnt += 1;
    }
    Ok(cnt as f64)
}

/// The loss of item `r` (0 for an ignored target), in f64. Cross-entropy is one fused pass
/// over the item's logits: max, log-sum-exp, the target's logit and the logits' sum.
///
/// # Safety
/// Indices inside the buffers the desc describes.
#[inline(always)]
unsafe fn loss_item<T: FloatElem>(
    d: &LossDesc,
    xp: SendPtr<T>,
    target: DevPtr,
    tdt: DType,
    r: usize,
) -> f64 {
    // SAFETY: caller's contract.
    unsafe {
        match d.kind {
            LossKind::Mse => {
                let t = sp::<T>(target);
                let e = ld(xp, r) as f64 - ld(t, r) as f64;
                e * e
            }
            LossKind::Bce => {
                let t = ld(sp::<T>(target), r) as f64;
                let x = ld(xp, r) as f64;
                -(t * x.ln().max(-100.0) + (1.0 - t) * (1.0 - x).ln().max(-100.0))
            }
            LossKind::Nll | LossKind::CrossEntropy => {
                let t = target_at(target, tdt, r);
                if t == d.ignore_index {
                    return 0.0;
                }
                let (ni, i) = (r / d.inner, r % d.inner);
                let at = |c: usize| (ni * d.c + c) * d.inner + i;
                if d.kind == LossKind::Nll {
                    return -(ld(xp, at(t as usize)) as f64);
                }
                let (lse, sum) = lse_sum(d, xp, at);
                let xt = ld(xp, at(t as usize)) as f64;
                let eps = d.label_smoothing;
                lse - (1.0 - eps) * xt - eps / d.c as f64 * sum
            }
        }
    }
}

/// log-sum-exp and plain sum of one item's logits.
///
/// # Safety
/// `at(c)` is inside the logits for `c < d.c`.
#[inline(always)]
unsafe fn lse_sum<T: FloatElem>(
    d: &LossDesc,
    xp: SendPtr<T>,
    at: impl Fn(usize) -> usize,
) -> (f64, f64) {
    // SAFETY: caller's contract.
    unsafe {
        let mut m = f32::NEG_INFINITY;
        let mut sum = 0.0f64;
        for c in 0..d.c {
            let v = ld(xp, at(c));
            m = m.max(v);
            sum += v as f64;
        }
        let mut s = 0.0f64;
        for c in 0..d.c {
            s += ((ld(xp, at(c)) - m) as f64).exp();
        }
        (m as f64 + s.ln(), sum)
    }
}

fn loss_typed<T: FloatElem>(
    d: &LossDesc,
    input: DevPtr,
    target: DevPtr,
    tdt: DType,
    out: DevPtr,
    cnt: f64,
) {
    let xp = sp::<T>(input);
    let op = sp::<T>(out);
    let d = *d;
    let none = d.reduction == Reduction::None;
    let total = par_reduce(d.items(), row_grain(d.c), 1, |r0, r1, acc| {
        for r in r0..r1 {
            // SAFETY: item r of each buffer; out items are disjoint.
            unsafe {
                let l = loss_item(&d, xp, target, tdt, r);
                if none {
                    st(op, r, l as f32);
                } else {
                    acc[0] += l;
                }
            }
        }
    });
    if !none {
        let v = if d.reduction == Reduction::Mean {
            total[0] / cnt
        } else {
            total[0]
        };
        // SAFETY: a reduced loss has one element.
        unsafe { st(op, 0, v as f32) };
    }
}

fn loss_backward_typed<T: FloatElem>(
    d: &LossDesc,
    input: DevPtr,
    target: DevPtr,
    tdt: DType,
    grad_out: DevPtr,
    grad_input: DevPtr,
    cnt: f64,
) {
    let (xp, gp, gi) = (sp::<T>(input), sp::<T>(grad_out), sp::<T>(grad_input));
    let d = *d;
    // SAFETY: a reduced loss's gradient has one element.
    let g0 = unsafe { ld(gp, 0) } as f64;
    let scale = match d.reduction {
        Reduction::Mean => g0 / cnt,
        _ => g0,
    };
    for_range(d.items(), row_grain(d.c), move |r0, r1| {
        for r in r0..r1 {
            // SAFETY: item r of each buffer; items own disjoint grad_input elements.
            unsafe {
                let g = if d.reduction == Reduction::None {
                    ld(gp, r) as f64
                } else {
                    scale
                };
                match d.kind {
                    LossKind::Mse => {
                        let t = ld(sp::<T>(target), r) as f64;
                        st(gi, r, (2.0 * (ld(xp, r) as f64 - t) * g) as f32);
                    }
                    LossKind::Bce => {
                        let t = ld(sp::<T>(target), r) as f64;
                        let x = ld(xp, r) as f64;
                        st(gi, r, ((x - t) / ((1.0 - x) * x).max(1e-12) * g) as f32);
                    }
                    LossKind::Nll | LossKind::CrossEntropy => {
                        let t = target_at(target, tdt, r);
                        let (ni, i) = (r / d.inner, r % d.inner);
                        let at = |c: usize| (ni * d.c + c) * d.inner + i;
                        if t == d.ignore_index {
                            for c in 0..d.c {
                                st(gi, at(c), 0.0);
                            }
                            continue;
                        }
                        let t = t as usize;
                        if d.kind == LossKind::Nll {
                            for c in 0..d.c {
                                st(gi, at(c), if c == t { -g as f32 } else { 0.0 });
                            }
                            continue;
                        }
                        let (lse, _) = lse_sum(&d, xp, at);
                        let eps = d.label_smoothing;
                        let u = eps / d.c as f64;
                        for c in 0..d.c {
                            let p = (ld(xp, at(c)) as f64 - lse).exp();
                            let oh = if c == t { 1.0 - eps } else { 0.0 };
                            st(gi, at(c), ((p - oh - u) * g) as f32);
                        }
                    }
                }
            }
        }
    });
}

// ----------------------------------------------------------------------------- transformer

fn rope_typed<T: FloatElem>(d: &RopeDesc, x: DevPtr, y: DevPtr) {
    let half = d.dim / 2;
    // cos/sin per (position, pair), computed in f64.
    let mut table = vec![(0.0f32, 0.0f32); d.seq * half];
    for s in 0..d.seq {
        for i in 0..half {
            let (sn, cs) = d.theta(s, i).sin_cos();
            table[s * half + i] = (cs as f32, sn as f32);
        }
    }
    let (xp, yp) = (sp::<T>(x), sp::<T>(y));
    let d = *d;
    let table = &table;
    for_range(
        d.outer * d.seq * d.inner,
        row_grain(d.dim),
        move |v0, v1| {
            for v in v0..v1 {
                let s = (v / d.inner) % d.seq;
                let base = v * d.dim;
                // SAFETY: vector v of x and y; vectors are disjoint (x may alias y per element).
                unsafe {
                    for i in 0..half {
                        let (cs, sn) = table[s * half + i];
                        let (a, b) = (ld(xp, base + i), ld(xp, base + i + half));
                        st(yp, base + i, a * cs - b * sn);
                        st(yp, base + i + half, b * cs + a * sn);
                    }
                }
            }
        },
    );
}

/// Scores, softmax probabilities of query row `i` of batch `b` into `p` (len = keys).
///
/// # Safety
/// Indices inside q and k.
#[inline(always)]
unsafe fn attn_row_probs<T: FloatElem>(
    d: &AttentionDesc,
    qp: SendPtr<T>,
    kp: SendPtr<T>,
    qrow: &mut [f32],
    b: usize,
    i: usize,
    p: &mut [f32],
) {
    // SAFETY: caller's contract.
    unsafe {
        for (e, q) in qrow.iter_mut().enumerate() {
            *q = ld(qp, (b * d.sq + i) * d.d + e);
        }
        let scale = d.scale as f32;
        let mut m = f32::NEG_INFINITY;
        for (j, pj) in p.iter_mut().enumerate() {
            let kb = (b * d.sk + j) * d.d;
            let mut s = 0.0f32;
            for (e, q) in qrow.iter().enumerate() {
                s += q * ld(kp, kb + e);
            }
            *pj = s * scale;
            m = m.max(*pj);
        }
        let mut z = 0.0f32;
        for pj in p.iter_mut() {
            *pj = exp_f32(*pj - m);
            z += *pj;
        }
        let inv = 1.0 / z;
        for pj in p.iter_mut() {
            *pj *= inv;
        }
    }
}

fn attention_typed<T: FloatElem>(d: &AttentionDesc, q: DevPtr, k: DevPtr, v: DevPtr, o: DevPtr) {
    let (qp, kp, vp, op) = (sp::<T>(q), sp::<T>(k), sp::<T>(v), sp::<T>(o));
    let d = *d;
    for_range(
        d.batch * d.sq,
        row_grain(d.sk * (d.d + d.dv)),
        move |r0, r1| {
            let mut p = vec![0.0f32; d.sk];
            let mut qrow = vec![0.0f32; d.d];
            let mut acc = vec![0.0f32; d.dv];
            for r in r0..r1 {
                let (b, i) = (r / d.sq, r % d.sq);
                let nk = d.keys(i);
                // SAFETY: row r of q/out and batch b of k/v; rows are disjoint.
                unsafe {
                    acc.fill(0.0);
                    if nk > 0 {
                        attn_row_probs(&d, qp, kp, &mut qrow, b, i, &mut p[..nk]);
                        for (j, &pj) in p[..nk].iter().enumerate() {
                            let vb = (b * d.sk + j) * d.dv;
                            for (e, a) in acc.iter_mut().enumerate() {
                                *a += pj * ld(vp, vb + e);
                            }
                        }
                    }
                    for (e, a) in acc.iter().enumerate() {
                        st(op, r * d.dv + e, if nk > 0 { *a } else { f32::NAN });
                    }
                }
            }
        },
    );
}

#[allow(clippy::too_many_arguments)]
fn attention_backward_typed<T: FloatElem>(
    d: &AttentionDesc,
    q: DevPtr,
    k: DevPtr,
    v: DevPtr,
    dout: DevPtr,
    dq: DevPtr,
    dk: DevPtr,
    dv: DevPtr,
) {
    let (qp, kp, vp, dop) = (sp::<T>(q), sp::<T>(k), sp::<T>(v), sp::<T>(dout));
    let (dqp, dkp, dvp) = (sp::<T>(dq), sp::<T>(dk), sp::<T>(dv));
    let d = *d;
    let work = d.sq * d.sk * (d.d + d.dv);
    for_range(d.batch, (GRAIN / work.max(1)).max(1), move |b0, b1| {
        let mut p = vec![0.0f32; d.sk];
        let mut dp = vec![0.0f32; d.sk];
        let mut qrow = vec![0.0f32; d.d];
        let mut dqrow = vec![0.0f32; d.d];
        let mut dka = vec![0.0f32; d.sk * d.d];
        let mut dva = vec![0.0f32; d.sk * d.dv];
        for b in b0..b1 {
            dka.fill(0.0);
            dva.fill(0.0);
            // SAFETY: batch b of every buffer; batches are disjoint.
            unsafe {
                for i in 0..d.sq {
                    let nk = d.keys(i);
                    dqrow.fill(0.0);
                    if nk > 0 {
                        attn_row_probs(&d, qp, kp, &mut qrow, b, i, &mut p[..nk]);
                        let ob = (b * d.sq + i) * d.dv;
                        let mut dot = 0.0f32;
                        for j in 0..nk {
                            let vb = (b * d.sk + j) * d.dv;
                            let mut s = 0.0f32;
                            for e in 0..d.dv {
                                let g = ld(dop, ob + e);
                                s += g * ld(vp, vb + e);
                                dva[j * d.dv + e] += p[j] * g;
                            }
                            dp[j] = s;
                            dot += p[j] * s;
                        }
                        let scale = d.scale as f32;
                        for j in 0..nk {
                            let ds = p[j] * (dp[j] - dot) * scale;
                            let kb = (b * d.sk + j) * d.d;
                            for e in 0..d.d {
                                dqrow[e] += ds * ld(kp, kb + e);
                                dka[j * d.d + e] += ds * qrow[e];
                            }
                        }
                    }
                    for (e, v) in dqrow.iter().enumerate() {
                        st(dqp, (b * d.sq + i) * d.d + e, *v);
                    }
                }
                for (i, v) in dka.iter().enumerate() {
                    st(dkp, b * d.sk * d.d + i, *v);
                }
                for (i, v) in dva.iter().enumerate() {
                    st(dvp, b * d.sk * d.dv + i, *v);
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{exp_f32, exp_f32_impl};

    /// The portable row kernel (used without AVX2/FMA) agrees with the dispatched one.
    #[test]
    fn portable_softmax_rows_match_dispatched() {
        let dim = 1000;
        let x: Vec<f32> = (0..3 * dim)
            .map(|i| crate::ops::random::normal_f32(5, i as u64) * 4.0)
            .collect();
        for log in [false, true] {
            let (mut a, mut b) = (vec![f32::NAN; x.len()], vec![f32::NAN; x.len()]);
            super::softmax_rows_body::<false>(&x, &mut a, dim, log);
            super::softmax_rows(&x, &mut b, dim, log);
            for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                assert!(
                    (p - q).abs() <= 1e-6 + 1e-5 * q.abs(),
                    "log={log} [{i}]: {p} vs {q}"
                );
            }
        }
    }

    #[test]
    fn fast_exp_is_within_two_ulp() {
        let mut worst = 0.0f64;
        let mut x = -87.0f32;
        while x <= 88.0 {
            let want = (x as f64).exp();
            for got in [exp_f32(x), exp_f32_impl::<true>(x)] {
                worst = worst.max(((got as f64 - want) / want).abs());
            }
            x += 0.001_3;
        }
        // 2 ulp of f32 is 2^-22 relative.
        assert!(worst < 2.4e-7, "worst relative error {worst}");
        assert!(exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f32(f32::NEG_INFINITY), exp_f32(-87.336_54));
        assert!(exp_f32(-87.336_54) < 1.2e-38 * 1.01);
    }
}
