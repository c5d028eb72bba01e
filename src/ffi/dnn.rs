//! Convolution, pooling, linear and the fused ops: eager ops on tensors (`rb_conv`,
//! `rb_pool`, `rb_linear`, ...) and the raw MIOpen/cuDNN-style entry points on device
//! pointers (`rb_dnn_*`). Layout is NC(D)HW, dense row-major; PyTorch's semantics.
//!
//! Eager ops follow the output convention of the eager-op section (`*out == NULL` makes a new
//! tensor the caller owns; otherwise `*out` is checked and overwritten; on failure `*out` is
//! unchanged). Ops with several results (`_backward`) always make new tensors and write their
//! handles only on success. Raw entry points take shapes as `int64_t` arrays of `ndim + 2`
//! extents and device pointers of the stream's device (host pointers for the CPU device);
//! work is queued on the stream (NULL: the current device's default stream).

use super::handles::{arc, arc_opt, new_handle};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{check_out, finish_out, null, out_tensor};
use crate::device::{DevPtr, Device, RawStream};
use crate::ops::conv::{self, Activation, ConvAttrs, ConvGeom};
use crate::ops::pool::{self, PoolAttrs, PoolGeom, PoolKind};
use crate::ops::reduce::{self, ReduceDesc, ReduceOp};
use crate::runtime::prelude as nn;
use crate::runtime::{DType, Tensor, context};
use crate::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// Convolution attributes. The first `ndim` (1, 2 or 3) entries of each array are used, one
/// per spatial dimension; `output_padding` only by transposed convolutions.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_conv_params {
    pub ndim: i32,
    pub stride: [i64; 3],
    pub padding: [i64; 3],
    pub dilation: [i64; 3],
    pub output_padding: [i64; 3],
    pub groups: i64,
}

/// Pooling attributes. The first `ndim` (1, 2 or 3) entries of each array are used;
/// `dilation` must be 1 for average pooling; `ceil_mode` is 0 or 1.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_pool_params {
    pub ndim: i32,
    pub kernel: [i64; 3],
    pub stride: [i64; 3],
    pub padding: [i64; 3],
    pub dilation: [i64; 3],
    pub ceil_mode: i32,
}

/// The activation of a fused epilogue.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_activation {
    /// No activation.
    None = 0,
    Relu = 1,
    /// GELU, exact (erf) form.
    GeluErf = 2,
    /// GELU, tanh approximation.
    GeluTanh = 3,
}

/// Pooling mode.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_pool_mode {
    Max = 0,
    /// Average; padding counts in the divisor (`count_include_pad=True`).
    AvgIncludePad = 1,
    /// Average over the valid positions only.
    AvgExcludePad = 2,
}

/// The reduction of `rb_dnn_reduce`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_reduce_op {
    Sum = 0,
    /// Sum divided by the reduced extent (NaN for an empty one).
    Mean = 1,
    /// Largest value; a NaN wins.
    Max = 2,
    /// Smallest value; a NaN wins.
    Min = 3,
    Prod = 4,
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

/// The `[outer, r, inner]` extents of a raw reduction, with the element count checked.
fn reduce_desc(outer: i64, r: i64, inner: i64) -> Result<ReduceDesc> {
    let u = |v: i64, name: &str| {
        usize::try_from(v).map_err(|_| Error::invalid(format!("{name}={v} is negative")))
    };
    let d = ReduceDesc {
        outer: u(outer, "outer")?,
        r: u(r, "r")?,
        inner: u(inner, "inner")?,
    };
    d.outer
        .checked_mul(d.r)
        .and_then(|v| v.checked_mul(d.inner))
        .and_then(|v| v.checked_mul(8))
        .ok_or_else(|| Error::invalid("outer * r * inner overflows"))?;
    Ok(d)
}

fn act_arg(v: i32) -> Result<Activation> {
    Ok(match v {
        0 => Activation::None,
        1 => Activation::Relu,
        2 => Activation::Gelu { tanh: false },
        3 => Activation::Gelu { tanh: true },
        _ => {
            return Err(Error::invalid(format!(
                "activation={v} is not an rb_activation (0..3)"
            )));
        }
    })
}

