//! MIOpen/cuDNN-style primitives on device pointers: convolution, pooling, reductions over
//! the middle axis of `[outer, r, inner]`, softmax and the normalizations. Shapes are dense
//! row-major NC(D)HW (`ndim + 2` extents) or the flat layouts of [`crate::ops::nn`]; errors
//! name the `rb_dnn_*` entry point.
#![allow(clippy::too_many_arguments)]

use super::{device_of, float_dtype, need, required, target, zero};
use crate::base::dtype::DType;
use crate::base::shape;
use crate::device::DevPtr;
use crate::ops::conv::{self, Activation, ConvAttrs, ConvGeom};
use crate::ops::nn::{BatchNormDesc, GroupNormDesc, RowNormDesc, SoftmaxDesc};
use crate::ops::pool::{self, PoolAttrs, PoolGeom, PoolKind};
use crate::ops::reduce::{self, ReduceDesc, ReduceOp};
use crate::runtime::Stream;
use crate::{Error, Result};

// ---------------------------------------------------------------------------- convolution

/// The geometry of a raw convolution, checked against all three shapes (`y_shape`: when
/// given).
fn conv_geom(
    op: &str,
    attrs: &ConvAttrs,
    ndim: usize,
    x_shape: &[usize],
    w_shape: &[usize],
    y_shape: Option<&[usize]>,
) -> Result<ConvGeom> {
    let g = conv::conv_geom(op, x_shape, w_shape, attrs, ndim)?;
    if let Some(ys) = y_shape
        && ys != g.y_shape()
    {
        return Err(Error::shape(format!(
            "{op}: y_shape {ys:?} is not the convolution's output shape {:?}",
            g.y_shape()
        )));
    }
    g.validate(op)?;
    Ok(g)
}

/// Bytes of workspace the convolutions can use for this problem (`x_shape`, `w_shape`:
/// `ndim + 2` extents each).
pub fn conv_workspace_size(
    stream: Option<&Stream>,
    dtype: DType,
    attrs: &ConvAttrs,
    ndim: usize,
    x_shape: &[usize],
    w_shape: &[usize],
) -> Result<usize> {
    let op = "rb_dnn_conv_workspace_size";
    float_dtype(op, dtype)?;
    let g = conv_geom(op, attrs, ndim, x_shape, w_shape, None)?;
    let (dev, _) = device_of(stream);
    dev.conv_workspace_size(&g, dtype)
}

