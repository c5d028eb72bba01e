//! NVIDIA: the CUDA driver API (libcuda), NVRTC, cuBLAS, cuDNN 9 and cuBLASLt, loaded at run
//! time (cuDNN and cuBLASLt on first use).
//!
//! The driver API works with contexts: each device's primary context is retained once and
//! made current on the calling thread by [`Vendor::bind`] (cuBLAS, which uses the runtime
//! API, shares the primary context).

use super::{
    Attr, CodeImage, LtMatmul, Vendor, c_buf_to_string, candidates, open_first, vendor_error,
};
use crate::base::dtype::DType;
use crate::device::{DevPtr, DeviceKind, GemmDesc, RawStream, Transpose};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::{Arc, OnceLock};

type CUresult = c_int;
type Handle = *mut c_void;
type CUdeviceptr = u64;

/// `ncclResult_t`.
type NcclResult = c_int;
use super::cudnn_graph;
use super::nccl::NcclUniqueId;

dyn_symbols! {
    /// libnccl, the collective library (NVIDIA; same C API as RCCL). Loaded on the first
    /// communicator ([`super::nccl`] holds the calls).
    pub struct Nccl {
        req ncclGetVersion: fn(*mut c_int) -> NcclResult;
        req ncclGetUniqueId: fn(*mut NcclUniqueId) -> NcclResult;
        req ncclCommInitRank: fn(*mut Handle, c_int, NcclUniqueId, c_int) -> NcclResult;
        req ncclCommInitAll: fn(*mut Handle, c_int, *const c_int) -> NcclResult;
        req ncclCommDestroy: fn(Handle) -> NcclResult;
        opt ncclCommAbort: fn(Handle) -> NcclResult;
        req ncclCommCount: fn(Handle, *mut c_int) -> NcclResult;
        req ncclCommUserRank: fn(Handle, *mut c_int) -> NcclResult;
        opt ncclCommGetAsyncError: fn(Handle, *mut NcclResult) -> NcclResult;
        req ncclAllReduce: fn(*const c_void, *mut c_void, usize, c_int, c_int, Handle, Handle) -> NcclResult;
        req ncclAllGather: fn(*const c_void, *mut c_void, usize, c_int, Handle, Handle) -> NcclResult;
        req ncclReduceScatter: fn(*const c_void, *mut c_void, usize, c_int, c_int, Handle, Handle) -> NcclResult;
        req ncclBroadcast: fn(*const c_void, *mut c_void, usize, c_int, c_int, Handle, Handle) -> NcclResult;
        opt ncclSend: fn(*const c_void, usize, c_int, c_int, Handle, Handle) -> NcclResult;
        opt ncclRecv: fn(*mut c_void, usize, c_int, c_int, Handle, Handle) -> NcclResult;
        req ncclGroupStart: fn() -> NcclResult;
        req ncclGroupEnd: fn() -> NcclResult;
        req ncclGetErrorString: fn(NcclResult) -> *const c_char;
    }
}

dyn_symbols! {
    /// libcuda.so.1, the CUDA driver API.
    pub struct CudaDriver {
        req cuInit: fn(c_uint) -> CUresult;
        req cuDriverGetVersion: fn(*mut c_int) -> CUresult;
        req cuDeviceGetCount: fn(*mut c_int) -> CUresult;
        req cuDeviceGet: fn(*mut c_int, c_int) -> CUresult;
        req cuDeviceGetName: fn(*mut c_char, c_int, c_int) -> CUresult;
        req cuDeviceGetAttribute: fn(*mut c_int, c_int, c_int) -> CUresult;
        req cuDevicePrimaryCtxRetain: fn(*mut Handle, c_int) -> CUresult;
        req cuCtxSetCurrent: fn(Handle) -> CUresult;
        req cuCtxSynchronize: fn() -> CUresult;
        req cuMemAlloc_v2: fn(*mut CUdeviceptr, usize) -> CUresult;
        req cuMemFree_v2: fn(CUdeviceptr) -> CUresult;
        req cuMemGetInfo_v2: fn(*mut usize, *mut usize) -> CUresult;
        opt cuMemHostAlloc: fn(*mut *mut c_void, usize, c_uint) -> CUresult;
        opt cuMemFreeHost: fn(*mut c_void) -> CUresult;
        req cuMemcpyHtoDAsync_v2: fn(CUdeviceptr, *const c_void, usize, Handle) -> CUresult;
        req cuMemcpyDtoHAsync_v2: fn(*mut c_void, CUdeviceptr, usize, Handle) -> CUresult;
        req cuMemcpyDtoDAsync_v2: fn(CUdeviceptr, CUdeviceptr, usize, Handle) -> CUresult;
        req cuMemsetD8Async: fn(CUdeviceptr, u8, usize, Handle) -> CUresult;
        req cuStreamCreate: fn(*mut Handle, c_uint) -> CUresult;
        req cuStreamDestroy_v2: fn(Handle) -> CUresult;
        req cuStreamSynchronize: fn(Handle) -> CUresult;
        req cuStreamWaitEvent: fn(Handle, Handle, c_uint) -> CUresult;
        req cuEventCreate: fn(*mut Handle, c_uint) -> CUresult;
        req cuEventDestroy_v2: fn(Handle) -> CUresult;
        req cuEventRecord: fn(Handle, Handle) -> CUresult;
        req cuEventSynchronize: fn(Handle) -> CUresult;
        req cuEventQuery: fn(Handle) -> CUresult;
        req cuEventElapsedTime: fn(*mut f32, Handle, Handle) -> CUresult;
        req cuModuleLoadData: fn(*mut Handle, *const c_void) -> CUresult;
        req cuModuleUnload: fn(Handle) -> CUresult;
        req cuModuleGetFunction: fn(*mut Handle, Handle, *const c_char) -> CUresult;
        req cuLaunchKernel: fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void) -> CUresult;
        opt cuLaunchKernelEx: fn(*const CuLaunchConfig, Handle, *mut *mut c_void, *mut *mut c_void) -> CUresult;
        opt cuGetErrorName: fn(CUresult, *mut *const c_char) -> CUresult;
        opt cuStreamBeginCapture_v2: fn(Handle, c_int) -> CUresult;
        opt cuStreamEndCapture: fn(Handle, *mut Handle) -> CUresult;
        opt cuGraphInstantiateWithFlags: fn(*mut Handle, Handle, u64) -> CUresult;
        opt cuGraphLaunch: fn(Handle, Handle) -> CUresult;
        opt cuGraphExecDestroy: fn(Handle) -> CUresult;
        opt cuGraphDestroy: fn(Handle) -> CUresult;
    }
}

dyn_symbols! {
    /// libnvrtc, the runtime compiler.
    pub struct Nvrtc {
        req nvrtcVersion: fn(*mut c_int, *mut c_int) -> c_int;
        req nvrtcCreateProgram: fn(*mut Handle, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> c_int;
        req nvrtcCompileProgram: fn(Handle, c_int, *const *const c_char) -> c_int;
        req nvrtcDestroyProgram: fn(*mut Handle) -> c_int;
        req nvrtcGetProgramLogSize: fn(Handle, *mut usize) -> c_int;
        req nvrtcGetProgramLog: fn(Handle, *mut c_char) -> c_int;
        req nvrtcGetCUBINSize: fn(Handle, *mut usize) -> c_int;
        req nvrtcGetCUBIN: fn(Handle, *mut c_char) -> c_int;
        opt nvrtcGetErrorString: fn(c_int) -> *const c_char;
    }
}

dyn_symbols! {
    /// libcublas.
    pub struct Cublas {
        req cublasCreate_v2: fn(*mut Handle) -> c_int;
        req cublasSetStream_v2: fn(Handle, Handle) -> c_int;
        opt cublasSetMathMode: fn(Handle, c_int) -> c_int;
        req cublasGemmStridedBatchedEx: fn(Handle, c_int, c_int, c_int, c_int, c_int, *const c_void, *const c_void, c_int, c_int, i64, *const c_void, c_int, c_int, i64, *const c_void, *mut c_void, c_int, c_int, i64, c_int, c_int, c_int) -> c_int;
    }
}

/// `CUlaunchAttribute` of cuda.h: the id, 4 bytes of padding, a 64-byte value union (8-byte
/// aligned).
#[repr(C)]
pub struct CuLaunchAttribute {
    id: c_int,
    pad: [u8; 4],
    value: [u64; 8],
}
/// `CUlaunchConfig` of cuda.h.
#[repr(C)]
pub struct CuLaunchConfig {
    grid: [c_uint; 3],
    block: [c_uint; 3],
    shared_bytes: c_uint,
    stream: Handle,
    attrs: *const CuLaunchAttribute,
    num_attrs: c_uint,
}
/// `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION` of `CUlaunchAttributeID`: its value
/// `programmaticStreamSerializationAllowed` is the union's first int.
const CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION: c_int = 6;
const CUDA_ERROR_OUT_OF_MEMORY: CUresult = 2;
const CUDA_ERROR_NOT_READY: CUresult = 600;
const CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: c_int = 1;
const CU_DEVICE_ATTRIBUTE_WARP_SIZE: c_int = 10;
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
const CU_EVENT_DISABLE_TIMING: c_uint = 2;
/// `CU_STREAM_CAPTURE_MODE_RELAXED` of `CUstreamCaptureMode` (GLOBAL 0, THREAD_LOCAL 1).
const CU_STREAM_CAPTURE_MODE_RELAXED: c_int = 2;
const CUBLAS_COMPUTE_32F: c_int = 68;
/// `CUBLAS_COMPUTE_64F` of `cublasComputeType_t`: f64 GEMMs (alpha and beta are doubles).
const CUBLAS_COMPUTE_64F: c_int = 70;
const CUBLAS_GEMM_DEFAULT: c_int = -1;
const CUBLAS_DEFAULT_MATH: c_int = 0;
const CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION: c_int = 16;
const CUDA_R_32F: c_int = 0;
const CUDA_R_16F: c_int = 2;
const CUDA_R_16BF: c_int = 14;
const CUDA_R_64F: c_int = 1;

fn fixed_dirs() -> Vec<&'static str> {
    vec![
        "/usr/local/cuda/lib64",
        "/usr/local/cuda/targets/x86_64-linux/lib",
        "/usr/lib/x86_64-linux-gnu",
        "/usr/lib64",
    ]
}

/// The CUDA vendor: the driver (required), NVRTC and cuBLAS (each optional: without one,
/// kernels or GEMM answer Unsupported naming the missing library).
pub struct CudaVendor {
    pub driver: CudaDriver,
    pub nvrtc: std::result::Result<Nvrtc, String>,
    pub cublas: std::result::Result<Cublas, String>,
    driver_version: i32,
    contexts: Mutex<Vec<Option<usize>>>,
    /// cuDNN, loaded on first use (its absence disables only convolution).
    cudnn: OnceLock<std::result::Result<CudnnDnn, String>>,
    /// cuBLASLt handles per device and the prepared problems (descriptors and algorithm).
    lt: Mutex<LtState>,
}

// SAFETY: the tables hold function pointers and a loaded library; the driver API is
// thread-safe.
unsafe impl Send for CudaVendor {}
unsafe impl Sync for CudaVendor {}

