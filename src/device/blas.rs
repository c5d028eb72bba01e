//! BLAS on a device: GEMM with BLAS conventions (column-major, transpose flags, leading
//! dimensions, alpha/beta), optionally strided-batched, GEAM (matrix addition with
//! transposes), and the dense-layer helpers: row-major GEMM with a fused bias + activation
//! epilogue (linear, matmul+bias+act) and column sums (linear's bias gradient).
//!
//! TF32 is an opt-in, as `torch.backends.cuda.matmul.allow_tf32`: [`set_allow_tf32`] per
//! process, [`tf32_scope`] for the calling thread (an executor whose config allows it).
//! Default: exact f32 products.

use super::{DevPtr, RawStream};
use crate::base::dtype::DType;
use crate::ops::conv::Activation;
use crate::{Error, Result};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

static ALLOW_TF32: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The calling thread's override of the process flag (an executor's run).
    static TF32_SCOPE: Cell<Option<bool>> = const { Cell::new(None) };
}

/// Lets f32 GEMMs (matmul, linear, bmm) of this process use TF32 tensor cores (10-bit
/// mantissa inputs, f32 accumulation), as `torch.backends.cuda.matmul.allow_tf32 = True`.
/// On NVIDIA cuBLAS then computes with CUBLAS_COMPUTE_32F_FAST_TF32; rocBLAS has no TF32
/// (xf32) GEMM here, so ROCm stays exact. Off by default. f16/bf16 products, the
/// matrix-vector path and the CPU are unaffected.
pub fn set_allow_tf32(on: bool) {
    ALLOW_TF32.store(on, Ordering::Relaxed);
}

/// The process flag of [`set_allow_tf32`].
pub fn allow_tf32() -> bool {
    ALLOW_TF32.load(Ordering::Relaxed)
}

/// Whether an f32 GEMM issued now by this thread may use TF32: the thread's scope if one
/// is open, else the process flag.
pub fn tf32_enabled() -> bool {
    TF32_SCOPE.with(|c| c.get()).unwrap_or_else(allow_tf32)
}

/// Restores the thread's previous TF32 scope when dropped.
pub struct Tf32Scope(Option<bool>);

impl Drop for Tf32Scope {
    fn drop(&mut self) {
        let prev = self.0;
        TF32_SCOPE.with(|c| c.set(prev));
    }
}

