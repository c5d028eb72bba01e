//! Losses on a device (mse, bce, nll, cross_entropy) and their input gradients.
//! Layouts and semantics are those of `crate::ops::nn` (validated before the call).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::nn::{LossDesc, LossExt};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait LossOps {
    /// A loss; `target` has `target_dtype` (the input's dtype for mse/bce, i32/i64 class
    /// indices otherwise); `out` has `d.items()` elements for `Reduction::None`, else one.
    fn loss(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(format!(
            "{} is not implemented on this device",
            d.kind.name()
        )))
    }

    /// Gradient of a loss with respect to its input (`grad_out` shaped like `out`).
    fn loss_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(format!(
            "{}_backward is not implemented on this device",
            d.kind.name()
        )))
    }

    /// A loss with class weights and/or class-probability targets (`ext`, semantics in
    /// [`LossExt`]). `weight` is `[C]` (cross_entropy, nll_loss) or input-shaped (bce_loss)
    /// of the input's dtype, or NULL (all ones); with `ext.prob_target` the target has the
    /// input's shape and dtype (`target_dtype` is then the input's). `out` as for `loss`.
    fn loss_ext(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(format!(
            "{} with weights or class probabilities is not implemented on this device",
            d.kind.name()
        )))
    }

    /// Gradient of `loss_ext` with respect to its input.
    fn loss_ext_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(format!(
            "{}_backward with weights or class probabilities is not implemented on this device",
            d.kind.name()
        )))
    }
}