fn pool_mode_arg(v: i32) -> Result<PoolKind> {
    Ok(match v {
        0 => PoolKind::Max,
        1 => PoolKind::Avg {
            count_include_pad: true,
        },
        2 => PoolKind::Avg {
            count_include_pad: false,
        },
        _ => {
            return Err(Error::invalid(format!(
                "mode={v} is not an rb_pool_mode (0..2)"
            )));
        }
    })
}

fn ndim_arg(v: i32) -> Result<usize> {
    match v {
        1..=3 => Ok(v as usize),
        _ => Err(Error::invalid(format!("params.ndim={v} is not 1, 2 or 3"))),
    }
}

fn list(v: &[i64; 3], nd: usize, name: &str) -> Result<Vec<usize>> {
    v[..nd]
        .iter()
        .map(|&x| {
            usize::try_from(x)
                .map_err(|_| Error::invalid(format!("params.{name}: {x} is negative")))
        })
        .collect()
}

/// # Safety
/// `p` is NULL or points to an `rb_conv_params`.
unsafe fn conv_params(p: *const rb_conv_params) -> Result<(ConvAttrs, usize)> {
    if p.is_null() {
        return Err(null("params"));
    }
    // SAFETY: caller's contract.
    let p = unsafe { *p };
    let nd = ndim_arg(p.ndim)?;
    let groups = usize::try_from(p.groups)
        .map_err(|_| Error::invalid(format!("params.groups={} is negative", p.groups)))?;
    Ok((
        ConvAttrs {
            stride: list(&p.stride, nd, "stride")?,
            padding: list(&p.padding, nd, "padding")?,
            dilation: list(&p.dilation, nd, "dilation")?,
            groups,
            output_padding: list(&p.output_padding, nd, "output_padding")?,
        },
        nd,
    ))
}

/// # Safety
/// `p` is NULL or points to an `rb_pool_params`.
unsafe fn pool_params(p: *const rb_pool_params) -> Result<(PoolAttrs, usize)> {
    if p.is_null() {
        return Err(null("params"));
    }
    // SAFETY: caller's contract.
    let p = unsafe { *p };
    let nd = ndim_arg(p.ndim)?;
    Ok((
        PoolAttrs {
            kernel: list(&p.kernel, nd, "kernel")?,
            stride: list(&p.stride, nd, "stride")?,
            padding: list(&p.padding, nd, "padding")?,
            dilation: list(&p.dilation, nd, "dilation")?,
            ceil_mode: p.ceil_mode != 0,
        },
        nd,
    ))
}

fn t_opt(p: *const rb_tensor, arg: &str) -> Result<Option<Arc<Tensor>>> {
    arc_opt(p, arg)
}

/// # Safety
/// `dims` is NULL or points to `n` readable `int64_t`.
unsafe fn shape(dims: *const i64, n: usize, arg: &str) -> Result<Vec<usize>> {
    if dims.is_null() {
        return Err(null(arg));
    }
    unsafe { super::util::shape_arg(dims, n, arg) }
}

/// Writes a new tensor handle through `p` (already checked non-NULL).
///
/// # Safety
/// `p` is valid for a write of one handle.
unsafe fn put(p: *mut *mut rb_tensor, v: Tensor) {
    unsafe { *p = new_handle(v) };
}

