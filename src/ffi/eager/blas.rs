//! The C exports of the blas ops (the eager conventions: `rb_add` in the header's
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

/// `torch.nn.functional.linear(x, w, bias)`: `x · wᵀ + bias` with `x` `[..., k]`, `w`
/// `[n, k]`, `bias` `[n]` or NULL. f32, f16, bf16, and f64 (a double GEMM, then the bias in
/// f64).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see
/// the section's conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'x'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_linear(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    bias: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_linear", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let bias = arc_opt(bias, "bias")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_linear", &[("x", Some(&*x)), ("w", Some(&*w)), ("bias", bias.as_deref())], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_linear", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                __in.push(bias);
                let __r = __g.record(s, Op::Linear, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::blas::linear(s, x, w, bias, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradients of `rb_linear`: new tensors `*dw` and, when `dx` / `db` are not NULL, `*dx` /
/// `*db` (a NULL one is not computed, as PyTorch's output mask), owned by the caller and
/// written only on success.
///
/// Failures as `rb_linear`. Thread-safe for distinct outputs.
///
/// # Safety
/// `dx` is NULL or valid for writing one handle; `dw` is NULL or valid for writing one handle;
/// `db` is NULL or valid for writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_linear_backward(
    stream: *mut rb_stream,
    x: *const rb_tensor,
    w: *const rb_tensor,
    dy: *const rb_tensor,
    dx: *mut *mut rb_tensor,
    dw: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_linear_backward", || {
        let x = arc(x, "x")?;
        let w = arc(w, "w")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let dx_slot = unsafe { OutSlot::new_opt(dx, "dx") }?;
        let dw_slot = unsafe { OutSlot::new_only(dw, "dw") }?;
        let db_slot = unsafe { OutSlot::new_opt(db, "db") }?;
        let x: &Tensor = &x;
        let w: &Tensor = &w;
        let dy: &Tensor = &dy;
        let s = s.as_deref();
        let dx = dx_slot.wanted();
        let db = db_slot.wanted();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("x", Some(x)));
            __named.push(("w", Some(w)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_linear_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(x));
                __in.push(Some(w));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::LinearBackward, &__in, &[if dx { Grad::New } else { Grad::Skip }, Grad::New, if db { Grad::New } else { Grad::Skip }])?;
                unsafe {
                    dx_slot.finish(__r.get(0).cloned().flatten());
                    dw_slot.finish(__r.get(1).cloned().flatten());
                    db_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let (r0, r1, r2) = runtime::blas::linear_backward(s, x, w, dy, dx, db)?;
        unsafe {
            dx_slot.finish(r0);
            dw_slot.finish(r1);
            db_slot.finish(r2);
        }
        Ok(())
    })
}

/// Fused `activation(a · b + bias)` (an `rb_activation`): matmul+bias, matmul+bias+relu,
/// matmul+bias+gelu. `a` `[..., k]`, `b` `[k, n]`, `bias` `[n]`; the epilogue runs on each
/// block of rows while it is in cache (f64: a double GEMM, then the bias and the activation
/// as f64 elementwise ops).
///
/// Failures as `rb_linear`. Output convention and threads: see the section's conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_matmul_bias_act(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    bias: *const rb_tensor,
    activation: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_matmul_bias_act", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let bias = arc(bias, "bias")?;
        let activation = args::activation(activation)?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_matmul_bias_act", &[("a", Some(&*a)), ("b", Some(&*b)), ("bias", Some(&*bias))], false)?;
        let a: &Tensor = &a;
        let b: &Tensor = &b;
        let bias: &Tensor = &bias;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("bias", Some(bias)));
            if let Some(__g) = crate::graph::capture::recorder("rb_matmul_bias_act", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(bias));
                let __r = __g.record(s, Op::MatmulBiasAct(attrs::MatmulBiasAct { activation: activation.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::blas::matmul_bias_act(s, a, b, bias, activation, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// `torch.matmul(a, b)`: 1-D operands are vectors, 2-D are matrices, more dimensions are
/// batches of matrices whose batch dimensions broadcast.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (inner dimensions differ, batch dimensions do not broadcast, `*out` of another shape),
/// RB_STATUS_DTYPE_MISMATCH (different dtypes, or not f32, f16, bf16 or f64) or
/// RB_STATUS_INVALID_ARGUMENT. f64 computes in f64 (cuBLAS/rocBLAS double GEMMs, the CPU's
/// `matrixmultiply` dgemm). Output convention and threads: see the eager-op section.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `out` is NULL or valid for reading and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_matmul(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_matmul", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_matmul", &[("a", Some(&*a)), ("b", Some(&*b))], false)?;
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
            if let Some(__g) = crate::graph::capture::recorder("rb_matmul", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                let __r = __g.record(s, Op::Matmul, &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::blas::matmul(s, a, b, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Gradients of `rb_matmul` (`torch.matmul(a, b)`): from the upstream gradient `dy` (the
/// product's shape), `*da = dy · bᵀ` and `*db = aᵀ · dy` with a's and b's shapes, summed over
/// the batch dimensions each operand was broadcast along; 1-D operands as torch treats them
/// (a vector `a` is a row, a vector `b` a column). `da` and `db` may each be NULL to skip
/// that gradient. f32, f16, bf16 and f64 (computed in f64, broadcast batch sums included).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (operands that do not multiply, `dy` or a given output of another shape),
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (different devices); on failure no
/// output is changed. Thread-safe.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'a'").
///
/// # Safety
/// `da` is NULL or valid for reading and writing one handle; `db` is NULL or valid for reading
/// and writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_matmul_backward(
    stream: *mut rb_stream,
    a: *const rb_tensor,
    b: *const rb_tensor,
    dy: *const rb_tensor,
    da: *mut *mut rb_tensor,
    db: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_matmul_backward", || {
        let a = arc(a, "a")?;
        let b = arc(b, "b")?;
        let dy = arc(dy, "dy")?;
        let s = stream_arg(stream)?;
        let da_slot = unsafe { OutSlot::opt(da, "da") }?;
        let db_slot = unsafe { OutSlot::opt(db, "db") }?;
        da_slot.check_overlap("rb_matmul_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
        db_slot.check_overlap("rb_matmul_backward", &[("a", Some(&*a)), ("b", Some(&*b)), ("dy", Some(&*dy))], false)?;
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
            __named.push(("a", Some(a)));
            __named.push(("b", Some(b)));
            __named.push(("dy", Some(dy)));
            if let Some(__g) = crate::graph::capture::recorder("rb_matmul_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(a));
                __in.push(Some(b));
                __in.push(Some(dy));
                let __r = __g.record(s, Op::MatmulBackward, &__in, &[da, db])?;
                unsafe {
                    da_slot.finish(__r.get(0).cloned().flatten());
                    db_slot.finish(__r.get(1).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1] = runtime::blas::matmul_backward(s, a, b, dy, [da, db])?;
        unsafe {
            da_slot.finish(r0);
            db_slot.finish(r1);
        }
        Ok(())
    })
}
