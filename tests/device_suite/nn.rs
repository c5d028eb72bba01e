//! Softmax, normalization, losses and transformer ops (forward and backward) against the
//! float64 reference of `ops::nn`, in every float dtype, on several shapes (size 1, odd
//! sizes, empty, rows longer than any block), into poisoned outputs; each backward of the
//! reference is checked against central finite differences; misuse answers with its
//! ErrorKind and a message naming the op.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::nn::{self as r, *};
use rocm_backend::runtime::prelude::{self as e, Grad};
use rocm_backend::runtime::{DType, Tensor};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("softmax_any_dim", softmax_any_dim),
        ("softmax_backward_any_dim", softmax_backward_any_dim),
        ("layer_norm_fwd_bwd", layer_norm_fwd_bwd),
        ("rms_norm_fwd_bwd", rms_norm_fwd_bwd),
        ("group_norm_fwd_bwd", group_norm_fwd_bwd),
        ("batch_norm_train_eval", batch_norm_train_eval),
        ("batch_norm_empty_inputs", batch_norm_empty_inputs),
        ("mse_bce_losses", mse_bce_losses),
        ("cross_entropy_nll", cross_entropy_nll),
        ("rope_fwd_bwd", rope_fwd_bwd),
        ("attention_fwd_bwd", attention_fwd_bwd),
        ("attention_ex_mask_gqa_causal", attention_ex_mask_gqa_causal),
        (
            "attention_ex_finite_differences",
            attention_ex_finite_differences,
        ),
        ("attention_fused_grid", attention_fused_grid),
        ("device_graph_attention_decode", attention_decode_in_graph),
        ("attention_fresh_after_store", attention_fresh_after_store),
        ("memory_attention_linear", attention_memory_linear),
        ("weighted_sum_fwd_bwd", weighted_sum_fwd_bwd),
        ("nn_finite_differences", nn_finite_differences),
        ("nn_misuse", nn_misuse),
        ("softmax_row_layouts_masked", softmax_row_layouts_masked),
        ("row_norms_block_layouts", row_norms_block_layouts),
        ("class_losses_large_and_odd", class_losses_large_and_odd),
        (
            "class_losses_ignored_and_bad_targets",
            class_losses_ignored_and_bad_targets,
        ),
    ]
}

/// A random input and its values (as the dtype holds them).
fn input(
    dev: &Dev,
    shape: &[usize],
    dt: DType,
    seed: u64,
) -> Result<(Tensor, Vec<f64>), libtest_mimic::Failed> {
    let t = randn(dev, shape, dt, seed)?;
    let v = values(&t)?;
    Ok((t, v))
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

fn rounded(dt: DType, v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| round_to(dt, *x)).collect()
}

fn softmax_any_dim(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], i64)] = &[
        (&[1], 0),
        (&[7], -1),
        (&[3, 5], 1),
        (&[3, 5], 0),
        (&[2, 3, 4], 1),
        (&[2, 3, 17], -1),
        (&[3, 1029], 1),
        (&[2, 40_000], 1),
        (&[2, 0, 3], 1),
        (&[], 0),
    ];
    for dt in FLOATS {
        for (i, (shape, dim)) in cases.iter().enumerate() {
            let (x, xv) = input(dev, shape, dt, 10 + i as u64)?;
            for log in [false, true] {
                let d = SoftmaxDesc::new("softmax", shape, *dim, log).unwrap();
                let out = poisoned(dev, shape, dt)?;
                if log {
                    ok(e::log_softmax(None, &x, *dim, Some(&out)))?;
                } else {
                    ok(e::softmax(None, &x, *dim, Some(&out)))?;
                }
                let want = rounded(dt, &r::softmax_ref(&xv, &d));
                assert_close_dtype(
                    &format!("softmax(log={log}) {shape:?} dim {dim} {dt}"),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    // Large logits and -inf entries (masking) stay finite and exact.
    let x = from_f64(
        dev,
        &[1000.0, 999.0, f64::NEG_INFINITY, -1000.0],
        &[1, 4],
        DType::F32,
    )?;
    let y = ok(e::softmax(None, &x, 1, None))?;
    let d = SoftmaxDesc::new("softmax", &[1, 4], 1, false).unwrap();
    let xv = values(&x)?;
    assert_close_dtype(
        "softmax extreme",
        &values(&y)?,
        &r::softmax_ref(&xv, &d),
        DType::F32,
    )
}

fn softmax_backward_any_dim(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], i64)] = &[
        (&[1], 0),
        (&[3, 5], 1),
        (&[4, 3, 5], 1),
        (&[2, 3000], -1),
        (&[0, 4], 1),
    ];
    for dt in FLOATS {
        for (i, (shape, dim)) in cases.iter().enumerate() {
            for log in [false, true] {
                let (x, _) = input(dev, shape, dt, 20 + i as u64)?;
                let y = if log {
                    ok(e::log_softmax(None, &x, *dim, None))?
                } else {
                    ok(e::softmax(None, &x, *dim, None))?
                };
                let (dy, dyv) = input(dev, shape, dt, 30 + i as u64)?;
                let out = poisoned(dev, shape, dt)?;
                if log {
                    ok(e::log_softmax_backward(None, &y, &dy, *dim, Some(&out)))?;
                } else {
                    ok(e::softmax_backward(None, &y, &dy, *dim, Some(&out)))?;
                }
                let d = SoftmaxDesc::new("softmax", shape, *dim, log).unwrap();
                let want = rounded(dt, &r::softmax_backward_ref(&values(&y)?, &dyv, &d));
                assert_close_dtype(
                    &format!("softmax_backward(log={log}) {shape:?} {dt}"),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    Ok(())
}

fn layer_norm_fwd_bwd(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[1, 1], &[1]),
        (&[3, 7], &[7]),
        (&[2, 3, 5], &[3, 5]),
        (&[4, 1031], &[1031]),
        (&[2, 40_000], &[40_000]),
        (&[0, 6], &[6]),
    ];
    for dt in FLOATS {
        for (i, (shape, ns)) in cases.iter().enumerate() {
            let s = 40 + i as u64 * 7;
            let (x, xv) = input(dev, shape, dt, s)?;
            let (w, wv) = input(dev, ns, dt, s + 1)?;
            let (b, bv) = input(dev, ns, dt, s + 2)?;
            let (dy, dyv) = input(dev, shape, dt, s + 3)?;
            let d = RowNormDesc::new("layer_norm", shape, ns, 1e-5).unwrap();
            for affine in [false, true] {
                let (wo, bo) = if affine {
                    (Some(&w), Some(&b))
                } else {
                    (None, None)
                };
                let (wr, br) = if affine {
                    (Some(&wv[..]), Some(&bv[..]))
                } else {
                    (None, None)
                };
                let out = poisoned(dev, shape, dt)?;
                ok(e::layer_norm(None, &x, ns, wo, bo, 1e-5, Some(&out)))?;
                let want = rounded(dt, &r::layer_norm_ref(&xv, wr, br, &d).0);
                let what = format!("layer_norm {shape:?} affine={affine} {dt}");
                assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                let gx = poisoned(dev, shape, dt)?;
                let gw = poisoned(dev, ns, dt)?;
                let gb = poisoned(dev, ns, dt)?;
                ok(e::layer_norm_backward(
                    None,
                    &dy,
                    &x,
                    ns,
                    wo,
                    1e-5,
                    [Grad::Into(&gx), Grad::Into(&gw), Grad::Into(&gb)],
                ))?;
                let (rdx, rdw, rdb) = r::layer_norm_backward_ref(&dyv, &xv, wr, &d);
                assert_close_dtype(&format!("{what} dx"), &values(&gx)?, &rounded(dt, &rdx), dt)?;
                // dw/db sum over rows: f16/bf16 inputs give O(rows) magnitudes.
                let tol = if dt == DType::F32 { 1e-4 } else { 2e-2 };
                assert_close(&format!("{what} dw"), &values(&gw)?, &rdw, tol, tol)?;
                assert_close(&format!("{what} db"), &values(&gb)?, &rdb, tol, tol)?;
            }
        }
    }
    Ok(())
}

fn rms_norm_fwd_bwd(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[1, 1], &[1]),
        (&[3, 7], &[7]),
        (&[2, 3, 5], &[3, 5]),
        (&[3, 4099], &[4099]),
    ];
    for dt in FLOATS {
        for (i, (shape, ns)) in cases.iter().enumerate() {
            let s = 90 + i as u64 * 5;
            let (x, xv) = input(dev, shape, dt, s)?;
            let (w, wv) = input(dev, ns, dt, s + 1)?;
            let (dy, dyv) = input(dev, shape, dt, s + 2)?;
            let d = RowNormDesc::new("rms_norm", shape, ns, 1e-6).unwrap();
            for affine in [false, true] {
                let wo = affine.then_some(&w);
                let wr = affine.then_some(&wv[..]);
                let out = poisoned(dev, shape, dt)?;
                ok(e::rms_norm(None, &x, ns, wo, 1e-6, Some(&out)))?;
                let what = format!("rms_norm {shape:?} affine={affine} {dt}");
                let want = rounded(dt, &r::rms_norm_ref(&xv, wr, &d).0);
                assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                let gx = poisoned(dev, shape, dt)?;
                let gw = poisoned(dev, ns, dt)?;
                ok(e::rms_norm_backward(
                    None,
                    &dy,
                    &x,
                    ns,
                    wo,
                    1e-6,
                    [Grad::Into(&gx), Grad::Into(&gw)],
                ))?;
                let (rdx, rdw) = r::rms_norm_backward_ref(&dyv, &xv, wr, &d);
                assert_close_dtype(&format!("{what} dx"), &values(&gx)?, &rounded(dt, &rdx), dt)?;
                let tol = if dt == DType::F32 { 1e-4 } else { 2e-2 };
                assert_close(&format!("{what} dw"), &values(&gw)?, &rdw, tol, tol)?;
            }
        }
    }
    Ok(())
}

fn group_norm_fwd_bwd(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], usize)] = &[
        (&[1, 1], 1),
        (&[2, 6, 5], 3),
        (&[3, 4, 3, 3], 2),
        (&[2, 6], 6),
        (&[1, 8, 1500], 4),
    ];
    for dt in FLOATS {
        for (i, (shape, g)) in cases.iter().enumerate() {
            let s = 120 + i as u64 * 5;
            let c = shape[1];
            let (x, xv) = input(dev, shape, dt, s)?;
            let (w, wv) = input(dev, &[c], dt, s + 1)?;
            let (b, bv) = input(dev, &[c], dt, s + 2)?;
            let (dy, dyv) = input(dev, shape, dt, s + 3)?;
            let d = GroupNormDesc::new("group_norm", shape, *g, 1e-5).unwrap();
            for affine in [false, true] {
                let (wo, bo) = if affine {
                    (Some(&w), Some(&b))
                } else {
                    (None, None)
                };
                let (wr, br) = if affine {
                    (Some(&wv[..]), Some(&bv[..]))
                } else {
                    (None, None)
                };
                let out = poisoned(dev, shape, dt)?;
                ok(e::group_norm(None, &x, *g, wo, bo, 1e-5, Some(&out)))?;
                let what = format!("group_norm {shape:?} g={g} affine={affine} {dt}");
                let want = rounded(dt, &r::group_norm_ref(&xv, wr, br, &d).0);
                assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                let gx = poisoned(dev, shape, dt)?;
                let gw = poisoned(dev, &[c], dt)?;
                let gb = poisoned(dev, &[c], dt)?;
                ok(e::group_norm_backward(
                    None,
                    &dy,
                    &x,
                    *g,
                    wo,
                    1e-5,
                    [Grad::Into(&gx), Grad::Into(&gw), Grad::Into(&gb)],
                ))?;
                let (rdx, rdw, rdb) = r::group_norm_backward_ref(&dyv, &xv, wr, &d);
                // A group of one value has a zero gradient: compare with an absolute floor.
                assert_close_dtype(&format!("{what} dx"), &values(&gx)?, &rounded(dt, &rdx), dt)?;
                let tol = if dt == DType::F32 { 1e-4 } else { 2e-2 };
                assert_close(&format!("{what} dw"), &values(&gw)?, &rdw, tol, tol)?;
                assert_close(&format!("{what} db"), &values(&gb)?, &rdb, tol, tol)?;
            }
        }
    }
    Ok(())
}

