//! Normalization on the CPU: layer_norm, rms_norm, group_norm and batch_norm, forward and
//! backward. f16/bf16 load to f32;
//! statistics accumulate in f64. Rows run in parallel on the device's pool.

use super::CpuDevice;
use super::elem::{FloatElem, Param, ld, sp, st};
use super::par::{SendPtr, for_range, par_reduce, row_grain};
use crate::base::dtype::DType;
use crate::device::norm::NormOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{BatchNormDesc, GroupNormDesc, RowNormDesc};
use crate::{Error, Result, with_float_type};

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

/// Per-channel (mean, rstd) of a channels-last `[rows, c]` tensor: the batch's in f64 (two
/// passes of row blocks, each summing every channel of its rows) or the running stats.
///
/// # Safety
/// The pointers hold the elements the desc says.
unsafe fn bn_stats_last<T: FloatElem>(
    d: &BatchNormDesc,
    xp: SendPtr<T>,
    rm: Param<T>,
    rv: Param<T>,
) -> (Vec<f64>, Vec<f64>) {
    let (rows, c) = (d.n * d.hw, d.c);
    if !d.training {
        return (0..c)
            .map(|ch| {
                let (m, v) = (rm.get(ch, 0.0) as f64, rv.get(ch, 1.0) as f64);
                (m, 1.0 / (v + d.eps).sqrt())
            })
            .unzip();
    }
    let nf = rows.max(1) as f64;
    let sums = par_reduce(rows, row_grain(c), c, |r0, r1, acc| {
        for r in r0..r1 {
            for (ch, a) in acc.iter_mut().enumerate() {
                // SAFETY: row r of x.
                *a += unsafe { ld(xp, r * c + ch) } as f64;
            }
        }
    });
    let mean: Vec<f64> = sums.iter().map(|s| s / nf).collect();
    let mr = &mean;
    let sq = par_reduce(rows, row_grain(c), c, |r0, r1, acc| {
        for r in r0..r1 {
            for (ch, a) in acc.iter_mut().enumerate() {
                // SAFETY: row r of x.
                let t = unsafe { ld(xp, r * c + ch) } as f64 - mr[ch];
                *a += t * t;
            }
        }
    });
    let rstd = sq.iter().map(|v| 1.0 / (v / nf + d.eps).sqrt()).collect();
    (mean, rstd)
}

/// batch_norm on a channels-last `[rows, c]` tensor (rows in parallel): the same arithmetic
/// as the channels-first loop, per element `((x - mean) * rstd) as f32 * w + b`.
///
/// # Safety
/// The pointers hold the elements the desc says.
#[allow(clippy::too_many_arguments)]
unsafe fn batch_norm_last<T: FloatElem>(
    d: &BatchNormDesc,
    xp: SendPtr<T>,
    wp: Param<T>,
    bp: Param<T>,
    rm: Param<T>,
    rv: Param<T>,
    yp: SendPtr<T>,
    sm: Param<f32>,
    si: Param<f32>,
) {
    let (rows, c) = (d.n * d.hw, d.c);
    // SAFETY: caller's contract.
    let (mean, rstd) = unsafe { bn_stats_last(d, xp, rm, rv) };
    let (wv, bv): (Vec<f32>, Vec<f32>) =
        (0..c).map(|ch| (wp.get(ch, 1.0), bp.get(ch, 0.0))).unzip();
    let (mr, rr, wr, br) = (&mean, &rstd, &wv, &bv);
    for_range(rows, row_grain(c), move |r0, r1| {
        for r in r0..r1 {
            for ch in 0..c {
                // SAFETY: row r of x and y; rows are disjoint.
                unsafe {
                    let v = ((ld(xp, r * c + ch) as f64 - mr[ch]) * rr[ch]) as f32;
                    st(yp, r * c + ch, v * wr[ch] + br[ch]);
                }
            }
        }
    });
    if d.training {
        let cnt = rows as f64;
        for ch in 0..c {
            // SAFETY: c elements each.
            unsafe {
                if rm.present && rv.present {
                    let var = 1.0 / (rstd[ch] * rstd[ch]) - d.eps;
                    let mo = d.momentum;
                    let nm = (1.0 - mo) * ld(rm.p, ch) as f64 + mo * mean[ch];
                    let nv = (1.0 - mo) * ld(rv.p, ch) as f64 + mo * var * cnt / (cnt - 1.0);
                    st(rm.p, ch, nm as f32);
                    st(rv.p, ch, nv as f32);
                }
                if sm.present {
                    *sm.p.get().add(ch) = mean[ch] as f32;
                }
                if si.present {
                    *si.p.get().add(ch) = rstd[ch] as f32;
                }
            }
        }
    }
}

