//! Softmax and log_softmax on a device, forward and backward. Layouts and semantics are those of `crate::ops::nn` (validated before the call).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::nn::SoftmaxDesc;
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait SoftmaxOps {
    /// `y = softmax(x)` (or log_softmax) over the middle axis of `[outer, dim, inner]`.
    fn softmax(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &SoftmaxDesc,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "softmax is not implemented on this device",
        ))
    }

    /// `dx` from the forward output `y` and the output gradient `dy`.
    fn softmax_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &SoftmaxDesc,
        y: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "softmax_backward is not implemented on this device",
        ))
    }
}
