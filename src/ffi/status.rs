//! Status codes, the per-thread last-error message, the panic boundary, and the public
//! enums of the ABI.

use crate::{Error, ErrorKind, Result};
use std::cell::RefCell;
use std::ffi::{CString, c_char};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The result of every fallible call. Values are fixed forever; new codes get new numbers.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_status {
    /// The call did what it says.
    Success = 0,
    /// An argument is out of range or inconsistent (unknown device string, bad enum value,
    /// negative or overflowing extent, ...).
    InvalidArgument = 1,
    /// A required pointer argument is NULL.
    NullPointer = 2,
    /// A handle is destroyed, was never made by this library, or is of the wrong kind.
    InvalidHandle = 3,
    /// The device asked for is not present or its vendor libraries are missing.
    DeviceUnavailable = 4,
    /// Device or host memory ran out (after the caching allocator freed its cache).
    OutOfMemory = 5,
    /// Tensor shapes do not fit the op.
    ShapeMismatch = 6,
    /// Tensor dtypes do not fit the op.
    DtypeMismatch = 7,
    /// The op, dtype or feature is not supported on this device or build.
    Unsupported = 8,
    /// A kernel failed to compile; the message holds the compiler log.
    Compilation = 9,
    /// A vendor library (HIP, rocBLAS, MIOpen, CUDA, cuBLAS, cuDNN) reported an error; the
    /// message carries the vendor's own name and code.
    Vendor = 10,
    /// A bug in the library (for example a caught panic); the message says where.
    Internal = 11,
    /// A collective waited longer than its communicator's timeout for a peer (a peer gone
    /// or stuck); the communicator should then be aborted.
    Timeout = 12,
    /// The communicator, or a peer's, was aborted or destroyed while a collective needed
    /// it.
    Aborted = 13,
}

/// Element types. Functions take them as `int32_t`; out-of-range values give
/// RB_STATUS_INVALID_ARGUMENT.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_dtype {
    F32 = 0,
    F16 = 1,
    Bf16 = 2,
    I32 = 3,
    I64 = 4,
    Bool = 5,
    /// The dtypes added for exported models (6-9): creation, transfers, fill, cast/copy,
    /// the data ops, comparisons, add/sub/mul/maximum/minimum, arange, topk, scatter_add
    /// and scatter's reductions, neg/abs/sign/relu, max/min/argmax/max_dim/min_dim, clamp
    /// (tensor or integral number bounds) and cumsum (an i64 result for the integers) (f64
    /// also div, pow, every unary op and activation, the reductions, softmax/log_softmax,
    /// layer_norm/rms_norm, group_norm/batch_norm/local_response_norm, linear/matmul, the
    /// convolutions, pooling (max/avg, with indices, adaptive) and their backwards, the
    /// losses, cumsum, prelu, weighted_sum, rope/rope_cached, attention, interpolate
    /// (+ backward), max_unpool, the optimizer steps and the data ops' gradients, in f64 on
    /// every device); other ops answer RB_STATUS_DTYPE_MISMATCH naming the dtype.
    F64 = 6,
    I8 = 7,
    U8 = 8,
    I16 = 9,
}

/// Device kinds, as reported by `rb_device_info` and `rb_tensor_device`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_device_kind {
    Cpu = 0,
    Rocm = 1,
    Cuda = 2,
}

/// BLAS transpose flags (ours, not rocBLAS's 111/112/113 nor cuBLAS's 0/1/2).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub enum rb_operation {
    /// Use the matrix as stored.
    None = 0,
    /// Use its transpose.
    Transpose = 1,
}

