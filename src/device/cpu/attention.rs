//! scaled_dot_product_attention on the CPU, forward and backward: per query row, the scores
//! (with the mask and the causal limit), their softmax and the weighted values, in f32
//! (f16/bf16 load to f32), f64 in f64 ([`AccElem`]). The forward runs rows in parallel on the device's pool; the
//! backward runs groups of query heads sharing their key and value heads in parallel.

use super::CpuDevice;
use super::elem::{Acc, AccElem, ld_acc as ld, sp, st_acc as st};
use super::par::{GRAIN, SendPtr, for_range, row_grain};
use crate::base::dtype::DType;
use crate::device::attention::AttentionOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{AttentionDesc, AttnMask};
use crate::{Result, with_floating_type};
use half::{bf16, f16};

/// The additive value of mask element `off`: a bool mask gives 0 (takes part) or -inf.
///
/// # Safety
/// `off` inside the mask buffer at `p`.
#[inline(always)]
unsafe fn mask_value(m: &AttnMask, p: *const u8, off: usize) -> f64 {
    // SAFETY: caller's contract.
    unsafe {
        match m.dtype {
            DType::Bool => {
                if *p.add(off) != 0 {
                    0.0
                } else {
                    f64::NEG_INFINITY
                }
            }
            DType::F16 => (*(p as *const f16).add(off)).to_f64(),
            DType::BF16 => (*(p as *const bf16).add(off)).to_f64(),
            DType::F64 => *(p as *const f64).add(off),
            _ => *(p as *const f32).add(off) as f64,
        }
    }
}

/// Scores and probabilities of query row `i` of batch `b` into `p` (len = the visible keys):
/// PyTorch's `_safe_softmax` (a row whose scores are all -inf gives zeros).
///
/// # Safety
/// Indices inside q, k and the mask.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn attn_row_probs<T: AccElem>(
    d: &AttentionDesc,
    qp: SendPtr<T>,
    kp: SendPtr<T>,
    mp: SendPtr<u8>,
    qrow: &mut [T::A],
    b: usize,
    i: usize,
    p: &mut [T::A],
) {
    // SAFETY: caller's contract.
    unsafe {
        for (e, q) in qrow.iter_mut().enumerate() {
            *q = ld(qp, (b * d.sq + i) * d.d + e);
        }
        let scale = T::A::of(d.scale);
        let kbase = (b / d.k_group) * d.sk;
        let mut m = T::A::NEG_INF;
        for (j, pj) in p.iter_mut().enumerate() {
            let kb = (kbase + j) * d.d;
            let mut s = T::A::ZERO;
            for (e, &q) in qrow.iter().enumerate() {
                s += q * ld(kp, kb + e);
            }
            *pj = s * scale;
            if let Some(mk) = &d.mask {
                *pj += T::A::of(mask_value(mk, mp.0, mk.offset(b, i, j)));
            }
            m = m.max(*pj);
        }
        if m == T::A::NEG_INF {
            // Every score -inf (or NaN): PyTorch's _safe_softmax gives 0; a NaN makes the
            // row NaN, as softmax does.
            let nan = p.iter().any(|v| v.is_nan());
            p.fill(if nan { T::A::NAN } else { T::A::ZERO });
            return;
        }
        let mut z = T::A::ZERO;
        for pj in p.iter_mut() {
            // exp_f32 clamps its argument, so a masked (-inf) score is made 0 here.
            *pj = if *pj == T::A::NEG_INF {
                T::A::ZERO
            } else {
                (*pj - m).exp_le0()
            };
            z += *pj;
        }
        let inv = T::A::ONE / z;
        for pj in p.iter_mut() {
            *pj *= inv;
        }
    }
}

