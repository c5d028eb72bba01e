//! Losses on GPUs (kernels/loss.hip): mse, bce, nll and cross_entropy and their input
//! gradients. Semantics are those of `crate::ops::nn`.
//!
//! One kernel computes the items (cross_entropy over contiguous rows: one warp per row, one
//! fused pass: online max + sum of exp, the target's logit, the logits' sum) and writes one
//! partial per block; one small kernel adds the partials in a fixed order, so a reduced loss
//! is reproducible bit for bit. Class targets out of range are found by the kernels and
//! reported (INVALID_ARGUMENT) after a 16-byte read back, which synchronizes the stream: the
//! class losses are not asynchronous. While the stream captures a device graph there is no
//! read back ([`GpuDevice::read_status`]).
//!
//! f64: one set of double kernels for every kind (`rb_loss_items_d_f64`,
//! `rb_loss_final_d_f64`, `rb_loss_bwd_d_f64`), one thread per item, the CPU's formulas.

use super::kernels::{self, *};
use super::{GpuDevice, Scratch, aligned16, pad};
use crate::base::dtype::DType;
use crate::device::{DevPtr, Device, DeviceKind, LossOps, RawStream};
use crate::ops::nn::{LossDesc, LossExt, LossKind, Reduction};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::LazyLock;

/// Threads per block of the item kernels (a multiple of every warp width).
const BLOCK: u32 = 256;

/// Most partials an item kernel writes (its grid).
const MAX_PARTIALS: usize = 2048;

/// "No bad target" in the status word.
const NOBAD: i64 = i64::MAX;

/// Pinned 64-byte host slots for status read-backs, per device, reused (never freed: a few
/// bytes per thread that ever read a status concurrently).
type Slots = HashMap<(DeviceKind, usize), Vec<usize>>;

static STATUS_SLOTS: LazyLock<Mutex<Slots>> = LazyLock::new(Default::default);

fn red_code(r: Reduction) -> i32 {
    match r {
        Reduction::None => 0,
        Reduction::Mean => 1,
        Reduction::Sum => 2,
    }
}

/// Threads per row for a row of `c` elements (`vec`: four per load).
/// The most rows whose cross-entropy backward counts its valid targets in each block (a
/// replayed device graph): every block reads every target.
const CE_COUNT_HERE: usize = 256;

fn row_threads(c: usize, vec: bool) -> u32 {
    let per = if vec { c / 4 } else { c };
    if per >= 1024 {
        256
    } else if per >= 256 {
        128
    } else {
        64
    }
}

/// The partials of an item kernel: (loss sum f32, valid count i32, first bad item i64) per
/// block, after a 16-byte status (first bad item, valid count as f64); the f64 kernels'
/// sums and weights are f64 (`elem` 8).
struct Partials<'a> {
    buf: Scratch<'a>,
    nb: usize,
    elem: usize,
}

impl<'a> Partials<'a> {
    fn new(dev: &'a GpuDevice, nb: usize, stream: RawStream) -> Result<Self> {
        Self::with_elem(dev, nb, 4, stream)
    }
    fn with_elem(dev: &'a GpuDevice, nb: usize, elem: usize, stream: RawStream) -> Result<Self> {
        let bytes = 256 + pad(nb * 8) + pad(nb * elem) * 2;
        Ok(Partials {
            buf: Scratch::new(dev, bytes, stream)?,
            nb,
            elem,
        })
    }
    fn status(&self) -> DevPtr {
        self.buf.ptr
    }
    fn count(&self) -> DevPtr {
        self.buf.ptr.offset(8)
    }
    fn bad(&self) -> DevPtr {
        self.buf.ptr.offset(256)
    }
    fn sums(&self) -> DevPtr {
        self.bad().offset(pad(self.nb * 8))
    }
    fn counts(&self) -> DevPtr {
        self.sums().offset(pad(self.nb * self.elem))
    }
}

