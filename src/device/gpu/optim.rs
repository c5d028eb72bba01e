//! `OptimOps` on GPUs: one fused in-place kernel per step (kernels/optim.hip), f32/f16/bf16
//! parameters and state computed in f32 (the hyperparameters rounded to f32), f64 in double
//! with the exact f64 hyperparameters.

use super::GpuDevice;
use super::kernels::{ADAM, SGD, SGD_MULTI};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{DevPtr, OptimOps, RawStream};
use crate::ops::optim::{AdamAttrs, SgdAttrs};

/// A kernel's hyperparameter type: f32 for the f32/f16/bf16 kernels (PyTorch's float
/// opmath type; the values rounded), f64 for the f64 kernels (exact).
trait Hyper: Copy {
    fn of(v: f64) -> Self;
}
impl Hyper for f32 {
    fn of(v: f64) -> Self {
        v as f32
    }
}
impl Hyper for f64 {
    fn of(v: f64) -> Self {
        v
    }
}

/// `RbSgdArgs` (`F` = f32) and `RbSgdArgsD` (`F` = f64) of kernels/optim.hip.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbSgdArgs<F> {
    lr: F,
    momentum: F,
    dampening: F,
    weight_decay: F,
    nesterov: i32,
    first_step: i32,
}

impl<F: Hyper> RbSgdArgs<F> {
    fn new(a: &SgdAttrs) -> Self {
        RbSgdArgs {
            lr: F::of(a.lr),
            momentum: F::of(a.momentum),
            dampening: F::of(a.dampening),
            weight_decay: F::of(a.weight_decay),
            nesterov: a.nesterov as i32,
            first_step: a.first_step as i32,
        }
    }
}

/// Tensors per `rb_sgd_multi_*` launch (kernels/optim.hip's `RB_SGD_MULTI`).
const SGD_MULTI_MAX: usize = 8;

/// `RbSgdMulti` of kernels/optim.hip: the tensors of one launch, their elements numbered one
/// after another (tensor j's from `start[j]`).
#[repr(C)]
#[derive(Clone, Copy)]
struct RbSgdMulti {
    p: [u64; SGD_MULTI_MAX],
    g: [u64; SGD_MULTI_MAX],
    buf: [u64; SGD_MULTI_MAX],
    start: [u64; SGD_MULTI_MAX + 1],
    count: i32,
}

/// `RbAdamArgs` (`F` = f32) and `RbAdamArgsD` (`F` = f64) of kernels/optim.hip: the
/// attributes plus the bias corrections, computed here in f64.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbAdamArgs<F> {
    lr: F,
    beta1: F,
    beta2: F,
    eps: F,
    weight_decay: F,
    step_size: F,
    bc2_sqrt: F,
    amsgrad: i32,
    decoupled: i32,
}

impl<F: Hyper> RbAdamArgs<F> {
    /// From `a` and its bias corrections `1 - beta1^step`, `1 - beta2^step`.
    fn with(a: &AdamAttrs, bc1: f64, bc2: f64) -> Self {
        RbAdamArgs {
            lr: F::of(a.lr),
            beta1: F::of(a.beta1),
            beta2: F::of(a.beta2),
            eps: F::of(a.eps),
            weight_decay: F::of(a.weight_decay),
            step_size: F::of(a.lr / bc1),
            bc2_sqrt: F::of(bc2.sqrt()),
            amsgrad: a.amsgrad as i32,
            decoupled: a.decoupled as i32,
        }
    }
}

impl RbAdamArgs<f32> {
    /// The hyperparameters rounded to f32 (the float opmath type), the bias corrections
    /// computed from them in f64 (as the CPU device does).
    fn new(a: &AdamAttrs) -> Self {
        let a = a.f32_rounded();
        let bc1 = 1.0 - a.beta1.powf(a.step as f64);
        let bc2 = 1.0 - a.beta2.powf(a.step as f64);
        Self::with(&a, bc1, bc2)
    }
}

impl RbAdamArgs<f64> {
    /// The exact f64 attributes, the bias corrections as `ops::optim::adam_reference`
    /// computes them.
    fn new(a: &AdamAttrs) -> Self {
        let bc1 = 1.0 - a.beta1.powi(a.step as i32);
        let bc2 = 1.0 - a.beta2.powi(a.step as i32);
        Self::with(a, bc1, bc2)
    }
}

