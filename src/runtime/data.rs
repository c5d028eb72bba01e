//! Eager data ops: permute, concat, slice, cast, fill, copy, embedding (+ backward). Same
//! conventions as [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::base::shape::contiguous_strides;
use crate::device::AxisIndex;
use crate::ops::conv::Layout;
use crate::ops::data;
use crate::runtime::eager::{output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::{Tensor, same_device};
use crate::{Error, Result};

/// Writes `x.permute(perm)` (perm already validated) into the contiguous `out`.
pub(crate) fn permute_into(s: &Stream, x: &Tensor, perm: &[usize], out: &Tensor) -> Result<()> {
    if out.numel() == 0 {
        return Ok(());
    }
    let cs = contiguous_strides(x.shape());
    let src_strides: Vec<usize> = perm.iter().map(|&d| cs[d]).collect();
    s.device().copy_strided(
        s.raw(),
        x.dtype().size(),
        x.ptr(),
        &src_strides,
        out.ptr(),
        &contiguous_strides(out.shape()),
        out.shape(),
    )
}

/// `x.permute(perm).contiguous()`.
pub fn permute(
    stream: Option<&Stream>,
    x: &Tensor,
    perm: &[i64],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let (shape, _) = data::permute_plan(x.shape(), perm)?;
    let o = output("permute", x, out, &shape, x.dtype())?;
    let s = stream_for("permute", stream, x)?;
    let p: Vec<usize> = perm
        .iter()
        .map(|&d| crate::ops::reduce::norm_dim("permute", d, x.shape().len()))
        .collect::<Result<_>>()?;
    permute_into(&s, x, &p, &o)?;
    Ok(o)
}

/// A new channels-first copy of the channels-last `x` (`[N, ..., C]` -> `[N, C, ...]`).
pub(crate) fn channels_first_copy(s: &Stream, x: &Tensor) -> Result<Tensor> {
    let o = Tensor::empty(
        x.device().clone(),
        &Layout::first_shape(x.shape()),
        x.dtype(),
    )?;
    permute_into(s, x, &Layout::to_first_perm(x.shape().len()), &o)?;
    Ok(o)
}

fn layout_rank(op: &str, x: &Tensor) -> Result<()> {
    let r = x.shape().len();
    if !(3..=5).contains(&r) {
        return Err(Error::shape(format!(
            "{op}: the input must have 3, 4 or 5 dimensions (N, C and 1 to 3 spatial), got shape {:?}",
            x.shape()
        )));
    }
    Ok(())
}

/// PyTorch's `x.to(memory_format=torch.channels_last)` as a dense tensor: `[N, C, ...]`
/// (rank 3 to 5) to `[N, ..., C]`, any dtype.
pub fn to_channels_last(
    stream: Option<&Stream>,
    x: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "to_channels_last";
    layout_rank(op, x)?;
    let o = output(op, x, out, &Layout::last_shape(x.shape()), x.dtype())?;
    let s = stream_for(op, stream, x)?;
    permute_into(&s, x, &Layout::to_last_perm(x.shape().len()), &o)?;
    Ok(o)
}

/// The inverse of [`to_channels_last`]: `[N, ..., C]` (rank 3 to 5) to `[N, C, ...]`.
pub fn to_channels_first(
    stream: Option<&Stream>,
    x: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "to_channels_first";
    layout_rank(op, x)?;
    let o = output(op, x, out, &Layout::first_shape(x.shape()), x.dtype())?;
    let s = stream_for(op, stream, x)?;
    permute_into(&s, x, &Layout::to_first_perm(x.shape().len()), &o)?;
    Ok(o)
}

/// `torch.cat(xs, dim)`: all of one dtype and device.
pub fn concat(
    stream: Option<&Stream>,
    xs: &[&Tensor],
    dim: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let first = xs
        .first()
        .ok_or_else(|| Error::invalid("concat: the list of tensors is empty"))?;
    for (i, t) in xs.iter().enumerate() {
        if t.dtype() != first.dtype() {
            return Err(Error::dtype(format!(
                "concat: tensor {i} has dtype {}, tensor 0 has {}",
                t.dtype(),
                first.dtype()
            )));
        }
        if !same_device(t.device(), first.device()) {
            return Err(Error::invalid(format!(
                "concat: tensor {i} is on {}, tensor 0 on {}",
                t.device().name(),
                first.device().name()
            )));
        }
    }
    let shapes: Vec<&[usize]> = xs.iter().map(|t| t.shape()).collect();
    let (d, shape) = data::concat_plan(&shapes, dim)?;
    let o = output("concat", first, out, &shape, first.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("concat", stream, first)?;
    let ostr = contiguous_strides(&shape);
    let es = first.dtype().size();
    let mut at = 0usize;
    for t in xs {
        if t.numel() > 0 {
            s.device().copy_strided(
                s.raw(),
                es,
                t.ptr(),
                &contiguous_strides(t.shape()),
                o.ptr().offset(at * ostr[d] * es),
                &ostr,
                t.shape(),
            )?;
        }
        at += t.shape()[d];
    }
    Ok(o)
}

/// `x[..., start:end:step, ...]` along `dim`, as a new contiguous tensor (Python/NumPy
/// slicing; a negative `step` walks down, as ONNX `Slice` does).
pub fn slice(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let (d, st, len) = data::slice_plan(x.shape(), dim, start, end, step)?;
    let mut shape = x.shape().to_vec();
    shape[d] = len;
    let o = output("slice", x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("slice", stream, x)?;
    let cs = contiguous_strides(x.shape());
    let es = x.dtype().size();
    let base = x.ptr().offset(st * cs[d] * es);
    // With one element along dim the step never applies (and may be huge).
    let ss: Vec<isize> = (0..cs.len())
        .map(|k| match (k == d, len > 1) {
            (true, true) => cs[k] as isize * step as isize,
            (true, false) => 0,
            (false, _) => cs[k] as isize,
        })
        .collect();
    s.device().copy_strided_signed(
        s.raw(),
        es,
        base,
        &ss,
        o.ptr(),
        &contiguous_strides(&shape),
        &shape,
    )?;
    Ok(o)
}

/// The backward of [`slice`]: `dy` (the slice's shape) written into zeros of `x_shape` at
/// the elements the slice took.
#[allow(clippy::too_many_arguments)]
pub fn slice_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "slice_backward";
    let (d, st, len) =
        data::slice_plan(x_shape, dim, start, end, step).map_err(|e| e.context(op))?;
    let mut shape = x_shape.to_vec();
    shape[d] = len;
    if dy.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, the slice has {shape:?}",
            dy.shape()
        )));
    }
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, dy)?;
    s.device()
        .fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)?;
    if dy.numel() == 0 {
        return Ok(o);
    }
    let cs = contiguous_strides(x_shape);
    let ys = contiguous_strides(&shape);
    let es = dy.dtype().size();
    // Walk the destination upward: for a negative step start at the lowest element it
    // takes and read dy backward along dim.
    let (lowest, down) = if step < 0 && len > 1 {
        (st - (len - 1) * step.unsigned_abs() as usize, true)
    } else {
        (st, false)
    };
    let mut ds = cs.clone();
    ds[d] = if len > 1 {
        cs[d] * step.unsigned_abs() as usize
    } else {
        0
    };
    let mut src_strides: Vec<isize> = ys.iter().map(|&v| v as isize).collect();
    let mut src = dy.ptr();
    if down {
        src_strides[d] = -(ys[d] as isize);
        src = src.offset((len - 1) * ys[d] * es);
    }
    s.device().copy_strided_signed(
        s.raw(),
        es,
        src,
        &src_strides,
        o.ptr().offset(lowest * cs[d] * es),
        &ds,
        &shape,
    )?;
    Ok(o)
}