/// `y = activation(conv(x, w) + bias)`; `y_shape`, when given, must be the output shape. An
/// empty output does nothing; an empty input with a non-empty output is UNSUPPORTED.
pub fn conv_forward(
    stream: Option<&Stream>,
    dtype: DType,
    attrs: &ConvAttrs,
    ndim: usize,
    x_shape: &[usize],
    x: DevPtr,
    w_shape: &[usize],
    w: DevPtr,
    bias: Option<DevPtr>,
    act: Activation,
    y_shape: Option<&[usize]>,
    y: DevPtr,
    workspace: DevPtr,
    workspace_bytes: usize,
) -> Result<()> {
    let op = "rb_dnn_conv_forward";
    float_dtype(op, dtype)?;
    let g = conv_geom(op, attrs, ndim, x_shape, w_shape, y_shape)?;
    let (xn, yn) = (g.n * g.c_in * g.in_vol(), g.n * g.c_out * g.out_vol());
    if yn == 0 {
        return Ok(());
    }
    let (x, w, y) = (need(x, xn, "x")?, need(w, g.c_out, "w")?, need(y, yn, "y")?);
    if xn == 0 {
        return Err(Error::unsupported(format!(
            "{op}: an input with no elements is not supported by the raw entry point"
        )));
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.conv_forward(
        raw,
        &g,
        dtype,
        x,
        w,
        bias,
        act,
        y,
        workspace,
        workspace_bytes,
    )
}

/// `dx` (shape `x_shape`, overwritten) from `dy` (shape `y_shape`) and `w`; zeros when the
/// output is empty.
pub fn conv_backward_data(
    stream: Option<&Stream>,
    dtype: DType,
    attrs: &ConvAttrs,
    ndim: usize,
    x_shape: &[usize],
    dx: DevPtr,
    w_shape: &[usize],
    w: DevPtr,
    y_shape: Option<&[usize]>,
    dy: DevPtr,
    workspace: DevPtr,
    workspace_bytes: usize,
) -> Result<()> {
    let op = "rb_dnn_conv_backward_data";
    float_dtype(op, dtype)?;
    let g = conv_geom(op, attrs, ndim, x_shape, w_shape, y_shape)?;
    let (xn, yn) = (g.n * g.c_in * g.in_vol(), g.n * g.c_out * g.out_vol());
    if xn == 0 {
        return Ok(());
    }
    let (dx, w, dy) = (
        need(dx, xn, "dx")?,
        need(w, g.c_out, "w")?,
        need(dy, yn, "dy")?,
    );
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if yn == 0 {
        return dev.memset(dx, 0, xn * dtype.size(), raw);
    }
    dev.conv_backward_data(raw, &g, dtype, dy, w, dx, workspace, workspace_bytes)
}

/// `dw` (shape `w_shape`, overwritten) from `x` and `dy`, and the bias gradient (`[K]`) into
/// `db` when given; zeros when the output is empty.
pub fn conv_backward_weights(
    stream: Option<&Stream>,
    dtype: DType,
    attrs: &ConvAttrs,
    ndim: usize,
    x_shape: &[usize],
    x: DevPtr,
    w_shape: &[usize],
    dw: DevPtr,
    y_shape: Option<&[usize]>,
    dy: DevPtr,
    db: Option<DevPtr>,
    workspace: DevPtr,
    workspace_bytes: usize,
) -> Result<()> {
    let op = "rb_dnn_conv_backward_weights";
    float_dtype(op, dtype)?;
    let g = conv_geom(op, attrs, ndim, x_shape, w_shape, y_shape)?;
    let (xn, yn) = (g.n * g.c_in * g.in_vol(), g.n * g.c_out * g.out_vol());
    let (x, dw, dy) = (
        need(x, xn, "x")?,
        need(dw, g.c_out, "dw")?,
        need(dy, yn, "dy")?,
    );
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if yn == 0 {
        let wn = g.c_out * (g.c_in / g.groups) * g.k_vol();
        dev.memset(dw, 0, wn * dtype.size(), raw)?;
        if let Some(d) = db {
            dev.memset(d, 0, g.c_out * dtype.size(), raw)?;
        }
        return Ok(());
    }
    dev.conv_backward_weight(raw, &g, dtype, x, dy, dw, db, workspace, workspace_bytes)
}

// -------------------------------------------------------------------------------- pooling

/// The geometry of a raw pooling call; `y_shape` must be the output shape.
fn pool_geom(
    op: &str,
    kind: PoolKind,
    attrs: &PoolAttrs,
    ndim: usize,
    x_shape: &[usize],
    y_shape: &[usize],
) -> Result<PoolGeom> {
    let g = pool::pool_geom(op, kind, x_shape, attrs, ndim)?;
    if y_shape != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: y_shape {y_shape:?} is not the pooling output shape {:?}",
            g.y_shape()
        )));
    }
    Ok(g)
}

/// Pooling forward from `x` (shape `x_shape`) into `y` (shape `y_shape`).
pub fn pool_forward(
    stream: Option<&Stream>,
    dtype: DType,
    kind: PoolKind,
    attrs: &PoolAttrs,
    ndim: usize,
    x_shape: &[usize],
    x: DevPtr,
    y_shape: &[usize],
    y: DevPtr,
) -> Result<()> {
    let op = "rb_dnn_pool_forward";
    float_dtype(op, dtype)?;
    let g = pool_geom(op, kind, attrs, ndim, x_shape, y_shape)?;
    let yn = g.n * g.c * g.out_vol();
    if yn == 0 {
        return Ok(());
    }
    let (x, y) = (need(x, yn, "x")?, need(y, yn, "y")?);
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.pool_forward(raw, &g, dtype, x, y)
}

/// Pooling backward: `dx` (shape `x_shape`, overwritten) from `x` and `dy` (shape
/// `y_shape`).
pub fn pool_backward(
    stream: Option<&Stream>,
    dtype: DType,
    kind: PoolKind,
    attrs: &PoolAttrs,
    ndim: usize,
    x_shape: &[usize],
    x: DevPtr,
    y_shape: &[usize],
    dy: DevPtr,
    dx: DevPtr,
) -> Result<()> {
    let op = "rb_dnn_pool_backward";
    float_dtype(op, dtype)?;
    let g = pool_geom(op, kind, attrs, ndim, x_shape, y_shape)?;
    let xn = g.n * g.c * g.in_vol();
    if xn == 0 {
        return Ok(());
    }
    let (x, dy, dx) = (need(x, xn, "x")?, need(dy, xn, "dy")?, need(dx, xn, "dx")?);
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.pool_backward(raw, &g, dtype, x, dy, dx)
}

