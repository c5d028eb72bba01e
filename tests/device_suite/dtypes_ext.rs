//! The dtypes added for exported models (f64, i8, u8, i16): host round trips, fill, cast
//! between every pair of dtypes (values both hold: PyTorch's float -> integer conversion
//! is undefined out of range), the byte-generic data ops, comparisons, `where` and the
//! arithmetic binary ops, against references computed here in f64; and the ops that do not
//! take them answer DTYPE_MISMATCH naming the dtype.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::data::ScatterReduce;
use rocm_backend::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use rocm_backend::runtime::{DType, Tensor, data, elementwise};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("dtypes_ext_host_fill_cast", dtypes_ext_host_fill_cast),
        ("dtypes_ext_data_ops", dtypes_ext_data_ops),
        ("dtypes_ext_compare_arith", dtypes_ext_compare_arith),
        ("dtypes_ext_matmul_f64", dtypes_ext_matmul_f64),
        ("dtypes_ext_unary_f64", dtypes_ext_unary_f64),
        ("dtypes_ext_reduce_f64", dtypes_ext_reduce_f64),
        (
            "dtypes_ext_binary_backward_f64",
            dtypes_ext_binary_backward_f64,
        ),
        ("dtypes_ext_softmax_f64", dtypes_ext_softmax_f64),
        ("dtypes_ext_norm_f64", dtypes_ext_norm_f64),
        ("dtypes_ext_linear_f64", dtypes_ext_linear_f64),
    ]
}

const NEW: [DType; 4] = [DType::F64, DType::I8, DType::U8, DType::I16];

/// Values of `dt` for the tests: in range, with its extremes.
fn sample(dt: DType, n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (((i as u64 + 1) * (seed * 2 + 7) * 2_654_435_761) >> 7) % 251;
            match dt {
                DType::F64 => (h as f64 - 125.0) * 0.37 + 1e-9 * h as f64,
                DType::I8 => h as f64 - 128.0,
                DType::U8 => h as f64,
                DType::I16 => (h as f64 - 125.0) * 131.0,
                DType::Bool => (h % 2) as f64,
                _ => h as f64 - 125.0,
            }
        })
        .collect()
}

pub(crate) fn expect_dtype<T>(r: rocm_backend::Result<T>, dt: DType, what: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("{what} {dt}: succeeded, expected DtypeMismatch").into()),
        Err(e) if e.kind == ErrorKind::DtypeMismatch => ensure(
            e.message.contains(dt.name()),
            format!(
                "{what} {dt}: the message does not name the dtype: {}",
                e.message
            ),
        ),
        Err(e) => Err(format!(
            "{what} {dt}: {:?} ({}), expected DtypeMismatch",
            e.kind, e.message
        )
        .into()),
    }
}

