//! Convolution on the CPU.
//!
//! Convolution is im2col + the device's own GEMM (so it gets whatever BLAS the device uses):
//! per image, the input is unfolded into a `[c_in * k_vol, out_vol]` matrix (in parallel over
//! its rows), one GEMM per group multiplies it with the weights, and the bias + activation
//! epilogue runs right after that image's GEMM while its output is still in cache. 1×1
//! convolutions with stride 1 and no padding skip im2col (the input is the matrix). The data
//! gradient is GEMM + col2im (in parallel over channels); the weight gradient is im2col + GEMM
//! accumulating over images. f16/bf16 are widened to f32 once, computed, and rounded back;
//! f64 runs the float64 references of `crate::ops::conv` (in f64, serial).
//! Stride-1 1D/2D forward convolutions on AVX-512 machines skip all of this and run the
//! direct kernel of [`direct`], and so do the stride-2 2-D ones with output planes of half
//! the input's size (ResNet's stem and 3×3/2 convolutions, over the input's phase planes); so do 1×1 convolutions on planes up to
//! [`direct::PLANE_1X1`] positions and convolutions with small output planes (up to
//! [`direct::SMALL_PLANE`]), as a 1×1 convolution over their im2col columns.

mod direct;
mod packed;
mod pointwise;
mod winograd;

use super::CpuDevice;
use super::elem::{narrow, widen};
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::device::blas::{BlasOps, GemmDesc, Transpose};
use crate::device::conv::ConvOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::conv::{self as conv, Activation, Blocked, ConvGeom};
use crate::ops::elementwise::relu_f32;
use crate::{Result, with_float_type};

/// Largest buffer (f32 values) kept between calls by [`Spare`].
const SPARE_MAX: usize = 8 << 20;

/// A scratch buffer kept between calls in `home` (when at most [`SPARE_MAX`] values), so
/// a steady stream of convolutions does not fault in fresh pages on every call: packing
/// ResNet-50's 256-channel 3×3 weights into a new 2.4 MB `Vec` each call cost about a
/// tenth of the convolution. Its contents are whatever the last user left (initialized
/// f32); every user writes what it reads. Taken by one call at a time; a concurrent call
/// allocates its own.
struct Spare {
    buf: Vec<f32>,
    home: &'static parking_lot::Mutex<Vec<f32>>,
}

impl Spare {
    fn take(home: &'static parking_lot::Mutex<Vec<f32>>, len: usize) -> Spare {
        let mut buf = home
            .try_lock()
            .map(|mut g| std::mem::take(&mut *g))
            .unwrap_or_default();
        if buf.len() < len {
            buf = vec![0f32; len];
        }
        Spare { buf, home }
    }
}

impl Drop for Spare {
    fn drop(&mut self) {
        if self.buf.len() <= SPARE_MAX
            && let Some(mut g) = self.home.try_lock()
            && g.len() < self.buf.len()
        {
            *g = std::mem::take(&mut self.buf);
        }
    }
}

/// `n` f64 of a host buffer.
///
/// # Safety
/// `p` holds `n` f64 that nothing writes while the slice lives.
unsafe fn f64s<'a>(p: DevPtr, n: usize) -> &'a [f64] {
    // SAFETY: caller's contract.
    unsafe { std::slice::from_raw_parts(p.as_ptr::<f64>(), n) }
}

/// Writes `v` to the f64 buffer at `p`.
fn put_f64(p: DevPtr, v: &[f64]) {
    // SAFETY: the callers' outputs hold v.len() f64 and alias no input.
    unsafe { std::slice::from_raw_parts_mut(p.as_mut_ptr::<f64>(), v.len()) }.copy_from_slice(v);
}

fn dp<T>(p: *const T) -> DevPtr {
    DevPtr(p as usize as u64)
}

/// True when the input itself is the im2col matrix (1×1 kernel, stride 1, no padding).
fn is_direct(g: &ConvGeom) -> bool {
    g.k_vol() == 1 && g.stride == [1; 3] && g.pad == [0; 3]
}

/// A scratch buffer of f32: the caller's workspace when it is large enough, else our own.
struct Scratch {
    _own: Vec<f32>,
    ptr: *mut f32,
}

