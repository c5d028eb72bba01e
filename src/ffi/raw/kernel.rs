//! Custom kernels on raw device pointers (`rb_kernel_*`), for frameworks that own their
//! memory: flat elementwise ops over `n` contiguous elements, activation backwards, fill,
//! cast, optimizer steps and strided copies; comparisons and `where`, the losses, rotary
//! embedding, embedding lookup and weighted_sum on descriptor-shaped contiguous buffers.
//! Pointers address memory of the stream's device (host memory for the CPU device); a NULL
//! stream means the current device's default stream. Work is queued on the stream:
//! synchronize before reading results on the host. `dtype` is an `rb_dtype`. Outputs may
//! alias inputs element for element (in-place use). A pointer may be NULL only when the
//! buffer it addresses is empty. The checks and the calls: [`crate::runtime::raw::kernel`].

use super::{dp, on_stream};
use crate::base::shape::MAX_DIMS;
use crate::ffi::args::{self, compare as compare_arg, flag, gelu as gelu_op};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::rb_stream;
use crate::ffi::util::shape_arg;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::nn::{LossDesc, LossKind, Reduction, WeightedSumDesc};
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::runtime::DType;
use crate::runtime::raw::kernel;
use crate::{Error, Result};
use std::ffi::c_void;

fn binary(
    op: BinaryOp,
    stream: *mut rb_stream,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    y: *mut c_void,
    n: usize,
) -> Result<()> {
    let dt = args::dtype(dtype, op.name())?;
    let (a, b, y) = (dp(a), dp(b), dp(y));
    let call = format!("rb_kernel_{}", op.name());
    let ptrs = [("a", a), ("b", b), ("y", y)];
    on_stream(&call, stream, &ptrs, move |s| {
        kernel::binary(s, op, dt, a, b, y, n)
    })
}

fn unary(
    op: UnaryOp,
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    n: usize,
) -> Result<()> {
    let dt = args::dtype(dtype, op.name())?;
    let (x, y) = (dp(x), dp(y));
    let call = format!("rb_kernel_{}", op.name());
    on_stream(&call, stream, &[("x", x), ("y", y)], move |s| {
        kernel::unary(s, op, dt, x, y, n)
    })
}

fn unary_backward(
    op: UnaryOp,
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    n: usize,
) -> Result<()> {
    let dt = args::dtype(dtype, op.name())?;
    let (x, dy, dx) = (dp(x), dp(dy), dp(dx));
    let call = format!("rb_kernel_{}_backward", op.name());
    let ptrs = [("x", x), ("dy", dy), ("dx", dx)];
    on_stream(&call, stream, &ptrs, move |s| {
        kernel::unary_backward(s, op, dt, x, dy, dx, n)
    })
}

fn loss_kind(v: i32, op: &str) -> Result<LossKind> {
    Ok(match v {
        0 => LossKind::Mse,
        1 => LossKind::Bce,
        2 => LossKind::CrossEntropy,
        3 => LossKind::Nll,
        _ => {
            return Err(Error::invalid(format!(
                "{op}: kind={v} is not an rb_loss_kind (0 mse .. 3 nll)"
            )));
        }
    })
}

