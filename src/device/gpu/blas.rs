//! BLAS on GPUs: GEMM through the vendor BLAS (rocBLAS / cuBLAS; `k = 0` scales C with
//! `rb_scale_cm_*` of kernels/elementwise.hip), GEAM (`rb_geam_*` of kernels/data.hip), and
//! GEMM + bias + activation (the vendor BLAS, then one epilogue kernel in place) with the
//! column sums of linear's bias gradient (kernels/pointwise.hip). Products with at most
//! [`GEMV_MAX_N`] columns and a transposed A (linear at batch 1-8, decoding) run the
//! matrix-vector kernel of kernels/blas.hip instead of the vendor BLAS: the weights read once
//! in 16-byte vectors, f32 accumulation.

use super::elementwise::grid_x;
use super::kernels::{
    self, GEAM, GEMM_SMALL, GEMV_GRP, GEMV_GRP_NORM, GEMV_T, PW_BIAS_ACT, PW_BIAS_ACT_V,
    PW_SUM_ROWS, SCALE_CM,
};
use super::vendor::{LtBatch, LtEpilogue, LtMatmul};
use super::{GpuDevice, Scratch, aligned16, timing};
use crate::base::dtype::DType;
use crate::device::blas::Transpose::{self, No, Yes};
use crate::device::blas::{GEMV_GROUP_MAX, GemvInputNorm, GemvNorm, GemvPart, GemvRope};
use crate::device::{BlasOps, DevPtr, Device, GeamDesc, GemmDesc, RawStream};
use crate::ops::conv::Activation;
use crate::{ErrorKind, Result};

/// Threads per block of `rb_pw_sum_rows_*`: 32 columns x RB_PW_SUM_Y rows.
const SUM_ROWS_BLOCK: [u32; 3] = [32, 8, 1];

/// The most columns of B (inputs) the matrix-vector kernel takes (its accumulators).
pub const GEMV_MAX_N: usize = 8;

/// Rows of C below which a long product (k > [`GEMV_SHORT_K`]) goes to the BLAS: one warp
/// per row would leave the device mostly idle (no split over k here).
const GEMV_MIN_ROWS: usize = 128;
const GEMV_SHORT_K: usize = 4096;

/// Multiply-adds up to which an f32 product runs `rb_gemm_small_f32` (one launch) instead of
/// the vendor BLAS, whose kernels for such sizes are a split-K GEMM and a reduction launch
/// (an MLP training step at batch 32: 784x256 and smaller layers).
const GEMM_SMALL_MACS: usize = 1 << 23;
/// The longest k of the small path (each warp walks k / (32 * warps) chunks in turn).
const GEMM_SMALL_MAX_K: usize = 8192;

/// `RB_GPU_GEMM_SMALL=0` sends the small f32 products to the vendor BLAS (for comparisons).
static GEMM_SMALL_ON: std::sync::LazyLock<bool> =
    std::sync::LazyLock::new(|| std::env::var("RB_GPU_GEMM_SMALL").map_or(true, |v| v != "0"));

/// Whether `rb_gemm_small_f32` computes an f32 product C `m x n` of depth `k`.
fn gemm_small_fits(dtype: DType, m: usize, n: usize, k: usize) -> bool {
    dtype == DType::F32
        && k > 0
        && k <= GEMM_SMALL_MAX_K
        && m.saturating_mul(n).saturating_mul(k) <= GEMM_SMALL_MACS
        && n.div_ceil(16) <= 65535
        && *GEMM_SMALL_ON
}

/// `RB_GPU_GEMV=0` sends every product to the vendor BLAS (for comparisons).
static GEMV_ON: std::sync::LazyLock<bool> =
    std::sync::LazyLock::new(|| std::env::var("RB_GPU_GEMV").map_or(true, |v| v != "0"));

/// `RB_GPU_GEMV_GROUP=0` keeps the executor's decode products apart (for comparisons);
/// `RB_GPU_GEMV=0` does too.
static GEMV_GROUP_ON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
    *GEMV_ON && std::env::var("RB_GPU_GEMV_GROUP").map_or(true, |v| v != "0")
});

/// Whether `rb_gemv_t_*` computes `desc`: one product (no batch), at most [`GEMV_MAX_N`]
/// columns, A transposed (each output's weights contiguous), B not, and enough rows for the
/// length of k.
pub fn gemv_applies(desc: &GemmDesc) -> bool {
    desc.batch == 1
        && desc.trans_a == Yes
        && desc.trans_b == No
        && gemv_fits(desc.dtype, desc.m, desc.n, desc.k)
}

