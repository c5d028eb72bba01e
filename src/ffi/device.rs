//! Devices: selection, information, synchronization, and the `rb_rocm_*` seed API.

use super::status::{guard, guard_value, rb_status};
use super::util::{cstr, cstr_opt, null, write_out};
use crate::device::{DeviceInfo, DeviceKind};
use crate::runtime::context::{self, DeviceSpec};
use crate::{Error, Result};
use std::ffi::{CString, c_char};

/// What a device says about itself. Strings are NUL-terminated and truncated to fit.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rb_device_properties {
    /// An `rb_device_kind` value.
    pub kind: i32,
    /// Ordinal among devices of its kind (0 for the CPU).
    pub ordinal: i32,
    /// The device string, e.g. "cpu", "rocm:0", "cuda:1".
    pub device: [c_char; 32],
    /// Marketing name (the CPU model on the CPU device).
    pub name: [c_char; 256],
    /// Architecture: "gfx90a", "sm_90", or the CPU's ISA level such as "x86_64-avx512".
    pub arch: [c_char; 64],
    /// Family: "CDNA2", "CDNA3", "RDNA2", "RDNA3", "Hopper", ..., or "CPU".
    pub family: [c_char; 32],
    /// Bytes of device memory (host memory for the CPU).
    pub total_memory: u64,
    /// Bytes free now.
    pub free_memory: u64,
    /// Compute units / SMs, or the CPU device's threads.
    pub compute_units: u32,
    /// Warp or wavefront width (64 on CDNA, 32 on NVIDIA and RDNA, 1 on the CPU).
    pub warp_size: u32,
    /// Matrix cores / tensor cores present.
    pub matrix_cores: bool,
    /// bf16 arithmetic supported.
    pub bf16: bool,
    /// fp8 arithmetic supported.
    pub fp8: bool,
}

fn fill<const N: usize>(dst: &mut [c_char; N], s: &str) {
    let b = s.as_bytes();
    let n = b.len().min(N - 1);
    for (d, &c) in dst.iter_mut().zip(&b[..n]) {
        *d = c as c_char;
    }
    dst[n] = 0;
}

impl From<(&DeviceInfo, DeviceKind, usize)> for rb_device_properties {
    fn from((i, kind, ordinal): (&DeviceInfo, DeviceKind, usize)) -> Self {
        let mut o = rb_device_properties {
            kind: kind as i32,
            ordinal: ordinal as i32,
            device: [0; 32],
            name: [0; 256],
            arch: [0; 64],
            family: [0; 32],
            total_memory: i.total_memory,
            free_memory: i.free_memory,
            compute_units: i.compute_units,
            warp_size: i.warp_size,
            matrix_cores: i.matrix_cores,
            bf16: i.bf16,
            fp8: i.fp8,
        };
        fill(&mut o.device, &i.device);
        fill(&mut o.name, &i.name);
        fill(&mut o.arch, &i.arch);
        fill(&mut o.family, &i.family);
        o
    }
}

fn info_of(spec: Option<DeviceSpec>) -> Result<rb_device_properties> {
    let d = match spec {
        Some(s) => context::device(s)?,
        None => context::current_device(),
    };
    let i = d.info()?;
    Ok((&i, d.kind(), d.ordinal()).into())
}

/// Makes `device` ("cpu", "rocm", "rocm:N", "cuda", "cuda:N" or "auto") the calling thread's
/// current device, and the default of threads that have not chosen one. "auto" picks ROCm,
/// then CUDA, then the CPU.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (not a device string) or
/// RB_STATUS_DEVICE_UNAVAILABLE (the message says why); the current device is then unchanged.
/// Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_set_device(device: *const c_char) -> rb_status {
    guard("rb_set_device", || {
        let s = unsafe { cstr(device, "device") }?;
        context::set_device(DeviceSpec::parse(s)?)?;
        Ok(())
    })
}

