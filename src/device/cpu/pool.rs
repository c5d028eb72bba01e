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

fn pool_fwd<T: FloatElem>(g: &PoolGeom, x: DevPtr, y: DevPtr) {
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
