//! f16/bf16 fast paths (issue 13): the 8-halves-per-thread unary, binary (same-shape, scalar
//! and trailing-broadcast operands), unary-backward and f32 <-> half cast kernels, at sizes
//! around the vector width and with misaligned pointers (the scalar fallbacks), against the
//! CPU device within DESIGN §8's tolerances; the casts exactly (NaN, infinities, subnormals);
//! the matrix-vector GEMM path against float64; TF32 off by default and inside a scope.

use crate::common::*;
use crate::pointwise::{BINARY, UNARY};
use libtest_mimic::Failed;
use rocm_backend::device::DevPtr;
use rocm_backend::ops::elementwise::UnaryOp;
use rocm_backend::runtime::{DType, Tensor, data, elementwise};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("half_unary_vector_sizes", half_unary_vector_sizes),
        (
            "half_binary_broadcast_periods",
            half_binary_broadcast_periods,
        ),
        ("unary_backward_vector_sizes", unary_backward_vector_sizes),
        ("half_casts_exact", half_casts_exact),
        ("half_misaligned_pointers", half_misaligned_pointers),
        ("half_compare_where_sizes", half_compare_where_sizes),
        ("gemv_against_f64", gemv_against_f64),
        ("linear_group_against_f64", linear_group_against_f64),
        (
            "linear_group_norm_against_f64",
            linear_group_norm_against_f64,
        ),
        ("device_graph_linear_add_norm", linear_add_norm_one_pass),
        ("tf32_opt_in_semantics", tf32_opt_in_semantics),
    ]
}

const HALVES: [DType; 2] = [DType::F16, DType::BF16];
/// Around the vector width (8 halves) and a block of them (256 x 8).
const SIZES: [usize; 8] = [1, 7, 8, 9, 2047, 2048, 2055, 70001];

/// Inputs in the op's domain (sqrt/log: positive), on `dev` and the same values on the CPU.
fn input(
    dev: &Dev,
    op: UnaryOp,
    n: usize,
    dt: DType,
    seed: u64,
) -> Result<(Tensor, Tensor), Failed> {
    let mut v = values(&randn(&cpu(), &[n], dt, seed)?)?;
    if matches!(op, UnaryOp::Sqrt | UnaryOp::Log) {
        v.iter_mut().for_each(|x| *x = x.abs() + 0.1);
    }
    Ok((
        from_f64(dev, &v, &[n], dt)?,
        from_f64(&cpu(), &v, &[n], dt)?,
    ))
}

fn half_unary_vector_sizes(dev: &Dev) -> TestResult {
    for dt in HALVES {
        for n in SIZES {
            for op in UNARY {
                let (x, xc) = input(dev, op, n, dt, 70 + n as u64)?;
                let out = poisoned(dev, &[n], dt)?;
                ok(elementwise::unary(None, op, &x, Some(&out)))?;
                let want = values(&ok(elementwise::unary(None, op, &xc, None))?)?;
                assert_close_dtype(&format!("{op:?} {dt} n={n}"), &values(&out)?, &want, dt)?;
            }
        }
    }
    Ok(())
}

fn half_binary_broadcast_periods(dev: &Dev) -> TestResult {
    // Same shape (periods n), scalar (1), bias rows of 8 and 24 (vector path), rows of 5
    // and a column (the broadcast kernel), either side.
    let cases: &[(&[usize], &[usize])] = &[
        (&[2055], &[2055]),
        (&[16], &[16]),
        (&[3, 700], &[1]),
        (&[1], &[3, 700]),
        (&[300, 8], &[8]),
        (&[24], &[40, 24]),
        (&[2, 9, 24], &[9, 24]),
        (&[33, 5], &[5]),
        (&[33, 8], &[33, 1]),
    ];
    for dt in HALVES {
        for (k, (sa, sb)) in cases.iter().enumerate() {
            let seed = 90 + k as u64;
            let va = values(&randn(&cpu(), sa, dt, seed)?)?;
            let vb: Vec<f64> = values(&randn(&cpu(), sb, dt, seed + 1)?)?
                .iter()
                .map(|x| x.abs() + 0.5)
                .collect();
            let (a, b) = (from_f64(dev, &va, sa, dt)?, from_f64(dev, &vb, sb, dt)?);
            let (ac, bc) = (
                from_f64(&cpu(), &va, sa, dt)?,
                from_f64(&cpu(), &vb, sb, dt)?,
            );
            for op in BINARY {
                let got = ok(elementwise::binary(None, op, &a, &b, None))?;
                let want = ok(elementwise::binary(None, op, &ac, &bc, None))?;
                ensure(
                    got.shape() == want.shape(),
                    format!("{op:?} {sa:?} {sb:?}: shape"),
                )?;
                assert_close_dtype(
                    &format!("{op:?} {dt} {sa:?} {sb:?}"),
                    &values(&got)?,
                    &values(&want)?,
                    dt,
                )?;
            }
        }
    }
    Ok(())
}

