//! Eager reductions: sum, mean, max, min, prod over a list of dims (empty: all), argmax, and
//! their backwards. Same conventions as [`crate::runtime::eager`].

use crate::base::dtype::DType;
use crate::ops::reduce::{self, ReduceOp};
use crate::runtime::data::permute_into;
use crate::runtime::eager::{check_same, floating_only, output, stream_for};
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

/// max/min/argmax take the integer dtypes too (f32, f16, bf16, f64 and i32, i64, i8, u8,
/// i16): every dtype but bool.
fn extreme_dtype(op: &str, x: &Tensor) -> Result<()> {
    if x.dtype().is_integral() {
        return Ok(());
    }
    floating_only(op, x).map_err(|_| {
        Error::dtype(format!(
            "{op}: dtype {} is not supported (every dtype but bool)",
            x.dtype()
        ))
    })
}

/// Integer max (`largest`) or min over the plan's reduced dimensions, through `topk` with
/// k = 1 along them (the first index among equal values, as `torch.max(x, dim)`,
/// `torch.min` and `torch.argmax`): `(values, indices)` of shape `[outer, 1, inner]`.
fn int_extreme(
    s: &Stream,
    x: &Tensor,
    p: &reduce::ReducePlan,
    largest: bool,
) -> Result<(Tensor, Tensor)> {
    let xp = permuted(s, x, &p.perm)?;
    let d = &p.desc;
    let v = xp.reshape(&[d.outer, d.r, d.inner])?;
    crate::runtime::data::topk(Some(s), &v, 1, 1, largest, true, None, None)
}

