//! The raw-pointer entry points (`rb_kernel_*`) on device pointers of a stream's device:
//! results equal the eager ops', and misuse gets the right status.

use crate::common::*;
use rocm_backend::ffi::handles::register;
use rocm_backend::ffi::raw::blas::rb_blas_geam;
use rocm_backend::ffi::raw::kernel::*;
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

// ------------------------------------------------ raw-b: compare/where, losses, rope, embedding

use rocm_backend::ops::elementwise::CompareOp;
use rocm_backend::ops::nn::{LossKind, Reduction};
use rocm_backend::runtime::eager::Grad;
use rocm_backend::runtime::{data as eager_data, elementwise as eager_pw, prelude as eager_nn};

pub fn tests_b() -> Vec<(&'static str, Body)> {
    vec![
        ("raw_kernel_compare_where", raw_kernel_compare_where),
        ("raw_kernel_losses", raw_kernel_losses),
        (
            "raw_kernel_rope_embedding_weighted_sum",
            raw_kernel_rope_embedding_weighted_sum,
        ),
        ("raw_kernel_b_misuse", raw_kernel_b_misuse),
    ]
}

fn new_stream(dev: &Dev) -> Result<*mut rb_stream, libtest_mimic::Failed> {
    Ok(register(ok(Stream::new(dev.clone()))?) as *mut rb_stream)
}

fn status_ok(st: rb_status, what: &str) -> TestResult {
    ensure(st == rb_status::Success, format!("{what}: {st:?}"))
}

fn last_message() -> String {
    // SAFETY: the last-error string is NUL-terminated and lives until the next call.
    unsafe {
        std::ffi::CStr::from_ptr(rocm_backend::ffi::status::rb_last_error_message())
            .to_string_lossy()
            .into_owned()
    }
}

/// `st` is `want` and the message names `func` and contains `needle`.
fn expect_status(st: rb_status, want: rb_status, func: &str, needle: &str) -> TestResult {
    ensure(
        st == want,
        format!("{func} ({needle}): {st:?}, expected {want:?}"),
    )?;
    let m = last_message();
    ensure(
        m.contains(func) && m.contains(needle),
        format!("{func}: message {m:?} should name it and contain {needle:?}"),
    )
}

/// The bytes of a bool tensor as they are (a poisoned byte stays visible).
fn raw_bytes(t: &rocm_backend::runtime::Tensor) -> Result<Vec<u8>, libtest_mimic::Failed> {
    let mut b = vec![0u8; t.numel()];
    ok(t.copy_to_host(&mut b, None))?;
    Ok(b)
}

fn poisoned_bool(
    dev: &Dev,
    n: usize,
) -> Result<rocm_backend::runtime::Tensor, libtest_mimic::Failed> {
    let t = ok(rocm_backend::runtime::Tensor::empty(
        dev.clone(),
        &[n],
        DType::Bool,
    ))?;
    if n > 0 {
        ok(dev.memset(t.ptr(), 0xAB, n, Default::default()))?;
        ok(dev.synchronize())?;
    }
    Ok(t)
}

/// Random values representable in `dt` (normal, rounded; times 8 and integral for ints).
fn rand_vals(dev: &Dev, n: usize, dt: DType, seed: u64) -> Result<Vec<f64>, libtest_mimic::Failed> {
    let v = values(&randn(dev, &[n], DType::F32, seed)?)?;
    Ok(v.into_iter()
        .map(|x| {
            if dt.is_float() {
                round_to(dt, x)
            } else {
                (x * 8.0).round()
            }
        })
        .collect())
}

const OPS: [CompareOp; 6] = [
    CompareOp::Eq,
    CompareOp::Ne,
    CompareOp::Lt,
    CompareOp::Le,
    CompareOp::Gt,
    CompareOp::Ge,
];

