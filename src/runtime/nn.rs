//! Eager softmax, normalization, loss and transformer ops on tensors (forward and
//! backward). Semantics and layouts: `crate::ops::nn`. Single-output ops follow the
//! `out` convention of [`crate::runtime::eager`]; backward ops with several gradients take
//! a [`Grad`] per gradient.

use crate::base::dtype::DType;
use crate::device::DevPtr;
use crate::ops::nn::{
    AttentionDesc, BatchNormDesc, GroupNormDesc, LossDesc, LossKind, Reduction, RopeDesc,
    RowNormDesc, SoftmaxDesc, WeightedSumDesc,
};
use crate::runtime::eager::{output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::{Tensor, same_device};
use crate::{Error, Result};

/// Where one gradient of a backward op goes.
#[derive(Clone, Copy, Debug)]
pub enum Grad<'a> {
    /// Not computed.
    Skip,
    /// Into a new tensor.
    New,
    /// Into this tensor (checked like `out`).
    Into(&'a Tensor),
}

impl<'a> Grad<'a> {
    fn make(self, op: &str, like: &Tensor, shape: &[usize]) -> Result<Option<Tensor>> {
        match self {
            Grad::Skip => Ok(None),
            Grad::New => output(op, like, None, shape, like.dtype()).map(Some),
            Grad::Into(t) => output(op, like, Some(t), shape, like.dtype()).map(Some),
        }
    }
}

fn ptr(t: &Option<Tensor>) -> DevPtr {
    t.as_ref().map_or(DevPtr::NULL, |t| t.ptr())
}

fn optr(t: Option<&Tensor>) -> DevPtr {
    t.map_or(DevPtr::NULL, |t| t.ptr())
}

fn float_input(op: &str, x: &Tensor, arg: &str) -> Result<()> {
    if !x.dtype().is_float() {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {}, not f32, f16 or bf16",
            x.dtype()
        )));
    }
    Ok(())
}

/// `t` must be on `x`'s device with `x`'s dtype and the given shape.
fn like(op: &str, x: &Tensor, t: &Tensor, shape: &[usize], arg: &str) -> Result<()> {
    if !same_device(x.device(), t.device()) {
        return Err(Error::invalid(format!(
            "{op}: {arg} is on {}, the input on {}",
            t.device().name(),
            x.device().name()
        )));
    }
    if t.dtype() != x.dtype() {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {}, the input {}",
            t.dtype(),
            x.dtype()
        )));
    }
    if t.shape() != shape {
        return Err(Error::shape(format!(
            "{op}: {arg} has shape {:?}, expected {shape:?}",
            t.shape()
        )));
    }
    Ok(())
}

fn opt_like(op: &str, x: &Tensor, t: Option<&Tensor>, shape: &[usize], arg: &str) -> Result<()> {
    match t {
        Some(t) => like(op, x, t, shape, arg),
        None => Ok(()),
    }
}

