//! Custom kernels on raw device pointers (`rb_kernel_*`), for frameworks that own their
//! memory: flat elementwise ops over `n` contiguous elements, activation backwards, fill,
//! cast and optimizer steps. Pointers address memory of the stream's device (host memory for
//! the CPU device); a NULL stream means the current device's default stream. Work is queued
//! on the stream: synchronize before reading results on the host. `dtype` is an `rb_dtype`.
//! Outputs may alias inputs element for element (in-place use). A pointer may be NULL only
//! when `n` is 0.

use super::args::{flag, gelu as gelu_op};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::util::{dtype_arg, null, shape_arg};
use crate::base::shape::BroadcastLayout;
use crate::device::{DevPtr, Device, RawStream};
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::runtime::{DType, context};
use crate::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

pub(super) fn target(stream: *mut rb_stream) -> Result<(Arc<dyn Device>, RawStream)> {
    Ok(match stream_arg(stream)? {
        Some(s) => (s.device().clone(), s.raw()),
        None => (context::current_device(), RawStream::DEFAULT),
    })
}

pub(super) fn dp(p: *const c_void, n: usize, arg: &str) -> Result<DevPtr> {
    if p.is_null() && n > 0 {
        return Err(null(arg));
    }
    Ok(DevPtr(p as usize as u64))
}

fn binary_kernel(
    op: BinaryOp,
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> Result<()> {
    let dt = dtype_arg(dtype).map_err(|e| e.context(op.name()))?;
    if dt == DType::Bool || (op == BinaryOp::Div && dt.is_int()) {
        return Err(Error::dtype(format!(
            "{}: dtype {dt} is not supported",
            op.name()
        )));
    }
    let (a, b, y) = (dp(a, n, "a")?, dp(b, n, "b")?, dp(y, n, "y")?);
    if n == 0 {
        return Ok(());
    }
    let (d, s) = target(stream)?;
    let layout = BroadcastLayout {
        shape: vec![n],
        strides: vec![vec![1], vec![1]],
    };
    d.binary(s, op, dt, a, b, y, &layout)
}

fn unary_kernel(
    op: UnaryOp,
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> Result<()> {
    let dt = dtype_arg(dtype).map_err(|e| e.context(op.name()))?;
    let (x, y) = (dp(x, n, "x")?, dp(y, n, "y")?);
    if n == 0 {
        return Ok(());
    }
    let (d, s) = target(stream)?;
    d.unary(s, op, dt, x, y, n)
}

fn unary_backward_kernel(
    op: UnaryOp,
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    n: usize,
) -> Result<()> {
    let dt = dtype_arg(dtype).map_err(|e| e.context(op.name()))?;
    let (x, dy, dx) = (dp(x, n, "x")?, dp(dy, n, "dy")?, dp(dx, n, "dx")?);
    if n == 0 {
        return Ok(());
    }
    let (d, s) = target(stream)?;
    d.unary_backward(s, op, dt, x, dy, dx, n)
}

/// `y[i] = a + b` for `i < n` (f32, f16, bf16; i32 and i64 except div).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_add(
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_add", || {
        binary_kernel(BinaryOp::Add, stream, dtype, a, b, y, n)
    })
}

/// `y[i] = a - b` for `i < n` (f32, f16, bf16; i32 and i64 except div).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_sub(
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_sub", || {
        binary_kernel(BinaryOp::Sub, stream, dtype, a, b, y, n)
    })
}

/// `y[i] = a * b` for `i < n` (f32, f16, bf16; i32 and i64 except div).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_mul(
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_mul", || {
        binary_kernel(BinaryOp::Mul, stream, dtype, a, b, y, n)
    })
}

/// `y[i] = a / b (floating dtypes)` for `i < n` (f32, f16, bf16; i32 and i64 except div).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_div(
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_div", || {
        binary_kernel(BinaryOp::Div, stream, dtype, a, b, y, n)
    })
}

/// `y[i] = pow(a, b)` for `i < n` (f32, f16, bf16; i32 and i64 except div).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_pow(
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_pow", || {
        binary_kernel(BinaryOp::Pow, stream, dtype, a, b, y, n)
    })
}

/// `y[i] = max(a, b) (NaN propagates)` for `i < n` (f32, f16, bf16; i32 and i64 except div).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_maximum(
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_maximum", || {
        binary_kernel(BinaryOp::Maximum, stream, dtype, a, b, y, n)
    })
}

