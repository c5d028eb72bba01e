//! Shapes: validation of extents, element counts with overflow checks, NumPy broadcasting.

use crate::base::dtype::DType;
use crate::{Error, Result};

/// Largest number of dimensions a tensor may have.
pub const MAX_DIMS: usize = 16;

/// Converts C extents (`int64_t`) to a shape, rejecting negatives and overflow.
pub fn from_i64(dims: &[i64]) -> Result<Vec<usize>> {
    if dims.len() > MAX_DIMS {
        return Err(Error::invalid(format!(
            "{} dimensions given; at most {MAX_DIMS} are supported",
            dims.len()
        )));
    }
    let mut out = Vec::with_capacity(dims.len());
    for (i, &d) in dims.iter().enumerate() {
        if d < 0 {
            return Err(Error::invalid(format!(
                "extent {d} of dimension {i} is negative"
            )));
        }
        out.push(usize::try_from(d).map_err(|_| Error::invalid("extent too large"))?);
    }
    numel(&out)?;
    Ok(out)
}

/// Number of elements, or INVALID_ARGUMENT when the product overflows.
pub fn numel(shape: &[usize]) -> Result<usize> {
    shape.iter().try_fold(1usize, |acc, &d| {
        acc.checked_mul(d)
            .ok_or_else(|| Error::invalid(format!("shape {shape:?} overflows the element count")))
    })
}

/// Bytes of a tensor of `shape` and `dtype`, overflow-checked (and at most isize::MAX).
pub fn nbytes(shape: &[usize], dtype: DType) -> Result<usize> {
    let n = numel(shape)?;
    n.checked_mul(dtype.size())
        .filter(|b| *b <= isize::MAX as usize)
        .ok_or_else(|| {
            Error::invalid(format!(
                "shape {shape:?} of {dtype} overflows the byte size"
            ))
        })
}

/// Row-major strides (in elements).
pub fn contiguous_strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![0; shape.len()];
    let mut acc = 1;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc *= shape[i];
    }
    s
}

/// The NumPy broadcast of two shapes.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            return Err(Error::shape(format!(
                "shapes {a:?} and {b:?} do not broadcast (dimension {i}: {da} vs {db})"
            )));
        };
    }
    Ok(out)
}

/// Strides (in elements) to read a contiguous tensor of `shape` as if it had `out_shape`:
/// broadcast dimensions get stride 0.
pub fn broadcast_strides(shape: &[usize], out_shape: &[usize]) -> Vec<usize> {
    let cs = contiguous_strides(shape);
    let off = out_shape.len() - shape.len();
    (0..out_shape.len())
        .map(|i| {
            if i < off || shape[i - off] == 1 && out_shape[i] != 1 {
                0
            } else {
                cs[i - off]
            }
        })
        .collect()
}

/// How to walk several broadcast inputs along one output: the output shape and each input's
/// element strides, with adjacent dimensions merged where every operand allows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BroadcastLayout {
    pub shape: Vec<usize>,
    pub strides: Vec<Vec<usize>>,
}

impl BroadcastLayout {
    /// Layout for inputs of `shapes` broadcast to their common shape.
    pub fn new(shapes: &[&[usize]]) -> Result<(Vec<usize>, BroadcastLayout)> {
        let mut out: Vec<usize> = Vec::new();
        for s in shapes {
            out = broadcast_shapes(&out, s)?;
        }
        let strides: Vec<Vec<usize>> = shapes.iter().map(|s| broadcast_strides(s, &out)).collect();
        Ok((out.clone(), Self::merged(&out, strides)))
    }

    /// The layout of operands read through the given element strides over `shape` (one
    /// stride per dimension of `shape` each), merged as [`BroadcastLayout::new`] merges.
    pub fn from_strides(shape: &[usize], strides: Vec<Vec<usize>>) -> BroadcastLayout {
        Self::merged(shape, strides)
    }

