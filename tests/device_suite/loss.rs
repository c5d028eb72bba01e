//! Losses with class weights and class-probability targets (issue 17): cross_entropy and
//! nll_loss with `[C]` weights (zero weights, ignore_index, every reduction), cross_entropy
//! with probability targets (with and without label smoothing and weights), bce_loss with a
//! broadcast weight; forward and backward against the float64 reference of `ops::nn` in
//! every float dtype into poisoned outputs, the reference's backward against finite
//! differences, and misuse answered with its ErrorKind and a message naming the op.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::nn::{self as r, *};
use rocm_backend::runtime::prelude as e;
use rocm_backend::runtime::{DType, Tensor};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("weighted_class_losses", weighted_class_losses),
        ("prob_target_cross_entropy", prob_target_cross_entropy),
        ("weighted_bce_broadcast", weighted_bce_broadcast),
        ("weighted_losses_match_plain", weighted_losses_match_plain),
        ("loss_ext_finite_differences", loss_ext_finite_differences),
        ("loss_ext_edge_cases", loss_ext_edge_cases),
        ("loss_ext_misuse", loss_ext_misuse),
    ]
}

type Failed = libtest_mimic::Failed;

fn reductions() -> [Reduction; 3] {
    [Reduction::None, Reduction::Mean, Reduction::Sum]
}

fn rounded(dt: DType, v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| round_to(dt, *x)).collect()
}

fn input(dev: &Dev, shape: &[usize], dt: DType, seed: u64) -> Result<(Tensor, Vec<f64>), Failed> {
    let t = randn(dev, shape, dt, seed)?;
    let v = values(&t)?;
    Ok((t, v))
}

fn expect_err<T>(r: rocm_backend::Result<T>, kind: ErrorKind, needle: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("expected {kind:?} mentioning '{needle}', got success").into()),
        Err(e) if e.kind == kind && e.message.contains(needle) => Ok(()),
        Err(e) => Err(format!(
            "expected {kind:?} mentioning '{needle}', got {:?}: {}",
            e.kind, e.message
        )
        .into()),
    }
}

/// Class weights in [0.25, 2.25) with class 1 (when there is one) weighing 0, as the dtype
/// holds them.
fn class_weights(dev: &Dev, c: usize, dt: DType) -> Result<(Tensor, Vec<f64>), Failed> {
    let v: Vec<f64> = (0..c)
        .map(|k| {
            if k == 1 {
                0.0
            } else {
                0.25 + ((k as u64 * 2654435761) % 1000) as f64 / 500.0
            }
        })
        .collect();
    let t = from_f64(dev, &v, &[c], dt)?;
    let v = values(&t)?;
    Ok((t, v))
}

/// Class targets in [0, c) with every fifth one ignored (-100).
fn targets(
    dev: &Dev,
    shape: &[usize],
    c: usize,
    tdt: DType,
    seed: u64,
) -> Result<(Tensor, Vec<f64>), Failed> {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|i| {
            if i % 5 == 3 {
                -100.0
            } else {
                ((i as u64 * 2654435761 + seed * 97) % c as u64) as f64
            }
        })
        .collect();
    Ok((from_f64(dev, &v, shape, tdt)?, v))
}

/// Class probabilities of `shape` (`class_dim` the class dim): a softmax of random values
/// (`normalized`), or positive values that do not sum to 1 (PyTorch takes any).
fn probabilities(
    dev: &Dev,
    shape: &[usize],
    dt: DType,
    seed: u64,
    normalized: bool,
) -> Result<(Tensor, Vec<f64>), Failed> {
    let raw = values(&randn(dev, shape, DType::F32, seed)?)?;
    let v: Vec<f64> = if normalized && !shape.is_empty() {
        let (c, inner) = if shape.len() == 1 {
            (shape[0], 1)
        } else {
            (shape[1], shape[2..].iter().product())
        };
        let n = if shape.len() == 1 { 1 } else { shape[0] };
        let mut v = vec![0.0; raw.len()];
        for ni in 0..n {
            for i in 0..inner {
                let at = |k: usize| (ni * c + k) * inner + i;
                let z: f64 = (0..c).map(|k| raw[at(k)].exp()).sum();
                for k in 0..c {
                    v[at(k)] = raw[at(k)].exp() / z;
                }
            }
        }
        v
    } else {
        raw.iter().map(|x| 0.1 + x.abs()).collect()
    };
    let t = from_f64(dev, &v, shape, dt)?;
    let v = values(&t)?;
    Ok((t, v))
}

