//! Pooling on a device: max and average pooling (1D/2D/3D) and adaptive average and max
//! pooling (1D/2D/3D, either layout), forward and backward.
//!
//! Tensors are dense NC(D)HW of one floating `dtype` (f16/bf16 compute in f32), but for the
//! `_channels_last` methods and adaptive pooling in `AdaptiveGeom::layout` (N(D)HWC).
//! Geometry is validated before these are called ([`PoolGeom::validate`],
//! [`crate::ops::pool::adaptive_geom`]).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::pool::{AdaptiveGeom, PoolGeom};
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

    /// Whether [`Self::pool_forward_channels_last`] and
    /// [`Self::pool_backward_channels_last`] run natively (else the runtime converts the
    /// layout around the channels-first kernels).
    fn has_channels_last_pool(&self) -> bool {
        false
    }

    /// Whether [`Self::pool_forward_channels_last`] runs `g` natively (some devices only
    /// some pools: the CPU's 2-D max pooling); the default is
    /// [`Self::has_channels_last_pool`].
    fn channels_last_pool_forward(&self, g: &PoolGeom, dtype: DType) -> bool {
        self.has_channels_last_pool()
    }

    /// Pooling forward on channels-last tensors: `x` `[N, ..., C]`, `y` `[N, ..., C]`; `g`
    /// is the geometry of the channels-first problem (`g.c` the channels).
    fn pool_forward_channels_last(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "channels-last pooling is not implemented on this device",
        ))
    }

    /// Pooling backward on channels-last tensors (as [`Self::pool_backward`]).
    fn pool_backward_channels_last(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "channels-last pooling is not implemented on this device",
        ))
    }

    /// Max pooling forward (`g.kind` is Max) that also writes PyTorch's indices to `idx`
    /// (i64, the flat index within each plane; see [`PoolGeom::torch_argmax`]).
    fn max_pool_with_indices(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "max_pool_with_indices is not implemented on this device",
        ))
    }

    /// Max pooling backward through indices: `dx` (`planes * in_vol` elements, overwritten)
    /// gets `dy[p, o]` added at `idx[p, o]` of plane `p` (`planes * out_vol` of each). An
    /// index outside `[0, in_vol)` is INVALID_ARGUMENT.
    fn max_pool_backward_indices(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        planes: usize,
        out_vol: usize,
        in_vol: usize,
        dx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "max_pool_backward_indices is not implemented on this device",
        ))
    }

    /// [`Self::max_pool_with_indices`] on channels-last tensors (`x` `[N, ..., C]`, `y` and
    /// `idx` `[N, ..., C]`, the indices' values as channels first); run where
    /// [`Self::has_channels_last_pool`].
    fn max_pool_with_indices_channels_last(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "channels-last max pooling with indices is not implemented on this device",
        ))
    }

    /// [`Self::max_pool_backward_indices`] on channels-last tensors: `dy` and `idx`
    /// `[n, out_vol, c]`, `dx` `[n, in_vol, c]`; run where [`Self::has_channels_last_pool`].
    fn max_pool_backward_indices_channels_last(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        n: usize,
        c: usize,
        out_vol: usize,
        in_vol: usize,
        dx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "channels-last max pooling backward through indices is not implemented on this device",
        ))
    }

    /// Adaptive pooling forward (`g.layout` either): average, or (`max`) maximum with
    /// PyTorch's arg-max written to `idx` (i64, `y`'s shape: the flat index within each
    /// `[spatial...]` plane; see [`adaptive_max_reference`]). `idx` is unused for average.
    ///
    /// [`adaptive_max_reference`]: crate::ops::pool::adaptive_max_reference
    fn adaptive_pool_forward(
        &self,
        stream: RawStream,
        g: &AdaptiveGeom,
        max: bool,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "adaptive pooling is not implemented on this device",
        ))
    }

    /// Adaptive pooling backward: `dx` (overwritten) from `dy`; average pooling spreads each
    /// gradient over its window, max pooling (`max`) adds it at the window's index in `idx`
    /// (windows sharing a maximum add up, in a deterministic order). An index outside its
    /// output's window is INVALID_ARGUMENT.
    fn adaptive_pool_backward(
        &self,
        stream: RawStream,
        g: &AdaptiveGeom,
        max: bool,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "adaptive pooling backward is not implemented on this device",
        ))
    }
}
