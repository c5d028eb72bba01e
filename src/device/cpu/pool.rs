//! Pooling on the CPU: max and average pooling (1D/2D/3D) and adaptive average and max
//! pooling (either layout), forward and backward, in parallel over planes (or samples). f16/bf16 load to f32;
//! f64 computes in f64 ([`AccElem`](super::elem::AccElem)).

use super::CpuDevice;
use super::elem::{Acc, AccElem};
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::device::pool::PoolOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::pool::{AdaptiveGeom, PoolGeom, PoolKind, adaptive_index_error};
use crate::{Error, Result, with_floating_type};

/// `max(a, b)` as max pooling's scan takes it: a NaN wins (PyTorch propagates NaN).
#[inline(always)]
fn nan_max<A: Acc>(a: A, b: A) -> A {
    if b > a || b.is_nan() { b } else { a }
}

/// True when [`max_pool_2d`] computes `g`: 2-D max pooling (depth 1) without dilation.
fn is_max_2d(g: &PoolGeom) -> bool {
    g.kind == PoolKind::Max
        && g.in_sp[0] == 1
        && g.out_sp[0] == 1
        && g.k[0] == 1
        && g.pad[0] == 0
        && g.dil == [1; 3]
}

/// 2-D max pooling by rows (ResNet's 3×3/2 stem pool: 0.3 ms instead of 3.7 ms): per output
/// row, the elementwise max of the window's input rows (vectorized), then per output column
/// the max of its window's columns of that row. Windows clipped to the input, as
/// [`PoolGeom::window`] does; a window with no input element gives -inf, as there.
fn max_pool_2d<T: AccElem>(g: &PoolGeom, x: DevPtr, y: DevPtr) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let ys = SendPtr(y.as_mut_ptr::<T>());
    let g = *g;
    let [_, ih, iw] = g.in_sp;
    let [_, oh, ow] = g.out_sp;
    let (kh, kw, sh, sw) = (g.k[1], g.k[2], g.stride[1], g.stride[2]);
    let (ph, pw) = (g.pad[1] as isize, g.pad[2] as isize);
    for_range(g.n * g.c, (4096 / ov.max(1)).max(1), move |p0, p1| {
        let mut row = vec![T::A::NEG_INF; iw];
        for p in p0..p1 {
            // SAFETY: plane p of x and y; planes are disjoint.
            let xp = unsafe { std::slice::from_raw_parts(xs.get().add(p * iv), iv) };
            let yp = unsafe { std::slice::from_raw_parts_mut(ys.get().add(p * ov), ov) };
            for oy in 0..oh {
                let y0 = (oy * sh) as isize - ph;
                let r0 = y0.clamp(0, ih as isize) as usize;
                let r1 = (y0 + kh as isize).clamp(0, ih as isize) as usize;
                row.fill(T::A::NEG_INF);
                for r in r0..r1 {
                    for (m, v) in row.iter_mut().zip(&xp[r * iw..(r + 1) * iw]) {
                        *m = nan_max(*m, v.load());
                    }
                }
                for (ox, out) in yp[oy * ow..(oy + 1) * ow].iter_mut().enumerate() {
                    let x0 = (ox * sw) as isize - pw;
                    let m = if x0 >= 0 && x0 as usize + kw <= iw {
                        // a window inside the row (all but the edges)
                        let w = &row[x0 as usize..x0 as usize + kw];
                        w[1..].iter().fold(w[0], |m, &v| nan_max(m, v))
                    } else {
                        let c0 = x0.clamp(0, iw as isize) as usize;
                        let c1 = (x0 + kw as isize).clamp(0, iw as isize) as usize;
                        row[c0..c1.max(c0)]
                            .iter()
                            .fold(T::A::NEG_INF, |m, &v| nan_max(m, v))
                    };
                    *out = T::store(m);
                }
            }
        }
    });
}

/// The input range `[a, b)` of window `o` (stride `s`, padding `p` before, kernel `k`)
/// along a dimension of `n`, clipped to it (empty where the window lies in the padding).
fn clip(o: usize, s: usize, p: usize, k: usize, n: usize) -> (usize, usize) {
    let a = (o * s) as isize - p as isize;
    (
        a.clamp(0, n as isize) as usize,
        (a + k as isize).clamp(0, n as isize) as usize,
    )
}

