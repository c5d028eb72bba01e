//! The vendor layer: function tables filled at run time from the vendor libraries, and the
//! one vendor-neutral trait ([`Vendor`]) that everything above implements against.
//!
//! Each library is declared once with [`dyn_symbols!`], every symbol marked `req` (the
//! library is unusable without it) or `opt` (a missing one disables only its feature), in
//! the manner of IREE's `dynamic_symbol_tables.h`. The macro generates the table struct and
//! its loader. Nothing outside this folder names a HIP or CUDA symbol.

use crate::base::dtype::DType;
use crate::device::GemmDesc;
use crate::device::{DevPtr, DeviceKind, RawStream};
use crate::{Error, Result};
use libloading::Library;
use std::ffi::c_void;
use std::sync::Arc;

/// Field type of a table entry: a plain function pointer when required, `Option` when not.
macro_rules! sym_field_ty {
    (req, $t:ty) => { $t };
    (opt, $t:ty) => { Option<$t> };
}

/// Resolves one entry; a missing required symbol is recorded in `missing`.
macro_rules! sym_load {
    (req, $lib:expr, $name:ident, $t:ty, $missing:expr) => {
        // SAFETY: the declared type is the C prototype of the vendor's header.
        match unsafe { $lib.get::<$t>(concat!(stringify!($name), "\0").as_bytes()) } {
            Ok(s) => Some(*s),
            Err(_) => {
                $missing.push(stringify!($name));
                None
            }
        }
    };
    (opt, $lib:expr, $name:ident, $t:ty, $missing:expr) => {
        // SAFETY: as above.
        Some(
            unsafe { $lib.get::<$t>(concat!(stringify!($name), "\0").as_bytes()) }
                .ok()
                .map(|s| *s),
        )
    };
}

macro_rules! sym_unwrap {
    (req, $v:expr) => {
        $v.unwrap()
    };
    (opt, $v:expr) => {
        $v.unwrap()
    };
}

