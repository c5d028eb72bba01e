//! Front ends of the raw entry points, for frameworks that own their memory: BLAS
//! ([`blas`]: `rb_blas_*`), MIOpen/cuDNN-style DNN primitives ([`dnn`]: `rb_dnn_*`) and the
//! custom kernels ([`kernel`]: `rb_kernel_*`), as safe Rust over device pointers
//! ([`DevPtr`]), sizes and the ops-layer descriptors.
//!
//! Each function checks what can be checked without the data (pointers against the element
//! counts they address, overflowing sizes, groups, descriptors, indices where a count makes
//! every index out of range), returns early when there is nothing to compute, and otherwise
//! calls the device. Work goes to `stream`, or to the current device's default stream for
//! `None`; the caller resolves the stream (a handle look-up in the C ABI) before calling, so a
//! bad stream is reported even for an empty problem. Work is queued: synchronize the stream
//! before reading results on the host.
//!
//! The pointers must address memory of the stream's device of the sizes described (host
//! memory for the CPU device); that part of the contract cannot be checked here.

pub mod blas;
pub mod dnn;
pub mod kernel;

use crate::base::dtype::DType;
use crate::device::{DevPtr, Device, RawStream};
use crate::runtime::{Stream, context};
use crate::{Error, ErrorKind, Result};
use std::sync::Arc;

thread_local! {
    static CHECK_ONLY: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the raw front ends in check-only mode on this thread: every check is made,
/// and where a call would reach the device it returns `Ok(())` instead (a raw call being
/// recorded into a graph is checked now and run when the graph runs).
pub fn checks_only<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            CHECK_ONLY.with(|c| c.set(self.0));
        }
    }
    let _reset = Reset(CHECK_ONLY.with(|c| c.replace(true)));
    f()
}

/// The device and raw stream the work goes to: the stream's, or the current device's
/// default stream; `None` in [`checks_only`] mode (the caller returns `Ok(())`).
fn target(stream: Option<&Stream>) -> Option<(Arc<dyn Device>, RawStream)> {
    if CHECK_ONLY.with(|c| c.get()) {
        return None;
    }
    Some(device_of(stream))
}

/// The device and raw stream of `stream` (queries that queue no work).
fn device_of(stream: Option<&Stream>) -> (Arc<dyn Device>, RawStream) {
    match stream {
        Some(s) => (s.device().clone(), s.raw()),
        None => (context::current_device(), RawStream::DEFAULT),
    }
}

fn null(arg: &str) -> Error {
    Error::new(ErrorKind::NullPointer, format!("{arg} is NULL"))
}

/// `p`, which may be NULL only when it addresses no elements (`n == 0`).
fn need(p: DevPtr, n: usize, arg: &str) -> Result<DevPtr> {
    if p.is_null() && n > 0 {
        return Err(null(arg));
    }
    Ok(p)
}

/// `p`, which must not be NULL (a buffer that is read or written whenever there is work).
fn required(p: DevPtr, arg: &str) -> Result<DevPtr> {
    if p.is_null() { Err(null(arg)) } else { Ok(p) }
}

/// `dt` must be f32, f16 or bf16.
fn float_dtype(op: &str, dt: DType) -> Result<()> {
    if !dt.is_float() {
        return Err(Error::dtype(format!(
            "{op}: dtype {dt} is not f32, f16 or bf16"
        )));
    }
    Ok(())
}

/// Sets `n` elements of `dtype` at each non-NULL pointer of `ptrs` to zero (the gradients of
/// an empty problem).
fn zero(
    dev: &Arc<dyn Device>,
    raw: RawStream,
    dtype: DType,
    ptrs: &[DevPtr],
    n: usize,
) -> Result<()> {
    if n == 0 {
        return Ok(());
    }
    for &p in ptrs.iter().filter(|p| !p.is_null()) {
        dev.fill(raw, dtype, p, n, 0.0)?;
    }
    Ok(())
}
