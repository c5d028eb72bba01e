//! SGD and Adam/AdamW steps on the CPU, in place, computing in f32 with the hyperparameters
//! rounded to f32; f64 evaluates the float64 references of `ops::optim` per element with the
//! exact f64 hyperparameters.

use super::CpuDevice;
use super::elem::FloatElem;
use super::par::{SendPtr, for_range};
use crate::base::dtype::DType;
use crate::device::optim::OptimOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::optim::{AdamAttrs, SgdAttrs, adam_reference, sgd_reference};
use crate::{Result, with_float_type};

const GRAIN: usize = 1 << 15;

/// The f32 hyperparameters of an SGD step.
#[derive(Clone, Copy)]
struct Sgd32 {
    lr: f32,
    momentum: f32,
    dampening: f32,
    weight_decay: f32,
    nesterov: bool,
    first_step: bool,
}

fn sgd_typed<T: FloatElem>(p: DevPtr, g: DevPtr, buf: DevPtr, n: usize, a: SgdAttrs) {
    // PyTorch converts the hyperparameters to the float opmath type.
    let a = Sgd32 {
        lr: a.lr as f32,
        momentum: a.momentum as f32,
        dampening: a.dampening as f32,
        weight_decay: a.weight_decay as f32,
        nesterov: a.nesterov,
        first_step: a.first_step,
    };
    let (pp, gp, bp) = (
        SendPtr(p.as_mut_ptr::<T>()),
        SendPtr(g.as_mut_ptr::<T>()),
        SendPtr(buf.as_mut_ptr::<T>()),
    );
    for_range(n, GRAIN, move |s, e| {
        for i in s..e {
            // SAFETY: param, grad (and buf when momentum != 0) hold n elements.
            unsafe {
                let pv = (*pp.get().add(i)).to_f32();
                let mut d = (*gp.get().add(i)).to_f32();
                if a.weight_decay != 0.0 {
                    d += a.weight_decay * pv;
                }
                if a.momentum != 0.0 {
                    let b = if a.first_step {
                        d
                    } else {
                        a.momentum * (*bp.get().add(i)).to_f32() + (1.0 - a.dampening) * d
                    };
                    let bt = T::from_f32(b);
                    *bp.get().add(i) = bt;
                    let b = bt.to_f32();
                    d = if a.nesterov { d + a.momentum * b } else { b };
                }
                *pp.get().add(i) = T::from_f32(pv - a.lr * d);
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn adam_typed<T: FloatElem>(
    p: DevPtr,
    g: DevPtr,
    m: DevPtr,
    v: DevPtr,
    vmax: DevPtr,
    n: usize,
    a: AdamAttrs,
) {
    let (pp, gp, mp, vp, xp) = (
        SendPtr(p.as_mut_ptr::<T>()),
        SendPtr(g.as_mut_ptr::<T>()),
        SendPtr(m.as_mut_ptr::<T>()),
        SendPtr(v.as_mut_ptr::<T>()),
        SendPtr(vmax.as_mut_ptr::<T>()),
    );
    // The hyperparameters rounded to f32 (the float opmath type); the bias corrections from
    // them in f64.
    let a = a.f32_rounded();
    let bc1 = 1.0 - a.beta1.powf(a.step as f64);
    let bc2 = 1.0 - a.beta2.powf(a.step as f64);
    let step_size = (a.lr / bc1) as f32;
    let bc2_sqrt = bc2.sqrt() as f32;
    let (lr, beta1, beta2, eps, weight_decay) = (
        a.lr as f32,
        a.beta1 as f32,
        a.beta2 as f32,
        a.eps as f32,
        a.weight_decay as f32,
    );
    for_range(n, GRAIN, move |s, e| {
        for i in s..e {
            // SAFETY: every state buffer holds n elements (vmax only with amsgrad).
            unsafe {
                let mut pv = (*pp.get().add(i)).to_f32();
                let mut gv = (*gp.get().add(i)).to_f32();
                if a.decoupled {
                    pv *= 1.0 - lr * weight_decay;
                } else if weight_decay != 0.0 {
                    gv += weight_decay * pv;
                }
                let mv = (*mp.get().add(i)).to_f32();
                let mv = mv + (gv - mv) * (1.0 - beta1);
                let vv = (*vp.get().add(i)).to_f32() * beta2 + (1.0 - beta2) * gv * gv;
                let mt = T::from_f32(mv);
                let vt = T::from_f32(vv);
                *mp.get().add(i) = mt;
                *vp.get().add(i) = vt;
                let mut second = vt.to_f32();
                if a.amsgrad {
                    let mx = (*xp.get().add(i)).to_f32().max(second);
                    let mxt = T::from_f32(mx);
                    *xp.get().add(i) = mxt;
                    second = mxt.to_f32();
                }
                let denom = second.sqrt() / bc2_sqrt + eps;
                *pp.get().add(i) = T::from_f32(pv - step_size * mt.to_f32() / denom);
            }
        }
    });
}

fn sgd_f64(p: DevPtr, g: DevPtr, buf: DevPtr, n: usize, a: SgdAttrs) {
    let (pp, gp, bp) = (
        SendPtr(p.as_mut_ptr::<f64>()),
        SendPtr(g.as_mut_ptr::<f64>()),
        SendPtr(buf.as_mut_ptr::<f64>()),
    );
    let mom = a.momentum != 0.0;
    for_range(n, GRAIN, move |s, e| {
        for i in s..e {
            // SAFETY: param, grad (and buf when momentum != 0) hold n elements.
            unsafe {
                let b = if mom { *bp.get().add(i) } else { 0.0 };
                let (np, nb) = sgd_reference(*pp.get().add(i), *gp.get().add(i), b, &a);
                *pp.get().add(i) = np;
                if mom {
                    *bp.get().add(i) = nb;
                }
            }
        }
    });
}

#[allow(clippy::too_many_arguments)]
fn adam_f64(p: DevPtr, g: DevPtr, m: DevPtr, v: DevPtr, vmax: DevPtr, n: usize, a: AdamAttrs) {
    let (pp, gp, mp, vp, xp) = (
        SendPtr(p.as_mut_ptr::<f64>()),
        SendPtr(g.as_mut_ptr::<f64>()),
        SendPtr(m.as_mut_ptr::<f64>()),
        SendPtr(v.as_mut_ptr::<f64>()),
        SendPtr(vmax.as_mut_ptr::<f64>()),
    );
    for_range(n, GRAIN, move |s, e| {
        for i in s..e {
            // SAFETY: every state buffer holds n elements (vmax only with amsgrad).
            unsafe {
                let x = if a.amsgrad { *xp.get().add(i) } else { 0.0 };
                let [np, nm, nv, nx] = adam_reference(
                    *pp.get().add(i),
                    *gp.get().add(i),
                    *mp.get().add(i),
                    *vp.get().add(i),
                    x,
                    &a,
                );
                *pp.get().add(i) = np;
                *mp.get().add(i) = nm;
                *vp.get().add(i) = nv;
                if a.amsgrad {
                    *xp.get().add(i) = nx;
                }
            }
        }
    });
}

impl OptimOps for CpuDevice {
    fn sgd_step(
        &self,
        _s: RawStream,
        dtype: DType,
        param: DevPtr,
        grad: DevPtr,
        momentum_buf: DevPtr,
        n: usize,
        attrs: &SgdAttrs,
    ) -> Result<()> {
        attrs.validate()?;
        if dtype == DType::F64 {
            sgd_f64(param, grad, momentum_buf, n, *attrs);
            return Ok(());
        }
        with_float_type!(dtype, "sgd_step", T => sgd_typed::<T>(param, grad, momentum_buf, n, *attrs));
        Ok(())
    }

    fn adam_step(
        &self,
        _s: RawStream,
        dtype: DType,
        param: DevPtr,
        grad: DevPtr,
        exp_avg: DevPtr,
        exp_avg_sq: DevPtr,
        max_exp_avg_sq: DevPtr,
        n: usize,
        attrs: &AdamAttrs,
    ) -> Result<()> {
        attrs.validate()?;
        if dtype == DType::F64 {
            adam_f64(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, n, *attrs);
            return Ok(());
        }
        with_float_type!(dtype, "adam_step", T => adam_typed::<T>(param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, n, *attrs));
        Ok(())
    }
}
