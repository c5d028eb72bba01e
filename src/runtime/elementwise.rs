//! Eager elementwise ops on tensors: unary maps and broadcasting binary ops with their
//! backwards, comparisons, `where` (also fused with a comparison), and the fused pointwise
//! ops add+relu and mul+add. Same conventions as [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::runtime::eager::{check_same, floating_only, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

/// `op(a, b)` with NumPy broadcasting.
pub fn binary(
    stream: Option<&Stream>,
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    check_same(name, a, b)?;
    if a.dtype() == DType::Bool {
        return Err(Error::dtype(format!(
            "{name}: bool tensors are not supported"
        )));
    }
    if op == BinaryOp::Div && a.dtype().is_integral() {
        return Err(Error::dtype(format!(
            "{name}: integer tensors ({}) are not supported (true division gives floats; cast \
             first)",
            a.dtype()
        )));
    }
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(name))?;
    let o = output(name, a, out, &shape, a.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, a)?;
    s.device()
        .binary(s.raw(), op, a.dtype(), a.ptr(), b.ptr(), o.ptr(), &layout)?;
    Ok(o)
}

/// `op(x)` elementwise. Floating dtypes; `neg`, `abs`, `sign` and `relu` take the integer
/// dtypes too ([`int_unary`]).
pub fn unary(
    stream: Option<&Stream>,
    op: UnaryOp,
    x: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    op.check().map_err(Error::invalid)?;
    if x.dtype().is_integral() && op.takes_integers() {
        return int_unary(stream, op, x, out);
    }
    floating_only(name, x)?;
    let o = output(name, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    s.device()
        .unary(s.raw(), op, x.dtype(), x.ptr(), o.ptr(), x.numel())?;
    Ok(o)
}

/// `neg`, `abs`, `sign` and `relu` of an integer tensor, as PyTorch's integer kernels,
/// composed from the integer binary and compare ops (so every device has them): `neg` is
/// `0 - x` (wrapping: i8 -128 stays -128, u8 wraps), `abs` is `max(x, -x)` (the minimum of a
/// signed type stays itself) and the identity on u8, `sign` is `x > 0 ? 1 : (x < 0 ? -1 :
/// 0)`, `relu` is `max(x, 0)`.
fn int_unary(
    stream: Option<&Stream>,
    op: UnaryOp,
    x: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    let o = output(name, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    let zero = scalar(&s, x, 0.0)?;
    match op {
        UnaryOp::Neg => binary(Some(&s), BinaryOp::Sub, &zero, x, Some(&o)),
        UnaryOp::Abs if x.dtype() == DType::U8 => {
            if o.ptr() != x.ptr() {
                s.device().copy_d2d(x.ptr(), o.ptr(), x.nbytes(), s.raw())?;
            }
            Ok(o)
        }
        UnaryOp::Abs => {
            let n = binary(Some(&s), BinaryOp::Sub, &zero, x, None)?;
            binary(Some(&s), BinaryOp::Maximum, x, &n, Some(&o))
        }
        UnaryOp::Relu => binary(Some(&s), BinaryOp::Maximum, x, &zero, Some(&o)),
        UnaryOp::Sign => {
            let one = scalar(&s, x, 1.0)?;
            let minus = scalar(&s, x, -1.0)?;
            let neg = where_compare(Some(&s), CompareOp::Lt, x, &zero, &minus, &zero, None)?;
            where_compare(Some(&s), CompareOp::Gt, x, &zero, &one, &neg, Some(&o))
        }
        _ => Err(Error::dtype(format!(
            "{name}: dtype {} is not supported (f32, f16, bf16 or f64)",
            x.dtype()
        ))),
    }
}

fn same_shape(op: &str, what: &str, a: &Tensor, b: &Tensor) -> Result<()> {
    if a.shape() != b.shape() {
        return Err(Error::shape(format!(
            "{op}: {what} has shape {:?}, expected {:?}",
            b.shape(),
            a.shape()
        )));
    }
    Ok(())
}

/// The backward of a unary op: `dx = op'(x) * dy`, from the op's input `x`.
pub fn unary_backward(
    stream: Option<&Stream>,
    op: UnaryOp,
    x: &Tensor,
    dy: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = format!("{}_backward", op.name());
    op.check().map_err(Error::invalid)?;
    floating_only(&name, x)?;
    check_same(&name, x, dy)?;
    same_shape(&name, "dy", x, dy)?;
    let o = output(&name, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(&name, stream, x)?;
    s.device().unary_backward(
        s.raw(),
        op,
        x.dtype(),
        x.ptr(),
        dy.ptr(),
        o.ptr(),
        x.numel(),
    )?;
    Ok(o)
}

/// Sums `full` (of the broadcast shape) down to `target`'s shape, writing into `target`.
pub(crate) fn sum_to(s: &Stream, full: &Tensor, target: &Tensor) -> Result<()> {
    let fs = full.shape();
    let ts = target.shape();
    let off = fs.len() - ts.len();
    let dims: Vec<i64> = (0..fs.len())
        .filter(|&d| d < off || (ts[d - off] == 1 && fs[d] != 1))
        .map(|d| d as i64)
        .collect();
    if dims.is_empty() {
        s.device()
            .copy_d2d(full.ptr(), target.ptr(), full.nbytes(), s.raw())?;
        return Ok(());
    }
    let view = target.reshape(&crate::ops::reduce::plan("sum", fs, &dims, true)?.keep_shape)?;
    crate::runtime::reduce::reduce(
        Some(s),
        crate::ops::reduce::ReduceOp::Sum,
        full,
        &dims,
        true,
        Some(&view),
    )?;
    Ok(())
}

/// The backward of a broadcasting binary op: `(da, db)` with `a`'s and `b`'s shapes (the
/// gradient summed over the dimensions each operand was broadcast along). `dy` has the
/// broadcast shape.
pub fn binary_backward(
    stream: Option<&Stream>,
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    dy: &Tensor,
    out_a: Option<&Tensor>,
    out_b: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let name = format!("{}_backward", op.name());
    floating_only(&name, a)?;
    check_same(&name, a, b)?;
    check_same(&name, a, dy)?;
    let (shape, _) = BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(&name))?;
    if dy.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{name}: dy has shape {:?}, the broadcast result has {shape:?}",
            dy.shape()
        )));
    }
    let (_, layout) = BroadcastLayout::new(&[a.shape(), b.shape(), dy.shape()])?;
    let da = output(&name, a, out_a, a.shape(), a.dtype())?;
    let db = output(&name, a, out_b, b.shape(), b.dtype())?;
    let s = stream_for(&name, stream, a)?;
    let n: usize = shape.iter().product();
    if n == 0 {
        // Nothing flows back: the gradients are zero.
        for t in [&da, &db] {
            if t.numel() > 0 {
                s.device()
                    .fill(s.raw(), t.dtype(), t.ptr(), t.numel(), 0.0)?;
            }
        }
        return Ok((da, db));
    }
    let exact_terms = matches!(op, BinaryOp::Add | BinaryOp::Sub); // each term is ±dy
    if matches!(a.dtype(), DType::F16 | DType::BF16)
        && !exact_terms
        && (da.shape() != shape.as_slice() || db.shape() != shape.as_slice())
    {
        // A gradient summed over broadcast dimensions: in f16/bf16 the per-element terms stay
        // in f32 and only each sum is rounded, once (rounding every term first loses up to
        // the fan-in times half an ulp).
        let f32 = |t: &Tensor| crate::runtime::data::cast(Some(&s), t, DType::F32, None);
        let (ga, gb) = binary_backward(Some(&s), op, &f32(a)?, &f32(b)?, &f32(dy)?, None, None)?;
        crate::runtime::data::cast(Some(&s), &ga, a.dtype(), Some(&da))?;
        crate::runtime::data::cast(Some(&s), &gb, a.dtype(), Some(&db))?;
        return Ok((da, db));
    }
    let full = |t: &Tensor| -> Result<Option<Tensor>> {
        if t.shape() == shape.as_slice() {
            Ok(None)
        } else {
            Tensor::empty(a.device().clone(), &shape, a.dtype()).map(Some)
        }
    };
    let (fa, fb) = (full(&da)?, full(&db)?);
    let pa = fa.as_ref().map(|t| t.ptr()).unwrap_or(da.ptr());
    let pb = fb.as_ref().map(|t| t.ptr()).unwrap_or(db.ptr());
    s.device().binary_backward(
        s.raw(),
        op,
        a.dtype(),
        a.ptr(),
        b.ptr(),
        dy.ptr(),
        pa,
        pb,
        &layout,
    )?;
    if let Some(f) = &fa {
        sum_to(&s, f, &da)?;
    }
    if let Some(f) = &fb {
        sum_to(&s, f, &db)?;
    }
    Ok((da, db))
}

