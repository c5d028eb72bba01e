//! Pointwise coverage for the GPU fast paths: flat f32 kernels at sizes that are not a
//! multiple of the vector width or the block tile, NaN and ties on the vector path, the
//! binary backward's broadcast walk with either gradient skipped, the fused DNN pointwise
//! ops at the device level (GEMM epilogue, column sums), against the float64 reference.

use crate::common::*;
use crate::pointwise::{BINARY, UNARY, bcast_index};
use rocm_backend::base::shape::BroadcastLayout;
use rocm_backend::device::DevPtr;
use rocm_backend::ops::conv::Activation;
use rocm_backend::ops::elementwise::{BinaryOp, CompareOp};
use rocm_backend::runtime::{DType, elementwise};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("compare_where_flat_sizes", compare_where_flat_sizes),
        ("unary_f32_vector_path_sizes", unary_f32_vector_path_sizes),
        (
            "binary_backward_broadcast_walk_each_gradient",
            binary_backward_broadcast_walk_each_gradient,
        ),
        ("sum_rows_shapes", sum_rows_shapes),
        (
            "gemm_bias_act_every_activation",
            gemm_bias_act_every_activation,
        ),
    ]
}

/// Sizes around the vector width (4), the block tile (256 x 4 groups of 4) and several tiles.
const FLAT_SIZES: [usize; 9] = [1, 3, 4, 5, 1023, 4096, 4099, 70001, (1 << 18) + 3];