/// The shape rule of [`gemv_applies`] for C `m x n` and depth `k`.
fn gemv_fits(dtype: DType, m: usize, n: usize, k: usize) -> bool {
    n <= GEMV_MAX_N
        && k > 0
        && (m >= GEMV_MIN_ROWS || k <= GEMV_SHORT_K)
        && dtype.is_float()
        && *GEMV_ON
}

/// Loads in flight per lane and row in `rb_gemv_t_*` (kernels/blas.hip's `RB_GEMV_U`).
const GEMV_U: usize = 2;
/// The same in the vector kernels of `rb_gemv_grp_*` (`RB_GEMV_GRP_U`: 4 unless
/// `RB_GPU_KERNEL_DEFINES` sets it, which the kernels then compile with; see kernels/blas.hip
/// for the H200 measurements behind the defaults).
static GEMV_GRP_U: std::sync::LazyLock<usize> =
    std::sync::LazyLock::new(|| super::jit::kernel_define_in("RB_GEMV_GRP_U", 1..=16, 4));
/// Gated (SwiGLU) products with 16-byte vectors run `rb_gemv_grp_*_vg` / `_vng`, whose row
/// groups compute an output's gate and up rows together, at the split of the other products
/// (`RB_GEMV_GRP_PAIR`: 1 unless `RB_GPU_KERNEL_DEFINES` sets 0, which takes the one-row
/// kernels at half the split when the split fills the block).
static GEMV_GRP_PAIR: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
    super::jit::kernel_define("RB_GEMV_GRP_PAIR").is_none_or(|v| v != "0")
});

impl GpuDevice {
    /// Threads per block of the grouped products ([`GEMV_GRP_BLOCK`] within the device's
    /// limit, whole warps).
    fn gemv_grp_block(&self) -> u32 {
        let ws = self.warp_size().max(1);
        GEMV_GRP_BLOCK.min(self.max_threads_per_block()).max(ws) / ws * ws
    }

    /// The grouped products' block for a row of `k` elements read `w` at a time (1: the
    /// scalar kernels): its threads, its warps, and the warps that split one row's `k`
    /// ([`gemv_split_u`] at [`GEMV_GRP_U`] vectors per lane).
    fn gemv_grp_split(&self, w: usize, k: usize) -> (u32, usize, usize) {
        let ws = self.warp_size().max(1);
        let block = self.gemv_grp_block();
        let warps = (block / ws) as usize;
        (
            block,
            warps,
            gemv_split_u(warps, ws as usize, w, k, *GEMV_GRP_U),
        )
    }
}

/// Threads per block of `rb_gemv_grp_*`: 128 unless `RB_GPU_KERNEL_DEFINES` sets
/// `RB_GEMV_GRP_BLOCK` (a multiple of 32, at most 1024; a tuning aid).
static GEMV_GRP_BLOCK: std::sync::LazyLock<u32> = std::sync::LazyLock::new(|| {
    match super::jit::kernel_define_in("RB_GEMV_GRP_BLOCK", 32..=1024, 128) {
        b if b.is_multiple_of(32) => b as u32,
        _ => 128,
    }
});

/// Warps of a block that share one output row in `rb_gemv_t_*`: as many as k has chunks of
/// `GEMV_U` vectors per lane, a power of two dividing the block's `warps`. On an H100, eight
/// warps per row read a Llama-7B step's weights at 0.93 of the copy bandwidth, one warp per
/// row at 0.88 (scripts/gemv_cold.py).
fn gemv_split(warps: usize, warp_size: usize, width: usize, k: usize) -> usize {
    gemv_split_u(warps, warp_size, width, k, GEMV_U)
}
fn gemv_split_u(warps: usize, warp_size: usize, width: usize, k: usize, u: usize) -> usize {
    let chunks = (k / (warp_size * width * u)).max(1);
    let mut s = 1;
    while s * 2 <= warps.min(chunks) && warps.is_multiple_of(s * 2) {
        s *= 2;
    }
    s
}