fn raw_kernel_compare_where(dev: &Dev) -> TestResult {
    let s = new_stream(dev)?;
    for n in [1usize, 1000, 70001] {
        for dt in [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64] {
            let va = rand_vals(dev, n, dt, 11)?;
            let a = from_f64(dev, &va, &[n], dt)?;
            // b equals a on every third element so eq/le/ge see ties.
            let mut vb = rand_vals(dev, n, dt, 12)?;
            for i in (0..n).step_by(3) {
                vb[i] = va[i];
            }
            let b = from_f64(dev, &vb, &[n], dt)?;
            let x = from_f64(dev, &rand_vals(dev, n, dt, 13)?, &[n], dt)?;
            let y = from_f64(dev, &rand_vals(dev, n, dt, 14)?, &[n], dt)?;
            for (k, op) in OPS.iter().enumerate() {
                let c = poisoned_bool(dev, n)?;
                // SAFETY: n elements of dt (n bytes for c) on the stream's device.
                let st =
                    unsafe { rb_kernel_compare(s, k as i32, dt as i32, p(&a), p(&b), p(&c), n) };
                status_ok(st, "rb_kernel_compare")?;
                ok(dev.synchronize())?;
                let got = raw_bytes(&c)?;
                let want: Vec<u8> = va
                    .iter()
                    .zip(&vb)
                    .map(|(u, v)| op.apply(*u, *v) as u8)
                    .collect();
                ensure(
                    got == want,
                    format!("rb_kernel_compare {} {dt} n={n}", op.name()),
                )?;
                let eager = ok(eager_pw::compare(None, *op, &a, &b, None))?;
                ensure(raw_bytes(&eager)? == got, "rb_kernel_compare vs eager")?;
                // where with that condition.
                let o = poisoned(dev, &[n], dt)?;
                let st = unsafe { rb_kernel_where(s, dt as i32, p(&c), p(&x), p(&y), p(&o), n) };
                status_ok(st, "rb_kernel_where")?;
                ok(dev.synchronize())?;
                let (vx, vy) = (values(&x)?, values(&y)?);
                let want: Vec<f64> = (0..n)
                    .map(|i| if want[i] == 1 { vx[i] } else { vy[i] })
                    .collect();
                assert_close_dtype("rb_kernel_where", &values(&o)?, &want, dt)?;
                // fused where_compare.
                let o2 = poisoned(dev, &[n], dt)?;
                let st = unsafe {
                    rb_kernel_where_compare(
                        s,
                        k as i32,
                        dt as i32,
                        p(&a),
                        p(&b),
                        p(&x),
                        p(&y),
                        p(&o2),
                        n,
                    )
                };
                status_ok(st, "rb_kernel_where_compare")?;
                ok(dev.synchronize())?;
                assert_close_dtype("rb_kernel_where_compare", &values(&o2)?, &want, dt)?;
                let eager = ok(eager_pw::where_compare(None, *op, &a, &b, &x, &y, None))?;
                assert_close_dtype(
                    "rb_kernel_where_compare vs eager",
                    &values(&o2)?,
                    &values(&eager)?,
                    dt,
                )?;
            }
        }
    }
    unsafe { rocm_backend::ffi::stream::rb_stream_destroy(s) };
    Ok(())
}

