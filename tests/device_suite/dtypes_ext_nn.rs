//! f64 through the losses (mse, bce, nll, cross_entropy; class weights, class-probability
//! targets, bce's broadcast weight): forward and backward against the float64 references of
//! `ops::nn` at 1e-12, with NaN/inf inputs, ignored targets, label smoothing, classes strided
//! by spatial dims and empty inputs; out-of-range targets still answer INVALID_ARGUMENT.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::nn::{self as r, LossDesc, LossExt, LossKind, Reduction};
use rocm_backend::runtime::prelude as e;
use rocm_backend::runtime::{DType, Tensor};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        (
            "dtypes_ext_loss_f64_elementwise",
            dtypes_ext_loss_f64_elementwise,
        ),
        ("dtypes_ext_loss_f64_class", dtypes_ext_loss_f64_class),
    ]
}

const F64: DType = DType::F64;
const REDS: [Reduction; 3] = [Reduction::None, Reduction::Mean, Reduction::Sum];

/// f64 values that f32 cannot hold, in about [-1.5, 1.5].
fn vals(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (((i as u64 + 1) * (seed * 2 + 3) * 2_654_435_761) >> 9) % 1000;
            (h as f64 - 500.0) / 333.0 + 1e-10 * (i % 7) as f64
        })
        .collect()
}

/// Values in (0, 1) (probabilities).
fn probs(n: usize, seed: u64) -> Vec<f64> {
    vals(n, seed)
        .iter()
        .map(|v| 0.02 + 0.96 * (v + 1.51) / 3.02)
        .collect()
}

fn close(what: &str, got: &[f64], want: &[f64]) -> TestResult {
    assert_close(what, got, want, 1e-12, 1e-14)
}

/// Runs forward and backward of one case through the weighted entries (and the plain ones
/// when there is no weight) against the references.
#[allow(clippy::too_many_arguments)]
fn check(
    dev: &Dev,
    what: &str,
    kind: LossKind,
    d: &LossDesc,
    ext: &LossExt,
    oshape: &[usize],
    x: (&Tensor, &[f64]),
    t: (&Tensor, &[f64]),
    w: Option<(&Tensor, &[f64])>,
    wref: Option<&[f64]>,
) -> TestResult {
    let (red, ign, ls) = (d.reduction, d.ignore_index, d.label_smoothing);
    let want = r::loss_ext_ref(x.1, t.1, wref, d, ext);
    let out = ok(e::loss_weighted(
        None,
        kind,
        x.0,
        t.0,
        w.map(|w| w.0),
        red,
        ign,
        ls,
        None,
    ))?;
    ensure(
        out.dtype() == F64 && out.shape() == oshape,
        format!("{what}: result {} {:?}", out.dtype(), out.shape()),
    )?;
    close(what, &values(&out)?, &want)?;
    let gv = vals(oshape.iter().product(), 77);
    let g = from_f64(dev, &gv, oshape, F64)?;
    let gi = ok(e::loss_weighted_backward(
        None,
        kind,
        &g,
        x.0,
        t.0,
        w.map(|w| w.0),
        red,
        ign,
        ls,
        None,
    ))?;
    let gwant = r::loss_ext_backward_ref(x.1, t.1, wref, &gv, d, ext);
    close(&format!("{what} backward"), &values(&gi)?, &gwant)?;
    if w.is_none() {
        let out = ok(e::loss(None, kind, x.0, t.0, red, ign, ls, None))?;
        close(&format!("{what} (plain)"), &values(&out)?, &want)?;
        let gi = ok(e::loss_backward(
            None, kind, &g, x.0, t.0, red, ign, ls, None,
        ))?;
        close(&format!("{what} (plain) backward"), &values(&gi)?, &gwant)?;
    }
    Ok(())
}

