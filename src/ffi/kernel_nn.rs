//! Raw-pointer entry points (`rb_kernel_*`), part two: comparisons and `where` over `n`
//! contiguous elements, the losses, rotary embedding, embedding lookup and weighted_sum on
//! descriptor-shaped contiguous buffers. Conventions as in `kernel.rs`: pointers address
//! memory of the stream's device (host memory for the CPU device), a NULL stream means the
//! current device's default stream, work is queued on the stream (synchronize before reading
//! results), `dtype` is an `rb_dtype`, and a pointer may be NULL only when the buffer it
//! addresses is empty.

use super::status::{guard, rb_status};
use super::stream::rb_stream;
use super::util::dtype_arg;
use crate::base::shape::BroadcastLayout;
use crate::ops::nn::{LossDesc, LossKind, Reduction, RopeDesc, WeightedSumDesc};
use crate::runtime::DType;
use crate::{Error, Result};
use std::ffi::c_void;

use super::args::compare as compare_arg;
use super::kernel::{dp, target as stream_target};

/// Which loss `rb_kernel_loss` / `rb_kernel_loss_backward` compute (the `kind` parameters
/// are `int32_t` holding these values).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_loss_kind {
    /// `(x - t)^2`; target of the input's dtype and size.
    Mse = 0,
    /// Binary cross-entropy on probabilities, logs clamped at -100 as PyTorch does.
    Bce = 1,
    /// Cross-entropy on logits `[n, c, inner]` with class-index targets `[n, inner]`.
    CrossEntropy = 2,
    /// Negative log-likelihood on log-probabilities `[n, c, inner]`, targets `[n, inner]`.
    Nll = 3,
}

fn loss_kind(v: i32, op: &str) -> Result<LossKind> {
    Ok(match v {
        0 => LossKind::Mse,
        1 => LossKind::Bce,
        2 => LossKind::CrossEntropy,
        3 => LossKind::Nll,
        _ => {
            return Err(Error::invalid(format!(
                "{op}: kind={v} is not an rb_loss_kind (0 mse .. 3 nll)"
            )));
        }
    })
}

fn flat(operands: usize, n: usize) -> BroadcastLayout {
    BroadcastLayout {
        shape: vec![n],
        strides: vec![vec![1]; operands],
    }
}

fn value_dtype(v: i32, op: &str) -> Result<DType> {
    let dt = dtype_arg(v).map_err(|e| e.context(op))?;
    if dt == DType::Bool {
        return Err(Error::dtype(format!("{op}: dtype {dt} is not supported")));
    }
    Ok(dt)
}

fn float_dtype(v: i32, op: &str, arg: &str) -> Result<DType> {
    let dt = dtype_arg(v).map_err(|e| e.context(op))?;
    if !dt.is_float() {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {dt}, expected f32, f16 or bf16"
        )));
    }
    Ok(dt)
}

fn index_dtype(v: i32, op: &str, arg: &str) -> Result<DType> {
    let dt = dtype_arg(v).map_err(|e| e.context(op))?;
    if !matches!(dt, DType::I32 | DType::I64) {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {dt}, expected i32 or i64"
        )));
    }
    Ok(dt)
}

fn prod(op: &str, dims: &[usize]) -> Result<usize> {
    crate::base::shape::numel(dims).map_err(|e| e.context(op))
}

/// `out[i] = a[i] op b[i]` as bytes 0/1 (`rb_dtype` bool) for `i < n`; `op` is an
/// `rb_compare_op`, `a` and `b` have `dtype` (any but bool). NaN compares as IEEE says.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad `op` or `dtype` value) or
/// RB_STATUS_DTYPE_MISMATCH (bool). Nothing is written on failure. Thread-safe.
///
/// # Safety
/// `a` and `b` address `n` elements of `dtype`, `out` `n` bytes, on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_compare(
    stream: *mut rb_stream,
    op: i32,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    out: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_compare", || {
        let op = compare_arg(op, "compare")?;
        let dt = value_dtype(dtype, "compare")?;
        let (a, b, o) = (dp(a, n, "a")?, dp(b, n, "b")?, dp(out, n, "out")?);
        if n == 0 {
            return Ok(());
        }
        let (d, s) = stream_target(stream)?;
        d.compare(s, op, dt, a, b, o, &flat(2, n))
    })
}

