//! f64 through the DNN rows (issue #12 item 3): group_norm, batch_norm (both layouts),
//! local_response_norm, forward and backward, against the float64 references of
//! `rocm_backend::ops` at ~1e-12 relative; NaN/inf where meaningful, empty tensors.

use crate::common::*;
use crate::dtypes_ext::f64_values;
use libtest_mimic::Failed;
use rocm_backend::ops::nn::{self, BatchNormDesc, GroupNormDesc};
use rocm_backend::runtime::eager::Grad;
use rocm_backend::runtime::{DType, Tensor, norm};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("f64_dnn_group_norm", f64_dnn_group_norm),
        ("f64_dnn_batch_norm", f64_dnn_batch_norm),
        ("f64_dnn_lrn", f64_dnn_lrn),
    ]
}

const DT: DType = DType::F64;

fn grads3(g: [Option<Tensor>; 3]) -> Result<[Vec<f64>; 3], Failed> {
    let mut out: [Vec<f64>; 3] = Default::default();
    for (o, t) in out.iter_mut().zip(g) {
        *o = values(&t.ok_or("a requested gradient is missing")?)?;
    }
    Ok(out)
}

/// f64 group_norm, with and without weight/bias, forward and backward, several group
/// counts and spatial ranks; a NaN poisons its group only; empty inputs.
fn f64_dnn_group_norm(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], usize)] = &[
        (&[2, 6, 5], 3),
        (&[3, 4, 2, 3], 1),
        (&[2, 4, 2, 2, 2], 4),
        (&[4, 6], 2),
        (&[1, 8, 300], 2),
    ];
    for (i, &(shape, groups)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let c = shape[1];
        let vx: Vec<f64> = f64_values(n, 40 + i as u64)
            .iter()
            .map(|v| 2.0 * v - 0.25)
            .collect();
        let (vw, vb, vd) = (
            f64_values(c, 50 + i as u64),
            f64_values(c, 60 + i as u64),
            f64_values(n, 70 + i as u64),
        );
        let x = from_f64(dev, &vx, shape, DT)?;
        let (w, b) = (from_f64(dev, &vw, &[c], DT)?, from_f64(dev, &vb, &[c], DT)?);
        let dy = from_f64(dev, &vd, shape, DT)?;
        let eps = 1e-5;
        let d = ok(GroupNormDesc::new("group_norm", shape, groups, eps))?;
        for affine in [false, true] {
            let (wo, bo) = if affine {
                (Some(&w), Some(&b))
            } else {
                (None, None)
            };
            let (wr, br) = if affine {
                (Some(&vw[..]), Some(&vb[..]))
            } else {
                (None, None)
            };
            let what = format!("group_norm f64 {shape:?} groups {groups} affine {affine}");
            let out = poisoned(dev, shape, DT)?;
            ok(norm::group_norm(None, &x, groups, wo, bo, eps, Some(&out)))?;
            let (want, _, _) = nn::group_norm_ref(&vx, wr, br, &d);
            assert_close(&what, &values(&out)?, &want, 1e-12, 1e-13)?;
            let g = ok(norm::group_norm_backward(
                None,
                &dy,
                &x,
                groups,
                wo,
                eps,
                [Grad::New, Grad::New, Grad::New],
            ))?;
            let (wx, ww, wb) = nn::group_norm_backward_ref(&vd, &vx, wr, &d);
            let got = grads3(g)?;
            for ((got, want), name) in got.iter().zip([wx, ww, wb]).zip(["dx", "dw", "db"]) {
                assert_close(&format!("{what} backward {name}"), got, &want, 1e-11, 1e-12)?;
            }
        }
    }
    // A NaN poisons its own group only.
    let mut vx = f64_values(24, 3);
    vx[1] = f64::NAN;
    let x = from_f64(dev, &vx, &[2, 4, 3], DT)?;
    let y = values(&ok(norm::group_norm(None, &x, 2, None, None, 1e-5, None))?)?;
    let d = ok(GroupNormDesc::new("group_norm", &[2, 4, 3], 2, 1e-5))?;
    let (want, _, _) = nn::group_norm_ref(&vx, None, None, &d);
    assert_close("group_norm f64 NaN", &y, &want, 1e-12, 1e-13)?;
    ensure(y[0].is_nan() && !y[6].is_nan(), "group_norm f64 NaN group")?;
    // Empty: empty output, zero parameter gradients.
    let e = from_f64(dev, &[], &[0, 4, 3], DT)?;
    let w = from_f64(dev, &[1.0, 2.0, 3.0, 4.0], &[4], DT)?;
    let y = ok(norm::group_norm(None, &e, 2, Some(&w), None, 1e-5, None))?;
    ensure(
        y.shape() == [0, 4, 3] && y.dtype() == DT,
        "group_norm f64 empty",
    )?;
    let [gx, gw, gb] = grads3(ok(norm::group_norm_backward(
        None,
        &e,
        &e,
        2,
        Some(&w),
        1e-5,
        [Grad::New, Grad::New, Grad::New],
    ))?)?;
    ensure(gx.is_empty(), "group_norm_backward f64 empty dx")?;
    assert_close("group_norm_backward f64 empty dw", &gw, &[0.0; 4], 0.0, 0.0)?;
    assert_close("group_norm_backward f64 empty db", &gb, &[0.0; 4], 0.0, 0.0)
}