fn dtypes_ext_host_fill_cast(dev: &Dev) -> TestResult {
    // Host round trips with the extremes, bit for bit.
    let extremes: [(DType, Vec<f64>); 4] = [
        (
            DType::F64,
            vec![
                f64::MAX,
                f64::MIN_POSITIVE,
                -0.0,
                1.0 / 3.0,
                f64::NAN,
                f64::NEG_INFINITY,
            ],
        ),
        (DType::I8, vec![-128.0, 127.0, 0.0, -1.0, 5.0, 100.0]),
        (DType::U8, vec![0.0, 255.0, 128.0, 1.0, 200.0, 7.0]),
        (DType::I16, vec![-32768.0, 32767.0, 0.0, -1.0, 1000.0, -2.0]),
    ];
    for (dt, v) in &extremes {
        ensure(
            DType::from_i32(*dt as i32).ok() == Some(*dt),
            format!("{dt} code"),
        )?;
        ensure(
            DType::parse(dt.name()).ok() == Some(*dt),
            format!("{dt} name"),
        )?;
        let t = from_f64(dev, v, &[2, 3], *dt)?;
        ensure(
            t.dtype() == *dt && t.nbytes() == 6 * dt.size(),
            format!("{dt} tensor"),
        )?;
        assert_close(&format!("{dt} round trip"), &values(&t)?, v, 0.0, 0.0)?;
        // fill, and zeros
        let f = poisoned(dev, &[5], *dt)?;
        ok(data::fill(None, &f, v[1]))?;
        assert_close(&format!("{dt} fill"), &values(&f)?, &[v[1]; 5], 0.0, 0.0)?;
        let z = ok(Tensor::zeros(dev.clone(), &[3], *dt))?;
        assert_close(&format!("{dt} zeros"), &values(&z)?, &[0.0; 3], 0.0, 0.0)?;
    }
    // f64 keeps what f32 cannot.
    let t = from_f64(dev, &[1.0 + 1e-12, 1e300], &[2], DType::F64)?;
    let v = values(&t)?;
    ensure(v == [1.0 + 1e-12, 1e300], format!("f64 precision: {v:?}"))?;
    // cast (and copy) between every pair of dtypes, on values both hold.
    let base = [0.0, 1.0, 2.5, -3.75, 100.0, -100.0, 127.0, 3.0];
    for &src in &DType::ALL {
        for &dst in &DType::ALL {
            let ok_for = |d: DType, v: f64| -> bool {
                match d {
                    DType::Bool => v == 0.0 || v == 1.0,
                    DType::U8 => v >= 0.0,
                    d if d.is_integral() => true,
                    _ => true,
                }
            };
            let vals: Vec<f64> = base
                .iter()
                .copied()
                .filter(|&v| ok_for(src, v) && (src.is_floating() || v.fract() == 0.0))
                .filter(|&v| dst == DType::Bool || ok_for(dst, v.trunc()))
                .collect();
            let x = from_f64(dev, &vals, &[vals.len()], src)?;
            let want: Vec<f64> = vals
                .iter()
                .map(|&v| match dst {
                    DType::Bool => f64::from(u8::from(v != 0.0)),
                    d if d.is_integral() => v.trunc(),
                    d => round_to(d, v),
                })
                .collect();
            let what = format!("cast {src} -> {dst}");
            let out = poisoned(dev, &[vals.len()], dst)?;
            let got = ok(data::cast(None, &x, dst, Some(&out)))?;
            assert_close(&what, &values(&got)?, &want, 0.0, 0.0)?;
            let dstt = poisoned(dev, &[vals.len()], dst)?;
            ok(data::copy(None, &x, &dstt))?;
            assert_close(
                &format!("copy {src} -> {dst}"),
                &values(&dstt)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    // Across devices (through the host), dtypes equal.
    for &dt in &NEW {
        let v = sample(dt, 7, 3);
        let x = from_f64(dev, &v, &[7], dt)?;
        let c = ok(x.to_device(cpu()))?;
        assert_close(&format!("{dt} to cpu"), &values(&c)?, &v, 0.0, 0.0)?;
        let back = poisoned(dev, &[7], dt)?;
        ok(data::copy(None, &c, &back))?;
        assert_close(
            &format!("{dt} copy from cpu"),
            &values(&back)?,
            &v,
            0.0,
            0.0,
        )?;
    }
    Ok(())
}

fn dtypes_ext_data_ops(dev: &Dev) -> TestResult {
    for (s, &dt) in NEW.iter().enumerate() {
        let v = sample(dt, 24, s as u64);
        let x = from_f64(dev, &v, &[2, 3, 4], dt)?;
        let at = |i: usize, j: usize, k: usize| v[(i * 3 + j) * 4 + k];
        // reshape (a view) and permute
        let r = ok(x.reshape(&[6, 4]))?;
        assert_close(&format!("{dt} reshape"), &values(&r)?, &v, 0.0, 0.0)?;
        let p = ok(data::permute(None, &x, &[2, 0, 1], None))?;
        let want: Vec<f64> = (0..24).map(|e| at((e / 3) % 2, e % 3, e / 6)).collect();
        assert_close(&format!("{dt} permute"), &values(&p)?, &want, 0.0, 0.0)?;
        // concat along 1
        let c = ok(data::concat(None, &[&x, &x], 1, None))?;
        let want: Vec<f64> = (0..48)
            .map(|e| at(e / 24, (e / 4) % 6 % 3, e % 4))
            .collect();
        assert_close(&format!("{dt} concat"), &values(&c)?, &want, 0.0, 0.0)?;
        // slice with a negative step
        let sl = ok(data::slice(None, &x, 2, 3, i64::MIN, -2, None))?;
        let want: Vec<f64> = (0..12)
            .map(|e| at(e / 6, (e / 2) % 3, 3 - 2 * (e % 2)))
            .collect();
        assert_close(&format!("{dt} slice"), &values(&sl)?, &want, 0.0, 0.0)?;
        // gather and index_select
        let idx = from_f64(
            dev,
            &[3.0, 0.0, -1.0, 1.0, 2.0, 2.0],
            &[1, 3, 2],
            DType::I64,
        )?;
        let g = ok(data::gather(None, &x, 2, &idx, None))?;
        let iv = [3usize, 0, 3, 1, 2, 2];
        let want: Vec<f64> = (0..6).map(|e| at(0, e / 2, iv[e])).collect();
        assert_close(&format!("{dt} gather"), &values(&g)?, &want, 0.0, 0.0)?;
        let i1 = from_f64(dev, &[2.0, 0.0], &[2], DType::I32)?;
        let is = ok(data::index_select(None, &x, 1, &i1, None))?;
        let want: Vec<f64> = (0..16)
            .map(|e| at(e / 8, [2, 0][(e / 4) % 2], e % 4))
            .collect();
        assert_close(
            &format!("{dt} index_select"),
            &values(&is)?,
            &want,
            0.0,
            0.0,
        )?;
        // expand and tile
        let row = from_f64(dev, &v[..4], &[1, 4], dt)?;
        let ex = ok(data::expand(None, &row, &[3, -1], None))?;
        let want: Vec<f64> = (0..12).map(|e| v[e % 4]).collect();
        assert_close(&format!("{dt} expand"), &values(&ex)?, &want, 0.0, 0.0)?;
        let tl = ok(data::tile(None, &row, &[2, 2], None))?;
        let want: Vec<f64> = (0..16).map(|e| v[e % 4]).collect();
        assert_close(&format!("{dt} tile"), &values(&tl)?, &want, 0.0, 0.0)?;
        // constant pad of the last dimension by (1, 2) with 5
        let pd = ok(data::pad(None, &row, &[1, 2], 0, 5.0, None))?;
        let want: Vec<f64> = [5.0, v[0], v[1], v[2], v[3], 5.0, 5.0].to_vec();
        assert_close(&format!("{dt} pad"), &values(&pd)?, &want, 0.0, 0.0)?;
        // where, scatter (reduce none)
        let cond = from_f64(dev, &[1.0, 0.0, 0.0, 1.0], &[4], DType::Bool)?;
        let other = from_f64(dev, &v[4..8], &[4], dt)?;
        let w = ok(elementwise::where_(
            None,
            &cond,
            &from_f64(dev, &v[..4], &[4], dt)?,
            &other,
            None,
        ))?;
        let want = [v[0], v[5], v[6], v[3]];
        assert_close(&format!("{dt} where"), &values(&w)?, &want, 0.0, 0.0)?;
        let si = from_f64(dev, &[2.0, 0.0], &[2], DType::I64)?;
        let src = from_f64(dev, &v[10..12], &[2], dt)?;
        let sc = ok(data::scatter(
            None,
            &other,
            0,
            &si,
            &src,
            ScatterReduce::None,
            None,
        ))?;
        let want = [v[11], v[5], v[10], v[7]];
        assert_close(&format!("{dt} scatter"), &values(&sc)?, &want, 0.0, 0.0)?;
    }
    Ok(())
}

fn dtypes_ext_compare_arith(dev: &Dev) -> TestResult {
    for (s, &dt) in NEW.iter().enumerate() {
        let (va, vb) = (sample(dt, 12, 10 + s as u64), sample(dt, 4, 20 + s as u64));
        let a = from_f64(dev, &va, &[3, 4], dt)?;
        let b = from_f64(dev, &vb, &[4], dt)?; // broadcast along rows
        let bv = |e: usize| vb[e % 4];
        for op in [CompareOp::Eq, CompareOp::Lt, CompareOp::Ge] {
            let got = ok(elementwise::compare(None, op, &a, &b, None))?;
            ensure(got.dtype() == DType::Bool, "compare dtype")?;
            let want: Vec<f64> = (0..12)
                .map(|e| f64::from(u8::from(op.apply(va[e], bv(e)))))
                .collect();
            assert_close(&format!("{dt} {op:?}"), &values(&got)?, &want, 0.0, 0.0)?;
        }
        let wc = ok(elementwise::where_compare(
            None,
            CompareOp::Gt,
            &a,
            &b,
            &a,
            &b,
            None,
        ))?;
        let want: Vec<f64> = (0..12).map(|e| va[e].max(bv(e))).collect();
        assert_close(
            &format!("{dt} where_compare"),
            &values(&wc)?,
            &want,
            0.0,
            0.0,
        )?;
        let wrap = |v: f64| -> f64 {
            match dt {
                DType::I8 => v as i64 as i8 as f64,
                DType::U8 => v as i64 as u8 as f64,
                DType::I16 => v as i64 as i16 as f64,
                _ => v,
            }
        };
        let mut ops = vec![
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Maximum,
            BinaryOp::Minimum,
        ];
        if dt == DType::F64 {
            ops.extend([BinaryOp::Div, BinaryOp::Pow]);
        }
        for op in ops {
            let out = poisoned(dev, &[3, 4], dt)?;
            let got = ok(elementwise::binary(None, op, &a, &b, Some(&out)))?;
            let want: Vec<f64> = (0..12)
                .map(|e| {
                    // integers wrap to their width (two's complement), as PyTorch's
                    let r = if dt.is_integral() {
                        op.apply_i64(va[e] as i64, bv(e) as i64) as f64
                    } else {
                        op.reference(va[e], bv(e))
                    };
                    wrap(r)
                })
                .collect();
            let tol = if dt == DType::F64 { 1e-15 } else { 0.0 };
            assert_close(
                &format!("{dt} {}", op.name()),
                &values(&got)?,
                &want,
                tol,
                0.0,
            )?;
        }
        // clamp with tensor bounds (maximum then minimum)
        let lo = from_f64(dev, &[vb[0].min(vb[1])], &[1], dt)?;
        let hi = from_f64(dev, &[vb[0].max(vb[1])], &[1], dt)?;
        let cl = ok(elementwise::clamp_tensor(
            None,
            &a,
            Some(&lo),
            Some(&hi),
            None,
        ))?;
        let (l, h) = (vb[0].min(vb[1]), vb[0].max(vb[1]));
        let want: Vec<f64> = va.iter().map(|&v| v.max(l).min(h)).collect();
        assert_close(&format!("{dt} clamp"), &values(&cl)?, &want, 0.0, 0.0)?;
        // Ops that do not take the dtype say so, naming it.
        if dt.is_integral() {
            expect_dtype(
                elementwise::binary(None, BinaryOp::Div, &a, &b, None),
                dt,
                "div",
            )?;
        }
        // The unary ops take f64 (dtypes_ext_unary_f64), not the small integers.
        if dt != DType::F64 {
            expect_dtype(elementwise::unary(None, UnaryOp::Exp, &a, None), dt, "exp")?;
            expect_dtype(
                elementwise::unary(None, UnaryOp::Silu, &a, None),
                dt,
                "silu",
            )?;
        }
        // cumsum of an integer dtype gives i64 (dtypes_ext_int_cumsum).
        if dt != DType::F64 {
            let c = ok(data::cumsum(None, &a, -1, false, false, None))?;
            ensure(
                c.dtype() == DType::I64,
                format!("{dt} cumsum: {}", c.dtype()),
            )?;
        }
        // softmax takes f64 (dtypes_ext_softmax_f64), not the small integers.
        if dt != DType::F64 {
            expect_dtype(
                rocm_backend::runtime::softmax::softmax(None, &a, -1, None),
                dt,
                "softmax",
            )?;
        }
    }
    Ok(())
}

/// f64 values that are not representable in f32 (so a computation in f32 shows).
pub(crate) fn f64_values(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (((i as u64 + 1) * (seed * 2 + 3) * 2_654_435_761) >> 9) % 1000;
            (h as f64 - 500.0) / 333.0 + 1e-10 * (i % 7) as f64
        })
        .collect()
}

/// f64 matmul (double GEMMs: cuBLAS/rocBLAS, the CPU's dgemm) and its backward against the
/// float64 references at 1e-12; raw column-major GEMMs with transposes, padded leading
/// dimensions, alpha and beta; the backward with operands broadcast along batch dimensions
/// (their gradients summed in f64).
fn dtypes_ext_matmul_f64(dev: &Dev) -> TestResult {
    use rocm_backend::ops::matmul;
    use rocm_backend::runtime::blas;
    use rocm_backend::runtime::eager::Grad;
    let dt = DType::F64;
    let fwd: &[(&[usize], &[usize])] = &[
        (&[3, 4], &[4, 5]),
        (&[1, 1], &[1, 1]),
        (&[4], &[4, 5]),
        (&[3, 4], &[4]),
        (&[4], &[4]),
        (&[2, 33, 17], &[2, 17, 65]),
        (&[2, 1, 3, 4], &[5, 4, 6]),
        (&[7, 0], &[0, 3]),
    ];
    for (i, (sa, sb)) in fwd.iter().enumerate() {
        let p = ok(matmul::plan(sa, sb))?;
        let va = f64_values(sa.iter().product(), 10 + i as u64);
        let vb = f64_values(sb.iter().product(), 20 + i as u64);
        let a = from_f64(dev, &va, sa, dt)?;
        let b = from_f64(dev, &vb, sb, dt)?;
        let out = poisoned(dev, &p.out_shape, dt)?;
        ok(blas::matmul(None, &a, &b, Some(&out)))?;
        let want = ok(matmul::reference(&va, sa, &vb, sb))?;
        assert_close(
            &format!("matmul f64 {sa:?}@{sb:?}"),
            &values(&out)?,
            &want,
            1e-12,
            1e-12,
        )?;
    }
    let bwd: &[(&[usize], &[usize])] = &[
        (&[3, 4], &[4, 5]),
        (&[4], &[4, 5]),
        (&[3, 4], &[4]),
        (&[4], &[4]),
        (&[2, 3, 4], &[4, 5]),
        (&[2, 17, 33], &[2, 33, 9]),
        (&[3, 0], &[0, 5]),
    ];
    for (i, (sa, sb)) in bwd.iter().enumerate() {
        let p = ok(matmul::plan(sa, sb))?;
        let va = f64_values(sa.iter().product(), 30 + i as u64);
        let vb = f64_values(sb.iter().product(), 40 + i as u64);
        let vd = f64_values(p.out_shape.iter().product(), 50 + i as u64);
        let (a, b) = (from_f64(dev, &va, sa, dt)?, from_f64(dev, &vb, sb, dt)?);
        let dy = from_f64(dev, &vd, &p.out_shape, dt)?;
        let (want_a, want_b) = ok(matmul::backward_reference(&va, sa, &vb, sb, &vd))?;
        let (pa, pb) = (poisoned(dev, sa, dt)?, poisoned(dev, sb, dt)?);
        ok(blas::matmul_backward(
            None,
            &a,
            &b,
            &dy,
            [Grad::Into(&pa), Grad::Into(&pb)],
        ))?;
        let what = format!("matmul_backward f64 {sa:?} x {sb:?}");
        assert_close(&format!("{what} da"), &values(&pa)?, &want_a, 1e-12, 1e-12)?;
        assert_close(&format!("{what} db"), &values(&pb)?, &want_b, 1e-12, 1e-12)?;
    }
    // A broadcast batch: the gradient of the broadcast operand is an f64 sum.
    for (i, (sa, sb)) in [
        (&[3usize, 4][..], &[2usize, 4, 5][..]),
        (&[2, 3, 4], &[4, 5]),
    ]
    .into_iter()
    .enumerate()
    {
        let p = ok(matmul::plan(sa, sb))?;
        let va = f64_values(sa.iter().product(), 60 + i as u64);
        let vb = f64_values(sb.iter().product(), 70 + i as u64);
        let vd = f64_values(p.out_shape.iter().product(), 80 + i as u64);
        let (a, b) = (from_f64(dev, &va, sa, dt)?, from_f64(dev, &vb, sb, dt)?);
        let dy = from_f64(dev, &vd, &p.out_shape, dt)?;
        let (want_a, want_b) = ok(matmul::backward_reference(&va, sa, &vb, sb, &vd))?;
        let (pa, pb) = (poisoned(dev, sa, dt)?, poisoned(dev, sb, dt)?);
        ok(blas::matmul_backward(
            None,
            &a,
            &b,
            &dy,
            [Grad::Into(&pa), Grad::Into(&pb)],
        ))?;
        let what = format!("matmul_backward f64 broadcast {sa:?} x {sb:?}");
        assert_close(&format!("{what} da"), &values(&pa)?, &want_a, 1e-12, 1e-12)?;
        assert_close(&format!("{what} db"), &values(&pb)?, &want_b, 1e-12, 1e-12)?;
    }
    // Raw column-major GEMMs.
    let (m, n, k) = (5usize, 7usize, 3usize);
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let (ar, ac) = if ta { (k, m) } else { (m, k) };
        let (br, bc) = if tb { (n, k) } else { (k, n) };
        let (lda, ldb, ldc) = (ar + 2, br + 1, m + 3);
        let (va, vb, vc) = (
            f64_values(lda * ac, 4),
            f64_values(ldb * bc, 5),
            f64_values(ldc * n, 6),
        );
        let a = from_f64(dev, &va, &[lda * ac], dt)?;
        let b = from_f64(dev, &vb, &[ldb * bc], dt)?;
        let c = from_f64(dev, &vc, &[ldc * n], dt)?;
        let (alpha, beta) = (1.5f32, -0.5f32);
        let desc = raw_gemm_desc(
            dt,
            (m, n, k),
            (ta, tb),
            (alpha, beta),
            (&a, lda),
            (&b, ldb),
            (&c, ldc),
        );
        ok(dev.gemm(Default::default(), &desc))?;
        ok(dev.synchronize())?;
        let mut want = vc.clone();
        for j in 0..n {
            for i in 0..m {
                let s = gemm_ref_at((&va, lda, ta), (&vb, ldb, tb), k, i, j);
                want[i + j * ldc] = alpha as f64 * s + beta as f64 * vc[i + j * ldc];
            }
        }
        assert_close(
            &format!("gemm f64 ta={ta} tb={tb}"),
            &values(&c)?,
            &want,
            1e-12,
            1e-12,
        )?;
    }
    Ok(())
}

