//! Issue 17, items 4 and 5: the raw entry points (`rb_blas_*`, `rb_dnn_*`, `rb_kernel_*`)
//! look their stream up before any early return, so a destroyed stream or a tensor passed as
//! the stream is INVALID_HANDLE even for an empty problem; embedding backward checks its
//! indices when there are no rows to write; the raw group_norm refuses a group count with no
//! channels behind it, and no norm loops over rows or groups that have no data.

use rocm_backend::ffi::data::rb_embedding_backward;
use rocm_backend::ffi::raw::blas::*;
use rocm_backend::ffi::raw::dnn::*;
use rocm_backend::ffi::raw::kernel::*;
use rocm_backend::ffi::status::{rb_last_error_message, rb_status};
use rocm_backend::ffi::stream::{rb_stream, rb_stream_create, rb_stream_destroy};
use rocm_backend::ffi::tensor::{rb_tensor, rb_tensor_destroy, rb_tensor_from_host};
use rocm_backend::ffi::types::{rb_conv_params, rb_pool_params};
use std::ffi::{CStr, c_void};
use std::ptr::{null, null_mut};
use std::time::{Duration, Instant};

fn last_error() -> String {
    unsafe { CStr::from_ptr(rb_last_error_message()) }
        .to_string_lossy()
        .into_owned()
}

fn stream() -> *mut rb_stream {
    let mut s = null_mut();
    assert_eq!(
        unsafe { rb_stream_create(c"cpu".as_ptr(), &mut s) },
        rb_status::Success
    );
    s
}

fn tensor<T>(v: &[T], shape: &[i64], dtype: i32) -> *mut rb_tensor {
    let mut t = null_mut();
    let st = unsafe {
        rb_tensor_from_host(
            c"cpu".as_ptr(),
            v.as_ptr() as *const c_void,
            std::mem::size_of_val(v),
            shape.as_ptr(),
            shape.len(),
            dtype,
            &mut t,
        )
    };
    assert_eq!(st, rb_status::Success);
    t
}

type Call = Box<dyn Fn(*mut rb_stream) -> rb_status>;

