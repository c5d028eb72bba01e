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

use super::handles::{arc, arc_opt, new_handle};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{finish_out, null, out_tensor, shape_arg};
use crate::device::{DevPtr, Device, RawStream};
use crate::ops::nn::{BatchNormDesc, GroupNormDesc, LossKind, Reduction, RowNormDesc, SoftmaxDesc};
use crate::runtime::prelude::{self as nn, Grad};
use crate::runtime::{DType, Tensor, context};
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

/// One gradient's out-pointer: NULL (skip), `*p == NULL` (new), or a destination.
struct GradSlot {
    p: *mut *mut rb_tensor,
    given: Option<Arc<Tensor>>,
}

impl GradSlot {
    /// # Safety
    /// `p` is NULL or valid for reading and writing one handle.
    unsafe fn new(p: *mut *mut rb_tensor, arg: &str) -> Result<Self> {
        if p.is_null() {
            return Ok(GradSlot { p, given: None });
        }
        // SAFETY: caller's contract.
        let cur = unsafe { *p };
        Ok(GradSlot {
            p,
            given: arc_opt(cur, arg)?,
        })
    }
    /// # Safety
    /// As [`GradSlot::new`]; NULL is refused.
    unsafe fn required(p: *mut *mut rb_tensor, arg: &str) -> Result<Self> {
        if p.is_null() {
            return Err(null(arg));
        }
        unsafe { Self::new(p, arg) }
    }
    fn grad(&self) -> Grad<'_> {
        if self.p.is_null() {
            Grad::Skip
        } else {
            match &self.given {
                Some(t) => Grad::Into(t),
                None => Grad::New,
            }
        }
    }
    /// # Safety
    /// As [`GradSlot::new`].
    unsafe fn finish(self, r: Option<Tensor>) {
        if let (false, None, Some(r)) = (self.p.is_null(), &self.given, r) {
            // SAFETY: caller's contract.
            unsafe { *self.p = new_handle(r) };
        }
    }
}

/// The body of the single-output eager exports.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
unsafe fn eager1(
    name: &str,
    stream: *mut rb_stream,
    out: *mut *mut rb_tensor,
    f: impl FnOnce(Option<&crate::runtime::Stream>, Option<&Tensor>) -> Result<Tensor>,
) -> rb_status {
    guard(name, || {
        let s = stream_arg(stream)?;
        let given = unsafe { out_tensor(out) }?;
        let r = f(s.as_deref(), given.as_deref())?;
        unsafe { finish_out(out, given, r) };
        Ok(())
    })
}

// ------------------------------------------------------------------------- eager: softmax

/// `torch.softmax(x, dim)` on a floating tensor; `dim` may be negative.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range), RB_STATUS_SHAPE_MISMATCH (`*out` of another shape) or
/// RB_STATUS_DTYPE_MISMATCH; `*out` is then unchanged. Output convention and threads: see
/// the eager-op conventions.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softmax(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_softmax", stream, out, |s, o| {
            nn::softmax(s, &*arc(x, "x")?, dim, o)
        })
    }
}

/// `torch.log_softmax(x, dim)`. Failures as `rb_softmax`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log_softmax(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_log_softmax", stream, out, |s, o| {
            nn::log_softmax(s, &*arc(x, "x")?, dim, o)
        })
    }
}

/// Gradient of softmax from its output `y` and the output gradient `dy` (same shape):
/// `y * (dy - sum(dy * y, dim))`. Failures as `rb_softmax`, plus RB_STATUS_SHAPE_MISMATCH /
/// RB_STATUS_DTYPE_MISMATCH when `dy` differs from `y`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softmax_backward(
    stream: *mut rb_stream,
    y: *const rb_tensor,
    dy: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_softmax_backward", stream, out, |s, o| {
            nn::softmax_backward(s, &*arc(y, "y")?, &*arc(dy, "dy")?, dim, o)
        })
    }
}

/// Gradient of log_softmax from its output `y`: `dy - exp(y) * sum(dy, dim)`. Failures as
/// `rb_softmax_backward`.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log_softmax_backward(
    stream: *mut rb_stream,
    y: *const rb_tensor,
    dy: *const rb_tensor,
    dim: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_log_softmax_backward", stream, out, |s, o| {
            nn::log_softmax_backward(s, &*arc(y, "y")?, &*arc(dy, "dy")?, dim, o)
        })
    }
}

// -------------------------------------------------------------------- eager: normalization

