//! 3×3 stride-1 convolutions by Winograd's minimal filtering F(2×2, 3×3) (Lavin and Gray,
//! "Fast Algorithms for Convolutional Neural Networks", 2016): each 2×2 block of outputs
//! ("tile") takes 16 products a channel pair instead of 36, in f32 throughout. The
//! executor's packed convolutions ([`super::packed`]) take this path for the geometries
//! [`applies`] names; their packed weights are then the transformed ones.
//!
//! `Y = Aᵀ [ (G g Gᵀ) ⊙ (Bᵀ d B) ] A` over each tile's 4×4 input patch `d`, with
//! `Bᵀ = [1 0 -1 0; 0 1 1 0; 0 -1 1 0; 0 1 0 -1]`, `G = [1 0 0; ½ ½ ½; ½ -½ ½; 0 0 1]`,
//! `Aᵀ = [1 1 1 0; 0 1 -1 -1]`. Summed over the input channels, the 16 elementwise
//! products of a tile are 16 matrix products, `M[ξ] = V[ξ] · U[ξ]`
//! (`[tiles × c_in] · [c_in × c_out]`), between the input transform and the output one.
//!
//! - The weights are transformed once, when the executor packs them (in f64, rounded
//!   once): `U` as `[output-channel blocks of 32][ξ][c_in][32]`, 16/9 the plain weights.
//! - The input transform reads the blocked input (`[n, c / 16, h, w, 16]`: a position's
//!   16 channels one vector) and writes `V` by groups of [`T`] = 14 tiles as
//!   `[ξ][group][c_in / 16][T][16]`: the 16 channels of one tile one 64-byte line.
//! - The products run in register tiles of 14 tiles × 32 channels (28 accumulators: 2
//!   weight vectors and 14 broadcasts, from 14 lines that serve 16 steps, for 28 FMAs a
//!   channel), the next `ξ`'s weights asked for in L2 meanwhile; a run of up to
//!   [`CHUNK`] tiles keeps its 16 `M[ξ]` in a buffer of its thread, which the output
//!   transform turns into its outputs with bias, residual and activation.
//! - Many tiles (planes of 28×28 and more in ResNet-50): each thread takes one range of
//!   tiles and runs input transform, products and output transform over each run of
//!   [`CHUNK`] tiles itself, so that the transformed inputs (four times the input) and
//!   sums stay in its L2. Few (14×14: 49 tiles against 4 MB of transformed weights): the
//!   input transform runs over the threads first, then the threads split the output
//!   channels, each reading its share of the weights.
//! - Tensors in NCHW go through blocked copies.
//!
//! Isolated (`packed_bench`, blocked, two threads of this machine's 2-core Xeon, weights
//! from 20 copies in turn), against the direct kernel: 3×3 64->64 at 56×56 0.37-0.39 ms
//! against 0.66-0.67, 128->128 at 28×28 0.35-0.37 against 0.70-0.73, 256->256 at 14×14
//! 0.48-0.51 against 0.69-0.71. ResNet-50's 512->512 at 7×7 (16 tiles in two register
//! tiles of 14, 17 MB of transformed weights) ran 1.31 ms against 0.86-0.88, so planes
//! narrower than 14 keep the direct kernel.
//!
//! Against the direct kernel the products are 2.25 times fewer; the results differ by
//! rounding (the transforms add and subtract inputs before the products; the reference
//! tests bound it as they do the direct kernel's). Where the direct sum of an infinite
//! input gives ±inf, the transforms may meet inf - inf and give NaN, as cuDNN's and
//! oneDNN's Winograd convolutions do; `RB_CONV_WINOGRAD=0` turns the path off.

use super::Spare;
use super::packed::Args;
use crate::device::cpu::aligned_offset;
use crate::device::cpu::par::{SendPtr, for_range};
use crate::ops::conv::{Activation, BLOCK_LANES as LANES, Blocked, ConvGeom};

/// Tiles of one register tile (a group; at most 16).
const T: usize = 14;

/// Weight vectors of one register tile.
const NO: usize = 2;

/// Output channels of one block of the transformed weights.
pub const OBW: usize = NO * 16;

/// Tiles of one unit (a multiple of [`T`]): its 16 products' sums (`16 · CHUNK · OBW`
/// values, 224 KiB) stay in its core's L2 until the output transform reads them.
const CHUNK: usize = 56;

