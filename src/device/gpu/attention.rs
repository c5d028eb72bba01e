//! scaled_dot_product_attention on GPUs, forward and backward. Semantics are those of
//! `crate::ops::nn`. Two paths, chosen per call by [`GpuDevice::attention_choice`] (one
//! small function: the place where a vendor-library path joins):
//!
//! * the portable fused kernel (kernels/flash_attention.hip, FlashAttention-2: online
//!   softmax, no S x S buffer, the matrix cores through kernels/common.h's rb_mma16) for
//!   every head dim <= 128 (64 and 128 are the tuned tiles; others are zero-padded to them),
//!   f32/f16/bf16, every causal mode, additive/bool masks, grouped-query attention by index
//!   arithmetic, any lengths; few query rows against many keys split the keys over blocks
//!   (flash decoding) and merge the partials (rb_fa_combine_*). Memory: O(batch * sq * dv)
//!   partials at most, never S x S;
//! * the GEMM path: strided-batched f32 GEMMs (the vendor BLAS) for the scores and
//!   products, a row-softmax kernel with the mask and the causal limit
//!   (kernels/attention.hip); f16/bf16 operands are cast to f32 scratch first. O(S^2)
//!   memory. It serves head dims > 128, `RB_ATTENTION_PATH=gemm` /
//!   [`crate::device::attention::set_attention_path`], and the backward of calls whose key
//!   and value groups differ (k and v with different head counts).
//!
//! The fused backward (FlashAttention-2): the forward again with the per-row logsumexp (O
//! into scratch), D = rowsum(dO * O), then one kernel over key tiles that recomputes P and
//! accumulates dK, dV in registers (over the query heads of a group) and adds dQ into an f32
//! scratch with atomics, cast once at the end. Memory O(batch * sq * (d + dv)).
//!
//! Grouped-query attention needs no copies: the query heads of one key (value) group are
//! consecutive, so they are the rows of one GEMM batch entry (one fused work unit), and the
//! products that reduce over queries (dK, dV) sum over the group.

use super::kernels::{
    ATT_DSCORES, ATT_DSCORES_F64, ATT_SOFTMAX, ATT_SOFTMAX_F64, FA_BWD, FA_BWD_DOT, FA_COMBINE,
    FA_DEC, FA_FWD, float_suffix,
};
use super::{GpuDevice, Scratch, pad};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::attention::{AttentionPath, attention_path};
use crate::device::{
    AttentionOps, BlasOps, DevPtr, ElementwiseOps, GemmDesc, RawStream, Transpose,
};
use crate::ops::nn::AttentionDesc;

/// The implementation an attention call runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AttentionChoice {
    /// kernels/flash_attention.hip.
    Fused,
    /// Vendor-BLAS GEMMs and kernels/attention.hip.
    Gemm,
}

/// The fused kernel's launch plan for one forward call.
struct FusedPlan {
    kernel: String,
    /// Threads per block.
    block: u32,
    /// Query heads per work unit (the K/V group when k and v group alike, else 1).
    g: usize,
    units: usize,
    row_tiles: usize,
    /// Splits of the key tiles (flash decoding) and key tiles per split (keys per split
    /// for `decode`).
    nsplit: usize,
    tps: usize,
    /// The decoding kernel (`rb_fa_dec_*`) rather than the tiled one.
    decode: bool,
}

/// Query rows per work unit up to which the decoding kernel runs (kernels/flash_attention.hip's
/// `RB_FA_DEC_R`), and the keys one of its blocks takes per round (four warps; `RB_FA_DEC_U`
/// keys per lane group in flight).
const DEC_ROWS: usize = 8;
const DEC_U: usize = 4;
/// `RB_FA_DEC_U1`: keys per lane group in flight for one query row per unit (`_r1`): 4
/// unless `RB_GPU_KERNEL_DEFINES` sets it (1 to 16), which the kernels then compile with.
static DEC_U1: std::sync::LazyLock<usize> =
    std::sync::LazyLock::new(|| super::jit::kernel_define_in("RB_FA_DEC_U1", 1..=16, 4));