/// [`max_pool_2d`] over channels-last tensors (`x` `[n, ih, iw, c]`, `y` `[n, oh, ow, c]`),
/// in parallel over output rows: each output position's channels take the NaN-winning max
/// of its window's positions (clipped to the input; -inf for a window with no input
/// element), the channels contiguous, so the scan vectorizes over them. The executor's
/// blocked values (`[n, c/16, h, w, 16]`, [`crate::graph::passes::block_conv_layouts`])
/// pool as such a tensor of 16 channels.
fn max_pool_2d_last<T: AccElem>(g: &PoolGeom, x: DevPtr, y: DevPtr) {
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let ys = SendPtr(y.as_mut_ptr::<T>());
    let g = *g;
    let c = g.c;
    let [_, ih, iw] = g.in_sp;
    let [_, oh, ow] = g.out_sp;
    let (kh, kw, sh, sw) = (g.k[1], g.k[2], g.stride[1], g.stride[2]);
    let (ph, pw) = (g.pad[1], g.pad[2]);
    for_range(g.n * oh, (4096 / (ow * c).max(1)).max(1), move |r0, r1| {
        let mut m = vec![T::A::NEG_INF; c];
        for r in r0..r1 {
            let (b, oy) = (r / oh, r % oh);
            let (y0, y1) = clip(oy, sh, ph, kh, ih);
            for ox in 0..ow {
                let (x0, x1) = clip(ox, sw, pw, kw, iw);
                m.fill(T::A::NEG_INF);
                for iy in y0..y1 {
                    for ix in x0..x1 {
                        // SAFETY: position (b, iy, ix) of x, inside it.
                        let xp = unsafe {
                            std::slice::from_raw_parts(
                                xs.get().add(((b * ih + iy) * iw + ix) * c) as *const T,
                                c,
                            )
                        };
                        for (a, v) in m.iter_mut().zip(xp) {
                            *a = nan_max(*a, v.load());
                        }
                    }
                }
                // SAFETY: position (b, oy, ox) of y (rows disjoint per chunk).
                let yp = unsafe {
                    std::slice::from_raw_parts_mut(ys.get().add(((b * oh + oy) * ow + ox) * c), c)
                };
                for (o, a) in yp.iter_mut().zip(&m) {
                    *o = T::store(*a);
                }
            }
        }
    });
}

fn pool_fwd<T: AccElem>(g: &PoolGeom, x: DevPtr, y: DevPtr) {
    if is_max_2d(g) {
        return max_pool_2d::<T>(g, x, y);
    }
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let ys = SendPtr(y.as_mut_ptr::<T>());
    let g = *g;
    for_range(g.n * g.c, (4096 / ov.max(1)).max(1), move |p0, p1| {
        for p in p0..p1 {
            let xp = unsafe { std::slice::from_raw_parts(xs.get().add(p * iv), iv) };
            let yp = unsafe { std::slice::from_raw_parts_mut(ys.get().add(p * ov), ov) };
            for (o, out) in yp.iter_mut().enumerate() {
                let v = match g.kind {
                    PoolKind::Max => {
                        let mut m = T::A::NEG_INF;
                        g.window(o, |i| {
                            let v = xp[i].load();
                            if v > m || v.is_nan() {
                                m = v;
                            }
                        });
                        m
                    }
                    PoolKind::Avg { count_include_pad } => {
                        let mut s = T::A::ZERO;
                        g.window(o, |i| s += xp[i].load());
                        s / T::A::of(g.avg_divisor(o, count_include_pad))
                    }
                };
                *out = T::store(v);
            }
        }
    });
}