fn attention_typed<T: AccElem>(
    d: &AttentionDesc,
    q: DevPtr,
    k: DevPtr,
    v: DevPtr,
    mask: DevPtr,
    o: DevPtr,
) {
    let (qp, kp, vp, op) = (sp::<T>(q), sp::<T>(k), sp::<T>(v), sp::<T>(o));
    let mp = sp::<u8>(mask);
    let d = *d;
    for_range(
        d.batch * d.sq,
        row_grain(d.sk * (d.d + d.dv)),
        move |r0, r1| {
            let mut p = vec![T::A::ZERO; d.sk];
            let mut qrow = vec![T::A::ZERO; d.d];
            let mut acc = vec![T::A::ZERO; d.dv];
            for r in r0..r1 {
                let (b, i) = (r / d.sq, r % d.sq);
                let nk = d.keys(i);
                let vbase = (b / d.v_group) * d.sk;
                // SAFETY: row r of q/out and the k/v/mask batches of b; rows are disjoint.
                unsafe {
                    acc.fill(T::A::ZERO);
                    if nk > 0 {
                        attn_row_probs(&d, qp, kp, mp, &mut qrow, b, i, &mut p[..nk]);
                        for (j, &pj) in p[..nk].iter().enumerate() {
                            let vb = (vbase + j) * d.dv;
                            for (e, a) in acc.iter_mut().enumerate() {
                                *a += pj * ld(vp, vb + e);
                            }
                        }
                    }
                    for (e, a) in acc.iter().enumerate() {
                        st(op, r * d.dv + e, *a);
                    }
                }
            }
        },
    );
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[allow(clippy::too_many_arguments)]
fn attention_backward_typed<T: AccElem>(
    d: &AttentionDesc,
    q: DevPtr,
    k: DevPtr,
    v: DevPtr,
    mask: DevPtr,
    dout: DevPtr,
    dq: DevPtr,
    dk: DevPtr,
    dv: DevPtr,
) {
    let (qp, kp, vp, dop) = (sp::<T>(q), sp::<T>(k), sp::<T>(v), sp::<T>(dout));
    let (dqp, dkp, dvp) = (sp::<T>(dq), sp::<T>(dk), sp::<T>(dv));
    let mp = sp::<u8>(mask);
    let d = *d;
    // A unit: `u` consecutive query batches that cover whole key and value heads (u is a
    // multiple of both groups, and divides the head count, so of the batch).
    let (gk, gv) = (d.k_group, d.v_group);
    let u = gk / gcd(gk, gv) * gv;
    let (nkh, nvh) = (u / gk, u / gv);
    let work = u * d.sq * d.sk * (d.d + d.dv);
    for_range(d.batch / u, (GRAIN / work.max(1)).max(1), move |u0, u1| {
        let mut p = vec![T::A::ZERO; d.sk];
        let mut dp = vec![T::A::ZERO; d.sk];
        let mut qrow = vec![T::A::ZERO; d.d];
        let mut dqrow = vec![T::A::ZERO; d.d];
        let mut dka = vec![T::A::ZERO; nkh * d.sk * d.d];
        let mut dva = vec![T::A::ZERO; nvh * d.sk * d.dv];
        let scale = T::A::of(d.scale);
        for unit in u0..u1 {
            dka.fill(T::A::ZERO);
            dva.fill(T::A::ZERO);
            // SAFETY: the query batches of this unit and the key/value batches they read,
            // which no other unit reads or writes.
            unsafe {
                for b in unit * u..(unit + 1) * u {
                    let kl = (b / gk - unit * nkh) * d.sk;
                    let vl = (b / gv - unit * nvh) * d.sk;
                    let kbase = (b / gk) * d.sk;
                    let vbase = (b / gv) * d.sk;
                    for i in 0..d.sq {
                        let nk = d.keys(i);
                        dqrow.fill(T::A::ZERO);
                        if nk > 0 {
                            attn_row_probs(&d, qp, kp, mp, &mut qrow, b, i, &mut p[..nk]);
                            let ob = (b * d.sq + i) * d.dv;
                            let mut dot = T::A::ZERO;
                            for j in 0..nk {
                                let vb = (vbase + j) * d.dv;
                                let mut s = T::A::ZERO;
                                for e in 0..d.dv {
                                    let g = ld(dop, ob + e);
                                    s += g * ld(vp, vb + e);
                                    dva[(vl + j) * d.dv + e] += p[j] * g;
                                }
                                dp[j] = s;
                                dot += p[j] * s;
                            }
                            for j in 0..nk {
                                let ds = p[j] * (dp[j] - dot) * scale;
                                let kb = (kbase + j) * d.d;
                                for e in 0..d.d {
                                    dqrow[e] += ds * ld(kp, kb + e);
                                    dka[(kl + j) * d.d + e] += ds * qrow[e];
                                }
                            }
                        }
                        for (e, v) in dqrow.iter().enumerate() {
                            st(dqp, (b * d.sq + i) * d.d + e, *v);
                        }
                    }
                }
                for (i, v) in dka.iter().enumerate() {
                    st(dkp, unit * nkh * d.sk * d.d + i, *v);
                }
                for (i, v) in dva.iter().enumerate() {
                    st(dvp, unit * nvh * d.sk * d.dv + i, *v);
                }
            }
        }
    });
}

impl AttentionOps for CpuDevice {
    fn attention(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        out: DevPtr,
    ) -> Result<()> {
        with_floating_type!(dtype, "scaled_dot_product_attention", T => attention_typed::<T>(d, q, k, v, mask, out));
        Ok(())
    }

    fn attention_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &AttentionDesc,
        q: DevPtr,
        k: DevPtr,
        v: DevPtr,
        mask: DevPtr,
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Result<()> {
        with_floating_type!(dtype, "scaled_dot_product_attention_backward", T =>
            attention_backward_typed::<T>(d, q, k, v, mask, dout, dq, dk, dv));
        Ok(())
    }
}
