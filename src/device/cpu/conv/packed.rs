//! Forward convolution over weights packed once (3×3 stride-1 ones transformed for
//! [`super::winograd`] instead, where it applies), vectorized over output channels (ONNX
//! Runtime's NCHWc idea, with NCHW tensors): the executor packs the weights of an f32
//! convolution that no node writes when it makes its plan at O2+
//! ([`crate::graph::passes::pack_conv_weights`]), and every run reads them in that layout.
//!
//! Layout: `[oc blocks][c_in · kh · kw][OB]`, [`OB`] = 32 output channels a block (zero
//! past `c_out`); the depth index is the weight's own `(ic, kh, kw)` order.
//!
//! A register tile holds `R` rows of `C` consecutive output positions × `OB = 32` output
//! channels (`R · C · NO = 28` zmm accumulators: one row of 14, or two rows of 7 on planes
//! narrower than 14). Each depth step loads the block's `NO = 2` weight vectors and
//! broadcasts 14 input values (`x` at the step's offset from the tile's first input,
//! positions `S` apart): 28 FMAs for 2 aligned loads and 14 scalar broadcasts, none of them
//! split across cache lines, where the position-vectorized [`super::direct`] kernel loads
//! unaligned input vectors. Strides and dilations are only offsets; padding reads a
//! zero-bordered copy of the input (made per call, in parallel, in a buffer kept between
//! calls). The tile is transposed in registers (`[position][channel]` -> NCHW rows) and
//! stored with bias, a residual and relu applied (other activations over the stored rows).
//!
//! The input, and the output with its residual, may each be in the blocked layout
//! `[n, c / 16, h, w, 16]` instead ([`Blocked`], chosen by the executor between packed
//! convolutions: [`crate::graph::passes::block_conv_layouts`]): a blocked input is read
//! with positions 16 values apart (the depth steps' offsets say where each channel lies), a
//! blocked output takes the accumulators as they are, a position's 16 channels one whole
//! 64-byte line, with no transpose and no partial lines; the same sums in the same order, so
//! the same bits. A 1×1 convolution writing 256 channels at 56×56 with its residual ran
//! 0.45-0.47 ms so against 0.67-0.78 in NCHW (a prototype of the two stores, two threads,
//! outputs and residuals in turn from eight buffers).
//!
//! With a blocked output, a thread's tiles of one block go over the depth in passes
//! ([`PASS_CHANNELS`]), keeping their sums in the output between passes, so that a pass's
//! weights are read from L1 or L2 by every tile rather than the block's whole depth from
//! L2 or memory by each; where the weights are large each thread takes one range of whole
//! blocks ([`OWN_RANGE_BYTES`]), and streams its next block into L2 while it computes.
//!
//! Isolated (the same input each call, this machine's 2-core Xeon with AVX-512, two
//! threads), ResNet-50's shapes: 3×3 256->256 at 14×14 0.53 ms (439 GFLOP/s; the FMA units'
//! peak measured here is 457), 64->64 at 56×56 0.58 ms, 512->512 at 7×7 0.61 ms, 1×1
//! 1024->256 at 14×14 0.25 ms (0.28 with the prefetch 1×1 kernels take in the network,
//! where it pays); one thread, against the direct kernel, a prototype of this
//! loop ran 3×3 64->64 at 56×56 in 1.20 ms against 1.72, 256->256 at 14×14 1.25 against 2.03.

use super::{Spare, pointwise, winograd};
use crate::device::cpu::par::{SendPtr, for_range};
use crate::ops::conv::{Activation, ConvGeom};

/// Widest dilated kernel span the path takes (an offset table entry per depth step).
const MAX_K_VOL: usize = 64;

/// Bytes of an operand a thread's caches hold while the other streams (L2: 2 MiB a core on
/// the Xeons, 1 MiB on Zen 4).
const CACHE_BYTES: usize = 1 << 20;

/// Weights (bytes) past which each thread takes one contiguous range of output-channel
/// blocks, so that the next block it asks for in L2 is its own (see [`run`]).
const OWN_RANGE_BYTES: usize = 512 << 10;

/// Input channels whose depth steps one pass over a run of tiles takes, with a blocked
/// output (see [`run`]): 1×1 kernels, and larger ones.
const PASS_CHANNELS: (usize, usize) = (256, 64);

/// The zero-bordered input copy kept between calls.
static PAD_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());

/// Weight vectors of a tile: every tile shape covers [`OB`] output channels.
const NO: usize = 2;

/// Output channels of one packed block, for every geometry (the layout depends only on the
/// weight's shape).
pub const OB: usize = NO * 16;

/// The tile shape for `g`: (rows `R`, positions a row `C`). Rows
/// shorter than 14 take two rows of 7 (a weight vector read serves 14 positions either way;
/// in a prototype, 3×3 512->512 at 7×7, one thread: 1.68 ms with one row of 7 × 64
/// channels, 1.47 ms with two rows of 7 × 32 over an eighth row computed and dropped; a
/// last odd row now runs alone).
fn tile_of(g: &ConvGeom) -> (usize, usize) {
    if g.out_sp[2] >= 14 { (1, 14) } else { (2, 7) }
}

/// True when this machine runs [`forward`] for `g` (f32 is the caller's check): AVX-512
/// (`RB_CONV_PACKED=0` turns the path off), one or two spatial dimensions, one group,
/// channels first, a column stride of 1 or 2, kernels up to [`MAX_K_VOL`] taps and output
/// rows of at least 7 positions.
pub fn applies(g: &ConvGeom) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        static ENABLED: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            crate::device::cpu::avx512_kernel_on(Some("RB_CONV_PACKED"))
        });
        *ENABLED
            && !g.channels_last
            && g.groups == 1
            && g.in_sp[0] == 1
            && g.k_sp[0] == 1
            && g.pad[0] == 0
            && g.out_sp[0] == 1
            && matches!(g.stride[2], 1 | 2)
            && g.k_vol() <= MAX_K_VOL
            && g.out_sp[2] >= 7
            && g.c_in >= 1
            && g.c_out >= 1
            && g.n >= 1
            && g.out_sp[1] >= 1
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = g;
        false
    }
}

