//! Tensors: creation, queries, host copies, destruction.
//!
//! A tensor is dense and row-major, of one dtype, on one device. Handles are owned by the
//! caller from the call that made them until `rb_tensor_destroy`; the storage lives on while
//! a view made by `rb_tensor_reshape` still uses it. A tensor handle may be used from several
//! threads; writes to the same tensor from several threads at once race as in any framework.

use super::handles::{arc, new_handle, release};
use super::status::{guard, rb_status};
use super::util::{bytes, bytes_mut, check_out, cstr_opt, dtype_arg, null, shape_arg, write_out};
use crate::runtime::context;
use crate::runtime::{DType, Tensor};
use crate::{Error, Result};
use std::ffi::{c_char, c_void};

/// An opaque tensor handle.
pub struct rb_tensor {
    _private: [u8; 0],
}

/// # Safety
/// `out` is NULL or writable.
unsafe fn put(out: *mut *mut rb_tensor, t: Tensor) -> Result<()> {
    let p = new_handle(t);
    unsafe { write_out(out, "out", p) }
}

unsafe fn create(
    device: *const c_char,
    shape: *const i64,
    ndim: usize,
    dtype: i32,
    out: *mut *mut rb_tensor,
    make: impl FnOnce(std::sync::Arc<dyn crate::device::Device>, &[usize], DType) -> Result<Tensor>,
) -> Result<()> {
    check_out(out, "out")?;
    let dev = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
    let shape = unsafe { shape_arg(shape, ndim, "shape") }?;
    let dtype = dtype_arg(dtype)?;
    let t = make(dev, &shape, dtype)?;
    unsafe { put(out, t) }
}

/// Makes an uninitialized tensor of `shape` (`ndim` extents; NULL allowed when `ndim` is 0)
/// and `dtype` (an `rb_dtype`) on `device` (a device string, or NULL for the current device).
///
/// On success `*out` is a new handle the caller owns (free it with `rb_tensor_destroy`).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (bad dtype, negative or
/// overflowing extent, bad device string), RB_STATUS_DEVICE_UNAVAILABLE or
/// RB_STATUS_OUT_OF_MEMORY; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// Pointers are NULL or valid as described.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_empty(
    device: *const c_char,
    shape: *const i64,
    ndim: usize,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_empty", || unsafe {
        create(device, shape, ndim, dtype, out, Tensor::empty)
    })
}

/// As `rb_tensor_empty`, with every element zero.
///
/// # Safety
/// As `rb_tensor_empty`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_zeros(
    device: *const c_char,
    shape: *const i64,
    ndim: usize,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_zeros", || unsafe {
        create(device, shape, ndim, dtype, out, Tensor::zeros)
    })
}

/// Makes a tensor holding a copy of `nbytes` bytes at `data`, which must equal the element
/// count of `shape` times the size of `dtype` (row-major, native byte order).
///
/// On success `*out` is a new handle the caller owns; `data` stays the caller's. Fails with
/// RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (including an `nbytes` that does not
/// match), RB_STATUS_DEVICE_UNAVAILABLE or RB_STATUS_OUT_OF_MEMORY; `*out` is then
/// unchanged. Thread-safe.
///
/// # Safety
/// `data` is readable for `nbytes` bytes; other pointers as `rb_tensor_empty`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_from_host(
    device: *const c_char,
    data: *const c_void,
    nbytes: usize,
    shape: *const i64,
    ndim: usize,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_from_host", || unsafe {
        let src = bytes(data, nbytes, "data")?;
        create(device, shape, ndim, dtype, out, |d, s, t| {
            Tensor::from_bytes(d, src, s, t)
        })
    })
}

/// Makes a tensor of standard normal samples (mean 0, standard deviation 1) of a floating
/// `dtype`. The values depend only on `seed` and the element index, so every device draws
/// the same tensor for the same seed.
///
/// Ownership and failures as `rb_tensor_empty`; a non-floating dtype gives
/// RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// As `rb_tensor_empty`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_randn(
    device: *const c_char,
    shape: *const i64,
    ndim: usize,
    dtype: i32,
    seed: u64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_randn", || unsafe {
        create(device, shape, ndim, dtype, out, |d, s, t| {
            Tensor::randn(d, s, t, seed)
        })
    })
}