impl CudaVendor {
    fn check(&self, what: &str, r: CUresult) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let mut name = format!("CUDA_ERROR_{r}");
        if let Some(f) = self.driver.cuGetErrorName {
            let mut p: *const c_char = std::ptr::null();
            // SAFETY: cuGetErrorName writes a static string.
            if unsafe { f(r, &mut p) } == 0 && !p.is_null() {
                name = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            }
        }
        Err(vendor_error(
            what,
            &name,
            r as i64,
            r == CUDA_ERROR_OUT_OF_MEMORY,
        ))
    }

    /// `cuDeviceGetAttribute(attr)` of device `ordinal`.
    fn device_attribute(&self, ordinal: usize, attr: c_int) -> Result<i32> {
        let mut v = 0;
        // SAFETY: `v` receives one int; the driver checks the ordinal and the attribute.
        self.check("cuDeviceGetAttribute", unsafe {
            (self.driver.cuDeviceGetAttribute)(&mut v, attr, ordinal as c_int)
        })?;
        Ok(v)
    }

    /// An optional driver entry point of device graphs, or Unsupported naming it.
    fn graph_fn<T: Copy>(&self, f: Option<T>, name: &str) -> Result<T> {
        f.ok_or_else(|| {
            Error::unsupported(format!(
                "device graphs are unavailable: {} lacks {name} (CUDA 11.4 or later has it)",
                self.driver.path
            ))
        })
    }

    fn nvrtc(&self) -> Result<&Nvrtc> {
        self.nvrtc
            .as_ref()
            .map_err(|e| Error::unsupported(format!("kernel compilation is unavailable: {e}")))
    }

    fn nvrtc_check(&self, what: &str, r: c_int) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let mut name = format!("NVRTC_ERROR_{r}");
        if let Ok(n) = &self.nvrtc
            && let Some(f) = n.nvrtcGetErrorString
        {
            // SAFETY: returns a static string.
            let p = unsafe { f(r) };
            if !p.is_null() {
                name = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            }
        }
        Err(vendor_error(what, &name, r as i64, false))
    }
}

fn h(v: u64) -> Handle {
    v as usize as Handle
}

static CUDA: OnceLock<std::result::Result<Arc<CudaVendor>, String>> = OnceLock::new();

/// The process's CUDA vendor, or why there is none (library missing, cuInit failed).
pub fn cuda() -> std::result::Result<Arc<CudaVendor>, String> {
    CUDA.get_or_init(|| load().map(Arc::new)).clone()
}

fn load() -> std::result::Result<CudaVendor, String> {
    let dirs = fixed_dirs();
    let (lib, path) = open_first(
        "libcuda.so.1 (the NVIDIA driver)",
        &candidates(
            &["libcuda.so.1", "libcuda.so"],
            "RB_CUDA_LIBRARY",
            &[],
            &dirs,
        ),
    )?;
    let driver = CudaDriver::load(lib, path)?;
    let nvrtc = open_first(
        "libnvrtc (NVRTC)",
        &candidates(
            &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"],
            "RB_NVRTC_LIBRARY",
            &["CUDA_PATH", "CUDA_HOME"],
            &dirs,
        ),
    )
    .and_then(|(l, p)| Nvrtc::load(l, p));
    let cublas = open_first(
        "libcublas (cuBLAS)",
        &candidates(
            &["libcublas.so.13", "libcublas.so.12", "libcublas.so"],
            "RB_CUBLAS_LIBRARY",
            &["CUDA_PATH", "CUDA_HOME"],
            &dirs,
        ),
    )
    .and_then(|(l, p)| Cublas::load(l, p));
    let mut v = CudaVendor {
        driver,
        nvrtc,
        cublas,
        driver_version: 0,
        contexts: Mutex::new(Vec::new()),
        cudnn: OnceLock::new(),
        lt: Mutex::new(LtState::default()),
    };
    // SAFETY: plain driver calls with valid out-pointers.
    let r = unsafe { (v.driver.cuInit)(0) };
    v.check("cuInit", r).map_err(|e| e.message)?;
    let mut ver = 0;
    unsafe { (v.driver.cuDriverGetVersion)(&mut ver) };
    v.driver_version = ver;
    Ok(v)
}

static NCCL: OnceLock<std::result::Result<Arc<super::nccl::CollLib>, String>> = OnceLock::new();

/// Loads libnccl (once per process).
pub fn nccl() -> std::result::Result<Arc<super::nccl::CollLib>, String> {
    NCCL.get_or_init(|| {
        let (l, p) = open_first(
            "libnccl (NCCL, NVIDIA's collective library)",
            &candidates(
                &["libnccl.so.2", "libnccl.so"],
                "RB_NCCL_LIBRARY",
                &["NCCL_HOME", "CUDA_PATH", "CUDA_HOME"],
                &fixed_dirs(),
            ),
        )?;
        Nccl::load(l, p).map(|t| super::nccl::CollLib::new(super::nccl::Table::Nccl(t)))
    })
    .clone()
}

impl Vendor for CudaVendor {
    fn collectives(&self) -> Result<Arc<super::nccl::CollLib>> {
        nccl().map_err(Error::unsupported)
    }
    fn kind(&self) -> DeviceKind {
        DeviceKind::Cuda
    }

    fn describe(&self) -> String {
        format!(
            "CUDA driver {}.{} ({}), {}, {}",
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10,
            self.driver.path,
            match &self.nvrtc {
                Ok(n) => n.path.clone(),
                Err(e) => e.clone(),
            },
            match &self.cublas {
                Ok(c) => c.path.clone(),
                Err(e) => e.clone(),
            }
        )
    }

    fn device_count(&self) -> Result<usize> {
        let mut n = 0;
        self.check("cuDeviceGetCount", unsafe {
            (self.driver.cuDeviceGetCount)(&mut n)
        })?;
        Ok(n.max(0) as usize)
    }

    fn bind(&self, ordinal: usize) -> Result<()> {
        let ctx = {
            let mut c = self.contexts.lock();
            if c.len() <= ordinal {
                c.resize(ordinal + 1, None);
            }
            match c[ordinal] {
                Some(x) => x,
                None => {
                    let mut dev = 0;
                    self.check("cuDeviceGet", unsafe {
                        (self.driver.cuDeviceGet)(&mut dev, ordinal as c_int)
                    })?;
                    let mut ctx: Handle = std::ptr::null_mut();
                    self.check("cuDevicePrimaryCtxRetain", unsafe {
                        (self.driver.cuDevicePrimaryCtxRetain)(&mut ctx, dev)
                    })?;
                    c[ordinal] = Some(ctx as usize);
                    ctx as usize
                }
            }
        };
        self.check("cuCtxSetCurrent", unsafe {
            (self.driver.cuCtxSetCurrent)(ctx as Handle)
        })
    }

    fn device_name(&self, ordinal: usize) -> Result<String> {
        let mut buf = [0u8; 256];
        self.check("cuDeviceGetName", unsafe {
            (self.driver.cuDeviceGetName)(buf.as_mut_ptr() as *mut c_char, 256, ordinal as c_int)
        })?;
        Ok(c_buf_to_string(&buf))
    }

