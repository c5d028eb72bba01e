//! f32 GEMM on AVX-512 in the style of BLIS, with no BLAS library: column-major
//! `C (m×n) = alpha·op(A)·op(B) + beta·C` for any transposes and leading dimensions.
//!
//! Why our own kernel and not a crate: on the 2-core AVX-512 (Zen 4) machine the anchors
//! come from, quiet, NumPy's OpenBLAS 0.3.31 ran n = 1024 / 2048 at 269 / 295 GFLOP/s,
//! `matrixmultiply` 0.3 (AVX2/FMA 8×8 kernels, no AVX-512) at 224 / 221 and the `gemm`
//! crate 0.19 (sarah-ek's, candle's) at 180 / 179 (`../shared/bench/ANCHORS.md`): neither
//! reaches 0.95× OpenBLAS. Re-measured here (issue 15) with `gemm`'s `x86-v4` AVX-512
//! kernels too, the machine was shared with other builds and too noisy to rank the crates
//! (`gemm` 77-106 / 66-84 GFLOP/s, `matrixmultiply` 64-93 / 63-86, OpenBLAS 56-69 / 65-91,
//! in the same minutes). This kernel matched OpenBLAS one thread against one thread,
//! interleaved: 94 vs 95 GFLOP/s at 1024, 91 vs 84 at 2048; two threads reached 172 / 185
//! in a quiet moment (OpenBLAS 194 / 187). So the large products run this kernel, which we
//! can tune; `matrixmultiply` stays the path of small products and of machines without
//! AVX-512.
//!
//! The loops are BLIS's five around a micro-kernel:
//! - `pc` over k in blocks of [`KC`]: op(B)'s `KC × n` panel is packed into column slivers
//!   of [`NR`] (each `KC × NR`, 18 KiB, stays in L1 while it is used) and op(A)'s `m × KC`
//!   panel into row slivers of [`MR`], both in parallel;
//! - the rows are split over the threads in blocks of at most [`MC`] (a thread's packed A
//!   block, `MC × KC`, stays in its own L2), as many as a multiple of the threads (at
//!   least two each) so the threads get equal shares;
//! - within a block, `jr` over the B slivers and `ir` over the A slivers call the
//!   micro-kernel: a 32 × 12 tile of C in 24 zmm accumulators; per step of k, 2 loads of A,
//!   12 broadcasts of B and 24 FMAs. Edge tiles (zero-padded in the packs) compute into a
//!   local tile and store only the rows and columns that exist.
//!
//! `beta == 0` never reads C (NaN in C does not leak), as BLAS requires.

use super::par::{SendPtr, for_range};

/// Rows of the micro-tile (2 vectors of 16).
pub const MR: usize = 32;
/// Columns of the micro-tile.
pub const NR: usize = 12;
/// Depth of a packed panel.
pub const KC: usize = 384;
/// Most rows a thread's block of packed A holds (MC × KC × 4 bytes = 720 KiB: L2).
pub const MC: usize = 480;

/// True when this machine runs [`sgemm`] (AVX-512F and FMA; `RB_GEMM_PACKED=0` turns it
/// off) and the product is large enough for packing to pay: below, the caller's other
/// GEMM is as fast.
pub fn applies(m: usize, n: usize, k: usize) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ENABLED: std::sync::LazyLock<bool> =
            std::sync::LazyLock::new(|| super::avx512_kernel_on(Some("RB_GEMM_PACKED")));
        *ENABLED
            && m >= 64
            && n >= 32
            && k >= 32
            && m.saturating_mul(n).saturating_mul(k) >= 1 << 21
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (m, n, k);
        false
    }
}

/// The packing buffer kept between calls (up to [`SPARE_MAX`] floats), so a steady stream
/// of products does not fault in fresh pages every call (3 MiB at n = 1024: ~4 % of the
/// product). Taken by one call at a time; a concurrent call allocates its own.
static SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());
const SPARE_MAX: usize = 8 << 20;

/// A 64-byte aligned f32 buffer. Every element a product reads is written by the packing
/// first (padding included), so a reused buffer needs no clearing; a new one is zeroed by
/// `vec!` (fresh pages from the allocator, which costs what touching them does).
struct Packed {
    buf: Vec<f32>,
    off: usize,
}

impl Packed {
    fn new(len: usize) -> Self {
        let mut buf = SPARE
            .try_lock()
            .map(|mut g| std::mem::take(&mut *g))
            .unwrap_or_default();
        if buf.len() < len + 16 {
            buf = vec![0f32; len + 16];
        }
        let off = super::aligned_offset(buf.as_ptr());
        Packed { buf, off }
    }
    fn ptr(&mut self) -> *mut f32 {
        // SAFETY: off < 16 and the buffer holds len + 16 values.
        unsafe { self.buf.as_mut_ptr().add(self.off) }
    }
}

