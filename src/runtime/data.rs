//! Eager data ops: permute, concat, slice, cast, fill, copy, embedding (+ backward). Same
//! conventions as [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::base::shape::contiguous_strides;
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

/// `x[..., start:end:step, ...]` along `dim`, as a new contiguous tensor.
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
    let mut ss = contiguous_strides(x.shape());
    let es = x.dtype().size();
    let base = x.ptr().offset(st * ss[d] * es);
    ss[d] *= step as usize;
    s.device().copy_strided(
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
