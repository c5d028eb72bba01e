//! Optimizer step exports: SGD and Adam/AdamW, in place on tensors (`rb_*_step`).
//! Hyper-parameters follow `torch.optim`; the caller keeps the step count.

use super::handles::{arc, arc_opt};
use super::reduce::flag;
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::runtime::optim;
use crate::{Error, Result};

fn step_arg(step: i64, op: &str) -> Result<u64> {
    u64::try_from(step)
        .ok()
        .filter(|s| *s >= 1)
        .ok_or_else(|| Error::invalid(format!("{op}: step={step} must be >= 1")))
}

#[allow(clippy::too_many_arguments)]
fn adam_common(
    name: &str,
    decoupled: bool,
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
    guard(name, || {
        let op = if decoupled { "adamw_step" } else { "adam_step" };
        let (p, g) = (arc(param, "param")?, arc(grad, "grad")?);
        let (m, v) = (arc(exp_avg, "exp_avg")?, arc(exp_avg_sq, "exp_avg_sq")?);
        let vmax = arc_opt(max_exp_avg_sq, "max_exp_avg_sq")?;
        let attrs = AdamAttrs {
            lr,
            beta1,
            beta2,
            eps,
            weight_decay,
            step: step_arg(step, op)?,
            amsgrad: flag(amsgrad, "amsgrad")?,
            decoupled,
        };
        let s = stream_arg(stream)?;
        optim::adam_step(s.as_deref(), &p, &g, &m, &v, vmax.as_deref(), &attrs)
    })
}

/// One `torch.optim.SGD` step, in place: `d = grad + weight_decay * param`; with momentum,
/// `buf = first_step ? d : momentum * buf + (1 - dampening) * d` and `d = nesterov ? d +
/// momentum * buf : buf`; then `param -= lr * d`. `momentum_buf` (param's shape and dtype) is
/// required when momentum != 0 and may be NULL otherwise; `first_step` (0/1) says it holds no
/// state yet. Floating dtypes; all tensors on one device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (negative lr/momentum/weight_decay, nesterov without momentum or with dampening, a flag not
/// 0/1, a missing buffer), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is
/// updated then. Thread-safe (concurrent steps on one tensor race).
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
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
        let (p, g) = (arc(param, "param")?, arc(grad, "grad")?);
        let buf = arc_opt(momentum_buf, "momentum_buf")?;
        let attrs = SgdAttrs {
            lr,
            momentum,
            dampening,
            weight_decay,
            nesterov: flag(nesterov, "nesterov")?,
            first_step: flag(first_step, "first_step")?,
        };
        let s = stream_arg(stream)?;
        optim::sgd_step(s.as_deref(), &p, &g, buf.as_deref(), &attrs)
    })
}

/// One `torch.optim.Adam` (L2 weight decay added to the gradient) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
/// `amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
/// one (1 on the first call). All tensors of param's shape, dtype (floating) and device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (lr or
/// eps or weight_decay negative, a beta outside [0, 1), step < 1, amsgrad not 0/1, missing
/// max_exp_avg_sq), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is updated
/// then. Thread-safe (concurrent steps on one tensor race).
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
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
    adam_common(
        "rb_adam_step",
        false,
        stream,
        param,
        grad,
        exp_avg,
        exp_avg_sq,
        max_exp_avg_sq,
        lr,
        beta1,
        beta2,
        eps,
        weight_decay,
        step,
        amsgrad,
    )
}

/// One `torch.optim.AdamW` (decoupled weight decay: `param *= 1 - lr * weight_decay`) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
/// `amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
/// one (1 on the first call). All tensors of param's shape, dtype (floating) and device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (lr or
/// eps or weight_decay negative, a beta outside [0, 1), step < 1, amsgrad not 0/1, missing
/// max_exp_avg_sq), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is updated
/// then. Thread-safe (concurrent steps on one tensor race).
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
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
    adam_common(
        "rb_adamw_step",
        true,
        stream,
        param,
        grad,
        exp_avg,
        exp_avg_sq,
        max_exp_avg_sq,
        lr,
        beta1,
        beta2,
        eps,
        weight_decay,
        step,
        amsgrad,
    )
}
