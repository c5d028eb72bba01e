//! Direct convolution on AVX-512 for stride-1 and stride-2 1D/2D convolutions (3×3, the
//! 7×7/2 stem and friends): no im2col buffer at all. Stride-2 2-D convolutions whose output
//! is half the input rounded up (see [`phase_split`]) first copy the input into its four
//! phase planes and run as the stride-1 "same"-width kernel over them; other stride-2 rows
//! read 32 inputs per vector of 16 outputs and keep the even lanes. A register block holds `OCB` output channels × up to 64 output
//! positions (`NV` vectors of 16) and accumulates `Σ_{taps, c_in} w · x` with broadcast
//! weights and masked loads of the input (the masks zero the padding, so no padded copy of
//! the input is made). When output rows are as long as input rows (`ow == iw`: "same"
//! padding, the usual 3×3/pad-1 case) a block is 64 consecutive positions of the output
//! plane, across row ends, since each tap then reads 64 consecutive inputs: no lanes are
//! wasted on row tails. Otherwise a block is up to 64 columns of one output row. Tasks take
//! blocks of the output (image × positions; on small "same" planes also × ranges of output
//! channels, so 14×14 and 7×7 planes keep every thread busy) over the device's pool. Bias,
//! a residual (the executor's conv+add) and ReLU are applied in registers before the
//! (masked) store; other activations run over the block right after it is written, while it
//! is in cache.
//!
//! Used by [`super`]'s forward convolution when [`applies`] says so; everything else
//! (other strides, deep stride-2 convolutions outside the phase-plane path, 3D, machines
//! without AVX-512, `RB_CONV_DIRECT=0`) goes through im2col + GEMM or [`super`]'s other
//! uses of this kernel. The packed weights and the phase planes live in buffers kept
//! between calls ([`Spare`]).

use super::Spare;
use crate::device::cpu::par::{SendPtr, for_range};
use crate::ops::conv::{Activation, ConvGeom};

/// Output channels per register block.
const OCB: usize = 6;

/// Output planes this small (ResNet's 7×7): [`super`] runs every convolution as a 1×1 one
/// over its im2col columns here. One register block covers the plane, where a GEMM's tiles
/// of 32 rows would be 2 tiles wide and pack the weights as its large operand (one thread:
/// 3×3 512->512 at 7×7 took 4.6 ms through im2col + GEMM, 3.1 ms so).
pub const SMALL_PLANE: usize = 64;

/// 1×1 convolutions with output planes up to this size (ResNet's 28×28 and smaller; with a
/// stride, over the strided input's columns) run here rather than as a GEMM, with the
/// weights read in place (one thread: 2048->512 at 7×7 2.3 ms -> 1.2 ms, 1024->256 at
/// 14×14 1.4 -> 1.1 ms; at 56×56 the GEMM is as fast or faster).
pub const PLANE_1X1: usize = 1024;

/// Input channels per pass of a 1×1 kernel (64 positions × 256 channels: 64 KiB).
const KCH: usize = 256;

/// Stride-2 convolutions that are not [`phase_split`]'s take the direct kernel's rows only
/// when each output sums at most this many products (`c_in / groups × kernel`): the stem (3 × 7×7 = 147: 4.5 -> 4.1 ms of one
/// thread against im2col + GEMM), not the 3×3/2 ones of 128+ channels, where the GEMM's
/// packing pays off (3.2 against 4.1 ms at 128 channels).
const STRIDE2_MAX_DEPTH: usize = 512;

/// Widest / tallest kernel the direct path takes.
const MAX_KW: usize = 8;
const MAX_KH: usize = 8;

/// True when the direct kernel handles `g` on this machine.
pub fn applies(g: &ConvGeom) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ENABLED: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            crate::device::cpu::avx512_kernel_on(Some("RB_CONV_DIRECT"))
        });
        *ENABLED
            && g.in_sp[0] == 1
            && g.k_sp[0] == 1
            && g.pad[0] == 0
            && g.out_sp[0] == 1
            && ((g.stride[1] == 1 && g.stride[2] == 1)
                || phase_split(g)
                || (g.k_vol() > 1
                    && g.stride[1] <= 2
                    && g.stride[2] <= 2
                    && g.c_in / g.groups * g.k_vol() <= STRIDE2_MAX_DEPTH))
            && (g.k_vol() > 1 || g.out_vol() <= PLANE_1X1)
            && g.k_sp[2] <= MAX_KW
            && g.k_sp[1] <= MAX_KH
            && g.out_sp[2] >= 8
            && g.c_out / g.groups >= 4
            && g.in_sp[1] <= i32::MAX as usize
            && g.in_sp[2] <= i32::MAX as usize
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = g;
        false
    }
}

