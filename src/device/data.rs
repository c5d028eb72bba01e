//! Data movement on a device: strided copies (permute, slice, concat) and embedding.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables)]
pub trait DataOps {
    /// Copies a `shape` block of `elem_size`-byte elements: element `idx` goes from
    /// `src + sum(idx[d] * src_strides[d])` to `dst + sum(idx[d] * dst_strides[d])`
    /// (strides in elements). The two regions must not overlap.
    #[allow(clippy::too_many_arguments)]
    fn copy_strided(
        &self,
        stream: RawStream,
        elem_size: usize,
        src: DevPtr,
        src_strides: &[usize],
        dst: DevPtr,
        dst_strides: &[usize],
        shape: &[usize],
    ) -> Result<()> {
        Err(Error::unsupported(
            "copy_strided is not implemented on this device",
        ))
    }

    /// `out[j, :] = weight[idx[j], :]` for `j < n_idx`; weight is `[num, dim]` of `dtype`,
    /// `idx` is i32 or i64. An index outside `[0, num)` is INVALID_ARGUMENT.
    #[allow(clippy::too_many_arguments)]
    fn embedding(
        &self,
        stream: RawStream,
        dtype: DType,
        weight: DevPtr,
        num: usize,
        dim: usize,
        idx_dtype: DType,
        idx: DevPtr,
        n_idx: usize,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "embedding is not implemented on this device",
        ))
    }

    /// The dense weight gradient of embedding: `dw = 0`, then `dw[idx[j], :] += dy[j, :]`
    /// (repeated indices sum).
    #[allow(clippy::too_many_arguments)]
    fn embedding_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx_dtype: DType,
        idx: DevPtr,
        n_idx: usize,
        num: usize,
        dim: usize,
        dw: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "embedding_backward is not implemented on this device",
        ))
    }
}
