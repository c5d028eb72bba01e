//! Pooling on GPUs (kernels/pool.hip): max and average pooling (1D/2D/3D) and adaptive
//! average and max pooling (1D/2D/3D, both layouts), forward and backward; problems whose indices fit in 32 bits run the
//! `_i32` kernels, and 2D/1D problems with the common windows (2x2 and 3x3 stride 2, 3x3
//! stride 1, 1D 2 and 3 stride 2) the fast `rb_pool2_*` paths. Forward: one thread per output
//! (fast paths: per output column and a few rows). Backward: gathers without atomics, one
//! thread per input element summing the covering windows' gradients; max pooling first
//! writes each window's arg-max (its position in the window, a byte or an int) to scratch.
//! Channels-last: forward `rb_pool_nhwc_*` (4 channels per thread), backward the same
//! gathers. Max pooling with indices (either layout): one thread per output; its backward
//! scatters through the indices with f32 atomics (into dx, or f32 scratch cast to f16/bf16
//! afterwards). Adaptive pooling: one thread per output element forward, a gather backward.
//! f64, in double: max/avg pooling channels first (`rb_pool_fwd_f64`, the gather
//! `rb_pool_bwd_f64`; the runtime converts channels-last tensors around them), max pooling
//! with indices and adaptive pooling in both layouts (the f32 kernels instantiated for
//! double); max pooling with indices' backward without atomics (`rb_pool_bwd_idx_f64`, one
//! thread per plane adding its outputs in order: deterministic, the CPU's sums).

use super::GpuDevice;
use super::Scratch;
use super::kernels::{
    ADAPTIVE_BWD, ADAPTIVE_FWD, POOL_ARG, POOL_BWD, POOL_BWD_F64, POOL_BWD_IDX, POOL_BWD_IDX_F64,
    POOL_FWD, POOL_FWD_F64, POOL_FWD_IDX, POOL_GATHER, POOL_NHWC_BWD, POOL_NHWC_BWD_IDX,
    POOL_NHWC_FWD, POOL_NHWC_FWD_IDX, POOL2_ARG, POOL2_BWD, POOL2_FWD, float_suffix,
};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{DevPtr, Device, ElementwiseOps, PoolOps, RawStream};
use crate::ops::pool::{AdaptiveGeom, PoolGeom, PoolKind, adaptive_index_error};

/// `RbPool` of kernels/pool.hip.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbPool {
    nc: i64,
    inp: [i64; 3],
    out: [i64; 3],
    k: [i64; 3],
    s: [i64; 3],
    p: [i64; 3],
    pa: [i64; 3],
    d: [i64; 3],
    divisor: i64,
    kind: i32,
    include_pad: i32,
}

fn rb_pool(g: &PoolGeom) -> RbPool {
    let c = |a: [usize; 3]| a.map(|v| v as i64);
    let (kind, include_pad) = match g.kind {
        PoolKind::Max => (0, 0),
        PoolKind::Avg { count_include_pad } => (1, count_include_pad as i32),
    };
    RbPool {
        nc: (g.n * g.c) as i64,
        inp: c(g.in_sp),
        out: c(g.out_sp),
        k: c(g.k),
        s: c(g.stride),
        p: c(g.pad),
        pa: c(g.pad_after),
        d: c(g.dil),
        divisor: g.divisor_override,
        kind,
        include_pad,
    }
}

/// "_i32" when every index of the problem (with room for a grid stride of at most 2^28
/// threads) fits in an `int`: the kernels then divide in 32 bits. (This once multiplied the
/// input and output extents together, so no real problem qualified and neither the `_i32`
/// kernels nor the fast paths, which require them, ever ran.)
fn index_suffix(g: &PoolGeom) -> &'static str {
    let most = g.n * g.c * g.in_vol().max(g.out_vol());
    let padded = g
        .in_sp
        .iter()
        .zip(g.pad.iter().zip(&g.pad_after))
        .map(|(i, (p, pa))| i + p + pa)
        .max()
        .unwrap_or(0);
    if most < (1 << 30) && padded * g.dil.iter().max().unwrap_or(&1) * 4 < (1 << 30) {
        "_i32"
    } else {
        ""
    }
}

/// `RbPool2` of kernels/pool.hip (the fast 2D/1D forward paths).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct RbPool2 {
    planes: u32,
    ih: u32,
    iw: u32,
    oh: u32,
    ow: u32,
    ohb: u32,
    ph: i32,
    pw: i32,
    eh: i32,
    ew: i32,
    divisor: f32,
    include_pad: i32,
}

