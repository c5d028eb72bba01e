//! Softmax and log_softmax on GPUs (kernels/norm.hip), forward and backward, in f32, f16 and
//! bf16 (f32 math): rows of the last dim through the register-row or loop kernels planned
//! as in [`super::norm`], softmax over another dim through the `*_strided_*` kernels; f64
//! through `rb_softmax_d_f64` / `rb_softmax_bwd_d_f64` (a block per group, in double).

use super::GpuDevice;
use super::kernels::*;
use super::norm::{LOOP_THREADS, vec_aligned};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{DevPtr, RawStream, SoftmaxOps};
use crate::ops::nn::SoftmaxDesc;

impl SoftmaxOps for GpuDevice {
    fn softmax(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &SoftmaxDesc,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        let op = if d.log { "log_softmax" } else { "softmax" };
        if dtype == DType::F64 {
            if d.numel() == 0 {
                return Ok(());
            }
            let (o, n, i, logm) = (d.outer as u64, d.dim as u64, d.inner as u64, d.log as i32);
            return self.norm_launch(
                stream,
                &SOFTMAX_D.dtype(op, dtype)?,
                [Self::grid_for(d.outer * d.inner, 1).min(1 << 20), 1, 1],
                [256, 1, 1],
                &mut kargs![x.0, y.0, o, n, i, logm],
            );
        }
        let suffix = float_suffix(op, dtype)?;
        if d.numel() == 0 {
            return Ok(());
        }
        let logm = d.log as i32;
        if d.inner != 1 {
            let (o, n, i) = (d.outer as u64, d.dim as u64, d.inner as u64);
            let cols = d.outer * d.inner;
            return self.norm_launch(
                stream,
                &SOFTMAX_STRIDED.suffixed(suffix),
                [Self::grid_for(cols, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![x.0, y.0, o, n, i, logm],
            );
        }
        let rows = d.outer as u64;
        let vec_ok = vec_aligned(dtype, &[x, y]);
        let plan = self.row_plan(d.dim, vec_ok);
        match plan {
            Some(p) => {
                let cols = d.dim as i32;
                let grid = Self::grid_for(d.outer, p.rows_per_block(self.warp_size()));
                self.norm_launch(
                    stream,
                    &p.kernel(&SOFTMAX_ROWS, suffix),
                    [grid, 1, 1],
                    [p.block, 1, 1],
                    &mut kargs![x.0, y.0, rows, cols, logm],
                )
            }
            None => {
                let cols = d.dim as u64;
                self.norm_launch(
                    stream,
                    &SOFTMAX_LOOP.suffixed(suffix),
                    [Self::grid_for(d.outer, 1), 1, 1],
                    [LOOP_THREADS, 1, 1],
                    &mut kargs![x.0, y.0, rows, cols, logm],
                )
            }
        }
    }

    fn softmax_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &SoftmaxDesc,
        y: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        let op = if d.log {
            "log_softmax_backward"
        } else {
            "softmax_backward"
        };
        if dtype == DType::F64 {
            if d.numel() == 0 {
                return Ok(());
            }
            let (o, n, i, logm) = (d.outer as u64, d.dim as u64, d.inner as u64, d.log as i32);
            return self.norm_launch(
                stream,
                &SOFTMAX_BWD_D.dtype(op, dtype)?,
                [Self::grid_for(d.outer * d.inner, 1).min(1 << 20), 1, 1],
                [256, 1, 1],
                &mut kargs![y.0, dy.0, dx.0, o, n, i, logm],
            );
        }
        let suffix = float_suffix(op, dtype)?;
        if d.numel() == 0 {
            return Ok(());
        }
        let logm = d.log as i32;
        if d.inner != 1 {
            let (o, n, i) = (d.outer as u64, d.dim as u64, d.inner as u64);
            return self.norm_launch(
                stream,
                &SOFTMAX_BWD_STRIDED.suffixed(suffix),
                [Self::grid_for(d.outer * d.inner, 256), 1, 1],
                [256, 1, 1],
                &mut kargs![y.0, dy.0, dx.0, o, n, i, logm],
            );
        }
        let rows = d.outer as u64;
        let vec_ok = vec_aligned(dtype, &[y, dy, dx]);
        let plan = self.row_plan(d.dim, vec_ok);
        match plan {
            Some(p) => {
                let cols = d.dim as i32;
                let grid = Self::grid_for(d.outer, p.rows_per_block(self.warp_size()));
                self.norm_launch(
                    stream,
                    &p.kernel(&SOFTMAX_BWD_ROWS, suffix),
                    [grid, 1, 1],
                    [p.block, 1, 1],
                    &mut kargs![y.0, dy.0, dx.0, rows, cols, logm],
                )
            }
            None => {
                let cols = d.dim as u64;
                self.norm_launch(
                    stream,
                    &SOFTMAX_BWD_LOOP.suffixed(suffix),
                    [Self::grid_for(d.outer, 1), 1, 1],
                    [LOOP_THREADS, 1, 1],
                    &mut kargs![y.0, dy.0, dx.0, rows, cols, logm],
                )
            }
        }
    }
}
