//! The C exports of the attention ops (the eager conventions: `rb_add` in the header's
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

/// `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=, scale=)` with q
/// `[..., Sq, D]`, k `[..., Sk, D]`, v `[..., Sk, Dv]` (equal leading dims, one dtype);
/// the result is `[..., Sq, Dv]`. `scale` NULL means `1/sqrt(D)`. The causal mask is
/// PyTorch's: query i sees keys j <= i.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
/// RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (non-finite scale). Output
/// convention and threads: see the eager-op conventions.
///
/// f64: computed in f64 on every device through the math path (scores, softmax, weighted
/// values; GPUs: double GEMMs of the vendor BLAS and double softmax/dS kernels, O(Sq x Sk)
/// scratch).
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
/// convention above). Failures as the forward. f64 as `rb_scaled_dot_product_attention`.
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

/// `torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
/// is_causal=, scale=scale, enable_gqa=enable_gqa)` (PyTorch's math backend, no dropout) with
/// q `[..., Hq, Sq, D]`, k `[..., Hk, Sk, D]`, v `[..., Hv, Sk, Dv]` of one dtype (rank >= 2;
/// the head dim is dim -3); the result is `[L..., Sq, Dv]`:
/// * `attn_mask` (NULL: none): bool (true = the key takes part) or a float added to the
///   scores (f32 or q's dtype), broadcast to the scores `[..., Sq, Sk]`;
/// * `causal` (an `rb_causal_mode`): 0 none, 1 top-left (`is_causal=True`: query i sees keys
///   j <= i), 2 bottom-right (`torch.nn.attention.bias.causal_lower_right`, KV-cache
///   decoding: j <= i + Sk - Sq); a mask and a causal mode exclude each other, as in PyTorch;
/// * `scale` NULL means `1/sqrt(D)`;
/// * `enable_gqa` 1: grouped-query attention, Hk and Hv divide Hq and query head h uses key
///   head `h / (Hq / Hk)` (value head `h / (Hq / Hv)`), as `enable_gqa=True`;
/// * the leading dims of q, k, v broadcast (NumPy rules; without grouping a head dim of 1
///   broadcasts too) to the result's `L`.
///
/// A query whose every score is -inf (every key masked out, or none visible: bottom-right
/// with Sq > Sk) gives 0, as PyTorch's `_safe_softmax`. With only `is_causal`-style arguments
/// the result equals `rb_scaled_dot_product_attention`'s.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
/// (dims that do not match or broadcast, heads that do not divide, a mask that does not
/// broadcast to the scores), RB_STATUS_DTYPE_MISMATCH (q, k, v of different or non-floating
/// dtypes; a mask neither bool, f32 nor q's dtype) or RB_STATUS_INVALID_ARGUMENT (non-finite
/// scale, bad `causal` or `enable_gqa`, a mask with a causal mode, different devices). Output
/// convention and threads: see the eager-op conventions. f64 as `rb_scaled_dot_product_attention`.
///
/// Not in place: a given output must not share memory with any input; one that does is
/// RB_STATUS_INVALID_ARGUMENT ("output overlaps input 'q'").
///
/// # Safety
/// `scale` is NULL or points to a readable double; `out` is NULL or valid for reading and
/// writing one handle.
#[allow(clippy::too_many_arguments)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_scaled_dot_product_attention_ex(
    stream: *mut rb_stream,
    q: *const rb_tensor,
    k: *const rb_tensor,
    v: *const rb_tensor,
    attn_mask: *const rb_tensor,
    causal: i32,
    scale: *const f64,
    enable_gqa: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scaled_dot_product_attention_ex", || {
        let q = arc(q, "q")?;
        let k = arc(k, "k")?;
        let v = arc(v, "v")?;
        let attn_mask = arc_opt(attn_mask, "attn_mask")?;
        let causal = args::causal(causal, "scaled_dot_product_attention_ex")?;
        let scale = unsafe { args::opt_f64(scale) };
        let enable_gqa = args::flag(enable_gqa, "enable_gqa")?;
        let s = stream_arg(stream)?;
        let out_slot = unsafe { OutSlot::out(out, "out") }?;
        out_slot.check_overlap("rb_scaled_dot_product_attention_ex", &[("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v)), ("attn_mask", attn_mask.as_deref())], false)?;
        let q: &Tensor = &q;
        let k: &Tensor = &k;
        let v: &Tensor = &v;
        let attn_mask: Option<&Tensor> = attn_mask.as_deref();
        let s = s.as_deref();
        let out = out_slot.dest();
        if crate::graph::capture::active() {
            use crate::ops::registry::{Op, attrs};
            use crate::runtime::eager::Grad;
            let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();
            __named.push(("q", Some(q)));
            __named.push(("k", Some(k)));
            __named.push(("v", Some(v)));
            __named.push(("attn_mask", attn_mask));
            if let Some(__g) = crate::graph::capture::recorder("rb_scaled_dot_product_attention_ex", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(q));
                __in.push(Some(k));
                __in.push(Some(v));
                __in.push(attn_mask);
                let __r = __g.record(s, Op::ScaledDotProductAttentionEx(attrs::ScaledDotProductAttentionEx { causal: causal.clone(), scale: scale.clone(), enable_gqa: enable_gqa.clone() }), &__in, &[out.map_or(Grad::New, Grad::Into)])?;
                unsafe {
                    out_slot.finish(__r.get(0).cloned().flatten());
                }
                return Ok(());
            }
        }
        let r = runtime::attention::scaled_dot_product_attention_ex(s, q, k, v, attn_mask, causal, scale, enable_gqa, out)?;
        unsafe { out_slot.finish(r) };
        Ok(())
    })
}

