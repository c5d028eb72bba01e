//! The C exports of the reduce ops (the eager conventions: `rb_add` in the header's
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

/// `torch.sum(x, dims, keepdim)` (accumulated in f64) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sum(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sum", || {
        let x = arc(x, "x")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sum", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sum", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Sum(attrs::Sum { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce(s, ReduceOp::Sum, x, dims, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_sum` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): `dx = dy` broadcast back.
///
/// Fails as `rb_sum`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sum_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sum_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sum_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sum_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SumBackward(attrs::SumBackward { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce_backward(s, ReduceOp::Sum, x, dims, keepdim, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.mean(x, dims, keepdim)` (accumulated in f64; NaN over zero elements) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mean(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mean", || {
        let x = arc(x, "x")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mean", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mean", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Mean(attrs::Mean { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce(s, ReduceOp::Mean, x, dims, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_mean` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): `dx = dy / count` broadcast back.
///
/// Fails as `rb_mean`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mean_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mean_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mean_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mean_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MeanBackward(attrs::MeanBackward { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce_backward(s, ReduceOp::Mean, x, dims, keepdim, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.amax(x, dims, keepdim)` (NaN propagates) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64) or an
/// integer one (i32, i64, i8, u8, i16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1, reducing an empty dimension),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max", || {
        let x = arc(x, "x")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_max", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_max", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Max(attrs::Max { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce(s, ReduceOp::Max, x, dims, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_max` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): the gradient shared evenly between tied maxima (`torch.amax`'s rule).
///
/// Fails as `rb_max`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_max_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_max_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MaxBackward(attrs::MaxBackward { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce_backward(s, ReduceOp::Max, x, dims, keepdim, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.amin(x, dims, keepdim)` (NaN propagates) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64) or an
/// integer one (i32, i64, i8, u8, i16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1, reducing an empty dimension),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_min(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_min", || {
        let x = arc(x, "x")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_min", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_min", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Min(attrs::Min { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce(s, ReduceOp::Min, x, dims, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_min` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): the gradient shared evenly between tied minima.
///
/// Fails as `rb_min`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_min_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_min_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_min_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_min_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MinBackward(attrs::MinBackward { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce_backward(s, ReduceOp::Min, x, dims, keepdim, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.prod` over `dims` (accumulated in f64) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_prod(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_prod", || {
        let x = arc(x, "x")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_prod", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_prod", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Prod(attrs::Prod { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce(s, ReduceOp::Prod, x, dims, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_prod` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
/// (the reduction's shape): `dx = dy * (product of the other elements)` (exact with zeros).
///
/// Fails as `rb_prod`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_prod_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_prod_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_prod_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_prod_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ProdBackward(attrs::ProdBackward { dims: dims.to_vec(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce_backward(s, ReduceOp::Prod, x, dims, keepdim, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.argmax(x)` without `dim`, on a tensor of any dtype but bool: an `RB_DTYPE_I64` tensor holding
/// the index of the first largest value of the flattened `x` (a NaN counts as the largest);
/// its shape is `[]`, or `x`'s rank with every size 1 when `keepdim` is 1.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (empty `x`, keepdim not 0/1), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (an
/// integer `x`, or a given `*out` of the wrong shape or dtype). Output convention (a new
/// tensor the caller destroys, or the given `*out` written in place; `*out` untouched on
/// failure): `rb_add`. Thread-safe; `x` is only read.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_argmax_all(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_argmax_all", || {
        let x = arc(x, "x")?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_argmax_all", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_argmax_all", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::ArgmaxAll(attrs::ArgmaxAll { keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::argmax_all(s, x, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.argmax(x, dim, keepdim)` on a tensor of any dtype but bool: an `RB_DTYPE_I64` tensor of the first
/// index of the largest value along `dim` (a NaN counts as the largest).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range, keepdim not 0/1, empty dimension), RB_STATUS_SHAPE_MISMATCH or
/// RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_argmax(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_argmax", || {
        let x = arc(x, "x")?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_argmax", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_argmax", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Argmax(attrs::Argmax { dim: dim.clone(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::argmax(s, x, dim, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.max(x, dim, keepdim)` on a tensor of any dtype but bool: `*values`, the largest value along
/// `dim`, and `*indices` (`RB_DTYPE_I64`), the first index holding it; a NaN counts as the
/// largest (the value is NaN, the index the first NaN's). Both have x's shape without `dim`
/// (kept as 1 when `keepdim` is 1). Its backward is `rb_max_dim_backward`, which routes the
/// gradient to the returned index only (unlike `rb_max`, `torch.amax`, which shares it among
/// ties).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range, keepdim not 0/1, an empty `dim`), RB_STATUS_SHAPE_MISMATCH (a given
/// output of another shape) or RB_STATUS_DTYPE_MISMATCH (integer x, a given output of
/// another dtype). `values` and `indices` follow the output convention of `rb_add`
/// independently; on failure neither is changed. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `values` is NULL or valid for reading and writing one handle; `indices` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_dim(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    keepdim: i32,
    values: *mut *mut rb_tensor,
    indices: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_dim", || {
        let x = arc(x, "x")?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let values_slot = unsafe { OutSlot::out(values, "values") }?;
        let indices_slot = unsafe { OutSlot::out(indices, "indices") }?;
        values_slot.check_overlap("rb_max_dim", &[("x", Some(&*x))], false)?;
        indices_slot.check_overlap("rb_max_dim", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let values = values_slot.dest();
        let indices = indices_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_max_dim", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::MaxDim(attrs::MaxDim { dim: dim.clone(), keepdim: keepdim.clone() }), &__in, &[values.map_or(Grad::New, Grad::Into), indices.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    values_slot.finish(__r.get(0).cloned().flatten());
                    indices_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::reduce::max_dim(s, ReduceOp::Max, x, dim, keepdim, values, indices)?;
        unsafe {
            values_slot.finish(r0);
            indices_slot.finish(r1);
        }
        Ok(())
    })
}

/// `torch.min(x, dim, keepdim)` on a tensor of any dtype but bool: `*values`, the smallest value along
/// `dim`, and `*indices` (`RB_DTYPE_I64`), the first index holding it; a NaN counts as the
/// smallest (NaN value, the first NaN's index). Its backward is `rb_max_dim_backward`.
///
/// Failures and output convention as `rb_max_dim`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `values` is NULL or valid for reading and writing one handle; `indices` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_min_dim(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dim: i64,
    keepdim: i32,
    values: *mut *mut rb_tensor,
    indices: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_min_dim", || {
        let x = arc(x, "x")?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let values_slot = unsafe { OutSlot::out(values, "values") }?;
        let indices_slot = unsafe { OutSlot::out(indices, "indices") }?;
        values_slot.check_overlap("rb_min_dim", &[("x", Some(&*x))], false)?;
        indices_slot.check_overlap("rb_min_dim", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let values = values_slot.dest();
        let indices = indices_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_min_dim", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::MinDim(attrs::MinDim { dim: dim.clone(), keepdim: keepdim.clone() }), &__in, &[values.map_or(Grad::New, Grad::Into), indices.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    values_slot.finish(__r.get(0).cloned().flatten());
                    indices_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::reduce::max_dim(s, ReduceOp::Min, x, dim, keepdim, values, indices)?;
        unsafe {
            values_slot.finish(r0);
            indices_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_max_dim` and `rb_min_dim` with the same `dim` and `keepdim`: the
/// gradient of x (shape: the `ndim` extents at `x_shape`) is `dy` at the index `indices`
/// holds along `dim` and zero elsewhere (PyTorch's `value_selecting_reduction_backward`).
/// `dy` (floating) and `indices` (i32 or i64, as `rb_max_dim` returned them) have the
/// values' shape; a negative index counts from the end.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range, keepdim not 0/1, an index outside `[-n, n)`, different devices),
/// RB_STATUS_SHAPE_MISMATCH (`dy`, `indices` or `*out`) or RB_STATUS_DTYPE_MISMATCH.
/// Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dy'").
///
/// # Safety
/// `x_shape` is NULL or points to `ndim` readable int64_t; `out` is NULL or valid for reading
/// and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_max_dim_backward(
    stream: *mut rb_stream,
    dy: *const rb_tensor,
    indices: *const rb_tensor,
    x_shape: *const i64,
    ndim: usize,
    dim: i64,
    keepdim: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_max_dim_backward", || {
        let dy = arc(dy, "dy")?;
        let indices = arc(indices, "indices")?;
        let x_shape = unsafe { args::shape(x_shape, ndim, "x_shape") }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_max_dim_backward", &[("dy", Some(&*dy)), ("indices", Some(&*indices))], false)?;
        let dy: &Tensor = &dy;
        let indices: &Tensor = &indices;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dy", Some(dy)));
            __named.push(("indices", Some(indices)));
            if let Some(__g) = crate::graph::capture::recorder("rb_max_dim_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dy));
                __in.push(Some(indices));
                let __r = __g.record(s, Op::MaxDimBackward(attrs::MaxDimBackward { x_shape: x_shape.clone(), dim: dim.clone(), keepdim: keepdim.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::max_dim_backward(s, dy, indices, &x_shape, dim, keepdim, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.sum(x, dims, keepdim, dtype=dtype)`: x (any dtype) is cast to the `rb_dtype`
/// `dtype` (f32, f16, bf16, f64, i32 or i64; the rules of `rb_cast`) and summed in it over `dims`
/// (none: all): floating dtypes accumulate in f64 and round once; integer dtypes wrap on
/// overflow, as PyTorch's do. PyTorch's default for an integer or bool `x` (`dtype=None`) is
/// `RB_DTYPE_I64`; the result has `dtype`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (dim out of range or repeated, keepdim not 0/1, a `dtype` that is no `rb_dtype`),
/// RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH (`dtype` bool, `*out` of
/// another dtype). Output convention: `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sum_dtype(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sum_dtype", || {
        let x = arc(x, "x")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let dtype = args::dtype(dtype, "sum_dtype")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sum_dtype", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sum_dtype", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::SumDtype(attrs::SumDtype { dims: dims.to_vec(), keepdim: keepdim.clone(), dtype: dtype.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce_dtype(s, ReduceOp::Sum, x, dims, keepdim, dtype, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.prod(x, dims, keepdim, dtype=dtype)`: x cast to `dtype` and multiplied in it,
/// with the rules of `rb_sum_dtype` (an empty reduction gives 1).
///
/// Failures and output convention as `rb_sum_dtype`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dims` is NULL or points to `ndims` readable int64_t; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_prod_dtype(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dims: *const i64,
    ndims: usize,
    keepdim: i32,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_prod_dtype", || {
        let x = arc(x, "x")?;
        let dims = unsafe { args::dims(dims, ndims) }?;
        let keepdim = args::flag(keepdim, "keepdim")?;
        let dtype = args::dtype(dtype, "prod_dtype")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_prod_dtype", &[("x", Some(&*x))], false)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_prod_dtype", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::ProdDtype(attrs::ProdDtype { dims: dims.to_vec(), keepdim: keepdim.clone(), dtype: dtype.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::reduce::reduce_dtype(s, ReduceOp::Prod, x, dims, keepdim, dtype, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}