/// Every unary op in f64, forward and backward, against the float64 references (a GPU's
/// libm may differ by an ulp or two: 1e-13 relative, 1e-14 absolute where terms cancel); in
/// place too; 0, -0, NaN, infinities, halves (round to even), the hardswish/hardsigmoid
/// knees at +-3, exp's overflow range and empty tensors.
fn dtypes_ext_unary_f64(dev: &Dev) -> TestResult {
    let dt = DType::F64;
    let n = 1031usize;
    let mut xv = f64_values(n, 9);
    let special = [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        2.5, // exactly on clamp's upper bound below; round half to even
        f64::NEG_INFINITY,
        3.0,
        -3.0,
        -2.5,
        0.5,
        -0.5,
        1.5,
        40.0,
        -40.0,
        800.0,
        -800.0,
        1e-300,
        -7.25,
        5.0,
        -4.0,
    ];
    xv[..special.len()].copy_from_slice(&special);
    // Some wider values too (the knees at +-3, softplus's threshold).
    for (i, v) in xv.iter_mut().enumerate().skip(special.len()).step_by(5) {
        *v *= 1.0 + (i % 9) as f64;
    }
    let pos: Vec<f64> = xv.iter().map(|v| v.abs() + 0.5).collect();
    let dyv = f64_values(n, 10);
    let ops = [
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
            min: -0.75,
            max: 2.5,
        },
        UnaryOp::LeakyRelu { slope: 0.01 },
        UnaryOp::LeakyRelu { slope: -1.5 },
        UnaryOp::Elu { alpha: 1.0 },
        UnaryOp::Elu { alpha: 0.3 },
        UnaryOp::Selu,
        UnaryOp::Celu { alpha: 1.0 },
        UnaryOp::Celu { alpha: 0.7 },
        UnaryOp::Hardsigmoid,
        UnaryOp::Softplus {
            beta: 1.0,
            threshold: 20.0,
        },
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
    for op in ops {
        // sqrt and log on positive inputs (NaN elsewhere is covered by the reference too,
        // but keeps the comparison meaningful)
        let vals = if matches!(op, UnaryOp::Sqrt | UnaryOp::Log) {
            &pos
        } else {
            &xv
        };
        let what = format!("{op:?} f64");
        let x = from_f64(dev, vals, &[n], dt)?;
        let out = poisoned(dev, &[n], dt)?;
        ok(elementwise::unary(None, op, &x, Some(&out)))?;
        let want: Vec<f64> = vals.iter().map(|&v| op.reference(v)).collect();
        assert_close(&what, &values(&out)?, &want, 1e-13, 1e-14)?;
        // in place
        let y = from_f64(dev, vals, &[n], dt)?;
        ok(elementwise::unary(None, op, &y, Some(&y)))?;
        assert_close(
            &format!("{what} in place"),
            &values(&y)?,
            &want,
            1e-13,
            1e-14,
        )?;
        let dy = from_f64(dev, &dyv, &[n], dt)?;
        let dx = ok(elementwise::unary_backward(None, op, &x, &dy, None))?;
        let want: Vec<f64> = vals
            .iter()
            .zip(&dyv)
            .map(|(&v, &g)| op.grad_reference(v, g))
            .collect();
        assert_close(
            &format!("{what} backward"),
            &values(&dx)?,
            &want,
            1e-13,
            1e-14,
        )?;
        // Empty tensors: empty results of f64.
        for shape in [&[0usize][..], &[2, 0, 3]] {
            let e = from_f64(dev, &[], shape, dt)?;
            let r = ok(elementwise::unary(None, op, &e, None))?;
            let g = ok(elementwise::unary_backward(None, op, &e, &e, None))?;
            ensure(
                r.shape() == shape && g.shape() == shape && r.dtype() == dt && g.dtype() == dt,
                format!("{what}: empty {shape:?}"),
            )?;
        }
    }
    // The small integers stay refused, naming their dtype (neg, abs, sign and relu take them:
    // dtypes_ext_int_unary).
    for it in [DType::I8, DType::U8, DType::I16] {
        let x = from_f64(dev, &[1.0, 2.0], &[2], it)?;
        for op in [
            UnaryOp::Silu,
            UnaryOp::Exp,
            UnaryOp::Clamp { min: 0.0, max: 1.0 },
        ] {
            expect_dtype(elementwise::unary(None, op, &x, None), it, op.name())?;
        }
    }
    Ok(())
}