/// Declares a function table: `dyn_symbols!(pub struct T { req name: fn(args) -> ret; ... })`.
/// Generates the struct (keeping the library loaded), `T::load(lib, what)`, and
/// `T::missing_optional()`.
macro_rules! dyn_symbols {
    (
        $(#[$meta:meta])*
        pub struct $Name:ident {
            $( $kind:ident $sym:ident : fn( $($arg:ty),* $(,)? ) -> $ret:ty ; )*
        }
    ) => {
        $(#[$meta])*
        #[allow(non_snake_case)]
        pub struct $Name {
            _lib: libloading::Library,
            /// Where the library was found.
            pub path: String,
            $( pub $sym: sym_field_ty!($kind, unsafe extern "C" fn($($arg),*) -> $ret), )*
        }

        #[allow(non_snake_case)]
        impl $Name {
            /// Resolves every symbol of `lib` (found at `path`); fails naming each missing
            /// required symbol.
            pub fn load(lib: libloading::Library, path: String) -> std::result::Result<Self, String> {
                #[allow(unused_mut)]
                let mut missing: Vec<&'static str> = Vec::new();
                $( let $sym = sym_load!($kind, lib, $sym, unsafe extern "C" fn($($arg),*) -> $ret, missing); )*
                if !missing.is_empty() {
                    return Err(format!("{path} lacks required symbols: {}", missing.join(", ")));
                }
                Ok($Name { $( $sym: sym_unwrap!($kind, $sym), )* _lib: lib, path })
            }

            /// Optional symbols the library does not export (their features are disabled).
            pub fn missing_optional(&self) -> Vec<&'static str> {
                #[allow(unused_mut)]
                let mut v: Vec<&'static str> = Vec::new();
                $( dyn_symbols!(@opt_missing $kind, self, $sym, v); )*
                v
            }
        }
    };
    (@opt_missing req, $s:expr, $sym:ident, $v:expr) => {};
    (@opt_missing opt, $s:expr, $sym:ident, $v:expr) => {
        if $s.$sym.is_none() {
            $v.push(stringify!($sym));
        }
    };
}

// The tables, declared after the macros they use (macro_rules scoping is textual).
pub mod cuda;
pub mod cudnn_graph;
pub mod hip;
pub mod nccl;

/// Opens the first library of `candidates` that loads. Each candidate is a file name
/// (searched by the dynamic loader) or a path. A candidate prefixed with `noload:` only
/// matches a library already loaded in the process (dlopen RTLD_NOLOAD), so a framework's
/// copy (e.g. PyTorch's) is reused.
pub fn open_first(
    what: &str,
    candidates: &[String],
) -> std::result::Result<(Library, String), String> {
    use libloading::os::unix::{Library as UnixLib, RTLD_LOCAL, RTLD_NOW};
    const RTLD_NOLOAD: i32 = 0x4;
    let mut tried = Vec::new();
    for c in candidates {
        let (name, flags) = match c.strip_prefix("noload:") {
            Some(n) => (n, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD),
            None => (c.as_str(), RTLD_NOW | RTLD_LOCAL),
        };
        // SAFETY: loading a vendor library runs its initializers, which is what we want.
        match unsafe { UnixLib::open(Some(name), flags) } {
            Ok(l) => return Ok((l.into(), name.to_string())),
            Err(_) => {
                if !c.starts_with("noload:") {
                    tried.push(name.to_string())
                }
            }
        }
    }
    Err(format!("{what} not found (tried {})", tried.join(", ")))
}

/// The candidates for a library: already loaded sonames, an override variable, directories
/// from environment variables (`<dir>/lib/<soname>`), the sonames, then fixed directories.
pub fn candidates(
    sonames: &[&str],
    override_var: &str,
    env_dirs: &[&str],
    fixed_dirs: &[&str],
) -> Vec<String> {
    let mut v: Vec<String> = sonames.iter().map(|s| format!("noload:{s}")).collect();
    if let Ok(p) = std::env::var(override_var)
        && !p.is_empty()
    {
        v.push(p);
    }
    for var in env_dirs {
        if let Ok(d) = std::env::var(var) {
            if d.is_empty() {
                continue;
            }
            for sub in ["lib", "lib64"] {
                for s in sonames {
                    v.push(format!("{d}/{sub}/{s}"));
                }
            }
        }
    }
    v.extend(sonames.iter().map(|s| s.to_string()));
    for d in fixed_dirs {
        for s in sonames {
            v.push(format!("{d}/{s}"));
        }
    }
    v
}

/// What a BLASLt GEMM applies to `op(A)·op(B) + bias` in its f32 math, before the one
/// rounding to the output type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LtEpilogue {
    None,
    Relu,
    /// GELU, tanh approximation (the only GELU the BLASLt libraries have).
    GeluTanh,
}

/// A GEMM with a fused epilogue: `C = epilogue(op(A)·op(B) + bias)`, column-major as
/// [`GemmDesc`] (alpha 1, beta 0), `bias` one value per row of C (`m` values of `dtype`).
/// `tf32` lets f32 products use TF32 (the caller's opt-in). `batch`: a strided batch of such
/// products; `algo`: which of the library's heuristic algorithms runs it (0 its first, the
/// others for a caller that times them).
#[derive(Clone, Copy, Debug)]
pub struct LtMatmul {
    pub dtype: DType,
    pub trans_a: crate::device::Transpose,
    pub trans_b: crate::device::Transpose,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub a: DevPtr,
    pub lda: usize,
    pub b: DevPtr,
    pub ldb: usize,
    pub c: DevPtr,
    pub ldc: usize,
    pub bias: Option<DevPtr>,
    pub epilogue: LtEpilogue,
    pub tf32: bool,
    pub batch: LtBatch,
    pub algo: usize,
}