/// Makes a tensor of integers drawn uniformly from `[low, high)`, `dtype` RB_DTYPE_I32 or
/// RB_DTYPE_I64, reproducible from `seed` on every device.
///
/// Ownership and failures as `rb_tensor_empty`; `high <= low` gives
/// RB_STATUS_INVALID_ARGUMENT, another dtype RB_STATUS_DTYPE_MISMATCH. Thread-safe.
///
/// # Safety
/// As `rb_tensor_empty`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_randint(
    device: *const c_char,
    shape: *const i64,
    ndim: usize,
    dtype: i32,
    low: i64,
    high: i64,
    seed: u64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_randint", || unsafe {
        create(device, shape, ndim, dtype, out, |d, s, t| {
            Tensor::randint(d, s, t, low, high, seed)
        })
    })
}

/// Releases the caller's handle. NULL is a no-op. The storage is freed once no view of it
/// remains.
///
/// Fails with RB_STATUS_INVALID_HANDLE for a handle that is already destroyed, foreign, or
/// not a tensor; nothing is freed then. Thread-safe, but a handle must not be used after (or
/// while) it is destroyed.
///
/// # Safety
/// None beyond passing a value this library returned (or any value: it is checked).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_destroy(tensor: *mut rb_tensor) -> rb_status {
    guard("rb_tensor_destroy", || release(tensor, "tensor"))
}

/// Writes the number of dimensions to `*ndim`.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `ndim` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_ndim(tensor: *const rb_tensor, ndim: *mut usize) -> rb_status {
    guard("rb_tensor_ndim", || {
        let t = arc(tensor, "tensor")?;
        unsafe { write_out(ndim, "ndim", t.shape().len()) }
    })
}

/// Writes the extents to `dims[0..ndim)`; `capacity` is the room at `dims` and must be at least
/// the tensor's `ndim` (16 always suffices).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or RB_STATUS_INVALID_ARGUMENT
/// (too small); `dims` is then unchanged. Thread-safe.
///
/// # Safety
/// `dims` is NULL or writable for `capacity` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_shape(
    tensor: *const rb_tensor,
    dims: *mut i64,
    capacity: usize,
) -> rb_status {
    guard("rb_tensor_shape", || {
        let t = arc(tensor, "tensor")?;
        let nd = t.shape().len();
        if nd == 0 {
            return Ok(());
        }
        if dims.is_null() {
            return Err(null("dims"));
        }
        if capacity < nd {
            return Err(Error::invalid(format!("capacity {capacity} < ndim {nd}")));
        }
        for (i, &d) in t.shape().iter().enumerate() {
            // SAFETY: dims has room for capacity >= nd values.
            unsafe { *dims.add(i) = d as i64 };
        }
        Ok(())
    })
}

/// Writes the dtype (an `rb_dtype` value) to `*dtype`.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `dtype` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_dtype(tensor: *const rb_tensor, dtype: *mut i32) -> rb_status {
    guard("rb_tensor_dtype", || {
        let t = arc(tensor, "tensor")?;
        unsafe { write_out(dtype, "dtype", t.dtype() as i32) }
    })
}

/// Writes the element count to `*numel`.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `numel` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_numel(tensor: *const rb_tensor, numel: *mut usize) -> rb_status {
    guard("rb_tensor_numel", || {
        let t = arc(tensor, "tensor")?;
        unsafe { write_out(numel, "numel", t.numel()) }
    })
}

/// Writes the size of the data in bytes to `*nbytes`.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `nbytes` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_nbytes(
    tensor: *const rb_tensor,
    nbytes: *mut usize,
) -> rb_status {
    guard("rb_tensor_nbytes", || {
        let t = arc(tensor, "tensor")?;
        unsafe { write_out(nbytes, "nbytes", t.nbytes()) }
    })
}

/// Writes the tensor's device kind (an `rb_device_kind`) and ordinal.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `kind` and `ordinal` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_device(
    tensor: *const rb_tensor,
    kind: *mut i32,
    ordinal: *mut i32,
) -> rb_status {
    guard("rb_tensor_device", || {
        let t = arc(tensor, "tensor")?;
        check_out(kind, "kind")?;
        check_out(ordinal, "ordinal")?;
        unsafe {
            write_out(kind, "kind", t.device().kind() as i32)?;
            write_out(ordinal, "ordinal", t.device().ordinal() as i32)
        }
    })
}