/// The transformed inputs, kept between calls.
static V_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());
/// Blocked copies of NCHW tensors (input, residual, output), kept between calls.
static XB_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());
static RB_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());
static YB_SPARE: parking_lot::Mutex<Vec<f32>> = parking_lot::Mutex::new(Vec::new());

thread_local! {
    /// A unit's products' sums, kept by each thread.
    static M_BUF: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
    /// A run of tiles' transformed inputs, kept by each thread.
    static V_BUF: std::cell::RefCell<Vec<f32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// True when the packed convolution of `g` takes this path: [`super::packed::applies`],
/// a 3×3 kernel over two spatial dimensions, stride 1, padding 1, no dilation, channels in
/// multiples of 16, output rows of at least 14 positions (see the module's note on 7×7)
/// (`RB_CONV_WINOGRAD=0` turns it off).
pub fn applies(g: &ConvGeom) -> bool {
    static ENABLED: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        std::env::var("RB_CONV_WINOGRAD").map_or(true, |v| v.trim() != "0")
    });
    *ENABLED
        && super::packed::applies(g)
        && g.ndim == 2
        && g.k_sp == [1, 3, 3]
        && g.stride == [1, 1, 1]
        && g.pad == [0, 1, 1]
        && g.dil == [1, 1, 1]
        && g.groups == 1
        && !g.channels_last
        && g.c_in.is_multiple_of(LANES)
        && g.c_out.is_multiple_of(LANES)
        && g.out_sp[2] >= 14
        && g.out_sp[1] >= 2
}

/// Elements of the transformed weights of `g`.
pub fn packed_len(g: &ConvGeom) -> usize {
    16 * g.c_in * g.c_out.div_ceil(OBW) * OBW
}

/// Transforms `w` (`[c_out, c_in, 3, 3]`) into `dst` ([`packed_len`] values), in parallel
/// over the output channels' blocks.
///
/// # Safety
/// `w` holds the weights `g` describes; `dst` is writable for [`packed_len`] values and
/// overlaps nothing `w` holds.
pub unsafe fn pack(g: &ConvGeom, w: *const f32, dst: *mut f32) {
    let (c_in, c_out) = (g.c_in, g.c_out);
    let nob = c_out.div_ceil(OBW);
    let (ws, ds) = (SendPtr(w as *mut f32), SendPtr(dst));
    for_range(nob, 1, move |b0, b1| {
        for b in b0..b1 {
            for j in 0..OBW {
                let oc = b * OBW + j;
                for ic in 0..c_in {
                    let mut u = [0f64; 16];
                    if oc < c_out {
                        // SAFETY: the 9 weights of (oc, ic).
                        let k: [f64; 9] = std::array::from_fn(|i| unsafe {
                            *ws.get().add((oc * c_in + ic) * 9 + i) as f64
                        });
                        // G k (4×3), then (G k) Gᵀ (4×4)
                        let gk: [[f64; 3]; 4] = std::array::from_fn(|r| {
                            std::array::from_fn(|c| {
                                let (a, bb, cc) = (k[c], k[3 + c], k[6 + c]);
                                match r {
                                    0 => a,
                                    1 => 0.5 * (a + bb + cc),
                                    2 => 0.5 * (a - bb + cc),
                                    _ => cc,
                                }
                            })
                        });
                        for (r, row) in gk.iter().enumerate() {
                            let [a, bb, cc] = *row;
                            u[4 * r] = a;
                            u[4 * r + 1] = 0.5 * (a + bb + cc);
                            u[4 * r + 2] = 0.5 * (a - bb + cc);
                            u[4 * r + 3] = cc;
                        }
                    }
                    for (xi, v) in u.iter().enumerate() {
                        // SAFETY: block b of every ξ (disjoint per block).
                        unsafe {
                            *ds.get().add(((b * 16 + xi) * c_in + ic) * OBW + j) = *v as f32;
                        }
                    }
                }
            }
        }
    });
}

/// `[c / 16 blocks][sp][16]` from `[c][sp]` (`back`: the other way), one image, in
/// parallel over the blocks.
///
/// # Safety
/// `src` and `dst` hold `c · sp` values each and do not overlap; `c` is a multiple of 16.
unsafe fn reblock(src: *const f32, dst: *mut f32, c: usize, sp: usize, back: bool) {
    let (s, d) = (SendPtr(src as *mut f32), SendPtr(dst));
    for_range(c / LANES, 1, move |b0, b1| {
        for b in b0..b1 {
            for l in 0..LANES {
                for p in 0..sp {
                    let nchw = (b * LANES + l) * sp + p;
                    let blk = (b * sp + p) * LANES + l;
                    let (to, from) = if back { (nchw, blk) } else { (blk, nchw) };
                    // SAFETY: caller's contract; block b of both (disjoint per block).
                    unsafe { *d.get().add(to) = *s.get().add(from) };
                }
            }
        }
    });
}

