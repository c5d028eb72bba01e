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