/// Values for the f64 reductions: `f64_values` with NaN and infinities placed by `special`.
fn reduce_values(n: usize, seed: u64, special: bool) -> Vec<f64> {
    let mut v = f64_values(n, seed);
    if special && n > 7 {
        v[1] = f64::NAN;
        v[n / 2] = f64::INFINITY;
        v[n - 2] = f64::NEG_INFINITY;
    }
    v
}

/// f64 reductions without `dtype=` (sum, mean, max, min, prod over dims, keepdim), their
/// backwards, argmax/argmax_all, max_dim/min_dim and its backward, sum/prod with dtype=f64,
/// against the float64 references: every kernel shape (short and long rows, columns, the
/// split and full reductions), NaN/inf, empty tensors.
fn dtypes_ext_reduce_f64(dev: &Dev) -> TestResult {
    use rocm_backend::ops::reduce::{self, ReduceOp};
    use rocm_backend::runtime::reduce as rr;
    let dt = DType::F64;
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Mean,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Prod,
    ];
    let cases: &[(&[usize], &[i64])] = &[
        (&[5], &[]),
        (&[4, 7], &[1]),
        (&[4, 7], &[0]),
        (&[2, 3, 5], &[0, 2]),
        (&[2, 3, 5], &[]),
        (&[3, 700], &[1]),
        (&[700, 3], &[0]),
        (&[2, 20000], &[1]),
        (&[20000, 2], &[0]),
        (&[70000], &[]),
        (&[], &[]),
    ];
    for op in ops {
        for (i, (shape, dims)) in cases.iter().enumerate() {
            let n: usize = shape.iter().product();
            // Products of many values over/underflow: prod on the short cases only, with
            // values near 1.
            if op == ReduceOp::Prod && n > 2000 {
                continue;
            }
            for special in [false, true] {
                let mut v = reduce_values(n, 100 + i as u64, special);
                if op == ReduceOp::Prod {
                    v.iter_mut().for_each(|x| *x = 1.0 + 0.01 * *x);
                }
                let x = from_f64(dev, &v, shape, dt)?;
                // Sums of n terms: the rounding of each partial order, bounded by n ulps.
                let big = v
                    .iter()
                    .filter(|x| x.is_finite())
                    .fold(0.0f64, |a, x| a.max(x.abs()));
                let atol = 1e-15 * n as f64 * big.max(1.0);
                for keepdim in [false, true] {
                    let p = ok(reduce::plan(op.name(), shape, dims, keepdim))?;
                    let what = format!(
                        "{} f64 {shape:?} dims {dims:?} keepdim {keepdim} special {special}",
                        op.name()
                    );
                    let out = poisoned(dev, &p.out_shape, dt)?;
                    ok(rr::reduce(None, op, &x, dims, keepdim, Some(&out)))?;
                    let want = reduce::reference(op, &v, shape, &p.dims);
                    assert_close(&what, &values(&out)?, &want, 1e-13, atol)?;
                    ensure(out.dtype() == dt, format!("{what}: dtype"))?;
                    // The backward (finite values: the reference's ties and zeros).
                    if !special {
                        let vd = f64_values(p.out_shape.iter().product(), 7 + i as u64);
                        let dy = from_f64(dev, &vd, &p.out_shape, dt)?;
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
                        let want = reduce::backward_reference(op, &v, shape, &p.dims, &vd);
                        assert_close(
                            &format!("{what} backward"),
                            &values(&dx)?,
                            &want,
                            1e-12,
                            1e-300,
                        )?;
                    }
                }
            }
        }
    }
    // Ties (max/min split the gradient evenly) and a zero in prod.
    let v = [1.5, -2.0, 1.5, 0.0, 1.5, -2.0];
    let x = from_f64(dev, &v, &[6], dt)?;
    let dy = from_f64(dev, &[0.75], &[], dt)?;
    for op in [ReduceOp::Max, ReduceOp::Min, ReduceOp::Prod] {
        let dx = ok(rr::reduce_backward(None, op, &x, &[], false, &dy, None))?;
        let want = reduce::backward_reference(op, &v, &[6], &[0], &[0.75]);
        assert_close(
            &format!("{} f64 ties backward", op.name()),
            &values(&dx)?,
            &want,
            1e-15,
            0.0,
        )?;
    }
    // Empty: sum 0, prod 1, mean NaN over an empty dim; empty outputs; max refused.
    let e = from_f64(dev, &[], &[3, 0], dt)?;
    for (op, want) in [
        (ReduceOp::Sum, 0.0),
        (ReduceOp::Prod, 1.0),
        (ReduceOp::Mean, f64::NAN),
    ] {
        let r = ok(rr::reduce(None, op, &e, &[1], false, None))?;
        assert_close(
            &format!("{} f64 empty", op.name()),
            &values(&r)?,
            &[want; 3],
            0.0,
            0.0,
        )?;
        let r = ok(rr::reduce(None, op, &e, &[0], false, None))?;
        ensure(r.shape() == [0], format!("{} f64 empty output", op.name()))?;
    }
    ensure(
        rr::reduce(None, ReduceOp::Max, &e, &[1], false, None).is_err(),
        "max f64 over an empty dim: refused",
    )?;
    // argmax, argmax_all, max_dim/min_dim and the backward.
    for (i, (shape, dim)) in [
        (&[4usize, 7][..], 1i64),
        (&[4, 7], 0),
        (&[3, 700], 1),
        (&[2, 3, 5], -2),
    ]
    .into_iter()
    .enumerate()
    {
        let n: usize = shape.iter().product();
        for special in [false, true] {
            let mut v = reduce_values(n, 200 + i as u64, special);
            // a tie: the first index wins
            v[n - 1] = v[0];
            let x = from_f64(dev, &v, shape, dt)?;
            let d = if dim < 0 {
                (dim + shape.len() as i64) as usize
            } else {
                dim as usize
            };
            let what = format!("f64 {shape:?} dim {dim} special {special}");
            let am = ok(rr::argmax(None, &x, dim, false, None))?;
            assert_close(
                &format!("argmax {what}"),
                &values(&am)?,
                &reduce::argmax_reference(&v, shape, d),
                0.0,
                0.0,
            )?;
            let all = ok(rr::argmax_all(None, &x, false, None))?;
            assert_close(
                &format!("argmax_all {what}"),
                &values(&all)?,
                &reduce::argmax_reference(&v, &[n], 0),
                0.0,
                0.0,
            )?;
            for (op, largest) in [(ReduceOp::Max, true), (ReduceOp::Min, false)] {
                let (vo, io) = ok(rr::max_dim(None, op, &x, dim, false, None, None))?;
                let (wv, wi) = reduce::max_dim_reference(&v, shape, d, largest);
                let wif: Vec<f64> = wi.iter().map(|&k| k as f64).collect();
                assert_close(
                    &format!("{op:?}_dim values {what}"),
                    &values(&vo)?,
                    &wv,
                    0.0,
                    0.0,
                )?;
                assert_close(
                    &format!("{op:?}_dim indices {what}"),
                    &values(&io)?,
                    &wif,
                    0.0,
                    0.0,
                )?;
                let vd = f64_values(wi.len(), 9);
                let dy = from_f64(dev, &vd, vo.shape(), dt)?;
                let dx = ok(rr::max_dim_backward(
                    None, &dy, &io, shape, dim, false, None,
                ))?;
                ensure(dx.dtype() == dt, "max_dim_backward f64 dtype")?;
                assert_close(
                    &format!("{op:?}_dim backward {what}"),
                    &values(&dx)?,
                    &reduce::max_dim_backward_reference(shape, d, &wi, &vd),
                    0.0,
                    0.0,
                )?;
            }
        }
    }
    // sum/prod with dtype=f64: f32 and i16 inputs cast to f64 and reduced in it.
    let v = f64_values(60, 5);
    for src in [DType::F32, DType::I16, DType::F64] {
        let vs: Vec<f64> = match src {
            DType::F32 => v.iter().map(|&x| x as f32 as f64).collect(),
            DType::I16 => v.iter().map(|&x| (x * 100.0).trunc()).collect(),
            _ => v.clone(),
        };
        let x = from_f64(dev, &vs, &[6, 10], src)?;
        for op in [ReduceOp::Sum, ReduceOp::Prod] {
            let r = ok(rr::reduce_dtype(None, op, &x, &[1], false, dt, None))?;
            ensure(
                r.dtype() == dt,
                format!("{}_dtype f64 from {src}: dtype", op.name()),
            )?;
            assert_close(
                &format!("{}_dtype f64 from {src}", op.name()),
                &values(&r)?,
                &reduce::reference(op, &vs, &[6, 10], &[1]),
                1e-13,
                1e-13,
            )?;
        }
    }
    Ok(())
}