/// True when the executor should pack `g`'s weights ([`applies`], and not a 1×1
/// convolution over input planes of 56×56 and more, or strided over 28×28 and more, unless
/// its channels allow the blocked layout ([`applies_blocked`], which the executor then
/// chooses between packed convolutions): in NCHW there the per-tile transposed stores
/// outweigh the short depth, and [`super::direct`] or the GEMM were faster in ResNet-50
/// (node minimums on the 2-core Xeon, packed against not: 64->256 at 56×56 0.87 against
/// 0.53 ms, 256->64 0.49 / 0.42, 256->512/2 1.07 / 0.96, 512->1024/2 1.22 / 0.99; every 3×3
/// and the smaller 1×1 planes faster packed), while blocked they are faster packed
/// (`benches/resnet_onnx.py --profile`, alternated twice: the four 64->256 1.79-1.84 ms
/// against 2.39-2.42 unpacked NCHW, 256->512/2 0.76-0.79 against 1.16-1.17).
pub fn prefer(g: &ConvGeom) -> bool {
    let large = g.in_vol() >= 56 * 56 || (g.in_vol() >= 28 * 28 && g.stride[2] > 1);
    let blockable = g.c_in.is_multiple_of(LANES) && g.c_out.is_multiple_of(LANES);
    applies(g) && !(g.k_vol() == 1 && large && !blockable)
}

/// Elements of the packed weights of `g` (the transformed ones where
/// [`winograd::applies`]).
pub fn packed_len(g: &ConvGeom) -> usize {
    if winograd::applies(g) {
        return winograd::packed_len(g);
    }
    let ob = OB;
    g.c_out.div_ceil(ob) * ob * g.c_in * g.k_vol()
}

/// Packs `w` (`[c_out, c_in, kh, kw]`, contiguous) into `dst` ([`packed_len`] values), in
/// parallel over the blocks; transforms them instead where [`winograd::applies`].
///
/// # Safety
/// `w` holds the weights `g` describes; `dst` is writable for [`packed_len`] values and
/// overlaps nothing `w` holds.
pub unsafe fn pack(g: &ConvGeom, w: *const f32, dst: *mut f32) {
    if winograd::applies(g) {
        // SAFETY: the caller's contract.
        return unsafe { winograd::pack(g, w, dst) };
    }
    let ob = OB;
    let depth = g.c_in * g.k_vol();
    let nob = g.c_out.div_ceil(ob);
    let (ws, ds) = (SendPtr(w as *mut f32), SendPtr(dst));
    let c_out = g.c_out;
    for_range(nob, 1, move |b0, b1| {
        for b in b0..b1 {
            let valid = ob.min(c_out - b * ob);
            // SAFETY: block b of dst (disjoint per block); rows b·ob.. of w.
            unsafe {
                let d = ds.get().add(b * depth * ob);
                for j in 0..ob {
                    if j < valid {
                        let row = ws.get().add((b * ob + j) * depth) as *const f32;
                        for k in 0..depth {
                            *d.add(k * ob + j) = *row.add(k);
                        }
                    } else {
                        for k in 0..depth {
                            *d.add(k * ob + j) = 0.0;
                        }
                    }
                }
            }
        }
    });
}

/// `y = act(conv(x, w) + bias + res)` over weights [`pack`]ed for `g` (by
/// [`winograd::forward`] where [`winograd::applies`], by [`pointwise::forward`] where
/// [`pointwise::applies`]).
///
/// # Safety
/// `x`, `y` (and `res`) hold the tensors `g` describes (f32, contiguous NCHW), `packed`
/// holds [`pack`]'s result for `g`, `bias` has `c_out` values; `y` overlaps none of the
/// inputs; [`applies`] said yes.
#[allow(clippy::too_many_arguments)]
pub unsafe fn forward(
    g: &ConvGeom,
    x: *const f32,
    packed: *const f32,
    bias: Option<&[f32]>,
    res: Option<*const f32>,
    act: Activation,
    y: *mut f32,
    layout: Blocked,
) {
    if winograd::applies(g) {
        // SAFETY: the caller's contract; pack transformed the weights.
        return unsafe { winograd::forward((g, x, packed, bias, res, act, y), layout) };
    }
    // A strided 1×1 convolution reads every stride-th position of every stride-th row: the
    // positions it reads are gathered first, and the convolution runs over them with stride
    // 1 (see [`gather`]).
    if g.k_vol() == 1 && g.pad == [0; 3] && g.stride[1..] != [1, 1] {
        let lanes = if layout.x { LANES } else { 1 };
        let mut sub = Spare::take(&GATHER_SPARE, g.n * g.c_in * g.out_vol());
        // SAFETY: x holds g's input; sub holds the gathered input.
        unsafe {
            gather(g, x, sub.buf.as_mut_ptr(), lanes);
            let g1 = ConvGeom {
                in_sp: g.out_sp,
                stride: [1; 3],
                ..*g
            };
            forward(&g1, sub.buf.as_ptr(), packed, bias, res, act, y, layout);
        }
        return;
    }
    if pointwise::applies(g, layout) {
        // SAFETY: the caller's contract (blocked tensors).
        return unsafe { pointwise::forward((g, x, packed, bias, res, act, y)) };
    }
    #[cfg(target_arch = "x86_64")]
    unsafe {
        let a = (g, x, packed, bias, res, act, y);
        // (tile shape and column stride S, then the layouts)
        match (tile_of(g), g.stride[2]) {
            ((1, 14), 1) => laid_out::<1, 14, 1>(a, layout),
            ((1, 14), _) => laid_out::<1, 14, 2>(a, layout),
            (_, 1) => laid_out::<2, 7, 1>(a, layout),
            _ => laid_out::<2, 7, 2>(a, layout),
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (g, x, packed, bias, res, act, y, layout);
        unreachable!("packed::applies is false off x86_64");
    }
}

pub use crate::ops::conv::{BLOCK_LANES as LANES, Blocked};

/// True when [`forward`] runs `g` with tensors in `layout` ([`applies`], and the channels a
/// blocked tensor has a multiple of [`LANES`]).
pub fn applies_blocked(g: &ConvGeom, layout: Blocked) -> bool {
    applies(g)
        && (!layout.x || g.c_in.is_multiple_of(LANES))
        && (!layout.y || g.c_out.is_multiple_of(LANES))
}

/// The strided 1×1 convolutions' gathered inputs, kept between calls.
static GATHER_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());