fn compare_where_flat_sizes(dev: &Dev) -> TestResult {
    let ops = [
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
    ];
    for n in FLAT_SIZES {
        // Ties and NaNs on the vector path: every 7th b equals a, every 11th a is NaN.
        let va = values(&randn(dev, &[n], DType::F32, 40 + n as u64)?)?;
        let mut vb = values(&randn(dev, &[n], DType::F32, 41 + n as u64)?)?;
        let mut va = va;
        for i in 0..n {
            if i % 7 == 3 {
                vb[i] = va[i];
            }
            if i % 11 == 5 {
                va[i] = f64::NAN;
            }
        }
        let a = from_f64(dev, &va, &[n], DType::F32)?;
        let b = from_f64(dev, &vb, &[n], DType::F32)?;
        for op in ops {
            let c = poisoned(dev, &[n], DType::Bool)?;
            ok(elementwise::compare(None, op, &a, &b, Some(&c)))?;
            let want: Vec<f64> = (0..n)
                .map(|i| op.apply(va[i], vb[i]) as u8 as f64)
                .collect();
            assert_close(
                &format!("{} n={n}", op.name()),
                &values(&c)?,
                &want,
                0.0,
                0.0,
            )?;
        }
        // where(a > b, a, b) as the benchmark runs it, for f32 and for i32 (both 4 bytes).
        let c = ok(elementwise::compare(None, CompareOp::Gt, &a, &b, None))?;
        let vc = values(&c)?;
        for dt in [DType::F32, DType::I32] {
            let (x, y) = if dt == DType::F32 {
                (a.clone(), b.clone())
            } else {
                let xi: Vec<f64> = (0..n).map(|i| i as f64 - 17.0).collect();
                let yi: Vec<f64> = (0..n).map(|i| -(i as f64) * 3.0).collect();
                (from_f64(dev, &xi, &[n], dt)?, from_f64(dev, &yi, &[n], dt)?)
            };
            let (vx, vy) = (values(&x)?, values(&y)?);
            let out = poisoned(dev, &[n], dt)?;
            ok(elementwise::where_(None, &c, &x, &y, Some(&out)))?;
            let want: Vec<f64> = (0..n)
                .map(|i| if vc[i] != 0.0 { vx[i] } else { vy[i] })
                .collect();
            assert_close(
                &format!("where n={n} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

fn unary_f32_vector_path_sizes(dev: &Dev) -> TestResult {
    for n in FLAT_SIZES {
        let x = randn(dev, &[n], DType::F32, 60 + n as u64)?;
        let xv = values(&x)?;
        for op in UNARY {
            // Sqrt and log of negative inputs are NaN in both; the comparison accepts that.
            let out = poisoned(dev, &[n], DType::F32)?;
            ok(elementwise::unary(None, op, &x, Some(&out)))?;
            let want: Vec<f64> = xv
                .iter()
                .map(|&v| round_to(DType::F32, op.reference(v)))
                .collect();
            assert_close(&format!("{op:?} n={n}"), &values(&out)?, &want, 1e-5, 1e-6)?;
        }
    }
    Ok(())
}

fn binary_backward_broadcast_walk_each_gradient(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 1, 5], &[4, 1]),
        (&[257, 33], &[257, 1]),
        (&[1], &[1029]),
        (&[1030], &[1030]),
    ];
    for op in BINARY {
        for dt in FLOATS {
            for (sa, sb) in cases {
                let (shape, _) = ok(BroadcastLayout::new(&[sa, sb]))?;
                let (_, layout) = ok(BroadcastLayout::new(&[sa, sb, &shape]))?;
                let mut va = values(&randn(dev, sa, dt, 70)?)?;
                let mut vb = values(&randn(dev, sb, dt, 71)?)?;
                if op == BinaryOp::Pow {
                    va.iter_mut().for_each(|v| *v = v.abs() + 0.5);
                }
                if op == BinaryOp::Div {
                    vb.iter_mut()
                        .for_each(|v| *v = if v.abs() < 0.25 { 1.0 + *v } else { *v });
                }
                let a = from_f64(dev, &va, sa, dt)?;
                let b = from_f64(dev, &vb, sb, dt)?;
                let (va, vb) = (values(&a)?, values(&b)?);
                let dy = randn(dev, &shape, dt, 72)?;
                let vd = values(&dy)?;
                let (ia, ib) = (bcast_index(sa, &shape), bcast_index(sb, &shape));
                let want: Vec<(f64, f64)> = (0..vd.len())
                    .map(|k| {
                        let (x, y) = op.grad_reference(va[ia[k]], vb[ib[k]], vd[k]);
                        (round_to(dt, x), round_to(dt, y))
                    })
                    .collect();
                // Both gradients, then each alone (the other NULL).
                for (wa, wb) in [(true, true), (true, false), (false, true)] {
                    let ga = poisoned(dev, &shape, dt)?;
                    let gb = poisoned(dev, &shape, dt)?;
                    let pa = if wa { ga.ptr() } else { DevPtr::NULL };
                    let pb = if wb { gb.ptr() } else { DevPtr::NULL };
                    ok(dev.binary_backward(
                        Default::default(),
                        op,
                        dt,
                        a.ptr(),
                        b.ptr(),
                        dy.ptr(),
                        pa,
                        pb,
                        &layout,
                    ))?;
                    let what = format!("{}_backward {sa:?},{sb:?} {dt} ({wa},{wb})", op.name());
                    for (on, g, sel) in [(wa, &ga, 0), (wb, &gb, 1)] {
                        let got = values(g)?;
                        if on {
                            let w: Vec<f64> = want
                                .iter()
                                .map(|p| if sel == 0 { p.0 } else { p.1 })
                                .collect();
                            assert_close_dtype(&what, &got, &w, dt)?;
                        } else {
                            ensure(
                                got.iter().all(|v| v.is_nan()),
                                format!("{what}: a skipped gradient was written"),
                            )?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

fn sum_rows_shapes(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (rows, cols) in [(1usize, 1usize), (5000, 37), (3, 1000), (0, 7), (129, 33)] {
            let x = randn(dev, &[rows, cols], dt, 80 + rows as u64)?;
            let xv = values(&x)?;
            let out = poisoned(dev, &[cols], dt)?;
            ok(dev.sum_rows(Default::default(), dt, x.ptr(), out.ptr(), rows, cols))?;
            let want: Vec<f64> = (0..cols)
                .map(|c| round_to(dt, (0..rows).map(|r| xv[r * cols + c]).sum()))
                .collect();
            // A sum of `rows` terms: the tolerance grows with its magnitude bound.
            let scale: Vec<f64> = (0..cols)
                .map(|c| (0..rows).map(|r| xv[r * cols + c].abs()).sum::<f64>())
                .collect();
            let got = values(&out)?;
            for c in 0..cols {
                let tol = rtol(dt) * (scale[c] + 1.0);
                ensure(
                    (got[c] - want[c]).abs() <= tol,
                    format!(
                        "sum_rows {rows}x{cols} {dt} column {c}: got {}, expected {}",
                        got[c], want[c]
                    ),
                )?;
            }
        }
    }
    Ok(())
}

fn gemm_bias_act_every_activation(dev: &Dev) -> TestResult {
    let acts = [
        Activation::None,
        Activation::Relu,
        Activation::Gelu { tanh: false },
        Activation::Gelu { tanh: true },
    ];
    let (m, k, n) = (37usize, 19usize, 45usize);
    for dt in FLOATS {
        let x = randn(dev, &[m, k], dt, 90)?;
        let bias = randn(dev, &[n], dt, 92)?;
        let (xv, bv) = (values(&x)?, values(&bias)?);
        for w_is_nk in [true, false] {
            let wshape = if w_is_nk { [n, k] } else { [k, n] };
            let w = randn(dev, &wshape, dt, 91)?;
            let wv = values(&w)?;
            let wat = |kk: usize, j: usize| {
                if w_is_nk {
                    wv[j * k + kk]
                } else {
                    wv[kk * n + j]
                }
            };
            for act in acts {
                for with_bias in [true, false] {
                    let y = poisoned(dev, &[m, n], dt)?;
                    ok(dev.gemm_bias_act(
                        Default::default(),
                        dt,
                        x.ptr(),
                        w.ptr(),
                        w_is_nk,
                        with_bias.then_some(bias.ptr()),
                        act,
                        y.ptr(),
                        m,
                        k,
                        n,
                    ))?;
                    let want: Vec<f64> = (0..m * n)
                        .map(|i| {
                            let (r, j) = (i / n, i % n);
                            let dot: f64 = (0..k).map(|kk| xv[r * k + kk] * wat(kk, j)).sum();
                            let b = if with_bias { bv[j] } else { 0.0 };
                            round_to(dt, act.apply_f64(dot + b))
                        })
                        .collect();
                    // k products accumulated: scale the tolerance with sqrt(k).
                    let atol = if dt == DType::F32 { 1e-4 } else { 5e-2 };
                    assert_close(
                        &format!("gemm_bias_act {act:?} bias={with_bias} nk={w_is_nk} {dt}"),
                        &values(&y)?,
                        &want,
                        rtol(dt) * 4.0,
                        atol,
                    )?;
                }
            }
        }
    }
    Ok(())
}