impl GpuDevice {
    /// `C = alpha * Aᵀ B + beta * C` with `rb_gemv_t_*` (kernels/blas.hip): [`gemv_split`]
    /// warps per row of C, 16-byte vectors when k, lda, ldb and the pointers allow.
    fn gemv_t(&self, stream: RawStream, d: &GemmDesc) -> Result<()> {
        let w = 16 / d.dtype.size();
        let vec = d.k.is_multiple_of(w)
            && d.lda.is_multiple_of(w)
            && d.ldb.is_multiple_of(w)
            && aligned16(&[d.a, d.b]);
        let variant = match (vec, d.n) {
            (true, 1) => "_v1",
            (true, _) => "_v",
            _ => "_s",
        };
        let kernel = GEMV_T.dtype_then("gemm", d.dtype, variant)?;
        let ws = self.warp_size().max(1);
        let block = 256u32.min(self.max_threads_per_block()).max(ws) / ws * ws;
        let split = gemv_split(
            (block / ws) as usize,
            ws as usize,
            if vec { w } else { 1 },
            d.k,
        );
        let rows = (block / ws) as usize / split;
        let grid = [grid_x(d.m.div_ceil(rows), &kernel)? as usize, 1, 1];
        let (lda, ldb, ldc, m, k) = (
            d.lda as i64,
            d.ldb as i64,
            d.ldc as i64,
            d.m as i64,
            d.k as i64,
        );
        let (nb, alpha, beta, split) = (d.n as i32, d.alpha, d.beta, split as i32);
        let t = timing::Span::begin(self, "gemv", stream);
        self.launch_grid(
            stream,
            GEMV_T.src,
            &kernel,
            grid,
            [block, 1, 1],
            &mut kargs![
                d.a.0, lda, d.b.0, ldb, d.c.0, ldc, m, k, nb, alpha, beta, split
            ],
        )?;
        t.end(self, stream);
        Ok(())
    }

    /// `C = relu?(alpha * op(A) op(B) + beta * C + bias)` (one batch, f32, [`gemm_small_fits`])
    /// with `rb_gemm_small_f32`: a 16 x 16 tile of C per block, as many warps over k as it
    /// has 32-deep chunks (at most 8).
    fn gemm_small(
        &self,
        stream: RawStream,
        d: &GemmDesc,
        bias: Option<DevPtr>,
        relu: bool,
    ) -> Result<()> {
        let kernel = GEMM_SMALL.dtype("gemm", d.dtype)?;
        let kw = d.k.div_ceil(32).clamp(1, 8) as u32;
        let ws = self.warp_size().max(1);
        let block = (32 * kw).max(ws).min(self.max_threads_per_block());
        let grid = [d.m.div_ceil(16), d.n.div_ceil(16), 1];
        let (lda, ldb, ldc, m, n, k) = (
            d.lda as i64,
            d.ldb as i64,
            d.ldc as i64,
            d.m as i64,
            d.n as i64,
            d.k as i64,
        );
        let ta = i32::from(d.trans_a == Yes);
        let tb = i32::from(d.trans_b == Yes);
        let (alpha, beta) = (d.alpha, d.beta);
        let bias = bias.unwrap_or(DevPtr::NULL);
        let relu = i32::from(relu);
        let t = timing::Span::begin(self, "gemm", stream);
        self.launch_grid(
            stream,
            GEMM_SMALL.src,
            &kernel,
            grid,
            [block, 1, 1],
            &mut kargs![
                d.a.0, lda, ta, d.b.0, ldb, tb, d.c.0, ldc, m, n, k, alpha, beta, bias.0, relu
            ],
        )?;
        t.end(self, stream);
        Ok(())
    }

    /// `p` through the vendor's BLASLt, with a workspace from the caching allocator. False
    /// (nothing done) where there is none or it has no algorithm for the problem (decided
    /// once per problem); the caller then runs the GEMM and its epilogue kernel.
    fn lt_gemm(&self, stream: RawStream, p: &LtMatmul) -> Result<bool> {
        self.bind()?;
        let ws = match self.vendor.lt_prepare(self.ordinal, p) {
            Ok(ws) => ws,
            Err(e) if e.kind == ErrorKind::Unsupported => return Ok(false),
            Err(e) => return Err(e),
        };
        let scratch = Scratch::unless_empty(self, ws, stream)?;
        let t = timing::Span::begin(self, "gemm_bias_act", stream);
        self.vendor
            .lt_matmul(self.ordinal, stream, p, scratch.ptr, ws)?;
        t.end(self, stream);
        Ok(true)
    }

