//! The profiler: per-kernel timings (count, total, mean, min, max) collected by GPU devices
//! while profiling is on (RB_PROFILE=1 at start, or `rb_profiler_enable`), the host time of
//! each C call and the devices' memory counters, summarized as text or exported as a
//! Chrome trace (`rb_profiler_export_chrome_trace`).

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

/// Writes the profile's timeline to `path` as Chrome trace JSON (the Trace Event Format;
/// open it in Perfetto or chrome://tracing): one process per device plus "host"; one track
/// per stream ("default stream", "stream 0x...") with a complete event (`"ph":"X"`, `ts`
/// and `dur` in microseconds) per timed kernel, named by the kernel; one track per host
/// thread with each C call made while profiling (on the CPU device an eager op runs inside
/// its call, so these are its op times); and counter events (`"ph":"C"`, name "memory")
/// with each device's live tensor bytes (and its allocator's allocated/reserved bytes
/// where it keeps them), sampled at every tensor allocation and free. Records are those
/// since profiling was enabled or last reset; GPU kernel timings are waited for first.
/// The file is written through a temporary file and a rename (a reader never sees half a
/// file); the profile is kept (`rb_profiler_reset` drops it).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (a path that is not UTF-8,
/// or that cannot be written: the message has the OS's reason) or RB_STATUS_VENDOR (a timed
/// kernel failed). Thread-safe.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_profiler_export_chrome_trace(path: *const c_char) -> rb_status {
    guard("rb_profiler_export_chrome_trace", || {
        let path = unsafe { super::util::cstr(path, "path") }?;
        if path.is_empty() {
            return Err(crate::Error::invalid("path is empty"));
        }
        crate::device::gpu::timing::drain()?;
        profiler().export_chrome_trace(std::path::Path::new(path))
    })
}
