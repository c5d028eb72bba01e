//! The C ABI of the softmax / norm / loss / attention ops on the CPU device: eager exports
//! with their output and gradient conventions, raw `rb_dnn_*` entry points on host
//! pointers, and error statuses with messages naming the op.

mod common;

use common::{last_error, read, tensor, tensor_i64};
use rocm_backend::ffi::eager::*;
use rocm_backend::ffi::raw::dnn::*;
use rocm_backend::ffi::status::rb_status;
use rocm_backend::ffi::tensor::rb_tensor_destroy;
use rocm_backend::ffi::types::*;
use rocm_backend::ops::nn::{self as r, *};
use std::ptr::{null, null_mut};

fn rand(n: usize, seed: u64) -> Vec<f32> {
    (0..n)
        .map(|i| rocm_backend::ops::random::normal_f32(seed, i as u64))
        .collect()
}

fn close(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (g - w).abs() <= 1e-5 + 1e-5 * w.abs(),
            "{what}[{i}]: {g} vs {w}"
        );
    }
}

fn f64s(v: &[f32]) -> Vec<f64> {
    v.iter().map(|x| *x as f64).collect()
}

#[test]
fn eager_softmax_and_losses_through_the_c_abi() {
    let xv = rand(12, 1);
    let x = tensor(&xv, &[3, 4]);
    let mut y = null_mut();
    assert_eq!(
        unsafe { rb_softmax(null_mut(), x, -1, &mut y) },
        rb_status::Success
    );
    let d = SoftmaxDesc::new("softmax", &[3, 4], -1, false).unwrap();
    close("rb_softmax", &read(y, 12), &r::softmax_ref(&f64s(&xv), &d));
    // Into an existing tensor of the wrong shape: SHAPE_MISMATCH, *out unchanged.
    let mut wrong = tensor(&[0.0; 4], &[4]);
    let before = wrong;
    assert_eq!(
        unsafe { rb_log_softmax(null_mut(), x, 1, &mut wrong) },
        rb_status::ShapeMismatch
    );
    assert_eq!(wrong, before);
    assert!(last_error().contains("log_softmax"), "{}", last_error());

    // cross_entropy, mean, with an ignored target, and its backward.
    let t = tensor_i64(&[1, -100, 3], &[3]);
    let mut loss = null_mut();
    let st = unsafe { rb_cross_entropy(null_mut(), x, t, RB_MEAN, -100, 0.1, &mut loss) };
    assert_eq!(st, rb_status::Success);
    let (ld, _) = LossDesc::class(
        LossKind::CrossEntropy,
        &[3, 4],
        &[3],
        Reduction::Mean,
        -100,
        0.1,
    )
    .unwrap();
    let tv = [1.0, -100.0, 3.0];
    close(
        "rb_cross_entropy",
        &read(loss, 1),
        &r::loss_ref(&f64s(&xv), &tv, &ld),
    );
    let g = tensor(&[1.0], &[]);
    let mut gi = null_mut();
    let st = unsafe { rb_cross_entropy_backward(null_mut(), g, x, t, RB_MEAN, -100, 0.1, &mut gi) };
    assert_eq!(st, rb_status::Success);
    close(
        "rb_cross_entropy_backward",
        &read(gi, 12),
        &r::loss_backward_ref(&f64s(&xv), &tv, &[1.0], &ld),
    );
    // A bad reduction and a NULL out.
    let mut o = null_mut();
    assert_eq!(
        unsafe { rb_mse_loss(null_mut(), x, x, 9, &mut o) },
        rb_status::InvalidArgument
    );
    assert!(last_error().contains("mse_loss"), "{}", last_error());
    assert!(o.is_null());
    assert_eq!(
        unsafe { rb_nll_loss(null_mut(), x, t, RB_SUM, -100, null_mut()) },
        rb_status::NullPointer
    );

    // layer_norm backward with dbias skipped.
    let ns = [4i64];
    let (mut dx, mut dw) = (null_mut(), null_mut());
    let st = unsafe {
        rb_layer_norm_backward(
            null_mut(),
            x,
            x,
            ns.as_ptr(),
            1,
            null(),
            1e-5,
            &mut dx,
            &mut dw,
            null_mut(),
        )
    };
    assert_eq!(st, rb_status::Success);
    let nd = RowNormDesc::new("layer_norm", &[3, 4], &[4], 1e-5).unwrap();
    let (rdx, rdw, _) = r::layer_norm_backward_ref(&f64s(&xv), &f64s(&xv), None, &nd);
    close("rb_layer_norm_backward dx", &read(dx, 12), &rdx);
    close("rb_layer_norm_backward dw", &read(dw, 4), &rdw);

    // Attention backward needs all three gradients.
    let q = tensor(&rand(8, 3), &[1, 2, 4]);
    let (mut dq, mut dk) = (null_mut(), null_mut());
    let st = unsafe {
        rb_scaled_dot_product_attention_backward(
            null_mut(),
            q,
            q,
            q,
            q,
            true,
            null(),
            &mut dq,
            &mut dk,
            null_mut(),
        )
    };
    assert_eq!(st, rb_status::NullPointer);
    assert!(dq.is_null() && dk.is_null());

    for h in [x, y, wrong, t, loss, g, gi, dx, dw, q] {
        assert_eq!(unsafe { rb_tensor_destroy(h) }, rb_status::Success);
    }
}

