//! `DnnOps` on GPUs: the fused pointwise ops (add+relu, mul+add with broadcasting), the
//! column sums of linear's bias gradient, and GEMM + bias + activation (the vendor BLAS, then
//! one epilogue kernel in place), kernels in kernels/pointwise.hip; convolution (MIOpen /
//! cuDNN) and pooling (kernels/pool.hip), whose logic is in [`super::conv`].

use super::conv;
use super::elementwise::{PwLayout, grid_x};
use super::{GpuDevice, aligned16, float_suffix, jit};
use crate::Result;
use crate::base::dtype::DType;
use crate::base::shape::BroadcastLayout;
use crate::device::blas::Transpose::{No, Yes};
use crate::device::{BlasOps, DevPtr, Device, DnnOps, GemmDesc, RawStream};
use crate::ops::conv::{Activation, ConvGeom};
use crate::ops::pool::PoolGeom;

/// Activation codes of `rb_pw_act` (kernels/pointwise.hip).
fn act_code(act: Activation) -> i32 {
    match act {
        Activation::None => 0,
        Activation::Relu => 1,
        Activation::Gelu { tanh: false } => 2,
        Activation::Gelu { tanh: true } => 3,
    }
}

/// Threads per block of `rb_pw_sum_rows_*`: 32 columns x RB_PW_SUM_Y rows.
const SUM_ROWS_BLOCK: [u32; 3] = [32, 8, 1];

impl DnnOps for GpuDevice {
    fn gemm_bias_act(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        w_is_nk: bool,
        bias: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<()> {
        let suffix = float_suffix("gemm_bias_act", dtype)?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        let (total, n64) = ((m * n) as u64, n as u64);
        // f16/bf16 with a bias: Y starts as the bias (one row per row of X) and the GEMM adds
        // to it (beta = 1) in its f32 math, so the bias is in before the one rounding.
        let pre = bias.filter(|_| dtype != DType::F32);
        if let Some(b) = pre {
            self.memset(y, 0, m * n * dtype.size(), stream)?;
            self.launch_elems(
                stream,
                &jit::POINTWISE,
                &format!("rb_pw_bias_act_{suffix}"),
                m * n,
                &mut kargs![y.0, b.0, total, n64, 0i32],
            )?;
        }
        // Column-major: Yᵀ (n×m) = op(W) (n×k) · Xᵀ (k×m).
        self.gemm(
            stream,
            &GemmDesc {
                dtype,
                trans_a: if w_is_nk { Yes } else { No },
                trans_b: No,
                m: n,
                n: m,
                k,
                alpha: 1.0,
                a: w,
                lda: if w_is_nk { k.max(1) } else { n },
                b: x,
                ldb: k.max(1),
                beta: if pre.is_some() { 1.0 } else { 0.0 },
                c: y,
                ldc: n,
                batch: 1,
                stride_a: 0,
                stride_b: 0,
                stride_c: 0,
            },
        )?;
        let bias = bias.filter(|_| pre.is_none());
        if bias.is_none() && act == Activation::None {
            return Ok(());
        }
        let b = bias.unwrap_or(DevPtr::NULL);
        let code = act_code(act);
        self.launch_elems(
            stream,
            &jit::POINTWISE,
            &format!("rb_pw_bias_act_{suffix}"),
            m * n,
            &mut kargs![y.0, b.0, total, n64, code],
        )
    }

    fn sum_rows(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        out: DevPtr,
        rows: usize,
        cols: usize,
    ) -> Result<()> {
        let kernel = format!("rb_pw_sum_rows_{}", float_suffix("sum_rows", dtype)?);
        if cols == 0 {
            return Ok(());
        }
        let (r64, c64) = (rows as u64, cols as u64);
        let grid = [grid_x(cols.div_ceil(32), &kernel)? as usize, 1, 1];
        self.launch_grid(
            stream,
            &jit::POINTWISE,
            &kernel,
            grid,
            SUM_ROWS_BLOCK,
            &mut kargs![x.0, out.0, r64, c64],
        )
    }

    fn add_relu(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let suffix = float_suffix("add_relu", dtype)?;
        let n = layout.numel();
        let n64 = n as u64;
        if dtype == DType::F32 && layout.is_flat() && aligned16(&[a, b, out]) {
            return self.launch_elems(
                stream,
                &jit::POINTWISE,
                "rb_pw_add_relu_f32_flat",
                n.div_ceil(4),
                &mut kargs![a.0, b.0, out.0, n64],
            );
        }
        let l = PwLayout::<2>::new("add_relu", layout)?;
        self.launch_elems(
            stream,
            &jit::POINTWISE,
            &format!("rb_pw_add_relu_{suffix}"),
            n,
            &mut kargs![a.0, b.0, out.0, n64, l],
        )
    }

    fn mul_add(
        &self,
        stream: RawStream,
        dtype: DType,
        a: DevPtr,
        b: DevPtr,
        c: DevPtr,
        out: DevPtr,
        layout: &BroadcastLayout,
    ) -> Result<()> {
        let suffix = float_suffix("mul_add", dtype)?;
        let n = layout.numel();
        let n64 = n as u64;
        let l = PwLayout::<3>::new("mul_add", layout)?;
        self.launch_elems(
            stream,
            &jit::POINTWISE,
            &format!("rb_pw_mul_add_{suffix}"),
            n,
            &mut kargs![a.0, b.0, c.0, out.0, n64, l],
        )
    }

    /// 0: the device takes workspaces from its caching allocator (a caller's workspace is
    /// used when it is large enough for the chosen algorithm).
    fn conv_workspace_size(&self, _g: &ConvGeom, _dtype: DType) -> Result<usize> {
        Ok(0)
    }

    fn conv_forward(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        conv::conv_forward(
            self,
            stream,
            g,
            dtype,
            x,
            w,
            bias,
            act,
            y,
            workspace,
            workspace_bytes,
        )
    }

    fn conv_backward_data(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        dy: DevPtr,
        w: DevPtr,
        dx: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        conv::conv_backward_data(
            self,
            stream,
            g,
            dtype,
            dy,
            w,
            dx,
            workspace,
            workspace_bytes,
        )
    }

    fn conv_backward_weight(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dw: DevPtr,
        db: Option<DevPtr>,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        conv::conv_backward_weight(
            self,
            stream,
            g,
            dtype,
            x,
            dy,
            dw,
            db,
            workspace,
            workspace_bytes,
        )
    }

    fn pool_forward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        conv::pool_forward(self, stream, g, dtype, x, y)
    }

    fn pool_backward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        conv::pool_backward(self, stream, g, dtype, x, dy, dx)
    }

    fn adaptive_avg_pool2d_forward(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        planes: usize,
        inp: [usize; 2],
        out: [usize; 2],
    ) -> Result<()> {
        conv::adaptive_avg_pool2d(self, stream, dtype, false, x, y, planes, inp, out)
    }

    fn adaptive_avg_pool2d_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        dx: DevPtr,
        planes: usize,
        inp: [usize; 2],
        out: [usize; 2],
    ) -> Result<()> {
        conv::adaptive_avg_pool2d(self, stream, dtype, true, dy, dx, planes, inp, out)
    }
}
