//! The custom kernels on device pointers: flat elementwise ops over `n` contiguous elements
//! (outputs may alias inputs element for element), activation backwards, fill, cast,
//! optimizer steps, strided copies, comparisons and `where`, the losses, rotary embedding,
//! embedding lookup and weighted_sum on the contiguous layouts of [`crate::ops::nn`]. A
//! pointer may be NULL only when the buffer it addresses is empty.
#![allow(clippy::too_many_arguments)]

use super::{need, target};
use crate::base::dtype::DType;
use crate::base::shape::{self, BroadcastLayout};
use crate::device::{DevPtr, Device, RawStream};
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::{LossDesc, LossKind, Reduction, RopeDesc, WeightedSumDesc};
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::runtime::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// `operands` contiguous operands of `n` elements.
fn flat(operands: usize, n: usize) -> BroadcastLayout {
    BroadcastLayout {
        shape: vec![n],
        strides: vec![vec![1]; operands],
    }
}

/// The element count of `dims`, overflow-checked.
fn prod(op: &str, dims: &[usize]) -> Result<usize> {
    shape::numel(dims).map_err(|e| e.context(op))
}

/// Any dtype but bool.
fn value_dtype(op: &str, dt: DType) -> Result<()> {
    if dt == DType::Bool {
        return Err(Error::dtype(format!("{op}: dtype {dt} is not supported")));
    }
    Ok(())
}

fn float_dtype(op: &str, dt: DType, arg: &str) -> Result<()> {
    if !dt.is_float() {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {dt}, expected f32, f16 or bf16"
        )));
    }
    Ok(())
}

fn index_dtype(op: &str, dt: DType, arg: &str) -> Result<()> {
    if !dt.is_int() {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {dt}, expected i32 or i64"
        )));
    }
    Ok(())
}

// ------------------------------------------------------------------------------ elementwise

/// `y[i] = a[i] op b[i]` for `i < n` (f32, f16, bf16; i32 and i64 except div).
pub fn binary(
    stream: Option<&Stream>,
    op: BinaryOp,
    dtype: DType,
    a: DevPtr,
    b: DevPtr,
    y: DevPtr,
    n: usize,
) -> Result<()> {
    if dtype == DType::Bool || (op == BinaryOp::Div && dtype.is_int()) {
        return Err(Error::dtype(format!(
            "{}: dtype {dtype} is not supported",
            op.name()
        )));
    }
    let (a, b, y) = (need(a, n, "a")?, need(b, n, "b")?, need(y, n, "y")?);
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.binary(raw, op, dtype, a, b, y, &flat(2, n))
}

/// `y[i] = op(x[i])` for `i < n`; clamp's bounds must not be NaN.
pub fn unary(
    stream: Option<&Stream>,
    op: UnaryOp,
    dtype: DType,
    x: DevPtr,
    y: DevPtr,
    n: usize,
) -> Result<()> {
    if let UnaryOp::Clamp { min, max } = op
        && (min.is_nan() || max.is_nan())
    {
        return Err(Error::invalid("clamp: min and max must not be NaN"));
    }
    let (x, y) = (need(x, n, "x")?, need(y, n, "y")?);
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.unary(raw, op, dtype, x, y, n)
}

/// `dx[i] = op'(x[i]) * dy[i]` for `i < n`, from the op's input `x`.
pub fn unary_backward(
    stream: Option<&Stream>,
    op: UnaryOp,
    dtype: DType,
    x: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    n: usize,
) -> Result<()> {
    let (x, dy, dx) = (need(x, n, "x")?, need(dy, n, "dy")?, need(dx, n, "dx")?);
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.unary_backward(raw, op, dtype, x, dy, dx, n)
}

/// Sets `n` elements of `dtype` at `y` to `value` (converted as a cast would).
pub fn fill(stream: Option<&Stream>, dtype: DType, y: DevPtr, n: usize, value: f64) -> Result<()> {
    let y = need(y, n, "y")?;
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.fill(raw, dtype, y, n, value)
}