/// Broadcasting binary backwards in f64 (every op), the broadcast gradients summed in f64,
/// against the float64 reference; empty operands give empty/zero gradients.
fn dtypes_ext_binary_backward_f64(dev: &Dev) -> TestResult {
    use crate::pointwise::bcast_index;
    use rocm_backend::base::shape::BroadcastLayout;
    let dt = DType::F64;
    let ops = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Pow,
        BinaryOp::Maximum,
        BinaryOp::Minimum,
    ];
    let cases: &[(&[usize], &[usize])] = &[
        (&[7], &[7]),
        (&[3, 1, 5], &[4, 1]),
        (&[2, 3, 4], &[4]),
        (&[5], &[3, 1]),
        (&[300, 8], &[8]),
        (&[], &[2, 3]),
    ];
    for op in ops {
        for (i, (sa, sb)) in cases.iter().enumerate() {
            let (shape, _) = ok(BroadcastLayout::new(&[sa, sb]))?;
            let mut va = f64_values(sa.iter().product(), 300 + i as u64);
            let vb = f64_values(sb.iter().product(), 400 + i as u64);
            if op == BinaryOp::Pow {
                va.iter_mut().for_each(|x| *x = x.abs() + 0.25);
            }
            if matches!(op, BinaryOp::Maximum | BinaryOp::Minimum) && va.len() > 3 && vb.len() > 3 {
                va[0] = vb[0]; // a tie: half each
                va[2] = f64::NAN;
            }
            let vd = f64_values(shape.iter().product(), 500 + i as u64);
            let a = from_f64(dev, &va, sa, dt)?;
            let b = from_f64(dev, &vb, sb, dt)?;
            let dy = from_f64(dev, &vd, &shape, dt)?;
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
            let (ia, ib) = (bcast_index(sa, &shape), bcast_index(sb, &shape));
            let mut wa = vec![0.0; va.len()];
            let mut wb = vec![0.0; vb.len()];
            for k in 0..ia.len() {
                let (ga, gb) = op.grad_reference(va[ia[k]], vb[ib[k]], vd[k]);
                wa[ia[k]] += ga;
                wb[ib[k]] += gb;
            }
            let what = format!("{}_backward f64 {sa:?} {sb:?}", op.name());
            let fan = ia.len() as f64;
            assert_close(
                &format!("{what} da"),
                &values(&da)?,
                &wa,
                1e-12,
                1e-15 * fan,
            )?;
            assert_close(
                &format!("{what} db"),
                &values(&db)?,
                &wb,
                1e-12,
                1e-15 * fan,
            )?;
        }
    }
    // An empty broadcast result: zero gradients for the non-empty operand.
    let a = from_f64(dev, &[1.0, 2.0], &[1, 2], dt)?;
    let b = from_f64(dev, &[], &[0, 2], dt)?;
    let dy = from_f64(dev, &[], &[0, 2], dt)?;
    let (da, db) = ok(elementwise::binary_backward(
        None,
        BinaryOp::Mul,
        &a,
        &b,
        &dy,
        None,
        None,
    ))?;
    assert_close(
        "mul_backward f64 empty da",
        &values(&da)?,
        &[0.0, 0.0],
        0.0,
        0.0,
    )?;
    ensure(
        db.shape() == [0, 2] && db.dtype() == dt,
        "mul_backward f64 empty db",
    )?;
    Ok(())
}