    fn device_arch(&self, ordinal: usize) -> Result<String> {
        let major = self.device_attribute(ordinal, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = self.device_attribute(ordinal, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        Ok(format!("sm_{major}{minor}"))
    }

    fn attribute(&self, ordinal: usize, attr: Attr) -> Result<i32> {
        let a = match attr {
            Attr::ComputeUnits => CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            Attr::WarpSize => CU_DEVICE_ATTRIBUTE_WARP_SIZE,
            Attr::MaxThreadsPerBlock => CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
        };
        self.device_attribute(ordinal, a)
    }

    fn mem_alloc(&self, bytes: usize) -> Result<DevPtr> {
        let mut p: CUdeviceptr = 0;
        unsafe_call(|| {
            self.check("cuMemAlloc", unsafe {
                (self.driver.cuMemAlloc_v2)(&mut p, bytes)
            })
        })
        .map_err(|e| e.context(&format!("allocating {bytes} bytes")))?;
        Ok(DevPtr(p))
    }
    fn mem_free(&self, ptr: DevPtr) -> Result<()> {
        unsafe_call(|| self.check("cuMemFree", unsafe { (self.driver.cuMemFree_v2)(ptr.0) }))
    }
    fn mem_info(&self) -> Result<(u64, u64)> {
        let (mut f, mut t) = (0usize, 0usize);
        self.check("cuMemGetInfo", unsafe {
            (self.driver.cuMemGetInfo_v2)(&mut f, &mut t)
        })?;
        Ok((f as u64, t as u64))
    }
    fn host_alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        let f = self
            .driver
            .cuMemHostAlloc
            .ok_or_else(|| Error::unsupported("pinned memory: libcuda lacks cuMemHostAlloc"))?;
        let mut p: *mut c_void = std::ptr::null_mut();
        unsafe_call(|| self.check("cuMemHostAlloc", unsafe { f(&mut p, bytes, 0) }))?;
        Ok(p as *mut u8)
    }
    fn host_free_pinned(&self, ptr: *mut u8) -> Result<()> {
        let f = self
            .driver
            .cuMemFreeHost
            .ok_or_else(|| Error::unsupported("pinned memory: libcuda lacks cuMemFreeHost"))?;
        unsafe_call(|| self.check("cuMemFreeHost", unsafe { f(ptr as *mut c_void) }))
    }

    unsafe fn copy_h2d(
        &self,
        dst: DevPtr,
        src: *const u8,
        bytes: usize,
        s: RawStream,
    ) -> Result<()> {
        unsafe_call(|| {
            self.check("cuMemcpyHtoDAsync", unsafe {
                (self.driver.cuMemcpyHtoDAsync_v2)(dst.0, src as *const c_void, bytes, h(s.0))
            })
        })
    }
    unsafe fn copy_d2h(&self, dst: *mut u8, src: DevPtr, bytes: usize, s: RawStream) -> Result<()> {
        unsafe_call(|| {
            self.check("cuMemcpyDtoHAsync", unsafe {
                (self.driver.cuMemcpyDtoHAsync_v2)(dst as *mut c_void, src.0, bytes, h(s.0))
            })
        })
    }
    fn copy_d2d(&self, dst: DevPtr, src: DevPtr, bytes: usize, s: RawStream) -> Result<()> {
        self.check("cuMemcpyDtoDAsync", unsafe {
            (self.driver.cuMemcpyDtoDAsync_v2)(dst.0, src.0, bytes, h(s.0))
        })
    }
    fn memset_d8(&self, dst: DevPtr, value: u8, bytes: usize, s: RawStream) -> Result<()> {
        self.check("cuMemsetD8Async", unsafe {
            (self.driver.cuMemsetD8Async)(dst.0, value, bytes, h(s.0))
        })
    }

    fn device_synchronize(&self) -> Result<()> {
        unsafe_call(|| {
            self.check("cuCtxSynchronize", unsafe {
                (self.driver.cuCtxSynchronize)()
            })
        })
    }
    fn stream_create(&self) -> Result<RawStream> {
        let mut s: Handle = std::ptr::null_mut();
        // Flags 0: a blocking stream, ordered with the legacy default stream.
        self.check("cuStreamCreate", unsafe {
            (self.driver.cuStreamCreate)(&mut s, 0)
        })?;
        Ok(RawStream(s as usize as u64))
    }
    fn stream_destroy(&self, s: RawStream) -> Result<()> {
        self.check("cuStreamDestroy", unsafe {
            (self.driver.cuStreamDestroy_v2)(h(s.0))
        })
    }
    fn stream_synchronize(&self, s: RawStream) -> Result<()> {
        unsafe_call(|| {
            self.check("cuStreamSynchronize", unsafe {
                (self.driver.cuStreamSynchronize)(h(s.0))
            })
        })
    }
    fn stream_wait_event(&self, s: RawStream, event: u64) -> Result<()> {
        self.check("cuStreamWaitEvent", unsafe {
            (self.driver.cuStreamWaitEvent)(h(s.0), h(event), 0)
        })
    }

    fn event_create(&self, timing: bool) -> Result<u64> {
        let mut e: Handle = std::ptr::null_mut();
        let flags = if timing { 0 } else { CU_EVENT_DISABLE_TIMING };
        self.check("cuEventCreate", unsafe {
            (self.driver.cuEventCreate)(&mut e, flags)
        })?;
        Ok(e as usize as u64)
    }
    fn event_destroy(&self, event: u64) -> Result<()> {
        self.check("cuEventDestroy", unsafe {
            (self.driver.cuEventDestroy_v2)(h(event))
        })
    }
    fn event_record(&self, event: u64, s: RawStream) -> Result<()> {
        self.check("cuEventRecord", unsafe {
            (self.driver.cuEventRecord)(h(event), h(s.0))
        })
    }
    fn event_synchronize(&self, event: u64) -> Result<()> {
        unsafe_call(|| {
            self.check("cuEventSynchronize", unsafe {
                (self.driver.cuEventSynchronize)(h(event))
            })
        })
    }
    fn event_query(&self, event: u64) -> Result<bool> {
        let r = unsafe_call(|| unsafe { (self.driver.cuEventQuery)(h(event)) });
        if r == CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        self.check("cuEventQuery", r).map(|_| true)
    }
    fn event_elapsed_ms(&self, start: u64, end: u64) -> Result<f32> {
        let mut ms = 0f32;
        self.check("cuEventElapsedTime", unsafe {
            (self.driver.cuEventElapsedTime)(&mut ms, h(start), h(end))
        })?;
        Ok(ms)
    }

    fn module_load(&self, image: &[u8]) -> Result<u64> {
        let mut m: Handle = std::ptr::null_mut();
        self.check("cuModuleLoadData", unsafe {
            (self.driver.cuModuleLoadData)(&mut m, image.as_ptr() as *const c_void)
        })?;
        Ok(m as usize as u64)
    }
    fn module_unload(&self, module: u64) -> Result<()> {
        self.check("cuModuleUnload", unsafe {
            (self.driver.cuModuleUnload)(h(module))
        })
    }
    fn module_function(&self, module: u64, name: &str) -> Result<u64> {
        let c = CString::new(name).map_err(|_| Error::invalid("kernel name has a NUL byte"))?;
        let mut f: Handle = std::ptr::null_mut();
        self.check(&format!("cuModuleGetFunction({name})"), unsafe {
            (self.driver.cuModuleGetFunction)(&mut f, h(module), c.as_ptr())
        })?;
        Ok(f as usize as u64)
    }
    unsafe fn launch(
        &self,
        func: u64,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        s: RawStream,
        args: *mut *mut c_void,
    ) -> Result<()> {
        self.check("cuLaunchKernel", unsafe {
            (self.driver.cuLaunchKernel)(
                h(func),
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared_bytes,
                h(s.0),
                args,
                std::ptr::null_mut(),
            )
        })
    }

    fn has_early_launch(&self, ordinal: usize) -> bool {
        self.driver.cuLaunchKernelEx.is_some()
            && self
                .device_attribute(ordinal, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
                .is_ok_and(|major| major >= 9)
    }
    unsafe fn launch_early(
        &self,
        func: u64,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        s: RawStream,
        args: *mut *mut c_void,
    ) -> Result<()> {
        let Some(ex) = self.driver.cuLaunchKernelEx else {
            // SAFETY: the caller's contract.
            return unsafe { self.launch(func, grid, block, shared_bytes, s, args) };
        };
        let mut value = [0u64; 8];
        value[0] = 1; // programmaticStreamSerializationAllowed = 1 (little-endian int)
        let attr = CuLaunchAttribute {
            id: CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
            pad: [0; 4],
            value,
        };
        let config = CuLaunchConfig {
            grid,
            block,
            shared_bytes,
            stream: h(s.0),
            attrs: &attr,
            num_attrs: 1,
        };
        // SAFETY: `config` and `attr` outlive the call; the rest is the caller's contract.
        self.check("cuLaunchKernelEx", unsafe {
            ex(&config, h(func), args, std::ptr::null_mut())
        })
    }

    fn stream_begin_capture(&self, s: RawStream) -> Result<()> {
        let f = self.graph_fn(
            self.driver.cuStreamBeginCapture_v2,
            "cuStreamBeginCapture_v2",
        )?;
        // SAFETY: a stream handle of this context and a valid mode.
        self.check("cuStreamBeginCapture", unsafe {
            f(h(s.0), CU_STREAM_CAPTURE_MODE_RELAXED)
        })
    }
    fn stream_end_capture(&self, s: RawStream) -> Result<u64> {
        let end = self.graph_fn(self.driver.cuStreamEndCapture, "cuStreamEndCapture")?;
        let mut g: Handle = std::ptr::null_mut();
        // SAFETY: `g` receives the captured graph (NULL when the capture was invalidated).
        let r = unsafe { end(h(s.0), &mut g) };
        let destroy = self.driver.cuGraphDestroy;
        let drop_graph = |g: Handle| {
            if let (false, Some(d)) = (g.is_null(), destroy) {
                // SAFETY: a graph from cuStreamEndCapture, destroyed once.
                unsafe { d(g) };
            }
        };
        if let Err(e) = self.check("cuStreamEndCapture", r) {
            drop_graph(g);
            return Err(e);
        }
        if g.is_null() {
            return Err(Error::vendor("cuStreamEndCapture returned no graph"));
        }
        let inst = match self.graph_fn(
            self.driver.cuGraphInstantiateWithFlags,
            "cuGraphInstantiateWithFlags",
        ) {
            Ok(f) => f,
            Err(e) => {
                drop_graph(g);
                return Err(e);
            }
        };
        let mut exec: Handle = std::ptr::null_mut();
        // SAFETY: `g` is the captured graph; the template is not needed once instantiated.
        let r = unsafe { inst(&mut exec, g, 0) };
        drop_graph(g);
        self.check("cuGraphInstantiateWithFlags", r)?;
        Ok(exec as usize as u64)
    }
    fn graph_launch(&self, exec: u64, s: RawStream) -> Result<()> {
        let f = self.graph_fn(self.driver.cuGraphLaunch, "cuGraphLaunch")?;
        // SAFETY: an executable graph of this context and a stream handle.
        self.check("cuGraphLaunch", unsafe { f(h(exec), h(s.0)) })
    }
    fn graph_exec_destroy(&self, exec: u64) -> Result<()> {
        let f = self.graph_fn(self.driver.cuGraphExecDestroy, "cuGraphExecDestroy")?;
        // SAFETY: an executable graph, destroyed once.
        self.check("cuGraphExecDestroy", unsafe { f(h(exec)) })
    }

    fn rtc_compile(
        &self,
        source: &str,
        name: &str,
        options: &[String],
        arch: &str,
    ) -> Result<CodeImage> {
        let n = self.nvrtc()?;
        let src =
            CString::new(source).map_err(|_| Error::invalid("kernel source has a NUL byte"))?;
        let cname = CString::new(name).map_err(|_| Error::invalid("kernel name has a NUL byte"))?;
        let mut opts: Vec<CString> = self
            .rtc_arch_options(arch)
            .into_iter()
            .chain(options.iter().cloned())
            .map(|o| CString::new(o).map_err(|_| Error::invalid("compile option has a NUL byte")))
            .collect::<Result<_>>()?;
        opts.push(CString::new("--std=c++17").unwrap());
        let optp: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Handle = std::ptr::null_mut();
        self.nvrtc_check("nvrtcCreateProgram", unsafe {
            (n.nvrtcCreateProgram)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        })?;
        let r = unsafe { (n.nvrtcCompileProgram)(prog, optp.len() as c_int, optp.as_ptr()) };
        let log = {
            let mut len = 0usize;
            unsafe { (n.nvrtcGetProgramLogSize)(prog, &mut len) };
            let mut buf = vec![0u8; len.max(1)];
            unsafe { (n.nvrtcGetProgramLog)(prog, buf.as_mut_ptr() as *mut c_char) };
            c_buf_to_string(&buf)
        };
        let out = if r != 0 {
            let e = self.nvrtc_check("nvrtcCompileProgram", r).unwrap_err();
            Err(Error::new(
                crate::ErrorKind::Compilation,
                format!("compiling {name} for {arch} failed ({}):\n{log}", e.message),
            ))
        } else {
            let mut len = 0usize;
            self.nvrtc_check("nvrtcGetCUBINSize", unsafe {
                (n.nvrtcGetCUBINSize)(prog, &mut len)
            })
            .and_then(|_| {
                let mut buf = vec![0u8; len];
                self.nvrtc_check("nvrtcGetCUBIN", unsafe {
                    (n.nvrtcGetCUBIN)(prog, buf.as_mut_ptr() as *mut c_char)
                })?;
                Ok(buf)
            })
        };
        unsafe { (n.nvrtcDestroyProgram)(&mut prog) };
        out
    }

    fn rtc_version(&self) -> String {
        match &self.nvrtc {
            Ok(n) => {
                let (mut a, mut b) = (0, 0);
                unsafe { (n.nvrtcVersion)(&mut a, &mut b) };
                format!("nvrtc {a}.{b}")
            }
            Err(_) => "nvrtc (absent)".into(),
        }
    }

    fn rtc_arch_options(&self, arch: &str) -> Vec<String> {
        vec![format!("--gpu-architecture={arch}")]
    }

    fn blas_create(&self) -> Result<u64> {
        let c = self
            .cublas
            .as_ref()
            .map_err(|e| Error::unsupported(format!("gemm is unavailable: {e}")))?;
        let mut hd: Handle = std::ptr::null_mut();
        let r = unsafe { (c.cublasCreate_v2)(&mut hd) };
        if r != 0 {
            return Err(vendor_error(
                "cublasCreate",
                &cublas_status_name(r),
                r as i64,
                r == 3,
            ));
        }
        if let Some(f) = c.cublasSetMathMode {
            // Exact fp32: no TF32 unless asked for (DESIGN §6). f16/bf16 compute in f32: split-K
            // partial sums are reduced in f32 too, not rounded to the output type first.
            unsafe {
                f(
                    hd,
                    CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION,
                )
            };
        }
        Ok(hd as usize as u64)
    }

    fn lt_prepare(&self, ordinal: usize, p: &LtMatmul) -> Result<usize> {
        let lt = cublaslt().map_err(Error::unsupported)?;
        let mut st = self.lt.lock();
        let key = LtKey::of(ordinal, p);
        if let Some(e) = st.plans.get(&key) {
            return e
                .as_ref()
                .map(|e| e.ws)
                .map_err(|m| Error::unsupported(m.clone()));
        }
        let handle = match st.handles.get(&ordinal) {
            Some(h) => *h,
            None => {
                let create = lt_fn(lt.cublasLtCreate, "cublasLtCreate")?;
                let mut h: Handle = std::ptr::null_mut();
                lt_check("cublasLtCreate", unsafe { create(&mut h) })?;
                st.handles.insert(ordinal, h as usize);
                h as usize
            }
        };
        let plan = lt_plan(lt, handle, p);
        let r = plan.as_ref().map(|e| e.ws).map_err(|e| e.message.clone());
        st.plans.insert(key, plan.map_err(|e| e.message));
        r.map_err(Error::unsupported)
    }

    fn lt_matmul(
        &self,
        ordinal: usize,
        s: RawStream,
        p: &LtMatmul,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()> {
        let lt = cublaslt().map_err(Error::unsupported)?;
        let st = self.lt.lock();
        let handle = *st
            .handles
            .get(&ordinal)
            .ok_or_else(|| Error::internal("cublasLtMatmul before lt_prepare"))?;
        let e = match st.plans.get(&LtKey::of(ordinal, p)) {
            Some(Ok(e)) => e,
            _ => return Err(Error::internal("cublasLtMatmul before lt_prepare")),
        };
        if ws_bytes < e.ws {
            return Err(Error::internal(
                "cublasLtMatmul: workspace smaller than prepared",
            ));
        }
        // The bias pointer lives in the (cached) descriptor: set it for this call while the
        // lock is held (cublasLtMatmul reads the descriptor before it returns).
        let set = lt_fn(
            lt.cublasLtMatmulDescSetAttribute,
            "cublasLtMatmulDescSetAttribute",
        )?;
        if let Some(b) = p.bias {
            let ptr = b.0 as usize as *const c_void;
            lt_check("cublasLtMatmulDescSetAttribute(BIAS_POINTER)", unsafe {
                set(
                    e.desc as Handle,
                    LT_DESC_BIAS_POINTER,
                    &ptr as *const *const c_void as *const c_void,
                    std::mem::size_of::<*const c_void>(),
                )
            })?;
        }
        let mm = lt_fn(lt.cublasLtMatmul, "cublasLtMatmul")?;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let c = p.c.0 as usize as *mut c_void;
        let r = unsafe {
            mm(
                handle as Handle,
                e.desc as Handle,
                &alpha as *const f32 as *const c_void,
                p.a.0 as usize as *const c_void,
                e.la as Handle,
                p.b.0 as usize as *const c_void,
                e.lb as Handle,
                &beta as *const f32 as *const c_void,
                c,
                e.lc as Handle,
                c,
                e.lc as Handle,
                e.algo.as_ptr() as *const c_void,
                ws.0 as usize as *mut c_void,
                ws_bytes,
                s.0 as usize as Handle,
            )
        };
        if r != 0 {
            return Err(vendor_error(
                "cublasLtMatmul",
                &cublas_status_name(r),
                r as i64,
                r == 3,
            ));
        }
        Ok(())
    }

    fn dnn(&self) -> Result<&dyn super::Dnn> {
        match self.cudnn.get_or_init(|| load_cudnn(&self.driver)) {
            Ok(d) => Ok(d),
            Err(e) => Err(Error::unsupported(format!(
                "convolution is unavailable: {e}"
            ))),
        }
    }

    fn blas_gemm(&self, handle: u64, s: RawStream, d: &GemmDesc) -> Result<()> {
        let c = self
            .cublas
            .as_ref()
            .map_err(|e| Error::unsupported(format!("gemm is unavailable: {e}")))?;
        let ty = match d.dtype {
            DType::F32 => CUDA_R_32F,
            DType::F16 => CUDA_R_16F,
            DType::BF16 => CUDA_R_16BF,
            DType::F64 => CUDA_R_64F,
            other => {
                return Err(Error::dtype(format!(
                    "gemm: dtype {other} is not supported"
                )));
            }
        };
        let op = |t: Transpose| if t == Transpose::Yes { 1 } else { 0 };
        let i = |v: usize, what: &str| -> Result<c_int> {
            c_int::try_from(v).map_err(|_| {
                Error::invalid(format!(
                    "gemm: {what}={v} exceeds the 32-bit BLAS interface"
                ))
            })
        };
        let r = unsafe { (c.cublasSetStream_v2)(h(handle), h(s.0)) };
        if r != 0 {
            return Err(vendor_error(
                "cublasSetStream",
                &cublas_status_name(r),
                r as i64,
                false,
            ));
        }
        let (alpha, beta) = (d.alpha, d.beta);
        // f64 computes in f64 with double scalars; the others in f32 with float scalars.
        let (alpha64, beta64) = (f64::from(alpha), f64::from(beta));
        let (pa, pb) = if d.dtype == DType::F64 {
            (
                &alpha64 as *const f64 as *const c_void,
                &beta64 as *const f64 as *const c_void,
            )
        } else {
            (
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
            )
        };
        let compute = if d.dtype == DType::F64 {
            CUBLAS_COMPUTE_64F
        } else if d.dtype == DType::F32 && crate::device::blas::tf32_enabled() {
            CUBLAS_COMPUTE_32F_FAST_TF32
        } else {
            CUBLAS_COMPUTE_32F
        };
        let r = unsafe {
            (c.cublasGemmStridedBatchedEx)(
                h(handle),
                op(d.trans_a),
                op(d.trans_b),
                i(d.m, "m")?,
                i(d.n, "n")?,
                i(d.k, "k")?,
                pa,
                d.a.0 as usize as *const c_void,
                ty,
                i(d.lda, "lda")?,
                d.stride_a as i64,
                d.b.0 as usize as *const c_void,
                ty,
                i(d.ldb, "ldb")?,
                d.stride_b as i64,
                pb,
                d.c.0 as usize as *mut c_void,
                ty,
                i(d.ldc, "ldc")?,
                d.stride_c as i64,
                i(d.batch, "batch")?,
                compute,
                CUBLAS_GEMM_DEFAULT,
            )
        };
        if r != 0 {
            return Err(vendor_error(
                "cublasGemmStridedBatchedEx",
                &cublas_status_name(r),
                r as i64,
                r == 3,
            ));
        }
        Ok(())
    }
}

fn cublas_status_name(r: c_int) -> String {
    match r {
        1 => "CUBLAS_STATUS_NOT_INITIALIZED",
        3 => "CUBLAS_STATUS_ALLOC_FAILED",
        7 => "CUBLAS_STATUS_INVALID_VALUE",
        8 => "CUBLAS_STATUS_ARCH_MISMATCH",
        11 => "CUBLAS_STATUS_MAPPING_ERROR",
        13 => "CUBLAS_STATUS_EXECUTION_FAILED",
        14 => "CUBLAS_STATUS_INTERNAL_ERROR",
        15 => "CUBLAS_STATUS_NOT_SUPPORTED",
        16 => "CUBLAS_STATUS_LICENSE_ERROR",
        _ => return format!("CUBLAS_STATUS_{r}"),
    }
    .to_string()
}

// ---- cuDNN 9 (legacy API) and cuBLASLt ---------------------------------------------------

dyn_symbols! {
    /// libcudnn.so.9, the legacy (descriptor) API. Pooling entries are declared for
    /// completeness; pooling runs on the backend's own kernels (PyTorch's exact semantics).
    pub struct Cudnn {
        req cudnnGetVersion: fn() -> usize;
        opt cudnnGetErrorString: fn(c_int) -> *const c_char;
        req cudnnCreate: fn(*mut Handle) -> c_int;
        req cudnnDestroy: fn(Handle) -> c_int;
        req cudnnSetStream: fn(Handle, Handle) -> c_int;
        req cudnnCreateTensorDescriptor: fn(*mut Handle) -> c_int;
        req cudnnSetTensorNdDescriptor: fn(Handle, c_int, c_int, *const c_int, *const c_int) -> c_int;
        req cudnnDestroyTensorDescriptor: fn(Handle) -> c_int;
        req cudnnCreateFilterDescriptor: fn(*mut Handle) -> c_int;
        req cudnnSetFilterNdDescriptor: fn(Handle, c_int, c_int, c_int, *const c_int) -> c_int;
        req cudnnDestroyFilterDescriptor: fn(Handle) -> c_int;
        req cudnnCreateConvolutionDescriptor: fn(*mut Handle) -> c_int;
        req cudnnSetConvolutionNdDescriptor: fn(Handle, c_int, *const c_int, *const c_int, *const c_int, c_int, c_int) -> c_int;
        req cudnnSetConvolutionGroupCount: fn(Handle, c_int) -> c_int;
        req cudnnSetConvolutionMathType: fn(Handle, c_int) -> c_int;
        req cudnnDestroyConvolutionDescriptor: fn(Handle) -> c_int;
        opt cudnnGetConvolutionForwardAlgorithm_v7: fn(Handle, Handle, Handle, Handle, Handle, c_int, *mut c_int, *mut CudnnAlgoPerf) -> c_int;
        opt cudnnGetConvolutionBackwardDataAlgorithm_v7: fn(Handle, Handle, Handle, Handle, Handle, c_int, *mut c_int, *mut CudnnAlgoPerf) -> c_int;
        opt cudnnGetConvolutionBackwardFilterAlgorithm_v7: fn(Handle, Handle, Handle, Handle, Handle, c_int, *mut c_int, *mut CudnnAlgoPerf) -> c_int;
        req cudnnFindConvolutionForwardAlgorithmEx: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, Handle, *mut c_void, c_int, *mut c_int, *mut CudnnAlgoPerf, *mut c_void, usize) -> c_int;
        req cudnnGetConvolutionForwardWorkspaceSize: fn(Handle, Handle, Handle, Handle, Handle, c_int, *mut usize) -> c_int;
        req cudnnConvolutionForward: fn(Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, c_int, *mut c_void, usize, *const c_void, Handle, *mut c_void) -> c_int;
        req cudnnFindConvolutionBackwardDataAlgorithmEx: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, Handle, *mut c_void, c_int, *mut c_int, *mut CudnnAlgoPerf, *mut c_void, usize) -> c_int;
        req cudnnGetConvolutionBackwardDataWorkspaceSize: fn(Handle, Handle, Handle, Handle, Handle, c_int, *mut usize) -> c_int;
        req cudnnConvolutionBackwardData: fn(Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, c_int, *mut c_void, usize, *const c_void, Handle, *mut c_void) -> c_int;
        req cudnnFindConvolutionBackwardFilterAlgorithmEx: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, Handle, *mut c_void, c_int, *mut c_int, *mut CudnnAlgoPerf, *mut c_void, usize) -> c_int;
        req cudnnGetConvolutionBackwardFilterWorkspaceSize: fn(Handle, Handle, Handle, Handle, Handle, c_int, *mut usize) -> c_int;
        req cudnnConvolutionBackwardFilter: fn(Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, c_int, *mut c_void, usize, *const c_void, Handle, *mut c_void) -> c_int;
        opt cudnnCreatePoolingDescriptor: fn(*mut Handle) -> c_int;
        opt cudnnSetPoolingNdDescriptor: fn(Handle, c_int, c_int, c_int, *const c_int, *const c_int, *const c_int) -> c_int;
        opt cudnnDestroyPoolingDescriptor: fn(Handle) -> c_int;
        opt cudnnPoolingForward: fn(Handle, Handle, *const c_void, Handle, *const c_void, *const c_void, Handle, *mut c_void) -> c_int;
        opt cudnnPoolingBackward: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, *const c_void, Handle, *mut c_void) -> c_int;
        opt cudnnGetLastErrorString: fn(*mut c_char, usize) -> ();
        opt cudnnBackendCreateDescriptor: fn(c_int, *mut Handle) -> c_int;
        opt cudnnBackendDestroyDescriptor: fn(Handle) -> c_int;
        opt cudnnBackendFinalize: fn(Handle) -> c_int;
        opt cudnnBackendSetAttribute: fn(Handle, c_int, c_int, i64, *const c_void) -> c_int;
        opt cudnnBackendGetAttribute: fn(Handle, c_int, c_int, i64, *mut i64, *mut c_void) -> c_int;
        opt cudnnBackendExecute: fn(Handle, Handle, Handle) -> c_int;
    }
}

