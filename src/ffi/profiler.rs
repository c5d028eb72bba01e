//! The profiler: per-kernel timings (count, total, mean, min, max) collected by GPU devices
//! while profiling is on (RB_PROFILE=1 at start, or `rb_profiler_enable`).

use super::status::{guard, rb_status};
use crate::device::gpu::profiler::profiler;
use std::ffi::c_char;

/// Turns kernel profiling on or off for the process (also on at start when RB_PROFILE=1).
/// While on, GPU devices time each kernel launch with events. Never fails. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_profiler_enable(enable: bool) -> rb_status {
    guard("rb_profiler_enable", || {
        profiler().set_enabled(enable);
        Ok(())
    })
}

/// Writes the profile summary as text into `buf` (`len` bytes, NUL-terminated): a header
/// line, then per kernel name `name count total_ms mean_ms min_ms max_ms`, the largest total
/// first. `*needed` (when not NULL) receives the size the text needs, NUL included, also when
/// `buf` is too small; `buf` may be NULL with `len` 0 to ask only for that size.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT when `len` is smaller than needed (`buf` is then
/// unchanged), RB_STATUS_NULL_POINTER when `buf` is NULL with `len` > 0. Thread-safe.
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
        crate::device::gpu::timing::drain()?;
        unsafe { super::util::write_text(&profiler().summary_text(), buf, len, needed) }
    })
}

/// Drops all profile records (profiling stays on or off as it was). Never fails.
/// Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_profiler_reset() -> rb_status {
    guard("rb_profiler_reset", || {
        crate::device::gpu::timing::drain()?;
        profiler().reset();
        Ok(())
    })
}