impl GpuDevice {
    /// Adds the partials (and writes the reduced loss unless `red` is none).
    fn loss_final(
        &self,
        stream: RawStream,
        sfx: &str,
        p: &Partials<'_>,
        red: i32,
        out: DevPtr,
    ) -> Result<()> {
        let nb = p.nb as u64;
        let (ps, pc, pb, st) = (p.sums().0, p.counts().0, p.bad().0, p.status().0);
        self.launch_1d(
            stream,
            LOSS_FINAL.src,
            &LOSS_FINAL.suffixed(sfx),
            1,
            256,
            &mut kargs![ps, pc, pb, nb, red, out.0, st],
        )
    }

    /// Cross-entropy backward over contiguous rows (`rb_ce_bwd_rows_*`, a block per row):
    /// the mean's divisor from `cnt` (a counting pass's f64), or, with None, counted by
    /// each block (the kernel's `count_here`).
    #[allow(clippy::too_many_arguments)]
    fn ce_backward_rows(
        &self,
        stream: RawStream,
        sfx: &str,
        dtype: DType,
        d: &LossDesc,
        (input, target, is64): (DevPtr, DevPtr, i32),
        grad_out: DevPtr,
        grad_input: DevPtr,
        cnt: Option<DevPtr>,
    ) -> Result<()> {
        let items = d.items();
        let vec = dtype_vec_ok(dtype, input, d.c) && aligned16(&[grad_input]);
        let (rows, c, ign, ls) = (
            items as u64,
            d.c as u64,
            d.ignore_index,
            d.label_smoothing as f32,
        );
        // No count given: the kernel counts the valid targets itself (`count_here`).
        let (vec_i, red, here) = (vec as i32, red_code(d.reduction), cnt.is_none() as i32);
        let cnt = cnt.unwrap_or(DevPtr::NULL);
        self.launch_1d(
            stream,
            CE_BWD_ROWS.src,
            &CE_BWD_ROWS.suffixed(sfx),
            items.min(1 << 16),
            row_threads(d.c, vec),
            &mut kargs![
                input.0,
                target.0,
                is64,
                grad_out.0,
                grad_input.0,
                rows,
                c,
                ign,
                ls,
                vec_i,
                red,
                cnt.0,
                here
            ],
        )
    }

    /// Reads the status back (synchronizing `stream`) and reports an out-of-range target.
    fn check_status(
        &self,
        stream: RawStream,
        d: &LossDesc,
        p: &Partials<'_>,
        target: DevPtr,
        tdt: DType,
    ) -> Result<()> {
        let Some(bad) = self.read_status(stream, p.status())? else {
            return Ok(()); // capturing a device graph
        };
        if bad == NOBAD {
            return Ok(());
        }
        let size = tdt.size();
        let mut v = [0u8; 8];
        self.copy_d2h(target.offset(bad as usize * size), &mut v[..size], stream)?;
        let t = if size == 4 {
            i32::from_le_bytes([v[0], v[1], v[2], v[3]]) as i64
        } else {
            i64::from_le_bytes(v)
        };
        Err(Error::invalid(format!(
            "{}: target {t} at index {bad} is out of range [0, {})",
            d.kind.name(),
            d.c
        )))
    }

    /// The status word (an i64) a checking kernel wrote at `src`, read through a pinned slot
    /// of this device (synchronizes `stream`); `None` while `stream` captures a device graph,
    /// where nothing can be read back (the kernels skip bad items as always, nothing reports
    /// them: the executor's O3 plan ran every node once, checked, before it captured).
    pub(super) fn read_status(&self, stream: RawStream, src: DevPtr) -> Result<Option<i64>> {
        if self.graphs.is_capturing(stream) {
            return Ok(None);
        }
        let key = (self.kind(), self.ordinal);
        let slot = STATUS_SLOTS.lock().get_mut(&key).and_then(|v| v.pop());
        let slot = match slot {
            Some(s) => s,
            None => {
                self.bind()?;
                self.vendor.host_alloc_pinned(64)? as usize
            }
        };
        let r = (|| {
            self.bind()?;
            // SAFETY: `slot` is 64 bytes of pinned host memory owned by this call until it is
            // returned to the free list below; the copy completes before the synchronize.
            unsafe { self.vendor.copy_d2h(slot as *mut u8, src, 8, stream) }?;
            self.vendor.stream_synchronize(stream)?;
            // SAFETY: the copy above has completed and wrote 8 bytes at `slot`.
            Ok(unsafe { std::ptr::read_unaligned(slot as *const i64) })
        })();
        STATUS_SLOTS.lock().entry(key).or_default().push(slot);
        r.map(Some)
    }