/// The backward of [`permute`]: `dy.permute(inverse(perm)).contiguous()`.
pub fn permute_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    perm: &[i64],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "permute_backward";
    let nd = dy.shape().len();
    let inv = data::permute_inverse(op, perm, nd)?;
    let p: Vec<usize> = inv.iter().map(|&d| d as usize).collect();
    let shape: Vec<usize> = p.iter().map(|&d| dy.shape()[d]).collect();
    let o = output(op, dy, out, &shape, dy.dtype())?;
    let s = stream_for(op, stream, dy)?;
    permute_into(&s, dy, &p, &o)?;
    Ok(o)
}

/// The backward of [`concat`] for input `index`: the part of `dy` (the concatenation's
/// shape) that `xs[index]` filled. Only the shapes of `xs` are used.
pub fn concat_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    xs: &[&Tensor],
    dim: i64,
    index: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "concat_backward";
    let shapes: Vec<&[usize]> = xs.iter().map(|t| t.shape()).collect();
    let (d, off, _) = data::concat_backward_plan(dy.shape(), &shapes, dim, index)?;
    let shape = shapes[index].to_vec();
    let o = output(op, dy, out, &shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, dy)?;
    let ys = contiguous_strides(dy.shape());
    let es = dy.dtype().size();
    s.device().copy_strided(
        s.raw(),
        es,
        dy.ptr().offset(off * ys[d] * es),
        &ys,
        o.ptr(),
        &contiguous_strides(&shape),
        &shape,
    )?;
    Ok(o)
}

