//! DLPack interop, both ways and zero-copy: a `DLManagedTensorVersioned` (DLPack 1.x) or a
//! legacy `DLManagedTensor` becomes an `rb_tensor` over the same memory, and an `rb_tensor`
//! becomes one of them over its memory.
//!
//! The managed tensors cross the ABI as `void *` so that this header never declares the
//! DLPack types itself (a caller that includes `dlpack/dlpack.h` as well would otherwise
//! see them twice): pass a `DLManagedTensorVersioned *` or a `DLManagedTensor *`. The
//! layouts below are DLPack's own (`dlpack.h`, v1.1), on which a test in `tests/c` and the
//! Python package's ctypes structures agree.
//!
//! The tensor model is dense and row-major, so an import must be contiguous (strides NULL,
//! or the compact row-major strides, where any stride of a size-1 dimension is accepted);
//! other strides are refused with RB_STATUS_UNSUPPORTED, never copied or misread.
//! Devices: kDLCPU (and the host-pinned kDLCUDAHost / kDLROCMHost) map to the CPU device,
//! kDLCUDA (and kDLCUDAManaged) `device_id` N to `cuda:N`, kDLROCM N to `rocm:N`; a device
//! this process does not run gives RB_STATUS_DEVICE_UNAVAILABLE.

use super::handles::{arc, new_handle};
use super::status::{guard, rb_status};
use super::tensor::rb_tensor;
use super::util::{check_out, null, write_out};
use crate::base::dtype::DType;
use crate::base::shape;
use crate::device::{DevPtr, DeviceKind};
use crate::runtime::tensor::ExternalOwner;
use crate::runtime::{DeviceSpec, Tensor, context};
use crate::{Error, ErrorKind, Result};
use std::ffi::c_void;

/// `DLPACK_FLAG_BITMASK_READ_ONLY`: the consumer must not write the memory.
pub const DLPACK_FLAG_BITMASK_READ_ONLY: u64 = 1;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`: the producer made a copy for this export.
pub const DLPACK_FLAG_BITMASK_IS_COPIED: u64 = 1 << 1;
/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED` (DLPack 1.1).
pub const DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED: u64 = 1 << 2;

/// The DLPack version this library writes into the tensors it exports.
pub const DLPACK_MAJOR_VERSION: u32 = 1;
pub const DLPACK_MINOR_VERSION: u32 = 1;

/// `DLDeviceType` values used here.
pub const KDL_CPU: i32 = 1;
pub const KDL_CUDA: i32 = 2;
pub const KDL_CUDA_HOST: i32 = 3;
pub const KDL_ROCM: i32 = 10;
pub const KDL_ROCM_HOST: i32 = 11;
pub const KDL_CUDA_MANAGED: i32 = 13;

