//! Eager pointwise exports: the broadcasting binary ops, the unary math ops and
//! activations, their backwards, comparisons and `where`. Output convention of every op: see
//! `rb_add` (`*out == NULL` makes a new tensor the caller owns; otherwise `*out` is the
//! checked destination; on failure `*out` is unchanged). `stream` may be NULL.

use super::handles::arc;
use super::ops::{binary_op, unary_op};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{finish_out, out_tensor};
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::runtime::elementwise as pointwise;
use crate::{Error, Result};

/// `approximate` of `rb_gelu` / `rb_gelu_backward`: PyTorch's `approximate="none"` (the
/// exact erf form) or `"tanh"`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_gelu_approximate {
    /// `0.5 * x * (1 + erf(x / sqrt(2)))`.
    None = 0,
    /// `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)))`.
    Tanh = 1,
}

pub(crate) fn gelu_op(approximate: i32) -> Result<UnaryOp> {
    match approximate {
        0 => Ok(UnaryOp::Gelu { tanh: false }),
        1 => Ok(UnaryOp::Gelu { tanh: true }),
        v => Err(Error::invalid(format!(
            "gelu: approximate={v} is not an rb_gelu_approximate (0 none, 1 tanh)"
        ))),
    }
}

/// The comparison of `rb_where_compare`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_compare_op {
    Eq = 0,
    Ne = 1,
    Lt = 2,
    Le = 3,
    Gt = 4,
    Ge = 5,
}

/// An `rb_compare_op` value of `op`'s `op` argument, or INVALID_ARGUMENT naming `op`.
pub(crate) fn compare_arg(v: i32, op: &str) -> Result<CompareOp> {
    Ok(match v {
        0 => CompareOp::Eq,
        1 => CompareOp::Ne,
        2 => CompareOp::Lt,
        3 => CompareOp::Le,
        4 => CompareOp::Gt,
        5 => CompareOp::Ge,
        v => {
            return Err(Error::invalid(format!(
                "{op}: op={v} is not an rb_compare_op (0 eq .. 5 ge)"
            )));
        }
    })
}

/// The body of every unary-backward export.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
unsafe fn unary_backward_op(
    name: &str,
    op: impl FnOnce() -> Result<UnaryOp>,
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard(name, || {
        let op = op()?;
        let (x, dy) = (arc(x, "x")?, arc(dy, "dy")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = pointwise::unary_backward(s.as_deref(), op, &x, &dy, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// The body of every binary-backward export.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
unsafe fn binary_backward_op(
    name: &str,
    op: BinaryOp,
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard(name, || {
        let (a, b, dy) = (arc(a, "a")?, arc(b, "b")?, arc(dy, "dy")?);
        let s = stream_arg(stream)?;
        let ga = unsafe { out_tensor(da) }.map_err(|e| e.context("da"))?;
        let gb = unsafe { out_tensor(db) }.map_err(|e| e.context("db"))?;
        let (ra, rb) = pointwise::binary_backward(
            s.as_deref(),
            op,
            &a,
            &b,
            &dy,
            ga.as_deref(),
            gb.as_deref(),
        )?;
        unsafe {
            finish_out(da, ga, ra);
            finish_out(db, gb, rb);
        }
        Ok(())
    })
}

/// The body of every comparison export.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
unsafe fn compare_op(
    name: &str,
    op: CompareOp,
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard(name, || {
        let (a, b) = (arc(a, "a")?, arc(b, "b")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = pointwise::compare(s.as_deref(), op, &a, &b, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Elementwise a - b with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sub(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_op("rb_sub", BinaryOp::Sub, stream, a, b, out) }
}

/// Elementwise a * b with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mul(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_op("rb_mul", BinaryOp::Mul, stream, a, b, out) }
}

/// Elementwise a / b (true division; floating dtypes only) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_div(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_op("rb_div", BinaryOp::Div, stream, a, b, out) }
}

/// Elementwise a ** b (`torch.pow`) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pow(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_op("rb_pow", BinaryOp::Pow, stream, a, b, out) }
}

/// Elementwise the larger of a and b (NaN propagates) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_maximum(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_op("rb_maximum", BinaryOp::Maximum, stream, a, b, out) }
}

/// Elementwise the smaller of a and b (NaN propagates) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_minimum(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_op("rb_minimum", BinaryOp::Minimum, stream, a, b, out) }
}

/// Elementwise `-x` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_neg(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_neg", UnaryOp::Neg, stream, x, out) }
}

/// Elementwise `|x|` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_abs(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_abs", UnaryOp::Abs, stream, x, out) }
}

/// Elementwise `sqrt(x)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sqrt(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_sqrt", UnaryOp::Sqrt, stream, x, out) }
}

/// Elementwise `exp(x)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_exp(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_exp", UnaryOp::Exp, stream, x, out) }
}

