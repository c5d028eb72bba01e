//! Reductions on a device, over the middle dimension of a contiguous `[outer, r, inner]`
//! tensor (see `ops::reduce::ReduceDesc`).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::reduce::{ReduceDesc, ReduceOp};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables)]
pub trait ReduceOps {
    /// `y[o, i] = op(x[o, :, i])`; x and y have floating `dtype`; y has `outer * inner`
    /// elements. Sums accumulate in f64.
    fn reduce(
        &self,
        stream: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        Err(Error::unsupported(
            "reduce is not implemented on this device",
        ))
    }

    /// `y[o, i] = argmax(x[o, :, i])` as i64 (the first of equal maxima; NaN is largest).
    fn argmax(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        Err(Error::unsupported(
            "argmax is not implemented on this device",
        ))
    }

    /// The backward of [`ReduceOps::reduce`]: `dx[o, :, i]` from `x` and `dy[o, i]`.
    #[allow(clippy::too_many_arguments)]
    fn reduce_backward(
        &self,
        stream: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        Err(Error::unsupported(
            "reduce_backward is not implemented on this device",
        ))
    }

    /// Integer sum or product (`op` Sum or Prod) in wrapping two's-complement arithmetic
    /// (PyTorch's integer overflow): `y[o, i] = op(x[o, :, i])`, x and y both of `dtype`
    /// (i32 or i64); an empty group gives 0 (sum) or 1 (prod).
    fn reduce_int(
        &self,
        stream: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        Err(Error::unsupported(
            "reduce_int is not implemented on this device",
        ))
    }
}
