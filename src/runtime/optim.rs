//! Eager optimizer steps, in place on parameter, gradient and state tensors (PyTorch's
//! `torch.optim.SGD`, `Adam`, `AdamW` formulas; the caller keeps the step count and says
//! whether the momentum buffer is fresh). f64 parameters and state compute in f64 (the
//! hyperparameters are f32 attributes, widened).

use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::runtime::eager::{check_same, optr, stream_for};
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
    attrs.validate()?;
    if !param.dtype().is_floating() {
        return Err(Error::dtype(format!(
            "{op}: param has dtype {}, expected f32, f16, bf16 or f64",
            param.dtype()
        )));
    }
    like(op, "grad", param, grad)?;
    let buf = if attrs.momentum != 0.0 {
        let b = need(op, "momentum_buf", momentum_buf, "momentum != 0")?;
        like(op, "momentum_buf", param, b)?;
        Some(b)
    } else {
        None
    };
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
    if !param.dtype().is_floating() {
        return Err(Error::dtype(format!(
            "{op}: param has dtype {}, expected f32, f16, bf16 or f64",
            param.dtype()
        )));
    }
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
