//! Argument checks shared by the exports: C strings, out-pointers, shapes, dtypes, and the
//! eager-op output convention.

use crate::base::dtype::DType;
use crate::base::shape;
use crate::runtime::Tensor;
use crate::{Error, ErrorKind, Result};
use std::ffi::{CStr, c_char, c_void};

pub fn null(arg: &str) -> Error {
    Error::new(ErrorKind::NullPointer, format!("{arg} is NULL"))
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string.
pub unsafe fn cstr<'a>(p: *const c_char, arg: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(null(arg));
    }
    // SAFETY: caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Error::invalid(format!("{arg} is not valid UTF-8")))
}

/// Like [`cstr`], but NULL gives `None`.
///
/// # Safety
/// As [`cstr`].
pub unsafe fn cstr_opt<'a>(p: *const c_char, arg: &str) -> Result<Option<&'a str>> {
    if p.is_null() {
        Ok(None)
    } else {
        unsafe { cstr(p, arg) }.map(Some)
    }
}

/// Writes `v` through an out-pointer (checked for NULL).
///
/// # Safety
/// `p` is NULL or valid for a write of `T`.
pub unsafe fn write_out<T>(p: *mut T, arg: &str, v: T) -> Result<()> {
    if p.is_null() {
        return Err(null(arg));
    }
    // SAFETY: caller's contract.
    unsafe { p.write(v) };
    Ok(())
}

/// Checks an out-pointer before any work is done.
pub fn check_out<T>(p: *mut T, arg: &str) -> Result<()> {
    if p.is_null() { Err(null(arg)) } else { Ok(()) }
}

/// A shape argument: `ndim` extents at `dims` (which may be NULL when `ndim` is 0).
///
/// # Safety
/// `dims` is NULL or points to `ndim` readable `int64_t`.
pub unsafe fn shape_arg(dims: *const i64, ndim: usize, arg: &str) -> Result<Vec<usize>> {
    if ndim == 0 {
        return Ok(vec![]);
    }
    if dims.is_null() {
        return Err(null(arg));
    }
    if ndim > shape::MAX_DIMS {
        return Err(Error::invalid(format!(
            "{arg}: {ndim} dimensions, at most {} allowed",
            shape::MAX_DIMS
        )));
    }
    // SAFETY: caller's contract.
    let d = unsafe { std::slice::from_raw_parts(dims, ndim) };
    shape::from_i64(d).map_err(|e| e.context(arg))
}

pub fn dtype_arg(v: i32) -> Result<DType> {
    DType::from_i32(v)
}

/// A read-only byte range (`len` may be 0 with a NULL pointer).
///
/// # Safety
/// `p` is NULL or readable for `len` bytes.
pub unsafe fn bytes<'a>(p: *const c_void, len: usize, arg: &str) -> Result<&'a [u8]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null(arg));
    }
    // SAFETY: caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p as *const u8, len) })
}

/// A writable byte range.
///
/// # Safety
/// `p` is NULL or writable for `len` bytes.
pub unsafe fn bytes_mut<'a>(p: *mut c_void, len: usize, arg: &str) -> Result<&'a mut [u8]> {
    if len == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(null(arg));
    }
    // SAFETY: caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) })
}

/// The eager-op output convention: `out` must not be NULL; if `*out` is NULL the op makes a
/// new tensor, else `*out` is the destination. Returns the destination (if any).
///
/// # Safety
/// `out` is NULL or valid for reads and writes of one handle.
pub unsafe fn out_tensor(
    out: *mut *mut crate::ffi::tensor::rb_tensor,
) -> Result<Option<std::sync::Arc<Tensor>>> {
    if out.is_null() {
        return Err(null("out"));
    }
    // SAFETY: caller's contract.
    let cur = unsafe { *out };
    crate::ffi::handles::arc_opt(cur, "*out")
}

/// Finishes an eager op: registers a new result when `*out` was NULL.
///
/// # Safety
/// As [`out_tensor`].
pub unsafe fn finish_out(
    out: *mut *mut crate::ffi::tensor::rb_tensor,
    given: Option<std::sync::Arc<Tensor>>,
    result: Tensor,
) {
    if given.is_none() {
        let h = crate::ffi::handles::new_handle::<crate::ffi::tensor::rb_tensor>(result);
        // SAFETY: caller's contract.
        unsafe { *out = h };
    }
}