/// The fast forward path of a problem, when it has one: the kernel variant (`_max_k3s2`...)
/// and its arguments. A 2D problem (square window 2x2 stride 2, 3x3 stride 2 or 3x3 stride 1)
/// or a 1D one (window 2 or 3, stride 2), no dilation, indices in 32 bits.
fn fast_path(g: &PoolGeom) -> Option<(String, RbPool2, usize)> {
    if g.dil != [1, 1, 1]
        || g.in_sp[0] != 1
        || g.out_sp[0] != 1
        || g.k[0] != 1
        || g.pad[0] != 0
        || g.pad_after[0] != 0
        || index_suffix(g) != "_i32"
    {
        return None;
    }
    let (kind, include_pad) = match g.kind {
        PoolKind::Max => ("max", 0),
        PoolKind::Avg { count_include_pad } => ("avg", count_include_pad as i32),
    };
    let one_d =
        g.in_sp[1] == 1 && g.out_sp[1] == 1 && g.k[1] == 1 && g.pad[1] == 0 && g.pad_after[1] == 0;
    let (k, s) = (g.k[2], g.stride[2]);
    let (window, vh) = if one_d {
        match (k, s) {
            (2, 2) | (3, 2) => (format!("k1x{k}s{s}"), 1),
            _ => return None,
        }
    } else {
        if g.k[1] != k || g.stride[1] != s {
            return None;
        }
        match (k, s) {
            (2, 2) | (3, 2) => (format!("k{k}s{s}"), 2),
            (3, 1) => (format!("k{k}s{s}"), 4),
            _ => return None,
        }
    };
    let planes = g.n * g.c;
    let ohb = g.out_sp[1].div_ceil(vh);
    let threads = planes.checked_mul(ohb)?.checked_mul(g.out_sp[2])?;
    // Every index the kernel forms (with a grid stride of at most 2^28 threads) fits.
    if threads >= (1 << 31) || planes * g.in_vol().max(g.out_vol()) >= (1 << 31) {
        return None;
    }
    let i32_of = |v: usize| i32::try_from(v).ok();
    let l = RbPool2 {
        planes: u32::try_from(planes).ok()?,
        ih: u32::try_from(g.in_sp[1]).ok()?,
        iw: u32::try_from(g.in_sp[2]).ok()?,
        oh: u32::try_from(g.out_sp[1]).ok()?,
        ow: u32::try_from(g.out_sp[2]).ok()?,
        ohb: u32::try_from(ohb).ok()?,
        ph: i32_of(g.pad[1])?,
        pw: i32_of(g.pad[2])?,
        eh: i32_of(g.in_sp[1] + g.pad_after[1])?,
        ew: i32_of(g.in_sp[2] + g.pad_after[2])?,
        divisor: g.divisor_override as f32,
        include_pad,
    };
    Some((format!("_{kind}_{window}"), l, threads))
}

fn pool_forward(
    dev: &GpuDevice,
    stream: RawStream,
    g: &PoolGeom,
    dtype: DType,
    x: DevPtr,
    y: DevPtr,
) -> Result<()> {
    if dtype == DType::F64 {
        // Channels first (the runtime converts channels-last f64 around this).
        let total = g.n * g.c * g.out_vol();
        let l = rb_pool(g);
        return dev.launch_elems(
            stream,
            POOL_FWD_F64.src,
            POOL_FWD_F64.lone(),
            total,
            &mut kargs![x.0, y.0, l],
        );
    }
    if let Some((variant, l, threads)) = fast_path(g) {
        let name = POOL2_FWD.dtype_then(g.kind.name(), dtype, &variant)?;
        return dev.launch_elems(
            stream,
            POOL2_FWD.src,
            &name,
            threads,
            &mut kargs![x.0, y.0, l],
        );
    }
    let total = g.n * g.c * g.out_vol();
    let name = POOL_FWD.dtype_then(g.kind.name(), dtype, index_suffix(g))?;
    let l = rb_pool(g);
    dev.launch_elems(stream, POOL_FWD.src, &name, total, &mut kargs![x.0, y.0, l])
}

