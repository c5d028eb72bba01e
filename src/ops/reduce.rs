//! Reductions over a list of dimensions (sum, mean, max, min, prod, argmax): dimension
//! normalization, output shapes, the (outer, reduced, inner) plan a device runs, and the
//! float64 reference. Semantics are PyTorch's (`torch.sum(x, dims, keepdim)`, `torch.amax`,
//! `torch.argmax(x, dim, keepdim)`); an empty dimension list reduces over all dimensions.

use crate::{Error, Result};

/// Reduction kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
}

impl ReduceOp {
    pub fn name(&self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Mean => "mean",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Prod => "prod",
        }
    }
}

/// A reduction seen as a contiguous `[outer, r, inner]` tensor reduced over its middle
/// dimension: the result is `[outer, inner]`, row-major.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReduceDesc {
    pub outer: usize,
    pub r: usize,
    pub inner: usize,
}

/// How to run a reduction of a tensor of `shape`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReducePlan {
    /// The result's shape (reduced dimensions dropped unless keepdim).
    pub out_shape: Vec<usize>,
    /// The result's shape with reduced dimensions kept as 1 (the gradient's broadcast shape).
    pub keep_shape: Vec<usize>,
    /// The reduced dimensions, sorted.
    pub dims: Vec<usize>,
    /// When the reduced dimensions are not one contiguous block: the permutation that moves
    /// them last (the input is permuted before the device runs `desc`, with `inner == 1`).
    pub perm: Option<Vec<usize>>,
    pub desc: ReduceDesc,
}

/// Normalizes one dimension index (negative counts from the end) for a tensor of `ndim`
/// dimensions; a 0-d tensor accepts 0 and -1 as PyTorch does.
pub fn norm_dim(op: &str, dim: i64, ndim: usize) -> Result<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        return Err(Error::invalid(format!(
            "{op}: dim {dim} is out of range for a tensor of {ndim} dimensions"
        )));
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// Plans `op` over `dims` (empty: all) of a tensor of `shape`.
pub fn plan(op: &str, shape: &[usize], dims: &[i64], keepdim: bool) -> Result<ReducePlan> {
    let nd = shape.len();
    let mut red = vec![false; nd];
    if dims.is_empty() {
        red.iter_mut().for_each(|r| *r = true);
    } else {
        for &d in dims {
            let d = norm_dim(op, d, nd)?;
            if nd == 0 {
                continue;
            }
            if red[d] {
                return Err(Error::invalid(format!(
                    "{op}: dim {d} appears more than once in the dims list"
                )));
            }
            red[d] = true;
        }
    }
    let out_shape: Vec<usize> = (0..nd)
        .filter(|&d| !red[d] || keepdim)
        .map(|d| if red[d] { 1 } else { shape[d] })
        .collect();
    let keep_shape: Vec<usize> = (0..nd).map(|d| if red[d] { 1 } else { shape[d] }).collect();
    let rdims: Vec<usize> = (0..nd).filter(|&d| red[d]).collect();
    // Dimensions of extent 1 do not affect memory order: ignore them for contiguity.
    let big: Vec<usize> = (0..nd).filter(|&d| shape[d] != 1).collect();
    let pos: Vec<usize> = (0..big.len()).filter(|&i| red[big[i]]).collect();
    let contiguous = pos.windows(2).all(|w| w[1] == w[0] + 1);
    let prod = |ds: &mut dyn Iterator<Item = usize>| ds.map(|d| shape[d]).product::<usize>();
    let (perm, desc) = if contiguous {
        let (lo, hi) = match (pos.first(), pos.last()) {
            (Some(&a), Some(&b)) => (a, b + 1),
            _ => (big.len(), big.len()),
        };
        let desc = ReduceDesc {
            outer: prod(&mut big[..lo].iter().copied()),
            r: prod(&mut big[lo..hi].iter().copied()),
            inner: prod(&mut big[hi..].iter().copied()),
        };
        (None, desc)
    } else {
        let mut p: Vec<usize> = (0..nd).filter(|&d| !red[d]).collect();
        p.extend(rdims.iter().copied());
        let desc = ReduceDesc {
            outer: prod(&mut (0..nd).filter(|&d| !red[d])),
            r: prod(&mut rdims.iter().copied()),
            inner: 1,
        };
        (Some(p), desc)
    };
    Ok(ReducePlan {
        out_shape,
        keep_shape,
        dims: rdims,
        perm,
        desc,
    })
}

/// Checks that a max/min/argmax has something to reduce (PyTorch refuses empty ones).
pub fn check_nonempty(op: &str, shape: &[usize], desc: &ReduceDesc) -> Result<()> {
    if desc.r == 0 {
        return Err(Error::invalid(format!(
            "{op}: cannot reduce over a dimension of extent 0 of shape {shape:?}"
        )));
    }
    Ok(())
}

/// The f64 groups of a reduction: for every output element (row-major over `keep_shape`),
/// the linear indices of the input elements it reduces, in input order.
pub fn groups(shape: &[usize], dims: &[usize]) -> Vec<Vec<usize>> {
    let nd = shape.len();
    let keep: Vec<usize> = (0..nd)
        .map(|d| if dims.contains(&d) { 1 } else { shape[d] })
        .collect();
    let nout: usize = keep.iter().product();
    let mut g = vec![Vec::new(); nout];
    let n: usize = shape.iter().product();
    let ks = crate::base::shape::contiguous_strides(&keep);
    for lin in 0..n {
        let (mut rem, mut o) = (lin, 0);
        for d in (0..nd).rev() {
            let i = rem % shape[d];
            rem /= shape[d];
            if !dims.contains(&d) {
                o += i * ks[d];
            }
        }
        g[o].push(lin);
    }
    g
}

