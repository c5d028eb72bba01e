//! Softmax / log-softmax over contiguous f32 rows with AVX-512 intrinsics.
//!
//! Three passes over a row, the row read from memory once: the maximum; `exp(x - max)`
//! written to the output with its sum; the scaling in place while the row is in L1
//! (log-softmax writes `x - max - ln(sum)` in the third pass instead). Large inputs are
//! bandwidth-bound on a 2-core machine, so while a row computes, the next row's input is
//! prefetched for reading and its output for writing (`prefetchw`): on the benchmark shape
//! that took 2.7 ms to 1.5 ms. (Streaming stores were tried and were slower there.)
//!
//! `exp` is range reduction to `|r| <= ln2/2` with Cephes' degree-6 polynomial in Horner
//! form and `vscalefps` for the power of two, so `exp(-inf)` is exactly 0 and NaN
//! propagates. Rows whose maximum is -inf (or whose values are all NaN) give NaN, as in
//! PyTorch.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// True when this machine runs [`softmax_rows`].
pub fn available() -> bool {
    static OK: std::sync::LazyLock<bool> =
        std::sync::LazyLock::new(|| crate::device::cpu::avx512_kernel_on(None));
    *OK
}

/// `exp(d)` for `d <= 0` (softmax's `x - max`; NaN propagates, -inf gives 0).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn exp16_nonpos(d: __m512) -> __m512 {
    // SAFETY: only called from functions compiled with avx512f and fma.
    unsafe {
        // max(lo, d) keeps a NaN d (the second operand is returned when either is NaN);
        // scalef underflows to exactly 0 below -150 * ln2.
        let d = _mm512_max_ps(_mm512_set1_ps(-104.0), d);
        // n = round(d * log2(e)) with the 1.5 * 2^23 trick (one FMA, one subtraction).
        let magic = _mm512_set1_ps(12_582_912.0);
        let t = _mm512_fmadd_ps(d, _mm512_set1_ps(std::f32::consts::LOG2_E), magic);
        let n = _mm512_sub_ps(t, magic);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693_359_4), d);
        let r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.121_944_4e-4), r);
        // exp(r) on |r| <= ln2/2: Cephes' degree-6 polynomial in Horner form.
        let mut p = _mm512_set1_ps(1.987_569_1e-4);
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.398_199_9e-3));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.333_452e-3));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.166_579_6e-2));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.666_666_5e-1));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0));
        p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0));
        _mm512_scalef_ps(p, n)
    }
}

/// Mask of the first `n` (< 16) lanes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn tail_mask(n: usize) -> __mmask16 {
    ((1u32 << n) - 1) as __mmask16
}

