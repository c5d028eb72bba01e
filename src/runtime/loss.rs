//! Eager losses on tensors (mse, bce, nll, cross_entropy; with class weights and
//! class-probability targets) and their input gradients.
//! Semantics and layouts: `crate::ops::nn`; the `out` convention of [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::ops::elementwise::BinaryOp;
use crate::ops::nn::{LossDesc, LossExt, LossKind, Reduction};
use crate::runtime::eager::{floating_input, like, optr, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::runtime::tensor::same_device;
use crate::{Error, Result};

/// Validates a loss's operands; returns the desc, its extension (class weights, class
/// probabilities) and the output shape. A floating target of cross_entropy with the input's
/// shape holds class probabilities.
fn loss_desc(
    kind: LossKind,
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
    ignore_index: i64,
    label_smoothing: f64,
) -> Result<(LossDesc, LossExt, Vec<usize>)> {
    let op = kind.name();
    floating_input(op, input, "input")?;
    if !same_device(input.device(), target.device()) {
        return Err(Error::invalid(format!(
            "{op}: target is on {}, input on {}",
            target.device().name(),
            input.device().name()
        )));
    }
    let mut ext = LossExt {
        weighted: weight.is_some(),
        prob_target: false,
    };
    // PyTorch: a target of the input's shape holds class probabilities (and must be floating).
    let (d, shape) = if kind == LossKind::CrossEntropy
        && target.dtype().is_floating()
        && target.shape() == input.shape()
    {
        if target.dtype() != input.dtype() {
            return Err(Error::dtype(format!(
                "{op}: the class-probability target has dtype {}, the input {}",
                target.dtype(),
                input.dtype()
            )));
        }
        ext.prob_target = true;
        LossDesc::class_probs(
            kind,
            input.shape(),
            target.shape(),
            reduction,
            ignore_index,
            label_smoothing,
        )?
    } else if kind.is_class() {
        if !matches!(target.dtype(), DType::I32 | DType::I64) {
            let probs = if kind == LossKind::CrossEntropy {
                " or class probabilities of the input's shape and dtype"
            } else {
                ""
            };
            return Err(Error::dtype(format!(
                "{op}: target has dtype {}, expected class indices (i32 or i64){probs}",
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
        )?
    } else {
        if target.dtype() != input.dtype() {
            return Err(Error::dtype(format!(
                "{op}: target has dtype {}, input {}",
                target.dtype(),
                input.dtype()
            )));
        }
        LossDesc::elementwise(kind, input.shape(), target.shape(), reduction)?
    };
    if let Some(w) = weight {
        if !same_device(input.device(), w.device()) {
            return Err(Error::invalid(format!(
                "{op}: weight is on {}, input on {}",
                w.device().name(),
                input.device().name()
            )));
        }
        if w.dtype() != input.dtype() {
            return Err(Error::dtype(format!(
                "{op}: weight has dtype {}, the input {}",
                w.dtype(),
                input.dtype()
            )));
        }
        LossExt::check_weight(&d, input.shape(), w.shape())?;
    }
    Ok((d, ext, shape))
}

/// The weight as the device takes it: bce's is broadcast to the input's shape (a copy when
/// it is smaller); the class weights are `[C]` as given.
fn device_weight(
    s: &Stream,
    d: &LossDesc,
    input: &Tensor,
    weight: Option<&Tensor>,
) -> Result<Option<Tensor>> {
    let Some(w) = weight else { return Ok(None) };
    if d.kind != LossKind::Bce || w.shape() == input.shape() {
        return Ok(Some(w.clone()));
    }
    let full = Tensor::empty(input.device().clone(), input.shape(), input.dtype())?;
    if full.numel() > 0 {
        let dev = s.device();
        dev.fill(s.raw(), full.dtype(), full.ptr(), full.numel(), 1.0)?;
        let (_, layout) = BroadcastLayout::new(&[w.shape(), input.shape()])?;
        dev.binary(
            s.raw(),
            BinaryOp::Mul,
            full.dtype(),
            w.ptr(),
            full.ptr(),
            full.ptr(),
            &layout,
        )?;
    }
    Ok(Some(full))
}

/// Any of the four losses (forward). A floating target of cross_entropy holds class
/// probabilities.
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
    loss_weighted(
        stream,
        kind,
        input,
        target,
        None,
        reduction,
        ignore_index,
        label_smoothing,
        out,
    )
}

/// A loss with optional weights ([`LossExt`]: `[C]` class weights for cross_entropy and
/// nll_loss, a weight broadcast to the input for bce_loss).
#[allow(clippy::too_many_arguments)]
pub fn loss_weighted(
    stream: Option<&Stream>,
    kind: LossKind,
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
    ignore_index: i64,
    label_smoothing: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = kind.name();
    let (d, ext, shape) = loss_desc(
        kind,
        input,
        target,
        weight,
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
    if ext != LossExt::default() {
        let w = device_weight(&s, &d, input, weight)?;
        s.device().loss_ext(
            s.raw(),
            input.dtype(),
            &d,
            &ext,
            input.ptr(),
            target.ptr(),
            target.dtype(),
            optr(w.as_ref()),
            o.ptr(),
        )?;
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
    loss_weighted_backward(
        stream,
        kind,
        grad_out,
        input,
        target,
        None,
        reduction,
        ignore_index,
        label_smoothing,
        out,
    )
}

/// Gradient of [`loss_weighted`] with respect to its input.
#[allow(clippy::too_many_arguments)]
pub fn loss_weighted_backward(
    stream: Option<&Stream>,
    kind: LossKind,
    grad_out: &Tensor,
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    reduction: Reduction,
    ignore_index: i64,
    label_smoothing: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = kind.name();
    let (d, ext, shape) = loss_desc(
        kind,
        input,
        target,
        weight,
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
    if ext != LossExt::default() {
        let w = device_weight(&s, &d, input, weight)?;
        s.device().loss_ext_backward(
            s.raw(),
            input.dtype(),
            &d,
            &ext,
            input.ptr(),
            target.ptr(),
            target.dtype(),
            optr(w.as_ref()),
            grad_out.ptr(),
            o.ptr(),
        )?;
        return Ok(o);
    }
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
