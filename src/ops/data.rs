//! Data movement ops: permute, concat, slice, embedding. Shape inference with errors that
//! name the op and the argument; the copies themselves are strided copies on the device.

use crate::base::shape::contiguous_strides;
use crate::ops::reduce::norm_dim;
use crate::{Error, Result};

/// `x.permute(perm)`: the result's shape and, per result dimension, the input's stride.
pub fn permute_plan(shape: &[usize], perm: &[i64]) -> Result<(Vec<usize>, Vec<usize>)> {
    let nd = shape.len();
    if perm.len() != nd {
        return Err(Error::invalid(format!(
            "permute: perm has {} entries, the tensor has {nd} dimensions",
            perm.len()
        )));
    }
    let cs = contiguous_strides(shape);
    let mut seen = vec![false; nd];
    let mut out = Vec::with_capacity(nd);
    let mut strides = Vec::with_capacity(nd);
    for &p in perm {
        let d = norm_dim("permute", p, nd)?;
        if seen[d] {
            return Err(Error::invalid(format!(
                "permute: dim {d} appears more than once in perm"
            )));
        }
        seen[d] = true;
        out.push(shape[d]);
        strides.push(cs[d]);
    }
    Ok((out, strides))
}

/// `torch.cat(shapes, dim)`: the normalized dim and the result's shape.
pub fn concat_plan(shapes: &[&[usize]], dim: i64) -> Result<(usize, Vec<usize>)> {
    let first = shapes
        .first()
        .ok_or_else(|| Error::invalid("concat: the list of tensors is empty"))?;
    let nd = first.len();
    if nd == 0 {
        return Err(Error::shape(
            "concat: zero-dimensional tensors cannot be concatenated",
        ));
    }
    let d = norm_dim("concat", dim, nd)?;
    let mut out = first.to_vec();
    out[d] = 0;
    for (i, s) in shapes.iter().enumerate() {
        if s.len() != nd {
            return Err(Error::shape(format!(
                "concat: tensor {i} has {} dimensions, tensor 0 has {nd}",
                s.len()
            )));
        }
        for k in 0..nd {
            if k != d && s[k] != first[k] {
                return Err(Error::shape(format!(
                    "concat: tensor {i} has shape {s:?}, which differs from {first:?} outside dim {d}"
                )));
            }
        }
        out[d] += s[d];
    }
    Ok((d, out))
}

/// `x[..., start:end:step, ...]` along `dim` (PyTorch's clamping of start/end, negative
/// indices count from the end; step must be positive): (dim, start, length).
pub fn slice_plan(
    shape: &[usize],
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
) -> Result<(usize, usize, usize)> {
    if shape.is_empty() {
        return Err(Error::shape(
            "slice: cannot slice a zero-dimensional tensor",
        ));
    }
    let d = norm_dim("slice", dim, shape.len())?;
    if step <= 0 {
        return Err(Error::invalid(format!(
            "slice: step {step} must be positive"
        )));
    }
    let n = shape[d] as i64;
    let fix = |v: i64| {
        let v = if v < 0 { v.saturating_add(n) } else { v };
        v.clamp(0, n)
    };
    let (s, e) = (fix(start), fix(end));
    let len = if e > s { (e - s + step - 1) / step } else { 0 };
    Ok((d, s as usize, len as usize))
}

/// `F.embedding(indices, weight)`: weight must be 2-D; the result is `indices.shape + [dim]`.
pub fn embedding_plan(weight: &[usize], indices: &[usize]) -> Result<Vec<usize>> {
    if weight.len() != 2 {
        return Err(Error::shape(format!(
            "embedding: weight must be 2-D [num_embeddings, dim], got {weight:?}"
        )));
    }
    let mut out = indices.to_vec();
    out.push(weight[1]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn slice_clamps_like_torch() {
        assert_eq!(slice_plan(&[10], 0, 2, 8, 3).unwrap(), (0, 2, 2));
        assert_eq!(slice_plan(&[10], 0, -3, 100, 1).unwrap(), (0, 7, 3));
        assert_eq!(slice_plan(&[10], 0, 5, 2, 1).unwrap(), (0, 5, 0));
        assert!(slice_plan(&[10], 0, 0, 1, 0).is_err());
    }
}
