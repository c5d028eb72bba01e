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
pub(crate) fn run_gather(
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

/// Runs the scatter-add of `g` from `dy` into zeros of `x_shape` (a gradient: floating
/// dtypes, f64 included).
pub(crate) fn run_scatter(
    op: &str,
    stream: Option<&Stream>,
    dy: &Tensor,
    idx: &Tensor,
    g: &data::AxisGather,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    floating_dy(op, dy)?;
    scatter_sum(op, stream, dy, idx, g, x_shape, out)
}

/// `dy` must be floating (f32, f16, bf16 or f64): the gradient ops.
fn floating_dy(op: &str, dy: &Tensor) -> Result<()> {
    if !dy.dtype().is_floating() {
        return Err(Error::dtype(format!(
            "{op}: dy has dtype {}, expected f32, f16, bf16 or f64",
            dy.dtype()
        )));
    }
    Ok(())
}

/// The scatter-add of `g` from `dy` into zeros of `x_shape`, any dtype but bool: f32, f16
/// and bf16 through the device's scatter-add (f32 accumulation), the others (f64 in f64,
/// integers wrapping) as zeros and the in-order scatter with reduce add.
fn scatter_sum(
    op: &str,
    stream: Option<&Stream>,
    dy: &Tensor,
    idx: &Tensor,
    g: &data::AxisGather,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    if dy.dtype() == DType::Bool {
        return Err(Error::dtype(format!("{op}: dtype bool is not supported")));
    }
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 && dy.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, dy)?;
    if !dy.dtype().is_float() {
        if o.numel() > 0 {
            s.device()
                .fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)?;
        }
        if dy.numel() > 0 {
            s.device()
                .scatter_axis(
                    s.raw(),
                    dy.dtype(),
                    dy.ptr(),
                    &axis_index(g, idx),
                    o.ptr(),
                    data::ScatterReduce::Add,
                )
                .map_err(|e| rename(e, op))?;
        }
        return Ok(o);
    }
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