/// `[n, c, hw]` values from channels-last `[n, hw, c]` ones.
fn to_first(v: &[f64], n: usize, hw: usize, c: usize) -> Vec<f64> {
    let mut o = vec![0.0; v.len()];
    for ni in 0..n {
        for k in 0..hw {
            for ch in 0..c {
                o[(ni * c + ch) * hw + k] = v[(ni * hw + k) * c + ch];
            }
        }
    }
    o
}

/// f64 batch_norm and batch_norm_channels_last: training (running stats updated: batch
/// mean, unbiased variance) and eval, with and without weight/bias/running stats, forward
/// and backward against `batch_norm_ref` / `batch_norm_backward_ref`; empty inputs.
fn f64_dnn_batch_norm(dev: &Dev) -> TestResult {
    let cases: &[&[usize]] = &[
        &[4, 3],
        &[2, 3, 5],
        &[2, 4, 3, 2],
        &[3, 2, 2, 2, 2],
        &[2, 2, 700],
    ];
    for (i, &shape) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let c = shape[1];
        let hw: usize = shape[2..].iter().product();
        let vx: Vec<f64> = f64_values(n, 140 + i as u64)
            .iter()
            .map(|v| 1.5 * v + 0.75)
            .collect();
        let (vw, vb, vd) = (
            f64_values(c, 150 + i as u64),
            f64_values(c, 160 + i as u64),
            f64_values(n, 170 + i as u64),
        );
        let vrm: Vec<f64> = f64_values(c, 180 + i as u64);
        let vrv: Vec<f64> = f64_values(c, 190 + i as u64)
            .iter()
            .map(|v| v.abs() + 0.5)
            .collect();
        for last in [false, true] {
            if last && shape.len() < 3 {
                continue;
            }
            // The tensors as the op sees them; the references read channels first.
            let phys: Vec<usize> = if last {
                let mut p = vec![shape[0]];
                p.extend_from_slice(&shape[2..]);
                p.push(c);
                p
            } else {
                shape.to_vec()
            };
            let first = |v: &[f64]| {
                if last {
                    to_first(v, shape[0], hw, c)
                } else {
                    v.to_vec()
                }
            };
            let (fx, fd) = (first(&vx), first(&vd));
            let x = from_f64(dev, &vx, &phys, DT)?;
            let dy = from_f64(dev, &vd, &phys, DT)?;
            let (w, b) = (from_f64(dev, &vw, &[c], DT)?, from_f64(dev, &vb, &[c], DT)?);
            for training in [true, false] {
                for (affine, running) in
                    [(false, false), (true, true), (true, false), (false, true)]
                {
                    if !training && !running {
                        continue;
                    }
                    let what = format!(
                        "batch_norm f64 {shape:?} last {last} training {training} affine {affine} running {running}"
                    );
                    let rm = from_f64(dev, &vrm, &[c], DT)?;
                    let rv = from_f64(dev, &vrv, &[c], DT)?;
                    let (rmo, rvo) = if running {
                        (Some(&rm), Some(&rv))
                    } else {
                        (None, None)
                    };
                    let (wo, bo) = if affine {
                        (Some(&w), Some(&b))
                    } else {
                        (None, None)
                    };
                    let (wr, br) = if affine {
                        (Some(&vw[..]), Some(&vb[..]))
                    } else {
                        (None, None)
                    };
                    let runr = if running {
                        Some((&vrm[..], &vrv[..]))
                    } else {
                        None
                    };
                    let (mom, eps) = (0.3, 1e-5);
                    let d = ok(BatchNormDesc::new("batch_norm", shape, training, mom, eps))?;
                    let out = poisoned(dev, &phys, DT)?;
                    if last {
                        ok(norm::batch_norm_channels_last(
                            None,
                            &x,
                            rmo,
                            rvo,
                            wo,
                            bo,
                            training,
                            mom,
                            eps,
                            Some(&out),
                        ))?;
                    } else {
                        ok(norm::batch_norm(
                            None,
                            &x,
                            rmo,
                            rvo,
                            wo,
                            bo,
                            training,
                            mom,
                            eps,
                            Some(&out),
                        ))?;
                    }
                    let (want, wrm, wrv) = nn::batch_norm_ref(&fx, wr, br, runr, &d);
                    assert_close(&what, &first(&values(&out)?), &want, 1e-12, 1e-13)?;
                    if running && training {
                        assert_close(
                            &format!("{what} running_mean"),
                            &values(&rm)?,
                            &wrm,
                            1e-12,
                            1e-14,
                        )?;
                        assert_close(
                            &format!("{what} running_var"),
                            &values(&rv)?,
                            &wrv,
                            1e-11,
                            1e-14,
                        )?;
                    } else if running {
                        assert_close(
                            &format!("{what} running_mean kept"),
                            &values(&rm)?,
                            &vrm,
                            0.0,
                            0.0,
                        )?;
                    }
                    // The backward with the stats as the forward saw them.
                    let (rm, rv) = (
                        from_f64(dev, &vrm, &[c], DT)?,
                        from_f64(dev, &vrv, &[c], DT)?,
                    );
                    let (rmo, rvo) = if running {
                        (Some(&rm), Some(&rv))
                    } else {
                        (None, None)
                    };
                    let g = if last {
                        norm::batch_norm_channels_last_backward(
                            None,
                            &dy,
                            &x,
                            rmo,
                            rvo,
                            wo,
                            training,
                            eps,
                            [Grad::New, Grad::New, Grad::New],
                        )
                    } else {
                        norm::batch_norm_backward(
                            None,
                            &dy,
                            &x,
                            rmo,
                            rvo,
                            wo,
                            training,
                            eps,
                            [Grad::New, Grad::New, Grad::New],
                        )
                    };
                    let [gx, gw, gb] = grads3(ok(g)?)?;
                    let (wx, ww, wb) = nn::batch_norm_backward_ref(&fd, &fx, wr, runr, &d);
                    assert_close(&format!("{what} dx"), &first(&gx), &wx, 1e-11, 1e-12)?;
                    assert_close(&format!("{what} dw"), &gw, &ww, 1e-11, 1e-12)?;
                    assert_close(&format!("{what} db"), &gb, &wb, 1e-11, 1e-12)?;
                }
            }
        }
    }
    // NaN in one channel poisons that channel (and its running stats) only.
    let mut vx = f64_values(12, 9);
    vx[0] = f64::NAN;
    let x = from_f64(dev, &vx, &[2, 2, 3], DT)?;
    let y = values(&ok(norm::batch_norm(
        None, &x, None, None, None, None, true, 0.1, 1e-5, None,
    ))?)?;
    ensure(
        y[1].is_nan() && !y[3].is_nan(),
        "batch_norm f64 NaN channel",
    )?;
    // Empty input: empty output; zero parameter gradients.
    let e = from_f64(dev, &[], &[0, 3, 2], DT)?;
    let w = from_f64(dev, &[1.0, 2.0, 3.0], &[3], DT)?;
    let y = ok(norm::batch_norm(
        None,
        &e,
        None,
        None,
        Some(&w),
        None,
        true,
        0.1,
        1e-5,
        None,
    ))?;
    ensure(
        y.shape() == [0, 3, 2] && y.dtype() == DT,
        "batch_norm f64 empty",
    )?;
    let [_, gw, gb] = grads3(ok(norm::batch_norm_backward(
        None,
        &e,
        &e,
        None,
        None,
        Some(&w),
        true,
        1e-5,
        [Grad::New, Grad::New, Grad::New],
    ))?)?;
    assert_close("batch_norm_backward f64 empty dw", &gw, &[0.0; 3], 0.0, 0.0)?;
    assert_close("batch_norm_backward f64 empty db", &gb, &[0.0; 3], 0.0, 0.0)
}