    /// The linear epilogue on row-major `y` `[m, n]`: with `act`, `y = act(y + bias)` (bias
    /// optional); without, `y` = `bias` broadcast over the rows. `rb_pw_bias_act_v_*` (16-byte
    /// vectors, a 2-D grid) where n is a multiple of the vector width and the pointers are
    /// 16-byte aligned, else the scalar `rb_pw_bias_act_*` (the broadcast as zeros plus the
    /// bias).
    #[allow(clippy::too_many_arguments)]
    fn bias_act(
        &self,
        stream: RawStream,
        dtype: DType,
        y: DevPtr,
        bias: Option<DevPtr>,
        m: usize,
        n: usize,
        act: Option<Activation>,
    ) -> Result<()> {
        let w = 16 / dtype.size();
        let b = bias.unwrap_or(DevPtr::NULL);
        if m == 0 || n == 0 || (act.is_none() && bias.is_none()) {
            return Ok(());
        }
        if !n.is_multiple_of(w) || !aligned16(&[y, b]) {
            let kernel = PW_BIAS_ACT.dtype("gemm_bias_act", dtype)?;
            if act.is_none() {
                self.memset(y, 0, m * n * dtype.size(), stream)?;
            }
            let code = kernels::act_op(act.unwrap_or(Activation::None)).code;
            let (total, n64) = ((m * n) as u64, n as u64);
            return self.launch_elems(
                stream,
                PW_BIAS_ACT.src,
                &kernel,
                m * n,
                &mut kargs![y.0, b.0, total, n64, code],
            );
        }
        let kernel = PW_BIAS_ACT_V.dtype("gemm_bias_act", dtype)?;
        let vecs = n / w;
        let block = 128usize.min(vecs.next_power_of_two()).max(32);
        let gx = grid_x(vecs.div_ceil(block), &kernel)? as usize;
        // Rows over blocks y: about 16 K threads' worth of vectors per wave, at most 65535.
        let gy = m
            .min((16384usize * 8).div_ceil(vecs).max(1))
            .clamp(1, 65535);
        let code = act.map_or(0, |a| kernels::act_op(a).code);
        let (rows, n64, fill) = (m as u64, n as u64, i32::from(act.is_none()));
        self.launch_grid(
            stream,
            PW_BIAS_ACT_V.src,
            &kernel,
            [gx, gy, 1],
            [block as u32, 1, 1],
            &mut kargs![y.0, b.0, rows, n64, code, fill],
        )
    }
}

