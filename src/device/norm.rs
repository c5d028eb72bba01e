//! Normalization on a device: layer_norm, rms_norm, group_norm and batch_norm, forward and
//! backward. Layouts and semantics are those of `crate::ops::nn` (validated before the call). Optional pointers are `DevPtr::NULL` when absent;
//! statistics buffers (`mean`, `rstd`, `save_*`) are f32.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::nn::{BatchNormDesc, GroupNormDesc, RowNormDesc};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait NormOps {
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
}