/// A strided batch of BLASLt products: product `i` reads `A + i·stride_a`, `B + i·stride_b`
/// and writes `C + i·stride_c` (elements); a stride may be 0 (one A for every product: a
/// 1×1 convolution's weight). `count` 1 is the one product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LtBatch {
    pub count: usize,
    pub stride_a: usize,
    pub stride_b: usize,
    pub stride_c: usize,
}

impl LtBatch {
    /// One product.
    pub const ONE: LtBatch = LtBatch {
        count: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    };
}

/// Attributes a vendor answers about a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attr {
    ComputeUnits,
    WarpSize,
    MaxThreadsPerBlock,
}

/// A compiled-code image for a device (CUBIN or an AMD code object).
pub type CodeImage = Vec<u8>;

/// The vendor-neutral interface of a GPU runtime. Handles (streams, events, modules,
/// functions) travel as `u64`. Methods that act on a device first make `ordinal` current on
/// the calling thread where the vendor needs it.
pub trait Vendor: Send + Sync + 'static {
    fn kind(&self) -> DeviceKind;
    /// A short description, e.g. "CUDA driver 13.0 (libcuda.so.1)".
    fn describe(&self) -> String;
    fn device_count(&self) -> Result<usize>;
    /// Makes `ordinal` the current device of the calling thread.
    fn bind(&self, ordinal: usize) -> Result<()>;
    fn device_name(&self, ordinal: usize) -> Result<String>;
    /// "gfx90a", "sm_90".
    fn device_arch(&self, ordinal: usize) -> Result<String>;
    fn attribute(&self, ordinal: usize, attr: Attr) -> Result<i32>;

    fn mem_alloc(&self, bytes: usize) -> Result<DevPtr>;
    fn mem_free(&self, ptr: DevPtr) -> Result<()>;
    /// (free, total) bytes of the current device.
    fn mem_info(&self) -> Result<(u64, u64)>;
    fn host_alloc_pinned(&self, bytes: usize) -> Result<*mut u8>;
    fn host_free_pinned(&self, ptr: *mut u8) -> Result<()>;

    /// # Safety
    /// `src` is readable for `bytes` until the copy completes; `dst` is device memory.
    unsafe fn copy_h2d(
        &self,
        dst: DevPtr,
        src: *const u8,
        bytes: usize,
        s: RawStream,
    ) -> Result<()>;
    /// # Safety
    /// `dst` is writable for `bytes` until the copy completes.
    unsafe fn copy_d2h(&self, dst: *mut u8, src: DevPtr, bytes: usize, s: RawStream) -> Result<()>;
    fn copy_d2d(&self, dst: DevPtr, src: DevPtr, bytes: usize, s: RawStream) -> Result<()>;
    fn memset_d8(&self, dst: DevPtr, value: u8, bytes: usize, s: RawStream) -> Result<()>;

    fn device_synchronize(&self) -> Result<()>;
    fn stream_create(&self) -> Result<RawStream>;
    fn stream_destroy(&self, s: RawStream) -> Result<()>;
    fn stream_synchronize(&self, s: RawStream) -> Result<()>;
    fn stream_wait_event(&self, s: RawStream, event: u64) -> Result<()>;

    /// `timing`: the event records timestamps (for elapsed time).
    fn event_create(&self, timing: bool) -> Result<u64>;
    fn event_destroy(&self, event: u64) -> Result<()>;
    fn event_record(&self, event: u64, s: RawStream) -> Result<()>;
    fn event_synchronize(&self, event: u64) -> Result<()>;
    /// True when the work before the event has completed.
    fn event_query(&self, event: u64) -> Result<bool>;
    fn event_elapsed_ms(&self, start: u64, end: u64) -> Result<f32>;

    fn module_load(&self, image: &[u8]) -> Result<u64>;
    fn module_unload(&self, module: u64) -> Result<()>;
    fn module_function(&self, module: u64, name: &str) -> Result<u64>;
    /// # Safety
    /// `args` holds one pointer per kernel parameter, each to a value of its type.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch(
        &self,
        func: u64,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        s: RawStream,
        args: *mut *mut c_void,
    ) -> Result<()>;

    /// Whether [`Vendor::launch_early`] lets a kernel start before the stream's previous
    /// kernel has finished on device `ordinal` (NVIDIA's programmatic dependent launch: the
    /// driver's `cuLaunchKernelEx` and compute capability 9.0 or later). AMD has no such
    /// launch: false.
    fn has_early_launch(&self, _ordinal: usize) -> bool {
        false
    }
    /// [`Vendor::launch`] of a kernel that begins with `rb_pdl_enter()` (kernels/common.h),
    /// with the programmatic-serialization attribute where [`Vendor::has_early_launch`]:
    /// its blocks may be scheduled while the previous kernel of the stream runs, and wait for
    /// it in `rb_pdl_enter`. Only the built-in kernels of `kernels::EARLY` come here.
    ///
    /// # Safety
    /// As [`Vendor::launch`]; the kernel touches no memory before `rb_pdl_enter()`.
    #[allow(clippy::too_many_arguments)]
    unsafe fn launch_early(
        &self,
        func: u64,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        s: RawStream,
        args: *mut *mut c_void,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        unsafe { self.launch(func, grid, block, shared_bytes, s, args) }
    }

    /// Compiles HIP/CUDA C++ `source` for `arch` to a loadable image; a compile error is
    /// ErrorKind::Compilation carrying the compiler's log.
    fn rtc_compile(
        &self,
        source: &str,
        name: &str,
        options: &[String],
        arch: &str,
    ) -> Result<CodeImage>;
    /// "nvrtc 13.0", "hiprtc 6.4".
    fn rtc_version(&self) -> String;
    /// The collective library of this vendor (RCCL / NCCL), loaded on first use.
    fn collectives(&self) -> Result<Arc<nccl::CollLib>> {
        Err(Error::unsupported("no collective library for this vendor"))
    }
    /// The compiler's options that select `arch` (e.g. `--gpu-architecture=sm_90`).
    fn rtc_arch_options(&self, arch: &str) -> Vec<String>;

    /// Starts capturing the work queued on stream `s` (not the default stream) into a device
    /// graph, in relaxed mode (other threads may go on calling the runtime). Unsupported
    /// where the runtime lacks graphs (the symbols are optional).
    fn stream_begin_capture(&self, s: RawStream) -> Result<()> {
        let _ = s;
        Err(Error::unsupported(format!(
            "{}: no device-graph capture",
            self.describe()
        )))
    }
    /// Ends the capture on `s` and returns the executable graph (instantiated; the captured
    /// template is destroyed). The stream is no longer capturing afterwards, also on failure
    /// (a capture invalidated by an operation not permitted during capture fails here,
    /// naming the end-capture call and the vendor's code).
    fn stream_end_capture(&self, s: RawStream) -> Result<u64> {
        let _ = s;
        Err(Error::unsupported(format!(
            "{}: no device-graph capture",
            self.describe()
        )))
    }
    /// Launches an executable graph from [`Vendor::stream_end_capture`] on `s`.
    fn graph_launch(&self, exec: u64, s: RawStream) -> Result<()> {
        let _ = (exec, s);
        Err(Error::unsupported(format!(
            "{}: no device-graph capture",
            self.describe()
        )))
    }
    /// Destroys an executable graph.
    fn graph_exec_destroy(&self, exec: u64) -> Result<()> {
        let _ = exec;
        Err(Error::unsupported(format!(
            "{}: no device-graph capture",
            self.describe()
        )))
    }

    /// A BLAS handle for the current device, or Unsupported where the BLAS library is absent.
    fn blas_create(&self) -> Result<u64>;
    fn blas_gemm(&self, handle: u64, s: RawStream, desc: &GemmDesc) -> Result<()>;

    /// Prepares a GEMM with a fused epilogue through the vendor's BLASLt (cuBLASLt,
    /// hipBLASLt) on device `ordinal` (current on this thread): the
    /// algorithm is chosen once per problem and cached. Returns the workspace bytes
    /// [`Vendor::lt_matmul`] needs. Unsupported where there is no BLASLt or no algorithm
    /// for the problem: the caller then runs the GEMM and an epilogue kernel.
    fn lt_prepare(&self, ordinal: usize, p: &LtMatmul) -> Result<usize> {
        let _ = (ordinal, p);
        Err(Error::unsupported(format!(
            "{}: no BLASLt (GEMM with a fused epilogue)",
            self.describe()
        )))
    }
    /// Runs a GEMM prepared by [`Vendor::lt_prepare`] on `s`, with `ws_bytes` of workspace.
    fn lt_matmul(
        &self,
        ordinal: usize,
        s: RawStream,
        p: &LtMatmul,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()> {
        let _ = (ordinal, s, p, ws, ws_bytes);
        Err(Error::unsupported(format!(
            "{}: no BLASLt (GEMM with a fused epilogue)",
            self.describe()
        )))
    }

    /// The DNN library (MIOpen, cuDNN), or Unsupported naming the missing library. The
    /// device itself stays usable without it.
    fn dnn(&self) -> Result<&dyn Dnn> {
        Err(Error::unsupported(
            "convolution is unavailable: this vendor has no DNN library",
        ))
    }
}