/// Device errors name the primitive (`gather:`, `scatter_add:`, `scatter:`): name the op
/// instead.
fn rename(mut e: Error, op: &str) -> Error {
    for p in ["gather: ", "scatter_add: ", "scatter: "] {
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
/// elements the gather read (repeated indices sum). Floating dtypes, f64 included.
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
/// the slices the indices named (repeated indices sum). Floating dtypes, f64 included.
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
    if dy.dtype() == DType::F64 {
        // One index per fiber: the assignment scatter (every dtype) into zeros is the sum.
        let o = output(op, &dy, out, x_shape, dy.dtype())?;
        if o.numel() == 0 {
            return Ok(o);
        }
        let s = stream_for(op, stream, &dy)?;
        s.device()
            .fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)?;
        if dy.numel() > 0 {
            s.device()
                .scatter_axis(
                    s.raw(),
                    dy.dtype(),
                    dy.ptr(),
                    &axis_index(&g, &idx),
                    o.ptr(),
                    data::ScatterReduce::None,
                )
                .map_err(|e| rename(e, op))?;
        }
        return Ok(o);
    }
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
    floating_dy("embedding_backward", dy)?;
    let ish = indices.shape();
    if dy.shape().len() != ish.len() + 1 || &dy.shape()[..ish.len()] != ish {
        return Err(Error::shape(format!(
            "embedding_backward: dy has shape {:?}, expected indices' shape {ish:?} + [dim]",
            dy.shape()
        )));
    }
    if dy.dtype() == DType::F64 {
        // The indices checked as embedding's (no negative values), then take's backward
        // along the rows: the in-order f64 scatter-add.
        let op = "embedding_backward";
        same_dev(op, dy, indices, "indices")?;
        if indices.numel() > 0 {
            let s = stream_for(op, stream, indices)?;
            let (dt, p, n) = (indices.dtype(), indices.ptr(), indices.numel());
            super::raw::kernel::check_indices(s.device(), s.raw(), op, dt, p, n, num_embeddings)?;
        }
        let dim = *dy.shape().last().unwrap();
        return take_backward(stream, dy, &[num_embeddings, dim], 0, indices, out)
            .map_err(|e| rename_prefix(e, "take_backward", op));
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

// ---- ops of exported models built on the device primitives above (strided copies, the
// axis gather and its scatter-add, broadcasting elementwise ops, reductions, GEMM) -------

/// A small i64 table of `like`'s device (an index map), built on the host.
fn index_table(like: &Tensor, v: &[i64]) -> Result<Tensor> {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_ne_bytes()).collect();
    Tensor::from_bytes(like.device().clone(), &bytes, &[v.len()], DType::I64)
}

/// The padding modes of [`pad`] (`torch.nn.functional.pad`'s `mode`).
pub const PAD_CONSTANT: i64 = 0;
pub const PAD_REFLECT: i64 = 1;
pub const PAD_REPLICATE: i64 = 2;

/// One padded dimension: `(dim, before, after)`, pads as F.pad gives them (last dimension
/// first, pairs of before/after).
fn pad_plan(op: &str, shape: &[usize], pads: &[i64], mode: i64) -> Result<Vec<(usize, i64, i64)>> {
    if !(PAD_CONSTANT..=PAD_REPLICATE).contains(&mode) {
        return Err(Error::invalid(format!(
            "{op}: mode {mode} is not 0 (constant), 1 (reflect) or 2 (replicate)"
        )));
    }
    if !pads.len().is_multiple_of(2) || pads.len() / 2 > shape.len() {
        return Err(Error::invalid(format!(
            "{op}: {} pads for a {}-dimensional input: expected pairs (before, after) for at \
             most {} dimensions, the last dimension first",
            pads.len(),
            shape.len(),
            shape.len()
        )));
    }
    let mut plan = vec![];
    for k in 0..pads.len() / 2 {
        let d = shape.len() - 1 - k;
        let (l, r) = (pads[2 * k], pads[2 * k + 1]);
        let n = shape[d] as i64;
        if n + l + r < 0 {
            return Err(Error::shape(format!(
                "{op}: pads ({l}, {r}) leave a negative extent in dimension {d} of size {n}"
            )));
        }
        if mode != PAD_CONSTANT && (l < 0 || r < 0) {
            return Err(Error::invalid(format!(
                "{op}: negative pads ({l}, {r}) need mode constant"
            )));
        }
        if mode == PAD_REFLECT && (l >= n || r >= n) && (l > 0 || r > 0) {
            return Err(Error::invalid(format!(
                "{op}: reflect pads ({l}, {r}) must be smaller than dimension {d} of size {n}"
            )));
        }
        if mode == PAD_REPLICATE && n == 0 && (l > 0 || r > 0) {
            return Err(Error::invalid(format!(
                "{op}: replicate cannot pad the empty dimension {d}"
            )));
        }
        if l != 0 || r != 0 {
            plan.push((d, l, r));
        }
    }
    Ok(plan)
}

/// The source index of each padded position along a dimension of `n` (reflect/replicate).
fn pad_index(n: i64, l: i64, r: i64, mode: i64) -> Vec<i64> {
    (0..n + l + r)
        .map(|j| {
            let i = j - l;
            if mode == PAD_REFLECT {
                if i < 0 {
                    -i
                } else if i >= n {
                    2 * (n - 1) - i
                } else {
                    i
                }
            } else {
                i.clamp(0, n - 1)
            }
        })
        .collect()
}

/// The interior block of a constant pad: (shape, offset of its first element in the
/// unpadded tensor, the same in the padded tensor), in elements.
fn pad_interior(
    shape: &[usize],
    out_shape: &[usize],
    plan: &[(usize, i64, i64)],
) -> (Vec<usize>, usize, usize) {
    let (cs, co) = (contiguous_strides(shape), contiguous_strides(out_shape));
    let mut block = shape.to_vec();
    let (mut xo, mut oo) = (0usize, 0usize);
    for &(d, l, r) in plan {
        let n = shape[d] as i64;
        let cut = (-l).max(0) + (-r).max(0);
        block[d] = (n - cut).max(0) as usize;
        xo += (-l).max(0) as usize * cs[d];
        oo += l.max(0) as usize * co[d];
    }
    (block, xo, oo)
}

/// `torch.nn.functional.pad(x, pads, mode, value)`: `pads` are (before, after) pairs, the
/// last dimension first, for as many trailing dimensions as there are pairs (asymmetric;
/// negative pads crop in constant mode). `mode` 0 constant (`value`), 1 reflect (pads
/// smaller than the dimension), 2 replicate. Any dtype.
pub fn pad(
    stream: Option<&Stream>,
    x: &Tensor,
    pads: &[i64],
    mode: i64,
    value: f64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "pad";
    let plan = pad_plan(op, x.shape(), pads, mode)?;
    let mut shape = x.shape().to_vec();
    for &(d, l, r) in &plan {
        shape[d] = (shape[d] as i64 + l + r) as usize;
    }
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if mode == PAD_CONSTANT || plan.is_empty() {
        if plan.iter().any(|&(_, l, r)| l > 0 || r > 0) {
            fill(Some(&s), &o, value)?;
        }
        let (block, xo, oo) = pad_interior(x.shape(), &shape, &plan);
        if block.contains(&0) {
            return Ok(o);
        }
        let es = x.dtype().size();
        s.device().copy_strided(
            s.raw(),
            es,
            x.ptr().offset(xo * es),
            &contiguous_strides(x.shape()),
            o.ptr().offset(oo * es),
            &contiguous_strides(&shape),
            &block,
        )?;
        return Ok(o);
    }
    // reflect / replicate: one gather per padded dimension through its index map.
    let mut cur = x.clone();
    for (k, &(d, l, r)) in plan.iter().enumerate() {
        let idx = index_table(x, &pad_index(cur.shape()[d] as i64, l, r, mode))?;
        let dest = if k + 1 == plan.len() { Some(&o) } else { None };
        cur = take(Some(&s), &cur, d as i64, &idx, dest)?;
    }
    Ok(o)
}

/// The backward of [`pad`] with the same `pads` and `mode`: the gradient of the input of
/// shape `x_shape` (constant: the interior of `dy`; reflect/replicate: each padded element's
/// gradient added to the element it copied). Floating dtypes, f64 included.
pub fn pad_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    pads: &[i64],
    mode: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "pad_backward";
    floating_dy(op, dy)?;
    let plan = pad_plan(op, x_shape, pads, mode)?;
    let mut shape = x_shape.to_vec();
    for &(d, l, r) in &plan {
        shape[d] = (shape[d] as i64 + l + r) as usize;
    }
    if dy.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, the padded result has {shape:?}",
            dy.shape()
        )));
    }
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, dy)?;
    if mode == PAD_CONSTANT || plan.is_empty() {
        let (block, xo, oo) = pad_interior(x_shape, &shape, &plan);
        if block.iter().product::<usize>() < o.numel() {
            fill(Some(&s), &o, 0.0)?;
        }
        if block.contains(&0) {
            return Ok(o);
        }
        let es = dy.dtype().size();
        s.device().copy_strided(
            s.raw(),
            es,
            dy.ptr().offset(oo * es),
            &contiguous_strides(&shape),
            o.ptr().offset(xo * es),
            &contiguous_strides(x_shape),
            &block,
        )?;
        return Ok(o);
    }
    let mut cur = dy.clone();
    let mut cur_shape = shape;
    for (k, &(d, l, r)) in plan.iter().enumerate().rev() {
        let n = x_shape[d];
        let idx = index_table(dy, &pad_index(n as i64, l, r, mode))?;
        cur_shape[d] = n;
        let dest = if k == 0 { Some(&o) } else { None };
        cur = take_backward(Some(&s), &cur, &cur_shape, d as i64, &idx, dest)?;
    }
    Ok(o)
}