impl Scratch {
    fn new(elems: usize, ws: DevPtr, ws_bytes: usize) -> Scratch {
        if elems == 0 {
            return Scratch {
                _own: Vec::new(),
                ptr: std::ptr::NonNull::dangling().as_ptr(),
            };
        }
        if !ws.is_null() && ws_bytes >= elems * 4 && ws.0.is_multiple_of(4) {
            return Scratch {
                _own: Vec::new(),
                ptr: ws.as_mut_ptr(),
            };
        }
        let mut own = vec![0f32; elems];
        let ptr = own.as_mut_ptr();
        Scratch { _own: own, ptr }
    }
}

/// Unfolds one image `x` `[c_in, in_sp]` into `col` `[c_in * k_vol, out_vol]`.
fn im2col(g: &ConvGeom, x: *const f32, col: *mut f32) {
    let kv = g.k_vol();
    let ov = g.out_vol();
    let iv = g.in_vol();
    let [_, ih, iw] = g.in_sp;
    let [od, oh, ow] = g.out_sp;
    let [_, kh, kw] = g.k_sp;
    let xs = SendPtr(x as *mut f32);
    let cs = SendPtr(col);
    let g = *g;
    for_range(g.c_in * kv, (8192 / ov.max(1)).max(1), move |r0, r1| {
        for r in r0..r1 {
            let ic = r / kv;
            let kk = r % kv;
            let (p, q, t) = (kk / (kh * kw), (kk / kw) % kh, kk % kw);
            // SAFETY: row r of col and channel ic of x are inside the caller's buffers.
            let (xc, dst) = unsafe { (xs.get().add(ic * iv) as *const f32, cs.get().add(r * ov)) };
            let dst = unsafe { std::slice::from_raw_parts_mut(dst, ov) };
            let x0 = (t * g.dil[2]) as isize - g.pad[2] as isize;
            for a in 0..od {
                let z = (a * g.stride[0] + p * g.dil[0]) as isize - g.pad[0] as isize;
                let plane = &mut dst[a * oh * ow..(a + 1) * oh * ow];
                if z < 0 || z >= g.in_sp[0] as isize {
                    plane.fill(0.0);
                    continue;
                }
                for b in 0..oh {
                    let y = (b * g.stride[1] + q * g.dil[1]) as isize - g.pad[1] as isize;
                    let out = &mut plane[b * ow..(b + 1) * ow];
                    if y < 0 || y >= ih as isize {
                        out.fill(0.0);
                        continue;
                    }
                    // SAFETY: row (z, y) of channel ic.
                    let src = unsafe {
                        std::slice::from_raw_parts(xc.add((z as usize * ih + y as usize) * iw), iw)
                    };
                    if g.stride[2] == 1 {
                        // Valid c: 0 <= c + x0 < iw.
                        let lo = ((-x0).max(0) as usize).min(ow);
                        let hi = ((iw as isize - x0).max(0) as usize).min(ow).max(lo);
                        out[..lo].fill(0.0);
                        out[hi..].fill(0.0);
                        // (empty when the kernel tap reaches past the padded row)
                        if hi > lo {
                            let s0 = (lo as isize + x0) as usize;
                            out[lo..hi].copy_from_slice(&src[s0..s0 + (hi - lo)]);
                        }
                    } else {
                        // Valid c: 0 <= c * s + x0 < iw; no bounds test inside (the stem's
                        // 7×7/2 im2col took 2 ms of one thread with one per element).
                        let s = g.stride[2] as isize;
                        let lo = ((-x0).max(0) + s - 1) / s;
                        let hi = ((iw as isize - x0 + s - 1) / s).max(lo);
                        let (lo, hi) = ((lo as usize).min(ow), (hi as usize).min(ow));
                        out[..lo].fill(0.0);
                        out[hi..].fill(0.0);
                        if hi > lo {
                            let s0 = (lo as isize * s + x0) as usize;
                            let dst = &mut out[lo..hi];
                            let n = dst.len();
                            if s == 2 {
                                // (a constant stride: vectorized as even-lane shuffles)
                                let src = &src[s0..s0 + 2 * (n - 1) + 1];
                                for (c, o) in dst.iter_mut().enumerate() {
                                    *o = src[2 * c];
                                }
                            } else {
                                let s = s as usize;
                                for (o, v) in dst.iter_mut().zip(src[s0..].iter().step_by(s)) {
                                    *o = *v;
                                }
                            }
                        }
                    }
                }
            }
        }
    });
}