/// `torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps)`:
/// `normalized_shape` (`ndim` extents) must be the trailing dims of `x`; `weight` and `bias`
/// (that shape, x's dtype) may be NULL.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad eps, empty
/// normalized_shape); `*out` is then unchanged. Output convention and threads: see the
/// eager-op conventions.
///
/// # Safety
/// `normalized_shape` points to `ndim` readable int64_t; `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_layer_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    bias: *const rb_tensor,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_layer_norm", stream, out, |s, o| {
            let ns = shape_arg(normalized_shape, ndim, "normalized_shape")?;
            let (w, b) = (arc_opt(weight, "weight")?, arc_opt(bias, "bias")?);
            nn::layer_norm(s, &*arc(x, "x")?, &ns, w.as_deref(), b.as_deref(), eps, o)
        })
    }
}

/// layer_norm backward: writes the gradients asked for through `dx`, `dweight`, `dbias`
/// (each may be NULL to skip; see the gradient convention above). Statistics are
/// recomputed from `x`. Failures as `rb_layer_norm`.
///
/// # Safety
/// `normalized_shape` points to `ndim` int64_t; each gradient pointer is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_layer_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
    dbias: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_layer_norm_backward", || {
        let s = stream_arg(stream)?;
        let ns = unsafe { shape_arg(normalized_shape, ndim, "normalized_shape") }?;
        let w = arc_opt(weight, "weight")?;
        let (g0, g1, g2) = unsafe {
            (
                GradSlot::new(dx, "dx")?,
                GradSlot::new(dweight, "dweight")?,
                GradSlot::new(dbias, "dbias")?,
            )
        };
        let [r0, r1, r2] = nn::layer_norm_backward(
            s.as_deref(),
            &*arc(dy, "dy")?,
            &*arc(x, "x")?,
            &ns,
            w.as_deref(),
            eps,
            [g0.grad(), g1.grad(), g2.grad()],
        )?;
        unsafe {
            g0.finish(r0);
            g1.finish(r1);
            g2.finish(r2);
        }
        Ok(())
    })
}

/// `torch.nn.functional.rms_norm(x, normalized_shape, weight, eps)` with an explicit `eps`
/// (PyTorch's default `eps=None` is `torch.finfo(x.dtype).eps`); `weight` may be NULL.
/// Failures as `rb_layer_norm`.
///
/// # Safety
/// As `rb_layer_norm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rms_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_rms_norm", stream, out, |s, o| {
            let ns = shape_arg(normalized_shape, ndim, "normalized_shape")?;
            let w = arc_opt(weight, "weight")?;
            nn::rms_norm(s, &*arc(x, "x")?, &ns, w.as_deref(), eps, o)
        })
    }
}

/// rms_norm backward through `dx` and `dweight` (each may be NULL to skip). Failures as
/// `rb_layer_norm`.
///
/// # Safety
/// As `rb_layer_norm_backward`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rms_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    normalized_shape: *const i64,
    ndim: usize,
    weight: *const rb_tensor,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_rms_norm_backward", || {
        let s = stream_arg(stream)?;
        let ns = unsafe { shape_arg(normalized_shape, ndim, "normalized_shape") }?;
        let w = arc_opt(weight, "weight")?;
        let (g0, g1) = unsafe { (GradSlot::new(dx, "dx")?, GradSlot::new(dweight, "dweight")?) };
        let [r0, r1] = nn::rms_norm_backward(
            s.as_deref(),
            &*arc(dy, "dy")?,
            &*arc(x, "x")?,
            &ns,
            w.as_deref(),
            eps,
            [g0.grad(), g1.grad()],
        )?;
        unsafe {
            g0.finish(r0);
            g1.finish(r1);
        }
        Ok(())
    })
}

fn groups_arg(v: i64) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(format!("num_groups={v} is negative")))
}

/// `torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)` on `[N, C, *]`;
/// `weight`/`bias` (`[C]`) may be NULL. Failures as `rb_layer_norm` (INVALID_ARGUMENT when
/// num_groups does not divide C).
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_group_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    num_groups: i64,
    weight: *const rb_tensor,
    bias: *const rb_tensor,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_group_norm", stream, out, |s, o| {
            let (w, b) = (arc_opt(weight, "weight")?, arc_opt(bias, "bias")?);
            let g = groups_arg(num_groups)?;
            nn::group_norm(s, &*arc(x, "x")?, g, w.as_deref(), b.as_deref(), eps, o)
        })
    }
}