/// The loss arguments as a [`LossDesc`] (checked by the runtime), the input dtype and the
/// target dtype.
#[allow(clippy::too_many_arguments)]
fn loss_args(
    op: &str,
    kind: i32,
    dtype: i32,
    target_dtype: i32,
    n: usize,
    c: usize,
    inner: usize,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
) -> Result<(LossDesc, DType, DType)> {
    let kind = loss_kind(kind, op)?;
    let name = kind.name();
    let dt = args::dtype(dtype, name)?;
    let reduction = Reduction::from_i32(reduction, name)?;
    let td = args::dtype(target_dtype, name)?;
    let d = LossDesc {
        kind,
        n,
        c,
        inner,
        reduction,
        ignore_index,
        label_smoothing,
    };
    Ok((d, dt, td))
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
        binary(BinaryOp::Add, stream, dtype, a, b, y, n)
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
        binary(BinaryOp::Sub, stream, dtype, a, b, y, n)
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
        binary(BinaryOp::Mul, stream, dtype, a, b, y, n)
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
        binary(BinaryOp::Div, stream, dtype, a, b, y, n)
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
        binary(BinaryOp::Pow, stream, dtype, a, b, y, n)
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
        binary(BinaryOp::Maximum, stream, dtype, a, b, y, n)
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
        binary(BinaryOp::Minimum, stream, dtype, a, b, y, n)
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
        unary(UnaryOp::Relu, stream, dtype, x, y, n)
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
        unary(UnaryOp::Sigmoid, stream, dtype, x, y, n)
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
        unary(UnaryOp::Tanh, stream, dtype, x, y, n)
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
        unary(UnaryOp::Silu, stream, dtype, x, y, n)
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
        unary(UnaryOp::Neg, stream, dtype, x, y, n)
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
        unary(UnaryOp::Abs, stream, dtype, x, y, n)
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
        unary(UnaryOp::Sqrt, stream, dtype, x, y, n)
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
        unary(UnaryOp::Exp, stream, dtype, x, y, n)
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
        unary(UnaryOp::Log, stream, dtype, x, y, n)
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
        unary(UnaryOp::Sin, stream, dtype, x, y, n)
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
        unary(UnaryOp::Cos, stream, dtype, x, y, n)
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
        unary(gelu_op(approximate)?, stream, dtype, x, y, n)
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
        unary(UnaryOp::Clamp { min, max }, stream, dtype, x, y, n)
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
        unary_backward(UnaryOp::Relu, stream, dtype, x, dy, dx, n)
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
        unary_backward(UnaryOp::Sigmoid, stream, dtype, x, dy, dx, n)
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
        unary_backward(UnaryOp::Tanh, stream, dtype, x, dy, dx, n)
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
        unary_backward(UnaryOp::Silu, stream, dtype, x, dy, dx, n)
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
        unary_backward(gelu_op(approximate)?, stream, dtype, x, dy, dx, n)
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
        let dt = args::dtype(dtype, "fill")?;
        let y = dp(y);
        on_stream("rb_kernel_fill", stream, &[("y", y)], move |s| {
            kernel::fill(s, dt, y, n, value)
        })
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
        let sd = args::dtype(src_dtype, "cast: src_dtype")?;
        let dd = args::dtype(dst_dtype, "cast: dst_dtype")?;
        let (x, y) = (dp(x), dp(y));
        on_stream("rb_kernel_cast", stream, &[("x", x), ("y", y)], move |s| {
            kernel::cast(s, sd, x, dd, y, n)
        })
    })
}

/// One SGD step on `n` elements in place (the formulas of `rb_sgd_step`); `momentum_buf`
/// may be NULL when momentum is 0. The hyperparameters are floats (an f64 step uses them
/// widened, as `rb_sgd_step`).
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
        let dt = args::dtype(dtype, "sgd_step")?;
        // Floats (the published signature), widened: an f64 step uses them as rb_sgd_step.
        let attrs = SgdAttrs {
            lr: f64::from(lr),
            momentum: f64::from(momentum),
            dampening: f64::from(dampening),
            weight_decay: f64::from(weight_decay),
            nesterov: flag(nesterov, "nesterov")?,
            first_step: flag(first_step, "first_step")?,
        };
        let (p, g, b) = (dp(param), dp(grad), dp(momentum_buf));
        let ptrs = [("param", p), ("grad", g), ("momentum_buf", b)];
        on_stream("rb_kernel_sgd_step", stream, &ptrs, move |s| {
            kernel::sgd_step(s, dt, p, g, b, n, &attrs)
        })
    })
}

/// One Adam (`decoupled` = 0) or AdamW (`decoupled` = 1) step on `n` elements in place (the
/// formulas of `rb_adam_step`); `max_exp_avg_sq` may be NULL unless `amsgrad` is 1. The
/// hyperparameters are floats (an f64 step uses them widened, as `rb_adam_step`).
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
        let dt = args::dtype(dtype, "adam_step")?;
        // Floats widened (the published signature), as rb_kernel_sgd_step.
        let attrs = AdamAttrs {
            lr: f64::from(lr),
            beta1: f64::from(beta1),
            beta2: f64::from(beta2),
            eps: f64::from(eps),
            weight_decay: f64::from(weight_decay),
            step: u64::try_from(step)
                .map_err(|_| Error::invalid(format!("adam_step: step={step} must be >= 1")))?,
            amsgrad: flag(amsgrad, "amsgrad")?,
            decoupled: flag(decoupled, "decoupled")?,
        };
        let (p, g, m, v) = (dp(param), dp(grad), dp(exp_avg), dp(exp_avg_sq));
        let vmax = dp(max_exp_avg_sq);
        let ptrs = [
            ("param", p),
            ("grad", g),
            ("exp_avg", m),
            ("exp_avg_sq", v),
            ("max_exp_avg_sq", vmax),
        ];
        on_stream("rb_kernel_adam_step", stream, &ptrs, move |s| {
            kernel::adam_step(s, dt, p, g, m, v, vmax, n, &attrs)
        })
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
        if ndim > MAX_DIMS {
            return Err(Error::invalid(format!("ndim={ndim} is over {MAX_DIMS}")));
        }
        // SAFETY: the caller's contract on the three host arrays.
        let (sh, ss, ds) = unsafe {
            (
                shape_arg(shape, ndim, "shape")?,
                shape_arg(src_strides, ndim, "src_strides")?,
                shape_arg(dst_strides, ndim, "dst_strides")?,
            )
        };
        let (src, dst) = (dp(src), dp(dst));
        let ptrs = [("src", src), ("dst", dst)];
        on_stream("rb_kernel_copy_strided", stream, &ptrs, move |s| {
            kernel::copy_strided(s, elem_size, &sh, src, &ss, dst, &ds)
        })
    })
}