fn unary_backward_vector_sizes(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for n in [1usize, 3, 4, 5, 8, 9, 1031, 70001] {
            for op in UNARY {
                let (x, xc) = input(dev, op, n, dt, 110 + n as u64)?;
                let vd = values(&randn(&cpu(), &[n], dt, 111)?)?;
                let (dy, dyc) = (
                    from_f64(dev, &vd, &[n], dt)?,
                    from_f64(&cpu(), &vd, &[n], dt)?,
                );
                let dx = poisoned(dev, &[n], dt)?;
                ok(elementwise::unary_backward(None, op, &x, &dy, Some(&dx)))?;
                let want = values(&ok(elementwise::unary_backward(None, op, &xc, &dyc, None))?)?;
                assert_close_dtype(&format!("{op:?}_bwd {dt} n={n}"), &values(&dx)?, &want, dt)?;
            }
        }
    }
    Ok(())
}

fn half_casts_exact(dev: &Dev) -> TestResult {
    for n in [1usize, 7, 8, 9, 4101] {
        let mut v = values(&randn(&cpu(), &[n], DType::F32, 130 + n as u64)?)?;
        // Specials on the vector path and in the tail: NaN, infinities, the half overflow
        // and tie boundaries, f16 subnormals and values below them, signed zero.
        let specials = [
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            65504.0,
            65520.0,
            -65536.0,
            1.0 + 1.0 / 2048.0,
            1.0 + 3.0 / 2048.0,
            6.0e-8,
            3.0e-8,
            2.9802322387695312e-8,
            1.0e-40,
            -0.0,
            3.0e38,
        ];
        for (i, s) in specials.iter().enumerate() {
            if i * 3 < n {
                v[i * 3] = *s;
            }
        }
        let x = from_f64(dev, &v, &[n], DType::F32)?;
        for dt in HALVES {
            let h = ok(data::cast(None, &x, dt, None))?;
            let want: Vec<f64> = v.iter().map(|&e| round_to(dt, e as f32 as f64)).collect();
            let got = values(&h)?;
            for i in 0..n {
                let same = (got[i].is_nan() && want[i].is_nan())
                    || (got[i] == want[i]
                        && got[i].is_sign_negative() == want[i].is_sign_negative());
                ensure(
                    same,
                    format!(
                        "cast f32->{dt} n={n} [{i}]: {} got {}, expected {}",
                        v[i], got[i], want[i]
                    ),
                )?;
            }
            let back = values(&ok(data::cast(None, &h, DType::F32, None))?)?;
            for i in 0..n {
                let same = (back[i].is_nan() && got[i].is_nan()) || back[i] == got[i];
                ensure(
                    same,
                    format!(
                        "cast {dt}->f32 n={n} [{i}]: got {}, expected {}",
                        back[i], got[i]
                    ),
                )?;
            }
        }
    }
    Ok(())
}

/// Pointers 2 bytes past a 16-byte boundary: the scalar kernels, same results.
fn half_misaligned_pointers(dev: &Dev) -> TestResult {
    let n = 1029usize;
    for dt in HALVES {
        let x = randn(dev, &[n + 1], dt, 150)?;
        let y = randn(dev, &[n + 1], dt, 151)?;
        let out = poisoned(dev, &[n + 1], dt)?;
        let s = Default::default();
        let off = |p: DevPtr| p.offset(dt.size());
        let (vx, vy) = (values(&x)?, values(&y)?);
        ok(dev.unary(s, UnaryOp::Silu, dt, off(x.ptr()), off(out.ptr()), n))?;
        ok(dev.synchronize())?;
        let want: Vec<f64> = vx[1..]
            .iter()
            .map(|&v| round_to(dt, UnaryOp::Silu.reference(v)))
            .collect();
        assert_close_dtype(
            &format!("silu {dt} misaligned"),
            &values(&out)?[1..],
            &want,
            dt,
        )?;
        let layout = ok(rocm_backend::base::shape::BroadcastLayout::new(&[
            &[n],
            &[n],
        ]))?
        .1;
        ok(dev.binary(
            s,
            rocm_backend::ops::elementwise::BinaryOp::Mul,
            dt,
            off(x.ptr()),
            off(y.ptr()),
            off(out.ptr()),
            &layout,
        ))?;
        ok(dev.synchronize())?;
        let want: Vec<f64> = (1..=n).map(|i| round_to(dt, vx[i] * vy[i])).collect();
        assert_close_dtype(
            &format!("mul {dt} misaligned"),
            &values(&out)?[1..],
            &want,
            dt,
        )?;
    }
    Ok(())
}

