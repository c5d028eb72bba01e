//! The C exports of the softmax ops (the eager conventions: `rb_add` in the header's
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

/// `torch.softmax(x, dim)` on a floating tensor (f32, f16, bf16; f64 computed in f64); `dim` may be negative.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range), RB_STATUS_SHAPE_MISMATCH (`*out` of another shape) or
/// RB_STATUS_DTYPE_MISMATCH; `*out` is then unchanged. Output convention and threads: see
/// the eager-op conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softmax(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_softmax", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_softmax", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_softmax", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Softmax(attrs::Softmax { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::softmax::softmax(s, x, dim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.log_softmax(x, dim)`. Failures as `rb_softmax`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log_softmax(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_log_softmax", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_log_softmax", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_log_softmax", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::LogSoftmax(attrs::LogSoftmax { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::softmax::log_softmax(s, x, dim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of softmax from its output `y` and the output gradient `dy` (same shape):
/// `y * (dy - sum(dy * y, dim))`. Failures as `rb_softmax`, plus RB_STATUS_SHAPE_MISMATCH /
/// RB_STATUS_DTYPE_MISMATCH when `dy` differs from `y`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'y'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softmax_backward(
    stream: *mut rb_stream,
    y: *const rb_tensor,
    dy: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_softmax_backward", || {
        let y = arc(y, "y")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_softmax_backward", &[("y", Some(&*y)), ("dy", Some(&*dy))], false)?;
        let y: &Tensor = &y;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("y", Some(y)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_softmax_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(y));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SoftmaxBackward(attrs::SoftmaxBackward { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::softmax::softmax_backward(s, y, dy, dim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of log_softmax from its output `y`: `dy - exp(y) * sum(dy, dim)`. Failures as
/// `rb_softmax_backward`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'y'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log_softmax_backward(
    stream: *mut rb_stream,
    y: *const rb_tensor,
    dy: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_log_softmax_backward", || {
        let y = arc(y, "y")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_log_softmax_backward", &[("y", Some(&*y)), ("dy", Some(&*dy))], false)?;
        let y: &Tensor = &y;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("y", Some(y)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_log_softmax_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(y));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::LogSoftmaxBackward(attrs::LogSoftmaxBackward { dim: dim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::softmax::log_softmax_backward(s, y, dy, dim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}