const RB_MEAN: i32 = rb_reduction::Mean as i32;
const RB_SUM: i32 = rb_reduction::Sum as i32;

#[test]
fn raw_dnn_entry_points_on_host_pointers() {
    let (rows, cols) = (5usize, 37usize);
    let x = rand(rows * cols, 7);
    let mut y = vec![f32::NAN; rows * cols];
    let st = unsafe {
        rb_dnn_softmax_forward(
            null_mut(),
            0,
            true,
            rows as i64,
            cols as i64,
            1,
            x.as_ptr() as _,
            y.as_mut_ptr() as _,
        )
    };
    assert_eq!(st, rb_status::Success);
    let d = SoftmaxDesc::new("s", &[rows, cols], 1, true).unwrap();
    close(
        "rb_dnn_softmax_forward",
        &f64s(&y),
        &r::softmax_ref(&f64s(&x), &d),
    );
    let dy = rand(rows * cols, 8);
    let mut dx = vec![f32::NAN; rows * cols];
    let st = unsafe {
        rb_dnn_softmax_backward(
            null_mut(),
            0,
            true,
            rows as i64,
            cols as i64,
            1,
            y.as_ptr() as _,
            dy.as_ptr() as _,
            dx.as_mut_ptr() as _,
        )
    };
    assert_eq!(st, rb_status::Success);
    close(
        "rb_dnn_softmax_backward",
        &f64s(&dx),
        &r::softmax_backward_ref(&f64s(&y), &f64s(&dy), &d),
    );

    // layer_norm with saved statistics.
    let w = rand(cols, 9);
    let (mut mean, mut rstd) = (vec![f32::NAN; rows], vec![f32::NAN; rows]);
    let st = unsafe {
        rb_dnn_layer_norm_forward(
            null_mut(),
            0,
            rows as i64,
            cols as i64,
            1e-5,
            x.as_ptr() as _,
            w.as_ptr() as _,
            null(),
            y.as_mut_ptr() as _,
            mean.as_mut_ptr() as _,
            rstd.as_mut_ptr() as _,
        )
    };
    assert_eq!(st, rb_status::Success);
    let nd = RowNormDesc::new("ln", &[rows, cols], &[cols], 1e-5).unwrap();
    let (ry, rm, rr) = r::layer_norm_ref(&f64s(&x), Some(&f64s(&w)), None, &nd);
    close("rb_dnn_layer_norm_forward y", &f64s(&y), &ry);
    close("rb_dnn_layer_norm_forward mean", &f64s(&mean), &rm);
    close("rb_dnn_layer_norm_forward rstd", &f64s(&rstd), &rr);

    // batch_norm training updates the running statistics.
    let (n, c, hw) = (3usize, 2usize, 4usize);
    let xb = rand(n * c * hw, 10);
    let (mut rmean, mut rvar) = (vec![0.0f32; c], vec![1.0f32; c]);
    let mut yb = vec![f32::NAN; n * c * hw];
    let st = unsafe {
        rb_dnn_batch_norm_forward_training(
            null_mut(),
            0,
            n as i64,
            c as i64,
            hw as i64,
            0.1,
            1e-5,
            xb.as_ptr() as _,
            null(),
            null(),
            rmean.as_mut_ptr() as _,
            rvar.as_mut_ptr() as _,
            yb.as_mut_ptr() as _,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(st, rb_status::Success);
    let bd = BatchNormDesc::new("bn", &[n, c, hw], true, 0.1, 1e-5).unwrap();
    let (ry, rm, rv) = r::batch_norm_ref(
        &f64s(&xb),
        None,
        None,
        Some((&[0.0, 0.0], &[1.0, 1.0])),
        &bd,
    );
    close("rb_dnn_batch_norm_forward_training y", &f64s(&yb), &ry);
    close("running_mean", &f64s(&rmean), &rm);
    close("running_var", &f64s(&rvar), &rv);

    // Misuse: a non-floating dtype, a NULL input, a negative size.
    let st = unsafe {
        rb_dnn_softmax_forward(
            null_mut(),
            3,
            false,
            1,
            4,
            1,
            x.as_ptr() as _,
            y.as_mut_ptr() as _,
        )
    };
    assert_eq!(st, rb_status::DtypeMismatch);
    assert!(
        last_error().contains("rb_dnn_softmax_forward"),
        "{}",
        last_error()
    );
    let st = unsafe {
        rb_dnn_softmax_forward(null_mut(), 0, false, 1, 4, 1, null(), y.as_mut_ptr() as _)
    };
    assert_eq!(st, rb_status::NullPointer);
    let st = unsafe {
        rb_dnn_group_norm_forward(
            null_mut(),
            0,
            1,
            -4,
            1,
            2,
            1e-5,
            x.as_ptr() as _,
            null(),
            null(),
            y.as_mut_ptr() as _,
            null_mut(),
            null_mut(),
        )
    };
    assert_eq!(st, rb_status::InvalidArgument);
    assert!(last_error().contains("c=-4"), "{}", last_error());
}
