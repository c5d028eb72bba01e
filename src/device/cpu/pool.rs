//! Pooling on the CPU: max and average pooling (1D/2D/3D) and adaptive average pooling,
//! forward and backward, in parallel over planes. f16/bf16 load to f32.

use super::CpuDevice;
use super::elem::FloatElem;
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::device::pool::PoolOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::pool::{PoolGeom, PoolKind, adaptive_range};
use crate::{Error, Result, with_float_type};

/// `max(a, b)` as max pooling's scan takes it: a NaN wins (PyTorch propagates NaN).
#[inline(always)]
fn nan_max(a: f32, b: f32) -> f32 {
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
fn max_pool_2d<T: FloatElem>(g: &PoolGeom, x: DevPtr, y: DevPtr) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let ys = SendPtr(y.as_mut_ptr::<T>());
    let g = *g;
    let [_, ih, iw] = g.in_sp;
    let [_, oh, ow] = g.out_sp;
    let (kh, kw, sh, sw) = (g.k[1], g.k[2], g.stride[1], g.stride[2]);
    let (ph, pw) = (g.pad[1] as isize, g.pad[2] as isize);
    for_range(g.n * g.c, (4096 / ov.max(1)).max(1), move |p0, p1| {
        let mut row = vec![f32::NEG_INFINITY; iw];
        for p in p0..p1 {
            // SAFETY: plane p of x and y; planes are disjoint.
            let xp = unsafe { std::slice::from_raw_parts(xs.get().add(p * iv), iv) };
            let yp = unsafe { std::slice::from_raw_parts_mut(ys.get().add(p * ov), ov) };
            for oy in 0..oh {
                let y0 = (oy * sh) as isize - ph;
                let r0 = y0.clamp(0, ih as isize) as usize;
                let r1 = (y0 + kh as isize).clamp(0, ih as isize) as usize;
                row.fill(f32::NEG_INFINITY);
                for r in r0..r1 {
                    for (m, v) in row.iter_mut().zip(&xp[r * iw..(r + 1) * iw]) {
                        *m = nan_max(*m, v.to_f32());
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
                            .fold(f32::NEG_INFINITY, |m, &v| nan_max(m, v))
                    };
                    *out = T::from_f32(m);
                }
            }
        }
    });
}

fn pool_fwd<T: FloatElem>(g: &PoolGeom, x: DevPtr, y: DevPtr) {
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
                        let mut m = f32::NEG_INFINITY;
                        g.window(o, |i| {
                            let v = xp[i].to_f32();
                            if v > m || v.is_nan() {
                                m = v;
                            }
                        });
                        m
                    }
                    PoolKind::Avg { count_include_pad } => {
                        let mut s = 0f32;
                        g.window(o, |i| s += xp[i].to_f32());
                        s / g.avg_divisor(o, count_include_pad) as f32
                    }
                };
                *out = T::from_f32(v);
            }
        }
    });
}

fn pool_bwd<T: FloatElem>(g: &PoolGeom, x: DevPtr, dy: DevPtr, dx: DevPtr) {
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let dys = SendPtr(dy.as_mut_ptr::<T>());
    let dxs = SendPtr(dx.as_mut_ptr::<T>());
    let g = *g;
    for_range(g.n * g.c, (4096 / ov.max(1)).max(1), move |p0, p1| {
        let mut acc = vec![0f32; iv];
        for p in p0..p1 {
            acc.fill(0.0);
            let dyp = unsafe { std::slice::from_raw_parts(dys.get().add(p * ov), ov) };
            match g.kind {
                PoolKind::Max => {
                    let xp = unsafe { std::slice::from_raw_parts(xs.get().add(p * iv), iv) };
                    for (o, gy) in dyp.iter().enumerate() {
                        let mut best = usize::MAX;
                        let mut m = f32::NEG_INFINITY;
                        g.window(o, |i| {
                            let v = xp[i].to_f32();
                            if best == usize::MAX || v > m || v.is_nan() {
                                best = i;
                                m = v;
                            }
                        });
                        if best != usize::MAX {
                            acc[best] += gy.to_f32();
                        }
                    }
                }
                PoolKind::Avg { count_include_pad } => {
                    for (o, gy) in dyp.iter().enumerate() {
                        let v = gy.to_f32() / g.avg_divisor(o, count_include_pad) as f32;
                        g.window(o, |i| acc[i] += v);
                    }
                }
            }
            let dxp = unsafe { std::slice::from_raw_parts_mut(dxs.get().add(p * iv), iv) };
            for (d, a) in dxp.iter_mut().zip(&acc) {
                *d = T::from_f32(*a);
            }
        }
    });
}

fn max_pool_idx_fwd<T: FloatElem>(g: &PoolGeom, x: DevPtr, y: DevPtr, idx: DevPtr) {
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
                let (i, v) = g.torch_argmax(o, |i| xp[i].to_f32() as f64);
                yp[o] = T::from_f32(v as f32);
                ip[o] = i as i64;
            }
        }
    });
}

