//! Eager scaled_dot_product_attention on tensors, forward and backward.
//! Semantics and layouts: `crate::ops::nn` ([`AttentionPlan`] for the callers' shapes,
//! [`AttentionDesc`] for the device's); the `out` convention of [`crate::runtime::eager`];
//! the backward takes a [`Grad`] per gradient.
//!
//! The device reads q as `[batch, Sq, D]` and k, v as `[batch / group, Sk, *]`
//! (grouped-query attention without copies). Inputs whose other leading dims broadcast are
//! first expanded into contiguous scratch (and their gradients summed back); a mask is read
//! in place through strides, or made contiguous when its broadcast pattern needs more than
//! two levels.

use crate::base::dtype::DType;
use crate::base::shape::{broadcast_strides, contiguous_strides};
use crate::device::DevPtr;
use crate::ops::nn::{AttentionDesc, AttentionPlan, Causal};
use crate::runtime::eager::{Grad, floating_input, like, output, stream_for, zero_grads};
use crate::runtime::stream::Stream;
use crate::runtime::tensor::{Tensor, same_device};
use crate::{Error, Result};

fn attention_check(op: &str, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<()> {
    floating_input(op, q, "q")?;
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
    sdpa(
        "scaled_dot_product_attention",
        stream,
        [q, k, v],
        causal,
        scale,
        out,
        None,
    )
}

/// [`scaled_dot_product_attention`] for the executor
/// ([`crate::graph::passes::settle_attention`]): the kernel queued right before it on the
/// stream writes, of what it reads, only q and the rows of k and v at the position `fresh`
/// holds (one i64 or i32 element on the device; the caller's word), so a device may read the
/// other rows before that kernel has finished ([`crate::device::attention::AttentionOps::attention_fresh`]).
/// The same result, bit for bit.
#[allow(clippy::too_many_arguments)]
pub fn scaled_dot_product_attention_fresh(
    stream: Option<&Stream>,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    causal: bool,
    scale: Option<f64>,
    out: Option<&Tensor>,
    fresh: &Tensor,
) -> Result<Tensor> {
    let op = "scaled_dot_product_attention_fresh";
    if fresh.numel() != 1 || !matches!(fresh.dtype(), DType::I64 | DType::I32) {
        return Err(Error::invalid(format!(
            "{op}: the position must be one int64 or int32 element, got {:?} {:?}",
            fresh.shape(),
            fresh.dtype()
        )));
    }
    if !fresh.same_device(q.device()) {
        return Err(Error::invalid(format!(
            "{op}: the position is on another device than q"
        )));
    }
    sdpa(op, stream, [q, k, v], causal, scale, out, Some(fresh))
}

#[allow(clippy::too_many_arguments)]
fn sdpa(
    op: &str,
    stream: Option<&Stream>,
    [q, k, v]: [&Tensor; 3],
    causal: bool,
    scale: Option<f64>,
    out: Option<&Tensor>,
    fresh: Option<&Tensor>,
) -> Result<Tensor> {
    attention_check(op, q, k, v)?;
    let (d, shape) = AttentionDesc::new(op, q.shape(), k.shape(), v.shape(), scale, causal)?;
    let o = output(op, q, out, &shape, q.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, q)?;
    if d.sk == 0 {
        // No keys: the product with an empty value matrix is 0 (as PyTorch's matmul).
        return s
            .device()
            .fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)
            .map(|_| o);
    }
    let qkvm = (q.ptr(), k.ptr(), v.ptr(), DevPtr::NULL);
    match fresh {
        Some(f) => s.device().attention_fresh(
            s.raw(),
            q.dtype(),
            &d,
            qkvm,
            o.ptr(),
            f.ptr(),
            f.dtype() == DType::I32,
        )?,
        None => s.device().attention(
            s.raw(),
            q.dtype(),
            &d,
            qkvm.0,
            qkvm.1,
            qkvm.2,
            qkvm.3,
            o.ptr(),
        )?,
    }
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
            DevPtr::NULL,
            dout.ptr(),
            dq.ptr(),
            dk.ptr(),
            dv.ptr(),
        )?;
    }
    Ok([dq, dk, dv])
}

