//! Losses on the CPU (mse, bce, nll, cross_entropy) and their input gradients. f16/bf16 load to f32;
//! statistics accumulate in f64. Rows run in parallel on the device's pool.

use super::CpuDevice;
use super::elem::{FloatElem, ld, sp, st};
use super::par::{SendPtr, for_range, par_reduce, row_grain};
use crate::base::dtype::DType;
use crate::device::loss::LossOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{LossDesc, LossKind, Reduction};
use crate::{Error, Result, with_float_type};

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

impl LossOps for CpuDevice {
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
}