/// `DLDataTypeCode` values used here.
const KDL_INT: u8 = 0;
const KDL_UINT: u8 = 1;
const KDL_FLOAT: u8 = 2;
const KDL_BFLOAT: u8 = 4;
const KDL_BOOL: u8 = 6;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct DLPackVersion {
    major: u32,
    minor: u32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

#[repr(C)]
struct DLManagedTensorVersioned {
    version: DLPackVersion,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

// The layouts of dlpack.h on a 64-bit target.
const _: () = assert!(std::mem::size_of::<DLTensor>() == 48);
const _: () = assert!(std::mem::size_of::<DLManagedTensor>() == 64);
const _: () = assert!(std::mem::size_of::<DLManagedTensorVersioned>() == 80);
const _: () = assert!(std::mem::offset_of!(DLManagedTensorVersioned, dl_tensor) == 32);

fn dtype_of(t: DLDataType) -> Result<DType> {
    if t.lanes != 1 {
        return Err(Error::new(
            ErrorKind::DtypeMismatch,
            format!(
                "DLPack dtype with {} lanes: only 1 lane is supported",
                t.lanes
            ),
        ));
    }
    Ok(match (t.code, t.bits) {
        (KDL_FLOAT, 32) => DType::F32,
        (KDL_FLOAT, 16) => DType::F16,
        (KDL_BFLOAT, 16) => DType::BF16,
        (KDL_INT, 32) => DType::I32,
        (KDL_INT, 64) => DType::I64,
        (KDL_BOOL, 8) => DType::Bool,
        (KDL_FLOAT, 64) => DType::F64,
        (KDL_INT, 8) => DType::I8,
        (KDL_UINT, 8) => DType::U8,
        (KDL_INT, 16) => DType::I16,
        (c, b) => {
            return Err(Error::new(
                ErrorKind::DtypeMismatch,
                format!(
                    "DLPack dtype (code {c}, {b} bits) has no rb_dtype (float64/32/16, \
                     bfloat16, int64/32/16/8, uint8 and bool are supported)"
                ),
            ));
        }
    })
}

fn dl_dtype(d: DType) -> DLDataType {
    let (code, bits) = match d {
        DType::F32 => (KDL_FLOAT, 32),
        DType::F16 => (KDL_FLOAT, 16),
        DType::BF16 => (KDL_BFLOAT, 16),
        DType::I32 => (KDL_INT, 32),
        DType::I64 => (KDL_INT, 64),
        DType::Bool => (KDL_BOOL, 8),
        DType::F64 => (KDL_FLOAT, 64),
        DType::I8 => (KDL_INT, 8),
        DType::U8 => (KDL_UINT, 8),
        DType::I16 => (KDL_INT, 16),
    };
    DLDataType {
        code,
        bits,
        lanes: 1,
    }
}

/// The library device a DLPack device names (DEVICE_UNAVAILABLE when this process does not
/// run it).
fn device_of(d: DLDevice) -> Result<std::sync::Arc<dyn crate::device::Device>> {
    let ord = || {
        usize::try_from(d.device_id)
            .map_err(|_| Error::invalid(format!("DLPack device_id {} is negative", d.device_id)))
    };
    let spec = match d.device_type {
        KDL_CPU | KDL_CUDA_HOST | KDL_ROCM_HOST => DeviceSpec::Cpu,
        KDL_CUDA | KDL_CUDA_MANAGED => DeviceSpec::Cuda(ord()?),
        KDL_ROCM => DeviceSpec::Rocm(ord()?),
        other => {
            return Err(Error::new(
                ErrorKind::DeviceUnavailable,
                format!(
                    "DLPack device type {other} is not one this library runs (kDLCPU=1, \
                     kDLCUDA=2, kDLCUDAHost=3, kDLROCM=10, kDLROCMHost=11, kDLCUDAManaged=13)"
                ),
            ));
        }
    };
    context::device(spec).map_err(|e| e.context("DLPack device"))
}

/// What the library's tensor over a DLTensor is.
struct Described {
    dev: std::sync::Arc<dyn crate::device::Device>,
    shape: Vec<usize>,
    dtype: DType,
    /// `data` (the allocation's address as the producer gave it).
    base: DevPtr,
    /// `byte_offset`.
    offset: usize,
}

/// Checks a DLTensor and says what the library's tensor over it is.
///
/// # Safety
/// `t`'s `shape` (and `strides` unless NULL) are readable for `ndim` values.
unsafe fn describe(t: &DLTensor) -> Result<Described> {
    let dtype = dtype_of(t.dtype)?;
    if t.ndim < 0 || t.ndim as usize > shape::MAX_DIMS {
        return Err(Error::invalid(format!(
            "DLPack ndim {} is out of range (0..={})",
            t.ndim,
            shape::MAX_DIMS
        )));
    }
    let nd = t.ndim as usize;
    let dims: &[i64] = if nd == 0 {
        &[]
    } else if t.shape.is_null() {
        return Err(null("DLPack shape"));
    } else {
        // SAFETY: caller's contract.
        unsafe { std::slice::from_raw_parts(t.shape, nd) }
    };
    let shape = shape::from_i64(dims).map_err(|e| e.context("DLPack shape"))?;
    let numel = shape::numel(&shape)?;
    if !t.strides.is_null() && nd > 0 && numel > 0 {
        // SAFETY: caller's contract.
        let st = unsafe { std::slice::from_raw_parts(t.strides, nd) };
        let mut want: i64 = 1;
        for i in (0..nd).rev() {
            if shape[i] != 1 && st[i] != want {
                return Err(Error::new(
                    ErrorKind::Unsupported,
                    format!(
                        "DLPack tensor of shape {shape:?} has strides {st:?} (in elements): \
                         not contiguous; rb tensors are dense row-major, so make it \
                         contiguous first (e.g. .contiguous(), np.ascontiguousarray)"
                    ),
                ));
            }
            want = want.saturating_mul(shape[i] as i64);
        }
    }
    let offset = usize::try_from(t.byte_offset)
        .map_err(|_| Error::invalid("DLPack byte_offset does not fit in size_t"))?;
    let base = DevPtr(t.data as usize as u64);
    let nbytes = shape::nbytes(&shape, dtype)?;
    if nbytes > 0 {
        if base.is_null() {
            return Err(null("DLPack data"));
        }
        let first = base.0.checked_add(offset as u64).ok_or_else(|| {
            Error::invalid("DLPack data + byte_offset overflows the address space")
        })?;
        if first % dtype.size() as u64 != 0 {
            return Err(Error::invalid(format!(
                "DLPack data + byte_offset ({first:#x}) is not aligned to the {}-byte {dtype} \
                 element",
                dtype.size()
            )));
        }
    }
    let dev = device_of(t.device)?;
    Ok(Described {
        dev,
        shape,
        dtype,
        base,
        offset,
    })
}

/// Keeps an imported managed tensor alive; dropping it calls the producer's deleter (once).
struct Imported {
    managed: *mut c_void,
    delete: unsafe fn(*mut c_void),
}

// SAFETY: DLPack deleters may be called from any thread (the producer's contract).
unsafe impl Send for Imported {}
unsafe impl Sync for Imported {}

impl Drop for Imported {
    fn drop(&mut self) {
        // SAFETY: `managed` is the producer's live managed tensor, deleted only here.
        unsafe { (self.delete)(self.managed) }
    }
}

unsafe fn delete_versioned(p: *mut c_void) {
    let m = p as *mut DLManagedTensorVersioned;
    // SAFETY: p is a live DLManagedTensorVersioned.
    if let Some(d) = unsafe { (*m).deleter } {
        unsafe { d(m) }
    }
}

unsafe fn delete_legacy(p: *mut c_void) {
    let m = p as *mut DLManagedTensor;
    // SAFETY: p is a live DLManagedTensor.
    if let Some(d) = unsafe { (*m).deleter } {
        unsafe { d(m) }
    }
}

/// # Safety
/// `t` is the DLTensor of the live managed tensor `managed`.
unsafe fn import(
    t: &DLTensor,
    read_only: bool,
    managed: *mut c_void,
    delete: unsafe fn(*mut c_void),
    out: *mut *mut rb_tensor,
) -> Result<()> {
    let Described {
        dev,
        shape,
        dtype,
        base,
        offset,
    } = unsafe { describe(t) }?;
    let nbytes = shape::nbytes(&shape, dtype)?;
    let span = offset
        .checked_add(nbytes)
        .ok_or_else(|| Error::invalid("DLPack byte_offset + size overflows"))?;
    let owner: ExternalOwner = Box::new(Imported { managed, delete });
    // SAFETY: the producer keeps base..base+span valid until its deleter runs, which is when
    // `owner` is dropped.
    match unsafe { Tensor::from_external(dev, base, span, offset, &shape, dtype, read_only, owner) }
    {
        Ok(tensor) => {
            let h = new_handle(tensor);
            // SAFETY: checked non-NULL by the caller.
            unsafe { *out = h };
            Ok(())
        }
        Err((e, owner)) => {
            // The caller keeps the managed tensor: forget our claim without deleting it.
            if let Ok(imp) = owner.downcast::<Imported>() {
                std::mem::forget(*imp);
            }
            Err(e)
        }
    }
}

/// Makes a tensor over the memory of a DLPack 1.x managed tensor
/// (`DLManagedTensorVersioned *`), without copying.
///
/// Ownership: on success the library owns `managed`: it calls `managed->deleter(managed)`
/// exactly once (from whichever thread drops the last view; a NULL deleter is not called),
/// when `*out` and every view of it are destroyed; the caller must not call the deleter
/// nor free the memory. On failure nothing is taken: the caller still owns `managed`.
/// The memory must be contiguous row-major (strides NULL or compact; see the section's
/// introduction). A tensor flagged DLPACK_FLAG_BITMASK_READ_ONLY becomes a read-only tensor:
/// ops refuse it as an output or an in-place argument (RB_STATUS_INVALID_ARGUMENT). Work
/// on the producer's side must be finished or ordered before the library's streams read
/// it (the array-API `stream` protocol; the Python package does this).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (major version other than 1,
/// bad ndim, negative extents, misaligned data), RB_STATUS_DTYPE_MISMATCH (a dtype without
/// an rb_dtype, lanes != 1), RB_STATUS_UNSUPPORTED (non-contiguous strides) or
/// RB_STATUS_DEVICE_UNAVAILABLE (a device this process does not run); `*out` is then
/// unchanged. Thread-safe.
///
/// # Safety
/// `managed` is NULL or a live `DLManagedTensorVersioned` whose `shape` (and `strides`,
/// unless NULL) hold `ndim` values; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_from_dlpack(
    managed: *mut c_void,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_from_dlpack", || {
        check_out(out, "out")?;
        if managed.is_null() {
            return Err(null("managed"));
        }
        let m = managed as *mut DLManagedTensorVersioned;
        // SAFETY: caller's contract.
        let (version, flags, t) = unsafe { ((*m).version, (*m).flags, (*m).dl_tensor) };
        if version.major != DLPACK_MAJOR_VERSION {
            return Err(Error::invalid(format!(
                "DLPack version {}.{}: only major version 1 is understood",
                version.major, version.minor
            )));
        }
        if flags & DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED != 0 {
            return Err(Error::new(
                ErrorKind::DtypeMismatch,
                "DLPack sub-byte padded types are not supported",
            ));
        }
        let ro = flags & DLPACK_FLAG_BITMASK_READ_ONLY != 0;
        unsafe { import(&t, ro, managed, delete_versioned, out) }
    })
}

