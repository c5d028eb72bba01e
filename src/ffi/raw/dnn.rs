//! The raw MIOpen/cuDNN-style entry points on device pointers (`rb_dnn_*`): convolution,
//! pooling, reductions, softmax and the normalizations. Shapes are `int64_t` extents (NC(D)HW
//! arrays of `params.ndim + 2` for convolution and pooling, flat sizes otherwise), pointers
//! address memory of the stream's device (host memory for the CPU device), and work is queued
//! on the stream (NULL: the current device's default stream). The checks and the calls:
//! [`crate::runtime::raw::dnn`].

use super::{dp, dp_opt};
use crate::ffi::args::{
    activation as act_arg, conv_params, pool_mode as pool_mode_arg, pool_params,
};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::{raw_stream_arg, rb_stream};
use crate::ffi::types::{rb_conv_params, rb_pool_params};
use crate::ffi::util::{check_out, shape_arg};
use crate::ops::reduce::{ReduceDesc, ReduceOp};
use crate::runtime::DType;
use crate::runtime::raw::dnn;
use crate::{Error, Result};
use std::ffi::c_void;

fn size(v: i64, arg: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(format!("{arg}={v} is negative")))
}

fn reduce_op_arg(v: i32) -> Result<ReduceOp> {
    Ok(match v {
        0 => ReduceOp::Sum,
        1 => ReduceOp::Mean,
        2 => ReduceOp::Max,
        3 => ReduceOp::Min,
        4 => ReduceOp::Prod,
        _ => {
            return Err(Error::invalid(format!(
                "op={v} is not an rb_reduce_op (0 sum .. 4 prod)"
            )));
        }
    })
}

/// The `[outer, r, inner]` extents of a raw reduction.
fn reduce_desc(outer: i64, r: i64, inner: i64) -> Result<ReduceDesc> {
    Ok(ReduceDesc {
        outer: size(outer, "outer")?,
        r: size(r, "r")?,
        inner: size(inner, "inner")?,
    })
}

type ConvShapes = (Vec<usize>, Vec<usize>, Option<Vec<usize>>);

/// The three shapes of a raw convolution, `ndim + 2` extents each (`y_shape` may be NULL).
///
/// # Safety
/// Each shape pointer is NULL or points to `ndim + 2` readable `int64_t`.
unsafe fn conv_shapes(
    ndim: usize,
    x_shape: *const i64,
    w_shape: *const i64,
    y_shape: *const i64,
) -> Result<ConvShapes> {
    // SAFETY: caller's contract.
    unsafe {
        let xs = shape_arg(x_shape, ndim + 2, "x_shape")?;
        let ws = shape_arg(w_shape, ndim + 2, "w_shape")?;
        let ys = if y_shape.is_null() {
            None
        } else {
            Some(shape_arg(y_shape, ndim + 2, "y_shape")?)
        };
        Ok((xs, ws, ys))
    }
}

/// `[n, c, hw]` of the channel norms.
fn nchw(n: i64, c: i64, hw: i64) -> Result<[usize; 3]> {
    Ok([size(n, "n")?, size(c, "c")?, size(hw, "hw")?])
}

/// Bytes of workspace the convolution calls below can use for this problem (`x_shape`,
/// `w_shape`: `params.ndim + 2` extents each). A smaller (or NULL) workspace is allowed: the
/// device then uses scratch memory of its own.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT; `*size` is then unchanged.
/// Thread-safe.
///
/// # Safety
/// Shapes point to `params.ndim + 2` readable `int64_t`; `size` is valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_conv_workspace_size(
    stream: *mut rb_stream,
    dtype: i32,
    params: *const rb_conv_params,
    x_shape: *const i64,
    w_shape: *const i64,
    size: *mut usize,
) -> rb_status {
    guard("rb_dnn_conv_workspace_size", || {
        let dt = DType::from_i32(dtype)?;
        let (a, nd) = unsafe { conv_params(params) }?;
        let (xs, ws, _) = unsafe { conv_shapes(nd, x_shape, w_shape, std::ptr::null()) }?;
        check_out(size, "size")?;
        let s = raw_stream_arg(stream)?;
        let n = dnn::conv_workspace_size(s.as_deref(), dt, &a, nd, &xs, &ws)?;
        unsafe { *size = n };
        Ok(())
    })
}

