//! Eager softmax and log_softmax on tensors, forward and backward (from the forward output).
//! Semantics and layouts: `crate::ops::nn`; the `out` convention of [`crate::runtime::eager`].

use crate::Result;
use crate::ops::nn::SoftmaxDesc;
use crate::runtime::eager::{floating_input, like, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;

fn softmax_impl(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    log: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    floating_input(op, x, "x")?;
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
    floating_input(op, y, "y")?;
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