/// `torch.index_select(x, dim, index)`: the slices of `x` along `dim` that the 1-D (or 0-D)
/// i32/i64 `index` names, in its order. Negative index values count from the end; values
/// outside `[-n, n)` are INVALID_ARGUMENT. Any dtype.
pub fn index_select(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "index_select";
    if index.shape().len() > 1 {
        return Err(Error::shape(format!(
            "{op}: index has shape {:?}, expected one dimension",
            index.shape()
        )));
    }
    let idx = index.reshape(&[index.numel()])?;
    take(stream, x, dim, &idx, out).map_err(|e| rename_take(e, op))
}

/// The backward of [`index_select`]: zeros of `x_shape` with each slice of `dy` added to the
/// slice its index names (repeated indices sum). Floating dtypes, f64 included.
pub fn index_select_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    dim: i64,
    index: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "index_select_backward";
    if index.shape().len() > 1 {
        return Err(Error::shape(format!(
            "{op}: index has shape {:?}, expected one dimension",
            index.shape()
        )));
    }
    let idx = index.reshape(&[index.numel()])?;
    take_backward(stream, dy, x_shape, dim, &idx, out).map_err(|e| rename_take(e, op))
}

/// `x.index_copy_(dim, index, src)`, in place: the slices of `src` along `dim` are stored into
/// the slices of `x` that the 1-D (or 0-D) i32/i64 `index` names, in its order (`src` has x's
/// shape but `index.numel()` along `dim`). Negative values count from the end; values outside
/// `[-n, n)` are INVALID_ARGUMENT (checked on the device); where indices repeat, which slice
/// lands is unspecified (as in PyTorch). Any dtype; `src` may not overlap `x`. The index may
/// live on the device, so a recorded graph writes where the index tensor says at each run
/// (a KV cache's position).
pub fn index_copy(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
) -> Result<()> {
    let op = "index_copy";
    index_dtype(op, index)?;
    same_dev(op, x, index, "index")?;
    same_dev(op, x, src, "src")?;
    if src.dtype() != x.dtype() {
        return Err(Error::dtype(format!(
            "{op}: src has dtype {}, x has {}",
            src.dtype(),
            x.dtype()
        )));
    }
    if index.shape().len() > 1 {
        return Err(Error::shape(format!(
            "{op}: index has shape {:?}, expected one dimension",
            index.shape()
        )));
    }
    let n = index.numel();
    let idx = index.reshape(&[n])?;
    let (g, shape) = data::take_plan(x.shape(), dim, &[n]).map_err(|e| rename_take(e, op))?;
    if src.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: src has shape {:?}, expected {shape:?} (x's shape with index's {n} slices along dim {dim})",
            src.shape()
        )));
    }
    crate::runtime::eager::check_overlap(
        op,
        x,
        &[("src", Some(src)), ("index", Some(index))],
        false,
    )?;
    if src.numel() == 0 {
        return Ok(());
    }
    let s = stream_for(op, stream, x)?;
    s.device()
        .scatter_axis(
            s.raw(),
            x.dtype(),
            src.ptr(),
            &axis_index(&g, &idx),
            x.ptr(),
            data::ScatterReduce::None,
        )
        .map_err(|e| rename(e, op))
}

/// The backward of [`index_copy`]: `*dx` is `dy` with the indexed slices zeroed (they were
/// overwritten), `*dsrc` is `dy`'s indexed slices (`index_select(dy, dim, index)`).
pub fn index_copy_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    dim: i64,
    index: &Tensor,
    out_x: Option<&Tensor>,
    out_src: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let op = "index_copy_backward";
    let dsrc = index_select(stream, dy, dim, index, out_src)
        .map_err(|e| rename_prefix(e, "index_select", op))?;
    let dx = output(op, dy, out_x, dy.shape(), dy.dtype())?;
    crate::runtime::eager::check_overlap(
        op,
        &dx,
        &[("index", Some(index)), ("dsrc", Some(&dsrc))],
        false,
    )?;
    copy(stream, dy, &dx)?;
    if dsrc.numel() > 0 {
        let zeros = Tensor::empty(dsrc.device().clone(), dsrc.shape(), dsrc.dtype())?;
        fill(stream, &zeros, 0.0)?;
        index_copy(stream, &dx, dim, index, &zeros)
            .map_err(|e| rename_prefix(e, "index_copy", op))?;
    }
    Ok((dx, dsrc))
}

fn rename_take(mut e: Error, op: &str) -> Error {
    for p in ["take_backward: ", "take: "] {
        if let Some(rest) = e.message.strip_prefix(p) {
            e.message = format!("{op}: {rest}");
            break;
        }
    }
    e
}