/// Convolution forward on device pointers: `y = activation(conv(x, w) + bias)`, `bias`
/// (`[K]`) may be NULL, `activation` an `rb_activation`. Shapes are `params.ndim + 2`
/// extents (`y_shape` must be the output shape). `workspace` (may be NULL) of
/// `workspace_bytes` bytes, see `rb_dnn_conv_workspace_size`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH, RB_STATUS_INVALID_ARGUMENT or RB_STATUS_UNSUPPORTED (a device
/// without it); `y` is then unchanged. Thread-safe for distinct `y` and workspaces.
///
/// # Safety
/// Pointers address device memory of the described sizes; shapes as above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_conv_forward(
    stream: *mut rb_stream,
    dtype: i32,
    params: *const rb_conv_params,
    x_shape: *const i64,
    x: *const c_void,
    w_shape: *const i64,
    w: *const c_void,
    bias: *const c_void,
    activation: i32,
    y_shape: *const i64,
    y: *mut c_void,
    workspace: *mut c_void,
    workspace_bytes: usize,
) -> rb_status {
    guard("rb_dnn_conv_forward", || {
        let dt = DType::from_i32(dtype)?;
        let (a, nd) = unsafe { conv_params(params) }?;
        let (xs, ws, ys) = unsafe { conv_shapes(nd, x_shape, w_shape, y_shape) }?;
        let act = act_arg(activation)?;
        let s = raw_stream_arg(stream)?;
        dnn::conv_forward(
            s.as_deref(),
            dt,
            &a,
            nd,
            &xs,
            dp(x),
            &ws,
            dp(w),
            dp_opt(bias),
            act,
            ys.as_deref(),
            dp(y),
            dp(workspace),
            workspace_bytes,
        )
    })
}

/// Convolution backward data on device pointers: `dx` (shape `x_shape`, overwritten) from
/// `dy` (shape `y_shape`) and `w`.
///
/// Failures as `rb_dnn_conv_forward`; `dx` is then unchanged. Thread-safe for distinct `dx`.
///
/// # Safety
/// As `rb_dnn_conv_forward`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_conv_backward_data(
    stream: *mut rb_stream,
    dtype: i32,
    params: *const rb_conv_params,
    x_shape: *const i64,
    dx: *mut c_void,
    w_shape: *const i64,
    w: *const c_void,
    y_shape: *const i64,
    dy: *const c_void,
    workspace: *mut c_void,
    workspace_bytes: usize,
) -> rb_status {
    guard("rb_dnn_conv_backward_data", || {
        let dt = DType::from_i32(dtype)?;
        let (a, nd) = unsafe { conv_params(params) }?;
        let (xs, ws, ys) = unsafe { conv_shapes(nd, x_shape, w_shape, y_shape) }?;
        let s = raw_stream_arg(stream)?;
        dnn::conv_backward_data(
            s.as_deref(),
            dt,
            &a,
            nd,
            &xs,
            dp(dx),
            &ws,
            dp(w),
            ys.as_deref(),
            dp(dy),
            dp(workspace),
            workspace_bytes,
        )
    })
}

/// Convolution backward weights on device pointers: `dw` (shape `w_shape`, overwritten) from
/// `x` and `dy`; when `db` is not NULL it gets the bias gradient (`[K]`).
///
/// Failures as `rb_dnn_conv_forward`; `dw`/`db` are then unchanged. Thread-safe for distinct
/// outputs.
///
/// # Safety
/// As `rb_dnn_conv_forward`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_conv_backward_weights(
    stream: *mut rb_stream,
    dtype: i32,
    params: *const rb_conv_params,
    x_shape: *const i64,
    x: *const c_void,
    w_shape: *const i64,
    dw: *mut c_void,
    y_shape: *const i64,
    dy: *const c_void,
    db: *mut c_void,
    workspace: *mut c_void,
    workspace_bytes: usize,
) -> rb_status {
    guard("rb_dnn_conv_backward_weights", || {
        let dt = DType::from_i32(dtype)?;
        let (a, nd) = unsafe { conv_params(params) }?;
        let (xs, ws, ys) = unsafe { conv_shapes(nd, x_shape, w_shape, y_shape) }?;
        let s = raw_stream_arg(stream)?;
        dnn::conv_backward_weights(
            s.as_deref(),
            dt,
            &a,
            nd,
            &xs,
            dp(x),
            &ws,
            dp(dw),
            ys.as_deref(),
            dp(dy),
            dp_opt(db),
            dp(workspace),
            workspace_bytes,
        )
    })
}