/// As `rb_tensor_from_dlpack`, for a legacy (pre-1.0) `DLManagedTensor *`, which has no
/// version and no flags (the tensor is writable). Ownership, failures and threads as
/// `rb_tensor_from_dlpack`.
///
/// # Safety
/// `managed` is NULL or a live `DLManagedTensor` as described; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_from_dlpack_legacy(
    managed: *mut c_void,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tensor_from_dlpack_legacy", || {
        check_out(out, "out")?;
        if managed.is_null() {
            return Err(null("managed"));
        }
        let m = managed as *mut DLManagedTensor;
        // SAFETY: caller's contract.
        let t = unsafe { (*m).dl_tensor };
        unsafe { import(&t, false, managed, delete_legacy, out) }
    })
}

/// What an export keeps: the managed tensor (first, so its address is the allocation's),
/// the tensor (holding the storage alive) and the shape and strides the DLTensor points to.
#[repr(C)]
struct Export<M> {
    managed: M,
    _tensor: Tensor,
    shape: [i64; shape::MAX_DIMS],
    strides: [i64; shape::MAX_DIMS],
}

fn dl_device(t: &Tensor) -> DLDevice {
    let device_type = match t.device().kind() {
        DeviceKind::Cpu => KDL_CPU,
        DeviceKind::Cuda => KDL_CUDA,
        DeviceKind::Rocm => KDL_ROCM,
    };
    let device_id = match t.device().kind() {
        DeviceKind::Cpu => 0,
        _ => t.device().ordinal() as i32,
    };
    DLDevice {
        device_type,
        device_id,
    }
}

