//! The C exports of the optim ops (the eager conventions: `rb_add` in the header's
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

/// One `torch.optim.SGD` step, in place: `d = grad + weight_decay * param`; with momentum,
/// `buf = first_step ? d : momentum * buf + (1 - dampening) * d` and `d = nesterov ? d +
/// momentum * buf : buf`; then `param -= lr * d`. `momentum_buf` (param's shape and dtype) is
/// required when momentum != 0 and may be NULL otherwise; `first_step` (0/1) says it holds no
/// state yet. Floating dtypes. The hyperparameters are floats in the C ABI (its published
/// signature; Python's wrapper passes them through it): f64 parameters compute in f64 with
/// them widened exactly, f32/f16/bf16 ones in float. The Rust API (`runtime::optim` with
/// `SgdAttrs` in f64) takes exact doubles, as PyTorch's Python floats. All tensors on one
/// device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (negative lr/momentum/weight_decay, nesterov without momentum or with dampening, a flag not
/// 0/1, a missing buffer), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is
/// updated then. Thread-safe (concurrent steps on one tensor race).
///
/// # Safety
/// Tensor and stream arguments are handles (checked on use); nothing is dereferenced.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sgd_step(
    stream: *mut rb_stream,
    param: *mut rb_tensor,
    grad: *const rb_tensor,
    momentum_buf: *mut rb_tensor,
    lr: f32,
    momentum: f32,
    dampening: f32,
    weight_decay: f32,
    nesterov: i32,
    first_step: i32,
) -> rb_status {
    guard("rb_sgd_step", || {
        let param = arc(param, "param")?;
        param.check_writable("param")?;
        let grad = arc(grad, "grad")?;
        let momentum_buf = arc_opt(momentum_buf, "momentum_buf")?;
        if let Some(t) = &momentum_buf {
            t.check_writable("momentum_buf")?;
        }
        let lr = f64::from(lr);
        let momentum = f64::from(momentum);
        let dampening = f64::from(dampening);
        let weight_decay = f64::from(weight_decay);
        let nesterov = args::flag(nesterov, "nesterov")?;
        let first_step = args::flag(first_step, "first_step")?;
        let s = stream_arg(stream)?;
        let param: &Tensor = &param;
        let grad: &Tensor = &grad;
        let momentum_buf: Option<&Tensor> = momentum_buf.as_deref();
        let s = s.as_deref();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("param", Some(param)));
            __named.push(("grad", Some(grad)));
            __named.push(("momentum_buf", momentum_buf));
            if let Some(__g) = crate::graph::capture::recorder("rb_sgd_step", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(param));
                __in.push(Some(grad));
                __in.push(momentum_buf);
                let __r = __g.record(s, Op::SgdStep(attrs::SgdStep { lr: lr.clone(), momentum: momentum.clone(), dampening: dampening.clone(), weight_decay: weight_decay.clone(), nesterov: nesterov.clone(), first_step: first_step.clone() }), &__in, &[])?;
                return Ok(());
            }
        }
        runtime::optim::sgd_step(s, param, grad, momentum_buf, &SgdAttrs { lr, momentum, dampening, weight_decay, nesterov, first_step })
    })
}

/// One `torch.optim.Adam` (L2 weight decay added to the gradient) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
/// `amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
/// one (1 on the first call). All tensors of param's shape, dtype (floating) and device. The
/// hyperparameters are floats in the C ABI (its published signature; Python's wrapper passes
/// them through it): f64 parameters compute in f64 with them widened exactly, f32/f16/bf16
/// ones in float (the bias corrections in double). The Rust API (`runtime::optim` with
/// `AdamAttrs` in f64) takes exact doubles, as PyTorch's Python floats.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (lr or
/// eps or weight_decay negative, a beta outside [0, 1), step < 1, amsgrad not 0/1, missing
/// max_exp_avg_sq), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is updated
/// then. Thread-safe (concurrent steps on one tensor race).
///
/// # Safety
/// Tensor and stream arguments are handles (checked on use); nothing is dereferenced.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adam_step(
    stream: *mut rb_stream,
    param: *mut rb_tensor,
    grad: *const rb_tensor,
    exp_avg: *mut rb_tensor,
    exp_avg_sq: *mut rb_tensor,
    max_exp_avg_sq: *mut rb_tensor,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    step: i64,
    amsgrad: i32,
) -> rb_status {
    guard("rb_adam_step", || {
        let param = arc(param, "param")?;
        param.check_writable("param")?;
        let grad = arc(grad, "grad")?;
        let exp_avg = arc(exp_avg, "exp_avg")?;
        exp_avg.check_writable("exp_avg")?;
        let exp_avg_sq = arc(exp_avg_sq, "exp_avg_sq")?;
        exp_avg_sq.check_writable("exp_avg_sq")?;
        let max_exp_avg_sq = arc_opt(max_exp_avg_sq, "max_exp_avg_sq")?;
        if let Some(t) = &max_exp_avg_sq {
            t.check_writable("max_exp_avg_sq")?;
        }
        let lr = f64::from(lr);
        let beta1 = f64::from(beta1);
        let beta2 = f64::from(beta2);
        let eps = f64::from(eps);
        let weight_decay = f64::from(weight_decay);
        let step = args::step(step, "adam_step")?;
        let amsgrad = args::flag(amsgrad, "amsgrad")?;
        let s = stream_arg(stream)?;
        let param: &Tensor = &param;
        let grad: &Tensor = &grad;
        let exp_avg: &Tensor = &exp_avg;
        let exp_avg_sq: &Tensor = &exp_avg_sq;
        let max_exp_avg_sq: Option<&Tensor> = max_exp_avg_sq.as_deref();
        let s = s.as_deref();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("param", Some(param)));
            __named.push(("grad", Some(grad)));
            __named.push(("exp_avg", Some(exp_avg)));
            __named.push(("exp_avg_sq", Some(exp_avg_sq)));
            __named.push(("max_exp_avg_sq", max_exp_avg_sq));
            if let Some(__g) = crate::graph::capture::recorder("rb_adam_step", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(param));
                __in.push(Some(grad));
                __in.push(Some(exp_avg));
                __in.push(Some(exp_avg_sq));
                __in.push(max_exp_avg_sq);
                let __r = __g.record(s, Op::AdamStep(attrs::AdamStep { lr: lr.clone(), beta1: beta1.clone(), beta2: beta2.clone(), eps: eps.clone(), weight_decay: weight_decay.clone(), step: step.clone(), amsgrad: amsgrad.clone() }), &__in, &[])?;
                return Ok(());
            }
        }
        runtime::optim::adam_step(s, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, &AdamAttrs { lr, beta1, beta2, eps, weight_decay, step, amsgrad, decoupled: false })
    })
}

