//! Eager pooling on tensors (PyTorch semantics, NCHW): max and average pooling (1D/2D/3D) and
//! adaptive average pooling, with their backward passes. Same conventions as
//! [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::device::DevPtr;
use crate::ops::conv::Layout;
use crate::ops::pool::{self, PoolAttrs, PoolAttrsEx, PoolKind};
use crate::runtime::data::{channels_first_copy, permute_into};
use crate::runtime::eager::{check_ndim, check_same, floating_only, output, stream_for};
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
    floating_only(&op, x)?;
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
    floating_only(&op, x)?;
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
    floating_only(&op, x)?;
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
    floating_only(&op, x)?;
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
    floating_only(&op, x)?;
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
    // f64 on GPUs: the channels-first kernels, the layout converted around them.
    let native = match dy {
        None => dev.channels_last_pool_forward(&g, x.dtype()),
        Some(_) => dev.has_channels_last_pool(),
    };
    if native && x.dtype() != DType::F64 {
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
    floating_only(&op, x)?;
    let g = pool::pool_geom(&op, PoolKind::Max, x.shape(), attrs, ndim)?;
    max_pool_with_indices_geom(&op, stream, x, &g, out, indices)
}

/// [`max_pool_with_indices`] of the channels-first geometry `g`.
fn max_pool_with_indices_geom(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    g: &pool::PoolGeom,
    out: Option<&Tensor>,
    indices: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let o = output(op, x, out, &g.y_shape(), x.dtype())?;
    let i = output(op, x, indices, &g.y_shape(), DType::I64)?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, x)?;
        s.device()
            .max_pool_with_indices(s.raw(), g, x.dtype(), x.ptr(), o.ptr(), i.ptr())?;
    }
    Ok((o, i))
}

/// [`max_pool_with_indices`] with `rb_pool_params_ex`'s attributes: padding per side and
/// the layout (channels last: `x`, the values and the indices `[N, spatial..., C]`, the
/// indices' values those of channels first, as PyTorch's channels_last results). No
/// divisor (max pooling).
pub fn max_pool_with_indices_ex(
    stream: Option<&Stream>,
    x: &Tensor,
    ex: &PoolAttrsEx,
    ndim: usize,
    out: Option<&Tensor>,
    indices: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    check_ndim("max_pool_with_indices_ex", ndim)?;
    let op = format!("max_pool{ndim}d_with_indices");
    floating_only(&op, x)?;
    if x.shape().len() != ndim + 2 {
        return Err(Error::shape(format!(
            "{op}: input must have {} dimensions, got shape {:?}",
            ndim + 2,
            x.shape()
        )));
    }
    let first = PoolAttrsEx {
        layout: Layout::ChannelsFirst,
        ..ex.clone()
    };
    if ex.layout == Layout::ChannelsFirst {
        let g = pool::pool_geom_ex(&op, PoolKind::Max, x.shape(), &first, ndim)?;
        return max_pool_with_indices_geom(&op, stream, x, &g, out, indices);
    }
    let g = pool::pool_geom_ex(
        &op,
        PoolKind::Max,
        &Layout::first_shape(x.shape()),
        &first,
        ndim,
    )?;
    let y_shape = Layout::last_shape(&g.y_shape());
    let o = output(&op, x, out, &y_shape, x.dtype())?;
    let i = output(&op, x, indices, &y_shape, DType::I64)?;
    if o.numel() == 0 {
        return Ok((o, i));
    }
    let s = stream_for(&op, stream, x)?;
    let dev = s.device();
    if dev.has_channels_last_pool() {
        dev.max_pool_with_indices_channels_last(s.raw(), &g, x.dtype(), x.ptr(), o.ptr(), i.ptr())?;
        return Ok((o, i));
    }
    // The channels-first kernels between layout conversions.
    let xf = channels_first_copy(&s, x)?;
    let (yf, jf) = max_pool_with_indices_geom(&op, Some(&s), &xf, &g, None, None)?;
    let perm = Layout::to_last_perm(ndim + 2);
    permute_into(&s, &yf, &perm, &o)?;
    permute_into(&s, &jf, &perm, &i)?;
    Ok((o, i))
}