/// Convolution `conv{ndim}d(x, w, bias)` (ndim from `params`) followed by `activation` (an
/// `rb_activation`), fused: conv, conv+bias, conv+bias+relu. `x` `[N, C, ...]`, `w`
/// `[K, C / groups, ...]`, `bias` `[K]` or NULL.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (ranks, channels, kernel larger than the padded input, `*out` of another shape),
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad params, groups not dividing
/// the channels). Output convention and threads: see the section's conventions.
///
/// # Safety
/// `params` is NULL or points to an `rb_conv_params`; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    params: *const rb_conv_params,
    activation: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv", || {
        let (x, w, b) = (arc(x, "x")?, arc(w, "w")?, t_opt(bias, "bias")?);
        let (a, nd) = unsafe { conv_params(params) }?;
        let act = act_arg(activation)?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::conv(
            s.as_deref(),
            &x,
            &w,
            b.as_deref(),
            &a,
            nd,
            act,
            given.as_deref(),
        )?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Inference `relu(batch_norm(conv(x, w, bias)))` with the batch norm (`mean`, `var`,
/// `gamma`, `beta`, each `[K]`; `eps` > 0) folded into the convolution. `bias` may be NULL.
///
/// Failures as `rb_conv`. Output convention and threads: see the section's conventions.
///
/// # Safety
/// As `rb_conv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_bn_relu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    mean: *const rb_tensor,
    var: *const rb_tensor,
    gamma: *const rb_tensor,
    beta: *const rb_tensor,
    eps: f64,
    params: *const rb_conv_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_bn_relu", || {
        let (x, w, b) = (arc(x, "x")?, arc(w, "w")?, t_opt(bias, "bias")?);
        let bn = [
            arc(mean, "mean")?,
            arc(var, "var")?,
            arc(gamma, "gamma")?,
            arc(beta, "beta")?,
        ];
        let (a, nd) = unsafe { conv_params(params) }?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::conv_bn_relu(
            s.as_deref(),
            &x,
            &w,
            b.as_deref(),
            [&bn[0], &bn[1], &bn[2], &bn[3]],
            eps,
            &a,
            nd,
            given.as_deref(),
        )?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Transposed convolution (`conv_transpose{ndim}d`), `x` `[N, C, ...]`, `w`
/// `[C, K / groups, ...]`, `bias` `[K]` or NULL; uses `params.output_padding`.
///
/// Failures as `rb_conv` (output_padding must be smaller than stride or dilation). Output
/// convention and threads: see the section's conventions.
///
/// # Safety
/// As `rb_conv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_transpose(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    params: *const rb_conv_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_transpose", || {
        let (x, w, b) = (arc(x, "x")?, arc(w, "w")?, t_opt(bias, "bias")?);
        let (a, nd) = unsafe { conv_params(params) }?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::conv_transpose(s.as_deref(), &x, &w, b.as_deref(), &a, nd, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Gradient of `rb_conv` (no activation) with respect to `x`, whose shape is the
/// `x_ndim` extents at `x_shape`; `dy` has the convolution's output shape.
///
/// Failures as `rb_conv`. Output convention and threads: see the section's conventions.
///
/// # Safety
/// As `rb_conv`; `x_shape` points to `x_ndim` readable `int64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_backward_data(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    w: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    params: *const rb_conv_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_backward_data", || {
        let (dy, w) = (arc(dy, "dy")?, arc(w, "w")?);
        let xs = unsafe { shape(x_shape, x_ndim, "x_shape") }?;
        let (a, nd) = unsafe { conv_params(params) }?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::conv_backward_data(s.as_deref(), &dy, &w, &xs, &a, nd, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Gradients of `rb_conv` with respect to the weight (shape: `w_ndim` extents at `w_shape`)
/// and, when `db` is not NULL, the bias. New tensors are written to `*dw` (and `*db`), owned
/// by the caller, only on success.
///
/// Failures as `rb_conv`. Thread-safe for distinct outputs.
///
/// # Safety
/// `w_shape` points to `w_ndim` readable `int64_t`; `dw` is valid for a write of one handle;
/// `db` is NULL or valid for a write of one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_backward_weight(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    w_shape: *const i64,
    w_ndim: usize,
    params: *const rb_conv_params,
    dw: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_backward_weight", || {
        let (x, dy) = (arc(x, "x")?, arc(dy, "dy")?);
        let ws = unsafe { shape(w_shape, w_ndim, "w_shape") }?;
        let (a, nd) = unsafe { conv_params(params) }?;
        check_out(dw, "dw")?;
        let s = stream_arg(stream)?;
        let (w, b) = nn::conv_backward_weight(s.as_deref(), &x, &dy, &ws, &a, nd, !db.is_null())?;
        unsafe { put(dw, w) };
        if let Some(b) = b {
            unsafe { put(db, b) };
        }
        Ok(())
    })
}

