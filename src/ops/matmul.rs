//! matmul's contract: `torch.matmul` shape rules, and the float64 reference.

use crate::base::shape::broadcast_shapes;
use crate::{Error, Result};

/// How a `torch.matmul(a, b)` call maps onto batched GEMMs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatmulPlan {
    /// Result shape (with 1-D operands' dimensions removed, as torch does).
    pub out_shape: Vec<usize>,
    /// Broadcast batch shape.
    pub batch: Vec<usize>,
    pub m: usize,
    pub k: usize,
    pub n: usize,
    /// Batch shape of each operand before broadcasting (empty for 1-D/2-D operands).
    pub a_batch: Vec<usize>,
    pub b_batch: Vec<usize>,
}

/// Plans `a @ b` for tensors of shapes `a` and `b`.
pub fn plan(a: &[usize], b: &[usize]) -> Result<MatmulPlan> {
    if a.is_empty() || b.is_empty() {
        return Err(Error::shape(format!(
            "matmul: both operands need at least 1 dimension, got {a:?} and {b:?}"
        )));
    }
    let (a_batch, m, ka) = match a.len() {
        1 => (vec![], 1, a[0]),
        n => (a[..n - 2].to_vec(), a[n - 2], a[n - 1]),
    };
    let (b_batch, kb, n) = match b.len() {
        1 => (vec![], b[0], 1),
        l => (b[..l - 2].to_vec(), b[l - 2], b[l - 1]),
    };
    if ka != kb {
        return Err(Error::shape(format!(
            "matmul: shapes {a:?} and {b:?} cannot be multiplied ({ka} != {kb})"
        )));
    }
    let batch = broadcast_shapes(&a_batch, &b_batch).map_err(|e| e.context("matmul"))?;
    let mut out_shape = batch.clone();
    if a.len() > 1 {
        out_shape.push(m);
    }
    if b.len() > 1 {
        out_shape.push(n);
    }
    Ok(MatmulPlan {
        out_shape,
        batch,
        m,
        k: ka,
        n,
        a_batch,
        b_batch,
    })
}

/// Float64 reference of a row-major `[m,k] x [k,n]` product.
pub fn reference_2d(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for p in 0..k {
            let av = a[i * k + p];
            for j in 0..n {
                c[i * n + j] += av * b[p * n + j];
            }
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn torch_shape_rules() {
        assert_eq!(plan(&[3, 4], &[4, 5]).unwrap().out_shape, vec![3, 5]);
        assert_eq!(plan(&[4], &[4, 5]).unwrap().out_shape, vec![5]);
        assert_eq!(plan(&[3, 4], &[4]).unwrap().out_shape, vec![3]);
        assert_eq!(plan(&[4], &[4]).unwrap().out_shape, Vec::<usize>::new());
        assert_eq!(
            plan(&[2, 1, 3, 4], &[5, 4, 6]).unwrap().out_shape,
            vec![2, 5, 3, 6]
        );
        assert!(plan(&[3, 4], &[5, 6]).is_err());
    }
}