/// [`max_pool_backward_indices`] in `layout` (an `rb_layout`; channels last: `dy`,
/// `indices` and the result `[N, spatial..., C]`, `x_shape` too; the indices' values as
/// channels first).
pub fn max_pool_backward_indices_ex(
    stream: Option<&Stream>,
    dy: &Tensor,
    indices: &Tensor,
    x_shape: &[usize],
    layout: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "max_pool_backward_indices_ex";
    if layout_of(op, layout)? == Layout::ChannelsFirst {
        return max_pool_backward_indices(stream, dy, indices, x_shape, out);
    }
    floating_only(op, dy)?;
    let r = x_shape.len();
    if !(3..=5).contains(&r) || dy.shape().len() != r {
        return Err(Error::shape(format!(
            "{op}: grad_output {:?} and input shape {x_shape:?} must both have 3 to 5 dims",
            dy.shape()
        )));
    }
    check_indices(op, dy, indices)?;
    crate::base::shape::numel(x_shape)?;
    let xf_shape = Layout::first_shape(x_shape);
    let dyf_shape = Layout::first_shape(dy.shape());
    if dyf_shape[..2] != xf_shape[..2] {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, which does not pool input {x_shape:?}",
            dy.shape()
        )));
    }
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, dy)?;
    let dev = s.device();
    if dev.has_channels_last_pool() {
        let (n, c) = (xf_shape[0], xf_shape[1]);
        let in_vol: usize = xf_shape[2..].iter().product();
        let out_vol: usize = dyf_shape[2..].iter().product();
        dev.max_pool_backward_indices_channels_last(
            s.raw(),
            dy.dtype(),
            dy.ptr(),
            indices.ptr(),
            n,
            c,
            out_vol,
            in_vol,
            o.ptr(),
        )?;
        return Ok(o);
    }
    let dyf = channels_first_copy(&s, dy)?;
    let jf = channels_first_copy(&s, indices)?;
    let rf = max_pool_backward_indices(Some(&s), &dyf, &jf, &xf_shape, None)?;
    permute_into(&s, &rf, &Layout::to_last_perm(r), &o)?;
    Ok(o)
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
    floating_only(op, dy)?;
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
    check_indices(op, dy, indices)?;
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

/// `adaptive_avg_pool2d(x, output_size)` on `[N, C, H, W]`: [`adaptive_avg_pool`].
pub fn adaptive_avg_pool2d(
    stream: Option<&Stream>,
    x: &Tensor,
    output_size: [usize; 2],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d";
    floating_only(op, x)?;
    pool::adaptive_avg_pool2d_shape(op, x.shape(), output_size)?;
    adaptive_avg_pool(stream, x, &output_size, 0, out)
}

/// Gradient of `adaptive_avg_pool2d` with respect to its input of shape `x_shape`.
pub fn adaptive_avg_pool2d_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d_backward";
    floating_only(op, dy)?;
    if dy.shape().len() != 4 {
        return Err(Error::shape(format!(
            "{op}: grad_output must have 4 dimensions, got {:?}",
            dy.shape()
        )));
    }
    pool::adaptive_avg_pool2d_shape(op, x_shape, [dy.shape()[2], dy.shape()[3]])?;
    adaptive_avg_pool_backward(stream, dy, x_shape, 0, out)
}

fn layout_of(op: &str, layout: i64) -> Result<Layout> {
    Layout::from_i32(i32::try_from(layout).unwrap_or(-1), op).map_err(|_| {
        Error::invalid(format!(
            "{op}: layout={layout} is not an rb_layout (0 channels first (NCHW), 1 channels \
             last (NHWC))"
        ))
    })
}

/// The geometry of an adaptive pooling's backward: `x_shape` pooled to `dy`'s spatial
/// extents, `dy` of the pooled shape.
fn adaptive_backward_geom(
    op: &str,
    dy: &Tensor,
    x_shape: &[usize],
    layout: Layout,
) -> Result<pool::AdaptiveGeom> {
    floating_only(op, dy)?;
    let r = dy.shape().len();
    if !(3..=5).contains(&r) || x_shape.len() != r {
        return Err(Error::shape(format!(
            "{op}: grad_output {:?} and input shape {x_shape:?} must both have 3 to 5 dims",
            dy.shape()
        )));
    }
    let osz = match layout {
        Layout::ChannelsFirst => &dy.shape()[2..],
        Layout::ChannelsLast => &dy.shape()[1..r - 1],
    };
    let g = pool::adaptive_geom(op, x_shape, osz, layout)?;
    if dy.shape() != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: grad_output has shape {:?}, the pooling of input {x_shape:?} gives {:?}",
            dy.shape(),
            g.y_shape()
        )));
    }
    Ok(g)
}

