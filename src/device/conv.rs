//! Convolution on a device (MIOpen/cuDNN-shaped): forward (with a fused bias + activation
//! epilogue) and the data and weight gradients, 1D/2D/3D, grouped and dilated.
//!
//! Tensors are dense NC(D)HW of one floating `dtype` (f16/bf16 compute in f32). Geometry is
//! validated before these are called ([`ConvGeom::validate`]).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::conv::{Activation, Blocked, ConvGeom};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait ConvOps {
    /// Scratch bytes the convolution calls below can use for `g` (0: none needed). A smaller
    /// workspace is allowed; the device then allocates its own.
    fn conv_workspace_size(&self, g: &ConvGeom, dtype: DType) -> Result<usize> {
        Err(Error::unsupported(
            "conv_workspace_size is not implemented on this device",
        ))
    }

    /// Whether the convolution calls below take channels-last geometries
    /// (`ConvGeom::channels_last`; else the runtime converts the layout around them).
    fn has_channels_last_conv(&self) -> bool {
        false
    }

    /// `y = act(conv(x, w) + bias)`; `bias` has `c_out` elements.
    fn conv_forward(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "conv_forward is not implemented on this device",
        ))
    }

    /// Whether [`ConvOps::conv_forward_residual`] is implemented (the executor then fuses a
    /// convolution with the residual add (+ activation) that alone reads it).
    fn has_conv_residual(&self) -> bool {
        false
    }

    /// `y = act(conv(x, w) + bias + residual)`, the sum in that order (as the unfused
    /// convolution then add compute it); `residual` has `y`'s shape and dtype and is not `y`.
    fn conv_forward_residual(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        residual: DevPtr,
        act: Activation,
        y: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "conv_forward_residual is not implemented on this device",
        ))
    }

    /// Elements (of `dtype`) of the device's packed form of `g`'s weights, where it has one
    /// ([`ConvOps::conv_pack_weight`], [`ConvOps::conv_forward_packed`]): the executor packs
    /// the weights no node writes once, when it makes a plan at O2+. None: no packed form.
    fn conv_packed_weight_len(&self, g: &ConvGeom, dtype: DType) -> Option<usize> {
        None
    }

    /// Writes `w` (`[c_out, c_in / groups, k...]`) in the packed form to `packed`
    /// ([`ConvOps::conv_packed_weight_len`] elements).
    fn conv_pack_weight(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        w: DevPtr,
        packed: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "conv_pack_weight is not implemented on this device",
        ))
    }

    /// True when [`ConvOps::conv_forward_packed`] takes `g` with its tensors in `layout`
    /// (the blocked layout where it says so). Default: NCHW alone, where the weights pack.
    fn conv_packed_layout(&self, g: &ConvGeom, dtype: DType, layout: Blocked) -> bool {
        layout == Blocked::default() && self.conv_packed_weight_len(g, dtype).is_some()
    }

    /// `y = act(conv(x, w) + bias (+ residual))` over weights [`ConvOps::conv_pack_weight`]
    /// packed for `g` (the sum in that order, as [`ConvOps::conv_forward_residual`]);
    /// `residual`, when given, has `y`'s shape and dtype and is not `y`. `layout`: which
    /// of x and y (with the residual) are blocked ([`ConvOps::conv_packed_layout`] true).
    #[allow(clippy::too_many_arguments)]
    fn conv_forward_packed(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        packed: DevPtr,
        bias: Option<DevPtr>,
        residual: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        layout: Blocked,
    ) -> Result<()> {
        Err(Error::unsupported(
            "conv_forward_packed is not implemented on this device",
        ))
    }

    /// `dx` (shape of `x`, overwritten) from `dy` (shape of `y`) and `w`. This is also the
    /// forward pass of the transposed convolution.
    fn conv_backward_data(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        dy: DevPtr,
        w: DevPtr,
        dx: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "conv_backward_data is not implemented on this device",
        ))
    }

    /// `dw` (shape of `w`, overwritten) from `x` and `dy`; `db` (`c_out`), when given, gets
    /// the bias gradient.
    fn conv_backward_weight(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dw: DevPtr,
        db: Option<DevPtr>,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "conv_backward_weight is not implemented on this device",
        ))
    }
}