/// group_norm backward through `dx`, `dweight`, `dbias` (each may be NULL to skip).
/// Failures as `rb_group_norm`.
///
/// # Safety
/// Each gradient pointer is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_group_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    num_groups: i64,
    weight: *const rb_tensor,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
    dbias: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_group_norm_backward", || {
        let s = stream_arg(stream)?;
        let w = arc_opt(weight, "weight")?;
        let g = groups_arg(num_groups)?;
        let (g0, g1, g2) = unsafe {
            (
                GradSlot::new(dx, "dx")?,
                GradSlot::new(dweight, "dweight")?,
                GradSlot::new(dbias, "dbias")?,
            )
        };
        let [r0, r1, r2] = nn::group_norm_backward(
            s.as_deref(),
            &*arc(dy, "dy")?,
            &*arc(x, "x")?,
            g,
            w.as_deref(),
            eps,
            [g0.grad(), g1.grad(), g2.grad()],
        )?;
        unsafe {
            g0.finish(r0);
            g1.finish(r1);
            g2.finish(r2);
        }
        Ok(())
    })
}

/// `torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training,
/// momentum, eps)` on `[N, C, *]`. `running_mean`/`running_var` (`[C]`, x's dtype) are
/// updated in place when `training` (batch mean, unbiased batch variance, `momentum`); they
/// may be NULL (together) when training, and are required otherwise. `weight`/`bias` may be
/// NULL. Failures as `rb_layer_norm` (INVALID_ARGUMENT: one value per channel in training,
/// missing running stats in eval); on failure nothing is written.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_batch_norm(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    running_mean: *const rb_tensor,
    running_var: *const rb_tensor,
    weight: *const rb_tensor,
    bias: *const rb_tensor,
    training: bool,
    momentum: f64,
    eps: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_batch_norm", stream, out, |s, o| {
            let (rm, rv) = (
                arc_opt(running_mean, "running_mean")?,
                arc_opt(running_var, "running_var")?,
            );
            let (w, b) = (arc_opt(weight, "weight")?, arc_opt(bias, "bias")?);
            nn::batch_norm(
                s,
                &*arc(x, "x")?,
                rm.as_deref(),
                rv.as_deref(),
                w.as_deref(),
                b.as_deref(),
                training,
                momentum,
                eps,
                o,
            )
        })
    }
}

/// batch_norm backward through `dx`, `dweight`, `dbias` (each may be NULL to skip):
/// through the batch statistics when `training`, else with the running stats as
/// constants. Failures as `rb_batch_norm`.
///
/// # Safety
/// Each gradient pointer is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_batch_norm_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    running_mean: *const rb_tensor,
    running_var: *const rb_tensor,
    weight: *const rb_tensor,
    training: bool,
    eps: f64,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
    dbias: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_batch_norm_backward", || {
        let s = stream_arg(stream)?;
        let (rm, rv) = (
            arc_opt(running_mean, "running_mean")?,
            arc_opt(running_var, "running_var")?,
        );
        let w = arc_opt(weight, "weight")?;
        let (g0, g1, g2) = unsafe {
            (
                GradSlot::new(dx, "dx")?,
                GradSlot::new(dweight, "dweight")?,
                GradSlot::new(dbias, "dbias")?,
            )
        };
        let [r0, r1, r2] = nn::batch_norm_backward(
            s.as_deref(),
            &*arc(dy, "dy")?,
            &*arc(x, "x")?,
            rm.as_deref(),
            rv.as_deref(),
            w.as_deref(),
            training,
            eps,
            [g0.grad(), g1.grad(), g2.grad()],
        )?;
        unsafe {
            g0.finish(r0);
            g1.finish(r1);
            g2.finish(r2);
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------- eager: losses

/// The body of the loss exports.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
unsafe fn loss_op(
    name: &str,
    kind: LossKind,
    stream: *mut rb_stream,
    grad_out: Option<*const rb_tensor>,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1(name, stream, out, |s, o| {
            let r = Reduction::from_i32(reduction, kind.name())?;
            let (x, tg) = (arc(input, "input")?, arc(target, "target")?);
            match grad_out {
                None => nn::loss(s, kind, &x, &tg, r, ignore_index, label_smoothing, o),
                Some(g) => nn::loss_backward(
                    s,
                    kind,
                    &*arc(g, "grad_out")?,
                    &x,
                    &tg,
                    r,
                    ignore_index,
                    label_smoothing,
                    o,
                ),
            }
        })
    }
}

