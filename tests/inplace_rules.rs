//! The in-place rule of the eager ops (PyTorch's): an op that cannot run in place refuses a
//! given output that shares memory with an input (INVALID_ARGUMENT, "output overlaps input
//! 'x'") and leaves the input untouched; elementwise ops still run in place. Regression
//! tests for ops that returned SUCCESS with wrong values (permute, linear, matmul, pool,
//! conv, conv_transpose, conv_backward_data, embedding, scaled_dot_product_attention).

use rocm_backend::ffi::eager::*;
use rocm_backend::ffi::status::rb_status;
use rocm_backend::ffi::tensor::rb_tensor_destroy;
mod common;

use common::{last_error, read, read_i64, tensor as f32s, tensor_i64 as i64s};
use rocm_backend::ffi::types::{rb_conv_params, rb_pool_params};
use std::ptr::{null, null_mut};

fn widen(v: &[f32]) -> Vec<f64> {
    v.iter().map(|x| *x as f64).collect()
}

fn seq(n: usize) -> Vec<f32> {
    (0..n).map(|i| (i as f32 * 0.37).sin()).collect()
}

/// `st` is INVALID_ARGUMENT naming `input` as the overlapped input.
fn refused(op: &str, st: rb_status, input: &str) {
    assert_eq!(st, rb_status::InvalidArgument, "{op}");
    let msg = last_error();
    assert!(
        msg.contains(&format!("output overlaps input '{input}'")) && msg.starts_with("rb_"),
        "{op}: {msg}"
    );
}

#[test]
fn permute_into_its_input_is_refused() {
    let v: Vec<i64> = (0..16).collect();
    let x = i64s(&v, &[4, 4]);
    let mut out = x;
    let st = unsafe { rb_permute(null_mut(), x, [1i64, 0].as_ptr(), 2, &mut out) };
    refused("permute", st, "x");
    assert_eq!(read_i64(x, 16), v, "the input is untouched");
    unsafe { rb_tensor_destroy(x) };
}

#[test]
fn linear_and_matmul_into_an_input_are_refused() {
    let xv = seq(4 * 2 * 64);
    let x = f32s(&xv, &[4, 2, 64]);
    let w = f32s(&seq(64 * 64), &[64, 64]);
    let mut out = x;
    refused(
        "linear",
        unsafe { rb_linear(null_mut(), x, w, null(), &mut out) },
        "x",
    );
    assert_eq!(read(x, xv.len()), widen(&xv));
    let a = f32s(&seq(16), &[4, 4]);
    let b = f32s(&seq(16), &[4, 4]);
    let mut out = a;
    refused(
        "matmul a",
        unsafe { rb_matmul(null_mut(), a, b, &mut out) },
        "a",
    );
    let mut out = b;
    refused(
        "matmul b",
        unsafe { rb_matmul(null_mut(), a, b, &mut out) },
        "b",
    );
    for t in [x, w, a, b] {
        unsafe { rb_tensor_destroy(t) };
    }
}

#[test]
fn conv_pool_embedding_attention_into_an_input_are_refused() {
    let x = f32s(&seq(16), &[1, 1, 4, 4]);
    let w = f32s(&[2.0], &[1, 1, 1, 1]);
    let cp = rb_conv_params {
        ndim: 2,
        stride: [1, 1, 1],
        padding: [0; 3],
        dilation: [1, 1, 1],
        output_padding: [0; 3],
        groups: 1,
    };
    let mut out = x;
    refused(
        "conv",
        unsafe { rb_conv(null_mut(), x, w, null(), &cp, 0, &mut out) },
        "x",
    );
    let mut out = x;
    refused(
        "conv_transpose",
        unsafe { rb_conv_transpose(null_mut(), x, w, null(), &cp, &mut out) },
        "x",
    );
    let xs = [1i64, 1, 4, 4];
    let mut out = x;
    refused(
        "conv_backward_data",
        unsafe { rb_conv_backward_data(null_mut(), x, w, xs.as_ptr(), 4, &cp, &mut out) },
        "dy",
    );
    let pp = rb_pool_params {
        ndim: 2,
        kernel: [1, 1, 1],
        stride: [1, 1, 1],
        padding: [0; 3],
        dilation: [1, 1, 1],
        ceil_mode: 0,
    };
    let mut out = x;
    refused(
        "pool",
        unsafe { rb_pool(null_mut(), 0, x, &pp, &mut out) },
        "x",
    );

    let weight = f32s(&seq(16), &[4, 4]);
    let idx = i64s(&[3, 2, 1, 0], &[4]);
    let mut out = weight;
    refused(
        "embedding",
        unsafe { rb_embedding(null_mut(), weight, idx, &mut out) },
        "weight",
    );
    let q = f32s(&seq(32), &[1, 2, 4, 4]);
    let k = f32s(&seq(32), &[1, 2, 4, 4]);
    let v = f32s(&seq(32), &[1, 2, 4, 4]);
    let mut out = v;
    refused(
        "sdpa",
        unsafe { rb_scaled_dot_product_attention(null_mut(), q, k, v, false, null(), &mut out) },
        "v",
    );
    for t in [x, w, weight, idx, q, k, v] {
        unsafe { rb_tensor_destroy(t) };
    }
}

#[test]
fn elementwise_ops_still_run_in_place() {
    let av = seq(12);
    let bv: Vec<f32> = (0..12).map(|i| i as f32 - 6.0).collect();
    let (a, b) = (f32s(&av, &[3, 4]), f32s(&bv, &[3, 4]));
    let mut out = a;
    assert_eq!(
        unsafe { rb_add(null_mut(), a, b, &mut out) },
        rb_status::Success
    );
    let want: Vec<f32> = av.iter().zip(&bv).map(|(x, y)| x + y).collect();
    assert_eq!(read(a, 12), widen(&want));
    let mut out = b;
    assert_eq!(
        unsafe { rb_relu(null_mut(), b, &mut out) },
        rb_status::Success
    );
    let want: Vec<f32> = bv.iter().map(|x| x.max(0.0)).collect();
    assert_eq!(read(b, 12), widen(&want));
    unsafe {
        rb_tensor_destroy(a);
        rb_tensor_destroy(b);
    }
}