/// `op(a, b)` with broadcasting, as a bool tensor.
pub fn compare(
    stream: Option<&Stream>,
    op: CompareOp,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    check_same(name, a, b)?;
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(name))?;
    let o = output(name, a, out, &shape, DType::Bool)?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, a)?;
    s.device()
        .compare(s.raw(), op, a.dtype(), a.ptr(), b.ptr(), o.ptr(), &layout)?;
    Ok(o)
}

/// `torch.where(cond, a, b)` with three-way broadcasting, in one pass.
pub fn where_(
    stream: Option<&Stream>,
    cond: &Tensor,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    if cond.dtype() != DType::Bool {
        return Err(Error::dtype(format!(
            "where: cond has dtype {}, expected bool",
            cond.dtype()
        )));
    }
    check_same("where", a, b)?;
    if !crate::runtime::tensor::same_device(cond.device(), a.device()) {
        return Err(Error::invalid(
            "where: cond is on another device than a and b",
        ));
    }
    let (shape, layout) = BroadcastLayout::new(&[cond.shape(), a.shape(), b.shape()])
        .map_err(|e| e.context("where"))?;
    let o = output("where", a, out, &shape, a.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("where", stream, a)?;
    s.device().where_select(
        s.raw(),
        a.dtype(),
        cond.ptr(),
        a.ptr(),
        b.ptr(),
        o.ptr(),
        &layout,
    )?;
    Ok(o)
}

/// `torch.where(a op b, x, y)` fused: four-way broadcasting, one pass and no bool
/// temporary on every device. `a`, `b`, `x`, `y` share one dtype and device.
pub fn where_compare(
    stream: Option<&Stream>,
    op: CompareOp,
    a: &Tensor,
    b: &Tensor,
    x: &Tensor,
    y: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = "where_compare";
    check_same(name, a, b)?;
    check_same(name, a, x)?;
    check_same(name, x, y)?;
    let (shape, layout) = BroadcastLayout::new(&[a.shape(), b.shape(), x.shape(), y.shape()])
        .map_err(|e| e.context(name))?;
    let o = output(name, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    s.device().where_compare(
        s.raw(),
        op,
        x.dtype(),
        a.ptr(),
        b.ptr(),
        x.ptr(),
        y.ptr(),
        o.ptr(),
        &layout,
    )?;
    Ok(o)
}

/// Fused `max(a + b, 0)` with broadcasting.
pub fn add_relu(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "add_relu";
    check_same(op, a, b)?;
    floating_only(op, a)?;
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(op))?;
    let o = output(op, a, out, &shape, a.dtype())?;
    if o.numel() > 0 && a.dtype() == DType::F64 {
        // f64: the sum, then relu in place (the float64 formulas, one rounding each).
        let s = stream_for(op, stream, a)?;
        binary(Some(&s), BinaryOp::Add, a, b, Some(&o))?;
        unary(Some(&s), UnaryOp::Relu, &o, Some(&o))?;
    } else if o.numel() > 0 {
        let s = stream_for(op, stream, a)?;
        s.device()
            .add_relu(s.raw(), a.dtype(), a.ptr(), b.ptr(), o.ptr(), &layout)?;
    }
    Ok(o)
}

/// Fused `a * b + c` with broadcasting.
pub fn mul_add(
    stream: Option<&Stream>,
    a: &Tensor,
    b: &Tensor,
    c: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "mul_add";
    check_same(op, a, b)?;
    check_same(op, a, c)?;
    floating_only(op, a)?;
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape(), c.shape()]).map_err(|e| e.context(op))?;
    let o = output(op, a, out, &shape, a.dtype())?;
    if o.numel() > 0 && a.dtype() == DType::F64 {
        // f64: the product, then the sum (two roundings, no fma: the float64 reference).
        let s = stream_for(op, stream, a)?;
        let ab = binary(Some(&s), BinaryOp::Mul, a, b, None)?;
        binary(Some(&s), BinaryOp::Add, &ab, c, Some(&o))?;
    } else if o.numel() > 0 {
        let s = stream_for(op, stream, a)?;
        s.device().mul_add(
            s.raw(),
            a.dtype(),
            a.ptr(),
            b.ptr(),
            c.ptr(),
            o.ptr(),
            &layout,
        )?;
    }
    Ok(o)
}

