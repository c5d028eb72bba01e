//! Convolution on GPUs, vendor-neutral: convolutions through the vendor's DNN library
//! ([`vendor::Dnn`]: MIOpen on AMD, cuDNN on NVIDIA), the convolution epilogues (bias +
//! activation, bias gradient) and padding copies through kernels/pool.hip. f64 (which no DNN
//! library has) runs kernels/pool.hip's direct double convolutions (`rb_conv_*_f64`).
//!
//! Per device: one DNN handle, created on first use, and the algorithm chosen by the
//! library's search (MIOpen Find / cuDNN Find) per problem — the seed of the tuning cache.
//! Workspaces come from the device's caching allocator, stream-ordered. f32 convolutions are
//! exact (cuDNN: FMA math only, no TF32; an exhaustive f32 forward search also times the
//! backend API's engines, on an exactness probe that refuses TF32 ones, and fuses a bias
//! (+ relu) into cuDNN's graph: [`ConvEpilogue`]; its [`second_opinion`] times the unfused
//! way too, and a 1×1 convolution as a batched cuBLASLt product); f16/bf16 compute in f32.
//! A residual add (the executor's conv+add(+relu)) runs in the epilogue kernel after the
//! convolution ([`conv_forward_residual`]).

use super::kernels::{
    self, BIAS_ACT, BIAS_GRAD, CONV_BIAS_GRAD_F64, CONV_BWD_DATA_F64, CONV_BWD_WEIGHT_F64,
    CONV_FWD_F64, PAD_COPY,
};
use super::vendor::{
    ConvAlgo, ConvBufs, ConvDir, ConvEpilogue, ConvProblem, Dnn, LtBatch, LtEpilogue, LtMatmul,
};
use super::{GpuDevice, Scratch, jit, timing};
use crate::base::dtype::DType;
use crate::device::tuning;
use crate::device::{ConvOps, DevPtr, Device, DeviceKind, ElementwiseOps, RawStream, Transpose};
use crate::ops::conv::{Activation, ConvGeom};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, LazyLock};

/// Pointers to kernel arguments, in order (each a place that lives until the launch).
macro_rules! args {
    ($($a:expr),* $(,)?) => {
        [$( &$a as *const _ as *mut c_void ),*]
    };
}

/// A device's DNN state: its handle, and the stream searches run on (made at the first).
pub(super) struct DnnState {
    pub(super) handle: u64,
    search_stream: Option<RawStream>,
}

type States = Mutex<HashMap<(DeviceKind, usize), Arc<Mutex<DnnState>>>>;
static STATES: LazyLock<States> = LazyLock::new(Default::default);

/// The device's DNN state (its library handle), made at first use; shared by convolution
/// and the library's fused attention (a handle's calls are serialized by its lock).
pub(super) fn dnn_state(dev: &GpuDevice, dnn: &dyn Dnn) -> Result<Arc<Mutex<DnnState>>> {
    let mut map = STATES.lock();
    let key = (dev.kind(), dev.ordinal());
    if let Some(s) = map.get(&key) {
        return Ok(s.clone());
    }
    dev.bind()?;
    let s = Arc::new(Mutex::new(DnnState {
        handle: dnn.handle_create()?,
        search_stream: None,
    }));
    map.insert(key, s.clone());
    Ok(s)
}

/// How many convolution algorithms the process holds (the tuning cache's size).
pub fn tuned_problems() -> usize {
    crate::device::tuning::stats().entries as usize
}

fn suffix(op: &str, dtype: DType) -> Result<&'static str> {
    kernels::float_suffix(op, dtype)
}

fn i32_of(op: &str, v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| {
        Error::invalid(format!(
            "{op}: size {v} exceeds the DNN library's 32-bit interface"
        ))
    })
}

/// The library's view of `g`: 4-D tensors for 1-D and 2-D problems (1-D as height 1), 5-D
/// for 3-D ones.
pub fn problem(op: &str, g: &ConvGeom, dtype: DType, dir: ConvDir) -> Result<ConvProblem> {
    let dims = if g.ndim == 3 { 5 } else { 4 };
    let first = if dims == 5 { 0 } else { 1 };
    let t = |a: usize, b: usize, sp: [usize; 3]| -> Result<[i32; 5]> {
        let mut v = [0i32; 5];
        v[0] = i32_of(op, a)?;
        v[1] = i32_of(op, b)?;
        for (j, d) in (first..3).enumerate() {
            v[2 + j] = i32_of(op, sp[d])?;
        }
        Ok(v)
    };
    let a3 = |a: [usize; 3]| -> Result<[i32; 3]> {
        Ok([i32_of(op, a[0])?, i32_of(op, a[1])?, i32_of(op, a[2])?])
    };
    Ok(ConvProblem {
        dir,
        dtype,
        dims,
        x: t(g.n, g.c_in, g.in_sp)?,
        w: t(g.c_out, g.c_in / g.groups, g.k_sp)?,
        y: t(g.n, g.c_out, g.out_sp)?,
        pad: a3(g.pad)?,
        stride: a3(g.stride)?,
        dil: a3(g.dil)?,
        groups: i32_of(op, g.groups)?,
        channels_last: g.channels_last,
        epi: ConvEpilogue::None,
    })
}

/// The exactness probe's x value: `1 + 2^-12`, which TF32 (10 mantissa bits) rounds to 1.
const PROBE_X: f64 = 1.0 + 1.0 / 4096.0;

/// Element 0 of an exact f32 forward result of `p` on the probe (x [`PROBE_X`], w 1, bias
/// 0): `PROBE_X` times the taps of output position 0 that fall inside the input (`C / groups`
/// times, per spatial dimension, the kernel offsets `k` with `0 <= k * dil - pad < in`).
/// None when that position sees only padding (nothing to tell TF32 by).
fn probe_expect(p: &ConvProblem) -> Option<f32> {
    let sp = p.spatial();
    let off = 3 - sp;
    let mut taps = p.w[1] as i64;
    for d in 0..sp {
        let (inp, k) = (p.x[2 + d] as i64, p.w[2 + d] as i64);
        let (pad, dil) = (p.pad[off + d] as i64, p.dil[off + d] as i64);
        taps *= (0..k)
            .filter(|&j| (0..inp).contains(&(j * dil - pad)))
            .count() as i64;
    }
    (taps > 0).then_some((taps as f64 * PROBE_X) as f32)
}