/// The positions a strided 1×1 convolution `g` (no padding) reads, `x` -> `dst`
/// (`[n, c_in, out_sp]` in `x`'s layout: `lanes` channels a position), in parallel over
/// rows. Read in place, the tiles' positions lie `stride` lines apart (a quarter of the
/// input's lines at stride 2, and those from across the whole input, each block of output
/// channels again); gathered, the convolution is the stride-1 one over an input a quarter
/// the size. Isolated, cold weights (`RB_PB_COLD=20`), blocked, two threads: 512->1024 /2
/// over 28×28 with its residual 0.83-0.94 ms in place, 0.62 gathered (0.56-0.58 for the
/// same product at stride 1 over 14×14, no residual).
///
/// # Safety
/// `x` holds the input `g` describes; `dst` is writable for `n · c_in · out_vol` values.
unsafe fn gather(g: &ConvGeom, x: *const f32, dst: *mut f32, lanes: usize) {
    let (ih, iw) = (g.in_sp[1], g.in_sp[2]);
    let (oh, ow) = (g.out_sp[1], g.out_sp[2]);
    let (sh, sw) = (g.stride[1], g.stride[2]);
    let (xs, ds) = (SendPtr(x as *mut f32), SendPtr(dst));
    let planes = g.n * g.c_in / lanes;
    for_range(planes * oh, (1024 / (ow * lanes)).max(1), move |r0, r1| {
        for r in r0..r1 {
            let (p, oy) = (r / oh, r % oh);
            // SAFETY: row oy of plane p of dst (disjoint per row); row oy·sh of plane p of
            // x, its positions ox·sw < iw.
            unsafe {
                let src = xs.get().add((p * ih + oy * sh) * iw * lanes) as *const f32;
                let d = ds.get().add((p * oh + oy) * ow * lanes);
                for ox in 0..ow {
                    std::ptr::copy_nonoverlapping(
                        src.add(ox * sw * lanes),
                        d.add(ox * lanes),
                        lanes,
                    );
                }
            }
        }
    });
}

/// The input as the tiles read it: its own buffer when no padding is needed and the last
/// tile's reads stay inside it, else a zero-bordered copy with rows wide enough for whole
/// tiles.
struct Source {
    /// Row length and rows per channel of the buffer the offsets address.
    wp: usize,
    hp: usize,
    copy: Option<Spare>,
    /// Channels a position holds together: 1 (NCHW) or [`LANES`] (blocked).
    lanes: usize,
}

impl Source {
    fn new<const R: usize, const C: usize, const S: usize>(g: &ConvGeom, lanes: usize) -> Source {
        let (ih, iw) = (g.in_sp[1], g.in_sp[2]);
        let (ph, pw) = (g.pad[1], g.pad[2]);
        let (oh, ow) = (g.out_sp[1], g.out_sp[2]);
        let span_w = (g.k_sp[2] - 1) * g.dil[2];
        let span_h = (g.k_sp[1] - 1) * g.dil[1];
        // The last column any tile reads, from the row's first padded column.
        let last_col = (ow.div_ceil(C) * C - 1) * S + span_w;
        // and the last row (a last tile of R rows may pass the output's end)
        let last_row = (oh.div_ceil(R) * R - 1) * g.stride[1] + span_h;
        if ph == 0 && pw == 0 {
            // Reads past a row's end land in the next row (results dropped); only the last
            // row of the last channel must not run past the buffer.
            let last = last_row * iw + last_col;
            if last < ih * iw {
                return Source {
                    wp: iw,
                    hp: ih,
                    copy: None,
                    lanes,
                };
            }
        }
        let wp = (iw + 2 * pw).max(last_col + 1);
        let hp = (ih + 2 * ph).max(last_row + 1);
        Source {
            wp,
            hp,
            copy: Some(Spare::take(&PAD_SPARE, g.c_in * hp * wp)),
            lanes,
        }
    }

    /// Image `xn` into the copy (when there is one); returns the buffer the tiles read.
    ///
    /// # Safety
    /// `xn` holds one image of the input `g` describes.
    unsafe fn fill(&mut self, g: &ConvGeom, xn: *const f32) -> *const f32 {
        let Some(copy) = self.copy.as_mut() else {
            return xn;
        };
        let (ih, iw) = (g.in_sp[1], g.in_sp[2]);
        let (ph, pw) = (g.pad[1], g.pad[2]);
        // (in the blocked layout a "channel" here is a block of LANES, its positions LANES
        // values each)
        let l = self.lanes;
        let (wp, hp) = (self.wp * l, self.hp);
        let (iw, pw) = (iw * l, pw * l);
        let dst = SendPtr(copy.buf.as_mut_ptr());
        let src = SendPtr(xn as *mut f32);
        // By rows of the copy (every channel's), so that even three channels or a few
        // blocks of them copy on every thread.
        let grain = (4096 / wp).max(1);
        for_range(g.c_in / l * hp, grain, move |r0, r1| {
            for cr in r0..r1 {
                let (c, r) = (cr / hp, cr % hp);
                // SAFETY: row r of channel c of the copy (c_in·hp·wp values) and of the
                // image.
                unsafe {
                    let row = std::slice::from_raw_parts_mut(dst.get().add(cr * wp), wp);
                    if r < ph || r >= ph + ih {
                        // (padding, and the rows a last tile reads past it)
                        row.fill(0.0);
                        continue;
                    }
                    let s = src.get().add(c * ih * iw + (r - ph) * iw) as *const f32;
                    row[..pw].fill(0.0);
                    row[pw..pw + iw].copy_from_slice(std::slice::from_raw_parts(s, iw));
                    row[pw + iw..].fill(0.0);
                }
            }
        });
        copy.buf.as_ptr()
    }
}

/// [`forward`]'s arguments but the layout, `(g, x, packed, bias, res, act, y)`, as the
/// kernels of [`super::winograd`] and [`super::pointwise`] take them too.
pub(super) type Args<'a> = (
    &'a ConvGeom,
    *const f32,
    *const f32,
    Option<&'a [f32]>,
    Option<*const f32>,
    Activation,
    *mut f32,
);

/// [`run`] for `layout`.
#[cfg(target_arch = "x86_64")]
unsafe fn laid_out<const R: usize, const C: usize, const S: usize>(a: Args<'_>, layout: Blocked) {
    // SAFETY: forward's contract.
    unsafe {
        match (layout.x, layout.y) {
            (false, false) => run::<R, C, S, false, false>(a),
            (false, true) => run::<R, C, S, false, true>(a),
            (true, false) => run::<R, C, S, true, false>(a),
            (true, true) => run::<R, C, S, true, true>(a),
        }
    }
}