/// Runs the forward and the backward of one case and compares both with the reference.
#[allow(clippy::too_many_arguments)]
fn check_case(
    dev: &Dev,
    what: &str,
    kind: LossKind,
    d: &LossDesc,
    ext: &LossExt,
    oshape: &[usize],
    ishape: &[usize],
    x: (&Tensor, &[f64]),
    t: (&Tensor, &[f64]),
    w: Option<(&Tensor, &[f64])>,
    dt: DType,
    seed: u64,
) -> TestResult {
    let (red, ign, ls) = (d.reduction, d.ignore_index, d.label_smoothing);
    let out = poisoned(dev, oshape, dt)?;
    ok(e::loss_weighted(
        None,
        kind,
        x.0,
        t.0,
        w.map(|w| w.0),
        red,
        ign,
        ls,
        Some(&out),
    ))?;
    let want = rounded(dt, &r::loss_ext_ref(x.1, t.1, w.map(|w| w.1), d, ext));
    let got = values(&out)?;
    if d.items() == 0 && red == Reduction::Mean {
        ensure(got[0].is_nan(), format!("{what}: mean of nothing is NaN"))?;
    } else {
        assert_close_dtype(what, &got, &want, dt)?;
    }
    let (g, gv) = input(dev, oshape, dt, seed)?;
    let gi = poisoned(dev, ishape, dt)?;
    ok(e::loss_weighted_backward(
        None,
        kind,
        &g,
        x.0,
        t.0,
        w.map(|w| w.0),
        red,
        ign,
        ls,
        Some(&gi),
    ))?;
    let want = rounded(
        dt,
        &r::loss_ext_backward_ref(x.1, t.1, w.map(|w| w.1), &gv, d, ext),
    );
    assert_close_dtype(&format!("{what} backward"), &values(&gi)?, &want, dt)
}