/// `x.expand(shape)` made contiguous: dimensions of size 1 (and new leading ones) repeat;
/// -1 keeps a dimension. Any dtype.
pub fn expand(
    stream: Option<&Stream>,
    x: &Tensor,
    shape: &[i64],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "expand";
    let (target, src_strides) = expand_plan(op, x.shape(), shape)?;
    let o = output(op, x, out, &target, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().copy_strided(
        s.raw(),
        x.dtype().size(),
        x.ptr(),
        &src_strides,
        o.ptr(),
        &contiguous_strides(&target),
        &target,
    )?;
    Ok(o)
}

/// The expanded shape and the source's element strides over it (0 where it repeats).
fn expand_plan(op: &str, x: &[usize], shape: &[i64]) -> Result<(Vec<usize>, Vec<usize>)> {
    if shape.len() < x.len() {
        return Err(Error::shape(format!(
            "{op}: the target {shape:?} has fewer dimensions than the input {x:?}"
        )));
    }
    let lead = shape.len() - x.len();
    let cs = contiguous_strides(x);
    let mut target = vec![0usize; shape.len()];
    let mut strides = vec![0usize; shape.len()];
    for (k, &want) in shape.iter().enumerate() {
        if k < lead {
            if want < 0 {
                return Err(Error::shape(format!(
                    "{op}: -1 is not allowed for the new leading dimension {k} of {shape:?}"
                )));
            }
            target[k] = want as usize;
            continue;
        }
        let n = x[k - lead];
        target[k] = match want {
            -1 => n,
            w if w >= 0 && (w as usize == n || n == 1) => w as usize,
            _ => {
                return Err(Error::shape(format!(
                    "{op}: cannot expand {x:?} to {shape:?} (dimension {k}: {n} to {want})"
                )));
            }
        };
        strides[k] = if n == 1 && target[k] != 1 {
            0
        } else {
            cs[k - lead]
        };
    }
    Ok((target, strides))
}

/// The backward of [`expand`]: `dy` summed over the repeated dimensions into `x_shape`.
/// Floating dtypes, f64 included.
pub fn expand_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "expand_backward";
    let want: Vec<i64> = dy.shape().iter().map(|&v| v as i64).collect();
    let (target, _) = expand_plan(op, x_shape, &want)?;
    if target != dy.shape() {
        return Err(Error::shape(format!(
            "{op}: dy {:?} is no expansion of {x_shape:?}",
            dy.shape()
        )));
    }
    sum_into(op, stream, dy, x_shape, out)
}

/// `dy` summed to `x_shape` (broadcast rules: leading dimensions and size-1 dimensions).
fn sum_into(
    op: &str,
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    floating_dy(op, dy)?;
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let lead = dy.shape().len() - x_shape.len();
    let dims: Vec<i64> = (0..dy.shape().len())
        .filter(|&k| k < lead || (x_shape[k - lead] == 1 && dy.shape()[k] != 1))
        .map(|k| k as i64)
        .collect();
    if dims.is_empty() {
        copy(stream, &dy.reshape(x_shape)?, &o)?;
        return Ok(o);
    }
    if dy.numel() == 0 {
        fill(stream, &o, 0.0)?;
        return Ok(o);
    }
    let kept: Vec<usize> = (0..dy.shape().len())
        .filter(|k| !dims.contains(&(*k as i64)))
        .map(|k| dy.shape()[k])
        .collect();
    let view = o.reshape(&kept)?;
    crate::runtime::reduce::reduce(
        stream,
        crate::ops::reduce::ReduceOp::Sum,
        dy,
        &dims,
        false,
        Some(&view),
    )?;
    Ok(o)
}

/// `x.repeat(repeats)` (ONNX `Tile`, `numpy.tile`): `repeats` has at least x's rank (extra
/// leading repeats add dimensions); each dimension is repeated whole. Any dtype.
pub fn tile(
    stream: Option<&Stream>,
    x: &Tensor,
    repeats: &[i64],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "tile";
    let (shape, inter) = tile_plan(op, x.shape(), repeats)?;
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    // Copy x viewed as [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...]: the output's
    // contiguous layout is exactly that interleaved shape.
    let (ishape, _) = &inter;
    let want: Vec<i64> = ishape.iter().map(|&v| v as i64).collect();
    let xs: Vec<usize> = inter.1.clone();
    let xv = x.reshape(&xs)?;
    let (_, src) = expand_plan(op, &xs, &want)?;
    let s = stream_for(op, stream, x)?;
    s.device().copy_strided(
        s.raw(),
        x.dtype().size(),
        xv.ptr(),
        &src,
        o.ptr(),
        &contiguous_strides(ishape),
        ishape,
    )?;
    Ok(o)
}

/// The tiled shape, and (the interleaved [r0, s0, r1, s1, ...] shape, x as [1, s0, 1, ...]).
#[allow(clippy::type_complexity)]
fn tile_plan(
    op: &str,
    x: &[usize],
    repeats: &[i64],
) -> Result<(Vec<usize>, (Vec<usize>, Vec<usize>))> {
    if repeats.len() < x.len() {
        return Err(Error::shape(format!(
            "{op}: {} repeats for a {}-dimensional input (at least one per dimension)",
            repeats.len(),
            x.len()
        )));
    }
    if let Some(r) = repeats.iter().find(|&&r| r < 0) {
        return Err(Error::invalid(format!("{op}: repeat {r} is negative")));
    }
    let lead = repeats.len() - x.len();
    let mut shape = vec![];
    let mut inter = vec![];
    let mut xs = vec![];
    for (k, &r) in repeats.iter().enumerate() {
        let n = if k < lead { 1 } else { x[k - lead] };
        shape.push(n * r as usize);
        inter.push(r as usize);
        inter.push(n);
        xs.push(1);
        xs.push(n);
    }
    Ok((shape, (inter, xs)))
}