/// Elementwise `ln(x)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_log", UnaryOp::Log, stream, x, out) }
}

/// Elementwise `sin(x)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sin(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_sin", UnaryOp::Sin, stream, x, out) }
}

/// Elementwise `cos(x)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cos(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_cos", UnaryOp::Cos, stream, x, out) }
}

/// Elementwise `1 / (1 + exp(-x))` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sigmoid(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_sigmoid", UnaryOp::Sigmoid, stream, x, out) }
}

/// Elementwise `tanh(x)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tanh(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_tanh", UnaryOp::Tanh, stream, x, out) }
}

/// Elementwise `x * sigmoid(x)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_silu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_silu", UnaryOp::Silu, stream, x, out) }
}

/// GELU on a floating tensor: `approximate` is an `rb_gelu_approximate` (0: exact erf form,
/// 1: tanh form), as `torch.nn.functional.gelu`.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT (bad `approximate`) and as `rb_relu`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gelu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    approximate: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    match gelu_op(approximate) {
        Ok(op) => unsafe { unary_op("rb_gelu", op, stream, x, out) },
        Err(e) => guard("rb_gelu", || Err(e)),
    }
}

/// `torch.clamp(x, min, max)` on a floating tensor: `min(max(x, min), max)` (so `max` wins
/// when `min > max`, as in PyTorch).
///
/// Fails with RB_STATUS_INVALID_ARGUMENT (NaN bound) and as `rb_relu`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_clamp(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    min: f32,
    max: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    if min.is_nan() || max.is_nan() {
        return guard("rb_clamp", || {
            Err(Error::invalid("clamp: min and max must not be NaN"))
        });
    }
    unsafe { unary_op("rb_clamp", UnaryOp::Clamp { min, max }, stream, x, out) }
}

/// The backward of `rb_relu`: `dx = drelu(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_relu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_relu_backward", || Ok(UnaryOp::Relu), stream, x, dy, out) }
}

/// The backward of `rb_neg`: `dx = dneg(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_neg_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_neg_backward", || Ok(UnaryOp::Neg), stream, x, dy, out) }
}

/// The backward of `rb_abs`: `dx = dabs(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_abs_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_abs_backward", || Ok(UnaryOp::Abs), stream, x, dy, out) }
}

/// The backward of `rb_sqrt`: `dx = dsqrt(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sqrt_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_sqrt_backward", || Ok(UnaryOp::Sqrt), stream, x, dy, out) }
}

/// The backward of `rb_exp`: `dx = dexp(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_exp_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_exp_backward", || Ok(UnaryOp::Exp), stream, x, dy, out) }
}

/// The backward of `rb_log`: `dx = dlog(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_log_backward", || Ok(UnaryOp::Log), stream, x, dy, out) }
}

/// The backward of `rb_sin`: `dx = dsin(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sin_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_sin_backward", || Ok(UnaryOp::Sin), stream, x, dy, out) }
}

/// The backward of `rb_cos`: `dx = dcos(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cos_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_cos_backward", || Ok(UnaryOp::Cos), stream, x, dy, out) }
}

/// The backward of `rb_sigmoid`: `dx = dsigmoid(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sigmoid_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        unary_backward_op(
            "rb_sigmoid_backward",
            || Ok(UnaryOp::Sigmoid),
            stream,
            x,
            dy,
            out,
        )
    }
}

/// The backward of `rb_tanh`: `dx = dtanh(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tanh_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_tanh_backward", || Ok(UnaryOp::Tanh), stream, x, dy, out) }
}

/// The backward of `rb_silu`: `dx = dsilu(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_silu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_backward_op("rb_silu_backward", || Ok(UnaryOp::Silu), stream, x, dy, out) }
}

