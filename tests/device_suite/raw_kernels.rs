//! The raw-pointer entry points (`rb_kernel_*`) on device pointers of a stream's device:
//! results equal the eager ops', and misuse gets the right status.

use crate::common::*;
use rocm_backend::ffi::blas::rb_blas_geam;
use rocm_backend::ffi::handles::register;
use rocm_backend::ffi::kernel::*;
use rocm_backend::ffi::rb_status;
use rocm_backend::ffi::stream::rb_stream;
use rocm_backend::ops::elementwise::{BinaryOp, UnaryOp};
use rocm_backend::ops::optim::{SgdAttrs, sgd_reference};
use rocm_backend::runtime::{DType, Stream};
use std::ffi::c_void;

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        (
            "raw_kernels_on_device_pointers",
            raw_kernels_on_device_pointers,
        ),
        ("raw_blas_geam", raw_blas_geam),
        ("raw_dnn_reduce_and_argmax", raw_dnn_reduce_and_argmax),
        ("raw_kernel_copy_strided", raw_kernel_copy_strided),
        ("raw_part_a_misuse", raw_part_a_misuse),
    ]
}

/// The calling thread's last error message.
fn last_message() -> String {
    // SAFETY: the library returns a NUL-terminated string valid until the next call.
    unsafe { std::ffi::CStr::from_ptr(rocm_backend::ffi::status::rb_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

/// Checks a failing call's status and that its message names the function.
fn expect_fail(st: rb_status, want: rb_status, func: &str, what: &str) -> TestResult {
    ensure(
        st == want,
        format!("{func} {what}: {st:?}, expected {want:?}"),
    )?;
    let m = last_message();
    ensure(
        m.starts_with(func),
        format!("{func} {what}: message {m:?} does not name the function"),
    )
}

fn p(t: &rocm_backend::runtime::Tensor) -> *mut c_void {
    t.ptr().0 as usize as *mut c_void
}

fn raw_kernels_on_device_pointers(dev: &Dev) -> TestResult {
    let s = register(ok(Stream::new(dev.clone()))?) as *mut rb_stream;
    let n = 70001usize;
    for dt in FLOATS {
        let a = randn(dev, &[n], dt, 1)?;
        let b = randn(dev, &[n], dt, 2)?;
        let y = poisoned(dev, &[n], dt)?;
        // SAFETY: device pointers of n elements of dt on the stream's device.
        let st = unsafe { rb_kernel_mul(s, dt as i32, p(&a), p(&b), p(&y), n) };
        ensure(st == rb_status::Success, format!("rb_kernel_mul: {st:?}"))?;
        ok(dev.synchronize())?;
        let (va, vb) = (values(&a)?, values(&b)?);
        let want: Vec<f64> = va
            .iter()
            .zip(&vb)
            .map(|(x, z)| round_to(dt, BinaryOp::Mul.reference(*x, *z)))
            .collect();
        assert_close_dtype("rb_kernel_mul", &values(&y)?, &want, dt)?;
        // In place: gelu backward into dy's own memory.
        let dy = randn(dev, &[n], dt, 3)?;
        let vd = values(&dy)?;
        let st = unsafe { rb_kernel_gelu_backward(s, dt as i32, p(&a), p(&dy), p(&dy), n, 0) };
        ensure(
            st == rb_status::Success,
            format!("rb_kernel_gelu_backward: {st:?}"),
        )?;
        ok(dev.synchronize())?;
        let want: Vec<f64> = va
            .iter()
            .zip(&vd)
            .map(|(x, g)| round_to(dt, UnaryOp::Gelu { tanh: false }.grad_reference(*x, *g)))
            .collect();
        assert_close_dtype("rb_kernel_gelu_backward", &values(&dy)?, &want, dt)?;
        // SGD with momentum, first step.
        let par = randn(dev, &[n], dt, 4)?;
        let buf = poisoned(dev, &[n], dt)?;
        let vp = values(&par)?;
        let st = unsafe {
            rb_kernel_sgd_step(
                s,
                dt as i32,
                p(&par),
                p(&a),
                p(&buf),
                n,
                0.1,
                0.9,
                0.0,
                0.01,
                1,
                1,
            )
        };
        ensure(
            st == rb_status::Success,
            format!("rb_kernel_sgd_step: {st:?}"),
        )?;
        ok(dev.synchronize())?;
        let at = SgdAttrs {
            lr: 0.1,
            momentum: 0.9,
            dampening: 0.0,
            weight_decay: 0.01,
            nesterov: true,
            first_step: true,
        };
        let want: Vec<f64> = vp
            .iter()
            .zip(&va)
            .map(|(x, g)| sgd_reference(*x, *g, 0.0, &at).0)
            .collect();
        let tol = if dt == DType::F32 { 1e-5 } else { 2e-2 };
        assert_close("rb_kernel_sgd_step", &values(&par)?, &want, tol, tol)?;
    }
    let a = randn(dev, &[4], DType::F32, 1)?;
    // SAFETY: as above; the failing calls must not touch memory.
    unsafe {
        ensure(
            rb_kernel_add(s, 0, p(&a), std::ptr::null(), p(&a), 4) == rb_status::NullPointer,
            "NULL b",
        )?;
        ensure(
            rb_kernel_add(
                s,
                0,
                std::ptr::null(),
                std::ptr::null(),
                std::ptr::null_mut(),
                0,
            ) == rb_status::Success,
            "n = 0",
        )?;
        ensure(
            rb_kernel_add(s, 42, p(&a), p(&a), p(&a), 4) == rb_status::InvalidArgument,
            "bad dtype",
        )?;
        ensure(
            rb_kernel_div(s, DType::I32 as i32, p(&a), p(&a), p(&a), 4) == rb_status::DtypeMismatch,
            "int div",
        )?;
        ensure(
            rb_kernel_exp(s, DType::I64 as i32, p(&a), p(&a), 2) == rb_status::DtypeMismatch,
            "int exp",
        )?;
        ensure(
            rb_kernel_gelu(s, 0, p(&a), p(&a), 4, 2) == rb_status::InvalidArgument,
            "gelu approximate=2",
        )?;
        ensure(
            rb_kernel_adam_step(
                s,
                0,
                p(&a),
                p(&a),
                p(&a),
                p(&a),
                std::ptr::null_mut(),
                4,
                0.1,
                0.9,
                0.999,
                1e-8,
                0.0,
                0,
                0,
                0,
            ) == rb_status::InvalidArgument,
            "adam step 0",
        )?;
        rocm_backend::ffi::stream::rb_stream_destroy(s);
    }
    Ok(())
}

fn cp(t: &rocm_backend::runtime::Tensor) -> *const c_void {
    p(t) as *const c_void
}

/// Index of element (i, j) of op(X) in a column-major X with leading dimension `ld`.
fn at(trans: i32, ld: usize, i: usize, j: usize) -> usize {
    if trans == 0 { i + j * ld } else { j + i * ld }
}

fn raw_blas_geam(dev: &Dev) -> TestResult {
    let s = register(ok(Stream::new(dev.clone()))?) as *mut rb_stream;
    let mut seed = 10;
    for dt in FLOATS {
        for (m, n) in [(1usize, 1usize), (37, 53), (300, 129), (1, 517)] {
            for (ta, tb) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
                let (alpha, beta) = (1.5f32, -0.75f32);
                let rows = |t: i32| if t == 0 { m } else { n };
                let cols = |t: i32| if t == 0 { n } else { m };
                // Leading dimensions with padding rows, so stride handling is exercised.
                let (lda, ldb, ldc) = (rows(ta) + 3, rows(tb) + 1, m + 2);
                seed += 1;
                let a = randn(dev, &[lda * cols(ta)], dt, seed)?;
                let b = randn(dev, &[ldb * cols(tb)], dt, seed + 1000)?;
                let c = poisoned(dev, &[ldc * n], dt)?;
                // SAFETY: device buffers of the sizes described.
                let st = unsafe {
                    rb_blas_geam(
                        s,
                        dt as i32,
                        ta,
                        tb,
                        m as i64,
                        n as i64,
                        alpha,
                        cp(&a),
                        lda as i64,
                        beta,
                        cp(&b),
                        ldb as i64,
                        p(&c),
                        ldc as i64,
                    )
                };
                ensure(st == rb_status::Success, format!("rb_blas_geam: {st:?}"))?;
                ok(dev.synchronize())?;
                let (va, vb, vc) = (values(&a)?, values(&b)?, values(&c)?);
                let (mut got, mut want) = (vec![], vec![]);
                for j in 0..n {
                    for i in 0..m {
                        got.push(vc[i + j * ldc]);
                        want.push(round_to(
                            dt,
                            alpha as f64 * va[at(ta, lda, i, j)]
                                + beta as f64 * vb[at(tb, ldb, i, j)],
                        ));
                    }
                    // The padding rows of C stay untouched (still poisoned).
                    for i in m..ldc {
                        ensure(
                            vc[i + j * ldc].is_nan(),
                            format!("rb_blas_geam wrote C's padding row {i} of column {j}"),
                        )?;
                    }
                }
                assert_close_dtype(
                    &format!("rb_blas_geam {dt} m={m} n={n} ta={ta} tb={tb}"),
                    &got,
                    &want,
                    dt,
                )?;
            }
        }
        // In place (C == A, not transposed, ldc == lda) with B transposed; then beta == 0
        // with B NULL, and alpha == 0 with A NULL (not read).
        let (m, n, ld) = (45usize, 33usize, 50usize);
        let a = randn(dev, &[ld * n], dt, 77)?;
        let b = randn(dev, &[n * m], dt, 78)?;
        let (va, vb) = (values(&a)?, values(&b)?);
        // SAFETY: as above.
        let st = unsafe {
            rb_blas_geam(
                s,
                dt as i32,
                0,
                1,
                m as i64,
                n as i64,
                2.0,
                cp(&a),
                ld as i64,
                1.0,
                cp(&b),
                n as i64,
                p(&a),
                ld as i64,
            )
        };
        ensure(st == rb_status::Success, format!("geam in place: {st:?}"))?;
        ok(dev.synchronize())?;
        let vc = values(&a)?;
        let (mut got, mut want) = (vec![], vec![]);
        for j in 0..n {
            for i in 0..ld {
                got.push(vc[i + j * ld]);
                want.push(if i < m {
                    round_to(dt, 2.0 * va[i + j * ld] + vb[j + i * n])
                } else {
                    va[i + j * ld]
                });
            }
        }
        assert_close_dtype(&format!("rb_blas_geam in place {dt}"), &got, &want, dt)?;
        let c = poisoned(dev, &[m * n], dt)?;
        let b = randn(dev, &[m * n], dt, 79)?;
        let vb = values(&b)?;
        for (alpha, a_ptr, beta, b_ptr, what) in [
            (-1.0f32, cp(&b), 0.0f32, std::ptr::null(), "beta=0, B NULL"),
            (0.0, std::ptr::null(), 0.5, cp(&b), "alpha=0, A NULL"),
        ] {
            // SAFETY: as above; the NULL matrix is not read.
            let st = unsafe {
                rb_blas_geam(
                    s,
                    dt as i32,
                    0,
                    0,
                    m as i64,
                    n as i64,
                    alpha,
                    a_ptr,
                    m as i64,
                    beta,
                    b_ptr,
                    m as i64,
                    p(&c),
                    m as i64,
                )
            };
            ensure(st == rb_status::Success, format!("geam {what}: {st:?}"))?;
            ok(dev.synchronize())?;
            let k = if alpha != 0.0 { alpha } else { beta } as f64;
            let want: Vec<f64> = vb.iter().map(|v| round_to(dt, k * v)).collect();
            assert_close_dtype(
                &format!("rb_blas_geam {what} {dt}"),
                &values(&c)?,
                &want,
                dt,
            )?;
        }
    }
    // SAFETY: a stream handle of this test.
    unsafe { rocm_backend::ffi::stream::rb_stream_destroy(s) };
    Ok(())
}

fn raw_dnn_reduce_and_argmax(dev: &Dev) -> TestResult {
    use rocm_backend::ffi::dnn::{rb_dnn_argmax, rb_dnn_reduce};
    use rocm_backend::ops::reduce::{self, ReduceOp};
    let s = register(ok(Stream::new(dev.clone()))?) as *mut rb_stream;
    let ops = [
        ReduceOp::Sum,
        ReduceOp::Mean,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Prod,
    ];
    let shapes: [[usize; 3]; 6] = [
        [1, 1, 1],
        [3, 5, 7],
        [1, 1000, 1],
        [4, 300, 1],
        [2, 1, 3],
        [5, 67, 129],
    ];
    let mut seed = 500;
    for dt in FLOATS {
        for sh in shapes {
            let [outer, r, inner] = sh;
            seed += 1;
            let x = randn(dev, &sh, dt, seed)?;
            let vx = values(&x)?;
            for (code, op) in ops.iter().enumerate() {
                // Products of many normal values under/overflow: use values near 1.
                let (x, vx) = if *op == ReduceOp::Prod {
                    let v: Vec<f64> = vx.iter().map(|v| 1.0 + 0.01 * v).collect();
                    let t = from_f64(dev, &v, &sh, dt)?;
                    let v = values(&t)?;
                    (t, v)
                } else {
                    (x.clone(), vx.clone())
                };
                let y = poisoned(dev, &[outer * inner], dt)?;
                // SAFETY: x has outer*r*inner and y outer*inner elements of dt.
                let st = unsafe {
                    rb_dnn_reduce(
                        s,
                        code as i32,
                        dt as i32,
                        cp(&x),
                        outer as i64,
                        r as i64,
                        inner as i64,
                        p(&y),
                    )
                };
                ensure(st == rb_status::Success, format!("rb_dnn_reduce: {st:?}"))?;
                ok(dev.synchronize())?;
                let want: Vec<f64> = reduce::reference(*op, &vx, &sh, &[1])
                    .into_iter()
                    .map(|v| round_to(dt, v))
                    .collect();
                assert_close_dtype(
                    &format!("rb_dnn_reduce {} {sh:?} {dt}", op.name()),
                    &values(&y)?,
                    &want,
                    dt,
                )?;
            }
            let y = poisoned(dev, &[outer * inner], DType::I64)?;
            // SAFETY: as above, y of outer*inner int64.
            let st = unsafe {
                rb_dnn_argmax(
                    s,
                    dt as i32,
                    cp(&x),
                    outer as i64,
                    r as i64,
                    inner as i64,
                    p(&y) as *mut i64,
                )
            };
            ensure(st == rb_status::Success, format!("rb_dnn_argmax: {st:?}"))?;
            ok(dev.synchronize())?;
            let want = reduce::argmax_reference(&vx, &sh, 1);
            assert_close(
                &format!("rb_dnn_argmax {sh:?} {dt}"),
                &values(&y)?,
                &want,
                0.0,
                0.0,
            )?;
        }
        // An empty reduced extent: sum 0, mean NaN, prod 1; x may be NULL.
        for (code, want) in [(0, 0.0), (1, f64::NAN), (4, 1.0)] {
            let y = poisoned(dev, &[6], dt)?;
            // SAFETY: y has 6 elements; x has none.
            let st = unsafe { rb_dnn_reduce(s, code, dt as i32, std::ptr::null(), 2, 0, 3, p(&y)) };
            ensure(st == rb_status::Success, format!("reduce over r=0: {st:?}"))?;
            ok(dev.synchronize())?;
            assert_close(
                &format!("rb_dnn_reduce op {code} over r=0 {dt}"),
                &values(&y)?,
                &[want; 6],
                0.0,
                0.0,
            )?;
        }
    }
    // SAFETY: a stream handle of this test.
    unsafe { rocm_backend::ffi::stream::rb_stream_destroy(s) };
    Ok(())
}

/// Contiguous (row-major) strides of `shape`, in elements.
fn contiguous(shape: &[usize]) -> Vec<usize> {
    let mut st = vec![1; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        st[d] = st[d + 1] * shape[d + 1];
    }
    st
}

fn raw_kernel_copy_strided(dev: &Dev) -> TestResult {
    let s = register(ok(Stream::new(dev.clone()))?) as *mut rb_stream;
    for dt in [DType::F32, DType::F16, DType::BF16, DType::I64, DType::Bool] {
        // Source [6, 35, 33] (contiguous); cases: shape, source offset and strides,
        // destination strides (dense in the destination's own layout).
        let src_shape = [6usize, 35, 33];
        let n: usize = src_shape.iter().product();
        let vals: Vec<f64> = (0..n)
            .map(|i| match dt {
                DType::Bool => (i % 3 == 0) as u8 as f64,
                DType::I64 => i as f64 * 7.0 - 1000.0,
                _ => round_to(dt, (i % 1013) as f64 * 0.25 - 100.0),
            })
            .collect();
        let x = from_f64(dev, &vals, &[n], dt)?;
        let ss = contiguous(&src_shape);
        let es = dt.size();
        struct Case {
            name: &'static str,
            shape: Vec<usize>,
            src_off: usize,
            src_strides: Vec<usize>,
            dst_strides: Vec<usize>,
        }
        let cases = [
            // permute(2, 0, 1): dst[k, i, j] = x[i, j, k], i.e. dst strides of [33, 6, 35].
            Case {
                name: "permute",
                shape: src_shape.to_vec(),
                src_off: 0,
                src_strides: ss.clone(),
                dst_strides: vec![35, 1, 6 * 35],
            },
            // transpose of the last two dims.
            Case {
                name: "transpose",
                shape: src_shape.to_vec(),
                src_off: 0,
                src_strides: ss.clone(),
                dst_strides: vec![35 * 33, 1, 35],
            },
            // x[1:4, 2:30:3, 5:] into a dense [3, 10, 28].
            Case {
                name: "slice",
                shape: vec![3, 10, 28],
                src_off: ss[0] + 2 * ss[1] + 5,
                src_strides: vec![ss[0], 3 * ss[1], 1],
                dst_strides: contiguous(&[3, 10, 28]),
            },
            // Into columns 7.. of a [6, 35, 40] destination (one half of a concat).
            Case {
                name: "concat",
                shape: src_shape.to_vec(),
                src_off: 0,
                src_strides: ss.clone(),
                dst_strides: vec![35 * 40, 40, 1],
            },
            // ndim 0: one element.
            Case {
                name: "scalar",
                shape: vec![],
                src_off: 17,
                src_strides: vec![],
                dst_strides: vec![],
            },
        ];
        for c in &cases {
            let dst_len = c
                .shape
                .iter()
                .zip(&c.dst_strides)
                .map(|(e, s)| (e - 1) * s)
                .sum::<usize>()
                + 1
                + if c.name == "concat" { 7 } else { 0 };
            let dst_off = if c.name == "concat" { 7 } else { 0 };
            let y = poisoned(dev, &[dst_len], dt)?;
            let to_i64 = |v: &[usize]| v.iter().map(|&x| x as i64).collect::<Vec<i64>>();
            let (sh, sst, dst) = (
                to_i64(&c.shape),
                to_i64(&c.src_strides),
                to_i64(&c.dst_strides),
            );
            // SAFETY: the regions described lie inside x and y.
            let st = unsafe {
                rb_kernel_copy_strided(
                    s,
                    es,
                    c.shape.len(),
                    sh.as_ptr(),
                    cp(&x).byte_add(c.src_off * es),
                    sst.as_ptr(),
                    p(&y).byte_add(dst_off * es),
                    dst.as_ptr(),
                )
            };
            ensure(
                st == rb_status::Success,
                format!("rb_kernel_copy_strided {}: {st:?}", c.name),
            )?;
            ok(dev.synchronize())?;
            // Host reference: every destination element written, the rest still poisoned.
            let poison = values(&poisoned(dev, &[1], dt)?)?[0];
            let mut want = vec![poison; dst_len];
            let count: usize = c.shape.iter().product();
            for e in 0..count {
                let (mut rem, mut so, mut dof) = (e, c.src_off, dst_off);
                for d in (0..c.shape.len()).rev() {
                    let i = rem % c.shape[d];
                    rem /= c.shape[d];
                    so += i * c.src_strides[d];
                    dof += i * c.dst_strides[d];
                }
                want[dof] = vals[so];
            }
            assert_close(
                &format!("rb_kernel_copy_strided {} {dt}", c.name),
                &values(&y)?,
                &want,
                0.0,
                0.0,
            )?;
        }
    }
    // SAFETY: a stream handle of this test.
    unsafe { rocm_backend::ffi::stream::rb_stream_destroy(s) };
    Ok(())
}

fn raw_part_a_misuse(dev: &Dev) -> TestResult {
    use rb_status::*;
    use rocm_backend::ffi::dnn::{rb_dnn_argmax, rb_dnn_reduce};
    let s = register(ok(Stream::new(dev.clone()))?) as *mut rb_stream;
    let a = poisoned(dev, &[64], DType::F32)?;
    let b = poisoned(dev, &[64], DType::F32)?;
    let before = values(&b)?;
    let nul = std::ptr::null::<c_void>();
    // SAFETY (all calls below): buffers of 64 elements, 4x4 matrices with ld <= 8 fit; the
    // failing calls must not touch memory.
    unsafe {
        let g =
            |dt: i32, ta: i32, tb: i32, a_: *const c_void, lda: i64, c: *mut c_void, ldc: i64| {
                rb_blas_geam(s, dt, ta, tb, 4, 4, 1.0, a_, lda, 1.0, cp(&a), 4, c, ldc)
            };
        let f = "rb_blas_geam";
        expect_fail(
            g(0, 0, 0, cp(&a), 4, std::ptr::null_mut(), 4),
            NullPointer,
            f,
            "NULL C",
        )?;
        expect_fail(g(0, 0, 0, nul, 4, p(&b), 4), NullPointer, f, "NULL A")?;
        expect_fail(
            g(0, 2, 0, cp(&a), 4, p(&b), 4),
            InvalidArgument,
            f,
            "transa=2",
        )?;
        expect_fail(
            g(0, 0, 0, cp(&a), 3, p(&b), 4),
            InvalidArgument,
            f,
            "lda < m",
        )?;
        expect_fail(
            g(0, 0, 0, cp(&a), 4, p(&b), 2),
            InvalidArgument,
            f,
            "ldc < m",
        )?;
        expect_fail(
            g(42, 0, 0, cp(&a), 4, p(&b), 4),
            InvalidArgument,
            f,
            "dtype 42",
        )?;
        expect_fail(
            g(DType::I32 as i32, 0, 0, cp(&a), 4, p(&b), 4),
            DtypeMismatch,
            f,
            "int dtype",
        )?;
        // C == B (the second operand) transposed, and C == B with another ld: rejected.
        expect_fail(
            g(0, 0, 1, cp(&b), 4, p(&a), 4),
            InvalidArgument,
            f,
            "C == B transposed",
        )?;
        expect_fail(
            g(0, 0, 0, cp(&b), 4, p(&a), 5),
            InvalidArgument,
            f,
            "C == B, ldc != ldb",
        )?;
        expect_fail(
            g(0, 0, 0, cp(&b), 4, p(&a).byte_add(8), 4),
            InvalidArgument,
            f,
            "C partly overlapping B",
        )?;
        ensure(
            rb_blas_geam(
                s,
                0,
                0,
                0,
                -1,
                4,
                1.0,
                nul,
                4,
                1.0,
                nul,
                4,
                std::ptr::null_mut(),
                4,
            ) == InvalidArgument,
            "geam m < 0",
        )?;
        ensure(
            rb_blas_geam(
                s,
                0,
                0,
                0,
                0,
                4,
                1.0,
                nul,
                1,
                1.0,
                nul,
                1,
                std::ptr::null_mut(),
                1,
            ) == Success,
            "geam m = 0",
        )?;
        let f = "rb_dnn_reduce";
        expect_fail(
            rb_dnn_reduce(s, 5, 0, cp(&a), 2, 4, 2, p(&b)),
            InvalidArgument,
            f,
            "op=5",
        )?;
        expect_fail(
            rb_dnn_reduce(s, 0, 0, nul, 2, 4, 2, p(&b)),
            NullPointer,
            f,
            "NULL x",
        )?;
        expect_fail(
            rb_dnn_reduce(s, 0, 0, cp(&a), 2, 4, 2, std::ptr::null_mut()),
            NullPointer,
            f,
            "NULL y",
        )?;
        expect_fail(
            rb_dnn_reduce(s, 0, 0, cp(&a), 2, -4, 2, p(&b)),
            InvalidArgument,
            f,
            "r<0",
        )?;
        expect_fail(
            rb_dnn_reduce(s, 2, 0, cp(&a), 2, 0, 2, p(&b)),
            InvalidArgument,
            f,
            "max over r=0",
        )?;
        expect_fail(
            rb_dnn_reduce(s, 0, DType::I64 as i32, cp(&a), 2, 4, 2, p(&b)),
            DtypeMismatch,
            f,
            "int dtype",
        )?;
        expect_fail(
            rb_dnn_reduce(s, 0, 0, cp(&a), i64::MAX, 4, 2, p(&b)),
            InvalidArgument,
            f,
            "overflowing extents",
        )?;
        let f = "rb_dnn_argmax";
        expect_fail(
            rb_dnn_argmax(s, 0, cp(&a), 2, 0, 2, p(&b) as *mut i64),
            InvalidArgument,
            f,
            "r=0",
        )?;
        expect_fail(
            rb_dnn_argmax(s, 0, cp(&a), 2, 4, 2, std::ptr::null_mut()),
            NullPointer,
            f,
            "NULL y",
        )?;
        expect_fail(
            rb_dnn_argmax(s, 9, cp(&a), 2, 4, 2, p(&b) as *mut i64),
            InvalidArgument,
            f,
            "dtype 9",
        )?;
        let f = "rb_kernel_copy_strided";
        let sh = [4i64; 17];
        let st1 = [1i64; 17];
        expect_fail(
            rb_kernel_copy_strided(
                s,
                4,
                17,
                sh.as_ptr(),
                cp(&a),
                st1.as_ptr(),
                p(&b),
                st1.as_ptr(),
            ),
            InvalidArgument,
            f,
            "ndim 17",
        )?;
        expect_fail(
            rb_kernel_copy_strided(
                s,
                4,
                2,
                std::ptr::null(),
                cp(&a),
                st1.as_ptr(),
                p(&b),
                st1.as_ptr(),
            ),
            NullPointer,
            f,
            "NULL shape",
        )?;
        let neg = [-1i64, 1];
        expect_fail(
            rb_kernel_copy_strided(
                s,
                4,
                2,
                sh.as_ptr(),
                cp(&a).byte_add(64),
                neg.as_ptr(),
                p(&b),
                st1.as_ptr(),
            ),
            InvalidArgument,
            f,
            "negative stride",
        )?;
        let negs = [-4i64, 4];
        expect_fail(
            rb_kernel_copy_strided(
                s,
                4,
                2,
                negs.as_ptr(),
                cp(&a),
                st1.as_ptr(),
                p(&b),
                st1.as_ptr(),
            ),
            InvalidArgument,
            f,
            "negative extent",
        )?;
        let dense = [4i64, 1];
        expect_fail(
            rb_kernel_copy_strided(
                s,
                3,
                2,
                sh.as_ptr(),
                cp(&a),
                dense.as_ptr(),
                p(&b),
                dense.as_ptr(),
            ),
            InvalidArgument,
            f,
            "elem_size 3",
        )?;
        expect_fail(
            rb_kernel_copy_strided(
                s,
                4,
                2,
                sh.as_ptr(),
                cp(&a),
                dense.as_ptr(),
                p(&a).byte_add(20),
                dense.as_ptr(),
            ),
            InvalidArgument,
            f,
            "overlapping regions",
        )?;
        expect_fail(
            rb_kernel_copy_strided(
                s,
                4,
                2,
                sh.as_ptr(),
                nul,
                dense.as_ptr(),
                p(&b),
                dense.as_ptr(),
            ),
            NullPointer,
            f,
            "NULL src",
        )?;
        let empty = [4i64, 0];
        ensure(
            rb_kernel_copy_strided(
                s,
                4,
                2,
                empty.as_ptr(),
                nul,
                dense.as_ptr(),
                std::ptr::null_mut(),
                dense.as_ptr(),
            ) == Success,
            "copy of no elements with NULL pointers",
        )?;
        rocm_backend::ffi::stream::rb_stream_destroy(s);
    }
    ok(dev.synchronize())?;
    let after = values(&b)?;
    ensure(
        after
            .iter()
            .zip(&before)
            .all(|(x, y)| x.is_nan() && y.is_nan()),
        "a failing call wrote its destination",
    )
}
