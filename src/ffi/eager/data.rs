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