/// The tuning cache's key of `p` on `dev` with `dnn`: architecture, library and version,
/// layout, math mode and the problem.
/// Made once per (device, problem): the key's parts cost a few microseconds to format, more
/// than a small half-precision convolution's host budget.
fn tuning_key(dev: &GpuDevice, dnn: &dyn Dnn, p: &ConvProblem) -> Result<Arc<str>> {
    type Keys = Mutex<HashMap<(DeviceKind, usize, ConvProblem), Arc<str>>>;
    static KEYS: LazyLock<Keys> = LazyLock::new(Default::default);
    let id = (dev.kind(), dev.ordinal(), *p);
    if let Some(k) = KEYS.lock().get(&id) {
        return Ok(k.clone());
    }
    let k: Arc<str> = make_tuning_key(dev, dnn, p)?.into();
    KEYS.lock().insert(id, k.clone());
    Ok(k)
}

fn make_tuning_key(dev: &GpuDevice, dnn: &dyn Dnn, p: &ConvProblem) -> Result<String> {
    let arch = dev.vendor().device_arch(dev.ordinal())?;
    let lib = dnn.describe();
    let lib = lib.split(" (").next().unwrap_or(&lib).to_string();
    // f32 convolutions are exact (no TF32); f16/bf16 use the tensor cores with f32 math.
    let math = if p.dtype == DType::F32 {
        "exact"
    } else {
        "f32-accumulate"
    };
    let layout = if p.channels_last { "nhwc" } else { "nchw" };
    // Problems whose exhaustive search has a second opinion (the unfused way, BLASLt
    // products): a key of their own, so that entries from before it are searched again.
    let second = p.dtype == DType::F32
        && p.dir == ConvDir::Forward
        && (p.epi != ConvEpilogue::None
            || gemm_of(p, DevPtr::NULL, DevPtr::NULL, DevPtr::NULL, 0).is_some());
    let second = if second { "|2nd-opinion" } else { "" };
    Ok(format!("conv|{arch}|{lib}{second}|{layout}|{math}|{p:?}"))
}

/// Searches the algorithm for `p` on the device's search stream, on buffers of its own (so
/// that the caller's stream, data and a device-graph capture in progress are untouched).
/// MIOpen always runs its (mandatory) Find, exhaustive only when asked; cuDNN times every
/// algorithm (Find) when exhaustive, else asks its heuristics.
fn search(
    dev: &GpuDevice,
    dnn: &dyn Dnn,
    st: &mut DnnState,
    p: &ConvProblem,
    exhaustive: bool,
) -> Result<ConvAlgo> {
    let s = match st.search_stream {
        Some(s) => s,
        None => {
            let s = dev.vendor().stream_create()?;
            st.search_stream = Some(s);
            s
        }
    };
    let elems = |d: &[i32; 5]| -> usize { d[..p.dims].iter().map(|&v| v as usize).product() };
    let (x, w, y) = (elems(&p.x), elems(&p.w), elems(&p.y));
    let (a, b, c) = match p.dir {
        ConvDir::Forward => (x, w, y),
        ConvDir::BackwardData => (y, w, x),
        ConvDir::BackwardWeight => (x, y, w),
    };
    let es = p.dtype.size();
    let need = dnn.find_workspace(st.handle, p, exhaustive)?;
    let (ba, bb, bc) = (
        Scratch::new(dev, a * es, s)?,
        Scratch::new(dev, b * es, s)?,
        Scratch::new(dev, c * es, s)?,
    );
    let channels = p.y[1] as usize;
    let bd = if p.epi == ConvEpilogue::None {
        None
    } else {
        Some(Scratch::new(dev, channels * es, s)?)
    };
    let ws = Scratch::unless_empty(dev, need, s)?;
    let bufs = ConvBufs {
        a: ba.ptr,
        b: bb.ptr,
        c: bc.ptr,
        bias: bd.as_ref().map_or(DevPtr::NULL, |t| t.ptr),
    };
    // An exhaustive f32 forward search runs on the exactness probe, so that no engine that
    // rounds its inputs to TF32 is taken (cuDNN's numerical notes do not tell: engines noted
    // "tensor core" compute exact f32 for f32 data).
    let probe = if exhaustive && p.dtype == DType::F32 && p.dir == ConvDir::Forward {
        probe_expect(p)
    } else {
        None
    };
    if probe.is_some() {
        dev.fill(s, DType::F32, ba.ptr, a, PROBE_X)?;
        dev.fill(s, DType::F32, bb.ptr, b, 1.0)?;
        if let Some(t) = &bd {
            dev.memset(t.ptr, 0, channels * es, s)?;
        }
    }
    let a = dnn.find(st.handle, s, p, bufs, ws.ptr, need, exhaustive, probe)?;
    drop(ws);
    if probe.is_some() {
        second_opinion(dev, dnn, st.handle, s, p, bufs, a, probe)
    } else {
        Ok(a)
    }
}

/// `RbPad` of kernels/pool.hip.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbPad {
    nc: i64,
    src: [i64; 3],
    dst: [i64; 3],
}