fn axis_index<'a>(g: &'a data::AxisGather, idx: &Tensor) -> AxisIndex<'a> {
    AxisIndex {
        shape: &g.shape,
        dim: g.dim,
        axis_len: g.axis_len,
        data_strides: &g.data_strides,
        idx_dtype: idx.dtype(),
        idx: idx.ptr(),
        idx_strides: &g.idx_strides,
    }
}

fn same_dev(op: &str, a: &Tensor, b: &Tensor, what: &str) -> Result<()> {
    if !same_device(a.device(), b.device()) {
        return Err(Error::invalid(format!(
            "{op}: {what} is on {}, the input on {}",
            b.device().name(),
            a.device().name()
        )));
    }
    Ok(())
}

/// Runs the gather `g` of `x` into a new or given output of `shape`.
fn run_gather(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    idx: &Tensor,
    g: &data::AxisGather,
    shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let o = output(op, x, out, shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device()
        .gather_axis(
            s.raw(),
            x.dtype().size(),
            x.ptr(),
            &axis_index(g, idx),
            o.ptr(),
        )
        .map_err(|e| rename(e, op))?;
    Ok(o)
}

/// Runs the scatter-add of `g` from `dy` into zeros of `x_shape`.
fn run_scatter(
    op: &str,
    stream: Option<&Stream>,
    dy: &Tensor,
    idx: &Tensor,
    g: &data::AxisGather,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    if !dy.dtype().is_float() {
        return Err(Error::dtype(format!(
            "{op}: dy has dtype {}, expected f32, f16 or bf16",
            dy.dtype()
        )));
    }
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 && dy.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, dy)?;
    s.device()
        .scatter_add_axis(
            s.raw(),
            dy.dtype(),
            dy.ptr(),
            &axis_index(g, idx),
            o.ptr(),
            o.numel(),
        )
        .map_err(|e| rename(e, op))?;
    Ok(o)
}

/// Device errors name the primitive (`gather:`, `scatter_add:`): name the op instead.
fn rename(mut e: Error, op: &str) -> Error {
    for p in ["gather: ", "scatter_add: "] {
        if let Some(rest) = e.message.strip_prefix(p) {
            e.message = format!("{op}: {rest}");
            break;
        }
    }
    e
}

/// `torch.gather(x, dim, index)` (ONNX `GatherElements`): `out[i][j][k] = x[i][index[i][j][k]][k]`
/// for `dim == 1`, and so on; `index` (i32 or i64) has x's rank and no dimension larger
/// than x's outside `dim`; negative index values count from the end (ONNX), values outside
/// `[-n, n)` are INVALID_ARGUMENT. Any dtype.
pub fn gather(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "gather";
    index_dtype(op, index)?;
    same_dev(op, x, index, "index")?;
    let g = data::gather_plan(op, x.shape(), dim, index.shape())?;
    run_gather(op, stream, x, index, &g, index.shape(), out)
}