/// One `torch.optim.AdamW` (decoupled weight decay: `param *= 1 - lr * weight_decay`) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
/// `amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
/// one (1 on the first call). All tensors of param's shape, dtype (floating) and device. The
/// hyperparameters are floats in the C ABI (its published signature; Python's wrapper passes
/// them through it): f64 parameters compute in f64 with them widened exactly, f32/f16/bf16
/// ones in float (the bias corrections in double). The Rust API (`runtime::optim` with
/// `AdamAttrs` in f64) takes exact doubles, as PyTorch's Python floats.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (lr or
/// eps or weight_decay negative, a beta outside [0, 1), step < 1, amsgrad not 0/1, missing
/// max_exp_avg_sq), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is updated
/// then. Thread-safe (concurrent steps on one tensor race).
///
/// # Safety
/// Tensor and stream arguments are handles (checked on use); nothing is dereferenced.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adamw_step(
    stream: *mut rb_stream,
    param: *mut rb_tensor,
    grad: *const rb_tensor,
    exp_avg: *mut rb_tensor,
    exp_avg_sq: *mut rb_tensor,
    max_exp_avg_sq: *mut rb_tensor,
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    step: i64,
    amsgrad: i32,
) -> rb_status {
    guard("rb_adamw_step", || {
        let param = arc(param, "param")?;
        param.check_writable("param")?;
        let grad = arc(grad, "grad")?;
        let exp_avg = arc(exp_avg, "exp_avg")?;
        exp_avg.check_writable("exp_avg")?;
        let exp_avg_sq = arc(exp_avg_sq, "exp_avg_sq")?;
        exp_avg_sq.check_writable("exp_avg_sq")?;
        let max_exp_avg_sq = arc_opt(max_exp_avg_sq, "max_exp_avg_sq")?;
        if let Some(t) = &max_exp_avg_sq {
            t.check_writable("max_exp_avg_sq")?;
        }
        let lr = f64::from(lr);
        let beta1 = f64::from(beta1);
        let beta2 = f64::from(beta2);
        let eps = f64::from(eps);
        let weight_decay = f64::from(weight_decay);
        let step = args::step(step, "adamw_step")?;
        let amsgrad = args::flag(amsgrad, "amsgrad")?;
        let s = stream_arg(stream)?;
        let param: &Tensor = &param;
        let grad: &Tensor = &grad;
        let exp_avg: &Tensor = &exp_avg;
        let exp_avg_sq: &Tensor = &exp_avg_sq;
        let max_exp_avg_sq: Option<&Tensor> = max_exp_avg_sq.as_deref();
        let s = s.as_deref();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("param", Some(param)));
            __named.push(("grad", Some(grad)));
            __named.push(("exp_avg", Some(exp_avg)));
            __named.push(("exp_avg_sq", Some(exp_avg_sq)));
            __named.push(("max_exp_avg_sq", max_exp_avg_sq));
            if let Some(__g) = crate::graph::capture::recorder("rb_adamw_step", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(param));
                __in.push(Some(grad));
                __in.push(Some(exp_avg));
                __in.push(Some(exp_avg_sq));
                __in.push(max_exp_avg_sq);
                let __r = __g.record(s, Op::AdamwStep(attrs::AdamwStep { lr: lr.clone(), beta1: beta1.clone(), beta2: beta2.clone(), eps: eps.clone(), weight_decay: weight_decay.clone(), step: step.clone(), amsgrad: amsgrad.clone() }), &__in, &[])?;
                return Ok(());
            }
        }
        runtime::optim::adam_step(s, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, &AdamAttrs { lr, beta1, beta2, eps, weight_decay, step, amsgrad, decoupled: true })
    })
}
