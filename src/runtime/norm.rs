//! Eager normalization on tensors: layer_norm, rms_norm, group_norm and batch_norm, forward
//! and backward. Semantics and layouts: `crate::ops::nn`; the `out` convention of [`crate::runtime::eager`]; backward ops with several gradients take a [`Grad`] per
//! gradient.

use crate::base::dtype::DType;
use crate::device::DevPtr;
use crate::ops::conv::Layout;
use crate::ops::nn::{BatchNormDesc, GroupNormDesc, RowNormDesc};
use crate::runtime::eager::{
    Grad, floating_input, like, opt_like, optr, output, ptr, stream_for, zero_grads,
};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

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
    floating_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    opt_like(op, x, bias, normalized_shape, "bias")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if x.dtype() == DType::F64 {
        f64_norm::layer_norm(&s, x, &d, weight, bias, &o)?;
        return Ok(o);
    }
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
    floating_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    like(op, x, dy, x.shape(), "dy")?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, normalized_shape)?;
    let db = grads[2].make(op, x, normalized_shape)?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw, &db])?;
    } else if x.dtype() == DType::F64 {
        f64_norm::layer_norm_backward(&s, dy, x, &d, weight, [&dx, &dw, &db])?;
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
    floating_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if x.dtype() == DType::F64 {
        f64_norm::rms_norm(&s, x, &d, weight, &o)?;
        return Ok(o);
    }
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
    floating_input(op, x, "x")?;
    let d = RowNormDesc::new(op, x.shape(), normalized_shape, eps)?;
    like(op, x, dy, x.shape(), "dy")?;
    opt_like(op, x, weight, normalized_shape, "weight")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, normalized_shape)?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw])?;
    } else if x.dtype() == DType::F64 {
        f64_norm::rms_norm_backward(&s, dy, x, &d, weight, [&dx, &dw])?;
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
    floating_input(op, x, "x")?;
    let d = GroupNormDesc::new(op, x.shape(), num_groups, eps)?;
    opt_like(op, x, weight, &[d.c], "weight")?;
    opt_like(op, x, bias, &[d.c], "bias")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if x.dtype() == DType::F64 {
        f64_norm::group_norm(&s, x, &d, weight, bias, &o)?;
        return Ok(o);
    }
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
    floating_input(op, x, "x")?;
    let d = GroupNormDesc::new(op, x.shape(), num_groups, eps)?;
    like(op, x, dy, x.shape(), "dy")?;
    opt_like(op, x, weight, &[d.c], "weight")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, &[d.c])?;
    let db = grads[2].make(op, x, &[d.c])?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw, &db])?;
    } else if x.dtype() == DType::F64 {
        f64_norm::group_norm_backward(&s, dy, x, &d, weight, [&dx, &dw, &db])?;
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
    floating_input(op, x, "x")?;
    let shape = bn_shape(x, [weight, bias, running_mean, running_var]);
    let d = BatchNormDesc::new(op, &shape, training, momentum, eps)?;
    check_bn_params(op, x, &d, running_mean, running_var, weight)?;
    opt_like(op, x, bias, &[d.c], "bias")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if x.dtype() == DType::F64 {
        let running = running_mean.zip(running_var);
        f64_norm::batch_norm(&s, x, &d, weight, bias, running, &o)?;
        return Ok(o);
    }
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
    floating_input(op, x, "x")?;
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
    } else if x.dtype() == DType::F64 {
        let running = running_mean.zip(running_var);
        f64_norm::batch_norm_backward(&s, dy, x, &d, weight, running, [&dx, &dw, &db])?;
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

/// The descriptor of a channels-last batch norm of `x` `[N, ..., C]` (rank >= 3): the
/// channels-first problem's, read as `[N, spatial, C]`.
fn bn_desc_last(
    op: &str,
    x: &Tensor,
    training: bool,
    momentum: f64,
    eps: f64,
) -> Result<BatchNormDesc> {
    let mut d = BatchNormDesc::new(op, &Layout::first_shape(x.shape()), training, momentum, eps)?;
    d.channels_last = true;
    Ok(d)
}

/// [`batch_norm`] of a channels-last `x` `[N, ..., C]` (rank 2 and less: [`batch_norm`]
/// itself): the device's channels-last batch norm (statistics over the `N * spatial` rows of
/// `C` contiguous channels; the same statistics, running-stat updates and results as the
/// channels-first op up to rounding).
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_channels_last(
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
    let op = "batch_norm_channels_last";
    floating_input(op, x, "x")?;
    if x.shape().len() < 3 {
        let o = output(op, x, out, x.shape(), x.dtype())?;
        return batch_norm(
            stream,
            x,
            running_mean,
            running_var,
            weight,
            bias,
            training,
            momentum,
            eps,
            Some(&o),
        );
    }
    let d = bn_desc_last(op, x, training, momentum, eps)?;
    check_bn_params(op, x, &d, running_mean, running_var, weight)?;
    opt_like(op, x, bias, &[d.c], "bias")?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if x.dtype() == DType::F64 {
        let running = running_mean.zip(running_var);
        f64_norm::batch_norm(&s, x, &d, weight, bias, running, &o)?;
        return Ok(o);
    }
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

/// [`batch_norm_backward`] for [`batch_norm_channels_last`]: `dy`, `x` and `dx` `[N, ..., C]`.
#[allow(clippy::too_many_arguments)]
pub fn batch_norm_channels_last_backward(
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
    let op = "batch_norm_channels_last_backward";
    floating_input(op, x, "x")?;
    like(op, x, dy, x.shape(), "dy")?;
    if x.shape().len() < 3 {
        return batch_norm_backward(
            stream,
            dy,
            x,
            running_mean,
            running_var,
            weight,
            training,
            eps,
            grads,
        );
    }
    let d = bn_desc_last(op, x, training, 0.0, eps)?;
    check_bn_params(op, x, &d, running_mean, running_var, weight)?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, &[d.c])?;
    let db = grads[2].make(op, x, &[d.c])?;
    let s = stream_for(op, stream, x)?;
    if x.numel() == 0 {
        zero_grads(&s, &[&dw, &db])?;
    } else if x.dtype() == DType::F64 {
        let running = running_mean.zip(running_var);
        f64_norm::batch_norm_backward(&s, dy, x, &d, weight, running, [&dx, &dw, &db])?;
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

// ---- local response normalization (composed of pad, slices and pointwise ops) -----------

/// A 0-d tensor of `like`'s dtype and device holding `v`, filled on `stream`.
fn lrn_scalar(stream: Option<&Stream>, like: &Tensor, v: f64) -> Result<Tensor> {
    let t = Tensor::empty(like.device().clone(), &[], like.dtype())?;
    crate::runtime::data::fill(stream, &t, v)?;
    Ok(t)
}

/// The sum over channels (dimension 1) of `t` in the window `[c - before, c + after]`
/// (zeros outside).
fn channel_window_sum(
    stream: Option<&Stream>,
    t: &Tensor,
    before: usize,
    after: usize,
) -> Result<Tensor> {
    use crate::ops::elementwise::BinaryOp;
    let nd = t.shape().len();
    let c = t.shape()[1] as i64;
    let mut pads = vec![0i64; 2 * (nd - 1)];
    pads[2 * (nd - 2)] = before as i64;
    pads[2 * (nd - 2) + 1] = after as i64;
    let padded = crate::runtime::data::pad(stream, t, &pads, 0, 0.0, None)?;
    let mut acc: Option<Tensor> = None;
    for k in 0..(before + after + 1) as i64 {
        let s = crate::runtime::data::slice(stream, &padded, 1, k, k + c, 1, None)?;
        acc = Some(match acc {
            None => s,
            Some(a) => {
                crate::runtime::elementwise::binary(stream, BinaryOp::Add, &a, &s, Some(&a))?
            }
        });
    }
    acc.ok_or_else(|| Error::internal("local_response_norm: empty window"))
}

fn lrn_check(op: &str, x: &Tensor, size: i64) -> Result<usize> {
    crate::runtime::eager::floating_only(op, x)?;
    if x.shape().len() < 3 {
        return Err(Error::shape(format!(
            "{op}: input of shape {:?} has fewer than three dimensions (N, C, ...)",
            x.shape()
        )));
    }
    if size < 1 {
        return Err(Error::invalid(format!(
            "{op}: size {size} must be at least 1"
        )));
    }
    Ok(size as usize)
}

/// `k + alpha / size * (window sum of x^2)`, PyTorch's divisor before the power.
fn lrn_base(
    stream: Option<&Stream>,
    x: &Tensor,
    size: usize,
    alpha: f64,
    k: f64,
) -> Result<Tensor> {
    use crate::ops::elementwise::BinaryOp;
    use crate::runtime::elementwise::binary;
    let sq = binary(stream, BinaryOp::Mul, x, x, None)?;
    let win = channel_window_sum(stream, &sq, size / 2, (size - 1) / 2)?;
    let a = lrn_scalar(stream, x, alpha / size as f64)?;
    let kk = lrn_scalar(stream, x, k)?;
    let scaled = binary(stream, BinaryOp::Mul, &win, &a, Some(&win))?;
    binary(stream, BinaryOp::Add, &scaled, &kk, Some(&scaled))
}

/// `torch.nn.functional.local_response_norm(x, size, alpha, beta, k)` (ONNX `LRN`): `x /
/// (k + alpha / size * sum of x^2 over the channel window [c - size/2, c + (size-1)/2])^beta`
/// over dimension 1 of an `(N, C, ...)` input. Floating dtypes.
#[allow(clippy::too_many_arguments)]
pub fn local_response_norm(
    stream: Option<&Stream>,
    x: &Tensor,
    size: i64,
    alpha: f64,
    beta: f64,
    k: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    use crate::ops::elementwise::BinaryOp;
    use crate::runtime::elementwise::binary;
    let op = "local_response_norm";
    let size = lrn_check(op, x, size)?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let base = lrn_base(stream, x, size, alpha, k)?;
    let b = lrn_scalar(stream, x, beta)?;
    let div = binary(stream, BinaryOp::Pow, &base, &b, Some(&base))?;
    binary(stream, BinaryOp::Div, x, &div, Some(&o))
}

/// The backward of [`local_response_norm`] with the same attributes: with `d = k + alpha /
/// size * window(x^2)`, `dx = dy * d^-beta - 2 * alpha * beta / size * x * window'(dy * x *
/// d^(-beta-1))`, `window'` the window sum transposed.
#[allow(clippy::too_many_arguments)]
pub fn local_response_norm_backward(
    stream: Option<&Stream>,
    x: &Tensor,
    dy: &Tensor,
    size: i64,
    alpha: f64,
    beta: f64,
    k: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    use crate::ops::elementwise::BinaryOp;
    use crate::runtime::elementwise::binary;
    let op = "local_response_norm_backward";
    let size = lrn_check(op, x, size)?;
    crate::runtime::eager::check_same(op, x, dy)?;
    if dy.shape() != x.shape() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, expected {:?}",
            dy.shape(),
            x.shape()
        )));
    }
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let base = lrn_base(stream, x, size, alpha, k)?;
    let nb = lrn_scalar(stream, x, -beta)?;
    let nb1 = lrn_scalar(stream, x, -beta - 1.0)?;
    let p = binary(stream, BinaryOp::Pow, &base, &nb, None)?; // d^-beta
    let q = binary(stream, BinaryOp::Pow, &base, &nb1, Some(&base))?; // d^(-beta-1)
    let t = binary(stream, BinaryOp::Mul, dy, x, None)?;
    let t = binary(stream, BinaryOp::Mul, &t, &q, Some(&t))?;
    let w = channel_window_sum(stream, &t, (size - 1) / 2, size / 2)?;
    let c = lrn_scalar(stream, x, -2.0 * alpha * beta / size as f64)?;
    let w = binary(stream, BinaryOp::Mul, &w, x, Some(&w))?;
    let w = binary(stream, BinaryOp::Mul, &w, &c, Some(&w))?;
    let first = binary(stream, BinaryOp::Mul, dy, &p, Some(&p))?;
    binary(stream, BinaryOp::Add, &first, &w, Some(&o))
}

