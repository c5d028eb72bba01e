//! Eager losses on tensors (mse, bce, nll, cross_entropy) and their input gradients.
//! Semantics and layouts: `crate::ops::nn`; the `out` convention of [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::ops::nn::{LossDesc, LossKind, Reduction};
use crate::runtime::eager::{float_input, like, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::runtime::tensor::same_device;
use crate::{Error, Result};

/// Validates a loss's operands; returns the desc and the output shape.
fn loss_desc(
    kind: LossKind,
    input: &Tensor,
    target: &Tensor,
    reduction: Reduction,
    ignore_index: i64,
    label_smoothing: f64,
) -> Result<(LossDesc, Vec<usize>)> {
    let op = kind.name();
    float_input(op, input, "input")?;
    if !same_device(input.device(), target.device()) {
        return Err(Error::invalid(format!(
            "{op}: target is on {}, input on {}",
            target.device().name(),
            input.device().name()
        )));
    }
    if kind.is_class() {
        if !matches!(target.dtype(), DType::I32 | DType::I64) {
            return Err(Error::dtype(format!(
                "{op}: target has dtype {}, expected class indices (i32 or i64)",
                target.dtype()
            )));
        }
        LossDesc::class(
            kind,
            input.shape(),
            target.shape(),
            reduction,
            ignore_index,
            label_smoothing,
        )
    } else {
        if target.dtype() != input.dtype() {
            return Err(Error::dtype(format!(
                "{op}: target has dtype {}, input {}",
                target.dtype(),
                input.dtype()
            )));
        }
        LossDesc::elementwise(kind, input.shape(), target.shape(), reduction)
    }
}

/// Any of the four losses (forward).
#[allow(clippy::too_many_arguments)]
pub fn loss(
    stream: Option<&Stream>,
    kind: LossKind,
    input: &Tensor,
    target: &Tensor,
    reduction: Reduction,
    ignore_index: i64,
    label_smoothing: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = kind.name();
    let (d, shape) = loss_desc(
        kind,
        input,
        target,
        reduction,
        ignore_index,
        label_smoothing,
    )?;
    let o = output(op, input, out, &shape, input.dtype())?;
    let s = stream_for(op, stream, input)?;
    if d.items() == 0 {
        // PyTorch: the sum of nothing is 0, the mean NaN.
        if o.numel() > 0 {
            let v = if reduction == Reduction::Mean {
                f64::NAN
            } else {
                0.0
            };
            s.device().fill(s.raw(), o.dtype(), o.ptr(), 1, v)?;
        }
        return Ok(o);
    }
    s.device().loss(
        s.raw(),
        input.dtype(),
        &d,
        input.ptr(),
        target.ptr(),
        target.dtype(),
        o.ptr(),
    )?;
    Ok(o)
}

/// Gradient of a loss with respect to its input; `grad_out` is shaped like the loss.
#[allow(clippy::too_many_arguments)]
pub fn loss_backward(
    stream: Option<&Stream>,
    kind: LossKind,
    grad_out: &Tensor,
    input: &Tensor,
    target: &Tensor,
    reduction: Reduction,
    ignore_index: i64,
    label_smoothing: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = kind.name();
    let (d, shape) = loss_desc(
        kind,
        input,
        target,
        reduction,
        ignore_index,
        label_smoothing,
    )?;
    like(op, input, grad_out, &shape, "grad_out")?;
    let o = output(op, input, out, input.shape(), input.dtype())?;
    if d.items() == 0 || o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, input)?;
    s.device().loss_backward(
        s.raw(),
        input.dtype(),
        &d,
        input.ptr(),
        target.ptr(),
        target.dtype(),
        grad_out.ptr(),
        o.ptr(),
    )?;
    Ok(o)
}