// ----------------------------------------------------------------------------- reductions

/// `outer * r * inner` elements (of up to 8 bytes) must be addressable.
fn check_reduce(d: &ReduceDesc) -> Result<()> {
    d.outer
        .checked_mul(d.r)
        .and_then(|v| v.checked_mul(d.inner))
        .and_then(|v| v.checked_mul(8))
        .ok_or_else(|| Error::invalid("outer * r * inner overflows"))?;
    Ok(())
}

/// `y[o, i] = op(x[o, :, i])` over a contiguous `[outer, r, inner]` array; max and min
/// refuse an empty `r`.
pub fn reduce(
    stream: Option<&Stream>,
    op: ReduceOp,
    dtype: DType,
    x: DevPtr,
    d: &ReduceDesc,
    y: DevPtr,
) -> Result<()> {
    let name = "rb_dnn_reduce";
    float_dtype(name, dtype)?;
    check_reduce(d)?;
    if matches!(op, ReduceOp::Max | ReduceOp::Min) {
        reduce::check_nonempty(name, &[d.outer, d.r, d.inner], d)?;
    }
    let yn = d.outer * d.inner;
    if yn == 0 {
        return Ok(());
    }
    let (x, y) = (need(x, yn * d.r, "x")?, need(y, yn, "y")?);
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.reduce(raw, op, dtype, x, y, d)
}

/// `y[o, i]` (int64) = the index of the largest `x[o, :, i]`; an empty `r` is refused when
/// there are outputs.
pub fn argmax(
    stream: Option<&Stream>,
    dtype: DType,
    x: DevPtr,
    d: &ReduceDesc,
    y: DevPtr,
) -> Result<()> {
    let name = "rb_dnn_argmax";
    float_dtype(name, dtype)?;
    check_reduce(d)?;
    let yn = d.outer * d.inner;
    if yn == 0 {
        return Ok(());
    }
    reduce::check_nonempty(name, &[d.outer, d.r, d.inner], d)?;
    let (x, y) = (need(x, yn * d.r, "x")?, need(y, yn, "y")?);
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.argmax(raw, dtype, x, y, d)
}

// ------------------------------------------------------------------ softmax, normalization

/// The element count of `sh` must not overflow.
fn count(op: &str, sh: &[usize]) -> Result<usize> {
    shape::numel(sh).map_err(|e| e.context(op))
}

/// The extents of a normalization: the element count, and every buffer it describes (any
/// product of its extents, e.g. the `c` per-channel gradients of an empty batch, which are
/// zeroed) must fit in bytes of elements of up to 8 bytes.
fn extents(op: &str, sh: &[usize]) -> Result<()> {
    count(op, sh)?;
    sh.iter()
        .try_fold(8usize, |a, &e| a.checked_mul(e.max(1)))
        .ok_or_else(|| Error::invalid(format!("{op}: the sizes {sh:?} overflow a buffer")))?;
    Ok(())
}

/// Softmax (`log` false) or log-softmax over the middle axis of `[outer, dim, inner]`.
pub fn softmax_forward(
    stream: Option<&Stream>,
    dtype: DType,
    log: bool,
    outer: usize,
    dim: usize,
    inner: usize,
    x: DevPtr,
    y: DevPtr,
) -> Result<()> {
    let op = "rb_dnn_softmax_forward";
    float_dtype(op, dtype)?;
    count(op, &[outer, dim, inner])?;
    let d = SoftmaxDesc::new(op, &[outer, dim, inner], 1, log)?;
    if d.numel() == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.softmax(raw, dtype, &d, required(x, "x")?, required(y, "y")?)
}

/// Backward of [`softmax_forward`] from its output `y` and output gradient `dy` into `dx`.
pub fn softmax_backward(
    stream: Option<&Stream>,
    dtype: DType,
    log: bool,
    outer: usize,
    dim: usize,
    inner: usize,
    y: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
) -> Result<()> {
    let op = "rb_dnn_softmax_backward";
    float_dtype(op, dtype)?;
    count(op, &[outer, dim, inner])?;
    let d = SoftmaxDesc::new(op, &[outer, dim, inner], 1, log)?;
    if d.numel() == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    let (y, dy, dx) = (required(y, "y")?, required(dy, "dy")?, required(dx, "dx")?);
    dev.softmax_backward(raw, dtype, &d, y, dy, dx)
}