/// Makes `on` the calling thread's TF32 setting until the guard drops (nested scopes
/// restore in order).
pub fn tf32_scope(on: bool) -> Tf32Scope {
    Tf32Scope(TF32_SCOPE.with(|c| c.replace(Some(on))))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transpose {
    No,
    Yes,
}

/// `C[i] = alpha * op(A[i]) * op(B[i]) + beta * C[i]` for `i < batch`, column-major, with
/// `op(A)` m×k, `op(B)` k×n and `C` m×n. Pointers are element-strided by `stride_*`.
/// All three matrices have `dtype`; f16/bf16 accumulate in f32.
#[derive(Clone, Copy, Debug)]
pub struct GemmDesc {
    pub dtype: DType,
    pub trans_a: Transpose,
    pub trans_b: Transpose,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f32,
    pub a: DevPtr,
    pub lda: usize,
    pub b: DevPtr,
    pub ldb: usize,
    pub beta: f32,
    pub c: DevPtr,
    pub ldc: usize,
    pub batch: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub stride_c: usize,
}

impl GemmDesc {
    /// Checks the BLAS rules on leading dimensions (as rocBLAS/cuBLAS do).
    pub fn validate(&self) -> Result<()> {
        let (ar, _ac) = match self.trans_a {
            Transpose::No => (self.m, self.k),
            Transpose::Yes => (self.k, self.m),
        };
        let (br, _bc) = match self.trans_b {
            Transpose::No => (self.k, self.n),
            Transpose::Yes => (self.n, self.k),
        };
        if self.lda < ar.max(1) {
            return Err(Error::invalid(format!(
                "gemm: lda={} < {}",
                self.lda,
                ar.max(1)
            )));
        }
        if self.ldb < br.max(1) {
            return Err(Error::invalid(format!(
                "gemm: ldb={} < {}",
                self.ldb,
                br.max(1)
            )));
        }
        if self.ldc < self.m.max(1) {
            return Err(Error::invalid(format!(
                "gemm: ldc={} < {}",
                self.ldc,
                self.m.max(1)
            )));
        }
        if !self.dtype.is_floating() {
            return Err(Error::dtype(format!(
                "gemm: dtype {} is not supported (f32, f16, bf16 or f64)",
                self.dtype
            )));
        }
        Ok(())
    }
}

/// `C = alpha * op(A) + beta * op(B)`, column-major, `op(A)`, `op(B)` and `C` all m×n
/// (cuBLAS/rocBLAS `geam`). All three matrices have floating `dtype`; math in f32. When
/// `alpha` is 0, A is not read (NaNs in it do not propagate; it may be null); likewise B
/// with `beta`. C may be A itself (same pointer, `lda == ldc`, A not transposed) or B
/// likewise; any other overlap is the caller's error (the C ABI rejects it).
#[derive(Clone, Copy, Debug)]
pub struct GeamDesc {
    pub dtype: DType,
    pub trans_a: Transpose,
    pub trans_b: Transpose,
    pub m: usize,
    pub n: usize,
    pub alpha: f32,
    pub a: DevPtr,
    pub lda: usize,
    pub beta: f32,
    pub b: DevPtr,
    pub ldb: usize,
    pub c: DevPtr,
    pub ldc: usize,
}

impl GeamDesc {
    /// Rows of the stored (not transposed) A or B for `t`.
    pub fn stored_rows(&self, t: Transpose) -> usize {
        match t {
            Transpose::No => self.m,
            Transpose::Yes => self.n,
        }
    }

    /// Checks the BLAS rules on leading dimensions (as rocBLAS/cuBLAS do) and the dtype.
    pub fn validate(&self) -> Result<()> {
        let checks = [
            ("lda", self.lda, self.stored_rows(self.trans_a)),
            ("ldb", self.ldb, self.stored_rows(self.trans_b)),
            ("ldc", self.ldc, self.m),
        ];
        for (name, ld, rows) in checks {
            if ld < rows.max(1) {
                return Err(Error::invalid(format!(
                    "geam: {name}={ld} < {}",
                    rows.max(1)
                )));
            }
        }
        if !self.dtype.is_float() {
            return Err(Error::dtype(format!(
                "geam: dtype {} is not supported (f32, f16 or bf16)",
                self.dtype
            )));
        }
        Ok(())
    }
}

/// The most products one [`BlasOps::gemv_group`] takes.
pub const GEMV_GROUP_MAX: usize = 3;

/// One product of [`BlasOps::gemv_group`]: `y = w · x (+ residual)` with `w` `[rows, k]`
/// row-major and contiguous, `y` and `residual` `rows` elements.
#[derive(Clone, Copy, Debug)]
pub struct GemvPart {
    pub w: DevPtr,
    pub rows: usize,
    pub y: DevPtr,
    pub residual: Option<DevPtr>,
}

/// The rms_norm that [`BlasOps::gemv_group`] applies to its input: `x / sqrt(mean(x²) +
/// eps) * w` (`w` NULL: no weight; else `k` elements).
#[derive(Clone, Copy, Debug)]
pub struct GemvInputNorm {
    pub w: DevPtr,
    pub eps: f64,
}

/// The rms_norm that [`BlasOps::gemv_group_norm`] applies to its product's result:
/// `out = y / sqrt(mean(y²) + eps) * w` (`w` NULL: no weight), as
/// [`crate::device::NormOps::rms_norm`] over one row of the product's `rows` elements.
#[derive(Clone, Copy, Debug)]
pub struct GemvNorm {
    pub w: DevPtr,
    pub eps: f64,
    pub out: DevPtr,
}

/// Where [`BlasOps::gemv_group_rope`] sends its products' results: rope_store's
/// ([`crate::device::TransformerOps::rope_store`]) rotation with the one position
/// `positions[0]` (`desc`: the rotated parts' `dim`, `rot`, `max_pos`, `interleaved`) and
/// its parts, one per product in order (a part's `x` is unused, its `n` the product's rows).
#[derive(Clone, Debug)]
pub struct GemvRope<'a> {
    pub desc: &'a crate::ops::nn::RopeCachedDesc,
    pub cos: DevPtr,
    pub sin: DevPtr,
    pub positions: DevPtr,
    pub pos_dtype: DType,
    pub parts: &'a [crate::device::transformer::RopeStorePart],
}

/// Every method has a default that answers UNSUPPORTED, so a device implements what it has.
#[allow(unused_variables, clippy::too_many_arguments)]
pub trait BlasOps {
    /// Whether [`BlasOps::gemv_group`] is implemented (the executor then runs decode-time
    /// linear layers that share an input, and a linear's residual add or SwiGLU gate, as one
    /// matrix-vector pass).
    fn has_gemv_group(&self) -> bool {
        false
    }