impl Drop for Packed {
    fn drop(&mut self) {
        if self.buf.len() <= SPARE_MAX
            && let Some(mut g) = SPARE.try_lock()
            && g.len() < self.buf.len()
        {
            *g = std::mem::take(&mut self.buf);
        }
    }
}

/// `C = alpha·op(A)·op(B) + beta·C`; op(A) is `m × k` with element (i, p) at
/// `a[i·rsa + p·csa]`, op(B) `k × n` with (p, j) at `b[p·rsb + j·csb]`, C column-major
/// with leading dimension `ldc`.
///
/// # Safety
/// The pointers address matrices of those sizes and strides; C does not overlap A or B;
/// [`applies`] said yes (the CPU has AVX-512F and FMA).
#[allow(clippy::too_many_arguments)]
pub unsafe fn sgemm(
    m: usize,
    n: usize,
    k: usize,
    alpha: f32,
    a: *const f32,
    rsa: isize,
    csa: isize,
    b: *const f32,
    rsb: isize,
    csb: isize,
    beta: f32,
    c: *mut f32,
    ldc: usize,
) {
    let threads = super::par::num_threads().max(1);
    // Row blocks: at most MC rows, whole slivers, and a multiple of the thread count (two
    // per thread at least, where there are enough slivers) so the pool's threads get equal
    // shares: 3 blocks on 2 threads would leave one idle a third of the time.
    let slivers = m.div_ceil(MR);
    let want = m.div_ceil(MC).max(2 * threads).div_ceil(threads) * threads;
    let mc = m.div_ceil(want.min(slivers)).div_ceil(MR) * MR;
    let blocks = m.div_ceil(mc);
    let (mp, np) = (m.div_ceil(MR), n.div_ceil(NR));
    let kc_max = k.min(KC);
    // One buffer: op(A)'s panel, then op(B)'s (a multiple of 16 floats in: still aligned).
    let a_len = (mp * MR * kc_max).div_ceil(16) * 16;
    let mut packs = Packed::new(a_len + np * NR * kc_max);
    let pa_p = SendPtr(packs.ptr());
    // SAFETY: the buffer holds a_len + np·NR·kc_max values from ptr().
    let pb_p = SendPtr(unsafe { packs.ptr().add(a_len) });
    let (a, b, c) = (SendPtr(a as *mut f32), SendPtr(b as *mut f32), SendPtr(c));
    let mut p0 = 0;
    while p0 < k {
        let kc = (k - p0).min(KC);
        // After the first panel C holds the partial sums: add to it.
        let beta_p = if p0 == 0 { beta } else { 1.0 };
        // Pack op(B)'s panel (NR slivers) and op(A)'s (MR slivers), in parallel.
        for_range(np + mp, 4, |s0, s1| {
            for s in s0..s1 {
                // SAFETY: the slivers are disjoint parts of the packs; the reads are in the
                // matrices (caller's contract).
                unsafe {
                    if s < np {
                        pack_b(
                            b.get(),
                            rsb,
                            csb,
                            p0,
                            kc,
                            s * NR,
                            n,
                            pb_p.get().add(s * NR * kc),
                        );
                    } else {
                        let s = s - np;
                        pack_a(
                            a.get(),
                            rsa,
                            csa,
                            p0,
                            kc,
                            s * MR,
                            m,
                            pa_p.get().add(s * MR * kc),
                        );
                    }
                }
            }
        });
        for_range(blocks, 1, |b0, b1| {
            for blk in b0..b1 {
                let i0 = blk * mc;
                let i1 = (i0 + mc).min(m);
                for jb in 0..np {
                    let j0 = jb * NR;
                    let nr = (n - j0).min(NR);
                    // SAFETY: the sliver is packed above.
                    let bs = unsafe { pb_p.get().add(jb * NR * kc) };
                    let mut i = i0;
                    while i < i1 {
                        let mr = (i1 - i).min(MR);
                        // SAFETY: as above; the tile (i.., j0..) is in C and only this
                        // block's thread writes rows i0..i1.
                        unsafe {
                            let asl = pa_p.get().add((i / MR) * MR * kc);
                            let ct = c.get().add(i + j0 * ldc);
                            tile(kc, asl, bs, ct, ldc, mr, nr, alpha, beta_p);
                        }
                        i += MR;
                    }
                }
            }
        });
        p0 += kc;
    }
    drop(packs);
}

