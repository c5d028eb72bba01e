//! Losses on the CPU (mse, bce, nll, cross_entropy) and their input gradients. f32/f16/bf16
//! load to f32 and widen, f64 stays f64 ([`WideElem`]); everything is computed in f64 and
//! stored once. Rows run in parallel on the device's pool.

use super::CpuDevice;
use super::elem::{WideElem, ld_wide as ld, sp, st_wide as st};
use super::par::{SendPtr, for_range, par_reduce, row_grain};
use crate::base::dtype::DType;
use crate::device::loss::LossOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{LossDesc, LossExt, LossKind, Reduction};
use crate::{Error, Result, with_floating_type};

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
unsafe fn loss_item<T: WideElem>(
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
                let e = ld(xp, r) - ld(t, r);
                e * e
            }
            LossKind::Bce => {
                let t = ld(sp::<T>(target), r);
                let x = ld(xp, r);
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
                    return -(ld(xp, at(t as usize)));
                }
                let (lse, sum) = lse_sum(d, xp, at);
                let xt = ld(xp, at(t as usize));
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
unsafe fn lse_sum<T: WideElem>(
    d: &LossDesc,
    xp: SendPtr<T>,
    at: impl Fn(usize) -> usize,
) -> (f64, f64) {
    // SAFETY: caller's contract.
    unsafe {
        let mut m = f64::NEG_INFINITY;
        let mut sum = 0.0f64;
        for c in 0..d.c {
            let v = ld(xp, at(c));
            m = m.max(v);
            sum += v;
        }
        let mut s = 0.0f64;
        for c in 0..d.c {
            s += (ld(xp, at(c)) - m).exp();
        }
        (m + s.ln(), sum)
    }
}

fn loss_typed<T: WideElem>(
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
                    st(op, r, l);
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
        unsafe { st(op, 0, v) };
    }
}

fn loss_backward_typed<T: WideElem>(
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
    let g0 = unsafe { ld(gp, 0) };
    let scale = match d.reduction {
        Reduction::Mean => g0 / cnt,
        _ => g0,
    };
    for_range(d.items(), row_grain(d.c), move |r0, r1| {
        for r in r0..r1 {
            // SAFETY: item r of each buffer; items own disjoint grad_input elements.
            unsafe {
                let g = if d.reduction == Reduction::None {
                    ld(gp, r)
                } else {
                    scale
                };
                match d.kind {
                    LossKind::Mse => {
                        let t = ld(sp::<T>(target), r);
                        st(gi, r, 2.0 * (ld(xp, r) - t) * g);
                    }
                    LossKind::Bce => {
                        let t = ld(sp::<T>(target), r);
                        let x = ld(xp, r);
                        st(gi, r, (x - t) / ((1.0 - x) * x).max(1e-12) * g);
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
                                st(gi, at(c), if c == t { -g } else { 0.0 });
                            }
                            continue;
                        }
                        let (lse, _) = lse_sum(&d, xp, at);
                        let eps = d.label_smoothing;
                        let u = eps / d.c as f64;
                        for c in 0..d.c {
                            let p = (ld(xp, at(c)) - lse).exp();
                            let oh = if c == t { 1.0 - eps } else { 0.0 };
                            st(gi, at(c), (p - oh - u) * g);
                        }
                    }
                }
            }
        }
    });
}

// ---- losses with class weights / class-probability targets (LossExt) -------------------

/// The weights of a [`LossExt`] loss: `[C]` class weights widened to f64, or bce's
/// input-shaped weight read per element; absent: ones.
#[derive(Clone, Copy)]
struct ExtWeights<'a, T> {
    class: Option<&'a [f64]>,
    elem: Option<SendPtr<T>>,
}

impl<T: WideElem> ExtWeights<'_, T> {
    #[inline(always)]
    fn class(&self, c: usize) -> f64 {
        self.class.map_or(1.0, |w| w[c])
    }
    /// # Safety
    /// `r` is inside bce's weight.
    #[inline(always)]
    unsafe fn elem(&self, r: usize) -> f64 {
        // SAFETY: caller's contract.
        self.elem.map_or(1.0, |w| unsafe { ld(w, r) })
    }
}