/// `y[i] = min(a, b) (NaN propagates)` for `i < n` (f32, f16, bf16; i32 and i64 except div).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_minimum(
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_minimum", || {
        binary_kernel(BinaryOp::Minimum, stream, dtype, a, b, y, n)
    })
}

/// `y[i] = relu(x[i])` for `i < n` on a floating dtype (as `rb_relu`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_relu(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_relu", || {
        unary_kernel(UnaryOp::Relu, stream, dtype, x, y, n)
    })
}

/// `y[i] = sigmoid(x[i])` for `i < n` on a floating dtype (as `rb_sigmoid`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_sigmoid(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_sigmoid", || {
        unary_kernel(UnaryOp::Sigmoid, stream, dtype, x, y, n)
    })
}

/// `y[i] = tanh(x[i])` for `i < n` on a floating dtype (as `rb_tanh`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_tanh(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_tanh", || {
        unary_kernel(UnaryOp::Tanh, stream, dtype, x, y, n)
    })
}

/// `y[i] = silu(x[i])` for `i < n` on a floating dtype (as `rb_silu`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_silu(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_silu", || {
        unary_kernel(UnaryOp::Silu, stream, dtype, x, y, n)
    })
}

/// `y[i] = neg(x[i])` for `i < n` on a floating dtype (as `rb_neg`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_neg(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_neg", || {
        unary_kernel(UnaryOp::Neg, stream, dtype, x, y, n)
    })
}

/// `y[i] = abs(x[i])` for `i < n` on a floating dtype (as `rb_abs`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_abs(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_abs", || {
        unary_kernel(UnaryOp::Abs, stream, dtype, x, y, n)
    })
}

/// `y[i] = sqrt(x[i])` for `i < n` on a floating dtype (as `rb_sqrt`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_sqrt(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_sqrt", || {
        unary_kernel(UnaryOp::Sqrt, stream, dtype, x, y, n)
    })
}

/// `y[i] = exp(x[i])` for `i < n` on a floating dtype (as `rb_exp`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_exp(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_exp", || {
        unary_kernel(UnaryOp::Exp, stream, dtype, x, y, n)
    })
}

/// `y[i] = log(x[i])` for `i < n` on a floating dtype (as `rb_log`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_log(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_log", || {
        unary_kernel(UnaryOp::Log, stream, dtype, x, y, n)
    })
}

/// `y[i] = sin(x[i])` for `i < n` on a floating dtype (as `rb_sin`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_sin(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_sin", || {
        unary_kernel(UnaryOp::Sin, stream, dtype, x, y, n)
    })
}

/// `y[i] = cos(x[i])` for `i < n` on a floating dtype (as `rb_cos`).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_cos(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_cos", || {
        unary_kernel(UnaryOp::Cos, stream, dtype, x, y, n)
    })
}

/// `y[i] = gelu(x[i])`; `approximate` is an `rb_gelu_approximate`.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_gelu(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
    approximate: i32,
) -> rb_status {
    guard("rb_kernel_gelu", || {
        unary_kernel(gelu_op(approximate)?, stream, dtype, x, y, n)
    })
}

/// `y[i] = min(max(x[i], min), max)` on a floating dtype.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_clamp(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
    min: f32,
    max: f32,
) -> rb_status {
    guard("rb_kernel_clamp", || {
        if min.is_nan() || max.is_nan() {
            return Err(Error::invalid("clamp: min and max must not be NaN"));
        }
        unary_kernel(UnaryOp::Clamp { min, max }, stream, dtype, x, y, n)
    })
}

/// The backward of `rb_kernel_relu`: `dx[i] = relu'(x[i]) * dy[i]` from the op's input `x`.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_relu_backward(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_relu_backward", || {
        unary_backward_kernel(UnaryOp::Relu, stream, dtype, x, dy, dx, n)
    })
}

/// The backward of `rb_kernel_sigmoid`: `dx[i] = sigmoid'(x[i]) * dy[i]` from the op's input `x`.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_sigmoid_backward(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_sigmoid_backward", || {
        unary_backward_kernel(UnaryOp::Sigmoid, stream, dtype, x, dy, dx, n)
    })
}

