//! AMD: the HIP runtime (libamdhip64), hiprtc, rocBLAS and MIOpen, loaded at run time (MIOpen
//! on first use).
//!
//! ABI notes (checked against the ROCm headers by the AMD conformance test):
//! * HIP error codes and `hipMemcpyKind` are not CUDA's (`hipErrorOutOfMemory` is 2,
//!   `hipErrorNoDevice` 100, `hipErrorNotReady` 600; the memcpy calls used here take no kind).
//! * HIP 6 changed `hipDeviceProp_t`; device facts come from `hipDeviceGetAttribute`, and the
//!   architecture string from `hipGetDevicePropertiesR0600` (gcnArchName at byte 1160 of a
//!   1472-byte struct) where present, else from the pre-6 `hipGetDeviceProperties` read into
//!   an oversized buffer and scanned for the "gfx..." name.
//! * hiprtc lives in `libhiprtc.so.6`/`.so.7` from ROCm 6 on (`.so.5` in 5.6/5.7), inside
//!   libamdhip64 in 5.0-5.5; rocBLAS is `librocblas.so.0` (ROCm <= 5.5), `.so.3` (5.6/5.7),
//!   `.so.4` (6.x), `.so.5` (7.x).
//! * MIOpen is cuDNN-shaped but not cuDNN: no filter descriptor (weights are a tensor), the
//!   workspace query takes (w, x) in that order for forward, Find is mandatory before a
//!   convolution and takes the buffers, alpha/beta come before/after differently.
//! * `rocblas_operation` is 111 (none) / 112 (transpose); `rocblas_datatype` f16 150,
//!   f32 151, bf16 168.

use super::{
    Attr, CodeImage, LtMatmul, Vendor, c_buf_to_string, candidates, open_first, vendor_error,
};
use crate::base::dtype::DType;
use crate::device::{DevPtr, DeviceKind, GemmDesc, RawStream, Transpose};
use crate::{Error, Result};
use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_void};
use std::sync::{Arc, OnceLock};

type HipError = c_int;
type Handle = *mut c_void;

/// `ncclResult_t` (RCCL's and NCCL's).
pub type NcclResult = c_int;
/// `ncclUniqueId`, passed by value to ncclCommInitRank.
pub use super::nccl::NcclUniqueId;

// RCCL's `ncclDataType_t`, `ncclRedOp_t` and `ncclResult_t` values and the id size, checked
// against rccl.h by the AMD conformance test; NVIDIA's nccl.h has the same values.
pub const NCCL_INT32: c_int = 2;
pub const NCCL_INT64: c_int = 4;
pub const NCCL_FLOAT16: c_int = 6;
pub const NCCL_FLOAT32: c_int = 7;
pub const NCCL_BFLOAT16: c_int = 9;
pub const NCCL_SUM: c_int = 0;
pub const NCCL_PROD: c_int = 1;
pub const NCCL_MAX: c_int = 2;
pub const NCCL_MIN: c_int = 3;
pub const NCCL_AVG: c_int = 4;
pub const NCCL_SUCCESS: c_int = 0;
pub const NCCL_UNIQUE_ID_BYTES: usize = 128;
dyn_symbols! {
    /// librccl, the collective library (AMD; same C API as NCCL). Loaded on the first
    /// communicator ([`super::nccl`] holds the calls).
    pub struct Rccl {
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
    /// libamdhip64, the HIP runtime.
    pub struct HipRuntime {
        req hipInit: fn(c_uint) -> HipError;
        req hipDriverGetVersion: fn(*mut c_int) -> HipError;
        req hipGetDeviceCount: fn(*mut c_int) -> HipError;
        req hipSetDevice: fn(c_int) -> HipError;
        req hipDeviceGetName: fn(*mut c_char, c_int, c_int) -> HipError;
        req hipDeviceGetAttribute: fn(*mut c_int, c_int, c_int) -> HipError;
        opt hipGetDevicePropertiesR0600: fn(*mut c_void, c_int) -> HipError;
        opt hipGetDeviceProperties: fn(*mut c_void, c_int) -> HipError;
        req hipDeviceSynchronize: fn() -> HipError;
        req hipMalloc: fn(*mut *mut c_void, usize) -> HipError;
        req hipFree: fn(*mut c_void) -> HipError;
        req hipMemGetInfo: fn(*mut usize, *mut usize) -> HipError;
        opt hipHostMalloc: fn(*mut *mut c_void, usize, c_uint) -> HipError;
        opt hipHostFree: fn(*mut c_void) -> HipError;
        req hipMemcpyHtoDAsync: fn(*mut c_void, *mut c_void, usize, Handle) -> HipError;
        req hipMemcpyDtoHAsync: fn(*mut c_void, *mut c_void, usize, Handle) -> HipError;
        req hipMemcpyDtoDAsync: fn(*mut c_void, *mut c_void, usize, Handle) -> HipError;
        req hipMemsetD8Async: fn(*mut c_void, u8, usize, Handle) -> HipError;
        req hipStreamCreate: fn(*mut Handle) -> HipError;
        req hipStreamDestroy: fn(Handle) -> HipError;
        req hipStreamSynchronize: fn(Handle) -> HipError;
        req hipStreamWaitEvent: fn(Handle, Handle, c_uint) -> HipError;
        req hipEventCreateWithFlags: fn(*mut Handle, c_uint) -> HipError;
        req hipEventDestroy: fn(Handle) -> HipError;
        req hipEventRecord: fn(Handle, Handle) -> HipError;
        req hipEventSynchronize: fn(Handle) -> HipError;
        req hipEventQuery: fn(Handle) -> HipError;
        req hipEventElapsedTime: fn(*mut f32, Handle, Handle) -> HipError;
        req hipModuleLoadData: fn(*mut Handle, *const c_void) -> HipError;
        req hipModuleUnload: fn(Handle) -> HipError;
        req hipModuleGetFunction: fn(*mut Handle, Handle, *const c_char) -> HipError;
        req hipModuleLaunchKernel: fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void) -> HipError;
        opt hipGetErrorName: fn(HipError) -> *const c_char;
        opt hipStreamBeginCapture: fn(Handle, c_int) -> HipError;
        opt hipStreamEndCapture: fn(Handle, *mut Handle) -> HipError;
        opt hipGraphInstantiate: fn(*mut Handle, Handle, *mut Handle, *mut c_char, usize) -> HipError;
        opt hipGraphLaunch: fn(Handle, Handle) -> HipError;
        opt hipGraphExecDestroy: fn(Handle) -> HipError;
        opt hipGraphDestroy: fn(Handle) -> HipError;
    }
}

dyn_symbols! {
    /// hiprtc (libhiprtc.so.6/.7, or inside libamdhip64 on ROCm 5).
    pub struct Hiprtc {
        req hiprtcVersion: fn(*mut c_int, *mut c_int) -> c_int;
        req hiprtcCreateProgram: fn(*mut Handle, *const c_char, *const c_char, c_int, *const *const c_char, *const *const c_char) -> c_int;
        req hiprtcCompileProgram: fn(Handle, c_int, *const *const c_char) -> c_int;
        req hiprtcDestroyProgram: fn(*mut Handle) -> c_int;
        req hiprtcGetProgramLogSize: fn(Handle, *mut usize) -> c_int;
        req hiprtcGetProgramLog: fn(Handle, *mut c_char) -> c_int;
        req hiprtcGetCodeSize: fn(Handle, *mut usize) -> c_int;
        req hiprtcGetCode: fn(Handle, *mut c_char) -> c_int;
        opt hiprtcGetErrorString: fn(c_int) -> *const c_char;
    }
}

dyn_symbols! {
    /// librocblas.
    pub struct Rocblas {
        req rocblas_create_handle: fn(*mut Handle) -> c_int;
        req rocblas_set_stream: fn(Handle, Handle) -> c_int;
        req rocblas_gemm_strided_batched_ex: fn(Handle, c_int, c_int, c_int, c_int, c_int, *const c_void, *const c_void, c_int, c_int, i64, *const c_void, c_int, c_int, i64, *const c_void, *const c_void, c_int, c_int, i64, *mut c_void, c_int, c_int, i64, c_int, c_int, c_int, i32, u32) -> c_int;
    }
}

dyn_symbols! {
    /// libhipblaslt (ROCm's BLASLt): GEMMs with a fused bias/activation epilogue, the same
    /// shape of API as cuBLASLt (vendor/cuda.rs); every entry optional, the library too.
    pub struct HipblasLt {
        opt hipblasLtCreate: fn(*mut Handle) -> c_int;
        opt hipblasLtDestroy: fn(Handle) -> c_int;
        opt hipblasLtMatmul: fn(Handle, Handle, *const c_void, *const c_void, Handle, *const c_void, Handle, *const c_void, *const c_void, Handle, *mut c_void, Handle, *const c_void, *mut c_void, usize, Handle) -> c_int;
        opt hipblasLtMatmulDescCreate: fn(*mut Handle, c_int, c_int) -> c_int;
        opt hipblasLtMatmulDescDestroy: fn(Handle) -> c_int;
        opt hipblasLtMatmulDescSetAttribute: fn(Handle, c_int, *const c_void, usize) -> c_int;
        opt hipblasLtMatrixLayoutCreate: fn(*mut Handle, c_int, u64, u64, i64) -> c_int;
        opt hipblasLtMatrixLayoutDestroy: fn(Handle) -> c_int;
        opt hipblasLtMatmulPreferenceCreate: fn(*mut Handle) -> c_int;
        opt hipblasLtMatmulPreferenceDestroy: fn(Handle) -> c_int;
        opt hipblasLtMatmulPreferenceSetAttribute: fn(Handle, c_int, *const c_void, usize) -> c_int;
        opt hipblasLtMatmulAlgoGetHeuristic: fn(Handle, Handle, Handle, Handle, Handle, Handle, Handle, c_int, *mut c_void, *mut c_int) -> c_int;
    }
}