/// The plan of an `_ex` call, after the tensor checks every entry point shares.
#[allow(clippy::too_many_arguments)]
fn plan_ex(
    op: &str,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    causal: Causal,
    scale: Option<f64>,
    enable_gqa: bool,
) -> Result<AttentionPlan> {
    attention_check(op, q, k, v)?;
    if let Some(m) = mask
        && !same_device(m.device(), q.device())
    {
        return Err(Error::invalid(format!(
            "{op}: attn_mask is on {}, the query on {}",
            m.device().name(),
            q.device().name()
        )));
    }
    AttentionPlan::new(
        op,
        q.shape(),
        k.shape(),
        v.shape(),
        mask.map(|m| (m.shape(), m.dtype())),
        q.dtype(),
        scale,
        causal,
        enable_gqa,
    )
}

/// `t` (whose shape, left-padded, has leading dims `t_lead`) copied to a contiguous tensor
/// with leading dims `to` (dims of extent 1 in `t_lead` broadcast).
fn expand(s: &Stream, t: &Tensor, to: &[usize]) -> Result<Tensor> {
    let r = t.shape().len();
    let mut shape = to.to_vec();
    shape.extend_from_slice(&t.shape()[r.saturating_sub(2)..]);
    let e = Tensor::empty(t.device().clone(), &shape, t.dtype())?;
    if e.numel() > 0 {
        s.device().copy_strided(
            s.raw(),
            t.dtype().size(),
            t.ptr(),
            &broadcast_strides(t.shape(), &shape),
            e.ptr(),
            &contiguous_strides(&shape),
            &shape,
        )?;
    }
    Ok(e)
}

/// What the device reads: q, k, v in its layout (the callers' tensors or expanded copies),
/// the mask tensor (the caller's or a contiguous copy) and the descriptor.
struct Prepared {
    q: Tensor,
    k: Tensor,
    v: Tensor,
    mask: Option<Tensor>,
    desc: AttentionDesc,
}

fn prepare(
    s: &Stream,
    p: &AttentionPlan,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
) -> Result<Prepared> {
    let q2 = if p.q_direct() {
        q.clone()
    } else {
        expand(s, q, &p.lead)?
    };
    let k2 = if p.kv_direct(&p.k_lead) {
        k.clone()
    } else {
        expand(s, k, &p.kv_expanded(&p.k_lead))?
    };
    let v2 = if p.kv_direct(&p.v_lead) {
        v.clone()
    } else {
        expand(s, v, &p.kv_expanded(&p.v_lead))?
    };
    let (mask2, layout) = match mask {
        None => (None, None),
        Some(m) => match p.mask_layout() {
            Some(l) => (Some(m.clone()), Some(l)),
            None => {
                // Broadcast over more than two levels of leading dims: a contiguous copy
                // over L (keeping the mask's own query/key extents).
                let (ms, _) = p.mask.as_ref().expect("a mask");
                let r = p.lead.len();
                let mut shape = p.lead.clone();
                shape.extend_from_slice(&ms[r..]);
                let m2 = Tensor::empty(m.device().clone(), &shape, m.dtype())?;
                s.device().copy_strided(
                    s.raw(),
                    m.dtype().size(),
                    m.ptr(),
                    &broadcast_strides(m.shape(), &shape),
                    m2.ptr(),
                    &contiguous_strides(&shape),
                    &shape,
                )?;
                let mut p2 = p.clone();
                p2.mask = Some((shape, m.dtype()));
                let l = p2.mask_layout().expect("contiguous leading dims merge");
                (Some(m2), Some(l))
            }
        },
    };
    Ok(Prepared {
        q: q2,
        k: k2,
        v: v2,
        mask: mask2,
        desc: p.desc(layout),
    })
}