/// A 0-d tensor of `like`'s dtype and device holding `value`, filled on `s`.
fn scalar(s: &Stream, like: &Tensor, value: f64) -> Result<Tensor> {
    let t = Tensor::empty(like.device().clone(), &[], like.dtype())?;
    s.device().fill(s.raw(), t.dtype(), t.ptr(), 1, value)?;
    Ok(t)
}

/// `t` broadcast to `shape` as a new contiguous tensor (or `t` itself when it has it).
fn expanded(s: &Stream, t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    if t.shape() == shape {
        return Ok(t.clone());
    }
    let o = Tensor::empty(t.device().clone(), shape, t.dtype())?;
    if o.numel() > 0 {
        s.device().copy_strided(
            s.raw(),
            t.dtype().size(),
            t.ptr(),
            &crate::base::shape::broadcast_strides(t.shape(), shape),
            o.ptr(),
            &crate::base::shape::contiguous_strides(shape),
            shape,
        )?;
    }
    Ok(o)
}

/// Runs `f` into the gradient `dest` when it has the broadcast `shape`, else into a
/// temporary summed down to `dest`'s shape.
fn into_grad(
    s: &Stream,
    dest: &Tensor,
    shape: &[usize],
    f: impl FnOnce(Option<&Tensor>) -> Result<Tensor>,
) -> Result<()> {
    if dest.shape() == shape {
        f(Some(dest))?;
    } else {
        let full = f(None)?;
        sum_to(s, &full, dest)?;
    }
    Ok(())
}