/// Packs rows `i0..i0+MR` of op(A)'s columns `p0..p0+kc` as `kc` groups of MR values (zero
/// past row `m`).
///
/// # Safety
/// `a` addresses op(A); `dst` is writable for `MR·kc` values.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_a(
    a: *const f32,
    rsa: isize,
    csa: isize,
    p0: usize,
    kc: usize,
    i0: usize,
    m: usize,
    dst: *mut f32,
) {
    let rows = (m - i0).min(MR);
    unsafe {
        if rsa == 1 {
            for p in 0..kc {
                let src = a.offset((p0 + p) as isize * csa + i0 as isize);
                let d = dst.add(p * MR);
                std::ptr::copy_nonoverlapping(src, d, rows);
                for i in rows..MR {
                    *d.add(i) = 0.0;
                }
            }
        } else {
            for i in 0..MR {
                if i < rows {
                    let src = a.offset((i0 + i) as isize * rsa + p0 as isize * csa);
                    for p in 0..kc {
                        *dst.add(p * MR + i) = *src.offset(p as isize * csa);
                    }
                } else {
                    for p in 0..kc {
                        *dst.add(p * MR + i) = 0.0;
                    }
                }
            }
        }
    }
}

/// Packs columns `j0..j0+NR` of op(B)'s rows `p0..p0+kc` as `kc` groups of NR values (zero
/// past column `n`).
///
/// # Safety
/// `b` addresses op(B); `dst` is writable for `NR·kc` values.
#[allow(clippy::too_many_arguments)]
unsafe fn pack_b(
    b: *const f32,
    rsb: isize,
    csb: isize,
    p0: usize,
    kc: usize,
    j0: usize,
    n: usize,
    dst: *mut f32,
) {
    let cols = (n - j0).min(NR);
    unsafe {
        if csb == 1 {
            for p in 0..kc {
                let src = b.offset((p0 + p) as isize * rsb + j0 as isize);
                let d = dst.add(p * NR);
                std::ptr::copy_nonoverlapping(src, d, cols);
                for j in cols..NR {
                    *d.add(j) = 0.0;
                }
            }
        } else {
            for j in 0..NR {
                if j < cols {
                    let src = b.offset(p0 as isize * rsb + (j0 + j) as isize * csb);
                    for p in 0..kc {
                        *dst.add(p * NR + j) = *src.offset(p as isize * rsb);
                    }
                } else {
                    for p in 0..kc {
                        *dst.add(p * NR + j) = 0.0;
                    }
                }
            }
        }
    }
}

/// One tile: the full micro-kernel straight into C, or an edge through a local tile.
///
/// # Safety
/// As [`kernel`]; `c` addresses an `mr × nr` tile.
#[allow(clippy::too_many_arguments)]
#[inline]
unsafe fn tile(
    kc: usize,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    mr: usize,
    nr: usize,
    alpha: f32,
    beta: f32,
) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        if mr == MR && nr == NR {
            kernel(kc, a, b, c, ldc, alpha, beta);
        } else {
            let mut t = [0f32; MR * NR];
            kernel(kc, a, b, t.as_mut_ptr(), MR, 1.0, 0.0);
            for j in 0..nr {
                for i in 0..mr {
                    let p = c.add(i + j * ldc);
                    let v = alpha * t[i + j * MR];
                    *p = if beta == 0.0 { v } else { v + beta * *p };
                }
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (kc, a, b, c, ldc, mr, nr, alpha, beta);
        unreachable!("gemm_packed::applies is false off x86_64");
    }
}