/// Every raw entry point with an empty problem (all sizes 0; pointers to a scratch buffer,
/// valid enum values and parameters). With a live stream each succeeds.
fn empty_calls(p: *mut c_void) -> Vec<(&'static str, Call)> {
    let c = p as *const c_void;
    let (f, fm) = (p as *const f32, p as *mut f32);
    let conv = rb_conv_params {
        ndim: 2,
        stride: [1; 3],
        padding: [0; 3],
        dilation: [1; 3],
        output_padding: [0; 3],
        groups: 1,
    };
    let pool = rb_pool_params {
        ndim: 2,
        kernel: [1; 3],
        stride: [1; 3],
        padding: [0; 3],
        dilation: [1; 3],
        ceil_mode: 0,
    };
    const XS: [i64; 4] = [0, 1, 3, 3];
    const WS: [i64; 4] = [1, 1, 1, 1];
    const ZERO: [i64; 1] = [0];
    let (xs, ws) = (XS.as_ptr(), WS.as_ptr());
    macro_rules! calls {
        ($($name:ident => |$s:ident| $call:expr),* $(,)?) => {
            vec![$((stringify!($name), Box::new(move |$s: *mut rb_stream| unsafe { $call }) as Call)),*]
        };
    }
    calls![
        rb_kernel_add => |s| rb_kernel_add(s, 0, c, c, p, 0),
        rb_kernel_sub => |s| rb_kernel_sub(s, 0, c, c, p, 0),
        rb_kernel_mul => |s| rb_kernel_mul(s, 0, c, c, p, 0),
        rb_kernel_div => |s| rb_kernel_div(s, 0, c, c, p, 0),
        rb_kernel_pow => |s| rb_kernel_pow(s, 0, c, c, p, 0),
        rb_kernel_maximum => |s| rb_kernel_maximum(s, 0, c, c, p, 0),
        rb_kernel_minimum => |s| rb_kernel_minimum(s, 0, c, c, p, 0),
        rb_kernel_relu => |s| rb_kernel_relu(s, 0, c, p, 0),
        rb_kernel_sigmoid => |s| rb_kernel_sigmoid(s, 0, c, p, 0),
        rb_kernel_tanh => |s| rb_kernel_tanh(s, 0, c, p, 0),
        rb_kernel_silu => |s| rb_kernel_silu(s, 0, c, p, 0),
        rb_kernel_neg => |s| rb_kernel_neg(s, 0, c, p, 0),
        rb_kernel_abs => |s| rb_kernel_abs(s, 0, c, p, 0),
        rb_kernel_sqrt => |s| rb_kernel_sqrt(s, 0, c, p, 0),
        rb_kernel_exp => |s| rb_kernel_exp(s, 0, c, p, 0),
        rb_kernel_log => |s| rb_kernel_log(s, 0, c, p, 0),
        rb_kernel_sin => |s| rb_kernel_sin(s, 0, c, p, 0),
        rb_kernel_cos => |s| rb_kernel_cos(s, 0, c, p, 0),
        rb_kernel_gelu => |s| rb_kernel_gelu(s, 0, c, p, 0, 0),
        rb_kernel_clamp => |s| rb_kernel_clamp(s, 0, c, p, 0, -1.0, 1.0),
        rb_kernel_relu_backward => |s| rb_kernel_relu_backward(s, 0, c, c, p, 0),
        rb_kernel_sigmoid_backward => |s| rb_kernel_sigmoid_backward(s, 0, c, c, p, 0),
        rb_kernel_tanh_backward => |s| rb_kernel_tanh_backward(s, 0, c, c, p, 0),
        rb_kernel_silu_backward => |s| rb_kernel_silu_backward(s, 0, c, c, p, 0),
        rb_kernel_gelu_backward => |s| rb_kernel_gelu_backward(s, 0, c, c, p, 0, 1),
        rb_kernel_fill => |s| rb_kernel_fill(s, 0, p, 0, 1.0),
        rb_kernel_cast => |s| rb_kernel_cast(s, 0, c, 1, p, 0),
        rb_kernel_sgd_step => |s| rb_kernel_sgd_step(s, 0, p, c, p, 0, 0.1, 0.9, 0.0, 0.0, 0, 1),
        rb_kernel_adam_step => |s| rb_kernel_adam_step(
            s, 0, p, c, p, p, p, 0, 1e-3, 0.9, 0.999, 1e-8, 0.0, 1, 0, 0
        ),
        rb_kernel_copy_strided => |s| rb_kernel_copy_strided(
            s, 4, 1, ZERO.as_ptr(), c, ZERO.as_ptr(), p, ZERO.as_ptr()
        ),
        rb_kernel_compare => |s| rb_kernel_compare(s, 0, 0, c, c, p, 0),
        rb_kernel_where => |s| rb_kernel_where(s, 0, c, c, c, p, 0),
        rb_kernel_where_compare => |s| rb_kernel_where_compare(s, 2, 0, c, c, c, c, p, 0),
        rb_kernel_loss => |s| rb_kernel_loss(s, 0, 0, c, c, 0, 0, 1, 1, 0, -100, 0.0, p),
        rb_kernel_loss_backward => |s| rb_kernel_loss_backward(
            s, 2, 0, c, c, c, 4, 0, 3, 1, 1, -100, 0.0, p
        ),
        rb_kernel_rope => |s| rb_kernel_rope(s, 0, c, p, 0, 0, 0, 2, 10000.0, 0, 0),
        rb_kernel_embedding => |s| rb_kernel_embedding(s, 0, c, 0, 0, 4, c, 0, p),
        rb_kernel_embedding_backward => |s| rb_kernel_embedding_backward(s, 0, c, 4, c, 0, 0, 0, p),
        rb_kernel_weighted_sum => |s| rb_kernel_weighted_sum(s, 0, c, c, p, 0, 0, 0),
        rb_kernel_weighted_sum_backward => |s| rb_kernel_weighted_sum_backward(
            s, 0, c, c, c, p, p, 0, 0, 0
        ),
        rb_dnn_conv_workspace_size => |s| {
            let mut n = 0usize;
            rb_dnn_conv_workspace_size(s, 0, &conv, xs, ws, &mut n)
        },
        rb_dnn_conv_forward => |s| rb_dnn_conv_forward(
            s, 0, &conv, xs, c, ws, c, null(), 0, xs, p, null_mut(), 0
        ),
        rb_dnn_conv_backward_data => |s| rb_dnn_conv_backward_data(
            s, 0, &conv, xs, p, ws, c, xs, c, null_mut(), 0
        ),
        rb_dnn_conv_backward_weights => |s| rb_dnn_conv_backward_weights(
            s, 0, &conv, xs, c, ws, p, xs, c, p, null_mut(), 0
        ),
        rb_dnn_pool_forward => |s| rb_dnn_pool_forward(s, 0, 0, &pool, xs, c, xs, p),
        rb_dnn_pool_backward => |s| rb_dnn_pool_backward(s, 0, 1, &pool, xs, c, xs, c, p),
        rb_dnn_reduce => |s| rb_dnn_reduce(s, 0, 0, c, 0, 3, 2, p),
        rb_dnn_argmax => |s| rb_dnn_argmax(s, 0, c, 2, 3, 0, p as *mut i64),
        rb_dnn_softmax_forward => |s| rb_dnn_softmax_forward(s, 0, false, 0, 4, 1, c, p),
        rb_dnn_softmax_backward => |s| rb_dnn_softmax_backward(s, 0, true, 0, 4, 1, c, c, p),
        rb_dnn_layer_norm_forward => |s| rb_dnn_layer_norm_forward(
            s, 0, 0, 4, 1e-5, c, c, c, p, p, p
        ),
        rb_dnn_layer_norm_backward => |s| rb_dnn_layer_norm_backward(
            s, 0, 0, 4, 1e-5, c, c, c, p, p, p
        ),
        rb_dnn_rms_norm_forward => |s| rb_dnn_rms_norm_forward(s, 0, 0, 4, 1e-5, c, c, p, p),
        rb_dnn_rms_norm_backward => |s| rb_dnn_rms_norm_backward(
            s, 0, 0, 4, 1e-5, c, c, c, p, p
        ),
        rb_dnn_group_norm_forward => |s| rb_dnn_group_norm_forward(
            s, 0, 0, 4, 3, 2, 1e-5, c, c, c, p, p, p
        ),
        rb_dnn_group_norm_backward => |s| rb_dnn_group_norm_backward(
            s, 0, 0, 4, 3, 2, 1e-5, c, c, c, p, p, p
        ),
        rb_dnn_batch_norm_forward_training => |s| rb_dnn_batch_norm_forward_training(
            s, 0, 0, 4, 3, 0.1, 1e-5, c, c, c, p, p, p, p, p
        ),
        rb_dnn_batch_norm_forward_inference => |s| rb_dnn_batch_norm_forward_inference(
            s, 0, 0, 4, 3, 1e-5, c, c, c, c, c, p
        ),
        rb_dnn_batch_norm_backward => |s| rb_dnn_batch_norm_backward(
            s, 0, 0, 4, 3, 1e-5, c, c, c, p, p, p
        ),
        rb_blas_sgemm => |s| rb_blas_sgemm(s, 0, 0, 0, 0, 0, 1.0, f, 1, f, 1, 0.0, fm, 1),
        rb_blas_gemm_strided_batched => |s| rb_blas_gemm_strided_batched(
            s, 0, 0, 0, 2, 2, 2, 1.0, c, 2, 4, c, 2, 4, 0.0, p, 2, 4, 0
        ),
        rb_blas_geam => |s| rb_blas_geam(s, 0, 0, 0, 0, 0, 1.0, c, 1, 1.0, c, 1, p, 1),
    ]
}