/// Checks an optional operand against `x` (same dtype and device).
fn check_opt(op: &str, x: &Tensor, t: Option<&Tensor>) -> Result<()> {
    match t {
        Some(t) => check_same(op, x, t),
        None => Ok(()),
    }
}

/// The broadcast shape of `x` and the bounds that are present.
fn clamp_shape(
    op: &str,
    x: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
) -> Result<Vec<usize>> {
    if min.is_none() && max.is_none() {
        return Err(Error::invalid(format!(
            "{op}: at least one of min and max must not be NULL"
        )));
    }
    let mut shapes = vec![x.shape()];
    shapes.extend(min.iter().chain(max.iter()).map(|t| t.shape()));
    let (shape, _) = BroadcastLayout::new(&shapes).map_err(|e| e.context(op))?;
    Ok(shape)
}

/// `torch.clamp(x, min=Tensor, max=Tensor)` with NumPy broadcasting over the three (either
/// bound may be absent, not both): `minimum(maximum(x, min), max)`, so a NaN in x or in a
/// bound gives NaN and `max` wins where `min > max`. Floating and integer dtypes.
pub fn clamp_tensor(
    stream: Option<&Stream>,
    x: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "clamp";
    check_opt(op, x, min)?;
    check_opt(op, x, max)?;
    if x.dtype() == DType::Bool {
        return Err(Error::dtype(format!(
            "{op}: bool tensors are not supported"
        )));
    }
    let shape = clamp_shape(op, x, min, max)?;
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    match (min, max) {
        (Some(lo), Some(hi)) => {
            let (tshape, _) = BroadcastLayout::new(&[x.shape(), lo.shape()])?;
            // The intermediate goes straight into the output when that cannot clobber `hi`.
            let t = if tshape == shape && o.ptr() != hi.ptr() {
                binary(Some(&s), BinaryOp::Maximum, x, lo, Some(&o))?
            } else {
                binary(Some(&s), BinaryOp::Maximum, x, lo, None)?
            };
            binary(Some(&s), BinaryOp::Minimum, &t, hi, Some(&o))?;
        }
        (Some(lo), None) => {
            binary(Some(&s), BinaryOp::Maximum, x, lo, Some(&o))?;
        }
        (None, Some(hi)) => {
            binary(Some(&s), BinaryOp::Minimum, x, hi, Some(&o))?;
        }
        (None, None) => unreachable!(),
    }
    Ok(o)
}

