//! Eager pooling on tensors (PyTorch semantics, NCHW): max and average pooling (1D/2D/3D) and
//! adaptive average pooling, with their backward passes. Same conventions as
//! [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::ops::conv::Layout;
use crate::ops::pool::{self, PoolAttrs, PoolAttrsEx, PoolKind};
use crate::runtime::data::{channels_first_copy, permute_into};
use crate::runtime::eager::{check_ndim, check_same, float_only, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::{Tensor, same_device};
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

/// Whether `ex` is plain PyTorch pooling (padding equal on both sides, no divisor), and
/// then its attributes.
fn symmetric(ex: &PoolAttrsEx) -> Option<&PoolAttrs> {
    (ex.pad_after == ex.attrs.padding && ex.divisor_override.is_none()).then_some(&ex.attrs)
}

/// Pooling with padding per side (`pad_after`) and average pooling's `divisor_override`:
/// [`pool`] itself when the padding is symmetric and there is no divisor.
pub fn pool_ex(
    stream: Option<&Stream>,
    kind: PoolKind,
    x: &Tensor,
    ex: &PoolAttrsEx,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    if ex.layout == Layout::ChannelsLast {
        return pool_channels_last(stream, kind, x, None, ex, ndim, out);
    }
    if let Some(attrs) = symmetric(ex) {
        return pool(stream, kind, x, attrs, ndim, out);
    }
    check_ndim("pool_ex", ndim)?;
    let op = pool_name(kind, ndim);
    float_only(&op, x)?;
    let g = pool::pool_geom_ex(&op, kind, x.shape(), ex, ndim)?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(&op, stream, x)?;
        s.device()
            .pool_forward(s.raw(), &g, x.dtype(), x.ptr(), o.ptr())?;
    }
    Ok(o)
}

/// Gradient of [`pool_ex`] with respect to `x`: [`pool_backward`] itself when the padding
/// is symmetric and there is no divisor.
pub fn pool_ex_backward(
    stream: Option<&Stream>,
    kind: PoolKind,
    x: &Tensor,
    dy: &Tensor,
    ex: &PoolAttrsEx,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    if ex.layout == Layout::ChannelsLast {
        return pool_channels_last(stream, kind, x, Some(dy), ex, ndim, out);
    }
    if let Some(attrs) = symmetric(ex) {
        return pool_backward(stream, kind, x, dy, attrs, ndim, out);
    }
    check_ndim("pool_ex_backward", ndim)?;
    let op = format!("{}_backward", pool_name(kind, ndim));
    check_same(&op, x, dy)?;
    float_only(&op, x)?;
    let g = pool::pool_geom_ex(&op, kind, x.shape(), ex, ndim)?;
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

/// Channels-last [`pool_ex`] (`dy` None) or [`pool_ex_backward`]: `x`, `dy` and the result
/// `[N, ..., C]`. Devices with channels-last kernels run them; elsewhere the channels-first
/// pooling runs between two layout conversions. Everything is validated before any work.
fn pool_channels_last(
    stream: Option<&Stream>,
    kind: PoolKind,
    x: &Tensor,
    dy: Option<&Tensor>,
    ex: &PoolAttrsEx,
    ndim: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    check_ndim("pool_ex", ndim)?;
    let op = match dy {
        None => pool_name(kind, ndim),
        Some(_) => format!("{}_backward", pool_name(kind, ndim)),
    };
    float_only(&op, x)?;
    if let Some(dy) = dy {
        check_same(&op, x, dy)?;
    }
    if x.shape().len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: input must have {} dimensions (N, {ndim} spatial, C), got shape {:?}",
            ndim + 2,
            x.shape()
        )));
    }
    let first = PoolAttrsEx {
        layout: Layout::ChannelsFirst,
        ..ex.clone()
    };
    let xs = Layout::first_shape(x.shape());
    let g = pool::pool_geom_ex(&op, kind, &xs, &first, ndim)?;
    let y_shape = Layout::last_shape(&g.y_shape());
    if let Some(dy) = dy
        && dy.shape() != y_shape
    {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the pooling output has {y_shape:?}",
            dy.shape()
        )));
    }
    let o_shape = if dy.is_some() {
        x.shape().to_vec()
    } else {
        y_shape
    };
    let o = output(&op, x, out, &o_shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(&op, stream, x)?;
    let dev = s.device();
    if dev.has_channels_last_pool() {
        return match dy {
            None => dev.pool_forward_channels_last(s.raw(), &g, x.dtype(), x.ptr(), o.ptr()),
            Some(dy) => {
                dev.pool_backward_channels_last(s.raw(), &g, x.dtype(), x.ptr(), dy.ptr(), o.ptr())
            }
        }
        .map(|()| o);
    }
    let xf = channels_first_copy(&s, x)?;
    let rf = match dy {
        None => pool_ex(Some(&s), kind, &xf, &first, ndim, None)?,
        Some(dy) => {
            let dyf = channels_first_copy(&s, dy)?;
            pool_ex_backward(Some(&s), kind, &xf, &dyf, &first, ndim, None)?
        }
    };
    permute_into(&s, &rf, &Layout::to_last_perm(ndim + 2), &o)?;
    Ok(o)
}

