//! Softmax, normalization, losses and transformer ops: eager ops on tensors (`rb_<op>`,
//! with the output convention of the eager-op section) and raw `rb_dnn_*` entry points on
//! device pointers (MIOpen-style: sizes + pointers of the stream's device; host pointers for
//! the CPU device).
//!
//! Backward ops with several gradients take one `rb_tensor**` per gradient: NULL skips that
//! gradient (where the doc allows it); `*p == NULL` makes a new tensor whose handle is
//! written to `*p` (the caller owns it); otherwise `*p` is the destination, checked like
//! `out`. On failure no `*p` is changed. Work is queued on `stream` (NULL: the inputs'
//! device's default stream); handles may be used from several threads.
//!
//! Optional tensor arguments (weight, bias, running stats) are NULL when absent.

use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::util::null;
use crate::device::{DevPtr, Device, RawStream};
use crate::ops::nn::{BatchNormDesc, GroupNormDesc, RowNormDesc, SoftmaxDesc};
use crate::runtime::{DType, context};
use crate::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// PyTorch's `reduction` argument of the losses (the `reduction` parameters are `int32_t`
/// holding these values).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_reduction {
    None = 0,
    Mean = 1,
    Sum = 2,
}

// ------------------------------------------------------------------------- eager: softmax

// -------------------------------------------------------------------- eager: normalization

// ---------------------------------------------------------------------------- eager: losses

// ----------------------------------------------------------------------- eager: transformer

// ------------------------------------------------------------------------ raw rb_dnn_* API

fn target(stream: *mut rb_stream) -> Result<(Arc<dyn Device>, RawStream)> {
    Ok(match stream_arg(stream)? {
        Some(s) => (s.device().clone(), s.raw()),
        None => (context::current_device(), RawStream::DEFAULT),
    })
}

fn size(v: i64, arg: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(format!("{arg}={v} is negative")))
}

fn dp(p: *const c_void) -> DevPtr {
    DevPtr(p as usize as u64)
}

/// A required pointer (when there is data).
fn req(p: *const c_void, arg: &str) -> Result<DevPtr> {
    if p.is_null() {
        Err(null(arg))
    } else {
        Ok(dp(p))
    }
}

fn float_dtype(v: i32, op: &str) -> Result<DType> {
    let d = DType::from_i32(v)?;
    if !d.is_float() {
        return Err(Error::dtype(format!(
            "{op}: dtype {d} is not f32, f16 or bf16"
        )));
    }
    Ok(d)
}