/// Converts `n` elements from `src_dtype` at `x` to `dst_dtype` at `y`.
pub fn cast(
    stream: Option<&Stream>,
    src_dtype: DType,
    x: DevPtr,
    dst_dtype: DType,
    y: DevPtr,
    n: usize,
) -> Result<()> {
    let (x, y) = (need(x, n, "x")?, need(y, n, "y")?);
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.cast(raw, src_dtype, x, dst_dtype, y, n)
}

// -------------------------------------------------------------------------------- optimizers

/// One SGD step on `n` elements in place; `momentum_buf` is used (and required) only with
/// momentum.
pub fn sgd_step(
    stream: Option<&Stream>,
    dtype: DType,
    param: DevPtr,
    grad: DevPtr,
    momentum_buf: DevPtr,
    n: usize,
    attrs: &SgdAttrs,
) -> Result<()> {
    attrs.validate()?;
    let (p, g) = (need(param, n, "param")?, need(grad, n, "grad")?);
    let b = if attrs.momentum != 0.0 {
        need(momentum_buf, n, "momentum_buf")?
    } else {
        DevPtr::NULL
    };
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.sgd_step(raw, dtype, p, g, b, n, attrs)
}

/// One Adam or AdamW step on `n` elements in place; `max_exp_avg_sq` is used (and required)
/// only with amsgrad.
pub fn adam_step(
    stream: Option<&Stream>,
    dtype: DType,
    param: DevPtr,
    grad: DevPtr,
    exp_avg: DevPtr,
    exp_avg_sq: DevPtr,
    max_exp_avg_sq: DevPtr,
    n: usize,
    attrs: &AdamAttrs,
) -> Result<()> {
    attrs.validate()?;
    let (p, g) = (need(param, n, "param")?, need(grad, n, "grad")?);
    let (m, v) = (
        need(exp_avg, n, "exp_avg")?,
        need(exp_avg_sq, n, "exp_avg_sq")?,
    );
    let x = if attrs.amsgrad {
        need(max_exp_avg_sq, n, "max_exp_avg_sq")?
    } else {
        DevPtr::NULL
    };
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.adam_step(raw, dtype, p, g, m, v, x, n, attrs)
}

// ------------------------------------------------------------------------------ data movement