/// Fills `e`'s DLTensor from its tensor (shape and strides point into `e`, which is boxed
/// and so does not move).
fn dl_tensor<M>(e: &mut Export<M>, t: &Tensor) -> DLTensor {
    let nd = t.shape().len();
    let mut stride = 1i64;
    for i in (0..nd).rev() {
        e.shape[i] = t.shape()[i] as i64;
        e.strides[i] = stride;
        stride *= t.shape()[i].max(1) as i64;
    }
    DLTensor {
        data: t.ptr().as_mut_ptr(),
        device: dl_device(t),
        ndim: nd as i32,
        dtype: dl_dtype(t.dtype()),
        shape: e.shape.as_mut_ptr(),
        strides: e.strides.as_mut_ptr(),
        byte_offset: 0,
    }
}

unsafe extern "C" fn export_delete_versioned(m: *mut DLManagedTensorVersioned) {
    if m.is_null() {
        return;
    }
    // Never unwind into C.
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: m was made by Box::into_raw of an Export<DLManagedTensorVersioned>.
        drop(unsafe { Box::from_raw(m as *mut Export<DLManagedTensorVersioned>) })
    });
}

unsafe extern "C" fn export_delete_legacy(m: *mut DLManagedTensor) {
    if m.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: m was made by Box::into_raw of an Export<DLManagedTensor>.
        drop(unsafe { Box::from_raw(m as *mut Export<DLManagedTensor>) })
    });
}