/// f64 layer_norm and rms_norm, forward and backward: composed of the f64 primitives (row
/// means and sums, broadcasting elementwise ops), which every device has, in the order of
/// the float64 reference formulas of `crate::ops::nn` (`layer_norm_ref`, `rms_norm_ref` and
/// their backwards), so f64 is computed in f64 throughout.
mod f64_norm {
    use crate::Result;
    use crate::base::dtype::DType;
    use crate::ops::elementwise::{BinaryOp, UnaryOp};
    use crate::ops::nn::{BatchNormDesc, GroupNormDesc, RowNormDesc};
    use crate::ops::reduce::ReduceOp;
    use crate::runtime::stream::Stream;
    use crate::runtime::tensor::Tensor;
    use crate::runtime::{elementwise, reduce};

    /// An f64 scalar tensor (shape `[]`) holding `v`, on `like`'s device.
    fn scalar(s: &Stream, like: &Tensor, v: f64) -> Result<Tensor> {
        let t = Tensor::empty(like.device().clone(), &[], DType::F64)?;
        s.device().fill(s.raw(), DType::F64, t.ptr(), 1, v)?;
        Ok(t)
    }

    fn bin(
        s: &Stream,
        op: BinaryOp,
        a: &Tensor,
        b: &Tensor,
        out: Option<&Tensor>,
    ) -> Result<Tensor> {
        elementwise::binary(Some(s), op, a, b, out)
    }

