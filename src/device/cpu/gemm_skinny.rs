//! f32 GEMM for skinny products on AVX-512: column-major `C (m×n) = alpha·A·B + beta·C` with
//! neither operand transposed, `n <= 64`, `m >= 8` and A at most 4 MiB (larger A: the BLAS's
//! packing pays for itself) unless `n <= 16` (packing A then costs more than the product:
//! ResNet-50's classifier, 1000 × 2048 at batch 1, took 2.7 ms packed, against ~0.5 ms). That is a dense layer at a small batch: row-major
//! `Y[batch, out] = X[batch, in] · W[in, out]` is this product with `m = out`, `n = batch`.
//! A BLAS packs all of A (the weights, `m × k`) on every call, which costs about as much as
//! the arithmetic when `n` is small; this kernel reads A's columns in place instead. Register
//! blocks of 48 rows × 8 columns (24 accumulators: per step of k, 3 loads of A, 8 broadcasts
//! of B, 24 FMAs); tiles are ordered row block first, so one row block's panel of A (48 × k)
//! stays in L2 while every column block uses it, and row blocks are split over the pool.
//! The last row block takes 1, 2 or 3 vectors as its rows need (no work on empty lanes).
//! An optional epilogue adds a per-row bias (an output feature's bias) and applies ReLU in
//! registers before the store: a dense layer's bias and activation cost no extra pass.
//! Tiny products run on the calling thread.
//!
//! `op(A) = Aᵀ` (PyTorch's `linear`, weights `[out, in]`: `Y = X · Wᵀ` is `m = out`, A = W
//! stored `k × m`, each output feature's weights contiguous) runs a dot-product kernel
//! instead: register blocks of 6 rows × 4 columns, 24 accumulators of 16 partial sums along k
//! (per 16 steps of k: 6 loads of A, 4 of B, 24 FMAs), summed across lanes at the end. (On the
//! MLP's first layer, 6×4 took 88 µs, 4×6 93 µs, 3×8 134 µs; OpenBLAS with its packing of W
//! about twice as long.)

use super::par::{SendPtr, for_range};
use crate::device::blas::{GemmDesc, Transpose};

/// Rows per register block (3 vectors of 16).
const MB: usize = 48;
/// Columns per register block.
const NB: usize = 8;
/// Rows × columns per register block of the transposed-A (dot-product) kernel.
const TMB: usize = 6;
const TNB: usize = 4;

/// True when [`sgemm`] handles `d` on this machine.
pub fn applies(d: &GemmDesc) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ENABLED: std::sync::LazyLock<bool> =
            std::sync::LazyLock::new(|| super::avx512_kernel_on(Some("RB_GEMM_SKINNY")));
        *ENABLED
            && d.trans_b == Transpose::No
            && d.n <= 64
            && d.m >= 8
            && d.k <= 8192
            && (d.m * d.k <= 1 << 20 || d.n <= 16)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = d;
        false
    }
}

/// What the kernel applies to `alpha·A·B + beta·C` before the store.
#[derive(Clone, Copy)]
pub struct Epilogue {
    /// Added to row `i` of C (`m` floats), or null for none.
    pub bias: *const f32,
    /// `max(0, ·)` after the bias.
    pub relu: bool,
}

impl Epilogue {
    /// No bias, no activation.
    pub const NONE: Epilogue = Epilogue {
        bias: std::ptr::null(),
        relu: false,
    };
}

/// `C = alpha·A·B + beta·C` (C is not read when `beta == 0`), for a `d` [`applies`] accepts,
/// with `m, n, k >= 1`.
///
/// # Safety
/// `a`, `b`, `c` must address the column-major matrices `d` describes (leading dimensions
/// `d.lda`, `d.ldb`, `d.ldc`), and the CPU must have AVX-512F and FMA (checked by
/// [`applies`]).
pub unsafe fn sgemm(d: &GemmDesc, a: *const f32, b: *const f32, c: *mut f32) {
    // SAFETY: forwarded.
    unsafe { sgemm_epilogue(d, a, b, c, Epilogue::NONE) }
}