/// `out[i] = cond[i] ? a[i] : b[i]` for `i < n` (`torch.where`); `cond` holds bytes 0/1,
/// `a`, `b` and `out` have `dtype` (any but bool).
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad `dtype` value) or RB_STATUS_DTYPE_MISMATCH
/// (bool). Nothing is written on failure. Thread-safe.
///
/// # Safety
/// `cond` addresses `n` bytes, the others `n` elements of `dtype`, on the stream's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_kernel_where(
    stream: *mut rb_stream,
    dtype: i32,
    cond: *const c_void,
    a: *const c_void,
    b: *const c_void,
    out: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_where", || {
        let dt = value_dtype(dtype, "where")?;
        let c = dp(cond, n, "cond")?;
        let (a, b, o) = (dp(a, n, "a")?, dp(b, n, "b")?, dp(out, n, "out")?);
        if n == 0 {
            return Ok(());
        }
        let (d, s) = stream_target(stream)?;
        d.where_select(s, dt, c, a, b, o, &flat(3, n))
    })
}

/// `out[i] = (a[i] op b[i]) ? x[i] : y[i]` for `i < n`, fused (no bool temporary) on GPUs;
/// `op` is an `rb_compare_op`, all five buffers have `dtype` (any but bool). On a device
/// without the fused kernel (the CPU) it compares into a temporary, selects, and waits for
/// the stream before freeing the temporary.
///
/// Fails with RB_STATUS_NULL_POINTER (a NULL pointer with n > 0), RB_STATUS_INVALID_HANDLE
/// (stream), RB_STATUS_INVALID_ARGUMENT (bad `op` or `dtype` value),
/// RB_STATUS_DTYPE_MISMATCH (bool) or RB_STATUS_OUT_OF_MEMORY (the temporary). Thread-safe.
///
/// # Safety
/// Every pointer addresses `n` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_where_compare(
    stream: *mut rb_stream,
    op: i32,
    dtype: i32,
    a: *const c_void,
    b: *const c_void,
    x: *const c_void,
    y: *const c_void,
    out: *mut c_void,
    n: usize,
) -> rb_status {
    guard("rb_kernel_where_compare", || {
        let op = compare_arg(op, "where_compare")?;
        let dt = value_dtype(dtype, "where_compare")?;
        let (a, b) = (dp(a, n, "a")?, dp(b, n, "b")?);
        let (x, y, o) = (dp(x, n, "x")?, dp(y, n, "y")?, dp(out, n, "out")?);
        if n == 0 {
            return Ok(());
        }
        let (d, s) = stream_target(stream)?;
        d.where_compare(s, op, dt, a, b, x, y, o, &flat(4, n))
    })
}

/// Validates the loss arguments; returns the desc, the target dtype and the output count.
#[allow(clippy::too_many_arguments)]
fn loss_args(
    op: &str,
    kind: i32,
    dtype: i32,
    target_dtype: i32,
    n: usize,
    c: usize,
    inner: usize,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
) -> Result<(LossDesc, DType, DType, usize)> {
    let kind = loss_kind(kind, op)?;
    let name = kind.name();
    let dt = float_dtype(dtype, name, "input")?;
    let r = Reduction::from_i32(reduction, name)?;
    let td = if kind.is_class() {
        index_dtype(target_dtype, name, "target")?
    } else {
        let td = dtype_arg(target_dtype).map_err(|e| e.context(name))?;
        if td != dt {
            return Err(Error::dtype(format!(
                "{name}: target has dtype {td}, input {dt}"
            )));
        }
        if c != 1 || inner != 1 {
            return Err(Error::shape(format!(
                "{name}: c={c} and inner={inner} must be 1 (n is the element count)"
            )));
        }
        td
    };
    if kind.is_class() && c == 0 {
        return Err(Error::shape(format!("{name}: input has 0 classes")));
    }
    let ls = if kind == LossKind::CrossEntropy {
        if !(0.0..=1.0).contains(&label_smoothing) {
            return Err(Error::invalid(format!(
                "{name}: label_smoothing={label_smoothing} must be in [0, 1]"
            )));
        }
        label_smoothing
    } else {
        0.0
    };
    prod(name, &[n, c, inner])?;
    let d = LossDesc {
        kind,
        n,
        c,
        inner,
        reduction: r,
        ignore_index: if kind.is_class() { ignore_index } else { -100 },
        label_smoothing: ls,
    };
    let outs = if r == Reduction::None { d.items() } else { 1 };
    Ok((d, dt, td, outs))
}

