//! Convolution, pooling, linear and the fused ops: eager ops on tensors (`rb_conv`,
//! `rb_pool`, `rb_linear`, ...), and the C types and argument readers they share with the raw
//! MIOpen/cuDNN-style entry points on device pointers (`rb_dnn_*`, in
//! [`crate::ffi::raw::dnn`]). Layout is NC(D)HW, dense row-major; PyTorch's semantics.
//!
//! Eager ops follow the output convention of the eager-op section (`*out == NULL` makes a new
//! tensor the caller owns; otherwise `*out` is checked and overwritten; on failure `*out` is
//! unchanged). Ops with several results (`_backward`) always make new tensors and write their
//! handles only on success.

use super::handles::{arc, arc_opt, new_handle};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{check_out, finish_out, null, out_tensor};
use crate::ops::conv::{Activation, ConvAttrs};
use crate::ops::pool::{PoolAttrs, PoolKind};
use crate::runtime::Tensor;
use crate::runtime::conv as nn;
use crate::{Error, Result};
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

pub(crate) fn act_arg(v: i32) -> Result<Activation> {
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

pub(crate) fn pool_mode_arg(v: i32) -> Result<PoolKind> {
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
pub(crate) unsafe fn conv_params(p: *const rb_conv_params) -> Result<(ConvAttrs, usize)> {
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
pub(crate) unsafe fn pool_params(p: *const rb_pool_params) -> Result<(PoolAttrs, usize)> {
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
