//! Eager scaled_dot_product_attention on tensors, forward and backward.
//! Semantics and layouts: `crate::ops::nn`; the `out` convention of [`crate::runtime::eager`]; the backward takes a [`Grad`] per gradient.

use crate::ops::nn::AttentionDesc;
use crate::runtime::eager::{Grad, float_input, like, output, stream_for, zero_grads};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::{Error, Result};

fn attention_check(op: &str, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<()> {
    float_input(op, q, "q")?;
    like(op, q, k, k.shape(), "k")?;
    like(op, q, v, v.shape(), "v")
}

/// `torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal,
/// scale=scale)`; `scale = None` is `1/sqrt(q.shape[-1])`.
pub fn scaled_dot_product_attention(
    stream: Option<&Stream>,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
    scale: Option<f64>,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "scaled_dot_product_attention";
    attention_check(op, q, k, v)?;
    let (d, shape) = AttentionDesc::new(op, q.shape(), k.shape(), v.shape(), scale, causal)?;
    let o = output(op, q, out, &shape, q.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, q)?;
    s.device()
        .attention(s.raw(), q.dtype(), &d, q.ptr(), k.ptr(), v.ptr(), o.ptr())?;
    Ok(o)
}

/// scaled_dot_product_attention backward: `(dq, dk, dv)` (all computed; `Grad::Skip` is
/// not accepted).
#[allow(clippy::too_many_arguments)]
pub fn scaled_dot_product_attention_backward(
    stream: Option<&Stream>,
    dout: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
    scale: Option<f64>,
    grads: [Grad<'_>; 3],
) -> Result<[Tensor; 3]> {
    let op = "scaled_dot_product_attention_backward";
    attention_check(op, q, k, v)?;
    let (d, shape) = AttentionDesc::new(op, q.shape(), k.shape(), v.shape(), scale, causal)?;
    like(op, q, dout, &shape, "dout")?;
    if grads.iter().any(|g| matches!(g, Grad::Skip)) {
        return Err(Error::invalid(format!(
            "{op}: dq, dk and dv are all required"
        )));
    }
    let dq = grads[0].make(op, q, q.shape())?.expect("not skipped");
    let dk = grads[1].make(op, q, k.shape())?.expect("not skipped");
    let dv = grads[2].make(op, q, v.shape())?.expect("not skipped");
    let s = stream_for(op, stream, q)?;
    if d.sq == 0 || d.sk == 0 || d.batch == 0 {
        // No scores: every gradient is zero.
        zero_grads(
            &s,
            &[&Some(dq.clone()), &Some(dk.clone()), &Some(dv.clone())],
        )?;
    } else {
        s.device().attention_backward(
            s.raw(),
            q.dtype(),
            &d,
            q.ptr(),
            k.ptr(),
            v.ptr(),
            dout.ptr(),
            dq.ptr(),
            dk.ptr(),
            dv.ptr(),
        )?;
    }
    Ok([dq, dk, dv])
}
