//! Transformer building blocks on GPUs (kernels in kernels/loss.hip): rotary embedding
//! (rope; its backward is the inverse rotation) and weighted_sum, forward and backward.
//! Semantics are those of `crate::ops::nn`.

use super::GpuDevice;
use super::kernels::*;
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{DevPtr, RawStream, TransformerOps};
use crate::ops::nn::{RopeDesc, WeightedSumDesc};

impl TransformerOps for GpuDevice {
    fn rope(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RopeDesc,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        let sfx = float_suffix("rope", dtype)?;
        let vecs = d.outer * d.seq * d.inner;
        let total = vecs * (d.dim / 2);
        let (vecs, seq, inner, dim) = (vecs as u64, d.seq as u64, d.inner as u64, d.dim as u64);
        let (log_base, off, inv) = (d.base.ln(), d.position_offset, d.inverse as i32);
        self.launch_elems(
            stream,
            ROPE.src,
            &ROPE.suffixed(sfx),
            total,
            &mut kargs![x.0, y.0, vecs, seq, inner, dim, log_base, off, inv],
        )
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
        let sfx = float_suffix("weighted_sum", dtype)?;
        let (outer, n, dd) = (d.outer as u64, d.n as u64, d.d as u64);
        self.launch_elems(
            stream,
            WSUM.src,
            &WSUM.suffixed(sfx),
            d.outer * d.d,
            &mut kargs![x.0, w.0, y.0, outer, n, dd],
        )
    }

    /// weighted_sum backward; `dx`/`dw` optional (NULL).
    #[allow(clippy::too_many_arguments)]
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
        let sfx = float_suffix("weighted_sum_backward", dtype)?;
        let (outer, n, dd) = (d.outer as u64, d.n as u64, d.d as u64);
        if !dx.is_null() {
            self.launch_elems(
                stream,
                WSUM_DX.src,
                &WSUM_DX.suffixed(sfx),
                d.outer * d.n * d.d,
                &mut kargs![w.0, dy.0, dx.0, outer, n, dd],
            )?;
        }
        if !dw.is_null() {
            self.launch_elems(
                stream,
                WSUM_DW.src,
                &WSUM_DW.suffixed(sfx),
                d.outer * d.n * self.warp_size() as usize,
                &mut kargs![x.0, dy.0, dw.0, outer, n, dd],
            )?;
        }
        Ok(())
    }
}