/// The matrix-vector path of GEMM (n <= 8 columns, A transposed: linear at batch 1-8) and the
/// BLAS beside it (n = 9), against a float64 reference: vector and scalar kernels (lda not a
/// multiple of the vector width), one and several warps per row, alpha and beta.
fn gemv_against_f64(dev: &Dev) -> TestResult {
    use rocm_backend::device::{GemmDesc, Transpose};
    let cases: &[(usize, usize, usize, usize)] = &[
        // (m, k, n, lda)
        (1, 1, 1, 1),
        (37, 13, 3, 13),
        (64, 256, 8, 256),
        (130, 1000, 5, 1000),
        (1031, 264, 1, 264),
        (50, 16, 2, 17),
        (40, 64, 9, 64),
        (8, 5000, 2, 5000),
        (256, 3000, 4, 3000),
        (200, 2999, 1, 3001),
        // Several warps per row (kernels/blas.hip's split), with a last block whose later
        // row groups fall past m.
        (37, 1104, 2, 1104),
        (1031, 4104, 3, 4104),
    ];
    for dt in FLOATS {
        for (ci, &(m, k, n, lda)) in cases.iter().enumerate() {
            for (alpha, beta) in [(1.0f32, 0.0f32), (0.5, 2.0)] {
                let seed = 200 + ci as u64;
                let a = randn(dev, &[m, lda], dt, seed)?;
                let b = randn(dev, &[n, k], dt, seed + 1)?;
                let c = randn(dev, &[n, m], dt, seed + 2)?;
                let (va, vb, vc) = (values(&a)?, values(&b)?, values(&c)?);
                let d = GemmDesc {
                    dtype: dt,
                    trans_a: Transpose::Yes,
                    trans_b: Transpose::No,
                    m,
                    n,
                    k,
                    alpha,
                    a: a.ptr(),
                    lda,
                    b: b.ptr(),
                    ldb: k,
                    beta,
                    c: c.ptr(),
                    ldc: m,
                    batch: 1,
                    stride_a: 0,
                    stride_b: 0,
                    stride_c: 0,
                };
                ok(dev.gemm(Default::default(), &d))?;
                ok(dev.synchronize())?;
                let got = values(&c)?;
                for j in 0..n {
                    for i in 0..m {
                        let (mut s, mut sa) = (0.0f64, 0.0f64);
                        for kk in 0..k {
                            let p = va[i * lda + kk] * vb[j * k + kk];
                            s += p;
                            sa += p.abs();
                        }
                        let old = if beta == 0.0 {
                            0.0
                        } else {
                            beta as f64 * vc[j * m + i]
                        };
                        let want = alpha as f64 * s + old;
                        let scale = alpha.abs() as f64 * sa + old.abs();
                        let g = got[j * m + i];
                        let tol = match dt {
                            DType::F32 => 1e-5 * scale + 1e-6,
                            _ => rtol(dt) * want.abs() + 2e-3 * scale + 1e-3,
                        };
                        ensure(
                            (g - want).abs() <= tol,
                            format!(
                                "gemm {dt} m={m} k={k} n={n} lda={lda} alpha={alpha} beta={beta} C[{i},{j}]: got {g}, expected {want}"
                            ),
                        )?;
                    }
                }
            }
        }
    }
    Ok(())
}