    /// `op` over dim `dim` of a `[rows, cols]` tensor, the dim kept.
    fn red(s: &Stream, op: ReduceOp, x: &Tensor, dim: i64, out: Option<&Tensor>) -> Result<Tensor> {
        reduce::reduce(Some(s), op, x, &[dim], true, out)
    }

    /// `1 / sqrt(v + eps)` per row.
    fn rstd(s: &Stream, v: &Tensor, eps: f64) -> Result<Tensor> {
        let ve = bin(s, BinaryOp::Add, v, &scalar(s, v, eps)?, None)?;
        let sq = elementwise::unary(Some(s), UnaryOp::Sqrt, &ve, None)?;
        bin(s, BinaryOp::Div, &scalar(s, v, 1.0)?, &sq, None)
    }

    /// `(x - mean, rstd)` of each row of `x` as `[rows, cols]`.
    fn centered(s: &Stream, x: &Tensor, d: &RowNormDesc) -> Result<(Tensor, Tensor)> {
        let x2 = x.reshape(&[d.rows, d.cols])?;
        let m = red(s, ReduceOp::Mean, &x2, 1, None)?;
        let xc = bin(s, BinaryOp::Sub, &x2, &m, None)?;
        let var = red(
            s,
            ReduceOp::Mean,
            &bin(s, BinaryOp::Mul, &xc, &xc, None)?,
            1,
            None,
        )?;
        Ok((xc, rstd(s, &var, d.eps)?))
    }