/// The backward of `rb_kernel_tanh`: `dx[i] = tanh'(x[i]) * dy[i]` from the op's input `x`.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_tanh_backward(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_tanh_backward", || {
        unary_backward_kernel(UnaryOp::Tanh, stream, dtype, x, dy, dx, n)
    })
}

/// The backward of `rb_kernel_silu`: `dx[i] = silu'(x[i]) * dy[i]` from the op's input `x`.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_silu_backward(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_silu_backward", || {
        unary_backward_kernel(UnaryOp::Silu, stream, dtype, x, dy, dx, n)
    })
}

/// The backward of `rb_kernel_gelu` with the same `approximate`.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_gelu_backward(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    n: usize,
    approximate: i32,
) -> rb_status {
    guard("rb_kernel_gelu_backward", || {
        unary_backward_kernel(gelu_op(approximate)?, stream, dtype, x, dy, dx, n)
    })
}

/// Sets `n` elements of `dtype` at `y` to `value` (converted as a cast would).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_fill(
    stream: *mut rb_stream,
    dtype: i32,
    y: *mut c_void,
    n: usize,
    value: f64,
) -> rb_status {
    guard("rb_kernel_fill", || {
        let dt = dtype_arg(dtype).map_err(|e| e.context("fill"))?;
        let y = dp(y, n, "y")?;
        if n == 0 {
            return Ok(());
        }
        let (d, s) = target(stream)?;
        d.fill(s, dt, y, n, value)
    })
}

/// Converts `n` elements from `src_dtype` at `x` to `dst_dtype` at `y` (PyTorch's rules);
/// `x` and `y` must not overlap unless they are the same address with the same element size.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_cast(
    stream: *mut rb_stream,
    src_dtype: i32,
    x: *const c_void,
    dst_dtype: i32,
    y: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_cast", || {
        let sd = dtype_arg(src_dtype).map_err(|e| e.context("cast: src_dtype"))?;
        let dd = dtype_arg(dst_dtype).map_err(|e| e.context("cast: dst_dtype"))?;
        let (x, y) = (dp(x, n, "x")?, dp(y, n, "y")?);
        if n == 0 {
            return Ok(());
        }
        let (d, s) = target(stream)?;
        d.cast(s, sd, x, dd, y, n)
    })
}

/// One SGD step on `n` elements in place (the formulas of `rb_sgd_step`); `momentum_buf`
/// may be NULL when momentum is 0.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_sgd_step(
    stream: *mut rb_stream,
    dtype: i32,
    param: *mut c_void,
    grad: *const c_void,
    momentum_buf: *mut c_void,
    n: usize,
    lr: f32,
    momentum: f32,
    dampening: f32,
    weight_decay: f32,
    nesterov: i32,
    first_step: i32,
) -> rb_status {
    guard("rb_kernel_sgd_step", || {
        let dt = dtype_arg(dtype).map_err(|e| e.context("sgd_step"))?;
        let attrs = SgdAttrs {
            lr,
            momentum,
            dampening,
            weight_decay,
            nesterov: flag(nesterov, "nesterov")?,
            first_step: flag(first_step, "first_step")?,
        };
        attrs.validate()?;
        let (p, g) = (dp(param, n, "param")?, dp(grad, n, "grad")?);
        let b = if momentum != 0.0 {
            dp(momentum_buf, n, "momentum_buf")?
        } else {
            DevPtr::NULL
        };
        if n == 0 {
            return Ok(());
        }
        let (d, s) = target(stream)?;
        d.sgd_step(s, dt, p, g, b, n, &attrs)
    })
}

