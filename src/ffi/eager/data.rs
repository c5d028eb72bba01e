//! The C exports of the data ops (the eager conventions: `rb_add` in the header's
//! introduction). @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

#![allow(unused_imports, clippy::clone_on_copy, clippy::vec_init_then_push, clippy::get_first)]

use crate::ffi::args;
use crate::ffi::handles::{arc, arc_opt};
use crate::ffi::types::{rb_conv_params, rb_conv_params_ex, rb_pool_params, rb_pool_params_ex};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::{rb_stream, stream_arg};
use crate::ffi::tensor::rb_tensor;
use crate::ffi::util::OutSlot;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::LossKind;
use crate::ops::data::ScatterReduce;
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_permute", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Permute(attrs::Permute { perm: perm.to_vec() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.extend(xs.iter().map(|t| ("xs", Some(*t))));
            if let Some(__g) = crate::graph::capture::recorder("rb_concat", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.extend(xs.iter().map(|t| Some(*t)));
                let __r = __g.record(s, Op::Concat(attrs::Concat { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::concat(s, xs, dim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `x[..., start:end:step, ...]` along `dim` as a new contiguous tensor (Python/NumPy
/// slicing, ONNX `Slice`: negative indices count from the end; for `step` > 0 the bounds
/// clamp to `[0, n]`; for `step` < 0 the walk goes down from `start` and stops before `end`,
/// both clamped to `[-1, n - 1]`, so `start = INT64_MAX, end = INT64_MIN, step = -1`
/// reverses the dimension).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim out
/// of range, step == 0), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH. Output convention:
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_slice", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Slice(attrs::Slice { dim: dim.clone(), start: start.clone(), end: end.clone(), step: step.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_cast", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Cast(attrs::Cast { dtype: dtype.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
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
        x.check_writable("x")?;
        let s = stream_arg(stream)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_fill", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Fill(attrs::Fill { value: value.clone() }), &__in, &[])?;
                return Ok(());
            }
        }
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
        dst.check_writable("dst")?;
        let s = stream_arg(stream)?;
        let src: &Tensor = &src;
        let dst: &Tensor = &dst;
        let s = s.as_deref();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("src", Some(src)));
            __named.push(("dst", Some(dst)));
            if let Some(__g) = crate::graph::capture::recorder("rb_copy", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(src));
                __in.push(Some(dst));
                let __r = __g.record(s, Op::Copy, &__in, &[])?;
                return Ok(());
            }
        }
        runtime::data::copy(s, src, dst)
    })
}

