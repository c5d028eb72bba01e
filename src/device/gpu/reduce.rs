//! Reductions on a GPU (kernels/reduce.hip): sum, mean, max, min, prod over the middle axis
//! of `[outer, r, inner]`, argmax, and the backwards.
//!
//! f32, f16, bf16 and f64 (stored unrounded). Every op accumulates in f64 (the contract's
//! "sums accumulate in f64"; on the GPUs we target the f64 adds cost nothing next to the
//! memory traffic), so results match the CPU device to the rounding of the final f64 ->
//! dtype conversion, in any summation order.
//! Kernel choice:
//! * `inner == 1`, rows of at most [`WARP_ROW`] elements: a warp per row;
//! * `inner == 1`, longer rows: a block per row with 16-byte loads; when there are fewer rows
//!   than it takes to fill the GPU, each row is split into chunks over more blocks, whose f64
//!   partials a second kernel combines; the full reduction (`outer == inner == 1`) does it
//!   in one launch: the last block to finish (a per-stream ticket) combines the partials;
//! * `inner > 1`: blocks of 32 columns x 8 row-lanes (coalesced reads along `inner`), the
//!   `r` axis split over more blocks (and combined the same way) when there are few outputs.
//!
//! Scratch (the partials, the backward's per-group statistics) comes from the device's
//! caching allocator, ordered on the op's stream.

use super::kernels::*;
use super::{GpuDevice, Scratch};
use crate::base::dtype::DType;
use crate::device::reduce::ReduceOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::reduce::{ReduceDesc, ReduceOp};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Rows up to this length are reduced by one warp each.
const WARP_ROW: usize = 512;
/// Threads per block of every reduction kernel (a multiple of 32 and 64).
const BLOCK: u32 = 256;
/// The largest grid extent used in y and z (the kernels loop over the rest).
const MAX_GRID_YZ: usize = 65535;

fn op_code(op: ReduceOp) -> i32 {
    match op {
        ReduceOp::Sum => 0,
        ReduceOp::Mean => 1,
        ReduceOp::Max => 2,
        ReduceOp::Min => 3,
        ReduceOp::Prod => 4,
    }
}

/// The tickets of `rb_reduce_full_*`: one zeroed word per (device, stream), allocated on
/// first use straight from the vendor (outside the caching allocator and its statistics) and
/// kept for the life of the process. The kernel leaves its ticket at 0 again, and kernels on
/// one stream run in order, so a ticket is never shared by two running kernels.
static TICKETS: LazyLock<Mutex<HashMap<(usize, u64), u64>>> = LazyLock::new(Default::default);

impl GpuDevice {
    /// The zeroed ticket word of `stream` on this device.
    fn ticket(&self, stream: RawStream) -> Result<DevPtr> {
        let key = (self as *const GpuDevice as usize, stream.0);
        let mut t = TICKETS.lock();
        if let Some(&p) = t.get(&key) {
            return Ok(DevPtr(p));
        }
        self.bind()?;
        let p = self.vendor.mem_alloc(256)?;
        self.vendor.memset_d8(p, 0, 256, stream)?;
        t.insert(key, p.0);
        Ok(p)
    }

    /// Blocks for a kernel that gives each group one warp (grid-stride over groups).
    fn warp_blocks(&self, groups: usize) -> usize {
        let per_block = (BLOCK / self.facts.warp_size.max(1)).max(1) as usize;
        groups.div_ceil(per_block).clamp(1, 1 << 20)
    }

    /// Blocks that fill the device several times over.
    fn fill_blocks(&self) -> usize {
        self.facts.compute_units.max(1) as usize * 8
    }
}

/// The kernel suffix of a floating dtype: f32, f16, bf16 and f64 (f64 reduces and stores in
/// double).
fn red_suffix(op: &str, dtype: DType) -> Result<&'static str> {
    if dtype == DType::F64 {
        return Ok("f64");
    }
    float_suffix(op, dtype)
}

