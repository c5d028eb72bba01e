//! Stride-1 1×1 convolutions between blocked tensors (`[n, c / 16, h, w, 16]`), over the
//! weights [`super::packed`] packs (`[oc blocks][c_in][32]`): a matrix product whose
//! register tile is [`T`] consecutive positions × 32 output channels (28 accumulators),
//! stepping through the input channels 16 at a time with every load's offset a constant,
//! where the packed kernel's depth steps read an offset table and count out the next
//! block's weight prefetches one step at a time. The same sums in the same order as that
//! kernel, so the same bits. Like it, the tiles go over the input channels in passes of
//! [`PASS`] (a pass's 32 KB of weights in L1, the sums kept in the output between
//! passes); where the weights pass [`OWN_RANGE_BYTES`] each thread takes one range of
//! whole blocks and asks for its next block's weights in L2 over each pass, else one
//! range of positions, every block (its input read once).
//!
//! Isolated (`packed_bench`, blocked, two threads, weights from 20 copies), against the
//! packed kernel in the same process: 1×1 1024->256 at 14×14 0.317-0.323 ms against
//! 0.347-0.348, 256->1024 with its residual 0.294-0.300 against 0.330-0.333, 64->256 at
//! 56×56 with its residual 0.337-0.346 against 0.388-0.478, 2048->512 at 7×7 0.408-0.425
//! against 0.479-0.562. In ResNet-50 (`--runs 5 --profile 8`, `RB_CONV_POINTWISE=0` and on,
//! alternated twice) every stride-1 1×1 kind ran faster (256->1024 ×6 2.12 / 2.19 ->
//! 1.94 / 1.91 ms, 64->256 ×4 1.53 / 1.57 -> 1.36 / 1.35, 1024->256 ×5 1.87 / 1.92 ->
//! 1.84 / 1.80), the node minimums summed 25.98 / 26.90 -> 25.13 / 24.52 ms.

use super::packed::Args;
use crate::device::cpu::par::{SendPtr, for_range};
use crate::ops::conv::{Activation, BLOCK_LANES as LANES, Blocked, ConvGeom};

/// Positions of one register tile.
const T: usize = 14;

/// Output channels of one packed block.
const OB: usize = 32;

/// Input channels of one pass over a block's tiles (32 KB of weights).
const PASS: usize = 256;

/// Weights (bytes) past which each thread takes one range of whole output-channel blocks
/// (below: one range of positions, every block).
const OWN_RANGE_BYTES: usize = 512 << 10;

/// Where a tile's results go: `y` (16 channels a vector, the next 16 `ys` values on),
/// `valid` channels, with the bias (null: none), residual (null: none) and relu; `partial`:
/// (the sums so far are in `y`, this pass's are stored as they are).
#[derive(Clone, Copy)]
struct Out {
    y: *mut f32,
    res: *const f32,
    bias: *const f32,
    ys: usize,
    valid: usize,
    relu: bool,
    partial: (bool, bool),
    /// 64-byte lines from this pointer to ask for in L2 over the tile's steps
    pf: (*const f32, usize),
}

/// True when [`forward`] runs `g` in `layout` (`RB_CONV_POINTWISE=0` turns it off): a 1×1
/// kernel at stride 1 without padding (a strided one's gathered positions too), both
/// tensors blocked, planes of a multiple of 7 positions ([`super::packed::applies_blocked`]
/// is the caller's check).
pub fn applies(g: &ConvGeom, layout: Blocked) -> bool {
    static ENABLED: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        std::env::var("RB_CONV_POINTWISE").map_or(true, |v| v.trim() != "0")
    });
    *ENABLED
        && layout.x
        && layout.y
        && g.k_vol() == 1
        && g.stride == [1, 1, 1]
        && g.pad == [0; 3]
        && g.out_vol().is_multiple_of(T / 2)
}