/// Pooling forward on device pointers (`mode`: an `rb_pool_mode`); shapes are
/// `params.ndim + 2` extents and `y_shape` must be the output shape.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH, RB_STATUS_INVALID_ARGUMENT or RB_STATUS_UNSUPPORTED; `y` is then
/// unchanged. Thread-safe for distinct `y`.
///
/// # Safety
/// Pointers address device memory of the described sizes; shapes point to `params.ndim + 2`
/// readable `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_pool_forward(
    stream: *mut rb_stream,
    dtype: i32,
    mode: i32,
    params: *const rb_pool_params,
    x_shape: *const i64,
    x: *const c_void,
    y_shape: *const i64,
    y: *mut c_void,
) -> rb_status {
    guard("rb_dnn_pool_forward", || {
        let dt = DType::from_i32(dtype)?;
        let kind = pool_mode_arg(mode)?;
        let (a, nd) = unsafe { pool_params(params) }?;
        let xs = unsafe { shape_arg(x_shape, nd + 2, "x_shape") }?;
        let ys = unsafe { shape_arg(y_shape, nd + 2, "y_shape") }?;
        let s = raw_stream_arg(stream)?;
        dnn::pool_forward(s.as_deref(), dt, kind, &a, nd, &xs, dp(x), &ys, dp(y))
    })
}

/// Pooling backward on device pointers: `dx` (shape `x_shape`, overwritten) from `x` and `dy`
/// (shape `y_shape`).
///
/// Failures as `rb_dnn_pool_forward`; `dx` is then unchanged. Thread-safe for distinct `dx`.
///
/// # Safety
/// As `rb_dnn_pool_forward`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_pool_backward(
    stream: *mut rb_stream,
    dtype: i32,
    mode: i32,
    params: *const rb_pool_params,
    x_shape: *const i64,
    x: *const c_void,
    y_shape: *const i64,
    dy: *const c_void,
    dx: *mut c_void,
) -> rb_status {
    guard("rb_dnn_pool_backward", || {
        let dt = DType::from_i32(dtype)?;
        let kind = pool_mode_arg(mode)?;
        let (a, nd) = unsafe { pool_params(params) }?;
        let xs = unsafe { shape_arg(x_shape, nd + 2, "x_shape") }?;
        let ys = unsafe { shape_arg(y_shape, nd + 2, "y_shape") }?;
        let s = raw_stream_arg(stream)?;
        dnn::pool_backward(
            s.as_deref(),
            dt,
            kind,
            &a,
            nd,
            &xs,
            dp(x),
            &ys,
            dp(dy),
            dp(dx),
        )
    })
}

/// Reduction over the middle axis of a contiguous row-major `[outer, r, inner]` array on
/// device pointers: `y[o, i] = op(x[o, :, i])` (`op` an `rb_reduce_op`), `y` holding
/// `outer * inner` elements of `dtype` (RB_DTYPE_F32, RB_DTYPE_F16 or RB_DTYPE_BF16; sums
/// accumulate in f64 on the CPU, at least f32 on GPUs). An empty `r` gives 0 (sum), NaN
/// (mean) or 1 (prod); max and min refuse it. `x` may be NULL when it has no elements, `y`
/// when `outer * inner` is 0.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad `op` or dtype value, negative or overflowing extent,
/// max/min over `r == 0`), RB_STATUS_DTYPE_MISMATCH (a non-floating dtype) or
/// RB_STATUS_UNSUPPORTED; `y` is then unchanged. Thread-safe for distinct `y`.
///
/// # Safety
/// `x` addresses `outer * r * inner` and `y` `outer * inner` elements of `dtype` on the
/// stream's device; they must not overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_reduce(
    stream: *mut rb_stream,
    op: i32,
    dtype: i32,
    x: *const c_void,
    outer: i64,
    r: i64,
    inner: i64,
    y: *mut c_void,
) -> rb_status {
    guard("rb_dnn_reduce", || {
        let op = reduce_op_arg(op)?;
        let dt = DType::from_i32(dtype)?;
        let d = reduce_desc(outer, r, inner)?;
        let s = raw_stream_arg(stream)?;
        dnn::reduce(s.as_deref(), op, dt, dp(x), &d, dp(y))
    })
}

