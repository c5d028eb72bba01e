//! Pooling on a device: max and average pooling (1D/2D/3D) and adaptive average pooling,
//! forward and backward.
//!
//! Tensors are dense NC(D)HW of one floating `dtype` (f16/bf16 compute in f32). Geometry is
//! validated before these are called ([`PoolGeom::validate`]).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::pool::PoolGeom;
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait PoolOps {
    /// Max or average pooling forward.
    fn pool_forward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "pool_forward is not implemented on this device",
        ))
    }

    /// Pooling backward: `dx` (overwritten) from `x` and `dy` (max pooling recomputes the
    /// arg-max from `x`; average pooling ignores `x`).
    fn pool_backward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "pool_backward is not implemented on this device",
        ))
    }

    /// `adaptive_avg_pool2d` over `planes` planes of `inp` to `out`.
    fn adaptive_avg_pool2d_forward(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        planes: usize,
        inp: [usize; 2],
        out: [usize; 2],
    ) -> Result<()> {
        Err(Error::unsupported(
            "adaptive_avg_pool2d is not implemented on this device",
        ))
    }

    /// Backward of `adaptive_avg_pool2d`: `dx` (overwritten) from `dy`.
    fn adaptive_avg_pool2d_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        dx: DevPtr,
        planes: usize,
        inp: [usize; 2],
        out: [usize; 2],
    ) -> Result<()> {
        Err(Error::unsupported(
            "adaptive_avg_pool2d_backward is not implemented on this device",
        ))
    }
}