/// Softmax (or log-softmax) of `rows` contiguous rows of `dim` f32 at `x` into `y`.
/// Callers check [`available`].
///
/// # Safety
/// `x` and `y` hold `rows * dim` floats (they may be the same buffer); the CPU has AVX-512F
/// and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
pub unsafe fn softmax_rows(x: *const f32, y: *mut f32, rows: usize, dim: usize, log: bool) {
    let body = dim / 16 * 16;
    let rem = dim % 16;
    let m_tail = tail_mask(rem);
    // SAFETY: every access below is inside row r of x / y (caller's contract); masked
    // loads/stores touch only the first `rem` lanes; prefetches are hints (any address).
    unsafe {
        for r in 0..rows {
            let xr = x.add(r * dim);
            let yr = y.add(r * dim);
            // The next row, fetched while this one computes: x to read, y to own for writing.
            let (xn, yn) = if r + 1 < rows {
                (xr.add(dim), yr.add(dim) as *const f32)
            } else {
                (std::ptr::null(), std::ptr::null())
            };
            // Pass 1: the maximum (NaNs skipped: max_ps(v, acc) returns acc for a NaN v).
            let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
            let (mut a0, mut a1, mut a2, mut a3) = (ninf, ninf, ninf, ninf);
            let mut i = 0;
            while i + 64 <= body {
                a0 = _mm512_max_ps(_mm512_loadu_ps(xr.add(i)), a0);
                a1 = _mm512_max_ps(_mm512_loadu_ps(xr.add(i + 16)), a1);
                a2 = _mm512_max_ps(_mm512_loadu_ps(xr.add(i + 32)), a2);
                a3 = _mm512_max_ps(_mm512_loadu_ps(xr.add(i + 48)), a3);
                i += 64;
            }
            while i < body {
                a0 = _mm512_max_ps(_mm512_loadu_ps(xr.add(i)), a0);
                i += 16;
            }
            if rem > 0 {
                let v = _mm512_maskz_loadu_ps(m_tail, xr.add(i));
                a1 = _mm512_mask_max_ps(a1, m_tail, v, a1);
            }
            let m =
                _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(a0, a1), _mm512_max_ps(a2, a3)));
            if m == f32::NEG_INFINITY {
                // All -inf (PyTorch gives NaN), or NaNs that the comparisons skipped.
                for k in 0..dim {
                    *yr.add(k) = f32::NAN;
                }
                continue;
            }
            let vm = _mm512_set1_ps(m);
            // Pass 2: exp(x - m) into y (softmax only) and its sum.
            let z = _mm512_setzero_ps();
            let (mut s0, mut s1, mut s2, mut s3) = (z, z, z, z);
            let mut i = 0;
            while i + 64 <= body {
                if !xn.is_null() {
                    for o in [0, 16, 32, 48] {
                        _mm_prefetch::<_MM_HINT_T0>(xn.add(i + o).cast());
                        _mm_prefetch::<_MM_HINT_ET0>(yn.add(i + o).cast());
                    }
                }
                let e0 = exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(xr.add(i)), vm));
                let e1 = exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(xr.add(i + 16)), vm));
                let e2 = exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(xr.add(i + 32)), vm));
                let e3 = exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(xr.add(i + 48)), vm));
                if !log {
                    _mm512_storeu_ps(yr.add(i), e0);
                    _mm512_storeu_ps(yr.add(i + 16), e1);
                    _mm512_storeu_ps(yr.add(i + 32), e2);
                    _mm512_storeu_ps(yr.add(i + 48), e3);
                }
                s0 = _mm512_add_ps(s0, e0);
                s1 = _mm512_add_ps(s1, e1);
                s2 = _mm512_add_ps(s2, e2);
                s3 = _mm512_add_ps(s3, e3);
                i += 64;
            }
            while i < body {
                let e = exp16_nonpos(_mm512_sub_ps(_mm512_loadu_ps(xr.add(i)), vm));
                if !log {
                    _mm512_storeu_ps(yr.add(i), e);
                }
                s0 = _mm512_add_ps(s0, e);
                i += 16;
            }
            if rem > 0 {
                let v = _mm512_maskz_loadu_ps(m_tail, xr.add(i));
                let e = _mm512_maskz_mov_ps(m_tail, exp16_nonpos(_mm512_sub_ps(v, vm)));
                if !log {
                    _mm512_mask_storeu_ps(yr.add(i), m_tail, e);
                }
                s1 = _mm512_add_ps(s1, e);
            }
            let sum =
                _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
            // Pass 3 (the row is in L1): scale y (softmax) or write x - (m + ln sum).
            if log {
                let off = _mm512_set1_ps(m + sum.ln());
                let mut i = 0;
                while i < body {
                    _mm512_storeu_ps(yr.add(i), _mm512_sub_ps(_mm512_loadu_ps(xr.add(i)), off));
                    i += 16;
                }
                if rem > 0 {
                    let v = _mm512_maskz_loadu_ps(m_tail, xr.add(i));
                    _mm512_mask_storeu_ps(yr.add(i), m_tail, _mm512_sub_ps(v, off));
                }
            } else {
                let inv = _mm512_set1_ps(1.0 / sum);
                let mut i = 0;
                while i < body {
                    _mm512_storeu_ps(yr.add(i), _mm512_mul_ps(_mm512_loadu_ps(yr.add(i)), inv));
                    i += 16;
                }
                if rem > 0 {
                    let v = _mm512_maskz_loadu_ps(m_tail, yr.add(i));
                    _mm512_mask_storeu_ps(yr.add(i), m_tail, _mm512_mul_ps(v, inv));
                }
            }
        }
    }
}