dyn_symbols! {
    /// libMIOpen (ROCm's DNN library): handles, tensor and convolution descriptors, the
    /// convolutions with their workspace queries and Find (mandatory before each
    /// convolution's first call), and pooling (declared; pooling runs on the backend's own
    /// kernels, which have PyTorch's exact semantics).
    pub struct Miopen {
        opt miopenGetErrorString: fn(c_int) -> *const c_char;
        req miopenCreate: fn(*mut Handle) -> c_int;
        req miopenDestroy: fn(Handle) -> c_int;
        req miopenSetStream: fn(Handle, Handle) -> c_int;
        req miopenCreateTensorDescriptor: fn(*mut Handle) -> c_int;
        req miopenSetTensorDescriptor: fn(Handle, c_int, c_int, *const c_int, *const c_int) -> c_int;
        req miopenDestroyTensorDescriptor: fn(Handle) -> c_int;
        req miopenCreateConvolutionDescriptor: fn(*mut Handle) -> c_int;
        req miopenInitConvolutionNdDescriptor: fn(Handle, c_int, *const c_int, *const c_int, *const c_int, c_int) -> c_int;
        req miopenSetConvolutionGroupCount: fn(Handle, c_int) -> c_int;
        req miopenDestroyConvolutionDescriptor: fn(Handle) -> c_int;
        req miopenConvolutionForwardGetWorkSpaceSize: fn(Handle, Handle, Handle, Handle, Handle, *mut usize) -> c_int;
        req miopenFindConvolutionForwardAlgorithm: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, Handle, *mut c_void, c_int, *mut c_int, *mut c_void, *mut c_void, usize, bool) -> c_int;
        req miopenConvolutionForward: fn(Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, c_int, *const c_void, Handle, *mut c_void, *mut c_void, usize) -> c_int;
        req miopenConvolutionBackwardDataGetWorkSpaceSize: fn(Handle, Handle, Handle, Handle, Handle, *mut usize) -> c_int;
        req miopenFindConvolutionBackwardDataAlgorithm: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, Handle, *mut c_void, c_int, *mut c_int, *mut c_void, *mut c_void, usize, bool) -> c_int;
        req miopenConvolutionBackwardData: fn(Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, c_int, *const c_void, Handle, *mut c_void, *mut c_void, usize) -> c_int;
        req miopenConvolutionBackwardWeightsGetWorkSpaceSize: fn(Handle, Handle, Handle, Handle, Handle, *mut usize) -> c_int;
        req miopenFindConvolutionBackwardWeightsAlgorithm: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, Handle, *mut c_void, c_int, *mut c_int, *mut c_void, *mut c_void, usize, bool) -> c_int;
        req miopenConvolutionBackwardWeights: fn(Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, c_int, *const c_void, Handle, *mut c_void, *mut c_void, usize) -> c_int;
        opt miopenCreatePoolingDescriptor: fn(*mut Handle) -> c_int;
        opt miopenSetNdPoolingDescriptor: fn(Handle, c_int, c_int, *const c_int, *const c_int, *const c_int) -> c_int;
        opt miopenPoolingGetWorkSpaceSizeV2: fn(Handle, Handle, *mut usize) -> c_int;
        opt miopenPoolingForward: fn(Handle, Handle, *const c_void, Handle, *const c_void, *const c_void, Handle, *mut c_void, bool, *mut c_void, usize) -> c_int;
        opt miopenPoolingBackward: fn(Handle, Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, Handle, *const c_void, *const c_void, Handle, *mut c_void, *mut c_void) -> c_int;
        opt miopenDestroyPoolingDescriptor: fn(Handle) -> c_int;
    }
}

pub const HIP_ERROR_OUT_OF_MEMORY: HipError = 2;
pub const HIP_ERROR_NO_DEVICE: HipError = 100;
pub const HIP_ERROR_NOT_READY: HipError = 600;
pub const HIP_ATTR_COMPUTE_CAPABILITY_MAJOR: c_int = 23;
pub const HIP_ATTR_COMPUTE_CAPABILITY_MINOR: c_int = 61;
pub const HIP_ATTR_MAX_THREADS_PER_BLOCK: c_int = 56;
pub const HIP_ATTR_MULTIPROCESSOR_COUNT: c_int = 63;
pub const HIP_ATTR_WARP_SIZE: c_int = 87;
pub const HIP_EVENT_DISABLE_TIMING: c_uint = 2;
/// `hipStreamCaptureModeRelaxed` (Global 0, ThreadLocal 1).
pub const HIP_STREAM_CAPTURE_MODE_RELAXED: c_int = 2;
/// `sizeof(hipDeviceProp_tR0600)` and `offsetof(hipDeviceProp_tR0600, gcnArchName)`.
pub const HIP_PROPS_R0600_SIZE: usize = 1472;
pub const HIP_PROPS_R0600_GCN_ARCH_NAME: usize = 1160;
pub const ROCBLAS_OPERATION_NONE: c_int = 111;
pub const ROCBLAS_OPERATION_TRANSPOSE: c_int = 112;
pub const ROCBLAS_DATATYPE_F16_R: c_int = 150;
pub const ROCBLAS_DATATYPE_F32_R: c_int = 151;
pub const ROCBLAS_DATATYPE_BF16_R: c_int = 168;
pub const ROCBLAS_DATATYPE_F64_R: c_int = 152;
pub const ROCBLAS_GEMM_ALGO_STANDARD: c_int = 0;
/// hipblaslt.h / hipblas-common.h / library_types.h: the matmul descriptor attributes, the
/// epilogues and the preference attribute used, the compute and data types.
pub const HIPBLASLT_MATMUL_DESC_TRANSA: c_int = 0;
pub const HIPBLASLT_MATMUL_DESC_TRANSB: c_int = 1;
pub const HIPBLASLT_MATMUL_DESC_EPILOGUE: c_int = 2;
pub const HIPBLASLT_MATMUL_DESC_BIAS_POINTER: c_int = 3;
pub const HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE: c_int = 4;
pub const HIPBLASLT_EPILOGUE_DEFAULT: u32 = 1;
pub const HIPBLASLT_EPILOGUE_RELU: u32 = 2;
pub const HIPBLASLT_EPILOGUE_BIAS: u32 = 4;
pub const HIPBLASLT_EPILOGUE_RELU_BIAS: u32 = 6;
pub const HIPBLASLT_EPILOGUE_GELU: u32 = 32;
pub const HIPBLASLT_EPILOGUE_GELU_BIAS: u32 = 36;
pub const HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES: c_int = 1;
pub const HIPBLAS_COMPUTE_32F: c_int = 2;
pub const HIPBLAS_OP_N: c_int = 111;
pub const HIPBLAS_OP_T: c_int = 112;
pub const HIP_R_32F: c_int = 0;
pub const HIP_R_16F: c_int = 2;
pub const HIP_R_16BF: c_int = 14;
/// `sizeof(hipblasLtMatmulHeuristicResult_t)` and `sizeof(hipblasLtMatmulAlgo_t)`.
pub const HIPBLASLT_HEURISTIC_RESULT_SIZE: usize = 56;
pub const HIPBLASLT_ALGO_SIZE: usize = 24;
pub const MIOPEN_HALF: c_int = 0;
pub const MIOPEN_FLOAT: c_int = 1;
pub const MIOPEN_BFLOAT16: c_int = 5;
pub const MIOPEN_CONVOLUTION: c_int = 0;
pub const MIOPEN_POOLING_MAX: c_int = 0;
pub const MIOPEN_POOLING_AVERAGE: c_int = 1;
pub const MIOPEN_POOLING_AVERAGE_INCLUSIVE: c_int = 2;
/// `sizeof(miopenConvAlgoPerf_t)`: the algorithm (a union of enums), time, workspace bytes.
pub const MIOPEN_CONV_ALGO_PERF_SIZE: usize = 16;

fn hip_error_name(code: HipError) -> &'static str {
    match code {
        0 => "hipSuccess",
        1 => "hipErrorInvalidValue",
        2 => "hipErrorOutOfMemory",
        3 => "hipErrorNotInitialized",
        100 => "hipErrorNoDevice",
        101 => "hipErrorInvalidDevice",
        200 => "hipErrorInvalidImage",
        201 => "hipErrorInvalidContext",
        400 => "hipErrorInvalidHandle",
        500 => "hipErrorNotFound",
        600 => "hipErrorNotReady",
        700 => "hipErrorIllegalAddress",
        701 => "hipErrorLaunchOutOfResources",
        719 => "hipErrorLaunchFailure",
        900 => "hipErrorStreamCaptureUnsupported",
        901 => "hipErrorStreamCaptureInvalidated",
        902 => "hipErrorStreamCaptureMerge",
        903 => "hipErrorStreamCaptureUnmatched",
        904 => "hipErrorStreamCaptureUnjoined",
        905 => "hipErrorStreamCaptureIsolation",
        906 => "hipErrorStreamCaptureImplicit",
        907 => "hipErrorCapturedEvent",
        908 => "hipErrorStreamCaptureWrongThread",
        _ => "hipErrorUnknown",
    }
}