/// The 32 × 12 micro-kernel: `C = alpha·A·B + beta·C` over packed slivers of depth `kc`.
///
/// # Safety
/// `a` holds `kc·MR` values, `b` `kc·NR`, `c` a 32 × 12 column-major tile with leading
/// dimension `ldc`; the CPU has AVX-512F and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn kernel(
    kc: usize,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
    ldc: usize,
    alpha: f32,
    beta: f32,
) {
    use std::arch::x86_64::*;
    macro_rules! acc {
        ($($n:ident),*) => { $(let mut $n = _mm512_setzero_ps();)* };
    }
    acc!(c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51);
    acc!(c60, c61, c70, c71, c80, c81, c90, c91, ca0, ca1, cb0, cb1);
    let (mut ap, mut bp) = (a, b);
    unsafe {
        for _ in 0..kc {
            let a0 = _mm512_load_ps(ap);
            let a1 = _mm512_load_ps(ap.add(16));
            _mm_prefetch::<_MM_HINT_T0>(ap.wrapping_add(MR * 8) as *const i8);
            macro_rules! step {
                ($j:expr, $x:ident, $y:ident) => {
                    let bj = _mm512_set1_ps(*bp.add($j));
                    $x = _mm512_fmadd_ps(a0, bj, $x);
                    $y = _mm512_fmadd_ps(a1, bj, $y);
                };
            }
            step!(0, c00, c01);
            step!(1, c10, c11);
            step!(2, c20, c21);
            step!(3, c30, c31);
            step!(4, c40, c41);
            step!(5, c50, c51);
            step!(6, c60, c61);
            step!(7, c70, c71);
            step!(8, c80, c81);
            step!(9, c90, c91);
            step!(10, ca0, ca1);
            step!(11, cb0, cb1);
            ap = ap.add(MR);
            bp = bp.add(NR);
        }
        let va = _mm512_set1_ps(alpha);
        let vb = _mm512_set1_ps(beta);
        macro_rules! store {
            ($j:expr, $x:ident, $y:ident) => {
                let p = c.add($j * ldc);
                let (mut x, mut y) = (_mm512_mul_ps($x, va), _mm512_mul_ps($y, va));
                if beta != 0.0 {
                    x = _mm512_fmadd_ps(_mm512_loadu_ps(p), vb, x);
                    y = _mm512_fmadd_ps(_mm512_loadu_ps(p.add(16)), vb, y);
                }
                _mm512_storeu_ps(p, x);
                _mm512_storeu_ps(p.add(16), y);
            };
        }
        store!(0, c00, c01);
        store!(1, c10, c11);
        store!(2, c20, c21);
        store!(3, c30, c31);
        store!(4, c40, c41);
        store!(5, c50, c51);
        store!(6, c60, c61);
        store!(7, c70, c71);
        store!(8, c80, c81);
        store!(9, c90, c91);
        store!(10, ca0, ca1);
        store!(11, cb0, cb1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every transpose and edge shape against a plain triple loop (when the CPU runs it).
    #[test]
    fn matches_reference() {
        if !applies(64, 32, 1 << 12) {
            return;
        }
        for &(m, n, k) in &[
            (64, 32, 1024),
            (97, 45, 800),
            (513, 130, 33),
            (32, 12, 4096),
        ] {
            for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                let a: Vec<f32> = (0..m * k)
                    .map(|i| ((i * 37 % 101) as f32) / 50.0 - 1.0)
                    .collect();
                let b: Vec<f32> = (0..k * n)
                    .map(|i| ((i * 53 % 97) as f32) / 48.0 - 1.0)
                    .collect();
                // op(A) (i, p): column-major A (m×k, lda m) or Aᵀ stored k×m (lda k).
                let (rsa, csa) = if ta { (k as isize, 1) } else { (1, m as isize) };
                let (rsb, csb) = if tb { (n as isize, 1) } else { (1, k as isize) };
                let ldc = m + 3;
                let mut c = vec![f32::NAN; ldc * n];
                unsafe {
                    sgemm(
                        m,
                        n,
                        k,
                        1.5,
                        a.as_ptr(),
                        rsa,
                        csa,
                        b.as_ptr(),
                        rsb,
                        csb,
                        0.0,
                        c.as_mut_ptr(),
                        ldc,
                    )
                };
                let mut c2 = c.clone();
                unsafe {
                    sgemm(
                        m,
                        n,
                        k,
                        1.0,
                        a.as_ptr(),
                        rsa,
                        csa,
                        b.as_ptr(),
                        rsb,
                        csb,
                        -1.0,
                        c2.as_mut_ptr(),
                        ldc,
                    )
                };
                for j in 0..n {
                    for i in 0..m {
                        let mut s = 0f64;
                        for p in 0..k {
                            s += a[(i as isize * rsa + p as isize * csa) as usize] as f64
                                * b[(p as isize * rsb + j as isize * csb) as usize] as f64;
                        }
                        let got = c[i + j * ldc] as f64;
                        let tol = 1e-4 * (1.0 + s.abs() * 1.5);
                        assert!(
                            (got - 1.5 * s).abs() <= tol,
                            "{m}x{n}x{k} {ta} {tb} ({i},{j}): {got} vs {}",
                            1.5 * s
                        );
                        let got2 = c2[i + j * ldc] as f64;
                        assert!((got2 - (s - 1.5 * s)).abs() <= 2.0 * tol, "beta: {got2}");
                    }
                    for i in m..ldc {
                        assert!(c[i + j * ldc].is_nan(), "wrote outside the matrix");
                    }
                }
            }
        }
    }
}