/// `adaptive_avg_pool{n}d(x, output_size)` (`n` = `output_size.len()`, 1 to 3) on `x`
/// `[N, C, spatial...]` (`layout` 0) or `[N, spatial..., C]` (`layout` 1, channels last):
/// the mean of window `[floor(o * in / out), ceil((o + 1) * in / out))` per dim (f32
/// accumulation for f32/f16/bf16, f64 for f64).
pub fn adaptive_avg_pool(
    stream: Option<&Stream>,
    x: &Tensor,
    output_size: &[usize],
    layout: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool";
    floating_only(op, x)?;
    let g = pool::adaptive_geom(op, x.shape(), output_size, layout_of(op, layout)?)?;
    let o = output(op, x, out, &g.y_shape(), x.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, x)?;
        s.device().adaptive_pool_forward(
            s.raw(),
            &g,
            false,
            x.dtype(),
            x.ptr(),
            o.ptr(),
            DevPtr::NULL,
        )?;
    }
    Ok(o)
}

/// Gradient of [`adaptive_avg_pool`] with respect to its input of shape `x_shape` (in
/// `layout`), from `dy`.
pub fn adaptive_avg_pool_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    layout: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_avg_pool_backward";
    let g = adaptive_backward_geom(op, dy, x_shape, layout_of(op, layout)?)?;
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, dy)?;
        s.device().adaptive_pool_backward(
            s.raw(),
            &g,
            false,
            dy.dtype(),
            dy.ptr(),
            DevPtr::NULL,
            o.ptr(),
        )?;
    }
    Ok(o)
}

/// `adaptive_max_pool{n}d(x, output_size, return_indices=True)` in `layout` (as
/// [`adaptive_avg_pool`]): the values and PyTorch's indices (i64, the output's shape and
/// layout): the flat index of each maximum within its `[spatial...]` plane, the first in
/// scan order among ties, the last NaN of a window holding NaNs.
pub fn adaptive_max_pool(
    stream: Option<&Stream>,
    x: &Tensor,
    output_size: &[usize],
    layout: i64,
    out: Option<&Tensor>,
    indices: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let op = "adaptive_max_pool";
    floating_only(op, x)?;
    let g = pool::adaptive_geom(op, x.shape(), output_size, layout_of(op, layout)?)?;
    let o = output(op, x, out, &g.y_shape(), x.dtype())?;
    let i = output(op, x, indices, &g.y_shape(), DType::I64)?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, x)?;
        s.device().adaptive_pool_forward(
            s.raw(),
            &g,
            true,
            x.dtype(),
            x.ptr(),
            o.ptr(),
            i.ptr(),
        )?;
    }
    Ok((o, i))
}

/// Gradient of [`adaptive_max_pool`] (PyTorch's `adaptive_max_pool{n}d_backward`): zeros of
/// `x_shape` (in `layout`) with `dy` added at `indices` (i64, `dy`'s shape) of each plane;
/// windows sharing a maximum add up (deterministically). An index outside its output's
/// window is INVALID_ARGUMENT.
pub fn adaptive_max_pool_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    indices: &Tensor,
    x_shape: &[usize],
    layout: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "adaptive_max_pool_backward";
    let g = adaptive_backward_geom(op, dy, x_shape, layout_of(op, layout)?)?;
    check_indices(op, dy, indices)?;
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() > 0 {
        let s = stream_for(op, stream, dy)?;
        s.device().adaptive_pool_backward(
            s.raw(),
            &g,
            true,
            dy.dtype(),
            dy.ptr(),
            indices.ptr(),
            o.ptr(),
        )?;
    }
    Ok(o)
}

/// `indices` of a max pooling's backward: on `dy`'s device, i64, `dy`'s shape.
fn check_indices(op: &str, dy: &Tensor, indices: &Tensor) -> Result<()> {
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
    Ok(())
}

/// The `[N, C, L]` view of an `[N, C, spatial...]` shape.
fn planes(op: &str, shape: &[usize]) -> Result<[usize; 3]> {
    if !(3..=5).contains(&shape.len()) {
        return Err(Error::shape(format!(
            "{op}: input of shape {shape:?} is not [N, C, ...] with 1 to 3 spatial dimensions"
        )));
    }
    Ok([shape[0], shape[1], shape[2..].iter().product()])
}