/// The element type of max pooling's arg-max buffer: `_a8` (a byte) when a window has
/// fewer than 255 positions, `_a32` (an int) when it has fewer than 2^31 - 1, else none
/// (the backward then recomputes every covering window's arg-max).
fn arg_type(g: &PoolGeom) -> Option<(&'static str, usize)> {
    let kvol = g.k.iter().try_fold(1usize, |a, &k| a.checked_mul(k))?;
    if kvol < 255 {
        Some(("_a8", 1))
    } else if kvol < i32::MAX as usize {
        Some(("_a32", 4))
    } else {
        None
    }
}

/// Pooling backward as gathers (kernels/pool.hip `rb_pool_arg_*`, `rb_pool_gather_*` and
/// the fast 2D/1D `rb_pool2_arg_*`, `rb_pool2_bwd_*`): max pooling writes every window's
/// arg-max to scratch first, then one thread per input element sums the gradients of the
/// windows that cover it (and, max pooling, whose arg-max it is). No atomics; every input
/// element is written. `channels_last`: x, dy and dx are `[N, spatial, C]`.
#[allow(clippy::too_many_arguments)]
fn pool_backward(
    dev: &GpuDevice,
    stream: RawStream,
    g: &PoolGeom,
    dtype: DType,
    x: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    channels_last: bool,
) -> Result<()> {
    let total = g.n * g.c * g.in_vol();
    if total == 0 {
        return Ok(());
    }
    if dtype == DType::F64 {
        if channels_last {
            return Err(crate::Error::dtype(format!(
                "{}_backward: dtype f64 is not supported in channels last on GPUs",
                g.kind.name()
            )));
        }
        let l = rb_pool(g);
        return dev.launch_elems(
            stream,
            POOL_BWD_F64.src,
            POOL_BWD_F64.lone(),
            total,
            &mut kargs![x.0, dy.0, dx.0, l],
        );
    }
    let max = g.kind == PoolKind::Max;
    let isfx = index_suffix(g);
    let mut l = rb_pool(g);
    l.nc = g.n as i64;
    let (c, cl) = (g.c as i64, channels_last as i32);
    let fast = if channels_last { None } else { fast_path(g) };
    let Some((arg_sfx, arg_size)) = arg_type(g).filter(|_| max) else {
        if max {
            // A window of 2^31 positions or more: recompute the arg-max of each.
            return pool_backward_recompute(dev, stream, g, dtype, x, dy, dx, channels_last);
        }
        if let Some((variant, l2, _)) = fast {
            let name = POOL2_BWD.dtype_then("avg_pool_backward", dtype, &variant)?;
            let null = DevPtr::NULL;
            return dev.launch_elems(
                stream,
                POOL2_BWD.src,
                &name,
                total,
                &mut kargs![null.0, dy.0, dx.0, l2],
            );
        }
        let name = POOL_GATHER.dtype_then("avg_pool_backward", dtype, &format!("_avg{isfx}"))?;
        let null = DevPtr::NULL;
        return dev.launch_elems(
            stream,
            POOL_GATHER.src,
            &name,
            total,
            &mut kargs![null.0, dy.0, dx.0, l, c, cl],
        );
    };
    let op = "max_pool_backward";
    let outputs = g.n * g.c * g.out_vol();
    let arg = Scratch::new(dev, outputs * arg_size, stream)?;
    match fast.filter(|_| arg_size == 1) {
        Some((variant, l2, threads)) => {
            let name = POOL2_ARG.dtype_then(op, dtype, &variant)?;
            dev.launch_elems(
                stream,
                POOL2_ARG.src,
                &name,
                threads,
                &mut kargs![x.0, arg.ptr.0, l2],
            )?;
            let name = POOL2_BWD.dtype_then(op, dtype, &variant)?;
            dev.launch_elems(
                stream,
                POOL2_BWD.src,
                &name,
                total,
                &mut kargs![arg.ptr.0, dy.0, dx.0, l2],
            )
        }
        None => {
            let name = POOL_ARG.dtype_then(op, dtype, &format!("{arg_sfx}{isfx}"))?;
            dev.launch_elems(
                stream,
                POOL_ARG.src,
                &name,
                outputs,
                &mut kargs![x.0, arg.ptr.0, l, c, cl],
            )?;
            let name = POOL_GATHER.dtype_then(op, dtype, &format!("_max{arg_sfx}{isfx}"))?;
            dev.launch_elems(
                stream,
                POOL_GATHER.src,
                &name,
                total,
                &mut kargs![arg.ptr.0, dy.0, dx.0, l, c, cl],
            )
        }
    }
}