/// Argmax over the middle axis of a contiguous row-major `[outer, r, inner]` array on device
/// pointers: `y[o, i]` (int64) is the index in `[0, r)` of the largest `x[o, :, i]` (the first
/// of equal maxima; a NaN counts as the largest), `x` of `dtype` (RB_DTYPE_F32, RB_DTYPE_F16 or
/// RB_DTYPE_BF16), `y` of `outer * inner` int64 values. Pointers may be NULL when
/// `outer * inner` is 0.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad dtype value, negative or overflowing extent, `r == 0` with
/// outputs), RB_STATUS_DTYPE_MISMATCH (a non-floating dtype) or RB_STATUS_UNSUPPORTED; `y` is
/// then unchanged. Thread-safe for distinct `y`.
///
/// # Safety
/// `x` addresses `outer * r * inner` elements of `dtype` and `y` `outer * inner` int64 on the
/// stream's device; they must not overlap.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_argmax(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    outer: i64,
    r: i64,
    inner: i64,
    y: *mut i64,
) -> rb_status {
    guard("rb_dnn_argmax", || {
        let dt = DType::from_i32(dtype)?;
        let d = reduce_desc(outer, r, inner)?;
        let s = raw_stream_arg(stream)?;
        dnn::argmax(s.as_deref(), dt, dp(x), &d, dp(y))
    })
}

/// Softmax (`log` false) or log-softmax (`log` true) over the middle axis of a contiguous
/// `[outer, dim, inner]` tensor of `dtype` (an `rb_dtype`: F32, F16 or BF16), from `x` to
/// `y` (which may be the same buffer), on device pointers of the stream's device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (negative size) or RB_STATUS_DTYPE_MISMATCH; `y` is then
/// unchanged. Work is queued on the stream; thread-safe for distinct outputs.
///
/// # Safety
/// `x` and `y` are memory of the stream's device holding `outer*dim*inner` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_softmax_forward(
    stream: *mut rb_stream,
    dtype: i32,
    log: bool,
    outer: i64,
    dim: i64,
    inner: i64,
    x: *const c_void,
    y: *mut c_void,
) -> rb_status {
    guard("rb_dnn_softmax_forward", || {
        let dt = DType::from_i32(dtype)?;
        let (o, d, i) = (
            size(outer, "outer")?,
            size(dim, "dim")?,
            size(inner, "inner")?,
        );
        let s = raw_stream_arg(stream)?;
        dnn::softmax_forward(s.as_deref(), dt, log, o, d, i, dp(x), dp(y))
    })
}

/// Backward of `rb_dnn_softmax_forward` from its output `y` and output gradient `dy` into
/// `dx`. Failures as the forward.
///
/// # Safety
/// `y`, `dy`, `dx` are memory of the stream's device holding `outer*dim*inner` elements.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_softmax_backward(
    stream: *mut rb_stream,
    dtype: i32,
    log: bool,
    outer: i64,
    dim: i64,
    inner: i64,
    y: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
) -> rb_status {
    guard("rb_dnn_softmax_backward", || {
        let dt = DType::from_i32(dtype)?;
        let (o, d, i) = (
            size(outer, "outer")?,
            size(dim, "dim")?,
            size(inner, "inner")?,
        );
        let s = raw_stream_arg(stream)?;
        dnn::softmax_backward(s.as_deref(), dt, log, o, d, i, dp(y), dp(dy), dp(dx))
    })
}

