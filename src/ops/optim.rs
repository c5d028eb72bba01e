//! Optimizer steps, in place, with PyTorch's formulas (`torch.optim.SGD`, `Adam`, `AdamW`,
//! `foreach=False`): attributes, their checks, and the float64 reference.

use crate::{Error, Result};

/// `torch.optim.SGD` hyper-parameters. `first_step` says the momentum buffer is not yet
/// initialized (PyTorch then sets it to the gradient, without dampening).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SgdAttrs {
    pub lr: f32,
    pub momentum: f32,
    pub dampening: f32,
    pub weight_decay: f32,
    pub nesterov: bool,
    pub first_step: bool,
}

impl SgdAttrs {
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str, v: f32| {
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

/// `torch.optim.Adam` / `AdamW` hyper-parameters; `step` is the step count after this step
/// (1 on the first call); `decoupled` selects AdamW's weight decay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamAttrs {
    pub lr: f32,
    pub beta1: f32,
    pub beta2: f32,
    pub eps: f32,
    pub weight_decay: f32,
    pub step: u64,
    pub amsgrad: bool,
    pub decoupled: bool,
}

impl AdamAttrs {
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
        d += a.weight_decay as f64 * p;
    }
    let mut nb = buf;
    if a.momentum != 0.0 {
        nb = if a.first_step {
            d
        } else {
            a.momentum as f64 * buf + (1.0 - a.dampening as f64) * d
        };
        d = if a.nesterov {
            d + a.momentum as f64 * nb
        } else {
            nb
        };
    }
    (p - a.lr as f64 * d, nb)
}

/// One Adam/AdamW step on one element: returns (param, exp_avg, exp_avg_sq, max_exp_avg_sq).
pub fn adam_reference(p: f64, g: f64, m: f64, v: f64, vmax: f64, a: &AdamAttrs) -> [f64; 4] {
    let (lr, b1, b2) = (a.lr as f64, a.beta1 as f64, a.beta2 as f64);
    let wd = a.weight_decay as f64;
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
    let denom = vv.sqrt() / bc2.sqrt() + a.eps as f64;
    [p - step_size * m / denom, m, v, vmax]
}
