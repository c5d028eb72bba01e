//! scaled_dot_product_attention on the CPU, forward and backward: per query row, the scores,
//! their softmax and the weighted values, in f32 (f16/bf16 load to f32), rows in parallel
//! on the device's pool.

use super::CpuDevice;
use super::elem::{FloatElem, ld, sp, st};
use super::par::{GRAIN, SendPtr, for_range, row_grain};
use super::softmax::exp_f32;
use crate::base::dtype::DType;
use crate::device::attention::AttentionOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::AttentionDesc;
use crate::{Result, with_float_type};

/// Scores, softmax probabilities of query row `i` of batch `b` into `p` (len = keys).
///
/// # Safety
/// Indices inside q and k.
#[inline(always)]
unsafe fn attn_row_probs<T: FloatElem>(
    d: &AttentionDesc,
    qp: SendPtr<T>,
    kp: SendPtr<T>,
    qrow: &mut [f32],
    b: usize,
    i: usize,
    p: &mut [f32],
) {
    // SAFETY: caller's contract.
    unsafe {
        for (e, q) in qrow.iter_mut().enumerate() {
            *q = ld(qp, (b * d.sq + i) * d.d + e);
        }
        let scale = d.scale as f32;
        let mut m = f32::NEG_INFINITY;
        for (j, pj) in p.iter_mut().enumerate() {
            let kb = (b * d.sk + j) * d.d;
            let mut s = 0.0f32;
            for (e, q) in qrow.iter().enumerate() {
                s += q * ld(kp, kb + e);
            }
            *pj = s * scale;
            m = m.max(*pj);
        }
        let mut z = 0.0f32;
        for pj in p.iter_mut() {
            *pj = exp_f32(*pj - m);
            z += *pj;
        }
        let inv = 1.0 / z;
        for pj in p.iter_mut() {
            *pj *= inv;
        }
    }
}

fn attention_typed<T: FloatElem>(d: &AttentionDesc, q: DevPtr, k: DevPtr, v: DevPtr, o: DevPtr) {
    let (qp, kp, vp, op) = (sp::<T>(q), sp::<T>(k), sp::<T>(v), sp::<T>(o));
    let d = *d;
    for_range(
        d.batch * d.sq,
        row_grain(d.sk * (d.d + d.dv)),
        move |r0, r1| {
            let mut p = vec![0.0f32; d.sk];
            let mut qrow = vec![0.0f32; d.d];
            let mut acc = vec![0.0f32; d.dv];
            for r in r0..r1 {
                let (b, i) = (r / d.sq, r % d.sq);
                let nk = d.keys(i);
                // SAFETY: row r of q/out and batch b of k/v; rows are disjoint.
                unsafe {
                    acc.fill(0.0);
                    if nk > 0 {
                        attn_row_probs(&d, qp, kp, &mut qrow, b, i, &mut p[..nk]);
                        for (j, &pj) in p[..nk].iter().enumerate() {
                            let vb = (b * d.sk + j) * d.dv;
                            for (e, a) in acc.iter_mut().enumerate() {
                                *a += pj * ld(vp, vb + e);
                            }
                        }
                    }
                    for (e, a) in acc.iter().enumerate() {
                        st(op, r * d.dv + e, if nk > 0 { *a } else { f32::NAN });
                    }
                }
            }
        },
    );
}

#[allow(clippy::too_many_arguments)]
fn attention_backward_typed<T: FloatElem>(
    d: &AttentionDesc,
    q: DevPtr,
    k: DevPtr,
    v: DevPtr,
    dout: DevPtr,
    dq: DevPtr,
    dk: DevPtr,
    dv: DevPtr,
) {
    let (qp, kp, vp, dop) = (sp::<T>(q), sp::<T>(k), sp::<T>(v), sp::<T>(dout));
    let (dqp, dkp, dvp) = (sp::<T>(dq), sp::<T>(dk), sp::<T>(dv));
    let d = *d;
    let work = d.sq * d.sk * (d.d + d.dv);
    for_range(d.batch, (GRAIN / work.max(1)).max(1), move |b0, b1| {
        let mut p = vec![0.0f32; d.sk];
        let mut dp = vec![0.0f32; d.sk];
        let mut qrow = vec![0.0f32; d.d];
        let mut dqrow = vec![0.0f32; d.d];
        let mut dka = vec![0.0f32; d.sk * d.d];
        let mut dva = vec![0.0f32; d.sk * d.dv];
        for b in b0..b1 {
            dka.fill(0.0);
            dva.fill(0.0);
            // SAFETY: batch b of every buffer; batches are disjoint.
            unsafe {
                for i in 0..d.sq {
                    let nk = d.keys(i);
                    dqrow.fill(0.0);
                    if nk > 0 {
                        attn_row_probs(&d, qp, kp, &mut qrow, b, i, &mut p[..nk]);
                        let ob = (b * d.sq + i) * d.dv;
                        let mut dot = 0.0f32;
                        for j in 0..nk {
                            let vb = (b * d.sk + j) * d.dv;
                            let mut s = 0.0f32;
                            for e in 0..d.dv {
                                let g = ld(dop, ob + e);
                                s += g * ld(vp, vb + e);
                                dva[j * d.dv + e] += p[j] * g;
                            }
                            dp[j] = s;
                            dot += p[j] * s;
                        }
                        let scale = d.scale as f32;
                        for j in 0..nk {
                            let ds = p[j] * (dp[j] - dot) * scale;
                            let kb = (b * d.sk + j) * d.d;
                            for e in 0..d.d {
                                dqrow[e] += ds * ld(kp, kb + e);
                                dka[j * d.d + e] += ds * qrow[e];
                            }
                        }
                    }
                    for (e, v) in dqrow.iter().enumerate() {
                        st(dqp, (b * d.sq + i) * d.d + e, *v);
                    }
                }
                for (i, v) in dka.iter().enumerate() {
                    st(dkp, b * d.sk * d.d + i, *v);
                }
                for (i, v) in dva.iter().enumerate() {
                    st(dvp, b * d.sk * d.dv + i, *v);
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
        out: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "scaled_dot_product_attention", T => attention_typed::<T>(d, q, k, v, out));
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
        dout: DevPtr,
        dq: DevPtr,
        dk: DevPtr,
        dv: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "scaled_dot_product_attention_backward", T =>
            attention_backward_typed::<T>(d, q, k, v, dout, dq, dk, dv));
        Ok(())
    }
}