/// The backward of [`gather`]: `dy` (index's shape) added into zeros of `x_shape` at the
/// elements the gather read (repeated indices sum). Floating dtypes.
pub fn gather_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    dim: i64,
    index: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "gather_backward";
    index_dtype(op, index)?;
    same_dev(op, dy, index, "index")?;
    let g = data::gather_plan(op, x_shape, dim, index.shape())?;
    if dy.shape() != index.shape() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, index has {:?}",
            dy.shape(),
            index.shape()
        )));
    }
    run_scatter(op, stream, dy, index, &g, x_shape, out)
}

/// ONNX `Gather` / `numpy.take(x, indices, axis)`: the slices of `x` along `axis` that
/// `indices` (i32 or i64, any shape) names; the result has shape
/// `x.shape[..axis] + indices.shape + x.shape[axis + 1..]`. Negative indices count from the
/// end; values outside `[-n, n)` are INVALID_ARGUMENT. Any dtype.
pub fn take(
    stream: Option<&Stream>,
    x: &Tensor,
    axis: i64,
    indices: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "take";
    index_dtype(op, indices)?;
    same_dev(op, x, indices, "indices")?;
    let (g, shape) = data::take_plan(x.shape(), axis, indices.shape())?;
    run_gather(op, stream, x, indices, &g, &shape, out)
}

/// The backward of [`take`]: `dy` (take's result shape) added into zeros of `x_shape` at
/// the slices the indices named (repeated indices sum). Floating dtypes.
pub fn take_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    axis: i64,
    indices: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "take_backward";
    index_dtype(op, indices)?;
    same_dev(op, dy, indices, "indices")?;
    let (g, shape) = data::take_plan(x_shape, axis, indices.shape()).map_err(|e| e.context(op))?;
    if dy.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, take's result has {shape:?}",
            dy.shape()
        )));
    }
    run_scatter(op, stream, dy, indices, &g, x_shape, out)
}

/// The scatter of `torch.max(x, dim)`'s backward: `dy` (the values' shape) into zeros of
/// `x_shape` at `indices` (as `torch.max` returned them) along `dim`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_indices(
    op: &str,
    stream: Option<&Stream>,
    dy: &Tensor,
    indices: &Tensor,
    x_shape: &[usize],
    dim: i64,
    keep_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    index_dtype(op, indices)?;
    same_dev(op, dy, indices, "indices")?;
    let dy = dy.reshape(keep_shape)?;
    let idx = indices.reshape(keep_shape)?;
    let g = data::gather_plan(op, x_shape, dim, keep_shape)?;
    run_scatter(op, stream, &dy, &idx, &g, x_shape, out)
}

/// `x.to(dtype)` (PyTorch's conversion rules).
pub fn cast(
    stream: Option<&Stream>,
    x: &Tensor,
    dtype: DType,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let o = output("cast", x, out, x.shape(), dtype)?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("cast", stream, x)?;
    if dtype == x.dtype() {
        s.device().copy_d2d(x.ptr(), o.ptr(), x.nbytes(), s.raw())?;
    } else {
        s.device()
            .cast(s.raw(), x.dtype(), x.ptr(), dtype, o.ptr(), x.numel())?;
    }
    Ok(o)
}

/// `t.fill_(value)` (the value converted as a cast would).
pub fn fill(stream: Option<&Stream>, t: &Tensor, value: f64) -> Result<()> {
    if t.numel() == 0 {
        return Ok(());
    }
    let s = stream_for("fill", stream, t)?;
    s.device()
        .fill(s.raw(), t.dtype(), t.ptr(), t.numel(), value)
}