fn row_norm_desc(
    op: &str,
    dtype: DType,
    rows: usize,
    cols: usize,
    eps: f64,
) -> Result<RowNormDesc> {
    float_dtype(op, dtype)?;
    extents(op, &[rows, cols])?;
    RowNormDesc::new(op, &[rows, cols], &[cols], eps)
}

/// layer_norm of each row of `[rows, cols]`; `weight`, `bias`, `mean` and `rstd` may be NULL.
pub fn layer_norm_forward(
    stream: Option<&Stream>,
    dtype: DType,
    rows: usize,
    cols: usize,
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    bias: DevPtr,
    y: DevPtr,
    mean: DevPtr,
    rstd: DevPtr,
) -> Result<()> {
    let d = row_norm_desc("rb_dnn_layer_norm_forward", dtype, rows, cols, eps)?;
    if d.rows * d.cols == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    let (x, y) = (required(x, "x")?, required(y, "y")?);
    dev.layer_norm(raw, dtype, &d, x, weight, bias, y, mean, rstd)
}

/// layer_norm backward (statistics recomputed from `x`); `dx`, `dweight`, `dbias` may each
/// be NULL to skip. An empty input zeroes `dweight` and `dbias`.
pub fn layer_norm_backward(
    stream: Option<&Stream>,
    dtype: DType,
    rows: usize,
    cols: usize,
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    dweight: DevPtr,
    dbias: DevPtr,
) -> Result<()> {
    let d = row_norm_desc("rb_dnn_layer_norm_backward", dtype, rows, cols, eps)?;
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if d.rows * d.cols == 0 {
        return zero(&dev, raw, dtype, &[dweight, dbias], d.cols);
    }
    let (x, dy) = (required(x, "x")?, required(dy, "dy")?);
    dev.layer_norm_backward(raw, dtype, &d, x, weight, dy, dx, dweight, dbias)
}

/// rms_norm of each row of `[rows, cols]`; `weight` and `rstd` may be NULL.
pub fn rms_norm_forward(
    stream: Option<&Stream>,
    dtype: DType,
    rows: usize,
    cols: usize,
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    y: DevPtr,
    rstd: DevPtr,
) -> Result<()> {
    let d = row_norm_desc("rb_dnn_rms_norm_forward", dtype, rows, cols, eps)?;
    if d.rows * d.cols == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    let (x, y) = (required(x, "x")?, required(y, "y")?);
    dev.rms_norm(raw, dtype, &d, x, weight, y, rstd)
}

/// rms_norm backward; `dx` and `dweight` may each be NULL to skip. An empty input zeroes
/// `dweight`.
pub fn rms_norm_backward(
    stream: Option<&Stream>,
    dtype: DType,
    rows: usize,
    cols: usize,
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    dweight: DevPtr,
) -> Result<()> {
    let d = row_norm_desc("rb_dnn_rms_norm_backward", dtype, rows, cols, eps)?;
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if d.rows * d.cols == 0 {
        return zero(&dev, raw, dtype, &[dweight], d.cols);
    }
    let (x, dy) = (required(x, "x")?, required(dy, "dy")?);
    dev.rms_norm_backward(raw, dtype, &d, x, weight, dy, dx, dweight)
}

/// The desc of a raw group_norm: `groups` must divide a positive channel count (with no
/// channels no group count has data behind it).
fn group_norm_desc(
    op: &str,
    dtype: DType,
    [n, c, hw]: [usize; 3],
    groups: usize,
    eps: f64,
) -> Result<GroupNormDesc> {
    float_dtype(op, dtype)?;
    extents(op, &[n, c, hw])?;
    let d = GroupNormDesc::new(op, &[n, c, hw], groups, eps)?;
    if d.c == 0 {
        return Err(Error::invalid(format!(
            "{op}: num_groups={groups} needs a positive channel count to divide, got c=0"
        )));
    }
    Ok(d)
}

/// group_norm of `[n, c, hw]` with `groups` dividing `c`; `weight`, `bias`, `mean` and
/// `rstd` may be NULL.
pub fn group_norm_forward(
    stream: Option<&Stream>,
    dtype: DType,
    shape: [usize; 3],
    groups: usize,
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    bias: DevPtr,
    y: DevPtr,
    mean: DevPtr,
    rstd: DevPtr,
) -> Result<()> {
    let d = group_norm_desc("rb_dnn_group_norm_forward", dtype, shape, groups, eps)?;
    if d.n * d.c * d.hw == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    let (x, y) = (required(x, "x")?, required(y, "y")?);
    dev.group_norm(raw, dtype, &d, x, weight, bias, y, mean, rstd)
}