/// Lets f32 matrix products (matmul, linear, bmm, the GEMMs inside other ops) of this
/// process use TF32 tensor cores on NVIDIA (inputs rounded to a 10-bit mantissa, f32
/// accumulation), as `torch.backends.cuda.matmul.allow_tf32 = allow`. Off by default (exact
/// f32). ROCm and the CPU stay exact; f16/bf16 products are unaffected. An executor's
/// `rb_executor_config.allow_tf32` allows it for that executor alone.
///
/// Never fails. Thread-safe (it applies to GEMMs issued after it returns).
#[unsafe(no_mangle)]
pub extern "C" fn rb_set_allow_tf32(allow: bool) -> rb_status {
    guard("rb_set_allow_tf32", || {
        crate::device::blas::set_allow_tf32(allow);
        Ok(())
    })
}

/// Writes the process-wide TF32 setting of `rb_set_allow_tf32` into `*out`.
///
/// Fails with RB_STATUS_NULL_POINTER; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_get_allow_tf32(out: *mut bool) -> rb_status {
    guard("rb_get_allow_tf32", || unsafe {
        write_out(out, "out", crate::device::blas::allow_tf32())
    })
}

/// Writes the calling thread's current device string (e.g. "cpu", "cuda:0") into `buf`,
/// NUL-terminated, `len` bytes at most.
///
/// Fails with RB_STATUS_NULL_POINTER, or RB_STATUS_INVALID_ARGUMENT when `len` is too small
/// (32 bytes always suffice); `buf` is then unchanged. Thread-safe.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_get_device(buf: *mut c_char, len: usize) -> rb_status {
    guard("rb_get_device", || {
        if buf.is_null() {
            return Err(null("buf"));
        }
        let name = context::current_device().name();
        let c = CString::new(name).map_err(|_| Error::internal("device name has a NUL"))?;
        let b = c.as_bytes_with_nul();
        if b.len() > len {
            return Err(Error::invalid(format!(
                "buf holds {len} bytes, {} needed",
                b.len()
            )));
        }
        // SAFETY: buf is writable for len >= b.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(b.as_ptr() as *const c_char, buf, b.len()) };
        Ok(())
    })
}

/// Describes `device` (a device string, or NULL for the calling thread's current device) in
/// `*out`.
///
/// Fails with RB_STATUS_NULL_POINTER (`out`), RB_STATUS_INVALID_ARGUMENT or
/// RB_STATUS_DEVICE_UNAVAILABLE; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_device_info(
    device: *const c_char,
    out: *mut rb_device_properties,
) -> rb_status {
    guard("rb_device_info", || {
        let spec = unsafe { cstr_opt(device, "device") }?
            .map(DeviceSpec::parse)
            .transpose()?;
        if out.is_null() {
            return Err(null("out"));
        }
        let i = info_of(spec)?;
        unsafe { write_out(out, "out", i) }
    })
}

/// Waits until all work queued on the calling thread's current device has finished.
///
/// Fails with RB_STATUS_VENDOR when the device reports an error from earlier work.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_synchronize() -> rb_status {
    guard("rb_synchronize", || context::current_device().synchronize())
}

/// True when at least one AMD GPU is usable through ROCm. Never fails; where false,
/// `rb_rocm_unavailable_reason()` says why. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_rocm_is_available() -> bool {
    guard_value("rb_rocm_is_available", false, || {
        Ok(context::device_count(DeviceKind::Rocm) > 0)
    })
}

/// Why ROCm is unavailable (e.g. no libamdhip64, or hipErrorNoDevice), or "" when it is
/// available. The string is static for the process: never free it. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_rocm_unavailable_reason() -> *const c_char {
    static REASON: std::sync::OnceLock<CString> = std::sync::OnceLock::new();
    REASON
        .get_or_init(|| {
            let r = context::unavailable_reason(DeviceKind::Rocm).unwrap_or_default();
            CString::new(r.replace('\0', " ")).unwrap_or_default()
        })
        .as_ptr()
}