/// `F.embedding(indices, weight)`: rows of the 2-D `weight` [num, dim] (any dtype) picked by `indices`
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("weight", Some(weight)));
            __named.push(("indices", Some(indices)));
            if let Some(__g) = crate::graph::capture::recorder("rb_embedding", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(weight));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::Embedding, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("indices", Some(indices)));
            if let Some(__g) = crate::graph::capture::recorder("rb_embedding_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::EmbeddingBackward(attrs::EmbeddingBackward { num_embeddings: num_embeddings.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::embedding_backward(s, dy, indices, num_embeddings, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_permute` with the same `perm`: `dy.permute(inverse(perm)).contiguous()`,
/// the gradient in x's dimension order. Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (not
/// a permutation of dy's dimensions), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH
/// (`*out`). Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `perm` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_permute_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    perm: *const i64,
    ndim: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_permute_backward", || {
        let dy = arc(dy, "dy")?;
        let perm = unsafe { args::dims(perm, ndim) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_permute_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_permute_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::PermuteBackward(attrs::PermuteBackward { perm: perm.to_vec() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::permute_backward(s, dy, perm, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// PyTorch's `x.to(memory_format=torch.channels_last)` (`channels_last_3d` for rank 5) as a
/// dense tensor: `x` `[N, C, ...]` (rank 3 to 5) becomes `[N, ..., C]`, the layout of the
/// RB_LAYOUT_NHWC convolutions and poolings (`rb_conv_params_ex.layout`,
/// `rb_pool_params_ex.layout`). A tiled transpose on GPUs. Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (rank
/// not 3 to 5, `*out`) or RB_STATUS_DTYPE_MISMATCH (`*out`). Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_to_channels_last(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_to_channels_last", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_to_channels_last", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_to_channels_last", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::ToChannelsLast, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::to_channels_last(s, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The inverse of `rb_to_channels_last` (and its backward): `x` `[N, ..., C]` (rank 3 to 5)
/// becomes `[N, C, ...]`. Any dtype. Failures as `rb_to_channels_last`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_to_channels_first(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_to_channels_first", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_to_channels_first", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_to_channels_first", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::ToChannelsFirst, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::to_channels_first(s, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_concat` for its input `index`: the part of `dy` (the concatenation's
/// shape) that `xs[index]` filled, with `xs[index]`'s shape. `xs` (`n` >= 1 tensors, as
/// given to `rb_concat`) are read for their shapes only. Any dtype (dy's).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (n
/// == 0, dim out of range, index >= n), RB_STATUS_SHAPE_MISMATCH (shapes that do not
/// concatenate, `dy` not their concatenation, `*out`) or RB_STATUS_DTYPE_MISMATCH (`*out`).
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `xs` is NULL or points to `n` readable handles; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_concat_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    xs: *const *const rb_tensor,
    n: usize,
    dim: i64,
    index: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_concat_backward", || {
        let dy = arc(dy, "dy")?;
        let xs = unsafe { args::tensor_list(xs, n, "xs", "concat_backward") }?;
        let index = args::non_negative(index, "index")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_concat_backward", &[("dy", Some(&*dy))], false)?;
        out_slot.check_overlap_list("rb_concat_backward", "xs", &xs, false)?;
        let dy: &Tensor = &dy;
        let xs: Vec<&Tensor> = xs.iter().map(|t| &**t).collect();
        let xs: &[&Tensor] = &xs;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.extend(xs.iter().map(|t| ("xs", Some(*t))));
            if let Some(__g) = crate::graph::capture::recorder("rb_concat_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.extend(xs.iter().map(|t| Some(*t)));
                let __r = __g.record(s, Op::ConcatBackward(attrs::ConcatBackward { dim: dim.clone(), index: index.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::concat_backward(s, dy, xs, dim, index, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_slice` with the same `dim`, `start`, `end` and `step`: zeros of x's
/// shape (the `ndim` extents at `x_shape`) with `dy` (the slice's shape) written at the
/// elements the slice took. Any dtype (dy's).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim
/// out of range, step == 0, a negative extent), RB_STATUS_SHAPE_MISMATCH (`dy` not the
/// slice's shape, `*out`) or RB_STATUS_DTYPE_MISMATCH (`*out`). Output convention:
/// `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_slice_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_slice_backward", || {
        let dy = arc(dy, "dy")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_slice_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_slice_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SliceBackward(attrs::SliceBackward { x_shape: x_shape.clone(), dim: dim.clone(), start: start.clone(), end: end.clone(), step: step.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::slice_backward(s, dy, &x_shape, dim, start, end, step, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.gather(x, dim, index)` (ONNX `GatherElements`): `out[i][j][k] = x[index[i][j][k]][j][k]`
/// for `dim == 0`, and so on for the other dims; `index` (i32 or i64) has x's rank and no
/// dimension larger than x's outside `dim`; the result has index's shape and x's dtype (any).
/// A negative `dim` counts from the end; a negative index value counts from the end of
/// `dim` (as ONNX allows; PyTorch refuses them).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim
/// out of range, an index value outside `[-n, n)`, different devices),
/// RB_STATUS_SHAPE_MISMATCH (ranks differ, index larger than x outside dim, `*out`) or
/// RB_STATUS_DTYPE_MISMATCH (index not integer, `*out`). Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gather(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_gather", || {
        let x = arc(x, "x")?;
        let index = arc(index, "index")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_gather", &[("x", Some(&*x)), ("index", Some(&*index))], false)?;
        let x: &Tensor = &x;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_gather", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(index));
                let __r = __g.record(s, Op::Gather(attrs::Gather { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::gather(s, x, dim, index, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_gather` with the same `dim` and `index`: zeros of x's shape (the
/// `ndim` extents at `x_shape`) with every element of `dy` (index's shape, floating) added
/// at the element the gather read (repeated indices sum: PyTorch's `scatter_add`).
///
/// Failures as `rb_gather`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another shape than
/// `index`. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gather_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    dim: i64,
    index: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_gather_backward", || {
        let dy = arc(dy, "dy")?;
        let index = arc(index, "index")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_gather_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        let dy: &Tensor = &dy;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_gather_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(index));
                let __r = __g.record(s, Op::GatherBackward(attrs::GatherBackward { x_shape: x_shape.clone(), dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::gather_backward(s, dy, &x_shape, dim, index, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// ONNX `Gather` (`numpy.take(x, indices, axis)`, `torch.index_select` for indices of any
/// rank): the slices of `x` along `axis` that `indices` (i32 or i64, any shape) names; the
/// result has shape `x.shape[:axis] + indices.shape + x.shape[axis+1:]` and x's dtype (any).
/// Negative `axis` and negative index values count from the end.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (axis
/// out of range, an index outside `[-n, n)`, different devices), RB_STATUS_SHAPE_MISMATCH (a
/// 0-d x, `*out`) or RB_STATUS_DTYPE_MISMATCH (indices not integer, `*out`). Output
/// convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_take(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    axis: i64,
    indices: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_take", || {
        let x = arc(x, "x")?;
        let indices = arc(indices, "indices")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_take", &[("x", Some(&*x)), ("indices", Some(&*indices))], false)?;
        let x: &Tensor = &x;
        let indices: &Tensor = &indices;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("indices", Some(indices)));
            if let Some(__g) = crate::graph::capture::recorder("rb_take", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::Take(attrs::Take { axis: axis.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::take(s, x, axis, indices, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_take` with the same `axis` and `indices`: zeros of x's shape (the
/// `ndim` extents at `x_shape`) with each slice of `dy` (take's result shape, floating)
/// added to the slice its index names (repeated indices sum).
///
/// Failures as `rb_take`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another shape than
/// take's result. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_take_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    axis: i64,
    indices: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_take_backward", || {
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_take_backward", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
        let dy: &Tensor = &dy;
        let indices: &Tensor = &indices;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("indices", Some(indices)));
            if let Some(__g) = crate::graph::capture::recorder("rb_take_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::TakeBackward(attrs::TakeBackward { x_shape: x_shape.clone(), axis: axis.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::take_backward(s, dy, &x_shape, axis, indices, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.pad(x, pads, mode, value)`: `pads` holds (before, after) pairs, the
/// last dimension first, for as many trailing dimensions as there are pairs (`npads` even,
/// at most twice x's rank; asymmetric). `mode` 0 constant (`value`; negative pads crop), 1
/// reflect (pads smaller than the dimension), 2 replicate. Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `pads` is NULL or points to `npads` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pad(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    pads: *const i64,
    npads: usize,
    mode: i64,
    value: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pad", || {
        let x = arc(x, "x")?;
        let pads = unsafe { args::dims(pads, npads) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_pad", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pad", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Pad(attrs::Pad { pads: pads.to_vec(), mode: mode.clone(), value: value.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::pad(s, x, pads, mode, value, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_pad` with the same `pads` and `mode`: the gradient of the input of
/// shape `x_shape` (`ndim` extents): constant, the interior of `dy`; reflect and replicate,
/// each padded element's gradient added to the element it copied. Floating dtypes, f64 included.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `pads` is NULL or points to `npads`
/// readable int64_t; `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pad_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    pads: *const i64,
    npads: usize,
    mode: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pad_backward", || {
        let dy = arc(dy, "dy")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let pads = unsafe { args::dims(pads, npads) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_pad_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pad_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::PadBackward(attrs::PadBackward { x_shape: x_shape.clone(), pads: pads.to_vec(), mode: mode.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::pad_backward(s, dy, &x_shape, pads, mode, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.index_select(x, dim, index)`: the slices of `x` along `dim` that the 1-D (or 0-D)
/// i32/i64 `index` names, in its order; negative values count from the end, values outside
/// `[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device). Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_index_select(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_index_select", || {
        let x = arc(x, "x")?;
        let index = arc(index, "index")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_index_select", &[("x", Some(&*x)), ("index", Some(&*index))], false)?;
        let x: &Tensor = &x;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_index_select", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(index));
                let __r = __g.record(s, Op::IndexSelect(attrs::IndexSelect { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::index_select(s, x, dim, index, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_index_select`: zeros of `x_shape` with each slice of `dy` added to the
/// slice its index names (repeated indices sum). Floating dtypes, f64 included.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_index_select_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    dim: i64,
    index: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_index_select_backward", || {
        let dy = arc(dy, "dy")?;
        let index = arc(index, "index")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_index_select_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        let dy: &Tensor = &dy;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_index_select_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(index));
                let __r = __g.record(s, Op::IndexSelectBackward(attrs::IndexSelectBackward { x_shape: x_shape.clone(), dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::index_select_backward(s, dy, &x_shape, dim, index, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `x.expand(shape)` made contiguous (ONNX `Expand` with a full shape): dimensions of size 1
/// and new leading dimensions repeat; -1 keeps a dimension. Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_expand(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    shape: *const i64,
    ndim: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_expand", || {
        let x = arc(x, "x")?;
        let shape = unsafe { args::dims(shape, ndim) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_expand", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_expand", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Expand(attrs::Expand { shape: shape.to_vec() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::expand(s, x, shape, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_expand`: `dy` summed over the repeated dimensions into `x_shape`.
/// Floating dtypes, f64 included.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_expand_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_expand_backward", || {
        let dy = arc(dy, "dy")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_expand_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_expand_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ExpandBackward(attrs::ExpandBackward { x_shape: x_shape.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::expand_backward(s, dy, &x_shape, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `x.repeat(repeats)` (ONNX `Tile`, `numpy.tile` with as many repeats as dimensions):
/// `nrepeats` at least x's rank, extra leading repeats add dimensions. Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `repeats` is NULL or points to `nrepeats` readable int64_t; `out` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tile(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    repeats: *const i64,
    nrepeats: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tile", || {
        let x = arc(x, "x")?;
        let repeats = unsafe { args::dims(repeats, nrepeats) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_tile", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_tile", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Tile(attrs::Tile { repeats: repeats.to_vec() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::tile(s, x, repeats, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_tile`: `dy` summed over the repeats into `x_shape`. Floating dtypes, f64 included.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `repeats` is NULL or points to
/// `nrepeats` readable int64_t; `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tile_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    repeats: *const i64,
    nrepeats: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tile_backward", || {
        let dy = arc(dy, "dy")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let repeats = unsafe { args::dims(repeats, nrepeats) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_tile_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_tile_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::TileBackward(attrs::TileBackward { x_shape: x_shape.clone(), repeats: repeats.to_vec() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::tile_backward(s, dy, &x_shape, repeats, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.flatten(x, start_dim, end_dim)` as a new contiguous tensor (a 0-d `x` becomes
/// `[1]`); its gradient is `dy` reshaped to x's shape. Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_flatten(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    start_dim: i64,
    end_dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_flatten", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_flatten", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_flatten", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Flatten(attrs::Flatten { start_dim: start_dim.clone(), end_dim: end_dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::flatten(s, x, start_dim, end_dim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.cumsum(x, dim)`, with ONNX `CumSum`'s `exclusive` (each sum leaves its own element
/// out) and `reverse` (sums from the end). Every dtype. Floating dtypes give x's dtype
/// (f16/bf16 accumulate in f32, f64 in f64), computed as a GEMM by a triangular matrix of
/// ones, so the cost grows with the square of the dimension's length. The integer dtypes
/// (i8/u8/i16/i32/i64) and bool give an **i64** result, as PyTorch's integer cumsum: the sums
/// are taken in i64, wrapping on overflow, a scan per fiber along `dim`; an `out` of another
/// dtype than i64 is RB_STATUS_DTYPE_MISMATCH. Integer tensors have no gradient
/// (`rb_cumsum_backward` takes the floating dtypes).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cumsum(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    exclusive: i32,
    reverse: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cumsum", || {
        let x = arc(x, "x")?;
        let exclusive = args::flag(exclusive, "exclusive")?;
        let reverse = args::flag(reverse, "reverse")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cumsum", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_cumsum", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Cumsum(attrs::Cumsum { dim: dim.clone(), exclusive: exclusive.clone(), reverse: reverse.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::cumsum(s, x, dim, exclusive, reverse, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_cumsum` with the same `dim`, `exclusive` and `reverse`: the running
/// sums of `dy` the other way.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cumsum_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    dim: i64,
    exclusive: i32,
    reverse: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cumsum_backward", || {
        let dy = arc(dy, "dy")?;
        let exclusive = args::flag(exclusive, "exclusive")?;
        let reverse = args::flag(reverse, "reverse")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cumsum_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_cumsum_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::CumsumBackward(attrs::CumsumBackward { dim: dim.clone(), exclusive: exclusive.clone(), reverse: reverse.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::cumsum_backward(s, dy, dim, exclusive, reverse, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.triu(x, diagonal)` when `upper`, else `torch.tril(x, diagonal)` (ONNX `Trilu`),
/// over the last two dimensions (x has at least two); the other elements are zero. Every
/// dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_trilu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    upper: i32,
    diagonal: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_trilu", || {
        let x = arc(x, "x")?;
        let upper = args::flag(upper, "upper")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_trilu", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_trilu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Trilu(attrs::Trilu { upper: upper.clone(), diagonal: diagonal.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::trilu(s, x, upper, diagonal, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_trilu` with the same `upper` and `diagonal`: `dy` masked the same way.
/// Floating dtypes, f64 included.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_trilu_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    upper: i32,
    diagonal: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_trilu_backward", || {
        let dy = arc(dy, "dy")?;
        let upper = args::flag(upper, "upper")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_trilu_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_trilu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::TriluBackward(attrs::TriluBackward { upper: upper.clone(), diagonal: diagonal.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::trilu_backward(s, dy, upper, diagonal, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `x.scatter_add(dim, index, src)` (ONNX `ScatterElements`, reduction add): a copy of `x`
/// with each element of `src` over index's shape added at the position `index` names along
/// `dim` (repeated indices sum). `index` (i32/i64) has x's rank and no dimension larger than
/// x's outside `dim` or than src's; negative values count from the end, values outside
/// `[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device). Every dtype but bool (f64 and the integers add in index order, integers wrapping).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scatter_add(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    src: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scatter_add", || {
        let x = arc(x, "x")?;
        let index = arc(index, "index")?;
        let src = arc(src, "src")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_scatter_add", &[("x", Some(&*x)), ("index", Some(&*index)), ("src", Some(&*src))], false)?;
        let x: &Tensor = &x;
        let index: &Tensor = &index;
        let src: &Tensor = &src;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("index", Some(index)));
            __named.push(("src", Some(src)));
            if let Some(__g) = crate::graph::capture::recorder("rb_scatter_add", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(index));
                __in.push(Some(src));
                let __r = __g.record(s, Op::ScatterAdd(attrs::ScatterAdd { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::scatter_add(s, x, dim, index, src, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_scatter_add`: `*dx = dy` and `*dsrc = gather(dy, dim, index)` (index's
/// shape). Floating dtypes, f64 included.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dsrc` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scatter_add_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dsrc: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scatter_add_backward", || {
        let dy = arc(dy, "dy")?;
        let index = arc(index, "index")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::out(dx, "dx") }?;
        let dsrc_slot = unsafe { OutSlot::out(dsrc, "dsrc") }?;
        dx_slot.check_overlap("rb_scatter_add_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        dsrc_slot.check_overlap("rb_scatter_add_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        let dy: &Tensor = &dy;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let dx = dx_slot.dest();
        let dsrc = dsrc_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_scatter_add_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(index));
                let __r = __g.record(s, Op::ScatterAddBackward(attrs::ScatterAddBackward { dim: dim.clone() }), &__in, &[dx.map_or(Grad::New, Grad::Into), dsrc.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dsrc_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::data::scatter_add_backward(s, dy, dim, index, dx, dsrc)?;
        unsafe {
            dx_slot.finish(r0);
            dsrc_slot.finish(r1);
        }
        Ok(())
    })
}

/// `x.index_copy_(dim, index, src)`, in place: the slices of `src` along `dim` are stored into
/// the slices of `x` that the 1-D (or 0-D) i32/i64 `index` names, in its order; `src` has x's
/// shape except `index.numel()` along `dim`. Negative values count from the end; values outside
/// `[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device); where indices repeat, which
/// slice lands is unspecified (as in PyTorch). The index is read on the device, so a recorded
/// graph writes where the index tensor says at each run (a KV cache's position). Any dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (bad
/// index, `src` or `index` overlapping `x`, different devices), RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH, with a message naming the argument. Thread-safe (writes to one tensor
/// from several threads race).
///
/// # Safety
/// Tensor and stream arguments are handles (checked on use); nothing is dereferenced.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_index_copy(
    stream: *mut rb_stream,
    x: *mut rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    src: *const rb_tensor,
) -> rb_status {
    guard("rb_index_copy", || {
        let x = arc(x, "x")?;
        x.check_writable("x")?;
        let index = arc(index, "index")?;
        let src = arc(src, "src")?;
        let s = stream_arg(stream)?;
        let x: &Tensor = &x;
        let index: &Tensor = &index;
        let src: &Tensor = &src;
        let s = s.as_deref();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("index", Some(index)));
            __named.push(("src", Some(src)));
            if let Some(__g) = crate::graph::capture::recorder("rb_index_copy", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(index));
                __in.push(Some(src));
                let __r = __g.record(s, Op::IndexCopy(attrs::IndexCopy { dim: dim.clone() }), &__in, &[])?;
                return Ok(());
            }
        }
        runtime::data::index_copy(s, x, dim, index, src)
    })
}

/// The backward of `rb_index_copy`: `*dx` is `dy` with the indexed slices zeroed (they were
/// overwritten), `*dsrc = index_select(dy, dim, index)`. Any dtype.
///
/// Failures as `rb_index_copy`. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dsrc` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_index_copy_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dsrc: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_index_copy_backward", || {
        let dy = arc(dy, "dy")?;
        let index = arc(index, "index")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::out(dx, "dx") }?;
        let dsrc_slot = unsafe { OutSlot::out(dsrc, "dsrc") }?;
        dx_slot.check_overlap("rb_index_copy_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        dsrc_slot.check_overlap("rb_index_copy_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        let dy: &Tensor = &dy;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let dx = dx_slot.dest();
        let dsrc = dsrc_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_index_copy_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(index));
                let __r = __g.record(s, Op::IndexCopyBackward(attrs::IndexCopyBackward { dim: dim.clone() }), &__in, &[dx.map_or(Grad::New, Grad::Into), dsrc.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dsrc_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::data::index_copy_backward(s, dy, dim, index, dx, dsrc)?;
        unsafe {
            dx_slot.finish(r0);
            dsrc_slot.finish(r1);
        }
        Ok(())
    })
}

/// `torch.topk(x, k, dim, largest, sorted)`: `*values` (x's dtype) and `*indices` (i64), x's
/// shape with `dim`'s extent `k`: the `k` largest (`largest` 1) or smallest elements along
/// `dim` and their positions, best first. NaN counts as larger than every number, as in
/// `torch.topk`; equal elements come in index order (PyTorch leaves the order of ties and of
/// `sorted` 0 unspecified; the result is always sorted). A negative `dim` counts from the end.
/// Every dtype but bool.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (`k`
/// outside `[0, size(dim)]`, dim out of range, a flag not 0/1), RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH (bool, or a given output's shape/dtype). Output convention:
/// `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `values` is NULL or valid for reading and writing one handle; `indices` is NULL or valid for
/// reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_topk(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    k: i64,
    dim: i64,
    largest: i32,
    sorted: i32,
    values: *mut *mut rb_tensor,
    indices: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_topk", || {
        let x = arc(x, "x")?;
        let largest = args::flag(largest, "largest")?;
        let sorted = args::flag(sorted, "sorted")?;
        let s = stream_arg(stream)?;
        let values_slot = unsafe { OutSlot::out(values, "values") }?;
        let indices_slot = unsafe { OutSlot::out(indices, "indices") }?;
        values_slot.check_overlap("rb_topk", &[("x", Some(&*x))], false)?;
        indices_slot.check_overlap("rb_topk", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let values = values_slot.dest();
        let indices = indices_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_topk", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Topk(attrs::Topk { k: k.clone(), dim: dim.clone(), largest: largest.clone(), sorted: sorted.clone() }), &__in, &[values.map_or(Grad::New, Grad::Into), indices.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    values_slot.finish(__r.get(0).cloned().flatten());
                    indices_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::data::topk(s, x, k, dim, largest, sorted, values, indices)?;
        unsafe {
            values_slot.finish(r0);
            indices_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_topk`: zeros of x's shape (the `ndim` extents at `x_shape`) with
/// `dy` (the values' shape, floating) added at the positions `indices` (as `rb_topk` returned
/// them, i64 or i32) names along `dim`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (an
/// index out of range, dim out of range), RB_STATUS_SHAPE_MISMATCH (`dy` and `indices` differ,
/// or are larger than x outside `dim`) or RB_STATUS_DTYPE_MISMATCH. Output convention:
/// `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_topk_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    dim: i64,
    indices: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_topk_backward", || {
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_topk_backward", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
        let dy: &Tensor = &dy;
        let indices: &Tensor = &indices;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("indices", Some(indices)));
            if let Some(__g) = crate::graph::capture::recorder("rb_topk_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::TopkBackward(attrs::TopkBackward { x_shape: x_shape.clone(), dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::topk_backward(s, dy, &x_shape, dim, indices, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.scatter(x, dim, index, src)` and `x.scatter_reduce(dim, index, src, reduce)` (ONNX
/// `ScatterElements`, `Scatter`): a copy of `x` where each element of `src` over index's shape
/// is written (`reduce` RB_SCATTER_REDUCE_NONE) or combined (ADD, MUL, MAX, MIN, with x's
/// element included) at the position `index` names along `dim`: for `dim == 0`,
/// `out[index[i][j]][j] = src[i][j]`. `index` (i32/i64) has x's rank and no dimension larger
/// than x's outside `dim` or than src's; negative values count from the end; values outside
/// `[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device). With NONE, repeated
/// indices leave one of their values (PyTorch: undefined; here the last along `dim`). Every
/// dtype for NONE; f32, f16, bf16, i32, i64 for the reductions (MAX/MIN propagate NaN).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scatter(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    src: *const rb_tensor,
    reduce: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scatter", || {
        let x = arc(x, "x")?;
        let index = arc(index, "index")?;
        let src = arc(src, "src")?;
        let reduce = args::scatter_reduce(reduce, "scatter")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_scatter", &[("x", Some(&*x)), ("index", Some(&*index)), ("src", Some(&*src))], false)?;
        let x: &Tensor = &x;
        let index: &Tensor = &index;
        let src: &Tensor = &src;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("index", Some(index)));
            __named.push(("src", Some(src)));
            if let Some(__g) = crate::graph::capture::recorder("rb_scatter", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(index));
                __in.push(Some(src));
                let __r = __g.record(s, Op::Scatter(attrs::Scatter { dim: dim.clone(), reduce: reduce.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::scatter(s, x, dim, index, src, reduce, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_scatter` with reduce NONE or ADD: `*dx = dy`, with the positions the
/// scatter wrote zeroed for NONE, and `*dsrc = gather(dy, dim, index)` (index's shape).
/// Floating dtypes, f64 included; MUL, MAX and MIN are RB_STATUS_UNSUPPORTED.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH, RB_STATUS_DTYPE_MISMATCH or RB_STATUS_UNSUPPORTED, with a message
/// naming the argument. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dsrc` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scatter_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    dim: i64,
    index: *const rb_tensor,
    reduce: i32,
    dx: *mut *mut rb_tensor,
    dsrc: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scatter_backward", || {
        let dy = arc(dy, "dy")?;
        let index = arc(index, "index")?;
        let reduce = args::scatter_reduce(reduce, "scatter_backward")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::out(dx, "dx") }?;
        let dsrc_slot = unsafe { OutSlot::out(dsrc, "dsrc") }?;
        dx_slot.check_overlap("rb_scatter_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        dsrc_slot.check_overlap("rb_scatter_backward", &[("dy", Some(&*dy)), ("index", Some(&*index))], false)?;
        let dy: &Tensor = &dy;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let dx = dx_slot.dest();
        let dsrc = dsrc_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_scatter_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(index));
                let __r = __g.record(s, Op::ScatterBackward(attrs::ScatterBackward { dim: dim.clone(), reduce: reduce.clone() }), &__in, &[dx.map_or(Grad::New, Grad::Into), dsrc.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dsrc_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::data::scatter_backward(s, dy, dim, index, reduce, dx, dsrc)?;
        unsafe {
            dx_slot.finish(r0);
            dsrc_slot.finish(r1);
        }
        Ok(())
    })
}

/// `torch.arange(start, end, step, dtype=dtype)` (ONNX `Range`): a 1-D tensor of
/// `ceil((end - start) / step)` elements `start + i * step` (computed in double, converted to
/// the `rb_dtype` `dtype`; integer dtypes take integral arguments and compute in int64). It
/// is made on `*out`'s device when `*out` is given, else on the stream's device, else (NULL
/// stream) on the calling thread's current device. An op with no tensor input: recorded into
/// a graph like any other (on the recorded stream's device).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (a zero or non-finite step,
/// non-finite bounds, a step whose sign goes away from `end`, non-integral arguments for an
/// integer dtype, a bad dtype value, `*out` on another device than the stream),
/// RB_STATUS_SHAPE_MISMATCH (`*out`'s shape) or RB_STATUS_DTYPE_MISMATCH (bool, `*out`'s
/// dtype). Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_arange(
    stream: *mut rb_stream,
    start: f64,
    end: f64,
    step: f64,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_arange", || {
        let dtype = args::dtype(dtype, "arange")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_arange", &[], false)?;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            if let Some(__g) = crate::graph::capture::recorder("rb_arange", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                let __r = __g.record(s, Op::Arange(attrs::Arange { start: start.clone(), end: end.clone(), step: step.clone(), dtype: dtype.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::arange(s, start, end, step, dtype, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.one_hot(index, num_classes)` (ONNX `OneHot` with values 0/1): i64 of
/// shape `index.shape + [num_classes]`, 1 at each index value. `index` is i32 or i64; a
/// negative value counts from the end (ONNX); values outside `[-num_classes, num_classes)` are
/// RB_STATUS_INVALID_ARGUMENT (checked on the device).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'index'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_one_hot(
    stream: *mut rb_stream,
    index: *const rb_tensor,
    num_classes: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_one_hot", || {
        let index = arc(index, "index")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_one_hot", &[("index", Some(&*index))], false)?;
        let index: &Tensor = &index;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("index", Some(index)));
            if let Some(__g) = crate::graph::capture::recorder("rb_one_hot", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(index));
                let __r = __g.record(s, Op::OneHot(attrs::OneHot { num_classes: num_classes.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::data::one_hot(s, index, num_classes, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}