dyn_symbols! {
    /// libcublasLt: GEMMs with a fused bias/activation epilogue; every entry optional.
    pub struct CublasLt {
        opt cublasLtCreate: fn(*mut Handle) -> c_int;
        opt cublasLtDestroy: fn(Handle) -> c_int;
        opt cublasLtMatmul: fn(Handle, Handle, *const c_void, *const c_void, Handle, *const c_void, Handle, *const c_void, *const c_void, Handle, *mut c_void, Handle, *const c_void, *mut c_void, usize, Handle) -> c_int;
        opt cublasLtMatmulDescCreate: fn(*mut Handle, c_int, c_int) -> c_int;
        opt cublasLtMatmulDescDestroy: fn(Handle) -> c_int;
        opt cublasLtMatmulDescSetAttribute: fn(Handle, c_int, *const c_void, usize) -> c_int;
        opt cublasLtMatrixLayoutCreate: fn(*mut Handle, c_int, u64, u64, i64) -> c_int;
        opt cublasLtMatrixLayoutDestroy: fn(Handle) -> c_int;
        opt cublasLtMatrixLayoutSetAttribute: fn(Handle, c_int, *const c_void, usize) -> c_int;
        opt cublasLtMatmulPreferenceCreate: fn(*mut Handle) -> c_int;
        opt cublasLtMatmulPreferenceDestroy: fn(Handle) -> c_int;
        opt cublasLtMatmulPreferenceSetAttribute: fn(Handle, c_int, *const c_void, usize) -> c_int;
        opt cublasLtMatmulAlgoGetHeuristic: fn(Handle, Handle, Handle, Handle, Handle, Handle, Handle, c_int, *mut c_void, *mut c_int) -> c_int;
    }
}

