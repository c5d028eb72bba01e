//! The kernel profiler: when on (`RB_PROFILE=1` in the environment, or
//! `rb_profiler_enable(true)`), every GPU kernel and GEMM is timed with events; the summary
//! gives count, total and mean milliseconds per kernel name.

use super::status::{guard, rb_status};
use super::util::null;
use crate::Error;
use crate::device::gpu::profiler;
use std::ffi::c_char;

/// Turns kernel timing on or off for the whole process. Never fails. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_profiler_enable(enable: bool) -> rb_status {
    guard("rb_profiler_enable", || {
        profiler::set_enabled(enable);
        Ok(())
    })
}

/// True when kernel timing is on. Never fails. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_profiler_is_enabled() -> bool {
    profiler::enabled()
}

/// Forgets every timing collected so far (waiting for kernels still running).
///
/// Fails with RB_STATUS_VENDOR when a timed kernel's device reports an error. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_profiler_reset() -> rb_status {
    guard("rb_profiler_reset", profiler::reset)
}

/// Writes the summary (a text table: kernel, count, total ms, mean ms; one line per kernel
/// name, largest total first), NUL-terminated, into `buf` of `len` bytes, after waiting for
/// the timed kernels. `*needed` (when not NULL) receives the size the summary needs,
/// including the NUL; pass `buf = NULL, len = 0` to ask for it.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT when `buf` is too small (`*needed` is still
/// written, `buf` is unchanged), RB_STATUS_NULL_POINTER when `buf` is NULL and `len` is not
/// 0, or RB_STATUS_VENDOR. Thread-safe.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes; `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_profiler_summary(
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> rb_status {
    guard("rb_profiler_summary", || {
        if buf.is_null() && len != 0 {
            return Err(null("buf"));
        }
        let text = profiler::summary_text()?;
        let n = text.len() + 1;
        if !needed.is_null() {
            // SAFETY: writable (caller's contract).
            unsafe { *needed = n };
        }
        if buf.is_null() {
            return Ok(());
        }
        if len < n {
            return Err(Error::invalid(format!(
                "buf holds {len} bytes, the summary needs {n}"
            )));
        }
        // SAFETY: buf is writable for len >= n bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, buf, text.len());
            *buf.add(text.len()) = 0;
        }
        Ok(())
    })
}