/// [`forward`] for one tile shape (`R` rows of `C`), column stride `S` and layout (`XB`,
/// `YB`: the input, the output blocked).
#[cfg(target_arch = "x86_64")]
unsafe fn run<const R: usize, const C: usize, const S: usize, const XB: bool, const YB: bool>(
    (g, x, packed, bias, res, act, y): Args<'_>,
) {
    let ob = OB;
    let lanes = if XB { LANES } else { 1 };
    // (values between the tile's positions in the input)
    let ps = S * lanes;
    let (oh, ow) = (g.out_sp[1], g.out_sp[2]);
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let kv = g.k_vol();
    let depth = g.c_in * kv;
    let nob = g.c_out.div_ceil(ob);
    let tiles = ow.div_ceil(C);
    let row_tiles = oh.div_ceil(R);
    let mut src = Source::new::<R, C, S>(g, lanes);
    let (wp, hp) = (src.wp, src.hp);
    // The depth steps' offsets from a tile's first input, in the packed order.
    let mut offs = Vec::with_capacity(depth);
    // (blocked: channel ic is lane ic % LANES of block ic / LANES, a position LANES values)
    for ic in 0..g.c_in {
        let (blk, lane) = (ic / lanes, ic % lanes);
        for a in 0..g.k_sp[1] {
            for b in 0..g.k_sp[2] {
                let pos = a * g.dil[1] * wp + b * g.dil[2];
                offs.push((blk * hp * wp * lanes + pos * lanes + lane) as isize);
            }
        }
    }
    let offs = &offs[..];
    let row_step = g.stride[1] * wp * lanes;
    let c_out = g.c_out;
    let packed = SendPtr(packed as *mut f32);
    // Units (oc block, R output rows) in the order that streams the smaller operand through
    // the caches again: blocks outermost (a thread's range keeps its blocks' weights in
    // its cache, every block reads the whole input) unless the input outgrows the cache
    // and the weights are what a row can read again.
    let in_bytes = g.c_in * hp * wp * 4;
    let w_bytes = depth * nob * ob * 4;
    let again = |bytes: usize, times: usize| {
        if bytes <= CACHE_BYTES {
            0
        } else {
            bytes * times
        }
    };
    let blocks_outer = again(in_bytes, nob) <= again(w_bytes, row_tiles);
    let gelu = matches!(act, Activation::Gelu { .. });
    let relu = act == Activation::Relu;
    // 1×1 kernels prefetch the next tile's input at each depth step: their inputs are read
    // once a tile, often from the other core's cache (the previous node's output). Node
    // minimums in ResNet-50, alternated: 1024->256 at 14×14 2.13-2.24 ms without, 1.79-1.84
    // with; 512->128 at 28×28 1.29-1.40 / 1.16-1.20. Larger kernels read each input for
    // several taps and were as fast or slower with it (3×3 512->512 at 7×7 2.15-2.22 /
    // 2.35 ms).
    let prefetch = kv == 1;
    // Blocks outermost, a block's first tile streams its weights from memory and the others
    // read them from L2: those others ask for the next block's weights in L2 meanwhile
    // (prefetcht1, spread evenly over their depth steps), so a thread's next block streams
    // while it computes. Isolated with cold weights (`RB_PB_COLD=40`, two threads): 1×1
    // 1024->2048 /2 at 14×14 with a residual 1.33 -> 1.01 ms, 3×3 512->512 at 7×7 1.27 ->
    // 1.08; ResNet-50's node minimums, alternated twice: layer 4's 1×1 512->2048 1.80/1.67
    // -> 1.36/1.35 ms, its 3×3 512->512 2.48/2.41 -> 2.22/2.17, the sums 37.3/35.1 ->
    // 35.0/34.3.
    let per_block = row_tiles * tiles;
    let y_lanes = if YB { LANES } else { 1 };
    let bias = SendPtr(bias.map_or(std::ptr::null(), |b| b.as_ptr()) as *mut f32);
    // A thread's units: blocks outermost, the threads claim chunks of units as they go, and a
    // block's later tiles ask for the next block's weights, which another thread may take.
    // Where the weights are large, each thread takes one range of whole blocks instead, as
    // ONNX Runtime's NCHWc convolutions do, so the block asked for is the thread's own.
    // Isolated, cold weights (`RB_PB_COLD=40`, blocked, two threads): 3×3 256->256 at
    // 14×14 0.77 -> 0.68-0.70 ms, 512->512 at 7×7 1.07-1.09 -> 0.96-1.02, 1×1 1024->256 at
    // 14×14 0.35 -> 0.28-0.32, 2048->512 at 7×7 0.49 -> 0.44; 3×3 64->64 at 56×56 (147 KB
    // of weights) 0.65-0.68 -> 0.71-0.73, so smaller weights keep the shared chunks.
    // ResNet-50's node minimums, alternated twice: 3×3 256->256 ×5 3.70/3.68 -> 3.37/3.47
    // ms, 512->512 ×2 1.99/2.04 -> 1.88/1.95, 1×1 2048->512 ×2 0.98/0.97 -> 0.87/0.90.
    let grain = if blocks_outer && w_bytes > OWN_RANGE_BYTES {
        row_tiles * nob.div_ceil(crate::device::cpu::par::num_threads())
    } else {
        2
    };
    // With a blocked output a thread's run of units of one block goes over the depth in
    // passes of PASS_CHANNELS' steps, every tile of the run a pass, keeping each tile's
    // sums in the output between passes (the same sums in the same order: the same bits):
    // a pass's weights (32 KB for a 1×1, 72 KB for a 3×3) stay in L1 or L2 for every tile
    // of the run instead of streaming the whole block's from L2 or memory for each, as
    // ONNX Runtime's pointwise kernels accumulate 128 input channels a pass. ResNet-50,
    // alternated twice: node minimums summed 28.7 / 28.5 -> 27.3 / 27.2 ms (3×3 512->512
    // ×2 1.99 -> 1.68-1.76 ms, /2 1.10-1.13 -> 0.89-0.95, 1×1 256->1024 ×6 1.95-1.98 ->
    // 1.83-1.84, 512->2048 ×3 1.15-1.18 -> 1.07); passes of 128 and 16 channels, or 512
    // and 128, were within the noise of these. (A 3×3 over 64 channels is one pass: in
    // passes of 16 its 56×56 planes' sums cost more than its weights saved, 2.08 -> 2.14.)
    let chunk = if YB {
        let pass = if kv == 1 {
            PASS_CHANNELS.0
        } else {
            PASS_CHANNELS.1
        };
        (pass * kv).min(depth)
    } else {
        depth
    };
    for n in 0..g.n {
        // SAFETY: image n of x (caller's contract).
        let xs = SendPtr(unsafe { src.fill(g, x.add(n * g.c_in * iv)) } as *mut f32);
        let yn = SendPtr(unsafe { y.add(n * c_out * ov) });
        let rn =
            SendPtr(res.map_or(std::ptr::null(), |r| unsafe { r.add(n * c_out * ov) }) as *mut f32);
        for_range(nob * row_tiles, grain, move |u0, u1| {
            let unit = |u: usize| {
                if blocks_outer {
                    (u / row_tiles, u % row_tiles)
                } else {
                    (u % nob, u / nob)
                }
            };
            let mut u = u0;
            while u < u1 {
                // a run of units of one block, chunked over depth together
                let b = unit(u).0;
                let mut ue = u + 1;
                if chunk < depth {
                    while ue < u1 && unit(ue).0 == b {
                        ue += 1;
                    }
                }
                let chunks = depth.div_ceil(chunk);
                let calls = chunks * (ue - u) * tiles;
                let valid = ob.min(c_out - b * ob);
                // SAFETY: block b of the packed weights; rows r..r+R of every channel of
                // block b of y (disjoint per unit); the tiles' reads stay in the source.
                unsafe {
                    let w = packed.get().add(b * depth * ob) as *const f32;
                    for k in 0..chunks {
                        let (s0, s1) = (k * chunk, ((k + 1) * chunk).min(depth));
                        let (offs, w) = (&offs[s0..s1], w.add(s0 * ob));
                        let fin = k + 1 == chunks;
                        for uu in u..ue {
                            let rt = unit(uu).1;
                            let r = rt * R;
                            let row = xs.get().add(r * row_step) as *const f32;
                            for tc in 0..tiles {
                                let c0 = tc * C;
                                // (blocked: the tile's first position in the block's first
                                // LANES channels, b·OB·ov values in as NCHW)
                                let first = b * ob * ov + (r * ow + c0) * y_lanes;
                                let out = Out {
                                    y: yn.get().add(first),
                                    res: if rn.get().is_null() {
                                        std::ptr::null()
                                    } else {
                                        rn.get().add(first)
                                    },
                                    bias: if bias.get().is_null() {
                                        std::ptr::null()
                                    } else {
                                        bias.get().add(b * ob)
                                    },
                                    ov,
                                    ow,
                                    valid,
                                    np: C.min(ow - c0),
                                    rows: R.min(oh - r),
                                    relu,
                                    partial: (k > 0, !fin),
                                };
                                let at = row.add(c0 * ps);
                                // The next block's weights, asked for in L2 over this run's
                                // calls after the first (which streams this block's own).
                                let t = if chunks > 1 {
                                    (k * (ue - u) + (uu - u)) * tiles + tc
                                } else {
                                    rt * tiles + tc
                                };
                                let per = if chunks > 1 { calls } else { per_block };
                                let wn = if blocks_outer && b + 1 < nob && t >= 1 {
                                    // the block's 64-byte lines, split over the other calls
                                    let lines = (depth * 2).div_ceil(per - 1);
                                    let first = ((t - 1) * lines).min(depth * 2);
                                    let next = packed.get().add((b + 1) * depth * ob) as *const f32;
                                    (next.add(first * 16), lines.min(depth * 2 - first))
                                } else {
                                    (std::ptr::null(), 0)
                                };
                                match (prefetch, out.rows < R) {
                                    // a last odd row of a two-row tile alone (not computed
                                    // and dropped)
                                    (true, true) => tile::<1, C, S, XB, true, YB>(
                                        at, row_step, offs, w, wn, out,
                                    ),
                                    (false, true) => tile::<1, C, S, XB, false, YB>(
                                        at, row_step, offs, w, wn, out,
                                    ),
                                    (true, false) => tile::<R, C, S, XB, true, YB>(
                                        at, row_step, offs, w, wn, out,
                                    ),
                                    (false, false) => tile::<R, C, S, XB, false, YB>(
                                        at, row_step, offs, w, wn, out,
                                    ),
                                }
                                if gelu && fin {
                                    // (a channel's row, or a block's positions' LANES
                                    // values each)
                                    for q in 0..valid.div_ceil(y_lanes) {
                                        for i in 0..out.rows {
                                            let yq = std::slice::from_raw_parts_mut(
                                                out.y.add((q * ov + i * ow) * y_lanes),
                                                out.np * y_lanes,
                                            );
                                            for v in yq {
                                                *v = act.apply_f32(*v);
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
                u = ue;
            }
        });
    }
}

/// Where a tile's results go: channel `q`, row `i`, position `p` at `y[q·ov + i·ow + p]`
/// (and the residual's at the same place in `res`), `valid` channels × `rows` × `np`
/// positions, as `t + bias[q] (+ res)`, then max(0, ·) when `relu`.
#[derive(Clone, Copy)]
struct Out {
    y: *mut f32,
    /// null: none
    res: *const f32,
    /// null: none
    bias: *const f32,
    ov: usize,
    ow: usize,
    valid: usize,
    np: usize,
    rows: usize,
    relu: bool,
    /// (the tile's sums so far are in `y`, this pass's are stored as they are): a pass over
    /// part of the depth (blocked outputs only)
    partial: (bool, bool),
}

/// One tile: `R` rows (`rs` apart in the input) of `C` positions (`S` apart, `LANES·S`
/// values in a blocked input: `XB`) from `x` × `NO·16` channels, over the depth steps `offs`
/// with weights `w` (`[depth][NO·16]`) (`PF`: prefetching the next tile's input at each
/// step; `wn`: that many 64-byte lines from the pointer asked for in L2, spread over the
/// steps), written as `out` says: blocked (`YB`) as the accumulators are, else each 16
/// channels' `R·C` accumulators transposed in registers to 16 rows of positions and stored
/// (masked) along the output rows.
///
/// # Safety
/// Every `x + off + i·rs + p·S` is readable; `w` holds `offs.len()·NO·16` aligned values;
/// `out`'s pointers address what it describes; `R·C <= 16`; the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn tile<
    const R: usize,
    const C: usize,
    const S: usize,
    const XB: bool,
    const PF: bool,
    const YB: bool,
>(
    x: *const f32,
    rs: usize,
    offs: &[isize],
    w: *const f32,
    (mut wn, wn_lines): (*const f32, usize),
    out: Out,
) {
    use std::arch::x86_64::*;
    let mut acc = [[[_mm512_setzero_ps(); NO]; C]; R];
    if YB && out.partial.0 {
        // SAFETY: the tile's stored positions (caller's contract).
        unsafe {
            for q in 0..NO {
                if q * 16 >= out.valid {
                    break;
                }
                for (i, row) in acc.iter_mut().enumerate().take(out.rows) {
                    for (p, a) in row.iter_mut().enumerate().take(out.np) {
                        a[q] = _mm512_loadu_ps(out.y.add((q * out.ov + i * out.ow + p) * 16));
                    }
                }
            }
        }
    }
    let mut wp = w;
    let steps = offs.len();
    let mut owed = 0usize;
    // (values between the tile's positions in the input: S, or LANES·S blocked)
    let ps = if XB { S * LANES } else { S };
    // SAFETY: caller's contract.
    unsafe {
        for &o in offs {
            let xb = x.offset(o);
            if PF {
                // the next tile's inputs at this step
                if XB {
                    // (blocked: the steps of a block of channels read the same lines, the
                    // tile's positions one line each; its lane picks one of the next tile's:
                    // ResNet-50's 1×1 1024->256 at 14×14 2.33-2.38 -> 2.10-2.14 ms, 64->256
                    // at 56×56 1.82-1.96 -> 1.62-1.66, node minimums alternated twice)
                    let lane = (xb as usize / 4) % LANES;
                    _mm_prefetch::<_MM_HINT_T0>(
                        xb.wrapping_add(C * ps + lane * (LANES - 1)) as *const i8
                    );
                } else {
                    _mm_prefetch::<_MM_HINT_T0>(xb.wrapping_add(C * ps + 16) as *const i8);
                }
            }
            // (wn_lines lines spread evenly over the steps)
            owed += wn_lines;
            while owed >= steps {
                _mm_prefetch::<_MM_HINT_T1>(wn as *const i8);
                wn = wn.wrapping_add(16);
                owed -= steps;
            }
            let mut wv = [_mm512_setzero_ps(); NO];
            for (q, v) in wv.iter_mut().enumerate() {
                *v = _mm512_load_ps(wp.add(16 * q));
            }
            wp = wp.add(16 * NO);
            for (i, row) in acc.iter_mut().enumerate() {
                let xr = xb.add(i * rs);
                for (p, a) in row.iter_mut().enumerate() {
                    let b = _mm512_set1_ps(*xr.add(p * ps));
                    for q in 0..NO {
                        a[q] = _mm512_fmadd_ps(wv[q], b, a[q]);
                    }
                }
            }
        }
        let zero = _mm512_setzero_ps();
        if YB {
            // Blocked output: a position's 16 channels are one vector, stored as they are.
            for q in 0..NO {
                if q * 16 >= out.valid {
                    break;
                }
                let bias = if out.bias.is_null() {
                    zero
                } else {
                    _mm512_loadu_ps(out.bias.add(q * 16))
                };
                for (i, row) in acc.iter().enumerate().take(out.rows) {
                    for (p, a) in row.iter().enumerate().take(out.np) {
                        let at = (q * out.ov + i * out.ow + p) * 16;
                        if out.partial.1 {
                            _mm512_storeu_ps(out.y.add(at), a[q]);
                            continue;
                        }
                        let mut v = _mm512_add_ps(a[q], bias);
                        if !out.res.is_null() {
                            v = _mm512_add_ps(v, _mm512_loadu_ps(out.res.add(at)));
                        }
                        if out.relu {
                            v = _mm512_max_ps(zero, v);
                        }
                        _mm512_storeu_ps(out.y.add(at), v);
                    }
                }
            }
            return;
        }
        let cols: __mmask16 = ((1u32 << out.np) - 1) as __mmask16;
        for q in 0..NO {
            if q * 16 >= out.valid {
                break;
            }
            let mut r = [zero; 16];
            for (i, row) in acc.iter().enumerate() {
                for (p, a) in row.iter().enumerate() {
                    r[i * C + p] = a[q];
                }
            }
            transpose16(&mut r);
            for (j, v) in r.iter().enumerate() {
                let ch = q * 16 + j;
                if ch >= out.valid {
                    break;
                }
                let mut v = *v;
                if !out.bias.is_null() {
                    v = _mm512_add_ps(v, _mm512_set1_ps(*out.bias.add(ch)));
                }
                for i in 0..out.rows {
                    // row i's positions are lanes i·C..: addressed from i·C before the row
                    // (masked-off lanes are not touched, nor can they fault)
                    let at = (ch * out.ov + i * out.ow) as isize - (i * C) as isize;
                    let m = cols << (i * C);
                    let mut vi = v;
                    if !out.res.is_null() {
                        vi = _mm512_add_ps(vi, _mm512_maskz_loadu_ps(m, out.res.offset(at)));
                    }
                    if out.relu {
                        // (max(0, NaN) is NaN, as relu's)
                        vi = _mm512_max_ps(zero, vi);
                    }
                    _mm512_mask_storeu_ps(out.y.offset(at), m, vi);
                }
            }
        }
    }
}

/// Transposes the 16×16 matrix whose rows are `r`, in registers.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[inline]
pub(super) unsafe fn transpose16(r: &mut [std::arch::x86_64::__m512; 16]) {
    use std::arch::x86_64::*;
    let (c, p) = (_mm512_castps_pd, _mm512_castpd_ps);
    // 32-bit then 64-bit interleaves: u[4i + k], lane L = column 4L + k of rows 4i..4i+3
    let mut t = *r;
    for i in 0..8 {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    let mut u = t;
    for i in 0..4 {
        let (a, b, cc, d) = (t[4 * i], t[4 * i + 1], t[4 * i + 2], t[4 * i + 3]);
        u[4 * i] = p(_mm512_unpacklo_pd(c(a), c(cc)));
        u[4 * i + 1] = p(_mm512_unpackhi_pd(c(a), c(cc)));
        u[4 * i + 2] = p(_mm512_unpacklo_pd(c(b), c(d)));
        u[4 * i + 3] = p(_mm512_unpackhi_pd(c(b), c(d)));
    }
    // then the 4×4 transpose of 128-bit lanes across u[k], u[4 + k], u[8 + k], u[12 + k]
    for k in 0..4 {
        let (a, b, cc, d) = (u[k], u[4 + k], u[8 + k], u[12 + k]);
        let lo_ab = _mm512_shuffle_f32x4::<0x44>(a, b);
        let lo_cd = _mm512_shuffle_f32x4::<0x44>(cc, d);
        let hi_ab = _mm512_shuffle_f32x4::<0xEE>(a, b);
        let hi_cd = _mm512_shuffle_f32x4::<0xEE>(cc, d);
        r[k] = _mm512_shuffle_f32x4::<0x88>(lo_ab, lo_cd);
        r[4 + k] = _mm512_shuffle_f32x4::<0xDD>(lo_ab, lo_cd);
        r[8 + k] = _mm512_shuffle_f32x4::<0x88>(hi_ab, hi_cd);
        r[12 + k] = _mm512_shuffle_f32x4::<0xDD>(hi_ab, hi_cd);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::conv::{ConvAttrs, conv_geom, conv_reference};

    fn rnd(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// A case's data for `g`, drawn from `seed`: input, weights, bias and residual, and the
    /// weights packed into 64-byte aligned memory.
    struct Data {
        x: Vec<f32>,
        wt: Vec<f32>,
        bias: Vec<f32>,
        res: Vec<f32>,
        pk: Vec<f32>,
        off: usize,
    }

    impl Data {
        fn new(g: &ConvGeom, seed: u64) -> Data {
            let x = rnd(g.n * g.c_in * g.in_vol(), 1 + seed);
            let wt = rnd(g.c_out * g.c_in * g.k_vol(), 100 + seed);
            let bias = rnd(g.c_out, 200 + seed);
            let res = rnd(g.n * g.c_out * g.out_vol(), 300 + seed);
            let mut pk = vec![f32::NAN; packed_len(g) + 16];
            let off = crate::device::cpu::aligned_offset(pk.as_ptr());
            unsafe { pack(g, wt.as_ptr(), pk.as_mut_ptr().add(off)) };
            Data {
                x,
                wt,
                bias,
                res,
                pk,
                off,
            }
        }

        /// [`forward`] of `xs` (with the bias when `bias`, adding `rs` when given) into a
        /// fresh output of NaN.
        fn run(
            &self,
            g: &ConvGeom,
            xs: &[f32],
            bias: bool,
            rs: Option<&[f32]>,
            act: Activation,
            layout: Blocked,
        ) -> Vec<f32> {
            let mut y = vec![f32::NAN; self.res.len()];
            unsafe {
                forward(
                    g,
                    xs.as_ptr(),
                    self.pk.as_ptr().add(self.off),
                    bias.then_some(&self.bias[..]),
                    rs.map(|r| r.as_ptr()),
                    act,
                    y.as_mut_ptr(),
                    layout,
                )
            };
            y
        }
    }

    /// Every tile shape, stride, padding, dilation, ragged row and channel count, with and
    /// without bias / residual / relu / gelu, against the f64 reference (when the CPU runs
    /// the path).
    /// (n, c_in, c_out, h, w, kernel, stride, pad, dilation); 1-D as h = 1
    type Case = (
        usize,
        usize,
        usize,
        usize,
        usize,
        [usize; 2],
        usize,
        usize,
        usize,
    );

    #[test]
    fn matches_reference() {
        // (n, c_in, c_out, h, w, k, stride, pad, dil); 1-D as h = 1
        let cases: &[Case] = &[
            (1, 3, 64, 30, 30, [7, 7], 2, 3, 1),
            (2, 5, 33, 9, 16, [3, 3], 1, 1, 1),
            (1, 16, 70, 7, 7, [3, 3], 1, 1, 1),
            (1, 8, 40, 14, 14, [1, 1], 1, 0, 1),
            (1, 8, 40, 28, 28, [1, 1], 2, 0, 1),
            // (strided 1×1 convolutions gather their positions: odd sizes, a batch, 1-D)
            (2, 8, 24, 15, 29, [1, 1], 2, 0, 1),
            (2, 5, 20, 1, 41, [1, 1], 2, 0, 1),
            (1, 4, 17, 11, 29, [3, 3], 2, 1, 1),
            (1, 6, 32, 12, 20, [3, 3], 1, 2, 2),
            (2, 7, 20, 1, 40, [1, 5], 1, 2, 1),
            (1, 9, 64, 13, 13, [3, 3], 2, 1, 1),
            (1, 2, 3, 10, 17, [2, 4], 1, 0, 1),
            (1, 12, 50, 5, 10, [3, 3], 1, 1, 1),
        ];
        let mut ran = 0;
        for (ci, &(n, c_in, c_out, h, w, k, s, p, d)) in cases.iter().enumerate() {
            let one_d = h == 1;
            let (xs, ws, attrs, ndim) = if one_d {
                (
                    vec![n, c_in, w],
                    vec![c_out, c_in, k[1]],
                    ConvAttrs {
                        stride: vec![s],
                        padding: vec![p],
                        dilation: vec![d],
                        ..Default::default()
                    },
                    1,
                )
            } else {
                (
                    vec![n, c_in, h, w],
                    vec![c_out, c_in, k[0], k[1]],
                    ConvAttrs {
                        stride: vec![s],
                        padding: vec![p],
                        dilation: vec![d],
                        ..Default::default()
                    },
                    2,
                )
            };
            let g = conv_geom("conv", &xs, &ws, &attrs, ndim).unwrap();
            if !applies(&g) {
                assert!(
                    !crate::device::cpu::avx512_kernel_on(Some("RB_CONV_PACKED")),
                    "case {ci}"
                );
                continue;
            }
            ran += 1;
            let cs = Data::new(&g, ci as u64);
            let (x, wt, bias, res) = (&cs.x, &cs.wt, &cs.bias, &cs.res);
            let yn = res.len();
            let f = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let reference = conv_reference(&g, &f(x), &f(wt), Some(&f(bias)));
            for (with_res, act) in [
                (false, Activation::None),
                (true, Activation::Relu),
                (false, Activation::Gelu { tanh: false }),
                (true, Activation::None),
            ] {
                let y = cs.run(
                    &g,
                    x,
                    true,
                    with_res.then_some(res),
                    act,
                    Blocked::default(),
                );
                let depth = (c_in * k[0] * k[1]) as f64;
                for i in 0..yn {
                    let mut want = reference[i] + if with_res { res[i] as f64 } else { 0.0 };
                    want = act.apply_f64(want);
                    let tol = 1e-5 * (1.0 + depth.sqrt());
                    assert!(
                        (y[i] as f64 - want).abs() <= tol,
                        "case {ci} {act:?} res {with_res}: y[{i}] = {} want {want}",
                        y[i]
                    );
                }
            }
            // no bias, a NaN input propagates to exactly the outputs that read it
            let mut xn = x.clone();
            xn[0] = f32::NAN;
            let y = cs.run(&g, &xn, false, None, Activation::Relu, Blocked::default());
            let mut xr = f(&xn);
            xr[0] = f64::NAN;
            let r = conv_reference(&g, &xr, &f(wt), None);
            for i in 0..yn {
                assert_eq!(y[i].is_nan(), r[i].is_nan(), "case {ci}: NaN at {i}");
            }
        }
        // every case runs where the CPU has the path
        assert_eq!(
            ran,
            if crate::device::cpu::avx512_kernel_on(Some("RB_CONV_PACKED")) {
                cases.len()
            } else {
                0
            }
        );
    }

    /// `[n, c, sp]` (NCHW) as `[n, c / 16, sp, 16]` (`back`: the other way).
    fn reblock(v: &[f32], n: usize, c: usize, sp: usize, back: bool) -> Vec<f32> {
        let mut o = vec![0f32; v.len()];
        for b in 0..n {
            for ch in 0..c {
                for p in 0..sp {
                    let nchw = (b * c + ch) * sp + p;
                    let blocked = ((b * c / LANES + ch / LANES) * sp + p) * LANES + ch % LANES;
                    let (to, from) = if back {
                        (nchw, blocked)
                    } else {
                        (blocked, nchw)
                    };
                    o[to] = v[from];
                }
            }
        }
        o
    }

    /// Every blocked combination of input and output gives the NCHW kernel's bits (the
    /// same sums in the same order), over one- and two-row tiles, strides, padding,
    /// dilation, a last half block of output channels, batches, residuals, gelu and depth
    /// passes.
    #[test]
    fn blocked_layouts_match_nchw() {
        // (n, c_in, c_out, h, w, k, stride, pad, dil)
        let cases = [
            (1, 16, 32, 14, 14, 1, 1, 0, 1),
            (2, 32, 48, 9, 9, 3, 1, 1, 1),
            (1, 16, 16, 28, 28, 3, 2, 1, 1),
            (1, 48, 32, 13, 20, 1, 2, 0, 1),
            (1, 16, 64, 15, 17, 3, 1, 2, 2),
            (1, 32, 32, 7, 7, 3, 1, 1, 1),
            (1, 16, 80, 30, 30, 1, 1, 0, 1),
            // depth passes (a blocked output): two for a 1×1 (256 + 16 channels), and for
            // a 3×3 (64 + 16) whose 737 KB of weights take one range of blocks a thread
            (2, 272, 48, 7, 7, 1, 1, 0, 1),
            (1, 80, 256, 14, 14, 3, 2, 1, 1),
            // a blocked 1×1 whose 590 KB of weights take one range of blocks a thread
            // (pointwise.rs), in three passes, and one over a 28×28 plane
            (1, 528, 288, 7, 7, 1, 1, 0, 1),
            (1, 64, 48, 28, 28, 1, 1, 0, 1),
        ];
        if !crate::device::cpu::avx512_kernel_on(Some("RB_CONV_PACKED")) {
            return;
        }
        for (ci, &(n, c_in, c_out, h, w, k, s, p, d)) in cases.iter().enumerate() {
            let attrs = ConvAttrs {
                stride: vec![s],
                padding: vec![p],
                dilation: vec![d],
                ..Default::default()
            };
            let g = conv_geom("conv", &[n, c_in, h, w], &[c_out, c_in, k, k], &attrs, 2).unwrap();
            for layout in [
                Blocked { x: true, y: false },
                Blocked { x: false, y: true },
                Blocked { x: true, y: true },
            ] {
                assert!(applies_blocked(&g, layout), "case {ci}");
            }
            let (iv, ov) = (h * w, g.out_vol());
            let cs = Data::new(&g, 50 + ci as u64);
            let (x, res) = (&cs.x, &cs.res);
            let yn = res.len();
            let run = |xs: &[f32], rs: &[f32], act, with_res: bool, layout| {
                cs.run(&g, xs, true, with_res.then_some(rs), act, layout)
            };
            let xb = reblock(x, n, c_in, iv, false);
            let rb = reblock(res, n, c_out, ov, false);
            for (with_res, act) in [
                (true, Activation::Relu),
                (false, Activation::None),
                (false, Activation::Gelu { tanh: true }),
            ] {
                let want = run(x, res, act, with_res, Blocked::default());
                assert!(
                    want.iter().all(|v| v.is_finite()),
                    "case {ci}: NCHW wrote all"
                );
                for layout in [
                    Blocked { x: true, y: false },
                    Blocked { x: false, y: true },
                    Blocked { x: true, y: true },
                ] {
                    let xs = if layout.x { &xb } else { x };
                    let rs = if layout.y { &rb } else { res };
                    let mut got = run(xs, rs, act, with_res, layout);
                    if layout.y {
                        got = reblock(&got, n, c_out, ov, true);
                    }
                    for i in 0..yn {
                        assert_eq!(
                            got[i].to_bits(),
                            want[i].to_bits(),
                            "case {ci} {layout:?} {act:?} res {with_res}: y[{i}] {} want {}",
                            got[i],
                            want[i]
                        );
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod bench {
    use super::*;
    use crate::ops::conv::{ConvAttrs, conv_geom};

    /// `RB_PB="c_in c_out hw k stride [res]" cargo test --release --lib packed_bench --
    /// --ignored --nocapture`: best-of-50 time of one convolution (`RB_PB_COLD=N`: weights
    /// from N copies in turn; `RB_PB_LAYOUT`: blocked tensors; `RB_PB_XCORE=1`: the input
    /// rewritten before each call by the threads, half each, as a previous node leaves it).
    #[test]
    #[ignore]
    fn packed_bench() {
        let spec = std::env::var("RB_PB").unwrap_or("64 256 56 1 1".into());
        for one in spec.split(',') {
            let v: Vec<usize> = one.split_whitespace().map(|s| s.parse().unwrap()).collect();
            let (ci, co, hw, k, s) = (v[0], v[1], v[2], v[3], v[4]);
            let res = v.get(5).is_some_and(|&r| r == 1);
            let attrs = ConvAttrs {
                stride: vec![s],
                padding: vec![k / 2],
                ..Default::default()
            };
            let g = conv_geom("conv", &[1, ci, hw, hw], &[co, ci, k, k], &attrs, 2).unwrap();
            let x = vec![0.5f32; ci * hw * hw];
            let w = vec![0.01f32; co * ci * k * k];
            // RB_PB_COLD=N: N copies of the packed weights used in turn (cold caches)
            let copies: usize = std::env::var("RB_PB_COLD")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(1);
            let pl = packed_len(&g).div_ceil(16) * 16;
            let mut pk = vec![0f32; pl * copies + 16];
            let off = crate::device::cpu::aligned_offset(pk.as_ptr());
            for c in 0..copies {
                unsafe { pack(&g, w.as_ptr(), pk.as_mut_ptr().add(off + c * pl)) };
            }
            let yn = co * g.out_vol();
            let r = vec![0.25f32; yn];
            let mut y = vec![0f32; yn];
            let b = vec![0.1f32; co];
            // RB_PB_LAYOUT=x, y or xy: those tensors blocked (the values are the same)
            let lay = std::env::var("RB_PB_LAYOUT").unwrap_or_default();
            let layout = Blocked {
                x: lay.contains('x'),
                y: lay.contains('y'),
            };
            let mut best = f64::MAX;
            let xcore = std::env::var("RB_PB_XCORE").is_ok();
            let xs = SendPtr(x.as_ptr() as *mut f32);
            for it in 0..50 {
                if xcore {
                    // the input written as the previous node leaves it: split by channels
                    // over the threads (rewritten in place)
                    let len = x.len();
                    crate::device::cpu::par::for_range(2, 1, move |a, b| unsafe {
                        for h in a..b {
                            let s =
                                std::slice::from_raw_parts_mut(xs.get().add(h * len / 2), len / 2);
                            for v in s {
                                *v = std::ptr::read_volatile(v) + 0.0;
                            }
                        }
                    });
                }
                let t = std::time::Instant::now();
                unsafe {
                    forward(
                        &g,
                        x.as_ptr(),
                        pk.as_ptr().add(off + (it % copies) * pl),
                        Some(&b),
                        res.then_some(r.as_ptr()),
                        Activation::Relu,
                        y.as_mut_ptr(),
                        layout,
                    )
                };
                best = best.min(t.elapsed().as_secs_f64());
            }
            let fl = 2.0 * (ci * co * k * k * g.out_vol()) as f64;
            println!(
                "{ci}->{co} {hw} {k}x{k}/{s} res {res}: {:.3} ms {:.1} GFLOP/s",
                best * 1e3,
                fl / best / 1e9
            );
        }
    }
}