/// True for the stride-2 convolutions [`forward`] runs over the input's four phase planes
/// (`x[c][2i + a][2j + b]`, one plane per `(a, b)`): 2-D, stride 2, dilation 1, a kernel
/// larger than 1×1, and output planes of half the input's size rounded up (ResNet's 3×3/2
/// pad 1 and 7×7/2 pad 3 convolutions), so each phase plane fits the output plane and each
/// tap reads a phase plane at a fixed offset from the output position: the stride-1
/// "same"-width kernel, with no lanes wasted on the stride and no permutes. One thread,
/// minimum of 30 (ONNX Runtime 2.0-2.2 ms on each in the same runs): the 7×7/2 stem 4.7 ->
/// 2.6 ms (rows with even-lane permutes before), 3×3/2 128->128 at 56×56 3.2 -> 2.3 ms and
/// 256->256 at 28×28 3.3 -> 2.5 ms (im2col + GEMM before; the copy into phase planes is
/// ~0.1 ms of that).
fn phase_split(g: &ConvGeom) -> bool {
    g.ndim == 2
        && g.stride[1] == 2
        && g.stride[2] == 2
        && g.dil[1] == 1
        && g.dil[2] == 1
        && g.k_vol() > 1
        && g.in_sp[1].div_ceil(2) == g.out_sp[1]
        && g.in_sp[2].div_ceil(2) == g.out_sp[2]
}

static PACK_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());
static PHASE_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());

/// Packs `w` `[c_out, cg, kh, kw]` as `[groups][oc blocks][kh][cg][kw][OCB]`, zero-filling
/// the channels past the end of each group.
/// Written in order, reading the block's `OCB` weight rows as streams, in parallel over the
/// blocks: ResNet-50's 256-channel 3×3 weights took 1.1 ms of one thread with a division
/// per element and scattered writes, about a third of the convolution.
fn pack_weights(g: &ConvGeom, w: *const f32) -> Spare {
    let (cg, kg, kv) = (g.c_in / g.groups, g.c_out / g.groups, g.k_vol());
    let (kh, kw) = (g.k_sp[0] * g.k_sp[1], g.k_sp[2]);
    let nob = kg.div_ceil(OCB);
    let blk_len = kv * cg * OCB;
    let mut p = Spare::take(&PACK_SPARE, g.groups * nob * blk_len);
    let ps = SendPtr(p.buf.as_mut_ptr());
    let wsend = SendPtr(w as *mut f32);
    for_range(g.groups * nob, 1, move |b0, b1| {
        let w = wsend.get() as *const f32;
        for gb in b0..b1 {
            let (grp, ob) = (gb / nob, gb % nob);
            let valid = OCB.min(kg - ob * OCB);
            // SAFETY: block gb of p; blocks are disjoint. Rows oc0.. of w (valid of them).
            let blk =
                unsafe { std::slice::from_raw_parts_mut(ps.get().add(gb * blk_len), blk_len) };
            let rows: [&[f32]; OCB] = std::array::from_fn(|j| unsafe {
                std::slice::from_raw_parts(
                    w.add((grp * kg + ob * OCB + j.min(valid - 1)) * cg * kv),
                    cg * kv,
                )
            });
            let mut d = 0;
            for p in 0..kh {
                for ic in 0..cg {
                    for q in 0..kw {
                        let src = ic * kv + p * kw + q;
                        for (j, row) in rows.iter().enumerate() {
                            // channels past the group's end stay zero
                            blk[d + j] = if j < valid { row[src] } else { 0.0 };
                        }
                        d += OCB;
                    }
                }
            }
        }
    });
    p
}

