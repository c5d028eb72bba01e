//! Normalization on GPUs (kernels/norm.hip): layer_norm, rms_norm, group_norm, batch_norm,
//! forward and backward, in f32, f16 and bf16 (f32 math).
//!
//! Rows of the last dim (layer_norm, rms_norm, and softmax with `inner == 1` in
//! [`super::softmax`], which shares this file's row plans) that fit in registers go to the
//! `*_rows_*` kernels: one read and one write per element. Short rows get one warp each
//! (several rows per block), longer ones one block each; each thread holds `n` chunks of `v`
//! elements (`v = 4` when the row length and every pointer allow vector loads). Longer rows,
//! group_norm and batch_norm use loop kernels (one block per row/set/channel, a few passes
//! over global memory); channels-last batch_norm (`BatchNormDesc::channels_last`) its own
//! partial kernels (32 channels by row groups a block) and elementwise passes. Column sums (dw, db) of the row norms come from per-warp/per-block
//! partials in a stream-ordered f32 workspace, summed by `rb_colsum_parts_*`.

use super::kernels::{self, *};
use super::{GpuDevice, jit};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{DevPtr, NormOps, RawStream};
use crate::ops::nn::{BatchNormDesc, GroupNormDesc, RowNormDesc};
use std::ffi::c_void;

/// Threads of a loop kernel's block.
pub(super) const LOOP_THREADS: u32 = 512;

/// Threads of a batch_norm slice block.
const BN_THREADS: u32 = 256;

/// How a row-wise kernel covers rows of `cols` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RowPlan {
    /// Elements per chunk (1 or 4).
    v: u32,
    /// Chunks per thread.
    n: u32,
    /// One warp per row (true) or one block per row.
    warp: bool,
    /// Threads per block.
    pub(super) block: u32,
}

impl RowPlan {
    /// The register plan for rows of `cols`, or None when a row does not fit (loop kernels).
    fn new(cols: usize, vec_ok: bool, warp_size: u32, max_threads: u32) -> Option<RowPlan> {
        let v = if vec_ok && cols.is_multiple_of(4) {
            4
        } else {
            1
        };
        let chunks = cols / v as usize;
        let w = warp_size as usize;
        if let Some(&n) = ROW_WARP_NS.iter().find(|&&n| chunks <= w * n as usize) {
            // Short rows: a warp each, 256 threads (or one warp if the warp is wider) a block.
            let block = (256 / warp_size).max(1) * warp_size;
            return Some(RowPlan {
                v,
                n,
                warp: true,
                block: block.min(max_threads / warp_size * warp_size),
            });
        }
        let max_block = (max_threads.min(1024) / warp_size * warp_size) as usize;
        let n = ROW_BLOCK_NS
            .iter()
            .copied()
            .find(|&n| chunks.div_ceil(n as usize) <= 256)
            .unwrap_or(8);
        let threads = chunks.div_ceil(n as usize).div_ceil(w) * w;
        (threads <= max_block).then_some(RowPlan {
            v,
            n,
            warp: false,
            block: threads as u32,
        })
    }

    /// N (chunks per thread) of a plan of block rows with 4-element chunks, else None (the
    /// plans `rb_gemv_norm_tail` reproduces).
    pub(super) fn block_v4_chunks(&self) -> Option<u32> {
        (!self.warp && self.v == 4).then_some(self.n)
    }

    pub(super) fn rows_per_block(&self, warp_size: u32) -> u32 {
        if self.warp { self.block / warp_size } else { 1 }
    }

    /// The kernel of the register-row family `k` for this plan and the dtype `suffix`:
    /// `<base>_<dtype>_v<v>_n<n>_<w|b>`.
    pub(super) fn kernel(&self, k: &Kernel, suffix: &str) -> String {
        k.suffixed(suffix) + &kernels::row_suffix(self.v, self.n, self.warp)
    }
}

