//! Transformer building blocks on GPUs (kernels in kernels/loss.hip): rotary embedding
//! (rope, rope_cached; the backward is the inverse rotation) and weighted_sum, forward and backward.
//! Semantics are those of `crate::ops::nn`.

use super::kernels::*;
use super::{GpuDevice, Scratch};
use crate::base::dtype::DType;
use crate::device::transformer::{ROPE_STORE_MAX, RopeStorePart};
use crate::device::{DevPtr, Device, RawStream, TransformerOps};
use crate::ops::nn::{RopeCachedDesc, RopeDesc, WeightedSumDesc};
use crate::{Error, Result};

/// The rope kernels' suffix: f32/f16/bf16, and f64 (`rb_rope_f64` / `rb_rope_cached_f64`,
/// computed in double).
fn rope_suffix(op: &str, dtype: DType) -> Result<&'static str> {
    if dtype == DType::F64 {
        return Ok("f64");
    }
    float_suffix(op, dtype)
}

impl TransformerOps for GpuDevice {
    fn rope_store_now(&self, stream: RawStream) -> bool {
        self.graphs.is_capturing(stream)
    }

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
        let op = "rope_store";
        if parts.is_empty() || parts.len() > ROPE_STORE_MAX {
            return Err(Error::internal(format!(
                "{op}: {} tensors (1 to {ROPE_STORE_MAX})",
                parts.len()
            )));
        }
        let is64 = match pos_dtype {
            DType::I32 => 0i32,
            DType::I64 => 1,
            other => {
                return Err(Error::dtype(format!(
                    "{op}: position dtype {other} is not i32 or i64"
                )));
            }
        };
        let kernel = ROPE_STORE.suffixed(float_suffix(op, dtype)?);
        let (dim, rot) = (d.dim.max(1), d.rot);
        let per = rot / 2 + (dim - rot);
        let units: usize = parts.iter().map(|p| p.n / dim * per).sum();
        let part = |i: usize| {
            parts.get(i).copied().unwrap_or(RopeStorePart {
                x: DevPtr::NULL,
                n: 0,
                rotate: false,
                y: DevPtr::NULL,
                cache: None,
            })
        };
        let args = |i: usize| {
            let p = part(i);
            let (t, inner) = p.cache.unwrap_or((0, 1));
            (
                p.x.0,
                p.y.0,
                p.n as u64,
                p.rotate as i32,
                inner as u64,
                t as u64,
            )
        };
        let (x0, y0, n0, r0, i0, t0) = args(0);
        let (x1, y1, n1, r1, i1, t1) = args(1);
        let (x2, y2, n2, r2, i2, t2) = args(2);
        let (dim, rot, max_pos, il) = (
            dim as u64,
            rot as u64,
            d.max_pos as u64,
            d.interleaved as i32,
        );
        self.launch_elems(
            stream,
            ROPE_STORE.src,
            &kernel,
            units,
            &mut kargs![
                cos.0,
                sin.0,
                positions.0,
                is64,
                dim,
                rot,
                max_pos,
                il,
                x0,
                y0,
                n0,
                r0,
                i0,
                t0,
                x1,
                y1,
                n1,
                r1,
                i1,
                t1,
                x2,
                y2,
                n2,
                r2,
                i2,
                t2
            ],
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
        let sfx = rope_suffix("rope", dtype)?;
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

    /// rope_cached. With position ids, a status word (-1, or the index of an id outside the
    /// caches) is read back after the kernel (synchronizing the stream).
    #[allow(clippy::too_many_arguments)]
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
        let op = if d.inverse {
            "rope_cached_backward"
        } else {
            "rope_cached"
        };
        let sfx = rope_suffix(op, dtype)?;
        let is64 = match pos_dtype {
            DType::I32 => 0i32,
            DType::I64 => 1,
            other if d.has_positions => {
                return Err(Error::dtype(format!(
                    "{op}: position_ids dtype {other} is not i32 or i64"
                )));
            }
            _ => 1,
        };
        let vecs = d.outer * d.seq * d.inner;
        let total = vecs * (d.rot / 2 + d.dim - d.rot);
        // The first bad position, read back after the launch; none inside a device-graph
        // capture (nothing can be read back there: no memset node either; a bad position's
        // output is NaN as always, and the executor ran every node once, checked, before
        // capturing).
        let status = if d.has_positions && !self.graphs.is_capturing(stream) {
            let st = Scratch::new(self, 256, stream)?;
            self.memset(st.ptr, 0xff, 8, stream)?;
            Some(st)
        } else {
            None
        };
        let bad = status.as_ref().map_or(DevPtr::NULL, |s| s.ptr).0;
        let pos = if d.has_positions {
            positions.0
        } else {
            DevPtr::NULL.0
        };
        let (vecs, seq, inner, dim) = (vecs as u64, d.seq as u64, d.inner as u64, d.dim as u64);
        let (rot, max_pos, group) = (d.rot as u64, d.max_pos as u64, d.pos_group as u64);
        let (il, inv) = (d.interleaved as i32, d.inverse as i32);
        self.launch_elems(
            stream,
            ROPE_CACHED.src,
            &ROPE_CACHED.suffixed(sfx),
            total,
            &mut kargs![
                x.0, cos.0, sin.0, pos, is64, y.0, vecs, seq, inner, dim, rot, max_pos, group, il,
                inv, bad
            ],
        )?;
        let Some(st) = status else { return Ok(()) };
        let Some(at) = self.read_status(stream, st.ptr)? else {
            return Ok(()); // capturing a device graph
        };
        if at < 0 {
            return Ok(());
        }
        let size = pos_dtype.size();
        let mut v = [0u8; 8];
        self.copy_d2h(positions.offset(at as usize * size), &mut v[..size], stream)?;
        let id = if size == 4 {
            i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64
        } else {
            i64::from_le_bytes(v)
        };
        Err(Error::invalid(format!(
            "{op}: position id {id} at index {at} is outside the cos/sin caches [0, {})",
            d.max_pos
        )))
    }
}
