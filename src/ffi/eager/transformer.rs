//! The C exports of the transformer ops (the eager conventions: `rb_add` in the header's
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

/// Rotary position embedding, rotate-half form (GPT-NeoX / LLaMA): along the last dim `D`
/// (even), with `h = D/2` and `theta_i = p * base^(-2i/D)`, `y[i] = x[i] cos - x[i+h] sin`,
/// `y[i+h] = x[i+h] cos + x[i] sin`, where `p = position_offset + s` and `s` is the index
/// along `seq_dim` (any dim but the last, e.g. -2 for `[B, H, S, D]`, -3 for `[B, S, H, D]`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (odd last dim, rank < 2), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad
/// seq_dim or base). Output convention and threads: see the eager-op conventions.
///
/// f64: computed in f64 on every device (GPUs: double kernels, angles and products in double).
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_rope", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Rope(attrs::Rope { seq_dim: seq_dim.clone(), base: base.clone(), position_offset: position_offset.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::transformer::rope(s, x, seq_dim, base, position_offset, false, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_rope`: the rotation by `-theta` of `dy`. Failures as `rb_rope`. f64 as `rb_rope`.
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_rope_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                let __r = __g.record(s, Op::RopeBackward(attrs::RopeBackward { seq_dim: seq_dim.clone(), base: base.clone(), position_offset: position_offset.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::transformer::rope(s, dy, seq_dim, base, position_offset, true, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Rotary position embedding from given cos/sin caches (ONNX `RotaryEmbedding`; Hugging
/// Face `apply_rotary_pos_emb`). `cos` and `sin` are `[max_pos, R/2]` of x's dtype (ONNX's
/// layout: one angle per rotated pair; HF's duplicated `[max_pos, R]` caches are passed as
/// their first half of columns), `R` even and at most the last dim `D` of x: the first `R`
/// features of each vector rotate, the other `D - R` are copied. With `(a, b)` pair `i` of a
/// vector at position `p` (`(x[i], x[i + R/2])`, rotate-half as GPT-NeoX / LLaMA; or with
/// `interleaved` = 1 `(x[2i], x[2i+1])`, GPT-J and ONNX `interleaved=1`), `c = cos[p, i]`,
/// `s = sin[p, i]`: `a' = a c - b s`, `b' = b c + a s`. `seq_dim` is x's sequence dim (any but
/// the last). Positions: `position_ids` NULL gives `0..S-1` along `seq_dim`; else an i32/i64
/// tensor `[S]` (shared) or `[B, S]` with `B` x's first dim (ONNX's `[batch, seq]`; seq_dim
/// must not be 0), every id in `[0, max_pos)`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (rank
/// < 2, cos/sin not 2-D or of different shapes, a rotary dim of 0 or above `D`, position_ids
/// of another shape), RB_STATUS_DTYPE_MISMATCH (cos/sin not of x's dtype, position_ids not
/// i32/i64) or RB_STATUS_INVALID_ARGUMENT (bad seq_dim, interleaved not 0/1, caches shorter
/// than the sequence without position_ids, a position id outside `[0, max_pos)`). With
/// position_ids on a GPU the ids are checked there and a status word is read back (the call
/// synchronizes the stream). Output convention and threads: see the eager-op conventions. f64 as `rb_rope`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rope_cached(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    cos: *const rb_tensor,
    sin: *const rb_tensor,
    position_ids: *const rb_tensor,
    seq_dim: i64,
    interleaved: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_rope_cached", || {
        let x = arc(x, "x")?;
        let cos = arc(cos, "cos")?;
        let sin = arc(sin, "sin")?;
        let position_ids = arc_opt(position_ids, "position_ids")?;
        let interleaved = args::flag(interleaved, "interleaved")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_rope_cached", &[("x", Some(&*x)), ("cos", Some(&*cos)), ("sin", Some(&*sin)), ("position_ids", position_ids.as_deref())], false)?;
        let x: &Tensor = &x;
        let cos: &Tensor = &cos;
        let sin: &Tensor = &sin;
        let position_ids: Option<&Tensor> = position_ids.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("cos", Some(cos)));
            __named.push(("sin", Some(sin)));
            __named.push(("position_ids", position_ids));
            if let Some(__g) = crate::graph::capture::recorder("rb_rope_cached", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(cos));
                __in.push(Some(sin));
                __in.push(position_ids);
                let __r = __g.record(s, Op::RopeCached(attrs::RopeCached { seq_dim: seq_dim.clone(), interleaved: interleaved.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::transformer::rope_cached(s, x, cos, sin, position_ids, seq_dim, interleaved, false, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_rope_cached` with respect to x: `dy` rotated by `-theta` (the pass-through
/// features copied). Failures as `rb_rope_cached`. f64 as `rb_rope`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rope_cached_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    cos: *const rb_tensor,
    sin: *const rb_tensor,
    position_ids: *const rb_tensor,
    seq_dim: i64,
    interleaved: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_rope_cached_backward", || {
        let dy = arc(dy, "dy")?;
        let cos = arc(cos, "cos")?;
        let sin = arc(sin, "sin")?;
        let position_ids = arc_opt(position_ids, "position_ids")?;
        let interleaved = args::flag(interleaved, "interleaved")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_rope_cached_backward", &[("dy", Some(&*dy)), ("cos", Some(&*cos)), ("sin", Some(&*sin)), ("position_ids", position_ids.as_deref())], false)?;
        let dy: &Tensor = &dy;
        let cos: &Tensor = &cos;
        let sin: &Tensor = &sin;
        let position_ids: Option<&Tensor> = position_ids.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("cos", Some(cos)));
            __named.push(("sin", Some(sin)));
            __named.push(("position_ids", position_ids));
            if let Some(__g) = crate::graph::capture::recorder("rb_rope_cached_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(cos));
                __in.push(Some(sin));
                __in.push(position_ids);
                let __r = __g.record(s, Op::RopeCachedBackward(attrs::RopeCachedBackward { seq_dim: seq_dim.clone(), interleaved: interleaved.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::transformer::rope_cached(s, dy, cos, sin, position_ids, seq_dim, interleaved, true, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`, w `[..., N]`
/// (x's dtype), result `[..., D]` (attention's probabilities-times-values for one query).
/// Floating dtypes (f64 computed in f64).
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            if let Some(__g) = crate::graph::capture::recorder("rb_weighted_sum", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                let __r = __g.record(s, Op::WeightedSum, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
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
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            if let Some(__g) = crate::graph::capture::recorder("rb_weighted_sum_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(x));
                __in.push(Some(w));
                let __r = __g.record(s, Op::WeightedSumBackward, &__in, &[dx, dw])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dw_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1] = runtime::transformer::weighted_sum_backward(s, dy, x, w, [dx, dw])?;
        unsafe {
            dx_slot.finish(r0);
            dw_slot.finish(r1);
        }
        Ok(())
    })
}
