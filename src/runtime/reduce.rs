//! Eager reductions: sum, mean, max, min, prod over a list of dims (empty: all), argmax, and
//! their backwards. Same conventions as [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::ops::reduce::{self, ReduceOp};
use crate::runtime::data::permute_into;
use crate::runtime::eager::{check_same, float_only, output, stream_for};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

/// `x` with the dimensions moved as `perm` says (a new contiguous tensor), or `x` itself.
fn permuted(s: &Stream, x: &Tensor, perm: &Option<Vec<usize>>) -> Result<Tensor> {
    match perm {
        None => Ok(x.clone()),
        Some(p) => {
            let shape: Vec<usize> = p.iter().map(|&d| x.shape()[d]).collect();
            let t = Tensor::empty(x.device().clone(), &shape, x.dtype())?;
            permute_into(s, x, p, &t)?;
            Ok(t)
        }
    }
}

/// `torch.sum/mean/amax/amin/prod(x, dims, keepdim)`; `dims` empty reduces everything.
pub fn reduce(
    stream: Option<&Stream>,
    op: ReduceOp,
    x: &Tensor,
    dims: &[i64],
    keepdim: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    float_only(name, x)?;
    let p = reduce::plan(name, x.shape(), dims, keepdim)?;
    if matches!(op, ReduceOp::Max | ReduceOp::Min) {
        reduce::check_nonempty(name, x.shape(), &p.desc)?;
    }
    let o = output(name, x, out, &p.out_shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    let xp = permuted(&s, x, &p.perm)?;
    s.device()
        .reduce(s.raw(), op, x.dtype(), xp.ptr(), o.ptr(), &p.desc)?;
    Ok(o)
}

/// `torch.argmax(x, dim, keepdim)` as i64.
pub fn argmax(
    stream: Option<&Stream>,
    x: &Tensor,
    dim: i64,
    keepdim: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    float_only("argmax", x)?;
    let p = reduce::plan("argmax", x.shape(), &[dim], keepdim)?;
    reduce::check_nonempty("argmax", x.shape(), &p.desc)?;
    let o = output("argmax", x, out, &p.out_shape, DType::I64)?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("argmax", stream, x)?;
    s.device()
        .argmax(s.raw(), x.dtype(), x.ptr(), o.ptr(), &p.desc)?;
    Ok(o)
}

/// `torch.argmax(x)` (no `dim`): the index of the first largest value of the flattened
/// tensor (a NaN counts as the largest), as an `I64` tensor of shape `[]`, or of `x`'s rank
/// with every size 1 when `keepdim`.
pub fn argmax_all(
    stream: Option<&Stream>,
    x: &Tensor,
    keepdim: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    float_only("argmax", x)?;
    if x.numel() == 0 {
        return Err(Error::invalid(
            "argmax: the tensor is empty (there is no largest value)",
        ));
    }
    let shape = if keepdim {
        vec![1; x.shape().len()]
    } else {
        Vec::new()
    };
    let o = output("argmax", x, out, &shape, DType::I64)?;
    let flat = x.reshape(&[x.numel()])?;
    argmax(stream, &flat, 0, false, Some(&o.reshape(&[])?))?;
    Ok(o)
}

/// The backward of [`reduce`]: `dx` (x's shape) from `dy` (the result's shape). max/min
/// share the gradient evenly between tied extremes (`torch.amax`'s rule).
pub fn reduce_backward(
    stream: Option<&Stream>,
    op: ReduceOp,
    x: &Tensor,
    dims: &[i64],
    keepdim: bool,
    dy: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = format!("{}_backward", op.name());
    float_only(&name, x)?;
    check_same(&name, x, dy)?;
    let p = reduce::plan(&name, x.shape(), dims, keepdim)?;
    if dy.shape() != p.out_shape.as_slice() {
        return Err(Error::shape(format!(
            "{name}: dy has shape {:?}, the reduction's result has {:?}",
            dy.shape(),
            p.out_shape
        )));
    }
    let o = output(&name, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(&name, stream, x)?;
    match &p.perm {
        None => s.device().reduce_backward(
            s.raw(),
            op,
            x.dtype(),
            x.ptr(),
            dy.ptr(),
            o.ptr(),
            &p.desc,
        )?,
        Some(perm) => {
            let xp = permuted(&s, x, &p.perm)?;
            let dxp = Tensor::empty(x.device().clone(), xp.shape(), x.dtype())?;
            s.device().reduce_backward(
                s.raw(),
                op,
                x.dtype(),
                xp.ptr(),
                dy.ptr(),
                dxp.ptr(),
                &p.desc,
            )?;
            let mut inv = vec![0; perm.len()];
            for (i, &d) in perm.iter().enumerate() {
                inv[d] = i;
            }
            permute_into(&s, &dxp, &inv, &o)?;
        }
    }
    Ok(o)
}