    fn target_is64(d: &LossDesc, tdt: DType) -> Result<i32> {
        match tdt {
            DType::I32 => Ok(0),
            DType::I64 => Ok(1),
            other => Err(Error::dtype(format!(
                "{}: target dtype {other} is not i32 or i64",
                d.kind.name()
            ))),
        }
    }

    /// Item kernel over `d.items()` (kind as given), writing partials; `none`: per-item out.
    #[allow(clippy::too_many_arguments)]
    fn loss_items<'a>(
        &'a self,
        stream: RawStream,
        sfx: &str,
        kind: i32,
        d: &LossDesc,
        input: DevPtr,
        target: DevPtr,
        is64: i32,
        none: bool,
        out: DevPtr,
    ) -> Result<Partials<'a>> {
        let items = d.items();
        let nb = items.div_ceil(BLOCK as usize).clamp(1, MAX_PARTIALS);
        let p = Partials::new(self, nb, stream)?;
        let (items, c, inner) = (items as u64, d.c as u64, d.inner as u64);
        let (ign, ls, none) = (d.ignore_index, d.label_smoothing as f32, none as i32);
        let (ps, pc, pb) = (p.sums().0, p.counts().0, p.bad().0);
        self.launch_1d(
            stream,
            LOSS_ITEMS.src,
            &LOSS_ITEMS.suffixed(sfx),
            nb,
            BLOCK,
            &mut kargs![
                kind, input.0, target.0, is64, items, c, inner, ign, ls, none, out.0, ps, pc, pb
            ],
        )?;
        Ok(p)
    }
}

/// Losses with class weights / class-probability targets ([`LossExt`]): one kernel over the
/// items (one warp per item for contiguous rows, one thread per item otherwise) writing one
/// partial per block (loss sum, summed weight, first bad target), and the fixed-order final
/// reduction; the backward first sums the target weights (the divisor of mean) and checks the
/// targets the same way.
impl GpuDevice {
    /// tmode of the kernels: 0 i32 / 1 i64 class indices, 2 class probabilities.
    fn ext_tmode(d: &LossDesc, ext: &LossExt, tdt: DType) -> Result<i32> {
        if ext.prob_target {
            Ok(2)
        } else if d.kind.is_class() {
            Self::target_is64(d, tdt)
        } else {
            Ok(0)
        }
    }

    /// Threads per item: a warp for cross_entropy over contiguous rows, else one.
    fn ext_group(&self, d: &LossDesc, kind: i32) -> u32 {
        if kind == kernels::loss::CE.code && d.inner == 1 && d.c > 1 {
            self.warp_size().clamp(1, BLOCK)
        } else {
            1
        }
    }