/// Zero-fills gradients of parameters when the input is empty (nothing to sum).
fn zero_grads(s: &Stream, grads: &[&Option<Tensor>]) -> Result<()> {
    for g in grads.iter().copied().flatten() {
        if g.numel() > 0 {
            s.device()
                .fill(s.raw(), g.dtype(), g.ptr(), g.numel(), 0.0)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------- softmax

fn softmax_impl(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    log: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    float_input(op, x, "x")?;
    let d = SoftmaxDesc::new(op, x.shape(), dim, log)?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device()
        .softmax(s.raw(), x.dtype(), &d, x.ptr(), o.ptr())?;
    Ok(o)
}

/// `torch.softmax(x, dim)`.
pub fn softmax(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    softmax_impl("softmax", stream, x, dim, false, out)
}

/// `torch.log_softmax(x, dim)`.
pub fn log_softmax(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    softmax_impl("log_softmax", stream, x, dim, true, out)
}

fn softmax_backward_impl(
    op: &str,
    stream: Option<&Stream>,
    y: &Tensor,
    dy: &Tensor,
    dim: i64,
    log: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    float_input(op, y, "y")?;
    like(op, y, dy, y.shape(), "dy")?;
    let d = SoftmaxDesc::new(op, y.shape(), dim, log)?;
    let o = output(op, y, out, y.shape(), y.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, y)?;
    s.device()
        .softmax_backward(s.raw(), y.dtype(), &d, y.ptr(), dy.ptr(), o.ptr())?;
    Ok(o)
}

/// Gradient of softmax from its output `y`: `y * (dy - sum(dy * y, dim))`.
pub fn softmax_backward(
    stream: Option<&Stream>,
    y: &Tensor,
    dy: &Tensor,
    dim: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    softmax_backward_impl("softmax_backward", stream, y, dy, dim, false, out)
}

/// Gradient of log_softmax from its output `y`: `dy - exp(y) * sum(dy, dim)`.
pub fn log_softmax_backward(
    stream: Option<&Stream>,
    y: &Tensor,
    dy: &Tensor,
    dim: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    softmax_backward_impl("log_softmax_backward", stream, y, dy, dim, true, out)
}

// ---------------------------------------------------------------------------- normalization

/// `torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps)`.
pub fn layer_norm(
    stream: Option<&Stream>,
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "layer_norm";
    float_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    opt_like(op, x, bias, normalized_shape, "bias")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().layer_norm(
        s.raw(),
        x.dtype(),
        &d,
        x.ptr(),
        optr(weight),
        optr(bias),
        o.ptr(),
        DevPtr::NULL,
        DevPtr::NULL,
    )?;
    Ok(o)
}

/// layer_norm backward: `(dx, dweight, dbias)` as requested (statistics recomputed from
/// `x`). `dweight` needs `weight`'s shape (normalized_shape); it may be asked without a
/// weight (then the gradient of an implicit weight of ones).
#[allow(clippy::too_many_arguments)]
pub fn layer_norm_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: f64,
    grads: [Grad<'_>; 3],
) -> Result<[Option<Tensor>; 3]> {
    let op = "layer_norm_backward";
    float_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    like(op, x, dy, x.shape(), "dy")?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, normalized_shape)?;
    let db = grads[2].make(op, x, normalized_shape)?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw, &db])?;
    } else {
        s.device().layer_norm_backward(
            s.raw(),
            x.dtype(),
            &d,
            x.ptr(),
            optr(weight),
            dy.ptr(),
            ptr(&dx),
            ptr(&dw),
            ptr(&db),
        )?;
    }
    Ok([dx, dw, db])
}

/// `torch.nn.functional.rms_norm(x, normalized_shape, weight, eps)` with an explicit eps
/// (PyTorch's `eps=None` is `torch.finfo(x.dtype).eps`).
pub fn rms_norm(
    stream: Option<&Stream>,
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "rms_norm";
    float_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().rms_norm(
        s.raw(),
        x.dtype(),
        &d,
        x.ptr(),
        optr(weight),
        o.ptr(),
        DevPtr::NULL,
    )?;
    Ok(o)
}

/// rms_norm backward: `(dx, dweight)` as requested.
pub fn rms_norm_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x: &Tensor,
    normalized_shape: &[usize],
    weight: Option<&Tensor>,
    eps: f64,
    grads: [Grad<'_>; 2],
) -> Result<[Option<Tensor>; 2]> {
    let op = "rms_norm_backward";
    float_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    like(op, x, dy, x.shape(), "dy")?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, normalized_shape)?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw])?;
    } else {
        s.device().rms_norm_backward(
            s.raw(),
            x.dtype(),
            &d,
            x.ptr(),
            optr(weight),
            dy.ptr(),
            ptr(&dx),
            ptr(&dw),
        )?;
    }
    Ok([dx, dw])
}

/// `torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)` on `[N, C, *]`.
pub fn group_norm(
    stream: Option<&Stream>,
    x: &Tensor,
    num_groups: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "group_norm";
    float_input(op, x, "x")?;
    let d = GroupNormDesc::new(op, x.shape(), num_groups, eps)?;
    opt_like(op, x, weight, &[d.c], "weight")?;
    opt_like(op, x, bias, &[d.c], "bias")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().group_norm(
        s.raw(),
        x.dtype(),
        &d,
        x.ptr(),
        optr(weight),
        optr(bias),
        o.ptr(),
        DevPtr::NULL,
        DevPtr::NULL,
    )?;
    Ok(o)
}