/// `torch.clamp(x, min, max)` with number bounds (`min = -inf` / `max = +inf`: no bound;
/// NaN is INVALID_ARGUMENT). f32/f16/bf16 clamp by the bounds rounded to f32 (the unary
/// kernels); f64 by the exact doubles and the integer dtypes by the bounds converted to
/// their dtype, both through [`clamp_tensor`] with 0-d bounds. An integer bound converts as
/// PyTorch's `Scalar::to<scalar_t>()` does: in range it is itself; on u8 `-255..=-1` wraps
/// to `256 + b` (c10's `overflows` lets negatives wrap for unsigned targets); otherwise it is
/// INVALID_ARGUMENT (PyTorch's "value cannot be converted to type ... without overflow"). A
/// non-integral (or infinite, other than the absent ones) bound on an integer tensor is
/// INVALID_ARGUMENT: PyTorch would promote the result to float (cast first). Bool tensors
/// are DTYPE_MISMATCH (PyTorch promotes them to int64 or float).
pub fn clamp(
    stream: Option<&Stream>,
    x: &Tensor,
    min: f64,
    max: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "clamp";
    if min.is_nan() || max.is_nan() {
        return Err(Error::invalid(format!("{op}: min and max must not be NaN")));
    }
    let dt = x.dtype();
    if dt.is_float() {
        return unary(stream, clamp_f32(min, max), x, out);
    }
    if !dt.is_floating() && !dt.is_integral() {
        return Err(Error::dtype(format!(
            "{op}: dtype {dt} is not supported (PyTorch promotes a bool tensor clamped by \
             numbers to int64 or float: cast first)"
        )));
    }
    let lo = scalar_bound(op, dt, min, true)?;
    let hi = scalar_bound(op, dt, max, false)?;
    if lo.is_none() && hi.is_none() {
        // No bound: a copy.
        let o = output(op, x, out, x.shape(), dt)?;
        if o.numel() > 0 && o.ptr() != x.ptr() {
            let s = stream_for(op, stream, x)?;
            s.device().copy_d2d(x.ptr(), o.ptr(), x.nbytes(), s.raw())?;
        }
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    let lo = lo.map(|v| scalar(&s, x, v)).transpose()?;
    let hi = hi.map(|v| scalar(&s, x, v)).transpose()?;
    clamp_tensor(Some(&s), x, lo.as_ref(), hi.as_ref(), out)
}

/// The backward of [`clamp`]: `dy` where `min <= x <= max`, else 0; f64 compares with the
/// exact doubles, f32/f16/bf16 with the bounds rounded to f32 (as the forward).
pub fn clamp_backward(
    stream: Option<&Stream>,
    x: &Tensor,
    dy: &Tensor,
    min: f64,
    max: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "clamp_backward";
    if min.is_nan() || max.is_nan() {
        return Err(Error::invalid(format!("{op}: min and max must not be NaN")));
    }
    if x.dtype() != DType::F64 {
        return unary_backward(stream, clamp_f32(min, max), x, dy, out);
    }
    let (lo, hi) = (
        scalar_bound(op, DType::F64, min, true)?,
        scalar_bound(op, DType::F64, max, false)?,
    );
    if lo.is_none() && hi.is_none() {
        return unary_backward(stream, clamp_f32(min, max), x, dy, out);
    }
    let s = stream_for(op, stream, x)?;
    let lo = lo.map(|v| scalar(&s, x, v)).transpose()?;
    let hi = hi.map(|v| scalar(&s, x, v)).transpose()?;
    use crate::runtime::eager::Grad;
    let g = match out {
        Some(t) => Grad::Into(t),
        None => Grad::New,
    };
    let [dx, _, _] = clamp_tensor_backward(
        Some(&s),
        x,
        lo.as_ref(),
        hi.as_ref(),
        dy,
        [g, Grad::Skip, Grad::Skip],
    )?;
    dx.ok_or_else(|| Error::invalid(format!("{op}: no gradient computed")))
}

/// The f32 unary op of [`clamp`]'s number bounds.
fn clamp_f32(min: f64, max: f64) -> UnaryOp {
    UnaryOp::Clamp {
        min: min as f32,
        max: max as f32,
    }
}

/// A number bound of [`clamp`] as the value the 0-d bound tensor of `dt` holds, or None for
/// an absent one (`-inf` below, `+inf` above).
fn scalar_bound(op: &str, dt: DType, v: f64, lower: bool) -> Result<Option<f64>> {
    let which = if lower { "min" } else { "max" };
    let absent = if lower {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    if v == absent {
        return Ok(None);
    }
    if dt.is_floating() {
        return Ok(Some(v));
    }
    if !v.is_finite() || v.fract() != 0.0 {
        return Err(Error::invalid(format!(
            "{op}: {which}={v} is not an integer: PyTorch would promote the {dt} tensor's \
             result to float; cast x to a floating dtype first"
        )));
    }
    // The dtype's range as f64: [lo, end) (i64's end is 2^63, which i64::MAX rounds to).
    let (lo, end) = match dt {
        DType::I8 => (i8::MIN as f64, i8::MAX as f64 + 1.0),
        DType::U8 => (0.0, u8::MAX as f64 + 1.0),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64 + 1.0),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64 + 1.0),
        _ => (i64::MIN as f64, -(i64::MIN as f64)),
    };
    if dt == DType::U8 && (-255.0..0.0).contains(&v) {
        // c10's checked conversion lets negatives wrap into an unsigned type.
        return Ok(Some(v + 256.0));
    }
    if v < lo || v >= end {
        return Err(Error::invalid(format!(
            "{op}: {which}={v} cannot be converted to {dt} without overflow (as in PyTorch)"
        )));
    }
    Ok(Some(v))
}