/// `RB_FA_DEC_MIN_KEYS`: keys per split at least in the decoding kernel: 64 unless
/// `RB_GPU_KERNEL_DEFINES` sets it (8 to 4096).
static DEC_MIN_KEYS: std::sync::LazyLock<usize> =
    std::sync::LazyLock::new(|| super::jit::kernel_define_in("RB_FA_DEC_MIN_KEYS", 8..=4096, 64));
/// `RB_FA_DEC_PER_CU`: blocks per compute unit the decoding kernel's key splits aim at: 4
/// unless `RB_GPU_KERNEL_DEFINES` sets it (1 to 64).
static DEC_PER_CU: std::sync::LazyLock<usize> =
    std::sync::LazyLock::new(|| super::jit::kernel_define_in("RB_FA_DEC_PER_CU", 1..=64, 4));

/// Query heads per fused work unit: the key/value group when keys and values group alike
/// (the group's rows share one K/V head), else 1.
fn unit_heads(d: &AttentionDesc) -> usize {
    if d.k_group == d.v_group {
        d.k_group.max(1)
    } else {
        1
    }
}

/// The mask arguments the attention kernels take: kind (0 none, 1 bool, 2 f32, 3 f16,
/// 4 bf16), inner, stride_outer, stride_inner, stride_q, stride_k.
fn mask_args(d: &AttentionDesc) -> (i32, u64, u64, u64, u64, u64) {
    match &d.mask {
        None => (0i32, 1u64, 0u64, 0u64, 0u64, 0u64),
        Some(m) => (
            match m.dtype {
                DType::Bool => 1,
                DType::F32 => 2,
                DType::F16 => 3,
                DType::F64 => 5,
                _ => 4,
            },
            m.inner as u64,
            m.stride_outer as u64,
            m.stride_inner as u64,
            m.stride_q as u64,
            m.stride_k as u64,
        ),
    }
}

impl GpuDevice {
    /// Which path runs a call: the fused kernels for head dims <= 128 (and, for the
    /// backward, equal key and value groups) unless the GEMM path is forced
    /// ([`attention_path`]).
    pub(super) fn attention_choice(&self, d: &AttentionDesc, backward: bool) -> AttentionChoice {
        let fits = d.d <= 128 && d.dv <= 128 && (!backward || d.k_group == d.v_group);
        match attention_path() {
            AttentionPath::Gemm => AttentionChoice::Gemm,
            AttentionPath::Auto | AttentionPath::Portable if fits => AttentionChoice::Fused,
            _ => AttentionChoice::Gemm,
        }
    }

    /// The decoding kernel's plan (kernels/flash_attention.hip's `rb_fa_dec`), where it
    /// applies: at most [`DEC_ROWS`] query rows per unit, head dims multiples of the 16-byte
    /// vector, q, k and v 16-byte aligned. The keys split until [`DEC_PER_CU`] blocks per
    /// compute unit are in flight (at least [`DEC_MIN_KEYS`] keys per split).
    fn decode_plan(
        &self,
        dtype: DType,
        d: &AttentionDesc,
        ptrs: [DevPtr; 3],
    ) -> Result<Option<FusedPlan>> {
        let sfx = float_suffix("scaled_dot_product_attention", dtype)?;
        let g = unit_heads(d);
        let vec = 16 / dtype.size();
        let rows = g * d.sq;
        if rows > DEC_ROWS
            || !d.d.is_multiple_of(vec)
            || !d.dv.is_multiple_of(vec)
            || ptrs.iter().any(|p| !(p.0 as usize).is_multiple_of(16))
        {
            return Ok(None);
        }
        let wide = d.d.max(d.dv) > 64;
        let lanes = if wide { 128 } else { 64 } / vec;
        let round = 4 * (32 / lanes) * if rows == 1 { *DEC_U1 } else { DEC_U };
        let units = d.batch / g;
        let want = *DEC_PER_CU * self.facts.compute_units.max(1) as usize;
        let nsplit = (want / units.max(1)).clamp(1, d.sk.div_ceil(*DEC_MIN_KEYS).max(1));
        let kps = d.sk.div_ceil(nsplit).div_ceil(round).max(1) * round;
        Ok(Some(FusedPlan {
            kernel: FA_DEC.suffixed(sfx)
                + if wide { "_d128" } else { "_d64" }
                + match rows {
                    1 => "_r1",
                    2..=4 => "_r4",
                    _ => "",
                },
            block: 128,
            g,
            units,
            row_tiles: 1,
            nsplit: d.sk.div_ceil(kps).max(1),
            tps: kps,
            decode: true,
        }))
    }