impl OptimOps for GpuDevice {
    fn sgd_step(
        &self,
        stream: RawStream,
        dtype: DType,
        param: DevPtr,
        grad: DevPtr,
        momentum_buf: DevPtr,
        n: usize,
        attrs: &SgdAttrs,
    ) -> Result<()> {
        attrs.validate()?;
        let name = SGD.dtype("sgd_step", dtype)?;
        let n64 = n as u64;
        let (a32, a64) = (RbSgdArgs::<f32>::new(attrs), RbSgdArgs::<f64>::new(attrs));
        let mut args = if dtype == DType::F64 {
            kargs![param.0, grad.0, momentum_buf.0, n64, a64]
        } else {
            kargs![param.0, grad.0, momentum_buf.0, n64, a32]
        };
        self.launch_elems(stream, SGD.src, &name, n, &mut args)
    }

    fn sgd_step_multi(
        &self,
        stream: RawStream,
        dtype: DType,
        parts: &[(DevPtr, DevPtr, DevPtr, usize)],
        attrs: &SgdAttrs,
    ) -> Result<()> {
        attrs.validate()?;
        if dtype == DType::F64 {
            for &(p, g, b, n) in parts {
                self.sgd_step(stream, dtype, p, g, b, n, attrs)?;
            }
            return Ok(());
        }
        let name = SGD_MULTI.dtype("sgd_step", dtype)?;
        let args = RbSgdArgs::<f32>::new(attrs);
        let live: Vec<_> = parts.iter().filter(|p| p.3 > 0).collect();
        for chunk in live.chunks(SGD_MULTI_MAX) {
            let mut t = RbSgdMulti {
                p: [0; SGD_MULTI_MAX],
                g: [0; SGD_MULTI_MAX],
                buf: [0; SGD_MULTI_MAX],
                start: [0; SGD_MULTI_MAX + 1],
                count: chunk.len() as i32,
            };
            for (j, &&(p, g, b, n)) in chunk.iter().enumerate() {
                t.p[j] = p.0;
                t.g[j] = g.0;
                t.buf[j] = b.0;
                t.start[j + 1] = t.start[j] + n as u64;
            }
            let total = t.start[chunk.len()] as usize;
            self.launch_elems(stream, SGD_MULTI.src, &name, total, &mut kargs![t, args])?;
        }
        Ok(())
    }

    fn adam_step(
        &self,
        stream: RawStream,
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
        let op = if attrs.decoupled {
            "adamw_step"
        } else {
            "adam_step"
        };
        let name = ADAM.dtype(op, dtype)?;
        let n64 = n as u64;
        let (a32, a64) = (RbAdamArgs::<f32>::new(attrs), RbAdamArgs::<f64>::new(attrs));
        let (p, g, m, v, vmax) = (param.0, grad.0, exp_avg.0, exp_avg_sq.0, max_exp_avg_sq.0);
        let mut args = if dtype == DType::F64 {
            kargs![p, g, m, v, vmax, n64, a64]
        } else {
            kargs![p, g, m, v, vmax, n64, a32]
        };
        self.launch_elems(stream, ADAM.src, &name, n, &mut args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_structs_match_the_kernels() {
        // All 4-byte fields, no padding: the kernels read them by value.
        assert_eq!(std::mem::size_of::<RbSgdArgs<f32>>(), 24);
        assert_eq!(std::mem::size_of::<RbAdamArgs<f32>>(), 36);
        // Four doubles and two ints: 40 bytes, no padding.
        assert_eq!(std::mem::size_of::<RbSgdArgs<f64>>(), 40);
        // Seven doubles and two ints: 64 bytes, no padding.
        assert_eq!(std::mem::size_of::<RbAdamArgs<f64>>(), 64);
        let a = RbAdamArgs::<f32>::new(&AdamAttrs {
            lr: 0.1,
            beta1: 0.5,
            beta2: 0.75,
            eps: 1e-8,
            weight_decay: 0.0,
            step: 2,
            amsgrad: true,
            decoupled: false,
        });
        assert!((a.step_size - 0.1 / 0.75).abs() < 1e-7);
        assert!((a.bc2_sqrt - (1.0f32 - 0.5625).sqrt()).abs() < 1e-7);
        assert_eq!((a.amsgrad, a.decoupled), (1, 0));
    }
}