#[test]
fn empty_problems_check_the_stream() {
    let mut scratch = vec![0f64; 64];
    let calls = empty_calls(scratch.as_mut_ptr() as *mut c_void);
    assert_eq!(calls.len(), 62, "every raw entry point is in the table");

    let live = stream();
    let dead = stream();
    assert_eq!(unsafe { rb_stream_destroy(dead) }, rb_status::Success);
    let t = tensor(&[1f32, 2.0], &[2], 0);
    let as_stream = t as *mut rb_stream;

    let mut failures = vec![];
    for (name, call) in &calls {
        for (what, s, want) in [
            ("NULL stream", null_mut(), rb_status::Success),
            ("live stream", live, rb_status::Success),
            ("destroyed stream", dead, rb_status::InvalidHandle),
            ("tensor as the stream", as_stream, rb_status::InvalidHandle),
        ] {
            let st = call(s);
            let msg = last_error();
            if st != want {
                failures.push(format!(
                    "{name} with a {what}: {st:?} ({msg}), expected {want:?}"
                ));
            } else if want != rb_status::Success && !(msg.contains(name) && msg.contains("stream"))
            {
                failures.push(format!("{name} with a {what}: message {msg:?}"));
            }
        }
    }
    println!("{} raw entry points x 4 streams checked", calls.len());
    assert!(failures.is_empty(), "{}", failures.join("\n"));

    // The non-empty case answers the same.
    let x = [1f32; 4];
    let mut y = [0f32; 4];
    let st = unsafe { rb_kernel_relu(dead, 0, x.as_ptr() as _, y.as_mut_ptr() as _, 1) };
    assert_eq!(st, rb_status::InvalidHandle);
    unsafe {
        rb_stream_destroy(live);
        rb_tensor_destroy(t);
    }
}