/// Number of usable AMD GPUs (0 where ROCm is unavailable). Never fails. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_rocm_device_count() -> i32 {
    guard_value("rb_rocm_device_count", 0, || {
        Ok(context::device_count(DeviceKind::Rocm) as i32)
    })
}

/// Describes AMD GPU `device` in `*out`.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_DEVICE_UNAVAILABLE (no such GPU, or no
/// ROCm); `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_rocm_get_device_info(
    device: i32,
    out: *mut rb_device_properties,
) -> rb_status {
    guard("rb_rocm_get_device_info", || {
        if out.is_null() {
            return Err(null("out"));
        }
        if device < 0 {
            return Err(Error::invalid(format!("device {device} is negative")));
        }
        let i = info_of(Some(DeviceSpec::Rocm(device as usize)))?;
        unsafe { write_out(out, "out", i) }
    })
}

/// Makes AMD GPU `device` current for the calling thread (as `rb_set_device("rocm:N")`).
///
/// Fails with RB_STATUS_INVALID_ARGUMENT (negative) or RB_STATUS_DEVICE_UNAVAILABLE; the
/// current device is then unchanged. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_rocm_set_device(device: i32) -> rb_status {
    guard("rb_rocm_set_device", || {
        if device < 0 {
            return Err(Error::invalid(format!("device {device} is negative")));
        }
        context::set_device(DeviceSpec::Rocm(device as usize))?;
        Ok(())
    })
}

/// The calling thread's current AMD GPU ordinal, or -1 when the current device is not an AMD
/// GPU. Never fails. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_rocm_get_device() -> i32 {
    guard_value("rb_rocm_get_device", -1, || {
        let d = context::current_device();
        Ok(if d.kind() == DeviceKind::Rocm {
            d.ordinal() as i32
        } else {
            -1
        })
    })
}

/// Waits for all work on the calling thread's current AMD GPU.
///
/// Fails with RB_STATUS_DEVICE_UNAVAILABLE when the current device is not an AMD GPU, or
/// RB_STATUS_VENDOR. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_rocm_synchronize() -> rb_status {
    guard("rb_rocm_synchronize", || {
        let d = context::current_device();
        if d.kind() != DeviceKind::Rocm {
            return Err(Error::unavailable(format!(
                "the current device is {}, not an AMD GPU",
                d.name()
            )));
        }
        d.synchronize()
    })
}

/// True when at least one NVIDIA GPU is usable through CUDA. Never fails. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_cuda_is_available() -> bool {
    guard_value("rb_cuda_is_available", false, || {
        Ok(context::device_count(DeviceKind::Cuda) > 0)
    })
}

/// Number of usable NVIDIA GPUs (0 where CUDA is unavailable). Never fails. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_cuda_device_count() -> i32 {
    guard_value("rb_cuda_device_count", 0, || {
        Ok(context::device_count(DeviceKind::Cuda) as i32)
    })
}

#[cfg(test)]
mod tf32_tests {
    use super::*;
    use crate::device::blas::{allow_tf32, tf32_enabled, tf32_scope};

    #[test]
    fn tf32_flag_and_scopes() {
        // The process flag through the C API (this is the only unit test that sets it).
        let mut got = true;
        let st = unsafe { rb_get_allow_tf32(&mut got) };
        assert_eq!(st as i32, 0);
        assert!(!got, "TF32 is off by default");
        rb_set_allow_tf32(true);
        assert!(allow_tf32() && tf32_enabled());
        {
            let _off = tf32_scope(false);
            assert!(
                !tf32_enabled(),
                "the thread's scope overrides the process flag"
            );
        }
        assert!(tf32_enabled());
        rb_set_allow_tf32(false);
        assert!(!tf32_enabled());
        {
            let _on = tf32_scope(true);
            assert!(tf32_enabled() && !allow_tf32());
        }
        assert!(!tf32_enabled());
        let st = unsafe { rb_get_allow_tf32(std::ptr::null_mut()) };
        assert_ne!(st as i32, 0, "a NULL out is an error");
    }
}
