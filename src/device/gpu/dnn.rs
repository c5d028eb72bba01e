//! `DnnOps` for GPU devices: convolution (MIOpen / cuDNN) and pooling (kernels), the logic
//! in [`super::conv`]. The fused ops (gemm_bias_act, sum_rows, add_relu, mul_add) keep
//! the trait's defaults here.

use super::GpuDevice;
use super::conv;
use crate::Result;
use crate::device::{DevPtr, DnnOps, RawStream};
use crate::ops::conv::{Activation, ConvGeom};
use crate::ops::pool::PoolGeom;
use crate::runtime::dtype::DType;

impl DnnOps for GpuDevice {
    /// 0: the device takes workspaces from its caching allocator (a caller's workspace is
    /// used when it is large enough for the chosen algorithm).
    fn conv_workspace_size(&self, _g: &ConvGeom, _dtype: DType) -> Result<usize> {
        Ok(0)
    }

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
        conv::conv_forward(
            self,
            stream,
            g,
            dtype,
            x,
            w,
            bias,
            act,
            y,
            workspace,
            workspace_bytes,
        )
    }

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
        conv::conv_backward_data(
            self,
            stream,
            g,
            dtype,
            dy,
            w,
            dx,
            workspace,
            workspace_bytes,
        )
    }

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
        conv::conv_backward_weight(
            self,
            stream,
            g,
            dtype,
            x,
            dy,
            dw,
            db,
            workspace,
            workspace_bytes,
        )
    }

    fn pool_forward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        conv::pool_forward(self, stream, g, dtype, x, y)
    }

    fn pool_backward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        conv::pool_backward(self, stream, g, dtype, x, dy, dx)
    }

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
        conv::adaptive_avg_pool2d(self, stream, dtype, false, x, y, planes, inp, out)
    }

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
        conv::adaptive_avg_pool2d(self, stream, dtype, true, dy, dx, planes, inp, out)
    }
}
