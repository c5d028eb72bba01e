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

/// `x[..., start:end:step, ...]` along `dim` with Python/NumPy slicing (ONNX `Slice`):
/// negative indices count from the end; for a positive `step` start and end clamp to
/// `[0, n]`, for a negative one to `[-1, n - 1]` (the walk goes down from `start` and stops
/// before `end`); a zero step is INVALID_ARGUMENT. Returns (dim, index of the first element
/// taken, length); with length 0 the index is the clamped start (0 for -1).
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
    if step == 0 {
        return Err(Error::invalid("slice: step must not be zero"));
    }
    let n = shape[d] as i64;
    let wrap = |v: i64| if v < 0 { v.saturating_add(n) } else { v };
    let (s, len) = if step > 0 {
        let fix = |v: i64| wrap(v).clamp(0, n);
        let (s, e) = (fix(start), fix(end));
        let len = if e > s {
            // (e - s + step - 1) / step without overflow for huge steps.
            (e - s - 1) / step + 1
        } else {
            0
        };
        (s, len)
    } else {
        let fix = |v: i64| wrap(v).clamp(-1, n - 1);
        let (s, e) = (fix(start), fix(end));
        let len = if s > e {
            // -step may overflow for i64::MIN: walk in u64.
            ((s - e - 1) as u64 / step.unsigned_abs() + 1) as i64
        } else {
            0
        };
        (s, len)
    };
    // With nothing taken the clamped start is still reported (never below 0).
    let first = s.max(0) as usize;
    Ok((d, first, len as usize))
}

/// The float64 reference of [`slice_plan`]'s slice of a row-major `x` of `shape`.
pub fn slice_reference(
    x: &[f64],
    shape: &[usize],
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
) -> Result<(Vec<usize>, Vec<f64>)> {
    let (d, first, len) = slice_plan(shape, dim, start, end, step)?;
    let outer: usize = shape[..d].iter().product();
    let inner: usize = shape[d + 1..].iter().product();
    let n = shape[d];
    let mut out = Vec::with_capacity(outer * len * inner);
    for o in 0..outer {
        for j in 0..len {
            let k = (first as i64 + j as i64 * step) as usize;
            for i in 0..inner {
                out.push(x[(o * n + k) * inner + i]);
            }
        }
    }
    let mut oshape = shape.to_vec();
    oshape[d] = len;
    Ok((oshape, out))
}

/// The float64 reference of the slice's backward: `dy` (the slice's shape) scattered into
/// zeros of `shape`.
pub fn slice_backward_reference(
    dy: &[f64],
    shape: &[usize],
    dim: i64,
    start: i64,
    end: i64,
    step: i64,
) -> Result<Vec<f64>> {
    let (d, first, len) = slice_plan(shape, dim, start, end, step)?;
    let outer: usize = shape[..d].iter().product();
    let inner: usize = shape[d + 1..].iter().product();
    let n = shape[d];
    let mut dx = vec![0.0; shape.iter().product()];
    for o in 0..outer {
        for j in 0..len {
            let k = (first as i64 + j as i64 * step) as usize;
            for i in 0..inner {
                dx[(o * n + k) * inner + i] = dy[(o * len + j) * inner + i];
            }
        }
    }
    Ok(dx)
}

/// The inverse of the permutation `perm` (entries may be negative) of `ndim` dimensions,
/// checked as [`permute_plan`] checks it: `dx = dy.permute(inverse)` is permute's backward.
pub fn permute_inverse(op: &str, perm: &[i64], ndim: usize) -> Result<Vec<i64>> {
    if perm.len() != ndim {
        return Err(Error::invalid(format!(
            "{op}: perm has {} entries, the tensor has {ndim} dimensions",
            perm.len()
        )));
    }
    let mut inv = vec![-1i64; ndim];
    for (i, &p) in perm.iter().enumerate() {
        let d = norm_dim(op, p, ndim)?;
        if ndim == 0 {
            continue;
        }
        if inv[d] >= 0 {
            return Err(Error::invalid(format!(
                "{op}: dim {d} appears more than once in perm"
            )));
        }
        inv[d] = i as i64;
    }
    Ok(inv)
}