impl ReduceOps for GpuDevice {
    fn reduce(
        &self,
        stream: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        let s = red_suffix(op.name(), dtype)?;
        let ReduceDesc { outer, r, inner } = *desc;
        if outer * inner == 0 {
            return Ok(());
        }
        let code = op_code(op);
        let (o64, r64, i64_) = (outer as u64, r as u64, inner as u64);
        let target = self.fill_blocks();
        if inner == 1 && r > 0 && r <= WARP_ROW {
            return self.launch_grid(
                stream,
                REDUCE_ROWS_WARP.src,
                &REDUCE_ROWS_WARP.suffixed(s),
                [self.warp_blocks(outer), 1, 1],
                [BLOCK, 1, 1],
                &mut kargs![code, x.0, y.0, o64, r64],
            );
        }
        // Split the reduced axis over more blocks when the outputs alone do not fill the GPU.
        let (base_blocks, min_chunk, align) = if inner == 1 {
            (outer, 8192usize, 1024usize)
        } else {
            (inner.div_ceil(32) * outer, 256, 16)
        };
        let mut splits = if base_blocks >= target || r < 2 * min_chunk {
            1
        } else {
            target.div_ceil(base_blocks).min(r / min_chunk).max(1)
        };
        let mut chunk = r.div_ceil(splits).max(1);
        if splits > 1 {
            chunk = chunk.div_ceil(align) * align;
            splits = r.div_ceil(chunk);
        }
        if inner == 1 && outer == 1 && splits > 1 {
            // One wave of blocks (4 per compute unit fit at up to 64 registers a thread),
            // each with a long chunk: no tail of half-empty waves.
            let blocks = (self.facts.compute_units.max(1) as usize * 4).min(r / min_chunk);
            let chunk = r.div_ceil(blocks.max(1)).div_ceil(align) * align;
            let (blocks, ch64) = (r.div_ceil(chunk), chunk as u64);
            let t = self.ticket(stream)?;
            let part = Scratch::new(self, blocks * 8, stream)?;
            let pp = part.ptr.0;
            return self.launch_grid(
                stream,
                REDUCE_FULL.src,
                &REDUCE_FULL.suffixed(s),
                [blocks, 1, 1],
                [BLOCK, 1, 1],
                &mut kargs![code, x.0, y.0, pp, t.0, r64, ch64],
            );
        }
        let part = if splits > 1 {
            Some(Scratch::new(self, splits * outer * inner * 8, stream)?)
        } else {
            None
        };
        let pp = part.as_ref().map_or(0u64, |p| p.ptr.0);
        let (sp64, ch64) = (splits as u64, chunk as u64);
        if inner == 1 {
            self.launch_grid(
                stream,
                REDUCE_ROWS.src,
                &REDUCE_ROWS.suffixed(s),
                [splits, outer.min(MAX_GRID_YZ), 1],
                [BLOCK, 1, 1],
                &mut kargs![code, x.0, y.0, pp, o64, r64, sp64, ch64],
            )?;
        } else {
            self.launch_grid(
                stream,
                REDUCE_COLS.src,
                &REDUCE_COLS.suffixed(s),
                [inner.div_ceil(32), outer.min(MAX_GRID_YZ), splits],
                [BLOCK, 1, 1],
                &mut kargs![code, x.0, y.0, pp, o64, r64, i64_, sp64, ch64],
            )?;
        }
        if splits > 1 {
            let ng = (outer * inner) as u64;
            self.launch_grid(
                stream,
                REDUCE_COMBINE.src,
                &REDUCE_COMBINE.suffixed(s),
                [self.warp_blocks(outer * inner), 1, 1],
                [BLOCK, 1, 1],
                &mut kargs![code, pp, y.0, ng, sp64, r64],
            )?;
        }
        Ok(())
    }

    fn argmax(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        let s = red_suffix("argmax", dtype)?;
        let ReduceDesc { outer, r, inner } = *desc;
        if outer * inner == 0 {
            return Ok(());
        }
        if r == 0 {
            return Err(Error::invalid(
                "argmax: cannot reduce over a dimension of extent 0",
            ));
        }
        let (o64, r64, i64_) = (outer as u64, r as u64, inner as u64);
        self.launch_grid(
            stream,
            ARGMAX.src,
            &ARGMAX.suffixed(s),
            [self.warp_blocks(outer * inner), 1, 1],
            [BLOCK, 1, 1],
            &mut kargs![x.0, y.0, o64, r64, i64_],
        )
    }

    fn reduce_backward(
        &self,
        stream: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        desc: &ReduceDesc,
    ) -> Result<()> {
        let s = red_suffix(op.name(), dtype)?;
        let ReduceDesc { outer, r, inner } = *desc;
        let n = outer * r * inner;
        if n == 0 {
            return Ok(());
        }
        let code = op_code(op);
        let (o64, r64, i64_) = (outer as u64, r as u64, inner as u64);
        let stats = if matches!(op, ReduceOp::Sum | ReduceOp::Mean) {
            None
        } else {
            let st = Scratch::new(self, outer * inner * 16, stream)?;
            self.launch_grid(
                stream,
                REDUCE_STATS.src,
                &REDUCE_STATS.suffixed(s),
                [self.warp_blocks(outer * inner), 1, 1],
                [BLOCK, 1, 1],
                &mut kargs![code, x.0, st.ptr.0, o64, r64, i64_],
            )?;
            Some(st)
        };
        let sp = stats.as_ref().map_or(0u64, |p| p.ptr.0);
        self.launch_elems(
            stream,
            REDUCE_BACKWARD.src,
            &REDUCE_BACKWARD.suffixed(s),
            n,
            &mut kargs![code, x.0, dy.0, dx.0, sp, o64, r64, i64_],
        )
    }

    fn reduce_int(
        &self,
        stream: RawStream,
        op: ReduceOp,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        d: &ReduceDesc,
    ) -> Result<()> {
        let prod: i32 = match op {
            ReduceOp::Sum => 0,
            ReduceOp::Prod => 1,
            other => {
                return Err(Error::invalid(format!(
                    "reduce_int: {} is not sum or prod",
                    other.name()
                )));
            }
        };
        if !dtype.is_int() {
            return Err(Error::dtype(format!(
                "reduce_int: dtype {dtype} is not i32 or i64"
            )));
        }
        let kernel = REDUCE_INT.dtype("reduce_int", dtype)?;
        let groups = d.outer * d.inner;
        if groups == 0 {
            return Ok(());
        }
        let (outer, r, inner) = (d.outer as u64, d.r as u64, d.inner as u64);
        self.launch_1d(
            stream,
            REDUCE_INT.src,
            &kernel,
            groups.min(1 << 20),
            BLOCK,
            &mut kargs![prod, x.0, y.0, outer, r, inner],
        )
    }
}