/// True when every non-null pointer is aligned for 4-element vectors of `dtype`.
pub(super) fn vec_aligned(dtype: DType, ptrs: &[DevPtr]) -> bool {
    let a = 4 * dtype.size() as u64;
    ptrs.iter().all(|p| p.is_null() || p.0 % a == 0)
}

impl GpuDevice {
    pub(super) fn norm_launch(
        &self,
        stream: RawStream,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        args: &mut [*mut c_void],
    ) -> Result<()> {
        self.launch_grid(
            stream,
            &jit::NORM,
            kernel,
            grid.map(|g| g as usize),
            block,
            args,
        )
    }

    /// The register-row plan for rows of `cols` (None: rows too long for registers, or more
    /// columns than the kernels' i32 index holds; the loop kernels run instead).
    pub(super) fn row_plan(&self, cols: usize, vec_ok: bool) -> Option<RowPlan> {
        i32::try_from(cols).ok()?;
        RowPlan::new(cols, vec_ok, self.warp_size(), self.max_threads_per_block())
    }

    /// Blocks for `units` independent work units of `per_block` each, at most what fits.
    pub(super) fn grid_for(units: usize, per_block: u32) -> u32 {
        units.div_ceil(per_block as usize).clamp(1, 1 << 30) as u32
    }

    /// Blocks that are resident at once for blocks of `threads` (an upper bound).
    fn resident_blocks(&self, threads: u32) -> usize {
        let per_sm = (2048 / threads.max(1)).max(1) as usize;
        (self.facts.compute_units.max(1) as usize) * per_sm
    }

    /// Slices per batch_norm channel: enough blocks to fill the device, slices of at least
    /// 1024 elements.
    fn bn_splits(&self, c: usize, len: usize) -> usize {
        self.resident_blocks(BN_THREADS)
            .div_ceil(c)
            .clamp(1, (len / 1024).max(1))
    }

    /// Threads of a block that walks planes of `items` items: a warp multiple, at most 256.
    fn plane_threads(&self, items: usize) -> u32 {
        let w = self.warp_size() as usize;
        (items.div_ceil(w) * w).clamp(w, 256.max(w)) as u32
    }

    /// Channels-last batch_norm's partial-kernel shape for `rows` rows of `c` channels:
    /// (threads per block: 32 channels by up to 32 row groups, row slices per channel
    /// chunk). Enough blocks to fill the device, at most 128 slices (the finalize kernels
    /// combine a channel's slices in one thread), at least a row per group in each slice.
    fn bn_nhwc_plan(&self, rows: usize, c: usize) -> (u32, usize) {
        let max_groups = (self.max_threads_per_block() / 32).clamp(1, 32) as usize;
        let groups = rows.clamp(1, max_groups);
        let threads = 32 * groups as u32;
        let chunks = c.div_ceil(32).max(1);
        let splits = self
            .resident_blocks(threads)
            .div_ceil(chunks)
            .clamp(1, 128)
            .min((rows / groups).max(1));
        (threads, splits)
    }

