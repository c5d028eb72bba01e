//! The raw MIOpen/cuDNN-style entry points on device pointers (`rb_dnn_*`): convolution,
//! pooling, reductions, softmax and the normalizations. Shapes are `int64_t` extents (NC(D)HW
//! arrays of `params.ndim + 2` for convolution and pooling, flat sizes otherwise), pointers
//! address memory of the stream's device (host memory for the CPU device), and work is queued
//! on the stream (NULL: the current device's default stream). The checks and the calls:
//! [`crate::runtime::raw::dnn`].

use super::{dp, dp_opt, on_stream};
use crate::device::DevPtr;
use crate::ffi::args::{
    activation as act_arg, conv_params, pool_mode as pool_mode_arg, pool_params,
};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::{rb_stream, stream_arg};
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
        let s = stream_arg(stream)?;
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
        let x = dp(x);
        let w = dp(w);
        let bias = dp_opt(bias);
        let y = dp(y);
        let workspace = dp(workspace);
        let ptrs = [
            ("x", x),
            ("w", w),
            ("bias", bias.unwrap_or(DevPtr::NULL)),
            ("y", y),
            ("workspace", workspace),
        ];
        on_stream("rb_dnn_conv_forward", stream, &ptrs, move |s| {
            dnn::conv_forward(
                s,
                dt,
                &a,
                nd,
                &xs,
                x,
                &ws,
                w,
                bias,
                act,
                ys.as_deref(),
                y,
                workspace,
                workspace_bytes,
            )
        })
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
        dev_ptrs!(ptrs; dx, w, dy, workspace);
        on_stream("rb_dnn_conv_backward_data", stream, &ptrs, move |s| {
            dnn::conv_backward_data(
                s,
                dt,
                &a,
                nd,
                &xs,
                dx,
                &ws,
                w,
                ys.as_deref(),
                dy,
                workspace,
                workspace_bytes,
            )
        })
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
        let x = dp(x);
        let dw = dp(dw);
        let dy = dp(dy);
        let db = dp_opt(db);
        let workspace = dp(workspace);
        let ptrs = [
            ("x", x),
            ("dw", dw),
            ("dy", dy),
            ("db", db.unwrap_or(DevPtr::NULL)),
            ("workspace", workspace),
        ];
        on_stream("rb_dnn_conv_backward_weights", stream, &ptrs, move |s| {
            dnn::conv_backward_weights(
                s,
                dt,
                &a,
                nd,
                &xs,
                x,
                &ws,
                dw,
                ys.as_deref(),
                dy,
                db,
                workspace,
                workspace_bytes,
            )
        })
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
        dev_ptrs!(ptrs; x, y);
        on_stream("rb_dnn_pool_forward", stream, &ptrs, move |s| {
            dnn::pool_forward(s, dt, kind, &a, nd, &xs, x, &ys, y)
        })
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
        dev_ptrs!(ptrs; x, dy, dx);
        on_stream("rb_dnn_pool_backward", stream, &ptrs, move |s| {
            dnn::pool_backward(s, dt, kind, &a, nd, &xs, x, &ys, dy, dx)
        })
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
        dev_ptrs!(ptrs; x, y);
        on_stream("rb_dnn_reduce", stream, &ptrs, move |s| {
            dnn::reduce(s, op, dt, x, &d, y)
        })
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
        dev_ptrs!(ptrs; x, y);
        on_stream("rb_dnn_argmax", stream, &ptrs, move |s| {
            dnn::argmax(s, dt, x, &d, y)
        })
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
        dev_ptrs!(ptrs; x, y);
        on_stream("rb_dnn_softmax_forward", stream, &ptrs, move |s| {
            dnn::softmax_forward(s, dt, log, o, d, i, x, y)
        })
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
        dev_ptrs!(ptrs; y, dy, dx);
        on_stream("rb_dnn_softmax_backward", stream, &ptrs, move |s| {
            dnn::softmax_backward(s, dt, log, o, d, i, y, dy, dx)
        })
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
        dev_ptrs!(ptrs; x, weight, bias, y, mean, rstd);
        on_stream("rb_dnn_layer_norm_forward", stream, &ptrs, move |s| {
            dnn::layer_norm_forward(s, dt, rows, cols, eps, x, weight, bias, y, mean, rstd)
        })
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
        dev_ptrs!(ptrs; x, weight, dy, dx, dweight, dbias);
        on_stream("rb_dnn_layer_norm_backward", stream, &ptrs, move |s| {
            dnn::layer_norm_backward(s, dt, rows, cols, eps, x, weight, dy, dx, dweight, dbias)
        })
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
        dev_ptrs!(ptrs; x, weight, y, rstd);
        on_stream("rb_dnn_rms_norm_forward", stream, &ptrs, move |s| {
            dnn::rms_norm_forward(s, dt, rows, cols, eps, x, weight, y, rstd)
        })
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
        dev_ptrs!(ptrs; x, weight, dy, dx, dweight);
        on_stream("rb_dnn_rms_norm_backward", stream, &ptrs, move |s| {
            dnn::rms_norm_backward(s, dt, rows, cols, eps, x, weight, dy, dx, dweight)
        })
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
        dev_ptrs!(ptrs; x, weight, bias, y, mean, rstd);
        on_stream("rb_dnn_group_norm_forward", stream, &ptrs, move |s| {
            dnn::group_norm_forward(s, dt, sh, g, eps, x, weight, bias, y, mean, rstd)
        })
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
        dev_ptrs!(ptrs; x, weight, dy, dx, dweight, dbias);
        on_stream("rb_dnn_group_norm_backward", stream, &ptrs, move |s| {
            dnn::group_norm_backward(s, dt, sh, g, eps, x, weight, dy, dx, dweight, dbias)
        })
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
        dev_ptrs!(ptrs; x, weight, bias, running_mean, running_var, y, save_mean, save_invstd);
        on_stream(
            "rb_dnn_batch_norm_forward_training",
            stream,
            &ptrs,
            move |s| {
                dnn::batch_norm_forward_training(
                    s,
                    dt,
                    sh,
                    momentum,
                    eps,
                    x,
                    weight,
                    bias,
                    running_mean,
                    running_var,
                    y,
                    save_mean,
                    save_invstd,
                )
            },
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
        dev_ptrs!(ptrs; x, weight, bias, running_mean, running_var, y);
        on_stream(
            "rb_dnn_batch_norm_forward_inference",
            stream,
            &ptrs,
            move |s| {
                dnn::batch_norm_forward_inference(
                    s,
                    dt,
                    sh,
                    eps,
                    x,
                    weight,
                    bias,
                    running_mean,
                    running_var,
                    y,
                )
            },
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
        dev_ptrs!(ptrs; x, weight, dy, dx, dweight, dbias);
        on_stream("rb_dnn_batch_norm_backward", stream, &ptrs, move |s| {
            dnn::batch_norm_backward(s, dt, sh, eps, x, weight, dy, dx, dweight, dbias)
        })
    })
}
