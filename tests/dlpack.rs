//! DLPack through the C ABI on the CPU: imports share memory (a write on either side is seen
//! on the other), the producer's deleter runs exactly once and only when the last view is
//! gone, failures leave the managed tensor with the caller, strides and devices are checked,
//! the read-only flag is honoured, and exports round-trip (versioned and legacy).

use rocm_backend::ffi::dlpack::*;
use rocm_backend::ffi::eager::{rb_add, rb_fill};
use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use rocm_backend::ffi::tensor::*;
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;
use std::sync::atomic::{AtomicUsize, Ordering};

#[repr(C)]
#[derive(Clone, Copy)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}
#[repr(C)]
#[derive(Clone, Copy)]
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
    version: [u32; 2],
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensorVersioned)>,
    flags: u64,
    dl_tensor: DLTensor,
}

/// A producer's tensor: its data, shape and strides, and a deleter count.
struct Producer {
    data: Vec<f32>,
    shape: Vec<i64>,
    strides: Vec<i64>,
    deleted: &'static AtomicUsize,
}

unsafe extern "C" fn delete_v(m: *mut DLManagedTensorVersioned) {
    let m = unsafe { Box::from_raw(m) };
    let p = unsafe { Box::from_raw(m.manager_ctx as *mut Producer) };
    p.deleted.fetch_add(1, Ordering::SeqCst);
}

unsafe extern "C" fn delete_l(m: *mut DLManagedTensor) {
    let m = unsafe { Box::from_raw(m) };
    let p = unsafe { Box::from_raw(m.manager_ctx as *mut Producer) };
    p.deleted.fetch_add(1, Ordering::SeqCst);
}

fn dl_tensor(p: &mut Producer, device_type: i32, with_strides: bool) -> DLTensor {
    DLTensor {
        data: p.data.as_mut_ptr() as *mut c_void,
        device: DLDevice {
            device_type,
            device_id: 0,
        },
        ndim: p.shape.len() as i32,
        dtype: DLDataType {
            code: 2,
            bits: 32,
            lanes: 1,
        },
        shape: p.shape.as_mut_ptr(),
        strides: if with_strides {
            p.strides.as_mut_ptr()
        } else {
            null_mut()
        },
        byte_offset: 0,
    }
}

/// A versioned managed tensor over `data` (shape `shape`, strides `strides`).
fn versioned(
    data: Vec<f32>,
    shape: &[i64],
    strides: &[i64],
    flags: u64,
    device_type: i32,
    deleted: &'static AtomicUsize,
) -> (*mut DLManagedTensorVersioned, *mut f32) {
    let mut p = Box::new(Producer {
        data,
        shape: shape.to_vec(),
        strides: strides.to_vec(),
        deleted,
    });
    let t = dl_tensor(&mut p, device_type, !strides.is_empty());
    let ptr = p.data.as_mut_ptr();
    let m = Box::new(DLManagedTensorVersioned {
        version: [1, 0],
        manager_ctx: Box::into_raw(p) as *mut c_void,
        deleter: Some(delete_v),
        flags,
        dl_tensor: t,
    });
    (Box::into_raw(m), ptr)
}

fn ok(s: rb_status) {
    let m = unsafe { CStr::from_ptr(rb_last_error_message()) }.to_string_lossy();
    assert_eq!(s, rb_status::Success, "{m}");
}