    /// The fused forward's kernel, tiles and splits (kernels/flash_attention.hip's
    /// instantiations: rows per block 16 NW, keys per tile BC).
    fn fused_plan(&self, dtype: DType, d: &AttentionDesc) -> Result<FusedPlan> {
        let sfx = float_suffix("scaled_dot_product_attention", dtype)?;
        let wide = d.d.max(d.dv) > 64;
        let g = unit_heads(d);
        let rows = g * d.sq;
        let dec = rows <= 16;
        // (warps per block, keys per tile) as the .hip file instantiates them.
        let (nw, bc) = match (dtype == DType::F32, wide, dec) {
            (false, false, false) => (4, 64),
            (false, true, false) => (4, 32),
            (false, _, true) => (1, 64),
            (true, false, false) => (2, 32),
            (true, true, false) => (2, 16),
            (true, false, true) => (1, 32),
            (true, true, true) => (1, 16),
        };
        let variant = match (wide, dec) {
            (false, false) => "_d64",
            (true, false) => "_d128",
            (false, true) => "_d64_dec",
            (true, true) => "_d128_dec",
        };
        let units = d.batch / g;
        let row_tiles = rows.div_ceil(16 * nw);
        let ktiles = d.sk.div_ceil(bc).max(1);
        let blocks = units * row_tiles;
        // Split the keys when the blocks would not fill the device twice over; decoding
        // blocks are one warp each, so they split until eight per compute unit are in flight
        // (a [1, 32, 1, 128] query against 2048 keys per head: 256 blocks took 140 us on an
        // H100, a memory-bound ~12 us problem).
        let per_cu = if dec { 8 } else { 2 };
        let want = per_cu * self.facts.compute_units.max(1) as usize;
        let mut nsplit = 1;
        if blocks < want && ktiles > 1 {
            nsplit = want.div_ceil(blocks).min(ktiles).min(1024);
        }
        let tps = ktiles.div_ceil(nsplit);
        let nsplit = ktiles.div_ceil(tps);
        Ok(FusedPlan {
            kernel: FA_FWD.suffixed(sfx) + variant,
            block: nw as u32 * self.warp_size(),
            g,
            units,
            row_tiles,
            nsplit,
            tps,
            decode: false,
        })
    }