/// The executor's grouped decode products (`runtime::blas::linear_group`: the grouped
/// matrix-vector kernel on GPUs, the unfused ops elsewhere) against a float64 reference:
/// one to three weights of different rows (an empty one among them) with and without
/// residuals, the SwiGLU gate, vector and scalar kernels (k a multiple of the vector width
/// or not), one and several warps per row; the results written into poisoned tensors; bad
/// groups answered with a status.
fn linear_group_against_f64(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::blas::linear_group;
    // (rows of each weight, k, glu, which products get a residual)
    let cases: &[(&[usize], usize, bool, &[bool])] = &[
        (&[37], 13, false, &[true]),
        (&[100, 37, 260], 264, false, &[true, false, true]),
        (&[9, 0, 300], 4096, false, &[false, false, false]),
        (&[1031, 64], 4104, false, &[false, true]),
        // a k of one round per warp, three weights of odd rows
        (&[37, 263, 6], 4096, false, &[true, false, true]),
        (&[64, 64], 1000, true, &[]),
        (&[130, 130], 13, true, &[]),
        (&[257, 257], 4096, true, &[]),
        (&[3], 1, false, &[false]),
    ];
    for dt in FLOATS {
        for (ci, &(rows, k, glu, res)) in cases.iter().enumerate() {
            let seed = 900 + 10 * ci as u64;
            let x = randn(dev, &[1, 1, k], dt, seed)?;
            let vx = values(&x)?;
            let mut ws = vec![];
            let mut rs = vec![];
            for (i, &m) in rows.iter().enumerate() {
                ws.push(randn(dev, &[m, k], dt, seed + 1 + i as u64)?);
                rs.push(if res.get(i).copied().unwrap_or(false) {
                    Some(randn(dev, &[1, 1, m], dt, seed + 5 + i as u64)?)
                } else {
                    None
                });
            }
            let n_out = if glu { 1 } else { rows.len() };
            let outs = (0..n_out)
                .map(|i| poisoned(dev, &[1, 1, rows[i]], dt))
                .collect::<Result<Vec<_>, _>>()?;
            let wr: Vec<&Tensor> = ws.iter().collect();
            let rr: Vec<Option<&Tensor>> = rs.iter().map(|r| r.as_ref()).collect();
            let or: Vec<Option<&Tensor>> = outs.iter().map(Some).collect();
            let ys = ok(linear_group(None, &x, &wr, &rr, glu, &or))?;
            ok(dev.synchronize())?;
            ensure(
                ys.len() == n_out,
                format!("linear_group: {} results", ys.len()),
            )?;
            // dot and sum of |terms| of weight i's row j
            let dot = |i: usize, j: usize, vw: &[f64]| -> (f64, f64) {
                let (mut s, mut sa) = (0.0, 0.0);
                for kk in 0..k {
                    let p = vw[j * k + kk] * vx[kk];
                    s += p;
                    sa += p.abs();
                }
                let _ = i;
                (s, sa)
            };
            let vws = ws.iter().map(values).collect::<Result<Vec<_>, _>>()?;
            let tol = |want: f64, scale: f64| match dt {
                DType::F32 => 1e-5 * scale + 1e-5 * want.abs() + 1e-6,
                _ => rtol(dt) * want.abs() + 4e-3 * scale + 1e-3,
            };
            if glu {
                let got = values(&outs[0])?;
                for (j, &gj) in got.iter().enumerate().take(rows[0]) {
                    let (g, sg) = dot(0, j, &vws[0]);
                    let (u, su) = dot(1, j, &vws[1]);
                    let sig = 1.0 / (1.0 + (-g).exp());
                    let want = g * sig * u;
                    let scale = sg * u.abs().max(1.0) + su * g.abs().max(1.0);
                    ensure(
                        (gj - want).abs() <= tol(want, scale),
                        format!(
                            "linear_group glu {dt} case {ci} row {j}: got {gj}, expected {want}"
                        ),
                    )?;
                }
                continue;
            }
            for (i, y) in outs.iter().enumerate() {
                let got = values(y)?;
                let vr = rs[i].as_ref().map(values).transpose()?;
                for j in 0..rows[i] {
                    let (d, sa) = dot(i, j, &vws[i]);
                    let r = vr.as_ref().map_or(0.0, |v| v[j]);
                    let want = d + r;
                    ensure(
                        (got[j] - want).abs() <= tol(want, sa + r.abs()),
                        format!(
                            "linear_group {dt} case {ci} product {i} row {j}: got {}, expected {want}",
                            got[j]
                        ),
                    )?;
                }
            }
        }
    }
    // bad groups: a status, nothing written
    let x = randn(dev, &[1, 8], DType::F32, 1)?;
    let w = randn(dev, &[4, 8], DType::F32, 2)?;
    let w3 = randn(dev, &[5, 8], DType::F32, 3)?;
    let r = randn(dev, &[1, 5], DType::F32, 4)?;
    for (what, ws, rs, glu) in [
        ("no weights", vec![], vec![], false),
        ("four weights", vec![&w, &w, &w, &w], vec![], false),
        ("a gate of three", vec![&w, &w, &w], vec![], true),
        ("a gate of unequal weights", vec![&w, &w3], vec![], true),
        (
            "a residual of another shape",
            vec![&w],
            vec![Some(&r)],
            false,
        ),
        ("a weight of another k", vec![&w, &r], vec![], false),
    ] {
        ensure(
            linear_group(None, &x, &ws, &rs, glu, &[]).is_err(),
            format!("linear_group with {what} was accepted"),
        )?;
    }
    Ok(())
}

