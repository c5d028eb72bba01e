//! The C exports of the norm ops (the eager conventions: `rb_add` in the header's
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

/// `torch.nn.functional.local_response_norm(x, size, alpha, beta, k)` (ONNX `LRN`): `x /
/// (k + alpha / size * s)^beta` with `s` the sum of `x^2` over the channels `[c - size/2, c +
/// (size-1)/2]` (dimension 1 of an `(N, C, ...)` input, at least three dimensions; zeros past
/// the edges). f32, f16, bf16 and f64 (in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (fewer
/// than three dimensions, `*out`), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT
/// (`size` < 1). Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_local_response_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    size: i64,
    alpha: f64,
    beta: f64,
    k: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_local_response_norm", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_local_response_norm", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_local_response_norm", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::LocalResponseNorm(attrs::LocalResponseNorm { size: size.clone(), alpha: alpha.clone(), beta: beta.clone(), k: k.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::norm::local_response_norm(s, x, size, alpha, beta, k, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_local_response_norm` with the same attributes, from its input `x`
/// and the upstream gradient `dy` (x's shape).
///
/// Fails as `rb_local_response_norm`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another
/// shape than `x`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_local_response_norm_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    size: i64,
    alpha: f64,
    beta: f64,
    k: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_local_response_norm_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_local_response_norm_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_local_response_norm_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::LocalResponseNormBackward(attrs::LocalResponseNormBackward { size: size.clone(), alpha: alpha.clone(), beta: beta.clone(), k: k.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::norm::local_response_norm_backward(s, x, dy, size, alpha, beta, k, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps)`:
/// `normalized_shape` (`ndim` extents) must be the trailing dims of `x`; `weight` and `bias`
/// (that shape, x's dtype) may be NULL. f32, f16, bf16, and f64 (computed in f64, as row means
/// and sums and elementwise ops).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad eps, empty
/// normalized_shape); `*out` is then unchanged. Output convention and threads: see the
/// eager-op conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `normalized_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for
/// reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_layer_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    bias: *const rb_tensor,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_layer_norm", || {
        let x = arc(x, "x")?;
        let weight = arc_opt(weight, "weight")?;
        let bias = arc_opt(bias, "bias")?;
        let normalized_shape = unsafe { args::shape(normalized_shape, ndim, "normalized_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_layer_norm", &[("x", Some(&*x)), ("weight", weight.as_deref()), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let weight: Option<&Tensor> = weight.as_deref();
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("weight", weight));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_layer_norm", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(weight);
                __in.push(bias);
                let __r = __g.record(s, Op::LayerNorm(attrs::LayerNorm { normalized_shape: normalized_shape.clone(), eps: eps.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::norm::layer_norm(s, x, &normalized_shape, weight, bias, eps, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// layer_norm backward: writes the gradients asked for through `dx`, `dweight`, `dbias`
/// (each may be NULL to skip; see the gradient convention above). Statistics are
/// recomputed from `x`. Failures as `rb_layer_norm`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `normalized_shape` is NULL or points to `ndim` readable int64_t; `dx` is NULL or valid for
/// reading and writing one handle; `dweight` is NULL or valid for reading and writing one
/// handle; `dbias` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_layer_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
    dbias: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_layer_norm_backward", || {
        let dy = arc(dy, "dy")?;
        let x = arc(x, "x")?;
        let weight = arc_opt(weight, "weight")?;
        let normalized_shape = unsafe { args::shape(normalized_shape, ndim, "normalized_shape") }?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::opt(dx, "dx") }?;
        let dweight_slot = unsafe { OutSlot::opt(dweight, "dweight") }?;
        let dbias_slot = unsafe { OutSlot::opt(dbias, "dbias") }?;
        dx_slot.check_overlap("rb_layer_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        dweight_slot.check_overlap("rb_layer_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        dbias_slot.check_overlap("rb_layer_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        let dy: &Tensor = &dy;
        let x: &Tensor = &x;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let dx = dx_slot.as_grad();
        let dweight = dweight_slot.as_grad();
        let dbias = dbias_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("x", Some(x)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_layer_norm_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(x));
                __in.push(weight);
                let __r = __g.record(s, Op::LayerNormBackward(attrs::LayerNormBackward { normalized_shape: normalized_shape.clone(), eps: eps.clone() }), &__in, &[dx, dweight, dbias])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dweight_slot.finish(__r.get(1).cloned().flatten());
                    dbias_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1, r2] = runtime::norm::layer_norm_backward(s, dy, x, &normalized_shape, weight, eps, [dx, dweight, dbias])?;
        unsafe {
            dx_slot.finish(r0);
            dweight_slot.finish(r1);
            dbias_slot.finish(r2);
        }
        Ok(())
    })
}

/// `torch.nn.functional.rms_norm(x, normalized_shape, weight, eps)` with an explicit `eps`
/// (PyTorch's default `eps=None` is `torch.finfo(x.dtype).eps`); `weight` may be NULL.
/// Failures as `rb_layer_norm`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `normalized_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rms_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_rms_norm", || {
        let x = arc(x, "x")?;
        let weight = arc_opt(weight, "weight")?;
        let normalized_shape = unsafe { args::shape(normalized_shape, ndim, "normalized_shape") }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_rms_norm", &[("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        let x: &Tensor = &x;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_rms_norm", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(weight);
                let __r = __g.record(s, Op::RmsNorm(attrs::RmsNorm { normalized_shape: normalized_shape.clone(), eps: eps.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::norm::rms_norm(s, x, &normalized_shape, weight, eps, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// rms_norm backward through `dx` and `dweight` (each may be NULL to skip). Failures as
/// `rb_layer_norm`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `normalized_shape` is NULL or points to `ndim` readable int64_t; `dx` is NULL or valid for
/// reading and writing one handle; `dweight` is NULL or valid for reading and writing one
/// handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rms_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_rms_norm_backward", || {
        let dy = arc(dy, "dy")?;
        let x = arc(x, "x")?;
        let weight = arc_opt(weight, "weight")?;
        let normalized_shape = unsafe { args::shape(normalized_shape, ndim, "normalized_shape") }?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::opt(dx, "dx") }?;
        let dweight_slot = unsafe { OutSlot::opt(dweight, "dweight") }?;
        dx_slot.check_overlap("rb_rms_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        dweight_slot.check_overlap("rb_rms_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        let dy: &Tensor = &dy;
        let x: &Tensor = &x;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let dx = dx_slot.as_grad();
        let dweight = dweight_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("x", Some(x)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_rms_norm_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(x));
                __in.push(weight);
                let __r = __g.record(s, Op::RmsNormBackward(attrs::RmsNormBackward { normalized_shape: normalized_shape.clone(), eps: eps.clone() }), &__in, &[dx, dweight])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dweight_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1] = runtime::norm::rms_norm_backward(s, dy, x, &normalized_shape, weight, eps, [dx, dweight])?;
        unsafe {
            dx_slot.finish(r0);
            dweight_slot.finish(r1);
        }
        Ok(())
    })
}

/// `torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)` on `[N, C, *]`;
/// `weight`/`bias` (`[C]`) may be NULL. Failures as `rb_layer_norm` (INVALID_ARGUMENT when
/// num_groups does not divide C). f64 is computed in f64 (group means and
/// sums and elementwise ops).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_group_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    num_groups: i64,
    weight: *const rb_tensor,
    bias: *const rb_tensor,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_group_norm", || {
        let x = arc(x, "x")?;
        let weight = arc_opt(weight, "weight")?;
        let bias = arc_opt(bias, "bias")?;
        let num_groups = args::non_negative(num_groups, "num_groups")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_group_norm", &[("x", Some(&*x)), ("weight", weight.as_deref()), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let weight: Option<&Tensor> = weight.as_deref();
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("weight", weight));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_group_norm", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(weight);
                __in.push(bias);
                let __r = __g.record(s, Op::GroupNorm(attrs::GroupNorm { num_groups: num_groups.clone(), eps: eps.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::norm::group_norm(s, x, num_groups, weight, bias, eps, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// group_norm backward through `dx`, `dweight`, `dbias` (each may be NULL to skip).
/// Failures as `rb_group_norm`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dweight` is NULL or valid for
/// reading and writing one handle; `dbias` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_group_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    num_groups: i64,
    weight: *const rb_tensor,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
    dbias: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_group_norm_backward", || {
        let dy = arc(dy, "dy")?;
        let x = arc(x, "x")?;
        let weight = arc_opt(weight, "weight")?;
        let num_groups = args::non_negative(num_groups, "num_groups")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::opt(dx, "dx") }?;
        let dweight_slot = unsafe { OutSlot::opt(dweight, "dweight") }?;
        let dbias_slot = unsafe { OutSlot::opt(dbias, "dbias") }?;
        dx_slot.check_overlap("rb_group_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        dweight_slot.check_overlap("rb_group_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        dbias_slot.check_overlap("rb_group_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("weight", weight.as_deref())], false)?;
        let dy: &Tensor = &dy;
        let x: &Tensor = &x;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let dx = dx_slot.as_grad();
        let dweight = dweight_slot.as_grad();
        let dbias = dbias_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("x", Some(x)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_group_norm_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(x));
                __in.push(weight);
                let __r = __g.record(s, Op::GroupNormBackward(attrs::GroupNormBackward { num_groups: num_groups.clone(), eps: eps.clone() }), &__in, &[dx, dweight, dbias])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dweight_slot.finish(__r.get(1).cloned().flatten());
                    dbias_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1, r2] = runtime::norm::group_norm_backward(s, dy, x, num_groups, weight, eps, [dx, dweight, dbias])?;
        unsafe {
            dx_slot.finish(r0);
            dweight_slot.finish(r1);
            dbias_slot.finish(r2);
        }
        Ok(())
    })
}

/// `torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training,
/// momentum, eps)` on `[N, C, *]`. `running_mean`/`running_var` (`[C]`, x's dtype) are
/// updated in place when `training` (batch mean, unbiased batch variance, `momentum`); they
/// may be NULL (together) when training, and are required otherwise. `weight`/`bias` may be
/// NULL. Failures as `rb_layer_norm` (INVALID_ARGUMENT: one value per channel in training,
/// missing running stats in eval); on failure nothing is written. f64 is computed in f64
/// (channel means and sums and elementwise ops).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_batch_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    running_mean: *const rb_tensor,
    running_var: *const rb_tensor,
    weight: *const rb_tensor,
    bias: *const rb_tensor,
    training: bool,
    momentum: f64,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_batch_norm", || {
        let x = arc(x, "x")?;
        let running_mean = arc_opt(running_mean, "running_mean")?;
        let running_var = arc_opt(running_var, "running_var")?;
        let weight = arc_opt(weight, "weight")?;
        let bias = arc_opt(bias, "bias")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_batch_norm", &[("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref()), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let running_mean: Option<&Tensor> = running_mean.as_deref();
        let running_var: Option<&Tensor> = running_var.as_deref();
        let weight: Option<&Tensor> = weight.as_deref();
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("running_mean", running_mean));
            __named.push(("running_var", running_var));
            __named.push(("weight", weight));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_batch_norm", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(running_mean);
                __in.push(running_var);
                __in.push(weight);
                __in.push(bias);
                let __r = __g.record(s, Op::BatchNorm(attrs::BatchNorm { training: training.clone(), momentum: momentum.clone(), eps: eps.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::norm::batch_norm(s, x, running_mean, running_var, weight, bias, training, momentum, eps, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// batch_norm backward through `dx`, `dweight`, `dbias` (each may be NULL to skip):
/// through the batch statistics when `training`, else with the running stats as
/// constants. Failures as `rb_batch_norm`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dweight` is NULL or valid for
/// reading and writing one handle; `dbias` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_batch_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    running_mean: *const rb_tensor,
    running_var: *const rb_tensor,
    weight: *const rb_tensor,
    training: bool,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
    dbias: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_batch_norm_backward", || {
        let dy = arc(dy, "dy")?;
        let x = arc(x, "x")?;
        let running_mean = arc_opt(running_mean, "running_mean")?;
        let running_var = arc_opt(running_var, "running_var")?;
        let weight = arc_opt(weight, "weight")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::opt(dx, "dx") }?;
        let dweight_slot = unsafe { OutSlot::opt(dweight, "dweight") }?;
        let dbias_slot = unsafe { OutSlot::opt(dbias, "dbias") }?;
        dx_slot.check_overlap("rb_batch_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref())], false)?;
        dweight_slot.check_overlap("rb_batch_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref())], false)?;
        dbias_slot.check_overlap("rb_batch_norm_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref())], false)?;
        let dy: &Tensor = &dy;
        let x: &Tensor = &x;
        let running_mean: Option<&Tensor> = running_mean.as_deref();
        let running_var: Option<&Tensor> = running_var.as_deref();
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let dx = dx_slot.as_grad();
        let dweight = dweight_slot.as_grad();
        let dbias = dbias_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("x", Some(x)));
            __named.push(("running_mean", running_mean));
            __named.push(("running_var", running_var));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_batch_norm_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(x));
                __in.push(running_mean);
                __in.push(running_var);
                __in.push(weight);
                let __r = __g.record(s, Op::BatchNormBackward(attrs::BatchNormBackward { training: training.clone(), eps: eps.clone() }), &__in, &[dx, dweight, dbias])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dweight_slot.finish(__r.get(1).cloned().flatten());
                    dbias_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1, r2] = runtime::norm::batch_norm_backward(s, dy, x, running_mean, running_var, weight, training, eps, [dx, dweight, dbias])?;
        unsafe {
            dx_slot.finish(r0);
            dweight_slot.finish(r1);
            dbias_slot.finish(r2);
        }
        Ok(())
    })
}

/// `rb_batch_norm` on a channels-last `x` `[N, ..., C]` (PyTorch's batch_norm of a
/// channels_last tensor; rank 2 is `[N, C]` itself): the same statistics, running-stat
/// updates and results as `rb_batch_norm` of the channels-first tensor (up to rounding), in
/// the caller's layout. Runs on the NHWC rows directly (GPUs: per-channel partial statistics
/// over row blocks of C contiguous channels, then elementwise passes; the CPU: row blocks;
/// f64: channel means and sums and elementwise ops, in f64).
/// Failures as `rb_batch_norm`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_batch_norm_channels_last(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    running_mean: *const rb_tensor,
    running_var: *const rb_tensor,
    weight: *const rb_tensor,
    bias: *const rb_tensor,
    training: bool,
    momentum: f64,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_batch_norm_channels_last", || {
        let x = arc(x, "x")?;
        let running_mean = arc_opt(running_mean, "running_mean")?;
        let running_var = arc_opt(running_var, "running_var")?;
        let weight = arc_opt(weight, "weight")?;
        let bias = arc_opt(bias, "bias")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_batch_norm_channels_last", &[("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref()), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let running_mean: Option<&Tensor> = running_mean.as_deref();
        let running_var: Option<&Tensor> = running_var.as_deref();
        let weight: Option<&Tensor> = weight.as_deref();
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("running_mean", running_mean));
            __named.push(("running_var", running_var));
            __named.push(("weight", weight));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_batch_norm_channels_last", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(running_mean);
                __in.push(running_var);
                __in.push(weight);
                __in.push(bias);
                let __r = __g.record(s, Op::BatchNormChannelsLast(attrs::BatchNormChannelsLast { training: training.clone(), momentum: momentum.clone(), eps: eps.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::norm::batch_norm_channels_last(s, x, running_mean, running_var, weight, bias, training, momentum, eps, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `rb_batch_norm_backward` for `rb_batch_norm_channels_last`: `dy`, `x` and `dx`
/// channels-last `[N, ..., C]`. Failures as `rb_batch_norm`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dweight` is NULL or valid for
/// reading and writing one handle; `dbias` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_batch_norm_channels_last_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    running_mean: *const rb_tensor,
    running_var: *const rb_tensor,
    weight: *const rb_tensor,
    training: bool,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
    dbias: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_batch_norm_channels_last_backward", || {
        let dy = arc(dy, "dy")?;
        let x = arc(x, "x")?;
        let running_mean = arc_opt(running_mean, "running_mean")?;
        let running_var = arc_opt(running_var, "running_var")?;
        let weight = arc_opt(weight, "weight")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::opt(dx, "dx") }?;
        let dweight_slot = unsafe { OutSlot::opt(dweight, "dweight") }?;
        let dbias_slot = unsafe { OutSlot::opt(dbias, "dbias") }?;
        dx_slot.check_overlap("rb_batch_norm_channels_last_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref())], false)?;
        dweight_slot.check_overlap("rb_batch_norm_channels_last_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref())], false)?;
        dbias_slot.check_overlap("rb_batch_norm_channels_last_backward", &[("dy", Some(&*dy)), ("x", Some(&*x)), ("running_mean", running_mean.as_deref()), ("running_var", running_var.as_deref()), ("weight", weight.as_deref())], false)?;
        let dy: &Tensor = &dy;
        let x: &Tensor = &x;
        let running_mean: Option<&Tensor> = running_mean.as_deref();
        let running_var: Option<&Tensor> = running_var.as_deref();
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let dx = dx_slot.as_grad();
        let dweight = dweight_slot.as_grad();
        let dbias = dbias_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("x", Some(x)));
            __named.push(("running_mean", running_mean));
            __named.push(("running_var", running_var));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_batch_norm_channels_last_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(x));
                __in.push(running_mean);
                __in.push(running_var);
                __in.push(weight);
                let __r = __g.record(s, Op::BatchNormChannelsLastBackward(attrs::BatchNormChannelsLastBackward { training: training.clone(), eps: eps.clone() }), &__in, &[dx, dweight, dbias])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dweight_slot.finish(__r.get(1).cloned().flatten());
                    dbias_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1, r2] = runtime::norm::batch_norm_channels_last_backward(s, dy, x, running_mean, running_var, weight, training, eps, [dx, dweight, dbias])?;
        unsafe {
            dx_slot.finish(r0);
            dweight_slot.finish(r1);
            dbias_slot.finish(r2);
        }
        Ok(())
    })
}