/// The backward of [`tile`]: `dy` summed over the repeats into `x_shape`. Floating dtypes,
/// f64 included.
pub fn tile_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    repeats: &[i64],
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "tile_backward";
    let (shape, (inter, xs)) = tile_plan(op, x_shape, repeats)?;
    if dy.shape() != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, the tiled result has {shape:?}",
            dy.shape()
        )));
    }
    let g = sum_into(op, stream, &dy.reshape(&inter)?, &xs, None)?;
    let o = output(op, dy, out, x_shape, dy.dtype())?;
    if o.numel() > 0 {
        copy(stream, &g.reshape(x_shape)?, &o)?;
    }
    Ok(o)
}

/// `torch.flatten(x, start_dim, end_dim)` as a new contiguous tensor. Any dtype.
pub fn flatten(
    stream: Option<&Stream>,
    x: &Tensor,
    start_dim: i64,
    end_dim: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "flatten";
    let nd = x.shape().len();
    let shape = if nd == 0 {
        norm_dim(op, start_dim, 1)?;
        norm_dim(op, end_dim, 1)?;
        vec![1]
    } else {
        let (a, b) = (norm_dim(op, start_dim, nd)?, norm_dim(op, end_dim, nd)?);
        if a > b {
            return Err(Error::invalid(format!(
                "{op}: start_dim {start_dim} comes after end_dim {end_dim}"
            )));
        }
        let mut sh = x.shape()[..a].to_vec();
        sh.push(x.shape()[a..=b].iter().product());
        sh.extend_from_slice(&x.shape()[b + 1..]);
        sh
    };
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() > 0 {
        copy(stream, &x.reshape(&shape)?, &o)?;
    }
    Ok(o)
}

fn norm_dim(op: &str, dim: i64, nd: usize) -> Result<usize> {
    crate::ops::reduce::norm_dim(op, dim, nd)
}

/// `torch.cumsum(x, dim)` (ONNX `CumSum` with `exclusive`/`reverse`): running sums along
/// `dim`. Floating dtypes are computed as one GEMM of x (dim last) by a triangular matrix
/// of ones (f16/bf16 accumulate in f32, f64 in f64), the result in x's dtype; the integer
/// dtypes and bool are scanned in i64 (wrapping) into an i64 result, as PyTorch's integer
/// cumsum (an `out` of another dtype is DTYPE_MISMATCH).
pub fn cumsum(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    exclusive: bool,
    reverse: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    cumsum_impl("cumsum", stream, x, dim, exclusive, reverse, false, out)
}

/// The backward of [`cumsum`]: the running sums of `dy` the other way.
pub fn cumsum_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    dim: i64,
    exclusive: bool,
    reverse: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    cumsum_impl(
        "cumsum_backward",
        stream,
        dy,
        dim,
        exclusive,
        reverse,
        true,
        out,
    )
}

#[allow(clippy::too_many_arguments)]
fn cumsum_impl(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    exclusive: bool,
    reverse: bool,
    transpose: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    if !x.dtype().is_floating() {
        if transpose {
            // Integer tensors have no gradient.
            return Err(Error::dtype(format!(
                "{op}: dtype {} is not f32, f16, bf16 or f64",
                x.dtype()
            )));
        }
        return cumsum_int(op, stream, x, dim, exclusive, reverse, out);
    }
    let nd = x.shape().len();
    let d = norm_dim(op, dim, nd)?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    let len = if nd == 0 { 1 } else { x.shape()[d] };
    // y[j] = sum_i x[i] * m[i][j]; m[i][j] = 1 where i contributes to j.
    let mut m = vec![0.0f64; len * len];
    for i in 0..len {
        for j in 0..len {
            let on = match (reverse, exclusive) {
                (false, false) => i <= j,
                (false, true) => i < j,
                (true, false) => i >= j,
                (true, true) => i > j,
            };
            let (r, c) = if transpose { (j, i) } else { (i, j) };
            if on {
                m[r * len + c] = 1.0;
            }
        }
    }
    let mt = crate::runtime::conv::from_f64(x, &m, &[len, len])?;
    // x with dim moved last, as [rows, len].
    let mut perm: Vec<usize> = (0..nd).filter(|&k| k != d).collect();
    if nd > 0 {
        perm.push(d);
    }
    let moved: Vec<usize> = perm.iter().map(|&k| x.shape()[k]).collect();
    let rows = x.numel() / len;
    let last = nd == 0 || d == nd - 1;
    let xm = if last {
        x.reshape(&[rows, len])?
    } else {
        let t = Tensor::empty(x.device().clone(), &moved, x.dtype())?;
        permute_into(&s, x, &perm, &t)?;
        t.reshape(&[rows, len])?
    };
    if last {
        crate::runtime::blas::matmul(Some(&s), &xm, &mt, Some(&o.reshape(&[rows, len])?))?;
        return Ok(o);
    }
    let y = crate::runtime::blas::matmul(Some(&s), &xm, &mt, None)?.reshape(&moved)?;
    // back: inverse permutation
    let mut inv = vec![0usize; nd];
    for (k, &p) in perm.iter().enumerate() {
        inv[p] = k;
    }
    permute_into(&s, &y, &inv, &o)?;
    Ok(o)
}