/// Which convolution a [`ConvProblem`] computes; the three buffers of [`ConvBufs`] are
/// `(x, w, y)` forward, `(dy, w, dx)` backward-data, `(x, dy, dw)` backward-weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConvDir {
    Forward,
    BackwardData,
    BackwardWeight,
}

/// What a forward [`ConvProblem`] adds after the convolution, in the library's graph (one
/// kernel, the sum kept in f32): nothing, `+ bias[c]`, or `relu(. + bias[c])`. The bias is
/// [`ConvBufs::bias`]. Only [`Dnn::fuses_epilogue`] libraries take problems with one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ConvEpilogue {
    #[default]
    None,
    Bias,
    BiasRelu,
}

/// A convolution as the DNN libraries see it: dense NC(D)HW tensors of `dims` entries
/// (4 for 1-D/2-D problems, 1-D as a 2-D problem of height 1; 5 for 3-D), cross-correlation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConvProblem {
    pub dir: ConvDir,
    pub dtype: DType,
    /// 4 or 5: the tensors' rank.
    pub dims: usize,
    pub x: [i32; 5],
    pub w: [i32; 5],
    pub y: [i32; 5],
    pub pad: [i32; 3],
    pub stride: [i32; 3],
    pub dil: [i32; 3],
    pub groups: i32,
    /// x, w and y are stored channels-last (NHWC / NDHWC; `x`, `w`, `y` above stay the
    /// logical NC(D)HW extents).
    pub channels_last: bool,
    /// The fused epilogue of a forward problem.
    pub epi: ConvEpilogue,
}

