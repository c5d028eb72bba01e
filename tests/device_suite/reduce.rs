//! Reductions (sum, mean, max, min, prod, argmax) over dim lists with keepdim, their
//! backwards (reference and finite differences), large reductions, and misuse.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::reduce::{self, ReduceOp};
use rocm_backend::runtime::{DType, Tensor, reduce as rr};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("reduce_ops_dims_keepdim", reduce_ops_dims_keepdim),
        ("reduce_large_is_accurate", reduce_large_is_accurate),
        ("reduce_empty_and_nan", reduce_empty_and_nan),
        ("argmax_dims", argmax_dims),
        (
            "reduce_backward_and_finite_differences",
            reduce_backward_and_finite_differences,
        ),
        ("reduce_misuse", reduce_misuse),
    ]
}

const OPS: [ReduceOp; 5] = [
    ReduceOp::Sum,
    ReduceOp::Mean,
    ReduceOp::Max,
    ReduceOp::Min,
    ReduceOp::Prod,
];

const CASES: &[(&[usize], &[i64])] = &[
    (&[1], &[]),
    (&[4099], &[0]),
    (&[3, 5, 7], &[]),
    (&[3, 5, 7], &[1]),
    (&[3, 5, 7], &[-1]),
    (&[3, 5, 7], &[0]),
    (&[3, 5, 7], &[0, 2]),
    (&[3, 5, 7], &[2, 0]),
    (&[3, 5, 7], &[1, 2]),
    (&[2, 1, 3, 1], &[0, 2]),
    (&[600, 300], &[1]),
    (&[300, 600], &[0]),
    (&[], &[]),
    (&[], &[0]),
];

/// Inputs whose products stay finite: values near 1 for prod.
fn input(
    dev: &Dev,
    op: ReduceOp,
    shape: &[usize],
    dt: DType,
    seed: u64,
) -> Result<Tensor, libtest_mimic::Failed> {
    let t = randn(dev, shape, dt, seed)?;
    if op == ReduceOp::Prod {
        let v: Vec<f64> = values(&t)?.iter().map(|x| 1.0 + 0.01 * x).collect();
        return from_f64(dev, &v, shape, dt);
    }
    Ok(t)
}

fn reduce_ops_dims_keepdim(dev: &Dev) -> TestResult {
    for op in OPS {
        for dt in FLOATS {
            for (i, (shape, dims)) in CASES.iter().enumerate() {
                for keepdim in [false, true] {
                    let x = input(dev, op, shape, dt, i as u64)?;
                    let p = ok(reduce::plan(op.name(), shape, dims, keepdim))?;
                    let out = poisoned(dev, &p.out_shape, dt)?;
                    ok(rr::reduce(None, op, &x, dims, keepdim, Some(&out)))?;
                    let want: Vec<f64> = reduce::reference(op, &values(&x)?, shape, &p.dims)
                        .into_iter()
                        .map(|v| round_to(dt, v))
                        .collect();
                    assert_close_dtype(
                        &format!(
                            "{} {shape:?} dims {dims:?} keepdim {keepdim} {dt}",
                            op.name()
                        ),
                        &values(&out)?,
                        &want,
                        dt,
                    )?;
                    // A new output has the documented shape.
                    let o2 = ok(rr::reduce(None, op, &x, dims, keepdim, None))?;
                    ensure(o2.shape() == p.out_shape.as_slice(), "result shape")?;
                }
            }
        }
    }
    Ok(())
}

fn reduce_large_is_accurate(dev: &Dev) -> TestResult {
    // 1e5+ elements: f32 within 1e-4 of the float64 reference (mean far from zero so the
    // relative error is meaningful).
    let n = 1_000_003usize;
    let x = randn(dev, &[n], DType::F32, 5)?;
    let v: Vec<f64> = values(&x)?.iter().map(|a| a + 3.0).collect();
    let x = from_f64(dev, &v, &[n], DType::F32)?;
    let v = values(&x)?;
    for (op, dims) in [(ReduceOp::Sum, vec![]), (ReduceOp::Mean, vec![0i64])] {
        let got = values(&ok(rr::reduce(None, op, &x, &dims, false, None))?)?;
        let want = reduce::reference(op, &v, &[n], &[0]);
        assert_close(&format!("large {}", op.name()), &got, &want, 1e-4, 0.0)?;
    }
    let x2 = from_f64(dev, &v[..1000 * 1000], &[1000, 1000], DType::F32)?;
    for d in [0i64, 1] {
        let got = values(&ok(rr::reduce(
            None,
            ReduceOp::Sum,
            &x2,
            &[d],
            false,
            None,
        ))?)?;
        let want = reduce::reference(
            ReduceOp::Sum,
            &v[..1000 * 1000],
            &[1000, 1000],
            &[d as usize],
        );
        assert_close(&format!("large sum dim {d}"), &got, &want, 1e-5, 1e-4)?;
    }
    Ok(())
}