/// layer_norm of each row of a `[rows, cols]` tensor of `dtype`: `weight`, `bias` (`cols`
/// elements of `dtype`) may be NULL; `mean` and `rstd` (`rows` f32, the saved statistics)
/// may be NULL.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (negative size, bad eps, cols = 0) or RB_STATUS_DTYPE_MISMATCH; nothing is written then.
/// Work is queued on the stream; thread-safe for distinct outputs.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_layer_norm_forward(
    stream: *mut rb_stream,
    dtype: i32,
    rows: i64,
    cols: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    y: *mut c_void,
    mean: *mut c_void,
    rstd: *mut c_void,
) -> rb_status {
    guard("rb_dnn_layer_norm_forward", || {
        let dt = DType::from_i32(dtype)?;
        let (rows, cols) = (size(rows, "rows")?, size(cols, "cols")?);
        let s = raw_stream_arg(stream)?;
        dnn::layer_norm_forward(
            s.as_deref(),
            dt,
            rows,
            cols,
            eps,
            dp(x),
            dp(weight),
            dp(bias),
            dp(y),
            dp(mean),
            dp(rstd),
        )
    })
}

/// layer_norm backward on `[rows, cols]` (statistics recomputed from `x`): `dx`, `dweight`,
/// `dbias` (`cols` elements) may each be NULL to skip; `weight` may be NULL (ones).
/// Failures as the forward.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_layer_norm_backward(
    stream: *mut rb_stream,
    dtype: i32,
    rows: i64,
    cols: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    dweight: *mut c_void,
    dbias: *mut c_void,
) -> rb_status {
    guard("rb_dnn_layer_norm_backward", || {
        let dt = DType::from_i32(dtype)?;
        let (rows, cols) = (size(rows, "rows")?, size(cols, "cols")?);
        let s = raw_stream_arg(stream)?;
        dnn::layer_norm_backward(
            s.as_deref(),
            dt,
            rows,
            cols,
            eps,
            dp(x),
            dp(weight),
            dp(dy),
            dp(dx),
            dp(dweight),
            dp(dbias),
        )
    })
}

/// rms_norm of each row of `[rows, cols]`: `y = x / sqrt(mean(x^2) + eps) * weight`;
/// `weight` may be NULL; `rstd` (`rows` f32) may be NULL. Failures as
/// `rb_dnn_layer_norm_forward`.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_rms_norm_forward(
    stream: *mut rb_stream,
    dtype: i32,
    rows: i64,
    cols: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    y: *mut c_void,
    rstd: *mut c_void,
) -> rb_status {
    guard("rb_dnn_rms_norm_forward", || {
        let dt = DType::from_i32(dtype)?;
        let (rows, cols) = (size(rows, "rows")?, size(cols, "cols")?);
        let s = raw_stream_arg(stream)?;
        dnn::rms_norm_forward(
            s.as_deref(),
            dt,
            rows,
            cols,
            eps,
            dp(x),
            dp(weight),
            dp(y),
            dp(rstd),
        )
    })
}

/// rms_norm backward on `[rows, cols]`: `dx` and `dweight` may each be NULL to skip.
/// Failures as `rb_dnn_layer_norm_forward`.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_rms_norm_backward(
    stream: *mut rb_stream,
    dtype: i32,
    rows: i64,
    cols: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    dweight: *mut c_void,
) -> rb_status {
    guard("rb_dnn_rms_norm_backward", || {
        let dt = DType::from_i32(dtype)?;
        let (rows, cols) = (size(rows, "rows")?, size(cols, "cols")?);
        let s = raw_stream_arg(stream)?;
        dnn::rms_norm_backward(
            s.as_deref(),
            dt,
            rows,
            cols,
            eps,
            dp(x),
            dp(weight),
            dp(dy),
            dp(dx),
            dp(dweight),
        )
    })
}

/// group_norm of a `[n, c, hw]` tensor with `groups` dividing `c`: `weight`, `bias` (`c`)
/// may be NULL; `mean`, `rstd` (`n*groups` f32) may be NULL. Failures as
/// `rb_dnn_layer_norm_forward`.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_group_norm_forward(
    stream: *mut rb_stream,
    dtype: i32,
    n: i64,
    c: i64,
    hw: i64,
    groups: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    y: *mut c_void,
    mean: *mut c_void,
    rstd: *mut c_void,
) -> rb_status {
    guard("rb_dnn_group_norm_forward", || {
        let dt = DType::from_i32(dtype)?;
        let (sh, g) = (nchw(n, c, hw)?, size(groups, "groups")?);
        let s = raw_stream_arg(stream)?;
        dnn::group_norm_forward(
            s.as_deref(),
            dt,
            sh,
            g,
            eps,
            dp(x),
            dp(weight),
            dp(bias),
            dp(y),
            dp(mean),
            dp(rstd),
        )
    })
}