/// batch_norm backward on a channels-last `[rows, c]` tensor: per-channel sums of `dy` and
/// `dy * xhat` over row blocks, then dx by rows (the channels-first formulas).
///
/// # Safety
/// The pointers hold the elements the desc says.
#[allow(clippy::too_many_arguments)]
unsafe fn batch_norm_backward_last<T: FloatElem>(
    d: &BatchNormDesc,
    xp: SendPtr<T>,
    wp: Param<T>,
    rm: Param<T>,
    rv: Param<T>,
    dyp: SendPtr<T>,
    dxp: SendPtr<T>,
    want_dx: bool,
    dwp: Param<T>,
    dbp: Param<T>,
) {
    let (rows, c) = (d.n * d.hw, d.c);
    // SAFETY: caller's contract.
    let (mean, rstd) = unsafe { bn_stats_last(d, xp, rm, rv) };
    let wv: Vec<f32> = (0..c).map(|ch| wp.get(ch, 1.0)).collect();
    let (mr, rr, wr) = (&mean, &rstd, &wv);
    // sums[ch] = sum dy * xhat, sums[c + ch] = sum dy.
    let sums = par_reduce(rows, row_grain(c), 2 * c, |r0, r1, acc| {
        for r in r0..r1 {
            for ch in 0..c {
                // SAFETY: row r of x and dy.
                let (gy, xv) = unsafe { (ld(dyp, r * c + ch) as f64, ld(xp, r * c + ch) as f64) };
                acc[ch] += gy * (xv - mr[ch]) * rr[ch];
                acc[c + ch] += gy;
            }
        }
    });
    if want_dx {
        let sr = &sums;
        let m = rows as f64;
        let training = d.training;
        for_range(rows, row_grain(c), move |r0, r1| {
            for r in r0..r1 {
                for ch in 0..c {
                    // SAFETY: row r of x, dy and dx; rows are disjoint.
                    unsafe {
                        let g = ld(dyp, r * c + ch) * wr[ch];
                        let v = if training {
                            // norm_set_backward's formula with g = dy * w: sum(g) = w sum(dy),
                            // sum(g xhat) = w sum(dy xhat).
                            let w = wr[ch] as f64;
                            let xh = (ld(xp, r * c + ch) as f64 - mr[ch]) * rr[ch];
                            (rr[ch] / m * (m * g as f64 - w * sr[c + ch] - xh * w * sr[ch])) as f32
                        } else {
                            (g as f64 * rr[ch]) as f32
                        };
                        st(dxp, r * c + ch, v);
                    }
                }
            }
        });
    }
    // SAFETY: c elements each, when present.
    unsafe {
        for ch in 0..c {
            if dwp.present {
                st(dwp.p, ch, sums[ch] as f32);
            }
            if dbp.present {
                st(dbp.p, ch, sums[c + ch] as f32);
            }
        }
    }
}

/// Mean and rstd of channel `ch` of a channels-first tensor: the batch's (training) or the
/// running stats (eval).
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

impl NormOps for CpuDevice {
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
            if d.channels_last {
                // SAFETY: the buffers hold what the desc says.
                unsafe { batch_norm_last(&d, xp, wp, bp, rm, rv, yp, sm, si) };
                return Ok(());
            }
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
            if d.channels_last {
                // SAFETY: the buffers hold what the desc says.
                unsafe { batch_norm_backward_last(&d, xp, wp, rm, rv, dyp, dxp, want_dx, dwp, dbp) };
                return Ok(());
            }
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
}