/// `out[i] = a[i] op b[i]` as bytes 0/1 (`rb_dtype` bool) for `i < n`; `op` is an
/// `rb_compare_op`, `a` and `b` have `dtype` (any but bool). NaN compares as IEEE says.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad `op` or `dtype` value) or
/// RB_STATUS_DTYPE_MISMATCH (bool). Nothing is written on failure. Thread-safe.
///
/// # Safety
/// `a` and `b` address `n` elements of `dtype`, `out` `n` bytes, on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_compare(
    stream: *mut rb_stream,
    op: i32,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    out: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_compare", || {
        let op = compare_arg(op, "compare")?;
        let dt = args::dtype(dtype, "compare")?;
        let (a, b, out) = (dp(a), dp(b), dp(out));
        let ptrs = [("a", a), ("b", b), ("out", out)];
        on_stream("rb_kernel_compare", stream, &ptrs, move |s| {
            kernel::compare(s, op, dt, a, b, out, n)
        })
    })
}

/// `out[i] = cond[i] ? a[i] : b[i]` for `i < n` (`torch.where`); `cond` holds bytes 0/1,
/// `a`, `b` and `out` have `dtype` (any but bool).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad `dtype` value) or RB_STATUS_DTYPE_MISMATCH
/// (bool). Nothing is written on failure. Thread-safe.
///
/// # Safety
/// `cond` addresses `n` bytes, the others `n` elements of `dtype`, on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_where(
    stream: *mut rb_stream,
    dtype: i32,
    cond: *const c_void,
    a: *const c_void,
    b: *const c_void,
    out: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_where", || {
        let dt = args::dtype(dtype, "where")?;
        let (cond, a, b, out) = (dp(cond), dp(a), dp(b), dp(out));
        let ptrs = [("cond", cond), ("a", a), ("b", b), ("out", out)];
        on_stream("rb_kernel_where", stream, &ptrs, move |s| {
            kernel::where_select(s, dt, cond, a, b, out, n)
        })
    })
}

/// `out[i] = (a[i] op b[i]) ? x[i] : y[i]` for `i < n`, fused (no bool temporary) on GPUs;
/// `op` is an `rb_compare_op`, all five buffers have `dtype` (any but bool). On a device
/// without the fused kernel (the CPU) it compares into a temporary, selects, and waits for
/// the stream before freeing the temporary.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad `op` or `dtype` value),
/// RB_STATUS_DTYPE_MISMATCH (bool) or RB_STATUS_OUT_OF_MEMORY (the temporary). Thread-safe.
///
/// # Safety
/// Every pointer addresses `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_where_compare(
    stream: *mut rb_stream,
    op: i32,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    x: *const c_void,
    y: *const c_void,
    out: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_where_compare", || {
        let op = compare_arg(op, "where_compare")?;
        let dt = args::dtype(dtype, "where_compare")?;
        let (a, b, x, y, out) = (dp(a), dp(b), dp(x), dp(y), dp(out));
        let ptrs = [("a", a), ("b", b), ("x", x), ("y", y), ("out", out)];
        on_stream("rb_kernel_where_compare", stream, &ptrs, move |s| {
            kernel::where_compare(s, op, dt, a, b, x, y, out, n)
        })
    })
}