/// Checks class targets (in range or ignore_index) and returns the divisor of `mean`: the
/// summed weight of the non-ignored targets, or the item count (probabilities, bce).
fn ext_divisor(
    d: &LossDesc,
    ext: &LossExt,
    target: DevPtr,
    dt: DType,
    cw: Option<&[f64]>,
) -> Result<f64> {
    if ext.prob_target || !d.kind.is_class() {
        return Ok(d.items() as f64);
    }
    if !matches!(dt, DType::I32 | DType::I64) {
        return Err(Error::dtype(format!(
            "{}: target dtype {dt} is not i32 or i64",
            d.kind.name()
        )));
    }
    let mut total = 0.0f64;
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
        total += cw.map_or(1.0, |w| w[t as usize]);
    }
    Ok(total)
}

/// The per-class coefficients `a` of a cross_entropy item (its loss is
/// `sum_c a[c] (lse - x[c])`), written into `a`; false for an ignored item.
///
/// # Safety
/// Indices inside the buffers the desc describes.
#[inline(always)]
unsafe fn ce_coefficients<T: WideElem>(
    d: &LossDesc,
    ext: &LossExt,
    target: DevPtr,
    tdt: DType,
    w: &ExtWeights<'_, T>,
    r: usize,
    a: &mut [f64],
) -> bool {
    let (ni, i) = (r / d.inner, r % d.inner);
    let at = |c: usize| (ni * d.c + c) * d.inner + i;
    let ls = d.label_smoothing;
    let u = ls / d.c as f64;
    // SAFETY: caller's contract.
    unsafe {
        if ext.prob_target {
            let tp = sp::<T>(target);
            for (c, ac) in a.iter_mut().enumerate() {
                *ac = w.class(c) * (ld(tp, at(c)) * (1.0 - ls) + u);
            }
            return true;
        }
        let t = target_at(target, tdt, r);
        if t == d.ignore_index {
            return false;
        }
        for (c, ac) in a.iter_mut().enumerate() {
            *ac = u * w.class(c);
        }
        a[t as usize] += (1.0 - ls) * w.class(t as usize);
        true
    }
}

/// log-sum-exp of one item's logits, in f64.
///
/// # Safety
/// `at(c)` is inside the logits for `c < d.c`.
#[inline(always)]
unsafe fn lse_f64<T: WideElem>(d: &LossDesc, xp: SendPtr<T>, at: impl Fn(usize) -> usize) -> f64 {
    // SAFETY: caller's contract.
    unsafe {
        let mut m = f64::NEG_INFINITY;
        for c in 0..d.c {
            m = m.max(ld(xp, at(c)));
        }
        let mut s = 0.0f64;
        for c in 0..d.c {
            s += (ld(xp, at(c)) - m).exp();
        }
        m + s.ln()
    }
}

