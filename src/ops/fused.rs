//! Fused elementwise programs: what the graph executor makes of a chain of elementwise ops
//! (unary maps, broadcasting binaries, activations, clamp, comparisons, where, casts), run as
//! one pass over the output by every device (a generated kernel on GPUs, a fused loop on the
//! CPU).
//!
//! A program is straight-line SSA over `f32` registers: register `i` is the value of
//! instruction `i`. Every input is read at the output's index through its own broadcast
//! strides, converted to `f32` (bool as 0/1). [`Instr::Round`] rounds a value to f16/bf16
//! where the unfused ops would have stored it in that dtype, so a fused chain equals the ops
//! run one by one, bit for bit in f32 and in half precision. The last register is stored in
//! the output's dtype.

use crate::base::dtype::DType;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};

/// One instruction; operands name earlier registers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Instr {
    /// Input `i` at the current index.
    Load(usize),
    /// A constant.
    Const(f32),
    Unary(UnaryOp, usize),
    Binary(BinaryOp, usize, usize),
    /// 1.0 where the comparison holds, else 0.0.
    Compare(CompareOp, usize, usize),
    /// `cond != 0 ? a : b`.
    Where(usize, usize, usize),
    /// `min(max(x, lo), hi)` with tensor bounds (NaN in x propagates, as torch.clamp).
    ClampT(usize, usize, usize),
    /// The value rounded to `dtype` (f16, bf16; f32 is the identity; bool gives 0/1;
    /// integers truncate toward zero).
    Round(DType, usize),
}

/// A fused elementwise program over `inputs.len()` tensors.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedProgram {
    /// The dtype of each input.
    pub inputs: Vec<DType>,
    pub instrs: Vec<Instr>,
    /// The dtype the last register is stored in.
    pub out_dtype: DType,
}

impl FusedProgram {
    /// A stable text form (the generated kernel's cache key and the graph dump's label).
    pub fn signature(&self) -> String {
        let ins: Vec<String> = self.inputs.iter().map(|d| d.to_string()).collect();
        format!(
            "({}) -> {} {:?}",
            ins.join(","),
            self.out_dtype,
            self.instrs
        )
    }

    /// Checks that every operand names an earlier register and every load an input.
    pub fn validate(&self) -> Result<(), String> {
        if self.instrs.is_empty() {
            return Err("a fused program has no instructions".into());
        }
        for (i, ins) in self.instrs.iter().enumerate() {
            let ok = |r: usize| r < i;
            let good = match *ins {
                Instr::Load(k) => k < self.inputs.len(),
                Instr::Const(_) => true,
                Instr::Unary(_, a) | Instr::Round(_, a) => ok(a),
                Instr::Binary(_, a, b) | Instr::Compare(_, a, b) => ok(a) && ok(b),
                Instr::Where(a, b, c) | Instr::ClampT(a, b, c) => ok(a) && ok(b) && ok(c),
            };
            if !good {
                return Err(format!("instruction {i} ({ins:?}) names a later register"));
            }
        }
        Ok(())
    }

    /// Evaluates the program on one element in f64 after loading `inputs` (the reference).
    pub fn eval_f64(&self, inputs: &[f64]) -> f64 {
        let mut r: Vec<f64> = Vec::with_capacity(self.instrs.len());
        for ins in &self.instrs {
            let v = match *ins {
                Instr::Load(k) => inputs[k],
                Instr::Const(c) => c as f64,
                Instr::Unary(op, a) => op.reference(r[a]),
                Instr::Binary(op, a, b) => op.reference(r[a], r[b]),
                Instr::Compare(op, a, b) => op.apply(r[a], r[b]) as u8 as f64,
                Instr::Where(c, a, b) => {
                    if r[c] != 0.0 {
                        r[a]
                    } else {
                        r[b]
                    }
                }
                Instr::ClampT(x, lo, hi) => clamp_t(r[x], r[lo], r[hi]),
                Instr::Round(d, a) => round_f64(d, r[a]),
            };
            r.push(v);
        }
        *r.last().expect("validated: at least one instruction")
    }

    /// Evaluates the program on one element in f32, as the devices do.
    pub fn eval_f32(&self, inputs: &[f32], regs: &mut Vec<f32>) -> f32 {
        regs.clear();
        for ins in &self.instrs {
            let v = step_f32(ins, regs, |k| inputs[k]);
            regs.push(v);
        }
        *regs.last().expect("validated: at least one instruction")
    }
}