/// The AMD vendor: the HIP runtime (required), hiprtc and rocBLAS (each optional).
pub struct HipVendor {
    pub hip: HipRuntime,
    pub rtc: std::result::Result<Hiprtc, String>,
    pub rocblas: std::result::Result<Rocblas, String>,
    version: i32,
    /// MIOpen, loaded on first use (its absence disables only convolution).
    miopen: OnceLock<std::result::Result<MiopenDnn, String>>,
    /// hipBLASLt's handles and prepared problems (the library is loaded on first use:
    /// [`hipblaslt`]).
    lt: parking_lot::Mutex<LtState>,
}

// SAFETY: function tables and loaded libraries; the HIP runtime is thread-safe.
unsafe impl Send for HipVendor {}
unsafe impl Sync for HipVendor {}

fn h(v: u64) -> Handle {
    v as usize as Handle
}

static HIP: OnceLock<std::result::Result<Arc<HipVendor>, String>> = OnceLock::new();

/// The process's HIP vendor, or why there is none (library missing, no AMD GPU).
pub fn hip() -> std::result::Result<Arc<HipVendor>, String> {
    HIP.get_or_init(|| load().map(Arc::new)).clone()
}

const HIP_SONAMES: [&str; 4] = [
    "libamdhip64.so.7",
    "libamdhip64.so.6",
    "libamdhip64.so.5",
    "libamdhip64.so",
];

/// Loads the HIP runtime and its companions without initializing any device.
pub fn load_tables() -> std::result::Result<HipVendor, String> {
    let (lib, path) = open_first(
        "libamdhip64 (the HIP runtime)",
        &candidates(
            &HIP_SONAMES,
            "RB_HIP_LIBRARY",
            &["HIP_PATH", "ROCM_PATH"],
            &["/opt/rocm/lib"],
        ),
    )?;
    let hip = HipRuntime::load(lib, path.clone())?;
    let rtc = open_first(
        "libhiprtc",
        &candidates(
            &[
                "libhiprtc.so.7",
                "libhiprtc.so.6",
                "libhiprtc.so.5",
                "libhiprtc.so",
            ],
            "RB_HIPRTC_LIBRARY",
            &["HIP_PATH", "ROCM_PATH"],
            &["/opt/rocm/lib"],
        ),
    )
    // ROCm 5.0-5.5: hiprtc is part of libamdhip64 (5.6 and 5.7 ship libhiprtc.so.5).
    .or_else(|e| open_first("libhiprtc", std::slice::from_ref(&path)).map_err(|_| e))
    .and_then(|(l, p)| Hiprtc::load(l, p));
    let rocblas = open_first(
        "librocblas",
        &candidates(
            &[
                "librocblas.so.5",
                "librocblas.so.4",
                "librocblas.so.3",
                "librocblas.so.0",
                "librocblas.so",
            ],
            "RB_ROCBLAS_LIBRARY",
            &["ROCM_PATH", "HIP_PATH"],
            &["/opt/rocm/lib"],
        ),
    )
    .and_then(|(l, p)| Rocblas::load(l, p));
    Ok(HipVendor {
        hip,
        rtc,
        rocblas,
        version: 0,
        miopen: OnceLock::new(),
        lt: parking_lot::Mutex::new(LtState::default()),
    })
}

fn load() -> std::result::Result<HipVendor, String> {
    let mut v = load_tables()?;
    // SAFETY: plain runtime calls with valid out-pointers.
    // Without an AMD GPU, HIP 5.x's hipInit answers hipErrorInvalidDevice and
    // hipGetDeviceCount hipErrorNoDevice; the count's answer is the one that says why.
    let ri = unsafe { (v.hip.hipInit)(0) };
    let mut n = 0;
    let r = unsafe { (v.hip.hipGetDeviceCount)(&mut n) };
    if let Err(e) = v.check("hipGetDeviceCount", r) {
        let init = v
            .check("hipInit", ri)
            .err()
            .map(|e| format!(" ({})", e.message));
        return Err(format!("{}{}", e.message, init.unwrap_or_default()));
    }
    v.check("hipInit", ri).map_err(|e| e.message)?;
    if n <= 0 {
        return Err("hipGetDeviceCount: no AMD GPU (0 devices)".into());
    }
    let mut ver = 0;
    unsafe { (v.hip.hipDriverGetVersion)(&mut ver) };
    v.version = ver;
    Ok(v)
}

impl HipVendor {
    /// A HIP status as an error named by the runtime ("hipErrorNoDevice (100)").
    pub fn check(&self, what: &str, r: HipError) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let mut name = hip_error_name(r).to_string();
        if let Some(f) = self.hip.hipGetErrorName {
            // SAFETY: returns a static string.
            let p = unsafe { f(r) };
            if !p.is_null() {
                name = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            }
        }
        Err(vendor_error(
            what,
            &name,
            r as i64,
            r == HIP_ERROR_OUT_OF_MEMORY,
        ))
    }

    /// An optional runtime entry point of device graphs, or Unsupported naming it.
    fn graph_fn<T: Copy>(&self, f: Option<T>, name: &str) -> Result<T> {
        f.ok_or_else(|| {
            Error::unsupported(format!(
                "device graphs are unavailable: {} lacks {name}",
                self.hip.path
            ))
        })
    }

    fn rtc(&self) -> Result<&Hiprtc> {
        self.rtc
            .as_ref()
            .map_err(|e| Error::unsupported(format!("kernel compilation is unavailable: {e}")))
    }
}

/// Finds the "gfx..." architecture name in a device-properties buffer: at the R0600 offset
/// when that holds one, else the first "gfx" token after the 256-byte name.
pub fn arch_from_props(buf: &[u8], r0600: bool) -> Option<String> {
    let token = |at: usize| -> Option<String> {
        let s = buf.get(at..)?;
        if !s.starts_with(b"gfx") {
            return None;
        }
        let end = s
            .iter()
            .position(|&b| b == 0 || b == b':')
            .unwrap_or(s.len());
        let t = String::from_utf8_lossy(&s[..end]).into_owned();
        t[3..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric())
            .then_some(t)
    };
    if r0600 && let Some(t) = token(HIP_PROPS_R0600_GCN_ARCH_NAME) {
        return Some(t);
    }
    (256..buf.len().saturating_sub(3)).find_map(token)
}

static RCCL: OnceLock<std::result::Result<Arc<super::nccl::CollLib>, String>> = OnceLock::new();

/// Loads librccl (once per process).
pub fn rccl() -> std::result::Result<Arc<super::nccl::CollLib>, String> {
    RCCL.get_or_init(|| {
        let (l, p) = open_first(
            "librccl (RCCL, AMD's collective library)",
            &candidates(
                &["librccl.so.1", "librccl.so"],
                "RB_RCCL_LIBRARY",
                &["ROCM_PATH", "HIP_PATH"],
                &["/opt/rocm/lib"],
            ),
        )?;
        Rccl::load(l, p).map(|t| super::nccl::CollLib::new(super::nccl::Table::Rccl(t)))
    })
    .clone()
}

impl Vendor for HipVendor {
    fn collectives(&self) -> Result<Arc<super::nccl::CollLib>> {
        rccl().map_err(Error::unsupported)
    }
    fn kind(&self) -> DeviceKind {
        DeviceKind::Rocm
    }
    fn describe(&self) -> String {
        format!("HIP {} ({})", self.version, self.hip.path)
    }
    fn device_count(&self) -> Result<usize> {
        let mut n = 0;
        let r = unsafe { (self.hip.hipGetDeviceCount)(&mut n) };
        if r == HIP_ERROR_NO_DEVICE {
            return Ok(0);
        }
        self.check("hipGetDeviceCount", r)?;
        Ok(n.max(0) as usize)
    }
    fn bind(&self, ordinal: usize) -> Result<()> {
        self.check("hipSetDevice", unsafe {
            (self.hip.hipSetDevice)(ordinal as c_int)
        })
    }
    fn device_name(&self, ordinal: usize) -> Result<String> {
        let mut buf = [0u8; 256];
        self.check("hipDeviceGetName", unsafe {
            (self.hip.hipDeviceGetName)(buf.as_mut_ptr() as *mut c_char, 256, ordinal as c_int)
        })?;
        Ok(c_buf_to_string(&buf))
    }
    fn device_arch(&self, ordinal: usize) -> Result<String> {
        // Oversized and zeroed: the struct grows between HIP versions.
        let mut buf = vec![0u8; 8192];
        let (f, r0600) = match (
            self.hip.hipGetDevicePropertiesR0600,
            self.hip.hipGetDeviceProperties,
        ) {
            (Some(f), _) => (f, true),
            (None, Some(f)) => (f, false),
            (None, None) => {
                return Err(Error::unsupported(
                    "libamdhip64 exports no hipGetDeviceProperties: cannot read the architecture",
                ));
            }
        };
        self.check("hipGetDeviceProperties", unsafe {
            f(buf.as_mut_ptr() as *mut c_void, ordinal as c_int)
        })?;
        arch_from_props(&buf, r0600).ok_or_else(|| {
            Error::vendor("hipGetDeviceProperties: no gfx architecture name in the properties")
        })
    }
    fn attribute(&self, ordinal: usize, attr: Attr) -> Result<i32> {
        let a = match attr {
            Attr::ComputeUnits => HIP_ATTR_MULTIPROCESSOR_COUNT,
            Attr::WarpSize => HIP_ATTR_WARP_SIZE,
            Attr::MaxThreadsPerBlock => HIP_ATTR_MAX_THREADS_PER_BLOCK,
        };
        let mut v = 0;
        self.check("hipDeviceGetAttribute", unsafe {
            (self.hip.hipDeviceGetAttribute)(&mut v, a, ordinal as c_int)
        })?;
        Ok(v)
    }