/// One of the four losses (`kind` is an `rb_loss_kind`) with PyTorch's semantics, as
/// `rb_mse_loss`, `rb_bce_loss`, `rb_cross_entropy`, `rb_nll_loss` compute them:
/// * mse / bce: `input` and `target` hold `n` elements of `dtype`; `c` and `inner` must be 1
///   and `target_dtype` equals `dtype`; `ignore_index` and `label_smoothing` are ignored.
/// * cross_entropy / nll: `input` is `[n, c, inner]` of `dtype`, `target` is `[n, inner]`
///   class indices of `target_dtype` (i32 or i64); `label_smoothing` (in [0, 1]) is used by
///   cross_entropy only.
///
/// `reduction` is an `rb_reduction`; `out` receives `n * inner` elements of `dtype` for
/// RB_REDUCTION_NONE, else one (the mean over no items is NaN, the sum 0).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad enum value, label_smoothing, or a target outside
/// `[0, c)` that is not `ignore_index`; on GPUs an out-of-range target may be reported by a
/// later call), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_SHAPE_MISMATCH. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_loss(
    stream: *mut rb_stream,
    kind: i32,
    dtype: i32,
    input: *const c_void,
    target: *const c_void,
    target_dtype: i32,
    n: usize,
    c: usize,
    inner: usize,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    out: *mut c_void,
) -> rb_status {
    guard("rb_kernel_loss", || {
        let (d, dt, td, outs) = loss_args(
            "loss",
            kind,
            dtype,
            target_dtype,
            n,
            c,
            inner,
            reduction,
            ignore_index,
            label_smoothing,
        )?;
        let x = dp(input, d.n * d.c * d.inner, "input")?;
        let t = dp(target, d.items(), "target")?;
        let o = dp(out, outs, "out")?;
        if outs == 0 {
            return Ok(());
        }
        let (dev, s) = stream_target(stream)?;
        if d.items() == 0 {
            let v = if d.reduction == Reduction::Mean {
                f64::NAN
            } else {
                0.0
            };
            return dev.fill(s, dt, o, 1, v);
        }
        dev.loss(s, dt, &d, x, t, td, o)
    })
}

/// The gradient of `rb_kernel_loss` with respect to `input`: `grad_out` holds what the
/// forward's `out` held (`n * inner` elements for RB_REDUCTION_NONE, else one), and
/// `grad_input` receives `n * c * inner` elements of `dtype`. Arguments and failures as
/// `rb_kernel_loss`. The caller owns every buffer; nothing is kept after the call.
/// Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_loss_backward(
    stream: *mut rb_stream,
    kind: i32,
    dtype: i32,
    grad_out: *const c_void,
    input: *const c_void,
    target: *const c_void,
    target_dtype: i32,
    n: usize,
    c: usize,
    inner: usize,
    reduction: i32,
    ignore_index: i64,
    label_smoothing: f64,
    grad_input: *mut c_void,
) -> rb_status {
    guard("rb_kernel_loss_backward", || {
        let (d, dt, td, outs) = loss_args(
            "loss_backward",
            kind,
            dtype,
            target_dtype,
            n,
            c,
            inner,
            reduction,
            ignore_index,
            label_smoothing,
        )?;
        let total = d.n * d.c * d.inner;
        let g = dp(grad_out, outs, "grad_out")?;
        let x = dp(input, total, "input")?;
        let t = dp(target, d.items(), "target")?;
        let gi = dp(grad_input, total, "grad_input")?;
        if d.items() == 0 || total == 0 {
            return Ok(());
        }
        let (dev, s) = stream_target(stream)?;
        dev.loss_backward(s, dt, &d, x, t, td, g, gi)
    })
}