/// One instruction in f32 over the registers `r` computed so far; `load(i)` gives input `i`.
#[inline(always)]
pub fn step_f32(ins: &Instr, r: &[f32], load: impl FnOnce(usize) -> f32) -> f32 {
    match *ins {
        Instr::Load(k) => load(k),
        Instr::Const(c) => c,
        Instr::Unary(op, a) => op.apply_f32(r[a]),
        Instr::Binary(op, a, b) => op.apply_f32(r[a], r[b]),
        Instr::Compare(op, a, b) => op.apply(r[a], r[b]) as u8 as f32,
        Instr::Where(c, a, b) => {
            if r[c] != 0.0 {
                r[a]
            } else {
                r[b]
            }
        }
        Instr::ClampT(x, lo, hi) => clamp_t(r[x], r[lo], r[hi]),
        Instr::Round(d, a) => round_f32(d, r[a]),
    }
}

/// torch.clamp with tensor bounds: `min(max(x, lo), hi)`, NaN in any operand propagates.
#[inline(always)]
pub fn clamp_t<T: num_like::Float>(x: T, lo: T, hi: T) -> T {
    if x.is_nan() || lo.is_nan() || hi.is_nan() {
        return T::nan();
    }
    let y = if x < lo { lo } else { x };
    if y > hi { hi } else { y }
}

/// The f32 value rounded through `dtype`.
pub fn round_f32(dtype: DType, v: f32) -> f32 {
    match dtype {
        DType::F16 => half::f16::from_f32(v).to_f32(),
        DType::BF16 => half::bf16::from_f32(v).to_f32(),
        DType::Bool => (v != 0.0) as u8 as f32,
        DType::I32 | DType::I64 | DType::I8 | DType::U8 | DType::I16 => v.trunc(),
        DType::F32 | DType::F64 => v,
    }
}

fn round_f64(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::F16 => half::f16::from_f64(v).to_f64(),
        DType::BF16 => half::bf16::from_f64(v).to_f64(),
        DType::F32 => v as f32 as f64,
        DType::Bool => (v != 0.0) as u8 as f64,
        DType::I32 | DType::I64 | DType::I8 | DType::U8 | DType::I16 => v.trunc(),
        DType::F64 => v,
    }
}

pub mod num_like {
    pub trait Float: Copy + PartialOrd {
        fn is_nan(self) -> bool;
        fn nan() -> Self;
    }
    impl Float for f32 {
        fn is_nan(self) -> bool {
            f32::is_nan(self)
        }
        fn nan() -> Self {
            f32::NAN
        }
    }
    impl Float for f64 {
        fn is_nan(self) -> bool {
            f64::is_nan(self)
        }
        fn nan() -> Self {
            f64::NAN
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gelu_chain_matches_reference() {
        // y = gelu(x * a + b) * c
        let p = FusedProgram {
            inputs: vec![DType::F32; 4],
            instrs: vec![
                Instr::Load(0),
                Instr::Load(1),
                Instr::Binary(BinaryOp::Mul, 0, 1),
                Instr::Load(2),
                Instr::Binary(BinaryOp::Add, 2, 3),
                Instr::Unary(UnaryOp::Gelu { tanh: false }, 4),
                Instr::Load(3),
                Instr::Binary(BinaryOp::Mul, 5, 6),
            ],
            out_dtype: DType::F32,
        };
        p.validate().unwrap();
        let ins = [0.7f32, -1.5, 0.25, 2.0];
        let mut regs = vec![];
        let got = p.eval_f32(&ins, &mut regs) as f64;
        let x = 0.7f64 * -1.5 + 0.25;
        let want = 0.5 * x * (1.0 + crate::ops::elementwise::erf(x / 2f64.sqrt())) * 2.0;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        let r = p.eval_f64(&[0.7, -1.5, 0.25, 2.0]);
        assert!((r - want).abs() < 1e-12);
    }

    #[test]
    fn validate_rejects_forward_references() {
        let p = FusedProgram {
            inputs: vec![DType::F32],
            instrs: vec![Instr::Unary(UnaryOp::Relu, 0)],
            out_dtype: DType::F32,
        };
        assert!(p.validate().is_err());
        let p = FusedProgram {
            inputs: vec![DType::F32],
            instrs: vec![Instr::Load(1)],
            out_dtype: DType::F32,
        };
        assert!(p.validate().is_err());
    }

    #[test]
    fn round_matches_half_crates() {
        assert_eq!(round_f32(DType::F16, 1.0 + 1e-4), 1.0);
        assert_eq!(round_f32(DType::BF16, 1.0 + 1e-3), 1.0);
        assert_eq!(round_f32(DType::F32, 1.0 + 1e-4), 1.0 + 1e-4);
        assert!(clamp_t(f32::NAN, 0.0, 1.0).is_nan());
        assert_eq!(clamp_t(2.0f32, 0.0, 1.0), 1.0);
    }
}