/// Max pooling backward that recomputes the arg-max of every window covering an input
/// element (kernels/pool.hip `rb_pool_bwd_*`, `rb_pool_nhwc_bwd_*`): for windows too large
/// for [`arg_type`].
#[allow(clippy::too_many_arguments)]
fn pool_backward_recompute(
    dev: &GpuDevice,
    stream: RawStream,
    g: &PoolGeom,
    dtype: DType,
    x: DevPtr,
    dy: DevPtr,
    dx: DevPtr,
    channels_last: bool,
) -> Result<()> {
    if channels_last {
        return pool_channels_last(dev, stream, g, dtype, x, Some(dy), dx);
    }
    let total = g.n * g.c * g.in_vol();
    let name = POOL_BWD.dtype_then(g.kind.name(), dtype, index_suffix(g))?;
    let l = rb_pool(g);
    dev.launch_elems(
        stream,
        POOL_BWD.src,
        &name,
        total,
        &mut kargs![x.0, dy.0, dx.0, l],
    )
}

/// Channels-last pooling (kernels/pool.hip `rb_pool_nhwc_*`): forward, or backward when
/// `dy` is given. Four channels per thread when they divide C.
#[allow(clippy::too_many_arguments)]
fn pool_channels_last(
    dev: &GpuDevice,
    stream: RawStream,
    g: &PoolGeom,
    dtype: DType,
    x: DevPtr,
    dy: Option<DevPtr>,
    dst: DevPtr,
) -> Result<()> {
    let v = if g.c.is_multiple_of(4) { 4 } else { 1 };
    let positions = g.n
        * if dy.is_some() {
            g.in_vol()
        } else {
            g.out_vol()
        };
    let threads = positions * (g.c / v);
    let mut l = rb_pool(g);
    l.nc = g.n as i64;
    let c = g.c as i64;
    let variant = format!("_v{v}{}", index_suffix(g));
    match dy {
        None => {
            let name = POOL_NHWC_FWD.dtype_then(g.kind.name(), dtype, &variant)?;
            dev.launch_elems(
                stream,
                POOL_NHWC_FWD.src,
                &name,
                threads,
                &mut kargs![x.0, dst.0, l, c],
            )
        }
        Some(dy) => {
            let name = POOL_NHWC_BWD.dtype_then(g.kind.name(), dtype, &variant)?;
            dev.launch_elems(
                stream,
                POOL_NHWC_BWD.src,
                &name,
                threads,
                &mut kargs![x.0, dy.0, dst.0, l, c],
            )
        }
    }
}

fn max_pool_with_indices(
    dev: &GpuDevice,
    stream: RawStream,
    g: &PoolGeom,
    dtype: DType,
    x: DevPtr,
    y: DevPtr,
    idx: DevPtr,
) -> Result<()> {
    let total = g.n * g.c * g.out_vol();
    let name = POOL_FWD_IDX.dtype_then("max_pool_with_indices", dtype, index_suffix(g))?;
    let l = rb_pool(g);
    dev.launch_elems(
        stream,
        POOL_FWD_IDX.src,
        &name,
        total,
        &mut kargs![x.0, y.0, idx.0, l],
    )
}

/// Channels-last max pooling with indices (kernels/pool.hip `rb_pool_nhwc_fwd_idx_*`): one
/// thread per output element, consecutive threads consecutive channels.
fn max_pool_with_indices_channels_last(
    dev: &GpuDevice,
    stream: RawStream,
    g: &PoolGeom,
    dtype: DType,
    x: DevPtr,
    y: DevPtr,
    idx: DevPtr,
) -> Result<()> {
    let total = g.n * g.c * g.out_vol();
    let name = POOL_NHWC_FWD_IDX.dtype_then("max_pool_with_indices", dtype, index_suffix(g))?;
    let mut l = rb_pool(g);
    l.nc = g.n as i64;
    let c = g.c as i64;
    dev.launch_elems(
        stream,
        POOL_NHWC_FWD_IDX.src,
        &name,
        total,
        &mut kargs![x.0, y.0, idx.0, l, c],
    )
}

