//! Eager pooling on tensors (PyTorch semantics, NCHW): max and average pooling (1D/2D/3D) and
//! adaptive average pooling, with their backward passes. Same conventions as
//! [`crate::runtime::eager`].

use crate::ops::pool::{self, PoolAttrs, PoolKind};
use crate::runtime::eager::{check_ndim, check_same, float_only, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

fn pool_name(kind: PoolKind, ndim: usize) -> String {
    format!("{}{ndim}d", kind.name())
}

/// `max_pool{ndim}d` / `avg_pool{ndim}d`.
pub fn pool(
    stream: Option<&Stream>,
    kind: PoolKind,
    x: &Tensor,
    attrs: &PoolAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("pool", ndim)?;
    let op = pool_name(kind, ndim);
    float_only(&op, x)?;
    let g = pool::pool_geom(&op, kind, x.shape(), attrs, ndim)?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(&op, stream, x)?;
        s.device()
            .pool_forward(s.raw(), &g, x.dtype(), x.ptr(), o.ptr())?;
    }
    Ok(o)
}

/// Gradient of `max_pool{ndim}d` / `avg_pool{ndim}d` with respect to `x`.
pub fn pool_backward(
    stream: Option<&Stream>,
    kind: PoolKind,
    x: &Tensor,
    dy: &Tensor,
    attrs: &PoolAttrs,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("pool_backward", ndim)?;
    let op = format!("{}_backward", pool_name(kind, ndim));
    check_same(&op, x, dy)?;
    float_only(&op, x)?;
    let g = pool::pool_geom(&op, kind, x.shape(), attrs, ndim)?;
    if dy.shape() != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the pooling output has {:?}",
            dy.shape(),
            g.y_shape()
        )));
    }
    let o = output(&op, x, out, x.shape(), x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(&op, stream, x)?;
        s.device()
            .pool_backward(s.raw(), &g, x.dtype(), x.ptr(), dy.ptr(), o.ptr())?;
    }
    Ok(o)
}

/// `adaptive_avg_pool2d(x, output_size)`.
pub fn adaptive_avg_pool2d(
    stream: Option<&Stream>,
    x: &Tensor,
    output_size: [usize; 2],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d";
    float_only(op, x)?;
    let shape = pool::adaptive_avg_pool2d_shape(op, x.shape(), output_size)?;
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, x)?;
        s.device().adaptive_avg_pool2d_forward(
            s.raw(),
            x.dtype(),
            x.ptr(),
            o.ptr(),
            x.shape()[0] * x.shape()[1],
            [x.shape()[2], x.shape()[3]],
            output_size,
        )?;
    }
    Ok(o)
}

/// Gradient of `adaptive_avg_pool2d` with respect to its input of shape `x_shape`.
pub fn adaptive_avg_pool2d_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d_backward";
    float_only(op, dy)?;
    if dy.shape().len() != 4 {
        return Err(Error::shape(format!(
            "{op}: grad_output must have 4 dimensions, got {:?}",
            dy.shape()
        )));
    }
    let osz = [dy.shape()[2], dy.shape()[3]];
    let shape = pool::adaptive_avg_pool2d_shape(op, x_shape, osz)?;
    if shape != dy.shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, expected {shape:?}",
            dy.shape()
        )));
    }
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, dy)?;
        s.device().adaptive_avg_pool2d_backward(
            s.raw(),
            dy.dtype(),
            dy.ptr(),
            o.ptr(),
            x_shape[0] * x_shape[1],
            [x_shape[2], x_shape[3]],
            osz,
        )?;
    }
    Ok(o)
}