/// TF32 is opt-in: off (the default) f32 GEMM through the BLAS (n > 8) is exact f32; inside
/// a thread's TF32 scope (what an executor with `allow_tf32` opens) it is within TF32's
/// rounding (10-bit mantissa inputs, f32 accumulation); after the scope, exact again. The
/// scope is the thread's own, so the other tests running beside this one are unaffected.
fn tf32_opt_in_semantics(dev: &Dev) -> TestResult {
    use rocm_backend::device::blas::{tf32_enabled, tf32_scope};
    use rocm_backend::device::{GemmDesc, Transpose};
    let (m, n, k) = (64usize, 48usize, 300usize);
    let a = randn(dev, &[k, m], DType::F32, 300)?;
    let b = randn(dev, &[n, k], DType::F32, 301)?;
    let (va, vb) = (values(&a)?, values(&b)?);
    let run = |tol: f64, what: &str| -> TestResult {
        let c = poisoned(dev, &[n, m], DType::F32)?;
        let d = GemmDesc {
            dtype: DType::F32,
            trans_a: Transpose::No,
            trans_b: Transpose::No,
            m,
            n,
            k,
            alpha: 1.0,
            a: a.ptr(),
            lda: m,
            b: b.ptr(),
            ldb: k,
            beta: 0.0,
            c: c.ptr(),
            ldc: m,
            batch: 1,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
        };
        ok(dev.gemm(Default::default(), &d))?;
        ok(dev.synchronize())?;
        let got = values(&c)?;
        for j in 0..n {
            for i in 0..m {
                let (mut s, mut sa) = (0.0f64, 0.0f64);
                for kk in 0..k {
                    let p = va[kk * m + i] * vb[j * k + kk];
                    s += p;
                    sa += p.abs();
                }
                let g = got[j * m + i];
                ensure(
                    (g - s).abs() <= tol * sa + 1e-6,
                    format!("{what}: C[{i},{j}] = {g}, expected {s}"),
                )?;
            }
        }
        Ok(())
    };
    ensure(!tf32_enabled(), "TF32 is on by default")?;
    run(1e-5, "exact f32 by default")?;
    {
        let _on = tf32_scope(true);
        ensure(tf32_enabled(), "tf32_scope(true) does not enable TF32")?;
        run(2e-3, "TF32")?;
        {
            let _off = tf32_scope(false);
            run(1e-5, "a nested scope turning TF32 off")?;
        }
        ensure(tf32_enabled(), "the nested scope did not restore TF32")?;
    }
    ensure(!tf32_enabled(), "the scope did not restore exact f32")?;
    run(1e-5, "exact f32 after the scope")
}