impl ConvProblem {
    /// Spatial dimensions of the library call (2 or 3).
    pub fn spatial(&self) -> usize {
        self.dims - 2
    }

    /// A dense 1-D/2-D channels-first problem (4-D tensors, one group): where f32 forward
    /// convolutions take cuDNN's backend-API engines and fused epilogues (what the device
    /// suite checks under the exhaustive search).
    pub fn plain_2d(&self) -> bool {
        self.dims == 4 && self.groups == 1 && !self.channels_last
    }

    /// The strides of a tensor of the problem with logical NC(D)HW extents `dims`: packed,
    /// channels-first or channels-last.
    pub fn strides(&self, dims: &[i32]) -> Vec<i32> {
        if self.channels_last {
            channels_last_strides(dims)
        } else {
            packed_strides(dims)
        }
    }
}

/// The strides of logical NC(D)HW extents `dims` stored channels-last (N(D)HWC).
pub fn channels_last_strides(dims: &[i32]) -> Vec<i32> {
    let n = dims.len();
    let mut s = vec![1i32; n];
    if n < 3 {
        return packed_strides(dims);
    }
    let mut acc = dims[1];
    for i in (2..n).rev() {
        s[i] = acc;
        acc *= dims[i];
    }
    s[1] = 1;
    s[0] = acc;
    s
}