    fn flat(t: &Tensor, d: &RowNormDesc) -> Result<Tensor> {
        t.reshape(&[d.cols])
    }

    /// `y = (x - mean) * rstd * w + b` into `o`.
    pub(super) fn layer_norm(
        s: &Stream,
        x: &Tensor,
        d: &RowNormDesc,
        w: Option<&Tensor>,
        b: Option<&Tensor>,
        o: &Tensor,
    ) -> Result<()> {
        let o2 = o.reshape(&[d.rows, d.cols])?;
        let (xc, rs) = centered(s, x, d)?;
        let last = |t: bool| if t { Some(&o2) } else { None };
        let mut y = bin(s, BinaryOp::Mul, &xc, &rs, last(w.is_none() && b.is_none()))?;
        if let Some(w) = w {
            y = bin(s, BinaryOp::Mul, &y, &flat(w, d)?, last(b.is_none()))?;
        }
        if let Some(b) = b {
            bin(s, BinaryOp::Add, &y, &flat(b, d)?, Some(&o2))?;
        }
        Ok(())
    }

    /// `dx = rstd / n * (n * g - sum(g) - xhat * sum(g * xhat))` with `g = dy * w`;
    /// `dw = sum_rows(dy * xhat)`, `db = sum_rows(dy)`.
    pub(super) fn layer_norm_backward(
        s: &Stream,
        dy: &Tensor,
        x: &Tensor,
        d: &RowNormDesc,
        w: Option<&Tensor>,
        [dx, dw, db]: [&Option<Tensor>; 3],
    ) -> Result<()> {
        let dy2 = dy.reshape(&[d.rows, d.cols])?;
        let (xc, rs) = centered(s, x, d)?;
        let xhat = bin(s, BinaryOp::Mul, &xc, &rs, None)?;
        if let Some(dx) = dx {
            let g = match w {
                Some(w) => bin(s, BinaryOp::Mul, &dy2, &flat(w, d)?, None)?,
                None => dy2.clone(),
            };
            let n = scalar(s, x, d.cols as f64)?;
            let sg = red(s, ReduceOp::Sum, &g, 1, None)?;
            let sgx = red(
                s,
                ReduceOp::Sum,
                &bin(s, BinaryOp::Mul, &g, &xhat, None)?,
                1,
                None,
            )?;
            let t = bin(
                s,
                BinaryOp::Sub,
                &bin(s, BinaryOp::Mul, &g, &n, None)?,
                &sg,
                None,
            )?;
            let t = bin(
                s,
                BinaryOp::Sub,
                &t,
                &bin(s, BinaryOp::Mul, &xhat, &sgx, None)?,
                None,
            )?;
            let c = bin(s, BinaryOp::Div, &rs, &n, None)?;
            bin(
                s,
                BinaryOp::Mul,
                &c,
                &t,
                Some(&dx.reshape(&[d.rows, d.cols])?),
            )?;
        }
        if let Some(dw) = dw {
            let p = bin(s, BinaryOp::Mul, &dy2, &xhat, None)?;
            red(s, ReduceOp::Sum, &p, 0, Some(&dw.reshape(&[1, d.cols])?))?;
        }
        if let Some(db) = db {
            red(s, ReduceOp::Sum, &dy2, 0, Some(&db.reshape(&[1, d.cols])?))?;
        }
        Ok(())
    }

