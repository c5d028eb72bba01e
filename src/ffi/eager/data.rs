//! The C exports of the data ops (the eager conventions: `rb_add` in the header's
//! introduction). @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

#![allow(unused_imports)]

use crate::ffi::args;
use crate::ffi::handles::{arc, arc_opt};
use crate::ffi::types::{rb_conv_params, rb_conv_params_ex, rb_pool_params, rb_pool_params_ex};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::{rb_stream, stream_arg};
use crate::ffi::tensor::rb_tensor;
use crate::ffi::util::OutSlot;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::LossKind;
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::ops::reduce::ReduceOp;
use crate::runtime::{self, Tensor};

/// `x.permute(perm).contiguous()`: `perm` holds `ndim` dimension indices (negative count
/// from the end), a permutation of x's dimensions.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (not a
/// permutation), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (`*out`). Output
/// convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `perm` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
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
        let perm = unsafe { args::dims(perm, ndim) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_permute", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::data::permute(s, x, perm, out)?;
        unsafe { out_slot.finish(r) };
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
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'xs'").
///
/// # Safety
/// `xs` is NULL or points to `n` readable handles; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_concat(
    stream: *mut rb_stream,
    xs: *const *const rb_tensor,
    n: usize,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_concat", || {
        let xs = unsafe { args::tensor_list(xs, n, "xs", "concat") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap_list("rb_concat", "xs", &xs, false)?;
        let xs: Vec<&Tensor> = xs.iter().map(|t| &**t).collect();
        let xs: &[&Tensor] = &xs;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::data::concat(s, xs, dim, out)?;
        unsafe { out_slot.finish(r) };
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
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
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
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_slice", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::data::slice(s, x, dim, start, end, step, out)?;
        unsafe { out_slot.finish(r) };
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
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
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
        let dtype = args::dtype(dtype, "cast")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cast", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::data::cast(s, x, dtype, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Sets every element of `x` to `value` (converted as a cast would), in place.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe (writes to one
/// tensor from several threads race).
///
/// # Safety
/// Tensor and stream arguments are handles (checked on use); nothing is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_fill(
    stream: *mut rb_stream,
    x: *mut rb_tensor,
    value: f64,
) -> rb_status {
    guard("rb_fill", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        runtime::data::fill(s, x, value)
    })
}

/// `dst.copy_(src)`: same shape; the dtype converts when both are on one device; across
/// devices the data goes through host memory and the dtypes must match.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// Tensor and stream arguments are handles (checked on use); nothing is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_copy(
    stream: *mut rb_stream,
    src: *const rb_tensor,
    dst: *mut rb_tensor,
) -> rb_status {
    guard("rb_copy", || {
        let src = arc(src, "src")?;
        let dst = arc(dst, "dst")?;
        let s = stream_arg(stream)?;
        let src: &Tensor = &src;
        let dst: &Tensor = &dst;
        let s = s.as_deref();
        runtime::data::copy(s, src, dst)
    })
}

/// `F.embedding(indices, weight)`: rows of the 2-D `weight` [num, dim] picked by `indices`
/// (i32 or i64, any shape); the result has shape `indices.shape + [dim]`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (an index
/// outside [0, num)), RB_STATUS_SHAPE_MISMATCH (weight not 2-D) or RB_STATUS_DTYPE_MISMATCH
/// (indices not integer). Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'weight'").
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
        let weight = arc(weight, "weight")?;
        let indices = arc(indices, "indices")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_embedding", &[("weight", Some(&*weight)), ("indices", Some(&*indices))], false)?;
        let weight: &Tensor = &weight;
        let indices: &Tensor = &indices;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::data::embedding(s, weight, indices, out)?;
        unsafe { out_slot.finish(r) };
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
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
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
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let num_embeddings = args::non_negative(num_embeddings, "num_embeddings")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_embedding_backward", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
        let dy: &Tensor = &dy;
        let indices: &Tensor = &indices;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::data::embedding_backward(s, dy, indices, num_embeddings, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}
