//! C-ABI helpers shared by the Rust integration tests that call the exports on the CPU
//! device: make a tensor from host values, read one back, and the last error message.
#![allow(dead_code)]

use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use rocm_backend::ffi::tensor::{rb_tensor, rb_tensor_copy_to_host, rb_tensor_from_host};
use std::ffi::{CStr, c_void};
use std::ptr::null_mut;

/// A CPU tensor of `dtype` (an rb_dtype) from `bytes` host bytes.
fn from_host(bytes: *const c_void, nbytes: usize, shape: &[i64], dtype: i32) -> *mut rb_tensor {
    let mut t = null_mut();
    let st = unsafe {
        rb_tensor_from_host(
            c"cpu".as_ptr(),
            bytes,
            nbytes,
            shape.as_ptr(),
            shape.len(),
            dtype,
            &mut t,
        )
    };
    assert_eq!(st, rb_status::Success);
    t
}

/// An f32 CPU tensor.
pub fn tensor(v: &[f32], shape: &[i64]) -> *mut rb_tensor {
    from_host(v.as_ptr() as *const c_void, v.len() * 4, shape, 0)
}

/// An i64 CPU tensor.
pub fn tensor_i64(v: &[i64], shape: &[i64]) -> *mut rb_tensor {
    from_host(v.as_ptr() as *const c_void, v.len() * 8, shape, 4)
}

/// The `n` values of an f32 tensor, widened to f64.
pub fn read(t: *mut rb_tensor, n: usize) -> Vec<f64> {
    let mut v = vec![0f32; n];
    let st = unsafe { rb_tensor_copy_to_host(t, v.as_mut_ptr() as *mut c_void, n * 4) };
    assert_eq!(st, rb_status::Success);
    v.iter().map(|x| *x as f64).collect()
}

/// The `n` values of an i64 tensor.
pub fn read_i64(t: *mut rb_tensor, n: usize) -> Vec<i64> {
    let mut v = vec![0i64; n];
    let st = unsafe { rb_tensor_copy_to_host(t, v.as_mut_ptr() as *mut c_void, n * 8) };
    assert_eq!(st, rb_status::Success);
    v
}

/// This thread's last error message.
pub fn last_error() -> String {
    unsafe { CStr::from_ptr(rb_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}