fn pool_bwd<T: AccElem>(g: &PoolGeom, x: DevPtr, dy: DevPtr, dx: DevPtr) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let dys = SendPtr(dy.as_mut_ptr::<T>());
    let dxs = SendPtr(dx.as_mut_ptr::<T>());
    let g = *g;
    for_range(g.n * g.c, (4096 / ov.max(1)).max(1), move |p0, p1| {
        let mut acc = vec![T::A::ZERO; iv];
        for p in p0..p1 {
            acc.fill(T::A::ZERO);
            let dyp = unsafe { std::slice::from_raw_parts(dys.get().add(p * ov), ov) };
            match g.kind {
                PoolKind::Max => {
                    let xp = unsafe { std::slice::from_raw_parts(xs.get().add(p * iv), iv) };
                    for (o, gy) in dyp.iter().enumerate() {
                        let mut best = usize::MAX;
                        let mut m = T::A::NEG_INF;
                        g.window(o, |i| {
                            let v = xp[i].load();
                            if best == usize::MAX || v > m || v.is_nan() {
                                best = i;
                                m = v;
                            }
                        });
                        if best != usize::MAX {
                            acc[best] += gy.load();
                        }
                    }
                }
                PoolKind::Avg { count_include_pad } => {
                    for (o, gy) in dyp.iter().enumerate() {
                        let v = gy.load() / T::A::of(g.avg_divisor(o, count_include_pad));
                        g.window(o, |i| acc[i] += v);
                    }
                }
            }
            let dxp = unsafe { std::slice::from_raw_parts_mut(dxs.get().add(p * iv), iv) };
            for (d, a) in dxp.iter_mut().zip(&acc) {
                *d = T::store(*a);
            }
        }
    });
}

fn max_pool_idx_fwd<T: AccElem>(g: &PoolGeom, x: DevPtr, y: DevPtr, idx: DevPtr) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let ys = SendPtr(y.as_mut_ptr::<T>());
    let is = SendPtr(idx.as_mut_ptr::<i64>());
    let g = *g;
    for_range(g.n * g.c, (4096 / ov.max(1)).max(1), move |p0, p1| {
        for p in p0..p1 {
            // SAFETY: plane p of x, y and idx; planes are disjoint.
            let xp = unsafe { std::slice::from_raw_parts(xs.get().add(p * iv), iv) };
            let yp = unsafe { std::slice::from_raw_parts_mut(ys.get().add(p * ov), ov) };
            let ip = unsafe { std::slice::from_raw_parts_mut(is.get().add(p * ov), ov) };
            for o in 0..ov {
                let (i, v) = g.torch_argmax(o, |i| xp[i].load().wide());
                yp[o] = T::store(T::A::of(v));
                ip[o] = i as i64;
            }
        }
    });
}