    /// The fused forward (kernels/flash_attention.hip); `lse` (f32 `[batch * sq]`, the
    /// natural logsumexp of each row's scores) is written when not NULL. `fresh`: as
    /// [`AttentionOps::attention_fresh`] says (the position and whether it is i32); the
    /// one-row decoding kernel then loads its first round of other rows before it waits.
    #[allow(clippy::too_many_arguments)]
    fn attention_fused(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        (q, k, v, mask): (DevPtr, DevPtr, DevPtr, DevPtr),
        out: DevPtr,
        lse: DevPtr,
        fresh: Option<(DevPtr, bool)>,
    ) -> Result<()> {
        let p = match self.decode_plan(dtype, d, [q, k, v])? {
            Some(p) => p,
            None => self.fused_plan(dtype, d)?,
        };
        let rows_total = d.batch * d.sq;
        let parts = if p.nsplit > 1 {
            let no = rows_total * p.nsplit;
            Some(self.f32_scratch(stream, &[no * d.dv, no * 2])?)
        } else {
            None
        };
        let (po, pml) = match &parts {
            Some((_, v)) => (v[0], v[1]),
            None => (DevPtr::NULL, DevPtr::NULL),
        };
        let (mkind, minner, mso, msi, msq, msk) = mask_args(d);
        let (row_tiles, g, kg, vg) = (
            p.row_tiles as i32,
            p.g as i32,
            d.k_group as i32,
            d.v_group as i32,
        );
        let (sq, sk, dd, dv) = (d.sq as i64, d.sk as i64, d.d as i32, d.dv as i32);
        let (scale, causal, nsplit, tps) = (
            d.scale as f32,
            d.causal as i32,
            p.nsplit as i32,
            p.tps as i32,
        );
        // Inside a device graph the decoding kernel's last block per unit merges the splits
        // (counters the graph owns); else rb_fa_combine_* does, launched after it.
        let cnt = if p.decode && p.nsplit > 1 {
            self.capture_counters(stream, p.units)
        } else {
            None
        };
        let fwd_lse = if p.nsplit > 1 && cnt.is_none() {
            DevPtr::NULL
        } else {
            lse
        };
        if p.decode {
            let kps = p.tps as i64;
            let cnt = cnt.unwrap_or(DevPtr::NULL);
            // (a kernel of several rows per unit takes the position and waits first)
            let (fresh, fresh64) = fresh.map_or((DevPtr::NULL, 1), |(pos, i32_index)| {
                (pos, !i32_index as i32)
            });
            self.launch_grid(
                stream,
                FA_DEC.src,
                &p.kernel,
                [p.units, p.nsplit, 1],
                [p.block, 1, 1],
                &mut kargs![
                    q.0, k.0, v.0, out.0, fwd_lse.0, po.0, pml.0, g, kg, vg, sq, sk, dd, dv, scale,
                    causal, mask.0, mkind, minner, mso, msi, msq, msk, nsplit, kps, cnt.0, fresh.0,
                    fresh64
                ],
            )?;
            if !cnt.is_null() {
                return Ok(());
            }
        } else {
            self.launch_grid(
                stream,
                FA_FWD.src,
                &p.kernel,
                [p.units * p.row_tiles, p.nsplit, 1],
                [p.block, 1, 1],
                &mut kargs![
                    q.0, k.0, v.0, out.0, fwd_lse.0, po.0, pml.0, row_tiles, g, kg, vg, sq, sk, dd,
                    dv, scale, causal, mask.0, mkind, minner, mso, msi, msq, msk, nsplit, tps
                ],
            )?;
        }
        if p.nsplit > 1 {
            let sfx = float_suffix("scaled_dot_product_attention", dtype)?;
            let (rows64, n) = (rows_total as u64, rows_total * d.dv);
            let kernel = FA_COMBINE.suffixed(sfx);
            self.launch_1d(
                stream,
                FA_COMBINE.src,
                &kernel,
                n.div_ceil(256).min(1 << 20),
                256,
                &mut kargs![po.0, pml.0, out.0, lse.0, rows64, dv, nsplit],
            )?;
        }
        Ok(())
    }

