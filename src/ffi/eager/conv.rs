//! The C exports of the conv ops (the eager conventions: `rb_add` in the header's
//! introduction). @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

#![allow(unused_imports, clippy::clone_on_copy, clippy::vec_init_then_push, clippy::get_first)]

use crate::ffi::args;
use crate::ffi::handles::{arc, arc_opt};
use crate::ffi::types::{rb_conv_params, rb_conv_params_ex, rb_pool_params, rb_pool_params_ex};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::{rb_stream, stream_arg};
use crate::ffi::tensor::rb_tensor;
use crate::ffi::util::OutSlot;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::LossKind;
use crate::ops::data::ScatterReduce;
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::ops::reduce::ReduceOp;
use crate::runtime::{self, Tensor};

/// Convolution `conv{ndim}d(x, w, bias)` (ndim from `params`) followed by `activation` (an
/// `rb_activation`), fused: conv, conv+bias, conv+bias+relu. `x` `[N, C, ...]`, `w`
/// `[K, C / groups, ...]`, `bias` `[K]` or NULL.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (ranks, channels, kernel larger than the padded input, `*out` of another shape),
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad params, groups not dividing
/// the channels). Output convention and threads: see the section's conventions.
///
/// f64: computed in f64, channels first (channels-last tensors are converted around it): on the
/// CPU device the float64 reference (direct loops, serial), on GPUs direct double kernels
/// (MIOpen and cuDNN are not used for f64; one thread per output, input or weight element, no
/// atomics).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    params: *const rb_conv_params,
    activation: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let bias = arc_opt(bias, "bias")?;
        let params = unsafe { args::conv_params(params) }?;
        let activation = args::activation(activation)?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv", &[("x", Some(&*x)), ("w", Some(&*w)), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                __in.push(bias);
                let __r = __g.record(s, Op::Conv(attrs::Conv { params: params.clone(), activation: activation.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv(s, x, w, bias, &params.0, params.1, activation, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Inference `relu(batch_norm(conv(x, w, bias)))` with the batch norm (`mean`, `var`,
/// `gamma`, `beta`, each `[K]`; `eps` > 0) folded into the convolution. `bias` may be NULL.
///
/// Failures as `rb_conv`. Output convention and threads: see the section's conventions. f32, f16 and bf16 only (PyTorch has no fused
/// conv + batch norm + relu op; for f64, `rb_conv` then `rb_batch_norm` and `rb_relu`).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_bn_relu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    mean: *const rb_tensor,
    var: *const rb_tensor,
    gamma: *const rb_tensor,
    beta: *const rb_tensor,
    eps: f64,
    params: *const rb_conv_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_bn_relu", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let bias = arc_opt(bias, "bias")?;
        let mean = arc(mean, "mean")?;
        let var = arc(var, "var")?;
        let gamma = arc(gamma, "gamma")?;
        let beta = arc(beta, "beta")?;
        let params = unsafe { args::conv_params(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_bn_relu", &[("x", Some(&*x)), ("w", Some(&*w)), ("bias", bias.as_deref()), ("mean", Some(&*mean)), ("var", Some(&*var)), ("gamma", Some(&*gamma)), ("beta", Some(&*beta))], false)?;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let bias: Option<&Tensor> = bias.as_deref();
        let mean: &Tensor = &mean;
        let var: &Tensor = &var;
        let gamma: &Tensor = &gamma;
        let beta: &Tensor = &beta;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            __named.push(("bias", bias));
            __named.push(("mean", Some(mean)));
            __named.push(("var", Some(var)));
            __named.push(("gamma", Some(gamma)));
            __named.push(("beta", Some(beta)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_bn_relu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                __in.push(bias);
                __in.push(Some(mean));
                __in.push(Some(var));
                __in.push(Some(gamma));
                __in.push(Some(beta));
                let __r = __g.record(s, Op::ConvBnRelu(attrs::ConvBnRelu { eps: eps.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_bn_relu(s, x, w, bias, [mean, var, gamma, beta], eps, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Transposed convolution (`conv_transpose{ndim}d`), `x` `[N, C, ...]`, `w`
/// `[C, K / groups, ...]`, `bias` `[K]` or NULL; uses `params.output_padding`.
///
/// Failures as `rb_conv` (output_padding must be smaller than stride or dilation). Output
/// convention and threads: see the section's conventions. f64 as `rb_conv`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_transpose(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    params: *const rb_conv_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_transpose", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let bias = arc_opt(bias, "bias")?;
        let params = unsafe { args::conv_params(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_transpose", &[("x", Some(&*x)), ("w", Some(&*w)), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_transpose", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                __in.push(bias);
                let __r = __g.record(s, Op::ConvTranspose(attrs::ConvTranspose { params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_transpose(s, x, w, bias, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_conv` (no activation) with respect to `x`, whose shape is the
/// `x_ndim` extents at `x_shape`; `dy` has the convolution's output shape.
///
/// Failures as `rb_conv`. Output convention and threads: see the section's conventions. f64 as `rb_conv`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_backward_data(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    w: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    params: *const rb_conv_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_backward_data", || {
        let dy = arc(dy, "dy")?;
        let w = arc(w, "w")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let params = unsafe { args::conv_params(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_backward_data", &[("dy", Some(&*dy)), ("w", Some(&*w))], false)?;
        let dy: &Tensor = &dy;
        let w: &Tensor = &w;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("w", Some(w)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_backward_data", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(w));
                let __r = __g.record(s, Op::ConvBackwardData(attrs::ConvBackwardData { x_shape: x_shape.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradients of `rb_conv` with respect to the weight (shape: `w_ndim` extents at `w_shape`)
/// and, when `db` is not NULL, the bias. New tensors are written to `*dw` (and `*db`), owned
/// by the caller, only on success.
///
/// Failures as `rb_conv`. Thread-safe for distinct outputs. f64 as `rb_conv`.
///
/// # Safety
/// `w_shape` is NULL or points to `w_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `dw` is NULL or valid for writing one handle; `db` is NULL or valid for
/// writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_backward_weight(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    w_shape: *const i64,
    w_ndim: usize,
    params: *const rb_conv_params,
    dw: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_backward_weight", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let w_shape = unsafe { args::shape(w_shape, w_ndim, "w_shape") }?;
        let params = unsafe { args::conv_params(params) }?;
        let s = stream_arg(stream)?;
        let dw_slot = unsafe { OutSlot::new_only(dw, "dw") }?;
        let db_slot = unsafe { OutSlot::new_opt(db, "db") }?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let db = db_slot.wanted();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_backward_weight", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ConvBackwardWeight(attrs::ConvBackwardWeight { w_shape: w_shape.clone(), params: params.clone() }), &__in, &[Grad::New, if db { Grad::New } else { Grad::Skip }])?;
                unsafe {
                    dw_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::conv::conv_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
        unsafe {
            dw_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// Gradient of `rb_conv_transpose` (no bias) with respect to its input `x`, whose shape is
/// the `x_ndim` extents at `x_shape`; `dy` has the transposed convolution's output shape and
/// `w` is `[C, K / groups, ...]` (the forward convolution of `dy` with `w`).
///
/// Failures as `rb_conv_transpose`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another shape
/// than the output. Output convention and threads: see the section's conventions. f64 as `rb_conv`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_transpose_backward_data(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    w: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    params: *const rb_conv_params,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_transpose_backward_data", || {
        let dy = arc(dy, "dy")?;
        let w = arc(w, "w")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let params = unsafe { args::conv_params(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_transpose_backward_data", &[("dy", Some(&*dy)), ("w", Some(&*w))], false)?;
        let dy: &Tensor = &dy;
        let w: &Tensor = &w;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("w", Some(w)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_transpose_backward_data", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(w));
                let __r = __g.record(s, Op::ConvTransposeBackwardData(attrs::ConvTransposeBackwardData { x_shape: x_shape.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_transpose_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradients of `rb_conv_transpose` with respect to the weight (shape: the `w_ndim` extents
/// at `w_shape`, `[C, K / groups, ...]`) and, when `db` is not NULL, the bias (`[K]`), from
/// the input `x` and `dy` (the output's shape). New tensors are written to `*dw` (and
/// `*db`), owned by the caller, only on success.
///
/// Failures as `rb_conv_transpose`. Thread-safe for distinct outputs. f64 as `rb_conv`.
///
/// # Safety
/// `w_shape` is NULL or points to `w_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `dw` is NULL or valid for writing one handle; `db` is NULL or valid for
/// writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_transpose_backward_weight(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    w_shape: *const i64,
    w_ndim: usize,
    params: *const rb_conv_params,
    dw: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_transpose_backward_weight", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let w_shape = unsafe { args::shape(w_shape, w_ndim, "w_shape") }?;
        let params = unsafe { args::conv_params(params) }?;
        let s = stream_arg(stream)?;
        let dw_slot = unsafe { OutSlot::new_only(dw, "dw") }?;
        let db_slot = unsafe { OutSlot::new_opt(db, "db") }?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let db = db_slot.wanted();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_transpose_backward_weight", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ConvTransposeBackwardWeight(attrs::ConvTransposeBackwardWeight { w_shape: w_shape.clone(), params: params.clone() }), &__in, &[Grad::New, if db { Grad::New } else { Grad::Skip }])?;
                unsafe {
                    dw_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::conv::conv_transpose_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
        unsafe {
            dw_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// `rb_conv` with padding per side: `params` (an `rb_conv_params_ex`) gives the padding
/// before (`pad_before`) and after (`pad_after`) each spatial dim, so PyTorch's
/// `padding='same'` with an odd total padding (the extra after), ONNX's SAME_UPPER /
/// SAME_LOWER and explicit ONNX `pads` are exact: the result is `conv{ndim}d(F.pad(x, pads),
/// w, bias)` followed by `activation`. Equal padding on both sides gives exactly `rb_conv`'s
/// result; otherwise the input is zero-padded by the difference first (a copy in the
/// stream's memory). `output_padding` is not used (as by `rb_conv`).
///
/// Failures as `rb_conv` (RB_STATUS_INVALID_ARGUMENT also for a negative padding). Output
/// convention and threads: see the section's conventions. f64 as `rb_conv`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_ex(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    params: *const rb_conv_params_ex,
    activation: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_ex", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let bias = arc_opt(bias, "bias")?;
        let params = unsafe { args::conv_params_ex(params) }?;
        let activation = args::activation(activation)?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_ex", &[("x", Some(&*x)), ("w", Some(&*w)), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_ex", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                __in.push(bias);
                let __r = __g.record(s, Op::ConvEx(attrs::ConvEx { params: params.clone(), activation: activation.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_ex(s, x, w, bias, &params.0, params.1, activation, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_conv_ex` (no activation) with respect to `x`, whose shape is the
/// `x_ndim` extents at `x_shape`; `dy` has the convolution's output shape. Equal padding on
/// both sides gives exactly `rb_conv_backward_data`'s result.
///
/// Failures as `rb_conv_ex`. Output convention and threads: see the section's conventions. f64 as `rb_conv`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_ex_backward_data(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    w: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    params: *const rb_conv_params_ex,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_ex_backward_data", || {
        let dy = arc(dy, "dy")?;
        let w = arc(w, "w")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let params = unsafe { args::conv_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_ex_backward_data", &[("dy", Some(&*dy)), ("w", Some(&*w))], false)?;
        let dy: &Tensor = &dy;
        let w: &Tensor = &w;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("w", Some(w)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_ex_backward_data", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(w));
                let __r = __g.record(s, Op::ConvExBackwardData(attrs::ConvExBackwardData { x_shape: x_shape.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_ex_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradients of `rb_conv_ex` with respect to the weight (shape: `w_ndim` extents at
/// `w_shape`) and, when `db` is not NULL, the bias. New tensors are written to `*dw` (and
/// `*db`), owned by the caller, only on success. Equal padding on both sides gives exactly
/// `rb_conv_backward_weight`'s result.
///
/// Failures as `rb_conv_ex`. Thread-safe for distinct outputs. f64 as `rb_conv`.
///
/// # Safety
/// `w_shape` is NULL or points to `w_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `dw` is NULL or valid for writing one handle; `db` is NULL or valid for
/// writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_ex_backward_weight(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    w_shape: *const i64,
    w_ndim: usize,
    params: *const rb_conv_params_ex,
    dw: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_ex_backward_weight", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let w_shape = unsafe { args::shape(w_shape, w_ndim, "w_shape") }?;
        let params = unsafe { args::conv_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let dw_slot = unsafe { OutSlot::new_only(dw, "dw") }?;
        let db_slot = unsafe { OutSlot::new_opt(db, "db") }?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let db = db_slot.wanted();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_ex_backward_weight", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ConvExBackwardWeight(attrs::ConvExBackwardWeight { w_shape: w_shape.clone(), params: params.clone() }), &__in, &[Grad::New, if db { Grad::New } else { Grad::Skip }])?;
                unsafe {
                    dw_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::conv::conv_ex_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
        unsafe {
            dw_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// `rb_conv_transpose` with an `rb_conv_params_ex`, for its `layout`: `RB_LAYOUT_NHWC`
/// takes `x` `[N, ..., C]` and `w` `[C, k..., K / groups]` (PyTorch's channels_last
/// `conv_transpose{ndim}d` tensors, dense) and writes `[N, ..., K]`; GPUs run it through
/// channels-last cuDNN/MIOpen descriptors, other devices convert around the channels-first op.
/// `RB_LAYOUT_NCHW` gives exactly `rb_conv_transpose`'s result. `pad_before` and `pad_after`
/// must be equal (RB_STATUS_INVALID_ARGUMENT otherwise); `output_padding` is used.
///
/// Failures as `rb_conv_transpose`. Output convention and threads: see the section's
/// conventions. f64 as `rb_conv`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `params` is NULL or points to a readable struct; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_transpose_ex(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    params: *const rb_conv_params_ex,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_transpose_ex", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let bias = arc_opt(bias, "bias")?;
        let params = unsafe { args::conv_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_transpose_ex", &[("x", Some(&*x)), ("w", Some(&*w)), ("bias", bias.as_deref())], false)?;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let bias: Option<&Tensor> = bias.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            __named.push(("bias", bias));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_transpose_ex", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                __in.push(bias);
                let __r = __g.record(s, Op::ConvTransposeEx(attrs::ConvTransposeEx { params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_transpose_ex(s, x, w, bias, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradient of `rb_conv_transpose_ex` (no bias) with respect to its input `x`, whose
/// shape is the `x_ndim` extents at `x_shape` (in `params.layout`); `dy` has the output's
/// shape.
///
/// Failures as `rb_conv_transpose_ex`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another
/// shape than the output. Output convention and threads: see the section's conventions. f64 as `rb_conv`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `x_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_transpose_ex_backward_data(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    w: *const rb_tensor,
    x_shape: *const i64,
    x_ndim: usize,
    params: *const rb_conv_params_ex,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_transpose_ex_backward_data", || {
        let dy = arc(dy, "dy")?;
        let w = arc(w, "w")?;
        let x_shape = unsafe { args::shape(x_shape, x_ndim, "x_shape") }?;
        let params = unsafe { args::conv_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_conv_transpose_ex_backward_data", &[("dy", Some(&*dy)), ("w", Some(&*w))], false)?;
        let dy: &Tensor = &dy;
        let w: &Tensor = &w;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("w", Some(w)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_transpose_ex_backward_data", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(w));
                let __r = __g.record(s, Op::ConvTransposeExBackwardData(attrs::ConvTransposeExBackwardData { x_shape: x_shape.clone(), params: params.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::conv::conv_transpose_ex_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradients of `rb_conv_transpose_ex` with respect to the weight (shape: the `w_ndim`
/// extents at `w_shape`, in `params.layout`) and, when `db` is not NULL, the bias (`[K]`),
/// from the input `x` and `dy`. New tensors are written to `*dw` (and `*db`), owned by the
/// caller, only on success.
///
/// Failures as `rb_conv_transpose_ex`. Thread-safe for distinct outputs. f64 as `rb_conv`.
///
/// # Safety
/// `w_shape` is NULL or points to `w_ndim` readable int64_t; `params` is NULL or points to a
/// readable struct; `dw` is NULL or valid for writing one handle; `db` is NULL or valid for
/// writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_conv_transpose_ex_backward_weight(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    w_shape: *const i64,
    w_ndim: usize,
    params: *const rb_conv_params_ex,
    dw: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_conv_transpose_ex_backward_weight", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let w_shape = unsafe { args::shape(w_shape, w_ndim, "w_shape") }?;
        let params = unsafe { args::conv_params_ex(params) }?;
        let s = stream_arg(stream)?;
        let dw_slot = unsafe { OutSlot::new_only(dw, "dw") }?;
        let db_slot = unsafe { OutSlot::new_opt(db, "db") }?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let db = db_slot.wanted();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_conv_transpose_ex_backward_weight", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ConvTransposeExBackwardWeight(attrs::ConvTransposeExBackwardWeight { w_shape: w_shape.clone(), params: params.clone() }), &__in, &[Grad::New, if db { Grad::New } else { Grad::Skip }])?;
                unsafe {
                    dw_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::conv::conv_transpose_ex_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
        unsafe {
            dw_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}