/// cross_entropy and nll_loss with `[C]` weights (one of them 0), ignored targets, i32 and
/// i64 targets, label smoothing, every reduction; classes contiguous (rows longer than a
/// warp, a GPU splits them) and strided by spatial dims; a 1-D input; empty.
fn weighted_class_losses(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[1, 1], &[1]),
        (&[4, 5], &[4]),
        (&[7], &[]),
        (&[3, 4, 5], &[3, 5]),
        (&[2, 3, 2, 3], &[2, 2, 3]),
        (&[6, 70], &[6]),
        (&[3, 1027], &[3]),
        (&[0, 4], &[0]),
    ];
    let ext = LossExt {
        weighted: true,
        prob_target: false,
    };
    for dt in FLOATS {
        for (i, (ishape, tshape)) in cases.iter().enumerate() {
            let s = 500 + i as u64 * 3;
            let c = if ishape.len() == 1 {
                ishape[0]
            } else {
                ishape[1]
            };
            let (x, xv) = input(dev, ishape, dt, s)?;
            let (w, wv) = class_weights(dev, c, dt)?;
            for tdt in [DType::I64, DType::I32] {
                let (t, tv) = targets(dev, tshape, c, tdt, s)?;
                for (kind, ls) in [
                    (LossKind::CrossEntropy, 0.0),
                    (LossKind::CrossEntropy, 0.15),
                    (LossKind::Nll, 0.0),
                ] {
                    for red in reductions() {
                        let (d, oshape) =
                            LossDesc::class(kind, ishape, tshape, red, -100, ls).unwrap();
                        let what = format!(
                            "{} weighted {ishape:?} {red:?} {tdt} ls={ls} {dt}",
                            kind.name()
                        );
                        check_case(
                            dev,
                            &what,
                            kind,
                            &d,
                            &ext,
                            &oshape,
                            ishape,
                            (&x, &xv),
                            (&t, &tv),
                            Some((&w, &wv)),
                            dt,
                            s + 2,
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// cross_entropy with class-probability targets: normalized and not, label smoothing 0 and
/// 0.2, with and without weights, through the plain entry (`loss`, a floating target) and
/// the weighted one; classes contiguous and strided; a 1-D input; empty.
fn prob_target_cross_entropy(dev: &Dev) -> TestResult {
    let shapes: &[&[usize]] = &[
        &[1, 1],
        &[4, 5],
        &[7],
        &[3, 4, 5],
        &[2, 3, 2, 3],
        &[5, 130],
        &[0, 4],
    ];
    let kind = LossKind::CrossEntropy;
    for dt in FLOATS {
        for (i, shape) in shapes.iter().enumerate() {
            let s = 600 + i as u64 * 5;
            let c = if shape.len() == 1 { shape[0] } else { shape[1] };
            let (x, xv) = input(dev, shape, dt, s)?;
            let (w, wv) = class_weights(dev, c, dt)?;
            for normalized in [true, false] {
                let (t, tv) = probabilities(dev, shape, dt, s + 1, normalized)?;
                for ls in [0.0, 0.2] {
                    for red in reductions() {
                        let (d, oshape) =
                            LossDesc::class_probs(kind, shape, shape, red, -100, ls).unwrap();
                        for weighted in [false, true] {
                            let ext = LossExt {
                                weighted,
                                prob_target: true,
                            };
                            let what = format!(
                                "cross_entropy probs {shape:?} normalized={normalized} weighted={weighted} {red:?} ls={ls} {dt}"
                            );
                            let wt = weighted.then_some((&w, wv.as_slice()));
                            check_case(
                                dev,
                                &what,
                                kind,
                                &d,
                                &ext,
                                &oshape,
                                shape,
                                (&x, &xv),
                                (&t, &tv),
                                wt,
                                dt,
                                s + 2,
                            )?;
                        }
                        // The plain entry takes a floating target as probabilities too.
                        let out = poisoned(dev, &oshape, dt)?;
                        ok(e::loss(None, kind, &x, &t, red, -100, ls, Some(&out)))?;
                        let ext = LossExt {
                            weighted: false,
                            prob_target: true,
                        };
                        let want = rounded(dt, &r::loss_ext_ref(&xv, &tv, None, &d, &ext));
                        let got = values(&out)?;
                        if d.items() == 0 && red == Reduction::Mean {
                            ensure(got[0].is_nan(), "probabilities: mean of nothing is NaN")?;
                        } else {
                            assert_close_dtype(
                                &format!("cross_entropy probs (plain) {shape:?} {red:?} {dt}"),
                                &got,
                                &want,
                                dt,
                            )?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// bce_loss with a weight of the input's shape or one that broadcasts to it (a row, a
/// column, a scalar), every reduction; the reference multiplies by the broadcast weight.
fn weighted_bce_broadcast(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 5], &[3, 5]),
        (&[3, 5], &[5]),
        (&[3, 5], &[3, 1]),
        (&[3, 5], &[]),
        (&[2, 3, 1000], &[3, 1]),
        (&[7], &[1]),
        (&[0, 3], &[3]),
    ];
    let kind = LossKind::Bce;
    let ext = LossExt {
        weighted: true,
        prob_target: false,
    };
    let sig = |v: &f64| 0.02 + 0.96 / (1.0 + (-v).exp());
    for dt in FLOATS {
        for (i, (shape, wshape)) in cases.iter().enumerate() {
            let s = 700 + i as u64 * 3;
            let xv: Vec<f64> = values(&randn(dev, shape, DType::F32, s)?)?
                .iter()
                .map(sig)
                .collect();
            let tv: Vec<f64> = values(&randn(dev, shape, DType::F32, s + 1)?)?
                .iter()
                .map(sig)
                .collect();
            let (x, t) = (
                from_f64(dev, &xv, shape, dt)?,
                from_f64(dev, &tv, shape, dt)?,
            );
            let (xv, tv) = (values(&x)?, values(&t)?);
            let wn: usize = wshape.iter().product();
            let wraw: Vec<f64> = (0..wn).map(|k| 0.5 * k as f64 - 0.3).collect();
            let w = from_f64(dev, &wraw, wshape, dt)?;
            let wsmall = values(&w)?;
            // The weight broadcast to the input's shape (right-aligned, size-1 dims repeat).
            let n: usize = shape.iter().product();
            let strides = rocm_backend::base::shape::broadcast_strides(wshape, shape);
            let full: Vec<f64> = (0..n)
                .map(|flat| {
                    let mut rem = flat;
                    let mut off = 0;
                    for (k, &ext) in shape.iter().enumerate().rev() {
                        off += (rem % ext) * strides[k];
                        rem /= ext;
                    }
                    wsmall[off]
                })
                .collect();
            for red in reductions() {
                let (d, oshape) = LossDesc::elementwise(kind, shape, shape, red).unwrap();
                let what = format!("bce_loss weight {wshape:?} on {shape:?} {red:?} {dt}");
                let out = poisoned(dev, &oshape, dt)?;
                ok(e::loss_weighted(
                    None,
                    kind,
                    &x,
                    &t,
                    Some(&w),
                    red,
                    -100,
                    0.0,
                    Some(&out),
                ))?;
                let want = rounded(dt, &r::loss_ext_ref(&xv, &tv, Some(&full), &d, &ext));
                let got = values(&out)?;
                if n == 0 && red == Reduction::Mean {
                    ensure(got[0].is_nan(), format!("{what}: mean of nothing is NaN"))?;
                } else {
                    assert_close_dtype(&what, &got, &want, dt)?;
                }
                let (g, gv) = input(dev, &oshape, dt, s + 2)?;
                let gi = poisoned(dev, shape, dt)?;
                ok(e::loss_weighted_backward(
                    None,
                    kind,
                    &g,
                    &x,
                    &t,
                    Some(&w),
                    red,
                    -100,
                    0.0,
                    Some(&gi),
                ))?;
                let want = rounded(
                    dt,
                    &r::loss_ext_backward_ref(&xv, &tv, Some(&full), &gv, &d, &ext),
                );
                assert_close_dtype(&format!("{what} backward"), &values(&gi)?, &want, dt)?;
            }
        }
    }
    Ok(())
}

/// A weight of ones, or none, through the weighted entries gives the plain losses' results.
fn weighted_losses_match_plain(dev: &Dev) -> TestResult {
    let (x, _) = input(dev, &[6, 9, 2], DType::F32, 31)?;
    let (t, _) = targets(dev, &[6, 2], 9, DType::I64, 31)?;
    let ones = from_f64(dev, &[1.0; 9], &[9], DType::F32)?;
    let sig = |v: &f64| 0.05 + 0.9 / (1.0 + (-v).exp());
    let pb: Vec<f64> = values(&x)?.iter().map(sig).collect();
    let xb = from_f64(dev, &pb, &[6, 9, 2], DType::F32)?;
    let tb = from_f64(
        dev,
        &pb.iter().rev().copied().collect::<Vec<_>>(),
        &[6, 9, 2],
        DType::F32,
    )?;
    let ones_b = from_f64(dev, &[1.0; 2], &[2], DType::F32)?;
    for red in reductions() {
        for (kind, ls) in [
            (LossKind::CrossEntropy, 0.0),
            (LossKind::CrossEntropy, 0.3),
            (LossKind::Nll, 0.0),
            (LossKind::Bce, 0.0),
        ] {
            let (xi, ti, w) = if kind == LossKind::Bce {
                (&xb, &tb, &ones_b)
            } else {
                (&x, &t, &ones)
            };
            let plain = values(&ok(e::loss(None, kind, xi, ti, red, -100, ls, None))?)?;
            for wt in [None, Some(w)] {
                let got = values(&ok(e::loss_weighted(
                    None, kind, xi, ti, wt, red, -100, ls, None,
                ))?)?;
                assert_close(
                    &format!("{} {red:?} ls={ls} weight={}", kind.name(), wt.is_some()),
                    &got,
                    &plain,
                    1e-5,
                    1e-6,
                )?;
            }
            let g = if red == Reduction::None {
                let l = ok(e::loss(None, kind, xi, ti, red, -100, ls, None))?;
                randn(dev, l.shape(), DType::F32, 5)?
            } else {
                from_f64(dev, &[0.7], &[], DType::F32)?
            };
            let plain = values(&ok(e::loss_backward(
                None, kind, &g, xi, ti, red, -100, ls, None,
            ))?)?;
            let got = values(&ok(e::loss_weighted_backward(
                None,
                kind,
                &g,
                xi,
                ti,
                Some(w),
                red,
                -100,
                ls,
                None,
            ))?)?;
            assert_close(
                &format!("{} backward {red:?} ls={ls}", kind.name()),
                &got,
                &plain,
                1e-5,
                1e-6,
            )?;
        }
    }
    Ok(())
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Checks `analytic`, the gradient of `sum(r * f(p))` at `p`, against central differences.
fn fd_check(
    what: &str,
    p: &[f64],
    r: &[f64],
    analytic: &[f64],
    f: impl Fn(&[f64]) -> Vec<f64>,
) -> TestResult {
    let h = 1e-5;
    let mut q = p.to_vec();
    let mut num = vec![0.0; p.len()];
    for i in 0..p.len() {
        q[i] = p[i] + h;
        let a = dot(r, &f(&q));
        q[i] = p[i] - h;
        let b = dot(r, &f(&q));
        q[i] = p[i];
        num[i] = (a - b) / (2.0 * h);
    }
    ensure(
        num.iter().any(|v| v.abs() > 1e-3),
        format!("{what}: degenerate check"),
    )?;
    assert_close(
        &format!("{what} vs finite differences"),
        analytic,
        &num,
        1e-5,
        1e-6,
    )
}

/// The backward of the reference against central differences of its forward: weighted
/// cross_entropy (with smoothing), weighted nll_loss, probability targets (with weights and
/// smoothing), weighted bce; every reduction.
fn loss_ext_finite_differences(dev: &Dev) -> TestResult {
    let vals = |n: usize, seed: u64| values(&randn(dev, &[n], DType::F32, seed)?);
    let logits = vals(24, 41)?;
    let w = [0.5, 0.0, 1.7, 1.1];
    let t = [1.0, 3.0, -100.0, 0.0, 2.0, 2.0];
    let probs: Vec<f64> = vals(24, 42)?.iter().map(|v| 0.05 + v.abs()).collect();
    for red in reductions() {
        let rr = if red == Reduction::None {
            vals(6, 43)?
        } else {
            vec![1.3]
        };
        for (kind, ls) in [
            (LossKind::CrossEntropy, 0.0),
            (LossKind::CrossEntropy, 0.25),
            (LossKind::Nll, 0.0),
        ] {
            let (d, _) = LossDesc::class(kind, &[3, 4, 2], &[3, 2], red, -100, ls).unwrap();
            let ext = LossExt {
                weighted: true,
                prob_target: false,
            };
            let g = r::loss_ext_backward_ref(&logits, &t, Some(&w), &rr, &d, &ext);
            fd_check(
                &format!("{} weighted ls={ls} {red:?}", kind.name()),
                &logits,
                &rr,
                &g,
                |p| r::loss_ext_ref(p, &t, Some(&w), &d, &ext),
            )?;
        }
        for (ls, weighted) in [(0.0, false), (0.3, false), (0.0, true), (0.3, true)] {
            let (d, _) = LossDesc::class_probs(
                LossKind::CrossEntropy,
                &[3, 4, 2],
                &[3, 4, 2],
                red,
                -100,
                ls,
            )
            .unwrap();
            let ext = LossExt {
                weighted,
                prob_target: true,
            };
            let wt = weighted.then_some(&w[..]);
            let g = r::loss_ext_backward_ref(&logits, &probs, wt, &rr, &d, &ext);
            fd_check(
                &format!("cross_entropy probs ls={ls} weighted={weighted} {red:?}"),
                &logits,
                &rr,
                &g,
                |p| r::loss_ext_ref(p, &probs, wt, &d, &ext),
            )?;
        }
        let sig = |v: &f64| 0.05 + 0.9 / (1.0 + (-v).exp());
        let xb: Vec<f64> = vals(6, 44)?.iter().map(sig).collect();
        let tb: Vec<f64> = vals(6, 45)?.iter().map(sig).collect();
        let wb = [0.3, 1.2, 0.0, 2.0, 0.7, 1.0];
        let (d, _) = LossDesc::elementwise(LossKind::Bce, &[6], &[6], red).unwrap();
        let ext = LossExt {
            weighted: true,
            prob_target: false,
        };
        let g = r::loss_ext_backward_ref(&xb, &tb, Some(&wb), &rr, &d, &ext);
        fd_check(&format!("bce weighted {red:?}"), &xb, &rr, &g, |p| {
            r::loss_ext_ref(p, &tb, Some(&wb), &d, &ext)
        })?;
    }
    // A one-hot probability target without smoothing is the class-index loss.
    let (d, _) = LossDesc::class_probs(
        LossKind::CrossEntropy,
        &[2, 3],
        &[2, 3],
        Reduction::None,
        -100,
        0.0,
    )
    .unwrap();
    let x = [0.3, -1.2, 2.0, 0.5, 0.1, -0.4];
    let onehot = [0.0, 0.0, 1.0, 1.0, 0.0, 0.0];
    let ext = LossExt {
        weighted: false,
        prob_target: true,
    };
    let soft = r::loss_ext_ref(&x, &onehot, None, &d, &ext);
    let (dc, _) = LossDesc::class(
        LossKind::CrossEntropy,
        &[2, 3],
        &[2],
        Reduction::None,
        -100,
        0.0,
    )
    .unwrap();
    assert_close(
        "one-hot probabilities = class indices",
        &soft,
        &r::loss_ref(&x, &[2.0, 0.0], &dc),
        1e-12,
        1e-12,
    )
}

/// PyTorch's corners: every weighted target ignored or of weight 0 makes `mean` NaN (0/0)
/// and `sum` 0; an out-of-range target with weights is INVALID_ARGUMENT forward and
/// backward; the gradient of ignored items is 0.
fn loss_ext_edge_cases(dev: &Dev) -> TestResult {
    use ErrorKind::InvalidArgument;
    let x = randn(dev, &[4, 3], DType::F32, 9)?;
    let w = from_f64(dev, &[1.0, 0.0, 2.0], &[3], DType::F32)?;
    let ignored = from_f64(dev, &[-100.0; 4], &[4], DType::I64)?;
    let zero_weight = from_f64(dev, &[1.0, 1.0, -100.0, 1.0], &[4], DType::I64)?;
    for kind in [LossKind::CrossEntropy, LossKind::Nll] {
        for t in [&ignored, &zero_weight] {
            let mean = ok(e::loss_weighted(
                None,
                kind,
                &x,
                t,
                Some(&w),
                Reduction::Mean,
                -100,
                0.0,
                None,
            ))?;
            ensure(
                values(&mean)?[0].is_nan(),
                format!("{}: weighted mean over no weight is NaN", kind.name()),
            )?;
            let sum = ok(e::loss_weighted(
                None,
                kind,
                &x,
                t,
                Some(&w),
                Reduction::Sum,
                -100,
                0.0,
                None,
            ))?;
            ensure(
                values(&sum)?[0] == 0.0,
                format!("{}: weighted sum over no weight is 0", kind.name()),
            )?;
        }
        let g = from_f64(dev, &[1.0], &[], DType::F32)?;
        let gi = poisoned(dev, &[4, 3], DType::F32)?;
        ok(e::loss_weighted_backward(
            None,
            kind,
            &g,
            &x,
            &ignored,
            Some(&w),
            Reduction::Sum,
            -100,
            0.0,
            Some(&gi),
        ))?;
        ensure(
            values(&gi)?.iter().all(|v| *v == 0.0),
            format!("{}: gradient of ignored items", kind.name()),
        )?;
        for tdt in [DType::I32, DType::I64] {
            let bad = from_f64(dev, &[0.0, 3.0, 1.0, 2.0], &[4], tdt)?;
            let needle = format!("{}: target 3", kind.name());
            for red in reductions() {
                expect_err(
                    e::loss_weighted(None, kind, &x, &bad, Some(&w), red, -100, 0.0, None),
                    InvalidArgument,
                    &needle,
                )?;
            }
            expect_err(
                e::loss_weighted_backward(
                    None,
                    kind,
                    &g,
                    &x,
                    &bad,
                    Some(&w),
                    Reduction::Mean,
                    -100,
                    0.0,
                    None,
                ),
                InvalidArgument,
                &needle,
            )?;
        }
    }
    Ok(())
}

fn loss_ext_misuse(dev: &Dev) -> TestResult {
    use ErrorKind::*;
    let f = |shape: &[usize]| randn(dev, shape, DType::F32, 1);
    let x = f(&[2, 3])?;
    let t = from_f64(dev, &[0.0, 2.0], &[2], DType::I64)?;
    let mean = Reduction::Mean;
    let ce = LossKind::CrossEntropy;
    // A weight of the wrong length, rank or dtype.
    for kind in [ce, LossKind::Nll] {
        let name = kind.name();
        expect_err(
            e::loss_weighted(None, kind, &x, &t, Some(&f(&[4])?), mean, -100, 0.0, None),
            ShapeMismatch,
            &format!("{name}: weight"),
        )?;
        expect_err(
            e::loss_weighted(
                None,
                kind,
                &x,
                &t,
                Some(&f(&[1, 3])?),
                mean,
                -100,
                0.0,
                None,
            ),
            ShapeMismatch,
            &format!("{name}: weight"),
        )?;
        let g = from_f64(dev, &[1.0], &[], DType::F32)?;
        expect_err(
            e::loss_weighted_backward(
                None,
                kind,
                &g,
                &x,
                &t,
                Some(&f(&[2])?),
                mean,
                -100,
                0.0,
                None,
            ),
            ShapeMismatch,
            &format!("{name}: weight"),
        )?;
        expect_err(
            e::loss_weighted(
                None,
                kind,
                &x,
                &t,
                Some(&randn(dev, &[3], DType::F16, 1)?),
                mean,
                -100,
                0.0,
                None,
            ),
            DtypeMismatch,
            &format!("{name}: weight"),
        )?;
    }
    // Probability targets: ignore_index >= 0, another shape, another dtype; nll_loss takes
    // none.
    let p = f(&[2, 3])?;
    for ign in [0, 2] {
        expect_err(
            e::loss(None, ce, &x, &p, mean, ign, 0.0, None),
            InvalidArgument,
            "cross_entropy: ignore_index",
        )?;
        expect_err(
            e::loss_weighted(None, ce, &x, &p, None, mean, ign, 0.0, None),
            InvalidArgument,
            "cross_entropy: ignore_index",
        )?;
    }
    // A floating target of another shape is not probabilities (PyTorch takes it for class
    // indices of the wrong dtype).
    expect_err(
        e::loss(None, ce, &x, &f(&[2, 4])?, mean, -100, 0.0, None),
        DtypeMismatch,
        "cross_entropy: target",
    )?;
    expect_err(
        e::loss_weighted(None, ce, &x, &f(&[2])?, None, mean, -100, 0.0, None),
        DtypeMismatch,
        "cross_entropy: target",
    )?;
    expect_err(
        e::loss(
            None,
            ce,
            &x,
            &randn(dev, &[2, 3], DType::BF16, 1)?,
            mean,
            -100,
            0.0,
            None,
        ),
        DtypeMismatch,
        "cross_entropy",
    )?;
    expect_err(
        e::loss(None, LossKind::Nll, &x, &p, mean, -100, 0.0, None),
        DtypeMismatch,
        "nll_loss",
    )?;
    expect_err(
        e::loss(None, ce, &x, &p, mean, -100, 1.5, None),
        InvalidArgument,
        "label_smoothing",
    )?;
    // bce: a weight that does not broadcast to the input (or would grow it).
    let xb = from_f64(dev, &[0.5; 6], &[2, 3], DType::F32)?;
    for ws in [&[2][..], &[4, 3], &[2, 2, 3]] {
        expect_err(
            e::loss_weighted(
                None,
                LossKind::Bce,
                &xb,
                &xb,
                Some(&f(ws)?),
                mean,
                -100,
                0.0,
                None,
            ),
            ShapeMismatch,
            "bce_loss: weight",
        )?;
    }
    Ok(())
}