/// Held (shared) by every call CUDA calls "potentially unsafe" during a stream capture in
/// global mode (allocations, synchronizes, pageable copies, queries), and exclusively while
/// cuDNN runs an exhaustive Find, which captures that way: another thread's synchronize
/// then waits for the Find instead of failing with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED.
static GLOBAL_CAPTURE: parking_lot::RwLock<()> = parking_lot::RwLock::new(());

fn unsafe_call<R>(f: impl FnOnce() -> R) -> R {
    let _shared = GLOBAL_CAPTURE.read();
    f()
}

// cublasLt.h: cublasLtMatmulDescAttributes_t, cublasLtEpilogue_t and the preference
// attribute used here.
const LT_DESC_TRANSA: c_int = 3;
const LT_DESC_TRANSB: c_int = 4;
const LT_DESC_EPILOGUE: c_int = 7;
const LT_DESC_BIAS_POINTER: c_int = 8;
const LT_EPILOGUE_DEFAULT: u32 = 1;
const LT_EPILOGUE_RELU: u32 = 2;
const LT_EPILOGUE_BIAS: u32 = 4;
const LT_EPILOGUE_GELU: u32 = 32;
const LT_PREF_MAX_WORKSPACE_BYTES: c_int = 1;
// cublasLtMatrixLayoutAttribute_t
const LT_LAYOUT_BATCH_COUNT: c_int = 5;
const LT_LAYOUT_STRIDED_BATCH_OFFSET: c_int = 6;
const CUBLAS_COMPUTE_32F_FAST_TF32: c_int = 77;
/// The most workspace a cuBLASLt algorithm may ask for (PyTorch's default is 1 MiB on most
/// GPUs and 32 MiB on Hopper).
const LT_MAX_WORKSPACE: u64 = 32 << 20;

/// `cublasLtMatmulHeuristicResult_t`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct LtHeuristic {
    algo: [u64; 8],
    workspace_size: usize,
    state: c_int,
    waves_count: f32,
    reserved: [c_int; 4],
}

/// A cuBLASLt problem as cached: device, shape, layout, epilogue, math, and the alignment of
/// the pointers (the heuristic picks algorithms for the alignment it sees).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct LtKey {
    ordinal: usize,
    dtype: DType,
    trans: (bool, bool),
    mnk: (usize, usize, usize),
    ld: (usize, usize, usize),
    bias: bool,
    epilogue: super::LtEpilogue,
    tf32: bool,
    align: u32,
    batch: super::LtBatch,
    algo: usize,
}

impl LtKey {
    fn of(ordinal: usize, p: &LtMatmul) -> Self {
        let bits = p.a.0 | p.b.0 | p.c.0 | p.bias.map_or(0, |b| b.0);
        LtKey {
            ordinal,
            dtype: p.dtype,
            trans: (p.trans_a == Transpose::Yes, p.trans_b == Transpose::Yes),
            mnk: (p.m, p.n, p.k),
            ld: (p.lda, p.ldb, p.ldc),
            bias: p.bias.is_some(),
            epilogue: p.epilogue,
            tf32: p.tf32,
            align: bits.trailing_zeros().min(8),
            batch: p.batch,
            algo: p.algo,
        }
    }
}

/// A prepared problem: its descriptors (kept for the process) and algorithm.
struct LtPlan {
    desc: usize,
    la: usize,
    lb: usize,
    lc: usize,
    algo: [u64; 8],
    ws: usize,
}

#[derive(Default)]
struct LtState {
    handles: HashMap<usize, usize>,
    /// Per problem: the plan, or why cuBLASLt cannot run it (asked once).
    plans: HashMap<LtKey, std::result::Result<LtPlan, String>>,
}

fn lt_fn<T>(f: Option<T>, name: &str) -> Result<T> {
    f.ok_or_else(|| Error::unsupported(format!("libcublasLt has no {name}")))
}

fn lt_check(what: &str, r: c_int) -> Result<()> {
    if r == 0 {
        return Ok(());
    }
    Err(vendor_error(what, &cublas_status_name(r), r as i64, r == 3))
}

/// Descriptors and the heuristic's algorithm of rank `p.algo` for `p`.
fn lt_plan(lt: &CublasLt, handle: usize, p: &LtMatmul) -> Result<LtPlan> {
    let ty = match p.dtype {
        DType::F32 => CUDA_R_32F,
        DType::F16 => CUDA_R_16F,
        DType::BF16 => CUDA_R_16BF,
        other => return Err(Error::dtype(format!("cublasLtMatmul: dtype {other}"))),
    };
    let compute = if p.dtype == DType::F32 && p.tf32 {
        CUBLAS_COMPUTE_32F_FAST_TF32
    } else {
        CUBLAS_COMPUTE_32F
    };
    let desc_create = lt_fn(lt.cublasLtMatmulDescCreate, "cublasLtMatmulDescCreate")?;
    let set = lt_fn(
        lt.cublasLtMatmulDescSetAttribute,
        "cublasLtMatmulDescSetAttribute",
    )?;
    let layout = lt_fn(lt.cublasLtMatrixLayoutCreate, "cublasLtMatrixLayoutCreate")?;
    let pref_create = lt_fn(
        lt.cublasLtMatmulPreferenceCreate,
        "cublasLtMatmulPreferenceCreate",
    )?;
    let pref_set = lt_fn(
        lt.cublasLtMatmulPreferenceSetAttribute,
        "cublasLtMatmulPreferenceSetAttribute",
    )?;
    let pref_destroy = lt_fn(
        lt.cublasLtMatmulPreferenceDestroy,
        "cublasLtMatmulPreferenceDestroy",
    )?;
    let heuristic = lt_fn(
        lt.cublasLtMatmulAlgoGetHeuristic,
        "cublasLtMatmulAlgoGetHeuristic",
    )?;
    let mut desc: Handle = std::ptr::null_mut();
    lt_check("cublasLtMatmulDescCreate", unsafe {
        desc_create(&mut desc, compute, CUDA_R_32F)
    })?;
    let attr = |a: c_int, v: u32, what: &str| -> Result<()> {
        lt_check(what, unsafe {
            set(desc, a, &v as *const u32 as *const c_void, 4)
        })
    };
    let t = |x: Transpose| (x == Transpose::Yes) as u32;
    attr(
        LT_DESC_TRANSA,
        t(p.trans_a),
        "cublasLtMatmulDescSetAttribute(TRANSA)",
    )?;
    attr(
        LT_DESC_TRANSB,
        t(p.trans_b),
        "cublasLtMatmulDescSetAttribute(TRANSB)",
    )?;
    let act = match p.epilogue {
        super::LtEpilogue::None => LT_EPILOGUE_DEFAULT,
        super::LtEpilogue::Relu => LT_EPILOGUE_RELU,
        super::LtEpilogue::GeluTanh => LT_EPILOGUE_GELU,
    };
    // RELU | BIAS = RELU_BIAS, GELU | BIAS = GELU_BIAS; DEFAULT stays DEFAULT or BIAS.
    let epi = match (p.bias.is_some(), act) {
        (true, LT_EPILOGUE_DEFAULT) => LT_EPILOGUE_BIAS,
        (true, a) => a | LT_EPILOGUE_BIAS,
        (false, a) => a,
    };
    attr(
        LT_DESC_EPILOGUE,
        epi,
        "cublasLtMatmulDescSetAttribute(EPILOGUE)",
    )?;
    if let Some(b) = p.bias {
        let ptr = b.0 as usize as *const c_void;
        lt_check("cublasLtMatmulDescSetAttribute(BIAS_POINTER)", unsafe {
            set(
                desc,
                LT_DESC_BIAS_POINTER,
                &ptr as *const *const c_void as *const c_void,
                std::mem::size_of::<*const c_void>(),
            )
        })?;
    }
    let (ar, ac) = match p.trans_a {
        Transpose::No => (p.m, p.k),
        Transpose::Yes => (p.k, p.m),
    };
    let (br, bc) = match p.trans_b {
        Transpose::No => (p.k, p.n),
        Transpose::Yes => (p.n, p.k),
    };
    let layout_set = if p.batch.count > 1 {
        Some(lt_fn(
            lt.cublasLtMatrixLayoutSetAttribute,
            "cublasLtMatrixLayoutSetAttribute",
        )?)
    } else {
        None
    };
    let mk = |r: usize, c: usize, ld: usize, stride: usize, what: &str| -> Result<Handle> {
        let mut l: Handle = std::ptr::null_mut();
        lt_check(what, unsafe {
            layout(&mut l, ty, r as u64, c as u64, ld as i64)
        })?;
        if let Some(set) = layout_set {
            let (count, stride) = (p.batch.count as i32, stride as i64);
            lt_check(what, unsafe {
                set(
                    l,
                    LT_LAYOUT_BATCH_COUNT,
                    &count as *const i32 as *const c_void,
                    4,
                )
            })?;
            lt_check(what, unsafe {
                set(
                    l,
                    LT_LAYOUT_STRIDED_BATCH_OFFSET,
                    &stride as *const i64 as *const c_void,
                    8,
                )
            })?;
        }
        Ok(l)
    };
    let la = mk(
        ar,
        ac,
        p.lda,
        p.batch.stride_a,
        "cublasLtMatrixLayoutCreate(A)",
    )?;
    let lb = mk(
        br,
        bc,
        p.ldb,
        p.batch.stride_b,
        "cublasLtMatrixLayoutCreate(B)",
    )?;
    let lc = mk(
        p.m,
        p.n,
        p.ldc,
        p.batch.stride_c,
        "cublasLtMatrixLayoutCreate(C)",
    )?;
    let mut pref: Handle = std::ptr::null_mut();
    lt_check("cublasLtMatmulPreferenceCreate", unsafe {
        pref_create(&mut pref)
    })?;
    let max_ws = LT_MAX_WORKSPACE;
    let r = unsafe {
        pref_set(
            pref,
            LT_PREF_MAX_WORKSPACE_BYTES,
            &max_ws as *const u64 as *const c_void,
            8,
        )
    };
    let mut all = vec![LtHeuristic::default(); p.algo + 1];
    let mut found: c_int = 0;
    let h = if r == 0 {
        unsafe {
            heuristic(
                handle as Handle,
                desc,
                la,
                lb,
                lc,
                lc,
                pref,
                all.len() as c_int,
                all.as_mut_ptr() as *mut c_void,
                &mut found,
            )
        }
    } else {
        r
    };
    unsafe { pref_destroy(pref) };
    let res = all[p.algo];
    if h != 0 || found as usize <= p.algo || res.state != 0 {
        // The descriptors are few and small; a problem cuBLASLt cannot run keeps none.
        if let Some(d) = lt.cublasLtMatrixLayoutDestroy {
            unsafe {
                d(la);
                d(lb);
                d(lc);
            }
        }
        if let Some(d) = lt.cublasLtMatmulDescDestroy {
            unsafe { d(desc) };
        }
        return Err(Error::unsupported(format!(
            "cublasLt has no algorithm {} for this problem ({}, {found} found)",
            p.algo,
            cublas_status_name(h)
        )));
    }
    Ok(LtPlan {
        desc: desc as usize,
        la: la as usize,
        lb: lb as usize,
        lc: lc as usize,
        algo: res.algo,
        ws: res.workspace_size,
    })
}

/// `cudnnConvolution{Fwd,BwdData,BwdFilter}AlgoPerf_t` (one layout for the three).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CudnnAlgoPerf {
    pub algo: c_int,
    pub status: c_int,
    pub time: f32,
    pub memory: usize,
    pub determinism: c_int,
    pub math_type: c_int,
    pub reserved: [c_int; 3],
}

