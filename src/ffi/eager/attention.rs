//! The C exports of the attention ops (the eager conventions: `rb_add` in the header's
//! introduction). @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

#![allow(unused_imports, clippy::clone_on_copy, clippy::vec_init_then_push)]

use crate::ffi::args;
use crate::ffi::handles::{arc, arc_opt};
use crate::ffi::types::{rb_conv_params, rb_pool_params};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::{rb_stream, stream_arg};
use crate::ffi::tensor::rb_tensor;
use crate::ffi::util::OutSlot;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::LossKind;
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::ops::reduce::ReduceOp;
use crate::runtime::{self, Tensor};

/// `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=, scale=)` with q
/// `[..., Sq, D]`, k `[..., Sk, D]`, v `[..., Sk, Dv]` (equal leading dims, one dtype);
/// the result is `[..., Sq, Dv]`. `scale` NULL means `1/sqrt(D)`. The causal mask is
/// PyTorch's: query i sees keys j <= i.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (non-finite scale). Output
/// convention and threads: see the eager-op conventions.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'q'").
///
/// # Safety
/// `scale` is NULL or points to a readable double; `out` is NULL or valid for reading and
/// writing one handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scaled_dot_product_attention(
    stream: *mut rb_stream,
    q: *const rb_tensor,
    k: *const rb_tensor,
    v: *const rb_tensor,
    is_causal: bool,
    scale: *const f64,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scaled_dot_product_attention", || {
        let q = arc(q, "q")?;
        let k = arc(k, "k")?;
        let v = arc(v, "v")?;
        let scale = unsafe { args::opt_f64(scale) };
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_scaled_dot_product_attention", &[("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v))], false)?;
        let q: &Tensor = &q;
        let k: &Tensor = &k;
        let v: &Tensor = &v;
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("q", Some(q)));
            __named.push(("k", Some(k)));
            __named.push(("v", Some(v)));
            if let Some(__g) = crate::graph::capture::recorder("rb_scaled_dot_product_attention", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(q));
                __in.push(Some(k));
                __in.push(Some(v));
                let __r = __g.record(s, Op::ScaledDotProductAttention(attrs::ScaledDotProductAttention { is_causal: is_causal.clone(), scale: scale.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::attention::scaled_dot_product_attention(s, q, k, v, is_causal, scale, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Backward of `rb_scaled_dot_product_attention` from the output gradient `dout`: writes
/// `dq`, `dk`, `dv` (all required, NULL gives RB_STATUS_NULL_POINTER; see the gradient
/// convention above). Failures as the forward.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'dout'").
///
/// # Safety
/// `scale` is NULL or points to a readable double; `dq` is NULL or valid for reading and
/// writing one handle; `dk` is NULL or valid for reading and writing one handle; `dv` is NULL
/// or valid for reading and writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scaled_dot_product_attention_backward(
    stream: *mut rb_stream,
    dout: *const rb_tensor,
    q: *const rb_tensor,
    k: *const rb_tensor,
    v: *const rb_tensor,
    is_causal: bool,
    scale: *const f64,
    dq: *mut *mut rb_tensor,
    dk: *mut *mut rb_tensor,
    dv: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scaled_dot_product_attention_backward", || {
        let dout = arc(dout, "dout")?;
        let q = arc(q, "q")?;
        let k = arc(k, "k")?;
        let v = arc(v, "v")?;
        let scale = unsafe { args::opt_f64(scale) };
        let s = stream_arg(stream)?;
        let dq_slot = unsafe { OutSlot::out(dq, "dq") }?;
        let dk_slot = unsafe { OutSlot::out(dk, "dk") }?;
        let dv_slot = unsafe { OutSlot::out(dv, "dv") }?;
        dq_slot.check_overlap("rb_scaled_dot_product_attention_backward", &[("dout", Some(&*dout)), ("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v))], false)?;
        dk_slot.check_overlap("rb_scaled_dot_product_attention_backward", &[("dout", Some(&*dout)), ("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v))], false)?;
        dv_slot.check_overlap("rb_scaled_dot_product_attention_backward", &[("dout", Some(&*dout)), ("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v))], false)?;
        let dout: &Tensor = &dout;
        let q: &Tensor = &q;
        let k: &Tensor = &k;
        let v: &Tensor = &v;
        let s = s.as_deref();
        let dq = dq_slot.as_grad();
        let dk = dk_slot.as_grad();
        let dv = dv_slot.as_grad();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("dout", Some(dout)));
            __named.push(("q", Some(q)));
            __named.push(("k", Some(k)));
            __named.push(("v", Some(v)));
            if let Some(__g) = crate::graph::capture::recorder("rb_scaled_dot_product_attention_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dout));
                __in.push(Some(q));
                __in.push(Some(k));
                __in.push(Some(v));
                let __r = __g.record(s, Op::ScaledDotProductAttentionBackward(attrs::ScaledDotProductAttentionBackward { is_causal: is_causal.clone(), scale: scale.clone() }), &__in, &[dq, dk, dv])?;
                unsafe {
                    dq_slot.finish(__r.get(0).cloned().flatten());
                    dk_slot.finish(__r.get(1).cloned().flatten());
                    dv_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1, r2] = runtime::attention::scaled_dot_product_attention_backward(s, dout, q, k, v, is_causal, scale, [dq, dk, dv])?;
        unsafe {
            dq_slot.finish(r0);
            dk_slot.finish(r1);
            dv_slot.finish(r2);
        }
        Ok(())
    })
}
