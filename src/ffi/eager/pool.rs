//! The C exports of the pool ops (the eager conventions: `rb_add` in the header's
//! introduction). @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

#![allow(unused_imports, clippy::clone_on_copy, clippy::vec_init_then_push)]

use crate::ffi::args;
use crate::ffi::handles::{arc, arc_opt};
use crate::ffi::types::{rb_conv_params, rb_pool_params};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::{rb_stream, stream_arg};
use crate::ffi::tensor::rb_tensor;
use crate::ffi::util::OutSlot;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::LossKind;
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
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions.
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

/// `adaptive_avg_pool2d(x, (out_h, out_w))` on `x` `[N, C, H, W]`.
///
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions.
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