/// [`sgemm`] with `ep` applied to each element of C before it is stored.
///
/// # Safety
/// As [`sgemm`]; a non-null `ep.bias` addresses `d.m` floats.
pub unsafe fn sgemm_epilogue(
    d: &GemmDesc,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    ep: Epilogue,
) {
    #[cfg(target_arch = "x86_64")]
    {
        let (m, n, k) = (d.m, d.n, d.k);
        // Register blocks: MB×NB of the broadcast kernel, or TMB×TNB of the dot-product
        // kernel for op(A) = Aᵀ, whose row i of op(A) is column i of A (contiguous).
        let trans = d.trans_a == Transpose::Yes;
        let (mb, nb, a_row) = if trans {
            (TMB, TNB, d.lda)
        } else {
            (MB, NB, 1)
        };
        let (nmb, nnb) = (m.div_ceil(mb), n.div_ceil(nb));
        let tiles = nmb * nnb;
        let grain = if m * n * k < (1 << 19) {
            // About 4 µs of work or less: not worth waking the pool.
            tiles
        } else if trans {
            // Whole row blocks per task, so a block's rows of A stay in L1 across its columns.
            nnb
        } else {
            1
        };
        let (ap, bp, cp) = (SendPtr(a as *mut f32), SendPtr(b as *mut f32), SendPtr(c));
        let (biasp, relu) = (SendPtr(ep.bias as *mut f32), ep.relu);
        let (lda, ldb, ldc, alpha, beta) = (d.lda, d.ldb, d.ldc, d.alpha, d.beta);
        for_range(tiles, grain, move |t0, t1| {
            for t in t0..t1 {
                let (i0, j0) = ((t / nnb) * mb, (t % nnb) * nb);
                let t = x86::Tile {
                    k,
                    a: ap.get().wrapping_add(i0 * a_row),
                    lda,
                    rows: (m - i0).min(mb),
                    b: bp.get().wrapping_add(j0 * ldb),
                    ldb,
                    c: cp.get().wrapping_add(i0 + j0 * ldc),
                    ldc,
                    alpha,
                    beta,
                    bias: if biasp.get().is_null() {
                        std::ptr::null()
                    } else {
                        biasp.get().wrapping_add(i0)
                    },
                    relu,
                };
                let cols = (n - j0).min(nb);
                // SAFETY: caller's contract; tiles write disjoint blocks of C.
                unsafe {
                    if trans {
                        x86::tile_at(&t, cols)
                    } else {
                        x86::tile(&t, cols)
                    }
                };
            }
        });
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (d, a, b, c, ep);
        unreachable!("applies() is false off x86_64");
    }
}

