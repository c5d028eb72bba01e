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

fn expect_dtype<T>(r: rocm_backend::Result<T>, dt: DType, what: &str) -> TestResult {
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
        // exp takes f64 (dtypes_ext_unary_f64), not the small integers; silu takes neither.
        if dt != DType::F64 {
            expect_dtype(elementwise::unary(None, UnaryOp::Exp, &a, None), dt, "exp")?;
        }
        expect_dtype(
            elementwise::unary(None, UnaryOp::Silu, &a, None),
            dt,
            "silu",
        )?;
        expect_dtype(
            data::topk(None, &a, 1, -1, true, true, None, None),
            dt,
            "topk",
        )?;
        expect_dtype(
            rocm_backend::runtime::softmax::softmax(None, &a, -1, None),
            dt,
            "softmax",
        )?;
    }
    Ok(())
}

/// f64 values that are not representable in f32 (so a computation in f32 shows).
fn f64_values(n: usize, seed: u64) -> Vec<f64> {
    (0..n)
        .map(|i| {
            let h = (((i as u64 + 1) * (seed * 2 + 3) * 2_654_435_761) >> 9) % 1000;
            (h as f64 - 500.0) / 333.0 + 1e-10 * (i % 7) as f64
        })
        .collect()
}

/// f64 matmul (double GEMMs: cuBLAS/rocBLAS, the CPU's dgemm) and its backward against the
/// float64 references at 1e-12; raw column-major GEMMs with transposes, padded leading
/// dimensions, alpha and beta; the backward's refusal where a broadcast batch would need an
/// f64 sum, before anything is written.
fn dtypes_ext_matmul_f64(dev: &Dev) -> TestResult {
    use rocm_backend::device::{GemmDesc, Transpose};
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
    // A broadcast batch needs an f64 sum: refused, naming f64, with nothing written.
    let (a, b) = (
        from_f64(dev, &f64_values(12, 1), &[3, 4], dt)?,
        from_f64(dev, &f64_values(40, 2), &[2, 4, 5], dt)?,
    );
    let dy = from_f64(dev, &f64_values(30, 3), &[2, 3, 5], dt)?;
    let (pa, pb) = (poisoned(dev, &[3, 4], dt)?, poisoned(dev, &[2, 4, 5], dt)?);
    let before = [values(&pa)?, values(&pb)?];
    expect_dtype(
        blas::matmul_backward(None, &a, &b, &dy, [Grad::Into(&pa), Grad::Into(&pb)]),
        dt,
        "matmul_backward broadcast",
    )?;
    ensure(
        [values(&pa)?, values(&pb)?] == before,
        "matmul_backward f64: a refused call wrote an output",
    )?;
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
        let desc = GemmDesc {
            dtype: dt,
            trans_a: if ta { Transpose::Yes } else { Transpose::No },
            trans_b: if tb { Transpose::Yes } else { Transpose::No },
            m,
            n,
            k,
            alpha,
            a: a.ptr(),
            lda,
            b: b.ptr(),
            ldb,
            beta,
            c: c.ptr(),
            ldc,
            batch: 1,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
        };
        ok(dev.gemm(Default::default(), &desc))?;
        ok(dev.synchronize())?;
        let mut want = vc.clone();
        for j in 0..n {
            for i in 0..m {
                let mut s = 0.0;
                for p in 0..k {
                    let av = if ta { va[p + i * lda] } else { va[i + p * lda] };
                    let bv = if tb { vb[j + p * ldb] } else { vb[p + j * ldb] };
                    s += av * bv;
                }
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

/// The unary ops that take f64 (UnaryOp::takes_f64), forward and backward, against the
/// float64 references (a GPU's libm may differ by an ulp or two: 1e-13); in place too; the
/// others answer DTYPE_MISMATCH naming f64.
fn dtypes_ext_unary_f64(dev: &Dev) -> TestResult {
    let dt = DType::F64;
    let n = 1031usize;
    let mut xv = f64_values(n, 9);
    xv[0] = 0.0;
    xv[1] = -0.0;
    xv[2] = f64::NAN;
    xv[3] = f64::INFINITY;
    xv[4] = 2.5; // exactly on clamp's upper bound below
    let pos: Vec<f64> = xv.iter().map(|v| v.abs() + 0.5).collect();
    let dyv = f64_values(n, 10);
    let ops = [
        UnaryOp::Relu,
        UnaryOp::Sigmoid,
        UnaryOp::Tanh,
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
    ];
    for op in ops {
        ensure(op.takes_f64(), format!("{} takes f64", op.name()))?;
        // sqrt and log on positive inputs (NaN elsewhere is covered by the reference too,
        // but keeps the comparison meaningful)
        let vals = if matches!(op, UnaryOp::Sqrt | UnaryOp::Log) {
            &pos
        } else {
            &xv
        };
        let x = from_f64(dev, vals, &[n], dt)?;
        let out = poisoned(dev, &[n], dt)?;
        ok(elementwise::unary(None, op, &x, Some(&out)))?;
        let want: Vec<f64> = vals.iter().map(|&v| op.reference(v)).collect();
        assert_close(
            &format!("{} f64", op.name()),
            &values(&out)?,
            &want,
            1e-13,
            1e-300,
        )?;
        // in place
        let y = from_f64(dev, vals, &[n], dt)?;
        ok(elementwise::unary(None, op, &y, Some(&y)))?;
        assert_close(
            &format!("{} f64 in place", op.name()),
            &values(&y)?,
            &want,
            1e-13,
            1e-300,
        )?;
        let dy = from_f64(dev, &dyv, &[n], dt)?;
        let dx = ok(elementwise::unary_backward(None, op, &x, &dy, None))?;
        let want: Vec<f64> = vals
            .iter()
            .zip(&dyv)
            .map(|(&v, &g)| op.grad_reference(v, g))
            .collect();
        assert_close(
            &format!("{}_backward f64", op.name()),
            &values(&dx)?,
            &want,
            1e-13,
            1e-300,
        )?;
    }
    let x = from_f64(dev, &xv, &[n], dt)?;
    for op in [UnaryOp::Gelu { tanh: false }, UnaryOp::Silu, UnaryOp::Erf] {
        expect_dtype(elementwise::unary(None, op, &x, None), dt, op.name())?;
        expect_dtype(
            elementwise::unary_backward(None, op, &x, &x, None),
            dt,
            op.name(),
        )?;
    }
    Ok(())
}
