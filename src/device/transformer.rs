//! Transformer building blocks on a device: rotary embedding (rope) and weighted_sum, forward
//! and backward. Layouts and semantics are those of `crate::ops::nn` (validated before the call). Optional pointers are `DevPtr::NULL`
//! when absent.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::nn::{RopeCachedDesc, RopeDesc, WeightedSumDesc};
use crate::{Error, Result};

/// The most tensors one [`TransformerOps::rope_store`] takes.
pub const ROPE_STORE_MAX: usize = 3;

/// One tensor of a [`TransformerOps::rope_store`]: `n` elements of `x` (contiguous vectors of
/// the desc's `dim`), rotated (`rotate`) or copied, then written to `y` (`n` elements), or
/// with `cache: Some((t, inner))` into slot `p` of the cache at `y` along its dim of `t`
/// entries: element `e` goes to `(e / inner) * t * inner + p * inner + e % inner` (an
/// index_copy of one index).
#[derive(Clone, Copy, Debug)]
pub struct RopeStorePart {
    pub x: DevPtr,
    pub n: usize,
    pub rotate: bool,
    pub y: DevPtr,
    pub cache: Option<(usize, usize)>,
}

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait TransformerOps {
    /// Whether [`TransformerOps::rope_store`] runs on `stream` now (GPUs: while a device
    /// graph is being captured, where the ops it replaces report nothing either; elsewhere
    /// the caller runs the ops, which check the position).
    fn rope_store_now(&self, stream: RawStream) -> bool {
        false
    }

    /// A decode step's new-token tensors in one pass ([`RopeStorePart`]): rope_cached with
    /// the one position `p = positions[0]` (`d`: the rotated parts' desc, its `dim`, `rot`,
    /// `max_pos` and `interleaved`) and index_copy into caches at `p`. A `p` outside
    /// `[0, max_pos)` gives a rotated part's pairs NaN; outside a cache's `[0, t)` the store is
    /// skipped (what the two ops do inside a device graph).
    fn rope_store(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RopeCachedDesc,
        cos: DevPtr,
        sin: DevPtr,
        positions: DevPtr,
        pos_dtype: DType,
        parts: &[RopeStorePart],
    ) -> Result<()> {
        Err(Error::unsupported(
            "rope_store is not implemented on this device",
        ))
    }

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