/// The scatter through the indices, channels first (`c` None: `planes` planes) or channels
/// last (`c` Some: `planes` samples of `c` interleaved channels): f32 atomics (into dx, or
/// f32 scratch cast to f16/bf16 afterwards); f64 `rb_pool_bwd_idx_f64`, one thread per
/// fiber (a plane, or a sample's channel) adding its outputs in order, no atomics.
#[allow(clippy::too_many_arguments)]
fn max_pool_backward_indices(
    dev: &GpuDevice,
    stream: RawStream,
    dtype: DType,
    dy: DevPtr,
    idx: DevPtr,
    planes: usize,
    out_vol: usize,
    in_vol: usize,
    dx: DevPtr,
    c: Option<usize>,
) -> Result<()> {
    let op = "max_pool_backward_indices";
    let f64 = dtype == DType::F64;
    let sfx = if f64 { "" } else { float_suffix(op, dtype)? };
    let n_in = planes * in_vol * c.unwrap_or(1);
    if n_in == 0 {
        return Ok(());
    }
    let scratch = if dtype == DType::F32 || f64 {
        None
    } else {
        Some(Scratch::new(dev, n_in * 4, stream)?)
    };
    let acc = scratch.as_ref().map_or(dx, |s| s.ptr);
    dev.memset(acc, 0, n_in * if f64 { 8 } else { 4 }, stream)?;
    let n_out = planes * out_vol * c.unwrap_or(1);
    if n_out > 0 {
        let bad = Scratch::new(dev, 8, stream)?;
        dev.memset(bad.ptr, 0xff, 8, stream)?;
        let (total, ov, iv) = (n_out as u64, out_vol as i64, in_vol as i64);
        match c {
            _ if f64 => {
                let fibers = planes * c.unwrap_or(1);
                let (f, c) = (fibers as u64, c.unwrap_or(1) as i64);
                dev.launch_elems(
                    stream,
                    POOL_BWD_IDX_F64.src,
                    POOL_BWD_IDX_F64.lone(),
                    fibers,
                    &mut kargs![dy.0, idx.0, f, ov, iv, c, acc.0, bad.ptr.0],
                )?
            }
            None => dev.launch_elems(
                stream,
                POOL_BWD_IDX.src,
                &POOL_BWD_IDX.suffixed(sfx),
                n_out,
                &mut kargs![dy.0, idx.0, total, ov, iv, acc.0, bad.ptr.0],
            )?,
            Some(c) => {
                let c = c as i64;
                dev.launch_elems(
                    stream,
                    POOL_NHWC_BWD_IDX.src,
                    &POOL_NHWC_BWD_IDX.suffixed(sfx),
                    n_out,
                    &mut kargs![dy.0, idx.0, total, ov, iv, c, acc.0, bad.ptr.0],
                )?
            }
        }
        super::data::check_bad(dev, op, stream, bad.ptr, DType::I64, idx, in_vol)?;
    }
    if scratch.is_some() {
        dev.cast(stream, DType::F32, acc, dtype, dx, n_in)?;
    }
    Ok(())
}

/// `RbAdaptive` of kernels/pool.hip.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbAdaptive {
    blocks: i64,
    cb: i64,
    inp: [i64; 3],
    out: [i64; 3],
}