    fn mem_alloc(&self, bytes: usize) -> Result<DevPtr> {
        let mut p: *mut c_void = std::ptr::null_mut();
        self.check("hipMalloc", unsafe { (self.hip.hipMalloc)(&mut p, bytes) })
            .map_err(|e| e.context(&format!("allocating {bytes} bytes")))?;
        Ok(DevPtr(p as usize as u64))
    }
    fn mem_free(&self, ptr: DevPtr) -> Result<()> {
        self.check("hipFree", unsafe { (self.hip.hipFree)(h(ptr.0)) })
    }
    fn mem_info(&self) -> Result<(u64, u64)> {
        let (mut f, mut t) = (0usize, 0usize);
        self.check("hipMemGetInfo", unsafe {
            (self.hip.hipMemGetInfo)(&mut f, &mut t)
        })?;
        Ok((f as u64, t as u64))
    }
    fn host_alloc_pinned(&self, bytes: usize) -> Result<*mut u8> {
        let f = self
            .hip
            .hipHostMalloc
            .ok_or_else(|| Error::unsupported("pinned memory: libamdhip64 lacks hipHostMalloc"))?;
        let mut p: *mut c_void = std::ptr::null_mut();
        self.check("hipHostMalloc", unsafe { f(&mut p, bytes, 0) })?;
        Ok(p as *mut u8)
    }
    fn host_free_pinned(&self, ptr: *mut u8) -> Result<()> {
        let f = self
            .hip
            .hipHostFree
            .ok_or_else(|| Error::unsupported("pinned memory: libamdhip64 lacks hipHostFree"))?;
        self.check("hipHostFree", unsafe { f(ptr as *mut c_void) })
    }

    unsafe fn copy_h2d(
        &self,
        dst: DevPtr,
        src: *const u8,
        bytes: usize,
        s: RawStream,
    ) -> Result<()> {
        self.check("hipMemcpyHtoDAsync", unsafe {
            (self.hip.hipMemcpyHtoDAsync)(h(dst.0), src as *mut c_void, bytes, h(s.0))
        })
    }
    unsafe fn copy_d2h(&self, dst: *mut u8, src: DevPtr, bytes: usize, s: RawStream) -> Result<()> {
        self.check("hipMemcpyDtoHAsync", unsafe {
            (self.hip.hipMemcpyDtoHAsync)(dst as *mut c_void, h(src.0), bytes, h(s.0))
        })
    }
    fn copy_d2d(&self, dst: DevPtr, src: DevPtr, bytes: usize, s: RawStream) -> Result<()> {
        self.check("hipMemcpyDtoDAsync", unsafe {
            (self.hip.hipMemcpyDtoDAsync)(h(dst.0), h(src.0), bytes, h(s.0))
        })
    }
    fn memset_d8(&self, dst: DevPtr, value: u8, bytes: usize, s: RawStream) -> Result<()> {
        self.check("hipMemsetD8Async", unsafe {
            (self.hip.hipMemsetD8Async)(h(dst.0), value, bytes, h(s.0))
        })
    }

    fn device_synchronize(&self) -> Result<()> {
        self.check("hipDeviceSynchronize", unsafe {
            (self.hip.hipDeviceSynchronize)()
        })
    }
    fn stream_create(&self) -> Result<RawStream> {
        let mut s: Handle = std::ptr::null_mut();
        self.check("hipStreamCreate", unsafe {
            (self.hip.hipStreamCreate)(&mut s)
        })?;
        Ok(RawStream(s as usize as u64))
    }
    fn stream_destroy(&self, s: RawStream) -> Result<()> {
        self.check("hipStreamDestroy", unsafe {
            (self.hip.hipStreamDestroy)(h(s.0))
        })
    }
    fn stream_synchronize(&self, s: RawStream) -> Result<()> {
        self.check("hipStreamSynchronize", unsafe {
            (self.hip.hipStreamSynchronize)(h(s.0))
        })
    }
    fn stream_wait_event(&self, s: RawStream, event: u64) -> Result<()> {
        self.check("hipStreamWaitEvent", unsafe {
            (self.hip.hipStreamWaitEvent)(h(s.0), h(event), 0)
        })
    }

    fn event_create(&self, timing: bool) -> Result<u64> {
        let mut e: Handle = std::ptr::null_mut();
        let flags = if timing { 0 } else { HIP_EVENT_DISABLE_TIMING };
        self.check("hipEventCreateWithFlags", unsafe {
            (self.hip.hipEventCreateWithFlags)(&mut e, flags)
        })?;
        Ok(e as usize as u64)
    }
    fn event_destroy(&self, event: u64) -> Result<()> {
        self.check("hipEventDestroy", unsafe {
            (self.hip.hipEventDestroy)(h(event))
        })
    }
    fn event_record(&self, event: u64, s: RawStream) -> Result<()> {
        self.check("hipEventRecord", unsafe {
            (self.hip.hipEventRecord)(h(event), h(s.0))
        })
    }
    fn event_synchronize(&self, event: u64) -> Result<()> {
        self.check("hipEventSynchronize", unsafe {
            (self.hip.hipEventSynchronize)(h(event))
        })
    }
    fn event_query(&self, event: u64) -> Result<bool> {
        let r = unsafe { (self.hip.hipEventQuery)(h(event)) };
        if r == HIP_ERROR_NOT_READY {
            return Ok(false);
        }
        self.check("hipEventQuery", r).map(|_| true)
    }
    fn event_elapsed_ms(&self, start: u64, end: u64) -> Result<f32> {
        let mut ms = 0f32;
        self.check("hipEventElapsedTime", unsafe {
            (self.hip.hipEventElapsedTime)(&mut ms, h(start), h(end))
        })?;
        Ok(ms)
    }

