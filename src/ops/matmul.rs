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

/// Offsets (in matrices) of batch `bi` of the broadcast batch shape `batch` into an
/// operand whose own batch shape is `own` (right-aligned, extent-1 dims broadcast).
fn batch_offset(bi: usize, batch: &[usize], own: &[usize]) -> usize {
    let off = batch.len() - own.len();
    let (mut rem, mut o, mut stride) = (bi, 0, 1);
    for d in (0..batch.len()).rev() {
        let i = rem % batch[d];
        rem /= batch[d];
        if d >= off {
            let e = own[d - off];
            if e != 1 {
                o += i * stride;
            }
            stride *= e;
        }
    }
    o
}

/// The float64 reference of `torch.matmul(a, b)` for row-major operands of shapes `ash`
/// and `bsh` (1-D operands, broadcast batches); the result is row-major over
/// [`MatmulPlan::out_shape`].
pub fn reference(a: &[f64], ash: &[usize], b: &[f64], bsh: &[usize]) -> Result<Vec<f64>> {
    let p = plan(ash, bsh)?;
    let (m, k, n) = (p.m, p.k, p.n);
    let nb: usize = p.batch.iter().product();
    let mut out = Vec::with_capacity(nb * m * n);
    for bi in 0..nb {
        let oa = batch_offset(bi, &p.batch, &p.a_batch) * m * k;
        let ob = batch_offset(bi, &p.batch, &p.b_batch) * k * n;
        out.extend(reference_2d(
            &a[oa..oa + m * k],
            &b[ob..ob + k * n],
            m,
            k,
            n,
        ));
    }
    Ok(out)
}

/// The float64 reference of `torch.matmul(a, b)`'s backward: `(da, db)` with a's and b's
/// shapes, from `dy` (the result's shape); gradients are summed over the batch dimensions
/// an operand was broadcast along.
pub fn backward_reference(
    a: &[f64],
    ash: &[usize],
    b: &[f64],
    bsh: &[usize],
    dy: &[f64],
) -> Result<(Vec<f64>, Vec<f64>)> {
    let p = plan(ash, bsh)?;
    let (m, k, n) = (p.m, p.k, p.n);
    let nb: usize = p.batch.iter().product();
    let mut da = vec![0.0; a.len()];
    let mut db = vec![0.0; b.len()];
    for bi in 0..nb {
        let oa = batch_offset(bi, &p.batch, &p.a_batch) * m * k;
        let ob = batch_offset(bi, &p.batch, &p.b_batch) * k * n;
        let oy = bi * m * n;
        for i in 0..m {
            for j in 0..n {
                let g = dy[oy + i * n + j];
                for q in 0..k {
                    da[oa + i * k + q] += g * b[ob + q * n + j];
                    db[ob + q * n + j] += g * a[oa + i * k + q];
                }
            }
        }
    }
    Ok((da, db))
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
