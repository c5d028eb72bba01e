//! Device-level elementwise kernels on every device: every unary and binary op, fill and
//! cast over all dtypes, against the float64 reference (and PyTorch's cast rules).

use crate::common::*;
use rocm_backend::ops::elementwise::BinaryOp;
use rocm_backend::runtime::{DType, Tensor, elementwise};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("every_unary_op", every_unary_op),
        ("every_binary_op", every_binary_op),
        ("fill_every_dtype", fill_every_dtype),
        ("cast_every_pair", cast_every_pair),
    ]
}

fn every_unary_op(dev: &Dev) -> TestResult {
    let ops = crate::pointwise::UNARY;
    for dt in FLOATS {
        for n in [1usize, 257, 5000] {
            let x = randn(dev, &[n], dt, 7 + n as u64)?;
            let xv = values(&x)?;
            for op in ops {
                let out = poisoned(dev, &[n], dt)?;
                ok(elementwise::unary(None, op, &x, Some(&out)))?;
                let want: Vec<f64> = xv.iter().map(|&v| round_to(dt, op.reference(v))).collect();
                let got = values(&out)?;
                // f32 transcendental functions differ by a few ulps between libms.
                let (rt, at) = if dt == DType::F32 {
                    (1e-5, 1e-6)
                } else {
                    (1e-2, 1e-2)
                };
                assert_close(&format!("{} n={n} {dt}", op.name()), &got, &want, rt, at)?;
            }
        }
    }
    Ok(())
}

fn every_binary_op(dev: &Dev) -> TestResult {
    let ops = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
    ];
    let shapes: &[(&[usize], &[usize])] =
        &[(&[33, 5], &[5]), (&[4, 1, 3], &[2, 1]), (&[1000], &[1000])];
    for dt in FLOATS {
        for (sa, sb) in shapes {
            let a = randn(dev, sa, dt, 3)?;
            // Positive b so pow stays real.
            let braw = randn(dev, sb, dt, 4)?;
            let bv: Vec<f64> = values(&braw)?.iter().map(|v| v.abs() + 0.25).collect();
            let b = from_f64(dev, &bv, sb, dt)?;
            let av = values(&a)?;
            let bv = values(&b)?;
            let (shape, _) = ok(rocm_backend::base::shape::BroadcastLayout::new(&[sa, sb]))?;
            let sa_s = rocm_backend::base::shape::broadcast_strides(sa, &shape);
            let sb_s = rocm_backend::base::shape::broadcast_strides(sb, &shape);
            let n: usize = shape.iter().product();
            for op in ops {
                let out = poisoned(dev, &shape, dt)?;
                ok(elementwise::binary(None, op, &a, &b, Some(&out)))?;
                let want: Vec<f64> = (0..n)
                    .map(|lin| {
                        let (mut oa, mut ob, mut rem) = (0, 0, lin);
                        for d in (0..shape.len()).rev() {
                            let k = rem % shape[d];
                            rem /= shape[d];
                            oa += k * sa_s[d];
                            ob += k * sb_s[d];
                        }
                        round_to(dt, op.reference(av[oa], bv[ob]))
                    })
                    .collect();
                assert_close_dtype(
                    &format!("{} {sa:?},{sb:?} {dt}", op.name()),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    // Integer semantics.
    for dt in [DType::I32, DType::I64] {
        let a = ok(Tensor::randint(dev.clone(), &[6, 9], dt, -50, 50, 11))?;
        let b = ok(Tensor::randint(dev.clone(), &[9], dt, 0, 4, 12))?;
        let (av, bv) = (values(&a)?, values(&b)?);
        for op in [
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Pow,
            BinaryOp::Maximum,
            BinaryOp::Minimum,
        ] {
            let o = ok(elementwise::binary(None, op, &a, &b, None))?;
            let want: Vec<f64> = (0..54)
                .map(|i| {
                    let r = op.apply_i64(av[i] as i64, bv[i % 9] as i64);
                    if dt == DType::I32 {
                        r as i32 as f64
                    } else {
                        r as f64
                    }
                })
                .collect();
            assert_close(
                &format!("int {} {dt}", op.name()),
                &values(&o)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

fn fill_every_dtype(dev: &Dev) -> TestResult {
    for dt in DType::ALL {
        for n in [1usize, 1023, 70_001] {
            let t = ok(Tensor::empty(dev.clone(), &[n], dt))?;
            let v = match dt {
                DType::Bool => 1.0,
                DType::U8 => 3.0,
                _ => -3.0,
            };
            ok(dev.fill(Default::default(), dt, t.ptr(), n, v))?;
            let got = values(&t)?;
            ensure(
                got.iter().all(|&g| g == v),
                format!("fill {dt} n={n}: {:?}", &got[..got.len().min(4)]),
            )?;
        }
    }
    Ok(())
}

fn cast_every_pair(dev: &Dev) -> TestResult {
    let vals = [
        0.0, -0.0, 1.5, -2.75, 3.999, -7.5, 100.25, 65504.0, 1e-3, -1.0, 2.5, 0.5,
    ];
    // The six original dtypes; dtypes_ext.rs casts the added ones (f64, i8, u8, i16) to and
    // from every dtype on values both hold (these values overflow the small integers).
    let legacy = || DType::ALL.into_iter().filter(|d| !d.is_extended());
    for src in legacy() {
        let n = vals.len();
        let x = from_f64(dev, &vals, &[n], src)?;
        let xv = values(&x)?;
        for dst in legacy() {
            let y = poisoned(dev, &[n], dst)?;
            ok(dev.cast(Default::default(), src, x.ptr(), dst, y.ptr(), n))?;
            let want: Vec<f64> = xv
                .iter()
                .map(|&v| match dst {
                    DType::Bool => (v != 0.0) as u8 as f64,
                    DType::I32 => v as i64 as i32 as f64,
                    DType::I64 => v as i64 as f64,
                    d => round_to(d, v),
                })
                .collect();
            assert_close(
                &format!("cast {src} -> {dst}"),
                &values(&y)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}