/// group_norm backward: `(dx, dweight, dbias)` as requested.
#[allow(clippy::too_many_arguments)]
pub fn group_norm_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x: &Tensor,
    num_groups: usize,
    weight: Option<&Tensor>,
    eps: f64,
    grads: [Grad<'_>; 3],
) -> Result<[Option<Tensor>; 3]> {
    let op = "group_norm_backward";
    float_input(op, x, "x")?;
    let d = GroupNormDesc::new(op, x.shape(), num_groups, eps)?;
    like(op, x, dy, x.shape(), "dy")?;
    opt_like(op, x, weight, &[d.c], "weight")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, &[d.c])?;
    let db = grads[2].make(op, x, &[d.c])?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw, &db])?;
    } else {
        s.device().group_norm_backward(
            s.raw(),
            x.dtype(),
            &d,
            x.ptr(),
            optr(weight),
            dy.ptr(),
            ptr(&dx),
            ptr(&dw),
            ptr(&db),
        )?;
    }
    Ok([dx, dw, db])
}

/// `torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training,
/// momentum, eps)` on `[N, C, *]`. In training the running stats (when given) are updated in
/// place with the batch mean and the unbiased batch variance; in eval they are required.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm(
    stream: Option<&Stream>,
    x: &Tensor,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    training: bool,
    momentum: f64,
    eps: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "batch_norm";
    float_input(op, x, "x")?;
    let shape = bn_shape(x, [weight, bias, running_mean, running_var]);
    let d = BatchNormDesc::new(op, &shape, training, momentum, eps)?;
    check_bn_params(op, x, &d, running_mean, running_var, weight)?;
    opt_like(op, x, bias, &[d.c], "bias")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().batch_norm(
        s.raw(),
        x.dtype(),
        &d,
        x.ptr(),
        optr(weight),
        optr(bias),
        optr(running_mean),
        optr(running_var),
        o.ptr(),
        DevPtr::NULL,
        DevPtr::NULL,
    )?;
    Ok(o)
}

/// The `[N, C, *]` shape batch norm reads `x` as. An empty 1-D input (no channel dim) gives
/// an empty output in PyTorch, whatever the parameters: it is read as `[0, C]`, `C` the
/// length of the parameters given (0 without any), so they are still checked alike.
fn bn_shape(x: &Tensor, params: [Option<&Tensor>; 4]) -> Vec<usize> {
    if x.shape() == [0] {
        let c = params.iter().flatten().next().map_or(0, |t| t.numel());
        vec![0, c]
    } else {
        x.shape().to_vec()
    }
}

fn check_bn_params(
    op: &str,
    x: &Tensor,
    d: &BatchNormDesc,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    weight: Option<&Tensor>,
) -> Result<()> {
    opt_like(op, x, running_mean, &[d.c], "running_mean")?;
    opt_like(op, x, running_var, &[d.c], "running_var")?;
    opt_like(op, x, weight, &[d.c], "weight")?;
    if running_mean.is_some() != running_var.is_some() {
        return Err(Error::invalid(format!(
            "{op}: running_mean and running_var must be given together"
        )));
    }
    // PyTorch returns an empty input's empty output before it asks for running stats.
    if !d.training && running_mean.is_none() && x.numel() > 0 {
        return Err(Error::invalid(format!(
            "{op}: running_mean and running_var are required when training is false"
        )));
    }
    Ok(())
}

/// batch_norm backward: `(dx, dweight, dbias)` as requested. Training: through the batch
/// statistics; eval: the running stats are constants.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x: &Tensor,
    running_mean: Option<&Tensor>,
    running_var: Option<&Tensor>,
    weight: Option<&Tensor>,
    training: bool,
    eps: f64,
    grads: [Grad<'_>; 3],
) -> Result<[Option<Tensor>; 3]> {
    let op = "batch_norm_backward";
    float_input(op, x, "x")?;
    let shape = bn_shape(x, [weight, None, running_mean, running_var]);
    let d = BatchNormDesc::new(op, &shape, training, 0.0, eps)?;
    like(op, x, dy, x.shape(), "dy")?;
    check_bn_params(op, x, &d, running_mean, running_var, weight)?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, &[d.c])?;
    let db = grads[2].make(op, x, &[d.c])?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw, &db])?;
    } else {
        s.device().batch_norm_backward(
            s.raw(),
            x.dtype(),
            &d,
            x.ptr(),
            optr(weight),
            optr(running_mean),
            optr(running_var),
            dy.ptr(),
            ptr(&dx),
            ptr(&dw),
            ptr(&db),
        )?;
    }
    Ok([dx, dw, db])
}

// ----------------------------------------------------------------------------------- losses

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

// ------------------------------------------------------------------------------ transformer