/// Empty inputs as in PyTorch (F.batch_norm returns an empty tensor before it looks at the
/// channel count or asks for running stats): shapes (0,), (0, C), (0, C, L), (N, 0, ...) and
/// (N, C, 0), training and eval, with and without parameters. The output is empty with
/// x's shape, the running stats are left alone, and the backward gives an empty dx and zero
/// dweight/dbias. Parameters that disagree with the channel count, or with each other for a
/// (0,) input, are still SHAPE_MISMATCH, and a non-empty 1-D input is still refused.
fn batch_norm_empty_inputs(dev: &Dev) -> TestResult {
    use ErrorKind::ShapeMismatch;
    let cases: &[(&[usize], usize)] = &[
        (&[0], 0),
        (&[0], 3),
        (&[0, 3], 3),
        (&[0, 3, 4], 3),
        (&[2, 0], 0),
        (&[2, 0, 5], 0),
        (&[3, 2, 0], 2),
    ];
    for dt in FLOATS {
        for &(shape, c) in cases {
            let x = ok(Tensor::empty(dev.clone(), shape, dt))?;
            let dy = ok(Tensor::empty(dev.clone(), shape, dt))?;
            let pv: Vec<f64> = (0..c)
                .map(|k| round_to(dt, 0.5 + 0.25 * k as f64))
                .collect();
            let p = from_f64(dev, &pv, &[c], dt)?;
            let (rm, rv) = (from_f64(dev, &pv, &[c], dt)?, from_f64(dev, &pv, &[c], dt)?);
            for training in [true, false] {
                for with_params in [c > 0, false] {
                    let what = format!(
                        "batch_norm {shape:?} c={c} training={training} params={with_params} {dt}"
                    );
                    let (pr, st) = if with_params {
                        (Some(&p), (Some(&rm), Some(&rv)))
                    } else {
                        (None, (None, None))
                    };
                    let y = e::batch_norm(None, &x, st.0, st.1, pr, pr, training, 0.1, 1e-5, None)
                        .map_err(|e| format!("{what}: {:?}: {}", e.kind, e.message))?;
                    ensure(
                        y.shape() == shape && y.dtype() == dt,
                        format!("{what}: output {:?} {}", y.shape(), y.dtype()),
                    )?;
                    for (name, t) in [("running_mean", &rm), ("running_var", &rv)] {
                        assert_close(&format!("{what} {name}"), &values(t)?, &pv, 0.0, 0.0)?;
                    }
                    // A (0,) input without parameters has no channels at all.
                    let c = if shape.len() == 1 && !with_params {
                        0
                    } else {
                        c
                    };
                    let (gw, gb) = (poisoned(dev, &[c], dt)?, poisoned(dev, &[c], dt)?);
                    let [gx, _, _] = e::batch_norm_backward(
                        None,
                        &dy,
                        &x,
                        st.0,
                        st.1,
                        pr,
                        training,
                        1e-5,
                        [Grad::New, Grad::Into(&gw), Grad::Into(&gb)],
                    )
                    .map_err(|e| format!("{what} backward: {:?}: {}", e.kind, e.message))?;
                    let gx = gx.ok_or("no dx")?;
                    ensure(gx.shape() == shape, format!("{what}: dx {:?}", gx.shape()))?;
                    let zeros = vec![0.0; c];
                    assert_close(&format!("{what} dweight"), &values(&gw)?, &zeros, 0.0, 0.0)?;
                    assert_close(&format!("{what} dbias"), &values(&gb)?, &zeros, 0.0, 0.0)?;
                }
            }
        }
        // Real shape errors stay errors.
        let p3 = from_f64(dev, &[1.0, 2.0, 3.0], &[3], dt)?;
        let p2 = from_f64(dev, &[1.0, 2.0], &[2], dt)?;
        let bn = |x: &Tensor, w: &Tensor, b: &Tensor| {
            e::batch_norm(None, x, None, None, Some(w), Some(b), true, 0.1, 1e-5, None)
        };
        let empty = |s: &[usize]| ok(Tensor::empty(dev.clone(), s, dt));
        expect_err(bn(&empty(&[0, 3])?, &p2, &p2), ShapeMismatch, "batch_norm")?;
        expect_err(bn(&empty(&[0])?, &p3, &p2), ShapeMismatch, "batch_norm")?;
        expect_err(
            bn(&randn(dev, &[4], dt, 1)?, &p3, &p3),
            ShapeMismatch,
            "batch_norm",
        )?;
    }
    Ok(())
}

fn batch_norm_train_eval(dev: &Dev) -> TestResult {
    let cases: &[&[usize]] = &[&[2, 1], &[4, 3], &[2, 3, 5], &[3, 2, 4, 4], &[2, 5, 2000]];
    for dt in FLOATS {
        for (i, shape) in cases.iter().enumerate() {
            let s = 150 + i as u64 * 7;
            let c = shape[1];
            let (x, xv) = input(dev, shape, dt, s)?;
            let (w, wv) = input(dev, &[c], dt, s + 1)?;
            let (b, bv) = input(dev, &[c], dt, s + 2)?;
            let (dy, dyv) = input(dev, shape, dt, s + 3)?;
            let rmv: Vec<f64> = (0..c).map(|k| round_to(dt, 0.1 * k as f64)).collect();
            let rvv: Vec<f64> = (0..c)
                .map(|k| round_to(dt, 0.5 + 0.25 * k as f64))
                .collect();
            for training in [true, false] {
                let d = BatchNormDesc::new("batch_norm", shape, training, 0.1, 1e-5).unwrap();
                let rm = from_f64(dev, &rmv, &[c], dt)?;
                let rv = from_f64(dev, &rvv, &[c], dt)?;
                let out = poisoned(dev, shape, dt)?;
                ok(e::batch_norm(
                    None,
                    &x,
                    Some(&rm),
                    Some(&rv),
                    Some(&w),
                    Some(&b),
                    training,
                    0.1,
                    1e-5,
                    Some(&out),
                ))?;
                let (y, nrm, nrv) =
                    r::batch_norm_ref(&xv, Some(&wv), Some(&bv), Some((&rmv, &rvv)), &d);
                let what = format!("batch_norm {shape:?} training={training} {dt}");
                assert_close_dtype(&what, &values(&out)?, &rounded(dt, &y), dt)?;
                assert_close_dtype(
                    &format!("{what} running_mean"),
                    &values(&rm)?,
                    &rounded(dt, &nrm),
                    dt,
                )?;
                assert_close_dtype(
                    &format!("{what} running_var"),
                    &values(&rv)?,
                    &rounded(dt, &nrv),
                    dt,
                )?;
                // Backward against the running stats the forward started from.
                let rm0 = from_f64(dev, &rmv, &[c], dt)?;
                let rv0 = from_f64(dev, &rvv, &[c], dt)?;
                let gx = poisoned(dev, shape, dt)?;
                let gw = poisoned(dev, &[c], dt)?;
                let gb = poisoned(dev, &[c], dt)?;
                ok(e::batch_norm_backward(
                    None,
                    &dy,
                    &x,
                    Some(&rm0),
                    Some(&rv0),
                    Some(&w),
                    training,
                    1e-5,
                    [Grad::Into(&gx), Grad::Into(&gw), Grad::Into(&gb)],
                ))?;
                let (rdx, rdw, rdb) =
                    r::batch_norm_backward_ref(&dyv, &xv, Some(&wv), Some((&rmv, &rvv)), &d);
                assert_close_dtype(&format!("{what} dx"), &values(&gx)?, &rounded(dt, &rdx), dt)?;
                let tol = if dt == DType::F32 { 1e-4 } else { 2e-2 };
                assert_close(&format!("{what} dw"), &values(&gw)?, &rdw, tol, tol)?;
                assert_close(&format!("{what} db"), &values(&gb)?, &rdb, tol, tol)?;
            }
            // Training without running stats or affine parameters.
            let d = BatchNormDesc::new("batch_norm", shape, true, 0.1, 1e-5).unwrap();
            let out = poisoned(dev, shape, dt)?;
            ok(e::batch_norm(
                None,
                &x,
                None,
                None,
                None,
                None,
                true,
                0.1,
                1e-5,
                Some(&out),
            ))?;
            let want = rounded(dt, &r::batch_norm_ref(&xv, None, None, None, &d).0);
            assert_close_dtype("batch_norm bare", &values(&out)?, &want, dt)?;
        }
    }
    Ok(())
}

fn reductions() -> [Reduction; 3] {
    [Reduction::None, Reduction::Mean, Reduction::Sum]
}

fn mse_bce_losses(dev: &Dev) -> TestResult {
    let shapes: &[&[usize]] = &[&[1], &[7], &[3, 5], &[2, 3, 1000], &[0, 3]];
    for dt in FLOATS {
        for (i, shape) in shapes.iter().enumerate() {
            let s = 200 + i as u64 * 3;
            let n: usize = shape.iter().product();
            for kind in [LossKind::Mse, LossKind::Bce] {
                let (x, t) = if kind == LossKind::Mse {
                    (randn(dev, shape, dt, s)?, randn(dev, shape, dt, s + 1)?)
                } else {
                    let sig = |v: &f64| 0.02 + 0.96 / (1.0 + (-v).exp());
                    let xv: Vec<f64> = values(&randn(dev, shape, DType::F32, s)?)?
                        .iter()
                        .map(sig)
                        .collect();
                    let tv: Vec<f64> = values(&randn(dev, shape, DType::F32, s + 1)?)?
                        .iter()
                        .map(sig)
                        .collect();
                    (
                        from_f64(dev, &xv, shape, dt)?,
                        from_f64(dev, &tv, shape, dt)?,
                    )
                };
                let (xv, tv) = (values(&x)?, values(&t)?);
                for red in reductions() {
                    let (d, oshape) = LossDesc::elementwise(kind, shape, shape, red).unwrap();
                    let out = poisoned(dev, &oshape, dt)?;
                    ok(e::loss(None, kind, &x, &t, red, -100, 0.0, Some(&out)))?;
                    let what = format!("{} {shape:?} {red:?} {dt}", kind.name());
                    let want = rounded(dt, &r::loss_ref(&xv, &tv, &d));
                    if n == 0 && red == Reduction::Mean {
                        ensure(
                            values(&out)?[0].is_nan(),
                            format!("{what}: mean of nothing is NaN"),
                        )?;
                    } else {
                        assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                    }
                    let (g, gv) = input(dev, &oshape, dt, s + 2)?;
                    let gi = poisoned(dev, shape, dt)?;
                    ok(e::loss_backward(
                        None,
                        kind,
                        &g,
                        &x,
                        &t,
                        red,
                        -100,
                        0.0,
                        Some(&gi),
                    ))?;
                    let want = rounded(dt, &r::loss_backward_ref(&xv, &tv, &gv, &d));
                    assert_close_dtype(&format!("{what} backward"), &values(&gi)?, &want, dt)?;
                }
            }
        }
    }
    Ok(())
}