/// `torch.nn.functional.max_unpool{1,2,3}d(x, indices, ..., output_size)`: zeros of shape
/// `[N, C, output_size...]` with each element of `x` written at the flat spatial position
/// `indices` (i64 or i32, x's shape, as `rb_max_pool_with_indices` gives them) names in its
/// plane. Positions that several elements name get their mean (PyTorch leaves the choice
/// undefined; the mean is each value when they agree, as after an overlapping max pool).
/// Index values outside `[-L, L)`, `L` the output plane's size, are INVALID_ARGUMENT
/// (negative ones count from the end). Floating dtypes and f64 (the f64 scatter-add).
pub fn max_unpool(
    stream: Option<&Stream>,
    x: &Tensor,
    indices: &Tensor,
    output_size: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    use crate::ops::elementwise::BinaryOp;
    use crate::runtime::elementwise::binary;
    let op = "max_unpool";
    floating_only(op, x)?;
    let [n, c, l] = planes(op, x.shape())?;
    if indices.shape() != x.shape() {
        return Err(Error::shape(format!(
            "{op}: indices have shape {:?}, x has {:?}",
            indices.shape(),
            x.shape()
        )));
    }
    if !indices.dtype().is_int() {
        return Err(Error::dtype(format!(
            "{op}: indices have dtype {}, expected i32 or i64",
            indices.dtype()
        )));
    }
    if !same_device(x.device(), indices.device()) {
        return Err(Error::invalid(format!(
            "{op}: indices are on another device than x"
        )));
    }
    if output_size.len() != x.shape().len() - 2 {
        return Err(Error::shape(format!(
            "{op}: output_size {output_size:?} has {} extents, x has {} spatial dimensions",
            output_size.len(),
            x.shape().len() - 2
        )));
    }
    let lo: usize = output_size.iter().product();
    let mut shape = vec![n, c];
    shape.extend_from_slice(output_size);
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let (xv, iv) = (x.reshape(&[n, c, l])?, indices.reshape(&[n, c, l])?);
    let g = crate::ops::data::gather_plan(op, &[n, c, lo], 2, &[n, c, l])?;
    let sums = crate::runtime::data::run_scatter(op, stream, &xv, &iv, &g, &[n, c, lo], None)?;
    let ones = Tensor::empty(x.device().clone(), &[n, c, l], x.dtype())?;
    crate::runtime::data::fill(stream, &ones, 1.0)?;
    let counts = crate::runtime::data::run_scatter(op, stream, &ones, &iv, &g, &[n, c, lo], None)?;
    let one = Tensor::empty(x.device().clone(), &[], x.dtype())?;
    crate::runtime::data::fill(stream, &one, 1.0)?;
    let counts = binary(stream, BinaryOp::Maximum, &counts, &one, Some(&counts))?;
    binary(
        stream,
        BinaryOp::Div,
        &sums,
        &counts,
        Some(&o.reshape(&[n, c, lo])?),
    )?;
    Ok(o)
}

/// The backward of [`max_unpool`] for positions named once (PyTorch's): `dx = dy` read at
/// `indices`, of indices' shape. Floating dtypes and f64 (a gather).
pub fn max_unpool_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    indices: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "max_unpool_backward";
    floating_only(op, dy)?;
    let [n, c, lo] = planes(op, dy.shape())?;
    let [ni, ci, l] = planes(op, indices.shape())?;
    if (ni, ci) != (n, c) || !indices.dtype().is_int() {
        return Err(Error::shape(format!(
            "{op}: indices ({} {:?}) do not match dy {:?} in N and C, or are not integers",
            indices.dtype(),
            indices.shape(),
            dy.shape()
        )));
    }
    let o = output(op, dy, out, indices.shape(), dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let g = crate::ops::data::gather_plan(op, &[n, c, lo], 2, &[n, c, l])?;
    let iv = indices.reshape(&[n, c, l])?;
    crate::runtime::data::run_gather(
        op,
        stream,
        &dy.reshape(&[n, c, lo])?,
        &iv,
        &g,
        &[n, c, l],
        Some(&o.reshape(&[n, c, l])?),
    )?;
    Ok(o)
}

/// `interpolate`'s modes.
pub const INTERP_NEAREST: i64 = 0;
pub const INTERP_LINEAR: i64 = 1;