    /// The item kernel of a [`LossExt`] loss (`kind`, or `loss::COUNT` for the divisor only).
    #[allow(clippy::too_many_arguments)]
    fn ext_items<'a>(
        &'a self,
        stream: RawStream,
        sfx: &str,
        kind: i32,
        d: &LossDesc,
        tmode: i32,
        input: DevPtr,
        target: DevPtr,
        weight: DevPtr,
        none: bool,
        out: DevPtr,
    ) -> Result<Partials<'a>> {
        let items = d.items();
        let g = self.ext_group(d, kind);
        let per_block = (BLOCK / g).max(1) as usize;
        let nb = items.div_ceil(per_block).clamp(1, MAX_PARTIALS);
        let p = Partials::new(self, nb, stream)?;
        let (items, c, inner) = (items as u64, d.c as u64, d.inner as u64);
        let (ign, ls, gi, none) = (
            d.ignore_index,
            d.label_smoothing as f32,
            g as i32,
            none as i32,
        );
        let (ps, pw, pb) = (p.sums().0, p.counts().0, p.bad().0);
        self.launch_1d(
            stream,
            WLOSS_ITEMS.src,
            &WLOSS_ITEMS.suffixed(sfx),
            nb,
            BLOCK,
            &mut kargs![
                kind, input.0, target.0, tmode, weight.0, items, c, inner, ign, ls, gi, none,
                out.0, ps, pw, pb
            ],
        )?;
        Ok(p)
    }

    /// The final reduction of [`Self::ext_items`]' partials (`div` > 0: mean's divisor, else
    /// the summed weight).
    fn ext_final(
        &self,
        stream: RawStream,
        sfx: &str,
        p: &Partials<'_>,
        red: i32,
        div: f64,
        out: DevPtr,
    ) -> Result<()> {
        let nb = p.nb as u64;
        let (ps, pw, pb, st) = (p.sums().0, p.counts().0, p.bad().0, p.status().0);
        self.launch_1d(
            stream,
            WLOSS_FINAL.src,
            &WLOSS_FINAL.suffixed(sfx),
            1,
            256,
            &mut kargs![ps, pw, pb, nb, red, div, out.0, st],
        )
    }

    /// Whether mean divides by the item count (bce, probabilities) rather than by weights.
    fn ext_div(d: &LossDesc, ext: &LossExt) -> f64 {
        if ext.prob_target || !d.kind.is_class() {
            d.items() as f64
        } else {
            0.0
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn loss_ext_impl(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        let sfx = float_suffix(d.kind.name(), dtype)?;
        if d.items() == 0 {
            return Ok(());
        }
        if d.kind == LossKind::Mse {
            return Err(Error::invalid("mse_loss takes no weight"));
        }
        let tmode = Self::ext_tmode(d, ext, target_dtype)?;
        let none = d.reduction == Reduction::None;
        let kind = kernels::loss_op(d.kind).code;
        let p = self.ext_items(
            stream, sfx, kind, d, tmode, input, target, weight, none, out,
        )?;
        let red = if none { 0 } else { red_code(d.reduction) };
        self.ext_final(stream, sfx, &p, red, Self::ext_div(d, ext), out)?;
        if tmode != 2 && d.kind.is_class() {
            self.check_status(stream, d, &p, target, target_dtype)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn loss_ext_backward_impl(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        let sfx = float_suffix(&format!("{}_backward", d.kind.name()), dtype)?;
        let items = d.items();
        if items == 0 {
            return Ok(());
        }
        if d.kind == LossKind::Mse {
            return Err(Error::invalid("mse_loss_backward takes no weight"));
        }
        let tmode = Self::ext_tmode(d, ext, target_dtype)?;
        let red = red_code(d.reduction);
        let div = Self::ext_div(d, ext);
        // Class targets: sum their weights (the divisor of mean) and check them all first.
        let counted = if tmode != 2 && d.kind.is_class() {
            let p = self.ext_items(
                stream,
                sfx,
                kernels::loss::COUNT.code,
                d,
                tmode,
                input,
                target,
                weight,
                false,
                DevPtr::NULL,
            )?;
            self.ext_final(stream, sfx, &p, 0, 0.0, DevPtr::NULL)?;
            self.check_status(stream, d, &p, target, target_dtype)?;
            Some(p)
        } else {
            None
        };
        let cnt = counted.as_ref().map_or(DevPtr::NULL, |p| p.count()).0;
        let kind = kernels::loss_op(d.kind).code;
        let g = self.ext_group(d, kind);
        let (it, c, inner) = (items as u64, d.c as u64, d.inner as u64);
        let (ign, ls, gi) = (d.ignore_index, d.label_smoothing as f32, g as i32);
        self.launch_elems(
            stream,
            WLOSS_BWD.src,
            &WLOSS_BWD.suffixed(sfx),
            items * g as usize,
            &mut kargs![
                kind,
                input.0,
                target.0,
                tmode,
                weight.0,
                grad_out.0,
                grad_input.0,
                it,
                c,
                inner,
                ign,
                ls,
                gi,
                red,
                cnt,
                div
            ],
        )
    }
}

/// f64 losses: one set of double kernels for every kind, plain or [`LossExt`] (the plain
/// losses are the weighted forms with unit weights), one thread per item.
impl GpuDevice {
    /// The f64 item kernel (`kind`, or `loss::COUNT` for the divisor only) and the final
    /// reduction (`red`; `div` > 0: mean's divisor, else the summed weight).
    #[allow(clippy::too_many_arguments)]
    fn f64_items<'a>(
        &'a self,
        stream: RawStream,
        kind: i32,
        d: &LossDesc,
        tmode: i32,
        input: DevPtr,
        target: DevPtr,
        weight: DevPtr,
        red: i32,
        div: f64,
        out: DevPtr,
    ) -> Result<Partials<'a>> {
        let items = d.items();
        let nb = items.div_ceil(BLOCK as usize).clamp(1, MAX_PARTIALS);
        let p = Partials::with_elem(self, nb, 8, stream)?;
        let (items, c, inner) = (items as u64, d.c as u64, d.inner as u64);
        let (ign, ls, none) = (d.ignore_index, d.label_smoothing, (red == 0) as i32);
        let (ps, pw, pb) = (p.sums().0, p.counts().0, p.bad().0);
        let name = LOSS_ITEMS_D.dtype(d.kind.name(), DType::F64)?;
        self.launch_1d(
            stream,
            LOSS_ITEMS_D.src,
            &name,
            nb,
            BLOCK,
            &mut kargs![
                kind, input.0, target.0, tmode, weight.0, items, c, inner, ign, ls, none, out.0,
                ps, pw, pb
            ],
        )?;
        let (nb, st) = (nb as u64, p.status().0);
        let name = LOSS_FINAL_D.dtype(d.kind.name(), DType::F64)?;
        self.launch_1d(
            stream,
            LOSS_FINAL_D.src,
            &name,
            1,
            256,
            &mut kargs![ps, pw, pb, nb, red, div, out.0, st],
        )?;
        Ok(p)
    }

    #[allow(clippy::too_many_arguments)]
    fn loss_f64(
        &self,
        stream: RawStream,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        if d.items() == 0 {
            return Ok(());
        }
        let tmode = Self::ext_tmode(d, ext, target_dtype)?;
        let red = red_code(d.reduction);
        let kind = kernels::loss_op(d.kind).code;
        let p = self.f64_items(
            stream,
            kind,
            d,
            tmode,
            input,
            target,
            weight,
            red,
            Self::ext_div(d, ext),
            out,
        )?;
        if tmode != 2 && d.kind.is_class() {
            self.check_status(stream, d, &p, target, target_dtype)?;
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn loss_f64_backward(
        &self,
        stream: RawStream,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        let items = d.items();
        if items == 0 {
            return Ok(());
        }
        let tmode = Self::ext_tmode(d, ext, target_dtype)?;
        let red = red_code(d.reduction);
        let div = Self::ext_div(d, ext);
        // Class targets: sum their weights (the divisor of mean) and check them all first.
        let counted = if tmode != 2 && d.kind.is_class() {
            let p = self.f64_items(
                stream,
                kernels::loss::COUNT.code,
                d,
                tmode,
                input,
                target,
                weight,
                0,
                0.0,
                DevPtr::NULL,
            )?;
            self.check_status(stream, d, &p, target, target_dtype)?;
            Some(p)
        } else {
            None
        };
        let cnt = counted.as_ref().map_or(DevPtr::NULL, |p| p.count()).0;
        let kind = kernels::loss_op(d.kind).code;
        let (it, c, inner) = (items as u64, d.c as u64, d.inner as u64);
        let (ign, ls) = (d.ignore_index, d.label_smoothing);
        let name = LOSS_BWD_D.dtype(d.kind.name(), DType::F64)?;
        self.launch_elems(
            stream,
            LOSS_BWD_D.src,
            &name,
            items,
            &mut kargs![
                kind,
                input.0,
                target.0,
                tmode,
                weight.0,
                grad_out.0,
                grad_input.0,
                it,
                c,
                inner,
                ign,
                ls,
                red,
                cnt,
                div
            ],
        )
    }
}

impl LossOps for GpuDevice {
    #[allow(clippy::too_many_arguments)]
    fn loss(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        out: DevPtr,
    ) -> Result<()> {
        if dtype == DType::F64 {
            let ext = LossExt::default();
            return self.loss_f64(
                stream,
                d,
                &ext,
                input,
                target,
                target_dtype,
                DevPtr::NULL,
                out,
            );
        }
        let sfx = float_suffix(d.kind.name(), dtype)?;
        let items = d.items();
        if items == 0 {
            return Ok(());
        }
        let none = d.reduction == Reduction::None;
        let red = red_code(d.reduction);
        if !d.kind.is_class() {
            let p = self.loss_items(
                stream,
                sfx,
                kernels::loss_op(d.kind).code,
                d,
                input,
                target,
                0,
                none,
                out,
            )?;
            if !none {
                self.loss_final(stream, sfx, &p, red, out)?;
            }
            return Ok(());
        }
        let is64 = Self::target_is64(d, target_dtype)?;
        let p = if d.kind == LossKind::CrossEntropy && d.inner == 1 {
            // Contiguous rows: one warp per row, one fused pass; a single block also
            // reduces (no rb_loss_final launch).
            let vec = dtype_vec_ok(dtype, input, d.c);
            let rows_per_block = (BLOCK / self.warp_size().max(1)).max(1) as usize;
            let nb = items.div_ceil(rows_per_block).clamp(1, MAX_PARTIALS);
            let p = Partials::new(self, nb, stream)?;
            let (rows, c, ign, ls) = (
                items as u64,
                d.c as u64,
                d.ignore_index,
                d.label_smoothing as f32,
            );
            let (vec_i, none_i) = (vec as i32, none as i32);
            let (ps, pc, pb) = (p.sums().0, p.counts().0, p.bad().0);
            let st = if nb == 1 {
                p.status().0
            } else {
                DevPtr::NULL.0
            };
            self.launch_1d(
                stream,
                CE_ROWS.src,
                &CE_ROWS.suffixed(sfx),
                nb,
                BLOCK,
                &mut kargs![
                    input.0, target.0, is64, rows, c, ign, ls, vec_i, none_i, out.0, ps, pc, pb,
                    red, st
                ],
            )?;
            if nb == 1 {
                return self.check_status(stream, d, &p, target, target_dtype);
            }
            p
        } else {
            self.loss_items(
                stream,
                sfx,
                kernels::loss_op(d.kind).code,
                d,
                input,
                target,
                is64,
                none,
                out,
            )?
        };
        self.loss_final(stream, sfx, &p, red, out)?;
        self.check_status(stream, d, &p, target, target_dtype)
    }

    #[allow(clippy::too_many_arguments)]
    fn loss_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        if dtype == DType::F64 {
            let ext = LossExt::default();
            return self.loss_f64_backward(
                stream,
                d,
                &ext,
                input,
                target,
                target_dtype,
                DevPtr::NULL,
                grad_out,
                grad_input,
            );
        }
        let sfx = float_suffix(&format!("{}_backward", d.kind.name()), dtype)?;
        let items = d.items();
        if items == 0 {
            return Ok(());
        }
        let red = red_code(d.reduction);
        if !d.kind.is_class() {
            let kind = kernels::loss_op(d.kind).code;
            let (n, inv_n) = (items as u64, 1.0f32 / items as f32);
            return self.launch_elems(
                stream,
                LOSS_BWD_ELEM.src,
                &LOSS_BWD_ELEM.suffixed(sfx),
                items,
                &mut kargs![
                    kind,
                    input.0,
                    target.0,
                    grad_out.0,
                    grad_input.0,
                    n,
                    red,
                    inv_n
                ],
            );
        }
        let is64 = Self::target_is64(d, target_dtype)?;
        // A replay of a device graph (its first run checked the targets) of a cross entropy
        // over at most CE_COUNT_HERE contiguous rows: the row kernel counts the valid targets
        // itself (one launch instead of three).
        let count_here = d.kind == LossKind::CrossEntropy
            && d.inner == 1
            && items <= CE_COUNT_HERE
            && self.graphs.is_capturing(stream);
        if count_here {
            return self.ce_backward_rows(
                stream,
                sfx,
                dtype,
                d,
                (input, target, is64),
                grad_out,
                grad_input,
                None,
            );
        }
        // Count the valid targets (the divisor of mean) and check them all first.
        let p = self.loss_items(
            stream,
            sfx,
            kernels::loss::COUNT.code,
            d,
            input,
            target,
            is64,
            false,
            DevPtr::NULL,
        )?;
        self.loss_final(stream, sfx, &p, 0, DevPtr::NULL)?;
        self.check_status(stream, d, &p, target, target_dtype)?;
        let cnt = p.count().0;
        let (c, inner, ign, ls) = (
            d.c as u64,
            d.inner as u64,
            d.ignore_index,
            d.label_smoothing as f32,
        );
        match d.kind {
            LossKind::Nll => {
                let n = d.n as u64;
                self.launch_elems(
                    stream,
                    NLL_BWD.src,
                    &NLL_BWD.suffixed(sfx),
                    d.n * d.c * d.inner,
                    &mut kargs![
                        target.0,
                        is64,
                        grad_out.0,
                        grad_input.0,
                        n,
                        c,
                        inner,
                        ign,
                        red,
                        cnt
                    ],
                )
            }
            _ if d.inner == 1 => self.ce_backward_rows(
                stream,
                sfx,
                dtype,
                d,
                (input, target, is64),
                grad_out,
                grad_input,
                Some(p.count()),
            ),
            _ => {
                let it = items as u64;
                self.launch_elems(
                    stream,
                    CE_BWD_STRIDED.src,
                    &CE_BWD_STRIDED.suffixed(sfx),
                    items,
                    &mut kargs![
                        input.0,
                        target.0,
                        is64,
                        grad_out.0,
                        grad_input.0,
                        it,
                        c,
                        inner,
                        ign,
                        ls,
                        red,
                        cnt
                    ],
                )
            }
        }
    }

    fn loss_ext(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        if dtype == DType::F64 {
            if d.kind == LossKind::Mse {
                return Err(Error::invalid("mse_loss takes no weight"));
            }
            return self.loss_f64(stream, d, ext, input, target, target_dtype, weight, out);
        }
        self.loss_ext_impl(
            stream,
            dtype,
            d,
            ext,
            input,
            target,
            target_dtype,
            weight,
            out,
        )
    }

    fn loss_ext_backward(
        &self,
        stream: RawStream,
        dtype: DType,
        d: &LossDesc,
        ext: &LossExt,
        input: DevPtr,
        target: DevPtr,
        target_dtype: DType,
        weight: DevPtr,
        grad_out: DevPtr,
        grad_input: DevPtr,
    ) -> Result<()> {
        if dtype == DType::F64 {
            if d.kind == LossKind::Mse {
                return Err(Error::invalid("mse_loss_backward takes no weight"));
            }
            return self.loss_f64_backward(
                stream,
                d,
                ext,
                input,
                target,
                target_dtype,
                weight,
                grad_out,
                grad_input,
            );
        }
        self.loss_ext_backward_impl(
            stream,
            dtype,
            d,
            ext,
            input,
            target,
            target_dtype,
            weight,
            grad_out,
            grad_input,
        )
    }
}

/// Rows of `c` elements of `dtype` at `x` may be read four elements at a time.
fn dtype_vec_ok(dtype: DType, x: DevPtr, c: usize) -> bool {
    c.is_multiple_of(4) && aligned16(&[x]) && matches!(dtype, DType::F32 | DType::F16 | DType::BF16)
}
