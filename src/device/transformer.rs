//! Transformer building blocks on a device: rotary embedding (rope) and weighted_sum, forward
//! and backward. Layouts and semantics are those of `crate::ops::nn` (validated before the call). Optional pointers are `DevPtr::NULL`
//! when absent.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::nn::{RopeCachedDesc, RopeDesc, WeightedSumDesc};
use crate::{Error, Result};

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait TransformerOps {
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

    /// Rotary embedding from cos/sin caches (`[max_pos, rot/2]`, x's dtype); `positions` are
    /// `d.positions()` ids of `pos_dtype` (i32/i64), or NULL for `0..seq`. Every id must be in
    /// `[0, max_pos)`, else INVALID_ARGUMENT. `d.inverse` gives the backward.
    fn rope_cached(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RopeCachedDesc,
        x: DevPtr,
        cos: DevPtr,
        sin: DevPtr,
        positions: DevPtr,
        pos_dtype: DType,
        y: DevPtr,
    ) -> Result<()> {
        Err(Error::unsupported(
            "rope_cached is not implemented on this device",
        ))
    }
}
