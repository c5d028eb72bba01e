//! DNN primitives on a device (MIOpen/cuDNN-shaped): convolution forward and backward
//! (data, weights, bias), pooling forward and backward, adaptive average pooling, and the
//! fused ops (GEMM/convolution with a bias + activation epilogue, add+relu, mul+add).
//!
//! Tensors are dense NC(D)HW of one floating `dtype` (f16/bf16 compute in f32). Geometry is
//! validated before these are called ([`ConvGeom::validate`], [`PoolGeom::validate`]).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::ops::conv::{Activation, ConvGeom};
use crate::ops::pool::PoolGeom;
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait DnnOps {
    /// Scratch bytes the convolution calls below can use for `g` (0: none needed). A smaller
    /// workspace is allowed; the device then allocates its own.
    fn conv_workspace_size(&self, g: &ConvGeom, dtype: DType) -> Result<usize> {
        Err(Error::unsupported(
            "conv_workspace_size is not implemented on this device",
        ))
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

    /// Row-major `y[m,n] = act(x[m,k] · W + bias)` where `W` is `w` `[n,k]` transposed when
    /// `w_is_nk` (linear's layout) or `w` `[k,n]` as is (matmul's); `bias` has `n` elements.
    fn gemm_bias_act(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        w_is_nk: bool,
        bias: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "gemm_bias_act is not implemented on this device",
        ))
    }

    /// Column sums of a row-major `[rows, cols]` matrix into `out` (`cols`): the bias
    /// gradient of linear.
    fn sum_rows(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        out: DevPtr,
        rows: usize,
        cols: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "sum_rows is not implemented on this device",
        ))
    }

    /// Fused `out = max(a + b, 0)` with broadcasting (`layout` has 2 operands).
    fn add_relu(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "add_relu is not implemented on this device",
        ))
    }

    /// Fused `out = a * b + c` with broadcasting (`layout` has 3 operands).
    fn mul_add(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        c: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        Err(Error::unsupported(
            "mul_add is not implemented on this device",
        ))
    }
}