    /// The fused backward (k_group == v_group; see the module doc).
    #[allow(clippy::too_many_arguments)]
    fn attention_backward_fused(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        (q, k, v, mask): (DevPtr, DevPtr, DevPtr, DevPtr),
        dout: DevPtr,
        (dq, dk, dv): (DevPtr, DevPtr, DevPtr),
    ) -> Result<()> {
        let op = "scaled_dot_product_attention_backward";
        let sfx = float_suffix(op, dtype)?;
        let rows = d.batch * d.sq;
        let es = dtype.size();
        let f32in = dtype == DType::F32;
        // O (the input dtype), lse, D, and dQ in f32 unless dq is f32 itself.
        let o_bytes = pad(rows * d.dv * es);
        let nf = [rows, rows, if f32in { 0 } else { rows * d.d }];
        let total = o_bytes + nf.iter().map(|n| pad(n * 4)).sum::<usize>();
        let buf = Scratch::new(self, total, stream)?;
        let o = buf.ptr;
        let lse = o.offset(o_bytes);
        let dvec = lse.offset(pad(rows * 4));
        let dq32 = if f32in {
            dq
        } else {
            dvec.offset(pad(rows * 4))
        };
        self.attention_fused(stream, dtype, d, (q, k, v, mask), o, lse, None)?;
        let (rows64, dv32) = (rows as u64, d.dv as i32);
        let wsz = self.warp_size() as usize;
        self.launch_1d(
            stream,
            FA_BWD_DOT.src,
            &FA_BWD_DOT.suffixed(sfx),
            (rows * wsz).div_ceil(256).min(1 << 16),
            256,
            &mut kargs![dout.0, o.0, dvec.0, rows64, dv32],
        )?;
        self.fill(stream, DType::F32, dq32, rows * d.d, 0.0)?;
        let wide = d.d.max(d.dv) > 64;
        let nw = if f32in { 1 } else { 2 };
        let g = d.k_group.max(1);
        let units = d.batch / g;
        let key_tiles = d.sk.div_ceil(16 * nw);
        let kernel = FA_BWD.suffixed(sfx) + if wide { "_d128" } else { "_d64" };
        let (mkind, minner, mso, msi, msq, msk) = mask_args(d);
        let (kt, g32, kg, vg) = (
            key_tiles as i32,
            g as i32,
            d.k_group as i32,
            d.v_group as i32,
        );
        let (sq, sk, dd) = (d.sq as i64, d.sk as i64, d.d as i32);
        let (scale, causal) = (d.scale as f32, d.causal as i32);
        self.launch_grid(
            stream,
            FA_BWD.src,
            &kernel,
            [units * key_tiles, 1, 1],
            [nw as u32 * self.warp_size(), 1, 1],
            &mut kargs![
                q.0, k.0, v.0, dout.0, lse.0, dvec.0, dq32.0, dk.0, dv.0, kt, g32, kg, vg, sq, sk,
                dd, dv32, scale, causal, mask.0, mkind, minner, mso, msi, msq, msk
            ],
        )?;
        if !f32in {
            self.cast(stream, DType::F32, dq32, dtype, dq, rows * d.d)?;
        }
        Ok(())
    }

    /// Row-major `C = alpha op(A) op(B)` (m×n, inner k) in `dtype` (f32, or f64 for the f64
    /// path), strided-batched, through the column-major BLAS (C^T = op(B)^T op(A)^T).
    #[allow(clippy::too_many_arguments)]
    fn rm_gemm(
        &self,
        stream: RawStream,
        dtype: DType,
        (ta, tb): (bool, bool),
        (m, n, k): (usize, usize, usize),
        alpha: f32,
        (a, lda, sa): (DevPtr, usize, usize),
        (b, ldb, sb): (DevPtr, usize, usize),
        (c, ldc, sc): (DevPtr, usize, usize),
        batch: usize,
    ) -> Result<()> {
        let t = |x: bool| if x { Transpose::Yes } else { Transpose::No };
        self.gemm(
            stream,
            &GemmDesc {
                dtype,
                trans_a: t(tb),
                trans_b: t(ta),
                m: n,
                n: m,
                k,
                alpha,
                a: b,
                lda: ldb.max(1),
                b: a,
                ldb: lda.max(1),
                beta: 0.0,
                c,
                ldc: ldc.max(1),
                batch,
                stride_a: sb,
                stride_b: sa,
                stride_c: sc,
            },
        )
    }