/// Same-shape f16/bf16 comparisons, where(c, a, b) and where(a op b, x, y) (the 8-wide
/// kernels; ties and NaN included), against the CPU device exactly.
fn half_compare_where_sizes(dev: &Dev) -> TestResult {
    use rocm_backend::ops::elementwise::CompareOp;
    let ops = [
        CompareOp::Eq,
        CompareOp::Ne,
        CompareOp::Lt,
        CompareOp::Le,
        CompareOp::Gt,
        CompareOp::Ge,
    ];
    for dt in HALVES {
        for n in [1usize, 7, 8, 9, 2055, 70001] {
            let va0 = values(&randn(&cpu(), &[n], dt, 170 + n as u64)?)?;
            let mut vb = values(&randn(&cpu(), &[n], dt, 171 + n as u64)?)?;
            let mut va = va0;
            for i in 0..n {
                if i % 7 == 3 {
                    vb[i] = va[i];
                }
                if i % 11 == 5 {
                    va[i] = f64::NAN;
                }
            }
            let on = |d: &Dev, v: &[f64]| from_f64(d, v, &[n], dt);
            let (a, b, ac, bc) = (
                on(dev, &va)?,
                on(dev, &vb)?,
                on(&cpu(), &va)?,
                on(&cpu(), &vb)?,
            );
            for op in ops {
                let got = values(&ok(elementwise::compare(None, op, &a, &b, None))?)?;
                let c = ok(elementwise::compare(None, op, &ac, &bc, None))?;
                let want = values(&c)?;
                ensure(
                    got == want,
                    format!("{op:?} {dt} n={n}: compare differs from the CPU"),
                )?;
                let w = values(&ok(elementwise::where_compare(
                    None, op, &a, &b, &a, &b, None,
                ))?)?;
                let ww = values(&ok(elementwise::where_compare(
                    None, op, &ac, &bc, &ac, &bc, None,
                ))?)?;
                let same = |x: &[f64], y: &[f64]| {
                    x.iter()
                        .zip(y)
                        .all(|(p, q)| p == q || (p.is_nan() && q.is_nan()))
                };
                ensure(
                    same(&w, &ww),
                    format!("where({op:?}) {dt} n={n} (x = a, y = b)"),
                )?;
                let w = values(&ok(elementwise::where_compare(
                    None, op, &a, &b, &b, &a, None,
                ))?)?;
                let ww = values(&ok(elementwise::where_compare(
                    None, op, &ac, &bc, &bc, &ac, None,
                ))?)?;
                ensure(
                    same(&w, &ww),
                    format!("where({op:?}) {dt} n={n} (x = b, y = a)"),
                )?;
                let cd = from_f64(dev, &want, &[n], DType::Bool)?;
                let w = values(&ok(elementwise::where_(None, &cd, &a, &b, None))?)?;
                let ww = values(&ok(elementwise::where_(None, &c, &ac, &bc, None))?)?;
                ensure(same(&w, &ww), format!("where(c) {dt} n={n}"))?;
            }
        }
    }
    Ok(())
}

/// Equal values, NaN equal to NaN (the one pass and the ops round NaN alike).
fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| p == q || (p.is_nan() && q.is_nan()))
}