/// [`cumsum`] of the integer dtypes and bool: an i64 result (PyTorch's), scanned on the
/// device in i64.
fn cumsum_int(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    exclusive: bool,
    reverse: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let nd = x.shape().len();
    let d = norm_dim(op, dim, nd)?;
    if let Some(o) = out
        && o.dtype() != DType::I64
    {
        return Err(Error::dtype(format!(
            "{op}: out has dtype {}; the running sums of {} are i64 (PyTorch's integer \
             cumsum returns i64)",
            o.dtype(),
            x.dtype()
        )));
    }
    let o = output(op, x, out, x.shape(), DType::I64)?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    let (outer, len, inner) = if nd == 0 {
        (1, 1, 1)
    } else {
        let sh = x.shape();
        (
            sh[..d].iter().product(),
            sh[d],
            sh[d + 1..].iter().product(),
        )
    };
    s.device().cumsum_int(
        s.raw(),
        x.dtype(),
        x.ptr(),
        outer,
        len,
        inner,
        exclusive,
        reverse,
        o.ptr(),
    )?;
    Ok(o)
}

/// `torch.triu(x, diagonal)` (`upper`) or `torch.tril(x, diagonal)` (ONNX `Trilu`) over the
/// last two dimensions; the rest is zeroed. Every dtype.
pub fn trilu(
    stream: Option<&Stream>,
    x: &Tensor,
    upper: bool,
    diagonal: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    trilu_impl("trilu", stream, x, upper, diagonal, out)
}

/// The backward of [`trilu`]: `dy` masked the same way. Floating dtypes, f64 included.
pub fn trilu_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    upper: bool,
    diagonal: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    floating_dy("trilu_backward", dy)?;
    trilu_impl("trilu_backward", stream, dy, upper, diagonal, out)
}

fn trilu_impl(
    op: &str,
    stream: Option<&Stream>,
    x: &Tensor,
    upper: bool,
    diagonal: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let nd = x.shape().len();
    if nd < 2 {
        return Err(Error::shape(format!(
            "{op}: input of shape {:?} has fewer than two dimensions",
            x.shape()
        )));
    }
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let (r, c) = (x.shape()[nd - 2], x.shape()[nd - 1]);
    let keep: Vec<u8> = (0..r * c)
        .map(|e| {
            let (i, j) = ((e / c) as i64, (e % c) as i64);
            u8::from(if upper {
                j - i >= diagonal
            } else {
                j - i <= diagonal
            })
        })
        .collect();
    let mask = Tensor::from_bytes(x.device().clone(), &keep, &[r, c], DType::Bool)?;
    let zero = Tensor::empty(x.device().clone(), &[], x.dtype())?;
    let s = stream_for(op, stream, x)?;
    fill(Some(&s), &zero, 0.0)?;
    crate::runtime::elementwise::where_(Some(&s), &mask, x, &zero, Some(&o))
}

/// `x.scatter_add(dim, index, src)` (ONNX `ScatterElements` with reduction add): a copy of
/// `x` with each element of `src` (over index's shape) added at the position `index` names
/// along `dim`. Every dtype but bool (f64 and the integers add in order, integers
/// wrapping); index values outside `[-n, n)` are INVALID_ARGUMENT.
pub fn scatter_add(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "scatter_add";
    index_dtype(op, index)?;
    same_dev(op, x, index, "index")?;
    same_dev(op, x, src, "src")?;
    if src.dtype() != x.dtype() {
        return Err(Error::dtype(format!(
            "{op}: src has dtype {}, x has {}",
            src.dtype(),
            x.dtype()
        )));
    }
    let g = data::gather_plan(op, x.shape(), dim, index.shape())?;
    if src.shape().len() != index.shape().len()
        || index.shape().iter().zip(src.shape()).any(|(i, s)| i > s)
    {
        return Err(Error::shape(format!(
            "{op}: src {:?} is smaller than index {:?}",
            src.shape(),
            index.shape()
        )));
    }
    // src's elements over index's shape, contiguous.
    let src_c = if src.shape() == index.shape() {
        src.clone()
    } else {
        let t = Tensor::empty(src.device().clone(), index.shape(), src.dtype())?;
        if t.numel() > 0 {
            let s = stream_for(op, stream, src)?;
            s.device().copy_strided(
                s.raw(),
                src.dtype().size(),
                src.ptr(),
                &contiguous_strides(src.shape()),
                t.ptr(),
                &contiguous_strides(index.shape()),
                index.shape(),
            )?;
        }
        t
    };
    let added = scatter_sum(op, stream, &src_c, index, &g, x.shape(), None)?;
    crate::runtime::elementwise::binary(
        stream,
        crate::ops::elementwise::BinaryOp::Add,
        x,
        &added,
        out,
    )
}

/// `torch.nn.functional.one_hot(index, num_classes)`: i64 `index.shape + [num_classes]` with
/// a 1 at each index value. A negative value counts from the end (ONNX `OneHot`); values
/// outside `[-num_classes, num_classes)` are INVALID_ARGUMENT (PyTorch refuses them too).
pub fn one_hot(
    stream: Option<&Stream>,
    index: &Tensor,
    num_classes: i64,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "one_hot";
    index_dtype(op, index)?;
    if num_classes < 1 {
        return Err(Error::invalid(format!(
            "{op}: num_classes {num_classes} must be at least 1"
        )));
    }
    let c = num_classes as usize;
    let mut shape = index.shape().to_vec();
    shape.push(c);
    let o = output(op, index, out, &shape, DType::I64)?;
    if o.numel() == 0 {
        return Ok(o);
    }
    // out = 0, then scatter 1 at index along the last dimension: the scatter-add of ones
    // (in f32, exact) checks the bounds on the device; then cast to i64.
    let mut ishape = index.shape().to_vec();
    ishape.push(1);
    let idx = index.reshape(&ishape)?;
    let g = data::gather_plan(op, &shape, -1, &ishape)?;
    let ones = Tensor::empty(index.device().clone(), &ishape, DType::F32)?;
    fill(stream, &ones, 1.0)?;
    let hot = run_scatter(op, stream, &ones, &idx, &g, &shape, None)?;
    cast(stream, &hot, DType::I64, Some(&o))
}

