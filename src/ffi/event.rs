//! Events: markers in a stream's work, to wait for it, to order another stream after it, and
//! to time it. Every call that takes an `rb_stream*` accepts NULL for the default stream of
//! the event's device.

use super::handles::{arc, new_handle, release};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::util::{check_out, cstr_opt, null, write_out};
use crate::runtime::context;
use crate::runtime::event::Event;
use std::ffi::c_char;

/// An opaque event handle.
pub struct rb_event {
    _private: [u8; 0],
}

fn ev(e: *mut rb_event, arg: &str) -> crate::Result<std::sync::Arc<Event>> {
    arc(e, arg)
}

/// Makes a new event on `device` (a device string, or NULL for the current device). It
/// records timestamps, so `rb_event_elapsed_time` works on it.
///
/// On success `*out` is a new handle the caller owns (free it with `rb_event_destroy`).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_VENDOR; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_event_create(
    device: *const c_char,
    out: *mut *mut rb_event,
) -> rb_status {
    guard("rb_event_create", || {
        check_out(out, "out")?;
        let d = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
        let e = Event::new(d)?;
        unsafe { write_out(out, "out", new_handle(e)) }
    })
}

/// Releases an event (work it was recorded after is not waited for). NULL is a no-op.
/// Fails with RB_STATUS_INVALID_HANDLE for a stale, foreign or non-event handle.
/// Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_event_destroy(event: *mut rb_event) -> rb_status {
    guard("rb_event_destroy", || release(event, "event"))
}

/// Records `event` after the work queued so far on `stream` (NULL: the device's default
/// stream). The stream must be on the event's device.
///
/// Fails with RB_STATUS_NULL_POINTER (`event`), RB_STATUS_INVALID_HANDLE,
/// RB_STATUS_INVALID_ARGUMENT (stream on another device), RB_STATUS_UNSUPPORTED (a stream
/// being recorded into a graph) or RB_STATUS_VENDOR. Thread-safe.
///
/// # Safety
/// None: handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_event_record(
    event: *mut rb_event,
    stream: *mut rb_stream,
) -> rb_status {
    guard("rb_event_record", || {
        let e = ev(event, "event")?;
        let s = stream_arg(stream)?;
        if let Some(st) = &s {
            crate::graph::capture::check_unrecordable(
                "rb_event_record",
                "an event marks real work on the stream, which a recording does not queue",
                st,
            )?;
        }
        e.record(s.as_deref())
    })
}

/// Waits until the work before the event's last record has finished (at once if it was
/// never recorded).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or RB_STATUS_VENDOR (an
/// error of that work). Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_event_synchronize(event: *mut rb_event) -> rb_status {
    guard("rb_event_synchronize", || ev(event, "event")?.synchronize())
}

/// Writes to `*done` whether the work before the event's last record has finished, without
/// waiting.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or RB_STATUS_VENDOR; `*done`
/// is then unchanged. Thread-safe.
///
/// # Safety
/// `done` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_event_query(event: *mut rb_event, done: *mut bool) -> rb_status {
    guard("rb_event_query", || {
        let e = ev(event, "event")?;
        if done.is_null() {
            return Err(null("done"));
        }
        let d = e.query()?;
        unsafe { write_out(done, "done", d) }
    })
}

/// Writes to `*ms` the milliseconds between two recorded events of one device, waiting for
/// `end` first.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (an event never recorded, or events of different devices) or RB_STATUS_VENDOR; `*ms` is
/// then unchanged. Thread-safe.
///
/// # Safety
/// `ms` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_event_elapsed_time(
    start: *mut rb_event,
    end: *mut rb_event,
    ms: *mut f32,
) -> rb_status {
    guard("rb_event_elapsed_time", || {
        let a = ev(start, "start")?;
        let b = ev(end, "end")?;
        if ms.is_null() {
            return Err(null("ms"));
        }
        b.synchronize()?;
        let t = Event::elapsed_ms(&a, &b)?;
        unsafe { write_out(ms, "ms", t) }
    })
}

/// Makes work queued on `stream` after this call (NULL: the device's default stream) wait
/// until `event`'s recorded work has finished, without blocking the host.
///
/// Fails with RB_STATUS_NULL_POINTER (`event`), RB_STATUS_INVALID_HANDLE,
/// RB_STATUS_INVALID_ARGUMENT (stream on another device), RB_STATUS_UNSUPPORTED (a stream
/// being recorded into a graph) or RB_STATUS_VENDOR. Thread-safe.
///
/// # Safety
/// None: handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_stream_wait_event(
    stream: *mut rb_stream,
    event: *mut rb_event,
) -> rb_status {
    guard("rb_stream_wait_event", || {
        let e = ev(event, "event")?;
        let s = stream_arg(stream)?;
        if let Some(st) = &s {
            crate::graph::capture::check_unrecordable(
                "rb_stream_wait_event",
                "a wait on another stream's work cannot be recorded",
                st,
            )?;
        }
        e.wait_on(s.as_deref())
    })
}