/// Copies `[nc, src_sp]` into `[nc, dst_sp]`: zero padding or cropping at the end of each
/// spatial dimension.
#[allow(clippy::too_many_arguments)]
fn pad_copy(
    dev: &GpuDevice,
    stream: RawStream,
    dtype: DType,
    src: DevPtr,
    dst: DevPtr,
    nc: usize,
    src_sp: [usize; 3],
    dst_sp: [usize; 3],
) -> Result<()> {
    if !PAD_COPY.sizes().contains(&dtype.size()) {
        return Err(Error::dtype(format!(
            "convolution: dtype {dtype} is not supported"
        )));
    }
    let name = PAD_COPY.size(dtype.size());
    let c = |a: [usize; 3]| a.map(|v| v as i64);
    let l = RbPad {
        nc: nc as i64,
        src: c(src_sp),
        dst: c(dst_sp),
    };
    let total = nc * dst_sp.iter().product::<usize>();
    dev.launch_elems(
        stream,
        PAD_COPY.src,
        &name,
        total,
        &mut args![src.0, dst.0, l],
    )
}

/// The forward output extents of `g`'s input (PyTorch's and the libraries' formula). A
/// geometry from a transposed convolution with output_padding >= stride (allowed when the
/// dilation is larger) has `out_sp` smaller than this; the libraries reject such a problem.
fn full_out(g: &ConvGeom) -> [usize; 3] {
    let mut o = g.out_sp;
    for (d, v) in o.iter_mut().enumerate() {
        let eff = g.dil[d] * (g.k_sp[d] - 1) + 1;
        let padded = g.in_sp[d] + 2 * g.pad[d];
        if padded >= eff {
            *v = (padded - eff) / g.stride[d] + 1;
        }
    }
    o
}

/// Runs one convolution through the DNN library. Where `out_sp` is smaller than the forward
/// formula gives (see [`full_out`]), the output-side tensor is widened: zero-padded for the
/// backward passes (the extra windows contribute nothing), computed wide and cropped for the
/// forward pass.
#[allow(clippy::too_many_arguments)]
fn run_conv(
    dev: &GpuDevice,
    op: &str,
    stream: RawStream,
    g: &ConvGeom,
    dtype: DType,
    dir: ConvDir,
    bufs: ConvBufs,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    let full = full_out(g);
    if full == g.out_sp {
        return run_conv_exact(
            dev,
            op,
            stream,
            g,
            dtype,
            dir,
            ConvEpilogue::None,
            bufs,
            ws,
            ws_bytes,
        );
    }
    if g.channels_last {
        // The widening copies below are channels-first; the runtime sends channels-last
        // convolutions only with the forward formula's extents.
        return Err(Error::unsupported(format!(
            "{op}: a channels-last convolution whose output extents {:?} are not the forward formula's {full:?}",
            g.out_sp
        )));
    }
    let wide = ConvGeom { out_sp: full, ..*g };
    let nc = g.n * g.c_out;
    let tmp = Scratch::unless_empty(dev, nc * wide.out_vol() * dtype.size(), stream)?;
    match dir {
        ConvDir::Forward => {
            run_conv_exact(
                dev,
                op,
                stream,
                &wide,
                dtype,
                dir,
                ConvEpilogue::None,
                ConvBufs { c: tmp.ptr, ..bufs },
                ws,
                ws_bytes,
            )?;
            pad_copy(dev, stream, dtype, tmp.ptr, bufs.c, nc, full, g.out_sp)
        }
        ConvDir::BackwardData => {
            pad_copy(dev, stream, dtype, bufs.a, tmp.ptr, nc, g.out_sp, full)?;
            run_conv_exact(
                dev,
                op,
                stream,
                &wide,
                dtype,
                dir,
                ConvEpilogue::None,
                ConvBufs { a: tmp.ptr, ..bufs },
                ws,
                ws_bytes,
            )
        }
        ConvDir::BackwardWeight => {
            pad_copy(dev, stream, dtype, bufs.b, tmp.ptr, nc, g.out_sp, full)?;
            run_conv_exact(
                dev,
                op,
                stream,
                &wide,
                dtype,
                dir,
                ConvEpilogue::None,
                ConvBufs { b: tmp.ptr, ..bufs },
                ws,
                ws_bytes,
            )
        }
    }
}

/// A tuning-cache entry's `algo` that records "no fused engine for this epilogue problem, or
/// none faster than the unfused way" (so that the next call goes the unfused way without
/// searching again).
const NO_FUSED_ENGINE: i32 = i32::MIN;

/// A tuning-cache entry's `algo` for a 1×1 convolution run as a strided batch of BLASLt
/// products ([`gemm_of`]); its `math` is the rank of the library's algorithm.
const GEMM_ALGO: i32 = i32::MIN + 1;
/// How many of the BLASLt heuristic's algorithms an exhaustive search times.
const GEMM_RANKS: usize = 16;
/// Runs per timing of a candidate in [`search`] (after one untimed run).
const TIMED_RUNS: usize = 5;

/// The products that compute `p` when it is an f32 forward 1×1 convolution (stride 1, no
/// padding, one group, channels first): per image `y[n] (c_out × sp) = w (c_out × c_in) ·
/// x[n] (c_in × sp)` row-major, i.e. `y[n]ᵀ = x[n]ᵀ · wᵀ` column-major (A the image, B the
/// weight, B's batch stride 0); exact f32 math. With the BLASLt algorithm of rank `algo`.
/// None for any other problem.
fn gemm_of(p: &ConvProblem, x: DevPtr, w: DevPtr, y: DevPtr, algo: usize) -> Option<LtMatmul> {
    let sp = p.spatial();
    let off = 3 - sp;
    let one_by_one = (0..sp).all(|d| {
        p.w[2 + d] == 1 && p.stride[off + d] == 1 && p.pad[off + d] == 0 && p.x[2 + d] == p.y[2 + d]
    });
    if !(p.dtype == DType::F32 && p.dir == ConvDir::Forward && p.plain_2d() && one_by_one) {
        return None;
    }
    let (n, ci, co) = (p.x[0] as usize, p.x[1] as usize, p.y[1] as usize);
    let hw: usize = (0..sp).map(|d| p.y[2 + d] as usize).product();
    (n > 0 && ci > 0 && co > 0 && hw > 0).then_some(LtMatmul {
        dtype: DType::F32,
        trans_a: Transpose::No,
        trans_b: Transpose::No,
        m: hw,
        n: co,
        k: ci,
        a: x,
        lda: hw,
        b: w,
        ldb: ci,
        c: y,
        ldc: hw,
        bias: None,
        epilogue: LtEpilogue::None,
        tf32: false,
        batch: LtBatch {
            count: n,
            stride_a: ci * hw,
            stride_b: 0,
            stride_c: co * hw,
        },
        algo,
    })
}

