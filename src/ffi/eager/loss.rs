//! The C exports of the loss ops (the eager conventions: `rb_add` in the header's
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

/// `torch.nn.functional.mse_loss(input, target, reduction)`; `reduction` is an
/// `rb_reduction`; input and target of one shape and floating dtype. The result is
/// input-shaped for RB_REDUCTION_NONE, else 0-d.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad reduction); `*out` is then
/// unchanged. Output convention and threads: see the eager-op conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'input'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mse_loss(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mse_loss", || {
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "mse_loss")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mse_loss", &[("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mse_loss", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::MseLoss(attrs::MseLoss { reduction: reduction.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss(s, LossKind::Mse, input, target, reduction, -100, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of mse_loss with respect to `input`; `grad_out` is shaped like the loss.
/// Failures as `rb_mse_loss`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'grad_out'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mse_loss_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mse_loss_backward", || {
        let grad_out = arc(grad_out, "grad_out")?;
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "mse_loss_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mse_loss_backward", &[("grad_out", Some(&*grad_out)), ("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let grad_out: &Tensor = &grad_out;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("grad_out", Some(grad_out)));
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mse_loss_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(grad_out));
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::MseLossBackward(attrs::MseLossBackward { reduction: reduction.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_backward(s, LossKind::Mse, grad_out, input, target, reduction, -100, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.binary_cross_entropy(input, target, reduction)` on probabilities
/// (logs clamped at -100 as PyTorch does). Failures as `rb_mse_loss`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'input'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_bce_loss(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_bce_loss", || {
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "bce_loss")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_bce_loss", &[("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_bce_loss", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::BceLoss(attrs::BceLoss { reduction: reduction.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss(s, LossKind::Bce, input, target, reduction, -100, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of bce_loss with respect to `input`. Failures as `rb_mse_loss`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'grad_out'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_bce_loss_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_bce_loss_backward", || {
        let grad_out = arc(grad_out, "grad_out")?;
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "bce_loss_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_bce_loss_backward", &[("grad_out", Some(&*grad_out)), ("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let grad_out: &Tensor = &grad_out;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("grad_out", Some(grad_out)));
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_bce_loss_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(grad_out));
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::BceLossBackward(attrs::BceLossBackward { reduction: reduction.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_backward(s, LossKind::Bce, grad_out, input, target, reduction, -100, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.cross_entropy(input, target, reduction=, ignore_index=,
/// label_smoothing=)` with logits `[N, C, d...]` (or `[C]`) and class-index targets
/// `[N, d...]` (i32 or i64). One fused pass per item (log-softmax, gather, reduce); `mean`
/// divides by the number of non-ignored targets. A floating target of the input's shape and
/// dtype holds class probabilities (PyTorch's soft targets; see `rb_cross_entropy_weighted`).
/// Fails as `rb_mse_loss`, plus
/// RB_STATUS_INVALID_ARGUMENT for a target outside `[0, C)` that is not `ignore_index` or a
/// label_smoothing outside [0, 1].
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'input'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cross_entropy(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cross_entropy", || {
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "cross_entropy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cross_entropy", &[("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_cross_entropy", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::CrossEntropy(attrs::CrossEntropy { reduction: reduction.clone(), ignore_index: ignore_index.clone(), label_smoothing: label_smoothing.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss(s, LossKind::CrossEntropy, input, target, reduction, ignore_index, label_smoothing, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of cross_entropy with respect to the logits. Failures as `rb_cross_entropy`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'grad_out'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cross_entropy_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cross_entropy_backward", || {
        let grad_out = arc(grad_out, "grad_out")?;
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "cross_entropy_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cross_entropy_backward", &[("grad_out", Some(&*grad_out)), ("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let grad_out: &Tensor = &grad_out;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("grad_out", Some(grad_out)));
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_cross_entropy_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(grad_out));
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::CrossEntropyBackward(attrs::CrossEntropyBackward { reduction: reduction.clone(), ignore_index: ignore_index.clone(), label_smoothing: label_smoothing.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_backward(s, LossKind::CrossEntropy, grad_out, input, target, reduction, ignore_index, label_smoothing, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.nll_loss(input, target, reduction=, ignore_index=)` on
/// log-probabilities `[N, C, d...]` (or `[C]`). Failures as `rb_cross_entropy`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'input'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_nll_loss(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_nll_loss", || {
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "nll_loss")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_nll_loss", &[("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_nll_loss", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::NllLoss(attrs::NllLoss { reduction: reduction.clone(), ignore_index: ignore_index.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss(s, LossKind::Nll, input, target, reduction, ignore_index, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of nll_loss with respect to `input`. Failures as `rb_cross_entropy`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'grad_out'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_nll_loss_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_nll_loss_backward", || {
        let grad_out = arc(grad_out, "grad_out")?;
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let reduction = args::reduction(reduction, "nll_loss_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_nll_loss_backward", &[("grad_out", Some(&*grad_out)), ("input", Some(&*input)), ("target", Some(&*target))], false)?;
        let grad_out: &Tensor = &grad_out;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("grad_out", Some(grad_out)));
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            if let Some(__g) = crate::graph::capture::recorder("rb_nll_loss_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(grad_out));
                __in.push(Some(input));
                __in.push(Some(target));
                let __r = __g.record(s, Op::NllLossBackward(attrs::NllLossBackward { reduction: reduction.clone(), ignore_index: ignore_index.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_backward(s, LossKind::Nll, grad_out, input, target, reduction, ignore_index, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.cross_entropy(input, target, weight=, reduction=, ignore_index=,
/// label_smoothing=)`: `rb_cross_entropy` with class weights. `weight` is NULL (all ones) or
/// `[C]` of the input's dtype: an item with target `t` weighs `weight[t]` and `mean` divides by
/// the summed weight of the non-ignored targets (NaN when that is 0, as PyTorch); label
/// smoothing weighs class `c`'s share by `weight[c]`. A floating target of the input's shape
/// and dtype holds class probabilities (as in `rb_cross_entropy`): the item loss is
/// `-sum_c weight[c] t'[c] log_softmax(input)[c]` with `t' = t (1 - label_smoothing) +
/// label_smoothing / C`, `mean` divides by the item count, and `ignore_index` must be negative.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (a
/// weight that is not `[C]`), RB_STATUS_DTYPE_MISMATCH (a weight or probability target of
/// another dtype; a floating target of another shape, taken as class indices, as PyTorch) or RB_STATUS_INVALID_ARGUMENT (a target
/// outside `[0, C)` that is not `ignore_index`, a label_smoothing outside [0, 1], a bad
/// reduction, an `ignore_index` >= 0 with probability targets); `*out` is then unchanged. On a
/// GPU the call reads a status word back (it synchronizes the stream), as `rb_cross_entropy`.
/// Output convention and threads: see the eager-op conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'input'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cross_entropy_weighted(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    weight: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cross_entropy_weighted", || {
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let weight = arc_opt(weight, "weight")?;
        let reduction = args::reduction(reduction, "cross_entropy_weighted")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cross_entropy_weighted", &[("input", Some(&*input)), ("target", Some(&*target)), ("weight", weight.as_deref())], false)?;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_cross_entropy_weighted", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(input));
                __in.push(Some(target));
                __in.push(weight);
                let __r = __g.record(s, Op::CrossEntropyWeighted(attrs::CrossEntropyWeighted { reduction: reduction.clone(), ignore_index: ignore_index.clone(), label_smoothing: label_smoothing.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_weighted(s, LossKind::CrossEntropy, input, target, weight, reduction, ignore_index, label_smoothing, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_cross_entropy_weighted` with respect to the logits; `grad_out` is
/// shaped like the loss. Failures as `rb_cross_entropy_weighted`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'grad_out'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cross_entropy_weighted_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    weight: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cross_entropy_weighted_backward", || {
        let grad_out = arc(grad_out, "grad_out")?;
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let weight = arc_opt(weight, "weight")?;
        let reduction = args::reduction(reduction, "cross_entropy_weighted_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cross_entropy_weighted_backward", &[("grad_out", Some(&*grad_out)), ("input", Some(&*input)), ("target", Some(&*target)), ("weight", weight.as_deref())], false)?;
        let grad_out: &Tensor = &grad_out;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("grad_out", Some(grad_out)));
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_cross_entropy_weighted_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(grad_out));
                __in.push(Some(input));
                __in.push(Some(target));
                __in.push(weight);
                let __r = __g.record(s, Op::CrossEntropyWeightedBackward(attrs::CrossEntropyWeightedBackward { reduction: reduction.clone(), ignore_index: ignore_index.clone(), label_smoothing: label_smoothing.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_weighted_backward(s, LossKind::CrossEntropy, grad_out, input, target, weight, reduction, ignore_index, label_smoothing, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.nll_loss(input, target, weight=, reduction=, ignore_index=)`:
/// `rb_nll_loss` with class weights. `weight` is NULL (all ones) or `[C]` of the input's dtype:
/// the item loss is `-weight[t] input[t]` and `mean` divides by the summed weight of the
/// non-ignored targets (NaN when that is 0). Failures as `rb_cross_entropy_weighted` (targets
/// are class indices only).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'input'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_nll_loss_weighted(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    weight: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_nll_loss_weighted", || {
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let weight = arc_opt(weight, "weight")?;
        let reduction = args::reduction(reduction, "nll_loss_weighted")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_nll_loss_weighted", &[("input", Some(&*input)), ("target", Some(&*target)), ("weight", weight.as_deref())], false)?;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_nll_loss_weighted", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(input));
                __in.push(Some(target));
                __in.push(weight);
                let __r = __g.record(s, Op::NllLossWeighted(attrs::NllLossWeighted { reduction: reduction.clone(), ignore_index: ignore_index.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_weighted(s, LossKind::Nll, input, target, weight, reduction, ignore_index, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_nll_loss_weighted` with respect to `input`. Failures as
/// `rb_nll_loss_weighted`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'grad_out'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_nll_loss_weighted_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    weight: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_nll_loss_weighted_backward", || {
        let grad_out = arc(grad_out, "grad_out")?;
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let weight = arc_opt(weight, "weight")?;
        let reduction = args::reduction(reduction, "nll_loss_weighted_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_nll_loss_weighted_backward", &[("grad_out", Some(&*grad_out)), ("input", Some(&*input)), ("target", Some(&*target)), ("weight", weight.as_deref())], false)?;
        let grad_out: &Tensor = &grad_out;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("grad_out", Some(grad_out)));
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_nll_loss_weighted_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(grad_out));
                __in.push(Some(input));
                __in.push(Some(target));
                __in.push(weight);
                let __r = __g.record(s, Op::NllLossWeightedBackward(attrs::NllLossWeightedBackward { reduction: reduction.clone(), ignore_index: ignore_index.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_weighted_backward(s, LossKind::Nll, grad_out, input, target, weight, reduction, ignore_index, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.binary_cross_entropy(input, target, weight=, reduction=)`:
/// `rb_bce_loss` with each element's loss multiplied by `weight`, which is NULL (all ones) or
/// of the input's dtype and broadcasts (NumPy rules) to the input's shape; `mean` divides by
/// the element count. Fails as `rb_bce_loss`, plus RB_STATUS_SHAPE_MISMATCH for a weight that
/// does not broadcast to the input and RB_STATUS_DTYPE_MISMATCH for one of another dtype.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'input'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_bce_loss_weighted(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    weight: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_bce_loss_weighted", || {
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let weight = arc_opt(weight, "weight")?;
        let reduction = args::reduction(reduction, "bce_loss_weighted")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_bce_loss_weighted", &[("input", Some(&*input)), ("target", Some(&*target)), ("weight", weight.as_deref())], false)?;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_bce_loss_weighted", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(input));
                __in.push(Some(target));
                __in.push(weight);
                let __r = __g.record(s, Op::BceLossWeighted(attrs::BceLossWeighted { reduction: reduction.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_weighted(s, LossKind::Bce, input, target, weight, reduction, -100, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_bce_loss_weighted` with respect to `input`. Failures as
/// `rb_bce_loss_weighted`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'grad_out'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_bce_loss_weighted_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    weight: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_bce_loss_weighted_backward", || {
        let grad_out = arc(grad_out, "grad_out")?;
        let input = arc(input, "input")?;
        let target = arc(target, "target")?;
        let weight = arc_opt(weight, "weight")?;
        let reduction = args::reduction(reduction, "bce_loss_weighted_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_bce_loss_weighted_backward", &[("grad_out", Some(&*grad_out)), ("input", Some(&*input)), ("target", Some(&*target)), ("weight", weight.as_deref())], false)?;
        let grad_out: &Tensor = &grad_out;
        let input: &Tensor = &input;
        let target: &Tensor = &target;
        let weight: Option<&Tensor> = weight.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("grad_out", Some(grad_out)));
            __named.push(("input", Some(input)));
            __named.push(("target", Some(target)));
            __named.push(("weight", weight));
            if let Some(__g) = crate::graph::capture::recorder("rb_bce_loss_weighted_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(grad_out));
                __in.push(Some(input));
                __in.push(Some(target));
                __in.push(weight);
                let __r = __g.record(s, Op::BceLossWeightedBackward(attrs::BceLossWeightedBackward { reduction: reduction.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::loss::loss_weighted_backward(s, LossKind::Bce, grad_out, input, target, weight, reduction, -100, 0.0, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}