/// `torch.nn.functional.mse_loss(input, target, reduction)`; `reduction` is an
/// `rb_reduction`; input and target of one shape and floating dtype. The result is
/// input-shaped for RB_REDUCTION_NONE, else 0-d.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad reduction); `*out` is then
/// unchanged. Output convention and threads: see the eager-op conventions.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mse_loss(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_mse_loss",
            LossKind::Mse,
            stream,
            None,
            input,
            target,
            reduction,
            -100,
            0.0,
            out,
        )
    }
}

/// Gradient of mse_loss with respect to `input`; `grad_out` is shaped like the loss.
/// Failures as `rb_mse_loss`.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mse_loss_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_mse_loss_backward",
            LossKind::Mse,
            stream,
            Some(grad_out),
            input,
            target,
            reduction,
            -100,
            0.0,
            out,
        )
    }
}

/// `torch.nn.functional.binary_cross_entropy(input, target, reduction)` on probabilities
/// (logs clamped at -100 as PyTorch does). Failures as `rb_mse_loss`.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_bce_loss(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_bce_loss",
            LossKind::Bce,
            stream,
            None,
            input,
            target,
            reduction,
            -100,
            0.0,
            out,
        )
    }
}

/// Gradient of bce_loss with respect to `input`. Failures as `rb_mse_loss`.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_bce_loss_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_bce_loss_backward",
            LossKind::Bce,
            stream,
            Some(grad_out),
            input,
            target,
            reduction,
            -100,
            0.0,
            out,
        )
    }
}

/// `torch.nn.functional.cross_entropy(input, target, reduction=, ignore_index=,
/// label_smoothing=)` with logits `[N, C, d...]` (or `[C]`) and class-index targets
/// `[N, d...]` (i32 or i64). One fused pass per item (log-softmax, gather, reduce); `mean`
/// divides by the number of non-ignored targets. Fails as `rb_mse_loss`, plus
/// RB_STATUS_INVALID_ARGUMENT for a target outside `[0, C)` that is not `ignore_index` or a
/// label_smoothing outside [0, 1].
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cross_entropy(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_cross_entropy",
            LossKind::CrossEntropy,
            stream,
            None,
            input,
            target,
            reduction,
            ignore_index,
            label_smoothing,
            out,
        )
    }
}

/// Gradient of cross_entropy with respect to the logits. Failures as `rb_cross_entropy`.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cross_entropy_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_cross_entropy_backward",
            LossKind::CrossEntropy,
            stream,
            Some(grad_out),
            input,
            target,
            reduction,
            ignore_index,
            label_smoothing,
            out,
        )
    }
}

/// `torch.nn.functional.nll_loss(input, target, reduction=, ignore_index=)` on
/// log-probabilities `[N, C, d...]` (or `[C]`). Failures as `rb_cross_entropy`.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_nll_loss(
    stream: *mut rb_stream,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_nll_loss",
            LossKind::Nll,
            stream,
            None,
            input,
            target,
            reduction,
            ignore_index,
            0.0,
            out,
        )
    }
}

/// Gradient of nll_loss with respect to `input`. Failures as `rb_cross_entropy`.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_nll_loss_backward(
    stream: *mut rb_stream,
    grad_out: *const rb_tensor,
    input: *const rb_tensor,
    target: *const rb_tensor,
    reduction: i32,
    ignore_index: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        loss_op(
            "rb_nll_loss_backward",
            LossKind::Nll,
            stream,
            Some(grad_out),
            input,
            target,
            reduction,
            ignore_index,
            0.0,
            out,
        )
    }
}

// ----------------------------------------------------------------------- eager: transformer

/// Rotary position embedding, rotate-half form (GPT-NeoX / LLaMA): along the last dim `D`
/// (even), with `h = D/2` and `theta_i = p * base^(-2i/D)`, `y[i] = x[i] cos - x[i+h] sin`,
/// `y[i+h] = x[i+h] cos + x[i] sin`, where `p = position_offset + s` and `s` is the index
/// along `seq_dim` (any dim but the last, e.g. -2 for `[B, H, S, D]`, -3 for `[B, S, H, D]`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (odd last dim, rank < 2), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad
/// seq_dim or base). Output convention and threads: see the eager-op conventions.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rope(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    seq_dim: i64,
    base: f64,
    position_offset: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_rope", stream, out, |s, o| {
            nn::rope(s, &*arc(x, "x")?, seq_dim, base, position_offset, false, o)
        })
    }
}