/// [`gemm_of`]'s products `lp`, then `p`'s epilogue ([`problem_epilogue`]). `ws`: at least
/// what `lt_prepare` asked for `lp`.
fn run_gemm(
    dev: &GpuDevice,
    s: RawStream,
    lp: &LtMatmul,
    p: &ConvProblem,
    bias: DevPtr,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    dev.vendor().lt_matmul(dev.ordinal(), s, lp, ws, ws_bytes)?;
    problem_epilogue(dev, s, p, lp.c, bias)
}

/// `p`'s epilogue (a bias, + relu; nothing for [`ConvEpilogue::None`]) on its f32 output `y`
/// (channels first: what [`ConvProblem::plain_2d`] problems are), in [`bias_act`].
fn problem_epilogue(
    dev: &GpuDevice,
    s: RawStream,
    p: &ConvProblem,
    y: DevPtr,
    bias: DevPtr,
) -> Result<()> {
    let act = match p.epi {
        ConvEpilogue::None => return Ok(()),
        ConvEpilogue::Bias => Activation::None,
        ConvEpilogue::BiasRelu => Activation::Relu,
    };
    let (n, co) = (p.y[0] as usize, p.y[1] as usize);
    let sp: usize = (0..p.spatial()).map(|d| p.y[2 + d] as usize).product();
    bias_act(dev, s, DType::F32, y, Some(bias), None, act, n, co, sp)
}

/// Microseconds per run of `f` on `s` (after one untimed run), by the stream's events.
fn time_us(dev: &GpuDevice, s: RawStream, mut f: impl FnMut() -> Result<()>) -> Result<f32> {
    f()?;
    let v = dev.vendor();
    let (e0, e1) = (v.event_create(true)?, v.event_create(true)?);
    let r = (|| {
        v.event_record(e0, s)?;
        for _ in 0..TIMED_RUNS {
            f()?;
        }
        v.event_record(e1, s)?;
        v.event_synchronize(e1)?;
        v.event_elapsed_ms(e0, e1)
    })();
    let _ = v.event_destroy(e0);
    let _ = v.event_destroy(e1);
    Ok(r? * 1000.0 / TIMED_RUNS as f32)
}

/// The exhaustive f32 forward search's second opinion on the DNN library's choice `a` for
/// `p`, every candidate timed on the search's buffers:
/// - a fused epilogue problem also runs the unfused way: the library's choice for the
///   convolution alone (its own exhaustive `find`) and then the epilogue kernel. Where that is
///   faster (a fused engine can be slower than the plain convolution and a pass over its
///   output), `a` gives way to [`NO_FUSED_ENGINE`]: the caller then runs the unfused way,
///   whose plain problem has a search of its own.
/// - a 1×1 problem ([`gemm_of`]) also runs as BLASLt products with each of the heuristic's
///   first [`GEMM_RANKS`] algorithms (and the epilogue kernel where the problem has one).
///
/// The fastest is returned.
#[allow(clippy::too_many_arguments)]
fn second_opinion(
    dev: &GpuDevice,
    dnn: &dyn Dnn,
    h: u64,
    s: RawStream,
    p: &ConvProblem,
    bufs: ConvBufs,
    a: ConvAlgo,
    probe: Option<f32>,
) -> Result<ConvAlgo> {
    // Products: a 1×1 problem and a BLASLt that runs its batch (hipBLASLt's is not wired).
    let products = gemm_of(p, bufs.a, bufs.b, bufs.c, 0)
        .is_some_and(|lp| dev.vendor().lt_prepare(dev.ordinal(), &lp).is_ok());
    let fused = p.epi != ConvEpilogue::None;
    if !products && !fused {
        return Ok(a);
    }
    let dws = Scratch::unless_empty(dev, a.workspace, s)?;
    let t_dnn = time_us(dev, s, || dnn.run(h, s, p, &a, bufs, dws.ptr, a.workspace))?;
    drop(dws);
    let mut best = (t_dnn, a);
    let log = std::env::var_os("RB_DNN_LOG").is_some();
    if fused {
        let plain = ConvProblem {
            epi: ConvEpilogue::None,
            ..*p
        };
        let need = dnn.find_workspace(h, &plain, true)?;
        let fws = Scratch::unless_empty(dev, need, s)?;
        let a0 = dnn.find(h, s, &plain, bufs, fws.ptr, need, true, probe)?;
        drop(fws);
        let ws = Scratch::unless_empty(dev, a0.workspace, s)?;
        let t = time_us(dev, s, || {
            dnn.run(h, s, &plain, &a0, bufs, ws.ptr, a0.workspace)?;
            problem_epilogue(dev, s, p, bufs.c, bufs.bias)
        })?;
        if log {
            eprintln!(
                "rb dnn: {p:?}: fused algo {} {t_dnn:.1} us, unfused algo {} + epilogue {t:.1} us",
                a.algo, a0.algo
            );
        }
        if t < best.0 {
            let unfused = ConvAlgo {
                algo: NO_FUSED_ENGINE,
                math: 0,
                workspace: 0,
            };
            best = (t, unfused);
        }
    }
    if products {
        for rank in 0..GEMM_RANKS {
            let Some(lp) = gemm_of(p, bufs.a, bufs.b, bufs.c, rank) else {
                break;
            };
            // Fewer algorithms than ranks: the ones timed so far.
            let Ok(need) = dev.vendor().lt_prepare(dev.ordinal(), &lp) else {
                break;
            };
            let ws = Scratch::unless_empty(dev, need, s)?;
            let t = time_us(dev, s, || run_gemm(dev, s, &lp, p, bufs.bias, ws.ptr, need))?;
            if log {
                eprintln!("rb dnn: 1x1 {p:?}: batched product rank {rank} {t:.1} us");
            }
            if t < best.0 {
                let product = ConvAlgo {
                    algo: GEMM_ALGO,
                    math: rank as i32,
                    workspace: need,
                };
                best = (t, product);
            }
        }
    }
    if log {
        eprintln!(
            "rb dnn: {p:?}: DNN algo {} {t_dnn:.1} us; chosen algo {} {:.1} us",
            a.algo, best.1.algo, best.0
        );
    }
    Ok(best.1)
}

