//! Eager optimizer steps, in place on parameter, gradient and state tensors (PyTorch's
//! `torch.optim.SGD`, `Adam`, `AdamW` formulas; the caller keeps the step count and says
//! whether the momentum buffer is fresh). The hyperparameters are f64 (PyTorch's Python
//! floats): f64 parameters and state compute in f64 with them exactly, f32/f16/bf16 ones in
//! f32 with them rounded to f32.

use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::runtime::eager::{check_same, floating_only, optr, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

fn like(op: &str, what: &str, p: &Tensor, t: &Tensor) -> Result<()> {
    check_same(op, p, t)?;
    if p.shape() != t.shape() {
        return Err(Error::shape(format!(
            "{op}: {what} has shape {:?}, param has {:?}",
            t.shape(),
            p.shape()
        )));
    }
    Ok(())
}

fn need<'a>(op: &str, what: &str, t: Option<&'a Tensor>, why: &str) -> Result<&'a Tensor> {
    t.ok_or_else(|| Error::invalid(format!("{op}: {what} is required when {why}")))
}

/// One SGD step: `param` (and `momentum_buf`, needed when momentum != 0) updated in place.
pub fn sgd_step(
    stream: Option<&Stream>,
    param: &Tensor,
    grad: &Tensor,
    momentum_buf: Option<&Tensor>,
    attrs: &SgdAttrs,
) -> Result<()> {
    let op = "sgd_step";
    let buf = sgd_checked(op, param, grad, momentum_buf, attrs)?;
    if param.numel() == 0 {
        return Ok(());
    }
    let s = stream_for(op, stream, param)?;
    s.device().sgd_step(
        s.raw(),
        param.dtype(),
        param.ptr(),
        grad.ptr(),
        optr(buf),
        param.numel(),
        attrs,
    )
}

/// [`sgd_step`]'s checks; the momentum buffer the step uses.
fn sgd_checked<'a>(
    op: &str,
    param: &Tensor,
    grad: &Tensor,
    momentum_buf: Option<&'a Tensor>,
    attrs: &SgdAttrs,
) -> Result<Option<&'a Tensor>> {
    attrs.validate()?;
    floating_only(op, param)?;
    like(op, "grad", param, grad)?;
    if attrs.momentum == 0.0 {
        return Ok(None);
    }
    let b = need(op, "momentum_buf", momentum_buf, "momentum != 0")?;
    like(op, "momentum_buf", param, b)?;
    Ok(Some(b))
}

/// [`sgd_step`] with the same attributes over several parameters (PyTorch's foreach SGD;
/// the executor's grouped optimizer steps): `params[i]`, `grads[i]`, `momentum_bufs[i]`
/// (absent without momentum) as in [`sgd_step`], all of one dtype on one device. Every
/// triple is checked before anything is written; GPUs update up to eight tensors per
/// launch.
pub fn sgd_step_multi(
    stream: Option<&Stream>,
    params: &[&Tensor],
    grads: &[&Tensor],
    momentum_bufs: &[Option<&Tensor>],
    attrs: &SgdAttrs,
) -> Result<()> {
    let op = "sgd_step";
    if grads.len() != params.len() || momentum_bufs.len() > params.len() {
        return Err(Error::invalid(format!(
            "{op}: {} params, {} grads and {} momentum buffers",
            params.len(),
            grads.len(),
            momentum_bufs.len()
        )));
    }
    let Some(first) = params.first() else {
        return Ok(());
    };
    let mut parts = Vec::with_capacity(params.len());
    for (i, (p, g)) in params.iter().zip(grads).enumerate() {
        let b = sgd_checked(op, p, g, momentum_bufs.get(i).copied().flatten(), attrs)?;
        check_same(op, first, p)?;
        parts.push((p.ptr(), g.ptr(), optr(b), p.numel()));
    }
    let s = stream_for(op, stream, first)?;
    s.device()
        .sgd_step_multi(s.raw(), first.dtype(), &parts, attrs)
}

/// One Adam (or AdamW when `attrs.decoupled`) step, in place; `max_exp_avg_sq` is needed
/// with amsgrad.
pub fn adam_step(
    stream: Option<&Stream>,
    param: &Tensor,
    grad: &Tensor,
    exp_avg: &Tensor,
    exp_avg_sq: &Tensor,
    max_exp_avg_sq: Option<&Tensor>,
    attrs: &AdamAttrs,
) -> Result<()> {
    let op = if attrs.decoupled {
        "adamw_step"
    } else {
        "adam_step"
    };
    attrs.validate()?;
    floating_only(op, param)?;
    like(op, "grad", param, grad)?;
    like(op, "exp_avg", param, exp_avg)?;
    like(op, "exp_avg_sq", param, exp_avg_sq)?;
    let vmax = if attrs.amsgrad {
        let t = need(op, "max_exp_avg_sq", max_exp_avg_sq, "amsgrad is on")?;
        like(op, "max_exp_avg_sq", param, t)?;
        Some(t)
    } else {
        None
    };
    if param.numel() == 0 {
        return Ok(());
    }
    let s = stream_for(op, stream, param)?;
    s.device().adam_step(
        s.raw(),
        param.dtype(),
        param.ptr(),
        grad.ptr(),
        exp_avg.ptr(),
        exp_avg_sq.ptr(),
        optr(vmax),
        param.numel(),
        attrs,
    )
}