/// Packed NC(D)HW strides of `dims` (first `n` entries).
pub fn packed_strides(dims: &[i32]) -> Vec<i32> {
    let mut s = vec![1i32; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * dims[i + 1];
    }
    s
}

/// The device buffers of one convolution call (see [`ConvDir`]), and the bias of a fused
/// epilogue ([`ConvEpilogue`]; NULL without one).
#[derive(Clone, Copy, Debug)]
pub struct ConvBufs {
    pub a: DevPtr,
    pub b: DevPtr,
    pub c: DevPtr,
    pub bias: DevPtr,
}

/// An algorithm chosen by the library's search, with the workspace it needs and (cuDNN)
/// the math type it was timed with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConvAlgo {
    pub algo: i32,
    pub math: i32,
    pub workspace: usize,
}

/// The vendor-neutral interface of a DNN library (MIOpen, cuDNN). Handles travel as `u64`;
/// a handle belongs to the device current when it was created and is used by one thread at
/// a time (the caller serializes).
pub trait Dnn: Send + Sync {
    /// "cuDNN 9.10.2 (libcudnn.so.9)".
    fn describe(&self) -> String;
    fn handle_create(&self) -> Result<u64>;
    /// Scratch bytes the algorithm search of `p` needs (0 when the search runs nothing).
    fn find_workspace(&self, h: u64, p: &ConvProblem, exhaustive: bool) -> Result<usize>;
    /// Chooses the algorithm for `p` that computes exactly (no TF32 for f32). `exhaustive`:
    /// time the library's algorithms on the given buffers (the output buffer is
    /// overwritten) and take the fastest that fits in `ws_bytes` (cuDNN Find; MIOpen Find
    /// with exhaustive search); else the library's heuristic ranking (cuDNN
    /// `Get*Algorithm_v7`, which runs nothing; MIOpen's Find, mandatory there, in its normal
    /// mode). `probe`: the buffers hold the exactness probe (x `1 + 2^-12`, w 1, bias 0) and
    /// this is element 0 of an exact f32 result; an engine whose result is off by more than
    /// `2^-16` of it (TF32 rounds the probe's x to 1) is not taken.
    #[allow(clippy::too_many_arguments)]
    fn find(
        &self,
        h: u64,
        s: RawStream,
        p: &ConvProblem,
        bufs: ConvBufs,
        ws: DevPtr,
        ws_bytes: usize,
        exhaustive: bool,
        probe: Option<f32>,
    ) -> Result<ConvAlgo>;
    /// Runs `p` with `algo` (from [`Dnn::find`]): `c = conv(a, b)` (overwritten).
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        h: u64,
        s: RawStream,
        p: &ConvProblem,
        algo: &ConvAlgo,
        bufs: ConvBufs,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()>;

    /// Whether forward problems with a [`ConvEpilogue`] are taken (in exhaustive searches,
    /// where every engine is timed and its exactness checked).
    fn fuses_epilogue(&self) -> bool {
        false
    }

    /// Whether [`ConvProblem::nhwc`] problems are accepted.
    fn channels_last(&self) -> bool {
        false
    }

    /// Scratch bytes [`Dnn::attention`] needs for `p` (making its plan on first use).
    /// Default: UNSUPPORTED, the library has no fused attention here.
    fn attention_workspace(&self, h: u64, p: &AttnProblem) -> Result<usize> {
        let _ = (h, p);
        Err(Error::unsupported(
            "fused attention is not available in this DNN library",
        ))
    }