/// group_norm backward; `dx`, `dweight`, `dbias` may each be NULL to skip. An empty input
/// zeroes `dweight` and `dbias`.
pub fn group_norm_backward(
    stream: Option<&Stream>,
    dtype: DType,
    shape: [usize; 3],
    groups: usize,
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    dweight: DevPtr,
    dbias: DevPtr,
) -> Result<()> {
    let d = group_norm_desc("rb_dnn_group_norm_backward", dtype, shape, groups, eps)?;
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if d.n * d.c * d.hw == 0 {
        return zero(&dev, raw, dtype, &[dweight, dbias], d.c);
    }
    let (x, dy) = (required(x, "x")?, required(dy, "dy")?);
    dev.group_norm_backward(raw, dtype, &d, x, weight, dy, dx, dweight, dbias)
}

/// batch_norm in training mode on `[n, c, hw]`: `running_mean` and `running_var` are both
/// given or both NULL; `weight`, `bias`, `save_mean` and `save_invstd` may be NULL.
pub fn batch_norm_forward_training(
    stream: Option<&Stream>,
    dtype: DType,
    shape: [usize; 3],
    momentum: f64,
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    bias: DevPtr,
    running_mean: DevPtr,
    running_var: DevPtr,
    y: DevPtr,
    save_mean: DevPtr,
    save_invstd: DevPtr,
) -> Result<()> {
    let op = "rb_dnn_batch_norm_forward_training";
    float_dtype(op, dtype)?;
    extents(op, &shape)?;
    let d = BatchNormDesc::new(op, &shape, true, momentum, eps)?;
    if running_mean.is_null() != running_var.is_null() {
        return Err(Error::invalid(format!(
            "{op}: running_mean and running_var must be given together"
        )));
    }
    if d.n * d.c * d.hw == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    let (x, y) = (required(x, "x")?, required(y, "y")?);
    dev.batch_norm(
        raw,
        dtype,
        &d,
        x,
        weight,
        bias,
        running_mean,
        running_var,
        y,
        save_mean,
        save_invstd,
    )
}

/// batch_norm in inference mode on `[n, c, hw]` with the running statistics (required).
pub fn batch_norm_forward_inference(
    stream: Option<&Stream>,
    dtype: DType,
    shape: [usize; 3],
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    bias: DevPtr,
    running_mean: DevPtr,
    running_var: DevPtr,
    y: DevPtr,
) -> Result<()> {
    let op = "rb_dnn_batch_norm_forward_inference";
    float_dtype(op, dtype)?;
    extents(op, &shape)?;
    let d = BatchNormDesc::new(op, &shape, false, 0.0, eps)?;
    if d.n * d.c * d.hw == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    let x = required(x, "x")?;
    let (rm, rv) = (
        required(running_mean, "running_mean")?,
        required(running_var, "running_var")?,
    );
    let y = required(y, "y")?;
    dev.batch_norm(
        raw,
        dtype,
        &d,
        x,
        weight,
        bias,
        rm,
        rv,
        y,
        DevPtr::NULL,
        DevPtr::NULL,
    )
}

/// batch_norm backward (training mode, batch statistics recomputed from `x`); `dx`,
/// `dweight`, `dbias` may each be NULL to skip. An empty input zeroes `dweight` and `dbias`.
pub fn batch_norm_backward(
    stream: Option<&Stream>,
    dtype: DType,
    shape: [usize; 3],
    eps: f64,
    x: DevPtr,
    weight: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    dweight: DevPtr,
    dbias: DevPtr,
) -> Result<()> {
    let op = "rb_dnn_batch_norm_backward";
    float_dtype(op, dtype)?;
    extents(op, &shape)?;
    let d = BatchNormDesc::new(op, &shape, true, 0.0, eps)?;
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if d.n * d.c * d.hw == 0 {
        return zero(&dev, raw, dtype, &[dweight, dbias], d.c);
    }
    let (x, dy) = (required(x, "x")?, required(dy, "dy")?);
    dev.batch_norm_backward(
        raw,
        dtype,
        &d,
        x,
        weight,
        DevPtr::NULL,
        DevPtr::NULL,
        dy,
        dx,
        dweight,
        dbias,
    )
}