/// The scatter of [`PoolOps::max_pool_backward_indices`]; returns the first bad position.
fn max_pool_idx_bwd<T: AccElem>(
    dy: DevPtr,
    idx: DevPtr,
    planes: usize,
    ov: usize,
    iv: usize,
    dx: DevPtr,
) -> Option<(usize, i64)> {
    let dys = SendPtr(dy.as_mut_ptr::<T>());
    let is = SendPtr(idx.as_mut_ptr::<i64>());
    let dxs = SendPtr(dx.as_mut_ptr::<T>());
    let bad = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let badr = &bad;
    for_range(planes, (4096 / ov.max(1)).max(1), move |p0, p1| {
        let mut acc = vec![T::A::ZERO; iv];
        for p in p0..p1 {
            acc.fill(T::A::ZERO);
            // SAFETY: plane p of dy, idx and dx; planes are disjoint.
            let dyp = unsafe { std::slice::from_raw_parts(dys.get().add(p * ov), ov) };
            let ip = unsafe { std::slice::from_raw_parts(is.get().add(p * ov), ov) };
            for (o, (g, &i)) in dyp.iter().zip(ip).enumerate() {
                match usize::try_from(i) {
                    Ok(i) if i < iv => acc[i] += g.load(),
                    _ => {
                        badr.fetch_min(p * ov + o, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
            let dxp = unsafe { std::slice::from_raw_parts_mut(dxs.get().add(p * iv), iv) };
            for (d, a) in dxp.iter_mut().zip(&acc) {
                *d = T::store(*a);
            }
        }
    });
    let pos = bad.into_inner();
    // SAFETY: pos < planes * ov, inside idx.
    (pos != usize::MAX).then(|| (pos, unsafe { *is.get().add(pos) }))
}

/// Adaptive pooling forward over the memory blocks of [`AdaptiveGeom::blocks`] (planes
/// channels first, samples channels last; the `cb` channels of a block interleaved), in
/// parallel over blocks: per output position, the window's sum (the accumulator) or PyTorch's arg-max
/// per channel (the first maximum in scan order, the last NaN, the window's first position
/// when every value is -inf).
fn adaptive_fwd<T: AccElem>(g: &AdaptiveGeom, max: bool, x: DevPtr, y: DevPtr, idx: DevPtr) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let (blocks, cb) = g.blocks();
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let ys = SendPtr(y.as_mut_ptr::<T>());
    let is = SendPtr(idx.as_mut_ptr::<i64>());
    let g = *g;
    for_range(blocks, (4096 / (iv * cb).max(1)).max(1), move |b0, b1| {
        let mut acc = vec![T::A::ZERO; cb];
        let mut best = vec![0usize; cb];
        for b in b0..b1 {
            // SAFETY: block b of x, y and idx; blocks are disjoint.
            let xb = unsafe { std::slice::from_raw_parts(xs.get().add(b * iv * cb), iv * cb) };
            let yb = unsafe { std::slice::from_raw_parts_mut(ys.get().add(b * ov * cb), ov * cb) };
            for o in 0..ov {
                let w = g.window(o);
                if max {
                    acc.fill(T::A::NEG_INF);
                    let first = (w[0].0 * g.in_sp[1] + w[1].0) * g.in_sp[2] + w[2].0;
                    best.fill(first);
                    g.for_window(&w, |i| {
                        for (c, v) in xb[i * cb..(i + 1) * cb].iter().enumerate() {
                            let v = v.load();
                            if v > acc[c] || v.is_nan() {
                                acc[c] = v;
                                best[c] = i;
                            }
                        }
                    });
                    // SAFETY: block b of idx, as y's.
                    let ib = unsafe {
                        std::slice::from_raw_parts_mut(is.get().add(b * ov * cb), ov * cb)
                    };
                    for (d, &i) in ib[o * cb..(o + 1) * cb].iter_mut().zip(&best) {
                        *d = i as i64;
                    }
                    for (d, &v) in yb[o * cb..(o + 1) * cb].iter_mut().zip(&acc) {
                        *d = T::store(v);
                    }
                } else {
                    acc.fill(T::A::ZERO);
                    g.for_window(&w, |i| {
                        for (a, v) in acc.iter_mut().zip(&xb[i * cb..(i + 1) * cb]) {
                            *a += v.load();
                        }
                    });
                    let n = T::A::of(AdaptiveGeom::count(&w) as f64);
                    for (d, &v) in yb[o * cb..(o + 1) * cb].iter_mut().zip(&acc) {
                        *d = T::store(v / n);
                    }
                }
            }
        }
    });
}

/// Adaptive pooling backward over the blocks of [`adaptive_fwd`]: each block's gradient is
/// accumulated serially (deterministic; f32, f64 for f64), average pooling spreading `dy` over the
/// window, max pooling adding it at the index. Returns the first output position (flat in
/// `dy`) whose index lies outside its window, and that index.
fn adaptive_bwd<T: AccElem>(
    g: &AdaptiveGeom,
    max: bool,
    dy: DevPtr,
    idx: DevPtr,
    dx: DevPtr,
) -> Option<(usize, i64)> {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let (blocks, cb) = g.blocks();
    let dys = SendPtr(dy.as_mut_ptr::<T>());
    let is = SendPtr(idx.as_mut_ptr::<i64>());
    let dxs = SendPtr(dx.as_mut_ptr::<T>());
    let bad = std::sync::atomic::AtomicUsize::new(usize::MAX);
    let badr = &bad;
    let g = *g;
    for_range(blocks, (4096 / (iv * cb).max(1)).max(1), move |b0, b1| {
        let mut acc = vec![T::A::ZERO; iv * cb];
        for b in b0..b1 {
            acc.fill(T::A::ZERO);
            // SAFETY: block b of dy, idx and dx; blocks are disjoint.
            let dyb = unsafe { std::slice::from_raw_parts(dys.get().add(b * ov * cb), ov * cb) };
            for o in 0..ov {
                let w = g.window(o);
                let gy = &dyb[o * cb..(o + 1) * cb];
                if max {
                    let ib =
                        unsafe { std::slice::from_raw_parts(is.get().add(b * ov * cb), ov * cb) };
                    for (c, (v, &i)) in gy.iter().zip(&ib[o * cb..(o + 1) * cb]).enumerate() {
                        match usize::try_from(i) {
                            Ok(i) if i < iv && g.in_window(&w, i) => acc[i * cb + c] += v.load(),
                            _ => {
                                badr.fetch_min(
                                    (b * ov + o) * cb + c,
                                    std::sync::atomic::Ordering::Relaxed,
                                );
                            }
                        }
                    }
                } else {
                    let n = T::A::of(AdaptiveGeom::count(&w) as f64);
                    g.for_window(&w, |i| {
                        for (a, v) in acc[i * cb..(i + 1) * cb].iter_mut().zip(gy) {
                            *a += v.load() / n;
                        }
                    });
                }
            }
            let dxb =
                unsafe { std::slice::from_raw_parts_mut(dxs.get().add(b * iv * cb), iv * cb) };
            for (d, a) in dxb.iter_mut().zip(&acc) {
                *d = T::store(*a);
            }
        }
    });
    let pos = bad.into_inner();
    // SAFETY: pos < blocks * ov * cb, inside idx.
    (pos != usize::MAX).then(|| (pos, unsafe { *is.get().add(pos) }))
}

impl PoolOps for CpuDevice {
    fn pool_forward(
        &self,
        _s: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        #[cfg(target_arch = "x86_64")]
        if dtype == DType::F32 && is_max_2d(g) && x86::on() {
            // SAFETY: the runtime validated x and y against g (f32); on() checked the CPU.
            unsafe { x86::max_pool_2d_f32(g, x.as_ptr(), y.as_mut_ptr()) };
            return Ok(());
        }
        with_floating_type!(dtype, g.kind.name(), T => pool_fwd::<T>(g, x, y));
        Ok(())
    }

    fn channels_last_pool_forward(&self, g: &PoolGeom, dtype: DType) -> bool {
        is_max_2d(g) && dtype.is_float()
    }

    fn pool_forward_channels_last(
        &self,
        _s: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        if !is_max_2d(g) {
            return Err(Error::unsupported(
                "channels-last pooling on the CPU: 2-D max pooling without dilation only",
            ));
        }
        #[cfg(target_arch = "x86_64")]
        if dtype == DType::F32 && g.c.is_multiple_of(16) && x86::on() {
            // SAFETY: the runtime validated x and y against g (f32, channels last); on()
            // checked the CPU.
            unsafe { x86::max_pool_2d_last_f32(g, x.as_ptr(), y.as_mut_ptr()) };
            return Ok(());
        }
        with_floating_type!(dtype, g.kind.name(), T => max_pool_2d_last::<T>(g, x, y));
        Ok(())
    }

    fn pool_backward(
        &self,
        _s: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        with_floating_type!(dtype, g.kind.name(), T => pool_bwd::<T>(g, x, dy, dx));
        Ok(())
    }

    fn max_pool_with_indices(
        &self,
        _s: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        with_floating_type!(dtype, "max_pool_with_indices", T => max_pool_idx_fwd::<T>(g, x, y, idx));
        Ok(())
    }

    fn max_pool_backward_indices(
        &self,
        _s: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        planes: usize,
        out_vol: usize,
        in_vol: usize,
        dx: DevPtr,
    ) -> Result<()> {
        let bad = with_floating_type!(dtype, "max_pool_backward_indices", T =>
            max_pool_idx_bwd::<T>(dy, idx, planes, out_vol, in_vol, dx));
        match bad {
            None => Ok(()),
            Some((pos, v)) => Err(Error::invalid(format!(
                "max_pool_backward_indices: index {v} at position {pos} is out of range [0, {in_vol})"
            ))),
        }
    }

    fn adaptive_pool_forward(
        &self,
        _s: RawStream,
        g: &AdaptiveGeom,
        max: bool,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        with_floating_type!(dtype, "adaptive_pool", T => adaptive_fwd::<T>(g, max, x, y, idx));
        Ok(())
    }

    fn adaptive_pool_backward(
        &self,
        _s: RawStream,
        g: &AdaptiveGeom,
        max: bool,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        let bad = with_floating_type!(dtype, "adaptive_pool_backward", T =>
            adaptive_bwd::<T>(g, max, dy, idx, dx));
        match bad {
            None => Ok(()),
            Some((pos, v)) => Err(adaptive_index_error(g, pos, v)),
        }
    }
}

/// f32 2-D max pooling on AVX-512 ([`max_pool_2d`]'s passes, vectorized: ResNet-50's
/// 3×3/2 pool of 64×112×112 took 0.70 ms of one thread in the generic code; ONNX Runtime's
/// 0.11). Per output row, the NaN-winning max of the window's input rows goes into a row
/// buffer with -inf margins (so clipped windows need no bounds tests, and a window with no
/// input element gives -inf), then each vector of 16 outputs takes the max over the `kw`
/// taps: unaligned loads for stride 1, the even lanes of 32 consecutive values for stride 2,
/// a scalar loop for other strides.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{PoolGeom, SendPtr, clip, for_range};
    use std::arch::x86_64::*;

    /// True when the CPU has AVX-512F (`RB_POOL_AVX512=0` turns the kernel off).
    pub fn on() -> bool {
        static ON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
            crate::device::cpu::avx512_kernel_on(Some("RB_POOL_AVX512"))
        });
        *ON
    }

    /// `v` where `v > m` or `v` is NaN, else `m` (max pooling's scan step, as
    /// [`super::nan_max`]): a NaN wins and stays.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn nan_max(m: __m512, v: __m512) -> __m512 {
        let k = _mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, m) | _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
        _mm512_mask_mov_ps(m, k, v)
    }

    /// `max_pool_2d_last` for f32 with channels a multiple of 16: a vector of 16 channels
    /// at a time over the window's positions.
    ///
    /// # Safety
    /// `x` and `y` hold the channels-last f32 tensors `g` describes (2-D max pooling
    /// without dilation), `g.c` a multiple of 16; the CPU has AVX-512F ([`on`]).
    pub unsafe fn max_pool_2d_last_f32(g: &PoolGeom, x: *const f32, y: *mut f32) {
        let xs = SendPtr(x as *mut f32);
        let ys = SendPtr(y);
        let g = *g;
        let [_, _, ow] = g.out_sp;
        let oh = g.out_sp[1];
        for_range(
            g.n * oh,
            (4096 / (ow * g.c).max(1)).max(1),
            move |r0, r1| {
                for r in r0..r1 {
                    // SAFETY: output row r (disjoint per chunk); its windows' inputs.
                    unsafe { row_last(&g, xs.get(), ys.get(), r) };
                }
            },
        );
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn row_last(g: &PoolGeom, x: *const f32, y: *mut f32, r: usize) {
        let c = g.c;
        let [_, ih, iw] = g.in_sp;
        let [_, oh, ow] = g.out_sp;
        let (b, oy) = (r / oh, r % oh);
        let (y0, y1) = clip(oy, g.stride[1], g.pad[1], g.k[1], ih);
        for ox in 0..ow {
            let (x0, x1) = clip(ox, g.stride[2], g.pad[2], g.k[2], iw);
            let out = unsafe { y.add(((b * oh + oy) * ow + ox) * c) };
            for q in (0..c).step_by(16) {
                let mut m = _mm512_set1_ps(f32::NEG_INFINITY);
                for iy in y0..y1 {
                    for ix in x0..x1 {
                        // SAFETY: channels q..q+16 of position (b, iy, ix), inside x.
                        let v =
                            unsafe { _mm512_loadu_ps(x.add(((b * ih + iy) * iw + ix) * c + q)) };
                        m = nan_max(m, v);
                    }
                }
                // SAFETY: channels q..q+16 of output position (b, oy, ox).
                unsafe { _mm512_storeu_ps(out.add(q), m) };
            }
        }
    }

    /// Lanes `0..n` (n < 16) or all 16.
    #[inline(always)]
    fn head(n: usize) -> __mmask16 {
        if n >= 16 {
            0xffff
        } else {
            ((1u32 << n) - 1) as __mmask16
        }
    }

    /// # Safety
    /// `x` and `y` hold the f32 tensors `g` describes (2-D max pooling without dilation:
    /// [`super::is_max_2d`]); the CPU has AVX-512F ([`on`]).
    pub unsafe fn max_pool_2d_f32(g: &PoolGeom, x: *const f32, y: *mut f32) {
        let (iv, ov) = (g.in_vol(), g.out_vol());
        let xs = SendPtr(x as *mut f32);
        let ys = SendPtr(y);
        let g = *g;
        for_range(g.n * g.c, (4096 / ov.max(1)).max(1), move |p0, p1| {
            // The row buffer: `lm` -inf, the row, -inf up to past the last vector's reads.
            let [_, _, iw] = g.in_sp;
            let [_, _, ow] = g.out_sp;
            let lm = g.pad[2].next_multiple_of(16);
            let len = lm + iw.max(g.stride[2] * ow) + g.k[2] + 64;
            let mut row = vec![f32::NEG_INFINITY; len];
            for p in p0..p1 {
                // SAFETY: plane p of x and y; planes are disjoint; `row` holds `len`.
                unsafe { plane(&g, xs.get().add(p * iv), ys.get().add(p * ov), &mut row, lm) };
            }
        });
    }

    #[target_feature(enable = "avx512f")]
    unsafe fn plane(g: &PoolGeom, x: *const f32, y: *mut f32, row: &mut [f32], lm: usize) {
        let [_, ih, iw] = g.in_sp;
        let [_, oh, ow] = g.out_sp;
        let (kh, kw, sh, sw) = (g.k[1], g.k[2], g.stride[1], g.stride[2]);
        let ninf = _mm512_set1_ps(f32::NEG_INFINITY);
        let even = _mm512_set_epi32(30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
        let rb = row.as_mut_ptr();
        // The first input column sits at rb + lm; window ox starts at column ox*sw - pad.
        let base = lm - g.pad[2];
        for oy in 0..oh {
            let y0 = (oy * sh) as isize - g.pad[1] as isize;
            let r0 = y0.clamp(0, ih as isize) as usize;
            let r1 = (y0 + kh as isize).clamp(0, ih as isize) as usize;
            // Vertical: the window's rows, elementwise (masked past the row's end, so the
            // buffer's right margin stays -inf).
            let mut c = 0;
            while c < iw {
                let k = head(iw - c);
                let mut m = ninf;
                for r in r0..r1 {
                    // SAFETY: lanes c..c+16 of input row r, masked to the row.
                    m = nan_max(m, unsafe { _mm512_maskz_loadu_ps(k, x.add(r * iw + c)) });
                }
                // SAFETY: lm + iw <= row.len().
                unsafe { _mm512_mask_storeu_ps(rb.add(lm + c), k, m) };
                c += 16;
            }
            // Horizontal: each output's kw taps.
            let yr = unsafe { y.add(oy * ow) };
            let mut ox = 0;
            while ox < ow {
                let k = head(ow - ox);
                let mut m = ninf;
                if sw == 1 {
                    for t in 0..kw {
                        // SAFETY: base + ox + t + 16 <= lm + ow + kw + 16 <= row.len().
                        m = nan_max(m, unsafe { _mm512_loadu_ps(rb.add(base + ox + t)) });
                    }
                } else if sw == 2 {
                    for t in 0..kw {
                        // SAFETY: base + 2ox + t + 32 <= lm + 2ow + kw + 32 <= row.len().
                        let (lo, hi) = unsafe {
                            let s = rb.add(base + 2 * ox + t);
                            (_mm512_loadu_ps(s), _mm512_loadu_ps(s.add(16)))
                        };
                        m = nan_max(m, _mm512_permutex2var_ps(lo, even, hi));
                    }
                } else {
                    let mut v = [f32::NEG_INFINITY; 16];
                    for (j, o) in v.iter_mut().enumerate().take(ow - ox) {
                        let s = base + (ox + j) * sw;
                        *o = row[s..s + kw]
                            .iter()
                            .fold(f32::NEG_INFINITY, |m, &v| super::nan_max(m, v));
                    }
                    // SAFETY: 16 values.
                    m = unsafe { _mm512_loadu_ps(v.as_ptr()) };
                }
                // SAFETY: lanes ox..ow of output row oy.
                unsafe { _mm512_mask_storeu_ps(yr.add(ox), k, m) };
                ox += 16;
            }
        }
    }
}