    fn module_load(&self, image: &[u8]) -> Result<u64> {
        let mut m: Handle = std::ptr::null_mut();
        self.check("hipModuleLoadData", unsafe {
            (self.hip.hipModuleLoadData)(&mut m, image.as_ptr() as *const c_void)
        })?;
        Ok(m as usize as u64)
    }
    fn module_unload(&self, module: u64) -> Result<()> {
        self.check("hipModuleUnload", unsafe {
            (self.hip.hipModuleUnload)(h(module))
        })
    }
    fn module_function(&self, module: u64, name: &str) -> Result<u64> {
        let c = CString::new(name).map_err(|_| Error::invalid("kernel name has a NUL byte"))?;
        let mut f: Handle = std::ptr::null_mut();
        self.check(&format!("hipModuleGetFunction({name})"), unsafe {
            (self.hip.hipModuleGetFunction)(&mut f, h(module), c.as_ptr())
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
        self.check("hipModuleLaunchKernel", unsafe {
            (self.hip.hipModuleLaunchKernel)(
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

    fn stream_begin_capture(&self, s: RawStream) -> Result<()> {
        let f = self.graph_fn(self.hip.hipStreamBeginCapture, "hipStreamBeginCapture")?;
        // SAFETY: a stream handle and a valid mode.
        self.check("hipStreamBeginCapture", unsafe {
            f(h(s.0), HIP_STREAM_CAPTURE_MODE_RELAXED)
        })
    }
    fn stream_end_capture(&self, s: RawStream) -> Result<u64> {
        let end = self.graph_fn(self.hip.hipStreamEndCapture, "hipStreamEndCapture")?;
        let mut g: Handle = std::ptr::null_mut();
        // SAFETY: `g` receives the captured graph (NULL when the capture was invalidated).
        let r = unsafe { end(h(s.0), &mut g) };
        let destroy = self.hip.hipGraphDestroy;
        let drop_graph = |g: Handle| {
            if let (false, Some(d)) = (g.is_null(), destroy) {
                // SAFETY: a graph from hipStreamEndCapture, destroyed once.
                unsafe { d(g) };
            }
        };
        if let Err(e) = self.check("hipStreamEndCapture", r) {
            drop_graph(g);
            return Err(e);
        }
        if g.is_null() {
            return Err(Error::vendor("hipStreamEndCapture returned no graph"));
        }
        let inst = match self.graph_fn(self.hip.hipGraphInstantiate, "hipGraphInstantiate") {
            Ok(f) => f,
            Err(e) => {
                drop_graph(g);
                return Err(e);
            }
        };
        let mut exec: Handle = std::ptr::null_mut();
        let mut log = [0u8; 512];
        // SAFETY: `g` is the captured graph; the log buffer holds `log.len()` bytes.
        let r = unsafe {
            inst(
                &mut exec,
                g,
                std::ptr::null_mut(),
                log.as_mut_ptr() as *mut c_char,
                log.len(),
            )
        };
        drop_graph(g);
        self.check("hipGraphInstantiate", r).map_err(|e| {
            let log = c_buf_to_string(&log);
            if log.is_empty() { e } else { e.context(&log) }
        })?;
        Ok(exec as usize as u64)
    }
    fn graph_launch(&self, exec: u64, s: RawStream) -> Result<()> {
        let f = self.graph_fn(self.hip.hipGraphLaunch, "hipGraphLaunch")?;
        // SAFETY: an executable graph and a stream handle.
        self.check("hipGraphLaunch", unsafe { f(h(exec), h(s.0)) })
    }
    fn graph_exec_destroy(&self, exec: u64) -> Result<()> {
        let f = self.graph_fn(self.hip.hipGraphExecDestroy, "hipGraphExecDestroy")?;
        // SAFETY: an executable graph, destroyed once.
        self.check("hipGraphExecDestroy", unsafe { f(h(exec)) })
    }

    fn rtc_compile(
        &self,
        source: &str,
        name: &str,
        options: &[String],
        arch: &str,
    ) -> Result<CodeImage> {
        let n = self.rtc()?;
        let src =
            CString::new(source).map_err(|_| Error::invalid("kernel source has a NUL byte"))?;
        let cname = CString::new(name).map_err(|_| Error::invalid("kernel name has a NUL byte"))?;
        let mut opts: Vec<CString> = self
            .rtc_arch_options(arch)
            .into_iter()
            .chain(options.iter().cloned())
            .map(|o| CString::new(o).map_err(|_| Error::invalid("compile option has a NUL byte")))
            .collect::<Result<_>>()?;
        opts.push(CString::new("-std=c++17").unwrap());
        let optp: Vec<*const c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        let mut prog: Handle = std::ptr::null_mut();
        let r = unsafe {
            (n.hiprtcCreateProgram)(
                &mut prog,
                src.as_ptr(),
                cname.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        if r != 0 {
            return Err(vendor_error(
                "hiprtcCreateProgram",
                &format!("HIPRTC_ERROR_{r}"),
                r as i64,
                false,
            ));
        }
        let r = unsafe { (n.hiprtcCompileProgram)(prog, optp.len() as c_int, optp.as_ptr()) };
        let log = {
            let mut len = 0usize;
            unsafe { (n.hiprtcGetProgramLogSize)(prog, &mut len) };
            let mut buf = vec![0u8; len.max(1)];
            unsafe { (n.hiprtcGetProgramLog)(prog, buf.as_mut_ptr() as *mut c_char) };
            c_buf_to_string(&buf)
        };
        let out = if r != 0 {
            Err(Error::new(
                crate::ErrorKind::Compilation,
                format!("compiling {name} for {arch} failed (hiprtc error {r}):\n{log}"),
            ))
        } else {
            let mut len = 0usize;
            unsafe { (n.hiprtcGetCodeSize)(prog, &mut len) };
            let mut buf = vec![0u8; len];
            let r = unsafe { (n.hiprtcGetCode)(prog, buf.as_mut_ptr() as *mut c_char) };
            if r != 0 {
                Err(vendor_error(
                    "hiprtcGetCode",
                    &format!("HIPRTC_ERROR_{r}"),
                    r as i64,
                    false,
                ))
            } else {
                Ok(buf)
            }
        };
        unsafe { (n.hiprtcDestroyProgram)(&mut prog) };
        out
    }

    fn rtc_version(&self) -> String {
        match &self.rtc {
            Ok(n) => {
                let (mut a, mut b) = (0, 0);
                unsafe { (n.hiprtcVersion)(&mut a, &mut b) };
                format!("hiprtc {a}.{b}")
            }
            Err(_) => "hiprtc (absent)".into(),
        }
    }

    fn rtc_arch_options(&self, arch: &str) -> Vec<String> {
        vec![format!("--offload-arch={arch}")]
    }

    fn lt_prepare(&self, ordinal: usize, p: &LtMatmul) -> Result<usize> {
        if p.batch.count > 1 || p.algo > 0 {
            // Not wired (no AMD GPU here to check them on): the caller's other way runs.
            return Err(Error::unsupported(
                "hipBLASLt: batched products and ranked algorithms are not wired",
            ));
        }
        let lt = hipblaslt().map_err(Error::unsupported)?;
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
                let create = lt_fn(lt.hipblasLtCreate, "hipblasLtCreate")?;
                let mut hd: Handle = std::ptr::null_mut();
                lt_check("hipblasLtCreate", unsafe { create(&mut hd) })?;
                st.handles.insert(ordinal, hd as usize);
                hd as usize
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
        let lt = hipblaslt().map_err(Error::unsupported)?;
        let st = self.lt.lock();
        let handle = *st
            .handles
            .get(&ordinal)
            .ok_or_else(|| Error::internal("hipblasLtMatmul before lt_prepare"))?;
        let e = match st.plans.get(&LtKey::of(ordinal, p)) {
            Some(Ok(e)) => e,
            _ => return Err(Error::internal("hipblasLtMatmul before lt_prepare")),
        };
        if ws_bytes < e.ws {
            return Err(Error::internal(
                "hipblasLtMatmul: workspace smaller than prepared",
            ));
        }
        // The bias pointer lives in the (cached) descriptor: set it for this call while the
        // lock is held (hipblasLtMatmul reads the descriptor before it returns).
        let set = lt_fn(
            lt.hipblasLtMatmulDescSetAttribute,
            "hipblasLtMatmulDescSetAttribute",
        )?;
        if let Some(b) = p.bias {
            let ptr = b.0 as usize as *const c_void;
            lt_check("hipblasLtMatmulDescSetAttribute(BIAS_POINTER)", unsafe {
                set(
                    e.desc as Handle,
                    HIPBLASLT_MATMUL_DESC_BIAS_POINTER,
                    &ptr as *const *const c_void as *const c_void,
                    std::mem::size_of::<*const c_void>(),
                )
            })?;
        }
        let mm = lt_fn(lt.hipblasLtMatmul, "hipblasLtMatmul")?;
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
                h(s.0),
            )
        };
        lt_check("hipblasLtMatmul", r)
    }

    fn dnn(&self) -> Result<&dyn super::Dnn> {
        match self.miopen.get_or_init(load_miopen) {
            Ok(d) => Ok(d),
            Err(e) => Err(Error::unsupported(format!(
                "convolution is unavailable: {e}"
            ))),
        }
    }

    fn blas_create(&self) -> Result<u64> {
        let rb = self
            .rocblas
            .as_ref()
            .map_err(|e| Error::unsupported(format!("gemm is unavailable: {e}")))?;
        let mut hd: Handle = std::ptr::null_mut();
        let r = unsafe { (rb.rocblas_create_handle)(&mut hd) };
        if r != 0 {
            return Err(vendor_error(
                "rocblas_create_handle",
                &rocblas_status_name(r),
                r as i64,
                r == 5,
            ));
        }
        Ok(hd as usize as u64)
    }

    fn blas_gemm(&self, handle: u64, s: RawStream, d: &GemmDesc) -> Result<()> {
        let rb = self
            .rocblas
            .as_ref()
            .map_err(|e| Error::unsupported(format!("gemm is unavailable: {e}")))?;
        let ty = match d.dtype {
            DType::F32 => ROCBLAS_DATATYPE_F32_R,
            DType::F16 => ROCBLAS_DATATYPE_F16_R,
            DType::BF16 => ROCBLAS_DATATYPE_BF16_R,
            DType::F64 => ROCBLAS_DATATYPE_F64_R,
            other => {
                return Err(Error::dtype(format!(
                    "gemm: dtype {other} is not supported"
                )));
            }
        };
        let op = |t: Transpose| {
            if t == Transpose::Yes {
                ROCBLAS_OPERATION_TRANSPOSE
            } else {
                ROCBLAS_OPERATION_NONE
            }
        };
        let i = |v: usize, what: &str| -> Result<c_int> {
            c_int::try_from(v).map_err(|_| {
                Error::invalid(format!(
                    "gemm: {what}={v} exceeds the 32-bit BLAS interface"
                ))
            })
        };
        let r = unsafe { (rb.rocblas_set_stream)(h(handle), h(s.0)) };
        if r != 0 {
            return Err(vendor_error(
                "rocblas_set_stream",
                &rocblas_status_name(r),
                r as i64,
                false,
            ));
        }
        let (alpha, beta) = (d.alpha, d.beta);
        // f64 computes in f64 with double scalars; the others in f32 with float scalars.
        let (alpha64, beta64) = (f64::from(alpha), f64::from(beta));
        let (pa, pb, compute) = if d.dtype == DType::F64 {
            (
                &alpha64 as *const f64 as *const c_void,
                &beta64 as *const f64 as *const c_void,
                ROCBLAS_DATATYPE_F64_R,
            )
        } else {
            (
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
                ROCBLAS_DATATYPE_F32_R,
            )
        };
        let c = d.c.0 as usize as *mut c_void;
        let r = unsafe {
            (rb.rocblas_gemm_strided_batched_ex)(
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
                c,
                ty,
                i(d.ldc, "ldc")?,
                d.stride_c as i64,
                c,
                ty,
                i(d.ldc, "ldc")?,
                d.stride_c as i64,
                i(d.batch, "batch")?,
                compute,
                ROCBLAS_GEMM_ALGO_STANDARD,
                0,
                0,
            )
        };
        if r != 0 {
            return Err(vendor_error(
                "rocblas_gemm_strided_batched_ex",
                &rocblas_status_name(r),
                r as i64,
                r == 5,
            ));
        }
        Ok(())
    }
}

fn rocblas_status_name(r: c_int) -> String {
    match r {
        1 => "rocblas_status_invalid_handle",
        2 => "rocblas_status_not_implemented",
        3 => "rocblas_status_invalid_pointer",
        4 => "rocblas_status_invalid_size",
        5 => "rocblas_status_memory_error",
        6 => "rocblas_status_internal_error",
        7 => "rocblas_status_perf_degraded",
        8 => "rocblas_status_size_query_mismatch",
        11 => "rocblas_status_invalid_value",
        _ => return format!("rocblas_status_{r}"),
    }
    .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn arch_is_found_in_props() {
        let mut buf = vec![0u8; 2048];
        buf[HIP_PROPS_R0600_GCN_ARCH_NAME..HIP_PROPS_R0600_GCN_ARCH_NAME + 22]
            .copy_from_slice(b"gfx90a:sramecc+:xnack-");
        assert_eq!(arch_from_props(&buf, true).as_deref(), Some("gfx90a"));
        assert_eq!(arch_from_props(&buf, false).as_deref(), Some("gfx90a"));
        let mut old = vec![0u8; 2048];
        old[400..407].copy_from_slice(b"gfx1030");
        assert_eq!(arch_from_props(&old, false).as_deref(), Some("gfx1030"));
        assert_eq!(arch_from_props(&vec![0u8; 2048], true), None);
    }

    /// Where the HIP runtime is installed (this project's CI machine has Debian's
    /// libamdhip64-5 and no AMD GPU), every required symbol resolves.
    #[test]
    fn hip_tables_resolve_where_installed() {
        match load_tables() {
            Ok(v) => {
                eprintln!(
                    "HIP tables from {}; optional missing: {:?}",
                    v.hip.path,
                    v.hip.missing_optional()
                );
                if let Ok(r) = &v.rtc {
                    eprintln!("hiprtc from {}", r.path);
                }
            }
            Err(e) => {
                assert!(e.contains("libamdhip64"), "{e}");
                eprintln!("skipped: {e}");
            }
        }
    }
}

fn miopen_status_name(r: c_int) -> String {
    match r {
        1 => "miopenStatusNotInitialized",
        2 => "miopenStatusInvalidValue",
        3 => "miopenStatusBadParm",
        4 => "miopenStatusAllocFailed",
        5 => "miopenStatusInternalError",
        6 => "miopenStatusNotImplemented",
        7 => "miopenStatusUnknownError",
        8 => "miopenStatusUnsupportedOp",
        _ => return format!("miopenStatus_{r}"),
    }
    .to_string()
}

/// `miopenConvAlgoPerf_t`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
struct MiopenPerf {
    algo: c_int,
    time: f32,
    memory: usize,
}
const _: () = assert!(std::mem::size_of::<MiopenPerf>() == MIOPEN_CONV_ALGO_PERF_SIZE);

fn miopen_dtype(d: DType) -> Result<c_int> {
    Ok(match d {
        DType::F32 => MIOPEN_FLOAT,
        DType::F16 => MIOPEN_HALF,
        DType::BF16 => MIOPEN_BFLOAT16,
        other => {
            return Err(Error::dtype(format!(
                "convolution: dtype {other} is not supported (f32, f16 or bf16)"
            )));
        }
    })
}

/// The descriptors of one problem (MIOpen describes weights with a tensor descriptor).
struct MiopenDescs {
    x: Handle,
    w: Handle,
    y: Handle,
    conv: Handle,
}

/// MIOpen behind [`super::Dnn`]: the table and the descriptors per problem.
pub struct MiopenDnn {
    pub lib: Miopen,
    descs: parking_lot::Mutex<std::collections::HashMap<super::ConvProblem, MiopenDescs>>,
}

// SAFETY: descriptors are host objects behind a mutex; calls on one handle are serialized by
// the caller.
unsafe impl Send for MiopenDnn {}
unsafe impl Sync for MiopenDnn {}

const MIOPEN_MAX_ALGOS: usize = 16;
const MIOPEN_FIND_WORKSPACE_CAP: usize = 1 << 30;

impl MiopenDnn {
    fn check(&self, what: &str, r: c_int) -> Result<()> {
        if r == 0 {
            return Ok(());
        }
        let mut name = miopen_status_name(r);
        if let Some(f) = self.lib.miopenGetErrorString {
            // SAFETY: returns a static string.
            let p = unsafe { f(r) };
            if !p.is_null() {
                name = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
            }
        }
        Err(vendor_error(what, &name, r as i64, r == 4))
    }

    fn with_descs<T>(
        &self,
        p: &super::ConvProblem,
        f: impl FnOnce(&MiopenDescs) -> Result<T>,
    ) -> Result<T> {
        let mut map = self.descs.lock();
        if !map.contains_key(p) {
            let d = self.create_descs(p)?;
            map.insert(*p, d);
        }
        f(&map[p])
    }

    fn create_descs(&self, p: &super::ConvProblem) -> Result<MiopenDescs> {
        let l = &self.lib;
        let dt = miopen_dtype(p.dtype)?;
        let n = p.dims;
        let sp = p.spatial();
        let mut d = MiopenDescs {
            x: std::ptr::null_mut(),
            w: std::ptr::null_mut(),
            y: std::ptr::null_mut(),
            conv: std::ptr::null_mut(),
        };
        let r = (|| -> Result<()> {
            unsafe {
                for t in [&mut d.x, &mut d.w, &mut d.y] {
                    self.check(
                        "miopenCreateTensorDescriptor",
                        (l.miopenCreateTensorDescriptor)(t),
                    )?;
                }
                for (desc, dims) in [(d.x, &p.x), (d.w, &p.w), (d.y, &p.y)] {
                    // Channels-last tensors are told by their strides (MIOpen reads the
                    // NHWC / NDHWC layout from them).
                    let st = p.strides(&dims[..n]);
                    self.check(
                        "miopenSetTensorDescriptor",
                        (l.miopenSetTensorDescriptor)(
                            desc,
                            dt,
                            n as c_int,
                            dims.as_ptr(),
                            st.as_ptr(),
                        ),
                    )?;
                }
                self.check(
                    "miopenCreateConvolutionDescriptor",
                    (l.miopenCreateConvolutionDescriptor)(&mut d.conv),
                )?;
                let off = 3 - sp;
                self.check(
                    "miopenInitConvolutionNdDescriptor",
                    (l.miopenInitConvolutionNdDescriptor)(
                        d.conv,
                        sp as c_int,
                        p.pad[off..].as_ptr(),
                        p.stride[off..].as_ptr(),
                        p.dil[off..].as_ptr(),
                        MIOPEN_CONVOLUTION,
                    ),
                )?;
                self.check(
                    "miopenSetConvolutionGroupCount",
                    (l.miopenSetConvolutionGroupCount)(d.conv, p.groups),
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

    fn destroy_descs(&self, d: &MiopenDescs) {
        let l = &self.lib;
        // SAFETY: each handle is null or a descriptor created above.
        unsafe {
            for t in [d.x, d.w, d.y] {
                if !t.is_null() {
                    (l.miopenDestroyTensorDescriptor)(t);
                }
            }
            if !d.conv.is_null() {
                (l.miopenDestroyConvolutionDescriptor)(d.conv);
            }
        }
    }
}

impl Drop for MiopenDnn {
    fn drop(&mut self) {
        let map = std::mem::take(&mut *self.descs.lock());
        for d in map.values() {
            self.destroy_descs(d);
        }
    }
}

impl super::Dnn for MiopenDnn {
    fn describe(&self) -> String {
        format!("MIOpen ({})", self.lib.path)
    }

    fn handle_create(&self) -> Result<u64> {
        let mut hd: Handle = std::ptr::null_mut();
        self.check("miopenCreate", unsafe { (self.lib.miopenCreate)(&mut hd) })?;
        Ok(hd as usize as u64)
    }

    fn find_workspace(&self, hd: u64, p: &super::ConvProblem, _exhaustive: bool) -> Result<usize> {
        use super::ConvDir::*;
        let l = &self.lib;
        self.with_descs(p, |d| {
            let mut sz = 0usize;
            // SAFETY: descriptors of this problem.
            let (what, r) = unsafe {
                match p.dir {
                    Forward => (
                        "miopenConvolutionForwardGetWorkSpaceSize",
                        (l.miopenConvolutionForwardGetWorkSpaceSize)(
                            h(hd),
                            d.w,
                            d.x,
                            d.conv,
                            d.y,
                            &mut sz,
                        ),
                    ),
                    BackwardData => (
                        "miopenConvolutionBackwardDataGetWorkSpaceSize",
                        (l.miopenConvolutionBackwardDataGetWorkSpaceSize)(
                            h(hd),
                            d.y,
                            d.w,
                            d.conv,
                            d.x,
                            &mut sz,
                        ),
                    ),
                    BackwardWeight => (
                        "miopenConvolutionBackwardWeightsGetWorkSpaceSize",
                        (l.miopenConvolutionBackwardWeightsGetWorkSpaceSize)(
                            h(hd),
                            d.y,
                            d.x,
                            d.conv,
                            d.w,
                            &mut sz,
                        ),
                    ),
                }
            };
            self.check(what, r)?;
            Ok(sz.min(MIOPEN_FIND_WORKSPACE_CAP))
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
        _probe: Option<f32>,
    ) -> Result<super::ConvAlgo> {
        use super::ConvDir::*;
        if p.epi != super::ConvEpilogue::None {
            return Err(Error::unsupported(
                "MIOpen: no fused convolution epilogue here",
            ));
        }
        let l = &self.lib;
        self.check("miopenSetStream", unsafe {
            (l.miopenSetStream)(h(hd), h(s.0))
        })?;
        self.with_descs(p, |d| {
            let mut perf = [MiopenPerf::default(); MIOPEN_MAX_ALGOS];
            let mut got: c_int = 0;
            let (cp, pa, pb, pc) = (
                ws.0 as usize as *mut c_void,
                b.a.0 as usize as *const c_void,
                b.b.0 as usize as *const c_void,
                b.c.0 as usize as *mut c_void,
            );
            let n = MIOPEN_MAX_ALGOS as c_int;
            let pp = perf.as_mut_ptr() as *mut c_void;
            // SAFETY: descriptors of this problem, device buffers of its sizes, `perf` holds
            // `n` entries of miopenConvAlgoPerf_t's layout.
            let (what, r) = unsafe {
                match p.dir {
                    Forward => (
                        "miopenFindConvolutionForwardAlgorithm",
                        (l.miopenFindConvolutionForwardAlgorithm)(
                            h(hd),
                            d.x,
                            pa,
                            d.w,
                            pb,
                            d.conv,
                            d.y,
                            pc,
                            n,
                            &mut got,
                            pp,
                            cp,
                            ws_bytes,
                            exhaustive,
                        ),
                    ),
                    BackwardData => (
                        "miopenFindConvolutionBackwardDataAlgorithm",
                        (l.miopenFindConvolutionBackwardDataAlgorithm)(
                            h(hd),
                            d.y,
                            pa,
                            d.w,
                            pb,
                            d.conv,
                            d.x,
                            pc,
                            n,
                            &mut got,
                            pp,
                            cp,
                            ws_bytes,
                            exhaustive,
                        ),
                    ),
                    BackwardWeight => (
                        "miopenFindConvolutionBackwardWeightsAlgorithm",
                        (l.miopenFindConvolutionBackwardWeightsAlgorithm)(
                            h(hd),
                            d.y,
                            pb,
                            d.x,
                            pa,
                            d.conv,
                            d.w,
                            pc,
                            n,
                            &mut got,
                            pp,
                            cp,
                            ws_bytes,
                            exhaustive,
                        ),
                    ),
                }
            };
            self.check(what, r)?;
            perf[..(got.max(0) as usize).min(MIOPEN_MAX_ALGOS)]
                .iter()
                .filter(|q| q.memory <= ws_bytes)
                .min_by(|a, b| a.time.total_cmp(&b.time))
                .map(|q| super::ConvAlgo {
                    algo: q.algo,
                    math: 0,
                    workspace: q.memory,
                })
                .ok_or_else(|| {
                    Error::unsupported(format!(
                        "{what}: no algorithm applies to {p:?} (within {ws_bytes} workspace bytes)"
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
        if p.epi != super::ConvEpilogue::None {
            return Err(Error::unsupported(
                "MIOpen: no fused convolution epilogue here",
            ));
        }
        let l = &self.lib;
        self.check("miopenSetStream", unsafe {
            (l.miopenSetStream)(h(hd), h(s.0))
        })?;
        self.with_descs(p, |d| {
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
                        "miopenConvolutionForward",
                        (l.miopenConvolutionForward)(
                            h(hd),
                            ap,
                            d.x,
                            pa,
                            d.w,
                            pb,
                            d.conv,
                            algo.algo,
                            bp,
                            d.y,
                            pc,
                            cp,
                            ws_bytes,
                        ),
                    ),
                    BackwardData => (
                        "miopenConvolutionBackwardData",
                        (l.miopenConvolutionBackwardData)(
                            h(hd),
                            ap,
                            d.y,
                            pa,
                            d.w,
                            pb,
                            d.conv,
                            algo.algo,
                            bp,
                            d.x,
                            pc,
                            cp,
                            ws_bytes,
                        ),
                    ),
                    BackwardWeight => (
                        "miopenConvolutionBackwardWeights",
                        (l.miopenConvolutionBackwardWeights)(
                            h(hd),
                            ap,
                            d.y,
                            pb,
                            d.x,
                            pa,
                            d.conv,
                            algo.algo,
                            bp,
                            d.w,
                            pc,
                            cp,
                            ws_bytes,
                        ),
                    ),
                }
            };
            self.check(what, r)
        })
    }
}

fn load_miopen() -> std::result::Result<MiopenDnn, String> {
    let (l, p) = open_first(
        "libMIOpen (MIOpen)",
        &candidates(
            &["libMIOpen.so.1", "libMIOpen.so"],
            "RB_MIOPEN_LIBRARY",
            &["ROCM_PATH", "HIP_PATH"],
            &["/opt/rocm/lib"],
        ),
    )?;
    Ok(MiopenDnn {
        lib: Miopen::load(l, p)?,
        descs: parking_lot::Mutex::new(Default::default()),
    })
}

// ---- hipBLASLt: GEMM + bias + activation epilogues (the cuBLASLt path of vendor/cuda.rs,
// with hipBLASLt's enum values).

/// The most workspace a hipBLASLt algorithm may ask for (as the cuBLASLt path).
const LT_MAX_WORKSPACE: u64 = 32 << 20;

/// `hipblasLtMatmulHeuristicResult_t`: the algorithm (`hipblasLtMatmulAlgo_t`: 16 bytes of
/// data and its `max_workspace_bytes`), the workspace it needs, its status, waves, reserved.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct LtHeuristic {
    algo: [u64; 3],
    workspace_size: usize,
    state: c_int,
    waves_count: f32,
    reserved: [c_int; 4],
}
const _: () = assert!(std::mem::size_of::<LtHeuristic>() == HIPBLASLT_HEURISTIC_RESULT_SIZE);
const _: () = assert!(std::mem::size_of::<[u64; 3]>() == HIPBLASLT_ALGO_SIZE);

/// A hipBLASLt problem as cached: device, shape, layout, epilogue and the alignment of the
/// pointers (the heuristic picks algorithms for the alignment it sees). f32 math is exact
/// (`tf32` does not apply: hipBLASLt's xf32 is not TF32).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct LtKey {
    ordinal: usize,
    dtype: DType,
    trans: (bool, bool),
    mnk: (usize, usize, usize),
    ld: (usize, usize, usize),
    bias: bool,
    epilogue: super::LtEpilogue,
    align: u32,
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
            align: bits.trailing_zeros().min(8),
        }
    }
}

/// A prepared problem: its descriptors (kept for the process) and algorithm.
struct LtPlan {
    desc: usize,
    la: usize,
    lb: usize,
    lc: usize,
    algo: [u64; 3],
    ws: usize,
}

#[derive(Default)]
struct LtState {
    handles: std::collections::HashMap<usize, usize>,
    /// Per problem: the plan, or why hipBLASLt cannot run it (asked once).
    plans: std::collections::HashMap<LtKey, std::result::Result<LtPlan, String>>,
}

// SAFETY: the descriptors and handles are plain addresses used under the mutex.
unsafe impl Send for LtState {}

/// The process's hipBLASLt, loaded on first use, or why there is none.
pub fn hipblaslt() -> std::result::Result<&'static HipblasLt, String> {
    static LT: OnceLock<std::result::Result<HipblasLt, String>> = OnceLock::new();
    LT.get_or_init(|| {
        let (l, p) = open_first(
            "libhipblaslt (hipBLASLt)",
            &candidates(
                &["libhipblaslt.so.1", "libhipblaslt.so.0", "libhipblaslt.so"],
                "RB_HIPBLASLT_LIBRARY",
                &["ROCM_PATH", "HIP_PATH"],
                &["/opt/rocm/lib"],
            ),
        )?;
        HipblasLt::load(l, p)
    })
    .as_ref()
    .map_err(|e| e.clone())
}

fn lt_fn<T>(f: Option<T>, name: &str) -> Result<T> {
    f.ok_or_else(|| Error::unsupported(format!("libhipblaslt has no {name}")))
}

fn lt_check(what: &str, r: c_int) -> Result<()> {
    if r == 0 {
        return Ok(());
    }
    Err(vendor_error(
        what,
        &hipblas_status_name(r),
        r as i64,
        r == 2,
    ))
}

fn hipblas_status_name(r: c_int) -> String {
    match r {
        0 => "HIPBLAS_STATUS_SUCCESS",
        1 => "HIPBLAS_STATUS_NOT_INITIALIZED",
        2 => "HIPBLAS_STATUS_ALLOC_FAILED",
        3 => "HIPBLAS_STATUS_INVALID_VALUE",
        4 => "HIPBLAS_STATUS_MAPPING_ERROR",
        5 => "HIPBLAS_STATUS_EXECUTION_FAILED",
        6 => "HIPBLAS_STATUS_INTERNAL_ERROR",
        7 => "HIPBLAS_STATUS_NOT_SUPPORTED",
        8 => "HIPBLAS_STATUS_ARCH_MISMATCH",
        9 => "HIPBLAS_STATUS_HANDLE_IS_NULLPTR",
        10 => "HIPBLAS_STATUS_INVALID_ENUM",
        11 => "HIPBLAS_STATUS_UNKNOWN",
        _ => return format!("hipblasStatus_t {r}"),
    }
    .to_string()
}

/// The hipBLASLt epilogue of `p`: the activation, with the bias folded in when there is one.
fn lt_epilogue(p: &LtMatmul) -> u32 {
    match (p.epilogue, p.bias.is_some()) {
        (super::LtEpilogue::None, false) => HIPBLASLT_EPILOGUE_DEFAULT,
        (super::LtEpilogue::None, true) => HIPBLASLT_EPILOGUE_BIAS,
        (super::LtEpilogue::Relu, false) => HIPBLASLT_EPILOGUE_RELU,
        (super::LtEpilogue::Relu, true) => HIPBLASLT_EPILOGUE_RELU_BIAS,
        (super::LtEpilogue::GeluTanh, false) => HIPBLASLT_EPILOGUE_GELU,
        (super::LtEpilogue::GeluTanh, true) => HIPBLASLT_EPILOGUE_GELU_BIAS,
    }
}

/// Descriptors and the heuristic's first algorithm for `p`. f32 with TF32 asked for is
/// refused (hipBLASLt's xf32 is another format): the caller's GEMM + epilogue kernel run it.
fn lt_plan(lt: &HipblasLt, handle: usize, p: &LtMatmul) -> Result<LtPlan> {
    let ty = match p.dtype {
        DType::F32 if !p.tf32 => HIP_R_32F,
        DType::F16 => HIP_R_16F,
        DType::BF16 => HIP_R_16BF,
        other => {
            return Err(Error::unsupported(format!(
                "hipblasLtMatmul: dtype {other}{}",
                if p.tf32 { " with TF32" } else { "" }
            )));
        }
    };
    let desc_create = lt_fn(lt.hipblasLtMatmulDescCreate, "hipblasLtMatmulDescCreate")?;
    let set = lt_fn(
        lt.hipblasLtMatmulDescSetAttribute,
        "hipblasLtMatmulDescSetAttribute",
    )?;
    let layout = lt_fn(
        lt.hipblasLtMatrixLayoutCreate,
        "hipblasLtMatrixLayoutCreate",
    )?;
    let pref_create = lt_fn(
        lt.hipblasLtMatmulPreferenceCreate,
        "hipblasLtMatmulPreferenceCreate",
    )?;
    let pref_set = lt_fn(
        lt.hipblasLtMatmulPreferenceSetAttribute,
        "hipblasLtMatmulPreferenceSetAttribute",
    )?;
    let pref_destroy = lt_fn(
        lt.hipblasLtMatmulPreferenceDestroy,
        "hipblasLtMatmulPreferenceDestroy",
    )?;
    let heuristic = lt_fn(
        lt.hipblasLtMatmulAlgoGetHeuristic,
        "hipblasLtMatmulAlgoGetHeuristic",
    )?;
    let mut desc: Handle = std::ptr::null_mut();
    lt_check("hipblasLtMatmulDescCreate", unsafe {
        desc_create(&mut desc, HIPBLAS_COMPUTE_32F, HIP_R_32F)
    })?;
    let attr32 = |a: c_int, v: i32, what: &str| -> Result<()> {
        lt_check(what, unsafe {
            set(desc, a, &v as *const i32 as *const c_void, 4)
        })
    };
    let op = |x: Transpose| {
        if x == Transpose::Yes {
            HIPBLAS_OP_T
        } else {
            HIPBLAS_OP_N
        }
    };
    attr32(
        HIPBLASLT_MATMUL_DESC_TRANSA,
        op(p.trans_a),
        "hipblasLtMatmulDescSetAttribute(TRANSA)",
    )?;
    attr32(
        HIPBLASLT_MATMUL_DESC_TRANSB,
        op(p.trans_b),
        "hipblasLtMatmulDescSetAttribute(TRANSB)",
    )?;
    let epi = lt_epilogue(p);
    lt_check("hipblasLtMatmulDescSetAttribute(EPILOGUE)", unsafe {
        set(
            desc,
            HIPBLASLT_MATMUL_DESC_EPILOGUE,
            &epi as *const u32 as *const c_void,
            4,
        )
    })?;
    if let Some(b) = p.bias {
        // The bias has the output's type (hipBLASLt's default is the scale type, f32).
        attr32(
            HIPBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
            ty,
            "hipblasLtMatmulDescSetAttribute(BIAS_DATA_TYPE)",
        )?;
        let ptr = b.0 as usize as *const c_void;
        lt_check("hipblasLtMatmulDescSetAttribute(BIAS_POINTER)", unsafe {
            set(
                desc,
                HIPBLASLT_MATMUL_DESC_BIAS_POINTER,
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
    let mk = |r: usize, c: usize, ld: usize, what: &str| -> Result<Handle> {
        let mut l: Handle = std::ptr::null_mut();
        lt_check(what, unsafe {
            layout(&mut l, ty, r as u64, c as u64, ld as i64)
        })?;
        Ok(l)
    };
    let la = mk(ar, ac, p.lda, "hipblasLtMatrixLayoutCreate(A)")?;
    let lb = mk(br, bc, p.ldb, "hipblasLtMatrixLayoutCreate(B)")?;
    let lc = mk(p.m, p.n, p.ldc, "hipblasLtMatrixLayoutCreate(C)")?;
    let mut pref: Handle = std::ptr::null_mut();
    lt_check("hipblasLtMatmulPreferenceCreate", unsafe {
        pref_create(&mut pref)
    })?;
    let max_ws = LT_MAX_WORKSPACE;
    let r = unsafe {
        pref_set(
            pref,
            HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
            &max_ws as *const u64 as *const c_void,
            8,
        )
    };
    let mut res = LtHeuristic::default();
    let mut found: c_int = 0;
    let hr = if r == 0 {
        unsafe {
            heuristic(
                handle as Handle,
                desc,
                la,
                lb,
                lc,
                lc,
                pref,
                1,
                &mut res as *mut LtHeuristic as *mut c_void,
                &mut found,
            )
        }
    } else {
        r
    };
    unsafe { pref_destroy(pref) };
    if hr != 0 || found == 0 || res.state != 0 {
        // The descriptors are few and small; a problem hipBLASLt cannot run keeps none.
        if let Some(d) = lt.hipblasLtMatrixLayoutDestroy {
            unsafe {
                d(la);
                d(lb);
                d(lc);
            }
        }
        if let Some(d) = lt.hipblasLtMatmulDescDestroy {
            unsafe { d(desc) };
        }
        return Err(Error::unsupported(format!(
            "hipblasLt has no algorithm for this problem ({}, {found} found)",
            hipblas_status_name(hr)
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

#[cfg(test)]
mod lt_tests {
    use super::*;

    #[test]
    fn epilogues_fold_the_bias_in() {
        let p = |epilogue, bias: bool| LtMatmul {
            dtype: DType::F16,
            trans_a: Transpose::No,
            trans_b: Transpose::Yes,
            m: 4,
            n: 4,
            k: 4,
            a: DevPtr(256),
            lda: 4,
            b: DevPtr(512),
            ldb: 4,
            c: DevPtr(768),
            ldc: 4,
            bias: bias.then_some(DevPtr(1024)),
            epilogue,
            tf32: false,
            batch: super::super::LtBatch::ONE,
            algo: 0,
        };
        use super::super::LtEpilogue as E;
        assert_eq!(lt_epilogue(&p(E::None, false)), HIPBLASLT_EPILOGUE_DEFAULT);
        assert_eq!(lt_epilogue(&p(E::None, true)), HIPBLASLT_EPILOGUE_BIAS);
        assert_eq!(lt_epilogue(&p(E::Relu, true)), HIPBLASLT_EPILOGUE_RELU_BIAS);
        assert_eq!(lt_epilogue(&p(E::GeluTanh, false)), HIPBLASLT_EPILOGUE_GELU);
        assert_eq!(
            lt_epilogue(&p(E::GeluTanh, true)),
            HIPBLASLT_EPILOGUE_GELU_BIAS
        );
        // Bias flag | activation: the header's combined values.
        assert_eq!(
            HIPBLASLT_EPILOGUE_RELU | HIPBLASLT_EPILOGUE_BIAS,
            HIPBLASLT_EPILOGUE_RELU_BIAS
        );
        assert_eq!(
            HIPBLASLT_EPILOGUE_GELU | HIPBLASLT_EPILOGUE_BIAS,
            HIPBLASLT_EPILOGUE_GELU_BIAS
        );
        // Problems differing only in alignment are prepared apart.
        let a = LtKey::of(0, &p(E::Relu, true));
        let mut q = p(E::Relu, true);
        q.a = DevPtr(258);
        assert_ne!(a, LtKey::of(0, &q));
    }
}
