//! Softmax, normalization, losses and transformer ops on a device. Layouts and semantics are
//! those of `crate::ops::nn` (validated before the call). Optional pointers are
//! `DevPtr::NULL` when absent; statistics buffers (`mean`, `rstd`, `save_*`) are f32.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::nn::{
    AttentionDesc, BatchNormDesc, GroupNormDesc, LossDesc, RopeDesc, RowNormDesc, SoftmaxDesc,
    WeightedSumDesc,
};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait NnOps {
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

    /// layer_norm of each row; `w`, `b` (cols) optional; `mean`, `rstd` (rows, f32) optional.
    fn layer_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        y: DevPtr,
        mean: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "layer_norm is not implemented on this device",
        ))
    }

    /// layer_norm backward (statistics recomputed from `x`); `dw`/`db` optional.
    fn layer_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "layer_norm_backward is not implemented on this device",
        ))
    }

    /// rms_norm of each row; `w` (cols) optional; `rstd` (rows, f32) optional.
    fn rms_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        y: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "rms_norm is not implemented on this device",
        ))
    }

    /// rms_norm backward; `dw` optional.
    fn rms_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "rms_norm_backward is not implemented on this device",
        ))
    }

    /// group_norm; `w`, `b` (c) optional; `mean`, `rstd` (n*groups, f32) optional.
    fn group_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &GroupNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        y: DevPtr,
        mean: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "group_norm is not implemented on this device",
        ))
    }

    /// group_norm backward; `dw`/`db` optional.
    fn group_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &GroupNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "group_norm_backward is not implemented on this device",
        ))
    }

    /// batch_norm. Training: batch statistics, running stats (c, `dtype`, optional) updated in
    /// place, `save_mean`/`save_invstd` (c, f32) optional. Eval: running stats required.
    fn batch_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        y: DevPtr,
        save_mean: DevPtr,
        save_invstd: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "batch_norm is not implemented on this device",
        ))
    }

    /// batch_norm backward (training: batch statistics recomputed from `x`; eval: the
    /// running stats); `dw`/`db` optional.
    fn batch_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "batch_norm_backward is not implemented on this device",
        ))
    }

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

    /// Rotary embedding (its backward is `d.inverse = true`).
    fn rope(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RopeDesc,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported("rope is not implemented on this device"))
    }

    /// scaled_dot_product_attention.
    fn attention(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "scaled_dot_product_attention is not implemented on this device",
        ))
    }

    /// scaled_dot_product_attention backward.
    fn attention_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "scaled_dot_product_attention_backward is not implemented on this device",
        ))
    }

    /// `y = sum(x * w[..., None], dim=-2)`.
    fn weighted_sum(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &WeightedSumDesc,
        x: DevPtr,
        w: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "weighted_sum is not implemented on this device",
        ))
    }

    /// weighted_sum backward.
    fn weighted_sum_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &WeightedSumDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "weighted_sum_backward is not implemented on this device",
        ))
    }
}