/// The executor's linear_add + rms_norm in one pass (`BlasOps::gemv_group_norm`: the
/// product's last block normalizes its result): declined outside a device graph (and on the
/// CPU, which has none); inside one, every replay on new inputs gives the bits of the two
/// ops run eagerly (`linear_group`, then `rms_norm`) -- the counter the blocks count in must
/// be back at zero after each. The norm's row plans of 1, 2, 4 and 8 chunks per thread, a
/// row that ends inside a block's chunks (1000), no norm weight, and a NaN in the input.
fn linear_add_norm_one_pass(dev: &Dev) -> TestResult {
    use rocm_backend::device::RawStream;
    use rocm_backend::device::blas::{GemvNorm, GemvPart};
    use rocm_backend::runtime::blas::linear_group;
    use rocm_backend::runtime::norm::rms_norm;
    // (rows n, depth k, with a norm weight)
    let cases: &[(usize, usize, bool)] = &[
        (1024, 64, true),
        (2048, 136, false),
        (4096, 512, true),
        (8192, 64, true),
        (1000, 200, true),
    ];
    let eps = 1e-5;
    for dt in FLOATS {
        for (ci, &(n, k, with_w)) in cases.iter().enumerate() {
            let seed = 1200 + 10 * ci as u64;
            let x = randn(dev, &[1, k], dt, seed)?;
            let w = randn(dev, &[n, k], dt, seed + 1)?;
            let r = randn(dev, &[1, n], dt, seed + 2)?;
            let nw = if with_w {
                Some(randn(dev, &[n], dt, seed + 3)?)
            } else {
                None
            };
            let (y, h) = (poisoned(dev, &[1, n], dt)?, poisoned(dev, &[1, n], dt)?);
            let part = GemvPart {
                w: w.ptr(),
                rows: n,
                y: y.ptr(),
                residual: Some(r.ptr()),
            };
            let norm = GemvNorm {
                w: nw.as_ref().map_or(DevPtr::NULL, |t| t.ptr()),
                eps,
                out: h.ptr(),
            };
            let reference = || -> Result<(Vec<f64>, Vec<f64>), Failed> {
                let yr = ok(linear_group(None, &x, &[&w], &[Some(&r)], false, &[None]))?.remove(0);
                let hr = ok(rms_norm(None, &yr, &[n], nw.as_ref(), eps, None))?;
                Ok((values(&yr)?, values(&hr)?))
            };
            // (also loads the kernels before any capture)
            reference()?;
            let did = ok(dev.gemv_group_norm(RawStream::DEFAULT, dt, x.ptr(), k, &part, &norm))?;
            ensure(
                !did,
                format!("{dt} case {ci}: one pass outside a device graph"),
            )?;
            if dev.kind() == rocm_backend::device::DeviceKind::Cpu {
                continue;
            }
            ok(dev.synchronize())?;
            let s = ok(dev.stream_create())?;
            ok(dev.graph_capture_begin(s))?;
            let did = dev.gemv_group_norm(s, dt, x.ptr(), k, &part, &norm);
            let g = dev.graph_capture_end(s);
            let (did, g) = (ok(did)?, ok(g)?);
            ensure(did, format!("{dt} case {ci}: declined inside a capture"))?;
            for round in 0..3u64 {
                let fresh = randn(dev, &[1, k], dt, seed + 5 + round)?;
                ok(data::copy(None, &fresh, &x))?;
                if round == 2 {
                    // a NaN: the sum and its norm NaN both ways
                    let nan = ok(Tensor::from_f32(dev.clone(), &[f32::NAN], &[1, 1]))?;
                    let nan = ok(data::cast(None, &nan, dt, None))?;
                    let at = ok(Tensor::view_at(&x, 3 * dt.size(), &[1, 1], dt))?;
                    ok(data::copy(None, &nan, &at))?;
                }
                ok(dev.synchronize())?;
                ok(dev.graph_launch(g, s))?;
                ok(dev.stream_synchronize(s))?;
                let (yw, hw) = reference()?;
                let (yg, hg) = (values(&y)?, values(&h)?);
                ensure(
                    same_bits(&yg, &yw),
                    format!("{dt} case {ci} replay {round}: the sum differs from linear_group"),
                )?;
                ensure(
                    same_bits(&hg, &hw),
                    format!(
                        "{dt} case {ci} replay {round}: the norm differs from rms_norm (first: {:?} vs {:?})",
                        &hg[..3],
                        &hw[..3]
                    ),
                )?;
            }
            dev.graph_destroy(g);
            dev.stream_destroy(s);
        }
    }
    Ok(())
}