    /// Fused scaled-dot-product attention forward (`o = softmax(scale q k^T [causal]) v`,
    /// the row statistics into `bufs.stats`) on stream `s`, with `ws` of
    /// [`Dnn::attention_workspace`] bytes. Default: UNSUPPORTED (the caller runs its own
    /// kernels).
    #[allow(clippy::too_many_arguments)]
    fn attention(
        &self,
        h: u64,
        s: RawStream,
        p: &AttnProblem,
        scale: f32,
        bufs: AttnBufs,
        ws: DevPtr,
    ) -> Result<()> {
        let _ = (h, s, p, scale, bufs, ws);
        Err(Error::unsupported(
            "fused attention is not available in this DNN library",
        ))
    }

    /// Scratch bytes [`Dnn::attention_backward`] needs for `p`. Default: UNSUPPORTED.
    fn attention_backward_workspace(&self, h: u64, p: &AttnProblem) -> Result<usize> {
        let _ = (h, p);
        Err(Error::unsupported(
            "fused attention is not available in this DNN library",
        ))
    }

    /// Fused scaled-dot-product attention backward from the forward's output and row
    /// statistics (see [`AttnBwdBufs`]). Default: UNSUPPORTED.
    #[allow(clippy::too_many_arguments)]
    fn attention_backward(
        &self,
        h: u64,
        s: RawStream,
        p: &AttnProblem,
        scale: f32,
        bufs: AttnBwdBufs,
        ws: DevPtr,
    ) -> Result<()> {
        let _ = (h, s, p, scale, bufs, ws);
        Err(Error::unsupported(
            "fused attention is not available in this DNN library",
        ))
    }
}

/// A fused attention problem as the DNN library sees it: queries `[b, h, sq, d]`, keys and
/// values `[b, 1, sk, d]` (the `h` query heads of a key group share one: grouped-query
/// attention with the library's consecutive-heads layout; `h` = 1 without groups), the
/// output like the queries, and f32 row statistics `max + log(sum exp)` `[b, h, sq]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AttnProblem {
    pub dtype: DType,
    pub b: usize,
    pub h: usize,
    pub sq: usize,
    pub sk: usize,
    pub d: usize,
    /// Top-left causal (query i sees keys j <= i).
    pub causal: bool,
}

/// The device buffers of one fused attention call: q, k, v, o, stats (f32).
#[derive(Clone, Copy, Debug)]
pub struct AttnBufs {
    pub q: DevPtr,
    pub k: DevPtr,
    pub v: DevPtr,
    pub o: DevPtr,
    pub stats: DevPtr,
}

/// The device buffers of one fused attention backward call: q, k, v, o and stats (from the
/// forward), dout, the gradients dq, dk, dv, and f32 scratch: `dsum` `[b, h, sq]` and
/// `dq_acc` `[b, h, sq, d]` (zeroed by the caller before the call).
#[derive(Clone, Copy, Debug)]
pub struct AttnBwdBufs {
    pub q: DevPtr,
    pub k: DevPtr,
    pub v: DevPtr,
    pub o: DevPtr,
    pub dout: DevPtr,
    pub stats: DevPtr,
    pub dq: DevPtr,
    pub dk: DevPtr,
    pub dv: DevPtr,
    pub dsum: DevPtr,
    pub dq_acc: DevPtr,
}

/// A vendor error as `ErrorKind::Vendor` ("what: hipErrorInvalidValue (1)"), except
/// out-of-memory codes, which become `ErrorKind::OutOfMemory`.
pub fn vendor_error(what: &str, name: &str, code: i64, oom: bool) -> Error {
    let msg = format!("{what}: {name} ({code})");
    if oom {
        Error::oom(msg)
    } else {
        Error::vendor(msg)
    }
}

/// A C string buffer to a Rust string, up to the first NUL.
pub fn c_buf_to_string(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}