/// Pooling (`mode`: an `rb_pool_mode`) of `x` `[N, C, ...]` with `params` (a zero stride
/// entry is not allowed; pass the kernel size for PyTorch's default).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (padding above half the kernel,
/// dilation with average pooling, bad mode). Output convention and threads: see the section's
/// conventions.
///
/// # Safety
/// `params` is NULL or points to an `rb_pool_params`; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pool(
    stream: *mut rb_stream,
    mode: i32,
    x: *const rb_tensor,
    params: *const rb_pool_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pool", || {
        let x = arc(x, "x")?;
        let kind = pool_mode_arg(mode)?;
        let (a, nd) = unsafe { pool_params(params) }?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::pool(s.as_deref(), kind, &x, &a, nd, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Gradient of `rb_pool` with respect to `x`, from `x` and `dy`.
///
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions.
///
/// # Safety
/// As `rb_pool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pool_backward(
    stream: *mut rb_stream,
    mode: i32,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    params: *const rb_pool_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pool_backward", || {
        let (x, dy) = (arc(x, "x")?, arc(dy, "dy")?);
        let kind = pool_mode_arg(mode)?;
        let (a, nd) = unsafe { pool_params(params) }?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::pool_backward(s.as_deref(), kind, &x, &dy, &a, nd, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `adaptive_avg_pool2d(x, (out_h, out_w))` on `x` `[N, C, H, W]`.
///
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_avg_pool2d(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out_h: i64,
    out_w: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_avg_pool2d", || {
        let x = arc(x, "x")?;
        let oh = usize::try_from(out_h)
            .map_err(|_| Error::invalid(format!("out_h={out_h} is negative")))?;
        let ow = usize::try_from(out_w)
            .map_err(|_| Error::invalid(format!("out_w={out_w} is negative")))?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::adaptive_avg_pool2d(s.as_deref(), &x, [oh, ow], given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Gradient of `rb_adaptive_avg_pool2d` with respect to its input of shape `x_shape` (4
/// extents).
///
/// Failures as `rb_pool`. Output convention and threads: see the section's conventions.
///
/// # Safety
/// `x_shape` points to 4 readable `int64_t`; `out` as `rb_pool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_adaptive_avg_pool2d_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x_shape: *const i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_adaptive_avg_pool2d_backward", || {
        let dy = arc(dy, "dy")?;
        let xs = unsafe { shape(x_shape, 4, "x_shape") }?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::adaptive_avg_pool2d_backward(s.as_deref(), &dy, &xs, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// `torch.nn.functional.linear(x, w, bias)`: `x · wᵀ + bias` with `x` `[..., k]`, `w`
/// `[n, k]`, `bias` `[n]` or NULL.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see
/// the section's conventions.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_linear(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_linear", || {
        let (x, w, b) = (arc(x, "x")?, arc(w, "w")?, t_opt(bias, "bias")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::linear(s.as_deref(), &x, &w, b.as_deref(), given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Gradients of `rb_linear`: new tensors `*dx`, `*dw` and, when `db` is not NULL, `*db`,
/// owned by the caller and written only on success.
///
/// Failures as `rb_linear`. Thread-safe for distinct outputs.
///
/// # Safety
/// `dx` and `dw` are valid for a write of one handle; `db` is NULL or valid for one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_linear_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    dy: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dw: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_linear_backward", || {
        let (x, w, dy) = (arc(x, "x")?, arc(w, "w")?, arc(dy, "dy")?);
        check_out(dx, "dx")?;
        check_out(dw, "dw")?;
        let s = stream_arg(stream)?;
        let (gx, gw, gb) = nn::linear_backward(s.as_deref(), &x, &w, &dy, !db.is_null())?;
        unsafe {
            put(dx, gx);
            put(dw, gw);
            if let Some(b) = gb {
                put(db, b);
            }
        }
        Ok(())
    })
}

/// Fused `activation(a · b + bias)` (an `rb_activation`): matmul+bias, matmul+bias+relu,
/// matmul+bias+gelu. `a` `[..., k]`, `b` `[k, n]`, `bias` `[n]`; the epilogue runs on each
/// block of rows while it is in cache.
///
/// Failures as `rb_linear`. Output convention and threads: see the section's conventions.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_matmul_bias_act(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    bias: *const rb_tensor,
    activation: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_matmul_bias_act", || {
        let (a, b, c) = (arc(a, "a")?, arc(b, "b")?, arc(bias, "bias")?);
        let act = act_arg(activation)?;
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::matmul_bias_act(s.as_deref(), &a, &b, &c, act, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Fused `max(a + b, 0)` with NumPy broadcasting.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see
/// the section's conventions.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add_relu(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_add_relu", || {
        let (a, b) = (arc(a, "a")?, arc(b, "b")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::add_relu(s.as_deref(), &a, &b, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

/// Fused `a * b + c` with NumPy broadcasting over all three.
///
/// Failures as `rb_add_relu`. Output convention and threads: see the section's conventions.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mul_add(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    c: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mul_add", || {
        let (a, b, c) = (arc(a, "a")?, arc(b, "b")?, arc(c, "c")?);
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = nn::mul_add(s.as_deref(), &a, &b, &c, given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

// ---- raw entry points -------------------------------------------------------------------

fn target(stream: *mut rb_stream) -> Result<(Arc<dyn Device>, RawStream)> {
    Ok(match stream_arg(stream)? {
        Some(s) => (s.device().clone(), s.raw()),
        None => (context::current_device(), RawStream::DEFAULT),
    })
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

/// The geometry of a raw convolution call, checked against all three shapes.
///
/// # Safety
/// Each shape pointer is NULL or points to `ndim + 2` readable `int64_t`.
unsafe fn raw_geom(
    op: &str,
    params: *const rb_conv_params,
    x_shape: *const i64,
    w_shape: *const i64,
    y_shape: *const i64,
) -> Result<ConvGeom> {
    let (a, nd) = unsafe { conv_params(params) }?;
    let xs = unsafe { shape(x_shape, nd + 2, "x_shape") }?;
    let ws = unsafe { shape(w_shape, nd + 2, "w_shape") }?;
    let g = conv::conv_geom(op, &xs, &ws, &a, nd)?;
    if !y_shape.is_null() {
        let ys = unsafe { shape(y_shape, nd + 2, "y_shape") }?;
        if ys != g.y_shape() {
            return Err(Error::shape(format!(
                "{op}: y_shape {ys:?} is not the convolution's output shape {:?}",
                g.y_shape()
            )));
        }
    }
    g.validate(op)?;
    Ok(g)
}

fn ptr(p: *const c_void, n: usize, arg: &str) -> Result<DevPtr> {
    if n > 0 && p.is_null() {
        return Err(null(arg));
    }
    Ok(DevPtr(p as usize as u64))
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
        let dt = float_dtype(dtype, "rb_dnn_conv_workspace_size")?;
        let g = unsafe {
            raw_geom(
                "rb_dnn_conv_workspace_size",
                params,
                x_shape,
                w_shape,
                std::ptr::null(),
            )
        }?;
        check_out(size, "size")?;
        let (dev, _) = target(stream)?;
        let n = dev.conv_workspace_size(&g, dt)?;
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
        let op = "rb_dnn_conv_forward";
        let dt = float_dtype(dtype, op)?;
        let g = unsafe { raw_geom(op, params, x_shape, w_shape, y_shape) }?;
        let act = act_arg(activation)?;
        let yn = g.n * g.c_out * g.out_vol();
        if yn == 0 {
            return Ok(());
        }
        let (xp, wp, yp) = (
            ptr(x, g.n * g.c_in * g.in_vol(), "x")?,
            ptr(w, g.c_out, "w")?,
            ptr(y, yn, "y")?,
        );
        if g.n * g.c_in * g.in_vol() == 0 {
            return Err(Error::unsupported(format!(
                "{op}: an input with no elements is not supported by the raw entry point"
            )));
        }
        let b = if bias.is_null() {
            None
        } else {
            Some(DevPtr(bias as usize as u64))
        };
        let (dev, raw) = target(stream)?;
        dev.conv_forward(
            raw,
            &g,
            dt,
            xp,
            wp,
            b,
            act,
            yp,
            DevPtr(workspace as usize as u64),
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
        let op = "rb_dnn_conv_backward_data";
        let dt = float_dtype(dtype, op)?;
        let g = unsafe { raw_geom(op, params, x_shape, w_shape, y_shape) }?;
        let xn = g.n * g.c_in * g.in_vol();
        let yn = g.n * g.c_out * g.out_vol();
        if xn == 0 {
            return Ok(());
        }
        let (dxp, wp, dyp) = (
            ptr(dx, xn, "dx")?,
            ptr(w, g.c_out, "w")?,
            ptr(dy, yn, "dy")?,
        );
        let (dev, raw) = target(stream)?;
        if yn == 0 {
            return dev.memset(dxp, 0, xn * dt.size(), raw);
        }
        dev.conv_backward_data(
            raw,
            &g,
            dt,
            dyp,
            wp,
            dxp,
            DevPtr(workspace as usize as u64),
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
        let op = "rb_dnn_conv_backward_weights";
        let dt = float_dtype(dtype, op)?;
        let g = unsafe { raw_geom(op, params, x_shape, w_shape, y_shape) }?;
        let xn = g.n * g.c_in * g.in_vol();
        let yn = g.n * g.c_out * g.out_vol();
        let (xp, dwp, dyp) = (
            ptr(x, xn, "x")?,
            ptr(dw, g.c_out, "dw")?,
            ptr(dy, yn, "dy")?,
        );
        let dbp = if db.is_null() {
            None
        } else {
            Some(DevPtr(db as usize as u64))
        };
        let (dev, raw) = target(stream)?;
        if yn == 0 {
            let wn = g.c_out * (g.c_in / g.groups) * g.k_vol();
            dev.memset(dwp, 0, wn * dt.size(), raw)?;
            if let Some(d) = dbp {
                dev.memset(d, 0, g.c_out * dt.size(), raw)?;
            }
            return Ok(());
        }
        dev.conv_backward_weight(
            raw,
            &g,
            dt,
            xp,
            dyp,
            dwp,
            dbp,
            DevPtr(workspace as usize as u64),
            workspace_bytes,
        )
    })
}

/// # Safety
/// Shape pointers as `rb_dnn_pool_forward`.
unsafe fn raw_pool_geom(
    op: &str,
    mode: i32,
    params: *const rb_pool_params,
    x_shape: *const i64,
    y_shape: *const i64,
) -> Result<PoolGeom> {
    let kind = pool_mode_arg(mode)?;
    let (a, nd) = unsafe { pool_params(params) }?;
    let xs = unsafe { shape(x_shape, nd + 2, "x_shape") }?;
    let ys = unsafe { shape(y_shape, nd + 2, "y_shape") }?;
    let g = pool::pool_geom(op, kind, &xs, &a, nd)?;
    if ys != g.y_shape() {
        return Err(Error::shape(format!(
            "{op}: y_shape {ys:?} is not the pooling output shape {:?}",
            g.y_shape()
        )));
    }
    Ok(g)
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
        let op = "rb_dnn_pool_forward";
        let dt = float_dtype(dtype, op)?;
        let g = unsafe { raw_pool_geom(op, mode, params, x_shape, y_shape) }?;
        let yn = g.n * g.c * g.out_vol();
        if yn == 0 {
            return Ok(());
        }
        let (xp, yp) = (ptr(x, yn, "x")?, ptr(y, yn, "y")?);
        let (dev, raw) = target(stream)?;
        dev.pool_forward(raw, &g, dt, xp, yp)
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
        let op = "rb_dnn_pool_backward";
        let dt = float_dtype(dtype, op)?;
        let g = unsafe { raw_pool_geom(op, mode, params, x_shape, y_shape) }?;
        let xn = g.n * g.c * g.in_vol();
        if xn == 0 {
            return Ok(());
        }
        let (xp, dyp, dxp) = (ptr(x, xn, "x")?, ptr(dy, xn, "dy")?, ptr(dx, xn, "dx")?);
        let (dev, raw) = target(stream)?;
        dev.pool_backward(raw, &g, dt, xp, dyp, dxp)
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
        let name = "rb_dnn_reduce";
        let op = reduce_op_arg(op)?;
        let dt = float_dtype(dtype, name)?;
        let d = reduce_desc(outer, r, inner)?;
        if matches!(op, ReduceOp::Max | ReduceOp::Min) {
            reduce::check_nonempty(name, &[d.outer, d.r, d.inner], &d)?;
        }
        let yn = d.outer * d.inner;
        if yn == 0 {
            return Ok(());
        }
        let (xp, yp) = (ptr(x, yn * d.r, "x")?, ptr(y, yn, "y")?);
        let (dev, raw) = target(stream)?;
        dev.reduce(raw, op, dt, xp, yp, &d)
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
        let name = "rb_dnn_argmax";
        let dt = float_dtype(dtype, name)?;
        let d = reduce_desc(outer, r, inner)?;
        let yn = d.outer * d.inner;
        if yn == 0 {
            return Ok(());
        }
        reduce::check_nonempty(name, &[d.outer, d.r, d.inner], &d)?;
        let (xp, yp) = (ptr(x, yn * d.r, "x")?, ptr(y as *const c_void, yn, "y")?);
        let (dev, raw) = target(stream)?;
        dev.argmax(raw, dt, xp, yp, &d)
    })
}
