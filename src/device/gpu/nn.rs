//! `NnOps` on a GPU. Losses, rope, weighted_sum and attention forward to src/device/gpu/loss.rs;
//! softmax and the norms come with the gpu-norm branch (until then: the trait's defaults,
//! UNSUPPORTED).

use super::GpuDevice;
use crate::Result;
use crate::device::nn::NnOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{AttentionDesc, LossDesc, RopeDesc, WeightedSumDesc};
use crate::runtime::dtype::DType;

impl NnOps for GpuDevice {
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
        self.nn_loss(stream, dtype, d, input, target, target_dtype, out)
    }

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
        self.nn_loss_backward(
            stream,
            dtype,
            d,
            input,
            target,
            target_dtype,
            grad_out,
            grad_input,
        )
    }

    fn rope(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RopeDesc,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        self.nn_rope(stream, dtype, d, x, y)
    }

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
        self.nn_attention(stream, dtype, d, q, k, v, out)
    }

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
        self.nn_attention_backward(stream, dtype, d, q, k, v, dout, dq, dk, dv)
    }

    fn weighted_sum(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &WeightedSumDesc,
        x: DevPtr,
        w: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        self.nn_weighted_sum(stream, dtype, d, x, w, y)
    }

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
        self.nn_weighted_sum_backward(stream, dtype, d, x, w, dy, dx, dw)
    }
}