/// The float64 reference of `op` over `dims` (normalized, as in [`ReducePlan::dims`]).
pub fn reference(op: ReduceOp, x: &[f64], shape: &[usize], dims: &[usize]) -> Vec<f64> {
    groups(shape, dims)
        .iter()
        .map(|g| {
            let it = g.iter().map(|&i| x[i]);
            match op {
                ReduceOp::Sum => it.sum(),
                ReduceOp::Mean => it.sum::<f64>() / g.len() as f64,
                ReduceOp::Prod => it.product(),
                ReduceOp::Max => it.fold(f64::NEG_INFINITY, |a, v| {
                    if a.is_nan() || v.is_nan() {
                        f64::NAN
                    } else {
                        a.max(v)
                    }
                }),
                ReduceOp::Min => it.fold(f64::INFINITY, |a, v| {
                    if a.is_nan() || v.is_nan() {
                        f64::NAN
                    } else {
                        a.min(v)
                    }
                }),
            }
        })
        .collect()
}

/// The float64 reference of argmax over one dimension: the first index of the largest value
/// (a NaN counts as the largest).
pub fn argmax_reference(x: &[f64], shape: &[usize], dim: usize) -> Vec<f64> {
    groups(shape, &[dim])
        .iter()
        .map(|g| {
            let mut best = 0usize;
            for (k, &i) in g.iter().enumerate() {
                let (v, b) = (x[i], x[g[best]]);
                if !b.is_nan() && (v.is_nan() || v > b) {
                    best = k;
                }
            }
            best as f64
        })
        .collect()
}

/// The float64 reference of `torch.max(x, dim)` (`largest`) or `torch.min(x, dim)`:
/// per group along `dim`, the extreme value and the first index holding it; a NaN wins
/// (the value is NaN and the index is the first NaN's).
pub fn max_dim_reference(
    x: &[f64],
    shape: &[usize],
    dim: usize,
    largest: bool,
) -> (Vec<f64>, Vec<i64>) {
    let mut vals = vec![];
    let mut idxs = vec![];
    for g in groups(shape, &[dim]) {
        let mut best = 0usize;
        for (k, &i) in g.iter().enumerate() {
            let (v, b) = (x[i], x[g[best]]);
            let better = if largest { v > b } else { v < b };
            if !b.is_nan() && (v.is_nan() || better) {
                best = k;
            }
        }
        vals.push(x[g[best]]);
        idxs.push(best as i64);
    }
    (vals, idxs)
}

/// The float64 reference of `torch.max(x, dim)`'s backward: `dy` (one value per group)
/// goes to the element at the group's index, zero elsewhere.
pub fn max_dim_backward_reference(
    shape: &[usize],
    dim: usize,
    indices: &[i64],
    dy: &[f64],
) -> Vec<f64> {
    let mut dx = vec![0.0; shape.iter().product()];
    for (o, g) in groups(shape, &[dim]).iter().enumerate() {
        dx[g[indices[o] as usize]] = dy[o];
    }
    dx
}

/// The float64 reference of the backward: `dx` for input `x` and upstream gradient `dy`
/// (one value per group). max/min split the gradient evenly between tied extremes
/// (`torch.amax`); prod's gradient is the product of the other elements.
pub fn backward_reference(
    op: ReduceOp,
    x: &[f64],
    shape: &[usize],
    dims: &[usize],
    dy: &[f64],
) -> Vec<f64> {
    let mut dx = vec![0.0; x.len()];
    for (o, g) in groups(shape, dims).iter().enumerate() {
        match op {
            ReduceOp::Sum => g.iter().for_each(|&i| dx[i] = dy[o]),
            ReduceOp::Mean => g.iter().for_each(|&i| dx[i] = dy[o] / g.len() as f64),
            ReduceOp::Max | ReduceOp::Min => {
                let y = reference(
                    op,
                    &g.iter().map(|&i| x[i]).collect::<Vec<_>>(),
                    &[g.len()],
                    &[0],
                )[0];
                let cnt = g.iter().filter(|&&i| x[i] == y).count() as f64;
                g.iter()
                    .for_each(|&i| dx[i] = if x[i] == y { dy[o] / cnt } else { 0.0 });
            }
            ReduceOp::Prod => {
                for (k, &i) in g.iter().enumerate() {
                    let others: f64 = g
                        .iter()
                        .enumerate()
                        .filter(|(j, _)| *j != k)
                        .map(|(_, &j)| x[j])
                        .product();
                    dx[i] = dy[o] * others;
                }
            }
        }
    }
    dx
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plans_contiguous_and_permuted() {
        let p = plan("sum", &[2, 3, 4], &[1], false).unwrap();
        assert_eq!(p.out_shape, vec![2, 4]);
        assert_eq!(
            p.desc,
            ReduceDesc {
                outer: 2,
                r: 3,
                inner: 4
            }
        );
        assert!(p.perm.is_none());
        let p = plan("sum", &[2, 3, 4], &[0, -1], true).unwrap();
        assert_eq!(p.out_shape, vec![1, 3, 1]);
        assert_eq!(p.perm, Some(vec![1, 0, 2]));
        assert_eq!(
            p.desc,
            ReduceDesc {
                outer: 3,
                r: 8,
                inner: 1
            }
        );
        let p = plan("sum", &[2, 1, 4], &[0, 2], false).unwrap();
        assert_eq!(p.perm, None);
        assert_eq!(
            p.desc,
            ReduceDesc {
                outer: 1,
                r: 8,
                inner: 1
            }
        );
        assert!(plan("sum", &[2, 3], &[2], false).is_err());
        assert!(plan("sum", &[2, 3], &[1, -1], false).is_err());
    }
}