/// The backward of `rb_gelu` with the same `approximate` (PyTorch's `gelu_backward`).
///
/// Fails with RB_STATUS_INVALID_ARGUMENT (bad `approximate`) and as `rb_relu_backward`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gelu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    approximate: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        unary_backward_op(
            "rb_gelu_backward",
            || gelu_op(approximate),
            stream,
            x,
            dy,
            out,
        )
    }
}

/// The backward of `rb_clamp`: `dy` where `min <= x <= max`, else 0.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_clamp_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    min: f32,
    max: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        unary_backward_op(
            "rb_clamp_backward",
            || Ok(UnaryOp::Clamp { min, max }),
            stream,
            x,
            dy,
            out,
        )
    }
}

/// The backward of `rb_add`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_backward_op("rb_add_backward", BinaryOp::Add, stream, a, b, dy, da, db) }
}

/// The backward of `rb_sub`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sub_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_backward_op("rb_sub_backward", BinaryOp::Sub, stream, a, b, dy, da, db) }
}

/// The backward of `rb_mul`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mul_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_backward_op("rb_mul_backward", BinaryOp::Mul, stream, a, b, dy, da, db) }
}

/// The backward of `rb_div`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_div_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_backward_op("rb_div_backward", BinaryOp::Div, stream, a, b, dy, da, db) }
}

/// The backward of `rb_pow`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pow_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_backward_op("rb_pow_backward", BinaryOp::Pow, stream, a, b, dy, da, db) }
}

/// The backward of `rb_maximum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_maximum_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        binary_backward_op(
            "rb_maximum_backward",
            BinaryOp::Maximum,
            stream,
            a,
            b,
            dy,
            da,
            db,
        )
    }
}

/// The backward of `rb_minimum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// # Safety
/// `da` and `db` are NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_minimum_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        binary_backward_op(
            "rb_minimum_backward",
            BinaryOp::Minimum,
            stream,
            a,
            b,
            dy,
            da,
            db,
        )
    }
}

/// Elementwise `a == b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_eq(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { compare_op("rb_eq", CompareOp::Eq, stream, a, b, out) }
}

/// Elementwise `a != b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_ne(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { compare_op("rb_ne", CompareOp::Ne, stream, a, b, out) }
}

/// Elementwise `a < b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_lt(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { compare_op("rb_lt", CompareOp::Lt, stream, a, b, out) }
}

/// Elementwise `a <= b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_le(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { compare_op("rb_le", CompareOp::Le, stream, a, b, out) }
}

/// Elementwise `a > b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gt(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { compare_op("rb_gt", CompareOp::Gt, stream, a, b, out) }
}

/// Elementwise `a >= b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_ge(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { compare_op("rb_ge", CompareOp::Ge, stream, a, b, out) }
}

/// `torch.where(cond, a, b)`: `a` where the bool tensor `cond` is true, else `b`, with
/// three-way NumPy broadcasting, in one pass; `a` and `b` of one dtype (any) and device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH (cond not bool, a and b differ) or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_where(
    stream: *mut rb_stream,
    cond: *const rb_tensor,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_where", || {
        let (c, a, b) = (arc(cond, "cond")?, arc(a, "a")?, arc(b, "b")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = pointwise::where_(s.as_deref(), &c, &a, &b, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `torch.where(a op b, x, y)` fused: `x` where `a op b` holds, else `y` (`op` an
/// `rb_compare_op`), with four-way NumPy broadcasting. On GPUs one kernel and no bool
/// temporary (`torch.where(a > b, a, b)` reads only `a` and `b`); on the CPU a comparison
/// then `rb_where`. All four inputs of one dtype (any) and device; the output has it too.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (an `op` that is not an
/// `rb_compare_op`, different devices). Output convention and threads: see the eager-op
/// conventions (`rb_add`).
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_where_compare(
    stream: *mut rb_stream,
    op: i32,
    a: *const rb_tensor,
    b: *const rb_tensor,
    x: *const rb_tensor,
    y: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_where_compare", || {
        let op = compare_arg(op, "where_compare")?;
        let (a, b, x, y) = (arc(a, "a")?, arc(b, "b")?, arc(x, "x")?, arc(y, "y")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = pointwise::where_compare(s.as_deref(), op, &a, &b, &x, &y, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}