/// f64 softmax and log_softmax, forward and backward (from the output), against the float64
/// references: last and inner dims, long rows, a scalar, a NaN row and an infinite row,
/// in place, empty tensors.
fn dtypes_ext_softmax_f64(dev: &Dev) -> TestResult {
    use rocm_backend::ops::nn::{SoftmaxDesc, softmax_backward_ref, softmax_ref};
    use rocm_backend::runtime::softmax as sm;
    let dt = DType::F64;
    let cases: &[(&[usize], i64)] = &[
        (&[4, 7], -1),
        (&[4, 7], 0),
        (&[2, 3, 5], 1),
        (&[3, 1000], 1),
        (&[2, 700, 3], 1),
        (&[], 0),
        (&[0, 5], 1),
        (&[5, 0], 0),
    ];
    for (i, (shape, dim)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let mut v: Vec<f64> = f64_values(n, 600 + i as u64)
            .iter()
            .map(|x| 8.0 * x)
            .collect();
        if i == 0 {
            v[0] = f64::NAN; // row 0: all NaN
            v[7] = f64::INFINITY; // row 1: NaN where inf, 0 elsewhere
            v[14] = f64::NEG_INFINITY; // row 2: 0 there
        }
        for log in [false, true] {
            let d = ok(SoftmaxDesc::new("softmax", shape, *dim, log))?;
            let what = format!(
                "{}softmax f64 {shape:?} dim {dim}",
                if log { "log_" } else { "" }
            );
            let x = from_f64(dev, &v, shape, dt)?;
            let y = if log {
                ok(sm::log_softmax(None, &x, *dim, None))?
            } else {
                ok(sm::softmax(None, &x, *dim, None))?
            };
            ensure(
                y.dtype() == dt && y.shape() == *shape,
                format!("{what}: result"),
            )?;
            let want = softmax_ref(&v, &d);
            assert_close(&what, &values(&y)?, &want, 1e-13, 1e-15)?;
            // in place
            let xi = from_f64(dev, &v, shape, dt)?;
            if log {
                ok(sm::log_softmax(None, &xi, *dim, Some(&xi)))?;
            } else {
                ok(sm::softmax(None, &xi, *dim, Some(&xi)))?;
            }
            assert_close(
                &format!("{what} in place"),
                &values(&xi)?,
                &want,
                1e-13,
                1e-15,
            )?;
            // The backward from the reference output (finite rows).
            let yv: Vec<f64> = want
                .iter()
                .map(|x| if x.is_nan() { 0.25 } else { *x })
                .collect();
            let gv = f64_values(n, 700 + i as u64);
            let yt = from_f64(dev, &yv, shape, dt)?;
            let g = from_f64(dev, &gv, shape, dt)?;
            let dx = if log {
                ok(sm::log_softmax_backward(None, &yt, &g, *dim, None))?
            } else {
                ok(sm::softmax_backward(None, &yt, &g, *dim, None))?
            };
            assert_close(
                &format!("{what} backward"),
                &values(&dx)?,
                &softmax_backward_ref(&yv, &gv, &d),
                1e-12,
                1e-14,
            )?;
        }
    }
    Ok(())
}