/// The part of `torch.cat(xs, dim)`'s result that input `index` fills: (dim, offset along
/// dim, extent along dim), after checking the shapes as `concat` does and that `dy` has
/// the result's shape.
pub fn concat_backward_plan(
    dy: &[usize],
    shapes: &[&[usize]],
    dim: i64,
    index: usize,
) -> Result<(usize, usize, usize)> {
    let op = "concat_backward";
    let (d, shape) = concat_plan(shapes, dim).map_err(|e| e.context(op))?;
    if dy != shape.as_slice() {
        return Err(Error::shape(format!(
            "{op}: dy has shape {dy:?}, the concatenation has {shape:?}"
        )));
    }
    if index >= shapes.len() {
        return Err(Error::invalid(format!(
            "{op}: index {index} is out of range for {} tensors",
            shapes.len()
        )));
    }
    let off: usize = shapes[..index].iter().map(|s| s[d]).sum();
    Ok((d, off, shapes[index][d]))
}

/// How a gather or its scatter walks its index: `shape` is the walked shape (the gather's
/// result, the scatter's source), `dim` the indexed dimension, `axis_len` the extent of the
/// indexed tensor along it, `data_strides` and `idx_strides` the element strides of the
/// indexed tensor and of the index over `shape` (the index may broadcast: stride 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AxisGather {
    pub shape: Vec<usize>,
    pub dim: usize,
    pub axis_len: usize,
    pub data_strides: Vec<usize>,
    pub idx_strides: Vec<usize>,
}

/// `torch.gather(x, dim, index)` (ONNX `GatherElements`): `index` has x's rank, and
/// `index.size(d) <= x.size(d)` for every `d != dim`; the result has index's shape. A 0-d
/// `x` with a 0-d `index` is gathered as a 1-element vector.
pub fn gather_plan(op: &str, x: &[usize], dim: i64, index: &[usize]) -> Result<AxisGather> {
    if x.len() != index.len() {
        return Err(Error::shape(format!(
            "{op}: index has {} dimensions, the input has {}",
            index.len(),
            x.len()
        )));
    }
    let d = norm_dim(op, dim, x.len())?;
    let (x1, i1): (Vec<usize>, Vec<usize>) = if x.is_empty() {
        (vec![1], vec![1])
    } else {
        (x.to_vec(), index.to_vec())
    };
    for k in 0..x1.len() {
        if k != d && i1[k] > x1[k] {
            return Err(Error::shape(format!(
                "{op}: index {index:?} is larger than the input {x:?} in dimension {k}"
            )));
        }
    }
    Ok(AxisGather {
        data_strides: contiguous_strides(&x1),
        idx_strides: contiguous_strides(&i1),
        axis_len: x1[d],
        shape: i1,
        dim: d,
    })
}

/// ONNX `Gather` (`torch.index_select` with an index of any rank, `numpy.take(x, idx,
/// axis)`): the result is `x.shape[..axis] + indices.shape + x.shape[axis + 1..]`. Returns
/// the walk (over `[outer, indices.numel(), inner]`) and the result's shape.
pub fn take_plan(x: &[usize], axis: i64, indices: &[usize]) -> Result<(AxisGather, Vec<usize>)> {
    if x.is_empty() {
        return Err(Error::shape("take: cannot index a zero-dimensional tensor"));
    }
    let a = norm_dim("take", axis, x.len())?;
    let outer: usize = x[..a].iter().product();
    let inner: usize = x[a + 1..].iter().product();
    let n_idx: usize = indices.iter().product();
    let mut out = x[..a].to_vec();
    out.extend_from_slice(indices);
    out.extend_from_slice(&x[a + 1..]);
    Ok((
        AxisGather {
            shape: vec![outer, n_idx, inner],
            dim: 1,
            axis_len: x[a],
            data_strides: vec![x[a] * inner, inner, 1],
            idx_strides: vec![0, 1, 0],
        },
        out,
    ))
}