/// Per output position along one dimension: the source indices and weights (PyTorch's
/// `nearest_idx` and `area_pixel_compute_source_index`, in f32 as its f32 kernels; the
/// linear source in f64 when `wide`, as its double kernels).
fn interp_axis(
    n_in: usize,
    n_out: usize,
    mode: i64,
    align: bool,
    wide: bool,
) -> (Vec<i64>, Vec<i64>, Vec<f64>) {
    let (mut i0, mut i1, mut w1) = (vec![], vec![], vec![]);
    for o in 0..n_out {
        if mode == INTERP_NEAREST {
            let i = if n_out == n_in {
                o
            } else if n_out == 2 * n_in {
                o >> 1
            } else {
                let scale = n_in as f32 / n_out as f32;
                ((o as f32 * scale).floor() as usize).min(n_in - 1)
            };
            i0.push(i as i64);
            continue;
        }
        // PyTorch's opmath: f32 for f32/f16/bf16, f64 for f64.
        let src = if wide {
            if align {
                let scale = if n_out > 1 {
                    (n_in as f64 - 1.0) / (n_out as f64 - 1.0)
                } else {
                    0.0
                };
                scale * o as f64
            } else {
                let scale = n_in as f64 / n_out as f64;
                (scale * (o as f64 + 0.5) - 0.5).max(0.0)
            }
        } else if align {
            let scale = if n_out > 1 {
                (n_in as f32 - 1.0) / (n_out as f32 - 1.0)
            } else {
                0.0
            };
            (scale * o as f32) as f64
        } else {
            let scale = n_in as f32 / n_out as f32;
            (scale * (o as f32 + 0.5) - 0.5).max(0.0) as f64
        };
        let h0 = (src.floor() as usize).min(n_in - 1);
        let h1 = if h0 < n_in - 1 { h0 + 1 } else { h0 };
        i0.push(h0 as i64);
        i1.push(h1 as i64);
        // f32: the f32 difference, as PyTorch's f32 kernels weigh.
        w1.push(if wide {
            src - h0 as f64
        } else {
            (src as f32 - h0 as f32) as f64
        });
    }
    (i0, i1, w1)
}

fn interp_check(op: &str, shape: &[usize], size: &[usize], mode: i64) -> Result<()> {
    if !(3..=5).contains(&shape.len()) || size.len() != shape.len() - 2 {
        return Err(Error::shape(format!(
            "{op}: input {shape:?} must be [N, C, ...] with 1 to 3 spatial dimensions and \
             size {size:?} one extent per spatial dimension"
        )));
    }
    if mode != INTERP_NEAREST && mode != INTERP_LINEAR {
        return Err(Error::invalid(format!(
            "{op}: mode {mode} is not 0 (nearest) or 1 (linear: bilinear, trilinear)"
        )));
    }
    if shape[2..].contains(&0) && size.iter().any(|&s| s > 0) {
        return Err(Error::shape(format!(
            "{op}: cannot resize the empty input {shape:?} to {size:?}"
        )));
    }
    Ok(())
}

/// A `[n, 1, ..., 1]` weight column for dimension `d` of a rank-`nd` tensor.
fn interp_weights(like: &Tensor, w: &[f64], d: usize, nd: usize) -> Result<Tensor> {
    let mut shape = vec![1usize; nd - d];
    shape[0] = w.len();
    crate::runtime::conv::from_f64(like, w, &shape)
}