    /// `rstd = 1 / sqrt(mean(x^2) + eps)` of each row of `x` as `[rows, cols]`.
    fn rms_rstd(s: &Stream, x2: &Tensor, d: &RowNormDesc) -> Result<Tensor> {
        let ms = red(
            s,
            ReduceOp::Mean,
            &bin(s, BinaryOp::Mul, x2, x2, None)?,
            1,
            None,
        )?;
        rstd(s, &ms, d.eps)
    }

    /// `y = x * rstd * w` into `o`.
    pub(super) fn rms_norm(
        s: &Stream,
        x: &Tensor,
        d: &RowNormDesc,
        w: Option<&Tensor>,
        o: &Tensor,
    ) -> Result<()> {
        let (x2, o2) = (x.reshape(&[d.rows, d.cols])?, o.reshape(&[d.rows, d.cols])?);
        let rs = rms_rstd(s, &x2, d)?;
        let y = bin(
            s,
            BinaryOp::Mul,
            &x2,
            &rs,
            if w.is_none() { Some(&o2) } else { None },
        )?;
        if let Some(w) = w {
            bin(s, BinaryOp::Mul, &y, &flat(w, d)?, Some(&o2))?;
        }
        Ok(())
    }

    /// `dx = rstd * g - rstd^3 * x * sum(g * x) / n` with `g = dy * w`;
    /// `dw = sum_rows(dy * x * rstd)`.
    pub(super) fn rms_norm_backward(
        s: &Stream,
        dy: &Tensor,
        x: &Tensor,
        d: &RowNormDesc,
        w: Option<&Tensor>,
        [dx, dw]: [&Option<Tensor>; 2],
    ) -> Result<()> {
        let (x2, dy2) = (
            x.reshape(&[d.rows, d.cols])?,
            dy.reshape(&[d.rows, d.cols])?,
        );
        let rs = rms_rstd(s, &x2, d)?;
        if let Some(dx) = dx {
            let g = match w {
                Some(w) => bin(s, BinaryOp::Mul, &dy2, &flat(w, d)?, None)?,
                None => dy2.clone(),
            };
            let sgx = red(
                s,
                ReduceOp::Sum,
                &bin(s, BinaryOp::Mul, &g, &x2, None)?,
                1,
                None,
            )?;
            let a = bin(s, BinaryOp::Mul, &rs, &g, None)?;
            let r3 = bin(
                s,
                BinaryOp::Mul,
                &bin(s, BinaryOp::Mul, &rs, &rs, None)?,
                &rs,
                None,
            )?;
            let b = bin(s, BinaryOp::Mul, &r3, &x2, None)?;
            let b = bin(s, BinaryOp::Mul, &b, &sgx, None)?;
            let b = bin(s, BinaryOp::Div, &b, &scalar(s, x, d.cols as f64)?, None)?;
            bin(
                s,
                BinaryOp::Sub,
                &a,
                &b,
                Some(&dx.reshape(&[d.rows, d.cols])?),
            )?;
        }
        if let Some(dw) = dw {
            let p = bin(s, BinaryOp::Mul, &dy2, &x2, None)?;
            let p = bin(s, BinaryOp::Mul, &p, &rs, None)?;
            red(s, ReduceOp::Sum, &p, 0, Some(&dw.reshape(&[1, d.cols])?))?;
        }
        Ok(())
    }