/// The backward of [`clamp_tensor`] (PyTorch's `clamp_backward` and
/// `clamp_backward_min_max`): `[dx, dmin, dmax]` with x's, min's and max's shapes from `dy`
/// (the broadcast shape), each summed over its operand's broadcast dimensions. x gets `dy`
/// where `min <= x <= max`; with both bounds min gets it where `x < min` and `min < max`,
/// max where `x > max` or `max < min`; with one bound, the bound where x is beyond it. The
/// gradient of an absent bound is not computed (None). Floating dtypes.
pub fn clamp_tensor_backward(
    stream: Option<&Stream>,
    x: &Tensor,
    min: Option<&Tensor>,
    max: Option<&Tensor>,
    dy: &Tensor,
    grads: [crate::runtime::eager::Grad<'_>; 3],
) -> Result<[Option<Tensor>; 3]> {
    use crate::runtime::eager::Grad;
    let op = "clamp_backward";
    floating_only(op, x)?;
    check_opt(op, x, min)?;
    check_opt(op, x, max)?;
    check_same(op, x, dy)?;
    let shape = clamp_shape(op, x, min, max)?;
    if dy.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, the broadcast result has {shape:?}",
            dy.shape()
        )));
    }
    let dx = grads[0].make(op, x, x.shape())?;
    let dmin = match min {
        Some(t) => grads[1].make(op, x, t.shape())?,
        None => Grad::Skip.make(op, x, &[])?,
    };
    let dmax = match max {
        Some(t) => grads[2].make(op, x, t.shape())?,
        None => Grad::Skip.make(op, x, &[])?,
    };
    let s = stream_for(op, stream, x)?;
    let n: usize = shape.iter().product();
    if n == 0 {
        crate::runtime::eager::zero_grads(&s, &[&dx, &dmin, &dmax])?;
        return Ok([dx, dmin, dmax]);
    }
    let z = scalar(&s, x, 0.0)?;
    let wc = |c: CompareOp, a: &Tensor, b: &Tensor, p: &Tensor, q: &Tensor, o: Option<&Tensor>| {
        where_compare(Some(&s), c, a, b, p, q, o)
    };
    if let Some(g) = &dx {
        into_grad(&s, g, &shape, |o| match (min, max) {
            (Some(lo), Some(hi)) => {
                let t = wc(CompareOp::Ge, x, lo, dy, &z, None)?;
                wc(CompareOp::Le, x, hi, &t, &z, o)
            }
            (Some(lo), None) => wc(CompareOp::Ge, x, lo, dy, &z, o),
            (None, Some(hi)) => wc(CompareOp::Le, x, hi, dy, &z, o),
            (None, None) => unreachable!(),
        })?;
    }
    if let (Some(g), Some(lo)) = (&dmin, min) {
        into_grad(&s, g, &shape, |o| match max {
            Some(hi) => {
                let t = wc(CompareOp::Lt, x, lo, dy, &z, None)?;
                wc(CompareOp::Lt, lo, hi, &t, &z, o)
            }
            None => wc(CompareOp::Lt, x, lo, dy, &z, o),
        })?;
    }
    if let (Some(g), Some(hi)) = (&dmax, max) {
        into_grad(&s, g, &shape, |o| match min {
            Some(lo) => {
                let t = wc(CompareOp::Gt, x, hi, dy, &z, None)?;
                wc(CompareOp::Lt, hi, lo, dy, &t, o)
            }
            None => wc(CompareOp::Gt, x, hi, dy, &z, o),
        })?;
    }
    Ok([dx, dmin, dmax])
}

/// The backward of `torch.where(cond, a, b)`: `[da, db]` with a's and b's shapes from `dy`
/// (the broadcast shape of cond, a and b): `dy` where cond holds (for a) or not (for b),
/// zero elsewhere, each summed over its operand's broadcast dimensions. Floating dtypes.
pub fn where_backward(
    stream: Option<&Stream>,
    cond: &Tensor,
    a: &Tensor,
    b: &Tensor,
    dy: &Tensor,
    grads: [crate::runtime::eager::Grad<'_>; 2],
) -> Result<[Option<Tensor>; 2]> {
    let op = "where_backward";
    if cond.dtype() != DType::Bool {
        return Err(Error::dtype(format!(
            "{op}: cond has dtype {}, expected bool",
            cond.dtype()
        )));
    }
    check_same(op, a, b)?;
    check_same(op, a, dy)?;
    floating_only(op, a)?;
    if !crate::runtime::tensor::same_device(cond.device(), a.device()) {
        return Err(Error::invalid(format!(
            "{op}: cond is on another device than a and b"
        )));
    }
    let (shape, _) =
        BroadcastLayout::new(&[cond.shape(), a.shape(), b.shape()]).map_err(|e| e.context(op))?;
    if dy.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, the broadcast result has {shape:?}",
            dy.shape()
        )));
    }
    let da = grads[0].make(op, a, a.shape())?;
    let db = grads[1].make(op, a, b.shape())?;
    let s = stream_for(op, stream, a)?;
    if dy.numel() == 0 {
        crate::runtime::eager::zero_grads(&s, &[&da, &db])?;
        return Ok([da, db]);
    }
    let z = scalar(&s, a, 0.0)?;
    if let Some(g) = &da {
        into_grad(&s, g, &shape, |o| where_(Some(&s), cond, dy, &z, o))?;
    }
    if let Some(g) = &db {
        into_grad(&s, g, &shape, |o| where_(Some(&s), cond, &z, dy, o))?;
    }
    Ok([da, db])
}

/// The integer `alpha` of an integer tensor's `add`/`sub` (PyTorch: it must be integral and
/// fit the dtype).
fn int_alpha(op: &str, dtype: DType, alpha: f64) -> Result<i64> {
    let (lo, hi) = match dtype {
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::U8 => (0.0, u8::MAX as f64),
        _ => (i64::MIN as f64, 9.223_372_036_854_775e18),
    };
    if !alpha.is_finite() || alpha.fract() != 0.0 {
        return Err(Error::invalid(format!(
            "{op}: alpha {alpha} is not an integer (integer tensors take an integral alpha)"
        )));
    }
    if alpha < lo || alpha > hi {
        return Err(Error::invalid(format!(
            "{op}: alpha {alpha} does not fit in {dtype}"
        )));
    }
    Ok(alpha as i64)
}