const CUDNN_DATA_FLOAT: c_int = 0;
const CUDNN_DATA_HALF: c_int = 2;
const CUDNN_DATA_BFLOAT16: c_int = 9;
const CUDNN_TENSOR_NCHW: c_int = 0;
const CUDNN_TENSOR_NHWC: c_int = 1;
const CUDNN_CROSS_CORRELATION: c_int = 1;
const CUDNN_DEFAULT_MATH: c_int = 0;
const CUDNN_TENSOR_OP_MATH: c_int = 1;
/// FMA only: exact fp32 (CUDNN_DEFAULT_MATH permits TF32 on Ampere and later).
const CUDNN_FMA_MATH: c_int = 3;
/// Algorithm counts of cudnn 9 (fwd 8, bwd data 6, bwd filter 7); larger is harmless.
const CUDNN_MAX_ALGOS: usize = 16;
/// The search's workspace cap.
const CUDNN_FIND_WORKSPACE_CAP: usize = 1 << 30;

fn cudnn_dtype(d: DType) -> Result<c_int> {
    Ok(match d {
        DType::F32 => CUDNN_DATA_FLOAT,
        DType::F16 => CUDNN_DATA_HALF,
        DType::BF16 => CUDNN_DATA_BFLOAT16,
        other => {
            return Err(Error::dtype(format!(
                "convolution: dtype {other} is not supported (f32, f16 or bf16)"
            )));
        }
    })
}

/// The descriptors of one problem, created once and kept.
struct CudnnDescs {
    x: Handle,
    w: Handle,
    y: Handle,
    conv: Handle,
}

/// The graph API's marker in [`super::ConvAlgo::math`]: `algo` is then `-(rank + 1)`, the
/// rank of the engine among cuDNN's heuristic choices for the problem.
const GRAPH_MATH: c_int = 1000;
/// Engines an exhaustive search of a graph problem builds and times.
const GRAPH_SEARCH_ENGINES: usize = 8;
/// The same for f32 problems (TF32 engines, refused by the exactness probe, rank first).
const GRAPH_SEARCH_ENGINES_F32: usize = 48;

/// The driver's event (and copy) entry points, copied for the graph engines' timed search.
#[derive(Clone, Copy)]
struct EventFns {
    create: unsafe extern "C" fn(*mut Handle, c_uint) -> CUresult,
    destroy: unsafe extern "C" fn(Handle) -> CUresult,
    record: unsafe extern "C" fn(Handle, Handle) -> CUresult,
    sync: unsafe extern "C" fn(Handle) -> CUresult,
    elapsed: unsafe extern "C" fn(*mut f32, Handle, Handle) -> CUresult,
    d2h: unsafe extern "C" fn(*mut c_void, CUdeviceptr, usize, Handle) -> CUresult,
    stream_sync: unsafe extern "C" fn(Handle) -> CUresult,
}

type ConvPlans = Vec<(usize, Arc<cudnn_graph::Plan>)>;

/// The uids and pointers a convolution plan binds: a, b, c, and a fused epilogue's bias.
fn conv_binding(p: &super::ConvProblem, b: super::ConvBufs) -> (Vec<i64>, Vec<Handle>) {
    let mut uids = cudnn_graph::CONV_UIDS.to_vec();
    let mut ptrs: Vec<Handle> = [b.a, b.b, b.c]
        .iter()
        .map(|v| v.0 as usize as Handle)
        .collect();
    if p.epi != super::ConvEpilogue::None {
        uids.push(cudnn_graph::CONV_BIAS_UID);
        ptrs.push(b.bias.0 as usize as Handle);
    }
    (uids, ptrs)
}

/// cuDNN behind [`Dnn`]: the table, the legacy descriptors per problem, and the backend
/// (graph) API's plans: half-precision convolutions (by heuristic rank) and fused attention.
pub struct CudnnDnn {
    pub lib: Cudnn,
    descs: Mutex<std::collections::HashMap<super::ConvProblem, CudnnDescs>>,
    /// The backend API, when this cuDNN has it and `RB_CUDNN_LEGACY` is unset.
    graph: Option<cudnn_graph::Api>,
    /// Per (handle, problem): the engine count asked for and the plans that finalized.
    conv_plans: Mutex<HashMap<(u64, super::ConvProblem), (usize, ConvPlans)>>,
    /// Per (handle, problem, backward): the fused attention plan and its by-value scalars'
    /// uids.
    attn_plans: Mutex<HashMap<(u64, super::AttnProblem, bool), AttnPlan>>,
    ev: EventFns,
}

type AttnPlan = Arc<(cudnn_graph::Plan, Vec<i64>)>;

// SAFETY: descriptors are host objects; the map is behind a mutex and cuDNN calls on one
// handle are serialized by the caller.
unsafe impl Send for CudnnDnn {}
unsafe impl Sync for CudnnDnn {}