/// The backward of [`scatter_add`]: `(dx, dsrc)` with `dx = dy` and `dsrc = gather(dy, dim,
/// index)` (index's shape, as PyTorch's). Floating dtypes, f64 included.
pub fn scatter_add_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    dim: i64,
    index: &Tensor,
    out_x: Option<&Tensor>,
    out_src: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let op = "scatter_add_backward";
    floating_dy(op, dy)?;
    let dsrc = gather(stream, dy, dim, index, out_src).map_err(|e| rename(e, op))?;
    let dx = output(op, dy, out_x, dy.shape(), dy.dtype())?;
    if dx.numel() > 0 {
        copy(stream, dy, &dx)?;
    }
    Ok((dx, dsrc))
}

/// `torch.topk(x, k, dim, largest, sorted)`: `(values, indices)` of x's shape with `dim`'s
/// extent `k`, the `k` largest (or smallest) elements along `dim`, best first (always
/// sorted: `sorted=false` leaves the order unspecified in PyTorch, and sorted is one such
/// order). NaN counts as larger than every number, as in `torch.topk`; equal elements come
/// in index order. `indices` is i64. Every dtype but bool; `k` outside `[0, size(dim)]` is
/// INVALID_ARGUMENT.
#[allow(clippy::too_many_arguments)]
pub fn topk(
    stream: Option<&Stream>,
    x: &Tensor,
    k: i64,
    dim: i64,
    largest: bool,
    sorted: bool,
    out_values: Option<&Tensor>,
    out_indices: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let op = "topk";
    let _ = sorted;
    if x.dtype() == DType::Bool {
        return Err(Error::dtype(format!(
            "{op}: dtype bool is not supported (every other dtype is)"
        )));
    }
    let (d, shape) = data::topk_plan(x.shape(), k, dim)?;
    let vo = output(op, x, out_values, &shape, x.dtype())?;
    let io = output(op, x, out_indices, &shape, DType::I64)?;
    if vo.numel() == 0 {
        return Ok((vo, io));
    }
    let s = stream_for(op, stream, x)?;
    let k = k as usize;
    let xs = if x.shape().is_empty() {
        vec![1]
    } else {
        x.shape().to_vec()
    };
    let n = xs[d];
    let outer: usize = xs[..d].iter().product();
    let inner: usize = xs[d + 1..].iter().product();
    let dev = s.device();
    if inner == 1 {
        return dev
            .topk_rows(
                s.raw(),
                x.dtype(),
                x.ptr(),
                outer,
                n,
                k,
                largest,
                vo.ptr(),
                io.ptr(),
            )
            .map(|()| (vo, io));
    }
    // Move `dim` last ([outer, n, inner] -> [outer, inner, n]), select, move it back.
    let es = x.dtype().size();
    let xt = Tensor::empty(x.device().clone(), &[outer, inner, n], x.dtype())?;
    dev.copy_strided(
        s.raw(),
        es,
        x.ptr(),
        &[n * inner, 1, inner],
        xt.ptr(),
        &[inner * n, n, 1],
        &[outer, inner, n],
    )?;
    let vt = Tensor::empty(x.device().clone(), &[outer, inner, k], x.dtype())?;
    let it = Tensor::empty(x.device().clone(), &[outer, inner, k], DType::I64)?;
    dev.topk_rows(
        s.raw(),
        x.dtype(),
        xt.ptr(),
        outer * inner,
        n,
        k,
        largest,
        vt.ptr(),
        it.ptr(),
    )?;
    for (t, o) in [(&vt, &vo), (&it, &io)] {
        dev.copy_strided(
            s.raw(),
            t.dtype().size(),
            t.ptr(),
            &[inner * k, 1, k],
            o.ptr(),
            &[k * inner, inner, 1],
            &[outer, k, inner],
        )?;
    }
    Ok((vo, io))
}

/// The backward of [`topk`]: zeros of `x_shape` with `dy` (the values' shape) added at the
/// positions `indices` (as `topk` returned them) names along `dim`. Floating dtypes, f64
/// included.
pub fn topk_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x_shape: &[usize],
    dim: i64,
    indices: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "topk_backward";
    index_dtype(op, indices)?;
    same_dev(op, dy, indices, "indices")?;
    if dy.shape() != indices.shape() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {:?}, indices have {:?}",
            dy.shape(),
            indices.shape()
        )));
    }
    let g = data::gather_plan(op, x_shape, dim, indices.shape())?;
    run_scatter(op, stream, dy, indices, &g, x_shape, out)
}

/// `src`'s elements over `index`'s shape, contiguous (src itself when the shapes agree).
fn src_over_index(
    op: &str,
    stream: Option<&Stream>,
    src: &Tensor,
    index: &Tensor,
) -> Result<Tensor> {
    if src.shape().len() != index.shape().len()
        || index.shape().iter().zip(src.shape()).any(|(i, s)| i > s)
    {
        return Err(Error::shape(format!(
            "{op}: src {:?} is smaller than index {:?}",
            src.shape(),
            index.shape()
        )));
    }
    if src.shape() == index.shape() {
        return Ok(src.clone());
    }
    let t = Tensor::empty(src.device().clone(), index.shape(), src.dtype())?;
    if t.numel() > 0 {
        let s = stream_for(op, stream, src)?;
        s.device().copy_strided(
            s.raw(),
            src.dtype().size(),
            src.ptr(),
            &contiguous_strides(src.shape()),
            t.ptr(),
            &contiguous_strides(index.shape()),
            index.shape(),
        )?;
    }
    Ok(t)
}