    /// S = Q K^T, then P = softmax(scale S + mask) in place (causal limit), in `acc`: f32
    /// applies the scale as the GEMM's alpha, f64 multiplies by it in `rb_att_softmax_f64`
    /// (double GEMMs with alpha 1). The query heads of a key group are consecutive rows of
    /// one GEMM batch entry.
    #[allow(clippy::too_many_arguments)]
    fn attention_probs(
        &self,
        stream: RawStream,
        acc: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        mask: DevPtr,
        s: DevPtr,
    ) -> Result<()> {
        let (b, sq, sk, dd, g) = (d.batch, d.sq, d.sk, d.d, d.k_group);
        let f64acc = acc == DType::F64;
        self.rm_gemm(
            stream,
            acc,
            (false, true),
            (g * sq, sk, dd),
            if f64acc { 1.0 } else { d.scale as f32 },
            (q, dd, g * sq * dd),
            (k, dd, sk * dd),
            (s, sk, g * sq * sk),
            b / g,
        )?;
        let rows = b * sq;
        let (rows64, sq64, sk64, causal) = (rows as u64, sq as u64, sk as u64, d.causal as i32);
        let (mkind, minner, mso, msi, msq, msk) = mask_args(d);
        let scale = d.scale;
        let mut args = kargs![
            s.0, rows64, sq64, sk64, causal, mask.0, mkind, minner, mso, msi, msq, msk, scale
        ];
        // The f32 kernel takes no scale (the GEMM applied it).
        let (kernel, nargs) = if f64acc {
            (&ATT_SOFTMAX_F64, args.len())
        } else {
            (&ATT_SOFTMAX, args.len() - 1)
        };
        self.launch_1d(
            stream,
            kernel.src,
            kernel.lone(),
            rows.min(1 << 16),
            128,
            &mut args[..nargs],
        )
    }

    /// O = P V in `acc`, the query heads of a value group as the rows of one batch entry.
    fn attention_pv(
        &self,
        stream: RawStream,
        acc: DType,
        d: &AttentionDesc,
        p: DevPtr,
        v: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        let (b, sq, sk, dv, gv) = (d.batch, d.sq, d.sk, d.dv, d.v_group);
        self.rm_gemm(
            stream,
            acc,
            (false, false),
            (gv * sq, dv, sk),
            1.0,
            (p, sk, gv * sq * sk),
            (v, dv, sk * dv),
            (out, dv, gv * sq * dv),
            b / gv,
        )
    }

    /// The GEMM-path backward in `acc` (f32, or f64 for the f64 path) on tensors already in
    /// `acc`: P recomputed into `p`, dP into `dp`, then dS in place of dP. `p` and `dp` hold
    /// `batch * sq * sk` elements of `acc` each.
    #[allow(clippy::too_many_arguments)]
    fn attention_backward_gemm(
        &self,
        stream: RawStream,
        acc: DType,
        d: &AttentionDesc,
        (q, k, v, mask): (DevPtr, DevPtr, DevPtr, DevPtr),
        dout: DevPtr,
        (dq, dk, dv): (DevPtr, DevPtr, DevPtr),
        (p, dp): (DevPtr, DevPtr),
    ) -> Result<()> {
        let (b, sq, sk, dd, ddv) = (d.batch, d.sq, d.sk, d.d, d.dv);
        let (gk, gv) = (d.k_group, d.v_group);
        self.attention_probs(stream, acc, d, q, k, mask, p)?;
        // dP = dO V^T (value groups)
        self.rm_gemm(
            stream,
            acc,
            (false, true),
            (gv * sq, sk, ddv),
            1.0,
            (dout, ddv, gv * sq * ddv),
            (v, ddv, sk * ddv),
            (dp, sk, gv * sq * sk),
            b / gv,
        )?;
        // dV = P^T dO: the inner dimension runs over the group's query heads, so the sum
        // over the group comes with the product.
        self.rm_gemm(
            stream,
            acc,
            (true, false),
            (sk, ddv, gv * sq),
            1.0,
            (p, sk, gv * sq * sk),
            (dout, ddv, gv * sq * ddv),
            (dv, ddv, sk * ddv),
            b / gv,
        )?;
        // dS = P (dP - rowsum(P dP)) scale, in place in dp; the scale in the kernel's type.
        let rows = b * sq;
        let (rows64, sk64) = (rows as u64, sk as u64);
        let (scale32, scale64) = (d.scale as f32, d.scale);
        let (kernel, mut args) = if acc == DType::F64 {
            (&ATT_DSCORES_F64, kargs![p.0, dp.0, rows64, sk64, scale64])
        } else {
            (&ATT_DSCORES, kargs![p.0, dp.0, rows64, sk64, scale32])
        };
        self.launch_1d(
            stream,
            kernel.src,
            kernel.lone(),
            rows.min(1 << 16),
            128,
            &mut args,
        )?;
        // dQ = dS K (key groups)
        self.rm_gemm(
            stream,
            acc,
            (false, false),
            (gk * sq, dd, sk),
            1.0,
            (dp, sk, gk * sq * sk),
            (k, dd, sk * dd),
            (dq, dd, gk * sq * dd),
            b / gk,
        )?;
        // dK = dS^T Q (summed over the group's query heads)
        self.rm_gemm(
            stream,
            acc,
            (true, false),
            (sk, dd, gk * sq),
            1.0,
            (dp, sk, gk * sq * sk),
            (q, dd, gk * sq * dd),
            (dk, dd, sk * dd),
            b / gk,
        )
    }