    /// Up to [`GEMV_GROUP_MAX`] matrix-vector products reading one input `x` (`k`
    /// elements) in one pass: each part's `y = w · x + residual`; with `glu` (two parts of
    /// equal rows, no residuals) the first part's `y = silu(w₀ · x) * (w₁ · x)` (the second
    /// `y` is not written). f32 accumulation, one rounding per output. With `norm` the
    /// products read `rms_norm(x) * norm.w` instead of `x`, computed in f32 (not rounded to
    /// the element type in between): each product's sum is scaled by the norm's
    /// `1 / sqrt(mean(x²) + eps)` before the residual or the gate. `weights_settled`: the
    /// caller's word that no work queued before this call on `stream` writes the parts'
    /// weights (an executor's constant weights, after a node that writes nothing it did not
    /// make), so a device that starts a kernel before the previous one finishes may read them
    /// before it waits (GPUs: the first round of weight loads goes out during the previous
    /// kernel's tail).
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
        Err(Error::unsupported(
            "gemv_group is not implemented on this device",
        ))
    }

    /// One product of [`BlasOps::gemv_group`] with its residual, and `norm` of its result,
    /// in one pass where the device can do it now: `Ok(true)` when it did (both results
    /// written, each with the bits [`BlasOps::gemv_group`] and the rms_norm would give),
    /// `Ok(false)` when it did nothing (the caller then runs the two). On GPUs: while the
    /// stream captures a device graph (the pass counts its finished blocks in counters the
    /// graph owns) and when the rms_norm's row plan fits the product's blocks.
    fn gemv_group_norm(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        k: usize,
        part: &GemvPart,
        norm: &GemvNorm,
    ) -> Result<bool> {
        Ok(false)
    }

    /// [`BlasOps::gemv_group`]'s products of the weights `ws` (no residual, no gate; with
    /// `norm` as there) whose results go through rope_store ([`GemvRope`]) instead of being
    /// written, in one pass where the device can do it now: `Ok(true)` when it did (every
    /// part written with the bits of gemv_group and then rope_store), `Ok(false)` when it
    /// did nothing (the caller then runs the two). A position outside `[0, max_pos)` gives a
    /// rotated part's pairs NaN and outside a cache's `[0, t)` skips its store, as
    /// rope_store does. `weights_settled` as gemv_group's, and the caller's word that no
    /// work queued before writes the cos/sin tables or the position either. On GPUs: while
    /// the stream captures a device graph (where rope_store runs as one pass),
    /// 16-byte-aligned operands and `k` a whole number of vectors.
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
        Ok(false)
    }

    fn gemm(&self, stream: RawStream, desc: &GemmDesc) -> Result<()> {
        Err(Error::unsupported("gemm is not implemented on this device"))
    }

    /// See [`GeamDesc`].
    fn geam(&self, stream: RawStream, desc: &GeamDesc) -> Result<()> {
        Err(Error::unsupported("geam is not implemented on this device"))
    }

    /// Row-major `y[m,n] = act(x[m,k] · W + bias)` where `W` is `w` `[n,k]` transposed when
    /// `w_is_nk` (linear's layout) or `w` `[k,n]` as is (matmul's); `bias` has `n` elements.
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
        Err(Error::unsupported(
            "gemm_bias_act is not implemented on this device",
        ))
    }

    /// Whether [`Self::relu_backward_sum_rows`] runs here (f32, f16, bf16).
    fn has_relu_backward_sum_rows(&self) -> bool {
        false
    }

    /// `dy = relu_backward(h, g)` (`h <= 0 ? 0 : g`, a NaN `h` passing `g`) over a
    /// row-major `[rows, cols]` matrix, and its column sums into `out` (`cols`), in one
    /// pass: a training step's gradient through a relu and the bias gradient of the linear
    /// before it.
    #[allow(clippy::too_many_arguments)]
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
        let _ = (stream, dtype, h, g, dy, out, rows, cols);
        Err(Error::unsupported(
            "relu_backward_sum_rows is not implemented on this device",
        ))
    }

    /// Column sums of a row-major `[rows, cols]` matrix into `out` (`cols`): the bias
    /// gradient of linear.
    fn sum_rows(
        &self,
        stream: RawStream,
        dtype: DType,
        x: DevPtr,
        out: DevPtr,
        rows: usize,
        cols: usize,
    ) -> Result<()> {
        Err(Error::unsupported(
            "sum_rows is not implemented on this device",
        ))
    }
}