/// The workspace of a run that needs `need` bytes: the caller's (`ws`, `ws_bytes`) when it
/// is large enough, else one from the caching allocator (kept alive by the third part).
fn run_workspace(
    dev: &GpuDevice,
    stream: RawStream,
    need: usize,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<(DevPtr, usize, Option<Scratch<'_>>)> {
    if need == 0 || (ws_bytes >= need && !ws.is_null()) {
        return Ok((ws, ws_bytes, None));
    }
    let s = Scratch::unless_empty(dev, need, stream)?;
    Ok((s.ptr, need, Some(s)))
}

/// Runs one convolution through the DNN library, or a 1×1 one as BLASLt products where the
/// exhaustive search chose them ([`second_opinion`]): the algorithm is chosen once per
/// problem and cached. `ws`/`ws_bytes`: the caller's workspace, used when large enough; else
/// one comes from the caching allocator. `epi` (forward only): the epilogue fused in the
/// library's graph (or run after the products), `bufs.bias` its bias; Unsupported when no
/// exact engine takes it or the unfused way is faster (the caller then runs the epilogue
/// itself), remembered in the tuning cache.
#[allow(clippy::too_many_arguments)]
fn run_conv_exact(
    dev: &GpuDevice,
    op: &str,
    stream: RawStream,
    g: &ConvGeom,
    dtype: DType,
    dir: ConvDir,
    epi: ConvEpilogue,
    bufs: ConvBufs,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    suffix(op, dtype)?;
    let mut p = problem(op, g, dtype, dir)?;
    p.epi = epi;
    let fused = p.epi != ConvEpilogue::None;
    let dnn = dev.vendor().dnn()?;
    let st = dnn_state(dev, dnn)?;
    let mut st = st.lock();
    dev.bind()?;
    let h = st.handle;
    let key = tuning_key(dev, dnn, &p)?;
    let c = tuning::tuned(&key, |exhaustive| {
        let a = match search(dev, dnn, &mut st, &p, exhaustive) {
            Ok(a) => a,
            // Whatever kept the fused search from an engine, the unfused way remains.
            Err(e) if fused => {
                if std::env::var_os("RB_DNN_LOG").is_some() {
                    eprintln!("rb dnn: {op}: no fused {:?} for {p:?}: {e}", p.epi);
                }
                ConvAlgo {
                    algo: NO_FUSED_ENGINE,
                    math: 0,
                    workspace: 0,
                }
            }
            Err(e) => return Err(e.context(op)),
        };
        Ok(tuning::Choice {
            algo: a.algo,
            math: a.math,
            workspace: a.workspace,
            exhaustive,
        })
    })?;
    if c.algo == NO_FUSED_ENGINE {
        return Err(Error::unsupported(format!(
            "{op}: no exact fused engine for {:?}",
            p.epi
        )));
    }
    if c.algo == GEMM_ALGO {
        drop(st);
        let lp = gemm_of(&p, bufs.a, bufs.b, bufs.c, c.math.max(0) as usize)
            .ok_or_else(|| Error::internal(format!("{op}: a product chosen for {p:?}")))?;
        // The rank chosen (a cache written with another library may hold one it lacks: then
        // its first).
        let (lp, need) = match dev.vendor().lt_prepare(dev.ordinal(), &lp) {
            Ok(need) => (lp, need),
            Err(_) => {
                let first = LtMatmul { algo: 0, ..lp };
                let need = dev
                    .vendor()
                    .lt_prepare(dev.ordinal(), &first)
                    .map_err(|e| e.context(op))?;
                (first, need)
            }
        };
        let (rws, rbytes, _own) = run_workspace(dev, stream, need, ws, ws_bytes)?;
        let t = timing::Span::begin(dev, op, stream);
        run_gemm(dev, stream, &lp, &p, bufs.bias, rws, rbytes).map_err(|e| e.context(op))?;
        t.end(dev, stream);
        return Ok(());
    }
    let algo = ConvAlgo {
        algo: c.algo,
        math: c.math,
        workspace: c.workspace,
    };
    let (rws, rbytes, _own) = run_workspace(dev, stream, algo.workspace, ws, ws_bytes)?;
    let t = timing::Span::begin(dev, op, stream);
    dnn.run(h, stream, &p, &algo, bufs, rws, rbytes)
        .map_err(|e| e.context(op))?;
    t.end(dev, stream);
    Ok(())
}

/// `y = act((y + bias[c]) + residual)` over `[n, channels, sp]` (`residual` of `y`'s shape).
#[allow(clippy::too_many_arguments)]
fn bias_act(
    dev: &GpuDevice,
    stream: RawStream,
    dtype: DType,
    y: DevPtr,
    bias: Option<DevPtr>,
    residual: Option<DevPtr>,
    act: Activation,
    n: usize,
    channels: usize,
    sp: usize,
) -> Result<()> {
    if bias.is_none() && residual.is_none() && act == Activation::None {
        return Ok(());
    }
    let total = n * channels * sp;
    let name = BIAS_ACT.dtype("conv", dtype)?;
    let (b, r, c, s, t, a) = (
        bias.unwrap_or(DevPtr::NULL).0,
        residual.unwrap_or(DevPtr::NULL).0,
        channels as i64,
        sp as i64,
        total as u64,
        kernels::act_op(act).code,
    );
    // Four elements a thread (kernels/pool.hip's RB_BIAS_ACT_PER).
    dev.launch_elems(
        stream,
        BIAS_ACT.src,
        &name,
        total.div_ceil(4),
        &mut args![y.0, b, r, c, s, t, a],
    )
}

/// [`bias_act`] of a convolution's output `y` (channels first or last).
#[allow(clippy::too_many_arguments)]
fn conv_epilogue(
    dev: &GpuDevice,
    stream: RawStream,
    g: &ConvGeom,
    dtype: DType,
    y: DevPtr,
    bias: Option<DevPtr>,
    residual: Option<DevPtr>,
    act: Activation,
) -> Result<()> {
    let (n, sp) = if g.channels_last {
        // [n * sp, c]: the channel is the fastest index.
        (g.n * g.out_vol(), 1)
    } else {
        (g.n, g.out_vol())
    };
    bias_act(dev, stream, dtype, y, bias, residual, act, n, g.c_out, sp)
}

/// `db[c] = sum dy[n, c, sp]`.
fn bias_grad(
    dev: &GpuDevice,
    stream: RawStream,
    dtype: DType,
    dy: DevPtr,
    db: DevPtr,
    g: &ConvGeom,
) -> Result<()> {
    if g.c_out == 0 {
        return Ok(());
    }
    let name = BIAS_GRAD.dtype("conv_backward_weight", dtype)?;
    let f = dev.modules.builtin_function(dev, BIAS_GRAD.src, &name)?;
    let (b, c, s) = if g.channels_last {
        ((g.n * g.out_vol()) as i64, g.c_out as i64, 1)
    } else {
        (g.n as i64, g.c_out as i64, g.out_vol() as i64)
    };
    let grid = u32::try_from(g.c_out)
        .map_err(|_| Error::invalid(format!("conv_backward_weight: {} channels", g.c_out)))?;
    let mut a = args![dy.0, db.0, b, c, s];
    // SAFETY: the arguments match rb_bias_grad_* (kernels/pool.hip), 256 threads per block.
    unsafe {
        jit::launch(
            dev,
            f,
            &name,
            [grid, 1, 1],
            [256, 1, 1],
            0,
            stream,
            a.as_mut_ptr(),
            jit::Origin::Builtin,
        )
    }
}

/// `RbConv64` of kernels/pool.hip (the f64 convolutions' geometry).
#[repr(C)]
#[derive(Clone, Copy)]
struct RbConv64 {
    n: i64,
    c_in: i64,
    c_out: i64,
    groups: i64,
    inp: [i64; 3],
    k: [i64; 3],
    out: [i64; 3],
    s: [i64; 3],
    p: [i64; 3],
    d: [i64; 3],
}

fn rb_conv64(g: &ConvGeom) -> RbConv64 {
    let c = |a: [usize; 3]| a.map(|v| v as i64);
    RbConv64 {
        n: g.n as i64,
        c_in: g.c_in as i64,
        c_out: g.c_out as i64,
        groups: g.groups as i64,
        inp: c(g.in_sp),
        k: c(g.k_sp),
        out: c(g.out_sp),
        s: c(g.stride),
        p: c(g.pad),
        d: c(g.dil),
    }
}

/// The f64 kernels are channels-first: a channels-last geometry is UNSUPPORTED, which the
/// runtime answers by converting the layout around the channels-first call.
fn f64_first(op: &str, g: &ConvGeom) -> Result<()> {
    if g.channels_last {
        return Err(Error::unsupported(format!(
            "{op}: f64 convolutions on GPUs are channels-first"
        )));
    }
    Ok(())
}

/// f64 `y = act(conv(x, w) + bias)`: one thread per output element, in double.
#[allow(clippy::too_many_arguments)]
fn conv_forward_f64(
    dev: &GpuDevice,
    stream: RawStream,
    g: &ConvGeom,
    x: DevPtr,
    w: DevPtr,
    bias: Option<DevPtr>,
    act: Activation,
    y: DevPtr,
) -> Result<()> {
    f64_first("conv_forward", g)?;
    let ny = g.n * g.c_out * g.out_vol();
    let (l, b, a) = (
        rb_conv64(g),
        bias.unwrap_or(DevPtr::NULL).0,
        kernels::act_op(act).code,
    );
    dev.launch_elems(
        stream,
        CONV_FWD_F64.src,
        CONV_FWD_F64.lone(),
        ny,
        &mut args![x.0, w.0, b, y.0, l, a],
    )
}

/// f64 data gradient: one thread per input element gathering its outputs' gradients.
fn conv_backward_data_f64(
    dev: &GpuDevice,
    stream: RawStream,
    g: &ConvGeom,
    dy: DevPtr,
    w: DevPtr,
    dx: DevPtr,
) -> Result<()> {
    f64_first("conv_backward_data", g)?;
    let nx = g.n * g.c_in * g.in_vol();
    let l = rb_conv64(g);
    dev.launch_elems(
        stream,
        CONV_BWD_DATA_F64.src,
        CONV_BWD_DATA_F64.lone(),
        nx,
        &mut args![dy.0, w.0, dx.0, l],
    )
}

/// f64 weight gradient (one thread per weight element) and bias gradient (one per channel).
#[allow(clippy::too_many_arguments)]
fn conv_backward_weight_f64(
    dev: &GpuDevice,
    stream: RawStream,
    g: &ConvGeom,
    x: DevPtr,
    dy: DevPtr,
    dw: DevPtr,
    db: Option<DevPtr>,
) -> Result<()> {
    f64_first("conv_backward_weight", g)?;
    let nw = g.c_out * (g.c_in / g.groups) * g.k_vol();
    let l = rb_conv64(g);
    dev.launch_elems(
        stream,
        CONV_BWD_WEIGHT_F64.src,
        CONV_BWD_WEIGHT_F64.lone(),
        nw,
        &mut args![x.0, dy.0, dw.0, l],
    )?;
    if let Some(db) = db {
        let (b, c, s) = (g.n as i64, g.c_out as i64, g.out_vol() as i64);
        dev.launch_elems(
            stream,
            CONV_BIAS_GRAD_F64.src,
            CONV_BIAS_GRAD_F64.lone(),
            g.c_out,
            &mut args![dy.0, db.0, b, c, s],
        )?;
    }
    Ok(())
}

fn zero(dev: &GpuDevice, stream: RawStream, dtype: DType, p: DevPtr, elems: usize) -> Result<()> {
    dev.memset(p, 0, elems * dtype.size(), stream)
}

#[allow(clippy::too_many_arguments)]
pub fn conv_forward(
    dev: &GpuDevice,
    stream: RawStream,
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
    if dtype == DType::F64 {
        return conv_forward_f64(dev, stream, g, x, w, bias, act, y);
    }
    suffix("conv_forward", dtype)?;
    let ny = g.n * g.c_out * g.out_vol();
    if ny == 0 {
        return Ok(());
    }
    if let (Some(b), false) = (bias, dtype == DType::F32 || g.c_in == 0 || g.k_vol() == 0) {
        // f16/bf16 with a bias: the DNN libraries round their output to the dtype before the
        // bias could go in, so widen the inputs (exactly), convolve in f32 and round once,
        // bias and activation in.
        let (nx, nw) = (
            g.n * g.c_in * g.in_vol(),
            g.c_out * (g.c_in / g.groups) * g.k_vol(),
        );
        let f32_of = |p: DevPtr, n: usize| -> Result<Scratch<'_>> {
            let t = Scratch::new(dev, n * 4, stream)?;
            if n > 0 {
                dev.cast(stream, dtype, p, DType::F32, t.ptr, n)?;
            }
            Ok(t)
        };
        let (x32, w32, b32) = (f32_of(x, nx)?, f32_of(w, nw)?, f32_of(b, g.c_out)?);
        let y32 = Scratch::new(dev, ny * 4, stream)?;
        conv_forward(
            dev,
            stream,
            g,
            DType::F32,
            x32.ptr,
            w32.ptr,
            Some(b32.ptr),
            act,
            y32.ptr,
            ws,
            ws_bytes,
        )?;
        return dev.cast(stream, DType::F32, y32.ptr, dtype, y, ny);
    }
    // f32 with a bias (+ relu), in an exhaustive search: the bias and relu fused into the
    // DNN library's graph where one of its engines computes that exactly
    // (`ConvProblem::plain_2d` convolutions: what the device suite checks this way).
    let fusable = match (bias, act) {
        (Some(b), Activation::None) => Some((ConvEpilogue::Bias, b)),
        (Some(b), Activation::Relu) => Some((ConvEpilogue::BiasRelu, b)),
        _ => None,
    };
    if let Some((epi, b)) = fusable
        && dtype == DType::F32
        && tuning::exhaustive()
        && g.c_in > 0
        && g.k_vol() > 0
        && full_out(g) == g.out_sp
        && problem("conv_forward", g, dtype, ConvDir::Forward)?.plain_2d()
        && dev.vendor().dnn()?.fuses_epilogue()
    {
        let bufs = ConvBufs {
            a: x,
            b: w,
            c: y,
            bias: b,
        };
        let r = run_conv_exact(
            dev,
            "conv_forward",
            stream,
            g,
            dtype,
            ConvDir::Forward,
            epi,
            bufs,
            ws,
            ws_bytes,
        );
        match r {
            Err(e) if e.kind == crate::base::error::ErrorKind::Unsupported => {}
            r => return r,
        }
    }
    if g.c_in == 0 || g.k_vol() == 0 {
        zero(dev, stream, dtype, y, ny)?;
    } else {
        run_conv(
            dev,
            "conv_forward",
            stream,
            g,
            dtype,
            ConvDir::Forward,
            ConvBufs {
                a: x,
                b: w,
                c: y,
                bias: DevPtr::NULL,
            },
            ws,
            ws_bytes,
        )?;
    }
    conv_epilogue(dev, stream, g, dtype, y, bias, None, act)
}