/// `torch.add(a, b, alpha=alpha)` (`op` Add) or `torch.sub(a, b, alpha=alpha)` (`op` Sub):
/// `a ± alpha * b` with NumPy broadcasting. Floating dtypes compute in f32 with alpha as
/// an f32 (PyTorch's opmath); integer dtypes need an integral alpha that fits the dtype.
pub fn add_scaled(
    stream: Option<&Stream>,
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    alpha: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = match op {
        BinaryOp::Add => "add_scaled",
        BinaryOp::Sub => "sub_scaled",
        _ => return Err(Error::invalid("add_scaled: op must be add or sub")),
    };
    check_same(name, a, b)?;
    if a.dtype() == DType::Bool {
        return Err(Error::dtype(format!(
            "{name}: bool tensors are not supported"
        )));
    }
    if a.dtype().is_integral() {
        let k = int_alpha(name, a.dtype(), alpha)?;
        if k == 1 {
            return binary(stream, op, a, b, out);
        }
        let (shape, _) =
            BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(name))?;
        let o = output(name, a, out, &shape, a.dtype())?;
        if o.numel() == 0 {
            return Ok(o);
        }
        let s = stream_for(name, stream, a)?;
        let ks = scalar(&s, a, k as f64)?;
        let t = binary(Some(&s), BinaryOp::Mul, b, &ks, None)?;
        return binary(Some(&s), op, a, &t, Some(&o));
    }
    if alpha.is_nan() {
        return Err(Error::invalid(format!("{name}: alpha is NaN")));
    }
    if alpha == 1.0 {
        return binary(stream, op, a, b, out);
    }
    let (shape, _) = BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(name))?;
    let o = output(name, a, out, &shape, a.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, a)?;
    if a.dtype() == DType::F64 {
        // f64: `a + (±alpha) b` with alpha kept in f64 (PyTorch's double opmath).
        let cs = scalar(&s, a, if op == BinaryOp::Sub { -alpha } else { alpha })?;
        let t = binary(Some(&s), BinaryOp::Mul, b, &cs, None)?;
        return binary(Some(&s), BinaryOp::Add, a, &t, Some(&o));
    }
    let c = if op == BinaryOp::Sub { -alpha } else { alpha } as f32;
    if c == 0.0 || c.is_infinite() {
        // `b * c + a` elementwise, so NaNs and infinities in b propagate as in PyTorch
        // (geam would not read b at all for c == 0).
        let cs = scalar(&s, a, c as f64)?;
        return mul_add(Some(&s), b, &cs, a, Some(&o));
    }
    let af = expanded(&s, a, &shape)?;
    let bf = expanded(&s, b, &shape)?;
    let n = o.numel();
    s.device().geam(
        s.raw(),
        &crate::device::GeamDesc {
            dtype: a.dtype(),
            trans_a: crate::device::Transpose::No,
            trans_b: crate::device::Transpose::No,
            m: n,
            n: 1,
            alpha: 1.0,
            a: af.ptr(),
            lda: n,
            beta: c,
            b: bf.ptr(),
            ldb: n,
            c: o.ptr(),
            ldc: n,
        },
    )?;
    Ok(o)
}

/// The backward of [`add_scaled`]: `(da, db)` with a's and b's shapes from `dy` (the
/// broadcast shape): `da = dy`, `db = ±alpha * dy`, each summed over its operand's
/// broadcast dimensions. Floating dtypes.
#[allow(clippy::too_many_arguments)]
pub fn add_scaled_backward(
    stream: Option<&Stream>,
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    dy: &Tensor,
    alpha: f64,
    out_a: Option<&Tensor>,
    out_b: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let name = match op {
        BinaryOp::Add => "add_scaled_backward",
        BinaryOp::Sub => "sub_scaled_backward",
        _ => return Err(Error::invalid("add_scaled_backward: op must be add or sub")),
    };
    if alpha.is_nan() {
        return Err(Error::invalid(format!("{name}: alpha is NaN")));
    }
    let (da, db) = binary_backward(stream, op, a, b, dy, out_a, out_b)?;
    if alpha != 1.0 && db.numel() > 0 {
        let s = stream_for(name, stream, a)?;
        let c = alpha as f32;
        if db.dtype() == DType::F64 {
            // f64: alpha kept in f64.
            let cs = scalar(&s, a, alpha)?;
            binary(Some(&s), BinaryOp::Mul, &db, &cs, Some(&db))?;
        } else if c == 0.0 || c.is_infinite() {
            let cs = scalar(&s, a, c as f64)?;
            binary(Some(&s), BinaryOp::Mul, &db, &cs, Some(&db))?;
        } else {
            let n = db.numel();
            s.device().geam(
                s.raw(),
                &crate::device::GeamDesc {
                    dtype: db.dtype(),
                    trans_a: crate::device::Transpose::No,
                    trans_b: crate::device::Transpose::No,
                    m: n,
                    n: 1,
                    alpha: 0.0,
                    a: crate::device::DevPtr::NULL,
                    lda: n,
                    beta: c,
                    b: db.ptr(),
                    ldb: n,
                    c: db.ptr(),
                    ldc: n,
                },
            )?;
        }
    }
    Ok((da, db))
}