/// `torch.scatter(x, dim, index, src)` / `x.scatter_reduce(dim, index, src, reduce,
/// include_self=True)` (ONNX `ScatterElements`): a copy of `x` where each element of `src`
/// over index's shape is written (reduce none) or combined (add, mul, max, min) at the
/// position `index` names along `dim`. With reduce none, repeated indices leave one of
/// their source values (PyTorch: undefined; here the last along `dim`). Every dtype for
/// none, numeric dtypes for the reductions (max/min propagate NaN, as PyTorch's).
pub fn scatter(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    reduce: data::ScatterReduce,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "scatter";
    index_dtype(op, index)?;
    same_dev(op, x, index, "index")?;
    same_dev(op, x, src, "src")?;
    if src.dtype() != x.dtype() {
        return Err(Error::dtype(format!(
            "{op}: src has dtype {}, x has {}",
            src.dtype(),
            x.dtype()
        )));
    }
    if reduce != data::ScatterReduce::None && x.dtype() == DType::Bool {
        return Err(Error::dtype(format!(
            "{op}: dtype bool is not supported with reduce {} (every other dtype is)",
            reduce.name()
        )));
    }
    let g = data::gather_plan(op, x.shape(), dim, index.shape())?;
    let src_c = src_over_index(op, stream, src, index)?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().copy_d2d(x.ptr(), o.ptr(), x.nbytes(), s.raw())?;
    if index.numel() > 0 {
        s.device()
            .scatter_axis(
                s.raw(),
                x.dtype(),
                src_c.ptr(),
                &axis_index(&g, index),
                o.ptr(),
                reduce,
            )
            .map_err(|e| rename(e, op))?;
    }
    Ok(o)
}

/// The backward of [`scatter`] for reduce none and add: `(dx, dsrc)` with `dx = dy` where
/// reduce none zeroes the positions the scatter wrote, and `dsrc = gather(dy, dim, index)`
/// (index's shape, as PyTorch's). Floating dtypes, f64 included; mul, max and min are
/// UNSUPPORTED.
pub fn scatter_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    dim: i64,
    index: &Tensor,
    reduce: data::ScatterReduce,
    out_x: Option<&Tensor>,
    out_src: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let op = "scatter_backward";
    floating_dy(op, dy)?;
    match reduce {
        data::ScatterReduce::Add => {
            return scatter_add_backward(stream, dy, dim, index, out_x, out_src)
                .map_err(|e| rename_prefix(e, "scatter_add_backward", op));
        }
        data::ScatterReduce::None => {}
        r => {
            return Err(Error::unsupported(format!(
                "{op}: reduce {} has no backward here (none and add do)",
                r.name()
            )));
        }
    }
    let dsrc = gather(stream, dy, dim, index, out_src).map_err(|e| rename(e, op))?;
    let zeros = Tensor::zeros(dy.device().clone(), index.shape(), dy.dtype())?;
    let dx = scatter(
        stream,
        dy,
        dim,
        index,
        &zeros,
        data::ScatterReduce::None,
        out_x,
    )
    .map_err(|e| rename_prefix(e, "scatter", op))?;
    Ok((dx, dsrc))
}

/// `torch.arange(start, end, step, dtype=dtype)`: `ceil((end - start) / step)` elements
/// `start + i * step` (computed in f64, converted to `dtype`; integer dtypes in i64 and take
/// integral arguments only). On `out`'s device when given, else the stream's, else the
/// calling thread's current device. A zero or non-finite step, non-finite bounds, or a step
/// whose sign goes away from `end` are INVALID_ARGUMENT; bool is DTYPE_MISMATCH.
pub fn arange(
    stream: Option<&Stream>,
    start: f64,
    end: f64,
    step: f64,
    dtype: DType,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "arange";
    let n = data::arange_len(start, end, step, dtype)?;
    let device = match (out, stream) {
        (Some(o), _) => o.device().clone(),
        (None, Some(s)) => s.device().clone(),
        (None, None) => crate::runtime::context::current_device(),
    };
    let o = match out {
        Some(o) => {
            if let Some(s) = stream
                && !same_device(s.device(), o.device())
            {
                return Err(Error::invalid(format!(
                    "{op}: the stream is on {} but out is on {}",
                    s.device().name(),
                    o.device().name()
                )));
            }
            if o.shape() != [n] {
                return Err(Error::shape(format!(
                    "{op}: out has shape {:?}, the result has [{n}]",
                    o.shape()
                )));
            }
            if o.dtype() != dtype {
                return Err(Error::dtype(format!(
                    "{op}: out has dtype {}, the result has {dtype}",
                    o.dtype()
                )));
            }
            o.clone()
        }
        None => Tensor::empty(device.clone(), &[n], dtype)?,
    };
    if n == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, &o)?;
    s.device().arange(s.raw(), dtype, start, step, n, o.ptr())?;
    Ok(o)
}

/// An error of `from` named as `op`'s.
fn rename_prefix(mut e: Error, from: &str, op: &str) -> Error {
    if let Some(rest) = e.message.strip_prefix(&format!("{from}: ")) {
        e.message = format!("{op}: {rest}");
    }
    e
}
