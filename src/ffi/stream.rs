//! Streams: ordered queues of work on one device. Every call that takes an `rb_stream*`
//! accepts NULL for the default stream of the device its data lives on.

use super::handles::{arc, new_handle, release};
use super::status::{guard, rb_status};
use super::util::{check_out, cstr_opt, write_out};
use crate::runtime::{Stream, context};
use std::ffi::c_char;

/// An opaque stream handle.
pub struct rb_stream {
    _private: [u8; 0],
}

/// Makes a new stream on `device` (a device string, or NULL for the current device).
///
/// On success `*out` is a new handle the caller owns (free it with `rb_stream_destroy`).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_VENDOR; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_stream_create(
    device: *const c_char,
    out: *mut *mut rb_stream,
) -> rb_status {
    guard("rb_stream_create", || {
        check_out(out, "out")?;
        let d = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
        let s = Stream::new(d)?;
        unsafe { write_out(out, "out", new_handle(s)) }
    })
}

/// Releases a stream after the work queued on it has been submitted (it is not waited for).
/// NULL is a no-op. Fails with RB_STATUS_INVALID_HANDLE for a stale, foreign or non-stream
/// handle. Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_stream_destroy(stream: *mut rb_stream) -> rb_status {
    guard("rb_stream_destroy", || release(stream, "stream"))
}

/// Waits until all work queued on `stream` has finished.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or RB_STATUS_VENDOR.
/// Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_stream_synchronize(stream: *mut rb_stream) -> rb_status {
    guard("rb_stream_synchronize", || {
        let s = arc(stream, "stream")?;
        crate::graph::capture::check_sync("rb_stream_synchronize", &s)?;
        s.synchronize()
    })
}

/// Looks up an optional stream argument (NULL: the default stream of the data's device).
pub(crate) fn stream_arg(s: *mut rb_stream) -> crate::Result<Option<std::sync::Arc<Stream>>> {
    super::handles::arc_opt(s, "stream")
}
