//! The raw-pointer entry points (`rb_kernel_*`) on device pointers of a stream's device:
//! results equal the eager ops', and misuse gets the right status.

use crate::common::*;
use rocm_backend::ffi::handles::register;
use rocm_backend::ffi::kernel::*;
use rocm_backend::ffi::rb_status;
use rocm_backend::ffi::stream::rb_stream;
use rocm_backend::ops::elementwise::{BinaryOp, UnaryOp};
use rocm_backend::ops::optim::{SgdAttrs, sgd_reference};
use rocm_backend::runtime::{DType, Stream};
use std::ffi::c_void;

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![(
        "raw_kernels_on_device_pointers",
        raw_kernels_on_device_pointers,
    )]
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
