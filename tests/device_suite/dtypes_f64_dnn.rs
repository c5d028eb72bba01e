//! f64 through the DNN rows (issue #12 item 3): group_norm, batch_norm (both layouts),
//! local_response_norm, pooling (max/avg, with indices, adaptive), interpolate,
//! scaled_dot_product_attention (+_ex), rope and rope_cached, conv and conv_transpose (+_ex),
//! forward and backward, against the float64 references of
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
        ("f64_dnn_pool", f64_dnn_pool),
        ("f64_dnn_adaptive_pool", f64_dnn_adaptive_pool),
        ("f64_dnn_attention", f64_dnn_attention),
        ("f64_dnn_rope", f64_dnn_rope),
        ("f64_dnn_unpool_interp_bwd", f64_dnn_unpool_interp_bwd),
        ("f64_dnn_conv", f64_dnn_conv),
        ("f64_dnn_conv_transpose", f64_dnn_conv_transpose),
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

/// Channels-last `[n, hw, c]` values from `[n, c, hw]` ones.
fn to_last(v: &[f64], n: usize, c: usize, hw: usize) -> Vec<f64> {
    let mut o = vec![0.0; v.len()];
    for ni in 0..n {
        for ch in 0..c {
            for k in 0..hw {
                o[(ni * hw + k) * c + ch] = v[(ni * c + ch) * hw + k];
            }
        }
    }
    o
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

fn i64s(t: &Tensor) -> Result<Vec<i64>, Failed> {
    Ok(values(t)?.iter().map(|&v| v as i64).collect())
}

/// f64 max and average pooling (1D/2D/3D; stride, padding, dilation, ceil_mode,
/// count_include_pad, padding per side, divisor_override, channels last), forward and
/// backward, max pooling with indices (+_ex in channels last) and its backward, against the
/// float64 references of `ops::pool` (exact for max and the indices, 1e-13 for sums); NaN
/// and -inf windows, ties (the first maximum; the last of two NaNs); empty inputs; a bad
/// index. Every device (GPUs: double kernels).
fn f64_dnn_pool(dev: &Dev) -> TestResult {
    use rocm_backend::ops::conv::Layout;
    use rocm_backend::ops::pool::{self, PoolAttrs, PoolAttrsEx, PoolKind};
    use rocm_backend::runtime::pool as rp;
    let at = |k: &[usize], s: &[usize], p: &[usize], d: &[usize], ceil: bool| PoolAttrs {
        kernel: k.to_vec(),
        stride: s.to_vec(),
        padding: p.to_vec(),
        dilation: d.to_vec(),
        ceil_mode: ceil,
    };
    let cases: Vec<(Vec<usize>, PoolAttrs)> = vec![
        (vec![2, 3, 9], at(&[3], &[2], &[1], &[1], false)),
        (
            vec![2, 2, 7, 6],
            at(&[3, 2], &[2, 1], &[1, 1], &[1, 1], true),
        ),
        (
            vec![1, 3, 8, 8],
            at(&[3, 3], &[2, 2], &[1, 0], &[2, 1], false),
        ),
        (
            vec![2, 2, 6, 6],
            at(&[2, 2], &[2, 2], &[0, 0], &[1, 1], false),
        ),
        (
            vec![1, 2, 4, 5, 6],
            at(&[2, 3, 2], &[2, 2, 1], &[1, 1, 0], &[1, 1, 2], true),
        ),
    ];
    for (i, (shape, a)) in cases.iter().enumerate() {
        let ndim = shape.len() - 2;
        let n: usize = shape.iter().product();
        let mut vx = f64_values(n, 500 + i as u64);
        if i == 1 {
            vx[3] = f64::NAN;
            vx[20] = f64::NEG_INFINITY;
        }
        if i == 3 {
            // Ties (halves), and two NaNs in the first 2x2 window (positions 0, 1, 6, 7):
            // PyTorch's index is the last NaN's.
            for v in vx.iter_mut() {
                *v = (*v * 2.0).round() * 0.5;
            }
            vx[0] = f64::NAN;
            vx[7] = f64::NAN;
        }
        let x = from_f64(dev, &vx, shape, DT)?;
        let kinds = [
            PoolKind::Max,
            PoolKind::Avg {
                count_include_pad: true,
            },
            PoolKind::Avg {
                count_include_pad: false,
            },
        ];
        for kind in kinds {
            let max = kind == PoolKind::Max;
            if !max && a.dilation.iter().any(|&d| d != 1) {
                continue;
            }
            let what = format!("pool f64 {shape:?} {kind:?} case {i}");
            let g = ok(pool::pool_geom("pool", kind, shape, a, ndim))?;
            let y = ok(rp::pool(None, kind, &x, a, ndim, None))?;
            let want = pool::pool_reference(&g, &vx);
            assert_close(&what, &values(&y)?, &want, 1e-13, 1e-14)?;
            let vd = f64_values(want.len(), 600 + i as u64);
            let dy = from_f64(dev, &vd, &g.y_shape(), DT)?;
            let dx = ok(rp::pool_backward(None, kind, &x, &dy, a, ndim, None))?;
            let want = pool::pool_backward_reference(&g, &vx, &vd);
            assert_close(
                &format!("{what} backward"),
                &values(&dx)?,
                &want,
                1e-13,
                1e-14,
            )?;
            if max {
                let (y, idx) = ok(rp::max_pool_with_indices(None, &x, a, ndim, None, None))?;
                let (wy, wi) = pool::max_pool_indices_reference(&g, &vx);
                assert_close(&format!("{what} with indices"), &values(&y)?, &wy, 0.0, 0.0)?;
                ensure(i64s(&idx)? == wi, format!("{what}: indices differ"))?;
                let dx = ok(rp::max_pool_backward_indices(None, &dy, &idx, shape, None))?;
                let want_dx =
                    pool::max_pool_backward_indices_reference(&vd, &wi, g.n * g.c, g.in_vol());
                assert_close(
                    &format!("{what} backward indices"),
                    &values(&dx)?,
                    &want_dx,
                    1e-13,
                    1e-15,
                )?;
                max_pool_indices_last(dev, &g, a, &vx, &vd, &wy, &wi, &want_dx, &what)?;
            }
            // Padding per side, divisor_override, and channels last through pool_ex.
            if ndim == 2 && !max {
                let ex = PoolAttrsEx {
                    attrs: at(&a.kernel, &a.stride, &[1, 0], &[1, 1], false),
                    pad_after: vec![0, 1],
                    divisor_override: Some(3),
                    layout: Layout::ChannelsFirst,
                };
                let g = ok(pool::pool_geom_ex("pool_ex", kind, shape, &ex, ndim))?;
                let y = ok(rp::pool_ex(None, kind, &x, &ex, ndim, None))?;
                let want = pool::pool_reference(&g, &vx);
                assert_close(&format!("{what} ex"), &values(&y)?, &want, 1e-13, 1e-14)?;
                // Channels last: x permuted to [N, H, W, C].
                let xl = ok(rocm_backend::runtime::data::permute(
                    None,
                    &x,
                    &[0, 2, 3, 1],
                    None,
                ))?;
                let exl = PoolAttrsEx {
                    layout: Layout::ChannelsLast,
                    ..ex.clone()
                };
                let yl = ok(rp::pool_ex(None, kind, &xl, &exl, ndim, None))?;
                let yf = ok(rocm_backend::runtime::data::permute(
                    None,
                    &yl,
                    &[0, 3, 1, 2],
                    None,
                ))?;
                assert_close(
                    &format!("{what} ex channels last"),
                    &values(&yf)?,
                    &want,
                    1e-13,
                    1e-14,
                )?;
            }
        }
    }
    // Empty batch: empty outputs.
    let e = from_f64(dev, &[], &[0, 2, 4, 4], DT)?;
    let a = at(&[2, 2], &[2, 2], &[0, 0], &[1, 1], false);
    let y = ok(rp::pool(None, PoolKind::Max, &e, &a, 2, None))?;
    ensure(
        y.shape() == [0, 2, 2, 2] && y.dtype() == DT,
        "pool f64 empty",
    )?;
    let (y, idx) = ok(rp::max_pool_with_indices(None, &e, &a, 2, None, None))?;
    ensure(y.shape() == [0, 2, 2, 2], "max_pool_with_indices f64 empty")?;
    let dx = ok(rp::max_pool_backward_indices(
        None,
        &y,
        &idx,
        &[0, 2, 4, 4],
        None,
    ))?;
    ensure(
        dx.shape() == [0, 2, 4, 4],
        "max_pool_backward_indices f64 empty",
    )?;
    // An index outside its plane: INVALID_ARGUMENT naming the op.
    let x = from_f64(dev, &f64_values(16, 3), &[1, 1, 4, 4], DT)?;
    let (_, idx) = ok(rp::max_pool_with_indices(None, &x, &a, 2, None, None))?;
    let mut bad = i64s(&idx)?;
    for v in [16, -1] {
        bad[2] = v;
        let bi = from_f64(
            dev,
            &bad.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &[1, 1, 2, 2],
            DType::I64,
        )?;
        let dy = from_f64(dev, &[1.0; 4], &[1, 1, 2, 2], DT)?;
        match rp::max_pool_backward_indices(None, &dy, &bi, &[1, 1, 4, 4], None) {
            Err(e) if e.kind == rocm_backend::ErrorKind::InvalidArgument => ensure(
                e.message.contains("max_pool_backward_indices")
                    && e.message.contains(&format!("index {v} at position 2 ")),
                format!("bad index message: {}", e.message),
            )?,
            other => {
                return Err(format!(
                    "f64 bad index {v}: {:?}, expected InvalidArgument",
                    other.err()
                )
                .into());
            }
        }
    }
    Ok(())
}

/// f64 max pooling with indices and its backward in channels last (`_ex`, layout 1): the
/// channels-first values, indices and gradients of `g` (`wy`, `wi`, `want_dx`), permuted.
#[allow(clippy::too_many_arguments)]
fn max_pool_indices_last(
    dev: &Dev,
    g: &rocm_backend::ops::pool::PoolGeom,
    a: &rocm_backend::ops::pool::PoolAttrs,
    vx: &[f64],
    vd: &[f64],
    wy: &[f64],
    wi: &[i64],
    want_dx: &[f64],
    what: &str,
) -> TestResult {
    use rocm_backend::ops::conv::Layout;
    use rocm_backend::ops::pool::PoolAttrsEx;
    use rocm_backend::runtime::pool as rp;
    let (n, c, iv, ov) = (g.n, g.c, g.in_vol(), g.out_vol());
    let ndim = a.kernel.len();
    let x_first: Vec<usize> = [n, c]
        .into_iter()
        .chain(g.in_sp[3 - ndim..].iter().copied())
        .collect();
    let x_last = Layout::last_shape(&x_first);
    let y_last = Layout::last_shape(&g.y_shape());
    let ex = PoolAttrsEx {
        attrs: a.clone(),
        pad_after: a.padding.clone(),
        divisor_override: None,
        layout: Layout::ChannelsLast,
    };
    let x = from_f64(dev, &to_last(vx, n, c, iv), &x_last, DT)?;
    let (y, idx) = ok(rp::max_pool_with_indices_ex(
        None, &x, &ex, ndim, None, None,
    ))?;
    ensure(
        y.shape() == y_last && idx.shape() == y_last,
        format!(
            "{what} channels last: shapes {:?} {:?}",
            y.shape(),
            idx.shape()
        ),
    )?;
    assert_close(
        &format!("{what} with indices channels last"),
        &to_first(&values(&y)?, n, ov, c),
        wy,
        0.0,
        0.0,
    )?;
    let gi: Vec<i64> = to_first(&values(&idx)?, n, ov, c)
        .iter()
        .map(|&v| v as i64)
        .collect();
    ensure(gi == wi, format!("{what}: channels-last indices differ"))?;
    let dy = from_f64(dev, &to_last(vd, n, c, ov), &y_last, DT)?;
    let dx = ok(rp::max_pool_backward_indices_ex(
        None, &dy, &idx, &x_last, 1, None,
    ))?;
    assert_close(
        &format!("{what} backward indices channels last"),
        &to_first(&values(&dx)?, n, iv, c),
        want_dx,
        1e-13,
        1e-15,
    )
}

/// f64 adaptive average and max pooling (1D/2D/3D, both layouts), forward and backward,
/// against the float64 references (exact for max and the indices, 1e-13 for sums); NaN,
/// ties (the first maximum), overlapping windows, empty batches; adaptive_avg_pool2d;
/// linear interpolate in f64 (the source positions in f64, as PyTorch's double kernels)
/// and max_unpool_backward. Every device (GPUs: double kernels).
fn f64_dnn_adaptive_pool(dev: &Dev) -> TestResult {
    use rocm_backend::ops::conv::Layout;
    use rocm_backend::ops::pool;
    use rocm_backend::runtime::data::permute;
    use rocm_backend::runtime::pool as rp;
    let cases: &[(&[usize], &[usize])] = &[
        (&[2, 3, 10], &[4]),
        (&[2, 2, 7, 5], &[3, 2]),
        (&[1, 2, 5, 4, 6], &[2, 3, 4]),
        (&[2, 3, 5, 4], &[4, 3]),
    ];
    for (i, &(shape, osz)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let mut vx = f64_values(n, 700 + i as u64);
        if i == 3 {
            // Ties (halves; windows overlap, 5 -> 4 and 4 -> 3).
            for v in vx.iter_mut() {
                *v = (*v * 2.0).round() * 0.5;
            }
        }
        vx[1] = f64::NAN;
        let x = from_f64(dev, &vx, shape, DT)?;
        let g = ok(pool::adaptive_geom(
            "adaptive",
            shape,
            osz,
            Layout::ChannelsFirst,
        ))?;
        let what = format!("adaptive f64 {shape:?} -> {osz:?}");
        let y = ok(rp::adaptive_avg_pool(None, &x, osz, 0, None))?;
        let want = pool::adaptive_avg_reference(&g, &vx);
        assert_close(&format!("{what} avg"), &values(&y)?, &want, 1e-13, 1e-14)?;
        let vd = f64_values(want.len(), 710 + i as u64);
        let dy = from_f64(dev, &vd, &g.y_shape(), DT)?;
        let dx = ok(rp::adaptive_avg_pool_backward(None, &dy, shape, 0, None))?;
        let want = pool::adaptive_avg_backward_reference(&g, &vd);
        assert_close(
            &format!("{what} avg backward"),
            &values(&dx)?,
            &want,
            1e-13,
            1e-14,
        )?;
        let (y, idx) = ok(rp::adaptive_max_pool(None, &x, osz, 0, None, None))?;
        let (wy, wi) = pool::adaptive_max_reference(&g, &vx);
        assert_close(&format!("{what} max"), &values(&y)?, &wy, 0.0, 0.0)?;
        ensure(i64s(&idx)? == wi, format!("{what}: max indices differ"))?;
        let dx = ok(rp::adaptive_max_pool_backward(
            None, &dy, &idx, shape, 0, None,
        ))?;
        let want = pool::max_pool_backward_indices_reference(&vd, &wi, g.n * g.c, g.in_vol());
        assert_close(
            &format!("{what} max backward"),
            &values(&dx)?,
            &want,
            1e-15,
            0.0,
        )?;
        // Channels last: the same values permuted.
        let nd = shape.len();
        let to_last: Vec<i64> = std::iter::once(0).chain(2..nd as i64).chain([1]).collect();
        let to_first: Vec<i64> = std::iter::once(0)
            .chain([nd as i64 - 1])
            .chain(1..nd as i64 - 1)
            .collect();
        let xl = ok(permute(None, &x, &to_last, None))?;
        let yl = ok(rp::adaptive_avg_pool(None, &xl, osz, 1, None))?;
        let want = pool::adaptive_avg_reference(&g, &vx);
        let yf = ok(permute(None, &yl, &to_first, None))?;
        assert_close(
            &format!("{what} avg channels last"),
            &values(&yf)?,
            &want,
            1e-13,
            1e-14,
        )?;
        let (yl, il) = ok(rp::adaptive_max_pool(None, &xl, osz, 1, None, None))?;
        let yf = ok(permute(None, &yl, &to_first, None))?;
        assert_close(
            &format!("{what} max channels last"),
            &values(&yf)?,
            &wy,
            0.0,
            0.0,
        )?;
        let jf = ok(permute(None, &il, &to_first, None))?;
        ensure(
            i64s(&jf)? == wi,
            format!("{what}: channels-last max indices differ"),
        )?;
        let dyl = ok(permute(None, &dy, &to_last, None))?;
        let dxl = ok(rp::adaptive_max_pool_backward(
            None,
            &dyl,
            &il,
            xl.shape(),
            1,
            None,
        ))?;
        let want = pool::max_pool_backward_indices_reference(&vd, &wi, g.n * g.c, g.in_vol());
        let dxf = ok(permute(None, &dxl, &to_first, None))?;
        assert_close(
            &format!("{what} max backward channels last"),
            &values(&dxf)?,
            &want,
            1e-13,
            1e-15,
        )?;
        let dxl = ok(rp::adaptive_avg_pool_backward(
            None,
            &dyl,
            xl.shape(),
            1,
            None,
        ))?;
        let want = pool::adaptive_avg_backward_reference(&g, &vd);
        let dxf = ok(permute(None, &dxl, &to_first, None))?;
        assert_close(
            &format!("{what} avg backward channels last"),
            &values(&dxf)?,
            &want,
            1e-13,
            1e-14,
        )?;
    }
    let x = from_f64(dev, &f64_values(2 * 3 * 7 * 5, 9), &[2, 3, 7, 5], DT)?;
    let y = ok(rp::adaptive_avg_pool2d(None, &x, [3, 2], None))?;
    let g = ok(pool::adaptive_geom(
        "adaptive",
        &[2, 3, 7, 5],
        &[3, 2],
        Layout::ChannelsFirst,
    ))?;
    let want = pool::adaptive_avg_reference(&g, &values(&x)?);
    assert_close("adaptive_avg_pool2d f64", &values(&y)?, &want, 1e-13, 1e-14)?;
    // Empty batch: empty results, both layouts, forward and backward.
    for layout in [0, 1] {
        let shape: &[usize] = if layout == 0 {
            &[0, 2, 5, 4]
        } else {
            &[0, 5, 4, 2]
        };
        let pooled: &[usize] = if layout == 0 {
            &[0, 2, 3, 2]
        } else {
            &[0, 3, 2, 2]
        };
        let e = from_f64(dev, &[], shape, DT)?;
        let y = ok(rp::adaptive_avg_pool(None, &e, &[3, 2], layout, None))?;
        let (ym, im) = ok(rp::adaptive_max_pool(None, &e, &[3, 2], layout, None, None))?;
        ensure(
            y.shape() == pooled && ym.shape() == pooled && im.shape() == pooled,
            format!("adaptive f64 empty layout {layout}"),
        )?;
        let dx = ok(rp::adaptive_avg_pool_backward(
            None, &y, shape, layout, None,
        ))?;
        let dxm = ok(rp::adaptive_max_pool_backward(
            None, &ym, &im, shape, layout, None,
        ))?;
        ensure(
            dx.shape() == shape && dxm.shape() == shape,
            format!("adaptive f64 empty backward layout {layout}"),
        )?;
    }
    // Linear interpolation in f64: 1-D [0, 1, 2, 3] to 7 points, align_corners false, source
    // positions (o + 0.5) * 4/7 - 0.5 computed in f64.
    let x = from_f64(dev, &[0.0, 1.0, 2.0, 3.0], &[1, 1, 4], DT)?;
    let y = ok(rp::interpolate(
        None,
        &x,
        &[7],
        rp::INTERP_LINEAR,
        false,
        None,
    ))?;
    let want: Vec<f64> = (0..7)
        .map(|o| ((o as f64 + 0.5) * (4.0 / 7.0) - 0.5).clamp(0.0, 3.0))
        .collect();
    assert_close("interpolate linear f64", &values(&y)?, &want, 1e-15, 1e-15)?;
    // max_unpool_backward (a gather) in f64.
    let dy = from_f64(dev, &[0.5, 1.25, -2.0, 3.0 + 1e-12], &[1, 1, 4], DT)?;
    let idx = from_f64(dev, &[3.0, 0.0, 2.0], &[1, 1, 3], DType::I64)?;
    let dx = ok(rp::max_unpool_backward(None, &dy, &idx, None))?;
    assert_close(
        "max_unpool_backward f64",
        &values(&dx)?,
        &[3.0 + 1e-12, 0.5, -2.0],
        0.0,
        0.0,
    )
}

/// f64 max_unpool (a position named twice gets the mean) and linear interpolate_backward
/// (the adjoint of the f64 weights), on every device.
fn f64_dnn_unpool_interp_bwd(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::pool as rp;
    let x = from_f64(dev, &[0.5, 1.25 + 1e-12, -2.0], &[1, 1, 3], DT)?;
    let idx = from_f64(dev, &[3.0, 0.0, 3.0], &[1, 1, 3], DType::I64)?;
    let y = ok(rp::max_unpool(None, &x, &idx, &[5], None))?;
    assert_close(
        "max_unpool f64",
        &values(&y)?,
        &[1.25 + 1e-12, 0.0, 0.0, -0.75, 0.0],
        0.0,
        0.0,
    )?;
    let (n_in, n_out) = (4usize, 7usize);
    let dyv: Vec<f64> = f64_values(n_out, 4242);
    let dy = from_f64(dev, &dyv, &[1, 1, n_out], DT)?;
    let dx = ok(rp::interpolate_backward(
        None,
        &dy,
        &[1, 1, n_in],
        rp::INTERP_LINEAR,
        false,
        None,
    ))?;
    let mut want = vec![0.0f64; n_in];
    let scale = n_in as f64 / n_out as f64;
    for (o, g) in dyv.iter().enumerate() {
        let src = (scale * (o as f64 + 0.5) - 0.5).max(0.0);
        let h0 = (src.floor() as usize).min(n_in - 1);
        let h1 = (h0 + 1).min(n_in - 1);
        let w1 = src - h0 as f64;
        want[h0] += (1.0 - w1) * g;
        want[h1] += w1 * g;
    }
    assert_close(
        "interpolate_backward linear f64",
        &values(&dx)?,
        &want,
        1e-13,
        1e-14,
    )
}

/// f64 scaled_dot_product_attention (+_ex: bool, f64 and f32 masks with -inf entries,
/// causal top-left and bottom-right, GQA, broadcast batches, rows that see no key) forward
/// and backward against the float64 references at ~1e-12; empty key sets.
fn f64_dnn_attention(dev: &Dev) -> TestResult {
    use rocm_backend::ops::nn::{AttentionDesc, AttentionPlan, Causal};
    use rocm_backend::runtime::attention as ra;
    let vals =
        |n: usize, seed: u64| -> Vec<f64> { f64_values(n, seed).iter().map(|v| 1.7 * v).collect() };
    // The plain op.
    for (qs, ks, vs, causal) in [
        (
            &[2usize, 3, 5, 4][..],
            &[2usize, 3, 7, 4][..],
            &[2usize, 3, 7, 6][..],
            false,
        ),
        (&[2, 6, 4], &[2, 6, 4], &[2, 6, 4], true),
        (&[1, 2, 7, 8], &[1, 2, 3, 8], &[1, 2, 3, 8], true),
    ] {
        let (qv, kv, vv) = (
            vals(qs.iter().product(), 1),
            vals(ks.iter().product(), 2),
            vals(vs.iter().product(), 3),
        );
        let (q, k, v) = (
            from_f64(dev, &qv, qs, DT)?,
            from_f64(dev, &kv, ks, DT)?,
            from_f64(dev, &vv, vs, DT)?,
        );
        for scale in [None, Some(0.3)] {
            let what = format!("sdpa f64 q{qs:?} k{ks:?} v{vs:?} causal {causal} {scale:?}");
            let (d, shape) = ok(AttentionDesc::new("sdpa", qs, ks, vs, scale, causal))?;
            let out = poisoned(dev, &shape, DT)?;
            ok(ra::scaled_dot_product_attention(
                None,
                &q,
                &k,
                &v,
                causal,
                scale,
                Some(&out),
            ))?;
            let want = rocm_backend::ops::nn::attention_ref(&qv, &kv, &vv, &d);
            assert_close(&what, &values(&out)?, &want, 1e-12, 1e-13)?;
            let gv = vals(want.len(), 4);
            let go = from_f64(dev, &gv, &shape, DT)?;
            let [gq, gk, gvv] = ok(ra::scaled_dot_product_attention_backward(
                None,
                &go,
                &q,
                &k,
                &v,
                causal,
                scale,
                [Grad::New, Grad::New, Grad::New],
            ))?;
            let (wq, wk, wv) =
                rocm_backend::ops::nn::attention_backward_ref(&qv, &kv, &vv, &gv, &d);
            assert_close(&format!("{what} dq"), &values(&gq)?, &wq, 1e-11, 1e-12)?;
            assert_close(&format!("{what} dk"), &values(&gk)?, &wk, 1e-11, 1e-12)?;
            assert_close(&format!("{what} dv"), &values(&gvv)?, &wv, 1e-11, 1e-12)?;
        }
    }
    // The _ex op: masks, causal kinds, GQA, broadcasting.
    type Case<'a> = (
        &'a [usize],
        &'a [usize],
        &'a [usize],
        Option<(&'a [usize], DType)>,
        Causal,
        bool,
    );
    let cases: &[Case] = &[
        (
            &[2, 2, 5, 4],
            &[2, 2, 6, 4],
            &[2, 2, 6, 3],
            Some((&[5, 6], DType::Bool)),
            Causal::None,
            false,
        ),
        (
            &[2, 2, 5, 4],
            &[2, 2, 6, 4],
            &[2, 2, 6, 3],
            Some((&[2, 1, 5, 6], DType::F64)),
            Causal::None,
            false,
        ),
        (
            &[1, 2, 4, 4],
            &[1, 2, 6, 4],
            &[1, 2, 6, 4],
            Some((&[4, 6], DType::F32)),
            Causal::None,
            false,
        ),
        (
            &[1, 2, 6, 4],
            &[1, 2, 3, 4],
            &[1, 2, 3, 4],
            None,
            Causal::BottomRight,
            false,
        ),
        (
            &[1, 2, 6, 4],
            &[1, 2, 3, 4],
            &[1, 2, 3, 4],
            None,
            Causal::TopLeft,
            false,
        ),
        (
            &[2, 3, 5, 4],
            &[1, 3, 7, 4],
            &[3, 7, 6],
            None,
            Causal::TopLeft,
            false,
        ),
        (
            &[2, 4, 3, 4],
            &[1, 2, 6, 4],
            &[2, 2, 6, 4],
            None,
            Causal::None,
            true,
        ),
    ];
    for (ci, &(qs, ks, vs, m, causal, gqa)) in cases.iter().enumerate() {
        let s0 = 20 + 5 * ci as u64;
        let (qv, kv, vv) = (
            vals(qs.iter().product(), s0),
            vals(ks.iter().product(), s0 + 1),
            vals(vs.iter().product(), s0 + 2),
        );
        let (q, k, v) = (
            from_f64(dev, &qv, qs, DT)?,
            from_f64(dev, &kv, ks, DT)?,
            from_f64(dev, &vv, vs, DT)?,
        );
        let mask = match m {
            None => None,
            Some((ms, mdt)) => {
                let n: usize = ms.iter().product();
                let sk = *ms.last().unwrap();
                // The first key row fully masked (a query that sees nothing gives 0), some
                // other entries masked.
                let mv: Vec<f64> = vals(n, s0 + 3)
                    .iter()
                    .enumerate()
                    .map(|(i, &r)| {
                        let off = i < sk || r < -1.0;
                        if mdt == DType::Bool {
                            (!off) as i32 as f64
                        } else if off {
                            f64::NEG_INFINITY
                        } else {
                            r
                        }
                    })
                    .collect();
                {
                    // The values as the mask holds them (an f32 mask rounds).
                    let t = from_f64(dev, &mv, ms, mdt)?;
                    let held = values(&t)?;
                    Some((t, held))
                }
            }
        };
        let mt = mask.as_ref().map(|(t, _)| t);
        let mvals = mask.as_ref().map(|(_, v)| v.as_slice());
        let what = format!("sdpa_ex f64 case {ci}");
        let plan = ok(AttentionPlan::new(
            "sdpa",
            qs,
            ks,
            vs,
            mt.map(|t| (t.shape(), t.dtype())),
            DT,
            None,
            causal,
            gqa,
        ))?;
        let oshape = plan.out_shape();
        let out = poisoned(dev, &oshape, DT)?;
        ok(ra::scaled_dot_product_attention_ex(
            None,
            &q,
            &k,
            &v,
            mt,
            causal,
            None,
            gqa,
            Some(&out),
        ))?;
        let want = rocm_backend::ops::nn::attention_plan_ref(&qv, &kv, &vv, mvals, &plan);
        assert_close(&what, &values(&out)?, &want, 1e-12, 1e-13)?;
        let gv = vals(want.len(), s0 + 4);
        let go = from_f64(dev, &gv, &oshape, DT)?;
        let [gq, gk, gvv] = ok(ra::scaled_dot_product_attention_ex_backward(
            None,
            &go,
            &q,
            &k,
            &v,
            mt,
            causal,
            None,
            gqa,
            [Grad::New, Grad::New, Grad::New],
        ))?;
        let (wq, wk, wv) =
            rocm_backend::ops::nn::attention_plan_backward_ref(&qv, &kv, &vv, mvals, &gv, &plan);
        assert_close(&format!("{what} dq"), &values(&gq)?, &wq, 1e-11, 1e-12)?;
        assert_close(&format!("{what} dk"), &values(&gk)?, &wk, 1e-11, 1e-12)?;
        assert_close(&format!("{what} dv"), &values(&gvv)?, &wv, 1e-11, 1e-12)?;
    }
    // No keys: zeros.
    let q = from_f64(dev, &vals(12, 7), &[1, 3, 4], DT)?;
    let k = from_f64(dev, &[], &[1, 0, 4], DT)?;
    let y = ok(ra::scaled_dot_product_attention(
        None, &q, &k, &k, false, None, None,
    ))?;
    assert_close("sdpa f64 no keys", &values(&y)?, &[0.0; 12], 0.0, 0.0)
}

/// f64 rope (+ inverse = backward) and rope_cached (+ interleaved, position ids, inverse)
/// against the float64 references; in place.
fn f64_dnn_rope(dev: &Dev) -> TestResult {
    use rocm_backend::ops::nn::{RopeCachedDesc, RopeDesc, rope_cached_ref, rope_ref};
    use rocm_backend::runtime::transformer as rt;
    let cases: &[(&[usize], i64, i64)] = &[
        (&[5, 8], 0, 3),
        (&[2, 7, 3, 6], 1, 0),
        (&[2, 3, 7, 6], -2, 11),
    ];
    for (i, &(shape, sd, off)) in cases.iter().enumerate() {
        let xv = f64_values(shape.iter().product(), 900 + i as u64);
        let x = from_f64(dev, &xv, shape, DT)?;
        for inverse in [false, true] {
            let d = ok(RopeDesc::new("rope", shape, sd, 10000.0, off, inverse))?;
            let y = ok(rt::rope(None, &x, sd, 10000.0, off, inverse, None))?;
            let want = rope_ref(&xv, &d);
            assert_close(
                &format!("rope f64 {shape:?} inverse {inverse}"),
                &values(&y)?,
                &want,
                1e-13,
                1e-14,
            )?;
        }
    }
    // rope_cached: x [B, S, H, D] (seq dim 1), caches [max_pos, rot / 2], rotary dim 4 of 6.
    let (b, sq, h, dim, rot, max_pos) = (2usize, 5usize, 2usize, 6usize, 4usize, 9usize);
    let shape = [b, sq, h, dim];
    let xv = f64_values(b * sq * h * dim, 950);
    let x = from_f64(dev, &xv, &shape, DT)?;
    let cv: Vec<f64> = (0..max_pos * rot / 2)
        .map(|i| (0.37 * i as f64).cos())
        .collect();
    let sv: Vec<f64> = (0..max_pos * rot / 2)
        .map(|i| (0.37 * i as f64).sin())
        .collect();
    let cos = from_f64(dev, &cv, &[max_pos, rot / 2], DT)?;
    let sin = from_f64(dev, &sv, &[max_pos, rot / 2], DT)?;
    let pv: Vec<f64> = (0..b * sq).map(|i| ((i * 7) % max_pos) as f64).collect();
    let pos = from_f64(dev, &pv, &[b, sq], DType::I64)?;
    for interleaved in [false, true] {
        for inverse in [false, true] {
            for with_pos in [false, true] {
                let what = format!(
                    "rope_cached f64 interleaved {interleaved} inverse {inverse} ids {with_pos}"
                );
                let d = ok(RopeCachedDesc::new(
                    "rope_cached",
                    &shape,
                    cos.shape(),
                    sin.shape(),
                    if with_pos { Some(pos.shape()) } else { None },
                    1,
                    interleaved,
                    inverse,
                ))?;
                let posr = if with_pos { Some(&pos) } else { None };
                let y = ok(rt::rope_cached(
                    None,
                    &x,
                    &cos,
                    &sin,
                    posr,
                    1,
                    interleaved,
                    inverse,
                    None,
                ))?;
                let want = rope_cached_ref(
                    &xv,
                    &cv,
                    &sv,
                    if with_pos { Some(&pv[..]) } else { None },
                    &d,
                );
                assert_close(&what, &values(&y)?, &want, 1e-13, 1e-14)?;
                // In place.
                let xi = from_f64(dev, &xv, &shape, DT)?;
                ok(rt::rope_cached(
                    None,
                    &xi,
                    &cos,
                    &sin,
                    posr,
                    1,
                    interleaved,
                    inverse,
                    Some(&xi),
                ))?;
                assert_close(
                    &format!("{what} in place"),
                    &values(&xi)?,
                    &want,
                    1e-13,
                    1e-14,
                )?;
            }
        }
    }
    Ok(())
}

fn conv_attrs(
    s: &[usize],
    p: &[usize],
    d: &[usize],
    groups: usize,
    op: &[usize],
) -> rocm_backend::ops::conv::ConvAttrs {
    rocm_backend::ops::conv::ConvAttrs {
        stride: s.to_vec(),
        padding: p.to_vec(),
        dilation: d.to_vec(),
        groups,
        output_padding: op.to_vec(),
    }
}

/// f64 conv (1D/2D/3D; stride, padding, dilation, groups, bias, relu), its data and weight
/// gradients, conv_ex with padding per side and channels last, against the float64
/// references of `ops::conv` at 1e-12 (the CPU: the references; GPUs: the direct double
/// kernels of kernels/pool.hip).
fn f64_dnn_conv(dev: &Dev) -> TestResult {
    use rocm_backend::ops::conv::{self as c, Activation, ConvAttrsEx, Layout};
    use rocm_backend::runtime::conv as rc;
    use rocm_backend::runtime::data::permute;
    let cases: Vec<(Vec<usize>, Vec<usize>, rocm_backend::ops::conv::ConvAttrs)> = vec![
        (
            vec![2, 4, 9],
            vec![6, 2, 3],
            conv_attrs(&[2], &[1], &[1], 2, &[0]),
        ),
        (
            vec![2, 3, 7, 6],
            vec![4, 3, 3, 2],
            conv_attrs(&[1, 2], &[1, 0], &[2, 1], 1, &[0, 0]),
        ),
        (
            vec![1, 4, 6, 6],
            vec![4, 1, 3, 3],
            conv_attrs(&[2, 2], &[1, 1], &[1, 1], 4, &[0, 0]),
        ),
        (
            vec![1, 2, 4, 5, 4],
            vec![3, 2, 2, 3, 2],
            conv_attrs(&[1, 2, 1], &[0, 1, 1], &[1, 1, 2], 1, &[0, 0, 0]),
        ),
    ];
    for (i, (xs, wsh, a)) in cases.iter().enumerate() {
        let ndim = xs.len() - 2;
        let g = ok(c::conv_geom("conv", xs, wsh, a, ndim))?;
        let (xv, wv, bv) = (
            f64_values(xs.iter().product(), 1000 + i as u64),
            f64_values(wsh.iter().product(), 1010 + i as u64),
            f64_values(g.c_out, 1020 + i as u64),
        );
        let x = from_f64(dev, &xv, xs, DT)?;
        let w = from_f64(dev, &wv, wsh, DT)?;
        let b = from_f64(dev, &bv, &[g.c_out], DT)?;
        let what = format!("conv f64 case {i} x{xs:?} w{wsh:?}");
        let want = c::conv_reference(&g, &xv, &wv, Some(&bv));
        let out = poisoned(dev, &g.y_shape(), DT)?;
        ok(rc::conv(
            None,
            &x,
            &w,
            Some(&b),
            a,
            ndim,
            Activation::None,
            Some(&out),
        ))?;
        assert_close(&what, &values(&out)?, &want, 1e-12, 1e-13)?;
        let y = ok(rc::conv(
            None,
            &x,
            &w,
            Some(&b),
            a,
            ndim,
            Activation::Relu,
            None,
        ))?;
        let relu: Vec<f64> = want.iter().map(|v| v.max(0.0)).collect();
        assert_close(&format!("{what} relu"), &values(&y)?, &relu, 1e-12, 1e-13)?;
        let dv = f64_values(want.len(), 1030 + i as u64);
        let dy = from_f64(dev, &dv, &g.y_shape(), DT)?;
        let dx = ok(rc::conv_backward_data(None, &dy, &w, xs, a, ndim, None))?;
        let want = c::conv_backward_data_reference(&g, &dv, &wv);
        assert_close(
            &format!("{what} backward data"),
            &values(&dx)?,
            &want,
            1e-12,
            1e-13,
        )?;
        let (dw, db) = ok(rc::conv_backward_weight(None, &x, &dy, wsh, a, ndim, true))?;
        let (ww, wb) = c::conv_backward_weight_reference(&g, &xv, &dv);
        assert_close(
            &format!("{what} backward weight"),
            &values(&dw)?,
            &ww,
            1e-12,
            1e-13,
        )?;
        let db = db.ok_or("no bias gradient")?;
        assert_close(
            &format!("{what} backward bias"),
            &values(&db)?,
            &wb,
            1e-12,
            1e-13,
        )?;
        // conv_ex channels last (2-D): the same results permuted.
        if ndim == 2 {
            let ex = ConvAttrsEx {
                attrs: a.clone(),
                pad_after: a.padding.clone(),
                layout: Layout::ChannelsLast,
            };
            let xl = ok(permute(None, &x, &[0, 2, 3, 1], None))?;
            let wl = ok(permute(None, &w, &[0, 2, 3, 1], None))?;
            let yl = ok(rc::conv_ex(
                None,
                &xl,
                &wl,
                Some(&b),
                &ex,
                ndim,
                Activation::None,
                None,
            ))?;
            let yf = ok(permute(None, &yl, &[0, 3, 1, 2], None))?;
            let want = c::conv_reference(&g, &xv, &wv, Some(&bv));
            assert_close(
                &format!("{what} ex channels last"),
                &values(&yf)?,
                &want,
                1e-12,
                1e-13,
            )?;
        }
    }
    // Padding per side: conv_ex of x with (before, after) = (2, 0) along W equals the
    // reference of x padded by hand with zeros.
    let (xs, wsh) = ([1usize, 2, 3, 4], [2usize, 2, 2, 3]);
    let xv = f64_values(24, 1100);
    let wv = f64_values(24, 1101);
    let x = from_f64(dev, &xv, &xs, DT)?;
    let w = from_f64(dev, &wv, &wsh, DT)?;
    let ex = ConvAttrsEx {
        attrs: conv_attrs(&[1, 1], &[0, 2], &[1, 1], 1, &[0, 0]),
        pad_after: vec![0, 0],
        layout: Layout::ChannelsFirst,
    };
    let y = ok(rc::conv_ex(
        None,
        &x,
        &w,
        None,
        &ex,
        2,
        Activation::None,
        None,
    ))?;
    let mut xp = vec![0.0; 2 * 3 * 6];
    for ch in 0..2 {
        for h in 0..3 {
            for wi in 0..4 {
                xp[(ch * 3 + h) * 6 + wi + 2] = xv[(ch * 3 + h) * 4 + wi];
            }
        }
    }
    let g = ok(c::conv_geom(
        "conv",
        &[1, 2, 3, 6],
        &wsh,
        &conv_attrs(&[1, 1], &[0, 0], &[1, 1], 1, &[0, 0]),
        2,
    ))?;
    let want = c::conv_reference(&g, &xp, &wv, None);
    assert_close(
        "conv_ex f64 padding per side",
        &values(&y)?,
        &want,
        1e-12,
        1e-13,
    )?;
    // Empty batch: an empty output.
    let e = from_f64(dev, &[], &[0, 2, 3, 4], DT)?;
    let y = ok(rc::conv(
        None,
        &e,
        &w,
        None,
        &conv_attrs(&[1], &[0], &[1], 1, &[0]),
        2,
        Activation::None,
        None,
    ))?;
    ensure(
        y.shape() == [0, 2, 2, 2] && y.dtype() == DT,
        "conv f64 empty",
    )
}

/// f64 conv_transpose (stride, padding, output_padding, dilation, groups, bias) and its data
/// and weight gradients against the float64 references (the transposed convolution is the
/// data gradient of its ConvGeom), at 1e-12.
fn f64_dnn_conv_transpose(dev: &Dev) -> TestResult {
    use rocm_backend::ops::conv as c;
    use rocm_backend::runtime::conv as rc;
    let cases: Vec<(Vec<usize>, Vec<usize>, rocm_backend::ops::conv::ConvAttrs)> = vec![
        (
            vec![2, 4, 5],
            vec![4, 3, 3],
            conv_attrs(&[2], &[1], &[1], 2, &[1]),
        ),
        (
            vec![1, 3, 4, 3],
            vec![3, 2, 3, 2],
            conv_attrs(&[2, 1], &[1, 0], &[1, 2], 1, &[1, 0]),
        ),
        (
            vec![1, 2, 2, 3, 2],
            vec![2, 2, 2, 2, 2],
            conv_attrs(&[2, 1, 2], &[0, 1, 0], &[1, 1, 1], 1, &[0, 0, 1]),
        ),
    ];
    for (i, (xs, wsh, a)) in cases.iter().enumerate() {
        let ndim = xs.len() - 2;
        let g = ok(c::conv_transpose_geom("conv_transpose", xs, wsh, a, ndim))?;
        let co = g.c_in; // the transposed convolution's output channels
        let (xv, wv, bv) = (
            f64_values(xs.iter().product(), 1200 + i as u64),
            f64_values(wsh.iter().product(), 1210 + i as u64),
            f64_values(co, 1220 + i as u64),
        );
        let x = from_f64(dev, &xv, xs, DT)?;
        let w = from_f64(dev, &wv, wsh, DT)?;
        let b = from_f64(dev, &bv, &[co], DT)?;
        let what = format!("conv_transpose f64 case {i} x{xs:?} w{wsh:?}");
        let ov = g.in_vol();
        let want: Vec<f64> = c::conv_backward_data_reference(&g, &xv, &wv)
            .iter()
            .enumerate()
            .map(|(j, v)| v + bv[(j / ov) % co])
            .collect();
        let y = ok(rc::conv_transpose(None, &x, &w, Some(&b), a, ndim, None))?;
        ensure(
            y.shape() == g.x_shape().as_slice(),
            format!("{what}: shape"),
        )?;
        assert_close(&what, &values(&y)?, &want, 1e-12, 1e-13)?;
        let dv = f64_values(want.len(), 1230 + i as u64);
        let dy = from_f64(dev, &dv, &g.x_shape(), DT)?;
        let dx = ok(rc::conv_transpose_backward_data(
            None, &dy, &w, xs, a, ndim, None,
        ))?;
        let want = c::conv_reference(&g, &dv, &wv, None);
        assert_close(
            &format!("{what} backward data"),
            &values(&dx)?,
            &want,
            1e-12,
            1e-13,
        )?;
        let (dw, db) = ok(rc::conv_transpose_backward_weight(
            None, &x, &dy, wsh, a, ndim, true,
        ))?;
        let (ww, _) = c::conv_backward_weight_reference(&g, &dv, &xv);
        assert_close(
            &format!("{what} backward weight"),
            &values(&dw)?,
            &ww,
            1e-12,
            1e-13,
        )?;
        let mut wb = vec![0.0; co];
        for (j, v) in dv.iter().enumerate() {
            wb[(j / ov) % co] += v;
        }
        let db = db.ok_or("no bias gradient")?;
        assert_close(
            &format!("{what} backward bias"),
            &values(&db)?,
            &wb,
            1e-12,
            1e-13,
        )?;
    }
    Ok(())
}