/// `torch.nn.functional.interpolate(x, size, mode, align_corners)` (ONNX `Resize`) on
/// `[N, C, spatial...]` (1 to 3 spatial dimensions): `mode` 0 is PyTorch's `nearest`, 1 its
/// `linear`/`bilinear`/`trilinear` (by rank) with `align_corners`. Floating dtypes and f64 (nearest
/// takes any dtype).
pub fn interpolate(
    stream: Option<&Stream>,
    x: &Tensor,
    size: &[usize],
    mode: i64,
    align_corners: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    use crate::ops::elementwise::BinaryOp;
    use crate::runtime::elementwise::binary;
    let op = "interpolate";
    interp_check(op, x.shape(), size, mode)?;
    if mode != INTERP_NEAREST {
        floating_only(op, x)?;
    }
    let nd = x.shape().len();
    let mut shape = x.shape()[..2].to_vec();
    shape.extend_from_slice(size);
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let mut cur = x.clone();
    let dims: Vec<usize> = (2..nd)
        .filter(|&d| x.shape()[d] != size[d - 2] || mode == INTERP_LINEAR)
        .collect();
    if dims.is_empty() {
        crate::runtime::data::copy(stream, x, &o)?;
        return Ok(o);
    }
    for (k, &d) in dims.iter().enumerate() {
        let dest = if k + 1 == dims.len() { Some(&o) } else { None };
        let (i0, i1, w1) = interp_axis(
            x.shape()[d],
            size[d - 2],
            mode,
            align_corners,
            x.dtype() == DType::F64,
        );
        let t0 = index_i64(x, &i0)?;
        if mode == INTERP_NEAREST {
            cur = crate::runtime::data::take(stream, &cur, d as i64, &t0, dest)?;
            continue;
        }
        let t1 = index_i64(x, &i1)?;
        let w0: Vec<f64> = w1.iter().map(|w| 1.0 - w).collect();
        let a = crate::runtime::data::take(stream, &cur, d as i64, &t0, None)?;
        let b = crate::runtime::data::take(stream, &cur, d as i64, &t1, None)?;
        let a = binary(
            stream,
            BinaryOp::Mul,
            &a,
            &interp_weights(x, &w0, d, nd)?,
            Some(&a),
        )?;
        let b = binary(
            stream,
            BinaryOp::Mul,
            &b,
            &interp_weights(x, &w1, d, nd)?,
            Some(&b),
        )?;
        cur = binary(stream, BinaryOp::Add, &a, &b, dest)?;
    }
    Ok(o)
}

fn index_i64(like: &Tensor, v: &[i64]) -> Result<Tensor> {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
    Tensor::from_bytes(like.device().clone(), &bytes, &[v.len()], DType::I64)
}

/// The backward of [`interpolate`] with the same `size`, `mode` and `align_corners`: the
/// gradient of the input of shape `x_shape` (each output's gradient added back to the inputs
/// it read, with their weights). Floating dtypes and f64.
pub fn interpolate_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    mode: i64,
    align_corners: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    use crate::ops::elementwise::BinaryOp;
    use crate::runtime::elementwise::binary;
    let op = "interpolate_backward";
    floating_only(op, dy)?;
    let nd = dy.shape().len();
    if nd != x_shape.len() || nd < 3 || dy.shape()[..2] != x_shape[..2] {
        return Err(Error::shape(format!(
            "{op}: dy {:?} and x_shape {x_shape:?} differ in rank, N or C",
            dy.shape()
        )));
    }
    let size = dy.shape()[2..].to_vec();
    interp_check(op, x_shape, &size, mode)?;
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    if dy.numel() == 0 {
        crate::runtime::data::fill(stream, &o, 0.0)?;
        return Ok(o);
    }
    let dims: Vec<usize> = (2..nd)
        .filter(|&d| x_shape[d] != size[d - 2] || mode == INTERP_LINEAR)
        .collect();
    if dims.is_empty() {
        crate::runtime::data::copy(stream, dy, &o)?;
        return Ok(o);
    }
    // The forward walked dims in order, so the input of step k has x's extents before it.
    let mut cur = dy.clone();
    for (k, &d) in dims.iter().enumerate().rev() {
        let dest = if k == 0 { Some(&o) } else { None };
        let mut in_shape = cur.shape().to_vec();
        in_shape[d] = x_shape[d];
        let (i0, i1, w1) = interp_axis(
            x_shape[d],
            size[d - 2],
            mode,
            align_corners,
            dy.dtype() == DType::F64,
        );
        let t0 = index_i64(dy, &i0)?;
        if mode == INTERP_NEAREST {
            cur =
                crate::runtime::data::take_backward(stream, &cur, &in_shape, d as i64, &t0, dest)?;
            continue;
        }
        let t1 = index_i64(dy, &i1)?;
        let w0: Vec<f64> = w1.iter().map(|w| 1.0 - w).collect();
        let g0 = binary(
            stream,
            BinaryOp::Mul,
            &cur,
            &interp_weights(dy, &w0, d, nd)?,
            None,
        )?;
        let g1 = binary(
            stream,
            BinaryOp::Mul,
            &cur,
            &interp_weights(dy, &w1, d, nd)?,
            None,
        )?;
        let a = crate::runtime::data::take_backward(stream, &g0, &in_shape, d as i64, &t0, None)?;
        let b = crate::runtime::data::take_backward(stream, &g1, &in_shape, d as i64, &t1, None)?;
        cur = binary(stream, BinaryOp::Add, &a, &b, dest)?;
    }
    Ok(o)
}