/// f64 layer_norm and rms_norm (with and without weight/bias), forward and backward,
/// against the float64 references; empty inputs (group_norm, batch_norm and
/// local_response_norm in f64: `dtypes_f64_dnn`).
fn dtypes_ext_norm_f64(dev: &Dev) -> TestResult {
    use rocm_backend::ops::nn::{self, RowNormDesc};
    use rocm_backend::runtime::eager::Grad;
    use rocm_backend::runtime::norm;
    let dt = DType::F64;
    let cases: &[(&[usize], &[usize])] = &[
        (&[4, 7], &[7]),
        (&[2, 3, 5], &[3, 5]),
        (&[3, 1000], &[1000]),
        (&[6], &[6]),
    ];
    for (i, (shape, ns)) in cases.iter().enumerate() {
        let n: usize = shape.iter().product();
        let cols: usize = ns.iter().product();
        let vx: Vec<f64> = f64_values(n, 800 + i as u64)
            .iter()
            .map(|v| 3.0 * v + 0.5)
            .collect();
        let vw = f64_values(cols, 810 + i as u64);
        let vb = f64_values(cols, 820 + i as u64);
        let vd = f64_values(n, 830 + i as u64);
        let x = from_f64(dev, &vx, shape, dt)?;
        let (w, b) = (from_f64(dev, &vw, ns, dt)?, from_f64(dev, &vb, ns, dt)?);
        let dy = from_f64(dev, &vd, shape, dt)?;
        let eps = 1e-5;
        let d = ok(RowNormDesc::new("layer_norm", shape, ns, eps))?;
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
            let what = format!("f64 {shape:?} over {ns:?} affine {affine}");
            let y = ok(norm::layer_norm(None, &x, ns, wo, bo, eps, None))?;
            let (want, _, _) = nn::layer_norm_ref(&vx, wr, br, &d);
            ensure(y.dtype() == dt, format!("layer_norm {what}: dtype"))?;
            assert_close(
                &format!("layer_norm {what}"),
                &values(&y)?,
                &want,
                1e-12,
                1e-13,
            )?;
            let [gx, gw, gb] = ok(norm::layer_norm_backward(
                None,
                &dy,
                &x,
                ns,
                wo,
                eps,
                [Grad::New, Grad::New, Grad::New],
            ))?;
            let (wx, ww, wb) = nn::layer_norm_backward_ref(&vd, &vx, wr, &d);
            let grads = [(gx, wx, "dx"), (gw, ww, "dweight"), (gb, wb, "dbias")];
            for (got, want, name) in grads {
                let got = got.ok_or("a requested gradient is missing")?;
                assert_close(
                    &format!("layer_norm_backward {what} {name}"),
                    &values(&got)?,
                    &want,
                    1e-11,
                    1e-12,
                )?;
            }
            let y = ok(norm::rms_norm(None, &x, ns, wo, eps, None))?;
            let (want, _) = nn::rms_norm_ref(&vx, wr, &d);
            assert_close(
                &format!("rms_norm {what}"),
                &values(&y)?,
                &want,
                1e-12,
                1e-13,
            )?;
            let [gx, gw] = ok(norm::rms_norm_backward(
                None,
                &dy,
                &x,
                ns,
                wo,
                eps,
                [Grad::New, Grad::New],
            ))?;
            let (wx, ww) = nn::rms_norm_backward_ref(&vd, &vx, wr, &d);
            for (got, want, name) in [(gx, wx, "dx"), (gw, ww, "dweight")] {
                let got = got.ok_or("a requested gradient is missing")?;
                assert_close(
                    &format!("rms_norm_backward {what} {name}"),
                    &values(&got)?,
                    &want,
                    1e-11,
                    1e-12,
                )?;
            }
        }
    }
    // Empty input: an empty result; zero weight gradients.
    let e = from_f64(dev, &[], &[0, 4], dt)?;
    let w = from_f64(dev, &[1.0, 2.0, 3.0, 4.0], &[4], dt)?;
    let y = ok(norm::layer_norm(None, &e, &[4], Some(&w), None, 1e-5, None))?;
    ensure(
        y.shape() == [0, 4] && y.dtype() == dt,
        "layer_norm f64 empty",
    )?;
    let [_, gw, _] = ok(norm::layer_norm_backward(
        None,
        &e,
        &e,
        &[4],
        Some(&w),
        1e-5,
        [Grad::New, Grad::New, Grad::New],
    ))?;
    let gw = gw.ok_or("dweight missing")?;
    assert_close(
        "layer_norm_backward f64 empty dweight",
        &values(&gw)?,
        &[0.0; 4],
        0.0,
        0.0,
    )?;
    Ok(())
}