/// Probabilities strictly inside (0, 1) for bce.
fn probs(n: usize, salt: usize) -> Vec<f64> {
    (0..n)
        .map(|i| 0.05 + 0.9 * (((i * 37 + salt) % 101) as f64) / 100.0)
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn check_loss(
    dev: &Dev,
    s: *mut rb_stream,
    kind: LossKind,
    dt: DType,
    x: &rocm_backend::runtime::Tensor,
    t: &rocm_backend::runtime::Tensor,
    (n, c, inner): (usize, usize, usize),
    red: Reduction,
    ls: f64,
) -> TestResult {
    let want = ok(eager_nn::loss(None, kind, x, t, red, -100, ls, None))?;
    let oshape = want.shape().to_vec();
    let o = poisoned(dev, &oshape, dt)?;
    let what = format!(
        "rb_kernel_loss {} {dt} {red:?} [{n}, {c}, {inner}]",
        kind.name()
    );
    // SAFETY: buffers of the documented sizes on the stream's device.
    let st = unsafe {
        rb_kernel_loss(
            s,
            kind as i32,
            dt as i32,
            p(x),
            p(t),
            t.dtype() as i32,
            n,
            c,
            inner,
            red as i32,
            -100,
            ls,
            p(&o),
        )
    };
    status_ok(st, &what)?;
    ok(dev.synchronize())?;
    assert_close_dtype(&what, &values(&o)?, &values(&want)?, dt)?;
    let g = randn(dev, &oshape, dt, 21)?;
    let gi = poisoned(dev, x.shape(), dt)?;
    let st = unsafe {
        rb_kernel_loss_backward(
            s,
            kind as i32,
            dt as i32,
            p(&g),
            p(x),
            p(t),
            t.dtype() as i32,
            n,
            c,
            inner,
            red as i32,
            -100,
            ls,
            p(&gi),
        )
    };
    status_ok(st, &format!("{what} backward"))?;
    ok(dev.synchronize())?;
    let want = ok(eager_nn::loss_backward(
        None, kind, &g, x, t, red, -100, ls, None,
    ))?;
    assert_close_dtype(
        &format!("{what} backward"),
        &values(&gi)?,
        &values(&want)?,
        dt,
    )
}

fn raw_kernel_losses(dev: &Dev) -> TestResult {
    let s = new_stream(dev)?;
    let reds = [Reduction::None, Reduction::Mean, Reduction::Sum];
    for dt in FLOATS {
        for n in [1usize, 1001] {
            let x = randn(dev, &[n], dt, 31)?;
            let t = randn(dev, &[n], dt, 32)?;
            let px = from_f64(dev, &probs(n, 0), &[n], dt)?;
            let pt = from_f64(dev, &probs(n, 50), &[n], dt)?;
            for red in reds {
                check_loss(dev, s, LossKind::Mse, dt, &x, &t, (n, 1, 1), red, 0.0)?;
                check_loss(dev, s, LossKind::Bce, dt, &px, &pt, (n, 1, 1), red, 0.0)?;
            }
        }
        for (n, c, inner) in [(1usize, 4usize, 1usize), (5, 7, 3), (33, 130, 1)] {
            let x = randn(dev, &[n, c, inner], dt, 41)?;
            for tdt in [DType::I32, DType::I64] {
                // Class indices, every fifth item ignored.
                let tv: Vec<f64> = (0..n * inner)
                    .map(|i| {
                        if i % 5 == 4 {
                            -100.0
                        } else {
                            ((i * 7) % c) as f64
                        }
                    })
                    .collect();
                let t = from_f64(dev, &tv, &[n, inner], tdt)?;
                for red in reds {
                    check_loss(
                        dev,
                        s,
                        LossKind::CrossEntropy,
                        dt,
                        &x,
                        &t,
                        (n, c, inner),
                        red,
                        0.1,
                    )?;
                    check_loss(dev, s, LossKind::Nll, dt, &x, &t, (n, c, inner), red, 0.0)?;
                }
            }
        }
    }
    unsafe { rocm_backend::ffi::stream::rb_stream_destroy(s) };
    Ok(())
}

fn raw_kernel_rope_embedding_weighted_sum(dev: &Dev) -> TestResult {
    let s = new_stream(dev)?;
    for dt in FLOATS {
        // rope [outer, seq, inner, dim], forward and inverse.
        for shape in [[1usize, 1, 1, 2], [2, 5, 3, 8], [3, 37, 1, 130]] {
            let x = randn(dev, &shape, dt, 51)?;
            for inverse in [0i32, 1] {
                let y = poisoned(dev, &shape, dt)?;
                // SAFETY: x and y hold the product of shape elements of dt.
                let st = unsafe {
                    rb_kernel_rope(
                        s,
                        dt as i32,
                        p(&x),
                        p(&y),
                        shape[0],
                        shape[1],
                        shape[2],
                        shape[3],
                        10000.0,
                        3,
                        inverse,
                    )
                };
                status_ok(st, "rb_kernel_rope")?;
                ok(dev.synchronize())?;
                let want = ok(eager_nn::rope(None, &x, 1, 10000.0, 3, inverse == 1, None))?;
                assert_close_dtype("rb_kernel_rope", &values(&y)?, &values(&want)?, dt)?;
            }
        }
        // embedding [num, dim] with repeated indices.
        for (num, dim, n_idx) in [(1usize, 1usize, 1usize), (11, 6, 9), (50, 257, 300)] {
            let w = randn(dev, &[num, dim], dt, 61)?;
            for it in [DType::I32, DType::I64] {
                let iv: Vec<f64> = (0..n_idx).map(|j| ((j * 5 + 2) % num) as f64).collect();
                let idx = from_f64(dev, &iv, &[n_idx], it)?;
                let o = poisoned(dev, &[n_idx, dim], dt)?;
                let st = unsafe {
                    rb_kernel_embedding(
                        s,
                        dt as i32,
                        p(&w),
                        num,
                        dim,
                        it as i32,
                        p(&idx),
                        n_idx,
                        p(&o),
                    )
                };
                status_ok(st, "rb_kernel_embedding")?;
                ok(dev.synchronize())?;
                let want = ok(eager_data::embedding(None, &w, &idx, None))?;
                assert_close_dtype("rb_kernel_embedding", &values(&o)?, &values(&want)?, dt)?;
                let dy = randn(dev, &[n_idx, dim], dt, 62)?;
                let dw = poisoned(dev, &[num, dim], dt)?;
                let st = unsafe {
                    rb_kernel_embedding_backward(
                        s,
                        dt as i32,
                        p(&dy),
                        it as i32,
                        p(&idx),
                        n_idx,
                        num,
                        dim,
                        p(&dw),
                    )
                };
                status_ok(st, "rb_kernel_embedding_backward")?;
                ok(dev.synchronize())?;
                let want = ok(eager_data::embedding_backward(None, &dy, &idx, num, None))?;
                if dt == DType::F32 {
                    // Repeated indices are summed with f32 atomics on GPUs, in an order that
                    // changes between the two calls: a cancelling sum of O(1) terms can differ
                    // by a few f32 ulps of the terms (seen: 1.6e-6 on a result of 0.039).
                    assert_close(
                        "rb_kernel_embedding_backward",
                        &values(&dw)?,
                        &values(&want)?,
                        1e-5,
                        1e-5,
                    )?;
                } else {
                    assert_close_dtype(
                        "rb_kernel_embedding_backward",
                        &values(&dw)?,
                        &values(&want)?,
                        dt,
                    )?;
                }
            }
        }
        // weighted_sum x [outer, n, d], w [outer, n].
        for (outer, n, d) in [(1usize, 1usize, 1usize), (3, 5, 7), (4, 65, 130), (2, 0, 3)] {
            let x = randn(dev, &[outer, n, d], dt, 71)?;
            let w = randn(dev, &[outer, n], dt, 72)?;
            let y = poisoned(dev, &[outer, d], dt)?;
            let st =
                unsafe { rb_kernel_weighted_sum(s, dt as i32, p(&x), p(&w), p(&y), outer, n, d) };
            status_ok(st, "rb_kernel_weighted_sum")?;
            ok(dev.synchronize())?;
            let want = ok(eager_nn::weighted_sum(None, &x, &w, None))?;
            assert_close_dtype("rb_kernel_weighted_sum", &values(&y)?, &values(&want)?, dt)?;
            let dy = randn(dev, &[outer, d], dt, 73)?;
            let [wx, ww] = ok(eager_nn::weighted_sum_backward(
                None,
                &dy,
                &x,
                &w,
                [Grad::New, Grad::New],
            ))?;
            let (wx, ww) = (wx.expect("dx"), ww.expect("dw"));
            let dx = poisoned(dev, &[outer, n, d], dt)?;
            let dw = poisoned(dev, &[outer, n], dt)?;
            let st = unsafe {
                rb_kernel_weighted_sum_backward(
                    s,
                    dt as i32,
                    p(&x),
                    p(&w),
                    p(&dy),
                    p(&dx),
                    p(&dw),
                    outer,
                    n,
                    d,
                )
            };
            status_ok(st, "rb_kernel_weighted_sum_backward")?;
            ok(dev.synchronize())?;
            assert_close_dtype(
                "rb_kernel_weighted_sum_backward dx",
                &values(&dx)?,
                &values(&wx)?,
                dt,
            )?;
            assert_close_dtype(
                "rb_kernel_weighted_sum_backward dw",
                &values(&dw)?,
                &values(&ww)?,
                dt,
            )?;
            // dx skipped (NULL): dw alone.
            let dw2 = poisoned(dev, &[outer, n], dt)?;
            let st = unsafe {
                rb_kernel_weighted_sum_backward(
                    s,
                    dt as i32,
                    p(&x),
                    p(&w),
                    p(&dy),
                    std::ptr::null_mut(),
                    p(&dw2),
                    outer,
                    n,
                    d,
                )
            };
            status_ok(st, "rb_kernel_weighted_sum_backward (dx NULL)")?;
            ok(dev.synchronize())?;
            assert_close_dtype(
                "rb_kernel_weighted_sum_backward dw only",
                &values(&dw2)?,
                &values(&ww)?,
                dt,
            )?;
        }
    }
    unsafe { rocm_backend::ffi::stream::rb_stream_destroy(s) };
    Ok(())
}

fn raw_kernel_b_misuse(dev: &Dev) -> TestResult {
    use rb_status::*;
    let s = new_stream(dev)?;
    let f = DType::F32 as i32;
    let a = randn(dev, &[24], DType::F32, 1)?;
    let c = poisoned_bool(dev, 24)?;
    let nul = std::ptr::null_mut::<c_void>();
    let bad_t = from_f64(dev, &[0.0, 4.0], &[2], DType::I64)?;
    let bad_i = from_f64(dev, &[0.0, 9.0], &[2], DType::I32)?;
    // SAFETY: the failing calls must not touch memory; the buffers are large enough anyway.
    unsafe {
        expect_status(
            rb_kernel_compare(s, 9, f, p(&a), p(&a), p(&c), 24),
            InvalidArgument,
            "rb_kernel_compare",
            "op=9",
        )?;
        expect_status(
            rb_kernel_compare(s, 0, 42, p(&a), p(&a), p(&c), 24),
            InvalidArgument,
            "rb_kernel_compare",
            "42",
        )?;
        expect_status(
            rb_kernel_compare(s, 0, f, nul, p(&a), p(&c), 24),
            NullPointer,
            "rb_kernel_compare",
            "a",
        )?;
        expect_status(
            rb_kernel_where(s, DType::Bool as i32, p(&c), p(&c), p(&c), p(&c), 24),
            DtypeMismatch,
            "rb_kernel_where",
            "bool",
        )?;
        expect_status(
            rb_kernel_where(s, f, nul, p(&a), p(&a), p(&a), 24),
            NullPointer,
            "rb_kernel_where",
            "cond",
        )?;
        expect_status(
            rb_kernel_where_compare(s, -1, f, p(&a), p(&a), p(&a), p(&a), p(&a), 24),
            InvalidArgument,
            "rb_kernel_where_compare",
            "op=-1",
        )?;
        status_ok(
            rb_kernel_where_compare(s, 0, f, nul, nul, nul, nul, nul, 0),
            "where_compare n=0",
        )?;
        // Losses: bad kind, bad reduction, int input, target dtype, c/inner for mse, out-of-range target.
        let loss = |kind: i32,
                    dtype: i32,
                    t: *mut c_void,
                    tdt: i32,
                    n: usize,
                    c: usize,
                    red: i32,
                    ls: f64| {
            rb_kernel_loss(s, kind, dtype, p(&a), t, tdt, n, c, 1, red, -100, ls, p(&a))
        };
        expect_status(
            loss(7, f, p(&a), f, 4, 1, 1, 0.0),
            InvalidArgument,
            "rb_kernel_loss",
            "kind=7",
        )?;
        expect_status(
            loss(0, f, p(&a), f, 4, 1, 5, 0.0),
            InvalidArgument,
            "rb_kernel_loss",
            "reduction=5",
        )?;
        expect_status(
            loss(0, DType::I32 as i32, p(&a), DType::I32 as i32, 4, 1, 1, 0.0),
            DtypeMismatch,
            "rb_kernel_loss",
            "mse_loss",
        )?;
        expect_status(
            loss(1, f, p(&a), DType::F16 as i32, 4, 1, 1, 0.0),
            DtypeMismatch,
            "rb_kernel_loss",
            "bce_loss",
        )?;
        expect_status(
            loss(0, f, p(&a), f, 4, 2, 1, 0.0),
            ShapeMismatch,
            "rb_kernel_loss",
            "c=2",
        )?;
        expect_status(
            loss(2, f, p(&a), f, 2, 4, 1, 0.0),
            DtypeMismatch,
            "rb_kernel_loss",
            "target",
        )?;
        expect_status(
            loss(2, f, p(&bad_t), DType::I64 as i32, 2, 4, 1, 1.5),
            InvalidArgument,
            "rb_kernel_loss",
            "label_smoothing",
        )?;
        expect_status(
            loss(2, f, p(&bad_t), DType::I64 as i32, 2, 0, 1, 0.0),
            ShapeMismatch,
            "rb_kernel_loss",
            "0 classes",
        )?;
        expect_status(
            loss(3, f, p(&bad_t), DType::I64 as i32, 2, 4, 1, 0.0),
            InvalidArgument,
            "rb_kernel_loss",
            "target 4",
        )?;
        expect_status(
            loss(2, f, nul, DType::I64 as i32, 2, 4, 1, 0.0),
            NullPointer,
            "rb_kernel_loss",
            "target",
        )?;
        expect_status(
            rb_kernel_loss_backward(
                s,
                2,
                f,
                p(&a),
                p(&a),
                p(&bad_t),
                DType::I64 as i32,
                2,
                4,
                1,
                1,
                -100,
                0.0,
                p(&a),
            ),
            InvalidArgument,
            "rb_kernel_loss_backward",
            "target 4",
        )?;
        // rope: odd dim, bad base, bad inverse flag, int dtype.
        expect_status(
            rb_kernel_rope(s, f, p(&a), p(&a), 1, 4, 1, 3, 1e4, 0, 0),
            ShapeMismatch,
            "rb_kernel_rope",
            "even",
        )?;
        expect_status(
            rb_kernel_rope(s, f, p(&a), p(&a), 1, 4, 1, 6, -1.0, 0, 0),
            InvalidArgument,
            "rb_kernel_rope",
            "base",
        )?;
        expect_status(
            rb_kernel_rope(s, f, p(&a), p(&a), 1, 4, 1, 6, 1e4, 0, 2),
            InvalidArgument,
            "rb_kernel_rope",
            "inverse",
        )?;
        expect_status(
            rb_kernel_rope(s, DType::I32 as i32, p(&a), p(&a), 1, 4, 1, 6, 1e4, 0, 0),
            DtypeMismatch,
            "rb_kernel_rope",
            "rope",
        )?;
        // embedding: index out of range, float index dtype, NULL weight.
        expect_status(
            rb_kernel_embedding(s, f, p(&a), 3, 4, DType::I32 as i32, p(&bad_i), 2, p(&a)),
            InvalidArgument,
            "rb_kernel_embedding",
            "index 9",
        )?;
        expect_status(
            rb_kernel_embedding(s, f, p(&a), 3, 4, f, p(&bad_i), 2, p(&a)),
            DtypeMismatch,
            "rb_kernel_embedding",
            "idx",
        )?;
        expect_status(
            rb_kernel_embedding(s, f, nul, 3, 4, DType::I32 as i32, p(&bad_i), 2, p(&a)),
            NullPointer,
            "rb_kernel_embedding",
            "weight",
        )?;
        expect_status(
            rb_kernel_embedding_backward(s, f, p(&a), DType::I32 as i32, p(&bad_i), 2, 3, 4, p(&a)),
            InvalidArgument,
            "rb_kernel_embedding_backward",
            "index 9",
        )?;
        expect_status(
            rb_kernel_embedding_backward(
                s,
                DType::I64 as i32,
                p(&a),
                DType::I32 as i32,
                p(&bad_i),
                2,
                3,
                4,
                p(&a),
            ),
            DtypeMismatch,
            "rb_kernel_embedding_backward",
            "dy",
        )?;
        // weighted_sum: int dtype, NULL w.
        expect_status(
            rb_kernel_weighted_sum(s, DType::I64 as i32, p(&a), p(&a), p(&a), 2, 2, 2),
            DtypeMismatch,
            "rb_kernel_weighted_sum",
            "weighted_sum",
        )?;
        expect_status(
            rb_kernel_weighted_sum(s, f, p(&a), nul, p(&a), 2, 2, 2),
            NullPointer,
            "rb_kernel_weighted_sum",
            "w",
        )?;
        expect_status(
            rb_kernel_weighted_sum_backward(s, f, p(&a), p(&a), nul, p(&a), p(&a), 2, 2, 2),
            NullPointer,
            "rb_kernel_weighted_sum_backward",
            "dy",
        )?;
        rocm_backend::ffi::stream::rb_stream_destroy(s);
    }
    Ok(())
}

// ------------------------------------------------ raw-a: geam, raw reduce/argmax, copy_strided

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
    use rocm_backend::ffi::raw::dnn::{rb_dnn_argmax, rb_dnn_reduce};
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
    use rocm_backend::ffi::raw::dnn::{rb_dnn_argmax, rb_dnn_reduce};
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
            rb_dnn_argmax(s, 10, cp(&a), 2, 4, 2, p(&b) as *mut i64),
            InvalidArgument,
            f,
            "dtype 10",
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