/// The scatter of [`PoolOps::max_pool_backward_indices`]; returns the first bad position.
fn max_pool_idx_bwd<T: FloatElem>(
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
        let mut acc = vec![0f32; iv];
        for p in p0..p1 {
            acc.fill(0.0);
            // SAFETY: plane p of dy, idx and dx; planes are disjoint.
            let dyp = unsafe { std::slice::from_raw_parts(dys.get().add(p * ov), ov) };
            let ip = unsafe { std::slice::from_raw_parts(is.get().add(p * ov), ov) };
            for (o, (g, &i)) in dyp.iter().zip(ip).enumerate() {
                match usize::try_from(i) {
                    Ok(i) if i < iv => acc[i] += g.to_f32(),
                    _ => {
                        badr.fetch_min(p * ov + o, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            }
            let dxp = unsafe { std::slice::from_raw_parts_mut(dxs.get().add(p * iv), iv) };
            for (d, a) in dxp.iter_mut().zip(&acc) {
                *d = T::from_f32(*a);
            }
        }
    });
    let pos = bad.into_inner();
    // SAFETY: pos < planes * ov, inside idx.
    (pos != usize::MAX).then(|| (pos, unsafe { *is.get().add(pos) }))
}

fn adaptive_fwd<T: FloatElem>(
    x: DevPtr,
    y: DevPtr,
    planes: usize,
    inp: [usize; 2],
    out: [usize; 2],
) {
    let (iv, ov) = (inp[0] * inp[1], out[0] * out[1]);
    let xs = SendPtr(x.as_mut_ptr::<T>());
    let ys = SendPtr(y.as_mut_ptr::<T>());
    for_range(planes, (4096 / iv.max(1)).max(1), move |p0, p1| {
        for p in p0..p1 {
            let xp = unsafe { std::slice::from_raw_parts(xs.get().add(p * iv), iv) };
            let yp = unsafe { std::slice::from_raw_parts_mut(ys.get().add(p * ov), ov) };
            for oy in 0..out[0] {
                let (h0, h1) = adaptive_range(oy, inp[0], out[0]);
                for ox in 0..out[1] {
                    let (w0, w1) = adaptive_range(ox, inp[1], out[1]);
                    let mut s = 0f32;
                    for h in h0..h1 {
                        for v in &xp[h * inp[1] + w0..h * inp[1] + w1] {
                            s += v.to_f32();
                        }
                    }
                    yp[oy * out[1] + ox] = T::from_f32(s / ((h1 - h0) * (w1 - w0)) as f32);
                }
            }
        }
    });
}

fn adaptive_bwd<T: FloatElem>(
    dy: DevPtr,
    dx: DevPtr,
    planes: usize,
    inp: [usize; 2],
    out: [usize; 2],
) {
    let (iv, ov) = (inp[0] * inp[1], out[0] * out[1]);
    let dys = SendPtr(dy.as_mut_ptr::<T>());
    let dxs = SendPtr(dx.as_mut_ptr::<T>());
    for_range(planes, (4096 / iv.max(1)).max(1), move |p0, p1| {
        let mut acc = vec![0f32; iv];
        for p in p0..p1 {
            acc.fill(0.0);
            let dyp = unsafe { std::slice::from_raw_parts(dys.get().add(p * ov), ov) };
            for oy in 0..out[0] {
                let (h0, h1) = adaptive_range(oy, inp[0], out[0]);
                for ox in 0..out[1] {
                    let (w0, w1) = adaptive_range(ox, inp[1], out[1]);
                    let gv = dyp[oy * out[1] + ox].to_f32() / ((h1 - h0) * (w1 - w0)) as f32;
                    for h in h0..h1 {
                        for a in &mut acc[h * inp[1] + w0..h * inp[1] + w1] {
                            *a += gv;
                        }
                    }
                }
            }
            let dxp = unsafe { std::slice::from_raw_parts_mut(dxs.get().add(p * iv), iv) };
            for (d, a) in dxp.iter_mut().zip(&acc) {
                *d = T::from_f32(*a);
            }
        }
    });
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
        with_float_type!(dtype, g.kind.name(), T => pool_fwd::<T>(g, x, y));
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
        with_float_type!(dtype, g.kind.name(), T => pool_bwd::<T>(g, x, dy, dx));
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
        with_float_type!(dtype, "max_pool_with_indices", T => max_pool_idx_fwd::<T>(g, x, y, idx));
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
        let bad = with_float_type!(dtype, "max_pool_backward_indices", T =>
            max_pool_idx_bwd::<T>(dy, idx, planes, out_vol, in_vol, dx));
        match bad {
            None => Ok(()),
            Some((pos, v)) => Err(Error::invalid(format!(
                "max_pool_backward_indices: index {v} at position {pos} is out of range [0, {in_vol})"
            ))),
        }
    }

    fn adaptive_avg_pool2d_forward(
        &self,
        _s: RawStream,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        planes: usize,
        inp: [usize; 2],
        out: [usize; 2],
    ) -> Result<()> {
        with_float_type!(dtype, "adaptive_avg_pool2d", T => adaptive_fwd::<T>(x, y, planes, inp, out));
        Ok(())
    }

    fn adaptive_avg_pool2d_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        dy: DevPtr,
        dx: DevPtr,
        planes: usize,
        inp: [usize; 2],
        out: [usize; 2],
    ) -> Result<()> {
        with_float_type!(dtype, "adaptive_avg_pool2d_backward", T => adaptive_bwd::<T>(dy, dx, planes, inp, out));
        Ok(())
    }
}
