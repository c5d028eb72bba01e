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

/// One `rb_tensor **` output parameter of an eager export, in each of the op table's
/// output kinds (`crate::ops::table::OutKind`): read before the op runs (the destination it
/// names, or whether it is wanted) and finished after it (a new result's handle written).
pub struct OutSlot {
    p: *mut *mut crate::ffi::tensor::rb_tensor,
    given: Option<std::sync::Arc<Tensor>>,
}

impl OutSlot {
    /// A required pointer; `*p == NULL` asks for a new tensor, anything else must be a live
    /// tensor handle (the destination).
    ///
    /// # Safety
    /// `p` is NULL or valid for reading and writing one handle.
    pub unsafe fn out(p: *mut *mut crate::ffi::tensor::rb_tensor, arg: &str) -> Result<Self> {
        if p.is_null() {
            return Err(null(arg));
        }
        unsafe { Self::opt(p, arg) }
    }

    /// A pointer that may be NULL (not wanted); otherwise as [`OutSlot::out`].
    ///
    /// # Safety
    /// As [`OutSlot::out`].
    pub unsafe fn opt(p: *mut *mut crate::ffi::tensor::rb_tensor, arg: &str) -> Result<Self> {
        if p.is_null() {
            return Ok(OutSlot { p, given: None });
        }
        // SAFETY: caller's contract.
        let cur = unsafe { *p };
        let given = crate::ffi::handles::arc_opt(cur, arg)?;
        if let Some(t) = &given {
            t.check_writable(arg)?;
        }
        Ok(OutSlot { p, given })
    }

    /// A required pointer that always receives a new tensor (`*p` is not read).
    ///
    /// # Safety
    /// `p` is NULL or valid for writing one handle.
    pub unsafe fn new_only(p: *mut *mut crate::ffi::tensor::rb_tensor, arg: &str) -> Result<Self> {
        check_out(p, arg)?;
        Ok(OutSlot { p, given: None })
    }

    /// A pointer that may be NULL (not wanted), else receives a new tensor.
    ///
    /// # Safety
    /// `p` is NULL or valid for writing one handle.
    pub unsafe fn new_opt(p: *mut *mut crate::ffi::tensor::rb_tensor, _arg: &str) -> Result<Self> {
        Ok(OutSlot { p, given: None })
    }

    /// The destination, if `*p` named one.
    pub fn dest(&self) -> Option<&Tensor> {
        self.given.as_deref()
    }

    /// The runtime's view of a gradient output: skipped, new, or into a destination.
    pub fn as_grad(&self) -> crate::runtime::eager::Grad<'_> {
        use crate::runtime::eager::Grad;
        if self.p.is_null() {
            Grad::Skip
        } else {
            match &self.given {
                Some(t) => Grad::Into(t),
                None => Grad::New,
            }
        }
    }

    /// Whether the output is wanted (its pointer is not NULL).
    pub fn wanted(&self) -> bool {
        !self.p.is_null()
    }

    /// The in-place rule: a destination must not share memory with any of `inputs`, except
    /// (when `exact_ok`) by being exactly one of them with the same shape.
    pub fn check_overlap(
        &self,
        op: &str,
        inputs: &[(&str, Option<&Tensor>)],
        exact_ok: bool,
    ) -> Result<()> {
        match &self.given {
            None => Ok(()),
            Some(o) => crate::runtime::eager::check_overlap(op, o, inputs, exact_ok),
        }
    }

    /// [`OutSlot::check_overlap`] against a list input (`arg[i]`).
    pub fn check_overlap_list(
        &self,
        op: &str,
        arg: &str,
        list: &[std::sync::Arc<Tensor>],
        exact_ok: bool,
    ) -> Result<()> {
        let Some(o) = &self.given else {
            return Ok(());
        };
        let names: Vec<String> = (0..list.len()).map(|i| format!("{arg}[{i}]")).collect();
        let inputs: Vec<(&str, Option<&Tensor>)> = names
            .iter()
            .zip(list)
            .map(|(n, t)| (n.as_str(), Some(&**t)))
            .collect();
        crate::runtime::eager::check_overlap(op, o, &inputs, exact_ok)
    }

    /// Writes a new result's handle (nothing when the output was a destination or not
    /// wanted).
    ///
    /// # Safety
    /// As the constructor's.
    pub unsafe fn finish(self, r: impl Into<Option<Tensor>>) {
        if let (false, None, Some(r)) = (self.p.is_null(), &self.given, r.into()) {
            // SAFETY: caller's contract.
            unsafe { *self.p = crate::ffi::handles::new_handle(r) };
        }
    }
}

/// Copies `text` NUL-terminated into `buf` (`len` bytes; NULL with `len` 0 asks only for
/// the size); `*needed` (when not NULL) gets the size it needs, NUL included, also when
/// `buf` is too small (INVALID_ARGUMENT, `buf` unchanged).
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes; `needed` is NULL or writable.
pub unsafe fn write_text(
    text: &str,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> Result<()> {
    let text = text.replace('\0', " ");
    let n = text.len() + 1;
    if !needed.is_null() {
        unsafe { needed.write(n) };
    }
    if buf.is_null() {
        return if len == 0 { Ok(()) } else { Err(null("buf")) };
    }
    if len < n {
        return Err(Error::invalid(format!(
            "buf holds {len} bytes, the text needs {n}"
        )));
    }
    // SAFETY: buf is writable for len >= n bytes.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr() as *const c_char, buf, text.len());
        *buf.add(text.len()) = 0;
    }
    Ok(())
}
