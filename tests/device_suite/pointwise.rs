//! Pointwise ops: every binary op with broadcasting (and its backward), every unary op and
//! activation (and its backward), comparisons and where, against the float64 reference, with
//! finite differences for the backwards and misuse cases.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::base::shape::{BroadcastLayout, broadcast_strides};
use rocm_backend::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use rocm_backend::runtime::{DType, Tensor, elementwise};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("clamp_tensor_bounds", clamp_tensor_bounds),
        ("clamp_tensor_backward_rules", clamp_tensor_backward_rules),
        ("where_backward_broadcast", where_backward_broadcast),
        ("add_sub_alpha", add_sub_alpha),
        ("binary_ops_broadcasting", binary_ops_broadcasting),
        ("binary_ops_integers", binary_ops_integers),
        (
            "binary_backward_reduces_broadcast",
            binary_backward_reduces_broadcast,
        ),
        ("unary_ops_all_float_dtypes", unary_ops_all_float_dtypes),
        (
            "unary_backward_and_finite_differences",
            unary_backward_and_finite_differences,
        ),
        (
            "maximum_minimum_backward_nan_and_ties",
            maximum_minimum_backward_nan_and_ties,
        ),
        (
            "div_backward_extreme_divisors",
            div_backward_extreme_divisors,
        ),
        (
            "binary_backward_broadcast_sums_once",
            binary_backward_broadcast_sums_once,
        ),
        ("compare_ops_broadcasting", compare_ops_broadcasting),
        ("where_three_way_broadcast", where_three_way_broadcast),
        ("where_compare_fused", where_compare_fused),
        ("pointwise_misuse", pointwise_misuse),
        ("pointwise_c_exports", pointwise_c_exports),
        (
            "activation_edges_torch_values",
            activation_edges_torch_values,
        ),
        ("prelu_forward_backward", prelu_forward_backward),
    ]
}

pub const BINARY: [BinaryOp; 7] = [
    BinaryOp::Add,
    BinaryOp::Sub,
    BinaryOp::Mul,
    BinaryOp::Div,
    BinaryOp::Pow,
    BinaryOp::Maximum,
    BinaryOp::Minimum,
];

pub const UNARY: [UnaryOp; 29] = [
    UnaryOp::Relu,
    UnaryOp::Sigmoid,
    UnaryOp::Tanh,
    UnaryOp::Gelu { tanh: false },
    UnaryOp::Gelu { tanh: true },
    UnaryOp::Silu,
    UnaryOp::Hardswish,
    UnaryOp::Neg,
    UnaryOp::Abs,
    UnaryOp::Sqrt,
    UnaryOp::Exp,
    UnaryOp::Log,
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Clamp {
        min: -0.5,
        max: 0.75,
    },
    UnaryOp::LeakyRelu { slope: 0.2 },
    UnaryOp::Elu { alpha: 1.5 },
    UnaryOp::Selu,
    UnaryOp::Celu { alpha: 0.7 },
    UnaryOp::Hardsigmoid,
    // A threshold randn crosses, so both branches run.
    UnaryOp::Softplus {
        beta: 2.0,
        threshold: 3.0,
    },
    UnaryOp::Softsign,
    UnaryOp::Mish,
    UnaryOp::Erf,
    UnaryOp::Sign,
    UnaryOp::Floor,
    UnaryOp::Ceil,
    UnaryOp::Round,
    UnaryOp::Reciprocal,
];

/// Whether `x` is within `eps` of a point where `op` or its derivative jumps (finite
/// differences do not hold there).
pub fn near_kink(op: UnaryOp, x: f64, eps: f64) -> bool {
    let frac = x - x.floor();
    match op {
        UnaryOp::Relu
        | UnaryOp::Abs
        | UnaryOp::LeakyRelu { .. }
        | UnaryOp::Elu { .. }
        | UnaryOp::Selu
        | UnaryOp::Celu { .. }
        | UnaryOp::Sign
        | UnaryOp::Reciprocal => x.abs() < eps,
        UnaryOp::Clamp { min, max } => (x - min as f64).abs() < eps || (x - max as f64).abs() < eps,
        UnaryOp::Hardswish | UnaryOp::Hardsigmoid => (x.abs() - 3.0).abs() < eps,
        UnaryOp::Softplus { beta, threshold } => (x * beta as f64 - threshold as f64).abs() < eps,
        UnaryOp::Floor | UnaryOp::Ceil => frac < eps || frac > 1.0 - eps,
        UnaryOp::Round => (frac - 0.5).abs() < eps,
        _ => false,
    }
}

/// For each element of `out`, the linear index of the element of an input of `shape` that
/// broadcasting reads.
pub fn bcast_index(shape: &[usize], out: &[usize]) -> Vec<usize> {
    let st = broadcast_strides(shape, out);
    let n: usize = out.iter().product();
    (0..n)
        .map(|lin| {
            let (mut o, mut rem) = (0, lin);
            for d in (0..out.len()).rev() {
                o += (rem % out[d]) * st[d];
                rem /= out[d];
            }
            o
        })
        .collect()
}

const CASES: &[(&[usize], &[usize])] = &[
    (&[1], &[1]),
    (&[1000], &[1000]),
    (&[3, 1, 5], &[4, 1]),
    (&[2, 3, 4], &[4]),
    (&[5], &[3, 1]),
    (&[], &[7, 3]),
    (&[0, 3], &[3]),
    (&[257, 33], &[257, 1]),
    (&[70000], &[70000]),
];

/// A tensor whose values suit `op`'s domain (a positive base for pow).
fn operand(
    dev: &Dev,
    op: BinaryOp,
    first: bool,
    shape: &[usize],
    dt: DType,
    seed: u64,
) -> Result<Tensor, libtest_mimic::Failed> {
    let t = randn(dev, shape, dt, seed)?;
    let v = values(&t)?;
    let w: Vec<f64> = match (op, first) {
        (BinaryOp::Pow, true) => v.iter().map(|x| x.abs() + 0.5).collect(),
        (BinaryOp::Div, false) => v
            .iter()
            .map(|x| if x.abs() < 0.25 { 1.0 + x } else { *x })
            .collect(),
        _ => return Ok(t),
    };
    from_f64(dev, &w, shape, dt)
}

