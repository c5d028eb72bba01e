//! Softmax and log_softmax on the CPU, forward and backward: contiguous f32 rows through
//! the AVX-512 kernel of [`x86`] when the machine has it, else a lane-vectorized loop over a
//! branch-free `exp` ([`exp_f32`]); strided rows one column at a time. f16/bf16 load to f32;
//! f64 evaluates the float64 reference formulas.

mod x86;

use super::CpuDevice;
use super::elem::{FloatElem, ld, sp, st};
use super::par::{SendPtr, for_range, row_grain};
use crate::base::dtype::DType;
use crate::device::softmax::SoftmaxOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::SoftmaxDesc;
use crate::{Result, with_float_type};

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
                if is_f32 && x86::available() {
                    #[cfg(target_arch = "x86_64")]
                    x86::softmax_rows(
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

/// f64 softmax / log_softmax: the float64 reference formulas ([`crate::ops::nn::softmax_ref`])
/// per (outer, inner) group, in parallel over the groups.
fn softmax_f64(d: &SoftmaxDesc, x: DevPtr, y: DevPtr) {
    let (xp, yp) = (
        SendPtr(x.as_mut_ptr::<f64>()),
        SendPtr(y.as_mut_ptr::<f64>()),
    );
    let (dim, inner, log) = (d.dim, d.inner, d.log);
    for_range(d.outer * inner, row_grain(dim), move |g0, g1| {
        for g in g0..g1 {
            let (o, i) = (g / inner, g % inner);
            let at = |k: usize| (o * dim + k) * inner + i;
            // SAFETY: group g has dim elements at stride inner in x and y (which may alias:
            // every element is read before it is written).
            unsafe {
                let xv = |k: usize| *xp.get().add(at(k));
                let m = (0..dim).map(xv).fold(f64::NEG_INFINITY, f64::max);
                let s: f64 = (0..dim).map(|k| (xv(k) - m).exp()).sum();
                for k in 0..dim {
                    let v = xv(k);
                    *yp.get().add(at(k)) = if log {
                        v - m - s.ln()
                    } else {
                        (v - m).exp() / s
                    };
                }
            }
        }
    });
}

/// The f64 backward from the forward output ([`crate::ops::nn::softmax_backward_ref`]).
fn softmax_backward_f64(d: &SoftmaxDesc, y: DevPtr, dy: DevPtr, dx: DevPtr) {
    let (yp, dyp, dxp) = (
        SendPtr(y.as_mut_ptr::<f64>()),
        SendPtr(dy.as_mut_ptr::<f64>()),
        SendPtr(dx.as_mut_ptr::<f64>()),
    );
    let (dim, inner, log) = (d.dim, d.inner, d.log);
    for_range(d.outer * inner, row_grain(dim), move |g0, g1| {
        for g in g0..g1 {
            let (o, i) = (g / inner, g % inner);
            let at = |k: usize| (o * dim + k) * inner + i;
            // SAFETY: group g has dim elements at stride inner in y, dy and dx (dx may alias
            // either: the sum reads everything before any write).
            unsafe {
                let yv = |k: usize| *yp.get().add(at(k));
                let gv = |k: usize| *dyp.get().add(at(k));
                if log {
                    let s: f64 = (0..dim).map(gv).sum();
                    for k in 0..dim {
                        *dxp.get().add(at(k)) = gv(k) - yv(k).exp() * s;
                    }
                } else {
                    let s: f64 = (0..dim).map(|k| gv(k) * yv(k)).sum();
                    for k in 0..dim {
                        *dxp.get().add(at(k)) = yv(k) * (gv(k) - s);
                    }
                }
            }
        }
    });
}

impl SoftmaxOps for CpuDevice {
    fn softmax(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &SoftmaxDesc,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        let name = if d.log { "log_softmax" } else { "softmax" };
        if dtype == DType::F64 {
            softmax_f64(d, x, y);
            return Ok(());
        }
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
        if dtype == DType::F64 {
            softmax_backward_f64(d, y, dy, dx);
            return Ok(());
        }
        with_float_type!(dtype, name, T => softmax_backward_typed::<T>(d, y, dy, dx));
        Ok(())
    }
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
