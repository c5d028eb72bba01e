//! Eager elementwise ops on tensors: unary maps and broadcasting binary ops with their
//! backwards, comparisons, `where` (also fused with a comparison), and the fused pointwise
//! ops add+relu and mul+add. Same conventions as [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::runtime::eager::{check_same, float_only, output, stream_for};
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
    if op == BinaryOp::Div && a.dtype().is_int() {
        return Err(Error::dtype(format!(
            "{name}: integer tensors are not supported (true division gives floats; cast first)"
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

/// `op(x)` elementwise.
pub fn unary(
    stream: Option<&Stream>,
    op: UnaryOp,
    x: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    if !x.dtype().is_float() {
        return Err(Error::dtype(format!(
            "{name}: dtype {} is not f32, f16 or bf16",
            x.dtype()
        )));
    }
    let o = output(name, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    s.device()
        .unary(s.raw(), op, x.dtype(), x.ptr(), o.ptr(), x.numel())?;
    Ok(o)
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
    float_only(&name, x)?;
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
    float_only(&name, a)?;
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
    if a.dtype() != DType::F32
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
    float_only(op, a)?;
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape()]).map_err(|e| e.context(op))?;
    let o = output(op, a, out, &shape, a.dtype())?;
    if o.numel() > 0 {
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
    float_only(op, a)?;
    let (shape, layout) =
        BroadcastLayout::new(&[a.shape(), b.shape(), c.shape()]).map_err(|e| e.context(op))?;
    let o = output(op, a, out, &shape, a.dtype())?;
    if o.numel() > 0 {
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