/// Forward convolution `y = act(conv(x, w) + bias + res)` for a geometry [`applies`]
/// accepts; the residual `res` (optional, `y`'s shape) is added in registers before the
/// activation and the store.
///
/// # Safety
/// `x`, `w`, `y` (and `res`) must hold the tensors `g` describes (f32, contiguous NC(D)HW),
/// `res` must not overlap `y`, and the CPU must have AVX-512F and FMA (checked by
/// [`applies`]).
pub unsafe fn forward(
    g: &ConvGeom,
    x: *const f32,
    w: *const f32,
    bias: Option<&[f32]>,
    res: Option<*const f32>,
    act: Activation,
    y: *mut f32,
) {
    #[cfg(target_arch = "x86_64")]
    {
        // 1×1 kernels read the weights in place (each output channel's row is contiguous
        // along the input channels the kernel walks): packing ResNet-50's 2048->512 weights
        // took about as long as the product at 7×7.
        let wp = (g.k_vol() > 1).then(|| pack_weights(g, w));
        let wsrc = wp.as_ref().map_or(w, |p| p.buf.as_ptr());
        // Stride 2 over the phase planes: x[c][2i + a][2j + b] at xq[c][2a + b][i][j],
        // each plane the output plane's size.
        let phase = phase_split(g);
        let xq = phase.then(|| {
            let mut q = Spare::take(&PHASE_SPARE, g.n * g.c_in * 4 * g.out_vol());
            // SAFETY: x holds the input g describes; q holds its phase planes.
            unsafe { split_phases(g, x, q.buf.as_mut_ptr()) };
            q
        });
        let x = xq.as_ref().map_or(x, |q| q.buf.as_ptr());
        let oh = g.out_sp[1];
        let g = *g;
        let (xs, ys, ws) = (
            SendPtr(x as *mut f32),
            SendPtr(y),
            SendPtr(wsrc as *mut f32),
        );
        // (null: no residual)
        let rs = SendPtr(res.unwrap_or(std::ptr::null()) as *mut f32);
        if phase || (g.out_sp[2] == g.in_sp[2] && g.stride[1] == 1 && g.stride[2] == 1) {
            // "Same"-width rows: output and input rows are the same length, so a run of 64
            // consecutive output positions (across row ends) reads runs of 64 consecutive
            // inputs per tap: no lanes are wasted on row tails.
            let blocks = (oh * g.out_sp[2]).div_ceil(64);
            // Small planes (ResNet's 14×14 and 7×7: 4 runs and 1) would leave threads idle,
            // and 13 runs (28×28) on 2 threads one idle for a 13th: their output channels
            // are split too, into at least 8 tasks per thread.
            let nob = (g.c_out / g.groups).div_ceil(OCB);
            let want = 8 * crate::device::cpu::par::num_threads();
            let splits = want.div_ceil(g.n * blocks).clamp(1, nob);
            // 1×1 kernels over many input channels (the small planes' im2col columns: 4608
            // at 7×7) go in passes of KCH channels, accumulating into y, so a pass's inputs
            // stay in cache while every output channel block reads them.
            let cg = g.c_in / g.groups;
            let chunked = g.k_vol() == 1 && matches!(act, Activation::None | Activation::Relu);
            let kch = if chunked { KCH } else { cg.max(1) };
            let passes = cg.div_ceil(kch).max(1);
            for pass in 0..passes {
                let chans = pass * kch..((pass + 1) * kch).min(cg);
                let stage = x86::Stage {
                    chans,
                    first: pass == 0,
                    last: pass + 1 == passes,
                };
                for_range(g.n * blocks * splits, 1, move |r0, r1| {
                    for r in r0..r1 {
                        let (run, sp) = (r / splits, r % splits);
                        // SAFETY: caller's contract; tasks write disjoint output
                        // runs/channels.
                        unsafe {
                            x86::output_run(
                                &g,
                                xs.get(),
                                ws.get(),
                                bias,
                                act,
                                ys.get(),
                                rs.get(),
                                run / blocks,
                                (run % blocks) * 64,
                                sp * nob / splits..(sp + 1) * nob / splits,
                                &stage,
                                phase,
                            )
                        };
                    }
                });
            }
        } else {
            for_range(g.n * oh, 1, move |r0, r1| {
                for r in r0..r1 {
                    // SAFETY: caller's contract; tasks write disjoint output rows.
                    unsafe {
                        x86::output_row(
                            &g,
                            xs.get(),
                            ws.get(),
                            bias,
                            act,
                            ys.get(),
                            rs.get(),
                            r / oh,
                            r % oh,
                        )
                    };
                }
            });
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (g, x, w, bias, res, act, y);
        unreachable!("applies() is false off x86_64");
    }
}

/// Writes the phase planes of `x` (see [`phase_split`]) to `xq` `[n][c_in][4][oh][ow]`:
/// plane `2a + b` of channel c holds `x[c][2i + a][2j + b]` at `(i, j)` for the rows and
/// columns that exist; the rest of the plane (the last row or column of an odd input's
/// phase 1) is left as it was and never read. In parallel over the channels.
///
/// # Safety
/// `x` holds the input `g` describes and `xq` `n · c_in · 4 · oh · ow` values; the CPU has
/// AVX-512F ([`applies`]).
#[cfg(target_arch = "x86_64")]
unsafe fn split_phases(g: &ConvGeom, x: *const f32, xq: *mut f32) {
    let (xs, qs) = (SendPtr(x as *mut f32), SendPtr(xq));
    let g = *g;
    let (iv, ov) = (g.in_vol(), g.out_vol());
    for_range(g.n * g.c_in, 1, move |c0, c1| {
        for c in c0..c1 {
            // SAFETY: channel c of x and of xq; channels are disjoint.
            unsafe { x86::split_channel(&g, xs.get().add(c * iv), qs.get().add(c * 4 * ov)) };
        }
    });
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn split_phases(_g: &ConvGeom, _x: *const f32, _xq: *mut f32) {
    unreachable!("applies() is false off x86_64");
}

// The AVX-512 intrinsics are stable since Rust 1.89 (the crate's rust-version).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{MAX_KW, OCB};
    use crate::ops::conv::{Activation, ConvGeom};
    use std::arch::x86_64::*;

    /// Bits `l` of a 16-lane mask with `0 <= start + l < len`.
    #[inline(always)]
    fn lane_mask(start: isize, len: isize) -> __mmask16 {
        let lo = (-start).clamp(0, 16);
        let hi = (len - start).clamp(0, 16);
        if hi <= lo {
            0
        } else {
            (((1u32 << hi) - 1) & !((1u32 << lo) - 1)) as __mmask16
        }
    }

    /// Input channels the kernels prefetch ahead.
    const PREFETCH_C: usize = 2;

    /// Prefetches the `NV` vectors (and one more, for the taps' shift) at `s`, `PREFETCH_C`
    /// channel planes ahead. Consecutive channels are a plane apart (12.5 KiB at 56×56), a
    /// stride no hardware prefetcher follows: conv3x3 8×64×56×56 took 11.4-12.3 ms without,
    /// 10.1-10.3 ms with (1 and 2 planes ahead alike; 8 ahead: 11.0-11.2 ms).
    #[inline(always)]
    fn prefetch_ahead<const NV: usize>(s: *const f32, plane: usize) {
        let p = s.wrapping_add(PREFETCH_C * plane);
        for v in 0..=NV {
            // SAFETY: a prefetch is a hint; any address is allowed.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.wrapping_add(16 * v).cast()) };
        }
    }

    /// One channel's phase planes (see [`super::split_phases`]): per input row, the even
    /// columns to plane `2a`, the odd ones to plane `2a + 1` (32 inputs, two permutes, per
    /// 16 outputs of each).
    ///
    /// # Safety
    /// `x` holds one input channel (`ih × iw`), `q` four planes of `oh × ow`.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn split_channel(g: &ConvGeom, x: *const f32, q: *mut f32) {
        let [_, ih, iw] = g.in_sp;
        let [_, oh, ow] = g.out_sp;
        let pv = oh * ow;
        let even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        let odd = _mm512_set_epi32(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1);
        // columns of the odd phase (the even one has ow = ceil(iw / 2))
        let ow1 = iw / 2;
        for r in 0..ih {
            let (a, i) = (r % 2, r / 2);
            let src = x.wrapping_add(r * iw);
            let de = q.wrapping_add(2 * a * pv + i * ow);
            let do_ = q.wrapping_add((2 * a + 1) * pv + i * ow);
            let mut j = 0;
            while j < ow {
                let m_lo = lane_mask(2 * j as isize, iw as isize);
                let m_hi = lane_mask(2 * j as isize + 16, iw as isize);
                // SAFETY: lanes inside the row only; the stores' lanes inside the planes'
                // rows (j + l < ow, and < ow1 for the odd phase).
                unsafe {
                    let lo = _mm512_maskz_loadu_ps(m_lo, src.add(2 * j));
                    let hi = _mm512_maskz_loadu_ps(m_hi, src.add(2 * j + 16));
                    let ke = lane_mask(j as isize, ow as isize);
                    let ko = lane_mask(j as isize, ow1 as isize);
                    _mm512_mask_storeu_ps(de.add(j), ke, _mm512_permutex2var_ps(lo, even, hi));
                    _mm512_mask_storeu_ps(do_.add(j), ko, _mm512_permutex2var_ps(lo, odd, hi));
                }
                j += 16;
            }
        }
    }

    /// Geometry of one register block's call.
    struct Blk {
        /// Image n, group grp, channel 0 of x.
        x: *const f32,
        iv: usize,
        ih: isize,
        iw: isize,
        /// Packed weights of the block: `[kh][cg][kw][OCB]`.
        w: *const f32,
        cg: usize,
        k: [usize; 2],
        dil: [usize; 2],
        pad: [isize; 2],
        /// Output row and first column; the row stride (the column stride is `block`'s S2).
        row: usize,
        sh: usize,
        x0: usize,
        ow: usize,
        bias: [f32; OCB],
        relu: bool,
        /// Output channel `oc0` of image n, row `row`, column 0; channels `ov` apart.
        y: *mut f32,
        /// The residual at the same place as `y` (null: none).
        r: *const f32,
        ov: usize,
        valid_oc: usize,
    }

    /// `S2`: column stride 2 (each vector of 16 outputs reads 32 consecutive inputs and
    /// keeps the even lanes: one permute per vector and tap; ResNet's 7×7/2 stem).
    #[target_feature(enable = "avx512f,fma")]
    unsafe fn block<const NV: usize, const S2: bool>(b: &Blk) {
        let mut acc = [[_mm512_setzero_ps(); NV]; OCB];
        for (j, a) in acc.iter_mut().enumerate() {
            *a = [_mm512_set1_ps(b.bias[j]); NV];
        }
        let cs = if S2 { 2 } else { 1 };
        let even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        let [kh, kw] = b.k;
        for p in 0..kh {
            let iy = (b.row * b.sh + p * b.dil[0]) as isize - b.pad[0];
            if iy < 0 || iy >= b.ih {
                continue;
            }
            // masks of the (first) 16 inputs each vector reads, and with S2 of the next 16
            let mut m = [[0 as __mmask16; NV]; MAX_KW];
            let mut m2 = [[0 as __mmask16; NV]; MAX_KW];
            for q in 0..kw {
                let ix = (cs * b.x0 + q * b.dil[1]) as isize - b.pad[1];
                for v in 0..NV {
                    let at = ix + (16 * cs * v) as isize;
                    m[q][v] = lane_mask(at, b.iw);
                    m2[q][v] = lane_mask(at + 16, b.iw);
                }
            }
            let src =
                b.x.wrapping_offset(iy * b.iw + (cs * b.x0) as isize - b.pad[1]);
            let wt = b.w.wrapping_add(p * b.cg * kw * OCB);
            for ic in 0..b.cg {
                prefetch_ahead::<NV>(src.wrapping_add(ic * b.iv), b.iv);
                if S2 {
                    prefetch_ahead::<NV>(src.wrapping_add(ic * b.iv + 16 * NV), b.iv);
                }
                for q in 0..kw {
                    let s = src.wrapping_add(ic * b.iv + q * b.dil[1]);
                    let mut xv = [_mm512_setzero_ps(); NV];
                    for v in 0..NV {
                        // SAFETY: lanes outside the input row are masked off (and masked
                        // lanes are never accessed).
                        xv[v] = unsafe {
                            if S2 {
                                let lo = _mm512_maskz_loadu_ps(m[q][v], s.wrapping_add(32 * v));
                                let hi =
                                    _mm512_maskz_loadu_ps(m2[q][v], s.wrapping_add(32 * v + 16));
                                _mm512_permutex2var_ps(lo, even, hi)
                            } else {
                                _mm512_maskz_loadu_ps(m[q][v], s.wrapping_add(16 * v))
                            }
                        };
                    }
                    let wq = wt.wrapping_add((ic * kw + q) * OCB);
                    for (j, a) in acc.iter_mut().enumerate() {
                        // SAFETY: the packed block holds kh*cg*kw*OCB weights.
                        let wv = _mm512_set1_ps(unsafe { *wq.add(j) });
                        for v in 0..NV {
                            a[v] = _mm512_fmadd_ps(wv, xv[v], a[v]);
                        }
                    }
                }
            }
        }
        let zero = _mm512_setzero_ps();
        for (j, a) in acc.iter().enumerate().take(b.valid_oc) {
            for (v, &av) in a.iter().enumerate() {
                let col = b.x0 + 16 * v;
                let om = lane_mask(col as isize, b.ow as isize);
                let av = if b.r.is_null() {
                    av
                } else {
                    // SAFETY: the residual's lanes of the output row.
                    _mm512_add_ps(av, unsafe {
                        _mm512_maskz_loadu_ps(om, b.r.add(j * b.ov + col))
                    })
                };
                let val = if b.relu { _mm512_max_ps(zero, av) } else { av };
                // SAFETY: lanes past the row end are masked off.
                unsafe { _mm512_mask_storeu_ps(b.y.add(j * b.ov + col), om, val) };
            }
        }
    }

    /// Computes output row `row` of image `n`, every channel.
    ///
    /// # Safety
    /// As [`super::forward`]; `wp` is [`super::pack_weights`]' output.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn output_row(
        g: &ConvGeom,
        x: *const f32,
        wp: *const f32,
        bias: Option<&[f32]>,
        act: Activation,
        y: *mut f32,
        res: *const f32,
        n: usize,
        row: usize,
    ) {
        let (cg, kg, kv) = (g.c_in / g.groups, g.c_out / g.groups, g.k_vol());
        let nob = kg.div_ceil(OCB);
        let (iv, ov, ow) = (g.in_vol(), g.out_vol(), g.out_sp[2]);
        let s2 = g.stride[2] == 2;
        for grp in 0..g.groups {
            for ob in 0..nob {
                let oc0 = grp * kg + ob * OCB;
                let valid_oc = OCB.min(kg - ob * OCB);
                let mut bs = [0f32; OCB];
                if let Some(bias) = bias {
                    bs[..valid_oc].copy_from_slice(&bias[oc0..oc0 + valid_oc]);
                }
                let mut x0 = 0;
                while x0 < ow {
                    let b = Blk {
                        x: x.wrapping_add((n * g.c_in + grp * cg) * iv),
                        iv,
                        ih: g.in_sp[1] as isize,
                        iw: g.in_sp[2] as isize,
                        w: wp.wrapping_add((grp * nob + ob) * kv * cg * OCB),
                        cg,
                        k: [g.k_sp[1], g.k_sp[2]],
                        dil: [g.dil[1], g.dil[2]],
                        pad: [g.pad[1] as isize, g.pad[2] as isize],
                        row,
                        sh: g.stride[1],
                        x0,
                        ow,
                        bias: bs,
                        relu: act == Activation::Relu,
                        y: y.wrapping_add((n * g.c_out + oc0) * ov + row * ow),
                        r: if res.is_null() {
                            res
                        } else {
                            res.wrapping_add((n * g.c_out + oc0) * ov + row * ow)
                        },
                        ov,
                        valid_oc,
                    };
                    // SAFETY: caller's contract (AVX-512F and FMA present; buffers valid).
                    unsafe {
                        match (ow - x0).div_ceil(16) {
                            1 if s2 => block::<1, true>(&b),
                            2 if s2 => block::<2, true>(&b),
                            3 if s2 => block::<3, true>(&b),
                            _ if s2 => block::<4, true>(&b),
                            1 => block::<1, false>(&b),
                            2 => block::<2, false>(&b),
                            3 => block::<3, false>(&b),
                            _ => block::<4, false>(&b),
                        }
                    }
                    x0 += 64;
                }
            }
        }
        if !matches!(act, Activation::None | Activation::Relu) {
            for oc in 0..g.c_out {
                // SAFETY: row `row` of channel oc of image n, written above by this task.
                let r = unsafe {
                    std::slice::from_raw_parts_mut(y.add((n * g.c_out + oc) * ov + row * ow), ow)
                };
                r.iter_mut().for_each(|v| *v = act.apply_f32(*v));
            }
        }
    }

    /// A run of up to 64 consecutive output positions (row-major over the output plane) of
    /// one image and group, for rows as long as the input's (`ow == iw`).
    struct Run {
        /// Image n, group grp, channel 0 of x.
        x: *const f32,
        iv: usize,
        /// Packed weights of the block: `[kh][cg][kw][OCB]`; for a 1×1 kernel (`PACKED`
        /// false) the weights of its first output channel in place, channel `j`'s
        /// `ocs[j]` further.
        w: *const f32,
        ocs: [usize; OCB],
        cg: usize,
        k: [usize; 2],
        /// Input offset (elements, from the output position) of each tap `p * kw + q`.
        off: *const isize,
        /// Lanes (bit l: position j0 + l) whose input for tap `p * kw + q` exists.
        valid: *const u64,
        j0: usize,
        /// Lanes that are output positions.
        out_mask: u64,
        bias: [f32; OCB],
        /// Start from y's values (a later pass over the input channels) instead of the bias.
        accumulate: bool,
        relu: bool,
        /// Output channel `oc0` of image n, position 0; channels `ov` apart.
        y: *mut f32,
        /// The residual at the same place as `y`, added before the activation (null: none;
        /// given only with the last pass).
        r: *const f32,
        ov: usize,
        valid_oc: usize,
    }

    #[target_feature(enable = "avx512f,fma")]
    unsafe fn run_block<const NV: usize, const PACKED: bool>(b: &Run) {
        let mut acc = [[_mm512_setzero_ps(); NV]; OCB];
        for (j, a) in acc.iter_mut().enumerate() {
            *a = [_mm512_set1_ps(b.bias[j]); NV];
            if b.accumulate && j < b.valid_oc {
                for (v, av) in a.iter_mut().enumerate() {
                    let om = (b.out_mask >> (16 * v)) as __mmask16;
                    // SAFETY: the lanes of the plane, written by the previous pass.
                    *av = unsafe { _mm512_maskz_loadu_ps(om, b.y.add(j * b.ov + b.j0 + 16 * v)) };
                }
            }
        }
        let [kh, kw] = b.k;
        for p in 0..kh {
            for q in 0..kw {
                let t = p * kw + q;
                // SAFETY: kh*kw entries each.
                let (valid, off) = unsafe { (*b.valid.add(t), *b.off.add(t)) };
                if valid == 0 {
                    continue;
                }
                let mut m = [0 as __mmask16; NV];
                for (v, mv) in m.iter_mut().enumerate() {
                    *mv = (valid >> (16 * v)) as __mmask16;
                }
                let src = b.x.wrapping_offset(b.j0 as isize + off);
                let wt = if PACKED {
                    b.w.wrapping_add((p * b.cg * kw + q) * OCB)
                } else {
                    b.w
                };
                for ic in 0..b.cg {
                    let s = src.wrapping_add(ic * b.iv);
                    prefetch_ahead::<NV>(s, b.iv);
                    let mut xv = [_mm512_setzero_ps(); NV];
                    for v in 0..NV {
                        // SAFETY: only lanes whose input exists are loaded.
                        xv[v] = unsafe { _mm512_maskz_loadu_ps(m[v], s.wrapping_add(16 * v)) };
                    }
                    for (j, a) in acc.iter_mut().enumerate() {
                        // SAFETY: the packed block holds kh*cg*kw*OCB weights; in place,
                        // ocs keeps every read inside w.
                        let wv = _mm512_set1_ps(unsafe {
                            if PACKED {
                                *wt.add(ic * kw * OCB + j)
                            } else {
                                *wt.add(ic + b.ocs[j])
                            }
                        });
                        for v in 0..NV {
                            a[v] = _mm512_fmadd_ps(wv, xv[v], a[v]);
                        }
                    }
                }
            }
        }
        let zero = _mm512_setzero_ps();
        for (j, a) in acc.iter().enumerate().take(b.valid_oc) {
            for (v, &av) in a.iter().enumerate() {
                let om = (b.out_mask >> (16 * v)) as __mmask16;
                let av = if b.r.is_null() {
                    av
                } else {
                    // SAFETY: the residual's lanes of the plane.
                    _mm512_add_ps(av, unsafe {
                        _mm512_maskz_loadu_ps(om, b.r.add(j * b.ov + b.j0 + 16 * v))
                    })
                };
                let val = if b.relu { _mm512_max_ps(zero, av) } else { av };
                // SAFETY: lanes past the plane's end are masked off.
                unsafe { _mm512_mask_storeu_ps(b.y.add(j * b.ov + b.j0 + 16 * v), om, val) };
            }
        }
    }

    /// Which input channels (of each group) a call sums, and whether it is the first pass
    /// (starts from the bias) and the last (applies the activation).
    pub(super) struct Stage {
        pub chans: std::ops::Range<usize>,
        pub first: bool,
        pub last: bool,
    }

    /// Computes output positions `j0..j0 + 64` (clipped to the plane) of image `n`, the
    /// output channel blocks `obs` (of `OCB`, in every group), for `ow == iw`, over the
    /// input channels of `stage` (all of them unless the kernel is 1×1).
    ///
    /// # Safety
    /// As [`super::forward`]; `wp` is [`super::pack_weights`]' output, or for a 1×1 kernel
    /// the weights themselves.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn output_run(
        g: &ConvGeom,
        x: *const f32,
        wp: *const f32,
        bias: Option<&[f32]>,
        act: Activation,
        y: *mut f32,
        res: *const f32,
        n: usize,
        j0: usize,
        obs: std::ops::Range<usize>,
        stage: &Stage,
        phase: bool,
    ) {
        let (cg, kg, kv) = (g.c_in / g.groups, g.c_out / g.groups, g.k_vol());
        // Channels c0..c0 + cs of each group (only 1×1 kernels, whose weights are read in
        // place, are called with a part).
        let (c0, cs) = (stage.chans.start, stage.chans.len());
        debug_assert!(cs == cg || kv == 1);
        let act = if stage.last { act } else { Activation::None };
        let nob = kg.div_ceil(OCB);
        let ov = g.out_vol();
        // (phase planes: four per channel, each the output plane's size)
        let iv = if phase { 4 * ov } else { g.in_vol() };
        let [_, ih, iw] = g.in_sp;
        let [_, kh, kw] = g.k_sp;
        let ow = g.out_sp[2];
        let len = (ov - j0).min(64);
        let out_mask = if len == 64 {
            u64::MAX
        } else {
            (1u64 << len) - 1
        };
        // Per tap: which lanes have an input, and the input offset from the output position.
        // A tap's input row (column) relative to the output's, the rows (columns) of the
        // plane it reads, and that plane's offset: in the input itself, or with phase planes
        // tap p reads phase (p - pad) mod 2 at row oy + floor((p - pad) / 2), whose plane
        // has ceil((ih - a) / 2) rows.
        let tap = |t: usize, d: usize, n_in: usize| -> (isize, isize, isize) {
            let r = (t * g.dil[d]) as isize - g.pad[d] as isize;
            if phase {
                let a = r.rem_euclid(2);
                (r.div_euclid(2), (n_in as isize - a + 1) / 2, a)
            } else {
                (r, n_in as isize, 0)
            }
        };
        let mut rows = [0u64; super::MAX_KH];
        let mut cols = [0u64; super::MAX_KW];
        for l in 0..len {
            let (oy, ox) = ((j0 + l) / ow, (j0 + l) % ow);
            for (p, r) in rows.iter_mut().enumerate().take(kh) {
                let (dy, h, _) = tap(p, 1, ih);
                let iy = oy as isize + dy;
                if iy >= 0 && iy < h {
                    *r |= 1 << l;
                }
            }
            for (q, c) in cols.iter_mut().enumerate().take(kw) {
                let (dx, w, _) = tap(q, 2, iw);
                let ix = ox as isize + dx;
                if ix >= 0 && ix < w {
                    *c |= 1 << l;
                }
            }
        }
        // (rows of the plane read: the input's, or with phase planes the output's)
        let rw = if phase { ow } else { iw } as isize;
        let mut valid = [0u64; super::MAX_KH * super::MAX_KW];
        let mut off = [0isize; super::MAX_KH * super::MAX_KW];
        for p in 0..kh {
            let (dy, _, a) = tap(p, 1, ih);
            for q in 0..kw {
                let (dx, _, b) = tap(q, 2, iw);
                valid[p * kw + q] = rows[p] & cols[q];
                off[p * kw + q] = (2 * a + b) * ov as isize + dy * rw + dx;
            }
        }
        for grp in 0..g.groups {
            for ob in obs.start..obs.end.min(nob) {
                let oc0 = grp * kg + ob * OCB;
                let valid_oc = OCB.min(kg - ob * OCB);
                let mut bs = [0f32; OCB];
                if let Some(bias) = bias {
                    bs[..valid_oc].copy_from_slice(&bias[oc0..oc0 + valid_oc]);
                }
                let b = Run {
                    x: x.wrapping_add((n * g.c_in + grp * cg + c0) * iv),
                    iv,
                    w: if kv == 1 {
                        wp.wrapping_add(oc0 * cg + c0)
                    } else {
                        wp.wrapping_add((grp * nob + ob) * kv * cg * OCB)
                    },
                    ocs: std::array::from_fn(|j| j.min(valid_oc - 1) * cg),
                    cg: cs,
                    k: [kh, kw],
                    off: off.as_ptr(),
                    valid: valid.as_ptr(),
                    j0,
                    out_mask,
                    bias: if stage.first { bs } else { [0.0; OCB] },
                    accumulate: !stage.first,
                    relu: act == Activation::Relu,
                    y: y.wrapping_add((n * g.c_out + oc0) * ov),
                    r: if res.is_null() || !stage.last {
                        std::ptr::null()
                    } else {
                        res.wrapping_add((n * g.c_out + oc0) * ov)
                    },
                    ov,
                    valid_oc,
                };
                // SAFETY: caller's contract (AVX-512F and FMA present; buffers valid).
                unsafe {
                    match (len.div_ceil(16), kv == 1) {
                        (1, false) => run_block::<1, true>(&b),
                        (2, false) => run_block::<2, true>(&b),
                        (3, false) => run_block::<3, true>(&b),
                        (_, false) => run_block::<4, true>(&b),
                        (1, true) => run_block::<1, false>(&b),
                        (2, true) => run_block::<2, false>(&b),
                        (3, true) => run_block::<3, false>(&b),
                        (_, true) => run_block::<4, false>(&b),
                    }
                }
                if !matches!(act, Activation::None | Activation::Relu) {
                    for oc in oc0..oc0 + valid_oc {
                        // SAFETY: positions j0..j0+len of channel oc of image n, written
                        // above by this task.
                        let r = unsafe {
                            std::slice::from_raw_parts_mut(y.add((n * g.c_out + oc) * ov + j0), len)
                        };
                        r.iter_mut().for_each(|v| *v = act.apply_f32(*v));
                    }
                }
            }
        }
    }
}