impl AxisGather {
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// For every element of the walked shape (row-major): the element of the indexed tensor
    /// it reads (gather) or adds to (scatter), with negative indices counting from the end;
    /// an index outside `[-axis_len, axis_len)` is INVALID_ARGUMENT naming its position.
    pub fn offsets(&self, op: &str, idx: &[i64]) -> Result<Vec<usize>> {
        let nd = self.shape.len();
        let n = self.numel();
        let mut out = Vec::with_capacity(n);
        let mut mi = vec![0usize; nd];
        for _ in 0..n {
            let (mut base, mut ip) = (0usize, 0usize);
            for (d, &i) in mi.iter().enumerate() {
                ip += i * self.idx_strides[d];
                if d != self.dim {
                    base += i * self.data_strides[d];
                }
            }
            let k = normalize_index(op, idx[ip], self.axis_len, ip)?;
            out.push(base + k * self.data_strides[self.dim]);
            for d in (0..nd).rev() {
                mi[d] += 1;
                if mi[d] < self.shape[d] {
                    break;
                }
                mi[d] = 0;
            }
        }
        Ok(out)
    }
}

/// An index along an axis of `len` elements: negative counts from the end (ONNX); anything
/// outside `[-len, len)` is INVALID_ARGUMENT.
pub fn normalize_index(op: &str, v: i64, len: usize, pos: usize) -> Result<usize> {
    let n = len as i64;
    if v < -n || v >= n {
        return Err(Error::invalid(format!(
            "{op}: index {v} at position {pos} is out of range [-{len}, {len})"
        )));
    }
    Ok(if v < 0 { (v + n) as usize } else { v as usize })
}

/// The float64 reference of a gather: `out[e] = x[offsets[e]]`.
pub fn gather_reference(op: &str, x: &[f64], g: &AxisGather, idx: &[i64]) -> Result<Vec<f64>> {
    Ok(g.offsets(op, idx)?.iter().map(|&o| x[o]).collect())
}

/// The float64 reference of a gather's backward: zeros of `n` elements with `dy[e]` added
/// at `offsets[e]` (repeated indices sum).
pub fn scatter_add_reference(
    op: &str,
    dy: &[f64],
    g: &AxisGather,
    idx: &[i64],
    n: usize,
) -> Result<Vec<f64>> {
    let mut dx = vec![0.0; n];
    for (e, o) in g.offsets(op, idx)?.into_iter().enumerate() {
        dx[o] += dy[e];
    }
    Ok(dx)
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

    #[test]
    fn negative_steps_clamp_like_numpy() {
        // x[::-1], x[8:2:-2], x[-1:-4:-1], x[2:8:-1] (empty), x[100:-100:-3]
        assert_eq!(
            slice_plan(&[10], 0, i64::MAX, i64::MIN, -1).unwrap(),
            (0, 9, 10)
        );
        assert_eq!(slice_plan(&[10], 0, 8, 2, -2).unwrap(), (0, 8, 3));
        assert_eq!(slice_plan(&[10], 0, -1, -4, -1).unwrap(), (0, 9, 3));
        assert_eq!(slice_plan(&[10], 0, 2, 8, -1).unwrap(), (0, 2, 0));
        assert_eq!(slice_plan(&[10], 0, 100, -100, -3).unwrap(), (0, 9, 4));
        assert_eq!(slice_plan(&[10], 0, 0, -100, i64::MIN).unwrap(), (0, 0, 1));
        assert_eq!(
            slice_plan(&[0], 0, i64::MAX, i64::MIN, -1).unwrap(),
            (0, 0, 0)
        );
        assert_eq!(
            slice_plan(&[10], 0, 0, i64::MAX, i64::MAX).unwrap(),
            (0, 0, 1)
        );
    }

    #[test]
    fn gather_offsets_wrap_negative_indices() {
        let g = gather_plan("gather", &[2, 3], 1, &[2, 2]).unwrap();
        assert_eq!(
            g.offsets("gather", &[0, -1, 2, -3]).unwrap(),
            vec![0, 2, 5, 3]
        );
        assert!(g.offsets("gather", &[0, 3, 0, 0]).is_err());
        assert!(gather_plan("gather", &[2, 3], 1, &[3, 1]).is_err());
        let (t, shape) = take_plan(&[2, 3, 4], 1, &[5]).unwrap();
        assert_eq!(shape, vec![2, 5, 4]);
        assert_eq!(t.shape, vec![2, 5, 4]);
    }
}