/// `weight`'s shape broadcast against `x` along PyTorch's channel dimension (1; `x` of fewer
/// than two dimensions has no channel dimension and takes one weight), and the dimensions
/// the weight gradient sums over.
fn prelu_plan(name: &str, x: &Tensor, weight: &Tensor) -> Result<(Vec<usize>, Vec<i64>)> {
    floating_only(name, x)?;
    check_same(name, x, weight)?;
    if weight.shape().len() > 1 {
        return Err(Error::shape(format!(
            "{name}: weight has shape {:?}, expected one dimension (one weight or one per channel)",
            weight.shape()
        )));
    }
    let nd = x.shape().len();
    let w = weight.numel();
    if w == 1 {
        return Ok((vec![], vec![]));
    }
    let channels = if nd >= 2 { x.shape()[1] } else { 1 };
    if w != channels {
        return Err(Error::shape(format!(
            "{name}: weight has {w} elements, input {:?} has {channels} channel{} (dimension 1): \
             expected 1 or {channels}",
            x.shape(),
            if channels == 1 { "" } else { "s" }
        )));
    }
    let mut wshape = vec![1usize; nd - 1];
    wshape[0] = w;
    let dims = (0..nd as i64).filter(|&d| d != 1).collect();
    Ok((wshape, dims))
}

/// A 0-d zero of `like`'s dtype and device, filled on `stream` (so it is ordered with the
/// stream's work and may be captured into a device graph).
fn scalar_zero(stream: Option<&Stream>, like: &Tensor) -> Result<Tensor> {
    let z = Tensor::empty(like.device().clone(), &[], like.dtype())?;
    crate::runtime::data::fill(stream, &z, 0.0)?;
    Ok(z)
}

/// `torch.nn.functional.prelu(x, weight)`: `x > 0 ? x : weight[c] * x` with `c` the channel
/// (dimension 1) of the element; `weight` holds one value or one per channel.
pub fn prelu(
    stream: Option<&Stream>,
    x: &Tensor,
    weight: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = "prelu";
    let (wshape, _) = prelu_plan(name, x, weight)?;
    let o = output(name, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let w = weight.reshape(&wshape)?;
    let xw = binary(stream, BinaryOp::Mul, x, &w, None)?;
    let zero = scalar_zero(stream, x)?;
    where_compare(stream, CompareOp::Gt, x, &zero, x, &xw, Some(&o))
}

/// The backward of [`prelu`] (PyTorch's `_prelu_kernel_backward`): `dx = x > 0 ? dy :
/// weight[c] * dy` and `dweight[c]` the sum over the channel's elements of `x > 0 ? 0 :
/// x * dy` (NaN `x` propagates into the weight gradient, as in PyTorch).
pub fn prelu_backward(
    stream: Option<&Stream>,
    x: &Tensor,
    weight: &Tensor,
    dy: &Tensor,
    out_x: Option<&Tensor>,
    out_w: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let name = "prelu_backward";
    let (wshape, dims) = prelu_plan(name, x, weight)?;
    check_same(name, x, dy)?;
    same_shape(name, "dy", x, dy)?;
    let dx = output(name, x, out_x, x.shape(), x.dtype())?;
    let dw = output(name, x, out_w, weight.shape(), x.dtype())?;
    if x.numel() == 0 {
        crate::runtime::data::fill(stream, &dw, 0.0)?;
        return Ok((dx, dw));
    }
    let w = weight.reshape(&wshape)?;
    let zero = scalar_zero(stream, x)?;
    let dyw = binary(stream, BinaryOp::Mul, dy, &w, None)?;
    where_compare(stream, CompareOp::Gt, x, &zero, dy, &dyw, Some(&dx))?;
    let xdy = binary(stream, BinaryOp::Mul, x, dy, None)?;
    let per_elem = where_compare(stream, CompareOp::Gt, x, &zero, &zero, &xdy, None)?;
    let red_shape: Vec<usize> = if dims.is_empty() {
        vec![]
    } else {
        vec![weight.numel()]
    };
    let view = dw.reshape(&red_shape)?;
    crate::runtime::reduce::reduce(
        stream,
        crate::ops::reduce::ReduceOp::Sum,
        &per_elem,
        &dims,
        false,
        Some(&view),
    )?;
    Ok((dx, dw))
}