    /// One scratch allocation split into f32 buffers of the given element counts.
    fn f32_scratch(
        &self,
        stream: RawStream,
        sizes: &[usize],
    ) -> Result<(Scratch<'_>, Vec<DevPtr>)> {
        let total: usize = sizes.iter().map(|n| pad(n * 4)).sum();
        let buf = Scratch::new(self, total, stream)?;
        let mut at = 0;
        let parts = sizes
            .iter()
            .map(|n| {
                let p = buf.ptr.offset(at);
                at += pad(n * 4);
                p
            })
            .collect();
        Ok((buf, parts))
    }
}

impl GpuDevice {
    /// The GEMM-path forward.
    #[allow(clippy::too_many_arguments)]
    fn attention_gemm(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        let (b, sq, sk, dd, dv, gv) = (d.batch, d.sq, d.sk, d.d, d.dv, d.v_group);
        let no = b * sq * dv;
        if no == 0 {
            return Ok(());
        }
        let (nq, nk, nv) = (b * sq * dd, b / d.k_group * sk * dd, b / gv * sk * dv);
        let f32in = dtype == DType::F32;
        let sizes = if f32in {
            vec![b * sq * sk]
        } else {
            vec![b * sq * sk, nq, nk, nv, no]
        };
        let (_buf, parts) = self.f32_scratch(stream, &sizes)?;
        let s = parts[0];
        let (q32, k32, v32, o32) = if f32in {
            (q, k, v, out)
        } else {
            self.cast(stream, dtype, q, DType::F32, parts[1], nq)?;
            self.cast(stream, dtype, k, DType::F32, parts[2], nk)?;
            self.cast(stream, dtype, v, DType::F32, parts[3], nv)?;
            (parts[1], parts[2], parts[3], parts[4])
        };
        self.attention_probs(stream, DType::F32, d, q32, k32, mask, s)?;
        self.attention_pv(stream, DType::F32, d, s, v32, o32)?;
        if !f32in {
            self.cast(stream, DType::F32, o32, dtype, out, no)?;
        }
        Ok(())
    }
}

/// The f64 path: the GEMM path in double (double GEMMs, the scale applied by
/// `rb_att_softmax_f64`; softmax and dS in double). O(S^2) memory.
impl GpuDevice {
    #[allow(clippy::too_many_arguments)]
    fn attention_f64(
        &self,
        stream: RawStream,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        let (b, sq, sk, dv) = (d.batch, d.sq, d.sk, d.dv);
        if b * sq * dv == 0 {
            return Ok(());
        }
        let s = Scratch::new(self, pad(b * sq * sk * 8), stream)?;
        self.attention_probs(stream, DType::F64, d, q, k, mask, s.ptr)?;
        self.attention_pv(stream, DType::F64, d, s.ptr, v, out)
    }

    fn attention_backward_f64(
        &self,
        stream: RawStream,
        d: &AttentionDesc,
        qkvm: (DevPtr, DevPtr, DevPtr, DevPtr),
        dout: DevPtr,
        grads: (DevPtr, DevPtr, DevPtr),
    ) -> Result<()> {
        let ns = d.batch * d.sq * d.sk;
        let buf = Scratch::new(self, 2 * pad(ns * 8), stream)?;
        let pdp = (buf.ptr, buf.ptr.offset(pad(ns * 8)));
        self.attention_backward_gemm(stream, DType::F64, d, qkvm, dout, grads, pdp)
    }
}