fn binary_ops_broadcasting(dev: &Dev) -> TestResult {
    for op in BINARY {
        for dt in FLOATS {
            for (i, (sa, sb)) in CASES.iter().enumerate() {
                let a = operand(dev, op, true, sa, dt, 1 + i as u64)?;
                let b = operand(dev, op, false, sb, dt, 50 + i as u64)?;
                let (shape, _) = ok(BroadcastLayout::new(&[sa, sb]))?;
                let out = poisoned(dev, &shape, dt)?;
                ok(elementwise::binary(None, op, &a, &b, Some(&out)))?;
                let (va, vb) = (values(&a)?, values(&b)?);
                let (ia, ib) = (bcast_index(sa, &shape), bcast_index(sb, &shape));
                let want: Vec<f64> = (0..ia.len())
                    .map(|k| round_to(dt, op.reference(va[ia[k]], vb[ib[k]])))
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
    // NaN propagates through maximum/minimum.
    let a = from_f64(dev, &[f64::NAN, 1.0, 2.0], &[3], DType::F32)?;
    let b = from_f64(dev, &[0.0, f64::NAN, 3.0], &[3], DType::F32)?;
    for op in [BinaryOp::Maximum, BinaryOp::Minimum] {
        let v = values(&ok(elementwise::binary(None, op, &a, &b, None))?)?;
        ensure(
            v[0].is_nan() && v[1].is_nan(),
            format!("{} NaN: {v:?}", op.name()),
        )?;
    }
    Ok(())
}

fn binary_ops_integers(dev: &Dev) -> TestResult {
    for op in BINARY {
        if op == BinaryOp::Div {
            continue;
        }
        for dt in [DType::I32, DType::I64] {
            let (lo, hi) = if op == BinaryOp::Pow {
                (0, 6)
            } else {
                (-100, 100)
            };
            let a = ok(Tensor::randint(dev.clone(), &[5, 7], dt, lo, hi, 1))?;
            let b = ok(Tensor::randint(dev.clone(), &[7], dt, lo, hi, 2))?;
            let out = poisoned(dev, &[5, 7], dt)?;
            ok(elementwise::binary(None, op, &a, &b, Some(&out)))?;
            let (va, vb) = (values(&a)?, values(&b)?);
            let want: Vec<f64> = (0..35)
                .map(|i| op.apply_i64(va[i] as i64, vb[i % 7] as i64) as f64)
                .collect();
            assert_close(
                &format!("int {} {dt}", op.name()),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
            // The integer semantics agree with the real ones on these small values.
            let real: Vec<f64> = (0..35).map(|i| op.reference(va[i], vb[i % 7])).collect();
            assert_close(
                &format!("int {} vs real", op.name()),
                &want,
                &real,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

fn binary_backward_reduces_broadcast(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[4], &[4]),
        (&[3, 1, 5], &[4, 1]),
        (&[2, 3, 4], &[4]),
        (&[], &[2, 3]),
        (&[1, 3], &[5, 1]),
        (&[0, 3], &[3]),
        (&[300, 40], &[40]),
    ];
    for op in BINARY {
        for dt in FLOATS {
            for (i, (sa, sb)) in cases.iter().enumerate() {
                let a = operand(dev, op, true, sa, dt, 3 + i as u64)?;
                let b = operand(dev, op, false, sb, dt, 30 + i as u64)?;
                let (shape, _) = ok(BroadcastLayout::new(&[sa, sb]))?;
                let dy = randn(dev, &shape, dt, 99)?;
                let da = poisoned(dev, sa, dt)?;
                let db = poisoned(dev, sb, dt)?;
                ok(elementwise::binary_backward(
                    None,
                    op,
                    &a,
                    &b,
                    &dy,
                    Some(&da),
                    Some(&db),
                ))?;
                let (va, vb, vd) = (values(&a)?, values(&b)?, values(&dy)?);
                let (ia, ib) = (bcast_index(sa, &shape), bcast_index(sb, &shape));
                let mut wa = vec![0.0; va.len()];
                let mut wb = vec![0.0; vb.len()];
                for k in 0..ia.len() {
                    let (ga, gb) = op.grad_reference(va[ia[k]], vb[ib[k]], vd[k]);
                    wa[ia[k]] += ga;
                    wb[ib[k]] += gb;
                }
                // Sums of many rounded terms: scale the tolerance by the fan-in.
                let fan = (ia.len() / va.len().max(1))
                    .max(ib.len() / vb.len().max(1))
                    .max(1);
                let tol = rtol(dt) * (fan as f64).sqrt().max(1.0);
                let what = format!("{}_backward {sa:?},{sb:?} {dt}", op.name());
                assert_close(&format!("{what} da"), &values(&da)?, &wa, tol, tol)?;
                assert_close(&format!("{what} db"), &values(&db)?, &wb, tol, tol)?;
                if dt == DType::F32 && ia.len() <= 60 {
                    // Finite differences of sum(dy * op(a, b)) in float64.
                    let loss = |va: &[f64], vb: &[f64]| -> f64 {
                        (0..ia.len())
                            .map(|k| vd[k] * op.reference(va[ia[k]], vb[ib[k]]))
                            .sum()
                    };
                    let h = 1e-6;
                    let fd = |which: usize, j: usize| {
                        let (mut pa, mut pb) = (va.clone(), vb.clone());
                        let (mut ma, mut mb) = (va.clone(), vb.clone());
                        if which == 0 {
                            pa[j] += h;
                            ma[j] -= h;
                        } else {
                            pb[j] += h;
                            mb[j] -= h;
                        }
                        (loss(&pa, &pb) - loss(&ma, &mb)) / (2.0 * h)
                    };
                    let fa: Vec<f64> = (0..va.len()).map(|j| fd(0, j)).collect();
                    let fb: Vec<f64> = (0..vb.len()).map(|j| fd(1, j)).collect();
                    assert_close(&format!("{what} da vs fd"), &wa, &fa, 1e-4, 1e-4)?;
                    assert_close(&format!("{what} db vs fd"), &wb, &fb, 1e-4, 1e-4)?;
                }
            }
        }
    }
    Ok(())
}

/// maximum/minimum backward as PyTorch's derivatives.yaml writes it:
/// `where(a == b, grad / 2, grad)`, zeroed for the operand that loses (`a < b` for maximum's
/// `a`, `a > b` for its `b`, the other way round for minimum). Every comparison with NaN is
/// false, so where either operand is NaN both get the whole gradient (torch:
/// maximum(nan, 1) gives da = db = 1); ties, infinite ones too, split it.
fn maximum_minimum_backward_nan_and_ties(dev: &Dev) -> TestResult {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let a = [nan, 1.0, inf, nan, 2.0, 3.0, -inf, inf, -inf, 0.5];
    let b = [1.0, nan, nan, nan, 2.0, 1.0, -inf, inf, nan, -0.25];
    let dy = [1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, -16.0];
    // (da, db) for maximum, then minimum.
    let want_max = [
        (1.0, 1.0),
        (2.0, 2.0),
        (3.0, 3.0),
        (4.0, 4.0),
        (3.0, 3.0),
        (8.0, 0.0),
        (5.0, 5.0),
        (6.0, 6.0),
        (14.0, 14.0),
        (-16.0, 0.0),
    ];
    let want_min: Vec<(f64, f64)> = want_max
        .iter()
        .enumerate()
        .map(|(i, &(x, y))| if i == 5 || i == 9 { (y, x) } else { (x, y) })
        .collect();
    for (op, want) in [
        (BinaryOp::Maximum, want_max.to_vec()),
        (BinaryOp::Minimum, want_min),
    ] {
        for (i, w) in want.iter().enumerate() {
            let r = op.grad_reference(a[i], b[i], dy[i]);
            ensure(
                r == *w,
                format!(
                    "{} grad_reference({}, {}) = {r:?}, expected {w:?}",
                    op.name(),
                    a[i],
                    b[i]
                ),
            )?;
        }
        let (wa, wb): (Vec<f64>, Vec<f64>) = want.iter().copied().unzip();
        for dt in FLOATS {
            let n = a.len();
            let (ta, tb) = (from_f64(dev, &a, &[n], dt)?, from_f64(dev, &b, &[n], dt)?);
            let tdy = from_f64(dev, &dy, &[n], dt)?;
            let (da, db) = (poisoned(dev, &[n], dt)?, poisoned(dev, &[n], dt)?);
            ok(elementwise::binary_backward(
                None,
                op,
                &ta,
                &tb,
                &tdy,
                Some(&da),
                Some(&db),
            ))?;
            let what = format!("{}_backward {dt}", op.name());
            assert_close(&format!("{what} da"), &values(&da)?, &wa, 0.0, 0.0)?;
            assert_close(&format!("{what} db"), &values(&db)?, &wb, 0.0, 0.0)?;
            // Broadcast: b's NaN row against a's rows sums both operands' full gradients.
            let ta = from_f64(dev, &[nan, 5.0, -1.0, 7.0], &[2, 2], dt)?;
            let tb = from_f64(dev, &[nan, 5.0], &[2], dt)?;
            let tdy = from_f64(dev, &[1.0, 2.0, 4.0, 8.0], &[2, 2], dt)?;
            let (da, db) = (poisoned(dev, &[2, 2], dt)?, poisoned(dev, &[2], dt)?);
            ok(elementwise::binary_backward(
                None,
                op,
                &ta,
                &tb,
                &tdy,
                Some(&da),
                Some(&db),
            ))?;
            // Column 0 has a NaN: both get dy. Column 1: a tie (5, 5) then 7 against 5.
            let (wa, wb) = if op == BinaryOp::Maximum {
                (vec![1.0, 1.0, 4.0, 8.0], vec![5.0, 1.0])
            } else {
                (vec![1.0, 1.0, 4.0, 0.0], vec![5.0, 9.0])
            };
            assert_close(
                &format!("{what} broadcast da"),
                &values(&da)?,
                &wa,
                0.0,
                0.0,
            )?;
            assert_close(
                &format!("{what} broadcast db"),
                &values(&db)?,
                &wb,
                0.0,
                0.0,
            )?;
        }
    }
    Ok(())
}

/// div's divisor gradient in PyTorch's form `-grad * ((a / b) / b)`: `-grad * a / (b * b)`
/// overflows (a = b = 1e-23: b*b is 0 in f32, giving -inf for -1e23) or underflows (a = b =
/// 1e20: b*b is inf, giving -0 for -1e-20). f32 and bf16 (whose range is f32's); f16 never
/// squares out of f32 range but runs the same cases scaled into its own.
fn div_backward_extreme_divisors(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        let vals: &[(f64, f64)] = if dt == DType::F16 {
            &[(1e-4, 1e-4), (6e4, 6e4), (3.0, -2.0), (1.0, 1e-2)]
        } else {
            &[
                (1e-23, 1e-23),
                (1e20, 1e20),
                (-3e-30, 2e-25),
                (5e25, -4e30),
                (3.0, -2.0),
            ]
        };
        let n = vals.len();
        let av: Vec<f64> = vals.iter().map(|v| round_to(dt, v.0)).collect();
        let bv: Vec<f64> = vals.iter().map(|v| round_to(dt, v.1)).collect();
        let dyv: Vec<f64> = (0..n).map(|i| [1.0, -0.5, 2.0][i % 3]).collect();
        let (a, b) = (from_f64(dev, &av, &[n], dt)?, from_f64(dev, &bv, &[n], dt)?);
        let dy = from_f64(dev, &dyv, &[n], dt)?;
        let (da, db) = (poisoned(dev, &[n], dt)?, poisoned(dev, &[n], dt)?);
        ok(elementwise::binary_backward(
            None,
            BinaryOp::Div,
            &a,
            &b,
            &dy,
            Some(&da),
            Some(&db),
        ))?;
        let (wa, wb): (Vec<f64>, Vec<f64>) = (0..n)
            .map(|i| {
                let (ga, gb) = (dyv[i] / bv[i], -dyv[i] * av[i] / bv[i] / bv[i]);
                (round_to(dt, ga), round_to(dt, gb))
            })
            .unzip();
        ensure(
            wb.iter().all(|v| v.is_finite() && *v != 0.0),
            format!("div cases out of range for {dt}: {wb:?}"),
        )?;
        let what = format!("div_backward {dt}");
        assert_close_dtype(&format!("{what} da"), &values(&da)?, &wa, dt)?;
        assert_close(&format!("{what} db"), &values(&db)?, &wb, rtol(dt), 0.0)?;
        // The f64 reference agrees.
        for i in 0..n {
            let r = BinaryOp::Div.grad_reference(av[i], bv[i], dyv[i]).1;
            ensure(
                (r - wb[i]).abs() <= 1e-2 * wb[i].abs(),
                format!(
                    "div grad_reference({}, {}) = {r}, expected {}",
                    av[i], bv[i], wb[i]
                ),
            )?;
        }
    }
    Ok(())
}

/// In f16/bf16 a gradient summed over a broadcast dimension is one rounding of the f32 sum of
/// the per-element terms, not a sum of terms each rounded to the dtype first. Each reduced
/// element sums a pair that nearly cancels (the same a and b, dy = 1 and -(1 - 2^-p) with p
/// the dtype's precision), so the exact sum is about an ulp of the terms and rounding the
/// terms first is off by up to 100%. mul, div and pow, each operand broadcast in turn.
fn binary_backward_broadcast_sums_once(dev: &Dev) -> TestResult {
    let k = 32;
    for dt in [DType::F16, DType::BF16] {
        let eps = if dt == DType::F16 {
            2f64.powi(-11)
        } else {
            2f64.powi(-8)
        };
        let row_a: Vec<f64> = (0..k)
            .map(|j| round_to(dt, 1.5 + 0.047 * j as f64))
            .collect();
        let row_b: Vec<f64> = (0..k)
            .map(|j| round_to(dt, 0.7 + 0.031 * j as f64))
            .collect();
        let dyv: Vec<f64> = (0..2 * k)
            .map(|i| if i < k { 1.0 } else { -(1.0 - eps) })
            .collect();
        let dy = from_f64(dev, &dyv, &[2, k], dt)?;
        for op in [BinaryOp::Mul, BinaryOp::Div, BinaryOp::Pow] {
            for which in 0..2 {
                // The reduced operand is [k], the other [2, k] with two equal rows.
                let two = |r: &[f64]| [r, r].concat();
                let (av, bv) = if which == 0 {
                    (row_a.clone(), two(&row_b))
                } else {
                    (two(&row_a), row_b.clone())
                };
                let (sa, sb): (&[usize], &[usize]) = if which == 0 {
                    (&[k], &[2, k])
                } else {
                    (&[2, k], &[k])
                };
                let (a, b) = (from_f64(dev, &av, sa, dt)?, from_f64(dev, &bv, sb, dt)?);
                let (da, db) = (poisoned(dev, sa, dt)?, poisoned(dev, sb, dt)?);
                ok(elementwise::binary_backward(
                    None,
                    op,
                    &a,
                    &b,
                    &dy,
                    Some(&da),
                    Some(&db),
                ))?;
                let (mut wa, mut wb) = (vec![0.0; av.len()], vec![0.0; bv.len()]);
                for (i, &g) in dyv.iter().enumerate() {
                    let (ia, ib) = (i % av.len(), i % bv.len());
                    let (ga, gb) = op.grad_reference(av[ia], bv[ib], g);
                    wa[ia] += ga;
                    wb[ib] += gb;
                }
                let what = format!("{}_backward {dt}, operand {which} broadcast", op.name());
                let (got_sum, want_sum, got_full, want_full) = if which == 0 {
                    (values(&da)?, wa, values(&db)?, wb)
                } else {
                    (values(&db)?, wb, values(&da)?, wa)
                };
                assert_close(&format!("{what}: sum"), &got_sum, &want_sum, 1e-2, 0.0)?;
                assert_close_dtype(&format!("{what}: other"), &got_full, &want_full, dt)?;
            }
        }
    }
    Ok(())
}

/// Inputs inside each op's domain.
fn unary_input(
    dev: &Dev,
    op: UnaryOp,
    shape: &[usize],
    dt: DType,
    seed: u64,
) -> Result<Tensor, libtest_mimic::Failed> {
    let t = randn(dev, shape, dt, seed)?;
    match op {
        UnaryOp::Sqrt | UnaryOp::Log => {
            let v: Vec<f64> = values(&t)?.iter().map(|x| x.abs() + 0.1).collect();
            from_f64(dev, &v, shape, dt)
        }
        _ => Ok(t),
    }
}

fn unary_ops_all_float_dtypes(dev: &Dev) -> TestResult {
    for op in UNARY {
        for dt in FLOATS {
            for shape in [
                &[1usize][..],
                &[17],
                &[4099],
                &[0],
                &[3, 0, 2],
                &[33, 65],
                &[],
            ] {
                let x = unary_input(dev, op, shape, dt, 7)?;
                let out = poisoned(dev, shape, dt)?;
                ok(elementwise::unary(None, op, &x, Some(&out)))?;
                let want: Vec<f64> = values(&x)?
                    .iter()
                    .map(|&v| round_to(dt, op.reference(v)))
                    .collect();
                assert_close_dtype(
                    &format!("{:?} {shape:?} {dt}", op),
                    &values(&out)?,
                    &want,
                    dt,
                )?;
            }
        }
    }
    // Special values.
    let x = from_f64(
        dev,
        &[f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0],
        &[5],
        DType::F32,
    )?;
    for op in UNARY {
        let got = values(&ok(elementwise::unary(None, op, &x, None))?)?;
        let want: Vec<f64> = values(&x)?
            .iter()
            .map(|&v| round_to(DType::F32, op.reference(v)))
            .collect();
        assert_close(&format!("{op:?} special values"), &got, &want, 1e-6, 1e-6)?;
    }
    Ok(())
}

fn unary_backward_and_finite_differences(dev: &Dev) -> TestResult {
    for op in UNARY {
        for dt in FLOATS {
            for shape in [&[1usize][..], &[17], &[4099], &[0], &[5, 7]] {
                let x = unary_input(dev, op, shape, dt, 11)?;
                let dy = randn(dev, shape, dt, 12)?;
                let dx = poisoned(dev, shape, dt)?;
                ok(elementwise::unary_backward(None, op, &x, &dy, Some(&dx)))?;
                let (vx, vd) = (values(&x)?, values(&dy)?);
                let want: Vec<f64> = vx
                    .iter()
                    .zip(&vd)
                    .map(|(&x, &d)| round_to(dt, op.grad_reference(x, d)))
                    .collect();
                assert_close_dtype(
                    &format!("{op:?}_backward {shape:?} {dt}"),
                    &values(&dx)?,
                    &want,
                    dt,
                )?;
                // The reference gradient against central differences, away from kinks.
                let h = 1e-6;
                for (&x, &d) in vx.iter().zip(&vd) {
                    if near_kink(op, x, 1e-3) {
                        continue;
                    }
                    let fd = d * (op.reference(x + h) - op.reference(x - h)) / (2.0 * h);
                    let g = op.grad_reference(x, d);
                    ensure(
                        (fd - g).abs() <= 1e-5 + 1e-4 * g.abs(),
                        format!("{op:?} at {x}: reference grad {g}, finite difference {fd}"),
                    )?;
                }
            }
        }
    }
    Ok(())
}

fn compare_ops_broadcasting(dev: &Dev) -> TestResult {
    let ops = [
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
    ];
    for op in ops {
        for dt in [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64] {
            for (sa, sb) in [
                (&[3usize, 1, 5][..], &[4usize, 1][..]),
                (&[64], &[64]),
                (&[], &[2, 2]),
                (&[0, 2], &[2]),
            ] {
                // Small integers so that equal values occur.
                let a = ok(Tensor::randint(dev.clone(), sa, DType::I64, -3, 3, 1))?;
                let b = ok(Tensor::randint(dev.clone(), sb, DType::I64, -3, 3, 2))?;
                let a = from_f64(dev, &values(&a)?, sa, dt)?;
                let b = from_f64(dev, &values(&b)?, sb, dt)?;
                let (shape, _) = ok(BroadcastLayout::new(&[sa, sb]))?;
                let out = poisoned(dev, &shape, DType::Bool)?;
                ok(elementwise::compare(None, op, &a, &b, Some(&out)))?;
                let (va, vb) = (values(&a)?, values(&b)?);
                let (ia, ib) = (bcast_index(sa, &shape), bcast_index(sb, &shape));
                let want: Vec<f64> = (0..ia.len())
                    .map(|k| op.apply(va[ia[k]], vb[ib[k]]) as u8 as f64)
                    .collect();
                assert_close(
                    &format!("{} {dt}", op.name()),
                    &values(&out)?,
                    &want,
                    0.0,
                    0.0,
                )?;
            }
        }
        // NaN: only ne is true.
        let a = from_f64(dev, &[f64::NAN, 1.0], &[2], DType::F32)?;
        let b = from_f64(dev, &[f64::NAN, f64::NAN], &[2], DType::F32)?;
        let v = values(&ok(elementwise::compare(None, op, &a, &b, None))?)?;
        let t = if op == CompareOp::Ne { 1.0 } else { 0.0 };
        assert_close(&format!("{} NaN", op.name()), &v, &[t, t], 0.0, 0.0)?;
    }
    Ok(())
}

fn where_three_way_broadcast(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize], &[usize])] = &[
        (&[5], &[5], &[5]),
        (&[3, 1], &[1, 4], &[4]),
        (&[2, 3, 4], &[], &[3, 1]),
        (&[70000], &[70000], &[1]),
        (&[0, 2], &[2], &[1]),
    ];
    for dt in [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64] {
        for (sc, sa, sb) in cases {
            let c = ok(Tensor::randint(dev.clone(), sc, DType::I64, 0, 2, 5))?;
            let c = ok(rocm_backend::runtime::data::cast(
                None,
                &c,
                DType::Bool,
                None,
            ))?;
            let a = ok(Tensor::randint(dev.clone(), sa, DType::I64, -50, 50, 6))?;
            let b = ok(Tensor::randint(dev.clone(), sb, DType::I64, -50, 50, 7))?;
            let a = from_f64(dev, &values(&a)?, sa, dt)?;
            let b = from_f64(dev, &values(&b)?, sb, dt)?;
            let (shape, _) = ok(BroadcastLayout::new(&[sc, sa, sb]))?;
            let out = poisoned(dev, &shape, dt)?;
            ok(elementwise::where_(None, &c, &a, &b, Some(&out)))?;
            let (vc, va, vb) = (values(&c)?, values(&a)?, values(&b)?);
            let (ic, ia, ib) = (
                bcast_index(sc, &shape),
                bcast_index(sa, &shape),
                bcast_index(sb, &shape),
            );
            let want: Vec<f64> = (0..ia.len())
                .map(|k| {
                    if vc[ic[k]] != 0.0 {
                        va[ia[k]]
                    } else {
                        vb[ib[k]]
                    }
                })
                .collect();
            assert_close(
                &format!("where {sc:?},{sa:?},{sb:?} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
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

fn pointwise_misuse(dev: &Dev) -> TestResult {
    let a = randn(dev, &[2, 3], DType::F32, 1)?;
    let b = randn(dev, &[4, 3], DType::F32, 2)?;
    let h = randn(dev, &[2, 3], DType::F16, 3)?;
    let i = ok(Tensor::randint(dev.clone(), &[2, 3], DType::I32, 0, 5, 1))?;
    expect_err(
        elementwise::binary(None, BinaryOp::Sub, &a, &b, None),
        ErrorKind::ShapeMismatch,
        "sub",
    )?;
    expect_err(
        elementwise::binary(None, BinaryOp::Mul, &a, &h, None),
        ErrorKind::DtypeMismatch,
        "mul",
    )?;
    expect_err(
        elementwise::binary(None, BinaryOp::Div, &i, &i, None),
        ErrorKind::DtypeMismatch,
        "div",
    )?;
    expect_err(
        elementwise::unary(None, UnaryOp::Exp, &i, None),
        ErrorKind::DtypeMismatch,
        "exp",
    )?;
    expect_err(
        elementwise::unary_backward(None, UnaryOp::Tanh, &a, &b, None),
        ErrorKind::ShapeMismatch,
        "tanh_backward",
    )?;
    expect_err(
        elementwise::binary_backward(None, BinaryOp::Mul, &a, &a, &b, None, None),
        ErrorKind::ShapeMismatch,
        "mul_backward",
    )?;
    expect_err(
        elementwise::compare(None, CompareOp::Lt, &a, &h, None),
        ErrorKind::DtypeMismatch,
        "lt",
    )?;
    expect_err(
        elementwise::compare(None, CompareOp::Eq, &a, &b, None),
        ErrorKind::ShapeMismatch,
        "eq",
    )?;
    expect_err(
        elementwise::where_(None, &a, &a, &a, None),
        ErrorKind::DtypeMismatch,
        "where",
    )?;
    let c = poisoned(dev, &[2, 3], DType::Bool)?;
    expect_err(
        elementwise::where_(None, &c, &a, &h, None),
        ErrorKind::DtypeMismatch,
        "where",
    )?;
    expect_err(
        elementwise::where_(None, &c, &b, &b, None),
        ErrorKind::ShapeMismatch,
        "where",
    )?;
    let wrong = poisoned(dev, &[2, 3], DType::F32)?;
    expect_err(
        elementwise::compare(None, CompareOp::Gt, &a, &a, Some(&wrong)),
        ErrorKind::DtypeMismatch,
        "gt",
    )?;
    Ok(())
}

fn pointwise_c_exports(dev: &Dev) -> TestResult {
    use rocm_backend::ffi::eager::*;
    use rocm_backend::ffi::handles::register;
    use rocm_backend::ffi::rb_status;
    use rocm_backend::ffi::tensor::rb_tensor;
    let x = randn(dev, &[4, 5], DType::F32, 1)?;
    let hx = register(x.clone()) as *mut rb_tensor;
    let mut out: *mut rb_tensor = std::ptr::null_mut();
    // SAFETY: valid handles and out-pointers.
    unsafe {
        ensure(
            rb_gelu(std::ptr::null_mut(), hx, 7, &mut out) == rb_status::InvalidArgument,
            "gelu approximate=7",
        )?;
        ensure(out.is_null(), "out written on failure")?;
        ensure(
            rb_gelu(std::ptr::null_mut(), hx, 1, &mut out) == rb_status::Success,
            "gelu tanh",
        )?;
        ensure(!out.is_null(), "gelu made no tensor")?;
        let got = rocm_backend::ffi::handles::get::<Tensor>(out as *const _, "out").unwrap();
        let want: Vec<f64> = values(&x)?
            .iter()
            .map(|&v| round_to(DType::F32, UnaryOp::Gelu { tanh: true }.reference(v)))
            .collect();
        assert_close_dtype("rb_gelu", &values(&got)?, &want, DType::F32)?;
        ensure(
            rb_clamp(std::ptr::null_mut(), hx, f32::NAN, 1.0, &mut out)
                == rb_status::InvalidArgument,
            "clamp NaN",
        )?;
        ensure(
            rb_eq(std::ptr::null_mut(), hx, std::ptr::null(), &mut out) == rb_status::NullPointer,
            "eq NULL",
        )?;
        ensure(
            rb_sub(std::ptr::null_mut(), hx, hx, std::ptr::null_mut()) == rb_status::NullPointer,
            "sub out NULL",
        )?;
        rocm_backend::ffi::tensor::rb_tensor_destroy(out);
        rocm_backend::ffi::tensor::rb_tensor_destroy(hx);
    }
    Ok(())
}

/// The fused `where(a op b, x, y)` against comparing and selecting in f64: every comparison,
/// four-way broadcasting, same-shape sizes around the vector width (the GPU's flat path), the
/// aliased `where(a > b, a, b)` form, NaNs (every comparison with NaN is false but `ne`), and
/// misuse (an op code that is no comparison, mixed dtypes).
fn where_compare_fused(dev: &Dev) -> TestResult {
    let ops = [
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
    ];
    let cases: &[[&[usize]; 4]] = &[
        [&[1], &[1], &[1], &[1]],
        [&[7], &[7], &[7], &[7]],
        [&[4099], &[4099], &[4099], &[4099]],
        [&[3, 1, 5], &[4, 1], &[5], &[3, 4, 1]],
        [&[2, 3], &[], &[3], &[2, 1]],
        [&[0, 3], &[3], &[3], &[3]],
    ];
    for dt in [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64] {
        for (ci, shapes) in cases.iter().enumerate() {
            let mut vals = Vec::new();
            let mut ts = Vec::new();
            for (k, sh) in shapes.iter().enumerate() {
                // Small integers so that ties (eq/le/ge) occur; NaNs in a for floats.
                let r = ok(Tensor::randint(
                    dev.clone(),
                    sh,
                    DType::I64,
                    -3,
                    4,
                    40 + k as u64,
                ))?;
                let mut v = values(&r)?;
                if k == 0 && dt.is_float() {
                    for (j, e) in v.iter_mut().enumerate() {
                        if j % 5 == 2 {
                            *e = f64::NAN;
                        }
                    }
                }
                ts.push(from_f64(dev, &v, sh, dt)?);
                vals.push(v);
            }
            let (shape, _) = ok(BroadcastLayout::new(&shapes[..]))?;
            let idx: Vec<Vec<usize>> = shapes.iter().map(|s| bcast_index(s, &shape)).collect();
            let n: usize = shape.iter().product();
            for op in ops {
                let what = format!("where_compare {} case {ci} {dt}", op.name());
                let out = poisoned(dev, &shape, dt)?;
                ok(elementwise::where_compare(
                    None,
                    op,
                    &ts[0],
                    &ts[1],
                    &ts[2],
                    &ts[3],
                    Some(&out),
                ))?;
                let want: Vec<f64> = (0..n)
                    .map(|k| {
                        let (a, b) = (vals[0][idx[0][k]], vals[1][idx[1][k]]);
                        if op.apply(a, b) {
                            vals[2][idx[2][k]]
                        } else {
                            vals[3][idx[3][k]]
                        }
                    })
                    .collect();
                assert_close(&what, &values(&out)?, &want, 0.0, 0.0)?;
                if shapes.iter().all(|s| *s == shapes[0]) {
                    // torch.where(a > b, a, b): x and y are the compared tensors themselves.
                    let out = poisoned(dev, &shape, dt)?;
                    ok(elementwise::where_compare(
                        None,
                        op,
                        &ts[0],
                        &ts[1],
                        &ts[0],
                        &ts[1],
                        Some(&out),
                    ))?;
                    let want: Vec<f64> = (0..n)
                        .map(|k| {
                            let (a, b) = (vals[0][k], vals[1][k]);
                            if op.apply(a, b) { a } else { b }
                        })
                        .collect();
                    assert_close(&format!("{what} aliased"), &values(&out)?, &want, 0.0, 0.0)?;
                    // In place: out is the compared (and selected) tensor a itself.
                    let a = from_f64(dev, &vals[0], &shape, dt)?;
                    ok(elementwise::where_compare(
                        None,
                        op,
                        &a,
                        &ts[1],
                        &a,
                        &ts[1],
                        Some(&a),
                    ))?;
                    assert_close(&format!("{what} in place"), &values(&a)?, &want, 0.0, 0.0)?;
                }
            }
        }
    }
    let f = |s: &[usize], dt| Tensor::zeros(dev.clone(), s, dt);
    let (x, h) = (ok(f(&[3], DType::F32))?, ok(f(&[3], DType::F16))?);
    expect_err(
        elementwise::where_compare(None, CompareOp::Gt, &x, &x, &h, &h, None),
        ErrorKind::DtypeMismatch,
        "where_compare",
    )?;
    let y = ok(f(&[4], DType::F32))?;
    expect_err(
        elementwise::where_compare(None, CompareOp::Gt, &x, &y, &x, &x, None),
        ErrorKind::ShapeMismatch,
        "where_compare",
    )
}

/// Sums `full` (over `shape`) down to an operand of `target` broadcast to it.
fn sum_to_ref(full: &[f64], target: &[usize], shape: &[usize]) -> Vec<f64> {
    let mut out = vec![0.0; target.iter().product()];
    for (k, &j) in bcast_index(target, shape).iter().enumerate() {
        out[j] += full[k];
    }
    out
}

/// A float or integer tensor with values from `v`.
fn tensor_of(
    dev: &Dev,
    v: &[f64],
    shape: &[usize],
    dt: DType,
) -> Result<Tensor, libtest_mimic::Failed> {
    let v: Vec<f64> = if dt.is_int() {
        v.iter().map(|x| (x * 4.0).round()).collect()
    } else {
        v.to_vec()
    };
    from_f64(dev, &v, shape, dt)
}

/// `rb_clamp_tensor`: tensor bounds broadcast with x (either may be absent), NaN in x or a
/// bound, min > max, every float dtype and i32/i64, against `clamp_tensor_reference`.
fn clamp_tensor_bounds(dev: &Dev) -> TestResult {
    use rocm_backend::ops::elementwise::clamp_tensor_reference;
    type Case<'a> = (&'a [usize], Option<&'a [usize]>, Option<&'a [usize]>);
    let cases: &[Case] = &[
        (&[2, 3], Some(&[2, 3]), Some(&[2, 3])),
        (&[4, 1, 3], Some(&[3]), None),
        (&[2, 3], None, Some(&[1])),
        (&[1], Some(&[2, 3]), Some(&[3, 1, 1])),
        (&[0, 3], Some(&[3]), Some(&[3])),
        (&[], Some(&[]), Some(&[])),
        (&[257, 5], Some(&[257, 1]), Some(&[5])),
    ];
    for dt in [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64] {
        for (i, (sx, smin, smax)) in cases.iter().enumerate() {
            let mut shapes = vec![*sx];
            shapes.extend(smin.iter().chain(smax.iter()).copied());
            let (shape, _) = ok(BroadcastLayout::new(&shapes))?;
            let mut xv = values(&randn(dev, sx, DType::F32, 40 + i as u64)?)?;
            let mut lov = smin
                .map(|s| randn(dev, s, DType::F32, 50 + i as u64).and_then(|t| values(&t)))
                .transpose()?
                .map(|v| v.iter().map(|x| x - 0.5).collect::<Vec<f64>>());
            let hiv = smax
                .map(|s| randn(dev, s, DType::F32, 60 + i as u64).and_then(|t| values(&t)))
                .transpose()?
                .map(|v| v.iter().map(|x| x + 0.5).collect::<Vec<f64>>());
            if dt.is_float() && !xv.is_empty() {
                xv[0] = f64::NAN;
                if let Some(lo) = lov.as_mut().filter(|l| l.len() > 2) {
                    lo[2] = f64::NAN;
                }
            }
            let x = tensor_of(dev, &xv, sx, dt)?;
            let lo = match (smin, &lov) {
                (Some(s), Some(v)) => Some(tensor_of(dev, v, s, dt)?),
                _ => None,
            };
            let hi = match (smax, &hiv) {
                (Some(s), Some(v)) => Some(tensor_of(dev, v, s, dt)?),
                _ => None,
            };
            let out = poisoned(dev, &shape, dt)?;
            ok(elementwise::clamp_tensor(
                None,
                &x,
                lo.as_ref(),
                hi.as_ref(),
                Some(&out),
            ))?;
            let xr = values(&x)?;
            let lr = lo.as_ref().map(values).transpose()?;
            let hr = hi.as_ref().map(values).transpose()?;
            let ix = bcast_index(sx, &shape);
            let il = smin.map(|s| bcast_index(s, &shape));
            let ih = smax.map(|s| bcast_index(s, &shape));
            let want: Vec<f64> = (0..ix.len())
                .map(|k| {
                    clamp_tensor_reference(
                        xr[ix[k]],
                        lr.as_ref().map(|l| l[il.as_ref().unwrap()[k]]),
                        hr.as_ref().map(|h| h[ih.as_ref().unwrap()[k]]),
                    )
                })
                .collect();
            assert_close(
                &format!("clamp_tensor {sx:?} {smin:?} {smax:?} {dt}"),
                &values(&out)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    // In place into x.
    let x = from_f64(dev, &[-2.0, 0.5, 3.0], &[3], DType::F32)?;
    let lo = from_f64(dev, &[-1.0], &[1], DType::F32)?;
    let hi = from_f64(dev, &[1.0, 1.0, -5.0], &[3], DType::F32)?;
    ok(elementwise::clamp_tensor(
        None,
        &x,
        Some(&lo),
        Some(&hi),
        Some(&x),
    ))?;
    assert_close(
        "clamp_tensor in place",
        &values(&x)?,
        &[-1.0, 0.5, -5.0],
        0.0,
        0.0,
    )?;
    // Misuse: no bound, dtype mismatch, shapes that do not broadcast.
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    expect_err(
        elementwise::clamp_tensor(None, &x, None, None, None),
        ErrorKind::InvalidArgument,
        "clamp",
    )?;
    let h = randn(dev, &[2, 3], DType::F16, 1)?;
    expect_err(
        elementwise::clamp_tensor(None, &x, Some(&h), None, None),
        ErrorKind::DtypeMismatch,
        "clamp",
    )?;
    let w = randn(dev, &[4], DType::F32, 1)?;
    expect_err(
        elementwise::clamp_tensor(None, &x, None, Some(&w), None),
        ErrorKind::ShapeMismatch,
        "clamp",
    )?;
    Ok(())
}

/// `rb_clamp_tensor_backward`: PyTorch's tie rules on a hand-made case, then random
/// broadcast cases against `clamp_tensor_grad_reference` summed to each operand's shape.
fn clamp_tensor_backward_rules(dev: &Dev) -> TestResult {
    use rocm_backend::ops::elementwise::clamp_tensor_grad_reference;
    use rocm_backend::runtime::eager::Grad;
    // x == min and x == max pass the gradient to x; min > max sends it to max.
    let x = from_f64(dev, &[1.0, 2.0, 3.0, f64::NAN, 5.0], &[5], DType::F32)?;
    let lo = from_f64(dev, &[1.0, 3.0, 0.0, 0.0, 6.0], &[5], DType::F32)?;
    let hi = from_f64(dev, &[2.0, 2.0, 3.0, 1.0, 4.0], &[5], DType::F32)?;
    let dy = from_f64(dev, &[10.0, 20.0, 30.0, 40.0, 50.0], &[5], DType::F32)?;
    let [dx, dmin, dmax] = ok(elementwise::clamp_tensor_backward(
        None,
        &x,
        Some(&lo),
        Some(&hi),
        &dy,
        [Grad::New, Grad::New, Grad::New],
    ))?;
    let v = |t: Option<Tensor>| {
        t.ok_or("gradient missing")
            .map_err(libtest_mimic::Failed::from)
            .and_then(|t| values(&t))
    };
    assert_close(
        "clamp_backward ties dx",
        &v(dx)?,
        &[10.0, 0.0, 30.0, 0.0, 0.0],
        0.0,
        0.0,
    )?;
    assert_close("clamp_backward ties dmin", &v(dmin)?, &[0.0; 5], 0.0, 0.0)?;
    assert_close(
        "clamp_backward ties dmax",
        &v(dmax)?,
        &[0.0, 20.0, 0.0, 0.0, 50.0],
        0.0,
        0.0,
    )?;
    type Case<'a> = (&'a [usize], Option<&'a [usize]>, Option<&'a [usize]>);
    let cases: &[Case] = &[
        (&[2, 3], Some(&[2, 3]), Some(&[2, 3])),
        (&[4, 1, 3], Some(&[3]), Some(&[4, 2, 1])),
        (&[2, 3], None, Some(&[1])),
        (&[1], Some(&[2, 3]), None),
        (&[0, 3], Some(&[3]), Some(&[3])),
        (&[300, 7], Some(&[7]), Some(&[300, 1])),
    ];
    for dt in FLOATS {
        for (i, (sx, smin, smax)) in cases.iter().enumerate() {
            let mut shapes = vec![*sx];
            shapes.extend(smin.iter().chain(smax.iter()).copied());
            let (shape, _) = ok(BroadcastLayout::new(&shapes))?;
            let x = randn(dev, sx, dt, 70 + i as u64)?;
            let lo = smin.map(|s| randn(dev, s, dt, 80 + i as u64)).transpose()?;
            let hi = smax.map(|s| randn(dev, s, dt, 90 + i as u64)).transpose()?;
            let dy = randn(dev, &shape, dt, 95 + i as u64)?;
            let px = poisoned(dev, sx, dt)?;
            let pmin = smin.map(|s| poisoned(dev, s, dt)).transpose()?;
            let pmax = smax.map(|s| poisoned(dev, s, dt)).transpose()?;
            fn g(p: &Option<Tensor>) -> Grad<'_> {
                p.as_ref().map_or(Grad::New, Grad::Into)
            }
            let r = ok(elementwise::clamp_tensor_backward(
                None,
                &x,
                lo.as_ref(),
                hi.as_ref(),
                &dy,
                [Grad::Into(&px), g(&pmin), g(&pmax)],
            ))?;
            ensure(
                r[1].is_some() == smin.is_some(),
                "dmin computed iff min given",
            )?;
            ensure(
                r[2].is_some() == smax.is_some(),
                "dmax computed iff max given",
            )?;
            let (xv, dyv) = (values(&x)?, values(&dy)?);
            let lv = lo.as_ref().map(values).transpose()?;
            let hv = hi.as_ref().map(values).transpose()?;
            let ix = bcast_index(sx, &shape);
            let il = smin.map(|s| bcast_index(s, &shape));
            let ih = smax.map(|s| bcast_index(s, &shape));
            let n = ix.len();
            let (mut fx, mut fl, mut fh) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
            for k in 0..n {
                let (a, b, c) = clamp_tensor_grad_reference(
                    xv[ix[k]],
                    lv.as_ref().map(|l| l[il.as_ref().unwrap()[k]]),
                    hv.as_ref().map(|h| h[ih.as_ref().unwrap()[k]]),
                    dyv[k],
                );
                (fx[k], fl[k], fh[k]) = (a, b, c);
            }
            let tol = rtol(dt) * 20.0;
            let what = format!("clamp_tensor_backward {sx:?} {smin:?} {smax:?} {dt}");
            assert_close(
                &format!("{what} dx"),
                &values(&px)?,
                &sum_to_ref(&fx, sx, &shape),
                tol,
                tol,
            )?;
            if let (Some(p), Some(s)) = (&pmin, smin) {
                assert_close(
                    &format!("{what} dmin"),
                    &values(p)?,
                    &sum_to_ref(&fl, s, &shape),
                    tol,
                    tol,
                )?;
            }
            if let (Some(p), Some(s)) = (&pmax, smax) {
                assert_close(
                    &format!("{what} dmax"),
                    &values(p)?,
                    &sum_to_ref(&fh, s, &shape),
                    tol,
                    tol,
                )?;
            }
        }
    }
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    let bad = randn(dev, &[3], DType::F32, 2)?;
    expect_err(
        elementwise::clamp_tensor_backward(
            None,
            &x,
            Some(&bad),
            None,
            &bad,
            [Grad::New, Grad::New, Grad::New],
        ),
        ErrorKind::ShapeMismatch,
        "clamp_backward",
    )?;
    Ok(())
}

/// `rb_where_backward`: each gradient is dy where the condition picks its operand, summed
/// over its broadcast dimensions; gradients may be skipped.
fn where_backward_broadcast(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::eager::Grad;
    let cases: &[(&[usize], &[usize], &[usize])] = &[
        (&[2, 3], &[2, 3], &[2, 3]),
        (&[3], &[2, 1], &[1]),
        (&[2, 1, 3], &[4, 1], &[3]),
        (&[0, 3], &[3], &[1, 3]),
        (&[], &[4], &[]),
        (&[1000], &[1000], &[1]),
    ];
    for dt in FLOATS {
        for (i, (sc, sa, sb)) in cases.iter().enumerate() {
            let (shape, _) = ok(BroadcastLayout::new(&[sc, sa, sb]))?;
            let r = randn(dev, sc, DType::F32, 10 + i as u64)?;
            let z = ok(Tensor::zeros(dev.clone(), &[], DType::F32))?;
            let cond = ok(elementwise::compare(None, CompareOp::Gt, &r, &z, None))?;
            let a = randn(dev, sa, dt, 20 + i as u64)?;
            let b = randn(dev, sb, dt, 30 + i as u64)?;
            let dy = randn(dev, &shape, dt, 40 + i as u64)?;
            let (pa, pb) = (poisoned(dev, sa, dt)?, poisoned(dev, sb, dt)?);
            ok(elementwise::where_backward(
                None,
                &cond,
                &a,
                &b,
                &dy,
                [Grad::Into(&pa), Grad::Into(&pb)],
            ))?;
            let (cv, dyv) = (values(&cond)?, values(&dy)?);
            let ic = bcast_index(sc, &shape);
            let fa: Vec<f64> = (0..dyv.len())
                .map(|k| if cv[ic[k]] != 0.0 { dyv[k] } else { 0.0 })
                .collect();
            let fb: Vec<f64> = (0..dyv.len())
                .map(|k| if cv[ic[k]] != 0.0 { 0.0 } else { dyv[k] })
                .collect();
            let tol = rtol(dt) * 20.0;
            let what = format!("where_backward {sc:?} {sa:?} {sb:?} {dt}");
            assert_close(
                &format!("{what} da"),
                &values(&pa)?,
                &sum_to_ref(&fa, sa, &shape),
                tol,
                tol,
            )?;
            assert_close(
                &format!("{what} db"),
                &values(&pb)?,
                &sum_to_ref(&fb, sb, &shape),
                tol,
                tol,
            )?;
            let [da, db] = ok(elementwise::where_backward(
                None,
                &cond,
                &a,
                &b,
                &dy,
                [Grad::Skip, Grad::New],
            ))?;
            ensure(da.is_none() && db.is_some(), "where_backward: skip/new")?;
        }
    }
    let cond = ok(Tensor::zeros(dev.clone(), &[2], DType::Bool))?;
    let a = randn(dev, &[2], DType::F32, 1)?;
    let dy = randn(dev, &[3], DType::F32, 1)?;
    expect_err(
        elementwise::where_backward(None, &cond, &a, &a, &dy, [Grad::New, Grad::New]),
        ErrorKind::ShapeMismatch,
        "where_backward",
    )?;
    expect_err(
        elementwise::where_backward(None, &a, &a, &a, &a, [Grad::New, Grad::New]),
        ErrorKind::DtypeMismatch,
        "where_backward",
    )?;
    Ok(())
}

/// `rb_add_scaled` / `rb_sub_scaled` (`torch.add(a, b, alpha=)`) with broadcasting in every
/// float dtype and i32/i64, NaN propagation with alpha 0, and their backwards.
fn add_sub_alpha(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[2, 3], &[2, 3]),
        (&[4, 1], &[3]),
        (&[3], &[2, 3]),
        (&[0, 3], &[3]),
        (&[], &[5]),
        (&[1001], &[1001]),
    ];
    for op in [BinaryOp::Add, BinaryOp::Sub] {
        let sign = if op == BinaryOp::Add { 1.0 } else { -1.0 };
        for dt in [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64] {
            let alphas: &[f64] = if dt.is_int() {
                &[1.0, 3.0, -2.0, 0.0]
            } else {
                &[1.0, 2.5, -0.5, 0.0, 1e-3]
            };
            for (i, (sa, sb)) in cases.iter().enumerate() {
                for &alpha in alphas {
                    let (shape, _) = ok(BroadcastLayout::new(&[sa, sb]))?;
                    let a = tensor_of(
                        dev,
                        &values(&randn(dev, sa, DType::F32, 5 + i as u64)?)?,
                        sa,
                        dt,
                    )?;
                    let b = tensor_of(
                        dev,
                        &values(&randn(dev, sb, DType::F32, 15 + i as u64)?)?,
                        sb,
                        dt,
                    )?;
                    let out = poisoned(dev, &shape, dt)?;
                    ok(elementwise::add_scaled(None, op, &a, &b, alpha, Some(&out)))?;
                    let (av, bv) = (values(&a)?, values(&b)?);
                    let (ia, ib) = (bcast_index(sa, &shape), bcast_index(sb, &shape));
                    let want: Vec<f64> = (0..ia.len())
                        .map(|k| round_to(dt, av[ia[k]] + sign * alpha * bv[ib[k]]))
                        .collect();
                    let tol = if dt.is_int() { 0.0 } else { rtol(dt) };
                    assert_close(
                        &format!("{}_scaled {sa:?} {sb:?} alpha {alpha} {dt}", op.name()),
                        &values(&out)?,
                        &want,
                        tol,
                        tol,
                    )?;
                    if dt.is_int() {
                        continue;
                    }
                    let dy = randn(dev, &shape, dt, 25 + i as u64)?;
                    let (pa, pb) = (poisoned(dev, sa, dt)?, poisoned(dev, sb, dt)?);
                    ok(elementwise::add_scaled_backward(
                        None,
                        op,
                        &a,
                        &b,
                        &dy,
                        alpha,
                        Some(&pa),
                        Some(&pb),
                    ))?;
                    let dyv = values(&dy)?;
                    let scaled: Vec<f64> = dyv.iter().map(|g| sign * alpha * g).collect();
                    let tol = rtol(dt) * 20.0;
                    let what = format!(
                        "{}_scaled_backward {sa:?} {sb:?} alpha {alpha} {dt}",
                        op.name()
                    );
                    assert_close(
                        &format!("{what} da"),
                        &values(&pa)?,
                        &sum_to_ref(&dyv, sa, &shape),
                        tol,
                        tol,
                    )?;
                    assert_close(
                        &format!("{what} db"),
                        &values(&pb)?,
                        &sum_to_ref(&scaled, sb, &shape),
                        tol,
                        tol,
                    )?;
                }
            }
        }
    }
    // alpha 0 still propagates NaN and infinity from b (torch computes a + 0 * b).
    let a = from_f64(dev, &[1.0, 2.0, 3.0], &[3], DType::F32)?;
    let b = from_f64(dev, &[f64::NAN, f64::INFINITY, 4.0], &[3], DType::F32)?;
    let o = ok(elementwise::add_scaled(
        None,
        BinaryOp::Add,
        &a,
        &b,
        0.0,
        None,
    ))?;
    assert_close(
        "add alpha 0 NaN",
        &values(&o)?,
        &[f64::NAN, f64::NAN, 3.0],
        0.0,
        0.0,
    )?;
    // In place into a.
    let a = from_f64(dev, &[1.0, 2.0], &[2], DType::F32)?;
    let b = from_f64(dev, &[10.0, 20.0], &[2], DType::F32)?;
    ok(elementwise::add_scaled(
        None,
        BinaryOp::Sub,
        &a,
        &b,
        0.5,
        Some(&a),
    ))?;
    assert_close("sub alpha in place", &values(&a)?, &[-4.0, -8.0], 0.0, 0.0)?;
    // Integer tensors need an integral alpha that fits.
    let ai = ok(Tensor::zeros(dev.clone(), &[2], DType::I32))?;
    expect_err(
        elementwise::add_scaled(None, BinaryOp::Add, &ai, &ai, 0.5, None),
        ErrorKind::InvalidArgument,
        "add_scaled",
    )?;
    expect_err(
        elementwise::add_scaled(None, BinaryOp::Sub, &ai, &ai, 1e10, None),
        ErrorKind::InvalidArgument,
        "sub_scaled",
    )?;
    expect_err(
        elementwise::add_scaled(None, BinaryOp::Add, &a, &a, f64::NAN, None),
        ErrorKind::InvalidArgument,
        "add_scaled",
    )?;
    Ok(())
}

/// The activations and rounding ops of exported models at their kinks and special values,
/// against values PyTorch gives (torch 2.x, f32), in every float dtype; the C exports with
/// their attributes; celu's alpha = 0 refused.
fn activation_edges_torch_values(dev: &Dev) -> TestResult {
    use rocm_backend::ffi::eager::{rb_celu, rb_leaky_relu_backward, rb_softplus};
    use rocm_backend::ffi::handles::register;
    use rocm_backend::ffi::rb_status;
    use rocm_backend::ffi::tensor::rb_tensor;
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let xs = [-3.0, -2.5, -0.5, 0.0, 0.5, 1.5, 2.5, 3.0, nan, inf, -inf];
    // (op, forward, gradient for dy = 1)
    #[allow(clippy::type_complexity)]
    let cases: &[(UnaryOp, [f64; 11], [f64; 11])] = &[
        (
            UnaryOp::LeakyRelu { slope: 0.01 },
            [
                -0.03, -0.025, -0.005, 0.0, 0.5, 1.5, 2.5, 3.0, nan, inf, -inf,
            ],
            [0.01, 0.01, 0.01, 0.01, 1.0, 1.0, 1.0, 1.0, 0.01, 1.0, 0.01],
        ),
        (
            UnaryOp::Hardsigmoid,
            [
                0.0,
                1.0 / 12.0,
                5.0 / 12.0,
                0.5,
                7.0 / 12.0,
                0.75,
                11.0 / 12.0,
                1.0,
                nan,
                1.0,
                0.0,
            ],
            [
                0.0,
                1.0 / 6.0,
                1.0 / 6.0,
                1.0 / 6.0,
                1.0 / 6.0,
                1.0 / 6.0,
                1.0 / 6.0,
                0.0,
                0.0,
                0.0,
                0.0,
            ],
        ),
        (
            UnaryOp::Round,
            [-3.0, -2.0, -0.0, 0.0, 0.0, 2.0, 2.0, 3.0, nan, inf, -inf],
            [0.0; 11],
        ),
        (
            UnaryOp::Floor,
            [-3.0, -3.0, -1.0, 0.0, 0.0, 1.0, 2.0, 3.0, nan, inf, -inf],
            [0.0; 11],
        ),
        (
            UnaryOp::Ceil,
            [-3.0, -2.0, -0.0, 0.0, 1.0, 2.0, 3.0, 3.0, nan, inf, -inf],
            [0.0; 11],
        ),
        (
            UnaryOp::Sign,
            [-1.0, -1.0, -1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 1.0, -1.0],
            [0.0; 11],
        ),
        (
            UnaryOp::Elu { alpha: 1.0 },
            [
                -0.950_212_931_632_136,
                -0.917_915_001_376_101,
                -0.393_469_340_287_366_6,
                0.0,
                0.5,
                1.5,
                2.5,
                3.0,
                nan,
                inf,
                -1.0,
            ],
            // elu_backward at 0 takes the x <= 0 branch: alpha * exp(0) = 1.
            [
                0.049_787_068_367_863_944,
                0.082_084_998_623_898_8,
                0.606_530_659_712_633_4,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0,
                1.0, // NaN is not <= 0: dy * poscoef, as PyTorch
                1.0,
                0.0,
            ],
        ),
        (
            UnaryOp::Reciprocal,
            [
                -1.0 / 3.0,
                -0.4,
                -2.0,
                inf,
                2.0,
                2.0 / 3.0,
                0.4,
                1.0 / 3.0,
                nan,
                0.0,
                -0.0,
            ],
            [
                -1.0 / 9.0,
                -0.16,
                -4.0,
                -inf,
                -4.0,
                -4.0 / 9.0,
                -0.16,
                -1.0 / 9.0,
                nan,
                -0.0,
                -0.0,
            ],
        ),
    ];
    for dt in FLOATS {
        let x = from_f64(dev, &xs, &[11], dt)?;
        let ones = from_f64(dev, &[1.0; 11], &[11], dt)?;
        for (op, fwd, grad) in cases {
            let want: Vec<f64> = fwd.iter().map(|&v| round_to(dt, v)).collect();
            let got = values(&ok(elementwise::unary(None, *op, &x, None))?)?;
            assert_close_dtype(&format!("{op:?} {dt} at kinks"), &got, &want, dt)?;
            let want: Vec<f64> = grad.iter().map(|&v| round_to(dt, v)).collect();
            let got = values(&ok(elementwise::unary_backward(
                None, *op, &x, &ones, None,
            ))?)?;
            assert_close_dtype(&format!("{op:?}_backward {dt} at kinks"), &got, &want, dt)?;
        }
        // NaN propagates through every activation but sign (0) and the gradient-free ones.
        for op in UNARY {
            let got = values(&ok(elementwise::unary(None, op, &x, None))?)?;
            ensure(
                got[8].is_nan() != (op == UnaryOp::Sign),
                format!("{op:?} {dt}: NaN gives {}", got[8]),
            )?;
        }
    }
    // Attributes refused as PyTorch refuses them.
    let x = randn(dev, &[6], DType::F32, 3)?;
    let e = elementwise::unary(None, UnaryOp::Celu { alpha: 0.0 }, &x, None).unwrap_err();
    ensure(
        e.kind == ErrorKind::InvalidArgument && e.message.contains("alpha"),
        format!("celu alpha 0: {e:?}"),
    )?;
    let e =
        elementwise::unary_backward(None, UnaryOp::Celu { alpha: 0.0 }, &x, &x, None).unwrap_err();
    ensure(
        e.kind == ErrorKind::InvalidArgument,
        "celu_backward alpha 0",
    )?;
    let xi = ok(Tensor::zeros(dev.clone(), &[3], DType::I64))?;
    expect_err(
        elementwise::unary(None, UnaryOp::Mish, &xi, None),
        ErrorKind::DtypeMismatch,
        "mish",
    )?;
    // The C exports carry their attributes.
    let x = randn(dev, &[4, 5], DType::F32, 9)?;
    let vx = values(&x)?;
    let hx = register(x.clone()) as *mut rb_tensor;
    // SAFETY: valid handles and out-pointers.
    unsafe {
        let mut out: *mut rb_tensor = std::ptr::null_mut();
        ensure(
            rb_softplus(std::ptr::null_mut(), hx, 2.0, 0.5, &mut out) == rb_status::Success,
            "rb_softplus",
        )?;
        let got = rocm_backend::ffi::handles::get::<Tensor>(out as *const _, "out").unwrap();
        let op = UnaryOp::Softplus {
            beta: 2.0,
            threshold: 0.5,
        };
        let want: Vec<f64> = vx
            .iter()
            .map(|&v| round_to(DType::F32, op.reference(v)))
            .collect();
        assert_close_dtype("rb_softplus", &values(&got)?, &want, DType::F32)?;
        rocm_backend::ffi::tensor::rb_tensor_destroy(out);
        let mut out: *mut rb_tensor = std::ptr::null_mut();
        ensure(
            rb_celu(std::ptr::null_mut(), hx, 0.0, &mut out) == rb_status::InvalidArgument,
            "rb_celu alpha 0",
        )?;
        ensure(out.is_null(), "out written on failure")?;
        ensure(
            rb_leaky_relu_backward(std::ptr::null_mut(), hx, hx, 0.25, &mut out)
                == rb_status::Success,
            "rb_leaky_relu_backward",
        )?;
        let got = rocm_backend::ffi::handles::get::<Tensor>(out as *const _, "out").unwrap();
        let want: Vec<f64> = vx
            .iter()
            .map(|&v| round_to(DType::F32, if v > 0.0 { v } else { 0.25 * v }))
            .collect();
        assert_close_dtype("rb_leaky_relu_backward", &values(&got)?, &want, DType::F32)?;
        rocm_backend::ffi::tensor::rb_tensor_destroy(out);
        rocm_backend::ffi::tensor::rb_tensor_destroy(hx);
    }
    Ok(())
}

/// prelu and its backward against float64 loops: per-channel and single weights, 1-D to 4-D
/// inputs, empty inputs, NaN, every float dtype; the weight gradient also against finite
/// differences; misuse.
fn prelu_forward_backward(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], usize)] = &[
        (&[2, 3, 4, 5], 3),
        (&[2, 3, 4, 5], 1),
        (&[7, 5], 5),
        (&[9], 1),
        (&[], 1),
        (&[3, 130, 33], 130),
        (&[0, 4, 2], 4),
        (&[2, 4, 0], 4),
    ];
    for dt in FLOATS {
        for (k, &(shape, c)) in cases.iter().enumerate() {
            let seed = 300 + 3 * k as u64;
            let x = randn(dev, shape, dt, seed)?;
            let w = randn(dev, &[c], dt, seed + 1)?;
            let dy = randn(dev, shape, dt, seed + 2)?;
            let (vx, vw, vd) = (values(&x)?, values(&w)?, values(&dy)?);
            let inner: usize = shape.iter().skip(2).product();
            let chan = |i: usize| if c == 1 { 0 } else { (i / inner) % c };
            let what = format!("prelu {shape:?} c={c} {dt}");
            let out = poisoned(dev, shape, dt)?;
            ok(elementwise::prelu(None, &x, &w, Some(&out)))?;
            let want: Vec<f64> = (0..vx.len())
                .map(|i| {
                    round_to(
                        dt,
                        if vx[i] > 0.0 {
                            vx[i]
                        } else {
                            vw[chan(i)] * vx[i]
                        },
                    )
                })
                .collect();
            assert_close_dtype(&what, &values(&out)?, &want, dt)?;
            let (dx, dw) = ok(elementwise::prelu_backward(None, &x, &w, &dy, None, None))?;
            ensure(
                dw.shape() == [c],
                format!("{what}: dweight shape {:?}", dw.shape()),
            )?;
            let want_dx: Vec<f64> = (0..vx.len())
                .map(|i| {
                    round_to(
                        dt,
                        if vx[i] > 0.0 {
                            vd[i]
                        } else {
                            vw[chan(i)] * vd[i]
                        },
                    )
                })
                .collect();
            assert_close_dtype(&format!("{what} dx"), &values(&dx)?, &want_dx, dt)?;
            let mut want_dw = vec![0.0; c];
            for i in 0..vx.len() {
                if vx[i] <= 0.0 {
                    want_dw[chan(i)] += vx[i] * vd[i];
                }
            }
            // A sum of many rounded products: the reduction tolerance.
            let tol = if dt == DType::F32 { 1e-4 } else { 3e-2 };
            assert_close(
                &format!("{what} dweight"),
                &values(&dw)?,
                &want_dw,
                tol,
                tol,
            )?;
            // dweight against central differences of the float64 forward.
            if dt == DType::F32 && !vx.is_empty() {
                for (j, &g) in want_dw.iter().enumerate() {
                    let h = 1e-6;
                    let f = |wj: f64| -> f64 {
                        (0..vx.len())
                            .map(|i| {
                                let wv = if chan(i) == j { wj } else { vw[chan(i)] };
                                vd[i] * if vx[i] > 0.0 { vx[i] } else { wv * vx[i] }
                            })
                            .sum()
                    };
                    let fd = (f(vw[j] + h) - f(vw[j] - h)) / (2.0 * h);
                    ensure(
                        (fd - g).abs() <= 1e-6 + 1e-6 * g.abs(),
                        format!("{what}: dweight[{j}] {g}, finite difference {fd}"),
                    )?;
                }
            }
        }
    }
    // NaN propagates into the output, dx and the weight gradient (x * dy, as PyTorch).
    let x = from_f64(dev, &[f64::NAN, 1.0, -2.0, 0.0], &[1, 2, 2], DType::F32)?;
    let w = from_f64(dev, &[0.5, 0.25], &[2], DType::F32)?;
    let dy = from_f64(dev, &[1.0, 1.0, 1.0, 1.0], &[1, 2, 2], DType::F32)?;
    let got = values(&ok(elementwise::prelu(None, &x, &w, None))?)?;
    assert_close("prelu NaN", &got, &[f64::NAN, 1.0, -0.5, 0.0], 0.0, 0.0)?;
    let (dx, dw) = ok(elementwise::prelu_backward(None, &x, &w, &dy, None, None))?;
    assert_close(
        "prelu dx NaN",
        &values(&dx)?,
        &[0.5, 1.0, 0.25, 0.25],
        0.0,
        0.0,
    )?;
    assert_close("prelu dw NaN", &values(&dw)?, &[f64::NAN, -2.0], 0.0, 0.0)?;
    // Misuse: a weight per channel of the wrong count, a 2-D weight, mixed dtypes, integers.
    let x = randn(dev, &[2, 3, 4], DType::F32, 1)?;
    for (w, kind) in [
        (randn(dev, &[4], DType::F32, 2)?, ErrorKind::ShapeMismatch),
        (
            randn(dev, &[3, 1], DType::F32, 2)?,
            ErrorKind::ShapeMismatch,
        ),
        (randn(dev, &[3], DType::F16, 2)?, ErrorKind::DtypeMismatch),
    ] {
        expect_err(elementwise::prelu(None, &x, &w, None), kind, "prelu")?;
        expect_err(
            elementwise::prelu_backward(None, &x, &w, &x, None, None),
            kind,
            "prelu_backward",
        )?;
    }
    let xi = ok(Tensor::zeros(dev.clone(), &[2, 3], DType::I32))?;
    let wi = ok(Tensor::zeros(dev.clone(), &[3], DType::I32))?;
    expect_err(
        elementwise::prelu(None, &xi, &wi, None),
        ErrorKind::DtypeMismatch,
        "prelu",
    )?;
    let w = randn(dev, &[3], DType::F32, 2)?;
    let bad_dy = randn(dev, &[2, 3], DType::F32, 2)?;
    expect_err(
        elementwise::prelu_backward(None, &x, &w, &bad_dy, None, None),
        ErrorKind::ShapeMismatch,
        "prelu_backward",
    )?;
    Ok(())
}