/// `y = act(conv(x, w) + bias + residual)` (f32; the sum in that order): the convolution
/// alone (the DNN library's, or a 1×1 one's batched product where the exhaustive search
/// timed that faster), then one epilogue kernel for the bias, the residual and the
/// activation: no more memory traffic than a fused bias and a separate add, and the product
/// needs no epilogue of its own.
#[allow(clippy::too_many_arguments)]
pub fn conv_forward_residual(
    dev: &GpuDevice,
    stream: RawStream,
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
    if dtype != DType::F32 {
        return Err(Error::dtype(format!(
            "conv_forward_residual: dtype {dtype} (f32 only)"
        )));
    }
    conv_forward(
        dev,
        stream,
        g,
        dtype,
        x,
        w,
        None,
        Activation::None,
        y,
        ws,
        ws_bytes,
    )?;
    conv_epilogue(dev, stream, g, dtype, y, bias, Some(residual), act)
}

#[allow(clippy::too_many_arguments)]
pub fn conv_backward_data(
    dev: &GpuDevice,
    stream: RawStream,
    g: &ConvGeom,
    dtype: DType,
    dy: DevPtr,
    w: DevPtr,
    dx: DevPtr,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    if dtype == DType::F64 {
        return conv_backward_data_f64(dev, stream, g, dy, w, dx);
    }
    suffix("conv_backward_data", dtype)?;
    let nx = g.n * g.c_in * g.in_vol();
    if nx == 0 {
        return Ok(());
    }
    if g.c_out == 0 || g.out_vol() == 0 || g.k_vol() == 0 {
        return zero(dev, stream, dtype, dx, nx);
    }
    run_conv(
        dev,
        "conv_backward_data",
        stream,
        g,
        dtype,
        ConvDir::BackwardData,
        ConvBufs {
            a: dy,
            b: w,
            c: dx,
            bias: DevPtr::NULL,
        },
        ws,
        ws_bytes,
    )
}