/// group_norm backward on `[n, c, hw]`: `dx`, `dweight`, `dbias` may each be NULL to skip.
/// Failures as `rb_dnn_layer_norm_forward`.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_group_norm_backward(
    stream: *mut rb_stream,
    dtype: i32,
    n: i64,
    c: i64,
    hw: i64,
    groups: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    dweight: *mut c_void,
    dbias: *mut c_void,
) -> rb_status {
    guard("rb_dnn_group_norm_backward", || {
        let dt = DType::from_i32(dtype)?;
        let (sh, g) = (nchw(n, c, hw)?, size(groups, "groups")?);
        let s = raw_stream_arg(stream)?;
        dnn::group_norm_backward(
            s.as_deref(),
            dt,
            sh,
            g,
            eps,
            dp(x),
            dp(weight),
            dp(dy),
            dp(dx),
            dp(dweight),
            dp(dbias),
        )
    })
}

/// batch_norm in training mode on `[n, c, hw]`: batch statistics per channel;
/// `running_mean`/`running_var` (`c` of `dtype`, or both NULL) move by `momentum` toward the
/// batch mean and unbiased variance; `save_mean`/`save_invstd` (`c` f32) may be NULL;
/// `weight`/`bias` may be NULL. Failures as `rb_dnn_layer_norm_forward` (INVALID_ARGUMENT
/// for one value per channel).
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_batch_norm_forward_training(
    stream: *mut rb_stream,
    dtype: i32,
    n: i64,
    c: i64,
    hw: i64,
    momentum: f64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    running_mean: *mut c_void,
    running_var: *mut c_void,
    y: *mut c_void,
    save_mean: *mut c_void,
    save_invstd: *mut c_void,
) -> rb_status {
    guard("rb_dnn_batch_norm_forward_training", || {
        let dt = DType::from_i32(dtype)?;
        let sh = nchw(n, c, hw)?;
        let s = raw_stream_arg(stream)?;
        dnn::batch_norm_forward_training(
            s.as_deref(),
            dt,
            sh,
            momentum,
            eps,
            dp(x),
            dp(weight),
            dp(bias),
            dp(running_mean),
            dp(running_var),
            dp(y),
            dp(save_mean),
            dp(save_invstd),
        )
    })
}

/// batch_norm in inference mode on `[n, c, hw]` with the running statistics (required).
/// Failures as `rb_dnn_layer_norm_forward`.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_batch_norm_forward_inference(
    stream: *mut rb_stream,
    dtype: i32,
    n: i64,
    c: i64,
    hw: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    bias: *const c_void,
    running_mean: *const c_void,
    running_var: *const c_void,
    y: *mut c_void,
) -> rb_status {
    guard("rb_dnn_batch_norm_forward_inference", || {
        let dt = DType::from_i32(dtype)?;
        let sh = nchw(n, c, hw)?;
        let s = raw_stream_arg(stream)?;
        dnn::batch_norm_forward_inference(
            s.as_deref(),
            dt,
            sh,
            eps,
            dp(x),
            dp(weight),
            dp(bias),
            dp(running_mean),
            dp(running_var),
            dp(y),
        )
    })
}

/// batch_norm backward (training mode, batch statistics recomputed from `x`) on
/// `[n, c, hw]`: `dx`, `dweight`, `dbias` may each be NULL to skip. Failures as
/// `rb_dnn_batch_norm_forward_training`.
///
/// # Safety
/// Non-NULL pointers are memory of the stream's device of the sizes above.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_dnn_batch_norm_backward(
    stream: *mut rb_stream,
    dtype: i32,
    n: i64,
    c: i64,
    hw: i64,
    eps: f64,
    x: *const c_void,
    weight: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    dweight: *mut c_void,
    dbias: *mut c_void,
) -> rb_status {
    guard("rb_dnn_batch_norm_backward", || {
        let dt = DType::from_i32(dtype)?;
        let sh = nchw(n, c, hw)?;
        let s = raw_stream_arg(stream)?;
        dnn::batch_norm_backward(
            s.as_deref(),
            dt,
            sh,
            eps,
            dp(x),
            dp(weight),
            dp(dy),
            dp(dx),
            dp(dweight),
            dp(dbias),
        )
    })
}