/// Backward of `rb_scaled_dot_product_attention_ex` from the output gradient `dout`: writes
/// `dq`, `dk`, `dv` of q's, k's and v's shapes (all required, NULL gives
/// RB_STATUS_NULL_POINTER; see the gradient convention above): `dk` and `dv` are summed over
/// the query heads sharing a key/value head and over the dims their input was broadcast
/// along; the mask gets no gradient. Failures as the forward. f64 as `rb_scaled_dot_product_attention`.
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
pub unsafe extern "C" fn rb_scaled_dot_product_attention_ex_backward(
    stream: *mut rb_stream,
    dout: *const rb_tensor,
    q: *const rb_tensor,
    k: *const rb_tensor,
    v: *const rb_tensor,
    attn_mask: *const rb_tensor,
    causal: i32,
    scale: *const f64,
    enable_gqa: i32,
    dq: *mut *mut rb_tensor,
    dk: *mut *mut rb_tensor,
    dv: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_scaled_dot_product_attention_ex_backward", || {
        let dout = arc(dout, "dout")?;
        let q = arc(q, "q")?;
        let k = arc(k, "k")?;
        let v = arc(v, "v")?;
        let attn_mask = arc_opt(attn_mask, "attn_mask")?;
        let causal = args::causal(causal, "scaled_dot_product_attention_ex_backward")?;
        let scale = unsafe { args::opt_f64(scale) };
        let enable_gqa = args::flag(enable_gqa, "enable_gqa")?;
        let s = stream_arg(stream)?;
        let dq_slot = unsafe { OutSlot::out(dq, "dq") }?;
        let dk_slot = unsafe { OutSlot::out(dk, "dk") }?;
        let dv_slot = unsafe { OutSlot::out(dv, "dv") }?;
        dq_slot.check_overlap("rb_scaled_dot_product_attention_ex_backward", &[("dout", Some(&*dout)), ("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v)), ("attn_mask", attn_mask.as_deref())], false)?;
        dk_slot.check_overlap("rb_scaled_dot_product_attention_ex_backward", &[("dout", Some(&*dout)), ("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v)), ("attn_mask", attn_mask.as_deref())], false)?;
        dv_slot.check_overlap("rb_scaled_dot_product_attention_ex_backward", &[("dout", Some(&*dout)), ("q", Some(&*q)), ("k", Some(&*k)), ("v", Some(&*v)), ("attn_mask", attn_mask.as_deref())], false)?;
        let dout: &Tensor = &dout;
        let q: &Tensor = &q;
        let k: &Tensor = &k;
        let v: &Tensor = &v;
        let attn_mask: Option<&Tensor> = attn_mask.as_deref();
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
            __named.push(("attn_mask", attn_mask));
            if let Some(__g) = crate::graph::capture::recorder("rb_scaled_dot_product_attention_ex_backward", s, &__named)? {
                let mut __in: Vec<Option<&Tensor>> = Vec::new();
                __in.push(Some(dout));
                __in.push(Some(q));
                __in.push(Some(k));
                __in.push(Some(v));
                __in.push(attn_mask);
                let __r = __g.record(s, Op::ScaledDotProductAttentionExBackward(attrs::ScaledDotProductAttentionExBackward { causal: causal.clone(), scale: scale.clone(), enable_gqa: enable_gqa.clone() }), &__in, &[dq, dk, dv])?;
                unsafe {
                    dq_slot.finish(__r.get(0).cloned().flatten());
                    dk_slot.finish(__r.get(1).cloned().flatten());
                    dv_slot.finish(__r.get(2).cloned().flatten());
                }
                return Ok(());
            }
        }
        let [r0, r1, r2] = runtime::attention::scaled_dot_product_attention_ex_backward(s, dout, q, k, v, attn_mask, causal, scale, enable_gqa, [dq, dk, dv])?;
        unsafe {
            dq_slot.finish(r0);
            dk_slot.finish(r1);
            dv_slot.finish(r2);
        }
        Ok(())
    })
}
