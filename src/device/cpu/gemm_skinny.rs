//! f32 GEMM for skinny products on AVX-512: column-major `C (m×n) = alpha·A·B + beta·C` with
//! neither operand transposed, `n <= 64`, `m >= 32` and A at most 4 MiB
//! (larger A: the BLAS's packing pays for itself). That is a dense layer at a small batch: row-major
//! `Y[batch, out] = X[batch, in] · W[in, out]` is this product with `m = out`, `n = batch`.
//! A BLAS packs all of A (the weights, `m × k`) on every call, which costs about as much as
//! the arithmetic when `n` is small; this kernel reads A's columns in place instead. Register
//! blocks of 48 rows × 8 columns (24 accumulators: per step of k, 3 loads of A, 8 broadcasts
//! of B, 24 FMAs); tiles are ordered row block first, so one row block's panel of A (48 × k)
//! stays in L2 while every column block uses it, and row blocks are split over the pool.
//! Tiny products run on the calling thread.

use super::par::{SendPtr, for_range};
use crate::device::blas::{GemmDesc, Transpose};

/// Rows per register block (3 vectors of 16).
const MB: usize = 48;
/// Columns per register block.
const NB: usize = 8;

/// True when [`sgemm`] handles `d` on this machine.
pub fn applies(d: &GemmDesc) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ENABLED: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            std::env::var("RB_GEMM_SKINNY").map_or(true, |v| v.trim() != "0")
                && std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("fma")
        });
        *ENABLED
            && d.trans_a == Transpose::No
            && d.trans_b == Transpose::No
            && d.n <= 64
            && d.m >= 32
            && d.k <= 8192
            && d.m * d.k <= 1 << 20
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = d;
        false
    }
}

/// `C = alpha·A·B + beta·C` (C is not read when `beta == 0`), for a `d` [`applies`] accepts,
/// with `m, n, k >= 1`.
///
/// # Safety
/// `a`, `b`, `c` must address the column-major matrices `d` describes (leading dimensions
/// `d.lda`, `d.ldb`, `d.ldc`), and the CPU must have AVX-512F and FMA (checked by
/// [`applies`]).
pub unsafe fn sgemm(d: &GemmDesc, a: *const f32, b: *const f32, c: *mut f32) {
    #[cfg(target_arch = "x86_64")]
    {
        let (m, n, k) = (d.m, d.n, d.k);
        let (nmb, nnb) = (m.div_ceil(MB), n.div_ceil(NB));
        let tiles = nmb * nnb;
        // About 4 µs of work or less: not worth waking the pool.
        let grain = if m * n * k < (1 << 19) { tiles } else { 1 };
        let (ap, bp, cp) = (SendPtr(a as *mut f32), SendPtr(b as *mut f32), SendPtr(c));
        let (lda, ldb, ldc, alpha, beta) = (d.lda, d.ldb, d.ldc, d.alpha, d.beta);
        for_range(tiles, grain, move |t0, t1| {
            for t in t0..t1 {
                let (i0, j0) = ((t / nnb) * MB, (t % nnb) * NB);
                let t = x86::Tile {
                    k,
                    a: ap.get().wrapping_add(i0),
                    lda,
                    rows: (m - i0).min(MB),
                    b: bp.get().wrapping_add(j0 * ldb),
                    ldb,
                    c: cp.get().wrapping_add(i0 + j0 * ldc),
                    ldc,
                    alpha,
                    beta,
                };
                // SAFETY: caller's contract; tiles write disjoint blocks of C.
                unsafe { x86::tile(&t, (n - j0).min(NB)) };
            }
        });
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (d, a, b, c);
        unreachable!("applies() is false off x86_64");
    }
}

// The AVX-512 intrinsics are stable since Rust 1.89 (the crate's rust-version).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::MB;
    use std::arch::x86_64::*;

    const V: usize = MB / 16;

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
    }

    /// # Safety
    /// As [`super::sgemm`]; `cols <= NB`.
    pub(super) unsafe fn tile(t: &Tile, cols: usize) {
        // SAFETY: forwarded.
        unsafe {
            match (t.rows == MB, cols) {
                (true, 8) => block::<8, true>(t),
                (false, 8) => block::<8, false>(t),
                (_, 7) => block::<7, false>(t),
                (_, 6) => block::<6, false>(t),
                (_, 5) => block::<5, false>(t),
                (_, 4) => block::<4, false>(t),
                (_, 3) => block::<3, false>(t),
                (_, 2) => block::<2, false>(t),
                _ => block::<1, false>(t),
            }
        }
    }

    #[target_feature(enable = "avx512f,fma")]
    unsafe fn block<const N: usize, const FULL: bool>(t: &Tile) {
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
            let mut av = [_mm512_setzero_ps(); V];
            for v in 0..V {
                // SAFETY: rows < t.rows of column p of A; masked lanes are not accessed.
                av[v] = unsafe {
                    if FULL {
                        _mm512_loadu_ps(ap.add(16 * v))
                    } else {
                        _mm512_maskz_loadu_ps(mask[v], ap.wrapping_add(16 * v))
                    }
                };
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
                    _mm512_mask_storeu_ps(dst, mask[v], r);
                }
            }
        }
    }
}