/// Rotary position embedding (rotate-half form, see `rb_rope`) of `x` laid out
/// `[outer, seq, inner, dim]` (`dim` even) into `y`: pair `i` at sequence index `s` rotates
/// by `(position_offset + s) * base^(-2i/dim)`; `inverse` = 1 rotates backwards (the
/// backward and the inverse of the forward). `y` may equal `x`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad dtype or `inverse` value, `base` not finite and > 0),
/// RB_STATUS_DTYPE_MISMATCH (not f32/f16/bf16) or RB_STATUS_SHAPE_MISMATCH (odd `dim`).
/// Thread-safe.
///
/// # Safety
/// `x` and `y` address `outer * seq * inner * dim` elements of `dtype` on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_rope(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    y: *mut c_void,
    outer: usize,
    seq: usize,
    inner: usize,
    dim: usize,
    base: f64,
    position_offset: i64,
    inverse: i32,
) -> rb_status {
    guard("rb_kernel_rope", || {
        let inv = super::args::flag(inverse, "inverse")?;
        let dt = float_dtype(dtype, "rope", "x")?;
        let count = prod("rope", &[outer, seq, inner, dim])?;
        let d = RopeDesc::new(
            "rope",
            &[outer, seq, inner, dim],
            1,
            base,
            position_offset,
            inv,
        )?;
        let (x, y) = (dp(x, count, "x")?, dp(y, count, "y")?);
        if count == 0 {
            return Ok(());
        }
        let (dev, s) = stream_target(stream)?;
        dev.rope(s, dt, &d, x, y)
    })
}

/// `out[j, :] = weight[idx[j], :]` for `j < n_idx` (`F.embedding`): `weight` is
/// `[num, dim]` of `dtype`, `idx` holds `n_idx` indices of `idx_dtype` (i32 or i64), `out`
/// receives `[n_idx, dim]`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad dtype value, or an index outside `[0, num)`; on GPUs it
/// may be reported by a later call) or RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_embedding(
    stream: *mut rb_stream,
    dtype: i32,
    weight: *const c_void,
    num: usize,
    dim: usize,
    idx_dtype: i32,
    idx: *const c_void,
    n_idx: usize,
    out: *mut c_void,
) -> rb_status {
    guard("rb_kernel_embedding", || {
        let dt = value_dtype(dtype, "embedding")?;
        let it = index_dtype(idx_dtype, "embedding", "idx")?;
        let w = dp(weight, prod("embedding", &[num, dim])?, "weight")?;
        let i = dp(idx, n_idx, "idx")?;
        let o = dp(out, prod("embedding", &[n_idx, dim])?, "out")?;
        if n_idx == 0 {
            return Ok(());
        }
        let (dev, s) = stream_target(stream)?;
        dev.embedding(s, dt, w, num, dim, it, i, n_idx, o)
    })
}