/// Folds `col` `[c_in * k_vol, out_vol]` back into one image `dx` `[c_in, in_sp]`
/// (overwritten), summing overlapping taps.
fn col2im(g: &ConvGeom, col: *const f32, dx: *mut f32) {
    let kv = g.k_vol();
    let ov = g.out_vol();
    let iv = g.in_vol();
    let [_, ih, iw] = g.in_sp;
    let [od, oh, ow] = g.out_sp;
    let [_, kh, kw] = g.k_sp;
    let cs = SendPtr(col as *mut f32);
    let ds = SendPtr(dx);
    let g = *g;
    for_range(g.c_in, 1, move |c0, c1| {
        for ic in c0..c1 {
            // SAFETY: channel ic of dx; rows ic*kv.. of col.
            let d = unsafe { std::slice::from_raw_parts_mut(ds.get().add(ic * iv), iv) };
            d.fill(0.0);
            for kk in 0..kv {
                let (p, q, t) = (kk / (kh * kw), (kk / kw) % kh, kk % kw);
                let src =
                    unsafe { std::slice::from_raw_parts(cs.get().add((ic * kv + kk) * ov), ov) };
                let x0 = (t * g.dil[2]) as isize - g.pad[2] as isize;
                for a in 0..od {
                    let z = (a * g.stride[0] + p * g.dil[0]) as isize - g.pad[0] as isize;
                    if z < 0 || z >= g.in_sp[0] as isize {
                        continue;
                    }
                    for b in 0..oh {
                        let y = (b * g.stride[1] + q * g.dil[1]) as isize - g.pad[1] as isize;
                        if y < 0 || y >= ih as isize {
                            continue;
                        }
                        let row = &mut d[(z as usize * ih + y as usize) * iw..][..iw];
                        let s = &src[(a * oh + b) * ow..][..ow];
                        if g.stride[2] == 1 {
                            let lo = ((-x0).max(0) as usize).min(ow);
                            let hi = ((iw as isize - x0).max(0) as usize).min(ow).max(lo);
                            // (empty when the tap reaches past the padded row)
                            if hi > lo {
                                let s0 = (lo as isize + x0) as usize;
                                for (o, v) in row[s0..s0 + (hi - lo)].iter_mut().zip(&s[lo..hi]) {
                                    *o += v;
                                }
                            }
                        } else {
                            let st = g.stride[2] as isize;
                            for (c, v) in s.iter().enumerate() {
                                let xx = c as isize * st + x0;
                                if xx >= 0 && xx < iw as isize {
                                    row[xx as usize] += v;
                                }
                            }
                        }
                    }
                }
            }
        }
    });
}

