//! Eager reduction exports: sum, mean, max, min, prod over a list of dims, argmax, and the
//! backwards. `dims` holds `ndims` dimension indices (negative count from the end); `ndims
//! == 0` (dims may then be NULL) reduces over every dimension. `keepdim` is 0 or 1. Output
//! convention: see `rb_add`.

use super::handles::arc;
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{finish_out, null, out_tensor};
use crate::ops::reduce::ReduceOp;
use crate::runtime::reduce;
use crate::{Error, Result};

/// A 0/1 flag argument.
pub(crate) fn flag(v: i32, arg: &str) -> Result<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::invalid(format!("{arg}={v} must be 0 or 1"))),
    }
}

/// The dims argument.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values.
pub(crate) unsafe fn dims_arg<'a>(dims: *const i64, ndims: usize) -> Result<&'a [i64]> {
    if ndims == 0 {
        return Ok(&[]);
    }
    if dims.is_null() {
        return Err(null("dims"));
    }
    if ndims > crate::base::shape::MAX_DIMS {
        return Err(Error::invalid(format!("dims: {ndims} entries is too many")));
    }
    // SAFETY: caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(dims, ndims) })
}

/// # Safety
/// As the exports.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_op(
    name: &str,
    op: ReduceOp,
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard(name, || {
        let x = arc(x, "x")?;
        let d = unsafe { dims_arg(dims, ndims) }?;
        let k = flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = reduce::reduce(s.as_deref(), op, &x, d, k, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// # Safety
/// As the exports.
#[allow(clippy::too_many_arguments)]
unsafe fn reduce_backward_op(
    name: &str,
    op: ReduceOp,
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard(name, || {
        let (x, dy) = (arc(x, "x")?, arc(dy, "dy")?);
        let d = unsafe { dims_arg(dims, ndims) }?;
        let k = flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = reduce::reduce_backward(s.as_deref(), op, &x, d, k, &dy, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `torch.sum(x, dims, keepdim)` (accumulated in f64) on a floating tensor.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sum(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_op(
            "rb_sum",
            ReduceOp::Sum,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            out,
        )
    }
}

/// The backward of `rb_sum` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): `dx = dy` broadcast back.
///
/// Fails as `rb_sum`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sum_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_backward_op(
            "rb_sum_backward",
            ReduceOp::Sum,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            dy,
            out,
        )
    }
}

/// `torch.mean(x, dims, keepdim)` (accumulated in f64; NaN over zero elements) on a floating tensor.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mean(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_op(
            "rb_mean",
            ReduceOp::Mean,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            out,
        )
    }
}

/// The backward of `rb_mean` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): `dx = dy / count` broadcast back.
///
/// Fails as `rb_mean`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mean_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_backward_op(
            "rb_mean_backward",
            ReduceOp::Mean,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            dy,
            out,
        )
    }
}

/// `torch.amax(x, dims, keepdim)` (NaN propagates) on a floating tensor.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1, reducing an empty dimension),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_op(
            "rb_max",
            ReduceOp::Max,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            out,
        )
    }
}

/// The backward of `rb_max` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): the gradient shared evenly between tied maxima (`torch.amax`'s rule).
///
/// Fails as `rb_max`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_backward_op(
            "rb_max_backward",
            ReduceOp::Max,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            dy,
            out,
        )
    }
}

/// `torch.amin(x, dims, keepdim)` (NaN propagates) on a floating tensor.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1, reducing an empty dimension),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_min(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_op(
            "rb_min",
            ReduceOp::Min,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            out,
        )
    }
}

/// The backward of `rb_min` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): the gradient shared evenly between tied minima.
///
/// Fails as `rb_min`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_min_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_backward_op(
            "rb_min_backward",
            ReduceOp::Min,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            dy,
            out,
        )
    }
}

/// `torch.prod` over `dims` (accumulated in f64) on a floating tensor.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_prod(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_op(
            "rb_prod",
            ReduceOp::Prod,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            out,
        )
    }
}

/// The backward of `rb_prod` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): `dx = dy * (product of the other elements)` (exact with zeros).
///
/// Fails as `rb_prod`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// # Safety
/// `dims` is NULL or readable for `ndims` values; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_prod_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        reduce_backward_op(
            "rb_prod_backward",
            ReduceOp::Prod,
            stream,
            x,
            dims,
            ndims,
            keepdim,
            dy,
            out,
        )
    }
}

/// `torch.argmax(x)` without `dim`, on a floating tensor: an `RB_DTYPE_I64` tensor holding
/// the index of the first largest value of the flattened `x` (a NaN counts as the largest);
/// its shape is `[]`, or `x`'s rank with every size 1 when `keepdim` is 1.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (empty `x`, keepdim not 0/1), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (an
/// integer `x`, or a given `*out` of the wrong shape or dtype). Output convention (a new
/// tensor the caller destroys, or the given `*out` written in place; `*out` untouched on
/// failure): `rb_add`. Thread-safe; `x` is only read.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_argmax_all(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_argmax_all", || {
        let x = arc(x, "x")?;
        let k = flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = reduce::argmax_all(s.as_deref(), &x, k, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `torch.argmax(x, dim, keepdim)` on a floating tensor: an `RB_DTYPE_I64` tensor of the first
/// index of the largest value along `dim` (a NaN counts as the largest).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range, keepdim not 0/1, empty dimension), RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_argmax(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_argmax", || {
        let x = arc(x, "x")?;
        let k = flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = reduce::argmax(s.as_deref(), &x, dim, k, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}