impl CudnnDnn {
    fn check(&self, what: &str, r: c_int) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let mut name = format!("CUDNN_STATUS_{r}");
        if let Some(f) = self.lib.cudnnGetErrorString {
            // SAFETY: returns a static string.
            let p = unsafe { f(r) };
            if !p.is_null() {
                name = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            }
        }
        // cuDNN 9: 4000-4999 are allocation failures (CUDNN_STATUS_ALLOC_FAILED = 4000).
        Err(vendor_error(
            what,
            &name,
            r as i64,
            (4000..5000).contains(&r),
        ))
    }

    /// Half-precision convolutions and fused epilogues go through the graph API only (its
    /// tensor-core engines; its fusion).
    fn use_graph(&self, p: &super::ConvProblem) -> bool {
        (p.dtype != DType::F32 || p.epi != super::ConvEpilogue::None) && self.graph.is_some()
    }

    /// Plain f32 forward problems try the graph API's engines beside the legacy Find in
    /// exhaustive searches (the faster exact one is taken): its implicit-GEMM engines are
    /// the ones PyTorch's convolutions reach, faster than the legacy algorithms' on sm_90.
    /// [`super::ConvProblem::plain_2d`] problems only.
    fn graph_beside_legacy(&self, p: &super::ConvProblem, exhaustive: bool) -> bool {
        exhaustive
            && self.graph.is_some()
            && p.dtype == DType::F32
            && p.dir == super::ConvDir::Forward
            && p.epi == super::ConvEpilogue::None
            && p.plain_2d()
    }

    /// Engines an exhaustive graph search builds and times: more for f32, whose exact
    /// engines rank below the TF32 ones.
    fn graph_engines(p: &super::ConvProblem) -> usize {
        if p.dtype == DType::F32 {
            GRAPH_SEARCH_ENGINES_F32
        } else {
            GRAPH_SEARCH_ENGINES
        }
    }

    /// The graph plans of `p` on handle `hd`: the first `limit` engines of the heuristics
    /// that finalize, made once (again with a larger `limit` when asked).
    fn graph_conv_plans(&self, hd: u64, p: &super::ConvProblem, limit: usize) -> Result<ConvPlans> {
        let api = self
            .graph
            .as_ref()
            .ok_or_else(|| Error::unsupported("cuDNN's backend API is unavailable"))?;
        let mut map = self.conv_plans.lock();
        if let Some((asked, plans)) = map.get(&(hd, *p))
            && *asked >= limit
        {
            return Ok(plans.clone());
        }
        let plans: ConvPlans = cudnn_graph::conv_plans(api, hd as usize, p, limit)?
            .into_iter()
            .map(|(r, pl)| (r, Arc::new(pl)))
            .collect();
        map.insert((hd, *p), (limit, plans.clone()));
        Ok(plans)
    }

    /// The plan of engine `rank` of `p` (a run's lookup: no copy of the problem's plan list;
    /// the plans are made when the problem is new to this process, e.g. its engine came from
    /// the tuning cache's file).
    fn graph_conv_plan(
        &self,
        hd: u64,
        p: &super::ConvProblem,
        rank: usize,
    ) -> Result<Arc<cudnn_graph::Plan>> {
        let held = self
            .conv_plans
            .lock()
            .get(&(hd, *p))
            .and_then(|(_, plans)| {
                plans
                    .iter()
                    .find(|(r, _)| *r == rank)
                    .map(|(_, pl)| pl.clone())
            });
        if let Some(pl) = held {
            return Ok(pl);
        }
        self.graph_conv_plans(hd, p, rank + 1)?
            .into_iter()
            .find(|(r, _)| *r == rank)
            .map(|(_, pl)| pl)
            .ok_or_else(|| {
                Error::unsupported(format!(
                    "cuDNN graph: engine {rank} of {p:?} no longer applies (tuning cache of another cuDNN?)"
                ))
            })
    }

    /// The graph search: heuristics' first engine, or (exhaustive) the fastest of the first
    /// [`Self::graph_engines`] timed on the given buffers within `ws_bytes` (with `probe`,
    /// only those whose result on the probe is exact f32; see [`super::Dnn::find`]), and
    /// its time in ms (NaN when nothing was timed).
    #[allow(clippy::too_many_arguments)]
    fn graph_find(
        &self,
        hd: u64,
        s: RawStream,
        p: &super::ConvProblem,
        b: super::ConvBufs,
        ws: DevPtr,
        ws_bytes: usize,
        exhaustive: bool,
        probe: Option<f32>,
    ) -> Result<(super::ConvAlgo, f32)> {
        let limit = if exhaustive {
            Self::graph_engines(p)
        } else {
            1
        };
        let plans = self.graph_conv_plans(hd, p, limit)?;
        let algo = |rank: usize, pl: &cudnn_graph::Plan| super::ConvAlgo {
            algo: -(rank as c_int) - 1,
            math: GRAPH_MATH,
            workspace: pl.workspace,
        };
        if !exhaustive {
            return Ok((algo(plans[0].0, &plans[0].1), f32::NAN));
        }
        let api = self.graph.as_ref().expect("graph plans imply the API");
        let (uids, ptrs) = conv_binding(p, b);
        let ev = self.ev;
        let _exclusive = GLOBAL_CAPTURE.write();
        let (mut e0, mut e1): (Handle, Handle) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: two events, destroyed below.
        unsafe {
            (ev.create)(&mut e0, 0);
            (ev.create)(&mut e1, 0);
        }
        let mut best: Option<(f32, super::ConvAlgo)> = None;
        let mut log = Vec::new();
        for (rank, pl) in &plans {
            if pl.workspace > ws_bytes {
                continue;
            }
            let run = || api.execute_device_only(hd as usize, pl, &uids, &ptrs, h(ws.0));
            let timed = (|| -> Result<f32> {
                run()?;
                if let Some(want) = probe {
                    let got = self.read_f32(s, b.c)?;
                    let close = (got - want).abs() <= want.abs() / 65536.0;
                    if !close {
                        return Err(Error::unsupported(format!(
                            "not exact f32 on the probe: {got} for {want}"
                        )));
                    }
                }
                // SAFETY: events of this context on the search stream.
                unsafe { (ev.record)(e0, h(s.0)) };
                for _ in 0..3 {
                    run()?;
                }
                let mut ms = 0f32;
                unsafe {
                    (ev.record)(e1, h(s.0));
                    (ev.sync)(e1);
                    (ev.elapsed)(&mut ms, e0, e1);
                }
                Ok(ms / 3.0)
            })();
            log.push((
                *rank,
                pl.workspace,
                timed.as_ref().map(|v| *v).map_err(|e| e.to_string()),
            ));
            if let Ok(ms) = timed
                && best.as_ref().is_none_or(|(b, _)| ms < *b)
            {
                best = Some((ms, algo(*rank, pl)));
            }
        }
        // SAFETY: created above.
        unsafe {
            (ev.destroy)(e0);
            (ev.destroy)(e1);
        }
        if std::env::var_os("RB_DNN_LOG").is_some() {
            eprintln!(
                "rb dnn: cuDNN graph search {p:?}: (rank, workspace, ms) {log:?} -> {best:?}"
            );
        }
        best.map(|(ms, a)| (a, ms)).ok_or_else(|| {
            Error::unsupported(format!(
                "cuDNN graph: no engine ran {p:?} within {ws_bytes} workspace bytes{}",
                if probe.is_some() { " exactly" } else { "" }
            ))
        })
    }

    /// Element 0 of `p` (f32), read on `s` after its work.
    fn read_f32(&self, s: RawStream, p: DevPtr) -> Result<f32> {
        let mut v = 0f32;
        // SAFETY: 4 bytes from a device buffer of the search into `v`, then the stream
        // synchronized before `v` is read.
        let r = unsafe { (self.ev.d2h)((&mut v as *mut f32).cast(), p.0, 4, h(s.0)) };
        if r != 0 {
            return Err(Error::internal(format!("cuMemcpyDtoHAsync: CUresult {r}")));
        }
        // SAFETY: the search stream.
        let r = unsafe { (self.ev.stream_sync)(h(s.0)) };
        if r != 0 {
            return Err(Error::internal(format!(
                "cuStreamSynchronize: CUresult {r}"
            )));
        }
        Ok(v)
    }

    fn attn_plan(&self, hd: u64, p: &super::AttnProblem, backward: bool) -> Result<AttnPlan> {
        let api = self
            .graph
            .as_ref()
            .ok_or_else(|| Error::unsupported("cuDNN's backend API is unavailable"))?;
        let mut map = self.attn_plans.lock();
        if let Some(pl) = map.get(&(hd, *p, backward)) {
            return Ok(pl.clone());
        }
        let pl = Arc::new(if backward {
            cudnn_graph::sdpa_backward_plan(api, hd as usize, p)?
        } else {
            cudnn_graph::sdpa_plan(api, hd as usize, p)?
        });
        map.insert((hd, *p, backward), pl.clone());
        Ok(pl)
    }

    /// Runs `f` with the descriptors of `p`, creating them on first use.
    fn with_descs<T>(
        &self,
        p: &super::ConvProblem,
        f: impl FnOnce(&CudnnDescs) -> Result<T>,
    ) -> Result<T> {
        let mut map = self.descs.lock();
        if !map.contains_key(p) {
            let d = self.create_descs(p)?;
            map.insert(*p, d);
        }
        f(&map[p])
    }

    fn create_descs(&self, p: &super::ConvProblem) -> Result<CudnnDescs> {
        let l = &self.lib;
        let dt = cudnn_dtype(p.dtype)?;
        let n = p.dims;
        let sp = p.spatial();
        let mut d = CudnnDescs {
            x: std::ptr::null_mut(),
            w: std::ptr::null_mut(),
            y: std::ptr::null_mut(),
            conv: std::ptr::null_mut(),
        };
        let r = (|| -> Result<()> {
            unsafe {
                self.check(
                    "cudnnCreateTensorDescriptor",
                    (l.cudnnCreateTensorDescriptor)(&mut d.x),
                )?;
                self.check(
                    "cudnnCreateTensorDescriptor",
                    (l.cudnnCreateTensorDescriptor)(&mut d.y),
                )?;
                self.check(
                    "cudnnCreateFilterDescriptor",
                    (l.cudnnCreateFilterDescriptor)(&mut d.w),
                )?;
                self.check(
                    "cudnnCreateConvolutionDescriptor",
                    (l.cudnnCreateConvolutionDescriptor)(&mut d.conv),
                )?;
                for (desc, dims) in [(d.x, &p.x), (d.y, &p.y)] {
                    let st = p.strides(&dims[..n]);
                    self.check(
                        "cudnnSetTensorNdDescriptor",
                        (l.cudnnSetTensorNdDescriptor)(
                            desc,
                            dt,
                            n as c_int,
                            dims.as_ptr(),
                            st.as_ptr(),
                        ),
                    )?;
                }
                self.check(
                    "cudnnSetFilterNdDescriptor",
                    (l.cudnnSetFilterNdDescriptor)(
                        d.w,
                        dt,
                        if p.channels_last {
                            CUDNN_TENSOR_NHWC
                        } else {
                            CUDNN_TENSOR_NCHW
                        },
                        n as c_int,
                        p.w.as_ptr(),
                    ),
                )?;
                let off = 3 - sp;
                self.check(
                    "cudnnSetConvolutionNdDescriptor",
                    (l.cudnnSetConvolutionNdDescriptor)(
                        d.conv,
                        sp as c_int,
                        p.pad[off..].as_ptr(),
                        p.stride[off..].as_ptr(),
                        p.dil[off..].as_ptr(),
                        CUDNN_CROSS_CORRELATION,
                        CUDNN_DATA_FLOAT,
                    ),
                )?;
                self.check(
                    "cudnnSetConvolutionGroupCount",
                    (l.cudnnSetConvolutionGroupCount)(d.conv, p.groups),
                )?;
                self.check(
                    "cudnnSetConvolutionMathType",
                    (l.cudnnSetConvolutionMathType)(d.conv, default_math(p.dtype)),
                )?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            self.destroy_descs(&d);
            return Err(e);
        }
        Ok(d)
    }

    fn destroy_descs(&self, d: &CudnnDescs) {
        let l = &self.lib;
        // SAFETY: each handle is null or a descriptor created above.
        unsafe {
            for t in [d.x, d.y] {
                if !t.is_null() {
                    (l.cudnnDestroyTensorDescriptor)(t);
                }
            }
            if !d.w.is_null() {
                (l.cudnnDestroyFilterDescriptor)(d.w);
            }
            if !d.conv.is_null() {
                (l.cudnnDestroyConvolutionDescriptor)(d.conv);
            }
        }
    }
}

/// The math type a problem may use: FMA only for f32 (exact), tensor cores for 16-bit.
fn default_math(d: DType) -> c_int {
    if d == DType::F32 {
        CUDNN_FMA_MATH
    } else {
        CUDNN_TENSOR_OP_MATH
    }
}

impl super::Dnn for CudnnDnn {
    fn describe(&self) -> String {
        // SAFETY: a plain query.
        let v = unsafe { (self.lib.cudnnGetVersion)() };
        format!(
            "cuDNN {}.{}.{} ({})",
            v / 10000,
            (v % 10000) / 100,
            v % 100,
            self.lib.path
        )
    }

    fn handle_create(&self) -> Result<u64> {
        let mut hd: Handle = std::ptr::null_mut();
        self.check("cudnnCreate", unsafe { (self.lib.cudnnCreate)(&mut hd) })?;
        Ok(hd as usize as u64)
    }

    fn channels_last(&self) -> bool {
        true
    }

    fn fuses_epilogue(&self) -> bool {
        self.graph.is_some()
    }

    fn attention_workspace(&self, hd: u64, p: &super::AttnProblem) -> Result<usize> {
        Ok(self.attn_plan(hd, p, false)?.0.workspace)
    }

    fn attention_backward_workspace(&self, hd: u64, p: &super::AttnProblem) -> Result<usize> {
        Ok(self.attn_plan(hd, p, true)?.0.workspace)
    }

    fn attention_backward(
        &self,
        hd: u64,
        s: RawStream,
        p: &super::AttnProblem,
        scale: f32,
        bufs: super::AttnBwdBufs,
        ws: DevPtr,
    ) -> Result<()> {
        self.attention_backward_impl(hd, s, p, scale, bufs, ws)
    }

    fn attention(
        &self,
        hd: u64,
        s: RawStream,
        p: &super::AttnProblem,
        scale: f32,
        bufs: super::AttnBufs,
        ws: DevPtr,
    ) -> Result<()> {
        self.attention_impl(hd, s, p, scale, bufs, ws)
    }

    fn find_workspace(&self, hd: u64, p: &super::ConvProblem, exhaustive: bool) -> Result<usize> {
        use super::ConvDir::*;
        if !exhaustive {
            // The heuristic query runs nothing.
            return Ok(0);
        }
        let graph_ws = if self.use_graph(p) || self.graph_beside_legacy(p, exhaustive) {
            self.graph_conv_plans(hd, p, Self::graph_engines(p))
                .ok()
                .map(|plans| {
                    plans
                        .iter()
                        .map(|(_, pl)| pl.workspace)
                        .filter(|&w| w <= CUDNN_FIND_WORKSPACE_CAP)
                        .max()
                        .unwrap_or(0)
                })
        } else {
            None
        };
        if self.use_graph(p)
            && let Some(w) = graph_ws
        {
            return Ok(w);
        }
        if p.epi != super::ConvEpilogue::None {
            return Ok(0);
        }
        let graph_ws = graph_ws.unwrap_or(0);
        let l = &self.lib;
        self.with_descs(p, |d| {
            let (count, f) = match p.dir {
                Forward => (8, l.cudnnGetConvolutionForwardWorkspaceSize),
                BackwardData => (6, l.cudnnGetConvolutionBackwardDataWorkspaceSize),
                BackwardWeight => (7, l.cudnnGetConvolutionBackwardFilterWorkspaceSize),
            };
            let mut most = 0usize;
            for algo in 0..count {
                let mut sz = 0usize;
                // SAFETY: descriptors of this problem; an algorithm that does not apply
                // answers an error, which is skipped.
                let r = unsafe {
                    match p.dir {
                        Forward => f(h(hd), d.x, d.w, d.conv, d.y, algo, &mut sz),
                        BackwardData => f(h(hd), d.w, d.y, d.conv, d.x, algo, &mut sz),
                        BackwardWeight => f(h(hd), d.x, d.y, d.conv, d.w, algo, &mut sz),
                    }
                };
                if r == 0 && sz <= CUDNN_FIND_WORKSPACE_CAP {
                    most = most.max(sz);
                }
            }
            Ok(most.max(graph_ws))
        })
    }

    fn find(
        &self,
        hd: u64,
        s: RawStream,
        p: &super::ConvProblem,
        b: super::ConvBufs,
        ws: DevPtr,
        ws_bytes: usize,
        exhaustive: bool,
        probe: Option<f32>,
    ) -> Result<super::ConvAlgo> {
        use super::ConvDir::*;
        let l = &self.lib;
        self.check("cudnnSetStream", unsafe {
            (l.cudnnSetStream)(h(hd), h(s.0))
        })?;
        let fused = p.epi != super::ConvEpilogue::None;
        if fused && (!exhaustive || probe.is_none() || !p.plain_2d()) {
            // An f32 epilogue is fused only where every engine is timed and checked exact.
            return Err(Error::unsupported(
                "cuDNN: a fused convolution epilogue needs the exhaustive search of a plain 2-D problem",
            ));
        }
        let log = std::env::var_os("RB_DNN_LOG").is_some();
        let mut graph_best = None;
        if self.use_graph(p) || self.graph_beside_legacy(p, exhaustive) && probe.is_some() {
            match self.graph_find(hd, s, p, b, ws, ws_bytes, exhaustive, probe) {
                Ok((a, _)) if self.use_graph(p) => return Ok(a),
                Ok(found) => graph_best = Some(found),
                Err(e) if fused => return Err(e),
                Err(e) if log => {
                    eprintln!("rb dnn: cuDNN graph {p:?} failed, legacy API instead: {e}")
                }
                Err(_) => {}
            }
        }
        if fused {
            return Err(Error::unsupported(
                "cuDNN's backend API is unavailable: no fused convolution epilogue",
            ));
        }
        let _exclusive = exhaustive.then(|| GLOBAL_CAPTURE.write());
        self.with_descs(p, |d| {
            let math = default_math(p.dtype);
            self.check("cudnnSetConvolutionMathType", unsafe {
                (l.cudnnSetConvolutionMathType)(d.conv, math)
            })?;
            let mut perf = [CudnnAlgoPerf::default(); CUDNN_MAX_ALGOS];
            let mut got: c_int = 0;
            let (cp, pa, pb, pc) = (
                ws.0 as usize as *mut c_void,
                b.a.0 as usize as *const c_void,
                b.b.0 as usize as *const c_void,
                b.c.0 as usize as *mut c_void,
            );
            let n = CUDNN_MAX_ALGOS as c_int;
            let pp = perf.as_mut_ptr();
            let missing = |what: &str| {
                Error::unsupported(format!("{} lacks {what}", self.lib.path))
            };
            // SAFETY: descriptors of this problem, device buffers of its sizes, `perf` holds
            // `n` entries.
            let (what, r) = unsafe {
                match (p.dir, exhaustive) {
                    (Forward, true) => (
                        "cudnnFindConvolutionForwardAlgorithmEx",
                        (l.cudnnFindConvolutionForwardAlgorithmEx)(
                            h(hd), d.x, pa, d.w, pb, d.conv, d.y, pc, n, &mut got, pp, cp,
                            ws_bytes,
                        ),
                    ),
                    (BackwardData, true) => (
                        "cudnnFindConvolutionBackwardDataAlgorithmEx",
                        (l.cudnnFindConvolutionBackwardDataAlgorithmEx)(
                            h(hd), d.w, pb, d.y, pa, d.conv, d.x, pc, n, &mut got, pp, cp,
                            ws_bytes,
                        ),
                    ),
                    (BackwardWeight, true) => (
                        "cudnnFindConvolutionBackwardFilterAlgorithmEx",
                        (l.cudnnFindConvolutionBackwardFilterAlgorithmEx)(
                            h(hd), d.x, pa, d.y, pb, d.conv, d.w, pc, n, &mut got, pp, cp,
                            ws_bytes,
                        ),
                    ),
                    (Forward, false) => (
                        "cudnnGetConvolutionForwardAlgorithm_v7",
                        l.cudnnGetConvolutionForwardAlgorithm_v7
                            .ok_or_else(|| missing("cudnnGetConvolutionForwardAlgorithm_v7"))?(
                            h(hd), d.x, d.w, d.conv, d.y, n, &mut got, pp,
                        ),
                    ),
                    (BackwardData, false) => (
                        "cudnnGetConvolutionBackwardDataAlgorithm_v7",
                        l.cudnnGetConvolutionBackwardDataAlgorithm_v7
                            .ok_or_else(|| missing("cudnnGetConvolutionBackwardDataAlgorithm_v7"))?(
                            h(hd), d.w, d.y, d.conv, d.x, n, &mut got, pp,
                        ),
                    ),
                    (BackwardWeight, false) => (
                        "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
                        l.cudnnGetConvolutionBackwardFilterAlgorithm_v7
                            .ok_or_else(|| missing("cudnnGetConvolutionBackwardFilterAlgorithm_v7"))?(
                            h(hd), d.x, d.y, d.conv, d.w, n, &mut got, pp,
                        ),
                    ),
                }
            };
            self.check(what, r)?;
            let cap = if exhaustive { ws_bytes } else { CUDNN_FIND_WORKSPACE_CAP };
            let results = &perf[..(got.max(0) as usize).min(CUDNN_MAX_ALGOS)];
            // Ranked best first. f32 never takes a tensor-op (TF32) result and always runs
            // with FMA math.
            let chosen = results.iter().find(|q| {
                q.status == 0
                    && q.memory <= cap
                    && (p.dtype != DType::F32
                        || q.math_type == CUDNN_FMA_MATH
                        || q.math_type == CUDNN_DEFAULT_MATH)
            });
            let pick = chosen.map(|q| super::ConvAlgo {
                    algo: q.algo,
                    math: if p.dtype == DType::F32 {
                        CUDNN_FMA_MATH
                    } else {
                        q.math_type
                    },
                    workspace: q.memory,
                });
            if log {
                eprintln!("rb dnn: {what} {p:?}: {results:?} -> {pick:?}");
            }
            // The graph's engine where it timed faster than the legacy Find's choice.
            let legacy_ms = chosen.map(|q| q.time);
            if let Some((ga, gms)) = graph_best
                && (pick.is_none() || legacy_ms.is_some_and(|t| gms < t))
            {
                if log {
                    eprintln!(
                        "rb dnn: {p:?}: the graph engine ({gms} ms) over the legacy {legacy_ms:?} ms"
                    );
                }
                return Ok(ga);
            }
            pick.ok_or_else(|| {
                Error::unsupported(format!(
                    "{what}: no algorithm applies to {p:?} (within {cap} workspace bytes): {results:?}"
                ))
            })
        })
    }

    fn run(
        &self,
        hd: u64,
        s: RawStream,
        p: &super::ConvProblem,
        algo: &super::ConvAlgo,
        b: super::ConvBufs,
        ws: DevPtr,
        ws_bytes: usize,
    ) -> Result<()> {
        use super::ConvDir::*;
        let l = &self.lib;
        self.check("cudnnSetStream", unsafe {
            (l.cudnnSetStream)(h(hd), h(s.0))
        })?;
        if algo.math == GRAPH_MATH {
            let rank = (-(algo.algo as i64) - 1).max(0) as usize;
            let pl = self.graph_conv_plan(hd, p, rank)?;
            if pl.workspace > ws_bytes {
                return Err(Error::invalid(format!(
                    "cuDNN graph: {} workspace bytes given, {} needed",
                    ws_bytes, pl.workspace
                )));
            }
            let api = self.graph.as_ref().expect("graph plans imply the API");
            let (uids, ptrs) = conv_binding(p, b);
            return api.execute_device_only(hd as usize, &pl, &uids, &ptrs, h(ws.0));
        }
        if p.epi != super::ConvEpilogue::None {
            return Err(Error::internal(
                "cuDNN: a fused convolution epilogue without its graph plan",
            ));
        }
        self.with_descs(p, |d| {
            self.check("cudnnSetConvolutionMathType", unsafe {
                (l.cudnnSetConvolutionMathType)(d.conv, algo.math)
            })?;
            let (alpha, beta) = (1f32, 0f32);
            let (ap, bp) = (
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
            );
            let (cp, pa, pb, pc) = (
                ws.0 as usize as *mut c_void,
                b.a.0 as usize as *const c_void,
                b.b.0 as usize as *const c_void,
                b.c.0 as usize as *mut c_void,
            );
            // SAFETY: as in `find`.
            let (what, r) = unsafe {
                match p.dir {
                    Forward => (
                        "cudnnConvolutionForward",
                        (l.cudnnConvolutionForward)(
                            h(hd),
                            ap,
                            d.x,
                            pa,
                            d.w,
                            pb,
                            d.conv,
                            algo.algo,
                            cp,
                            ws_bytes,
                            bp,
                            d.y,
                            pc,
                        ),
                    ),
                    BackwardData => (
                        "cudnnConvolutionBackwardData",
                        (l.cudnnConvolutionBackwardData)(
                            h(hd),
                            ap,
                            d.w,
                            pb,
                            d.y,
                            pa,
                            d.conv,
                            algo.algo,
                            cp,
                            ws_bytes,
                            bp,
                            d.x,
                            pc,
                        ),
                    ),
                    BackwardWeight => (
                        "cudnnConvolutionBackwardFilter",
                        (l.cudnnConvolutionBackwardFilter)(
                            h(hd),
                            ap,
                            d.x,
                            pa,
                            d.y,
                            pb,
                            d.conv,
                            algo.algo,
                            cp,
                            ws_bytes,
                            bp,
                            d.w,
                            pc,
                        ),
                    ),
                }
            };
            self.check(what, r)
        })
    }
}

impl CudnnDnn {
    fn attention_impl(
        &self,
        hd: u64,
        s: RawStream,
        p: &super::AttnProblem,
        scale: f32,
        b: super::AttnBufs,
        ws: DevPtr,
    ) -> Result<()> {
        let l = &self.lib;
        self.check("cudnnSetStream", unsafe {
            (l.cudnnSetStream)(h(hd), h(s.0))
        })?;
        let pl = self.attn_plan(hd, p, false)?;
        let api = self.graph.as_ref().expect("attention plans imply the API");
        // By value: the scale, then (causal) the value masked scores take (the lowest
        // finite float: every row keeps its first key, so no row is all masked).
        let masked = f32::MIN;
        let mut uids = cudnn_graph::SDPA_UIDS.to_vec();
        let mut ptrs: Vec<Handle> = [b.q, b.k, b.v, b.o, b.stats]
            .iter()
            .map(|d| d.0 as usize as Handle)
            .collect();
        for (i, &u) in pl.1.iter().enumerate() {
            uids.push(u);
            let v: &f32 = if i == 0 { &scale } else { &masked };
            ptrs.push(v as *const f32 as Handle);
        }
        api.execute(hd as usize, &pl.0, &uids, &ptrs, h(ws.0))
    }

    fn attention_backward_impl(
        &self,
        hd: u64,
        s: RawStream,
        p: &super::AttnProblem,
        scale: f32,
        b: super::AttnBwdBufs,
        ws: DevPtr,
    ) -> Result<()> {
        let l = &self.lib;
        self.check("cudnnSetStream", unsafe {
            (l.cudnnSetStream)(h(hd), h(s.0))
        })?;
        let pl = self.attn_plan(hd, p, true)?;
        let api = self.graph.as_ref().expect("attention plans imply the API");
        let (one, masked) = (1f32, f32::MIN);
        let mut uids = cudnn_graph::SDPA_BWD_UIDS.to_vec();
        let mut ptrs: Vec<Handle> = [
            b.q, b.k, b.v, b.o, b.dout, b.stats, b.dq, b.dk, b.dv, b.dsum, b.dq_acc,
        ]
        .iter()
        .map(|d| d.0 as usize as Handle)
        .collect();
        for (i, &u) in pl.1.iter().enumerate() {
            uids.push(u);
            let v: &f32 = match i {
                0 => &scale,
                1 => &one,
                _ => &masked,
            };
            ptrs.push(v as *const f32 as Handle);
        }
        api.execute(hd as usize, &pl.0, &uids, &ptrs, h(ws.0))
    }
}

impl Drop for CudnnDnn {
    fn drop(&mut self) {
        let map = std::mem::take(&mut *self.descs.lock());
        for d in map.values() {
            self.destroy_descs(d);
        }
    }
}

fn load_cudnn(driver: &CudaDriver) -> std::result::Result<CudnnDnn, String> {
    let (l, p) = open_first(
        "libcudnn.so.9 (cuDNN 9)",
        &candidates(
            &["libcudnn.so.9", "libcudnn.so"],
            "RB_CUDNN_LIBRARY",
            &["CUDNN_PATH", "CUDNN_HOME", "CUDA_PATH", "CUDA_HOME"],
            &fixed_dirs(),
        ),
    )?;
    let lib = Cudnn::load(l, p)?;
    // SAFETY: a plain query; the legacy API this table declares is cuDNN 9's.
    let v = unsafe { (lib.cudnnGetVersion)() };
    if !(90000..100000).contains(&v) {
        return Err(format!("{} is cuDNN version {v}, expected 9.x", lib.path));
    }
    let graph = if std::env::var_os("RB_CUDNN_LEGACY").is_some() {
        None
    } else {
        cudnn_graph::Api::of(&lib)
    };
    Ok(CudnnDnn {
        lib,
        descs: Mutex::new(Default::default()),
        graph,
        conv_plans: Mutex::new(Default::default()),
        attn_plans: Mutex::new(Default::default()),
        ev: EventFns {
            create: driver.cuEventCreate,
            destroy: driver.cuEventDestroy_v2,
            record: driver.cuEventRecord,
            sync: driver.cuEventSynchronize,
            elapsed: driver.cuEventElapsedTime,
            d2h: driver.cuMemcpyDtoHAsync_v2,
            stream_sync: driver.cuStreamSynchronize,
        },
    })
}

/// libcublasLt, loaded on first use (gemm_bias_act's fused epilogue).
pub fn cublaslt() -> std::result::Result<&'static CublasLt, String> {
    static LT: OnceLock<std::result::Result<CublasLt, String>> = OnceLock::new();
    LT.get_or_init(|| {
        let (l, p) = open_first(
            "libcublasLt (cuBLASLt)",
            &candidates(
                &["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"],
                "RB_CUBLASLT_LIBRARY",
                &["CUDA_PATH", "CUDA_HOME"],
                &fixed_dirs(),
            ),
        )?;
        CublasLt::load(l, p)
    })
    .as_ref()
    .map_err(|e| e.clone())
}