/// An aligned view into a spare buffer: `len` values from a 64-byte boundary.
fn aligned(s: &mut Spare) -> *mut f32 {
    let p = s.buf.as_mut_ptr();
    // SAFETY: the spare was taken with 16 values to spare.
    unsafe { p.add(aligned_offset(p)) }
}

/// `y = act(conv(x, w) + bias + res)` over weights [`pack`]ed for `g`.
///
/// # Safety
/// As [`super::packed::forward`]'s, for weights [`pack`]ed for `g`; [`applies`] said yes.
pub unsafe fn forward(a: Args<'_>, layout: Blocked) {
    let (g, x, u, bias, res, act, y) = a;
    #[cfg(target_arch = "x86_64")]
    // SAFETY: the caller's contract, image by image.
    unsafe {
        let (iv, ov) = (g.in_vol(), g.out_vol());
        let (xn, yn) = (g.c_in * iv, g.c_out * ov);
        let mut xb = (!layout.x).then(|| Spare::take(&XB_SPARE, xn));
        let mut rb = (!layout.y && res.is_some()).then(|| Spare::take(&RB_SPARE, yn));
        let mut yb = (!layout.y).then(|| Spare::take(&YB_SPARE, yn));
        for n in 0..g.n {
            let mut xi = x.add(n * xn);
            if let Some(b) = xb.as_mut() {
                reblock(xi, b.buf.as_mut_ptr(), g.c_in, iv, false);
                xi = b.buf.as_ptr();
            }
            let mut ri = res.map(|r| r.add(n * yn));
            if let (Some(b), Some(r)) = (rb.as_mut(), ri) {
                reblock(r, b.buf.as_mut_ptr(), g.c_out, ov, false);
                ri = Some(b.buf.as_ptr());
            }
            let yi = match yb.as_mut() {
                Some(b) => b.buf.as_mut_ptr(),
                None => y.add(n * yn),
            };
            image((g, xi, u, bias, ri, act, yi));
            if yb.is_some() {
                reblock(yi, y.add(n * yn), g.c_out, ov, true);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (g, x, u, bias, res, act, y, layout);
        unreachable!("packed::applies is false off x86_64");
    }
}

/// What every unit of one image shares.
#[derive(Clone, Copy)]
struct Image {
    x: SendPtr<f32>,
    u: SendPtr<f32>,
    /// null: none
    bias: SendPtr<f32>,
    /// null: none
    res: SendPtr<f32>,
    y: SendPtr<f32>,
    c_in: usize,
    c_out: usize,
    nob: usize,
    ih: usize,
    iw: usize,
    oh: usize,
    ow: usize,
    tw: usize,
    tiles: usize,
    act: Activation,
}

impl Image {
    /// The input transform of groups `g0..g1`, every block of channels, into `v` (group
    /// `g0` first, `ξ` `vs` values apart).
    ///
    /// # Safety
    /// `v + ξ·vs` is writable for `(g1 - g0) · c_in · T` aligned values.
    #[cfg(target_arch = "x86_64")]
    unsafe fn input(&self, g0: usize, g1: usize, v: *mut f32, vs: usize) {
        for gr in g0..g1 {
            for b in 0..self.c_in / LANES {
                // SAFETY: block b of the input; group gr's lines of block b in v.
                unsafe {
                    input_group(
                        self.x.get().add(b * self.ih * self.iw * LANES),
                        (self.ih, self.iw),
                        self.tw,
                        (gr * T, self.tiles),
                        v.add(((gr - g0) * self.c_in + b * 16) * T),
                        vs,
                    )
                };
            }
        }
    }

    /// The products of groups `g0..g1` (their transformed inputs at `v`, group `g0`'s
    /// first, `ξ` `vs` values apart) with block `ob` of the weights into `m`, then their
    /// output transforms to `y` (channels of block `ob`, tiles before `tiles`).
    ///
    /// # Safety
    /// `v` holds what [`Image::input`] wrote there; `m` is 64-byte aligned and writable for
    /// `16 · CHUNK · OBW` values; `g1 - g0 <= CHUNK / T`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn unit(&self, g0: usize, g1: usize, v: *const f32, vs: usize, ob: usize, m: *mut f32) {
        let (c_in, c_out) = (self.c_in, self.c_out);
        let (oh, ow) = (self.oh, self.ow);
        // SAFETY: caller's contract.
        unsafe {
            let n = g1 - g0;
            for xi in 0..16 {
                let uw = self.u.get().add((ob * 16 + xi) * c_in * OBW) as *const f32;
                // the next block (c_in · OBW / 16 lines: the next ξ's, or the next output
                // channels' first) asked for over these calls
                let next = if xi + 1 < 16 || ob + 1 < self.nob {
                    uw.add(c_in * OBW)
                } else {
                    std::ptr::null()
                };
                let per_cb = OBW.div_ceil(n);
                for gr in g0..g1 {
                    let k = gr - g0;
                    let args = (
                        v.add(xi * vs + k * c_in * T),
                        c_in,
                        uw,
                        m.add((xi * CHUNK + k * T) * OBW),
                        (next, k, per_cb),
                    );
                    // (a last group of at most 7 tiles in a register tile of 7: the 49
                    // tiles of a 14×14 plane)
                    if self.tiles - gr * T <= T / 2 {
                        products::<{ T / 2 }>(args.0, args.1, args.2, args.3, args.4);
                    } else {
                        products::<T>(args.0, args.1, args.2, args.3, args.4);
                    }
                }
            }
            let (t0, t1) = (g0 * T, (g1 * T).min(self.tiles));
            for q in 0..NO {
                let oc = ob * OBW + q * 16;
                if oc >= c_out {
                    break;
                }
                let bias = if self.bias.get().is_null() {
                    std::ptr::null()
                } else {
                    self.bias.get().add(oc) as *const f32
                };
                let plane = (oc / LANES) * oh * ow * LANES;
                let res = if self.res.get().is_null() {
                    std::ptr::null()
                } else {
                    self.res.get().add(plane) as *const f32
                };
                let y = self.y.get().add(plane);
                for t in t0..t1 {
                    output_tile(
                        m.add((t - t0) * OBW + q * 16),
                        CHUNK * OBW,
                        bias,
                        res,
                        y,
                        (t / self.tw, t % self.tw),
                        (oh, ow),
                        self.act == Activation::Relu,
                    );
                }
                if !matches!(self.act, Activation::None | Activation::Relu) {
                    for t in t0..t1 {
                        let (ty, tx) = (t / self.tw, t % self.tw);
                        for i in 2 * ty..(2 * ty + 2).min(oh) {
                            for j in 2 * tx..(2 * tx + 2).min(ow) {
                                let p = std::slice::from_raw_parts_mut(
                                    y.add((i * ow + j) * LANES),
                                    LANES,
                                );
                                for e in p {
                                    *e = self.act.apply_f32(*e);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A thread's buffer of `len` values from a 64-byte boundary, to `f`.
fn with_buf<R>(
    key: &'static std::thread::LocalKey<std::cell::RefCell<Vec<f32>>>,
    len: usize,
    f: impl FnOnce(*mut f32) -> R,
) -> R {
    key.with(|b| {
        let mut b = b.borrow_mut();
        if b.len() < len + 16 {
            b.resize(len + 16, 0.0);
        }
        let off = aligned_offset(b.as_ptr());
        // SAFETY: 16 values to spare past the offset.
        f(unsafe { b.as_mut_ptr().add(off) })
    })
}

/// One image, blocked, in one of the two ways the module's note describes. In the first
/// (at least [`CHUNK`] tiles a thread; in ResNet-50, the 28×28 and 56×56 planes: 14 and
/// 56 groups), each thread takes one range of groups and, for each run of up to `CHUNK`
/// tiles of it, transforms their input into a buffer of its own and takes the products
/// and output transforms of every block of output channels: the transformed inputs and
/// sums stay in its L2, and the thread reads its weights once a run, from L2 where they
/// fit (1 MB at 128 channels). In the second, the input transform runs over the threads
/// into a shared buffer first, and the units (runs of tiles × blocks of output channels)
/// follow.
///
/// # Safety
/// `x`, `res` and `y` hold one blocked image each; `u` holds [`pack`]'s result, 64-byte
/// aligned.
#[cfg(target_arch = "x86_64")]
unsafe fn image(a: Args<'_>) {
    let (g, x, u, bias, res, act, y) = a;
    let (oh, ow) = (g.out_sp[1], g.out_sp[2]);
    let tw = ow.div_ceil(2);
    let groups = (oh.div_ceil(2) * tw).div_ceil(T);
    let im = Image {
        x: SendPtr(x as *mut f32),
        u: SendPtr(u as *mut f32),
        bias: SendPtr(bias.map_or(std::ptr::null(), |b| b.as_ptr()) as *mut f32),
        res: SendPtr(res.unwrap_or(std::ptr::null()) as *mut f32),
        y: SendPtr(y),
        c_in: g.c_in,
        c_out: g.c_out,
        nob: g.c_out.div_ceil(OBW),
        ih: g.in_sp[1],
        iw: g.in_sp[2],
        oh,
        ow,
        tw,
        tiles: oh.div_ceil(2) * tw,
        act,
    };
    let per = CHUNK / T;
    let m_len = 16 * CHUNK * OBW;
    let threads = crate::device::cpu::par::num_threads();
    if groups >= per * threads {
        let vs = CHUNK * g.c_in;
        // (one range of groups a thread: each reads the weights once a run)
        for_range(groups, groups.div_ceil(threads), move |g0, g1| {
            with_buf(&V_BUF, 16 * vs, |vl| {
                with_buf(&M_BUF, m_len, |m| {
                    let mut a = g0;
                    while a < g1 {
                        let b = (a + per).min(g1);
                        // SAFETY: groups a..b of the image into this thread's buffers.
                        unsafe {
                            im.input(a, b, vl, vs);
                            for ob in 0..im.nob {
                                im.unit(a, b, vl, vs, ob, m);
                            }
                        }
                        a = b;
                    }
                })
            })
        });
        return;
    }
    let vs = groups * g.c_in * T;
    let mut v = Spare::take(&V_SPARE, 16 * vs + 16);
    let vp = SendPtr(aligned(&mut v));
    for_range(groups, 1, move |g0, g1| {
        // SAFETY: groups g0..g1's lines of v (disjoint per range).
        unsafe { im.input(g0, g1, vp.get().add(g0 * g.c_in * T), vs) };
    });
    let chunks = groups.div_ceil(per);
    let nob = im.nob;
    // (one range of units a thread, so that its next unit's weights are the next block)
    let units = chunks * nob;
    for_range(units, units.div_ceil(threads), move |u0, u1| {
        with_buf(&M_BUF, m_len, |m| {
            for un in u0..u1 {
                let (ch, ob) = (un / nob, un % nob);
                let (a, b) = (ch * per, (ch * per + per).min(groups));
                // SAFETY: groups a..b of v; block ob of the output (disjoint per unit).
                unsafe { im.unit(a, b, vp.get().add(a * g.c_in * T), vs, ob, m) };
            }
        })
    });
}

/// The input transform of one group's [`T`] tiles (`t0..`; those from `tiles` on read
/// zeros) of one block of 16 channels (`x`: that block's `ih × iw` positions, 16 values
/// each): `Bᵀ d B` of each tile's 4×4 patch (rows `2ty - 1..`, columns `2tx - 1..`, zero
/// outside the input), transposed so that channel `l`'s values of the group's tiles are
/// the line at `v[ξ · vs + l · 16]`.
///
/// # Safety
/// `x` holds the block; `v + ξ·vs + l·16` is writable for 16 aligned values (`l < 16`).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn input_group(
    x: *const f32,
    (ih, iw): (usize, usize),
    tw: usize,
    (t0, tiles): (usize, usize),
    v: *mut f32,
    vs: usize,
) {
    use std::arch::x86_64::*;
    let zero = _mm512_setzero_ps();
    // [ξ][tile of the group]
    let mut e = [[zero; T]; 16];
    // (k indexes the tiles of every ξ's row of e)
    #[allow(clippy::needless_range_loop)]
    for k in 0..T {
        let t = t0 + k;
        if t >= tiles {
            break;
        }
        let (ty, tx) = (t / tw, t % tw);
        let mut d = [[zero; 4]; 4];
        for (a, row) in d.iter_mut().enumerate() {
            let r = (2 * ty + a).wrapping_sub(1);
            if r >= ih {
                continue;
            }
            for (b, el) in row.iter_mut().enumerate() {
                let c = (2 * tx + b).wrapping_sub(1);
                if c < iw {
                    // SAFETY: position (r, c) of the block.
                    *el = unsafe { _mm512_loadu_ps(x.add((r * iw + c) * LANES)) };
                }
            }
        }
        // Bᵀ d
        let mut tt = [[zero; 4]; 4];
        for c in 0..4 {
            tt[0][c] = _mm512_sub_ps(d[0][c], d[2][c]);
            tt[1][c] = _mm512_add_ps(d[1][c], d[2][c]);
            tt[2][c] = _mm512_sub_ps(d[2][c], d[1][c]);
            tt[3][c] = _mm512_sub_ps(d[1][c], d[3][c]);
        }
        // (Bᵀ d) B
        for (r, tr) in tt.iter().enumerate() {
            e[4 * r][k] = _mm512_sub_ps(tr[0], tr[2]);
            e[4 * r + 1][k] = _mm512_add_ps(tr[1], tr[2]);
            e[4 * r + 2][k] = _mm512_sub_ps(tr[2], tr[1]);
            e[4 * r + 3][k] = _mm512_sub_ps(tr[1], tr[3]);
        }
    }
    for (xi, ex) in e.iter().enumerate() {
        for (k, val) in ex.iter().enumerate().take(T) {
            // SAFETY: caller's contract.
            unsafe { _mm512_store_ps(v.add(xi * vs + k * 16), *val) };
        }
    }
}

/// One register tile of one `ξ`: `m[t · OBW + o] = Σ_ic v[(ic / 16 · T + t) · 16 + ic % 16]
/// · u[ic · OBW + o]` for `TT` tiles `t` ([`T`], or 7 for a last group of at most 7) and [`OBW`] channels `o`. `pf`: share `part` of
/// the next block of weights (`c_in · OBW` values) asked for in L2, `per_cb` of each 16
/// steps' `OBW` lines (null: none). Isolated, 256->256 at 14×14 with weights from 20
/// copies: 0.53 ms without (or with prefetcht0), 0.50 with.
///
/// # Safety
/// `v` holds `c_in · T` values; `u` holds `c_in · OBW` aligned values; `m` is writable for
/// `T · OBW` aligned values.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,fma")]
unsafe fn products<const TT: usize>(
    v: *const f32,
    c_in: usize,
    u: *const f32,
    m: *mut f32,
    (pf, part, per_cb): (*const f32, usize, usize),
) {
    use std::arch::x86_64::*;
    let mut acc = [[_mm512_setzero_ps(); NO]; TT];
    // SAFETY: caller's contract.
    unsafe {
        let mut up = u;
        for cb in 0..c_in / 16 {
            let vb = v.add(cb * T * 16);
            if !pf.is_null() {
                // (block cb's 16 steps of OBW values: OBW lines; this call's share of them)
                let first = cb * OBW + part * per_cb;
                for l in first..(first + per_cb).min((cb + 1) * OBW) {
                    _mm_prefetch::<_MM_HINT_T1>(pf.add(l * 16) as *const i8);
                }
            }
            for j in 0..16 {
                let mut wv = [_mm512_setzero_ps(); NO];
                for (q, w) in wv.iter_mut().enumerate() {
                    *w = _mm512_load_ps(up.add(q * 16));
                }
                up = up.add(OBW);
                for (t, a) in acc.iter_mut().enumerate() {
                    let b = _mm512_set1_ps(*vb.add(t * 16 + j));
                    for q in 0..NO {
                        a[q] = _mm512_fmadd_ps(wv[q], b, a[q]);
                    }
                }
            }
        }
        for (t, a) in acc.iter().enumerate() {
            for (q, val) in a.iter().enumerate() {
                _mm512_store_ps(m.add(t * OBW + q * 16), *val);
            }
        }
    }
}

/// The output transform of one tile's 16 channels: `Aᵀ M A` of `m[ξ · ms]` (16 vectors),
/// plus the bias (`bias`: 16 values, or null) and the residual (`res`: the block's plane,
/// or null), relu'd when `relu`, to the tile's positions (those inside `oh × ow`) of `y`
/// (the block's plane, 16 values a position).
///
/// # Safety
/// `m + ξ·ms` holds 16 aligned values for each `ξ`; the pointers address what they
/// describe.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
#[allow(clippy::too_many_arguments)]
unsafe fn output_tile(
    m: *const f32,
    ms: usize,
    bias: *const f32,
    res: *const f32,
    y: *mut f32,
    (ty, tx): (usize, usize),
    (oh, ow): (usize, usize),
    relu: bool,
) {
    use std::arch::x86_64::*;
    // SAFETY: caller's contract.
    unsafe {
        let mv: [__m512; 16] = std::array::from_fn(|xi| _mm512_load_ps(m.add(xi * ms)));
        // Aᵀ M (2×4)
        let mut s = [[_mm512_setzero_ps(); 4]; 2];
        for c in 0..4 {
            let (m0, m1, m2, m3) = (mv[c], mv[4 + c], mv[8 + c], mv[12 + c]);
            s[0][c] = _mm512_add_ps(_mm512_add_ps(m0, m1), m2);
            s[1][c] = _mm512_sub_ps(_mm512_sub_ps(m1, m2), m3);
        }
        let b = if bias.is_null() {
            _mm512_setzero_ps()
        } else {
            _mm512_loadu_ps(bias)
        };
        let zero = _mm512_setzero_ps();
        for (i, sr) in s.iter().enumerate() {
            let r = 2 * ty + i;
            if r >= oh {
                break;
            }
            // (Aᵀ M) A
            let e = [
                _mm512_add_ps(_mm512_add_ps(sr[0], sr[1]), sr[2]),
                _mm512_sub_ps(_mm512_sub_ps(sr[1], sr[2]), sr[3]),
            ];
            for (j, val) in e.into_iter().enumerate() {
                let c = 2 * tx + j;
                if c >= ow {
                    break;
                }
                let at = (r * ow + c) * LANES;
                let mut val = _mm512_add_ps(val, b);
                if !res.is_null() {
                    val = _mm512_add_ps(val, _mm512_loadu_ps(res.add(at)));
                }
                if relu {
                    // (max(0, NaN) is NaN, as relu's)
                    val = _mm512_max_ps(zero, val);
                }
                _mm512_storeu_ps(y.add(at), val);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::conv::{ConvAttrs, conv_geom, conv_reference};

    fn rnd(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// `[n, c, sp]` (NCHW) as `[n, c / 16, sp, 16]` (`back`: the other way).
    fn blocked(v: &[f32], n: usize, c: usize, sp: usize, back: bool) -> Vec<f32> {
        let mut o = vec![0f32; v.len()];
        for i in 0..n {
            reblock_ref(&v[i * c * sp..], &mut o[i * c * sp..], c, sp, back);
        }
        o
    }

    fn reblock_ref(s: &[f32], d: &mut [f32], c: usize, sp: usize, back: bool) {
        for ch in 0..c {
            for p in 0..sp {
                let nchw = ch * sp + p;
                let blk = ((ch / LANES) * sp + p) * LANES + ch % LANES;
                if back {
                    d[nchw] = s[blk];
                } else {
                    d[blk] = s[nchw];
                }
            }
        }
    }

    /// Every layout, plane shape (odd sizes: partial tiles; few tiles: the two-phase
    /// split; many: the per-thread runs), channel count (a last partial block of 64
    /// weights' columns), batch, bias, residual and activation against the f64 reference,
    /// and the same bits in every layout.
    #[test]
    fn matches_reference() {
        if !crate::device::cpu::avx512_kernel_on(Some("RB_CONV_PACKED")) {
            return;
        }
        // (n, c_in, c_out, h, w)
        let cases = [
            (1, 16, 16, 14, 14),
            (2, 32, 48, 15, 17),
            (1, 64, 64, 56, 56),
            (1, 48, 80, 29, 14),
            (1, 16, 32, 2, 30),
            (2, 128, 16, 28, 28),
        ];
        let mut ran = 0;
        for (ci, &(n, c_in, c_out, h, w)) in cases.iter().enumerate() {
            let attrs = ConvAttrs {
                padding: vec![1],
                ..Default::default()
            };
            let g = conv_geom("conv", &[n, c_in, h, w], &[c_out, c_in, 3, 3], &attrs, 2).unwrap();
            assert!(applies(&g), "case {ci}");
            ran += 1;
            let (iv, ov) = (h * w, g.out_vol());
            let x = rnd(n * c_in * iv, 1 + ci as u64);
            let wt = rnd(c_out * c_in * 9, 100 + ci as u64);
            let bias = rnd(c_out, 200 + ci as u64);
            let res = rnd(n * c_out * ov, 300 + ci as u64);
            let mut pk = vec![f32::NAN; packed_len(&g) + 16];
            let off = aligned_offset(pk.as_ptr());
            unsafe { pack(&g, wt.as_ptr(), pk.as_mut_ptr().add(off)) };
            let f = |v: &[f32]| v.iter().map(|&a| a as f64).collect::<Vec<_>>();
            let reference = conv_reference(&g, &f(&x), &f(&wt), Some(&f(&bias)));
            let xb = blocked(&x, n, c_in, iv, false);
            let rb = blocked(&res, n, c_out, ov, false);
            for (with_res, with_bias, act) in [
                (false, true, Activation::None),
                (true, true, Activation::Relu),
                (false, false, Activation::Gelu { tanh: false }),
                (true, true, Activation::None),
            ] {
                let mut first: Option<Vec<f32>> = None;
                for layout in [
                    Blocked { x: false, y: false },
                    Blocked { x: true, y: false },
                    Blocked { x: false, y: true },
                    Blocked { x: true, y: true },
                ] {
                    let mut y = vec![f32::NAN; res.len()];
                    let (xs, rs) = (
                        if layout.x { &xb } else { &x },
                        if layout.y { &rb } else { &res },
                    );
                    unsafe {
                        forward(
                            (
                                &g,
                                xs.as_ptr(),
                                pk.as_ptr().add(off),
                                with_bias.then_some(&bias[..]),
                                with_res.then_some(rs.as_ptr()),
                                act,
                                y.as_mut_ptr(),
                            ),
                            layout,
                        )
                    };
                    if layout.y {
                        y = blocked(&y, n, c_out, ov, true);
                    }
                    let depth = (c_in * 9) as f64;
                    for i in 0..y.len() {
                        let bsub = if with_bias {
                            0.0
                        } else {
                            bias[(i / ov) % c_out] as f64
                        };
                        let mut want =
                            reference[i] - bsub + if with_res { res[i] as f64 } else { 0.0 };
                        want = act.apply_f64(want);
                        let tol = 1e-5 * (1.0 + depth.sqrt());
                        assert!(
                            (y[i] as f64 - want).abs() <= tol,
                            "case {ci} {layout:?} {act:?} res {with_res}: y[{i}] = {} want {want}",
                            y[i]
                        );
                    }
                    match &first {
                        None => first = Some(y),
                        Some(f) => assert!(
                            f.iter().zip(&y).all(|(a, b)| a.to_bits() == b.to_bits()),
                            "case {ci} {layout:?}: the layouts' bits differ"
                        ),
                    }
                }
            }
        }
        assert_eq!(ran, cases.len());
    }

    /// NaN in one input reaches exactly the outputs whose window holds it (the transforms
    /// of F(2×2, 3×3) keep a tile's rows and columns apart where the window does), and the
    /// transformed weights are G g Gᵀ.
    #[test]
    fn nan_stays_in_its_window() {
        if !crate::device::cpu::avx512_kernel_on(Some("RB_CONV_PACKED")) {
            return;
        }
        let attrs = ConvAttrs {
            padding: vec![1],
            ..Default::default()
        };
        let (h, w) = (15, 16);
        let g = conv_geom("conv", &[1, 16, h, w], &[16, 16, 3, 3], &attrs, 2).unwrap();
        let wt = rnd(16 * 16 * 9, 7);
        let mut pk = vec![0f32; packed_len(&g) + 16];
        let off = aligned_offset(pk.as_ptr());
        unsafe { pack(&g, wt.as_ptr(), pk.as_mut_ptr().add(off)) };
        // ξ = (1, 2) of output channel 3, input channel 5: row 1 of G, column 2 of Gᵀ
        let k = |r: usize, c: usize| wt[(3 * 16 + 5) * 9 + r * 3 + c] as f64;
        let gk: Vec<f64> = (0..3)
            .map(|c| 0.5 * (k(0, c) + k(1, c) + k(2, c)))
            .collect();
        let want = 0.5 * (gk[0] - gk[1] + gk[2]);
        let got = pk[off + (6 * 16 + 5) * OBW + 3] as f64;
        assert!((got - want).abs() < 1e-6, "U = {got}, want {want}");
        for (r, c) in [(0, 0), (4, 7), (5, 8), (14, 15), (7, 0), (2, 9)] {
            let mut x = rnd(16 * h * w, 9);
            x[2 * h * w + r * w + c] = f32::NAN;
            let mut y = vec![0f32; 16 * h * w];
            unsafe {
                forward(
                    (
                        &g,
                        x.as_ptr(),
                        pk.as_ptr().add(off),
                        None,
                        None,
                        Activation::None,
                        y.as_mut_ptr(),
                    ),
                    Blocked::default(),
                )
            };
            for oc in 0..16 {
                for i in 0..h {
                    for j in 0..w {
                        let reads = i.abs_diff(r) <= 1 && j.abs_diff(c) <= 1;
                        assert_eq!(
                            y[(oc * h + i) * w + j].is_nan(),
                            reads,
                            "NaN at ({r}, {c}): output ({oc}, {i}, {j})"
                        );
                    }
                }
            }
        }
    }
}