    /// batch_norm on channels-last tensors (`d.channels_last`): x, y `[n * hw, c]`.
    #[allow(clippy::too_many_arguments)]
    fn batch_norm_nhwc(
        &self,
        stream: RawStream,
        suffix: &str,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        y: DevPtr,
        save_mean: DevPtr,
        save_invstd: DevPtr,
    ) -> Result<()> {
        let rows = d.n * d.hw;
        let (threads, splits) = self.bn_nhwc_plan(rows, d.c);
        let chunks = d.c.div_ceil(32);
        let (r, c, sp, tr, mo, eps) = (
            rows as u64,
            d.c as u64,
            splits as u64,
            d.training as i32,
            d.momentum as f32,
            d.eps as f32,
        );
        let total = rows * d.c;
        self.with_workspace(stream, splits * d.c * 3 + 2 * d.c, |ws| {
            let (part, stats) = (ws, ws.offset(splits * d.c * 3 * 4));
            if d.training {
                self.norm_launch(
                    stream,
                    &BN_NHWC_PARTIAL.suffixed(suffix),
                    [Self::grid_for(chunks * splits, 1), 1, 1],
                    [threads, 1, 1],
                    &mut kargs![x.0, part.0, r, c, sp],
                )?;
            }
            self.norm_launch(
                stream,
                &BN_FINALIZE.suffixed(suffix),
                [Self::grid_for(d.c, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![
                    part.0,
                    sp,
                    c,
                    running_mean.0,
                    running_var.0,
                    stats.0,
                    save_mean.0,
                    save_invstd.0,
                    tr,
                    mo,
                    eps
                ],
            )?;
            let v = if d.c.is_multiple_of(4) && vec_aligned(dtype, &[x, y]) {
                4
            } else {
                1
            };
            let n = total as u64;
            self.norm_launch(
                stream,
                &(BN_NHWC_APPLY.suffixed(suffix) + if v == 4 { "_v4" } else { "_v1" }),
                [Self::grid_for(total / v, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![x.0, w.0, b.0, stats.0, y.0, n, c],
            )
        })
    }

    /// batch_norm backward on channels-last tensors (`d.channels_last`).
    #[allow(clippy::too_many_arguments)]
    fn batch_norm_backward_nhwc(
        &self,
        stream: RawStream,
        suffix: &str,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        let rows = d.n * d.hw;
        let (threads, splits) = self.bn_nhwc_plan(rows, d.c);
        let chunks = d.c.div_ceil(32);
        let (r, c, sp, tr, eps) = (
            rows as u64,
            d.c as u64,
            splits as u64,
            d.training as i32,
            d.eps as f32,
        );
        let (zero, null, inv_len) = (0.0f32, 0u64, 1.0 / rows as f32);
        let total = rows * d.c;
        let floats = splits * d.c * 5 + 4 * d.c;
        self.with_workspace(stream, floats, |ws| {
            let part = ws;
            let part2 = ws.offset(splits * d.c * 3 * 4);
            let stats = ws.offset(splits * d.c * 5 * 4);
            let sums = ws.offset((splits * d.c * 5 + 2 * d.c) * 4);
            let grid = [Self::grid_for(chunks * splits, 1), 1, 1];
            if d.training {
                self.norm_launch(
                    stream,
                    &BN_NHWC_PARTIAL.suffixed(suffix),
                    grid,
                    [threads, 1, 1],
                    &mut kargs![x.0, part.0, r, c, sp],
                )?;
            }
            // Batch statistics without running-stat updates (training), or the running stats.
            let (rm, rv) = if d.training {
                (null, null)
            } else {
                (running_mean.0, running_var.0)
            };
            self.norm_launch(
                stream,
                &BN_FINALIZE.suffixed(suffix),
                [Self::grid_for(d.c, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![part.0, sp, c, rm, rv, stats.0, null, null, tr, zero, eps],
            )?;
            self.norm_launch(
                stream,
                &BN_NHWC_BWD_PARTIAL.suffixed(suffix),
                grid,
                [threads, 1, 1],
                &mut kargs![x.0, dy.0, stats.0, part2.0, r, c, sp],
            )?;
            self.norm_launch(
                stream,
                &BN_BWD_FINALIZE.suffixed(suffix),
                [Self::grid_for(d.c, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![part2.0, sp, c, sums.0, dw.0, db.0],
            )?;
            if dx.is_null() {
                return Ok(());
            }
            let v = if d.c.is_multiple_of(4) && vec_aligned(dtype, &[x, dy, dx]) {
                4
            } else {
                1
            };
            let n = total as u64;
            self.norm_launch(
                stream,
                &(BN_NHWC_BWD_APPLY.suffixed(suffix) + if v == 4 { "_v4" } else { "_v1" }),
                [Self::grid_for(total / v, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![x.0, w.0, dy.0, stats.0, sums.0, dx.0, n, c, inv_len, tr],
            )
        })
    }

    /// An f32 workspace on `stream`, freed (stream-ordered) after `f`.
    fn with_workspace(
        &self,
        stream: RawStream,
        floats: usize,
        f: impl FnOnce(DevPtr) -> Result<()>,
    ) -> Result<()> {
        let ws = super::Scratch::new(self, floats * 4, stream)?;
        f(ws.ptr)
    }

    /// `dw`, `db` (either optional) from `part[slots][2][cols]`.
    #[allow(clippy::too_many_arguments)]
    fn colsum_parts(
        &self,
        stream: RawStream,
        suffix: &str,
        part: DevPtr,
        slots: usize,
        cols: usize,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        if dw.is_null() && db.is_null() {
            return Ok(());
        }
        let (s, c) = (slots as u64, cols as u64);
        self.norm_launch(
            stream,
            &COLSUM_PARTS.suffixed(suffix),
            [cols.div_ceil(32) as u32, 1, 1],
            [32, 8, 1],
            &mut kargs![part.0, s, c, dw.0, db.0],
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn row_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        op: &str,
        d: &RowNormDesc,
        rms: bool,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        y: DevPtr,
        mean: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        let suffix = float_suffix(op, dtype)?;
        if d.rows == 0 || d.cols == 0 {
            return Ok(());
        }
        let (eps, rms_i) = (d.eps as f32, rms as i32);
        let rows = d.rows as u64;
        let vec_ok = vec_aligned(dtype, &[x, w, b, y]);
        match self.row_plan(d.cols, vec_ok) {
            Some(p) => {
                let cols = d.cols as i32;
                let grid = Self::grid_for(d.rows, p.rows_per_block(self.warp_size()));
                // A few rows (at most one block per compute unit) are latency-bound: the
                // weight and bias load early there; many rows keep their occupancy.
                let few = grid as usize <= self.facts.compute_units.max(1) as usize;
                let k = if few {
                    &ROWNORM_PRE_ROWS
                } else {
                    &ROWNORM_ROWS
                };
                self.norm_launch(
                    stream,
                    &p.kernel(k, suffix),
                    [grid, 1, 1],
                    [p.block, 1, 1],
                    &mut kargs![x.0, w.0, b.0, y.0, mean.0, rstd.0, rows, cols, eps, rms_i],
                )
            }
            None => {
                let (len, one, cols) = (d.cols as u64, 1u64, d.cols as u64);
                self.norm_launch(
                    stream,
                    &SETNORM.suffixed(suffix),
                    [Self::grid_for(d.rows, 1), 1, 1],
                    [LOOP_THREADS, 1, 1],
                    &mut kargs![
                        x.0, w.0, b.0, y.0, mean.0, rstd.0, rows, len, one, cols, one, eps, rms_i
                    ],
                )
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn row_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        op: &str,
        d: &RowNormDesc,
        rms: bool,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        let suffix = float_suffix(op, dtype)?;
        if d.rows == 0 || d.cols == 0 {
            return Ok(());
        }
        let (eps, rms_i) = (d.eps as f32, rms as i32);
        let (rows, cols) = (d.rows as u64, d.cols);
        let want_parts = !(dw.is_null() && db.is_null());
        let vec_ok = vec_aligned(dtype, &[x, w, dy, dx]);
        let plan = self.row_plan(cols, vec_ok);
        if let Some(p) = plan {
            let per_block = p.rows_per_block(self.warp_size());
            // Few enough slots that the partials stay small next to the rows themselves.
            let grid =
                Self::grid_for(d.rows, per_block).min(self.resident_blocks(p.block).max(1) as u32);
            let slots = grid as usize * per_block as usize;
            let c32 = cols as i32;
            let kernel = p.kernel(&ROWNORM_BWD_ROWS, suffix);
            let run = |part: DevPtr| {
                self.norm_launch(
                    stream,
                    &kernel,
                    [grid, 1, 1],
                    [p.block, 1, 1],
                    &mut kargs![x.0, w.0, dy.0, dx.0, part.0, rows, c32, eps, rms_i],
                )?;
                if want_parts {
                    self.colsum_parts(stream, suffix, part, slots, cols, dw, db)?;
                }
                Ok(())
            };
            if want_parts {
                return self.with_workspace(stream, slots * 2 * cols, run);
            }
            return run(DevPtr::NULL);
        }
        // Long rows: dx and the row statistics per row, then column partials over row chunks.
        let chunks = (self.resident_blocks(256) * 256)
            .div_ceil(cols)
            .clamp(1, d.rows.min(65_535));
        let rows_per_chunk = d.rows.div_ceil(chunks) as u64;
        let chunks = d.rows.div_ceil(rows_per_chunk as usize);
        let c64 = cols as u64;
        self.with_workspace(stream, 2 * d.rows + chunks * 2 * cols, |ws| {
            let stats = ws;
            let part = ws.offset(2 * d.rows * 4);
            self.norm_launch(
                stream,
                &ROWNORM_BWD_LOOP.suffixed(suffix),
                [Self::grid_for(d.rows, 1), 1, 1],
                [LOOP_THREADS, 1, 1],
                &mut kargs![x.0, w.0, dy.0, dx.0, stats.0, rows, c64, eps, rms_i],
            )?;
            if !want_parts {
                return Ok(());
            }
            self.norm_launch(
                stream,
                &ROWNORM_COLS.suffixed(suffix),
                [cols.div_ceil(256) as u32, chunks as u32, 1],
                [256, 1, 1],
                &mut kargs![x.0, dy.0, stats.0, part.0, rows, c64, rows_per_chunk],
            )?;
            self.colsum_parts(stream, suffix, part, chunks, cols, dw, db)
        })
    }
}

impl NormOps for GpuDevice {
    fn layer_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        y: DevPtr,
        mean: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        self.row_norm(
            stream,
            dtype,
            "layer_norm",
            d,
            false,
            x,
            w,
            b,
            y,
            mean,
            rstd,
        )
    }

    fn layer_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        self.row_norm_backward(
            stream,
            dtype,
            "layer_norm_backward",
            d,
            false,
            x,
            w,
            dy,
            dx,
            dw,
            db,
        )
    }

    fn rms_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        y: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        self.row_norm(
            stream,
            dtype,
            "rms_norm",
            d,
            true,
            x,
            w,
            DevPtr::NULL,
            y,
            DevPtr::NULL,
            rstd,
        )
    }

    fn rms_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &RowNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
    ) -> Result<()> {
        self.row_norm_backward(
            stream,
            dtype,
            "rms_norm_backward",
            d,
            true,
            x,
            w,
            dy,
            dx,
            dw,
            DevPtr::NULL,
        )
    }

    fn group_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &GroupNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        y: DevPtr,
        mean: DevPtr,
        rstd: DevPtr,
    ) -> Result<()> {
        let suffix = float_suffix("group_norm", dtype)?;
        let cpg = d.c / d.groups;
        let len = cpg * d.hw;
        let sets = d.n * d.groups;
        if sets == 0 || len == 0 {
            return Ok(());
        }
        let (s, l, g, c, hw, eps, rms) = (
            sets as u64,
            len as u64,
            d.groups as u64,
            cpg as u64,
            d.hw as u64,
            d.eps as f32,
            0i32,
        );
        self.norm_launch(
            stream,
            &SETNORM.suffixed(suffix),
            [Self::grid_for(sets, 1), 1, 1],
            [LOOP_THREADS, 1, 1],
            &mut kargs![x.0, w.0, b.0, y.0, mean.0, rstd.0, s, l, g, c, hw, eps, rms],
        )
    }

    fn group_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &GroupNormDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        let suffix = float_suffix("group_norm_backward", dtype)?;
        let cpg = d.c / d.groups;
        let len = cpg * d.hw;
        let sets = d.n * d.groups;
        if sets == 0 || len == 0 {
            return Ok(());
        }
        let (s, l, g, c, hw, ch, eps) = (
            sets as u64,
            len as u64,
            d.groups as u64,
            cpg as u64,
            d.hw as u64,
            d.c as u64,
            d.eps as f32,
        );
        self.with_workspace(stream, d.n * 2 * d.c, |part| {
            self.norm_launch(
                stream,
                &GROUPNORM_BWD.suffixed(suffix),
                [Self::grid_for(sets, 1), 1, 1],
                [LOOP_THREADS, 1, 1],
                &mut kargs![x.0, w.0, dy.0, dx.0, part.0, s, l, g, c, hw, ch, eps],
            )?;
            self.colsum_parts(stream, suffix, part, d.n, d.c, dw, db)
        })
    }

    fn batch_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        b: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        y: DevPtr,
        save_mean: DevPtr,
        save_invstd: DevPtr,
    ) -> Result<()> {
        let suffix = float_suffix("batch_norm", dtype)?;
        if !d.training && (running_mean.is_null() || running_var.is_null()) {
            return Err(crate::Error::invalid(
                "batch_norm: running_mean and running_var are required in eval mode",
            ));
        }
        let len = d.n * d.hw;
        if d.c == 0 || len == 0 {
            return Ok(());
        }
        if d.channels_last {
            return self.batch_norm_nhwc(
                stream,
                suffix,
                dtype,
                d,
                x,
                w,
                b,
                running_mean,
                running_var,
                y,
                save_mean,
                save_invstd,
            );
        }
        let splits = self.bn_splits(d.c, len);
        let (n, c, hw, sp, tr, mo, eps) = (
            d.n as u64,
            d.c as u64,
            d.hw as u64,
            splits as u64,
            d.training as i32,
            d.momentum as f32,
            d.eps as f32,
        );
        let planes = (d.n * d.c) as u64;
        self.with_workspace(stream, splits * d.c * 3 + 2 * d.c, |ws| {
            let (part, stats) = (ws, ws.offset(splits * d.c * 3 * 4));
            if d.training {
                self.norm_launch(
                    stream,
                    &BN_PARTIAL.suffixed(suffix),
                    [Self::grid_for(d.c * splits, 1), 1, 1],
                    [BN_THREADS, 1, 1],
                    &mut kargs![x.0, part.0, n, c, hw, sp],
                )?;
            }
            self.norm_launch(
                stream,
                &BN_FINALIZE.suffixed(suffix),
                [Self::grid_for(d.c, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![
                    part.0,
                    sp,
                    c,
                    running_mean.0,
                    running_var.0,
                    stats.0,
                    save_mean.0,
                    save_invstd.0,
                    tr,
                    mo,
                    eps
                ],
            )?;
            let v = if d.hw.is_multiple_of(4) && vec_aligned(dtype, &[x, y]) {
                4
            } else {
                1
            };
            self.norm_launch(
                stream,
                &(BN_APPLY.suffixed(suffix) + if v == 4 { "_v4" } else { "_v1" }),
                [Self::grid_for(d.n * d.c, 1), 1, 1],
                [self.plane_threads(d.hw / v), 1, 1],
                &mut kargs![x.0, w.0, b.0, stats.0, y.0, planes, c, hw],
            )
        })
    }

    fn batch_norm_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &BatchNormDesc,
        x: DevPtr,
        w: DevPtr,
        running_mean: DevPtr,
        running_var: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
        db: DevPtr,
    ) -> Result<()> {
        let suffix = float_suffix("batch_norm_backward", dtype)?;
        if !d.training && (running_mean.is_null() || running_var.is_null()) {
            return Err(crate::Error::invalid(
                "batch_norm_backward: running_mean and running_var are required in eval mode",
            ));
        }
        let len = d.n * d.hw;
        if d.c == 0 || len == 0 {
            return Ok(());
        }
        if d.channels_last {
            return self.batch_norm_backward_nhwc(
                stream,
                suffix,
                dtype,
                d,
                x,
                w,
                running_mean,
                running_var,
                dy,
                dx,
                dw,
                db,
            );
        }
        let splits = self.bn_splits(d.c, len);
        let (n, c, hw, sp, tr, eps) = (
            d.n as u64,
            d.c as u64,
            d.hw as u64,
            splits as u64,
            d.training as i32,
            d.eps as f32,
        );
        let (zero, null, inv_len) = (0.0f32, 0u64, 1.0 / len as f32);
        let planes = (d.n * d.c) as u64;
        let floats = splits * d.c * 5 + 4 * d.c;
        self.with_workspace(stream, floats, |ws| {
            let part = ws;
            let part2 = ws.offset(splits * d.c * 3 * 4);
            let stats = ws.offset(splits * d.c * 5 * 4);
            let sums = ws.offset((splits * d.c * 5 + 2 * d.c) * 4);
            if d.training {
                self.norm_launch(
                    stream,
                    &BN_PARTIAL.suffixed(suffix),
                    [Self::grid_for(d.c * splits, 1), 1, 1],
                    [BN_THREADS, 1, 1],
                    &mut kargs![x.0, part.0, n, c, hw, sp],
                )?;
            }
            // Batch statistics without running-stat updates (training), or the running stats.
            let (rm, rv) = if d.training {
                (null, null)
            } else {
                (running_mean.0, running_var.0)
            };
            self.norm_launch(
                stream,
                &BN_FINALIZE.suffixed(suffix),
                [Self::grid_for(d.c, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![part.0, sp, c, rm, rv, stats.0, null, null, tr, zero, eps],
            )?;
            self.norm_launch(
                stream,
                &BN_BWD_PARTIAL.suffixed(suffix),
                [Self::grid_for(d.c * splits, 1), 1, 1],
                [BN_THREADS, 1, 1],
                &mut kargs![x.0, dy.0, stats.0, part2.0, n, c, hw, sp],
            )?;
            self.norm_launch(
                stream,
                &BN_BWD_FINALIZE.suffixed(suffix),
                [Self::grid_for(d.c, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![part2.0, sp, c, sums.0, dw.0, db.0],
            )?;
            if dx.is_null() {
                return Ok(());
            }
            self.norm_launch(
                stream,
                &BN_BWD_APPLY.suffixed(suffix),
                [Self::grid_for(d.n * d.c, 1), 1, 1],
                [self.plane_threads(d.hw), 1, 1],
                &mut kargs![
                    x.0, w.0, dy.0, stats.0, sums.0, dx.0, planes, c, hw, inv_len, tr
                ],
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_plans() {
        // The benchmark shape: 4096 f32 as 1024 vectors, a block of 256 threads x 4.
        let p = RowPlan::new(4096, true, 32, 1024).unwrap();
        assert_eq!((p.v, p.n, p.warp, p.block), (4, 4, false, 256));
        assert_eq!(
            p.kernel(&SOFTMAX_ROWS, "f32"),
            "rb_softmax_rows_f32_v4_n4_b"
        );
        // Short rows: a warp each; not a multiple of 4 -> scalar chunks.
        let p = RowPlan::new(7, true, 32, 1024).unwrap();
        assert_eq!((p.v, p.n, p.warp), (1, 1, true));
        assert_eq!(p.rows_per_block(32), 8);
        let p = RowPlan::new(100, true, 64, 1024).unwrap();
        assert_eq!((p.v, p.n, p.warp, p.block), (4, 1, true, 256));
        assert_eq!(p.rows_per_block(64), 4);
        // Not vector-aligned: scalar chunks, a block per row, threads a multiple of the warp.
        let p = RowPlan::new(1031, false, 64, 1024).unwrap();
        assert_eq!((p.v, p.n, p.warp), (1, 8, false));
        assert_eq!(p.block % 64, 0);
        assert!(p.block as usize * 8 >= 1031);
        // The largest register rows, then the loop kernels.
        assert!(RowPlan::new(8 * 4 * 1024, true, 32, 1024).is_some());
        assert!(RowPlan::new(8 * 4 * 1024 + 4, true, 32, 1024).is_none());
        assert!(RowPlan::new(40_000, false, 32, 1024).is_none());
    }
}