fn reduce_empty_and_nan(dev: &Dev) -> TestResult {
    let x = poisoned(dev, &[0, 3], DType::F32)?;
    let s = values(&ok(rr::reduce(None, ReduceOp::Sum, &x, &[0], false, None))?)?;
    assert_close("sum over empty", &s, &[0.0; 3], 0.0, 0.0)?;
    let p = values(&ok(rr::reduce(
        None,
        ReduceOp::Prod,
        &x,
        &[0],
        false,
        None,
    ))?)?;
    assert_close("prod over empty", &p, &[1.0; 3], 0.0, 0.0)?;
    let m = values(&ok(rr::reduce(
        None,
        ReduceOp::Mean,
        &x,
        &[0],
        false,
        None,
    ))?)?;
    ensure(m.iter().all(|v| v.is_nan()), "mean over empty is NaN")?;
    let e = ok(rr::reduce(None, ReduceOp::Sum, &x, &[1], true, None))?;
    ensure(e.shape() == [0, 1], "empty result shape")?;
    let y = from_f64(dev, &[1.0, f64::NAN, 3.0, 2.0], &[2, 2], DType::F32)?;
    let mx = values(&ok(rr::reduce(None, ReduceOp::Max, &y, &[1], false, None))?)?;
    ensure(mx[0].is_nan() && mx[1] == 3.0, format!("max NaN: {mx:?}"))?;
    let am = values(&ok(rr::argmax(None, &y, 1, false, None))?)?;
    assert_close("argmax NaN", &am, &[1.0, 0.0], 0.0, 0.0)?;
    Ok(())
}

fn argmax_dims(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (shape, dim) in [
            (&[1usize][..], 0i64),
            (&[4099], 0),
            (&[3, 5, 7], 1),
            (&[3, 5, 7], -1),
            (&[3, 5, 7], 0),
            (&[], 0),
        ] {
            for keepdim in [false, true] {
                let x = randn(dev, shape, dt, 3)?;
                let p = ok(reduce::plan("argmax", shape, &[dim], keepdim))?;
                let out = poisoned(dev, &p.out_shape, DType::I64)?;
                ok(rr::argmax(None, &x, dim, keepdim, Some(&out)))?;
                let d = p.dims.first().copied().unwrap_or(0);
                let want = if shape.is_empty() {
                    vec![0.0]
                } else {
                    reduce::argmax_reference(&values(&x)?, shape, d)
                };
                assert_close(
                    &format!("argmax {shape:?} {dim} {dt}"),
                    &values(&out)?,
                    &want,
                    0.0,
                    0.0,
                )?;
            }
        }
    }
    // Ties pick the first.
    let x = from_f64(dev, &[1.0, 3.0, 3.0, 0.0], &[4], DType::F32)?;
    assert_close(
        "argmax tie",
        &values(&ok(rr::argmax(None, &x, 0, false, None))?)?,
        &[1.0],
        0.0,
        0.0,
    )
}