/// The shape `dims` with an overflow check of its element count.
fn dims(op: &str, d: &[(i64, &str)]) -> Result<Vec<usize>> {
    let v = d
        .iter()
        .map(|(x, n)| size(*x, n))
        .collect::<Result<Vec<_>>>()?;
    crate::base::shape::numel(&v).map_err(|e| e.context(op))?;
    Ok(v)
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
        let op = "rb_dnn_softmax_forward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(outer, "outer"), (dim, "dim"), (inner, "inner")])?;
        let d = SoftmaxDesc::new(op, &sh, 1, log)?;
        if d.numel() == 0 {
            return Ok(());
        }
        let (dev, raw) = target(stream)?;
        dev.softmax(raw, dt, &d, req(x, "x")?, req(y, "y")?)
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
        let op = "rb_dnn_softmax_backward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(outer, "outer"), (dim, "dim"), (inner, "inner")])?;
        let d = SoftmaxDesc::new(op, &sh, 1, log)?;
        if d.numel() == 0 {
            return Ok(());
        }
        let (dev, raw) = target(stream)?;
        dev.softmax_backward(raw, dt, &d, req(y, "y")?, req(dy, "dy")?, req(dx, "dx")?)
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
        let op = "rb_dnn_layer_norm_forward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(rows, "rows"), (cols, "cols")])?;
        let d = RowNormDesc::new(op, &sh, &sh[1..], eps)?;
        if d.rows * d.cols == 0 {
            return Ok(());
        }
        let (dev, raw) = target(stream)?;
        dev.layer_norm(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            dp(bias),
            req(y, "y")?,
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
        let op = "rb_dnn_layer_norm_backward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(rows, "rows"), (cols, "cols")])?;
        let d = RowNormDesc::new(op, &sh, &sh[1..], eps)?;
        let (dev, raw) = target(stream)?;
        if d.rows == 0 {
            for p in [dweight, dbias] {
                if !p.is_null() {
                    dev.fill(raw, dt, dp(p), d.cols, 0.0)?;
                }
            }
            return Ok(());
        }
        dev.layer_norm_backward(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            req(dy, "dy")?,
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
        let op = "rb_dnn_rms_norm_forward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(rows, "rows"), (cols, "cols")])?;
        let d = RowNormDesc::new(op, &sh, &sh[1..], eps)?;
        if d.rows * d.cols == 0 {
            return Ok(());
        }
        let (dev, raw) = target(stream)?;
        dev.rms_norm(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            req(y, "y")?,
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
        let op = "rb_dnn_rms_norm_backward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(rows, "rows"), (cols, "cols")])?;
        let d = RowNormDesc::new(op, &sh, &sh[1..], eps)?;
        let (dev, raw) = target(stream)?;
        if d.rows == 0 {
            if !dweight.is_null() {
                dev.fill(raw, dt, dp(dweight), d.cols, 0.0)?;
            }
            return Ok(());
        }
        dev.rms_norm_backward(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            req(dy, "dy")?,
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
        let op = "rb_dnn_group_norm_forward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(n, "n"), (c, "c"), (hw, "hw")])?;
        let d = GroupNormDesc::new(op, &sh, size(groups, "groups")?, eps)?;
        if d.n * d.c * d.hw == 0 {
            return Ok(());
        }
        let (dev, raw) = target(stream)?;
        dev.group_norm(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            dp(bias),
            req(y, "y")?,
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
        let op = "rb_dnn_group_norm_backward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(n, "n"), (c, "c"), (hw, "hw")])?;
        let d = GroupNormDesc::new(op, &sh, size(groups, "groups")?, eps)?;
        let (dev, raw) = target(stream)?;
        if d.n * d.hw == 0 {
            for p in [dweight, dbias] {
                if !p.is_null() {
                    dev.fill(raw, dt, dp(p), d.c, 0.0)?;
                }
            }
            return Ok(());
        }
        dev.group_norm_backward(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            req(dy, "dy")?,
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
        let op = "rb_dnn_batch_norm_forward_training";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(n, "n"), (c, "c"), (hw, "hw")])?;
        let d = BatchNormDesc::new(op, &sh, true, momentum, eps)?;
        if running_mean.is_null() != running_var.is_null() {
            return Err(Error::invalid(format!(
                "{op}: running_mean and running_var must be given together"
            )));
        }
        if d.n * d.c * d.hw == 0 {
            return Ok(());
        }
        let (dev, raw) = target(stream)?;
        dev.batch_norm(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            dp(bias),
            dp(running_mean),
            dp(running_var),
            req(y, "y")?,
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
        let op = "rb_dnn_batch_norm_forward_inference";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(n, "n"), (c, "c"), (hw, "hw")])?;
        let d = BatchNormDesc::new(op, &sh, false, 0.0, eps)?;
        if d.n * d.c * d.hw == 0 {
            return Ok(());
        }
        let (dev, raw) = target(stream)?;
        dev.batch_norm(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            dp(bias),
            req(running_mean, "running_mean")?,
            req(running_var, "running_var")?,
            req(y, "y")?,
            DevPtr::NULL,
            DevPtr::NULL,
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
        let op = "rb_dnn_batch_norm_backward";
        let dt = float_dtype(dtype, op)?;
        let sh = dims(op, &[(n, "n"), (c, "c"), (hw, "hw")])?;
        let d = BatchNormDesc::new(op, &sh, true, 0.0, eps)?;
        let (dev, raw) = target(stream)?;
        if d.n * d.c * d.hw == 0 {
            for p in [dweight, dbias] {
                if !p.is_null() && d.c > 0 {
                    dev.fill(raw, dt, dp(p), d.c, 0.0)?;
                }
            }
            return Ok(());
        }
        dev.batch_norm_backward(
            raw,
            dt,
            &d,
            req(x, "x")?,
            dp(weight),
            DevPtr::NULL,
            DevPtr::NULL,
            req(dy, "dy")?,
            dp(dx),
            dp(dweight),
            dp(dbias),
        )
    })
}