/// `max_pool{ndim}d(x, ..., return_indices=True)`: the values and PyTorch's indices (i64,
/// the flat index of each maximum within its `[spatial...]` plane).
pub fn max_pool_with_indices(
    stream: Option<&Stream>,
    x: &Tensor,
    attrs: &PoolAttrs,
    ndim: usize,
    out: Option<&Tensor>,
    indices: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    check_ndim("max_pool_with_indices", ndim)?;
    let op = format!("max_pool{ndim}d_with_indices");
    float_only(&op, x)?;
    let g = pool::pool_geom(&op, PoolKind::Max, x.shape(), attrs, ndim)?;
    let o = output(&op, x, out, &g.y_shape(), x.dtype())?;
    let i = output(&op, x, indices, &g.y_shape(), DType::I64)?;
    if o.numel() > 0 {
        let s = stream_for(&op, stream, x)?;
        s.device()
            .max_pool_with_indices(s.raw(), &g, x.dtype(), x.ptr(), o.ptr(), i.ptr())?;
    }
    Ok((o, i))
}

/// `max_pool{ndim}d_with_indices_backward`: the gradient with respect to the input of shape
/// `x_shape` (`[N, C, spatial...]`, 1 to 3 spatial dims), `dy[n, c, o]` added at
/// `indices[n, c, o]` of plane `(n, c)`. `indices` (i64) has `dy`'s shape.
pub fn max_pool_backward_indices(
    stream: Option<&Stream>,
    dy: &Tensor,
    indices: &Tensor,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "max_pool_backward_indices";
    float_only(op, dy)?;
    if !(3..=5).contains(&x_shape.len()) {
        return Err(Error::invalid(format!(
            "{op}: input shape {x_shape:?} must have 3, 4 or 5 dims (N, C, 1 to 3 spatial)"
        )));
    }
    if dy.shape().len() != x_shape.len() || dy.shape()[..2] != x_shape[..2] {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, which does not pool input {x_shape:?}",
            dy.shape()
        )));
    }
    if !same_device(indices.device(), dy.device()) {
        return Err(Error::invalid(format!(
            "{op}: indices are on {}, grad_output on {}",
            indices.device().name(),
            dy.device().name()
        )));
    }
    if indices.dtype() != DType::I64 {
        return Err(Error::dtype(format!(
            "{op}: indices have dtype {}, expected i64",
            indices.dtype()
        )));
    }
    if indices.shape() != dy.shape() {
        return Err(Error::shape(format!(
            "{op}: indices have shape {:?}, grad_output {:?}",
            indices.shape(),
            dy.shape()
        )));
    }
    crate::base::shape::numel(x_shape)?;
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, dy)?;
    let planes = x_shape[0] * x_shape[1];
    let in_vol: usize = x_shape[2..].iter().product();
    let out_vol: usize = dy.shape()[2..].iter().product();
    s.device().max_pool_backward_indices(
        s.raw(),
        dy.dtype(),
        dy.ptr(),
        indices.ptr(),
        planes,
        out_vol,
        in_vol,
        o.ptr(),
    )?;
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
