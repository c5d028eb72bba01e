//! scaled_dot_product_attention on a device, forward and backward. Layouts and semantics are those of `crate::ops::nn` (validated before the call).

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::nn::AttentionDesc;
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait AttentionOps {
    /// scaled_dot_product_attention. `mask` is read as `d.mask` says (NULL when `d.mask`
    /// is None).
    fn attention(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "scaled_dot_product_attention is not implemented on this device",
        ))
    }

    /// [`attention`](Self::attention) where the kernel before this call in `stream` may
    /// still run when this one starts (an early launch) and writes, of what this call reads,
    /// only q and the key and value rows at the position `*fresh` (an index on the device:
    /// i64, or i32 when `fresh_i32`): the executor's word
    /// ([`crate::graph::passes::settle_attention`], a decode step's cache store right
    /// before). A device may read the other rows of k and v before it waits for that kernel.
    /// The result is `attention`'s, bit for bit. Default: `attention`.
    fn attention_fresh(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        (q, k, v, mask): (DevPtr, DevPtr, DevPtr, DevPtr),
        out: DevPtr,
        fresh: DevPtr,
        fresh_i32: bool,
    ) -> Result<()> {
        self.attention(stream, dtype, d, q, k, v, mask, out)
    }

    /// scaled_dot_product_attention backward: `dq` `[batch, sq, d]`, and `dk`, `dv` of k's
    /// and v's shapes (summed over the query heads of a group), all overwritten.
    fn attention_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "scaled_dot_product_attention_backward is not implemented on this device",
        ))
    }
}

/// Which GPU implementation runs scaled_dot_product_attention (for benchmarks and tests that
/// measure one path alone; the default picks per call).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttentionPath {
    /// The best path for each call: the DNN library's fused attention where it takes the
    /// case (cuDNN's flash-attention graph for f16/bf16), else the portable fused kernel
    /// wherever it applies, else the GEMM path.
    Auto = 0,
    /// The portable fused kernel (kernels/flash_attention.hip) wherever it applies (head
    /// dims <= 128); other calls still take the GEMM path.
    Portable = 1,
    /// The vendor-BLAS GEMM path with the S x S scores in f32 (kernels/attention.hip).
    Gemm = 2,
}

/// 0..=2: an [`AttentionPath`] set by [`set_attention_path`]; 3: not set (the environment's).
static FORCED_PATH: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(3);

/// Forces an attention path for every later call in the process (`Auto` restores the
/// default choice). Overrides the `RB_ATTENTION_PATH` environment variable.
pub fn set_attention_path(p: AttentionPath) {
    FORCED_PATH.store(p as u8, std::sync::atomic::Ordering::Relaxed);
}

/// The path in force: [`set_attention_path`]'s, else `RB_ATTENTION_PATH` (`portable`,
/// `gemm`, `auto`; read once), else `Auto`.
pub fn attention_path() -> AttentionPath {
    static ENV: std::sync::LazyLock<AttentionPath> =
        std::sync::LazyLock::new(|| match std::env::var("RB_ATTENTION_PATH").as_deref() {
            Ok("portable") | Ok("fused") => AttentionPath::Portable,
            Ok("gemm") => AttentionPath::Gemm,
            _ => AttentionPath::Auto,
        });
    match FORCED_PATH.load(std::sync::atomic::Ordering::Relaxed) {
        0 => AttentionPath::Auto,
        1 => AttentionPath::Portable,
        2 => AttentionPath::Gemm,
        _ => *ENV,
    }
}