/// How `scatter` combines a source element with the element it lands on (`torch.scatter`'s
/// `reduce`, ONNX `ScatterElements`' `reduction`): the C values of `rb_scatter_reduce`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScatterReduce {
    /// Overwrite (PyTorch: the result for repeated indices is undefined; here the last
    /// source element in index order along `dim` wins).
    None = 0,
    Add = 1,
    Mul = 2,
    Max = 3,
    Min = 4,
}

impl ScatterReduce {
    pub fn from_i32(v: i32, op: &str) -> Result<Self> {
        Ok(match v {
            0 => ScatterReduce::None,
            1 => ScatterReduce::Add,
            2 => ScatterReduce::Mul,
            3 => ScatterReduce::Max,
            4 => ScatterReduce::Min,
            _ => {
                return Err(Error::invalid(format!(
                    "{op}: reduce={v} is not an rb_scatter_reduce (0 none, 1 add, 2 mul, 3 max, \
                     4 min)"
                )));
            }
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ScatterReduce::None => "none",
            ScatterReduce::Add => "add",
            ScatterReduce::Mul => "mul",
            ScatterReduce::Max => "max",
            ScatterReduce::Min => "min",
        }
    }
}

/// The order-preserving 64-bit key of `topk`: larger numbers have larger keys, NaN (any
/// payload) is above +inf as in `torch.topk`, and -0.0 equals +0.0. `v` is an f32 (f16/bf16
/// widened) or an integer.
pub fn topk_key_f32(v: f32) -> u64 {
    if v.is_nan() {
        return u64::MAX;
    }
    let u = if v == 0.0 { 0 } else { v.to_bits() };
    u64::from(if u & 0x8000_0000 != 0 {
        !u
    } else {
        u | 0x8000_0000
    })
}

/// As [`topk_key_f32`] for f64.
pub fn topk_key_f64(v: f64) -> u64 {
    if v.is_nan() {
        return u64::MAX;
    }
    let u = if v == 0.0 { 0 } else { v.to_bits() };
    if u & (1 << 63) != 0 {
        !u
    } else {
        u | (1 << 63)
    }
}

/// As [`topk_key_f32`] for integers.
pub fn topk_key_i64(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// `torch.topk`'s result shape and the normalized dim: `x.shape` with `dim`'s extent `k`.
pub fn topk_plan(x: &[usize], k: i64, dim: i64) -> Result<(usize, Vec<usize>)> {
    let d = crate::ops::nn::normalize_dim("topk", dim, x.len())?;
    let n = if x.is_empty() { 1 } else { x[d] };
    if k < 0 || k as u64 > n as u64 {
        return Err(Error::invalid(format!(
            "topk: k={k} is out of range [0, {n}] (the size of dimension {d})"
        )));
    }
    let mut out = x.to_vec();
    if !out.is_empty() {
        out[d] = k as usize;
    }
    Ok((d, out))
}

/// `torch.arange`'s length: `ceil((end - start) / step)`; a zero or non-finite step,
/// non-finite bounds, a step whose sign goes away from `end`, non-integral arguments for an
/// integer dtype, or a length over 2^53 are INVALID_ARGUMENT; bool is DTYPE_MISMATCH.
pub fn arange_len(
    start: f64,
    end: f64,
    step: f64,
    dtype: crate::base::dtype::DType,
) -> Result<usize> {
    if dtype == crate::base::dtype::DType::Bool {
        return Err(Error::dtype("arange: dtype bool is not supported"));
    }
    if !start.is_finite() || !end.is_finite() || !step.is_finite() {
        return Err(Error::invalid(format!(
            "arange: start={start}, end={end} and step={step} must be finite"
        )));
    }
    if step == 0.0 {
        return Err(Error::invalid("arange: step must be nonzero"));
    }
    if dtype.is_integral() && [start, end, step].iter().any(|v| v.fract() != 0.0) {
        return Err(Error::invalid(format!(
            "arange: start={start}, end={end} and step={step} must be integers for dtype {dtype}"
        )));
    }
    if (step > 0.0 && end < start) || (step < 0.0 && end > start) {
        return Err(Error::invalid(format!(
            "arange: upper bound and larger bound inconsistent with step sign (start={start}, \
             end={end}, step={step})"
        )));
    }
    let n = ((end - start) / step).ceil();
    if n > 9_007_199_254_740_992.0 {
        return Err(Error::invalid(format!("arange: {n} elements are too many")));
    }
    Ok(n as usize)
}