fn reduce_backward_and_finite_differences(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[i64])] = &[
        (&[3, 4, 5], &[1]),
        (&[3, 4, 5], &[0, 2]),
        (&[3, 4, 5], &[]),
        (&[3, 4, 5], &[-1]),
        (&[7], &[0]),
        (&[200, 50], &[0]),
    ];
    for op in OPS {
        for dt in FLOATS {
            for (shape, dims) in cases {
                for keepdim in [false, true] {
                    let x = input(dev, op, shape, dt, 21)?;
                    let p = ok(reduce::plan(op.name(), shape, dims, keepdim))?;
                    let dy = randn(dev, &p.out_shape, dt, 22)?;
                    let dx = poisoned(dev, shape, dt)?;
                    ok(rr::reduce_backward(
                        None,
                        op,
                        &x,
                        dims,
                        keepdim,
                        &dy,
                        Some(&dx),
                    ))?;
                    let (vx, vd) = (values(&x)?, values(&dy)?);
                    let want = reduce::backward_reference(op, &vx, shape, &p.dims, &vd);
                    let want: Vec<f64> = want.iter().map(|&v| round_to(dt, v)).collect();
                    let what = format!("{}_backward {shape:?} {dims:?} {keepdim} {dt}", op.name());
                    assert_close_dtype(&what, &values(&dx)?, &want, dt)?;
                    if dt == DType::F32 && vx.len() <= 60 {
                        let loss = |v: &[f64]| -> f64 {
                            reduce::reference(op, v, shape, &p.dims)
                                .iter()
                                .zip(&vd)
                                .map(|(a, b)| a * b)
                                .sum()
                        };
                        let h = 1e-6;
                        let fd: Vec<f64> = (0..vx.len())
                            .map(|j| {
                                let (mut a, mut b) = (vx.clone(), vx.clone());
                                a[j] += h;
                                b[j] -= h;
                                (loss(&a) - loss(&b)) / (2.0 * h)
                            })
                            .collect();
                        let exact = reduce::backward_reference(op, &vx, shape, &p.dims, &vd);
                        assert_close(&format!("{what} vs fd"), &exact, &fd, 1e-4, 1e-5)?;
                    }
                }
            }
        }
    }
    // prod with zeros: one zero gets the product of the others, two zeros give 0.
    let x = from_f64(dev, &[2.0, 0.0, 3.0, 0.0, 0.0, 5.0], &[2, 3], DType::F32)?;
    let dy = from_f64(dev, &[1.0, 1.0], &[2], DType::F32)?;
    let dx = ok(rr::reduce_backward(
        None,
        ReduceOp::Prod,
        &x,
        &[1],
        false,
        &dy,
        None,
    ))?;
    assert_close(
        "prod zeros",
        &values(&dx)?,
        &[0.0, 6.0, 0.0, 0.0, 0.0, 0.0],
        0.0,
        0.0,
    )?;
    // max ties share the gradient.
    let x = from_f64(dev, &[1.0, 4.0, 4.0], &[3], DType::F32)?;
    let dy = from_f64(dev, &[1.0], &[], DType::F32)?;
    let dx = ok(rr::reduce_backward(
        None,
        ReduceOp::Max,
        &x,
        &[],
        false,
        &dy,
        None,
    ))?;
    assert_close("max ties", &values(&dx)?, &[0.0, 0.5, 0.5], 0.0, 0.0)
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

fn reduce_misuse(dev: &Dev) -> TestResult {
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    expect_err(
        rr::reduce(None, ReduceOp::Sum, &x, &[2], false, None),
        ErrorKind::InvalidArgument,
        "sum",
    )?;
    expect_err(
        rr::reduce(None, ReduceOp::Mean, &x, &[1, -1], false, None),
        ErrorKind::InvalidArgument,
        "mean",
    )?;
    let i = ok(Tensor::randint(dev.clone(), &[2, 3], DType::I32, 0, 3, 1))?;
    expect_err(
        rr::reduce(None, ReduceOp::Prod, &i, &[], false, None),
        ErrorKind::DtypeMismatch,
        "prod",
    )?;
    let e = poisoned(dev, &[0, 3], DType::F32)?;
    expect_err(
        rr::reduce(None, ReduceOp::Max, &e, &[0], false, None),
        ErrorKind::InvalidArgument,
        "max",
    )?;
    expect_err(
        rr::argmax(None, &e, 0, false, None),
        ErrorKind::InvalidArgument,
        "argmax",
    )?;
    expect_err(
        rr::argmax(None, &x, 5, false, None),
        ErrorKind::InvalidArgument,
        "argmax",
    )?;
    let dy = randn(dev, &[3], DType::F32, 1)?;
    expect_err(
        rr::reduce_backward(None, ReduceOp::Sum, &x, &[1], false, &dy, None),
        ErrorKind::ShapeMismatch,
        "sum_backward",
    )?;
    let wrong = poisoned(dev, &[2, 3], DType::F32)?;
    expect_err(
        rr::reduce(None, ReduceOp::Min, &x, &[1], false, Some(&wrong)),
        ErrorKind::ShapeMismatch,
        "min",
    )?;
    expect_err(
        rr::argmax(None, &x, 1, false, Some(&wrong)),
        ErrorKind::ShapeMismatch,
        "argmax",
    )?;
    Ok(())
}