/// Adaptive pooling (kernels/pool.hip `rb_adaptive_fwd_*`, `rb_adaptive_bwd_*`): forward
/// one thread per output element, backward (`dy` given) one thread per input element
/// gathering from the windows that cover it. Max pooling's backward reads the indices back
/// for a bad one (the first output whose index is outside its window).
#[allow(clippy::too_many_arguments)]
fn adaptive_pool(
    dev: &GpuDevice,
    stream: RawStream,
    g: &AdaptiveGeom,
    max: bool,
    dtype: DType,
    src: DevPtr,
    idx: DevPtr,
    dst: DevPtr,
    backward: bool,
) -> Result<()> {
    let (blocks, cb) = g.blocks();
    let (iv, ov) = (g.in_vol(), g.out_vol());
    let total = blocks * cb * if backward { iv } else { ov };
    if total == 0 {
        return Ok(());
    }
    // int indices when every element index (with room for a grid stride) and every
    // o * in / i * out product fits.
    let prods = (0..3).all(|d| (g.in_sp[d] + 1).saturating_mul(g.out_sp[d] + 1) < (1 << 30));
    let i32 = prods && (blocks * cb).saturating_mul(iv.max(ov)) < (1 << 30);
    let variant = format!(
        "{}{}",
        if max { "_max" } else { "_avg" },
        if i32 { "_i32" } else { "" }
    );
    let c = |a: [usize; 3]| a.map(|v| v as i64);
    let l = RbAdaptive {
        blocks: blocks as i64,
        cb: cb as i64,
        inp: c(g.in_sp),
        out: c(g.out_sp),
    };
    if !backward {
        let name = ADAPTIVE_FWD.dtype_then("adaptive_pool", dtype, &variant)?;
        return dev.launch_elems(
            stream,
            ADAPTIVE_FWD.src,
            &name,
            total,
            &mut kargs![src.0, dst.0, idx.0, l],
        );
    }
    let op = "adaptive_pool_backward";
    let name = ADAPTIVE_BWD.dtype_then(op, dtype, &variant)?;
    if !max {
        let null = DevPtr::NULL;
        return dev.launch_elems(
            stream,
            ADAPTIVE_BWD.src,
            &name,
            total,
            &mut kargs![src.0, idx.0, dst.0, l, null.0],
        );
    }
    let bad = Scratch::new(dev, 8, stream)?;
    dev.memset(bad.ptr, 0xff, 8, stream)?;
    dev.launch_elems(
        stream,
        ADAPTIVE_BWD.src,
        &name,
        total,
        &mut kargs![src.0, idx.0, dst.0, l, bad.ptr.0],
    )?;
    let Some(word) = dev.read_status(stream, bad.ptr)? else {
        return Ok(()); // capturing a device graph
    };
    let pos = word as u64;
    if pos == u64::MAX {
        return Ok(());
    }
    let mut v = [0u8; 8];
    dev.copy_d2h(idx.offset(pos as usize * 8), &mut v, stream)?;
    Err(adaptive_index_error(g, pos as usize, i64::from_le_bytes(v)))
}

impl PoolOps for GpuDevice {
    fn pool_forward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        pool_forward(self, stream, g, dtype, x, y)
    }

    fn pool_backward(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        pool_backward(self, stream, g, dtype, x, dy, dx, false)
    }

    fn has_channels_last_pool(&self) -> bool {
        true
    }

    fn pool_forward_channels_last(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        pool_channels_last(self, stream, g, dtype, x, None, y)
    }

    fn pool_backward_channels_last(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        pool_backward(self, stream, g, dtype, x, dy, dx, true)
    }

    fn max_pool_with_indices(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        max_pool_with_indices(self, stream, g, dtype, x, y, idx)
    }

    fn max_pool_backward_indices(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        planes: usize,
        out_vol: usize,
        in_vol: usize,
        dx: DevPtr,
    ) -> Result<()> {
        max_pool_backward_indices(
            self, stream, dtype, dy, idx, planes, out_vol, in_vol, dx, None,
        )
    }

    fn max_pool_with_indices_channels_last(
        &self,
        stream: RawStream,
        g: &PoolGeom,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        max_pool_with_indices_channels_last(self, stream, g, dtype, x, y, idx)
    }

    fn max_pool_backward_indices_channels_last(
        &self,
        stream: RawStream,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        n: usize,
        c: usize,
        out_vol: usize,
        in_vol: usize,
        dx: DevPtr,
    ) -> Result<()> {
        max_pool_backward_indices(
            self,
            stream,
            dtype,
            dy,
            idx,
            n,
            out_vol,
            in_vol,
            dx,
            Some(c),
        )
    }

    fn adaptive_pool_forward(
        &self,
        stream: RawStream,
        g: &AdaptiveGeom,
        max: bool,
        dtype: DType,
        x: DevPtr,
        y: DevPtr,
        idx: DevPtr,
    ) -> Result<()> {
        adaptive_pool(self, stream, g, max, dtype, x, idx, y, false)
    }

    fn adaptive_pool_backward(
        &self,
        stream: RawStream,
        g: &AdaptiveGeom,
        max: bool,
        dtype: DType,
        dy: DevPtr,
        idx: DevPtr,
        dx: DevPtr,
    ) -> Result<()> {
        adaptive_pool(self, stream, g, max, dtype, dy, idx, dx, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pool_struct_matches_the_kernel() {
        // 23 * 8 + 2 * 4 bytes, no padding: the kernel reads it by value.
        assert_eq!(std::mem::size_of::<RbPool>(), 192);
        assert_eq!(std::mem::size_of::<RbPool2>(), 48);
        assert_eq!(std::mem::size_of::<RbAdaptive>(), 64);
    }
}