fn last() -> String {
    unsafe { CStr::from_ptr(rb_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn values(t: *const rb_tensor, n: usize) -> Vec<f32> {
    let mut v = vec![0f32; n];
    ok(unsafe { rb_tensor_copy_to_host(t, v.as_mut_ptr() as *mut c_void, n * 4) });
    v
}

#[test]
fn versioned_import_shares_memory_and_deletes_once() {
    static DELETED: AtomicUsize = AtomicUsize::new(0);
    let (m, data) = versioned(
        vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        &[2, 3],
        &[3, 1],
        0,
        KDL_CPU,
        &DELETED,
    );
    unsafe {
        let mut t = null_mut();
        ok(rb_tensor_from_dlpack(m as *mut c_void, &mut t));
        let mut p = null_mut();
        ok(rb_tensor_data_ptr(t, &mut p));
        assert_eq!(p as *mut f32, data, "zero-copy: the same address");
        // A write by the library is seen by the producer...
        ok(rb_fill(null_mut(), t, 7.0));
        assert_eq!(std::slice::from_raw_parts(data, 6), &[7.0; 6]);
        // ... and a write by the producer by the library.
        *data.add(4) = -1.0;
        assert_eq!(values(t, 6)[4], -1.0);
        // An op reads it like any tensor.
        let mut sum = null_mut();
        ok(rb_add(null_mut(), t, t, &mut sum));
        assert_eq!(values(sum, 6), vec![14.0, 14.0, 14.0, 14.0, -2.0, 14.0]);
        ok(rb_tensor_destroy(sum));
        // A view keeps the memory: the deleter waits for the last one.
        let mut v = null_mut();
        ok(rb_tensor_reshape(t, [6i64].as_ptr(), 1, &mut v));
        ok(rb_tensor_destroy(t));
        assert_eq!(DELETED.load(Ordering::SeqCst), 0);
        assert_eq!(values(v, 6)[0], 7.0);
        ok(rb_tensor_destroy(v));
        assert_eq!(DELETED.load(Ordering::SeqCst), 1, "deleter exactly once");
    }
}

#[test]
fn failures_leave_ownership_with_the_caller() {
    static DELETED: AtomicUsize = AtomicUsize::new(0);
    unsafe {
        let mut t = null_mut();
        // Non-contiguous (a transposed 2x3): refused, not copied or misread.
        let (m, _) = versioned(vec![0.0; 6], &[2, 3], &[1, 2], 0, KDL_CPU, &DELETED);
        let st = rb_tensor_from_dlpack(m as *mut c_void, &mut t);
        assert_eq!(st, rb_status::Unsupported);
        assert!(last().contains("not contiguous"), "{}", last());
        assert!(t.is_null());
        // A device this process does not run (no GPU here; CUDA 0 may exist elsewhere).
        let (m2, _) = versioned(vec![0.0; 6], &[2, 3], &[], 0, 7, &DELETED);
        let st = rb_tensor_from_dlpack(m2 as *mut c_void, &mut t);
        assert_eq!(st, rb_status::DeviceUnavailable, "{}", last());
        // Version 2 is not understood.
        let (m3, _) = versioned(vec![0.0; 6], &[2, 3], &[], 0, KDL_CPU, &DELETED);
        (*m3).version = [2, 0];
        assert_eq!(
            rb_tensor_from_dlpack(m3 as *mut c_void, &mut t),
            rb_status::InvalidArgument
        );
        // An unsupported dtype (uint32: kDLUInt, 32 bits).
        let (m4, _) = versioned(vec![0.0; 6], &[3], &[], 0, KDL_CPU, &DELETED);
        (*m4).dl_tensor.dtype.code = 1;
        assert_eq!(
            rb_tensor_from_dlpack(m4 as *mut c_void, &mut t),
            rb_status::DtypeMismatch
        );
        // A negative extent.
        let (m5, _) = versioned(vec![0.0; 6], &[-1, 3], &[], 0, KDL_CPU, &DELETED);
        assert_eq!(
            rb_tensor_from_dlpack(m5 as *mut c_void, &mut t),
            rb_status::InvalidArgument
        );
        assert_eq!(
            rb_tensor_from_dlpack(null_mut(), &mut t),
            rb_status::NullPointer
        );
        assert_eq!(
            rb_tensor_from_dlpack(m as *mut c_void, null_mut()),
            rb_status::NullPointer
        );
        assert!(t.is_null());
        assert_eq!(DELETED.load(Ordering::SeqCst), 0, "no deleter on failure");
        for x in [m, m2, m3, m4, m5] {
            delete_v(x);
        }
        assert_eq!(DELETED.load(Ordering::SeqCst), 5);
        // Size-1 dimensions may have any stride; a column vector is contiguous.
        let (m6, _) = versioned(vec![1.0; 3], &[3, 1], &[1, 99], 0, KDL_CPU, &DELETED);
        ok(rb_tensor_from_dlpack(m6 as *mut c_void, &mut t));
        ok(rb_tensor_destroy(t));
        assert_eq!(DELETED.load(Ordering::SeqCst), 6);
    }
}

#[test]
fn read_only_is_honoured() {
    static DELETED: AtomicUsize = AtomicUsize::new(0);
    unsafe {
        let (m, data) = versioned(
            vec![1.0, 2.0],
            &[2],
            &[],
            DLPACK_FLAG_BITMASK_READ_ONLY,
            KDL_CPU,
            &DELETED,
        );
        let mut t = null_mut();
        ok(rb_tensor_from_dlpack(m as *mut c_void, &mut t));
        let mut ro = false;
        ok(rb_tensor_is_read_only(t, &mut ro));
        assert!(ro);
        assert_eq!(rb_fill(null_mut(), t, 3.0), rb_status::InvalidArgument);
        assert!(last().contains("read-only"), "{}", last());
        let src = [9f32, 9.0];
        assert_eq!(
            rb_tensor_copy_from_host(t, src.as_ptr() as *const c_void, 8),
            rb_status::InvalidArgument
        );
        let mut out = t;
        assert_eq!(
            rb_add(null_mut(), t, t, &mut out),
            rb_status::InvalidArgument
        );
        assert_eq!(std::slice::from_raw_parts(data, 2), &[1.0, 2.0]);
        // Reading is fine; the export says read-only; the legacy form refuses.
        let mut sum = null_mut();
        ok(rb_add(null_mut(), t, t, &mut sum));
        assert_eq!(values(sum, 2), vec![2.0, 4.0]);
        let mut e = null_mut();
        ok(rb_tensor_to_dlpack(t, 0, false, &mut e));
        let ev = e as *mut DLManagedTensorVersioned;
        assert_eq!((*ev).flags & DLPACK_FLAG_BITMASK_READ_ONLY, 1);
        ((*ev).deleter.unwrap())(ev);
        assert_eq!(
            rb_tensor_to_dlpack_legacy(t, false, &mut e),
            rb_status::InvalidArgument
        );
        ok(rb_tensor_destroy(sum));
        ok(rb_tensor_destroy(t));
        assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn export_round_trips() {
    unsafe {
        let vals: Vec<f32> = (0..12).map(|i| i as f32).collect();
        let mut t = null_mut();
        ok(rb_tensor_from_host(
            null_mut(),
            vals.as_ptr() as *const c_void,
            48,
            [3i64, 4].as_ptr(),
            2,
            0,
            &mut t,
        ));
        let mut p = null_mut();
        ok(rb_tensor_data_ptr(t, &mut p));
        let mut e = null_mut();
        assert_eq!(
            rb_tensor_to_dlpack(t, 1 << 5, false, &mut e),
            rb_status::InvalidArgument
        );
        ok(rb_tensor_to_dlpack(t, 0, true, &mut e));
        let m = e as *mut DLManagedTensorVersioned;
        let dl = (*m).dl_tensor;
        assert_eq!((*m).version, [1, 1]);
        assert_eq!((*m).flags, 0);
        assert_eq!(dl.data, p, "zero-copy export");
        assert_eq!((dl.device.device_type, dl.device.device_id), (KDL_CPU, 0));
        assert_eq!((dl.dtype.code, dl.dtype.bits, dl.dtype.lanes), (2, 32, 1));
        assert_eq!(std::slice::from_raw_parts(dl.shape, 2), &[3, 4]);
        assert_eq!(std::slice::from_raw_parts(dl.strides, 2), &[4, 1]);
        assert_eq!(dl.byte_offset, 0);
        // The export outlives the handle.
        ok(rb_tensor_destroy(t));
        assert_eq!(*(dl.data as *const f32).add(11), 11.0);
        // Import our own export: same memory again, our deleter runs when it goes.
        let mut back = null_mut();
        ok(rb_tensor_from_dlpack(e, &mut back));
        let mut p2 = null_mut();
        ok(rb_tensor_data_ptr(back, &mut p2));
        assert_eq!(p2, p);
        assert_eq!(values(back, 12), vals);
        ok(rb_tensor_destroy(back));

        // Legacy both ways.
        let mut t = null_mut();
        ok(rb_tensor_from_host(
            null_mut(),
            vals.as_ptr() as *const c_void,
            48,
            [12i64].as_ptr(),
            1,
            0,
            &mut t,
        ));
        let mut l = null_mut();
        ok(rb_tensor_to_dlpack_legacy(t, false, &mut l));
        let lm = l as *mut DLManagedTensor;
        assert_eq!((*lm).dl_tensor.ndim, 1);
        let mut back = null_mut();
        ok(rb_tensor_from_dlpack_legacy(l, &mut back));
        ok(rb_tensor_destroy(t));
        assert_eq!(values(back, 12), vals);
        ok(rb_tensor_destroy(back));

        // A producer's legacy tensor with a byte offset.
        static DELETED: AtomicUsize = AtomicUsize::new(0);
        let mut prod = Box::new(Producer {
            data: vec![0.0, 0.0, 5.0, 6.0],
            shape: vec![2],
            strides: vec![],
            deleted: &DELETED,
        });
        let mut dt = dl_tensor(&mut prod, KDL_CPU, false);
        dt.byte_offset = 8;
        let lm = Box::into_raw(Box::new(DLManagedTensor {
            dl_tensor: dt,
            manager_ctx: Box::into_raw(prod) as *mut c_void,
            deleter: Some(delete_l),
        }));
        let mut t = null_mut();
        ok(rb_tensor_from_dlpack_legacy(lm as *mut c_void, &mut t));
        assert_eq!(values(t, 2), vec![5.0, 6.0]);
        ok(rb_tensor_destroy(t));
        assert_eq!(DELETED.load(Ordering::SeqCst), 1);
    }
}
