//! `OptimOps` on GPUs: one fused in-place kernel per step (kernels/optim.hip), f32/f16/bf16
//! parameters and state computed in f32 (the hyperparameters rounded to f32), f64 in double
//! with the exact f64 hyperparameters.

use super::GpuDevice;
use super::kernels::{ADAM, SGD, SGD_MULTI};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::{DevPtr, OptimOps, RawStream};
use crate::ops::optim::{AdamAttrs, SgdAttrs};

/// `RbSgdArgs` of kernels/optim.hip.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbSgdArgs {
    lr: f32,
    momentum: f32,
    dampening: f32,
    weight_decay: f32,
    nesterov: i32,
    first_step: i32,
}

impl RbSgdArgs {
    /// The attributes of the f32/f16/bf16 kernels: the hyperparameters rounded to f32 (the
    /// float opmath type PyTorch converts them to).
    fn new(a: &SgdAttrs) -> RbSgdArgs {
        RbSgdArgs {
            lr: a.lr as f32,
            momentum: a.momentum as f32,
            dampening: a.dampening as f32,
            weight_decay: a.weight_decay as f32,
            nesterov: a.nesterov as i32,
            first_step: a.first_step as i32,
        }
    }
}

/// `RbSgdArgsD` of kernels/optim.hip (f64 parameters): the exact f64 hyperparameters.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbSgdArgsD {
    lr: f64,
    momentum: f64,
    dampening: f64,
    weight_decay: f64,
    nesterov: i32,
    first_step: i32,
}

impl RbSgdArgsD {
    fn new(a: &SgdAttrs) -> RbSgdArgsD {
        RbSgdArgsD {
            lr: a.lr,
            momentum: a.momentum,
            dampening: a.dampening,
            weight_decay: a.weight_decay,
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

/// `RbAdamArgs` of kernels/optim.hip: the attributes plus the bias corrections, computed
/// here in f64 as the CPU device does.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbAdamArgs {
    lr: f32,
    beta1: f32,
    beta2: f32,
    eps: f32,
    weight_decay: f32,
    step_size: f32,
    bc2_sqrt: f32,
    amsgrad: i32,
    decoupled: i32,
}

impl RbAdamArgs {
    /// The hyperparameters rounded to f32 (the float opmath type), the bias corrections
    /// computed from them in f64 (as the CPU device does).
    fn new(a: &AdamAttrs) -> Self {
        let a = a.f32_rounded();
        let bc1 = 1.0 - a.beta1.powf(a.step as f64);
        let bc2 = 1.0 - a.beta2.powf(a.step as f64);
        RbAdamArgs {
            lr: a.lr as f32,
            beta1: a.beta1 as f32,
            beta2: a.beta2 as f32,
            eps: a.eps as f32,
            weight_decay: a.weight_decay as f32,
            step_size: (a.lr / bc1) as f32,
            bc2_sqrt: bc2.sqrt() as f32,
            amsgrad: a.amsgrad as i32,
            decoupled: a.decoupled as i32,
        }
    }
}

/// `RbAdamArgsD` of kernels/optim.hip (f64 parameters): the exact f64 attributes and the
/// bias corrections as `ops::optim::adam_reference` computes them.
#[repr(C)]
#[derive(Clone, Copy)]
struct RbAdamArgsD {
    lr: f64,
    beta1: f64,
    beta2: f64,
    eps: f64,
    weight_decay: f64,
    step_size: f64,
    bc2_sqrt: f64,
    amsgrad: i32,
    decoupled: i32,
}

impl RbAdamArgsD {
    fn new(a: &AdamAttrs) -> Self {
        let (lr, b1, b2) = (a.lr, a.beta1, a.beta2);
        let bc1 = 1.0 - b1.powi(a.step as i32);
        let bc2 = 1.0 - b2.powi(a.step as i32);
        RbAdamArgsD {
            lr,
            beta1: b1,
            beta2: b2,
            eps: a.eps,
            weight_decay: a.weight_decay,
            step_size: lr / bc1,
            bc2_sqrt: bc2.sqrt(),
            amsgrad: a.amsgrad as i32,
            decoupled: a.decoupled as i32,
        }
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
        if dtype == DType::F64 {
            let args = RbSgdArgsD::new(attrs);
            return self.launch_elems(
                stream,
                SGD.src,
                &name,
                n,
                &mut kargs![param.0, grad.0, momentum_buf.0, n64, args],
            );
        }
        let args = RbSgdArgs::new(attrs);
        self.launch_elems(
            stream,
            SGD.src,
            &name,
            n,
            &mut kargs![param.0, grad.0, momentum_buf.0, n64, args],
        )
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
        let args = RbSgdArgs::new(attrs);
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
        if dtype == DType::F64 {
            let args = RbAdamArgsD::new(attrs);
            return self.launch_elems(
                stream,
                ADAM.src,
                &name,
                n,
                &mut kargs![
                    param.0,
                    grad.0,
                    exp_avg.0,
                    exp_avg_sq.0,
                    max_exp_avg_sq.0,
                    n64,
                    args
                ],
            );
        }
        let args = RbAdamArgs::new(attrs);
        self.launch_elems(
            stream,
            ADAM.src,
            &name,
            n,
            &mut kargs![
                param.0,
                grad.0,
                exp_avg.0,
                exp_avg_sq.0,
                max_exp_avg_sq.0,
                n64,
                args
            ],
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_structs_match_the_kernels() {
        // All 4-byte fields, no padding: the kernels read them by value.
        assert_eq!(std::mem::size_of::<RbSgdArgs>(), 24);
        assert_eq!(std::mem::size_of::<RbAdamArgs>(), 36);
        // Four doubles and two ints: 40 bytes, no padding.
        assert_eq!(std::mem::size_of::<RbSgdArgsD>(), 40);
        // Seven doubles and two ints: 64 bytes, no padding.
        assert_eq!(std::mem::size_of::<RbAdamArgsD>(), 64);
        let a = RbAdamArgs::new(&AdamAttrs {
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