#[allow(clippy::too_many_arguments)]
pub fn conv_backward_weight(
    dev: &GpuDevice,
    stream: RawStream,
    g: &ConvGeom,
    dtype: DType,
    x: DevPtr,
    dy: DevPtr,
    dw: DevPtr,
    db: Option<DevPtr>,
    ws: DevPtr,
    ws_bytes: usize,
) -> Result<()> {
    if dtype == DType::F64 {
        return conv_backward_weight_f64(dev, stream, g, x, dy, dw, db);
    }
    suffix("conv_backward_weight", dtype)?;
    let nw = g.c_out * (g.c_in / g.groups) * g.k_vol();
    if nw > 0 {
        if g.n == 0 || g.out_vol() == 0 {
            zero(dev, stream, dtype, dw, nw)?;
        } else {
            run_conv(
                dev,
                "conv_backward_weight",
                stream,
                g,
                dtype,
                ConvDir::BackwardWeight,
                ConvBufs {
                    a: x,
                    b: dy,
                    c: dw,
                    bias: DevPtr::NULL,
                },
                ws,
                ws_bytes,
            )?;
        }
    }
    match db {
        Some(db) => bias_grad(dev, stream, dtype, dy, db, g),
        None => Ok(()),
    }
}

impl ConvOps for GpuDevice {
    /// 0: the device takes workspaces from its caching allocator (a caller's workspace is
    /// used when it is large enough for the chosen algorithm).
    fn conv_workspace_size(&self, _g: &ConvGeom, _dtype: DType) -> Result<usize> {
        Ok(0)
    }