/// `dst.copy_(src)`: same shape; the dtype converts on one device; across devices the data
/// goes through host memory (dtypes must then match).
pub fn copy(stream: Option<&Stream>, src: &Tensor, dst: &Tensor) -> Result<()> {
    if src.shape() != dst.shape() {
        return Err(Error::shape(format!(
            "copy: src has shape {:?}, dst has {:?}",
            src.shape(),
            dst.shape()
        )));
    }
    if src.numel() == 0 {
        return Ok(());
    }
    if same_device(src.device(), dst.device()) {
        let s = stream_for("copy", stream, src)?;
        if src.dtype() == dst.dtype() {
            return s
                .device()
                .copy_d2d(src.ptr(), dst.ptr(), src.nbytes(), s.raw());
        }
        return s.device().cast(
            s.raw(),
            src.dtype(),
            src.ptr(),
            dst.dtype(),
            dst.ptr(),
            src.numel(),
        );
    }
    if src.dtype() != dst.dtype() {
        return Err(Error::dtype(format!(
            "copy: across devices the dtypes must match (src {}, dst {})",
            src.dtype(),
            dst.dtype()
        )));
    }
    let mut host = vec![0u8; src.nbytes()];
    src.copy_to_host(&mut host, None)?;
    let dev = dst.device();
    dev.copy_h2d(&host, dst.ptr(), Default::default())?;
    dev.synchronize()
}

fn index_dtype(op: &str, t: &Tensor) -> Result<()> {
    if !t.dtype().is_int() {
        return Err(Error::dtype(format!(
            "{op}: indices have dtype {}, expected i32 or i64",
            t.dtype()
        )));
    }
    if t.numel() > 0 && t.ptr().is_null() {
        return Err(Error::internal(format!("{op}: indices without storage")));
    }
    Ok(())
}

/// `F.embedding(indices, weight)`: rows of `weight` ([num, dim]) picked by `indices`
/// (i32/i64, any shape); the result is `indices.shape + [dim]`.
pub fn embedding(
    stream: Option<&Stream>,
    weight: &Tensor,
    indices: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    index_dtype("embedding", indices)?;
    let shape = data::embedding_plan(weight.shape(), indices.shape())?;
    if !same_device(weight.device(), indices.device()) {
        return Err(Error::invalid(
            "embedding: weight and indices are on different devices",
        ));
    }
    let o = output("embedding", weight, out, &shape, weight.dtype())?;
    if o.numel() == 0 && indices.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("embedding", stream, weight)?;
    s.device().embedding(
        s.raw(),
        weight.dtype(),
        weight.ptr(),
        weight.shape()[0],
        weight.shape()[1],
        indices.dtype(),
        indices.ptr(),
        indices.numel(),
        o.ptr(),
    )?;
    Ok(o)
}

/// The weight gradient of embedding, dense `[num_embeddings, dim]`: rows of `dy`
/// (`indices.shape + [dim]`) summed into the rows their indices name.
pub fn embedding_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    indices: &Tensor,
    num_embeddings: usize,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    index_dtype("embedding_backward", indices)?;
    if !dy.dtype().is_float() {
        return Err(Error::dtype(format!(
            "embedding_backward: dy has dtype {}, expected f32, f16 or bf16",
            dy.dtype()
        )));
    }
    let ish = indices.shape();
    if dy.shape().len() != ish.len() + 1 || &dy.shape()[..ish.len()] != ish {
        return Err(Error::shape(format!(
            "embedding_backward: dy has shape {:?}, expected indices' shape {ish:?} + [dim]",
            dy.shape()
        )));
    }
    let dim = *dy.shape().last().unwrap();
    let o = output(
        "embedding_backward",
        dy,
        out,
        &[num_embeddings, dim],
        dy.dtype(),
    )?;
    if o.numel() == 0 {
        // No rows to write, but the indices are checked (with no rows every one is out of range).
        if indices.numel() > 0 {
            let s = stream_for("embedding_backward", stream, indices)?;
            let (dt, p, n) = (indices.dtype(), indices.ptr(), indices.numel());
            let op = "embedding_backward";
            super::raw::kernel::check_indices(s.device(), s.raw(), op, dt, p, n, num_embeddings)?;
        }
        return Ok(o);
    }
    let s = stream_for("embedding_backward", stream, dy)?;
    s.device().embedding_backward(
        s.raw(),
        dy.dtype(),
        dy.ptr(),
        indices.dtype(),
        indices.ptr(),
        indices.numel(),
        num_embeddings,
        dim,
        o.ptr(),
    )?;
    Ok(o)
}
