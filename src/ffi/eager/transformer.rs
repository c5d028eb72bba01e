//! The C exports of the transformer ops (the eager conventions: `rb_add` in the header's
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

/// Rotary position embedding, rotate-half form (GPT-NeoX / LLaMA): along the last dim `D`
/// (even), with `h = D/2` and `theta_i = p * base^(-2i/D)`, `y[i] = x[i] cos - x[i+h] sin`,
/// `y[i+h] = x[i+h] cos + x[i] sin`, where `p = position_offset + s` and `s` is the index
/// along `seq_dim` (any dim but the last, e.g. -2 for `[B, H, S, D]`, -3 for `[B, S, H, D]`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (odd last dim, rank < 2), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad
/// seq_dim or base). Output convention and threads: see the eager-op conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rope(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    seq_dim: i64,
    base: f64,
    position_offset: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_rope", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_rope", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::transformer::rope(s, x, seq_dim, base, position_offset, false, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_rope`: the rotation by `-theta` of `dy`. Failures as `rb_rope`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rope_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    seq_dim: i64,
    base: f64,
    position_offset: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_rope_backward", || {
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_rope_backward", &[("dy", Some(&*dy))], false)?;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::transformer::rope(s, dy, seq_dim, base, position_offset, true, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`, w `[..., N]`
/// (x's dtype), result `[..., D]` (attention's probabilities-times-values for one query).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_weighted_sum(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_weighted_sum", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_weighted_sum", &[("x", Some(&*x)), ("w", Some(&*w))], false)?;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let s = s.as_deref();
        let out = out_slot.dest();
        let r = runtime::transformer::weighted_sum(s, x, w, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// weighted_sum backward through `dx` and `dw` (each may be NULL to skip). Failures as
/// `rb_weighted_sum`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dw` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_weighted_sum_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    w: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dw: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_weighted_sum_backward", || {
        let dy = arc(dy, "dy")?;
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::opt(dx, "dx") }?;
        let dw_slot = unsafe { OutSlot::opt(dw, "dw") }?;
        dx_slot.check_overlap("rb_weighted_sum_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("w", Some(&*w))], false)?;
        dw_slot.check_overlap("rb_weighted_sum_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("w", Some(&*w))], false)?;
        let dy: &Tensor = &dy;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let s = s.as_deref();
        let dx = dx_slot.as_grad();
        let dw = dw_slot.as_grad();
        let [r0, r1] = runtime::transformer::weighted_sum_backward(s, dy, x, w, [dx, dw])?;
        unsafe {
            dx_slot.finish(r0);
            dw_slot.finish(r1);
        }
        Ok(())
    })
}
