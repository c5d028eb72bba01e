//! Eager data exports: permute, concat, slice, cast, fill, copy, embedding and its
//! backward. Output convention: see `rb_add`. `stream` may be NULL.

use super::handles::arc;
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{dtype_arg, finish_out, null, out_tensor};
use crate::runtime::{Tensor, data};
use crate::{Error, Result};
use std::sync::Arc;

/// `x.permute(perm).contiguous()`: `perm` holds `ndim` dimension indices (negative count
/// from the end), a permutation of x's dimensions.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (not a
/// permutation), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (`*out`). Output
/// convention: `rb_add`.
///
/// # Safety
/// `perm` is NULL or readable for `ndim` values; `out` is NULL or valid for one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_permute(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    perm: *const i64,
    ndim: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_permute", || {
        let x = arc(x, "x")?;
        let p = unsafe { super::reduce::dims_arg(perm, ndim) }.map_err(|e| e.context("permute"))?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = data::permute(s.as_deref(), &x, p, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `torch.cat(xs, dim)`: `n` (>= 1) tensors of one dtype and device whose shapes agree
/// outside `dim`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (n == 0,
/// dim out of range), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH. Output convention:
/// `rb_add`.
///
/// # Safety
/// `xs` is NULL or readable for `n` handles; `out` is NULL or valid for one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_concat(
    stream: *mut rb_stream,
    xs: *const *const rb_tensor,
    n: usize,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_concat", || {
        if n == 0 {
            return Err(Error::invalid("concat: the list of tensors is empty"));
        }
        if xs.is_null() {
            return Err(null("xs"));
        }
        // SAFETY: caller's contract.
        let hs = unsafe { std::slice::from_raw_parts(xs, n) };
        let ts: Vec<Arc<Tensor>> = hs
            .iter()
            .enumerate()
            .map(|(i, &h)| arc(h, &format!("xs[{i}]")))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = ts.iter().map(|a| a.as_ref()).collect();
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = data::concat(s.as_deref(), &refs, dim, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `x[..., start:end:step, ...]` along `dim` as a new contiguous tensor (Python slicing:
/// negative indices count from the end, out-of-range bounds clamp; `step` > 0).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim out
/// of range, step <= 0), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH. Output convention:
/// `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_slice(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_slice", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = data::slice(s.as_deref(), &x, dim, start, end, step, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `x.to(dtype)`: converts to the `rb_dtype` `dtype` with PyTorch's rules (floats to integers
/// truncate toward zero; non-zero to bool is true).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (bad
/// dtype), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (`*out`). Output convention:
/// `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cast(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cast", || {
        let x = arc(x, "x")?;
        let d = dtype_arg(dtype).map_err(|e| e.context("cast"))?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = data::cast(s.as_deref(), &x, d, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Sets every element of `x` to `value` (converted as a cast would), in place.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe (writes to one
/// tensor from several threads race).
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_fill(
    stream: *mut rb_stream,
    x: *mut rb_tensor,
    value: f64,
) -> rb_status {
    guard("rb_fill", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        data::fill(s.as_deref(), &x, value)
    })
}

/// `dst.copy_(src)`: same shape; the dtype converts when both are on one device; across
/// devices the data goes through host memory and the dtypes must match.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_copy(
    stream: *mut rb_stream,
    src: *const rb_tensor,
    dst: *mut rb_tensor,
) -> rb_status {
    guard("rb_copy", || {
        let (src, dst) = (arc(src, "src")?, arc(dst, "dst")?);
        let s = stream_arg(stream)?;
        data::copy(s.as_deref(), &src, &dst)
    })
}

/// `F.embedding(indices, weight)`: rows of the 2-D `weight` [num, dim] picked by `indices`
/// (i32 or i64, any shape); the result has shape `indices.shape + [dim]`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (an index
/// outside [0, num)), RB_STATUS_SHAPE_MISMATCH (weight not 2-D) or RB_STATUS_DTYPE_MISMATCH
/// (indices not integer). Output convention: `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_embedding(
    stream: *mut rb_stream,
    weight: *const rb_tensor,
    indices: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_embedding", || {
        let (w, i) = (arc(weight, "weight")?, arc(indices, "indices")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = data::embedding(s.as_deref(), &w, &i, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// The weight gradient of `rb_embedding`, dense [num_embeddings, dim]: each row of `dy`
/// (shape `indices.shape + [dim]`) added to the row its index names (repeated indices sum).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (negative num_embeddings, index out of range), RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_embedding_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    indices: *const rb_tensor,
    num_embeddings: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_embedding_backward", || {
        let (dy, i) = (arc(dy, "dy")?, arc(indices, "indices")?);
        let num = usize::try_from(num_embeddings).map_err(|_| {
            Error::invalid(format!(
                "embedding_backward: num_embeddings={num_embeddings} is negative"
            ))
        })?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = data::embedding_backward(s.as_deref(), &dy, &i, num, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}