// The AVX-512 intrinsics are stable since Rust 1.89 (the crate's rust-version).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::MB;
    use std::arch::x86_64::*;

    /// One register block: rows `0..rows` (<= MB) of A/C from `a`/`c`, columns `0..cols` of
    /// B/C from `b`/`c`.
    pub(super) struct Tile {
        pub k: usize,
        pub a: *const f32,
        pub lda: usize,
        pub rows: usize,
        pub b: *const f32,
        pub ldb: usize,
        pub c: *mut f32,
        pub ldc: usize,
        pub alpha: f32,
        pub beta: f32,
        /// This block's rows of the bias, or null.
        pub bias: *const f32,
        pub relu: bool,
    }

    /// # Safety
    /// As [`super::sgemm_epilogue`]; `cols <= NB`.
    pub(super) unsafe fn tile(t: &Tile, cols: usize) {
        // SAFETY: forwarded.
        unsafe {
            match t.rows.div_ceil(16).min(MB / 16) {
                3 => cols_dispatch::<3>(t, cols),
                2 => cols_dispatch::<2>(t, cols),
                _ => cols_dispatch::<1>(t, cols),
            }
        }
    }

    #[inline(always)]
    unsafe fn cols_dispatch<const V: usize>(t: &Tile, cols: usize) {
        // SAFETY: forwarded.
        unsafe {
            match cols {
                8 => block::<V, 8>(t),
                7 => block::<V, 7>(t),
                6 => block::<V, 6>(t),
                5 => block::<V, 5>(t),
                4 => block::<V, 4>(t),
                3 => block::<V, 3>(t),
                2 => block::<V, 2>(t),
                _ => block::<V, 1>(t),
            }
        }
    }

    /// Steps of k the column-major kernel prefetches A ahead.
    const PREFETCH_K: usize = 8;

    /// `V` vectors of rows (`t.rows <= 16 V`) × `N` columns.
    #[target_feature(enable = "avx512f,fma")]
    unsafe fn block<const V: usize, const N: usize>(t: &Tile) {
        let mut mask = [0 as __mmask16; V];
        for (v, m) in mask.iter_mut().enumerate() {
            let lo = 16 * v;
            *m = if t.rows >= lo + 16 {
                0xffff
            } else if t.rows > lo {
                ((1u32 << (t.rows - lo)) - 1) as __mmask16
            } else {
                0
            };
        }
        let mut acc = [[_mm512_setzero_ps(); V]; N];
        for p in 0..t.k {
            let ap = t.a.wrapping_add(p * t.lda);
            // A's columns are `lda` apart (1 KiB for a 256-wide layer): no hardware prefetcher
            // follows that, so fetch column p + PREFETCH_K now. (MLP layer 1: 90-110 µs
            // without, 60-65 µs with.)
            let pp = ap.wrapping_add(PREFETCH_K * t.lda);
            for v in 0..V {
                // A prefetch is a hint: any address is allowed.
                _mm_prefetch::<_MM_HINT_T0>(pp.wrapping_add(16 * v).cast());
            }
            let mut av = [_mm512_setzero_ps(); V];
            for v in 0..V {
                // SAFETY: rows < t.rows of column p of A; masked lanes are not accessed.
                av[v] = unsafe { _mm512_maskz_loadu_ps(mask[v], ap.wrapping_add(16 * v)) };
            }
            for (j, a) in acc.iter_mut().enumerate() {
                // SAFETY: B(p, j) with j < cols.
                let bv = _mm512_set1_ps(unsafe { *t.b.add(p + j * t.ldb) });
                for v in 0..V {
                    a[v] = _mm512_fmadd_ps(av[v], bv, a[v]);
                }
            }
        }
        let alpha = _mm512_set1_ps(t.alpha);
        let beta = _mm512_set1_ps(t.beta);
        let mut bias = [_mm512_setzero_ps(); V];
        if !t.bias.is_null() {
            for v in 0..V {
                // SAFETY: the bias holds this block's rows; masked lanes are not accessed.
                bias[v] = unsafe { _mm512_maskz_loadu_ps(mask[v], t.bias.wrapping_add(16 * v)) };
            }
        }
        let zero = _mm512_setzero_ps();
        for (j, a) in acc.iter().enumerate() {
            let cj = t.c.wrapping_add(j * t.ldc);
            for v in 0..V {
                let mut r = _mm512_mul_ps(a[v], alpha);
                let dst = cj.wrapping_add(16 * v);
                // SAFETY: rows < t.rows of column j of C; masked lanes are not accessed.
                unsafe {
                    if t.beta != 0.0 {
                        r = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask[v], dst), beta, r);
                    }
                    r = _mm512_add_ps(r, bias[v]);
                    if t.relu {
                        // max(r, 0) with NaN kept (the second operand is returned for NaN).
                        r = _mm512_max_ps(zero, r);
                    }
                    _mm512_mask_storeu_ps(dst, mask[v], r);
                }
            }
        }
    }

    /// # Safety
    /// As [`super::sgemm_epilogue`]; `t.rows <= TMB`, `cols <= TNB`; `t.a` points at row 0 of
    /// op(A) (column 0 of A).
    pub(super) unsafe fn tile_at(t: &Tile, cols: usize) {
        // SAFETY: forwarded.
        unsafe {
            match t.rows {
                6 => at_cols::<6>(t, cols),
                5 => at_cols::<5>(t, cols),
                4 => at_cols::<4>(t, cols),
                3 => at_cols::<3>(t, cols),
                2 => at_cols::<2>(t, cols),
                _ => at_cols::<1>(t, cols),
            }
        }
    }

    #[inline(always)]
    unsafe fn at_cols<const R: usize>(t: &Tile, cols: usize) {
        // SAFETY: forwarded.
        unsafe {
            match cols {
                4 => block_at::<R, 4>(t),
                3 => block_at::<R, 3>(t),
                2 => block_at::<R, 2>(t),
                _ => block_at::<R, 1>(t),
            }
        }
    }

    /// `R` rows of op(A) × `N` columns of B: dot products along k, 16 lanes at a time.
    #[target_feature(enable = "avx512f,fma")]
    unsafe fn block_at<const R: usize, const N: usize>(t: &Tile) {
        let mut acc = [[_mm512_setzero_ps(); N]; R];
        let full = t.k / 16 * 16;
        let tail = t.k - full;
        let step = |acc: &mut [[__m512; N]; R], p: usize, mask: __mmask16| {
            let mut av = [_mm512_setzero_ps(); R];
            for (r, v) in av.iter_mut().enumerate() {
                // SAFETY: op(A)(r, p..p+16) = A(p.., r) inside column r; masked lanes are not
                // accessed.
                *v = unsafe { _mm512_maskz_loadu_ps(mask, t.a.wrapping_add(r * t.lda + p)) };
            }
            for j in 0..N {
                // SAFETY: B(p.., j) inside column j; masked lanes are not accessed.
                let bv = unsafe { _mm512_maskz_loadu_ps(mask, t.b.wrapping_add(j * t.ldb + p)) };
                for (row, a) in acc.iter_mut().zip(&av) {
                    row[j] = _mm512_fmadd_ps(*a, bv, row[j]);
                }
            }
        };
        let mut p = 0;
        while p < full {
            step(&mut acc, p, 0xffff);
            p += 16;
        }
        if tail > 0 {
            step(&mut acc, p, ((1u32 << tail) - 1) as __mmask16);
        }
        for j in 0..N {
            let cj = t.c.wrapping_add(j * t.ldc);
            for (r, a) in acc.iter().enumerate() {
                let mut v = t.alpha * _mm512_reduce_add_ps(a[j]);
                // SAFETY: C(r, j) and bias[r] with r < t.rows, j < cols.
                unsafe {
                    if t.beta != 0.0 {
                        v += t.beta * *cj.add(r);
                    }
                    if !t.bias.is_null() {
                        v += *t.bias.add(r);
                    }
                    if t.relu && v < 0.0 {
                        v = 0.0;
                    }
                    *cj.add(r) = v;
                }
            }
        }
    }
}