/// Gradient of `rb_rope`: the rotation by `-theta` of `dy`. Failures as `rb_rope`.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rope_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    seq_dim: i64,
    base: f64,
    position_offset: i64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_rope_backward", stream, out, |s, o| {
            nn::rope(s, &*arc(dy, "dy")?, seq_dim, base, position_offset, true, o)
        })
    }
}

/// # Safety
/// `scale` is NULL or readable.
unsafe fn scale_arg(scale: *const f64) -> Option<f64> {
    if scale.is_null() {
        None
    } else {
        // SAFETY: caller's contract.
        Some(unsafe { *scale })
    }
}

/// `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=, scale=)` with q
/// `[..., Sq, D]`, k `[..., Sk, D]`, v `[..., Sk, Dv]` (equal leading dims, one dtype);
/// the result is `[..., Sq, Dv]`. `scale` NULL means `1/sqrt(D)`. The causal mask is
/// PyTorch's: query i sees keys j <= i.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (non-finite scale). Output
/// convention and threads: see the eager-op conventions.
///
/// # Safety
/// `scale` is NULL or readable; `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scaled_dot_product_attention(
    stream: *mut rb_stream,
    q: *const rb_tensor,
    k: *const rb_tensor,
    v: *const rb_tensor,
    is_causal: bool,
    scale: *const f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_scaled_dot_product_attention", stream, out, |s, o| {
            nn::scaled_dot_product_attention(
                s,
                &*arc(q, "q")?,
                &*arc(k, "k")?,
                &*arc(v, "v")?,
                is_causal,
                scale_arg(scale),
                o,
            )
        })
    }
}

/// Backward of `rb_scaled_dot_product_attention` from the output gradient `dout`: writes
/// `dq`, `dk`, `dv` (all required, NULL gives RB_STATUS_NULL_POINTER; see the gradient
/// convention above). Failures as the forward.
///
/// # Safety
/// `scale` is NULL or readable; each gradient pointer is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scaled_dot_product_attention_backward(
    stream: *mut rb_stream,
    dout: *const rb_tensor,
    q: *const rb_tensor,
    k: *const rb_tensor,
    v: *const rb_tensor,
    is_causal: bool,
    scale: *const f64,
    dq: *mut *mut rb_tensor,
    dk: *mut *mut rb_tensor,
    dv: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scaled_dot_product_attention_backward", || {
        let s = stream_arg(stream)?;
        let (g0, g1, g2) = unsafe {
            (
                GradSlot::required(dq, "dq")?,
                GradSlot::required(dk, "dk")?,
                GradSlot::required(dv, "dv")?,
            )
        };
        let [r0, r1, r2] = nn::scaled_dot_product_attention_backward(
            s.as_deref(),
            &*arc(dout, "dout")?,
            &*arc(q, "q")?,
            &*arc(k, "k")?,
            &*arc(v, "v")?,
            is_causal,
            unsafe { scale_arg(scale) },
            [g0.grad(), g1.grad(), g2.grad()],
        )?;
        unsafe {
            g0.finish(Some(r0));
            g1.finish(Some(r1));
            g2.finish(Some(r2));
        }
        Ok(())
    })
}

/// `weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`, w `[..., N]`
/// (x's dtype), result `[..., D]` (attention's probabilities-times-values for one query).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions.
///
/// # Safety
/// `out` as for every eager op.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_weighted_sum(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    unsafe {
        eager1("rb_weighted_sum", stream, out, |s, o| {
            nn::weighted_sum(s, &*arc(x, "x")?, &*arc(w, "w")?, o)
        })
    }
}

/// weighted_sum backward through `dx` and `dw` (each may be NULL to skip). Failures as
/// `rb_weighted_sum`.
///
/// # Safety
/// Each gradient pointer is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_weighted_sum_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    x: *const rb_tensor,
    w: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dw: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_weighted_sum_backward", || {
        let s = stream_arg(stream)?;
        let (g0, g1) = unsafe { (GradSlot::new(dx, "dx")?, GradSlot::new(dw, "dw")?) };
        let [r0, r1] = nn::weighted_sum_backward(
            s.as_deref(),
            &*arc(dy, "dy")?,
            &*arc(x, "x")?,
            &*arc(w, "w")?,
            [g0.grad(), g1.grad()],
        )?;
        unsafe {
            g0.finish(r0);
            g1.finish(r1);
        }
        Ok(())
    })
}

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