/// mse_loss and bce_loss (bce with a full and a broadcast weight) in f64, every reduction;
/// NaN and inf inputs; empty inputs (mean NaN, sum 0).
fn dtypes_ext_loss_f64_elementwise(dev: &Dev) -> TestResult {
    let shapes: &[&[usize]] = &[&[3, 5], &[7], &[], &[0, 4], &[2, 3, 300]];
    for (si, shape) in shapes.iter().enumerate() {
        let n: usize = shape.iter().product();
        for kind in [LossKind::Mse, LossKind::Bce] {
            let (mut xv, tv) = if kind == LossKind::Mse {
                (vals(n, si as u64), vals(n, 10 + si as u64))
            } else {
                (probs(n, si as u64), probs(n, 10 + si as u64))
            };
            if si == 0 && kind == LossKind::Mse {
                xv[3] = f64::NAN;
                xv[4] = f64::INFINITY;
            }
            if si == 1 && kind == LossKind::Bce {
                xv[0] = 0.0; // log clamped at -100
                xv[1] = 1.0;
            }
            let x = from_f64(dev, &xv, shape, F64)?;
            let t = from_f64(dev, &tv, shape, F64)?;
            for red in REDS {
                let (d, oshape) = ok(LossDesc::elementwise(kind, shape, shape, red))?;
                let what = format!("{} f64 {shape:?} {red:?}", kind.name());
                let ext = LossExt::default();
                check(
                    dev,
                    &what,
                    kind,
                    &d,
                    &ext,
                    &oshape,
                    (&x, &xv),
                    (&t, &tv),
                    None,
                    None,
                )?;
                if kind == LossKind::Bce {
                    let ext = LossExt {
                        weighted: true,
                        prob_target: false,
                    };
                    let wv = probs(n, 30 + si as u64);
                    let w = from_f64(dev, &wv, shape, F64)?;
                    check(
                        dev,
                        &format!("{what} weighted"),
                        kind,
                        &d,
                        &ext,
                        &oshape,
                        (&x, &xv),
                        (&t, &tv),
                        Some((&w, &wv)),
                        Some(&wv),
                    )?;
                    // A weight broadcast along the first dimension.
                    if shape.len() >= 2 {
                        let inner: usize = shape[1..].iter().product();
                        let rv = probs(inner, 40);
                        let full: Vec<f64> = (0..n).map(|i| rv[i % inner]).collect();
                        let wr = from_f64(dev, &rv, &shape[1..], F64)?;
                        check(
                            dev,
                            &format!("{what} broadcast weight"),
                            kind,
                            &d,
                            &ext,
                            &oshape,
                            (&x, &xv),
                            (&t, &tv),
                            Some((&wr, &rv)),
                            Some(&full),
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// nll_loss and cross_entropy in f64: i32 and i64 targets with ignored ones, label
/// smoothing, class weights (one 0), classes contiguous (long rows too) and strided, a 1-D
/// input, empty; cross_entropy with probability targets; an infinite logit; an
/// out-of-range target answers INVALID_ARGUMENT.
fn dtypes_ext_loss_f64_class(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[4, 5], &[4]),
        (&[7], &[]),
        (&[3, 4, 5], &[3, 5]),
        (&[2, 3, 2, 3], &[2, 2, 3]),
        (&[3, 1027], &[3]),
        (&[0, 4], &[0]),
    ];
    for (ci, (shape, tshape)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let c = if shape.len() == 1 { shape[0] } else { shape[1] };
        let items: usize = tshape.iter().product();
        let mut xv: Vec<f64> = vals(n, 100 + ci as u64).iter().map(|v| 3.0 * v).collect();
        if ci == 0 {
            xv[6] = f64::NEG_INFINITY; // a class of no probability
        }
        let x = from_f64(dev, &xv, shape, F64)?;
        // Targets: every third ignored (-100), the others spread over the classes.
        let tv: Vec<f64> = (0..items)
            .map(|i| {
                if i % 3 == 2 {
                    -100.0
                } else {
                    ((i * 7 + ci) % c) as f64
                }
            })
            .collect();
        let wv: Vec<f64> = (0..c)
            .map(|k| if k == 1 { 0.0 } else { 0.25 + 0.37 * k as f64 })
            .collect();
        let w = from_f64(dev, &wv, &[c], F64)?;
        for tdt in [DType::I64, DType::I32] {
            let t = from_f64(dev, &tv, tshape, tdt)?;
            for kind in [LossKind::Nll, LossKind::CrossEntropy] {
                for red in REDS {
                    for ls in [0.0, 0.15] {
                        if kind == LossKind::Nll && ls > 0.0 {
                            continue;
                        }
                        let (d, oshape) = ok(LossDesc::class(kind, shape, tshape, red, -100, ls))?;
                        let what = format!("{} f64 {shape:?} {tdt} {red:?} ls={ls}", kind.name());
                        let ext = LossExt::default();
                        check(
                            dev,
                            &what,
                            kind,
                            &d,
                            &ext,
                            &oshape,
                            (&x, &xv),
                            (&t, &tv),
                            None,
                            None,
                        )?;
                        let ext = LossExt {
                            weighted: true,
                            prob_target: false,
                        };
                        check(
                            dev,
                            &format!("{what} weighted"),
                            kind,
                            &d,
                            &ext,
                            &oshape,
                            (&x, &xv),
                            (&t, &tv),
                            Some((&w, &wv)),
                            Some(&wv),
                        )?;
                    }
                }
            }
        }
        // Class probabilities (the input's shape and dtype).
        let pv = probs(n, 200 + ci as u64);
        let p = from_f64(dev, &pv, shape, F64)?;
        for red in REDS {
            for ls in [0.0, 0.2] {
                let kind = LossKind::CrossEntropy;
                let (d, oshape) = ok(LossDesc::class_probs(kind, shape, shape, red, -100, ls))?;
                let what = format!("cross_entropy probs f64 {shape:?} {red:?} ls={ls}");
                let ext = LossExt {
                    weighted: false,
                    prob_target: true,
                };
                check(
                    dev,
                    &what,
                    kind,
                    &d,
                    &ext,
                    &oshape,
                    (&x, &xv),
                    (&p, &pv),
                    None,
                    None,
                )?;
                let ext = LossExt {
                    weighted: true,
                    prob_target: true,
                };
                check(
                    dev,
                    &format!("{what} weighted"),
                    kind,
                    &d,
                    &ext,
                    &oshape,
                    (&x, &xv),
                    (&p, &pv),
                    Some((&w, &wv)),
                    Some(&wv),
                )?;
            }
        }
    }
    // An out-of-range target: INVALID_ARGUMENT naming it, forward and backward.
    let x = from_f64(dev, &vals(12, 5), &[3, 4], F64)?;
    let t = from_f64(dev, &[0.0, 4.0, 1.0], &[3], DType::I64)?;
    let g = from_f64(dev, &[1.0], &[], F64)?;
    for kind in [LossKind::Nll, LossKind::CrossEntropy] {
        match e::loss(None, kind, &x, &t, Reduction::Mean, -100, 0.0, None) {
            Err(err) if err.kind == ErrorKind::InvalidArgument && err.message.contains("4") => {}
            other => {
                return Err(format!("{} f64 bad target: {:?}", kind.name(), other.err()).into());
            }
        }
        match e::loss_backward(None, kind, &g, &x, &t, Reduction::Mean, -100, 0.0, None) {
            Err(err) if err.kind == ErrorKind::InvalidArgument => {}
            other => {
                return Err(
                    format!("{} f64 bad target backward: {:?}", kind.name(), other.err()).into(),
                );
            }
        }
    }
    Ok(())
}