/// One Adam (`decoupled` = 0) or AdamW (`decoupled` = 1) step on `n` elements in place (the
/// formulas of `rb_adam_step`); `max_exp_avg_sq` may be NULL unless `amsgrad` is 1.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH.
/// Thread-safe.
///
/// # Safety
/// The pointers address at least `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_adam_step(
    stream: *mut rb_stream,
    dtype: i32,
    param: *mut c_void,
    grad: *const c_void,
    exp_avg: *mut c_void,
    exp_avg_sq: *mut c_void,
    max_exp_avg_sq: *mut c_void,
    n: usize,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    step: i64,
    amsgrad: i32,
    decoupled: i32,
) -> rb_status {
    guard("rb_kernel_adam_step", || {
        let dt = dtype_arg(dtype).map_err(|e| e.context("adam_step"))?;
        let attrs = AdamAttrs {
            lr,
            beta1,
            beta2,
            eps,
            weight_decay,
            step: u64::try_from(step)
                .map_err(|_| Error::invalid(format!("adam_step: step={step} must be >= 1")))?,
            amsgrad: flag(amsgrad, "amsgrad")?,
            decoupled: flag(decoupled, "decoupled")?,
        };
        attrs.validate()?;
        let (p, g) = (dp(param, n, "param")?, dp(grad, n, "grad")?);
        let (m, v) = (dp(exp_avg, n, "exp_avg")?, dp(exp_avg_sq, n, "exp_avg_sq")?);
        let x = if attrs.amsgrad {
            dp(max_exp_avg_sq, n, "max_exp_avg_sq")?
        } else {
            DevPtr::NULL
        };
        if n == 0 {
            return Ok(());
        }
        let (d, s) = target(stream)?;
        d.adam_step(s, dt, p, g, m, v, x, n, &attrs)
    })
}

/// Strided copy on raw pointers (permute, slice, concat, ...): for every index `idx` of the
/// `ndim`-dimensional `shape`, the `elem_size`-byte element at
/// `src + elem_size * sum(idx[d] * src_strides[d])` goes to
/// `dst + elem_size * sum(idx[d] * dst_strides[d])`. Strides are in elements, non-negative;
/// `ndim` is at most 16 (0 copies one element); `elem_size` is 1, 2, 4 or 8. The byte ranges
/// the two strided regions span must not overlap (rejected). `shape`, `src_strides` and
/// `dst_strides` are host arrays, read during the call; `src` and `dst` may be NULL when the
/// shape has no elements.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream) or
/// RB_STATUS_INVALID_ARGUMENT (ndim over 16, negative extent or stride, bad elem_size,
/// overflowing extent, overlapping regions); `dst` is then unchanged. Thread-safe for
/// distinct destinations.
///
/// # Safety
/// `shape`, `src_strides` and `dst_strides` point to `ndim` readable `int64_t` (or are NULL
/// when `ndim` is 0); `src` and `dst` address the strided regions described on the stream's
/// device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_copy_strided(
    stream: *mut rb_stream,
    elem_size: usize,
    ndim: usize,
    shape: *const i64,
    src: *const c_void,
    src_strides: *const i64,
    dst: *mut c_void,
    dst_strides: *const i64,
) -> rb_status {
    guard("rb_kernel_copy_strided", || {
        if ndim > crate::base::shape::MAX_DIMS {
            return Err(Error::invalid(format!(
                "ndim={ndim} is over {}",
                crate::base::shape::MAX_DIMS
            )));
        }
        if !matches!(elem_size, 1 | 2 | 4 | 8) {
            return Err(Error::invalid(format!(
                "elem_size={elem_size} is not 1, 2, 4 or 8"
            )));
        }
        // SAFETY: the caller's contract on the three host arrays.
        let (sh, ss, ds) = unsafe {
            (
                shape_arg(shape, ndim, "shape")?,
                shape_arg(src_strides, ndim, "src_strides")?,
                shape_arg(dst_strides, ndim, "dst_strides")?,
            )
        };
        let n = crate::base::shape::numel(&sh)?;
        let (src, dst) = (dp(src, n, "src")?, dp(dst, n, "dst")?);
        if n == 0 {
            return Ok(());
        }
        let span = |p: DevPtr, st: &[usize], name: &str| -> Result<(u64, u64)> {
            let last = sh
                .iter()
                .zip(st)
                .try_fold(0usize, |a, (&e, &s)| {
                    (e - 1).checked_mul(s).and_then(|v| a.checked_add(v))
                })
                .and_then(|v| v.checked_add(1))
                .and_then(|v| v.checked_mul(elem_size))
                .and_then(|v| p.0.checked_add(v as u64))
                .ok_or_else(|| Error::invalid(format!("the extent of {name} overflows")))?;
            Ok((p.0, last))
        };
        let (a, b) = (span(src, &ss, "src")?, span(dst, &ds, "dst")?);
        if a.0 < b.1 && b.0 < a.1 {
            return Err(Error::invalid("the source and destination regions overlap"));
        }
        let (d, s) = target(stream)?;
        d.copy_strided(s, elem_size, src, &ss, dst, &ds, &sh)
    })
}