/// Rotary embedding (see [`RopeDesc`] for the exact formula); `inverse` gives the backward.
#[allow(clippy::too_many_arguments)]
pub fn rope(
    stream: Option<&Stream>,
    x: &Tensor,
    seq_dim: i64,
    base: f64,
    position_offset: i64,
    inverse: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = if inverse { "rope_backward" } else { "rope" };
    float_input(op, x, "x")?;
    let d = RopeDesc::new(op, x.shape(), seq_dim, base, position_offset, inverse)?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().rope(s.raw(), x.dtype(), &d, x.ptr(), o.ptr())?;
    Ok(o)
}

fn attention_check(op: &str, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<()> {
    float_input(op, q, "q")?;
    like(op, q, k, k.shape(), "k")?;
    like(op, q, v, v.shape(), "v")
}

/// `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
/// scale=scale)`; `scale = None` is `1/sqrt(q.shape[-1])`.
pub fn scaled_dot_product_attention(
    stream: Option<&Stream>,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
    scale: Option<f64>,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "scaled_dot_product_attention";
    attention_check(op, q, k, v)?;
    let (d, shape) = AttentionDesc::new(op, q.shape(), k.shape(), v.shape(), scale, causal)?;
    let o = output(op, q, out, &shape, q.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, q)?;
    s.device()
        .attention(s.raw(), q.dtype(), &d, q.ptr(), k.ptr(), v.ptr(), o.ptr())?;
    Ok(o)
}

/// scaled_dot_product_attention backward: `(dq, dk, dv)` (all computed; `Grad::Skip` is
/// not accepted).
#[allow(clippy::too_many_arguments)]
pub fn scaled_dot_product_attention_backward(
    stream: Option<&Stream>,
    dout: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
    scale: Option<f64>,
    grads: [Grad<'_>; 3],
) -> Result<[Tensor; 3]> {
    let op = "scaled_dot_product_attention_backward";
    attention_check(op, q, k, v)?;
    let (d, shape) = AttentionDesc::new(op, q.shape(), k.shape(), v.shape(), scale, causal)?;
    like(op, q, dout, &shape, "dout")?;
    if grads.iter().any(|g| matches!(g, Grad::Skip)) {
        return Err(Error::invalid(format!(
            "{op}: dq, dk and dv are all required"
        )));
    }
    let dq = grads[0].make(op, q, q.shape())?.expect("not skipped");
    let dk = grads[1].make(op, q, k.shape())?.expect("not skipped");
    let dv = grads[2].make(op, q, v.shape())?.expect("not skipped");
    let s = stream_for(op, stream, q)?;
    if d.sq == 0 || d.sk == 0 || d.batch == 0 {
        // No scores: every gradient is zero.
        zero_grads(
            &s,
            &[&Some(dq.clone()), &Some(dk.clone()), &Some(dv.clone())],
        )?;
    } else {
        s.device().attention_backward(
            s.raw(),
            q.dtype(),
            &d,
            q.ptr(),
            k.ptr(),
            v.ptr(),
            dout.ptr(),
            dq.ptr(),
            dk.ptr(),
            dv.ptr(),
        )?;
    }
    Ok([dq, dk, dv])
}

/// `weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`,
/// w `[..., N]`, result `[..., D]`.
pub fn weighted_sum(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "weighted_sum";
    float_input(op, x, "x")?;
    like(op, x, w, w.shape(), "w")?;
    let (d, shape) = WeightedSumDesc::new(op, x.shape(), w.shape())?;
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if d.n == 0 {
        s.device()
            .fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)?;
        return Ok(o);
    }
    s.device()
        .weighted_sum(s.raw(), x.dtype(), &d, x.ptr(), w.ptr(), o.ptr())?;
    Ok(o)
}

/// weighted_sum backward: `(dx, dw)` as requested.
pub fn weighted_sum_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x: &Tensor,
    w: &Tensor,
    grads: [Grad<'_>; 2],
) -> Result<[Option<Tensor>; 2]> {
    let op = "weighted_sum_backward";
    float_input(op, x, "x")?;
    like(op, x, w, w.shape(), "w")?;
    let (d, shape) = WeightedSumDesc::new(op, x.shape(), w.shape())?;
    like(op, x, dy, &shape, "dy")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, w.shape())?;
    let s = stream_for(op, stream, x)?;
    if d.d == 0 {
        zero_grads(&s, &[&dw])?;
    } else if x.numel() > 0 {
        s.device().weighted_sum_backward(
            s.raw(),
            x.dtype(),
            &d,
            x.ptr(),
            w.ptr(),
            dy.ptr(),
            ptr(&dx),
            ptr(&dw),
        )?;
    }
    Ok([dx, dw])
}