    /// The `[a, c, b]` view batch norm reads a tensor of `d` as: channels first `[n, c, hw]`,
    /// channels last `[n * hw, c, 1]`; the statistics are over dims 0 and 2.
    fn bn_view(t: &Tensor, d: &BatchNormDesc) -> Result<Tensor> {
        if d.channels_last {
            t.reshape(&[d.n * d.hw, d.c, 1])
        } else {
            t.reshape(&[d.n, d.c, d.hw])
        }
    }

    /// A per-channel `[c]` tensor as `[1, c, 1]`.
    fn chan(t: &Tensor, c: usize) -> Result<Tensor> {
        t.reshape(&[1, c, 1])
    }

    /// `(mean, rstd)` per channel (`[1, c, 1]`): the batch statistics in training (the
    /// biased variance, also returned), the running ones in eval.
    fn bn_stats(
        s: &Stream,
        x3: &Tensor,
        d: &BatchNormDesc,
        running: Option<(&Tensor, &Tensor)>,
    ) -> Result<(Tensor, Tensor, Option<Tensor>)> {
        if d.training {
            let m = reduce::reduce(Some(s), ReduceOp::Mean, x3, &[0, 2], true, None)?;
            let xc = bin(s, BinaryOp::Sub, x3, &m, None)?;
            let sq = bin(s, BinaryOp::Mul, &xc, &xc, Some(&xc))?;
            let var = reduce::reduce(Some(s), ReduceOp::Mean, &sq, &[0, 2], true, None)?;
            let rs = rstd(s, &var, d.eps)?;
            Ok((m, rs, Some(var)))
        } else {
            // check_bn_params requires the running stats in eval.
            let (rm, rv) = running.ok_or_else(|| {
                crate::Error::internal("batch_norm: eval without running statistics")
            })?;
            Ok((chan(rm, d.c)?, rstd(s, &chan(rv, d.c)?, d.eps)?, None))
        }
    }