/// `y[c, :] = act(y[c, :] + bias[c] + res[c, :])` over `[channels, len]` (`res` optional,
/// added after the bias, as the unfused add would), in parallel over channels.
fn epilogue(
    y: *mut f32,
    bias: Option<&[f32]>,
    res: Option<*const f32>,
    act: Activation,
    channels: usize,
    len: usize,
) {
    if bias.is_none() && res.is_none() && act == Activation::None {
        return;
    }
    let ys = SendPtr(y);
    let rs = res.map(|r| SendPtr(r as *mut f32));
    for_range(channels, (16384 / len.max(1)).max(1), move |c0, c1| {
        for c in c0..c1 {
            // SAFETY: channel c of y (and of res).
            let row = unsafe { std::slice::from_raw_parts_mut(ys.get().add(c * len), len) };
            let b = bias.map_or(0.0, |b| b[c]);
            if let Some(rs) = rs {
                let r = unsafe { std::slice::from_raw_parts(rs.get().add(c * len), len) };
                match act {
                    Activation::None => row.iter_mut().zip(r).for_each(|(v, r)| *v = *v + b + r),
                    Activation::Relu => row
                        .iter_mut()
                        .zip(r)
                        .for_each(|(v, r)| *v = relu_f32(*v + b + r)),
                    a => row
                        .iter_mut()
                        .zip(r)
                        .for_each(|(v, r)| *v = a.apply_f32(*v + b + r)),
                }
                continue;
            }
            match act {
                Activation::None => row.iter_mut().for_each(|v| *v += b),
                Activation::Relu => row.iter_mut().for_each(|v| *v = relu_f32(*v + b)),
                a => row.iter_mut().for_each(|v| *v = a.apply_f32(*v + b)),
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn sgemm(
    dev: &CpuDevice,
    ta: Transpose,
    tb: Transpose,
    m: usize,
    n: usize,
    k: usize,
    a: *const f32,
    lda: usize,
    b: *const f32,
    ldb: usize,
    beta: f32,
    c: *mut f32,
    ldc: usize,
) -> Result<()> {
    dev.gemm(
        RawStream::DEFAULT,
        &GemmDesc {
            dtype: DType::F32,
            trans_a: ta,
            trans_b: tb,
            m,
            n,
            k,
            alpha: 1.0,
            a: dp(a),
            lda: lda.max(1),
            b: dp(b),
            ldb: ldb.max(1),
            beta,
            c: dp(c),
            ldc: ldc.max(1),
            batch: 1,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
        },
    )
}

use Transpose::{No, Yes};

#[allow(clippy::too_many_arguments)]
fn conv_fwd_f32(
    dev: &CpuDevice,
    g: &ConvGeom,
    x: *const f32,
    w: *const f32,
    bias: Option<&[f32]>,
    res: Option<*const f32>,
    act: Activation,
    y: *mut f32,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    let (cg, kg) = (g.c_in / g.groups, g.c_out / g.groups);
    let (iv, ov, ck) = (g.in_vol(), g.out_vol(), g.c_in / g.groups * g.k_vol());
    if direct::applies(g) {
        // SAFETY: the caller's buffers hold the tensors g describes; applies() checked the CPU.
        unsafe { direct::forward(g, x, w, bias, res, act, y) };
        return Ok(());
    }
    // Small output planes (strided convolutions down to 7×7) and strided 1×1 convolutions:
    // im2col, then the direct kernel as a 1×1 convolution of the `[c_in * k_vol, out_vol]`
    // columns with the weights `[c_out, c_in * k_vol]`, bias and activation in its epilogue.
    let cols = ConvGeom {
        ndim: 1,
        n: 1,
        c_in: ck,
        c_out: g.c_out,
        groups: 1,
        in_sp: [1, 1, ov],
        k_sp: [1; 3],
        out_sp: [1, 1, ov],
        stride: [1; 3],
        pad: [0; 3],
        dil: [1; 3],
        channels_last: false,
    };
    if g.groups == 1 && (ov <= direct::SMALL_PLANE || g.k_vol() == 1) && direct::applies(&cols) {
        // (a 1×1 convolution with stride 1 and no padding is its own columns)
        let own = is_direct(g);
        let col = Scratch::new(if own { 0 } else { g.col_elems() }, ws, ws_bytes);
        for n in 0..g.n {
            // SAFETY: image n of x and y; col holds one image's columns.
            unsafe {
                let xn = x.add(n * g.c_in * iv);
                let src = if own {
                    xn
                } else {
                    im2col(g, xn, col.ptr);
                    col.ptr as *const f32
                };
                let rn = res.map(|r| r.add(n * g.c_out * ov));
                direct::forward(&cols, src, w, bias, rn, act, y.add(n * g.c_out * ov));
            }
        }
        return Ok(());
    }
    let direct = is_direct(g);
    let col = Scratch::new(if direct { 0 } else { g.col_elems() }, ws, ws_bytes);
    for n in 0..g.n {
        // SAFETY: image n of x and y.
        let (xn, yn) = unsafe { (x.add(n * g.c_in * iv), y.add(n * g.c_out * ov)) };
        if !direct {
            im2col(g, xn, col.ptr);
        }
        for grp in 0..g.groups {
            let a = if direct {
                unsafe { xn.add(grp * cg * iv) }
            } else {
                unsafe { col.ptr.add(grp * ck * ov) as *const f32 }
            };
            let (b, c) = unsafe { (w.add(grp * kg * ck), yn.add(grp * kg * ov)) };
            // Row-major Y_g[kg, ov] = W_g[kg, ck] · col_g[ck, ov], i.e. column-major
            // Y_gᵀ (ov×kg) = col_gᵀ (ov×ck) · W_gᵀ (ck×kg).
            sgemm(dev, No, No, ov, kg, ck, a, ov, b, ck, 0.0, c, ov)?;
        }
        // SAFETY: image n of res.
        let rn = res.map(|r| unsafe { r.add(n * g.c_out * ov) });
        epilogue(yn, bias, rn, act, g.c_out, ov);
    }
    Ok(())
}

fn conv_bwd_data_f32(
    dev: &CpuDevice,
    g: &ConvGeom,
    dy: *const f32,
    w: *const f32,
    dx: *mut f32,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    let (cg, kg) = (g.c_in / g.groups, g.c_out / g.groups);
    let (iv, ov, ck) = (g.in_vol(), g.out_vol(), g.c_in / g.groups * g.k_vol());
    let direct = is_direct(g);
    let col = Scratch::new(if direct { 0 } else { g.col_elems() }, ws, ws_bytes);
    for n in 0..g.n {
        let (dyn_, dxn) = unsafe { (dy.add(n * g.c_out * ov), dx.add(n * g.c_in * iv)) };
        for grp in 0..g.groups {
            let a = unsafe { dyn_.add(grp * kg * ov) };
            let b = unsafe { w.add(grp * kg * ck) };
            let c = if direct {
                unsafe { dxn.add(grp * cg * iv) }
            } else {
                unsafe { col.ptr.add(grp * ck * ov) }
            };
            // dcol_g[ck, ov] = W_gᵀ · dY_g, i.e. column-major dcolᵀ (ov×ck) = dYᵀ (ov×kg) · W_g.
            sgemm(dev, No, Yes, ov, ck, kg, a, ov, b, ck, 0.0, c, ov)?;
        }
        if !direct {
            col2im(g, col.ptr, dxn);
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn conv_bwd_weight_f32(
    dev: &CpuDevice,
    g: &ConvGeom,
    x: *const f32,
    dy: *const f32,
    dw: *mut f32,
    db: Option<*mut f32>,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    let (cg, kg) = (g.c_in / g.groups, g.c_out / g.groups);
    let (iv, ov, ck) = (g.in_vol(), g.out_vol(), g.c_in / g.groups * g.k_vol());
    let direct = is_direct(g);
    if g.n == 0 || ov == 0 {
        unsafe { std::ptr::write_bytes(dw, 0, g.c_out * ck) };
    }
    let col = Scratch::new(if direct { 0 } else { g.col_elems() }, ws, ws_bytes);
    for n in 0..g.n {
        let (xn, dyn_) = unsafe { (x.add(n * g.c_in * iv), dy.add(n * g.c_out * ov)) };
        if !direct {
            im2col(g, xn, col.ptr);
        }
        for grp in 0..g.groups {
            let a = if direct {
                unsafe { xn.add(grp * cg * iv) }
            } else {
                unsafe { col.ptr.add(grp * ck * ov) as *const f32 }
            };
            let b = unsafe { dyn_.add(grp * kg * ov) };
            let c = unsafe { dw.add(grp * kg * ck) };
            // dW_g[kg, ck] += dY_g[kg, ov] · col_gᵀ, i.e. column-major
            // dW_gᵀ (ck×kg) += col_g (ck×ov) · dY_gᵀ (ov×kg).
            let beta = if n == 0 { 0.0 } else { 1.0 };
            sgemm(dev, Yes, No, ck, kg, ov, a, ov, b, ov, beta, c, ck)?;
        }
    }
    if let Some(db) = db {
        let d = SendPtr(db);
        let dys = SendPtr(dy as *mut f32);
        let g = *g;
        for_range(g.c_out, 1, move |k0, k1| {
            for k in k0..k1 {
                let mut s = 0f64;
                for n in 0..g.n {
                    let row = unsafe {
                        std::slice::from_raw_parts(dys.get().add((n * g.c_out + k) * ov), ov)
                    };
                    s += row.iter().map(|&v| v as f64).sum::<f64>();
                }
                unsafe { *d.get().add(k) = s as f32 };
            }
        });
    }
    Ok(())
}

impl ConvOps for CpuDevice {
    fn conv_workspace_size(&self, g: &ConvGeom, _dtype: DType) -> Result<usize> {
        g.validate("conv_workspace_size")?;
        Ok(if is_direct(g) { 0 } else { g.col_elems() * 4 })
    }

    fn conv_forward(
        &self,
        _s: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()> {
        no_channels_last(g)?;
        let (xn, wn, yn) = (
            g.n * g.c_in * g.in_vol(),
            g.c_out * (g.c_in / g.groups) * g.k_vol(),
            g.n * g.c_out * g.out_vol(),
        );
        if dtype == DType::F64 {
            // f64: the float64 reference (in f64 throughout; serial).
            // SAFETY: the runtime validated x, w, bias and y against g.
            let y64 = unsafe {
                let b = bias.map(|b| f64s(b, g.c_out));
                conv::conv_reference(g, f64s(x, xn), f64s(w, wn), b)
            };
            let y64: Vec<f64> = y64.into_iter().map(|v| act.apply_f64(v)).collect();
            debug_assert_eq!(y64.len(), yn);
            put_f64(y, &y64);
            return Ok(());
        }
        with_float_type!(dtype, "conv_forward", T => {
            let b = bias.map(|b| widen::<T>(b, g.c_out));
            if dtype == DType::F32 {
                conv_fwd_f32(self, g, x.as_ptr(), w.as_ptr(), b.as_deref(), None, act, y.as_mut_ptr(), ws, ws_bytes)?;
            } else {
                let (xv, wv) = (widen::<T>(x, xn), widen::<T>(w, wn));
                let mut yv = vec![0f32; yn];
                conv_fwd_f32(self, g, xv.as_ptr(), wv.as_ptr(), b.as_deref(), None, act, yv.as_mut_ptr(), ws, ws_bytes)?;
                narrow::<T>(&yv, y);
            }
        });
        Ok(())
    }

    fn has_conv_residual(&self) -> bool {
        true
    }

    fn conv_forward_residual(
        &self,
        _s: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        residual: DevPtr,
        act: Activation,
        y: DevPtr,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()> {
        no_channels_last(g)?;
        if dtype != DType::F32 {
            return Err(crate::Error::unsupported(format!(
                "conv_forward_residual: dtype {dtype} (the CPU fuses the residual in f32 only)"
            )));
        }
        if residual == y {
            return Err(crate::Error::invalid(
                "conv_forward_residual: the residual must not be the output",
            ));
        }
        let b = bias.map(|b| widen::<f32>(b, g.c_out));
        conv_fwd_f32(
            self,
            g,
            x.as_ptr(),
            w.as_ptr(),
            b.as_deref(),
            Some(residual.as_ptr()),
            act,
            y.as_mut_ptr(),
            ws,
            ws_bytes,
        )
    }

    fn conv_packed_weight_len(&self, g: &ConvGeom, dtype: DType) -> Option<usize> {
        (dtype == DType::F32 && packed::prefer(g)).then(|| packed::packed_len(g))
    }

    fn conv_pack_weight(
        &self,
        _s: RawStream,
        g: &ConvGeom,
        dtype: DType,
        w: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        packed_geom("conv_pack_weight", g, dtype)?;
        // SAFETY: the runtime allocated `out` for packed_len(g) values and checked w's shape.
        unsafe { packed::pack(g, w.as_ptr(), out.as_mut_ptr()) };
        Ok(())
    }

    fn conv_packed_layout(&self, g: &ConvGeom, dtype: DType, layout: Blocked) -> bool {
        dtype == DType::F32 && packed::prefer(g) && packed::applies_blocked(g, layout)
    }

    fn conv_forward_packed(
        &self,
        _s: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        residual: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        layout: Blocked,
    ) -> Result<()> {
        packed_geom("conv_forward_packed", g, dtype)?;
        if !packed::applies_blocked(g, layout) {
            return Err(crate::Error::unsupported(format!(
                "conv_forward_packed: layout {layout:?} with {} input and {} output channels \
                 (a blocked tensor's channels are a multiple of 16)",
                g.c_in, g.c_out
            )));
        }
        if residual == Some(y) {
            return Err(crate::Error::invalid(
                "conv_forward_packed: the residual must not be the output",
            ));
        }
        let b = bias.map(|b| widen::<f32>(b, g.c_out));
        // SAFETY: the runtime validated x, bias, residual and y against g and w as the
        // packed weights of g.
        unsafe {
            packed::forward(
                g,
                x.as_ptr(),
                w.as_ptr(),
                b.as_deref(),
                residual.map(|r| r.as_ptr()),
                act,
                y.as_mut_ptr(),
                layout,
            )
        };
        Ok(())
    }

    fn conv_backward_data(
        &self,
        _s: RawStream,
        g: &ConvGeom,
        dtype: DType,
        dy: DevPtr,
        w: DevPtr,
        dx: DevPtr,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()> {
        no_channels_last(g)?;
        let (xn, wn, yn) = (
            g.n * g.c_in * g.in_vol(),
            g.c_out * (g.c_in / g.groups) * g.k_vol(),
            g.n * g.c_out * g.out_vol(),
        );
        if dtype == DType::F64 {
            // SAFETY: the runtime validated dy, w and dx against g.
            let dx64 = unsafe { conv::conv_backward_data_reference(g, f64s(dy, yn), f64s(w, wn)) };
            debug_assert_eq!(dx64.len(), xn);
            put_f64(dx, &dx64);
            return Ok(());
        }
        with_float_type!(dtype, "conv_backward_data", T => {
            if dtype == DType::F32 {
                conv_bwd_data_f32(self, g, dy.as_ptr(), w.as_ptr(), dx.as_mut_ptr(), ws, ws_bytes)?;
            } else {
                let (dyv, wv) = (widen::<T>(dy, yn), widen::<T>(w, wn));
                let mut dxv = vec![0f32; xn];
                conv_bwd_data_f32(self, g, dyv.as_ptr(), wv.as_ptr(), dxv.as_mut_ptr(), ws, ws_bytes)?;
                narrow::<T>(&dxv, dx);
            }
        });
        Ok(())
    }

    fn conv_backward_weight(
        &self,
        _s: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dw: DevPtr,
        db: Option<DevPtr>,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()> {
        no_channels_last(g)?;
        let (xn, wn, yn) = (
            g.n * g.c_in * g.in_vol(),
            g.c_out * (g.c_in / g.groups) * g.k_vol(),
            g.n * g.c_out * g.out_vol(),
        );
        if dtype == DType::F64 {
            // SAFETY: the runtime validated x, dy, dw and db against g.
            let (dw64, db64) =
                unsafe { conv::conv_backward_weight_reference(g, f64s(x, xn), f64s(dy, yn)) };
            debug_assert_eq!(dw64.len(), wn);
            put_f64(dw, &dw64);
            if let Some(d) = db {
                put_f64(d, &db64);
            }
            return Ok(());
        }
        with_float_type!(dtype, "conv_backward_weight", T => {
            if dtype == DType::F32 {
                conv_bwd_weight_f32(self, g, x.as_ptr(), dy.as_ptr(), dw.as_mut_ptr(), db.map(|d| d.as_mut_ptr()), ws, ws_bytes)?;
            } else {
                let (xv, dyv) = (widen::<T>(x, xn), widen::<T>(dy, yn));
                let mut dwv = vec![0f32; wn];
                let mut dbv = vec![0f32; g.c_out];
                let dbp = db.map(|_| dbv.as_mut_ptr());
                conv_bwd_weight_f32(self, g, xv.as_ptr(), dyv.as_ptr(), dwv.as_mut_ptr(), dbp, ws, ws_bytes)?;
                narrow::<T>(&dwv, dw);
                if let Some(d) = db {
                    narrow::<T>(&dbv, d);
                }
            }
        });
        Ok(())
    }
}

/// The CPU convolutions are channels-first (the runtime converts channels-last tensors around
/// them: `has_channels_last_conv` is false); a channels-last geometry is refused.
/// Fails unless [`packed`] runs `g` in `dtype` here.
fn packed_geom(op: &str, g: &ConvGeom, dtype: DType) -> Result<()> {
    if dtype != DType::F32 || !packed::applies(g) {
        return Err(crate::Error::unsupported(format!(
            "{op}: no packed form for this convolution ({dtype}, {g:?}) on this CPU"
        )));
    }
    Ok(())
}

fn no_channels_last(g: &ConvGeom) -> Result<()> {
    if g.channels_last {
        return Err(crate::Error::unsupported(
            "the CPU convolutions take channels-first tensors only",
        ));
    }
    Ok(())
}
