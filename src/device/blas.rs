//! BLAS on a device: GEMM with BLAS conventions (column-major, transpose flags, leading
//! dimensions, alpha/beta), optionally strided-batched.

use super::{DevPtr, RawStream};
use crate::runtime::dtype::DType;
use crate::{Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transpose {
    No,
    Yes,
}

/// `C[i] = alpha * op(A[i]) * op(B[i]) + beta * C[i]` for `i < batch`, column-major, with
/// `op(A)` m×k, `op(B)` k×n and `C` m×n. Pointers are element-strided by `stride_*`.
/// All three matrices have `dtype`; f16/bf16 accumulate in f32.
#[derive(Clone, Copy, Debug)]
pub struct GemmDesc {
    pub dtype: DType,
    pub trans_a: Transpose,
    pub trans_b: Transpose,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub a: DevPtr,
    pub lda: usize,
    pub b: DevPtr,
    pub ldb: usize,
    pub beta: f32,
    pub c: DevPtr,
    pub ldc: usize,
    pub batch: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub stride_c: usize,
}

impl GemmDesc {
    /// Checks the BLAS rules on leading dimensions (as rocBLAS/cuBLAS do).
    pub fn validate(&self) -> Result<()> {
        let (ar, _ac) = match self.trans_a {
            Transpose::No => (self.m, self.k),
            Transpose::Yes => (self.k, self.m),
        };
        let (br, _bc) = match self.trans_b {
            Transpose::No => (self.k, self.n),
            Transpose::Yes => (self.n, self.k),
        };
        if self.lda < ar.max(1) {
            return Err(Error::invalid(format!(
                "gemm: lda={} < {}",
                self.lda,
                ar.max(1)
            )));
        }
        if self.ldb < br.max(1) {
            return Err(Error::invalid(format!(
                "gemm: ldb={} < {}",
                self.ldb,
                br.max(1)
            )));
        }
        if self.ldc < self.m.max(1) {
            return Err(Error::invalid(format!(
                "gemm: ldc={} < {}",
                self.ldc,
                self.m.max(1)
            )));
        }
        if !self.dtype.is_float() {
            return Err(Error::dtype(format!(
                "gemm: dtype {} is not a floating type",
                self.dtype
            )));
        }
        Ok(())
    }
}

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables)]
pub trait BlasOps {
    fn gemm(&self, stream: RawStream, desc: &GemmDesc) -> Result<()> {
        Err(Error::unsupported("gemm is not implemented on this device"))
    }
}