    /// Merges adjacent dimensions that are contiguous for every operand, drops size-1 dims.
    fn merged(shape: &[usize], strides: Vec<Vec<usize>>) -> BroadcastLayout {
        let mut ms: Vec<usize> = Vec::new();
        let mut mst: Vec<Vec<usize>> = vec![Vec::new(); strides.len()];
        for d in 0..shape.len() {
            if shape[d] == 1 {
                continue;
            }
            let can_merge = !ms.is_empty()
                && strides
                    .iter()
                    .zip(mst.iter())
                    .all(|(s, m)| *m.last().unwrap() == s[d] * shape[d]);
            if can_merge {
                *ms.last_mut().unwrap() *= shape[d];
                for (k, s) in strides.iter().enumerate() {
                    *mst[k].last_mut().unwrap() = s[d];
                }
            } else {
                ms.push(shape[d]);
                for (k, s) in strides.iter().enumerate() {
                    mst[k].push(s[d]);
                }
            }
        }
        BroadcastLayout {
            shape: ms,
            strides: mst,
        }
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// True when every operand is contiguous over the whole output (no broadcasting).
    pub fn is_flat(&self) -> bool {
        self.shape.len() <= 1 && self.strides.iter().all(|s| s.is_empty() || s[0] == 1)
    }

    /// The period of operand `k` when output element `e` reads its element `e % period`:
    /// its strides are row-major over a trailing block of the dimensions and 0 before it.
    /// `numel()` for a same-shape operand, 1 for a scalar, a row's length for a row
    /// broadcast (a bias); `None` for any other layout (or no operand `k`).
    pub fn period(&self, k: usize) -> Option<usize> {
        let st = self.strides.get(k)?;
        let (mut p, mut d) = (1usize, self.shape.len());
        while d > 0 && st[d - 1] == p && self.shape[d - 1] > 1 {
            p *= self.shape[d - 1];
            d -= 1;
        }
        st[..d].iter().all(|&s| s == 0).then_some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_of_operands() {
        let (_, l) = BroadcastLayout::new(&[&[4, 6], &[6]]).unwrap();
        assert_eq!((l.period(0), l.period(1)), (Some(24), Some(6)));
        let (_, l) = BroadcastLayout::new(&[&[4, 6], &[1]]).unwrap();
        assert_eq!((l.period(0), l.period(1)), (Some(24), Some(1)));
        let (_, l) = BroadcastLayout::new(&[&[2, 3, 8], &[3, 8]]).unwrap();
        assert_eq!((l.period(0), l.period(1)), (Some(48), Some(24)));
        // A column broadcast is not periodic.
        let (_, l) = BroadcastLayout::new(&[&[4, 6], &[4, 1]]).unwrap();
        assert_eq!(l.period(1), None);
        let (_, l) = BroadcastLayout::new(&[&[5], &[5]]).unwrap();
        assert_eq!(
            (l.period(0), l.period(1), l.period(2)),
            (Some(5), Some(5), None)
        );
        let (_, l) = BroadcastLayout::new(&[&[], &[]]).unwrap();
        assert_eq!(l.period(0), Some(1));
    }

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(
            broadcast_shapes(&[3, 1, 5], &[4, 1]).unwrap(),
            vec![3, 4, 5]
        );
        assert_eq!(broadcast_shapes(&[], &[2, 3]).unwrap(), vec![2, 3]);
        assert_eq!(broadcast_shapes(&[0, 1], &[1, 4]).unwrap(), vec![0, 4]);
        assert!(broadcast_shapes(&[2, 3], &[4, 3]).is_err());
        assert_eq!(broadcast_strides(&[4, 1], &[3, 4, 5]), vec![0, 1, 0]);
    }

    #[test]
    fn layouts_merge_contiguous_dims() {
        let (out, l) = BroadcastLayout::new(&[&[2, 3, 4], &[2, 3, 4]]).unwrap();
        assert_eq!(out, vec![2, 3, 4]);
        assert_eq!(l.shape, vec![24]);
        assert!(l.is_flat());
        let (_, l) = BroadcastLayout::new(&[&[2, 3, 4], &[4]]).unwrap();
        assert_eq!(l.shape, vec![6, 4]);
        assert_eq!(l.strides, vec![vec![4, 1], vec![0, 1]]);
    }

    #[test]
    fn overflow_is_rejected() {
        assert!(from_i64(&[-1]).is_err());
        assert!(from_i64(&[i64::MAX, i64::MAX]).is_err());
        assert!(nbytes(&[usize::MAX / 2], DType::F32).is_err());
    }
}
