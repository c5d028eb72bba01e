//! Reductions (sum, mean, max, min, prod, argmax) over dim lists with keepdim, their
//! backwards (reference and finite differences), large reductions, and misuse.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::elementwise::BinaryOp;
use rocm_backend::ops::reduce::{self, ReduceOp};
use rocm_backend::runtime::{DType, Tensor, data, elementwise, reduce as rr};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("max_min_dim_indices", max_min_dim_indices),
        ("sum_prod_dtype", sum_prod_dtype),
        ("reduce_ops_dims_keepdim", reduce_ops_dims_keepdim),
        ("reduce_large_is_accurate", reduce_large_is_accurate),
        ("reduce_empty_and_nan", reduce_empty_and_nan),
        ("argmax_dims", argmax_dims),
        (
            "reduce_backward_and_finite_differences",
            reduce_backward_and_finite_differences,
        ),
        ("reduce_misuse", reduce_misuse),
        ("reduce_kernel_shapes", reduce_kernel_shapes),
        ("argmax_kernel_shapes", argmax_kernel_shapes),
        (
            "reduce_backward_kernel_shapes",
            reduce_backward_kernel_shapes,
        ),
        ("large_add_and_reductions", large_add_and_reductions),
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
    )?;
    // torch.argmax(x) without dim: the flattened index, shape [] (or all ones with keepdim).
    for dt in FLOATS {
        for shape in [&[1usize][..], &[4099], &[3, 5, 7], &[2, 1, 300], &[]] {
            let n: usize = shape.iter().product();
            for keepdim in [false, true] {
                let x = randn(dev, shape, dt, 5)?;
                let want_shape = if keepdim {
                    vec![1; shape.len()]
                } else {
                    vec![]
                };
                let out = poisoned(dev, &want_shape, DType::I64)?;
                ok(rr::argmax_all(None, &x, keepdim, Some(&out)))?;
                let want = reduce::argmax_reference(&values(&x)?, &[n], 0);
                assert_close(
                    &format!("argmax_all {shape:?} keepdim={keepdim} {dt}"),
                    &values(&out)?,
                    &want,
                    0.0,
                    0.0,
                )?;
                let fresh = ok(rr::argmax_all(None, &x, keepdim, None))?;
                ensure(
                    fresh.shape() == want_shape.as_slice() && fresh.dtype() == DType::I64,
                    format!("argmax_all {shape:?}: shape {:?}", fresh.shape()),
                )?;
            }
        }
    }
    let x = from_f64(dev, &[1.0, f64::NAN, 3.0, f64::NAN], &[2, 2], DType::F32)?;
    assert_close(
        "argmax_all NaN",
        &values(&ok(rr::argmax_all(None, &x, false, None))?)?,
        &[1.0],
        0.0,
        0.0,
    )?;
    expect_err(
        rr::argmax_all(
            None,
            &ok(Tensor::zeros(dev.clone(), &[0, 3], DType::F32))?,
            false,
            None,
        ),
        ErrorKind::InvalidArgument,
        "argmax",
    )?;
    expect_err(
        rr::argmax_all(
            None,
            &ok(Tensor::zeros(dev.clone(), &[3], DType::Bool))?,
            false,
            None,
        ),
        ErrorKind::DtypeMismatch,
        "argmax",
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

/// Shapes that reach every GPU kernel path: rows shorter and longer than a block and not
/// multiples of it, few long rows (split over blocks), a full reduction of a large tensor
/// (two passes), inner > 1 with short and long reduced axes (split), r == 1, r == 0.
fn reduce_kernel_shapes(dev: &Dev) -> TestResult {
    let small: &[(&[usize], &[i64])] = &[
        (&[1000, 40], &[1]),
        (&[5, 513], &[1]),
        (&[7, 33, 5], &[1]),
        (&[4097, 7], &[0]),
        (&[64, 1, 3], &[1]),
        (&[2, 0, 3], &[1]),
        (&[3, 2000], &[0]),
    ];
    let big: &[(&[usize], &[i64])] = &[
        (&[3, 100_003], &[1]),
        (&[1_000_001], &[]),
        (&[2, 20_001, 3], &[1]),
        (&[20_001, 33], &[0]),
    ];
    for (cases, ops, dts) in [
        (small, &OPS[..], &FLOATS[..]),
        (
            big,
            &[ReduceOp::Sum, ReduceOp::Mean, ReduceOp::Max][..],
            &[DType::F32, DType::BF16][..],
        ),
    ] {
        for &op in ops {
            for &dt in dts {
                for (i, (shape, dims)) in cases.iter().enumerate() {
                    let p = ok(reduce::plan(op.name(), shape, dims, false))?;
                    if p.desc.r == 0 && matches!(op, ReduceOp::Max | ReduceOp::Min) {
                        continue;
                    }
                    let x = input(dev, op, shape, dt, 40 + i as u64)?;
                    let out = poisoned(dev, &p.out_shape, dt)?;
                    ok(rr::reduce(None, op, &x, dims, false, Some(&out)))?;
                    let want: Vec<f64> = reduce::reference(op, &values(&x)?, shape, &p.dims)
                        .into_iter()
                        .map(|v| round_to(dt, v))
                        .collect();
                    let what = format!("{} {shape:?} dims {dims:?} {dt}", op.name());
                    if dt == DType::F32 && p.desc.r >= 100_000 {
                        assert_close(&what, &values(&out)?, &want, 1e-4, 1e-4)?;
                    } else {
                        assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// argmax over long rows, columns and middle axes; bf16 inputs tie often (the first of
/// equal maxima wins, across warp lanes too); a NaN far into a row wins.
fn argmax_kernel_shapes(dev: &Dev) -> TestResult {
    for dt in [DType::F32, DType::BF16] {
        for (shape, dim) in [
            (&[3usize, 5000][..], 1i64),
            (&[5000, 3][..], 0),
            (&[2, 3, 70][..], 1),
            (&[2, 70, 3][..], 1),
        ] {
            let x = randn(dev, shape, dt, 8)?;
            let p = ok(reduce::plan("argmax", shape, &[dim], false))?;
            let out = poisoned(dev, &p.out_shape, DType::I64)?;
            ok(rr::argmax(None, &x, dim, false, Some(&out)))?;
            let want = reduce::argmax_reference(&values(&x)?, shape, p.dims[0]);
            assert_close(
                &format!("argmax {shape:?} {dim} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    let mut v = vec![1.0; 3000];
    v[2500] = f64::NAN;
    v[2700] = f64::NAN;
    v[10] = 2.0;
    let x = from_f64(dev, &v, &[3000], DType::F32)?;
    let got = values(&ok(rr::argmax(None, &x, 0, false, None))?)?;
    assert_close("argmax first NaN", &got, &[2500.0], 0.0, 0.0)?;
    let ties = from_f64(dev, &[4.0; 1000], &[1000], DType::F16)?;
    let got = values(&ok(rr::argmax(None, &ties, 0, false, None))?)?;
    assert_close("argmax all equal", &got, &[0.0], 0.0, 0.0)
}

/// Backwards over long rows and columns (the GPU's per-group statistics pass).
fn reduce_backward_kernel_shapes(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[i64])] = &[
        (&[3, 700], &[1]),
        (&[700, 3], &[0]),
        (&[2, 40, 3], &[1]),
        (&[1000], &[]),
    ];
    for op in OPS {
        for dt in [DType::F32, DType::BF16] {
            for (shape, dims) in cases {
                let x = input(dev, op, shape, dt, 31)?;
                let p = ok(reduce::plan(op.name(), shape, dims, false))?;
                let dy = randn(dev, &p.out_shape, dt, 32)?;
                let dx = poisoned(dev, shape, dt)?;
                ok(rr::reduce_backward(
                    None,
                    op,
                    &x,
                    dims,
                    false,
                    &dy,
                    Some(&dx),
                ))?;
                let want =
                    reduce::backward_reference(op, &values(&x)?, shape, &p.dims, &values(&dy)?);
                let want: Vec<f64> = want.iter().map(|&v| round_to(dt, v)).collect();
                assert_close_dtype(
                    &format!("{}_backward {shape:?} {dims:?} {dt}", op.name()),
                    &values(&dx)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    Ok(())
}

/// Reads element `pos` of an f32 tensor without copying the rest.
fn read_f32(dev: &Dev, t: &Tensor, pos: usize) -> Result<f32, libtest_mimic::Failed> {
    let mut b = [0u8; 4];
    ok(dev.copy_d2h(t.ptr().offset(pos * 4), &mut b, Default::default()))?;
    Ok(f32::from_le_bytes(b))
}

/// Issue 5's large sizes: an elementwise op (add) and reductions (full sum, row sums,
/// column sums, max, argmax) over f32 tensors of 2^31 + 2^12 elements (8 GiB each), so
/// element indices pass i32 and byte offsets pass 2^33. Inputs are ones with a few marked
/// elements (one past element 2^31), so every result is known exactly. Runs only on GPUs
/// with the memory (the harness ignores `large_` bodies elsewhere, saying why).
fn large_add_and_reductions(dev: &Dev) -> TestResult {
    let (rows, cols) = ((1usize << 19) + 1, 4096usize);
    let n = rows * cols;
    let x = ok(Tensor::empty(dev.clone(), &[rows, cols], DType::F32))?;
    ok(data::fill(None, &x, 1.0))?;
    let marks: [(usize, f32); 5] = [
        (0, 5.0),
        ((1 << 31) - 1, -2.0),
        ((1 << 31) + 5, 3.0),
        (n - cols + 17, -3.0),
        (n - 1, 7.0),
    ];
    for &(pos, v) in &marks {
        ok(dev.copy_h2d(
            &v.to_le_bytes(),
            x.ptr().offset(pos * 4),
            Default::default(),
        ))?;
    }
    let y = ok(elementwise::binary(None, BinaryOp::Add, &x, &x, None))?;
    drop(x);
    let val = |pos: usize| {
        marks
            .iter()
            .find(|m| m.0 == pos)
            .map_or(2.0, |m| 2.0 * m.1 as f64)
    };
    for pos in marks.iter().map(|m| m.0).chain([
        1,
        (1 << 31) - 2,
        1 << 31,
        (1 << 31) + 4,
        n - 2,
        n / 2 + 3,
    ]) {
        let got = read_f32(dev, &y, pos)? as f64;
        ensure(
            got == val(pos),
            format!("add: element {pos} is {got}, expected {}", val(pos)),
        )?;
    }
    // Full sum (exact in the f64 accumulator).
    let extra: f64 = marks.iter().map(|m| 2.0 * (m.1 as f64 - 1.0)).sum();
    let total = 2.0 * n as f64 + extra;
    let s = values(&ok(rr::reduce(None, ReduceOp::Sum, &y, &[], false, None))?)?;
    assert_close("large sum", &s, &[total as f32 as f64], 0.0, 0.0)?;
    // Row sums (inner == 1) and column sums (inner > 1).
    let mut rs = vec![2.0 * cols as f64; rows];
    let mut cs = vec![2.0 * rows as f64; cols];
    for m in &marks {
        rs[m.0 / cols] += 2.0 * (m.1 as f64 - 1.0);
        cs[m.0 % cols] += 2.0 * (m.1 as f64 - 1.0);
    }
    let got = values(&ok(rr::reduce(None, ReduceOp::Sum, &y, &[1], false, None))?)?;
    assert_close("large row sums", &got, &rs, 0.0, 0.0)?;
    let got = values(&ok(rr::reduce(None, ReduceOp::Sum, &y, &[0], false, None))?)?;
    assert_close("large column sums", &got, &cs, 0.0, 0.0)?;
    let mx = values(&ok(rr::reduce(None, ReduceOp::Max, &y, &[], false, None))?)?;
    assert_close("large max", &mx, &[14.0], 0.0, 0.0)?;
    let flat = ok(y.reshape(&[n]))?;
    let am = values(&ok(rr::argmax(None, &flat, 0, false, None))?)?;
    assert_close("large argmax", &am, &[(n - 1) as f64], 0.0, 0.0)?;
    let col_min = values(&ok(rr::reduce(None, ReduceOp::Min, &y, &[0], false, None))?)?;
    ensure(
        col_min[17] == -6.0 && col_min[4095] == -4.0 && col_min[5] == 2.0 && col_min[1] == 2.0,
        format!(
            "large column min: {:?}",
            (col_min[17], col_min[4095], col_min[5], col_min[1])
        ),
    )
}

/// `rb_max_dim` / `rb_min_dim` (torch.max(x, dim) / torch.min(x, dim)): values and the first
/// index among ties, NaN winning with its index, keepdim, negative dims, 0-d and empty
/// outer dims; `rb_max_dim_backward` routes the gradient to the returned index only.
fn max_min_dim_indices(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], i64)] = &[
        (&[3, 4], 0),
        (&[3, 4], 1),
        (&[3, 4], -1),
        (&[2, 3, 5], 1),
        (&[2, 3, 5], -3),
        (&[], 0),
        (&[1], 0),
        (&[4, 0], 0),
        (&[7, 300], 1),
        (&[300, 7], 0),
    ];
    for dt in FLOATS {
        for (i, (shape, dim)) in cases.iter().enumerate() {
            // Coarse values (many ties) and a few NaNs.
            let mut v: Vec<f64> = values(&randn(dev, shape, DType::F32, 70 + i as u64)?)?
                .iter()
                .map(|x| (x * 2.0).round() / 2.0)
                .collect();
            for k in (5..v.len()).step_by(13) {
                v[k] = f64::NAN;
            }
            let x = from_f64(dev, &v, shape, dt)?;
            let nd = shape.len();
            let d = reduce::norm_dim("t", *dim, nd).map_err(|e| e.message)?;
            for keepdim in [false, true] {
                let p = reduce::plan("t", shape, &[*dim], keepdim).map_err(|e| e.message)?;
                for (op, largest) in [(ReduceOp::Max, true), (ReduceOp::Min, false)] {
                    let vo = poisoned(dev, &p.out_shape, dt)?;
                    let io = poisoned(dev, &p.out_shape, DType::I64)?;
                    ok(rr::max_dim(
                        None,
                        op,
                        &x,
                        *dim,
                        keepdim,
                        Some(&vo),
                        Some(&io),
                    ))?;
                    let (wv, wi) = if nd == 0 {
                        (v.clone(), vec![0])
                    } else {
                        reduce::max_dim_reference(&v, shape, d, largest)
                    };
                    let wi: Vec<f64> = wi.iter().map(|&k| k as f64).collect();
                    let what = format!("{op:?}_dim {shape:?} dim {dim} keepdim {keepdim} {dt}");
                    assert_close(&format!("{what} values"), &values(&vo)?, &wv, 0.0, 0.0)?;
                    assert_close(&format!("{what} indices"), &values(&io)?, &wi, 0.0, 0.0)?;
                    // Backward: dy at the index only.
                    let dy = randn(dev, &p.out_shape, dt, 80 + i as u64)?;
                    let dx = poisoned(dev, shape, dt)?;
                    ok(rr::max_dim_backward(
                        None,
                        &dy,
                        &io,
                        shape,
                        *dim,
                        keepdim,
                        Some(&dx),
                    ))?;
                    let idx: Vec<i64> = wi.iter().map(|&k| k as i64).collect();
                    let want = if nd == 0 {
                        values(&dy)?
                    } else {
                        reduce::max_dim_backward_reference(shape, d, &idx, &values(&dy)?)
                    };
                    assert_close(&format!("{what} backward"), &values(&dx)?, &want, 0.0, 0.0)?;
                }
            }
        }
    }
    // Misuse: an empty reduced dim, int x, out-of-range indices, dy of another shape.
    let e = ok(Tensor::zeros(dev.clone(), &[0, 3], DType::F32))?;
    expect_err(
        rr::max_dim(None, ReduceOp::Max, &e, 0, false, None, None),
        ErrorKind::InvalidArgument,
        "max_dim",
    )?;
    let xi = ok(Tensor::zeros(dev.clone(), &[2, 3], DType::Bool))?;
    expect_err(
        rr::max_dim(None, ReduceOp::Min, &xi, 0, false, None, None),
        ErrorKind::DtypeMismatch,
        "min_dim",
    )?;
    let dy = randn(dev, &[2], DType::F32, 1)?;
    let bad = from_f64(dev, &[0.0, 3.0], &[2], DType::I64)?;
    expect_err(
        rr::max_dim_backward(None, &dy, &bad, &[2, 3], 1, false, None),
        ErrorKind::InvalidArgument,
        "max_dim_backward",
    )?;
    let good = from_f64(dev, &[0.0, 2.0], &[2], DType::I64)?;
    expect_err(
        rr::max_dim_backward(None, &dy, &good, &[2, 3], 1, true, None),
        ErrorKind::ShapeMismatch,
        "max_dim_backward",
    )?;
    Ok(())
}

/// `rb_sum_dtype` / `rb_prod_dtype`: the input cast to the dtype first (PyTorch's rules:
/// truncation toward zero, bool as 0/1), reduced in it; integer results wrap on overflow.
fn sum_prod_dtype(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[i64])] = &[
        (&[3, 4], &[1]),
        (&[2, 3, 4], &[0, 2]),
        (&[5], &[]),
        (&[0, 3], &[0]),
        (&[4, 70], &[-1]),
    ];
    let cast = |v: f64, to: DType| -> f64 {
        if to.is_int() {
            let t = v.trunc();
            if to == DType::I32 { t as i32 as f64 } else { t }
        } else {
            round_to(to, v)
        }
    };
    for op in [ReduceOp::Sum, ReduceOp::Prod] {
        for xdt in [DType::F32, DType::F16, DType::I32, DType::I64, DType::Bool] {
            for to in [DType::F32, DType::BF16, DType::I32, DType::I64] {
                for (i, (shape, dims)) in cases.iter().enumerate() {
                    // Values whose products stay small: 1 + x/8 for floats, small ints.
                    let r = values(&randn(dev, shape, DType::F32, 90 + i as u64)?)?;
                    let v: Vec<f64> = r
                        .iter()
                        .map(|x| match xdt {
                            DType::Bool => (*x > 0.0) as u8 as f64,
                            d if d.is_int() && op == ReduceOp::Sum => {
                                (x * 1.5).round().clamp(-2.0, 2.0)
                            }
                            d if d.is_int() => x.round().clamp(-1.0, 1.0),
                            _ => 1.0 + x / 8.0,
                        })
                        .collect();
                    let x = from_f64(dev, &v, shape, xdt)?;
                    let xv = values(&x)?;
                    for keepdim in [false, true] {
                        let p = reduce::plan("t", shape, dims, keepdim).map_err(|e| e.message)?;
                        let out = poisoned(dev, &p.out_shape, to)?;
                        ok(rr::reduce_dtype(
                            None,
                            op,
                            &x,
                            dims,
                            keepdim,
                            to,
                            Some(&out),
                        ))?;
                        let c: Vec<f64> = xv.iter().map(|&a| cast(a, to)).collect();
                        let want: Vec<f64> = reduce::reference(op, &c, shape, &p.dims)
                            .iter()
                            .map(|&w| if to.is_float() { w } else { cast(w, to) })
                            .collect();
                        let tol = if to.is_int() { 0.0 } else { rtol(to) * 4.0 };
                        assert_close(
                            &format!(
                                "{op:?} {xdt}->{to} {shape:?} dims {dims:?} keepdim {keepdim}"
                            ),
                            &values(&out)?,
                            &want,
                            tol,
                            tol,
                        )?;
                    }
                }
            }
        }
    }
    // Integer overflow wraps (two's complement), as in PyTorch.
    let big = from_f64(dev, &[2147483647.0; 4], &[4], DType::I32)?;
    let s = ok(rr::reduce_dtype(
        None,
        ReduceOp::Sum,
        &big,
        &[],
        false,
        DType::I32,
        None,
    ))?;
    assert_close("i32 sum wraps", &values(&s)?, &[-4.0], 0.0, 0.0)?;
    let s = ok(rr::reduce_dtype(
        None,
        ReduceOp::Sum,
        &big,
        &[],
        false,
        DType::I64,
        None,
    ))?;
    assert_close(
        "i32 -> i64 sum",
        &values(&s)?,
        &[4.0 * 2147483647.0],
        0.0,
        0.0,
    )?;
    let p40 = from_f64(
        dev,
        &[(1u64 << 40) as f64, (1u64 << 40) as f64, 3.0],
        &[3],
        DType::I64,
    )?;
    let s = ok(rr::reduce_dtype(
        None,
        ReduceOp::Prod,
        &p40,
        &[],
        false,
        DType::I64,
        None,
    ))?;
    assert_close("i64 prod wraps", &values(&s)?, &[0.0], 0.0, 0.0)?;
    // A long row (the GPU's block tree) and many groups.
    let n = 100_003usize;
    let ones = from_f64(dev, &vec![3.0; n], &[n], DType::I64)?;
    let s = ok(rr::reduce_dtype(
        None,
        ReduceOp::Sum,
        &ones,
        &[0],
        false,
        DType::I64,
        None,
    ))?;
    assert_close("i64 long sum", &values(&s)?, &[3.0 * n as f64], 0.0, 0.0)?;
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    expect_err(
        rr::reduce_dtype(None, ReduceOp::Sum, &x, &[], false, DType::Bool, None),
        ErrorKind::DtypeMismatch,
        "sum",
    )?;
    Ok(())
}