#[test]
fn embedding_backward_checks_indices_without_rows() {
    let dy = [1f32; 8];
    let mut dw = [7f32; 8];
    let raw = |idx: &[i64], num: usize, dim: usize, dw: &mut [f32]| unsafe {
        rb_kernel_embedding_backward(
            null_mut(),
            0,
            dy.as_ptr() as _,
            4,
            idx.as_ptr() as _,
            idx.len(),
            num,
            dim,
            dw.as_mut_ptr() as _,
        )
    };
    // num_embeddings 0: every index is out of range.
    assert_eq!(raw(&[0], 0, 2, &mut dw), rb_status::InvalidArgument);
    let m = last_error();
    assert!(
        m.contains("rb_kernel_embedding_backward")
            && m.contains("index 0 at position 0 is out of range [0, 0)"),
        "{m}"
    );
    // dim 0: the rows are empty, the indices are still checked.
    assert_eq!(raw(&[1, 5], 3, 0, &mut dw), rb_status::InvalidArgument);
    assert!(
        last_error().contains("index 5 at position 1 is out of range [0, 3)"),
        "{}",
        last_error()
    );
    assert_eq!(raw(&[1, 2], 3, 0, &mut dw), rb_status::Success);
    assert_eq!(raw(&[], 0, 2, &mut dw), rb_status::Success);
    assert_eq!(dw, [7f32; 8], "nothing was written");

    // The eager op: dy [1, 2] for indices [1] into a table of 0 rows, then dy [1, 0].
    let idx = tensor(&[0i64], &[1], 4);
    let dy2 = tensor(&[1f32, 2.0], &[1, 2], 0);
    let mut out = null_mut();
    let st = unsafe { rb_embedding_backward(null_mut(), dy2, idx, 0, &mut out) };
    assert_eq!(st, rb_status::InvalidArgument);
    let m = last_error();
    assert!(
        m.contains("rb_embedding_backward") && m.contains("out of range [0, 0)"),
        "{m}"
    );
    assert!(out.is_null());
    let idx7 = tensor(&[7i64], &[1], 4);
    let dy0 = tensor::<f32>(&[], &[1, 0], 0);
    let st = unsafe { rb_embedding_backward(null_mut(), dy0, idx7, 3, &mut out) };
    assert_eq!(st, rb_status::InvalidArgument);
    assert!(
        last_error().contains("index 7 at position 0 is out of range [0, 3)"),
        "{}",
        last_error()
    );
    let st = unsafe { rb_embedding_backward(null_mut(), dy0, idx, 3, &mut out) };
    assert_eq!(st, rb_status::Success);
    unsafe {
        for t in [idx, dy2, idx7, dy0, out] {
            rb_tensor_destroy(t);
        }
    }
}