impl From<ErrorKind> for rb_status {
    fn from(k: ErrorKind) -> Self {
        match k {
            ErrorKind::InvalidArgument => rb_status::InvalidArgument,
            ErrorKind::NullPointer => rb_status::NullPointer,
            ErrorKind::InvalidHandle => rb_status::InvalidHandle,
            ErrorKind::DeviceUnavailable => rb_status::DeviceUnavailable,
            ErrorKind::OutOfMemory => rb_status::OutOfMemory,
            ErrorKind::ShapeMismatch => rb_status::ShapeMismatch,
            ErrorKind::DtypeMismatch => rb_status::DtypeMismatch,
            ErrorKind::Unsupported => rb_status::Unsupported,
            ErrorKind::Compilation => rb_status::Compilation,
            ErrorKind::Vendor => rb_status::Vendor,
            ErrorKind::Internal => rb_status::Internal,
            ErrorKind::Timeout => rb_status::Timeout,
            ErrorKind::Aborted => rb_status::Aborted,
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `e` as the calling thread's last error.
pub(crate) fn set_last_error(e: &Error) {
    let msg = CString::new(e.message.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|m| *m.borrow_mut() = msg);
}

/// Pointer to the thread's last message; valid until the thread's next failing call.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|m| m.borrow().as_ptr())
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// The panic boundary: runs `f`, turns its error into a status and the thread's last
/// message, and a panic into RB_STATUS_INTERNAL. `func` names the export in messages.
pub fn guard(func: &str, f: impl FnOnce() -> Result<()>) -> rb_status {
    let prof = crate::device::gpu::profiler::profiler();
    let t0 = (prof.enabled() && traced(func)).then(std::time::Instant::now);
    let r = catch_unwind(AssertUnwindSafe(f));
    if let Some(t0) = t0 {
        prof.record_span(
            crate::device::gpu::profiler::TraceSpan {
                name: func.to_string(),
                cat: "api",
                process: "host".to_string(),
                track: host_thread(),
                ts_us: prof.micros(t0),
                dur_us: t0.elapsed().as_secs_f64() * 1e6,
            },
            false,
        );
    }
    match r {
        Ok(Ok(())) => rb_status::Success,
        Ok(Err(e)) => {
            let e = if e.message.starts_with(func) {
                e
            } else {
                e.context(func)
            };
            set_last_error(&e);
            e.kind.into()
        }
        Err(p) => {
            let e = Error::internal(format!(
                "{func}: internal error (panic): {}",
                panic_message(&*p)
            ));
            set_last_error(&e);
            rb_status::Internal
        }
    }
}

/// Whether a call appears on the profiler's host track: every export but the profiler's
/// own, the error/status strings and the tensor queries (which would crowd the picture).
fn traced(func: &str) -> bool {
    const QUIET: &[&str] = &[
        "rb_tensor_ndim",
        "rb_tensor_shape",
        "rb_tensor_dtype",
        "rb_tensor_numel",
        "rb_tensor_nbytes",
        "rb_tensor_device",
        "rb_tensor_data_ptr",
        "rb_tensor_is_read_only",
    ];
    !func.starts_with("rb_profiler_") && !QUIET.contains(&func)
}

/// A small number per host thread (1, 2, ... in order of first profiled call).
fn host_thread() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static ID: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ID.with(|v| *v)
}

/// Like [`guard`] for exports that return a value instead of a status: a failure or a
/// panic gives `fallback` and sets the last message.
pub fn guard_value<T>(func: &str, fallback: T, f: impl FnOnce() -> Result<T>) -> T {
    let mut v = None;
    let st = guard(func, || {
        v = Some(f()?);
        Ok(())
    });
    match (st, v) {
        (rb_status::Success, Some(v)) => v,
        _ => fallback,
    }
}

/// Returns the name of a status code, e.g. "RB_STATUS_OUT_OF_MEMORY" ("RB_STATUS_UNKNOWN"
/// for a value that is not an `rb_status`).
///
/// The string is static: never free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_status_string(status: i32) -> *const c_char {
    // NUL-terminated statics.
    match status {
        0 => c"RB_STATUS_SUCCESS".as_ptr(),
        1 => c"RB_STATUS_INVALID_ARGUMENT".as_ptr(),
        2 => c"RB_STATUS_NULL_POINTER".as_ptr(),
        3 => c"RB_STATUS_INVALID_HANDLE".as_ptr(),
        4 => c"RB_STATUS_DEVICE_UNAVAILABLE".as_ptr(),
        5 => c"RB_STATUS_OUT_OF_MEMORY".as_ptr(),
        6 => c"RB_STATUS_SHAPE_MISMATCH".as_ptr(),
        7 => c"RB_STATUS_DTYPE_MISMATCH".as_ptr(),
        8 => c"RB_STATUS_UNSUPPORTED".as_ptr(),
        9 => c"RB_STATUS_COMPILATION".as_ptr(),
        10 => c"RB_STATUS_VENDOR".as_ptr(),
        11 => c"RB_STATUS_INTERNAL".as_ptr(),
        12 => c"RB_STATUS_TIMEOUT".as_ptr(),
        13 => c"RB_STATUS_ABORTED".as_ptr(),
        _ => c"RB_STATUS_UNKNOWN".as_ptr(),
    }
}

/// Returns the calling thread's message for its last failed call ("" if none failed yet).
///
/// The string belongs to the library and stays valid until the same thread's next call into
/// the library; copy it to keep it. Never NULL. Each thread has its own message.
#[unsafe(no_mangle)]
pub extern "C" fn rb_last_error_message() -> *const c_char {
    last_error_ptr()
}

/// Returns the library's version, "MAJOR.MINOR.PATCH", equal to RB_VERSION_MAJOR/MINOR/PATCH.
///
/// The string is static: never free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn names_match_codes() {
        let name = |c| {
            unsafe { std::ffi::CStr::from_ptr(rb_status_string(c)) }
                .to_str()
                .unwrap()
        };
        assert_eq!(name(0), "RB_STATUS_SUCCESS");
        assert_eq!(
            name(rb_status::OutOfMemory as i32),
            "RB_STATUS_OUT_OF_MEMORY"
        );
        assert_eq!(name(rb_status::Internal as i32), "RB_STATUS_INTERNAL");
        assert_eq!(name(99), "RB_STATUS_UNKNOWN");
    }
    #[test]
    fn panics_become_internal() {
        let st = guard("rb_test", || panic!("boom"));
        assert_eq!(st, rb_status::Internal);
        // SAFETY: valid C string.
        let m = unsafe { std::ffi::CStr::from_ptr(rb_last_error_message()) };
        assert!(m.to_str().unwrap().contains("boom"));
    }
}
