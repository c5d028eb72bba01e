//! The C exports of the elementwise ops (the eager conventions: `rb_add` in the header's
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

/// Fused `max(a + b, 0)` with NumPy broadcasting.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see
/// the section's conventions.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add_relu(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_add_relu", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_add_relu", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_add_relu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::AddRelu, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::add_relu(s, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Fused `a * b + c` with NumPy broadcasting over all three.
///
/// Failures as `rb_add_relu`. Output convention and threads: see the section's conventions.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mul_add(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    c: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mul_add", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let c = arc(c, "c")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mul_add", &[("a", Some(&*a)), ("b", Some(&*b)), ("c", Some(&*c))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let c: &Tensor = &c;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("c", Some(c)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mul_add", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(c));
                let __r = __g.record(s, Op::MulAdd, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::mul_add(s, a, b, c, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `a + b` with NumPy broadcasting; both inputs of one dtype and device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the
/// eager-op conventions at the top of this section.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_add", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_add", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_add", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Add, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::binary(s, BinaryOp::Add, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `max(x, 0)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64) or an integer one
/// (i32, i64, i8, u8, i16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see
/// the eager-op conventions.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_relu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_relu", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_relu", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_relu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Relu, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Relu, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise a - b with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sub(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sub", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sub", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sub", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Sub, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::binary(s, BinaryOp::Sub, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise a * b with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mul(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mul", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mul", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mul", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Mul, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::binary(s, BinaryOp::Mul, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise a / b (true division; floating dtypes only) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16, f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_div(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_div", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_div", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_div", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Div, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::binary(s, BinaryOp::Div, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise a ** b (`torch.pow`) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16, f64; i32, i64, i8, u8 and i16 wrapping to their width).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pow(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pow", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_pow", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pow", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Pow, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::binary(s, BinaryOp::Pow, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise the larger of a and b (NaN propagates) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_maximum(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_maximum", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_maximum", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_maximum", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Maximum, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::binary(s, BinaryOp::Maximum, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise the smaller of a and b (NaN propagates) with NumPy broadcasting; both inputs of one dtype and device
/// (f32, f16, bf16; i32 and i64 where PyTorch allows).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_minimum(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_minimum", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_minimum", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_minimum", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Minimum, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::binary(s, BinaryOp::Minimum, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `-x` on a floating tensor (f32, f16, bf16; f64
/// computed in f64) or an integer one
/// (i32, i64, i8, u8, i16: wrapping as PyTorch, i8 -128 stays -128 and u8 wraps).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_neg(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_neg", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_neg", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_neg", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Neg, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Neg, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `|x|` on a floating tensor (f32, f16, bf16; f64
/// computed in f64) or an integer one
/// (i32, i64, i8, u8, i16: the minimum of a signed type stays itself as in PyTorch; u8 is
/// the identity).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_abs(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_abs", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_abs", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_abs", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Abs, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Abs, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `sqrt(x)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sqrt(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sqrt", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sqrt", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sqrt", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Sqrt, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Sqrt, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `exp(x)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_exp(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_exp", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_exp", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_exp", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Exp, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Exp, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `ln(x)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_log", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_log", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_log", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Log, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Log, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `sin(x)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sin(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sin", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sin", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sin", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Sin, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Sin, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `cos(x)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cos(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cos", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cos", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_cos", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Cos, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Cos, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `1 / (1 + exp(-x))` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sigmoid(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sigmoid", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sigmoid", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sigmoid", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Sigmoid, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Sigmoid, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `tanh(x)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tanh(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tanh", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_tanh", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_tanh", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Tanh, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Tanh, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `x * sigmoid(x)` on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_silu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_silu", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_silu", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_silu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Silu, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Silu, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `x * relu6(x + 3) / 6` (`torch.nn.functional.hardswish`) on a floating
/// tensor (f32, f16, bf16; f64 computed in f64); NaN propagates.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_hardswish(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_hardswish", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_hardswish", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_hardswish", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Hardswish, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Hardswish, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// GELU on a floating tensor: `approximate` is an `rb_gelu_approximate` (0: exact erf form,
/// 1: tanh form), as `torch.nn.functional.gelu`.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT (bad `approximate`) and as `rb_relu`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gelu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    approximate: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_gelu", || {
        let x = arc(x, "x")?;
        let approximate = args::gelu(approximate)?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_gelu", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_gelu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Gelu(attrs::Gelu { approximate: approximate.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, approximate, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.clamp(x, min, max)` with number bounds: `min(max(x, min), max)` (so `max` wins
/// when `min > max`, as in PyTorch); `min = -inf` / `max = +inf` (Python `None`) is no bound.
/// The bounds are floats in the C ABI (its published signature), widened exactly to double
/// (the Rust API `runtime::elementwise::clamp` takes doubles): f32/f16/bf16 clamp by them as
/// floats, f64 in double. The integer
/// dtypes (i8, u8, i16, i32, i64) stay integer, as PyTorch with integer bounds: an integral
/// bound converts to x's dtype as PyTorch's scalar conversion does (in range: itself; on u8,
/// -255..-1 wrap to 256 + bound; otherwise RB_STATUS_INVALID_ARGUMENT, PyTorch's "value
/// cannot be converted ... without overflow"; through the C ABI an integer bound beyond
/// 2^24 in magnitude is the float nearest to it, so clamp i32/i64 by large bounds with
/// `rb_clamp_tensor`).
/// A non-integral bound (or +inf below, -inf above) on an integer tensor is
/// RB_STATUS_INVALID_ARGUMENT: PyTorch would promote the result to float, so cast first.
/// Bool tensors are RB_STATUS_DTYPE_MISMATCH (PyTorch promotes them to int64 or float).
///
/// Fails with RB_STATUS_INVALID_ARGUMENT (NaN bound, the integer cases above) and as
/// `rb_relu`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_clamp(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    min: f32,
    max: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_clamp", || {
        let x = arc(x, "x")?;
        let min = args::bound(f64::from(min), "clamp")?;
        let max = args::bound(f64::from(max), "clamp")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_clamp", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_clamp", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Clamp(attrs::Clamp { min: min.clone(), max: max.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::clamp(s, x, min, max, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `x > 0 ? x : negative_slope * x` (`torch.nn.functional.leaky_relu`) on a floating tensor (f32, f16, bf16; f64 computed in f64); NaN propagates.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_leaky_relu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    negative_slope: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_leaky_relu", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_leaky_relu", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_leaky_relu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::LeakyRelu(attrs::LeakyRelu { negative_slope: negative_slope.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::LeakyRelu { slope: negative_slope }, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `x > 0 ? x : alpha * (exp(x) - 1)` (`torch.nn.functional.elu`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_elu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    alpha: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_elu", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_elu", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_elu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Elu(attrs::Elu { alpha: alpha.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Elu { alpha }, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `scale * (x > 0 ? x : alpha * (exp(x) - 1))` with SELU's constants (`torch.nn.functional.selu`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_selu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_selu", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_selu", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_selu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Selu, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Selu, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))` (`torch.nn.functional.celu`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64). RB_STATUS_INVALID_ARGUMENT when `alpha` is 0.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_celu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    alpha: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_celu", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_celu", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_celu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Celu(attrs::Celu { alpha: alpha.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Celu { alpha }, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `relu6(x + 3) / 6` (`torch.nn.functional.hardsigmoid`) on a floating tensor (f32, f16, bf16; f64 computed in f64); NaN propagates.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_hardsigmoid(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_hardsigmoid", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_hardsigmoid", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_hardsigmoid", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Hardsigmoid, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Hardsigmoid, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `log(1 + exp(beta * x)) / beta`, and `x` where `beta * x > threshold` (`torch.nn.functional.softplus`), on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softplus(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    beta: f32,
    threshold: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_softplus", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_softplus", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_softplus", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Softplus(attrs::Softplus { beta: beta.clone(), threshold: threshold.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Softplus { beta, threshold }, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `x / (1 + |x|)` (`torch.nn.functional.softsign`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softsign(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_softsign", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_softsign", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_softsign", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Softsign, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Softsign, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `x * tanh(softplus(x))` (`torch.nn.functional.mish`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mish(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mish", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mish", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mish", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Mish, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Mish, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise error function (`torch.erf`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_erf(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_erf", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_erf", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_erf", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Erf, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Erf, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise sign, -1, 0 or 1 (`torch.sign`; NaN gives 0 as in PyTorch) on a floating tensor (f32, f16, bf16; f64
/// computed in f64) or an integer one
/// (i32, i64, i8, u8, i16).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (bool). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sign(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sign", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sign", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sign", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Sign, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Sign, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `floor(x)` (`torch.floor`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_floor(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_floor", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_floor", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_floor", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Floor, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Floor, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `ceil(x)` (`torch.ceil`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_ceil(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_ceil", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_ceil", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_ceil", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Ceil, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Ceil, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise rounding to the nearest integer, halves to even (`torch.round`), on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_round(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_round", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_round", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_round", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Round, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Round, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `1 / x` (`torch.reciprocal`) on a floating tensor (f32, f16, bf16; f64
/// computed in f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_reciprocal(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_reciprocal", || {
        let x = arc(x, "x")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_reciprocal", &[("x", Some(&*x))], true)?;
        let x: &Tensor = &x;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            if let Some(__g) = crate::graph::capture::recorder("rb_reciprocal", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                let __r = __g.record(s, Op::Reciprocal, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary(s, UnaryOp::Reciprocal, x, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_relu`: `dx = drelu(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_relu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_relu_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_relu_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_relu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ReluBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Relu, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_neg`: `dx = dneg(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_neg_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_neg_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_neg_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_neg_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::NegBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Neg, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_abs`: `dx = dabs(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_abs_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_abs_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_abs_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_abs_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::AbsBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Abs, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_sqrt`: `dx = dsqrt(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sqrt_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sqrt_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sqrt_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_sqrt_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SqrtBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Sqrt, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_exp`: `dx = dexp(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_exp_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_exp_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_exp_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_exp_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ExpBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Exp, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_log`: `dx = dlog(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_log_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_log_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_log_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_log_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::LogBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Log, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_sin`: `dx = dsin(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sin_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sin_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sin_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_sin_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SinBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Sin, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_cos`: `dx = dcos(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_cos_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_cos_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_cos_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_cos_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::CosBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Cos, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_sigmoid`: `dx = dsigmoid(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sigmoid_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sigmoid_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sigmoid_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_sigmoid_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SigmoidBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Sigmoid, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_tanh`: `dx = dtanh(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tanh_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_tanh_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_tanh_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_tanh_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::TanhBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Tanh, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_silu`: `dx = dsilu(x)/dx * dy`, from the op's input `x` and the
/// upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_silu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_silu_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_silu_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_silu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SiluBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Silu, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_hardswish` (PyTorch's `hardswish_backward`): `dx = 0` where
/// `x < -3`, `dy * (x / 3 + 1/2)` where `x <= 3`, else `dy`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_hardswish_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_hardswish_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_hardswish_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_hardswish_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::HardswishBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Hardswish, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_gelu` with the same `approximate` (PyTorch's `gelu_backward`).
///
/// Fails with RB_STATUS_INVALID_ARGUMENT (bad `approximate`) and as `rb_relu_backward`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gelu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    approximate: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_gelu_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let approximate = args::gelu(approximate)?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_gelu_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_gelu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::GeluBackward(attrs::GeluBackward { approximate: approximate.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, approximate, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_clamp`: `dy` where `min <= x <= max`, else 0 (floating dtypes; f64
/// compares in double with the bounds as given, f32/f16/bf16 in float, as the forward;
/// integer tensors have no gradient).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_clamp_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    min: f32,
    max: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_clamp_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let min = args::bound(f64::from(min), "clamp_backward")?;
        let max = args::bound(f64::from(max), "clamp_backward")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_clamp_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_clamp_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ClampBackward(attrs::ClampBackward { min: min.clone(), max: max.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::clamp_backward(s, x, dy, min, max, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_leaky_relu` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy` where `x > 0`, else `negative_slope * dy` (PyTorch's `leaky_relu_backward`; so `negative_slope * dy` at 0).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_leaky_relu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    negative_slope: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_leaky_relu_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_leaky_relu_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_leaky_relu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::LeakyReluBackward(attrs::LeakyReluBackward { negative_slope: negative_slope.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::LeakyRelu { slope: negative_slope }, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_elu` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy` where `x > 0`, else `dy * alpha * exp(x)` (PyTorch's `elu_backward`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_elu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    alpha: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_elu_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_elu_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_elu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::EluBackward(attrs::EluBackward { alpha: alpha.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Elu { alpha }, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_selu` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `scale * dy` where `x > 0`, else `dy * scale * alpha * exp(x)` (PyTorch's `elu_backward`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_selu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_selu_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_selu_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_selu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SeluBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Selu, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_celu` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy` where `x > 0`, else `dy * exp(x / alpha)` (PyTorch's `elu_backward`). RB_STATUS_INVALID_ARGUMENT when `alpha` is 0.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_celu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    alpha: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_celu_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_celu_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_celu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::CeluBackward(attrs::CeluBackward { alpha: alpha.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Celu { alpha }, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_hardsigmoid` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy / 6` where `-3 < x < 3`, else 0 (PyTorch's `hardsigmoid_backward`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_hardsigmoid_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_hardsigmoid_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_hardsigmoid_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_hardsigmoid_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::HardsigmoidBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Hardsigmoid, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_softplus` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy` where `beta * x > threshold`, else `dy * z / (z + 1)` with `z = exp(beta * x)` (PyTorch's `softplus_backward`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softplus_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    beta: f32,
    threshold: f32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_softplus_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_softplus_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_softplus_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SoftplusBackward(attrs::SoftplusBackward { beta: beta.clone(), threshold: threshold.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Softplus { beta, threshold }, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_softsign` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy / (1 + |x|)^2`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_softsign_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_softsign_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_softsign_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_softsign_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SoftsignBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Softsign, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_mish` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy * (t + x * sigmoid(x) * (1 - t^2))` with `t = tanh(softplus(x))` (PyTorch's `mish_backward`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mish_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mish_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_mish_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_mish_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MishBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Mish, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_erf` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `dy * 2 / sqrt(pi) * exp(-x^2)`.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_erf_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_erf_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_erf_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_erf_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ErfBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Erf, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_sign` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): Zeros (PyTorch's gradient of `sign`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sign_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sign_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sign_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_sign_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SignBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Sign, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_floor` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): Zeros (PyTorch's gradient of `floor`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_floor_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_floor_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_floor_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_floor_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::FloorBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Floor, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_ceil` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): Zeros (PyTorch's gradient of `ceil`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_ceil_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_ceil_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_ceil_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_ceil_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::CeilBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Ceil, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_round` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): Zeros (PyTorch's gradient of `round`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_round_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_round_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_round_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_round_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::RoundBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Round, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_reciprocal` from the op's input `x` and the upstream gradient `dy`
/// (same shape and dtype): `-dy / x^2` (PyTorch's: `-dy * (1 / x)^2`).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
/// and threads: see `rb_add`.
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_reciprocal_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    dy: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_reciprocal_backward", || {
        let x = arc(x, "x")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_reciprocal_backward", &[("x", Some(&*x)), ("dy", Some(&*dy))], true)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_reciprocal_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ReciprocalBackward, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::unary_backward(s, UnaryOp::Reciprocal, x, dy, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.nn.functional.prelu(x, weight)`: `x > 0 ? x : weight[c] * x`, `c` the element's
/// channel (dimension 1). `weight` (one dimension or none) holds one value, or one per
/// channel of `x` (an `x` of fewer than two dimensions takes one value). Floating dtypes, f64 included; NaN
/// propagates.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (a
/// `weight` of another size, or `*out` of another shape), RB_STATUS_DTYPE_MISMATCH or
/// RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see `rb_add`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_prelu(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    weight: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_prelu", || {
        let x = arc(x, "x")?;
        let weight = arc(weight, "weight")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_prelu", &[("x", Some(&*x)), ("weight", Some(&*weight))], false)?;
        let x: &Tensor = &x;
        let weight: &Tensor = &weight;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("weight", Some(weight)));
            if let Some(__g) = crate::graph::capture::recorder("rb_prelu", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(weight));
                let __r = __g.record(s, Op::Prelu, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::prelu(s, x, weight, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_prelu` (PyTorch's): `*dx = x > 0 ? dy : weight[c] * dy` (x's shape)
/// and `*dweight` (weight's shape), per channel the sum of `x > 0 ? 0 : x * dy`. `dx` and
/// `dweight` follow the output convention of `rb_add` independently.
///
/// Fails as `rb_prelu`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape than `x`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dweight` is NULL or valid for
/// reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_prelu_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    weight: *const rb_tensor,
    dy: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dweight: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_prelu_backward", || {
        let x = arc(x, "x")?;
        let weight = arc(weight, "weight")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::out(dx, "dx") }?;
        let dweight_slot = unsafe { OutSlot::out(dweight, "dweight") }?;
        dx_slot.check_overlap("rb_prelu_backward", &[("x", Some(&*x)), ("weight", Some(&*weight)), ("dy", Some(&*dy))], false)?;
        dweight_slot.check_overlap("rb_prelu_backward", &[("x", Some(&*x)), ("weight", Some(&*weight)), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let weight: &Tensor = &weight;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let dx = dx_slot.dest();
        let dweight = dweight_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("weight", Some(weight)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_prelu_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(weight));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::PreluBackward, &__in, &[dx.map_or(Grad::New, Grad::Into), dweight.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dweight_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::prelu_backward(s, x, weight, dy, dx, dweight)?;
        unsafe {
            dx_slot.finish(r0);
            dweight_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_add`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_add_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_add_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_add_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_add_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::AddBackward, &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::binary_backward(s, BinaryOp::Add, a, b, dy, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_sub`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sub_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sub_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_sub_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_sub_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sub_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SubBackward, &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::binary_backward(s, BinaryOp::Sub, a, b, dy, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_mul`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_mul_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_mul_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_mul_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_mul_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_mul_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MulBackward, &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::binary_backward(s, BinaryOp::Mul, a, b, dy, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_div`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_div_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_div_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_div_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_div_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_div_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::DivBackward, &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::binary_backward(s, BinaryOp::Div, a, b, dy, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_pow`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_pow_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_pow_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_pow_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_pow_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_pow_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::PowBackward, &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::binary_backward(s, BinaryOp::Pow, a, b, dy, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_maximum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_maximum_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_maximum_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_maximum_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_maximum_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_maximum_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MaximumBackward, &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::binary_backward(s, BinaryOp::Maximum, a, b, dy, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_minimum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
/// the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
/// operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_minimum_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_minimum_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_minimum_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_minimum_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_minimum_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MinimumBackward, &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::binary_backward(s, BinaryOp::Minimum, a, b, dy, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// Elementwise `a == b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_eq(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_eq", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_eq", &[("a", Some(&*a)), ("b", Some(&*b))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_eq", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Eq, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::compare(s, CompareOp::Eq, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `a != b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_ne(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_ne", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_ne", &[("a", Some(&*a)), ("b", Some(&*b))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_ne", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Ne, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::compare(s, CompareOp::Ne, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `a < b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_lt(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_lt", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_lt", &[("a", Some(&*a)), ("b", Some(&*b))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_lt", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Lt, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::compare(s, CompareOp::Lt, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `a <= b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_le(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_le", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_le", &[("a", Some(&*a)), ("b", Some(&*b))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_le", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Le, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::compare(s, CompareOp::Le, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `a > b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_gt(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_gt", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_gt", &[("a", Some(&*a)), ("b", Some(&*b))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_gt", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Gt, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::compare(s, CompareOp::Gt, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Elementwise `a >= b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
/// both inputs of one dtype (any) and device. NaN compares unequal to everything.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_ge(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_ge", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_ge", &[("a", Some(&*a)), ("b", Some(&*b))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_ge", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Ge, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::compare(s, CompareOp::Ge, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.where(cond, a, b)`: `a` where the bool tensor `cond` is true, else `b`, with
/// three-way NumPy broadcasting, in one pass; `a` and `b` of one dtype (any) and device.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH (cond not bool, a and b differ) or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_where(
    stream: *mut rb_stream,
    cond: *const rb_tensor,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_where", || {
        let cond = arc(cond, "cond")?;
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_where", &[("cond", Some(&*cond)), ("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let cond: &Tensor = &cond;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("cond", Some(cond)));
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_where", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(cond));
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Where, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::where_(s, cond, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.where(a op b, x, y)` fused: `x` where `a op b` holds, else `y` (`op` an
/// `rb_compare_op`), with four-way NumPy broadcasting. On GPUs one kernel and no bool
/// temporary (`torch.where(a > b, a, b)` reads only `a` and `b`); on the CPU a comparison
/// then `rb_where`. All four inputs of one dtype (any) and device; the output has it too.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (an `op` that is not an
/// `rb_compare_op`, different devices). Output convention and threads: see the eager-op
/// conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_where_compare(
    stream: *mut rb_stream,
    op: i32,
    a: *const rb_tensor,
    b: *const rb_tensor,
    x: *const rb_tensor,
    y: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_where_compare", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let x = arc(x, "x")?;
        let y = arc(y, "y")?;
        let op = args::compare(op, "where_compare")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_where_compare", &[("a", Some(&*a)), ("b", Some(&*b)), ("x", Some(&*x)), ("y", Some(&*y))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let x: &Tensor = &x;
        let y: &Tensor = &y;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("x", Some(x)));
            __named.push(("y", Some(y)));
            if let Some(__g) = crate::graph::capture::recorder("rb_where_compare", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(x));
                __in.push(Some(y));
                let __r = __g.record(s, Op::WhereCompare(attrs::WhereCompare { op: op.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::where_compare(s, op, a, b, x, y, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.clamp(x, min=min, max=max)` with tensor bounds: `minimum(maximum(x, min), max)`
/// with NumPy broadcasting over the three; either bound may be NULL (not both). A NaN in `x`
/// or in a bound gives NaN; where `min > max` the result is `max` (PyTorch's rule). x, min
/// and max of one dtype (f32, f16, bf16, i32, i64) and device; the result has the broadcast
/// shape.
///
/// Fails with RB_STATUS_NULL_POINTER (x, out), RB_STATUS_INVALID_HANDLE,
/// RB_STATUS_INVALID_ARGUMENT (both bounds NULL, different devices), RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, `*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (dtypes
/// differ, bool). Output convention and threads: see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_clamp_tensor(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    min: *const rb_tensor,
    max: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_clamp_tensor", || {
        let x = arc(x, "x")?;
        let min = arc_opt(min, "min")?;
        let max = arc_opt(max, "max")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_clamp_tensor", &[("x", Some(&*x)), ("min", min.as_deref()), ("max", max.as_deref())], true)?;
        let x: &Tensor = &x;
        let min: Option<&Tensor> = min.as_deref();
        let max: Option<&Tensor> = max.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("min", min));
            __named.push(("max", max));
            if let Some(__g) = crate::graph::capture::recorder("rb_clamp_tensor", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(min);
                __in.push(max);
                let __r = __g.record(s, Op::ClampTensor, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::clamp_tensor(s, x, min, max, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_clamp_tensor` (PyTorch's `clamp_backward` and
/// `clamp_backward_min_max`): from `x`, the bounds (as given to `rb_clamp_tensor`) and `dy`
/// (the broadcast shape), `*dx` gets `dy` where `min <= x <= max`; with both bounds `*dmin`
/// gets `dy` where `x < min` and `min < max`, `*dmax` where `x > max` or `max < min`; with
/// one bound, that bound gets `dy` where x is beyond it (NaN compares false). Each gradient
/// is summed over the dimensions its operand was broadcast along (x's, min's and max's
/// shapes). `dx`, `dmin` and `dmax` may each be NULL to skip that gradient; the gradient of a
/// NULL bound is not computed (`*dmin`/`*dmax` stay unchanged). Floating dtypes, f64 included.
///
/// Fails as `rb_clamp_tensor`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape
/// than the broadcast result; on failure no output is changed. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `dx` is NULL or valid for reading and writing one handle; `dmin` is NULL or valid for
/// reading and writing one handle; `dmax` is NULL or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_clamp_tensor_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    min: *const rb_tensor,
    max: *const rb_tensor,
    dy: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dmin: *mut *mut rb_tensor,
    dmax: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_clamp_tensor_backward", || {
        let x = arc(x, "x")?;
        let min = arc_opt(min, "min")?;
        let max = arc_opt(max, "max")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::opt(dx, "dx") }?;
        let dmin_slot = unsafe { OutSlot::opt(dmin, "dmin") }?;
        let dmax_slot = unsafe { OutSlot::opt(dmax, "dmax") }?;
        dx_slot.check_overlap("rb_clamp_tensor_backward", &[("x", Some(&*x)), ("min", min.as_deref()), ("max", max.as_deref()), ("dy", Some(&*dy))], false)?;
        dmin_slot.check_overlap("rb_clamp_tensor_backward", &[("x", Some(&*x)), ("min", min.as_deref()), ("max", max.as_deref()), ("dy", Some(&*dy))], false)?;
        dmax_slot.check_overlap("rb_clamp_tensor_backward", &[("x", Some(&*x)), ("min", min.as_deref()), ("max", max.as_deref()), ("dy", Some(&*dy))], false)?;
        let x: &Tensor = &x;
        let min: Option<&Tensor> = min.as_deref();
        let max: Option<&Tensor> = max.as_deref();
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let dx = dx_slot.as_grad();
        let dmin = dmin_slot.as_grad();
        let dmax = dmax_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("min", min));
            __named.push(("max", max));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_clamp_tensor_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(min);
                __in.push(max);
                __in.push(Some(dy));
                let __r = __g.record(s, Op::ClampTensorBackward, &__in, &[dx, dmin, dmax])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dmin_slot.finish(__r.get(1).cloned().flatten());
                    dmax_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1, r2] = runtime::elementwise::clamp_tensor_backward(s, x, min, max, dy, [dx, dmin, dmax])?;
        unsafe {
            dx_slot.finish(r0);
            dmin_slot.finish(r1);
            dmax_slot.finish(r2);
        }
        Ok(())
    })
}

/// The backward of `rb_where` (`torch.where(cond, a, b)`): from `dy` (the broadcast shape of
/// cond, a and b), `*da` gets `dy` where `cond` is true and `*db` where it is false (zero
/// elsewhere), each summed over the dimensions its operand was broadcast along (a's and b's
/// shapes). `a` and `b` are passed for their shapes, dtype and device. `da` and `db` may each
/// be NULL to skip that gradient. Floating dtypes, f64 included.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, `dy` or a given output of another shape),
/// RB_STATUS_DTYPE_MISMATCH (cond not bool, a, b and dy differ, not floating) or
/// RB_STATUS_INVALID_ARGUMENT (different devices); on failure no output is changed.
/// Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'cond'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_where_backward(
    stream: *mut rb_stream,
    cond: *const rb_tensor,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_where_backward", || {
        let cond = arc(cond, "cond")?;
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::opt(da, "da") }?;
        let db_slot = unsafe { OutSlot::opt(db, "db") }?;
        da_slot.check_overlap("rb_where_backward", &[("cond", Some(&*cond)), ("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_where_backward", &[("cond", Some(&*cond)), ("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let cond: &Tensor = &cond;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.as_grad();
        let db = db_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("cond", Some(cond)));
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_where_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(cond));
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::WhereBackward, &__in, &[da, db])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1] = runtime::elementwise::where_backward(s, cond, a, b, dy, [da, db])?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// `torch.add(a, b, alpha=alpha)`: `a + alpha * b` with NumPy broadcasting; both inputs of
/// one dtype and device. Floating dtypes compute in f32 with `alpha` rounded to f32
/// (PyTorch's opmath); for i32/i64 `alpha` must be an integer that fits the dtype (PyTorch:
/// "for integral input tensors, argument alpha must not be a floating point number").
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH (dtypes
/// differ, bool) or RB_STATUS_INVALID_ARGUMENT (different devices, a NaN alpha, a
/// non-integral or out-of-range alpha with integer tensors). Output convention and threads:
/// see the eager-op conventions (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add_scaled(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    alpha: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_add_scaled", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_add_scaled", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_add_scaled", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::AddScaled(attrs::AddScaled { alpha: alpha.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::add_scaled(s, BinaryOp::Add, a, b, alpha, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.sub(a, b, alpha=alpha)`: `a - alpha * b` with NumPy broadcasting; the rules of
/// `rb_add_scaled`.
///
/// Failures as `rb_add_scaled`. Output convention and threads: see the eager-op conventions
/// (`rb_add`).
///
/// In place: a given output may be one of the inputs when it has the result's shape (the op
/// then runs in place); an output that only partly overlaps an input is
/// RB_STATUS_INVALID_ARGUMENT.
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sub_scaled(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    alpha: f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sub_scaled", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_sub_scaled", &[("a", Some(&*a)), ("b", Some(&*b))], true)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sub_scaled", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::SubScaled(attrs::SubScaled { alpha: alpha.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::elementwise::add_scaled(s, BinaryOp::Sub, a, b, alpha, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// The backward of `rb_add_scaled`: `*da = dy` and `*db = alpha * dy`, from the upstream
/// gradient `dy` (the broadcast shape), each summed over the dimensions its operand was
/// broadcast along (a's and b's shapes). Floating dtypes, f64 included. `da` and `db` follow the output
/// convention of `rb_add` independently; on failure neither is changed.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (different devices, NaN alpha).
/// Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_add_scaled_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    alpha: f64,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_add_scaled_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_add_scaled_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_add_scaled_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_add_scaled_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::AddScaledBackward(attrs::AddScaledBackward { alpha: alpha.clone() }), &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::add_scaled_backward(s, BinaryOp::Add, a, b, dy, alpha, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}

/// The backward of `rb_sub_scaled`: `*da = dy` and `*db = -alpha * dy`, each summed over
/// the dimensions its operand was broadcast along. Floating dtypes, f64 included; output convention and
/// failures as `rb_add_scaled_backward`. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_sub_scaled_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    alpha: f64,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_sub_scaled_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::out(da, "da") }?;
        let db_slot = unsafe { OutSlot::out(db, "db") }?;
        da_slot.check_overlap("rb_sub_scaled_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_sub_scaled_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let da = da_slot.dest();
        let db = db_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_sub_scaled_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::SubScaledBackward(attrs::SubScaledBackward { alpha: alpha.clone() }), &__in, &[da.map_or(Grad::New, Grad::Into), db.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1) = runtime::elementwise::add_scaled_backward(s, BinaryOp::Sub, a, b, dy, alpha, da, db)?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}