#[test]
fn norms_do_not_loop_over_counts_without_data() {
    let mut buf = [0f32; 16];
    let p = buf.as_mut_ptr() as *mut c_void;
    // group_norm with 0 channels: no group count has channels behind it.
    for groups in [1i64 << 28, i64::MAX, 1] {
        let t = Instant::now();
        let st = unsafe {
            rb_dnn_group_norm_backward(null_mut(), 0, 2, 0, 3, groups, 1e-5, p, null(), p, p, p, p)
        };
        let took = t.elapsed();
        assert_eq!(st, rb_status::InvalidArgument, "groups={groups}");
        let m = last_error();
        assert!(
            m.contains("rb_dnn_group_norm_backward") && m.contains("c=0"),
            "{m}"
        );
        assert!(took < Duration::from_secs(1), "groups={groups}: {took:?}");
        let st = unsafe {
            rb_dnn_group_norm_forward(
                null_mut(),
                0,
                2,
                0,
                3,
                groups,
                1e-5,
                p,
                null(),
                null(),
                p,
                p,
                p,
            )
        };
        assert_eq!(st, rb_status::InvalidArgument, "forward, groups={groups}");
        println!("group_norm c=0 groups={groups}: {st:?} in {took:?}");
    }
    // A group count that does not divide the channels, as the eager op says.
    let st = unsafe {
        rb_dnn_group_norm_backward(null_mut(), 0, 1, 4, 1, 3, 1e-5, p, null(), p, p, p, p)
    };
    assert_eq!(st, rb_status::InvalidArgument);

    // Rows without columns: nothing to compute, quickly, and no pointer is touched.
    let t = Instant::now();
    let rows = 1i64 << 40;
    let sts = unsafe {
        [
            rb_dnn_layer_norm_backward(
                null_mut(),
                0,
                rows,
                0,
                1e-5,
                null(),
                null(),
                null(),
                null_mut(),
                null_mut(),
                null_mut(),
            ),
            rb_dnn_rms_norm_backward(
                null_mut(),
                0,
                rows,
                0,
                1e-5,
                null(),
                null(),
                null(),
                null_mut(),
                null_mut(),
            ),
        ]
    };
    assert_eq!(sts, [rb_status::Success; 2]);
    assert!(t.elapsed() < Duration::from_secs(1), "{:?}", t.elapsed());

    // An empty batch zeroes the per-channel gradients, whose count must fit.
    let mut g = [5f32; 4];
    let gp = g.as_mut_ptr() as *mut c_void;
    let st = unsafe {
        rb_dnn_batch_norm_backward(
            null_mut(),
            0,
            0,
            3,
            2,
            1e-5,
            p,
            null(),
            p,
            p,
            gp,
            null_mut(),
        )
    };
    assert_eq!(st, rb_status::Success);
    assert_eq!(g, [0.0, 0.0, 0.0, 5.0]);
    let st = unsafe {
        rb_dnn_layer_norm_backward(
            null_mut(),
            0,
            0,
            1 << 62,
            1e-5,
            null(),
            null(),
            null(),
            null_mut(),
            p,
            null_mut(),
        )
    };
    assert_eq!(st, rb_status::InvalidArgument, "{}", last_error());
    assert!(last_error().contains("overflow"), "{}", last_error());
}
