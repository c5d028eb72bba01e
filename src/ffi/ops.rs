//! Eager ops on tensors: `rb_<op>(stream, inputs..., out)`.
//!
//! The output convention of every op: `out` must not be NULL. If `*out` is NULL the op makes
//! a new tensor and writes its handle to `*out` (the caller owns it); otherwise `*out` must be
//! a tensor with the result's shape, dtype and device, and is overwritten. On failure `*out`
//! is unchanged. `stream` may be NULL (the inputs' device's default stream); work is ordered
//! on it, so read results through `rb_tensor_copy_to_host`, which waits. Inputs and a given
//! output may be the same tensor (in-place elementwise ops).

use super::handles::arc;
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{finish_out, out_tensor};
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::runtime::prelude as eager;

/// The body of every broadcasting binary export.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
pub(crate) unsafe fn binary_op(
    name: &str,
    op: BinaryOp,
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard(name, || {
        let (a, b) = (arc(a, "a")?, arc(b, "b")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = eager::binary(s.as_deref(), op, &a, &b, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// The body of every unary export.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
pub(crate) unsafe fn unary_op(
    name: &str,
    op: UnaryOp,
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard(name, || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = eager::unary(s.as_deref(), op, &x, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Elementwise `a + b` with NumPy broadcasting; both inputs of one dtype and device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the
/// eager-op conventions at the top of this section.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { binary_op("rb_add", BinaryOp::Add, stream, a, b, out) }
}

/// Elementwise `max(x, 0)` on a floating tensor (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see
/// the eager-op conventions.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_relu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe { unary_op("rb_relu", UnaryOp::Relu, stream, x, out) }
}

/// `torch.matmul(a, b)`: 1-D operands are vectors, 2-D are matrices, more dimensions are
/// batches of matrices whose batch dimensions broadcast.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (inner dimensions differ, batch dimensions do not broadcast, `*out` of another shape),
/// RB_STATUS_DTYPE_MISMATCH (different or non-floating dtypes) or RB_STATUS_INVALID_ARGUMENT.
/// Output convention and threads: see the eager-op section.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_matmul(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_matmul", || {
        let (a, b) = (arc(a, "a")?, arc(b, "b")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = eager::matmul(s.as_deref(), &a, &b, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}