impl BlasOps for GpuDevice {
    fn gemm(&self, stream: RawStream, desc: &GemmDesc) -> Result<()> {
        desc.validate()?;
        if desc.m == 0 || desc.n == 0 || desc.batch == 0 {
            return Ok(());
        }
        self.bind()?;
        if desc.k == 0 {
            // C = beta * C (A and B are empty); BLAS libraries differ on k = 0.
            let name = SCALE_CM.dtype("gemm", desc.dtype)?;
            let (m, n, ldc, batch, stride) = (
                desc.m as i64,
                desc.n as i64,
                desc.ldc as i64,
                desc.batch as i64,
                desc.stride_c as i64,
            );
            let beta = desc.beta;
            let total = desc.m * desc.n * desc.batch;
            return self.launch_elems(
                stream,
                SCALE_CM.src,
                &name,
                total,
                &mut kargs![desc.c.0, m, n, ldc, batch, stride, beta],
            );
        }
        if gemv_applies(desc) {
            return self.gemv_t(stream, desc);
        }
        if desc.batch == 1 && gemm_small_fits(desc.dtype, desc.m, desc.n, desc.k) {
            return self.gemm_small(stream, desc, None, false);
        }
        let h = self.blas_handle()?;
        let t = timing::Span::begin(self, "gemm", stream);
        self.vendor.blas_gemm(h, stream, desc)?;
        t.end(self, stream);
        Ok(())
    }
    /// A thread per element of C (kernels/data.hip `rb_geam_*`); transposed operands are read
    /// uncoalesced (no tiling: geam is a bandwidth-bound convenience op).
    fn geam(&self, stream: RawStream, d: &GeamDesc) -> Result<()> {
        d.validate()?;
        if d.m == 0 || d.n == 0 {
            return Ok(());
        }
        self.bind()?;
        let name = GEAM.dtype("geam", d.dtype)?;
        let ta = (d.trans_a == Transpose::Yes) as i32;
        let tb = (d.trans_b == Transpose::Yes) as i32;
        let (lda, ldb, ldc, m, n) = (
            d.lda as i64,
            d.ldb as i64,
            d.ldc as i64,
            d.m as i64,
            d.n as i64,
        );
        let (alpha, beta) = (d.alpha, d.beta);
        self.launch_elems(
            stream,
            GEAM.src,
            &name,
            d.m * d.n,
            &mut kargs![
                d.a.0, lda, ta, d.b.0, ldb, tb, d.c.0, ldc, m, n, alpha, beta
            ],
        )
    }

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
        // A dtype the epilogue kernels lack is refused before anything runs.
        PW_BIAS_ACT.dtype("gemm_bias_act", dtype)?;
        if m == 0 || n == 0 {
            return Ok(());
        }
        // One cuBLASLt call with the bias and the activation in its epilogue where the
        // library has the activation (exact GELU is not among them: there the epilogue adds
        // the bias and the activation kernel follows, on the once-rounded sum as eagerly).
        // f16/bf16 with a bias stay on the path below: on an H100 (cuBLASLt 13) the bf16
        // BIAS epilogue's results differed from the once-rounded sum by more than one
        // rounding (the device suite's bias_before_the_one_rounding), the rule kept here.
        // Batches of at most GEMV_MAX_N rows with an [n, k] weight take the matrix-vector
        // kernel instead (through `gemm` below) and the epilogue kernel.
        let skinny = w_is_nk && gemv_fits(dtype, n, m, k);
        // Column-major: Yᵀ (n×m) = op(W) (n×k) · Xᵀ (k×m), the bias per row of Yᵀ.
        let linear = GemmDesc {
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
            beta: 0.0,
            c: y,
            ldc: n,
            batch: 1,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
        };
        if !skinny
            && k > 0
            && gemm_small_fits(dtype, n, m, k)
            && matches!(act, Activation::None | Activation::Relu)
        {
            self.bind()?;
            return self.gemm_small(stream, &linear, bias, act == Activation::Relu);
        }
        if k > 0 && !skinny && (dtype == DType::F32 || bias.is_none()) {
            let (epilogue, after) = match act {
                Activation::None => (LtEpilogue::None, None),
                Activation::Relu => (LtEpilogue::Relu, None),
                Activation::Gelu { tanh: true } => (LtEpilogue::GeluTanh, None),
                Activation::Gelu { tanh: false } => (LtEpilogue::None, Some(act)),
            };
            let p = LtMatmul {
                dtype,
                trans_a: linear.trans_a,
                trans_b: linear.trans_b,
                m: linear.m,
                n: linear.n,
                k,
                a: w,
                lda: linear.lda,
                b: x,
                ldb: linear.ldb,
                c: y,
                ldc: linear.ldc,
                bias,
                epilogue,
                tf32: crate::device::blas::tf32_enabled(),
                batch: LtBatch::ONE,
                algo: 0,
            };
            if self.lt_gemm(stream, &p)? {
                let Some(act) = after else { return Ok(()) };
                return self.bias_act(stream, dtype, y, None, m, n, Some(act));
            }
        }
        // f16/bf16 with a bias: Y starts as the bias (one row per row of X) and the GEMM adds
        // to it (beta = 1) in its f32 math, so the bias is in before the one rounding.
        let pre = bias.filter(|_| dtype != DType::F32);
        if let Some(b) = pre {
            self.bias_act(stream, dtype, y, Some(b), m, n, None)?;
        }
        self.gemm(
            stream,
            &GemmDesc {
                beta: if pre.is_some() { 1.0 } else { 0.0 },
                ..linear
            },
        )?;
        let bias = bias.filter(|_| pre.is_none());
        if bias.is_none() && act == Activation::None {
            return Ok(());
        }
        self.bias_act(stream, dtype, y, bias, m, n, Some(act))
    }

    fn has_gemv_group(&self) -> bool {
        *GEMV_GROUP_ON
    }

    fn gemv_group(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        k: usize,
        parts: &[GemvPart],
        glu: bool,
        norm: Option<GemvInputNorm>,
        weights_settled: bool,
    ) -> Result<()> {
        let kernel0 = GEMV_GRP.dtype_then("gemv_group", dtype, "_s")?;
        if parts.is_empty() || parts.len() > GEMV_GROUP_MAX {
            return Err(crate::Error::internal(format!(
                "gemv_group: {} products (1 to {GEMV_GROUP_MAX})",
                parts.len()
            )));
        }
        if glu
            && (parts.len() != 2
                || parts[0].rows != parts[1].rows
                || parts.iter().any(|p| p.residual.is_some()))
        {
            return Err(crate::Error::internal(
                "gemv_group: the gated product takes two weights of equal rows, no residual",
            ));
        }
        let rows: usize = parts.iter().map(|p| p.rows).sum();
        if rows == 0 {
            return Ok(());
        }
        let w = 16 / dtype.size();
        let vec = k.is_multiple_of(w)
            && aligned16(&[x])
            && aligned16(&parts.iter().map(|p| p.w).collect::<Vec<_>>());
        let nvec = norm.is_none_or(|n| aligned16(&[n.w]));
        if let Some(n) = norm.filter(|_| !vec || !nvec) {
            // The scalar kernel has no norm: the rms_norm first, into scratch.
            let h = Scratch::new(self, k * dtype.size(), stream)?;
            let d = crate::ops::nn::RowNormDesc {
                rows: 1,
                cols: k,
                eps: n.eps,
            };
            crate::device::NormOps::rms_norm(self, stream, dtype, &d, x, n.w, h.ptr, DevPtr::NULL)?;
            return self.gemv_group(stream, dtype, h.ptr, k, parts, glu, None, weights_settled);
        }
        // A gated product's row groups take the gate and up rows of an output together.
        let pair = glu && vec && *GEMV_GRP_PAIR;
        let kernel = match (vec, norm.is_some(), pair) {
            (true, true, true) => GEMV_GRP.dtype_then("gemv_group", dtype, "_vng")?,
            (true, false, true) => GEMV_GRP.dtype_then("gemv_group", dtype, "_vg")?,
            (true, true, false) => GEMV_GRP.dtype_then("gemv_group", dtype, "_vn")?,
            (true, false, false) => GEMV_GRP.dtype_then("gemv_group", dtype, "_v")?,
            _ => kernel0,
        };
        let (block, warps, mut split) = self.gemv_grp_split(if vec { w } else { 1 }, k);
        // Otherwise the gated product needs both rows of an output in one block: two groups
        // at least.
        if glu && !pair && split == warps {
            split = (warps / 2).max(1);
        }
        let groups = warps / split * if pair { 2 } else { 1 };
        if glu && groups < 2 {
            return Err(crate::Error::internal(
                "gemv_group: a block of one warp cannot hold a gated pair",
            ));
        }
        let virtual_rows = if glu { 2 * parts[0].rows } else { rows };
        let grid = [
            grid_x(virtual_rows.div_ceil(groups), &kernel)? as usize,
            1,
            1,
        ];
        let part = |i: usize| parts.get(i).copied();
        let ptr = |i: usize, f: fn(&GemvPart) -> DevPtr| part(i).map_or(DevPtr::NULL, |p| f(&p));
        let (a0, a1, a2) = (ptr(0, |p| p.w), ptr(1, |p| p.w), ptr(2, |p| p.w));
        let (c0, c1, c2) = (ptr(0, |p| p.y), ptr(1, |p| p.y), ptr(2, |p| p.y));
        let res = |p: &GemvPart| p.residual.unwrap_or(DevPtr::NULL);
        let (r0, r1, r2) = (ptr(0, res), ptr(1, res), ptr(2, res));
        let m = |i: usize| part(i).map_or(0i64, |p| p.rows as i64);
        let (m0, m1, m2) = (m(0), m(1), m(2));
        let (k64, split, glu) = (k as i64, split as i32, glu as i32);
        // (the vector kernels' first weight loads before their wait: kernels/blas.hip)
        let early = weights_settled as i32;
        let t = timing::Span::begin(self, "gemv_group", stream);
        match norm {
            Some(n) => {
                let (nw, eps) = (n.w, n.eps as f32);
                self.launch_grid(
                    stream,
                    GEMV_GRP.src,
                    &kernel,
                    grid,
                    [block, 1, 1],
                    &mut kargs![
                        x.0, k64, a0.0, a1.0, a2.0, c0.0, c1.0, c2.0, r0.0, r1.0, r2.0, m0, m1, m2,
                        split, glu, nw.0, eps, early
                    ],
                )?
            }
            None => self.launch_grid(
                stream,
                GEMV_GRP.src,
                &kernel,
                grid,
                [block, 1, 1],
                &mut kargs![
                    x.0, k64, a0.0, a1.0, a2.0, c0.0, c1.0, c2.0, r0.0, r1.0, r2.0, m0, m1, m2,
                    split, glu, early
                ],
            )?,
        }
        t.end(self, stream);
        Ok(())
    }

    fn gemv_group_rope(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        k: usize,
        ws: &[DevPtr],
        norm: Option<GemvInputNorm>,
        weights_settled: bool,
        rope: &GemvRope,
    ) -> Result<bool> {
        let d = rope.desc;
        let w = 16 / dtype.size().max(1);
        let dim = d.dim;
        let parts = rope.parts;
        let is64 = match rope.pos_dtype {
            DType::I32 => 0i32,
            DType::I64 => 1,
            _ => return Ok(false),
        };
        // (rope_store's one pass runs inside a device graph only: the ops check the position)
        if !*GEMV_GROUP_ON
            || !self.graphs.is_capturing(stream)
            || !dtype.is_float()
            || dtype == DType::F64
            || ws.is_empty()
            || ws.len() > GEMV_GROUP_MAX
            || ws.len() != parts.len()
            || k == 0
            || !k.is_multiple_of(w)
            || dim == 0
            || d.rot > dim
            || !d.rot.is_multiple_of(2)
            || parts.iter().any(|p| p.n == 0 || !p.n.is_multiple_of(dim))
            || !aligned16(&[x])
            || !aligned16(ws)
            || norm.is_some_and(|n| !aligned16(&[n.w]))
        {
            return Ok(false);
        }
        let kernel = GEMV_GRP.dtype_then(
            "gemv_group_rope",
            dtype,
            if norm.is_some() { "_vnr" } else { "_vr" },
        )?;
        let per = d.rot / 2 + (dim - d.rot);
        let units: usize = parts.iter().map(|p| p.n / dim * per).sum();
        // (the kernel maps units to rows in 32-bit arithmetic)
        let rows: usize = parts.iter().map(|p| p.n).sum();
        if rows.max(units) > i32::MAX as usize / 2 {
            return Ok(false);
        }
        let (block, warps, split) = self.gemv_grp_split(w, k);
        // a row group per unit (its two rows)
        let grid = [
            grid_x(units.div_ceil(warps / split), &kernel)? as usize,
            1,
            1,
        ];
        let w_at = |i: usize| ws.get(i).copied().unwrap_or(DevPtr::NULL).0;
        let m = |i: usize| parts.get(i).map_or(0i64, |p| p.n as i64);
        let out = |i: usize| {
            parts
                .get(i)
                .map_or((DevPtr::NULL.0, 0i32, 1i64, 0i64), |p| {
                    let (t, inner) = p.cache.unwrap_or((0, 1));
                    (p.y.0, p.rotate as i32, inner as i64, t as i64)
                })
        };
        let (y0, r0, i0, t0) = out(0);
        let (y1, r1, i1, t1) = out(1);
        let (y2, r2, i2, t2) = out(2);
        let (nw, eps) = norm.map_or((DevPtr::NULL, 0.0f32), |n| (n.w, n.eps as f32));
        let (k64, split, early) = (k as i64, split as i32, weights_settled as i32);
        let (dim64, rot64, max_pos, il) = (
            dim as i64,
            d.rot as i64,
            d.max_pos as i64,
            d.interleaved as i32,
        );
        let t = timing::Span::begin(self, "gemv_group_rope", stream);
        self.launch_grid(
            stream,
            GEMV_GRP.src,
            &kernel,
            grid,
            [block, 1, 1],
            &mut kargs![
                x.0,
                k64,
                w_at(0),
                w_at(1),
                w_at(2),
                m(0),
                m(1),
                m(2),
                split,
                nw.0,
                eps,
                early,
                rope.cos.0,
                rope.sin.0,
                rope.positions.0,
                is64,
                dim64,
                rot64,
                max_pos,
                il,
                y0,
                r0,
                i0,
                t0,
                y1,
                r1,
                i1,
                t1,
                y2,
                r2,
                i2,
                t2
            ],
        )?;
        t.end(self, stream);
        Ok(true)
    }

    fn gemv_group_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        k: usize,
        part: &GemvPart,
        norm: &GemvNorm,
    ) -> Result<bool> {
        let Some(res) = part.residual else {
            return Ok(false);
        };
        let w = 16 / dtype.size();
        if !*GEMV_GROUP_ON
            || !dtype.is_float()
            || dtype == DType::F64
            || part.rows == 0
            || k == 0
            || !k.is_multiple_of(w)
            || !aligned16(&[x, part.w])
        {
            return Ok(false);
        }
        // The split of gemv_group's vector kernel for this k (the same products, same bits),
        // and the rms_norm's own plan for its row, which the last block reproduces: block rows
        // of 4-element chunks over the launch's threads, a whole number of rows' warps.
        let ws = self.warp_size().max(1);
        let (_, _, split) = self.gemv_grp_split(w, k);
        let vec_ok = super::norm::vec_aligned(dtype, &[part.y, norm.w, norm.out]);
        let (block, n) = match self.row_plan(part.rows, vec_ok) {
            Some(p) if p.block % ws == 0 && ((p.block / ws) as usize).is_multiple_of(split) => {
                (p.block, p.block_v4_chunks())
            }
            _ => (0, None),
        };
        let variant = match n {
            Some(1) => "_n1",
            Some(2) => "_n2",
            Some(4) => "_n4",
            Some(8) => "_n8",
            _ => return Ok(false),
        };
        // Only inside a device graph, which owns the counter.
        let Some(cnt) = self.capture_counters(stream, 1) else {
            return Ok(false);
        };
        let kernel = GEMV_GRP_NORM.dtype_then("gemv_group_norm", dtype, variant)?;
        let groups = (block / ws) as usize / split;
        let grid = [grid_x(part.rows.div_ceil(groups), &kernel)? as usize, 1, 1];
        let (k64, m0, split, eps) = (k as i64, part.rows as i64, split as i32, norm.eps as f32);
        let t = timing::Span::begin(self, "gemv_group_norm", stream);
        self.launch_grid(
            stream,
            GEMV_GRP_NORM.src,
            &kernel,
            grid,
            [block, 1, 1],
            &mut kargs![
                x.0, k64, part.w.0, part.y.0, res.0, m0, split, norm.w.0, norm.out.0, eps, cnt.0
            ],
        )?;
        t.end(self, stream);
        Ok(true)
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
        self.sum_rows_masked(
            stream,
            dtype,
            x,
            DevPtr::NULL,
            DevPtr::NULL,
            out,
            rows,
            cols,
        )
    }

    fn has_relu_backward_sum_rows(&self) -> bool {
        true
    }

    fn relu_backward_sum_rows(
        &self,
        stream: RawStream,
        dtype: DType,
        h: DevPtr,
        g: DevPtr,
        dy: DevPtr,
        out: DevPtr,
        rows: usize,
        cols: usize,
    ) -> Result<()> {
        if rows * cols > 0 && (h.is_null() || dy.is_null()) {
            return Err(crate::Error::internal(
                "relu_backward_sum_rows without h or dy",
            ));
        }
        self.sum_rows_masked(stream, dtype, g, h, dy, out, rows, cols)
    }
}

