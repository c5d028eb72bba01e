//! The C exports of the pool ops (the eager conventions: `rb_add` in the header's
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

/// Pooling (`mode`: an `rb_pool_mode`) of `x` `[N, C, ...]` with `params` (a zero stride
/// entry is not allowed; pass the kernel size for PyTorch's default).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (padding above half the kernel,
/// dilation with average pooling, bad mode). Output convention and threads: see the section's
/// conventions.
///
/// f64: computed in f64 (GPUs: double kernels over channels-first tensors, channels-last ones
/// converted around them).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pool(
    stream: *mut rb_stream,
    mode: i32,
    x: *const rb_tensor,
    params: *const rb_pool_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pool", || {
        let x = arc(x, "x")?;
        let mode = args::pool_mode(mode)?;
        let params = unsafe { args::pool_params(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_pool", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pool", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Pool(attrs::Pool { mode: mode.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::pool(s, mode, x, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_pool` with respect to `x`, from `x` and `dy`.
///
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions. f64 as `rb_pool`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pool_backward(
    stream: *mut rb_stream,
    mode: i32,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    params: *const rb_pool_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pool_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let mode = args::pool_mode(mode)?;
        let params = unsafe { args::pool_params(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_pool_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pool_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::PoolBackward(attrs::PoolBackward { mode: mode.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::pool_backward(s, mode, x, dy, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `rb_pool` with padding per side and average pooling's divisor: `params` (an
/// `rb_pool_params_ex`) gives the padding before (`pad_before`) and after (`pad_after`) each
/// spatial dim (each at most half the kernel; PyTorch's `ceil_mode` rule with the padding
/// before: the last window starts inside the input or that padding), and
/// `divisor_override` (0: none; otherwise every average window sum is divided by it,
/// PyTorch's `avg_pool{n}d(divisor_override=)`; average modes only). Padding counts in the
/// divisor of `RB_POOL_MODE_AVG_INCLUDE_PAD` up to the padded end on each side. Equal padding
/// and no divisor give exactly `rb_pool`'s result.
///
/// Failures as `rb_pool` (RB_STATUS_INVALID_ARGUMENT also for a negative padding or a
/// divisor with max pooling). Output convention and threads: see the section's
/// conventions. f64 as `rb_pool`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pool_ex(
    stream: *mut rb_stream,
    mode: i32,
    x: *const rb_tensor,
    params: *const rb_pool_params_ex,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pool_ex", || {
        let x = arc(x, "x")?;
        let mode = args::pool_mode(mode)?;
        let params = unsafe { args::pool_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_pool_ex", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pool_ex", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::PoolEx(attrs::PoolEx { mode: mode.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::pool_ex(s, mode, x, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_pool_ex` with respect to `x`, from `x` and `dy`. Equal padding and no
/// divisor give exactly `rb_pool_backward`'s result.
///
/// Failures as `rb_pool_ex`. Output convention and threads: see the section's conventions. f64 as `rb_pool`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pool_ex_backward(
    stream: *mut rb_stream,
    mode: i32,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    params: *const rb_pool_params_ex,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pool_ex_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let mode = args::pool_mode(mode)?;
        let params = unsafe { args::pool_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_pool_ex_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pool_ex_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::PoolExBackward(attrs::PoolExBackward { mode: mode.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::pool_ex_backward(s, mode, x, dy, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `max_pool{ndim}d(x, ..., return_indices=True)` with `params` (an `rb_pool_params`; ndim
/// from it) on `x` `[N, C, ...]`: writes the values to `*out` and PyTorch's indices to
/// `*indices` (i64, same shape): the flat index of each maximum within its `[spatial...]`
/// plane of `x` (`(d * H + h) * W + w`), the first position in scan order among ties, the
/// last NaN of a window holding NaNs.
///
/// Failures as `rb_pool` (RB_STATUS_DTYPE_MISMATCH also for a given `*indices` that is not
/// i64). Each output follows the output convention independently; on failure neither is
/// written. Threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle; `indices` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_pool_with_indices(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    params: *const rb_pool_params,
    out: *mut *mut rb_tensor,
    indices: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_pool_with_indices", || {
        let x = arc(x, "x")?;
        let params = unsafe { args::pool_params(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        let indices_slot = unsafe { OutSlot::out(indices, "indices") }?;
        out_slot.check_overlap("rb_max_pool_with_indices", &[("x", Some(&*x))], false)?;
        indices_slot.check_overlap("rb_max_pool_with_indices", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        let indices = indices_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_max_pool_with_indices", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::MaxPoolWithIndices(attrs::MaxPoolWithIndices { params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into), indices.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                    indices_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::pool::max_pool_with_indices(s, x, &params.0, params.1, out, indices)?;
        unsafe {
            out_slot.finish(r0);
            indices_slot.finish(r1);
        }
        Ok(())
    })
}

/// `torch.nn.functional.max_unpool{1,2,3}d` (ONNX `MaxUnpool`): zeros of shape `[N, C,
/// output_size...]` (`ndim` spatial extents) with each element of `x` `[N, C, ...]` written at
/// the flat spatial position its index names in its plane; `indices` (i32/i64, x's shape) as
/// `rb_max_pool_with_indices` writes them. A position named several times gets the mean of
/// its values (PyTorch leaves it undefined). Index values outside `[-L, L)` (`L` the output
/// plane's size) are RB_STATUS_INVALID_ARGUMENT, checked on the device. f32, f16, bf16 and f64
/// (the scatter-adds, counts and mean in f64, on every device).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `output_size` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_unpool(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    indices: *const rb_tensor,
    output_size: *const i64,
    ndim: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_unpool", || {
        let x = arc(x, "x")?;
        let indices = arc(indices, "indices")?;
        let output_size = unsafe { args::shape(output_size, ndim, "output_size") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_max_unpool", &[("x", Some(&*x)), ("indices", Some(&*indices))], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_max_unpool", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::MaxUnpool(attrs::MaxUnpool { output_size: output_size.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::max_unpool(s, x, indices, &output_size, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_max_unpool`: `dy` (the unpooled shape) read at `indices`, of
/// indices' shape (PyTorch's, for positions named once).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (an index out of range). f32, f16, bf16 and f64 (a gather).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_unpool_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    indices: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_unpool_backward", || {
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_max_unpool_backward", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_max_unpool_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::MaxUnpoolBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::max_unpool_backward(s, dy, indices, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.interpolate(x, size, mode, align_corners)` (ONNX `Resize`) on
/// `x` `[N, C, spatial...]` (1 to 3 spatial dimensions) to the `ndim` spatial extents `size`:
/// `mode` 0 is PyTorch's `nearest`, 1 its `linear`, `bilinear` or `trilinear` (by rank) with
/// `align_corners` either way. Floating dtypes and f64 (linear: source positions and weights in
/// f64, as PyTorch's double kernels); nearest takes every dtype.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (a mode that is none). Output
/// convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `size` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_interpolate(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    size: *const i64,
    ndim: usize,
    mode: i64,
    align_corners: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_interpolate", || {
        let x = arc(x, "x")?;
        let size = unsafe { args::shape(size, ndim, "size") }?;
        let align_corners = args::flag(align_corners, "align_corners")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_interpolate", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_interpolate", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Interpolate(attrs::Interpolate { size: size.clone(), mode: mode.clone(), align_corners: align_corners.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::interpolate(s, x, &size, mode, align_corners, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_interpolate` with the same `mode` and `align_corners`: the gradient
/// of the input of shape `x_shape` (`ndim` extents) from `dy` (the resized shape). f32, f16,
/// bf16 and f64 (weights and source positions in f64 as the forward; the scatter-adds in f64).
///
/// Fails as `rb_interpolate`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_interpolate_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    mode: i64,
    align_corners: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_interpolate_backward", || {
        let dy = arc(dy, "dy")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let align_corners = args::flag(align_corners, "align_corners")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_interpolate_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_interpolate_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::InterpolateBackward(attrs::InterpolateBackward { x_shape: x_shape.clone(), mode: mode.clone(), align_corners: align_corners.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::interpolate_backward(s, dy, &x_shape, mode, align_corners, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of max pooling through its indices (PyTorch's
/// `max_pool{n}d_with_indices_backward`): the result, of the input's shape (the `x_ndim` (3 to
/// 5) extents at `x_shape`, `[N, C, spatial...]`), is zero but for `dy[n, c, o]` added at
/// `indices[n, c, o]` of plane `(n, c)` (windows that share a maximum add up). `indices`
/// (i64) has `dy`'s shape, as `rb_max_pool_with_indices` writes it.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `indices` not of one `[N, C, ...]` shape, `*out` of another shape),
/// RB_STATUS_DTYPE_MISMATCH (`dy` not floating, `indices` not i64) or
/// RB_STATUS_INVALID_ARGUMENT (an index outside the plane, a rank other than 3 to 5). Output
/// convention and threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_pool_backward_indices(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    indices: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_pool_backward_indices", || {
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_max_pool_backward_indices", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_max_pool_backward_indices", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::MaxPoolBackwardIndices(attrs::MaxPoolBackwardIndices { x_shape: x_shape.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::max_pool_backward_indices(s, dy, indices, &x_shape, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `adaptive_avg_pool2d(x, (out_h, out_w))` on `x` `[N, C, H, W]`.
///
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_avg_pool2d(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out_h: i64,
    out_w: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_avg_pool2d", || {
        let x = arc(x, "x")?;
        let out_h = args::non_negative(out_h, "out_h")?;
        let out_w = args::non_negative(out_w, "out_w")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_adaptive_avg_pool2d", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_adaptive_avg_pool2d", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::AdaptiveAvgPool2d(attrs::AdaptiveAvgPool2d { out_h: out_h.clone(), out_w: out_w.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::adaptive_avg_pool2d(s, x, [out_h, out_w], out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_adaptive_avg_pool2d` with respect to its input of shape `x_shape` (4
/// extents).
///
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to 4 readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_avg_pool2d_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_avg_pool2d_backward", || {
        let dy = arc(dy, "dy")?;
        let x_shape = unsafe { args::shape(x_shape, 4, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_adaptive_avg_pool2d_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_adaptive_avg_pool2d_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::AdaptiveAvgPool2dBackward(attrs::AdaptiveAvgPool2dBackward { x_shape: x_shape.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::adaptive_avg_pool2d_backward(s, dy, &x_shape, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `adaptive_avg_pool{ndim}d(x, output_size)` (ONNX `GlobalAveragePool` for all ones):
/// `output_size` has `ndim` (1 to 3) positive extents; `x` is `[N, C, spatial...]` (`layout`
/// 0, RB_LAYOUT_NCHW) or `[N, spatial..., C]` (`layout` 1, RB_LAYOUT_NHWC, PyTorch's
/// channels_last), the output in the same layout. Output `o` along a dim is the mean of input
/// `[floor(o * in / out), ceil((o + 1) * in / out))` (f32 accumulation). N = 0 or C = 0 give
/// an empty output.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (rank not `ndim` + 2, an empty spatial dim, `*out`), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (an output extent of zero, a bad layout). Output convention and
/// threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `output_size` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_avg_pool(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    output_size: *const i64,
    ndim: usize,
    layout: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_avg_pool", || {
        let x = arc(x, "x")?;
        let output_size = unsafe { args::shape(output_size, ndim, "output_size") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_adaptive_avg_pool", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_adaptive_avg_pool", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::AdaptiveAvgPool(attrs::AdaptiveAvgPool { output_size: output_size.clone(), layout: layout.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::adaptive_avg_pool(s, x, &output_size, layout, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_adaptive_avg_pool` with respect to its input of shape `x_shape`
/// (`x_ndim` extents, in `layout`), from `dy` (the pooled shape, same layout).
///
/// Failures as `rb_adaptive_avg_pool` (RB_STATUS_SHAPE_MISMATCH also for a `dy` that is not
/// the pooled shape). Output convention and threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_avg_pool_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    layout: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_avg_pool_backward", || {
        let dy = arc(dy, "dy")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_adaptive_avg_pool_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_adaptive_avg_pool_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::AdaptiveAvgPoolBackward(attrs::AdaptiveAvgPoolBackward { x_shape: x_shape.clone(), layout: layout.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::adaptive_avg_pool_backward(s, dy, &x_shape, layout, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `adaptive_max_pool{ndim}d(x, output_size, return_indices=True)` (ONNX
/// `GlobalMaxPool` for all ones), shapes and layouts as `rb_adaptive_avg_pool`: writes the
/// maxima to `*out` and PyTorch's indices to `*indices` (i64, same shape and layout): the flat
/// index of each maximum within its `[spatial...]` plane of `x` (`(d * H + h) * W + w`, the
/// same values in either layout), the first position in scan order among ties, the last NaN
/// of a window holding NaNs (NaN propagates).
///
/// Failures as `rb_adaptive_avg_pool` (RB_STATUS_DTYPE_MISMATCH also for a given `*indices`
/// that is not i64). Each output follows the output convention independently; on failure
/// neither is written. Threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `output_size` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for
/// reading and writing one handle; `indices` is NULL or valid for reading and writing one
/// handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_max_pool(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    output_size: *const i64,
    ndim: usize,
    layout: i64,
    out: *mut *mut rb_tensor,
    indices: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_max_pool", || {
        let x = arc(x, "x")?;
        let output_size = unsafe { args::shape(output_size, ndim, "output_size") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        let indices_slot = unsafe { OutSlot::out(indices, "indices") }?;
        out_slot.check_overlap("rb_adaptive_max_pool", &[("x", Some(&*x))], false)?;
        indices_slot.check_overlap("rb_adaptive_max_pool", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        let indices = indices_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_adaptive_max_pool", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::AdaptiveMaxPool(attrs::AdaptiveMaxPool { output_size: output_size.clone(), layout: layout.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into), indices.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                    indices_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::pool::adaptive_max_pool(s, x, &output_size, layout, out, indices)?;
        unsafe {
            out_slot.finish(r0);
            indices_slot.finish(r1);
        }
        Ok(())
    })
}

/// Gradient of `rb_adaptive_max_pool` (PyTorch's `adaptive_max_pool{n}d_backward`): zeros
/// of `x_shape` (`x_ndim` extents, in `layout`) with `dy` added at `indices` (i64, `dy`'s
/// shape, as `rb_adaptive_max_pool` writes them) of each plane; windows that share a maximum
/// add up, in a fixed order (deterministic).
///
/// Failures as `rb_adaptive_avg_pool_backward`; RB_STATUS_DTYPE_MISMATCH also for `indices`
/// not i64, RB_STATUS_SHAPE_MISMATCH for `indices` not of `dy`'s shape,
/// RB_STATUS_INVALID_ARGUMENT for an index outside its output's window (checked on the
/// device). Output convention and threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_max_pool_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    indices: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    layout: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_max_pool_backward", || {
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_adaptive_max_pool_backward", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_adaptive_max_pool_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::AdaptiveMaxPoolBackward(attrs::AdaptiveMaxPoolBackward { x_shape: x_shape.clone(), layout: layout.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::adaptive_max_pool_backward(s, dy, indices, &x_shape, layout, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `rb_max_pool_with_indices` with `params` an `rb_pool_params_ex` (`divisor_override`
/// 0): padding per side and the layout; RB_LAYOUT_NHWC takes `x` `[N, spatial..., C]` and
/// writes the values and indices `[N, spatial..., C]` (PyTorch's channels_last results), the
/// indices' values those of channels first (flat within each `[spatial...]` plane).
///
/// Failures as `rb_pool_ex` and `rb_max_pool_with_indices`. Each output follows the output
/// convention independently; on failure neither is written. Threads: see the section's
/// conventions. f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle; `indices` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_pool_with_indices_ex(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    params: *const rb_pool_params_ex,
    out: *mut *mut rb_tensor,
    indices: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_pool_with_indices_ex", || {
        let x = arc(x, "x")?;
        let params = unsafe { args::pool_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        let indices_slot = unsafe { OutSlot::out(indices, "indices") }?;
        out_slot.check_overlap("rb_max_pool_with_indices_ex", &[("x", Some(&*x))], false)?;
        indices_slot.check_overlap("rb_max_pool_with_indices_ex", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        let indices = indices_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_max_pool_with_indices_ex", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::MaxPoolWithIndicesEx(attrs::MaxPoolWithIndicesEx { params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into), indices.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                    indices_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::pool::max_pool_with_indices_ex(s, x, &params.0, params.1, out, indices)?;
        unsafe {
            out_slot.finish(r0);
            indices_slot.finish(r1);
        }
        Ok(())
    })
}

/// `rb_max_pool_backward_indices` in `layout` (an `rb_layout`): RB_LAYOUT_NHWC takes
/// `dy` and `indices` `[N, spatial..., C]` (as `rb_max_pool_with_indices_ex` writes them) and
/// `x_shape` `[N, spatial..., C]`, and writes the result in that layout.
///
/// Failures as `rb_max_pool_backward_indices` (RB_STATUS_INVALID_ARGUMENT also for a bad
/// layout). Output convention and threads: see the section's conventions.
/// f64 in f64 on every device (GPUs: double kernels).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_pool_backward_indices_ex(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    indices: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    layout: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_pool_backward_indices_ex", || {
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_max_pool_backward_indices_ex", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_max_pool_backward_indices_ex", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::MaxPoolBackwardIndicesEx(attrs::MaxPoolBackwardIndicesEx { x_shape: x_shape.clone(), layout: layout.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::pool::max_pool_backward_indices_ex(s, dy, indices, &x_shape, layout, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}