/// Writes the address of the first element (a host address on the CPU, a device address on
/// a GPU; NULL for an empty tensor), for interop (DLPack, a caller's kernels). The memory
/// stays the tensor's: valid while the tensor (or a view) lives.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `data` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_data_ptr(
    tensor: *const rb_tensor,
    data: *mut *mut c_void,
) -> rb_status {
    guard("rb_tensor_data_ptr", || {
        let t = arc(tensor, "tensor")?;
        unsafe { write_out(data, "data", t.ptr().as_mut_ptr::<c_void>()) }
    })
}

/// Copies the whole tensor to `dst`, which holds `nbytes` bytes, exactly the tensor's size.
/// Waits for the copy (and the work queued before it on the default stream) to finish.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (size differs) or RB_STATUS_VENDOR; `dst` may then be partly written. Thread-safe.
///
/// # Safety
/// `dst` is NULL or writable for `nbytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_copy_to_host(
    tensor: *const rb_tensor,
    dst: *mut c_void,
    nbytes: usize,
) -> rb_status {
    guard("rb_tensor_copy_to_host", || {
        let t = arc(tensor, "tensor")?;
        crate::graph::capture::check_host_access("rb_tensor_copy_to_host", &t)?;
        let d = unsafe { bytes_mut(dst, nbytes, "dst") }?;
        t.copy_to_host(d, None)
    })
}

/// Overwrites the tensor with `nbytes` bytes from `src`, exactly the tensor's size, and waits
/// for the copy.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (size differs; a read-only tensor) or RB_STATUS_VENDOR. Thread-safe.
///
/// # Safety
/// `src` is NULL or readable for `nbytes` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_copy_from_host(
    tensor: *mut rb_tensor,
    src: *const c_void,
    nbytes: usize,
) -> rb_status {
    guard("rb_tensor_copy_from_host", || {
        let t = arc(tensor, "tensor")?;
        crate::graph::capture::check_host_access("rb_tensor_copy_from_host", &t)?;
        t.check_writable("tensor")?;
        let s = unsafe { bytes(src, nbytes, "src") }?;
        if s.len() != t.nbytes() {
            return Err(Error::invalid(format!(
                "src has {} bytes, the tensor has {}",
                s.len(),
                t.nbytes()
            )));
        }
        if !s.is_empty() {
            t.device().copy_h2d(s, t.ptr(), Default::default())?;
            t.device().synchronize()?;
        }
        Ok(())
    })
}

/// Makes a view of the tensor's storage with another shape of the same element count.
///
/// On success `*out` is a new handle the caller owns; writes through either are seen by both.
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT or
/// RB_STATUS_SHAPE_MISMATCH; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `shape` is readable for `ndim` values; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_reshape(
    tensor: *const rb_tensor,
    shape: *const i64,
    ndim: usize,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_reshape", || {
        let t = arc(tensor, "tensor")?;
        check_out(out, "out")?;
        let s = unsafe { shape_arg(shape, ndim, "shape") }?;
        let v = t.reshape(&s)?;
        unsafe { put(out, v) }
    })
}

/// Makes a copy of `tensor` on `device` (a device string, or NULL for the current device):
/// same shape, dtype and values. Between different devices the data travels through host
/// memory; on the same device it is a device-to-device copy. Waits for the copy.
///
/// On success `*out` is a new handle the caller owns; `tensor` is unchanged. Fails with
/// RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_DEVICE_UNAVAILABLE, RB_STATUS_OUT_OF_MEMORY or RB_STATUS_VENDOR; `*out` is then
/// unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_to_device(
    tensor: *const rb_tensor,
    device: *const c_char,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_to_device", || {
        check_out(out, "out")?;
        let t = arc(tensor, "tensor")?;
        crate::graph::capture::check_host_access("rb_tensor_to_device", &t)?;
        let d = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
        let c = t.to_device(d)?;
        unsafe { put(out, c) }
    })
}