/// The dense weight gradient of `rb_kernel_embedding`: `dw` (`[num, dim]` of `dtype`,
/// floating) is zeroed, then `dw[idx[j], :] += dy[j, :]` for `j < n_idx` (repeated indices
/// sum). Failures as `rb_kernel_embedding`, plus RB_STATUS_DTYPE_MISMATCH for an integer
/// `dtype`. The caller owns every buffer; nothing is kept after the call. Thread-safe.
///
/// # Safety
/// `dy` addresses `n_idx * dim` elements, `dw` `num * dim`, `idx` `n_idx` indices, on the
/// stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_embedding_backward(
    stream: *mut rb_stream,
    dtype: i32,
    dy: *const c_void,
    idx_dtype: i32,
    idx: *const c_void,
    n_idx: usize,
    num: usize,
    dim: usize,
    dw: *mut c_void,
) -> rb_status {
    guard("rb_kernel_embedding_backward", || {
        let op = "embedding_backward";
        let dt = float_dtype(dtype, op, "dy")?;
        let it = index_dtype(idx_dtype, op, "idx")?;
        let g = dp(dy, prod(op, &[n_idx, dim])?, "dy")?;
        let i = dp(idx, n_idx, "idx")?;
        let w = dp(dw, prod(op, &[num, dim])?, "dw")?;
        if num * dim == 0 {
            return Ok(());
        }
        let (dev, s) = stream_target(stream)?;
        dev.embedding_backward(s, dt, g, it, i, n_idx, num, dim, w)
    })
}

/// `y[o, :] = sum_k w[o, k] * x[o, k, :]` (`torch.sum(x * w[..., None], dim=-2)`): `x` is
/// `[outer, n, d]`, `w` `[outer, n]`, `y` `[outer, d]`, all of `dtype` (f32, f16, bf16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (bad dtype value) or RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_weighted_sum(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    w: *const c_void,
    y: *mut c_void,
    outer: usize,
    n: usize,
    d: usize,
) -> rb_status {
    guard("rb_kernel_weighted_sum", || {
        let op = "weighted_sum";
        let dt = float_dtype(dtype, op, "x")?;
        let xp = dp(x, prod(op, &[outer, n, d])?, "x")?;
        let wp = dp(w, prod(op, &[outer, n])?, "w")?;
        let ny = prod(op, &[outer, d])?;
        let yp = dp(y, ny, "y")?;
        if ny == 0 {
            return Ok(());
        }
        let (dev, s) = stream_target(stream)?;
        if n == 0 {
            return dev.fill(s, dt, yp, ny, 0.0);
        }
        dev.weighted_sum(s, dt, &WeightedSumDesc { outer, n, d }, xp, wp, yp)
    })
}

/// The backward of `rb_kernel_weighted_sum`: from `dy` (`[outer, d]`) writes
/// `dx = w[..., None] * dy` (`[outer, n, d]`) and `dw = sum(x * dy, -1)` (`[outer, n]`);
/// `dx` or `dw` may be NULL to skip that gradient. Failures as `rb_kernel_weighted_sum`.
/// The caller owns every buffer; nothing is kept after the call. Thread-safe.
///
/// # Safety
/// The pointers address the element counts above on the stream's device.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rb_kernel_weighted_sum_backward(
    stream: *mut rb_stream,
    dtype: i32,
    x: *const c_void,
    w: *const c_void,
    dy: *const c_void,
    dx: *mut c_void,
    dw: *mut c_void,
    outer: usize,
    n: usize,
    d: usize,
) -> rb_status {
    guard("rb_kernel_weighted_sum_backward", || {
        let op = "weighted_sum_backward";
        let dt = float_dtype(dtype, op, "x")?;
        let nx = prod(op, &[outer, n, d])?;
        let nw = prod(op, &[outer, n])?;
        let (xp, wp) = (dp(x, nx, "x")?, dp(w, nw, "w")?);
        let g = dp(dy, prod(op, &[outer, d])?, "dy")?;
        // Optional outputs: NULL skips.
        let (dxp, dwp) = (dp(dx, 0, "dx")?, dp(dw, 0, "dw")?);
        let (dev, s) = stream_target(stream)?;
        if d == 0 {
            if !dwp.is_null() && nw > 0 {
                dev.fill(s, dt, dwp, nw, 0.0)?;
            }
            return Ok(());
        }
        if nx == 0 || (dxp.is_null() && dwp.is_null()) {
            return Ok(());
        }
        dev.weighted_sum_backward(s, dt, &WeightedSumDesc { outer, n, d }, xp, wp, g, dxp, dwp)
    })
}
