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
        with_floating_type!(dtype, g.kind.name(), T => pool_fwd::<T>(g, x, y));
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