/// `y = act(conv(x, w) + bias + res)`, blocked, over weights packed by
/// [`super::packed::pack`].
///
/// # Safety
/// As [`super::packed::forward`]'s, for blocked tensors; [`applies`] said yes.
pub unsafe fn forward(a: Args<'_>) {
    let (g, x, w, bias, res, act, y) = a;
    #[cfg(target_arch = "x86_64")]
    {
        let (c_in, c_out) = (g.c_in, g.c_out);
        let hw = g.out_vol();
        let nob = c_out.div_ceil(OB);
        let threads = crate::device::cpu::par::num_threads();
        let ws = SendPtr(w as *mut f32);
        let bs = SendPtr(bias.map_or(std::ptr::null(), |b| b.as_ptr()) as *mut f32);
        let relu = act == Activation::Relu;
        let other = !matches!(act, Activation::None | Activation::Relu);
        for n in 0..g.n {
            // SAFETY: image n of each tensor (caller's contract).
            let (xs, ys, rs) = unsafe {
                (
                    SendPtr(x.add(n * c_in * hw) as *mut f32),
                    SendPtr(y.add(n * c_out * hw)),
                    SendPtr(res.map_or(std::ptr::null(), |r| r.add(n * c_out * hw)) as *mut f32),
                )
            };
            // Positions [p0, p1) of block b, in passes of PASS input channels, every tile a
            // pass, the sums kept in y between them (a pass's weights stay in L1); `next`:
            // the thread's next block, whose weights each pass asks for in L2 over its tiles.
            let block = move |b: usize, p0: usize, p1: usize, next: bool| {
                let valid = OB.min(c_out - b * OB);
                let first = b * OB * hw;
                let tiles = (p1 - p0) / T + usize::from(!(p1 - p0).is_multiple_of(T));
                // SAFETY: block b of the weights; positions p0..p1 of channels b·OB.. of y
                // and res (disjoint per call); every tile's positions inside the plane.
                unsafe {
                    let wb = ws.get().add(b * c_in * OB) as *const f32;
                    let bias = if bs.get().is_null() {
                        std::ptr::null()
                    } else {
                        bs.get().add(b * OB) as *const f32
                    };
                    let passes = c_in.div_ceil(PASS);
                    for k in 0..passes {
                        let (c0, c1) = (k * PASS, ((k + 1) * PASS).min(c_in));
                        let wk = wb.add(c0 * OB);
                        let xk = xs.get().add(c0 / LANES * hw * LANES) as *const f32;
                        let lines = (c1 - c0) * OB / 16;
                        let share = lines.div_ceil(tiles);
                        let nw = wb.wrapping_add(c_in * OB + c0 * OB);
                        let (mut p, mut i) = (p0, 0);
                        while p < p1 {
                            let pf = if next {
                                let l0 = (i * share).min(lines);
                                (nw.wrapping_add(l0 * 16), share.min(lines - l0))
                            } else {
                                (std::ptr::null(), 0)
                            };
                            let at = first + p * LANES;
                            let r = if rs.get().is_null() {
                                std::ptr::null()
                            } else {
                                rs.get().add(at) as *const f32
                            };
                            let out = Out {
                                y: ys.get().add(at),
                                res: r,
                                bias,
                                ys: hw * LANES,
                                valid,
                                relu,
                                partial: (k > 0, k + 1 < passes),
                                pf,
                            };
                            let xp = xk.add(p * LANES);
                            if p1 - p >= T {
                                tile::<T>(xp, hw * LANES, c1 - c0, wk, out);
                                p += T;
                            } else {
                                tile::<{ T / 2 }>(xp, hw * LANES, c1 - c0, wk, out);
                                p += T / 2;
                            }
                            i += 1;
                        }
                    }
                    if other {
                        for q in 0..valid.div_ceil(LANES) {
                            let plane = ys.get().add(first + q * hw * LANES);
                            let v = std::slice::from_raw_parts_mut(
                                plane.add(p0 * LANES),
                                (p1 - p0) * LANES,
                            );
                            for e in v {
                                *e = act.apply_f32(*e);
                            }
                        }
                    }
                }
            };
            if c_in * c_out * 4 > OWN_RANGE_BYTES {
                // large weights: each thread one range of whole blocks, read once
                for_range(nob, nob.div_ceil(threads), move |b0, b1| {
                    for b in b0..b1 {
                        block(b, 0, hw, b + 1 < b1);
                    }
                });
            } else {
                // small ones (from L2 for every block): each thread one range of positions,
                // its input read once
                let units = hw / (T / 2);
                for_range(units, units.div_ceil(threads), move |u0, u1| {
                    for b in 0..nob {
                        block(b, u0 * (T / 2), u1 * (T / 2), false);
                    }
                });
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (g, x, w, bias, res, act, y);
        unreachable!("packed::applies is false off x86_64");
    }
}

/// One register tile: `TT` positions from `x` (a block of 16 channels' values of a position
/// one vector, blocks `cbs` values apart) × 32 channels of weights `w` (`[c_in][32]`,
/// aligned), over `c_in` channels, to `out`.
///
/// # Safety
/// The pointers address what they describe; the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn tile<const TT: usize>(x: *const f32, cbs: usize, c_in: usize, w: *const f32, out: Out) {
    use std::arch::x86_64::*;
    let Out {
        y,
        res,
        bias,
        ys,
        valid,
        relu,
        partial,
        pf,
    } = out;
    let mut acc = [[_mm512_setzero_ps(); 2]; TT];
    // SAFETY: caller's contract.
    unsafe {
        if partial.0 {
            for q in 0..2 {
                if q * 16 >= valid {
                    break;
                }
                for (t, a) in acc.iter_mut().enumerate() {
                    a[q] = _mm512_loadu_ps(y.add(q * ys + t * LANES));
                }
            }
        }
        let mut wp = w;
        let cbs_n = c_in / LANES;
        let per = pf.1.div_ceil(cbs_n);
        for cb in 0..cbs_n {
            let xb = x.add(cb * cbs);
            for l in (cb * per)..((cb + 1) * per).min(pf.1) {
                _mm_prefetch::<_MM_HINT_T1>(pf.0.add(l * 16) as *const i8);
            }
            for j in 0..LANES {
                let w0 = _mm512_load_ps(wp);
                let w1 = _mm512_load_ps(wp.add(16));
                wp = wp.add(OB);
                for (t, a) in acc.iter_mut().enumerate() {
                    let b = _mm512_set1_ps(*xb.add(t * LANES + j));
                    a[0] = _mm512_fmadd_ps(w0, b, a[0]);
                    a[1] = _mm512_fmadd_ps(w1, b, a[1]);
                }
            }
        }
        let zero = _mm512_setzero_ps();
        for q in 0..2 {
            if q * 16 >= valid {
                break;
            }
            let bv = if bias.is_null() {
                zero
            } else {
                _mm512_loadu_ps(bias.add(q * 16))
            };
            for (t, a) in acc.iter().enumerate() {
                let at = q * ys + t * LANES;
                if partial.1 {
                    _mm512_storeu_ps(y.add(at), a[q]);
                    continue;
                }
                let mut v = _mm512_add_ps(a[q], bv);
                if !res.is_null() {
                    v = _mm512_add_ps(v, _mm512_loadu_ps(res.add(at)));
                }
                if relu {
                    // (max(0, NaN) is NaN, as relu's)
                    v = _mm512_max_ps(zero, v);
                }
                _mm512_storeu_ps(y.add(at), v);
            }
        }
    }
}