    /// cuDNN and MIOpen take channels-last tensor (and filter) descriptors.
    fn has_channels_last_conv(&self) -> bool {
        true
    }

    fn conv_forward(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        conv_forward(
            self,
            stream,
            g,
            dtype,
            x,
            w,
            bias,
            act,
            y,
            workspace,
            workspace_bytes,
        )
    }

    /// f32: the convolution, then one kernel for the bias, the residual and the activation
    /// ([`conv_forward_residual`]).
    fn has_conv_residual(&self) -> bool {
        true
    }

    fn conv_forward_residual(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        bias: Option<DevPtr>,
        residual: DevPtr,
        act: Activation,
        y: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        conv_forward_residual(
            self,
            stream,
            g,
            dtype,
            x,
            w,
            bias,
            residual,
            act,
            y,
            workspace,
            workspace_bytes,
        )
    }

    fn conv_backward_data(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        dy: DevPtr,
        w: DevPtr,
        dx: DevPtr,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        conv_backward_data(
            self,
            stream,
            g,
            dtype,
            dy,
            w,
            dx,
            workspace,
            workspace_bytes,
        )
    }

    fn conv_backward_weight(
        &self,
        stream: RawStream,
        g: &ConvGeom,
        dtype: DType,
        x: DevPtr,
        dy: DevPtr,
        dw: DevPtr,
        db: Option<DevPtr>,
        workspace: DevPtr,
        workspace_bytes: usize,
    ) -> Result<()> {
        conv_backward_weight(
            self,
            stream,
            g,
            dtype,
            x,
            dy,
            dw,
            db,
            workspace,
            workspace_bytes,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pad_struct_matches_the_kernel() {
        // 7 * 8 bytes, no padding: the kernel reads it by value.
        assert_eq!(std::mem::size_of::<RbPad>(), 56);
        // 4 + 6 * 3 i64: the kernel reads it by value.
        assert_eq!(std::mem::size_of::<RbConv64>(), 176);
    }

    #[test]
    fn problems_are_4d_for_1d_and_2d_and_5d_for_3d() {
        let attrs = crate::ops::conv::ConvAttrs {
            stride: vec![2],
            padding: vec![1],
            dilation: vec![1],
            groups: 1,
            output_padding: vec![0],
        };
        let g1 = crate::ops::conv::conv_geom("conv1d", &[2, 3, 17], &[5, 3, 4], &attrs, 1).unwrap();
        let p = problem("conv1d", &g1, DType::F32, ConvDir::Forward).unwrap();
        assert_eq!(p.dims, 4);
        assert_eq!(&p.x[..4], &[2, 3, 1, 17]);
        assert_eq!(&p.w[..4], &[5, 3, 1, 4]);
        assert_eq!(&p.pad[1..], &[0, 1]);
        assert_eq!(&p.stride[1..], &[1, 2]);
        let g3 =
            crate::ops::conv::conv_geom("conv3d", &[1, 2, 5, 4, 6], &[3, 2, 2, 3, 2], &attrs, 3)
                .unwrap();
        let p = problem("conv3d", &g3, DType::F16, ConvDir::BackwardData).unwrap();
        assert_eq!(p.dims, 5);
        assert_eq!(p.x, [1, 2, 5, 4, 6]);
        assert_eq!(p.w, [3, 2, 2, 3, 2]);
        assert!(!p.channels_last);
        assert_eq!(p.strides(&p.x), [240, 120, 24, 6, 1]);
        let p = problem(
            "conv3d",
            &ConvGeom {
                channels_last: true,
                ..g3
            },
            DType::F16,
            ConvDir::Forward,
        )
        .unwrap();
        // NDHWC: C fastest, then W, H, D, N.
        assert_eq!(p.strides(&p.x), [240, 1, 48, 12, 2]);
        let p = problem(
            "conv1d",
            &ConvGeom {
                channels_last: true,
                ..g1
            },
            DType::F32,
            ConvDir::Forward,
        )
        .unwrap();
        // [N, C, 1, W] stored [N, 1, W, C].
        assert_eq!(p.strides(&p.x[..p.dims]), [51, 1, 51, 3]);
    }
}