/// One of the four losses (`kind` is an `rb_loss_kind`) with PyTorch's semantics, as
/// `rb_mse_loss`, `rb_bce_loss`, `rb_cross_entropy`, `rb_nll_loss` compute them:
/// * mse / bce: `input` and `target` hold `n` elements of `dtype`; `c` and `inner` must be 1
///   and `target_dtype` equals `dtype`; `ignore_index` and `label_smoothing` are ignored.
/// * cross_entropy / nll: `input` is `[n, c, inner]` of `dtype`, `target` is `[n, inner]`
///   class indices of `target_dtype` (i32 or i64); `label_smoothing` (in [0, 1]) is used by
///   cross_entropy only.
///
/// `reduction` is an `rb_reduction`; `out` receives `n * inner` elements of `dtype` for
/// RB_REDUCTION_NONE, else one (the mean over no items is NaN, the sum 0).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad enum value, label_smoothing, or a target outside
/// `[0, c)` that is not `ignore_index`; on GPUs an out-of-range target may be reported by a
/// later call), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_SHAPE_MISMATCH. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_loss(
    stream: *mut rb_stream,
    kind: i32,
    dtype: i32,
    input: *const c_void,
    target: *const c_void,
    target_dtype: i32,
    n: usize,
    c: usize,
    inner: usize,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut c_void,
) -> rb_status {
    guard("rb_kernel_loss", || {
        let (d, dt, td) = loss_args(
            "loss",
            kind,
            dtype,
            target_dtype,
            n,
            c,
            inner,
            reduction,
            ignore_index,
            label_smoothing,
        )?;
        let (x, t, out) = (dp(input), dp(target), dp(out));
        let ptrs = [("input", x), ("target", t), ("out", out)];
        on_stream("rb_kernel_loss", stream, &ptrs, move |s| {
            kernel::loss(s, dt, &d, x, t, td, out)
        })
    })
}

/// The gradient of `rb_kernel_loss` with respect to `input`: `grad_out` holds what the
/// forward's `out` held (`n * inner` elements for RB_REDUCTION_NONE, else one), and
/// `grad_input` receives `n * c * inner` elements of `dtype`. Arguments and failures as
/// `rb_kernel_loss`. The caller owns every buffer; nothing is kept after the call.
/// Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_loss_backward(
    stream: *mut rb_stream,
    kind: i32,
    dtype: i32,
    grad_out: *const c_void,
    input: *const c_void,
    target: *const c_void,
    target_dtype: i32,
    n: usize,
    c: usize,
    inner: usize,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    grad_input: *mut c_void,
) -> rb_status {
    guard("rb_kernel_loss_backward", || {
        let (d, dt, td) = loss_args(
            "loss_backward",
            kind,
            dtype,
            target_dtype,
            n,
            c,
            inner,
            reduction,
            ignore_index,
            label_smoothing,
        )?;
        let (g, x, t, gi) = (dp(grad_out), dp(input), dp(target), dp(grad_input));
        let ptrs = [
            ("grad_out", g),
            ("input", x),
            ("target", t),
            ("grad_input", gi),
        ];
        on_stream("rb_kernel_loss_backward", stream, &ptrs, move |s| {
            kernel::loss_backward(s, dt, &d, g, x, t, td, gi)
        })
    })
}

/// Rotary position embedding (rotate-half form, see `rb_rope`) of `x` laid out
/// `[outer, seq, inner, dim]` (`dim` even) into `y`: pair `i` at sequence index `s` rotates
/// by `(position_offset + s) * base^(-2i/dim)`; `inverse` = 1 rotates backwards (the
/// backward and the inverse of the forward). `y` may equal `x`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad dtype or `inverse` value, `base` not finite and > 0),
/// RB_STATUS_DTYPE_MISMATCH (not f32/f16/bf16) or RB_STATUS_SHAPE_MISMATCH (odd `dim`).
/// Thread-safe.
///
/// # Safety
/// `x` and `y` address `outer * seq * inner * dim` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_rope(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    outer: usize,
    seq: usize,
    inner: usize,
    dim: usize,
    base: f64,
    position_offset: i64,
    inverse: i32,
) -> rb_status {
    guard("rb_kernel_rope", || {
        let inv = flag(inverse, "inverse")?;
        let dt = args::dtype(dtype, "rope")?;
        let (x, y) = (dp(x), dp(y));
        on_stream("rb_kernel_rope", stream, &[("x", x), ("y", y)], move |s| {
            let dims = [outer, seq, inner, dim];
            kernel::rope(s, dt, dims, base, position_offset, inv, x, y)
        })
    })
}