/// `torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask,
/// is_causal=(causal == TopLeft), scale=scale, enable_gqa=enable_gqa)`, with
/// `causal == BottomRight` for PyTorch's `causal_lower_right` mask and batch broadcasting
/// of the leading dims (PyTorch's math backend). See [`AttentionPlan`] for the shapes; a
/// query that sees no key (every score -inf) gives 0.
#[allow(clippy::too_many_arguments)]
pub fn scaled_dot_product_attention_ex(
    stream: Option<&Stream>,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    causal: Causal,
    scale: Option<f64>,
    enable_gqa: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "scaled_dot_product_attention_ex";
    let p = plan_ex(op, q, k, v, mask, causal, scale, enable_gqa)?;
    let o = output(op, q, out, &p.out_shape(), q.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, q)?;
    if p.sk == 0 {
        return s
            .device()
            .fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)
            .map(|_| o);
    }
    let pr = prepare(&s, &p, q, k, v, mask)?;
    s.device().attention(
        s.raw(),
        q.dtype(),
        &pr.desc,
        pr.q.ptr(),
        pr.k.ptr(),
        pr.v.ptr(),
        pr.mask.as_ref().map_or(DevPtr::NULL, |m| m.ptr()),
        o.ptr(),
    )?;
    Ok(o)
}

/// The backward of [`scaled_dot_product_attention_ex`]: `(dq, dk, dv)` of q's, k's and
/// v's shapes (dk, dv summed over the query heads sharing a key/value head and over
/// broadcast dims); the mask gets no gradient. All three are required.
#[allow(clippy::too_many_arguments)]
pub fn scaled_dot_product_attention_ex_backward(
    stream: Option<&Stream>,
    dout: &Tensor,
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    mask: Option<&Tensor>,
    causal: Causal,
    scale: Option<f64>,
    enable_gqa: bool,
    grads: [Grad<'_>; 3],
) -> Result<[Tensor; 3]> {
    let op = "scaled_dot_product_attention_ex_backward";
    let p = plan_ex(op, q, k, v, mask, causal, scale, enable_gqa)?;
    like(op, q, dout, &p.out_shape(), "dout")?;
    if grads.iter().any(|g| matches!(g, Grad::Skip)) {
        return Err(Error::invalid(format!(
            "{op}: dq, dk and dv are all required"
        )));
    }
    let dq = grads[0].make(op, q, q.shape())?.expect("not skipped");
    let dk = grads[1].make(op, q, k.shape())?.expect("not skipped");
    let dv = grads[2].make(op, q, v.shape())?.expect("not skipped");
    let s = stream_for(op, stream, q)?;
    if p.sq == 0 || p.sk == 0 || p.batch() == 0 {
        zero_grads(
            &s,
            &[&Some(dq.clone()), &Some(dk.clone()), &Some(dv.clone())],
        )?;
        return Ok([dq, dk, dv]);
    }
    let pr = prepare(&s, &p, q, k, v, mask)?;
    // Gradients in the device's layout: into the outputs when the inputs were read as they
    // are, else into scratch summed back afterwards.
    let scratch = |t: &Tensor, like: &Tensor| -> Result<Option<Tensor>> {
        if t.ptr() == like.ptr() {
            Ok(None)
        } else {
            Tensor::empty(q.device().clone(), t.shape(), q.dtype()).map(Some)
        }
    };
    let (fq, fk, fv) = (scratch(&pr.q, q)?, scratch(&pr.k, k)?, scratch(&pr.v, v)?);
    let at = |f: &Option<Tensor>, t: &Tensor| f.as_ref().map_or(t.ptr(), |f| f.ptr());
    s.device().attention_backward(
        s.raw(),
        q.dtype(),
        &pr.desc,
        pr.q.ptr(),
        pr.k.ptr(),
        pr.v.ptr(),
        pr.mask.as_ref().map_or(DevPtr::NULL, |m| m.ptr()),
        dout.ptr(),
        at(&fq, &dq),
        at(&fk, &dk),
        at(&fv, &dv),
    )?;
    for (f, t) in [(&fq, &dq), (&fk, &dk), (&fv, &dv)] {
        if let Some(f) = f {
            crate::runtime::elementwise::sum_to(&s, f, t)?;
        }
    }
    Ok([dq, dk, dv])
}