/// The executor's norm+group node (`runtime::blas::linear_group_norm`: the products of
/// `rms_norm(x) * w`; on GPUs one grouped pass scaling each product's f32 sum by the norm's
/// 1 / sqrt(mean(x²) + eps), elsewhere the norm and then the products) against a float64
/// reference: one to three weights with residuals, the SwiGLU gate, with and without a norm
/// weight, vector and scalar kernels (k a multiple of the vector width or not: the GPU then
/// normalizes first), one and several warps per row; a NaN in x makes every result NaN; a
/// norm weight of the wrong length is a shape error.
fn linear_group_norm_against_f64(dev: &Dev) -> TestResult {
    use rocm_backend::runtime::blas::linear_group_norm;
    // (rows of each weight, k, glu, which products get a residual, a norm weight)
    type Case = (&'static [usize], usize, bool, &'static [bool], bool);
    let cases: &[Case] = &[
        (&[37], 13, false, &[true], true),
        (&[100, 37, 260], 264, false, &[true, false, true], true),
        (&[64], 4096, false, &[false], false),
        (&[1031, 64], 4104, false, &[false, true], true),
        (&[37, 263, 6], 4096, false, &[true, false, true], true),
        (&[257, 257], 4096, true, &[], true),
        (&[130, 130], 1000, true, &[], false),
    ];
    let eps = 1e-5;
    for dt in FLOATS {
        for (ci, &(rows, k, glu, res, with_w)) in cases.iter().enumerate() {
            let seed = 1400 + 10 * ci as u64;
            let x = randn(dev, &[1, 1, k], dt, seed)?;
            let vx = values(&x)?;
            let nw = if with_w {
                Some(randn(dev, &[k], dt, seed + 9)?)
            } else {
                None
            };
            let vnw = nw.as_ref().map(values).transpose()?;
            let ms = vx.iter().map(|v| v * v).sum::<f64>() / k as f64;
            let rs = 1.0 / (ms + eps).sqrt();
            let hn: Vec<f64> = (0..k)
                .map(|i| vx[i] * rs * vnw.as_ref().map_or(1.0, |w| w[i]))
                .collect();
            let mut ws = vec![];
            let mut rsd = vec![];
            for (i, &m) in rows.iter().enumerate() {
                ws.push(randn(dev, &[m, k], dt, seed + 1 + i as u64)?);
                rsd.push(if res.get(i).copied().unwrap_or(false) {
                    Some(randn(dev, &[1, 1, m], dt, seed + 5 + i as u64)?)
                } else {
                    None
                });
            }
            let wr: Vec<&Tensor> = ws.iter().collect();
            let rr: Vec<Option<&Tensor>> = rsd.iter().map(|r| r.as_ref()).collect();
            // (settled: the weights are read before the previous kernel finishes where the
            // device launches early; nothing before the call writes them: the same bits)
            let run = |settled: bool| {
                ok(linear_group_norm(
                    None,
                    &x,
                    Some((nw.as_ref(), eps)),
                    &wr,
                    &rr,
                    glu,
                    &[],
                    settled,
                ))
            };
            let ys = run(false)?;
            for (a, b) in ys.iter().zip(&run(true)?) {
                ensure(
                    same_bits(&values(a)?, &values(b)?),
                    format!("linear_group_norm {dt} case {ci}: settled weights changed the result"),
                )?;
            }
            let vws = ws.iter().map(values).collect::<Result<Vec<_>, _>>()?;
            let dot = |i: usize, j: usize| -> (f64, f64) {
                let (mut s, mut sa) = (0.0, 0.0);
                for kk in 0..k {
                    let p = vws[i][j * k + kk] * hn[kk];
                    s += p;
                    sa += p.abs();
                }
                (s, sa)
            };
            let tol = |want: f64, scale: f64| match dt {
                DType::F32 => 1e-5 * scale + 1e-5 * want.abs() + 1e-6,
                _ => rtol(dt) * want.abs() + 4e-3 * scale + 1e-3,
            };
            if glu {
                let got = values(&ys[0])?;
                for (j, &gj) in got.iter().enumerate() {
                    let ((g, sg), (u, su)) = (dot(0, j), dot(1, j));
                    let want = g / (1.0 + (-g).exp()) * u;
                    let scale = sg * u.abs().max(1.0) + su * g.abs().max(1.0);
                    ensure(
                        (gj - want).abs() <= tol(want, scale),
                        format!(
                            "linear_group_norm glu {dt} case {ci} row {j}: got {gj}, expected {want}"
                        ),
                    )?;
                }
            } else {
                for (i, y) in ys.iter().enumerate() {
                    let got = values(y)?;
                    let vr = rsd[i].as_ref().map(values).transpose()?;
                    for j in 0..rows[i] {
                        let (d, sa) = dot(i, j);
                        let r = vr.as_ref().map_or(0.0, |v| v[j]);
                        ensure(
                            (got[j] - (d + r)).abs() <= tol(d + r, sa + r.abs()),
                            format!(
                                "linear_group_norm {dt} case {ci} product {i} row {j}: got {}, expected {}",
                                got[j],
                                d + r
                            ),
                        )?;
                    }
                }
            }
            // a NaN anywhere in x: every result NaN
            let nan = ok(data::cast(
                None,
                &ok(Tensor::from_f32(dev.clone(), &[f32::NAN], &[1]))?,
                dt,
                None,
            ))?;
            let at = ok(Tensor::view_at(&x, (k / 2) * dt.size(), &[1], dt))?;
            ok(data::copy(None, &nan, &at))?;
            // (settled: the kernel that just wrote x runs before the product may start; x
            // itself is read after the wait)
            let ys = run(true)?;
            for y in &ys {
                ensure(
                    values(y)?.iter().all(|v| v.is_nan()),
                    format!("linear_group_norm {dt} case {ci}: a NaN input left a number"),
                )?;
            }
        }
    }
    let x = randn(dev, &[1, 8], DType::F32, 1)?;
    let w = randn(dev, &[4, 8], DType::F32, 2)?;
    let bad = randn(dev, &[7], DType::F32, 3)?;
    let r = linear_group_norm(
        None,
        &x,
        Some((Some(&bad), 1e-5)),
        &[&w],
        &[None],
        false,
        &[],
        false,
    );
    ensure(
        matches!(&r, Err(e) if e.kind == rocm_backend::ErrorKind::ShapeMismatch),
        format!("a norm weight of 7 for rows of 8: {:?}", r.err()),
    )?;
    Ok(())
}