/// Copies the `shape` block of `elem_size`-byte elements (1, 2, 4 or 8) from `src` to `dst`
/// with strides in elements; the byte ranges the two regions span must not overlap.
pub fn copy_strided(
    stream: Option<&Stream>,
    elem_size: usize,
    shape: &[usize],
    src: DevPtr,
    src_strides: &[usize],
    dst: DevPtr,
    dst_strides: &[usize],
) -> Result<()> {
    if !matches!(elem_size, 1 | 2 | 4 | 8) {
        return Err(Error::invalid(format!(
            "elem_size={elem_size} is not 1, 2, 4 or 8"
        )));
    }
    if src_strides.len() != shape.len() || dst_strides.len() != shape.len() {
        return Err(Error::invalid(format!(
            "{} source and {} destination strides for {} dimensions",
            src_strides.len(),
            dst_strides.len(),
            shape.len()
        )));
    }
    let n = shape::numel(shape)?;
    let (src, dst) = (need(src, n, "src")?, need(dst, n, "dst")?);
    if n == 0 {
        return Ok(());
    }
    let span = |p: DevPtr, st: &[usize], name: &str| -> Result<(u64, u64)> {
        let last = shape
            .iter()
            .zip(st)
            .try_fold(0usize, |a, (&e, &s)| {
                (e - 1).checked_mul(s).and_then(|v| a.checked_add(v))
            })
            .and_then(|v| v.checked_add(1))
            .and_then(|v| v.checked_mul(elem_size))
            .and_then(|v| p.0.checked_add(v as u64))
            .ok_or_else(|| Error::invalid(format!("the extent of {name} overflows")))?;
        Ok((p.0, last))
    };
    let (a, b) = (
        span(src, src_strides, "src")?,
        span(dst, dst_strides, "dst")?,
    );
    if a.0 < b.1 && b.0 < a.1 {
        return Err(Error::invalid("the source and destination regions overlap"));
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.copy_strided(raw, elem_size, src, src_strides, dst, dst_strides, shape)
}

// ------------------------------------------------------------------------ compare and where

/// `out[i] = a[i] op b[i]` as bytes 0/1 for `i < n` (any dtype but bool).
pub fn compare(
    stream: Option<&Stream>,
    op: CompareOp,
    dtype: DType,
    a: DevPtr,
    b: DevPtr,
    out: DevPtr,
    n: usize,
) -> Result<()> {
    value_dtype("compare", dtype)?;
    let (a, b, o) = (need(a, n, "a")?, need(b, n, "b")?, need(out, n, "out")?);
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.compare(raw, op, dtype, a, b, o, &flat(2, n))
}

/// `out[i] = cond[i] ? a[i] : b[i]` for `i < n` (`cond` bytes 0/1; any dtype but bool).
pub fn where_select(
    stream: Option<&Stream>,
    dtype: DType,
    cond: DevPtr,
    a: DevPtr,
    b: DevPtr,
    out: DevPtr,
    n: usize,
) -> Result<()> {
    value_dtype("where", dtype)?;
    let c = need(cond, n, "cond")?;
    let (a, b, o) = (need(a, n, "a")?, need(b, n, "b")?, need(out, n, "out")?);
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.where_select(raw, dtype, c, a, b, o, &flat(3, n))
}

/// `out[i] = (a[i] op b[i]) ? x[i] : y[i]` for `i < n` (any dtype but bool).
pub fn where_compare(
    stream: Option<&Stream>,
    op: CompareOp,
    dtype: DType,
    a: DevPtr,
    b: DevPtr,
    x: DevPtr,
    y: DevPtr,
    out: DevPtr,
    n: usize,
) -> Result<()> {
    value_dtype("where_compare", dtype)?;
    let (a, b) = (need(a, n, "a")?, need(b, n, "b")?);
    let (x, y, o) = (need(x, n, "x")?, need(y, n, "y")?, need(out, n, "out")?);
    if n == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.where_compare(raw, op, dtype, a, b, x, y, o, &flat(4, n))
}

// -------------------------------------------------------------------------------- losses

/// Checks a raw loss: the dtypes, the layout (`c` and `inner` 1 for mse/bce, at least one
/// class otherwise), label_smoothing and the element count. Returns the desc as the device
/// takes it (ignore_index and label_smoothing only where they apply) and the output count.
fn loss_desc(d: &LossDesc, dtype: DType, target_dtype: DType) -> Result<(LossDesc, usize)> {
    let name = d.kind.name();
    float_dtype(name, dtype, "input")?;
    if d.kind.is_class() {
        index_dtype(name, target_dtype, "target")?;
    } else {
        if target_dtype != dtype {
            return Err(Error::dtype(format!(
                "{name}: target has dtype {target_dtype}, input {dtype}"
            )));
        }
        if d.c != 1 || d.inner != 1 {
            return Err(Error::shape(format!(
                "{name}: c={} and inner={} must be 1 (n is the element count)",
                d.c, d.inner
            )));
        }
    }
    if d.kind.is_class() && d.c == 0 {
        return Err(Error::shape(format!("{name}: input has 0 classes")));
    }
    let ce = d.kind == LossKind::CrossEntropy;
    if ce && !(0.0..=1.0).contains(&d.label_smoothing) {
        return Err(Error::invalid(format!(
            "{name}: label_smoothing={} must be in [0, 1]",
            d.label_smoothing
        )));
    }
    prod(name, &[d.n, d.c, d.inner])?;
    let d = LossDesc {
        ignore_index: if d.kind.is_class() {
            d.ignore_index
        } else {
            -100
        },
        label_smoothing: if ce { d.label_smoothing } else { 0.0 },
        ..*d
    };
    let outs = if d.reduction == Reduction::None {
        d.items()
    } else {
        1
    };
    Ok((d, outs))
}

/// One of the four losses over `input` (`n * c * inner` of `dtype`) and `target` (`n *
/// inner`, class indices for cross_entropy/nll) into `out` (`n * inner` values for
/// reduction none, else one; the mean over no items is NaN, the sum 0).
pub fn loss(
    stream: Option<&Stream>,
    dtype: DType,
    d: &LossDesc,
    input: DevPtr,
    targets: DevPtr,
    target_dtype: DType,
    out: DevPtr,
) -> Result<()> {
    let (d, outs) = loss_desc(d, dtype, target_dtype)?;
    let x = need(input, d.n * d.c * d.inner, "input")?;
    let t = need(targets, d.items(), "target")?;
    let o = need(out, outs, "out")?;
    if outs == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if d.items() == 0 {
        let v = if d.reduction == Reduction::Mean {
            f64::NAN
        } else {
            0.0
        };
        return dev.fill(raw, dtype, o, 1, v);
    }
    dev.loss(raw, dtype, &d, x, t, target_dtype, o)
}

/// The gradient of [`loss`] with respect to `input`, from `grad_out` (what `out` held).
pub fn loss_backward(
    stream: Option<&Stream>,
    dtype: DType,
    d: &LossDesc,
    grad_out: DevPtr,
    input: DevPtr,
    targets: DevPtr,
    target_dtype: DType,
    grad_input: DevPtr,
) -> Result<()> {
    let (d, outs) = loss_desc(d, dtype, target_dtype)?;
    let total = d.n * d.c * d.inner;
    let g = need(grad_out, outs, "grad_out")?;
    let x = need(input, total, "input")?;
    let t = need(targets, d.items(), "target")?;
    let gi = need(grad_input, total, "grad_input")?;
    if d.items() == 0 || total == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.loss_backward(raw, dtype, &d, x, t, target_dtype, g, gi)
}

// ------------------------------------------------------------------------------ transformer

/// Rotary position embedding of `x` laid out `[outer, seq, inner, dim]` into `y` (which may
/// be `x`).
pub fn rope(
    stream: Option<&Stream>,
    dtype: DType,
    shape: [usize; 4],
    base: f64,
    position_offset: i64,
    inverse: bool,
    x: DevPtr,
    y: DevPtr,
) -> Result<()> {
    float_dtype("rope", dtype, "x")?;
    let count = prod("rope", &shape)?;
    let d = RopeDesc::new("rope", &shape, 1, base, position_offset, inverse)?;
    let (x, y) = (need(x, count, "x")?, need(y, count, "y")?);
    if count == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.rope(raw, dtype, &d, x, y)
}

/// Checks `n_idx` indices of `idx_dtype` at `idx` against `[0, num)` on the host, reading
/// them from the device in chunks: for problems with indices but no rows to gather or
/// scatter, where no device kernel runs to check them (with `num` 0 the first index is
/// already out of range). The message is the devices' own.
pub(crate) fn check_indices(
    dev: &Arc<dyn Device>,
    raw: RawStream,
    op: &str,
    idx_dtype: DType,
    idx: DevPtr,
    n_idx: usize,
    num: usize,
) -> Result<()> {
    index_dtype(op, idx_dtype, "idx")?;
    const CHUNK: usize = 1 << 14;
    let es = idx_dtype.size();
    let mut buf = vec![0u8; CHUNK.min(n_idx) * es];
    let mut j0 = 0;
    while j0 < n_idx {
        let m = CHUNK.min(n_idx - j0);
        let b = &mut buf[..m * es];
        dev.copy_d2h(idx.offset(j0 * es), b, raw)?;
        for (k, v) in b.chunks_exact(es).enumerate() {
            let mut w = [0u8; 8];
            w[..es].copy_from_slice(v);
            let v = if es == 4 {
                i32::from_le_bytes([w[0], w[1], w[2], w[3]]) as i64
            } else {
                i64::from_le_bytes(w)
            };
            if v < 0 || v as u64 >= num as u64 {
                return Err(Error::invalid(format!(
                    "{op}: index {v} at position {} is out of range [0, {num})",
                    j0 + k
                )));
            }
        }
        j0 += m;
    }
    Ok(())
}

/// `out[j, :] = weight[idx[j], :]` for `j < n_idx`; `weight` is `[num, dim]` of `dtype`
/// (any but bool), `idx` holds i32 or i64 indices in `[0, num)`.
pub fn embedding(
    stream: Option<&Stream>,
    dtype: DType,
    weight: DevPtr,
    num: usize,
    dim: usize,
    idx_dtype: DType,
    idx: DevPtr,
    n_idx: usize,
    out: DevPtr,
) -> Result<()> {
    value_dtype("embedding", dtype)?;
    index_dtype("embedding", idx_dtype, "idx")?;
    let w = need(weight, prod("embedding", &[num, dim])?, "weight")?;
    let i = need(idx, n_idx, "idx")?;
    let o = need(out, prod("embedding", &[n_idx, dim])?, "out")?;
    if n_idx == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.embedding(raw, dtype, w, num, dim, idx_dtype, i, n_idx, o)
}

/// The dense weight gradient of [`embedding`]: `dw` (`[num, dim]`, floating) is zeroed, then
/// `dw[idx[j], :] += dy[j, :]`. The indices are checked even when `dw` is empty.
pub fn embedding_backward(
    stream: Option<&Stream>,
    dtype: DType,
    dy: DevPtr,
    idx_dtype: DType,
    idx: DevPtr,
    n_idx: usize,
    num: usize,
    dim: usize,
    dw: DevPtr,
) -> Result<()> {
    let op = "embedding_backward";
    float_dtype(op, dtype, "dy")?;
    index_dtype(op, idx_dtype, "idx")?;
    let g = need(dy, prod(op, &[n_idx, dim])?, "dy")?;
    let i = need(idx, n_idx, "idx")?;
    let w = need(dw, prod(op, &[num, dim])?, "dw")?;
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if num * dim == 0 {
        return check_indices(&dev, raw, op, idx_dtype, i, n_idx, num);
    }
    dev.embedding_backward(raw, dtype, g, idx_dtype, i, n_idx, num, dim, w)
}

/// `y[o, :] = sum_k w[o, k] * x[o, k, :]` (`x` `[outer, n, d]`, `w` `[outer, n]`, `y`
/// `[outer, d]`); zeros when `n` is 0.
pub fn weighted_sum(
    stream: Option<&Stream>,
    dtype: DType,
    x: DevPtr,
    w: DevPtr,
    y: DevPtr,
    d: &WeightedSumDesc,
) -> Result<()> {
    let op = "weighted_sum";
    float_dtype(op, dtype, "x")?;
    let x = need(x, prod(op, &[d.outer, d.n, d.d])?, "x")?;
    let w = need(w, prod(op, &[d.outer, d.n])?, "w")?;
    let ny = prod(op, &[d.outer, d.d])?;
    let y = need(y, ny, "y")?;
    if ny == 0 {
        return Ok(());
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if d.n == 0 {
        return dev.fill(raw, dtype, y, ny, 0.0);
    }
    dev.weighted_sum(raw, dtype, d, x, w, y)
}

/// The backward of [`weighted_sum`]: `dx = w[..., None] * dy` and `dw = sum(x * dy, -1)`;
/// a NULL `dx` or `dw` skips that gradient.
pub fn weighted_sum_backward(
    stream: Option<&Stream>,
    dtype: DType,
    x: DevPtr,
    w: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    dw: DevPtr,
    d: &WeightedSumDesc,
) -> Result<()> {
    let op = "weighted_sum_backward";
    float_dtype(op, dtype, "x")?;
    let nx = prod(op, &[d.outer, d.n, d.d])?;
    let nw = prod(op, &[d.outer, d.n])?;
    let (x, w) = (need(x, nx, "x")?, need(w, nw, "w")?);
    let dy = need(dy, prod(op, &[d.outer, d.d])?, "dy")?;
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    if d.d == 0 {
        if !dw.is_null() && nw > 0 {
            dev.fill(raw, dtype, dw, nw, 0.0)?;
        }
        return Ok(());
    }
    if nx == 0 || (dx.is_null() && dw.is_null()) {
        return Ok(());
    }
    dev.weighted_sum_backward(raw, dtype, d, x, w, dy, dx, dw)
}