/// `torch.sum/mean/amax/amin/prod(x, dims, keepdim)`; `dims` empty reduces everything.
/// Floating dtypes; max and min take the integer dtypes too.
pub fn reduce(
    stream: Option<&Stream>,
    op: ReduceOp,
    x: &Tensor,
    dims: &[i64],
    keepdim: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = op.name();
    let extreme = matches!(op, ReduceOp::Max | ReduceOp::Min);
    if extreme {
        extreme_dtype(name, x)?;
    } else {
        floating_only(name, x)?;
    }
    let p = reduce::plan(name, x.shape(), dims, keepdim)?;
    if extreme {
        reduce::check_nonempty(name, x.shape(), &p.desc)?;
    }
    let o = output(name, x, out, &p.out_shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    if x.dtype().is_integral() {
        let (v, _) = int_extreme(&s, x, &p, op == ReduceOp::Max)?;
        crate::runtime::data::copy(Some(&s), &v.reshape(&p.out_shape)?, &o)?;
        return Ok(o);
    }
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
    extreme_dtype("argmax", x)?;
    let p = reduce::plan("argmax", x.shape(), &[dim], keepdim)?;
    reduce::check_nonempty("argmax", x.shape(), &p.desc)?;
    let o = output("argmax", x, out, &p.out_shape, DType::I64)?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for("argmax", stream, x)?;
    if x.dtype().is_integral() {
        let (_, i) = int_extreme(&s, x, &p, true)?;
        crate::runtime::data::copy(Some(&s), &i.reshape(&p.out_shape)?, &o)?;
        return Ok(o);
    }
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
    extreme_dtype("argmax", x)?;
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
    floating_only(&name, x)?;
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

/// `torch.max(x, dim, keepdim)` (`op` Max) or `torch.min(x, dim, keepdim)` (`op` Min):
/// `(values, indices)`, the extreme along `dim` and the first index holding it (i64); a
/// NaN wins (its value and the first NaN's index). Every dtype but bool; an empty `dim` is
/// INVALID_ARGUMENT.
pub fn max_dim(
    stream: Option<&Stream>,
    op: ReduceOp,
    x: &Tensor,
    dim: i64,
    keepdim: bool,
    values: Option<&Tensor>,
    indices: Option<&Tensor>,
) -> Result<(Tensor, Tensor)> {
    let name = match op {
        ReduceOp::Max => "max_dim",
        ReduceOp::Min => "min_dim",
        _ => return Err(Error::invalid("max_dim: op must be max or min")),
    };
    extreme_dtype(name, x)?;
    let p = reduce::plan(name, x.shape(), &[dim], keepdim)?;
    reduce::check_nonempty(name, x.shape(), &p.desc)?;
    let vo = output(name, x, values, &p.out_shape, x.dtype())?;
    let io = output(name, x, indices, &p.out_shape, DType::I64)?;
    if vo.numel() == 0 {
        return Ok((vo, io));
    }
    let s = stream_for(name, stream, x)?;
    if x.dtype().is_integral() {
        let (v, i) = int_extreme(&s, x, &p, op == ReduceOp::Max)?;
        crate::runtime::data::copy(Some(&s), &v.reshape(&p.out_shape)?, &vo)?;
        crate::runtime::data::copy(Some(&s), &i.reshape(&p.out_shape)?, &io)?;
        return Ok((vo, io));
    }
    s.device()
        .reduce(s.raw(), op, x.dtype(), x.ptr(), vo.ptr(), &p.desc)?;
    if op == ReduceOp::Max {
        s.device()
            .argmax(s.raw(), x.dtype(), x.ptr(), io.ptr(), &p.desc)?;
    } else {
        // argmin(x) = argmax(-x): negation keeps ties and NaNs (and -0 == 0).
        let neg = Tensor::empty(x.device().clone(), x.shape(), x.dtype())?;
        s.device().unary(
            s.raw(),
            crate::ops::elementwise::UnaryOp::Neg,
            x.dtype(),
            x.ptr(),
            neg.ptr(),
            x.numel(),
        )?;
        s.device()
            .argmax(s.raw(), x.dtype(), neg.ptr(), io.ptr(), &p.desc)?;
    }
    Ok((vo, io))
}

/// The backward of [`max_dim`] (either op): `dy` (the values' shape) goes to the element at
/// the returned index along `dim` of a tensor of `x_shape`, zero elsewhere (PyTorch's
/// `value_selecting_reduction_backward`). `indices` (i32 or i64) as `max_dim` returned
/// them; an index outside `[-n, n)` is INVALID_ARGUMENT. Floating dtypes.
#[allow(clippy::too_many_arguments)]
pub fn max_dim_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    indices: &Tensor,
    x_shape: &[usize],
    dim: i64,
    keepdim: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "max_dim_backward";
    let p = reduce::plan(op, x_shape, &[dim], keepdim)?;
    for (t, what) in [(dy, "dy"), (indices, "indices")] {
        if t.shape() != p.out_shape.as_slice() {
            return Err(Error::shape(format!(
                "{op}: {what} has shape {:?}, the reduction's result has {:?}",
                t.shape(),
                p.out_shape
            )));
        }
    }
    crate::runtime::data::scatter_indices(op, stream, dy, indices, x_shape, dim, &p.keep_shape, out)
}

/// `torch.sum(x, dims, keepdim, dtype=dtype)` (`op` Sum) or `torch.prod(x, dims, keepdim,
/// dtype=dtype)` (`op` Prod): x (any dtype) is cast to `dtype` (f32, f16, bf16, f64, i32 or
/// i64; PyTorch's cast rules) and reduced in it: floating dtypes accumulate in f64 and round
/// once, integer dtypes wrap on overflow (two's complement) as PyTorch's do.
#[allow(clippy::too_many_arguments)]
pub fn reduce_dtype(
    stream: Option<&Stream>,
    op: ReduceOp,
    x: &Tensor,
    dims: &[i64],
    keepdim: bool,
    dtype: DType,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let name = match op {
        ReduceOp::Sum => "sum",
        ReduceOp::Prod => "prod",
        _ => return Err(Error::invalid("reduce_dtype: op must be sum or prod")),
    };
    if dtype == DType::Bool {
        return Err(Error::dtype(format!(
            "{name}: bool is not a reduction dtype (f32, f16, bf16, f64, i32 or i64)"
        )));
    }
    let p = reduce::plan(name, x.shape(), dims, keepdim)?;
    let o = output(name, x, out, &p.out_shape, dtype)?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(name, stream, x)?;
    let xc = if x.dtype() == dtype {
        x.clone()
    } else {
        let t = Tensor::empty(x.device().clone(), x.shape(), dtype)?;
        if t.numel() > 0 {
            s.device()
                .cast(s.raw(), x.dtype(), x.ptr(), dtype, t.ptr(), x.numel())?;
        }
        t
    };
    if dtype.is_floating() {
        return reduce(Some(&s), op, &xc, dims, keepdim, Some(&o));
    }
    let xp = permuted(&s, &xc, &p.perm)?;
    s.device()
        .reduce_int(s.raw(), op, dtype, xp.ptr(), o.ptr(), &p.desc)?;
    Ok(o)
}