/// PyTorch's local_response_norm in float64 over `(N, C, inner)`: `(y, d)` with `d` the
/// base `k + alpha / size * window sum of x^2`.
fn lrn_ref(x: &[f64], shape: &[usize], size: usize, alpha: f64, k: f64) -> Vec<f64> {
    let c = shape[1];
    let inner: usize = shape[2..].iter().product();
    (0..x.len())
        .map(|e| {
            let (n, ch, i) = (e / (c * inner), (e / inner) % c, e % inner);
            let lo = ch.saturating_sub(size / 2);
            let hi = (ch + (size - 1) / 2).min(c - 1);
            let s: f64 = (lo..=hi).map(|j| x[(n * c + j) * inner + i].powi(2)).sum();
            k + alpha / size as f64 * s
        })
        .collect()
}

/// f64 local_response_norm and its backward against the analytic float64 reference
/// (`dx = dy d^-b - 2ab/size x sum_{windows holding x} dy x d^(-b-1)`); NaN; empty input.
fn f64_dnn_lrn(dev: &Dev) -> TestResult {
    for (shape, size, alpha, beta, k) in [
        (&[2usize, 7, 3, 4][..], 5usize, 1e-4, 0.75, 1.0),
        (&[2, 6, 5], 2, 0.1, 0.5, 2.0),
        (&[1, 4, 2, 2, 3], 3, 0.2, 0.75, 1.0),
        (&[3, 3, 1], 7, 0.5, 1.0, 0.5),
    ] {
        let n: usize = shape.iter().product();
        let vx = f64_values(n, 300 + size as u64);
        let vd = f64_values(n, 310 + size as u64);
        let x = from_f64(dev, &vx, shape, DT)?;
        let dy = from_f64(dev, &vd, shape, DT)?;
        let what = format!("local_response_norm f64 {shape:?} size {size}");
        let out = poisoned(dev, shape, DT)?;
        ok(norm::local_response_norm(
            None,
            &x,
            size as i64,
            alpha,
            beta,
            k,
            Some(&out),
        ))?;
        let base = lrn_ref(&vx, shape, size, alpha, k);
        let want: Vec<f64> = vx
            .iter()
            .zip(&base)
            .map(|(x, d)| x / d.powf(beta))
            .collect();
        assert_close(&what, &values(&out)?, &want, 1e-13, 1e-14)?;
        let dx = ok(norm::local_response_norm_backward(
            None,
            &x,
            &dy,
            size as i64,
            alpha,
            beta,
            k,
            None,
        ))?;
        let c = shape[1];
        let inner = n / (shape[0] * c);
        let want: Vec<f64> = (0..n)
            .map(|e| {
                let (ni, ch, i) = (e / (c * inner), (e / inner) % c, e % inner);
                // Outputs j whose window [j - size/2, j + (size-1)/2] holds ch.
                let lo = ch.saturating_sub((size - 1) / 2);
                let hi = (ch + size / 2).min(c - 1);
                let s: f64 = (lo..=hi)
                    .map(|j| {
                        let f = (ni * c + j) * inner + i;
                        vd[f] * vx[f] * base[f].powf(-beta - 1.0)
                    })
                    .sum();
                vd[e] * base[e].powf(-beta) - 2.0 * alpha * beta / size as f64 * vx[e] * s
            })
            .collect();
        assert_close(
            &format!("{what} backward"),
            &values(&dx)?,
            &want,
            1e-12,
            1e-13,
        )?;
    }
    let mut vx = f64_values(12, 5);
    vx[4] = f64::NAN;
    let x = from_f64(dev, &vx, &[1, 3, 4], DT)?;
    let y = values(&ok(norm::local_response_norm(
        None, &x, 1, 1e-4, 0.75, 1.0, None,
    ))?)?;
    ensure(
        y[4].is_nan() && !y[5].is_nan(),
        "local_response_norm f64 NaN",
    )?;
    let e = from_f64(dev, &[], &[0, 3, 4], DT)?;
    let y = ok(norm::local_response_norm(
        None, &e, 3, 1e-4, 0.75, 1.0, None,
    ))?;
    ensure(
        y.shape() == [0, 3, 4] && y.dtype() == DT,
        "local_response_norm f64 empty",
    )
}