fn prepare(t: &Tensor, synchronize: bool, call: &str) -> Result<()> {
    crate::graph::capture::check_host_access(call, t)?;
    if synchronize {
        t.device().synchronize()?;
    }
    Ok(())
}

/// Exports `tensor` as a DLPack 1.x managed tensor (`DLManagedTensorVersioned *`, version
/// 1.1) over the same memory, without copying: `dl_tensor.data` is the tensor's first
/// element, `byte_offset` 0, compact row-major `strides` given, the device kDLCPU (id 0),
/// kDLCUDA or kDLROCM (id the ordinal). `flags` is ORed into the result's flags
/// (DLPACK_FLAG_BITMASK_READ_ONLY = 1, DLPACK_FLAG_BITMASK_IS_COPIED = 2; other bits are
/// RB_STATUS_INVALID_ARGUMENT); a read-only tensor always carries READ_ONLY. With
/// `synchronize` true the call first waits for the work queued on the tensor's device, so
/// any consumer stream may read it; false leaves the ordering to the caller.
///
/// Ownership: on success `*out` belongs to the consumer, which calls
/// `(*out)->deleter(*out)` exactly once when done; the storage stays alive until then, also
/// after `tensor` is destroyed (`tensor` stays the caller's, unchanged). Writes through
/// either side are seen by the other. On failure `*out` is unchanged.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (unknown flag bits; a placeholder of a graph being recorded) or RB_STATUS_VENDOR.
/// Thread-safe; the deleter may be called from any thread.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_to_dlpack(
    tensor: *const rb_tensor,
    flags: u64,
    synchronize: bool,
    out: *mut *mut c_void,
) -> rb_status {
    guard("rb_tensor_to_dlpack", || {
        let t = arc(tensor, "tensor")?;
        check_out(out, "out")?;
        let known = DLPACK_FLAG_BITMASK_READ_ONLY | DLPACK_FLAG_BITMASK_IS_COPIED;
        if flags & !known != 0 {
            return Err(Error::invalid(format!(
                "flags {flags:#x}: only DLPACK_FLAG_BITMASK_READ_ONLY (1) and \
                 DLPACK_FLAG_BITMASK_IS_COPIED (2) may be given"
            )));
        }
        prepare(&t, synchronize, "rb_tensor_to_dlpack")?;
        let flags = flags
            | if t.is_read_only() {
                DLPACK_FLAG_BITMASK_READ_ONLY
            } else {
                0
            };
        let mut e = Box::new(Export {
            managed: DLManagedTensorVersioned {
                version: DLPackVersion {
                    major: DLPACK_MAJOR_VERSION,
                    minor: DLPACK_MINOR_VERSION,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(export_delete_versioned),
                flags,
                dl_tensor: DLTensor {
                    data: std::ptr::null_mut(),
                    device: dl_device(&t),
                    ndim: 0,
                    dtype: dl_dtype(t.dtype()),
                    shape: std::ptr::null_mut(),
                    strides: std::ptr::null_mut(),
                    byte_offset: 0,
                },
            },
            _tensor: (*t).clone(),
            shape: [0; shape::MAX_DIMS],
            strides: [0; shape::MAX_DIMS],
        });
        e.managed.dl_tensor = dl_tensor(&mut e, &t);
        let p = Box::into_raw(e);
        // SAFETY: p is a live allocation; manager_ctx points at it for the consumer's use.
        unsafe { (*p).managed.manager_ctx = p as *mut c_void };
        unsafe { write_out(out, "out", p as *mut c_void) }
    })
}

/// As `rb_tensor_to_dlpack`, as a legacy (pre-1.0) `DLManagedTensor *` for consumers that
/// do not know DLPack 1.x. The legacy form cannot say read-only, so a read-only tensor is
/// refused (RB_STATUS_INVALID_ARGUMENT: use `rb_tensor_to_dlpack`). Ownership, `synchronize`,
/// failures and threads as `rb_tensor_to_dlpack`.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_to_dlpack_legacy(
    tensor: *const rb_tensor,
    synchronize: bool,
    out: *mut *mut c_void,
) -> rb_status {
    guard("rb_tensor_to_dlpack_legacy", || {
        let t = arc(tensor, "tensor")?;
        check_out(out, "out")?;
        if t.is_read_only() {
            return Err(Error::invalid(
                "the tensor is read-only and a legacy DLManagedTensor cannot say so; use \
                 rb_tensor_to_dlpack (DLPack 1.x)",
            ));
        }
        prepare(&t, synchronize, "rb_tensor_to_dlpack_legacy")?;
        let mut e = Box::new(Export {
            managed: DLManagedTensor {
                dl_tensor: DLTensor {
                    data: std::ptr::null_mut(),
                    device: dl_device(&t),
                    ndim: 0,
                    dtype: dl_dtype(t.dtype()),
                    shape: std::ptr::null_mut(),
                    strides: std::ptr::null_mut(),
                    byte_offset: 0,
                },
                manager_ctx: std::ptr::null_mut(),
                deleter: Some(export_delete_legacy),
            },
            _tensor: (*t).clone(),
            shape: [0; shape::MAX_DIMS],
            strides: [0; shape::MAX_DIMS],
        });
        e.managed.dl_tensor = dl_tensor(&mut e, &t);
        let p = Box::into_raw(e);
        unsafe { (*p).managed.manager_ctx = p as *mut c_void };
        unsafe { write_out(out, "out", p as *mut c_void) }
    })
}

/// Writes whether the tensor is read-only (imported from a DLPack tensor flagged
/// DLPACK_FLAG_BITMASK_READ_ONLY) to `*read_only`.
///
/// Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `read_only` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tensor_is_read_only(
    tensor: *const rb_tensor,
    read_only: *mut bool,
) -> rb_status {
    guard("rb_tensor_is_read_only", || {
        let t = arc(tensor, "tensor")?;
        unsafe { write_out(read_only, "read_only", t.is_read_only()) }
    })
}