/// Class targets in [0, c) with every fifth one `ignore` (when `with_ignore`).
fn targets(
    dev: &Dev,
    shape: &[usize],
    c: usize,
    tdt: DType,
    seed: u64,
    with_ignore: bool,
) -> Result<(Tensor, Vec<f64>), libtest_mimic::Failed> {
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|i| {
            if with_ignore && i % 5 == 3 {
                -100.0
            } else {
                ((i as u64 * 2654435761 + seed * 97) % c as u64) as f64
            }
        })
        .collect();
    Ok((from_f64(dev, &v, shape, tdt)?, v))
}

fn cross_entropy_nll(dev: &Dev) -> TestResult {
    // (input shape, target shape)
    let cases: &[(&[usize], &[usize])] = &[
        (&[1, 1], &[1]),
        (&[4, 5], &[4]),
        (&[7], &[]),
        (&[3, 4, 5], &[3, 5]),
        (&[2, 3, 2, 3], &[2, 2, 3]),
        (&[3, 3001], &[3]),
        (&[0, 4], &[0]),
    ];
    for dt in FLOATS {
        for (i, (ishape, tshape)) in cases.iter().enumerate() {
            let s = 300 + i as u64 * 3;
            let c = if ishape.len() == 1 {
                ishape[0]
            } else {
                ishape[1]
            };
            let (x, xv) = input(dev, ishape, dt, s)?;
            for (tdt, ign) in [(DType::I64, true), (DType::I32, false)] {
                let (t, tv) = targets(dev, tshape, c, tdt, s, ign)?;
                for kind in [LossKind::CrossEntropy, LossKind::Nll] {
                    for smoothing in [0.0, 0.1] {
                        if kind == LossKind::Nll && smoothing > 0.0 {
                            continue;
                        }
                        for red in reductions() {
                            let (d, oshape) =
                                LossDesc::class(kind, ishape, tshape, red, -100, smoothing)
                                    .unwrap();
                            let what = format!(
                                "{} {ishape:?} {red:?} {tdt} ls={smoothing} {dt}",
                                kind.name()
                            );
                            let out = poisoned(dev, &oshape, dt)?;
                            ok(e::loss(
                                None,
                                kind,
                                &x,
                                &t,
                                red,
                                -100,
                                smoothing,
                                Some(&out),
                            ))?;
                            let want = rounded(dt, &r::loss_ref(&xv, &tv, &d));
                            let got = values(&out)?;
                            if d.items() == 0 && red == Reduction::Mean {
                                ensure(got[0].is_nan(), format!("{what}: mean of nothing is NaN"))?;
                            } else {
                                assert_close_dtype(&what, &got, &want, dt)?;
                            }
                            let (g, gv) = input(dev, &oshape, dt, s + 2)?;
                            let gi = poisoned(dev, ishape, dt)?;
                            ok(e::loss_backward(
                                None,
                                kind,
                                &g,
                                &x,
                                &t,
                                red,
                                -100,
                                smoothing,
                                Some(&gi),
                            ))?;
                            let want = rounded(dt, &r::loss_backward_ref(&xv, &tv, &gv, &d));
                            assert_close_dtype(
                                &format!("{what} backward"),
                                &values(&gi)?,
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

fn rope_fwd_bwd(dev: &Dev) -> TestResult {
    // (shape, seq_dim, offset)
    let cases: &[(&[usize], i64, i64)] = &[
        (&[1, 2], 0, 0),
        (&[5, 8], 0, 3),
        (&[2, 7, 3, 6], 1, 0),
        (&[2, 3, 7, 6], -2, 11),
        (&[1, 33, 2, 130], -3, 0),
    ];
    for dt in FLOATS {
        for (i, (shape, sd, off)) in cases.iter().enumerate() {
            let (x, xv) = input(dev, shape, dt, 400 + i as u64)?;
            for inverse in [false, true] {
                let d = RopeDesc::new("rope", shape, *sd, 10000.0, *off, inverse).unwrap();
                let out = poisoned(dev, shape, dt)?;
                ok(e::rope(None, &x, *sd, 10000.0, *off, inverse, Some(&out)))?;
                let want = rounded(dt, &r::rope_ref(&xv, &d));
                assert_close_dtype(
                    &format!("rope {shape:?} inverse={inverse} {dt}"),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    // The backward undoes the forward.
    let (x, xv) = input(dev, &[2, 5, 3, 8], DType::F32, 7)?;
    let y = ok(e::rope(None, &x, 1, 500.0, 2, false, None))?;
    let back = ok(e::rope(None, &y, 1, 500.0, 2, true, None))?;
    assert_close("rope round trip", &values(&back)?, &xv, 1e-5, 1e-5)
}

fn attention_fwd_bwd(dev: &Dev) -> TestResult {
    // (q shape, sk, dv)
    let cases: &[(&[usize], usize, usize)] = &[
        (&[1, 1], 1, 1),
        (&[2, 3, 5, 8], 5, 8),
        (&[1, 2, 7, 4], 3, 5),
        (&[1, 1, 3, 4], 9, 2),
        (&[2, 67, 16], 67, 16),
    ];
    for dt in FLOATS {
        for (i, (qs, sk, dvd)) in cases.iter().enumerate() {
            let r_ = qs.len();
            let mut ks = qs.to_vec();
            ks[r_ - 2] = *sk;
            let mut vs = ks.clone();
            vs[r_ - 1] = *dvd;
            let s = 500 + i as u64 * 5;
            let (q, qv) = input(dev, qs, dt, s)?;
            let (k, kv) = input(dev, &ks, dt, s + 1)?;
            let (v, vv) = input(dev, &vs, dt, s + 2)?;
            for causal in [false, true] {
                for scale in [None, Some(0.3)] {
                    let (d, oshape) =
                        AttentionDesc::new("sdpa", qs, &ks, &vs, scale, causal).unwrap();
                    let out = poisoned(dev, &oshape, dt)?;
                    ok(e::scaled_dot_product_attention(
                        None,
                        &q,
                        &k,
                        &v,
                        causal,
                        scale,
                        Some(&out),
                    ))?;
                    let what =
                        format!("sdpa q{qs:?} k{ks:?} v{vs:?} causal={causal} {scale:?} {dt}");
                    let want = rounded(dt, &r::attention_ref(&qv, &kv, &vv, &d));
                    assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                    let (go, gov) = input(dev, &oshape, dt, s + 3)?;
                    let (gq, gk, gv) = (
                        poisoned(dev, qs, dt)?,
                        poisoned(dev, &ks, dt)?,
                        poisoned(dev, &vs, dt)?,
                    );
                    ok(e::scaled_dot_product_attention_backward(
                        None,
                        &go,
                        &q,
                        &k,
                        &v,
                        causal,
                        scale,
                        [Grad::Into(&gq), Grad::Into(&gk), Grad::Into(&gv)],
                    ))?;
                    let (rq, rk, rv) = r::attention_backward_ref(&qv, &kv, &vv, &gov, &d);
                    let tol = if dt == DType::F32 { 1e-4 } else { 3e-2 };
                    assert_close(&format!("{what} dq"), &values(&gq)?, &rq, tol, tol)?;
                    assert_close(&format!("{what} dk"), &values(&gk)?, &rk, tol, tol)?;
                    assert_close(&format!("{what} dv"), &values(&gv)?, &rv, tol, tol)?;
                }
            }
        }
    }
    Ok(())
}

fn weighted_sum_fwd_bwd(dev: &Dev) -> TestResult {
    let cases: &[&[usize]] = &[&[1, 1], &[5, 3], &[2, 3, 7, 5], &[3, 1000, 17], &[2, 0, 4]];
    for dt in FLOATS {
        for (i, xs) in cases.iter().enumerate() {
            let ws = &xs[..xs.len() - 1];
            let s = 600 + i as u64 * 3;
            let (x, xv) = input(dev, xs, dt, s)?;
            let (w, wv) = input(dev, ws, dt, s + 1)?;
            let (d, oshape) = WeightedSumDesc::new("weighted_sum", xs, ws).unwrap();
            let out = poisoned(dev, &oshape, dt)?;
            ok(e::weighted_sum(None, &x, &w, Some(&out)))?;
            let what = format!("weighted_sum {xs:?} {dt}");
            let tol = if dt == DType::F32 { 1e-4 } else { 2e-2 };
            assert_close(
                &what,
                &values(&out)?,
                &r::weighted_sum_ref(&xv, &wv, &d),
                tol,
                tol,
            )?;
            let (dy, dyv) = input(dev, &oshape, dt, s + 2)?;
            let (gx, gw) = (poisoned(dev, xs, dt)?, poisoned(dev, ws, dt)?);
            ok(e::weighted_sum_backward(
                None,
                &dy,
                &x,
                &w,
                [Grad::Into(&gx), Grad::Into(&gw)],
            ))?;
            let (rdx, rdw) = r::weighted_sum_backward_ref(&xv, &wv, &dyv, &d);
            assert_close_dtype(&format!("{what} dx"), &values(&gx)?, &rounded(dt, &rdx), dt)?;
            assert_close(&format!("{what} dw"), &values(&gw)?, &rdw, tol, tol)?;
        }
    }
    Ok(())
}

/// Every backward of the reference against central differences of its forward.
fn nn_finite_differences(dev: &Dev) -> TestResult {
    let vals = |n: usize, seed: u64| -> Result<Vec<f64>, libtest_mimic::Failed> {
        if n == 0 {
            return Ok(vec![]);
        }
        values(&randn(dev, &[n], DType::F32, seed)?)
    };
    // softmax / log_softmax over a middle dim.
    for log in [false, true] {
        let d = SoftmaxDesc::new("softmax", &[2, 4, 3], 1, log).unwrap();
        let (x, rr) = (vals(24, 1)?, vals(24, 2)?);
        let y = r::softmax_ref(&x, &d);
        let g = r::softmax_backward_ref(&y, &rr, &d);
        fd_check(&format!("softmax log={log}"), &x, &rr, &g, |p| {
            r::softmax_ref(p, &d)
        })?;
    }
    // layer_norm: gradient with respect to [x, w, b].
    {
        let d = RowNormDesc::new("layer_norm", &[3, 5], &[5], 1e-5).unwrap();
        let p = vals(25, 3)?;
        let rr = vals(15, 4)?;
        let f = |p: &[f64]| r::layer_norm_ref(&p[..15], Some(&p[15..20]), Some(&p[20..]), &d).0;
        let (dx, dw, db) = r::layer_norm_backward_ref(&rr, &p[..15], Some(&p[15..20]), &d);
        fd_check("layer_norm", &p, &rr, &[dx, dw, db].concat(), f)?;
    }
    // rms_norm: [x, w].
    {
        let d = RowNormDesc::new("rms_norm", &[3, 5], &[5], 1e-6).unwrap();
        let p = vals(20, 5)?;
        let rr = vals(15, 6)?;
        let f = |p: &[f64]| r::rms_norm_ref(&p[..15], Some(&p[15..]), &d).0;
        let (dx, dw) = r::rms_norm_backward_ref(&rr, &p[..15], Some(&p[15..]), &d);
        fd_check("rms_norm", &p, &rr, &[dx, dw].concat(), f)?;
    }
    // group_norm: [x (2,4,3), w, b].
    {
        let d = GroupNormDesc::new("group_norm", &[2, 4, 3], 2, 1e-5).unwrap();
        let p = vals(32, 7)?;
        let rr = vals(24, 8)?;
        let f = |p: &[f64]| r::group_norm_ref(&p[..24], Some(&p[24..28]), Some(&p[28..]), &d).0;
        let (dx, dw, db) = r::group_norm_backward_ref(&rr, &p[..24], Some(&p[24..28]), &d);
        fd_check("group_norm", &p, &rr, &[dx, dw, db].concat(), f)?;
    }
    // batch_norm, training and eval: [x (3,2,2), w, b].
    for training in [true, false] {
        let d = BatchNormDesc::new("batch_norm", &[3, 2, 2], training, 0.1, 1e-5).unwrap();
        let p = vals(16, 9)?;
        let rr = vals(12, 10)?;
        let (rm, rv) = ([0.3, -0.2], [0.8, 1.7]);
        let f = |p: &[f64]| {
            r::batch_norm_ref(
                &p[..12],
                Some(&p[12..14]),
                Some(&p[14..]),
                Some((&rm, &rv)),
                &d,
            )
            .0
        };
        let (dx, dw, db) =
            r::batch_norm_backward_ref(&rr, &p[..12], Some(&p[12..14]), Some((&rm, &rv)), &d);
        fd_check(
            &format!("batch_norm training={training}"),
            &p,
            &rr,
            &[dx, dw, db].concat(),
            f,
        )?;
    }
    // Losses, every reduction.
    for red in reductions() {
        let x = vals(6, 11)?;
        let t = vals(6, 12)?;
        let (d, _) = LossDesc::elementwise(LossKind::Mse, &[6], &[6], red).unwrap();
        let rr = if red == Reduction::None {
            vals(6, 13)?
        } else {
            vec![0.7]
        };
        let g = r::loss_backward_ref(&x, &t, &rr, &d);
        fd_check(&format!("mse {red:?}"), &x, &rr, &g, |p| {
            r::loss_ref(p, &t, &d)
        })?;
        let sig = |v: &f64| 0.05 + 0.9 / (1.0 + (-v).exp());
        let (xb, tb): (Vec<f64>, Vec<f64>) =
            (x.iter().map(sig).collect(), t.iter().map(sig).collect());
        let (d, _) = LossDesc::elementwise(LossKind::Bce, &[6], &[6], red).unwrap();
        let g = r::loss_backward_ref(&xb, &tb, &rr, &d);
        fd_check(&format!("bce {red:?}"), &xb, &rr, &g, |p| {
            r::loss_ref(p, &tb, &d)
        })?;
        // [N=3, C=4, d=2] logits, one ignored target.
        let logits = vals(24, 14)?;
        let t = [1.0, 3.0, -100.0, 0.0, 2.0, 2.0];
        let rr = if red == Reduction::None {
            vals(6, 15)?
        } else {
            vec![1.3]
        };
        for (kind, ls) in [
            (LossKind::CrossEntropy, 0.0),
            (LossKind::CrossEntropy, 0.2),
            (LossKind::Nll, 0.0),
        ] {
            let (d, _) = LossDesc::class(kind, &[3, 4, 2], &[3, 2], red, -100, ls).unwrap();
            let g = r::loss_backward_ref(&logits, &t, &rr, &d);
            fd_check(
                &format!("{} ls={ls} {red:?}", kind.name()),
                &logits,
                &rr,
                &g,
                |p| r::loss_ref(p, &t, &d),
            )?;
        }
    }
    // rope: the backward is the inverse rotation.
    {
        let d = RopeDesc::new("rope", &[2, 3, 2, 6], 1, 10000.0, 1, false).unwrap();
        let di = RopeDesc { inverse: true, ..d };
        let (x, rr) = (vals(72, 16)?, vals(72, 17)?);
        fd_check("rope", &x, &rr, &r::rope_ref(&rr, &di), |p| {
            r::rope_ref(p, &d)
        })?;
    }
    // attention: [q, k, v], causal or not.
    for causal in [false, true] {
        let (d, _) =
            AttentionDesc::new("sdpa", &[2, 3, 4], &[2, 5, 4], &[2, 5, 3], None, causal).unwrap();
        let p = vals(24 + 40 + 30, 18)?;
        let rr = vals(18, 19)?;
        let f = |p: &[f64]| r::attention_ref(&p[..24], &p[24..64], &p[64..], &d);
        let (dq, dk, dv) = r::attention_backward_ref(&p[..24], &p[24..64], &p[64..], &rr, &d);
        fd_check(
            &format!("attention causal={causal}"),
            &p,
            &rr,
            &[dq, dk, dv].concat(),
            f,
        )?;
    }
    // weighted_sum: [x (2,3,4), w (2,3)].
    {
        let (d, _) = WeightedSumDesc::new("weighted_sum", &[2, 3, 4], &[2, 3]).unwrap();
        let p = vals(30, 20)?;
        let rr = vals(8, 21)?;
        let f = |p: &[f64]| r::weighted_sum_ref(&p[..24], &p[24..], &d);
        let (dx, dw) = r::weighted_sum_backward_ref(&p[..24], &p[24..], &rr, &d);
        fd_check("weighted_sum", &p, &rr, &[dx, dw].concat(), f)?;
    }
    Ok(())
}

fn nn_misuse(dev: &Dev) -> TestResult {
    use ErrorKind::*;
    let f = |shape: &[usize]| randn(dev, shape, DType::F32, 1);
    let x = f(&[2, 3, 4])?;
    let xi = ok(Tensor::randint(dev.clone(), &[2, 3], DType::I64, 0, 3, 1))?;
    expect_err(e::softmax(None, &x, 3, None), InvalidArgument, "softmax")?;
    expect_err(
        e::log_softmax(None, &xi, 0, None),
        DtypeMismatch,
        "log_softmax",
    )?;
    expect_err(
        e::softmax_backward(None, &x, &f(&[2, 3])?, 1, None),
        ShapeMismatch,
        "softmax_backward",
    )?;
    expect_err(
        e::softmax(None, &x, 1, Some(&f(&[2, 3])?)),
        ShapeMismatch,
        "softmax",
    )?;
    expect_err(
        e::layer_norm(None, &x, &[3], None, None, 1e-5, None),
        ShapeMismatch,
        "layer_norm",
    )?;
    expect_err(
        e::layer_norm(None, &x, &[4], Some(&f(&[5])?), None, 1e-5, None),
        ShapeMismatch,
        "layer_norm: weight",
    )?;
    expect_err(
        e::layer_norm(None, &x, &[4], None, None, -1.0, None),
        InvalidArgument,
        "layer_norm: eps",
    )?;
    expect_err(
        e::rms_norm(None, &x, &[], None, 1e-5, None),
        InvalidArgument,
        "rms_norm",
    )?;
    expect_err(
        e::group_norm(None, &x, 2, None, None, 1e-5, None),
        InvalidArgument,
        "group_norm: num_groups",
    )?;
    expect_err(
        e::group_norm(None, &f(&[4])?, 1, None, None, 1e-5, None),
        ShapeMismatch,
        "group_norm",
    )?;
    expect_err(
        e::batch_norm(None, &x, None, None, None, None, false, 0.1, 1e-5, None),
        InvalidArgument,
        "batch_norm",
    )?;
    expect_err(
        e::batch_norm(
            None,
            &f(&[1, 3])?,
            None,
            None,
            None,
            None,
            true,
            0.1,
            1e-5,
            None,
        ),
        InvalidArgument,
        "more than 1 value per channel",
    )?;
    let h16 = randn(dev, &[3], DType::F16, 1)?;
    expect_err(
        e::batch_norm(
            None,
            &x,
            Some(&h16),
            Some(&h16),
            None,
            None,
            true,
            0.1,
            1e-5,
            None,
        ),
        DtypeMismatch,
        "batch_norm: running_mean",
    )?;
    let logits = f(&[2, 3])?;
    let tgt = ok(Tensor::randint(dev.clone(), &[2], DType::I64, 0, 3, 1))?;
    expect_err(
        e::loss(
            None,
            LossKind::CrossEntropy,
            &logits,
            &f(&[2])?,
            Reduction::Mean,
            -100,
            0.0,
            None,
        ),
        DtypeMismatch,
        "cross_entropy: target",
    )?;
    expect_err(
        e::loss(
            None,
            LossKind::CrossEntropy,
            &logits,
            &xi,
            Reduction::Mean,
            -100,
            0.0,
            None,
        ),
        ShapeMismatch,
        "cross_entropy: target shape",
    )?;
    let bad = from_f64(dev, &[1.0, 3.0], &[2], DType::I64)?;
    expect_err(
        e::loss(
            None,
            LossKind::Nll,
            &logits,
            &bad,
            Reduction::Sum,
            -100,
            0.0,
            None,
        ),
        InvalidArgument,
        "nll_loss: target 3",
    )?;
    expect_err(
        e::loss(
            None,
            LossKind::CrossEntropy,
            &logits,
            &tgt,
            Reduction::Sum,
            -100,
            1.5,
            None,
        ),
        InvalidArgument,
        "label_smoothing",
    )?;
    expect_err(
        e::loss(
            None,
            LossKind::Mse,
            &logits,
            &f(&[3, 2])?,
            Reduction::Sum,
            -100,
            0.0,
            None,
        ),
        ShapeMismatch,
        "mse_loss",
    )?;
    expect_err(
        e::loss_backward(
            None,
            LossKind::Bce,
            &f(&[2])?,
            &logits,
            &logits,
            Reduction::Sum,
            -100,
            0.0,
            None,
        ),
        ShapeMismatch,
        "bce_loss: grad_out",
    )?;
    expect_err(
        Reduction::from_i32(7, "mse_loss"),
        InvalidArgument,
        "mse_loss: reduction",
    )?;
    expect_err(
        e::rope(None, &f(&[2, 5])?, 0, 10000.0, 0, false, None),
        ShapeMismatch,
        "rope",
    )?;
    expect_err(
        e::rope(None, &x, -1, 10000.0, 0, false, None),
        InvalidArgument,
        "rope: seq_dim",
    )?;
    expect_err(
        e::rope(None, &x, 1, 0.0, 0, true, None),
        InvalidArgument,
        "rope_backward: base",
    )?;
    let q = f(&[2, 3, 4])?;
    expect_err(
        e::scaled_dot_product_attention(None, &q, &f(&[2, 3, 5])?, &q, false, None, None),
        ShapeMismatch,
        "scaled_dot_product_attention",
    )?;
    expect_err(
        e::scaled_dot_product_attention(None, &q, &q, &f(&[2, 4, 4])?, false, None, None),
        ShapeMismatch,
        "scaled_dot_product_attention: v",
    )?;
    expect_err(
        e::scaled_dot_product_attention(None, &q, &q, &q, false, Some(f64::NAN), None),
        InvalidArgument,
        "scale",
    )?;
    expect_err(
        e::scaled_dot_product_attention_backward(
            None,
            &q,
            &q,
            &q,
            &q,
            false,
            None,
            [Grad::New, Grad::Skip, Grad::New],
        ),
        InvalidArgument,
        "scaled_dot_product_attention_backward",
    )?;
    expect_err(
        e::weighted_sum(None, &x, &f(&[2, 4])?, None),
        ShapeMismatch,
        "weighted_sum",
    )?;
    expect_err(
        e::weighted_sum_backward(None, &f(&[2, 3])?, &x, &f(&[2, 3])?, [Grad::New, Grad::New]),
        ShapeMismatch,
        "weighted_sum_backward: dy",
    )
}

/// Softmax forward and backward over row lengths that take each path of a GPU device
/// (a warp per row, a block per row with vector or scalar chunks, rows longer than any
/// block holds, a strided dim), with masked (-inf) entries, and rows that are all -inf (NaN,
/// as the reference).
fn softmax_row_layouts_masked(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], i64)] = &[
        (&[33, 64], 1),
        (&[9, 130], 1),
        (&[2, 65], -1),
        (&[6, 1000], 1),
        (&[5, 4096], -1),
        (&[3, 2050], 1),
        (&[2, 33_001], 1),
        (&[3, 33, 2], 1),
        (&[2, 700, 3], -2),
    ];
    for dt in FLOATS {
        for (i, (shape, dim)) in cases.iter().enumerate() {
            let n: usize = shape.iter().product();
            let (_, mut xv) = input(dev, shape, dt, 300 + i as u64)?;
            // Mask every 7th element, the first one, and (for inner == 1) all of the last row.
            for (k, v) in xv.iter_mut().enumerate() {
                if k % 7 == 3 || k == 0 {
                    *v = f64::NEG_INFINITY;
                }
            }
            let d0 = SoftmaxDesc::new("softmax", shape, *dim, false).unwrap();
            if d0.inner == 1 {
                for v in &mut xv[n - d0.dim..] {
                    *v = f64::NEG_INFINITY;
                }
            }
            let x = from_f64(dev, &xv, shape, dt)?;
            for log in [false, true] {
                let d = SoftmaxDesc::new("softmax", shape, *dim, log).unwrap();
                let what = format!("softmax(log={log}) {shape:?} dim {dim} {dt}");
                let out = poisoned(dev, shape, dt)?;
                if log {
                    ok(e::log_softmax(None, &x, *dim, Some(&out)))?;
                } else {
                    ok(e::softmax(None, &x, *dim, Some(&out)))?;
                }
                let want = rounded(dt, &r::softmax_ref(&xv, &d));
                assert_close_dtype(&what, &values(&out)?, &want, dt)?;
            }
            // Backward on unmasked inputs (a masked y of -inf has no finite log-gradient).
            let (x, _) = input(dev, shape, dt, 400 + i as u64)?;
            let (dy, dyv) = input(dev, shape, dt, 500 + i as u64)?;
            for log in [false, true] {
                let d = SoftmaxDesc::new("softmax", shape, *dim, log).unwrap();
                let y = if log {
                    ok(e::log_softmax(None, &x, *dim, None))?
                } else {
                    ok(e::softmax(None, &x, *dim, None))?
                };
                let out = poisoned(dev, shape, dt)?;
                if log {
                    ok(e::log_softmax_backward(None, &y, &dy, *dim, Some(&out)))?;
                } else {
                    ok(e::softmax_backward(None, &y, &dy, *dim, Some(&out)))?;
                }
                let want = rounded(dt, &r::softmax_backward_ref(&values(&y)?, &dyv, &d));
                assert_close_dtype(
                    &format!("softmax_backward(log={log}) {shape:?} dim {dim} {dt}"),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    Ok(())
}

/// layer_norm and rms_norm, forward and backward, over row lengths that take each path of a
/// GPU device: several rows per block (a row count that is not a multiple of it), vector
/// and scalar chunks, more rows than the backward's resident blocks (rows looped per
/// block), and rows longer than any block holds.
fn row_norms_block_layouts(dev: &Dev) -> TestResult {
    let cases: &[&[usize]] = &[
        &[33, 64],
        &[7, 2050],
        &[5, 4096],
        &[1100, 1024],
        &[2, 33_003],
    ];
    for dt in FLOATS {
        for (i, shape) in cases.iter().enumerate() {
            let cols = shape[1];
            let ns = &shape[1..];
            let s = 600 + i as u64 * 5;
            let (x, xv) = input(dev, shape, dt, s)?;
            let (w, wv) = input(dev, ns, dt, s + 1)?;
            let (b, bv) = input(dev, ns, dt, s + 2)?;
            let (dy, dyv) = input(dev, shape, dt, s + 3)?;
            let d = RowNormDesc::new("layer_norm", shape, ns, 1e-5).unwrap();
            // dw/db sum over rows: f16/bf16 inputs give O(rows) magnitudes.
            let tol = if dt == DType::F32 { 1e-4 } else { 2e-2 };
            let what = format!("layer_norm {shape:?} {dt}");
            let out = poisoned(dev, shape, dt)?;
            ok(e::layer_norm(
                None,
                &x,
                ns,
                Some(&w),
                Some(&b),
                1e-5,
                Some(&out),
            ))?;
            let want = rounded(dt, &r::layer_norm_ref(&xv, Some(&wv), Some(&bv), &d).0);
            assert_close_dtype(&what, &values(&out)?, &want, dt)?;
            let (gx, gw, gb) = (
                poisoned(dev, shape, dt)?,
                poisoned(dev, &[cols], dt)?,
                poisoned(dev, &[cols], dt)?,
            );
            ok(e::layer_norm_backward(
                None,
                &dy,
                &x,
                ns,
                Some(&w),
                1e-5,
                [Grad::Into(&gx), Grad::Into(&gw), Grad::Into(&gb)],
            ))?;
            let (rdx, rdw, rdb) = r::layer_norm_backward_ref(&dyv, &xv, Some(&wv), &d);
            assert_close_dtype(&format!("{what} dx"), &values(&gx)?, &rounded(dt, &rdx), dt)?;
            assert_close(&format!("{what} dw"), &values(&gw)?, &rdw, tol, tol)?;
            assert_close(&format!("{what} db"), &values(&gb)?, &rdb, tol, tol)?;
            // Only the parameter gradients, then only dx.
            let gw2 = poisoned(dev, &[cols], dt)?;
            ok(e::layer_norm_backward(
                None,
                &dy,
                &x,
                ns,
                Some(&w),
                1e-5,
                [Grad::Skip, Grad::Into(&gw2), Grad::Skip],
            ))?;
            assert_close(&format!("{what} dw alone"), &values(&gw2)?, &rdw, tol, tol)?;
            let gx2 = poisoned(dev, shape, dt)?;
            ok(e::layer_norm_backward(
                None,
                &dy,
                &x,
                ns,
                None,
                1e-5,
                [Grad::Into(&gx2), Grad::Skip, Grad::Skip],
            ))?;
            let rdx2 = r::layer_norm_backward_ref(&dyv, &xv, None, &d).0;
            assert_close_dtype(
                &format!("{what} dx alone, no weight"),
                &values(&gx2)?,
                &rounded(dt, &rdx2),
                dt,
            )?;

            let d = RowNormDesc::new("rms_norm", shape, ns, 1e-6).unwrap();
            let what = format!("rms_norm {shape:?} {dt}");
            let out = poisoned(dev, shape, dt)?;
            ok(e::rms_norm(None, &x, ns, Some(&w), 1e-6, Some(&out)))?;
            let want = rounded(dt, &r::rms_norm_ref(&xv, Some(&wv), &d).0);
            assert_close_dtype(&what, &values(&out)?, &want, dt)?;
            let (gx, gw) = (poisoned(dev, shape, dt)?, poisoned(dev, &[cols], dt)?);
            ok(e::rms_norm_backward(
                None,
                &dy,
                &x,
                ns,
                Some(&w),
                1e-6,
                [Grad::Into(&gx), Grad::Into(&gw)],
            ))?;
            let (rdx, rdw) = r::rms_norm_backward_ref(&dyv, &xv, Some(&wv), &d);
            assert_close_dtype(&format!("{what} dx"), &values(&gx)?, &rounded(dt, &rdx), dt)?;
            assert_close(&format!("{what} dw"), &values(&gw)?, &rdw, tol, tol)?;
        }
    }
    Ok(())
}

/// cross_entropy / nll_loss on the shapes a GPU splits differently: rows of four-element
/// vectors longer than a block (4096), a class count past 50000, rows that are not a multiple
/// of any block, more rows than one grid holds, classes strided by a spatial dim; an
/// ignore_index that is a real class; the reduced loss is reproducible bit for bit.
fn class_losses_large_and_odd(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[37, 4096], &[37]),
        (&[5, 50001], &[5]),
        (&[3, 1027], &[3]),
        (&[3001, 8], &[3001]),
        (&[4, 300, 3], &[4, 3]),
    ];
    for dt in FLOATS {
        for (i, (ishape, tshape)) in cases.iter().enumerate() {
            let s = 900 + i as u64 * 7;
            let c = ishape[1];
            let (x, xv) = input(dev, ishape, dt, s)?;
            // Class 2 doubles as the ignore_index: every item with target 2 is ignored.
            let (t, tv) = targets(dev, tshape, c, DType::I64, s, false)?;
            for kind in [LossKind::CrossEntropy, LossKind::Nll] {
                let smoothing = if kind == LossKind::CrossEntropy {
                    0.05
                } else {
                    0.0
                };
                for red in reductions() {
                    let (d, oshape) =
                        LossDesc::class(kind, ishape, tshape, red, 2, smoothing).unwrap();
                    let what = format!("{} {ishape:?} {red:?} {dt}", kind.name());
                    let out = poisoned(dev, &oshape, dt)?;
                    ok(e::loss(None, kind, &x, &t, red, 2, smoothing, Some(&out)))?;
                    let got = values(&out)?;
                    let want = rounded(dt, &r::loss_ref(&xv, &tv, &d));
                    assert_close_dtype(&what, &got, &want, dt)?;
                    if red != Reduction::None {
                        let again = ok(e::loss(None, kind, &x, &t, red, 2, smoothing, None))?;
                        ensure(
                            values(&again)?[0].to_bits() == got[0].to_bits(),
                            format!("{what}: two runs differ"),
                        )?;
                    }
                    let (g, gv) = input(dev, &oshape, dt, s + 2)?;
                    let gi = poisoned(dev, ishape, dt)?;
                    ok(e::loss_backward(
                        None,
                        kind,
                        &g,
                        &x,
                        &t,
                        red,
                        2,
                        smoothing,
                        Some(&gi),
                    ))?;
                    let want = rounded(dt, &r::loss_backward_ref(&xv, &tv, &gv, &d));
                    assert_close_dtype(&format!("{what} backward"), &values(&gi)?, &want, dt)?;
                }
            }
        }
    }
    Ok(())
}

/// Every target ignored: mean is NaN (0/0, as PyTorch), sum 0, gradients 0; out-of-range
/// targets (negative, or >= classes; i32 and i64; contiguous and strided classes) are
/// INVALID_ARGUMENT naming the op and the target, forward and backward.
fn class_losses_ignored_and_bad_targets(dev: &Dev) -> TestResult {
    use ErrorKind::InvalidArgument;
    let x = randn(dev, &[4, 6], DType::F32, 3)?;
    let all = from_f64(dev, &[-100.0; 4], &[4], DType::I64)?;
    for kind in [LossKind::CrossEntropy, LossKind::Nll] {
        let mean = ok(e::loss(
            None,
            kind,
            &x,
            &all,
            Reduction::Mean,
            -100,
            0.0,
            None,
        ))?;
        ensure(
            values(&mean)?[0].is_nan(),
            format!("{}: mean of nothing", kind.name()),
        )?;
        let sum = ok(e::loss(
            None,
            kind,
            &x,
            &all,
            Reduction::Sum,
            -100,
            0.0,
            None,
        ))?;
        ensure(
            values(&sum)?[0] == 0.0,
            format!("{}: sum of nothing", kind.name()),
        )?;
        let g = from_f64(dev, &[1.0], &[], DType::F32)?;
        let gi = poisoned(dev, &[4, 6], DType::F32)?;
        ok(e::loss_backward(
            None,
            kind,
            &g,
            &x,
            &all,
            Reduction::Sum,
            -100,
            0.0,
            Some(&gi),
        ))?;
        ensure(
            values(&gi)?.iter().all(|v| *v == 0.0),
            format!("{}: gradient of ignored items", kind.name()),
        )?;
    }
    let x3 = randn(dev, &[2, 6, 3], DType::F32, 4)?;
    for tdt in [DType::I32, DType::I64] {
        for (bad, at) in [(6.0, 3usize), (-5.0, 1)] {
            let mut tv = vec![1.0; 4];
            tv[at] = bad;
            let t = from_f64(dev, &tv, &[4], tdt)?;
            let t3 = from_f64(dev, &[0.0, 1.0, 2.0, 3.0, 4.0, bad], &[2, 3], tdt)?;
            for kind in [LossKind::CrossEntropy, LossKind::Nll] {
                let needle = format!("{}: target {bad}", kind.name());
                for red in reductions() {
                    expect_err(
                        e::loss(None, kind, &x, &t, red, -100, 0.0, None),
                        InvalidArgument,
                        &needle,
                    )?;
                    expect_err(
                        e::loss(None, kind, &x3, &t3, red, -100, 0.0, None),
                        InvalidArgument,
                        &needle,
                    )?;
                }
                let g = from_f64(dev, &[1.0], &[], DType::F32)?;
                expect_err(
                    e::loss_backward(None, kind, &g, &x, &t, Reduction::Mean, -100, 0.0, None),
                    InvalidArgument,
                    &needle,
                )?;
            }
        }
    }
    Ok(())
}

/// A mask for an attention test: bool (true about 70%, one row fully false when it has one)
/// or additive (random, with -inf entries and one fully -inf row), in `dt`.
fn attn_mask(
    dev: &Dev,
    shape: &[usize],
    dt: DType,
    seed: u64,
) -> Result<(Tensor, Vec<f64>), libtest_mimic::Failed> {
    let n: usize = shape.iter().product();
    let r = values(&randn(dev, &[n.max(1)], DType::F32, seed)?)?;
    let sk = *shape.last().unwrap();
    let vals: Vec<f64> = (0..n)
        .map(|i| {
            let first_row = shape.len() >= 2 && shape[shape.len() - 2] > 1 && i < sk;
            if dt == DType::Bool {
                (!first_row && r[i] > -0.5) as i32 as f64
            } else if first_row || r[i] < -1.0 {
                f64::NEG_INFINITY
            } else {
                r[i]
            }
        })
        .collect();
    let t = from_f64(dev, &vals, shape, dt)?;
    let v = values(&t)?;
    Ok((t, v))
}

/// scaled_dot_product_attention_ex: masks (bool and additive in f32 or q's dtype, broadcast
/// over batch, heads and queries, fully masked rows giving 0), grouped-query attention
/// (including different key and value head counts), both causal alignments with Sq < Sk,
/// Sq == Sk and Sq > Sk, and batch broadcasting of q, k, v, forward and backward, against
/// the float64 reference of the plan; the plain arguments give exactly the plain op.
fn attention_ex_mask_gqa_causal(dev: &Dev) -> TestResult {
    // (q, k, v, mask shape and kind: 'b' bool, 'f' f32, 'q' q's dtype, causal, gqa)
    type Case = (
        &'static [usize],
        &'static [usize],
        &'static [usize],
        Option<(&'static [usize], char)>,
        Causal,
        bool,
    );
    let cases: &[Case] = &[
        // key padding mask [B, 1, 1, Sk]
        (
            &[2, 3, 4, 8],
            &[2, 3, 6, 8],
            &[2, 3, 6, 5],
            Some((&[2, 1, 1, 6], 'b')),
            Causal::None,
            false,
        ),
        // additive [Sq, Sk] with -inf and a fully masked row
        (
            &[1, 2, 5, 4],
            &[1, 2, 7, 4],
            &[1, 2, 7, 4],
            Some((&[5, 7], 'f')),
            Causal::None,
            false,
        ),
        (
            &[2, 2, 5, 4],
            &[2, 2, 7, 4],
            &[2, 2, 7, 3],
            Some((&[2, 1, 5, 7], 'q')),
            Causal::None,
            false,
        ),
        // per-head bool mask with a fully masked query row
        (
            &[1, 2, 3, 4],
            &[1, 2, 5, 4],
            &[1, 2, 5, 4],
            Some((&[2, 3, 5], 'b')),
            Causal::None,
            false,
        ),
        // a mask broadcast over three levels of leading dims (made contiguous first)
        (
            &[2, 3, 2, 5, 4],
            &[2, 3, 2, 7, 4],
            &[2, 3, 2, 7, 4],
            Some((&[2, 1, 2, 5, 7], 'f')),
            Causal::None,
            false,
        ),
        // GQA, top-left causal, Sq < Sk
        (
            &[2, 4, 5, 8],
            &[2, 2, 7, 8],
            &[2, 2, 7, 6],
            None,
            Causal::TopLeft,
            true,
        ),
        // MQA, bottom-right (KV-cache decoding)
        (
            &[1, 6, 3, 4],
            &[1, 1, 9, 4],
            &[1, 1, 9, 4],
            None,
            Causal::BottomRight,
            true,
        ),
        (
            &[1, 6, 1, 4],
            &[1, 2, 9, 4],
            &[1, 2, 9, 4],
            None,
            Causal::BottomRight,
            true,
        ),
        // GQA with different key and value head counts, and with a mask
        (
            &[1, 4, 3, 4],
            &[1, 2, 5, 4],
            &[1, 1, 5, 3],
            Some((&[4, 3, 5], 'b')),
            Causal::None,
            true,
        ),
        // bottom-right with Sq == Sk (equals top-left) and Sq > Sk (first rows see nothing)
        (
            &[2, 2, 5, 4],
            &[2, 2, 5, 4],
            &[2, 2, 5, 4],
            None,
            Causal::BottomRight,
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
        // batch broadcasting of q, k, v (k's batch 1, v without a batch dim; q broadcast)
        (
            &[2, 3, 5, 4],
            &[1, 3, 7, 4],
            &[3, 7, 6],
            None,
            Causal::TopLeft,
            false,
        ),
        (
            &[1, 1, 5, 4],
            &[2, 3, 7, 4],
            &[2, 3, 7, 4],
            Some((&[1, 7], 'b')),
            Causal::None,
            false,
        ),
        (&[5, 4], &[2, 7, 4], &[7, 4], None, Causal::None, false),
        // a head dim of 1 broadcasts without GQA (k/v shared by every head)
        (
            &[2, 4, 3, 4],
            &[2, 1, 6, 4],
            &[2, 1, 6, 4],
            None,
            Causal::BottomRight,
            false,
        ),
        // GQA and broadcasting together
        (
            &[2, 4, 3, 4],
            &[1, 2, 6, 4],
            &[2, 2, 6, 4],
            None,
            Causal::None,
            true,
        ),
        // empty key set and empty batch
        (
            &[1, 2, 3, 4],
            &[1, 2, 0, 4],
            &[1, 2, 0, 4],
            None,
            Causal::None,
            false,
        ),
        (
            &[0, 2, 3, 4],
            &[0, 1, 5, 4],
            &[0, 1, 5, 4],
            None,
            Causal::None,
            true,
        ),
    ];
    for dt in FLOATS {
        for (ci, (qs, ks, vs, m, causal, gqa)) in cases.iter().enumerate() {
            let s = 900 + ci as u64 * 7;
            let (q, qv) = input(dev, qs, dt, s)?;
            let (k, kv) = input(dev, ks, dt, s + 1)?;
            let (v, vv) = input(dev, vs, dt, s + 2)?;
            let mask = match m {
                None => None,
                Some((ms, kind)) => {
                    let mdt = match kind {
                        'b' => DType::Bool,
                        'f' => DType::F32,
                        _ => dt,
                    };
                    Some(attn_mask(dev, ms, mdt, s + 3)?)
                }
            };
            let mt = mask.as_ref().map(|(t, _)| t);
            let mvals = mask.as_ref().map(|(_, v)| v.as_slice());
            for scale in [None, Some(0.7)] {
                let what = format!(
                    "sdpa_ex case {ci} q{qs:?} k{ks:?} v{vs:?} mask {m:?} {causal:?} gqa={gqa} {scale:?} {dt}"
                );
                let plan = ok(AttentionPlan::new(
                    "sdpa",
                    qs,
                    ks,
                    vs,
                    mt.map(|t| (t.shape(), t.dtype())),
                    dt,
                    scale,
                    *causal,
                    *gqa,
                ))?;
                let oshape = plan.out_shape();
                let out = poisoned(dev, &oshape, dt)?;
                ok(e::scaled_dot_product_attention_ex(
                    None,
                    &q,
                    &k,
                    &v,
                    mt,
                    *causal,
                    scale,
                    *gqa,
                    Some(&out),
                ))?;
                let want = rounded(dt, &r::attention_plan_ref(&qv, &kv, &vv, mvals, &plan));
                let tol = if dt == DType::F32 { 1e-4 } else { 3e-2 };
                assert_close(&what, &values(&out)?, &want, tol, tol)?;
                let (go, gov) = input(dev, &oshape, dt, s + 4)?;
                let (gq, gk, gv) = (
                    poisoned(dev, qs, dt)?,
                    poisoned(dev, ks, dt)?,
                    poisoned(dev, vs, dt)?,
                );
                ok(e::scaled_dot_product_attention_ex_backward(
                    None,
                    &go,
                    &q,
                    &k,
                    &v,
                    mt,
                    *causal,
                    scale,
                    *gqa,
                    [Grad::Into(&gq), Grad::Into(&gk), Grad::Into(&gv)],
                ))?;
                let (rq, rk, rv) =
                    r::attention_plan_backward_ref(&qv, &kv, &vv, mvals, &gov, &plan);
                let tol = if dt == DType::F32 { 1e-4 } else { 5e-2 };
                assert_close(&format!("{what} dq"), &values(&gq)?, &rq, tol, tol)?;
                assert_close(&format!("{what} dk"), &values(&gk)?, &rk, tol, tol)?;
                assert_close(&format!("{what} dv"), &values(&gv)?, &rv, tol, tol)?;
            }
        }
    }
    // Rows that see no key give exactly 0 (PyTorch's _safe_softmax), not NaN.
    let (q, _) = input(dev, &[1, 1, 4, 2], DType::F32, 1)?;
    let (k, _) = input(dev, &[1, 1, 2, 2], DType::F32, 2)?;
    let o = ok(e::scaled_dot_product_attention_ex(
        None,
        &q,
        &k,
        &k,
        None,
        Causal::BottomRight,
        None,
        false,
        None,
    ))?;
    let ov = values(&o)?;
    ensure(
        ov[..4].iter().all(|v| *v == 0.0) && ov[4..].iter().all(|v| v.is_finite() && *v != 0.0),
        format!("bottom-right Sq > Sk: {ov:?}"),
    )?;
    // The plain arguments give exactly the plain op's result.
    for causal in [false, true] {
        let (q, _) = input(dev, &[2, 3, 5, 8], DType::F32, 3)?;
        let (k, _) = input(dev, &[2, 3, 7, 8], DType::F32, 4)?;
        let (v, _) = input(dev, &[2, 3, 7, 4], DType::F32, 5)?;
        let a = ok(e::scaled_dot_product_attention(
            None, &q, &k, &v, causal, None, None,
        ))?;
        let mode = if causal {
            Causal::TopLeft
        } else {
            Causal::None
        };
        let b = ok(e::scaled_dot_product_attention_ex(
            None, &q, &k, &v, None, mode, None, false, None,
        ))?;
        ensure(
            values(&a)? == values(&b)?,
            format!("sdpa_ex causal={causal} differs from sdpa"),
        )?;
    }
    // Bottom-right with Sq == Sk is top-left.
    let (q, _) = input(dev, &[2, 5, 4], DType::F32, 6)?;
    let a = ok(e::scaled_dot_product_attention_ex(
        None,
        &q,
        &q,
        &q,
        None,
        Causal::TopLeft,
        None,
        false,
        None,
    ))?;
    let b = ok(e::scaled_dot_product_attention_ex(
        None,
        &q,
        &q,
        &q,
        None,
        Causal::BottomRight,
        None,
        false,
        None,
    ))?;
    ensure(
        values(&a)? == values(&b)?,
        "bottom-right == top-left at Sq == Sk",
    )?;
    // Misuse.
    use ErrorKind::*;
    let f = |s: &[usize]| randn(dev, s, DType::F32, 9);
    let (q, k) = (f(&[1, 4, 3, 8])?, f(&[1, 3, 5, 8])?);
    expect_err(
        e::scaled_dot_product_attention_ex(None, &q, &k, &k, None, Causal::None, None, true, None),
        ShapeMismatch,
        "enable_gqa",
    )?;
    expect_err(
        e::scaled_dot_product_attention_ex(None, &q, &k, &k, None, Causal::None, None, false, None),
        ShapeMismatch,
        "scaled_dot_product_attention_ex",
    )?;
    let (q, k) = (f(&[2, 3, 8])?, f(&[2, 5, 8])?);
    let mi = ok(Tensor::randint(dev.clone(), &[3, 5], DType::I64, 0, 2, 1))?;
    expect_err(
        e::scaled_dot_product_attention_ex(
            None,
            &q,
            &k,
            &k,
            Some(&mi),
            Causal::None,
            None,
            false,
            None,
        ),
        DtypeMismatch,
        "attn_mask",
    )?;
    expect_err(
        e::scaled_dot_product_attention_ex(
            None,
            &q,
            &k,
            &k,
            Some(&f(&[3, 4])?),
            Causal::None,
            None,
            false,
            None,
        ),
        ShapeMismatch,
        "attn_mask",
    )?;
    // The mask broadcasts to the scores, not beyond them (PyTorch adds it in place).
    expect_err(
        e::scaled_dot_product_attention_ex(
            None,
            &q,
            &k,
            &k,
            Some(&f(&[4, 2, 3, 5])?),
            Causal::None,
            None,
            false,
            None,
        ),
        ShapeMismatch,
        "attn_mask",
    )?;
    expect_err(
        e::scaled_dot_product_attention_ex(
            None,
            &q,
            &k,
            &k,
            Some(&f(&[3, 5])?),
            Causal::TopLeft,
            None,
            false,
            None,
        ),
        InvalidArgument,
        "causal",
    )?;
    // Rank 3 has a head dim (-3) for GQA; rank 2 has none.
    ok(e::scaled_dot_product_attention_ex(
        None,
        &q,
        &k,
        &k,
        None,
        Causal::None,
        None,
        true,
        None,
    ))?;
    let (q2, k2) = (f(&[3, 8])?, f(&[5, 8])?);
    expect_err(
        e::scaled_dot_product_attention_ex(
            None,
            &q2,
            &k2,
            &k2,
            None,
            Causal::None,
            None,
            true,
            None,
        ),
        ShapeMismatch,
        "head dim",
    )?;
    expect_err(
        e::scaled_dot_product_attention_ex(
            None,
            &q,
            &k,
            &k,
            None,
            Causal::None,
            Some(f64::NAN),
            false,
            None,
        ),
        InvalidArgument,
        "scale",
    )?;
    Ok(())
}

/// The float64 reference of the plan against central differences: a mask, GQA with
/// broadcasting, and the bottom-right causal mask with fully masked rows.
fn attention_ex_finite_differences(dev: &Dev) -> TestResult {
    let vals = |n: usize, seed: u64| -> Result<Vec<f64>, libtest_mimic::Failed> {
        values(&randn(dev, &[n], DType::F32, seed)?)
    };
    type Case = (
        &'static [usize],
        &'static [usize],
        &'static [usize],
        Causal,
        bool,
        bool,
    );
    let cases: &[Case] = &[
        (
            &[1, 4, 3, 3],
            &[1, 2, 4, 3],
            &[2, 2, 4, 2],
            Causal::None,
            true,
            true,
        ),
        (
            &[2, 2, 5, 3],
            &[2, 2, 3, 3],
            &[2, 2, 3, 2],
            Causal::BottomRight,
            false,
            false,
        ),
        (
            &[2, 3, 3],
            &[1, 4, 3],
            &[4, 2],
            Causal::TopLeft,
            false,
            false,
        ),
    ];
    for (ci, (qs, ks, vs, causal, gqa, with_mask)) in cases.iter().enumerate() {
        let n = |s: &[usize]| s.iter().product::<usize>();
        let (q, k, v) = (vals(n(qs), 1)?, vals(n(ks), 2)?, vals(n(vs), 3)?);
        let mshape: &[usize] = &[3, 4];
        let mask: Vec<f64> = vals(12, 4)?
            .iter()
            .enumerate()
            .map(|(i, x)| if i < 4 { f64::NEG_INFINITY } else { *x })
            .collect();
        let mv = with_mask.then_some(mask.as_slice());
        let plan = ok(AttentionPlan::new(
            "sdpa",
            qs,
            ks,
            vs,
            with_mask.then_some((mshape, DType::F32)),
            DType::F32,
            Some(0.8),
            *causal,
            *gqa,
        ))?;
        let rr = vals(n(&plan.out_shape()), 5)?;
        let (dq, dk, dv) = r::attention_plan_backward_ref(&q, &k, &v, mv, &rr, &plan);
        let what = format!("sdpa_ex case {ci}");
        fd_check(&format!("{what} dq"), &q, &rr, &dq, |x| {
            r::attention_plan_ref(x, &k, &v, mv, &plan)
        })?;
        fd_check(&format!("{what} dk"), &k, &rr, &dk, |x| {
            r::attention_plan_ref(&q, x, &v, mv, &plan)
        })?;
        fd_check(&format!("{what} dv"), &v, &rr, &dv, |x| {
            r::attention_plan_ref(&q, &k, x, mv, &plan)
        })?;
    }
    Ok(())
}

/// The fused attention kernels' grid (kernels/flash_attention.hip on GPUs; every device runs
/// the same body): lengths around the tiles (1, 7, 63, 64, 65, 130, 257; Sq != Sk both
/// ways), head dims 64, 128 and 40 (padded) and dv != d, no/top-left/bottom-right causal
/// masks, grouped-query attention (8 query heads on 2 key/value heads), decoding (one or a
/// few queries against 1000+ keys: the split-KV path), an explicit scale, an additive mask
/// with fully masked rows, in f32/f16/bf16, forward and backward against the float64
/// reference.
fn attention_fused_grid(dev: &Dev) -> TestResult {
    // (query heads, key/value heads, sq, sk, d, dv)
    let cases: &[(usize, usize, usize, usize, usize, usize)] = &[
        (2, 2, 1, 1, 64, 64),
        (2, 2, 7, 7, 64, 64),
        (1, 1, 63, 63, 128, 128),
        (2, 2, 64, 64, 64, 64),
        (1, 1, 65, 65, 40, 40),
        (8, 2, 130, 130, 64, 64),
        (2, 1, 257, 257, 128, 128),
        (2, 2, 7, 130, 64, 64),
        (2, 2, 130, 7, 40, 40),
        (2, 2, 65, 257, 64, 32),
        (8, 2, 1, 1000, 128, 128),
        (4, 4, 3, 1030, 64, 64),
        // The decoding kernel (at most 8 rows per unit): a head dim below its 64 lanes' span,
        // dv != d with grouped-query heads and the additive mask (case 13), a Llama-shaped
        // step; then 16 rows per unit (the tiled kernel's one-warp decoding variant).
        (2, 2, 5, 300, 40, 40),
        (4, 2, 2, 513, 64, 32),
        (2, 2, 1, 2048, 128, 128),
        (16, 2, 2, 300, 64, 64),
    ];
    for (ci, &(hq, hk, sq, sk, d, dv)) in cases.iter().enumerate() {
        for dt in FLOATS {
            let qs = [1, hq, sq, d];
            let ks = [1, hk, sk, d];
            let vs = [1, hk, sk, dv];
            let s = 9000 + ci as u64 * 11;
            let (q, qv) = input(dev, &qs, dt, s)?;
            let (k, kv) = input(dev, &ks, dt, s + 1)?;
            let (v, vv) = input(dev, &vs, dt, s + 2)?;
            // An additive f32 mask on the first cases (with one fully masked row).
            let mask = if ci % 4 == 1 {
                Some(attn_mask(dev, &[1, hq, sq, sk], DType::F32, s + 3)?)
            } else {
                None
            };
            let causals: &[Causal] = if mask.is_some() {
                &[Causal::None]
            } else {
                &[Causal::None, Causal::TopLeft, Causal::BottomRight]
            };
            let mt = mask.as_ref().map(|(t, _)| t);
            let mvals = mask.as_ref().map(|(_, v)| v.as_slice());
            for &causal in causals {
                let scale = if ci % 3 == 0 { Some(0.21) } else { None };
                let what = format!(
                    "fused sdpa q{qs:?} k{ks:?} v{vs:?} mask={} {causal:?} {scale:?} {dt}",
                    mask.is_some()
                );
                let plan = ok(AttentionPlan::new(
                    "sdpa",
                    &qs,
                    &ks,
                    &vs,
                    mt.map(|t| (t.shape(), t.dtype())),
                    dt,
                    scale,
                    causal,
                    true,
                ))?;
                let oshape = plan.out_shape();
                let out = poisoned(dev, &oshape, dt)?;
                ok(e::scaled_dot_product_attention_ex(
                    None,
                    &q,
                    &k,
                    &v,
                    mt,
                    causal,
                    scale,
                    true,
                    Some(&out),
                ))?;
                let want = rounded(dt, &r::attention_plan_ref(&qv, &kv, &vv, mvals, &plan));
                let tol = if dt == DType::F32 { 1e-4 } else { 3e-2 };
                assert_close(&what, &values(&out)?, &want, tol, tol)?;
                let (go, gov) = input(dev, &oshape, dt, s + 4)?;
                let (gq, gk, gv) = (
                    poisoned(dev, &qs, dt)?,
                    poisoned(dev, &ks, dt)?,
                    poisoned(dev, &vs, dt)?,
                );
                ok(e::scaled_dot_product_attention_ex_backward(
                    None,
                    &go,
                    &q,
                    &k,
                    &v,
                    mt,
                    causal,
                    scale,
                    true,
                    [Grad::Into(&gq), Grad::Into(&gk), Grad::Into(&gv)],
                ))?;
                let (rq, rk, rv) =
                    r::attention_plan_backward_ref(&qv, &kv, &vv, mvals, &gov, &plan);
                let tol = if dt == DType::F32 { 1e-4 } else { 5e-2 };
                assert_close(&format!("{what} dq"), &values(&gq)?, &rq, tol, tol)?;
                assert_close(&format!("{what} dk"), &values(&gk)?, &rk, tol, tol)?;
                assert_close(&format!("{what} dv"), &values(&gv)?, &rv, tol, tol)?;
            }
        }
    }
    Ok(())
}

/// Decoding attention recorded into a device graph (the split-KV kernel's last block per
/// head merges the splits there, with counters the graph owns, instead of the separate
/// combine kernel) gives the bits of the same call run eagerly, on every replay with new
/// queries (the counters back at zero after each): one and several query rows per head,
/// grouped-query heads, dv != d, an additive mask. The CPU has no device graphs.
fn attention_decode_in_graph(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::Stream;
    use rocm_backend::runtime::data::copy;
    if dev.kind() == rocm_backend::device::DeviceKind::Cpu {
        let e = dev.graph_capture_begin(rocm_backend::device::RawStream::DEFAULT);
        return ensure(
            matches!(&e, Err(e) if e.kind == ErrorKind::Unsupported),
            format!("graph_capture_begin on the CPU: {e:?}"),
        );
    }
    // (query heads, key/value heads, sq, sk, d, dv, mask)
    let cases: &[(usize, usize, usize, usize, usize, usize, bool)] = &[
        (32, 32, 1, 2048, 128, 128, false),
        (8, 2, 1, 1000, 128, 128, true),
        (4, 2, 2, 513, 64, 32, false),
        (2, 2, 5, 300, 40, 40, true),
    ];
    for (ci, &(hq, hk, sq, sk, d, dv, masked)) in cases.iter().enumerate() {
        for dt in FLOATS {
            let qs = [1, hq, sq, d];
            let seed = 9500 + ci as u64 * 13;
            let (q, _) = input(dev, &qs, dt, seed)?;
            let (k, _) = input(dev, &[1, hk, sk, d], dt, seed + 1)?;
            let (v, _) = input(dev, &[1, hk, sk, dv], dt, seed + 2)?;
            let mask = if masked {
                Some(attn_mask(dev, &[1, hq, sq, sk], DType::F32, seed + 3)?.0)
            } else {
                None
            };
            let run = |st: Option<&Stream>, out: &Tensor| {
                ok(e::scaled_dot_product_attention_ex(
                    st,
                    &q,
                    &k,
                    &v,
                    mask.as_ref(),
                    Causal::None,
                    None,
                    true,
                    Some(out),
                ))
                .map(|_| ())
            };
            let oshape = [1, hq, sq, dv];
            let want = poisoned(dev, &oshape, dt)?;
            run(None, &want)?;
            ok(dev.synchronize())?;
            let st = ok(Stream::new(dev.clone()))?;
            let got = poisoned(dev, &oshape, dt)?;
            ok(dev.graph_capture_begin(st.raw()))?;
            let captured = run(Some(&st), &got);
            let g = ok(dev.graph_capture_end(st.raw()))?;
            captured?;
            for round in 0..3u64 {
                let (fresh, _) = input(dev, &qs, dt, seed + 5 + round)?;
                ok(copy(None, &fresh, &q))?;
                ok(dev.synchronize())?;
                ok(dev.graph_launch(g, st.raw()))?;
                ok(st.synchronize())?;
                run(None, &want)?;
                ok(dev.synchronize())?;
                let (a, b) = (values(&got)?, values(&want)?);
                ensure(
                    a.iter()
                        .zip(&b)
                        .all(|(x, y)| x == y || (x.is_nan() && y.is_nan())),
                    format!("decode sdpa case {ci} {dt} replay {round}: graph and eager differ"),
                )?;
            }
            dev.graph_destroy(g);
        }
    }
    Ok(())
}

/// The executor's attention after a cache store (`scaled_dot_product_attention_fresh`: a
/// GPU's one-row decoding kernel reads the first round of the caches' rows other than the
/// stored one before it waits for the store's kernel) gives the bits of the plain call: the
/// rows at the position written by `index_copy` right before it (the executor's contract),
/// at positions in the first round of a split, later in one, at the first and last key; a
/// position out of the caches' range (nothing stored, no row fresh); an int32 position;
/// several splits and one, one query row and two (the kernels without the early loads).
/// Bad positions are refused with a message.
fn attention_fresh_after_store(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::attention::scaled_dot_product_attention_fresh as fresh_sdpa;
    use rocm_backend::runtime::data::index_copy;
    // (heads, sq, sk, d, positions)
    let cases: &[(usize, usize, usize, usize, &[i64])] = &[
        (32, 1, 2048, 128, &[0, 31, 129, 1000, 2047, 2048, -1]),
        (4, 1, 300, 64, &[0, 150, 299]),
        (3, 1, 8, 16, &[5]),
        (4, 2, 96, 64, &[40]),
    ];
    let ids = |i: i64, dt: DType| -> Result<Tensor, libtest_mimic::Failed> {
        let bytes = match dt {
            DType::I32 => (i as i32).to_ne_bytes().to_vec(),
            _ => i.to_ne_bytes().to_vec(),
        };
        ok(Tensor::from_bytes(dev.clone(), &bytes, &[1], dt))
    };
    for (ci, &(h, sq, sk, d, positions)) in cases.iter().enumerate() {
        for dt in FLOATS {
            let seed = 9700 + ci as u64 * 17;
            let (q, _) = input(dev, &[1, h, sq, d], dt, seed)?;
            let (k, _) = input(dev, &[1, h, sk, d], dt, seed + 1)?;
            let (v, _) = input(dev, &[1, h, sk, d], dt, seed + 2)?;
            let (kn, _) = input(dev, &[1, h, 1, d], dt, seed + 3)?;
            let (vn, _) = input(dev, &[1, h, 1, d], dt, seed + 4)?;
            for &pos in positions {
                for pdt in [DType::I64, DType::I32] {
                    let at = ids(pos, DType::I64)?;
                    let fresh = ids(pos, pdt)?;
                    ok(dev.synchronize())?;
                    let got = poisoned(dev, &[1, h, sq, d], dt)?;
                    if (0..sk as i64).contains(&pos) {
                        // the store right before: only row `pos` of k and v
                        ok(index_copy(None, &k, 2, &at, &kn))?;
                        ok(index_copy(None, &v, 2, &at, &vn))?;
                    }
                    ok(fresh_sdpa(
                        None,
                        &q,
                        &k,
                        &v,
                        false,
                        None,
                        Some(&got),
                        &fresh,
                    ))?;
                    ok(dev.synchronize())?;
                    let want = poisoned(dev, &[1, h, sq, d], dt)?;
                    ok(e::scaled_dot_product_attention(
                        None,
                        &q,
                        &k,
                        &v,
                        false,
                        None,
                        Some(&want),
                    ))?;
                    let (a, b) = (values(&got)?, values(&want)?);
                    ensure(
                        a.iter()
                            .zip(&b)
                            .all(|(x, y)| x == y || (x.is_nan() && y.is_nan())),
                        format!("case {ci} {dt} position {pos} ({pdt}): fresh and plain differ"),
                    )?;
                }
            }
        }
    }
    // positions that are not one int element
    let (q, _) = input(dev, &[1, 2, 1, 16], DType::F32, 1)?;
    for (bytes, shape, pdt) in [
        (vec![0u8; 16], vec![2usize], DType::I64),
        (vec![0u8; 4], vec![1], DType::F32),
    ] {
        let p = ok(Tensor::from_bytes(dev.clone(), &bytes, &shape, pdt))?;
        let r = fresh_sdpa(None, &q, &q, &q, false, None, None, &p);
        ensure(
            matches!(&r, Err(e) if e.kind == ErrorKind::InvalidArgument
                && e.message.contains("scaled_dot_product_attention_fresh")),
            format!("position {shape:?} {pdt}: {r:?}"),
        )?;
    }
    Ok(())
}

/// Attention memory stays O(S): during a forward and a backward at S = 8192 (2048 on the
/// CPU device) the allocator's peak grows by far less than the S x S f32 scores of the
/// batch would take; the first and last rows of the output match the reference. Its trial
/// is named `memory_...` so that it runs alone (the peak is the whole allocator's: a trial
/// allocating beside it, such as `large_add_and_reductions`, once made it 17 GB).
fn attention_memory_linear(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::memory;
    let _g = crate::memory::SERIAL
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let cpu = dev.kind() == rocm_backend::device::DeviceKind::Cpu;
    let (bh, s, d) = (4usize, if cpu { 2048usize } else { 8192 }, 64usize);
    let dt = DType::F16;
    let shape = [1, bh, s, d];
    let (q, qv) = input(dev, &shape, dt, 71)?;
    let (k, kv) = input(dev, &shape, dt, 72)?;
    let (v, vv) = input(dev, &shape, dt, 73)?;
    let (go, _) = input(dev, &shape, dt, 74)?;
    let out = poisoned(dev, &shape, dt)?;
    let (gq, gk, gv) = (
        poisoned(dev, &shape, dt)?,
        poisoned(dev, &shape, dt)?,
        poisoned(dev, &shape, dt)?,
    );
    ok(dev.synchronize())?;
    ok(memory::reset_stats(dev))?;
    let base = ok(memory::stats(dev))?.allocator;
    ok(e::scaled_dot_product_attention(
        None,
        &q,
        &k,
        &v,
        true,
        None,
        Some(&out),
    ))?;
    ok(e::scaled_dot_product_attention_backward(
        None,
        &go,
        &q,
        &k,
        &v,
        true,
        None,
        [Grad::Into(&gq), Grad::Into(&gk), Grad::Into(&gv)],
    ))?;
    ok(dev.synchronize())?;
    let after = ok(memory::stats(dev))?.allocator;
    let grew = after
        .peak_allocated_bytes
        .saturating_sub(base.allocated_bytes);
    let scores = (bh * s * s * 4) as u64;
    // With the GEMM path forced (RB_ATTENTION_PATH=gemm) the scores are in memory by
    // design: then the peak must show them (the check measures what it claims).
    let gemm = !cpu
        && rocm_backend::device::attention::attention_path()
            == rocm_backend::device::attention::AttentionPath::Gemm;
    if gemm {
        ensure(
            grew >= scores,
            format!("attention at S={s} on the GEMM path: peak grew by {grew} < {scores}"),
        )?;
    } else {
        ensure(
            grew < scores / 16,
            format!(
                "attention at S={s}: the allocator's peak grew by {grew} bytes, the S x S scores \
                 take {scores}"
            ),
        )?;
    }
    // Rows 0 and S-1 of head 0 against the reference (causal: row 0 is v's first row).
    let (dd, _) =
        AttentionDesc::new("sdpa", &[1, s, d], &[1, s, d], &[1, s, d], None, true).unwrap();
    let got = values(&out)?;
    for row in [0, s - 1] {
        let sub = AttentionDesc {
            sq: 1,
            causal: Causal::None,
            sk: row + 1,
            ..dd
        };
        let want = r::attention_ref(
            &qv[row * d..(row + 1) * d],
            &kv[..(row + 1) * d],
            &vv[..(row + 1) * d],
            &sub,
        );
        assert_close(
            &format!("attention S={s} row {row}"),
            &got[row * d..(row + 1) * d],
            &rounded(dt, &want),
            3e-2,
            3e-2,
        )?;
    }
    Ok(())
}
