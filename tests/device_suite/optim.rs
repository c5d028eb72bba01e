//! SGD and Adam/AdamW steps against PyTorch's formulas in float64, over several steps, every
//! variant (momentum, dampening, nesterov, weight decay, amsgrad), and misuse.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::optim::{AdamAttrs, SgdAttrs, adam_reference, sgd_reference};
use rocm_backend::runtime::{DType, Tensor, optim};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("sgd_step_variants", sgd_step_variants),
        ("adam_step_variants", adam_step_variants),
        (
            "sgd_step_multi_matches_single",
            sgd_step_multi_matches_single,
        ),
        ("optim_misuse", optim_misuse),
    ]
}

fn tol(dt: DType) -> f64 {
    if dt == DType::F32 { 1e-5 } else { 2e-2 }
}

fn sgd_step_variants(dev: &Dev) -> TestResult {
    let variants = [
        (0.0f64, 0.0f64, 0.0f64, false),
        (0.9, 0.0, 0.0, false),
        (0.9, 0.3, 0.01, false),
        (0.8, 0.0, 0.05, true),
    ];
    for dt in FLOATS {
        for n in [1usize, 1000, 70001] {
            for &(momentum, dampening, weight_decay, nesterov) in &variants {
                let p = randn(dev, &[n], dt, 1)?;
                let buf = poisoned(dev, &[n], dt)?;
                let mut vp = values(&p)?;
                let mut vb = vec![0.0; n];
                for step in 0..3 {
                    let g = randn(dev, &[n], dt, 10 + step)?;
                    let vg = values(&g)?;
                    let a = SgdAttrs {
                        lr: 0.1,
                        momentum,
                        dampening,
                        weight_decay,
                        nesterov,
                        first_step: step == 0,
                    };
                    let use_buf = if momentum != 0.0 { Some(&buf) } else { None };
                    ok(optim::sgd_step(None, &p, &g, use_buf, &a))?;
                    let mut want_p = Vec::with_capacity(n);
                    for i in 0..n {
                        let (np, nb) = sgd_reference(vp[i], vg[i], vb[i], &a.f32_rounded());
                        want_p.push(np);
                        vb[i] = nb;
                    }
                    let what = format!(
                        "sgd m={momentum} d={dampening} wd={weight_decay} nesterov={nesterov} step {step} {dt} n={n}"
                    );
                    assert_close(&what, &values(&p)?, &want_p, tol(dt), tol(dt))?;
                    if momentum != 0.0 {
                        assert_close(
                            &format!("{what} buf"),
                            &values(&buf)?,
                            &vb,
                            tol(dt),
                            tol(dt),
                        )?;
                        vb = values(&buf)?;
                    }
                    vp = values(&p)?;
                }
            }
        }
    }
    Ok(())
}

