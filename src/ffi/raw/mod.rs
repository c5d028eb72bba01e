//! The raw entry points, for frameworks that own their memory: `rb_blas_*` ([`blas`]),
//! `rb_dnn_*` ([`dnn`]) and `rb_kernel_*` ([`kernel`]). Each export reads its C arguments
//! (enum values, host arrays, pointers as [`DevPtr`]), looks its stream up (a NULL stream is
//! the current device's default stream) and calls one function of
//! [`crate::runtime::raw`], which checks the problem and runs it. The stream is looked up
//! before anything else is checked against the data, so a bad handle is reported even for an
//! empty problem.

pub mod blas;
pub mod dnn;
pub mod kernel;

use crate::device::DevPtr;

/// A caller's device pointer (NULL stays NULL; the runtime checks it against the count).
fn dp<T>(p: *const T) -> DevPtr {
    DevPtr(p as usize as u64)
}

/// An optional device pointer: NULL is `None`.
fn dp_opt<T>(p: *const T) -> Option<DevPtr> {
    (!p.is_null()).then(|| dp(p))
}