/// f64 linear (with and without bias, empty k), matmul_bias_act (relu, both gelus) and
/// linear_backward against float64 references built from the matmul reference.
fn dtypes_ext_linear_f64(dev: &Dev) -> TestResult {
    use rocm_backend::ops::conv::Activation;
    use rocm_backend::ops::matmul;
    use rocm_backend::runtime::blas;
    let dt = DType::F64;
    let t = |v: &[f64], r: usize, c: usize| -> Vec<f64> {
        let mut o = vec![0.0; v.len()];
        for i in 0..r {
            for j in 0..c {
                o[j * r + i] = v[i * c + j];
            }
        }
        o
    };
    for (i, (xs, n)) in [
        (&[3usize, 4][..], 5usize),
        (&[2, 3, 17], 9),
        (&[4], 3),
        (&[2, 0], 3),
    ]
    .into_iter()
    .enumerate()
    {
        let k = *xs.last().unwrap();
        let m: usize = xs[..xs.len() - 1].iter().product();
        let vx = f64_values(m * k, 900 + i as u64);
        let vw = f64_values(n * k, 910 + i as u64);
        let vb = f64_values(n, 920 + i as u64);
        let (x, w, b) = (
            from_f64(dev, &vx, xs, dt)?,
            from_f64(dev, &vw, &[n, k], dt)?,
            from_f64(dev, &vb, &[n], dt)?,
        );
        // x [m, k] @ w^T [k, n]
        let prod = ok(matmul::reference(&vx, &[m, k], &t(&vw, n, k), &[k, n]))?;
        let with_b: Vec<f64> = prod
            .iter()
            .enumerate()
            .map(|(j, p)| p + vb[j % n])
            .collect();
        let what = format!("linear f64 {xs:?} n {n}");
        let y = ok(blas::linear(None, &x, &w, Some(&b), None))?;
        ensure(y.dtype() == dt, format!("{what}: dtype"))?;
        assert_close(&what, &values(&y)?, &with_b, 1e-12, 1e-13)?;
        let y = ok(blas::linear(None, &x, &w, None, None))?;
        assert_close(
            &format!("{what} no bias"),
            &values(&y)?,
            &prod,
            1e-12,
            1e-13,
        )?;
        // matmul_bias_act: b [k, n] = w^T
        let wt = from_f64(dev, &t(&vw, n, k), &[k, n], dt)?;
        for act in [
            Activation::None,
            Activation::Relu,
            Activation::Gelu { tanh: false },
            Activation::Gelu { tanh: true },
        ] {
            let y = ok(blas::matmul_bias_act(None, &x, &wt, &b, act, None))?;
            let want: Vec<f64> = with_b
                .iter()
                .map(|&v| match act {
                    Activation::None => v,
                    Activation::Relu => UnaryOp::Relu.reference(v),
                    Activation::Gelu { tanh } => UnaryOp::Gelu { tanh }.reference(v),
                })
                .collect();
            assert_close(
                &format!("{what} {act:?}"),
                &values(&y)?,
                &want,
                1e-12,
                1e-13,
            )?;
        }
        // backward
        let vd = f64_values(m * n, 930 + i as u64);
        let dy = from_f64(dev, &vd, &with_shape(xs, n), dt)?;
        let (dx, dw, db) = ok(blas::linear_backward(None, &x, &w, &dy, true, true))?;
        let dx = dx.ok_or("dx missing")?;
        let want_dx = ok(matmul::reference(&vd, &[m, n], &vw, &[n, k]))?;
        let want_dw = ok(matmul::reference(&t(&vd, m, n), &[n, m], &vx, &[m, k]))?;
        let want_db: Vec<f64> = (0..n)
            .map(|j| (0..m).map(|r| vd[r * n + j]).sum())
            .collect();
        assert_close(&format!("{what} dx"), &values(&dx)?, &want_dx, 1e-12, 1e-13)?;
        assert_close(&format!("{what} dw"), &values(&dw)?, &want_dw, 1e-12, 1e-13)?;
        let db = db.ok_or("db missing")?;
        assert_close(&format!("{what} db"), &values(&db)?, &want_db, 1e-12, 1e-13)?;
    }
    Ok(())
}

fn with_shape(xs: &[usize], n: usize) -> Vec<usize> {
    let mut s = xs.to_vec();
    *s.last_mut().unwrap() = n;
    s
}