impl GpuDevice {
    /// `rb_pw_sum_rows_*`: column sums of `x`, or with `h` of `h <= 0 ? 0 : x`, also
    /// written to `dy`.
    #[allow(clippy::too_many_arguments)]
    fn sum_rows_masked(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        h: DevPtr,
        dy: DevPtr,
        out: DevPtr,
        rows: usize,
        cols: usize,
    ) -> Result<()> {
        let kernel = PW_SUM_ROWS.dtype("sum_rows", dtype)?;
        if cols == 0 {
            return Ok(());
        }
        let (r64, c64) = (rows as u64, cols as u64);
        let grid = [grid_x(cols.div_ceil(32), &kernel)? as usize, 1, 1];
        self.launch_grid(
            stream,
            PW_SUM_ROWS.src,
            &kernel,
            grid,
            SUM_ROWS_BLOCK,
            &mut kargs![x.0, out.0, r64, c64, h.0, dy.0],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::gemv_split;

    #[test]
    fn gemv_split_follows_k() {
        // f16 vectors of 8, 32 lanes, 2 vectors per lane: chunks of 512 elements.
        assert_eq!(gemv_split(8, 32, 8, 4096), 8);
        assert_eq!(gemv_split(8, 32, 8, 11008), 8);
        assert_eq!(gemv_split(8, 32, 8, 1024), 2);
        assert_eq!(gemv_split(8, 32, 8, 1536), 2);
        assert_eq!(gemv_split(8, 32, 8, 64), 1);
        // 64-lane wavefronts, four per block; one element at a time.
        assert_eq!(gemv_split(4, 64, 1, 4096), 4);
        assert_eq!(gemv_split(4, 64, 1, 100), 1);
        assert_eq!(gemv_split(6, 32, 8, 8192), 2);
    }
}