fn adam_step_variants(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for n in [1usize, 1000, 70001] {
            for (decoupled, amsgrad, weight_decay) in [
                (false, false, 0.0f64),
                (false, true, 0.01),
                (true, false, 0.01),
                (true, true, 0.1),
            ] {
                let p = randn(dev, &[n], dt, 2)?;
                let m = ok(Tensor::zeros(dev.clone(), &[n], dt))?;
                let v = ok(Tensor::zeros(dev.clone(), &[n], dt))?;
                let vmax = ok(Tensor::zeros(dev.clone(), &[n], dt))?;
                for step in 1..=3u64 {
                    let (vp, vm, vv, vx) = (values(&p)?, values(&m)?, values(&v)?, values(&vmax)?);
                    // Gradients of magnitude >= 0.5 keep exp_avg_sq out of f16's subnormals
                    // (where any Adam in f16 state, PyTorch's included, blows up).
                    let g = randn(dev, &[n], dt, 20 + step)?;
                    let gv: Vec<f64> = values(&g)?
                        .iter()
                        .map(|x| x.signum() * (0.5 + x.abs()))
                        .collect();
                    let g = from_f64(dev, &gv, &[n], dt)?;
                    let vg = values(&g)?;
                    let a = AdamAttrs {
                        lr: 1e-2,
                        beta1: 0.9,
                        beta2: 0.999,
                        eps: 1e-8,
                        weight_decay,
                        step,
                        amsgrad,
                        decoupled,
                    };
                    let mx = if amsgrad { Some(&vmax) } else { None };
                    ok(optim::adam_step(None, &p, &g, &m, &v, mx, &a))?;
                    let r: Vec<[f64; 4]> = (0..n)
                        .map(|i| {
                            adam_reference(vp[i], vg[i], vm[i], vv[i], vx[i], &a.f32_rounded())
                        })
                        .collect();
                    let what = format!(
                        "adam decoupled={decoupled} amsgrad={amsgrad} step {step} {dt} n={n}"
                    );
                    let col = |k: usize| r.iter().map(|x| x[k]).collect::<Vec<f64>>();
                    assert_close(
                        &format!("{what} param"),
                        &values(&p)?,
                        &col(0),
                        tol(dt),
                        tol(dt),
                    )?;
                    assert_close(
                        &format!("{what} exp_avg"),
                        &values(&m)?,
                        &col(1),
                        tol(dt),
                        tol(dt),
                    )?;
                    assert_close(
                        &format!("{what} exp_avg_sq"),
                        &values(&v)?,
                        &col(2),
                        tol(dt),
                        tol(dt),
                    )?;
                    if amsgrad {
                        assert_close(
                            &format!("{what} max_exp_avg_sq"),
                            &values(&vmax)?,
                            &col(3),
                            tol(dt),
                            tol(dt),
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The grouped SGD step (`optim::sgd_step_multi`: eight tensors per launch on GPUs) gives
/// bit for bit what one `sgd_step` per tensor gives: every dtype, with and without momentum
/// (nesterov, weight decay), the first step, eleven tensors of different sizes (an empty one
/// among them: two launches of up to eight); a bad triple is refused before anything moves.
fn sgd_step_multi_matches_single(dev: &Dev) -> TestResult {
    let sizes = [1usize, 1000, 0, 70001, 3, 257, 8, 9, 4096, 5, 33];
    let variants = [
        (0.0f64, 0.0f64, false, false),
        (0.9, 0.01, true, false),
        (0.9, 0.0, false, true),
    ];
    let mut dts = FLOATS.to_vec();
    dts.push(DType::F64);
    for dt in dts {
        for &(momentum, weight_decay, nesterov, first_step) in &variants {
            let a = SgdAttrs {
                lr: 0.1,
                momentum,
                dampening: 0.0,
                weight_decay,
                nesterov,
                first_step,
            };
            let mk = |seed: u64| -> Result<Vec<Tensor>, libtest_mimic::Failed> {
                sizes
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| {
                        // randn has no f64: f32 values widened
                        let t = randn(dev, &[n], DType::F32, seed + i as u64)?;
                        ok(rocm_backend::runtime::data::cast(None, &t, dt, None))
                    })
                    .collect()
            };
            let (p1, p2, g, b1, b2) = (mk(1)?, mk(1)?, mk(100)?, mk(200)?, mk(200)?);
            let with_buf = momentum != 0.0;
            for i in 0..sizes.len() {
                let (b, gi) = (with_buf.then_some(&b1[i]), &g[i]);
                ok(optim::sgd_step(None, &p1[i], gi, b, &a))?;
            }
            let ps: Vec<&Tensor> = p2.iter().collect();
            let gs: Vec<&Tensor> = g.iter().collect();
            let bs: Vec<Option<&Tensor>> = b2.iter().map(|b| with_buf.then_some(b)).collect();
            ok(optim::sgd_step_multi(None, &ps, &gs, &bs, &a))?;
            ok(dev.synchronize())?;
            for i in 0..sizes.len() {
                for (what, x, y) in [("param", &p1[i], &p2[i]), ("buffer", &b1[i], &b2[i])] {
                    let (x, y) = (values(x)?, values(y)?);
                    ensure(
                        x.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()),
                        format!(
                            "sgd_step_multi {dt} {a:?} tensor {i} ({}): {what} differs",
                            sizes[i]
                        ),
                    )?;
                }
            }
        }
    }
    // a grad of another shape in the middle: refused, no parameter changed
    let ps = [
        randn(dev, &[4], DType::F32, 1)?,
        randn(dev, &[5], DType::F32, 2)?,
    ];
    let before: Vec<Vec<f64>> = ps.iter().map(values).collect::<Result<_, _>>()?;
    let gs = [
        randn(dev, &[4], DType::F32, 3)?,
        randn(dev, &[6], DType::F32, 4)?,
    ];
    let a = SgdAttrs {
        lr: 0.1,
        momentum: 0.0,
        dampening: 0.0,
        weight_decay: 0.0,
        nesterov: false,
        first_step: false,
    };
    let pr: Vec<&Tensor> = ps.iter().collect();
    let gr: Vec<&Tensor> = gs.iter().collect();
    expect_err(
        optim::sgd_step_multi(None, &pr, &gr, &[], &a),
        ErrorKind::ShapeMismatch,
        "sgd_step",
    )?;
    let after: Vec<Vec<f64>> = ps.iter().map(values).collect::<Result<_, _>>()?;
    ensure(after == before, "sgd_step_multi wrote before refusing")?;
    Ok(())
}

fn expect_err<T>(r: rocm_backend::Result<T>, kind: ErrorKind, name: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("{name}: expected {kind:?}, got success").into()),
        Err(e) => ensure(
            e.kind == kind && e.message.contains(name),
            format!(
                "{name}: expected {kind:?} naming the op, got {:?}: {}",
                e.kind, e.message
            ),
        ),
    }
}

fn optim_misuse(dev: &Dev) -> TestResult {
    let p = randn(dev, &[4], DType::F32, 1)?;
    let g = randn(dev, &[4], DType::F32, 2)?;
    let g5 = randn(dev, &[5], DType::F32, 2)?;
    let gh = randn(dev, &[4], DType::F16, 2)?;
    let s = SgdAttrs {
        lr: 0.1,
        momentum: 0.0,
        dampening: 0.0,
        weight_decay: 0.0,
        nesterov: false,
        first_step: true,
    };
    expect_err(
        optim::sgd_step(None, &p, &g5, None, &s),
        ErrorKind::ShapeMismatch,
        "sgd_step",
    )?;
    expect_err(
        optim::sgd_step(None, &p, &gh, None, &s),
        ErrorKind::DtypeMismatch,
        "sgd_step",
    )?;
    expect_err(
        optim::sgd_step(
            None,
            &p,
            &g,
            None,
            &SgdAttrs {
                nesterov: true,
                ..s
            },
        ),
        ErrorKind::InvalidArgument,
        "sgd_step",
    )?;
    expect_err(
        optim::sgd_step(None, &p, &g, None, &SgdAttrs { momentum: 0.9, ..s }),
        ErrorKind::InvalidArgument,
        "sgd_step",
    )?;
    expect_err(
        optim::sgd_step(None, &p, &g, None, &SgdAttrs { lr: -1.0, ..s }),
        ErrorKind::InvalidArgument,
        "sgd_step",
    )?;
    let a = AdamAttrs {
        lr: 1e-3,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weight_decay: 0.0,
        step: 1,
        amsgrad: false,
        decoupled: false,
    };
    let m = ok(Tensor::zeros(dev.clone(), &[4], DType::F32))?;
    let before = values(&p)?;
    expect_err(
        optim::adam_step(None, &p, &g, &m, &m, None, &AdamAttrs { step: 0, ..a }),
        ErrorKind::InvalidArgument,
        "adam_step",
    )?;
    expect_err(
        optim::adam_step(None, &p, &g, &m, &m, None, &AdamAttrs { beta1: 1.0, ..a }),
        ErrorKind::InvalidArgument,
        "adam_step",
    )?;
    expect_err(
        optim::adam_step(
            None,
            &p,
            &g,
            &m,
            &m,
            None,
            &AdamAttrs {
                amsgrad: true,
                decoupled: true,
                ..a
            },
        ),
        ErrorKind::InvalidArgument,
        "adamw_step",
    )?;
    expect_err(
        optim::adam_step(None, &p, &g, &g5, &m, None, &a),
        ErrorKind::ShapeMismatch,
        "adam_step",
    )?;
    assert_close(
        "param untouched by failed steps",
        &values(&p)?,
        &before,
        0.0,
        0.0,
    )
}