    /// f64 batch_norm (either layout, `d.channels_last`) into `o`; in training the running
    /// stats, when given, move by `momentum` toward the batch mean and the unbiased batch
    /// variance (`batch_norm_ref`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn batch_norm(
        s: &Stream,
        x: &Tensor,
        d: &BatchNormDesc,
        w: Option<&Tensor>,
        b: Option<&Tensor>,
        running: Option<(&Tensor, &Tensor)>,
        o: &Tensor,
    ) -> Result<()> {
        let x3 = bn_view(x, d)?;
        let (m, rs, var) = bn_stats(s, &x3, d, running)?;
        let o3 = bn_view(o, d)?;
        let xc = bin(s, BinaryOp::Sub, &x3, &m, None)?;
        let last = |t: bool| if t { Some(&o3) } else { None };
        let mut y = bin(s, BinaryOp::Mul, &xc, &rs, last(w.is_none() && b.is_none()))?;
        if let Some(w) = w {
            y = bin(s, BinaryOp::Mul, &y, &chan(w, d.c)?, last(b.is_none()))?;
        }
        if let Some(b) = b {
            bin(s, BinaryOp::Add, &y, &chan(b, d.c)?, Some(&o3))?;
        }
        if let (Some((rm, rv)), Some(var)) = (running, var) {
            let cnt = (d.n * d.hw) as f64;
            let keep = scalar(s, x, 1.0 - d.momentum)?;
            let mom = scalar(s, x, d.momentum)?;
            let (rm3, rv3) = (chan(rm, d.c)?, chan(rv, d.c)?);
            let a = bin(s, BinaryOp::Mul, &rm3, &keep, None)?;
            let bm = bin(s, BinaryOp::Mul, &m, &mom, None)?;
            bin(s, BinaryOp::Add, &a, &bm, Some(&rm3))?;
            let a = bin(s, BinaryOp::Mul, &rv3, &keep, None)?;
            let unb = bin(s, BinaryOp::Mul, &var, &mom, None)?;
            let unb = bin(s, BinaryOp::Mul, &unb, &scalar(s, x, cnt)?, Some(&unb))?;
            let unb = bin(
                s,
                BinaryOp::Div,
                &unb,
                &scalar(s, x, cnt - 1.0)?,
                Some(&unb),
            )?;
            bin(s, BinaryOp::Add, &a, &unb, Some(&rv3))?;
        }
        Ok(())
    }

    /// `rs / m * (m * g - sum(g) - xhat * sum(g * xhat))` over `dims` of `g` and `xhat`
    /// (the gradient through normalization statistics, `norm_backward_set`), into `out`.
    fn through_stats(
        s: &Stream,
        g: &Tensor,
        xhat: &Tensor,
        rs: &Tensor,
        m: f64,
        dims: &[i64],
        out: &Tensor,
    ) -> Result<()> {
        let n = scalar(s, g, m)?;
        let sg = reduce::reduce(Some(s), ReduceOp::Sum, g, dims, true, None)?;
        let gx = bin(s, BinaryOp::Mul, g, xhat, None)?;
        let sgx = reduce::reduce(Some(s), ReduceOp::Sum, &gx, dims, true, None)?;
        let t = bin(s, BinaryOp::Mul, g, &n, None)?;
        let t = bin(s, BinaryOp::Sub, &t, &sg, Some(&t))?;
        let u = bin(s, BinaryOp::Mul, xhat, &sgx, None)?;
        let t = bin(s, BinaryOp::Sub, &t, &u, Some(&t))?;
        let c = bin(s, BinaryOp::Div, rs, &n, None)?;
        bin(s, BinaryOp::Mul, &c, &t, Some(out))?;
        Ok(())
    }

    /// `dw = sum(dy * xhat)`, `db = sum(dy)` over dims 0 and 2 of the `[a, c, b]` views.
    fn affine_grads(
        s: &Stream,
        dy3: &Tensor,
        xhat3: &Tensor,
        c: usize,
        dw: &Option<Tensor>,
        db: &Option<Tensor>,
    ) -> Result<()> {
        if let Some(dw) = dw {
            let p = bin(s, BinaryOp::Mul, dy3, xhat3, None)?;
            reduce::reduce(
                Some(s),
                ReduceOp::Sum,
                &p,
                &[0, 2],
                true,
                Some(&chan(dw, c)?),
            )?;
        }
        if let Some(db) = db {
            reduce::reduce(
                Some(s),
                ReduceOp::Sum,
                dy3,
                &[0, 2],
                true,
                Some(&chan(db, c)?),
            )?;
        }
        Ok(())
    }

    /// f64 batch_norm backward (`batch_norm_backward_ref`): training through the batch
    /// statistics, eval with the running stats as constants.
    pub(super) fn batch_norm_backward(
        s: &Stream,
        dy: &Tensor,
        x: &Tensor,
        d: &BatchNormDesc,
        w: Option<&Tensor>,
        running: Option<(&Tensor, &Tensor)>,
        [dx, dw, db]: [&Option<Tensor>; 3],
    ) -> Result<()> {
        let (x3, dy3) = (bn_view(x, d)?, bn_view(dy, d)?);
        let (m, rs, _) = bn_stats(s, &x3, d, running)?;
        let xc = bin(s, BinaryOp::Sub, &x3, &m, None)?;
        let xhat = bin(s, BinaryOp::Mul, &xc, &rs, Some(&xc))?;
        if let Some(dx) = dx {
            let g = match w {
                Some(w) => bin(s, BinaryOp::Mul, &dy3, &chan(w, d.c)?, None)?,
                None => dy3.clone(),
            };
            let dx3 = bn_view(dx, d)?;
            if d.training {
                let cnt = (d.n * d.hw) as f64;
                through_stats(s, &g, &xhat, &rs, cnt, &[0, 2], &dx3)?;
            } else {
                bin(s, BinaryOp::Mul, &g, &rs, Some(&dx3))?;
            }
        }
        affine_grads(s, &dy3, &xhat, d.c, dw, db)
    }

    /// `(xhat as [n, c, hw], rstd as [n, groups, 1])` of group norm.
    fn gn_xhat(s: &Stream, x: &Tensor, d: &GroupNormDesc) -> Result<(Tensor, Tensor)> {
        let len = d.c / d.groups * d.hw;
        let xg = x.reshape(&[d.n, d.groups, len])?;
        let m = reduce::reduce(Some(s), ReduceOp::Mean, &xg, &[2], true, None)?;
        let xc = bin(s, BinaryOp::Sub, &xg, &m, None)?;
        let sq = bin(s, BinaryOp::Mul, &xc, &xc, None)?;
        let var = reduce::reduce(Some(s), ReduceOp::Mean, &sq, &[2], true, None)?;
        let rs = rstd(s, &var, d.eps)?;
        let xhat = bin(s, BinaryOp::Mul, &xc, &rs, Some(&xc))?;
        Ok((xhat.reshape(&[d.n, d.c, d.hw])?, rs))
    }

    /// f64 group_norm into `o` (`group_norm_ref`).
    pub(super) fn group_norm(
        s: &Stream,
        x: &Tensor,
        d: &GroupNormDesc,
        w: Option<&Tensor>,
        b: Option<&Tensor>,
        o: &Tensor,
    ) -> Result<()> {
        let (xhat, _) = gn_xhat(s, x, d)?;
        let o3 = o.reshape(&[d.n, d.c, d.hw])?;
        let y = match w {
            Some(w) => bin(s, BinaryOp::Mul, &xhat, &chan(w, d.c)?, None)?,
            None => xhat,
        };
        match b {
            Some(b) => {
                bin(s, BinaryOp::Add, &y, &chan(b, d.c)?, Some(&o3))?;
            }
            None => crate::runtime::data::copy(Some(s), &y, &o3)?,
        }
        Ok(())
    }

    /// f64 group_norm backward (`group_norm_backward_ref`).
    pub(super) fn group_norm_backward(
        s: &Stream,
        dy: &Tensor,
        x: &Tensor,
        d: &GroupNormDesc,
        w: Option<&Tensor>,
        [dx, dw, db]: [&Option<Tensor>; 3],
    ) -> Result<()> {
        let (xhat, rs) = gn_xhat(s, x, d)?;
        let dy3 = dy.reshape(&[d.n, d.c, d.hw])?;
        if let Some(dx) = dx {
            let g = match w {
                Some(w) => bin(s, BinaryOp::Mul, &dy3, &chan(w, d.c)?, None)?,
                None => dy3.clone(),
            };
            let len = d.c / d.groups * d.hw;
            let shape = [d.n, d.groups, len];
            let (g, xh, dxg) = (
                g.reshape(&shape)?,
                xhat.reshape(&shape)?,
                dx.reshape(&shape)?,
            );
            through_stats(s, &g, &xh, &rs, len as f64, &[2], &dxg)?;
        }
        affine_grads(s, &dy3, &xhat, d.c, dw, db)
    }
}