#[allow(clippy::too_many_arguments)]
fn loss_ext_typed<T: WideElem>(
    d: &LossDesc,
    ext: &LossExt,
    input: DevPtr,
    target: DevPtr,
    tdt: DType,
    w: ExtWeights<'_, T>,
    out: DevPtr,
    cnt: f64,
) {
    let xp = sp::<T>(input);
    let op = sp::<T>(out);
    let (d, ext) = (*d, *ext);
    let none = d.reduction == Reduction::None;
    let total = par_reduce(d.items(), row_grain(d.c), 1, |r0, r1, acc| {
        let mut a = vec![0.0f64; d.c];
        for r in r0..r1 {
            // SAFETY: item r of each buffer; out items are disjoint.
            unsafe {
                let l = match d.kind {
                    LossKind::Mse | LossKind::Bce => w.elem(r) * loss_item(&d, xp, target, tdt, r),
                    LossKind::Nll => {
                        let t = target_at(target, tdt, r);
                        if t == d.ignore_index {
                            0.0
                        } else {
                            let (ni, i) = (r / d.inner, r % d.inner);
                            let x = ld(xp, (ni * d.c + t as usize) * d.inner + i);
                            -w.class(t as usize) * x
                        }
                    }
                    LossKind::CrossEntropy => {
                        if ce_coefficients(&d, &ext, target, tdt, &w, r, &mut a) {
                            let (ni, i) = (r / d.inner, r % d.inner);
                            let at = |c: usize| (ni * d.c + c) * d.inner + i;
                            let lse = lse_f64(&d, xp, at);
                            let mut l = 0.0;
                            for (c, ac) in a.iter().enumerate() {
                                l += ac * (lse - ld(xp, at(c)));
                            }
                            l
                        } else {
                            0.0
                        }
                    }
                };
                if none {
                    st(op, r, l);
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
        unsafe { st(op, 0, v) };
    }
}

#[allow(clippy::too_many_arguments)]
fn loss_ext_backward_typed<T: WideElem>(
    d: &LossDesc,
    ext: &LossExt,
    input: DevPtr,
    target: DevPtr,
    tdt: DType,
    w: ExtWeights<'_, T>,
    grad_out: DevPtr,
    grad_input: DevPtr,
    cnt: f64,
) {
    let (xp, gp, gi) = (sp::<T>(input), sp::<T>(grad_out), sp::<T>(grad_input));
    let (d, ext) = (*d, *ext);
    // SAFETY: a reduced loss's gradient has one element.
    let g0 = unsafe { ld(gp, 0) };
    let scale = match d.reduction {
        Reduction::Mean => g0 / cnt,
        _ => g0,
    };
    for_range(d.items(), row_grain(d.c), move |r0, r1| {
        let mut a = vec![0.0f64; d.c];
        for r in r0..r1 {
            // SAFETY: item r of each buffer; items own disjoint grad_input elements.
            unsafe {
                let g = if d.reduction == Reduction::None {
                    ld(gp, r)
                } else {
                    scale
                };
                let (ni, i) = (r / d.inner, r % d.inner);
                let at = |c: usize| (ni * d.c + c) * d.inner + i;
                match d.kind {
                    LossKind::Mse | LossKind::Bce => {
                        let t = ld(sp::<T>(target), r);
                        let x = ld(xp, r);
                        let v = if d.kind == LossKind::Mse {
                            2.0 * (x - t)
                        } else {
                            (x - t) / ((1.0 - x) * x).max(1e-12)
                        };
                        st(gi, r, w.elem(r) * v * g);
                    }
                    LossKind::Nll => {
                        let t = target_at(target, tdt, r);
                        for c in 0..d.c {
                            let v = if t != d.ignore_index && c as i64 == t {
                                -w.class(c) * g
                            } else {
                                0.0
                            };
                            st(gi, at(c), v);
                        }
                    }
                    LossKind::CrossEntropy => {
                        if !ce_coefficients(&d, &ext, target, tdt, &w, r, &mut a) {
                            for c in 0..d.c {
                                st(gi, at(c), 0.0);
                            }
                            continue;
                        }
                        let lse = lse_f64(&d, xp, at);
                        let sa: f64 = a.iter().sum();
                        for (c, ac) in a.iter().enumerate() {
                            let p = (ld(xp, at(c)) - lse).exp();
                            st(gi, at(c), (p * sa - ac) * g);
                        }
                    }
                }
            }
        }
    });
}

/// The weights of a [`LossExt`] loss of element type `T` at `weight` (NULL: none).
fn ext_weights<T: WideElem>(
    d: &LossDesc,
    weight: DevPtr,
    class: &mut Vec<f64>,
) -> Option<SendPtr<T>> {
    if weight.is_null() {
        return None;
    }
    if d.kind.is_class() {
        let wp = sp::<T>(weight);
        // SAFETY: class weights hold d.c elements.
        *class = (0..d.c).map(|c| unsafe { ld(wp, c) }).collect();
        None
    } else {
        Some(sp::<T>(weight))
    }
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
        with_floating_type!(dtype, d.kind.name(), T => loss_typed::<T>(d, input, target, target_dtype, out, cnt));
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
        with_floating_type!(dtype, d.kind.name(), T =>
            loss_backward_typed::<T>(d, input, target, target_dtype, grad_out, grad_input, cnt));
        Ok(())
    }

    fn loss_ext(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        with_floating_type!(dtype, d.kind.name(), T => {
            let mut class = Vec::new();
            let elem = ext_weights::<T>(d, weight, &mut class);
            let cw = (!weight.is_null() && d.kind.is_class()).then_some(class.as_slice());
            let cnt = ext_divisor(d, ext, target, target_dtype, cw)?;
            let w = ExtWeights::<T> { class: cw, elem };
            loss_ext_typed::<T>(d, ext, input, target, target_dtype, w, out, cnt)
        });
        Ok(())
    }

    fn loss_ext_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        with_floating_type!(dtype, d.kind.name(), T => {
            let mut class = Vec::new();
            let elem = ext_weights::<T>(d, weight, &mut class);
            let cw = (!weight.is_null() && d.kind.is_class()).then_some(class.as_slice());
            let cnt = ext_divisor(d, ext, target, target_dtype, cw)?;
            let w = ExtWeights::<T> { class: cw, elem };
            loss_ext_backward_typed::<T>(d, ext, input, target, target_dtype, w, grad_out, grad_input, cnt)
        });
        Ok(())
    }
}
