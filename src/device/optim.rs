//! Optimizer update steps on a device, in place (PyTorch's formulas, `ops::optim`).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables)]
pub trait OptimOps {
    /// One SGD step over `n` elements of floating `dtype`: updates `param` and (when
    /// momentum is non-zero) `momentum_buf` in place.
    #[allow(clippy::too_many_arguments)]
    fn sgd_step(
        &self,
        stream: RawStream,
        dtype: DType,
        param: DevPtr,
        grad: DevPtr,
        momentum_buf: DevPtr,
        n: usize,
        attrs: &SgdAttrs,
    ) -> Result<()> {
        Err(Error::unsupported(
            "sgd_step is not implemented on this device",
        ))
    }

    /// SGD steps with the same attributes over several tensors (PyTorch's foreach SGD: the
    /// executor's grouped optimizer steps): each part is `(param, grad, momentum_buf, n)` as
    /// in [`OptimOps::sgd_step`]. By default one [`OptimOps::sgd_step`] per part; GPUs do up
    /// to eight parts per launch.
    fn sgd_step_multi(
        &self,
        stream: RawStream,
        dtype: DType,
        parts: &[(DevPtr, DevPtr, DevPtr, usize)],
        attrs: &SgdAttrs,
    ) -> Result<()> {
        for &(p, g, b, n) in parts {
            self.sgd_step(stream, dtype, p, g, b, n, attrs)?;
        }
        Ok(())
    }

    /// One Adam/AdamW step: updates `param`, `exp_avg`, `exp_avg_sq` and (amsgrad)
    /// `max_exp_avg_sq` in place.
    #[allow(clippy::too_many_arguments)]
    fn adam_step(
        &self,
        stream: RawStream,
        dtype: DType,
        param: DevPtr,
        grad: DevPtr,
        exp_avg: DevPtr,
        exp_avg_sq: DevPtr,
        max_exp_avg_sq: DevPtr,
        n: usize,
        attrs: &AdamAttrs,
    ) -> Result<()> {
        Err(Error::unsupported(
            "adam_step is not implemented on this device",
        ))
    }
}
