//! Optimizer steps, in place, with PyTorch's formulas (`torch.optim.SGD`, `Adam`, `AdamW`,
//! `foreach=False`): attributes, their checks, and the float64 reference.

use crate::{Error, Result};

/// `torch.optim.SGD` hyper-parameters, in f64 as PyTorch's Python floats: f64 parameters
/// use them exactly, f32/f16/bf16 ones rounded to f32 ([`SgdAttrs::f32_rounded`]), as
/// PyTorch converts them to the float opmath type. `first_step` says the momentum buffer is
/// not yet initialized (PyTorch then sets it to the gradient, without dampening).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdAttrs {
    pub lr: f64,
    pub momentum: f64,
    pub dampening: f64,
    pub weight_decay: f64,
    pub nesterov: bool,
    pub first_step: bool,
}

impl SgdAttrs {
    /// The attributes as the f32/f16/bf16 kernels take them: each hyperparameter rounded to
    /// f32 (held in the f64 fields, exactly).
    pub fn f32_rounded(&self) -> Self {
        let r = |v: f64| v as f32 as f64;
        SgdAttrs {
            lr: r(self.lr),
            momentum: r(self.momentum),
            dampening: r(self.dampening),
            weight_decay: r(self.weight_decay),
            ..*self
        }
    }

    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, v: f64| {
            Err(Error::invalid(format!(
                "sgd_step: invalid {what} {v} (must be >= 0)"
            )))
        };
        if self.lr.is_nan() || self.lr < 0.0 {
            return bad("lr", self.lr);
        }
        if self.momentum.is_nan() || self.momentum < 0.0 {
            return bad("momentum", self.momentum);
        }
        if self.weight_decay.is_nan() || self.weight_decay < 0.0 {
            return bad("weight_decay", self.weight_decay);
        }
        if self.nesterov && (self.momentum <= 0.0 || self.dampening != 0.0) {
            return Err(Error::invalid(
                "sgd_step: nesterov needs momentum > 0 and dampening == 0",
            ));
        }
        Ok(())
    }
}

/// `torch.optim.Adam` / `AdamW` hyper-parameters, in f64 as [`SgdAttrs`] (exact for f64
/// parameters, rounded to f32 for the others: [`AdamAttrs::f32_rounded`]); `step` is the
/// step count after this step (1 on the first call); `decoupled` selects AdamW's weight
/// decay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamAttrs {
    pub lr: f64,
    pub beta1: f64,
    pub beta2: f64,
    pub eps: f64,
    pub weight_decay: f64,
    pub step: u64,
    pub amsgrad: bool,
    pub decoupled: bool,
}

impl AdamAttrs {
    /// The attributes as the f32/f16/bf16 kernels take them: each hyperparameter rounded to
    /// f32 (held in the f64 fields, exactly).
    pub fn f32_rounded(&self) -> Self {
        let r = |v: f64| v as f32 as f64;
        AdamAttrs {
            lr: r(self.lr),
            beta1: r(self.beta1),
            beta2: r(self.beta2),
            eps: r(self.eps),
            weight_decay: r(self.weight_decay),
            ..*self
        }
    }

    pub fn validate(&self) -> Result<()> {
        let op = if self.decoupled {
            "adamw_step"
        } else {
            "adam_step"
        };
        if self.lr.is_nan() || self.lr < 0.0 {
            return Err(Error::invalid(format!("{op}: invalid lr {}", self.lr)));
        }
        if self.eps.is_nan() || self.eps < 0.0 {
            return Err(Error::invalid(format!("{op}: invalid eps {}", self.eps)));
        }
        for (n, b) in [("beta1", self.beta1), ("beta2", self.beta2)] {
            if !(0.0..1.0).contains(&b) {
                return Err(Error::invalid(format!(
                    "{op}: invalid {n} {b} (must be in [0, 1))"
                )));
            }
        }
        if self.weight_decay.is_nan() || self.weight_decay < 0.0 {
            return Err(Error::invalid(format!(
                "{op}: invalid weight_decay {}",
                self.weight_decay
            )));
        }
        if self.step == 0 {
            return Err(Error::invalid(format!(
                "{op}: step must be >= 1 (the count after this step)"
            )));
        }
        Ok(())
    }
}

/// One SGD step on one element: returns (param, momentum_buffer).
pub fn sgd_reference(p: f64, g: f64, buf: f64, a: &SgdAttrs) -> (f64, f64) {
    let mut d = g;
    if a.weight_decay != 0.0 {
        d += a.weight_decay * p;
    }
    let mut nb = buf;
    if a.momentum != 0.0 {
        nb = if a.first_step {
            d
        } else {
            a.momentum * buf + (1.0 - a.dampening) * d
        };
        d = if a.nesterov { d + a.momentum * nb } else { nb };
    }
    (p - a.lr * d, nb)
}

/// One Adam/AdamW step on one element: returns (param, exp_avg, exp_avg_sq, max_exp_avg_sq).
pub fn adam_reference(p: f64, g: f64, m: f64, v: f64, vmax: f64, a: &AdamAttrs) -> [f64; 4] {
    let (lr, b1, b2) = (a.lr, a.beta1, a.beta2);
    let wd = a.weight_decay;
    let mut p = p;
    let mut g = g;
    if a.decoupled {
        p *= 1.0 - lr * wd;
    } else if wd != 0.0 {
        g += wd * p;
    }
    let m = b1 * m + (1.0 - b1) * g;
    let v = b2 * v + (1.0 - b2) * g * g;
    let bc1 = 1.0 - b1.powi(a.step as i32);
    let bc2 = 1.0 - b2.powi(a.step as i32);
    let step_size = lr / bc1;
    let vmax = if a.amsgrad { vmax.max(v) } else { vmax };
    let vv = if a.amsgrad { vmax } else { v };
    let denom = vv.sqrt() / bc2.sqrt() + a.eps;
    [p - step_size * m / denom, m, v, vmax]
}