impl GpuDevice {
    /// [`AttentionOps::attention`], with `attention_fresh`'s position where the caller has one.
    #[allow(clippy::too_many_arguments)]
    fn attention_any(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        (q, k, v, mask): (DevPtr, DevPtr, DevPtr, DevPtr),
        out: DevPtr,
        fresh: Option<(DevPtr, bool)>,
    ) -> Result<()> {
        if dtype == DType::F64 {
            return self.attention_f64(stream, d, q, k, v, mask, out);
        }
        float_suffix("scaled_dot_product_attention", dtype)?;
        if d.batch * d.sq * d.dv == 0 {
            return Ok(());
        }
        if let Some(r) = self.vendor_attention(stream, dtype, d, q, k, v, out) {
            return r;
        }
        match self.attention_choice(d, false) {
            AttentionChoice::Fused => {
                self.attention_fused(stream, dtype, d, (q, k, v, mask), out, DevPtr::NULL, fresh)
            }
            AttentionChoice::Gemm => self.attention_gemm(stream, dtype, d, q, k, v, mask, out),
        }
    }
}

impl AttentionOps for GpuDevice {
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        self.attention_any(stream, dtype, d, (q, k, v, mask), out, None)
    }

    fn attention_fresh(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        qkvm: (DevPtr, DevPtr, DevPtr, DevPtr),
        out: DevPtr,
        fresh: DevPtr,
        fresh_i32: bool,
    ) -> Result<()> {
        self.attention_any(stream, dtype, d, qkvm, out, Some((fresh, fresh_i32)))
    }

    #[allow(clippy::too_many_arguments)]
    fn attention_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Result<()> {
        if dtype == DType::F64 {
            return self.attention_backward_f64(stream, d, (q, k, v, mask), dout, (dq, dk, dv));
        }
        float_suffix("scaled_dot_product_attention_backward", dtype)?;
        if let Some(r) = self.vendor_attention_backward(stream, dtype, d, q, k, v, dout, dq, dk, dv)
        {
            return r;
        }
        if self.attention_choice(d, true) == AttentionChoice::Fused {
            return self.attention_backward_fused(
                stream,
                dtype,
                d,
                (q, k, v, mask),
                dout,
                (dq, dk, dv),
            );
        }
        let (b, sq, sk, dd, ddv) = (d.batch, d.sq, d.sk, d.d, d.dv);
        let (gk, gv) = (d.k_group, d.v_group);
        let (nq, nk, nv, no, ns) = (
            b * sq * dd,
            b / gk * sk * dd,
            b / gv * sk * ddv,
            b * sq * ddv,
            b * sq * sk,
        );
        let f32in = dtype == DType::F32;
        let mut sizes = vec![ns, ns];
        if !f32in {
            // q, k, v, dout, dq, dk, dv in f32
            sizes.extend([nq, nk, nv, no, nq, nk, nv]);
        }
        let (_buf, parts) = self.f32_scratch(stream, &sizes)?;
        let (p, dp) = (parts[0], parts[1]);
        let (q32, k32, v32, do32, dq32, dk32, dv32) = if f32in {
            (q, k, v, dout, dq, dk, dv)
        } else {
            self.cast(stream, dtype, q, DType::F32, parts[2], nq)?;
            self.cast(stream, dtype, k, DType::F32, parts[3], nk)?;
            self.cast(stream, dtype, v, DType::F32, parts[4], nv)?;
            self.cast(stream, dtype, dout, DType::F32, parts[5], no)?;
            (
                parts[2], parts[3], parts[4], parts[5], parts[6], parts[7], parts[8],
            )
        };
        self.attention_backward_gemm(
            stream,
            DType::F32,
            d,
            (q32, k32, v32, mask),
            do32,
            (dq32, dk32, dv32),
            (p, dp),
        )?;
        if !f32in {
            self.cast(stream, DType::F32, dq32, dtype, dq, nq)?;
            self.cast(stream, DType::F32, dk32, dtype, dk, nk)?;
            self.cast(stream, DType::F32, dv32, dtype, dv, nv)?;
        }
        Ok(())
    }
}