/// `out[j, :] = weight[idx[j], :]` for `j < n_idx` (`F.embedding`): `weight` is
/// `[num, dim]` of `dtype`, `idx` holds `n_idx` indices of `idx_dtype` (i32 or i64), `out`
/// receives `[n_idx, dim]`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad dtype value, or an index outside `[0, num)`; on GPUs it
/// may be reported by a later call) or RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_embedding(
    stream: *mut rb_stream,
    dtype: i32,
    weight: *const c_void,
    num: usize,
    dim: usize,
    idx_dtype: i32,
    idx: *const c_void,
    n_idx: usize,
    out: *mut c_void,
) -> rb_status {
    guard("rb_kernel_embedding", || {
        let dt = args::dtype(dtype, "embedding")?;
        let it = args::dtype(idx_dtype, "embedding")?;
        let (w, i, o) = (dp(weight), dp(idx), dp(out));
        let ptrs = [("weight", w), ("idx", i), ("out", o)];
        on_stream("rb_kernel_embedding", stream, &ptrs, move |s| {
            kernel::embedding(s, dt, w, num, dim, it, i, n_idx, o)
        })
    })
}

/// The dense weight gradient of `rb_kernel_embedding`: `dw` (`[num, dim]` of `dtype`,
/// floating) is zeroed, then `dw[idx[j], :] += dy[j, :]` for `j < n_idx` (repeated indices
/// sum). Failures as `rb_kernel_embedding`, plus RB_STATUS_DTYPE_MISMATCH for an integer
/// `dtype`. The caller owns every buffer; nothing is kept after the call. Thread-safe.
///
/// # Safety
/// `dy` addresses `n_idx * dim` elements, `dw` `num * dim`, `idx` `n_idx` indices, on the
/// stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_embedding_backward(
    stream: *mut rb_stream,
    dtype: i32,
    dy: *const c_void,
    idx_dtype: i32,
    idx: *const c_void,
    n_idx: usize,
    num: usize,
    dim: usize,
    dw: *mut c_void,
) -> rb_status {
    guard("rb_kernel_embedding_backward", || {
        let op = "embedding_backward";
        let dt = args::dtype(dtype, op)?;
        let it = args::dtype(idx_dtype, op)?;
        let (g, i, w) = (dp(dy), dp(idx), dp(dw));
        let ptrs = [("dy", g), ("idx", i), ("dw", w)];
        on_stream("rb_kernel_embedding_backward", stream, &ptrs, move |s| {
            kernel::embedding_backward(s, dt, g, it, i, n_idx, num, dim, w)
        })
    })
}

/// `y[o, :] = sum_k w[o, k] * x[o, k, :]` (`torch.sum(x * w[..., None], dim=-2)`): `x` is
/// `[outer, n, d]`, `w` `[outer, n]`, `y` `[outer, d]`, all of `dtype` (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_weighted_sum(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    w: *const c_void,
    y: *mut c_void,
    outer: usize,
    n: usize,
    d: usize,
) -> rb_status {
    guard("rb_kernel_weighted_sum", || {
        let dt = args::dtype(dtype, "weighted_sum")?;
        let desc = WeightedSumDesc { outer, n, d };
        let (x, w, y) = (dp(x), dp(w), dp(y));
        let ptrs = [("x", x), ("w", w), ("y", y)];
        on_stream("rb_kernel_weighted_sum", stream, &ptrs, move |s| {
            kernel::weighted_sum(s, dt, x, w, y, &desc)
        })
    })
}

/// The backward of `rb_kernel_weighted_sum`: from `dy` (`[outer, d]`) writes
/// `dx = w[..., None] * dy` (`[outer, n, d]`) and `dw = sum(x * dy, -1)` (`[outer, n]`);
/// `dx` or `dw` may be NULL to skip that gradient. Failures as `rb_kernel_weighted_sum`.
/// The caller owns every buffer; nothing is kept after the call. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_weighted_sum_backward(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    w: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    dw: *mut c_void,
    outer: usize,
    n: usize,
    d: usize,
) -> rb_status {
    guard("rb_kernel_weighted_sum_backward", || {
        let dt = args::dtype(dtype, "weighted_sum_backward")?;
        let desc = WeightedSumDesc { outer, n, d };
        let (x, w, g, dx, dw) = (dp(x), dp(w), dp(dy), dp(dx), dp(dw));
        let ptrs = [("x", x), ("w", w), ("dy", g), ("dx", dx), ("dw", dw)];
        on_stream("rb_kernel_weighted_sum_backward", stream, &ptrs, move |s| {
            kernel::weighted_sum_backward(s, dt, x, w, g, dx, dw, &desc)
        })
    })
}
