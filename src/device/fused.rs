//! What every device does before it runs a fused elementwise program
//! ([`super::Device::fused_elementwise`]): check the arguments, merge the output's dimensions
//! where every input allows it, and sort each input into how it is read ([`InputKind`]).
//! The CPU loop (`cpu/fused.rs`) and the generated GPU kernels (`gpu/fused.rs`) both work on
//! the [`FusedPlan`].

use super::{DevPtr, FusedInput};
use crate::base::shape::{self, BroadcastLayout};
use crate::ops::fused::{FusedProgram, Instr};
use crate::{Error, Result};

/// How an input is read at the output's index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InputKind {
    /// One element for the whole output (every stride over a non-trivial dimension is 0).
    Scalar,
    /// Element `i` for output element `i` (the output's own contiguous strides).
    Dense,
    /// Anything else: broadcast along some dimensions, or permuted.
    Strided,
}

impl InputKind {
    /// One letter for kernel names and cache keys: `s`, `d`, `g` (gathered).
    pub fn letter(self) -> char {
        match self {
            InputKind::Scalar => 's',
            InputKind::Dense => 'd',
            InputKind::Strided => 'g',
        }
    }
}

/// A checked fused launch over merged dimensions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FusedPlan {
    /// Output elements.
    pub numel: usize,
    /// The output's shape with size-1 dimensions dropped and dimensions merged where every
    /// input (and the dense output) is contiguous across them; empty for one element.
    pub shape: Vec<usize>,
    /// The output's strides over `shape` (contiguous).
    pub out_strides: Vec<usize>,
    /// Each input's element strides over `shape`.
    pub strides: Vec<Vec<usize>>,
    pub kinds: Vec<InputKind>,
}

impl FusedPlan {
    /// [`FusedPlan::new`] for a launch into `out`: `None` when the output is empty (nothing
    /// to do), and a NULL buffer for a non-empty output is INVALID_ARGUMENT.
    pub fn for_launch(
        prog: &FusedProgram,
        inputs: &[FusedInput],
        out_shape: &[usize],
        out: DevPtr,
    ) -> Result<Option<Self>> {
        let plan = Self::new(prog, inputs, out_shape)?;
        if plan.numel == 0 {
            return Ok(None);
        }
        if out.is_null() || inputs.iter().any(|i| i.ptr.is_null()) {
            return Err(Error::invalid(
                "fused_elementwise: a NULL buffer for a non-empty output",
            ));
        }
        Ok(Some(plan))
    }

    /// Checks a launch (a valid program, one input per program input, one stride per output
    /// dimension, a size that does not overflow) and plans it. Broadcast strides are the
    /// caller's: an input's strides must stay inside its buffer.
    pub fn new(prog: &FusedProgram, inputs: &[FusedInput], out_shape: &[usize]) -> Result<Self> {
        prog.validate()
            .map_err(|e| Error::invalid(format!("fused_elementwise: {e}")))?;
        if inputs.len() != prog.inputs.len() {
            return Err(Error::invalid(format!(
                "fused_elementwise: the program reads {} inputs, {} given",
                prog.inputs.len(),
                inputs.len()
            )));
        }
        for (k, inp) in inputs.iter().enumerate() {
            if inp.strides.len() != out_shape.len() {
                return Err(Error::shape(format!(
                    "fused_elementwise: input {k} has {} strides for an output of {} dimensions",
                    inp.strides.len(),
                    out_shape.len()
                )));
            }
        }
        let numel = shape::numel(out_shape)?;
        let mut all = Vec::with_capacity(inputs.len() + 1);
        all.push(shape::contiguous_strides(out_shape));
        all.extend(inputs.iter().map(|i| i.strides.clone()));
        let merged = BroadcastLayout::from_strides(out_shape, all);
        let mut strides = merged.strides;
        let out_strides = strides.remove(0);
        let kinds = strides
            .iter()
            .map(|s| {
                if s.iter().all(|&v| v == 0) {
                    InputKind::Scalar
                } else if *s == out_strides {
                    InputKind::Dense
                } else {
                    InputKind::Strided
                }
            })
            .collect();
        Ok(FusedPlan {
            numel,
            shape: merged.shape,
            out_strides,
            strides,
            kinds,
        })
    }

    /// True when no input needs index arithmetic (each is dense or a scalar).
    pub fn is_dense(&self) -> bool {
        self.kinds.iter().all(|k| *k != InputKind::Strided)
    }

    /// Whether the launch runs as rows: two or more merged dimensions, and every strided
    /// input either contiguous along the innermost one (a row read in place: a bias over
    /// channels-last activations, a view with a row pitch) or constant along it (one value
    /// per row). Then `Some(mask)`, bit `k` set for input `k` constant along the row; the
    /// GPU reads a vector of consecutive elements of a row at a time. `None` otherwise, or
    /// for more than 64 inputs.
    pub fn rows_mask(&self) -> Option<u64> {
        if self.shape.len() < 2 || self.kinds.len() > 64 {
            return None;
        }
        let mut mask = 0u64;
        for (k, (kind, st)) in self.kinds.iter().zip(&self.strides).enumerate() {
            if *kind != InputKind::Strided {
                continue;
            }
            match st.last() {
                Some(1) => {}
                Some(0) => mask |= 1 << k,
                _ => return None,
            }
        }
        Some(mask)
    }

    /// The kinds as letters (`"dds"`), for kernel names and cache keys.
    pub fn kinds_key(&self) -> String {
        self.kinds.iter().map(|k| k.letter()).collect()
    }
}

/// Which registers of `prog` hold one value for the whole output (constants, scalar inputs
/// and everything computed only from them) rather than one per element.
pub fn uniform_registers(prog: &FusedProgram, kinds: &[InputKind]) -> Vec<bool> {
    let mut u: Vec<bool> = Vec::with_capacity(prog.instrs.len());
    for ins in &prog.instrs {
        let v = match *ins {
            Instr::Load(k) => kinds[k] == InputKind::Scalar,
            Instr::Const(_) => true,
            Instr::Unary(_, a) | Instr::Round(_, a) => u[a],
            Instr::Binary(_, a, b) | Instr::Compare(_, a, b) => u[a] && u[b],
            Instr::Where(a, b, c) | Instr::ClampT(a, b, c) => u[a] && u[b] && u[c],
        };
        u.push(v);
    }
    u
}

/// The operands of an instruction.
pub fn operands(ins: &Instr) -> Vec<usize> {
    match *ins {
        Instr::Load(_) | Instr::Const(_) => vec![],
        Instr::Unary(_, a) | Instr::Round(_, a) => vec![a],
        Instr::Binary(_, a, b) | Instr::Compare(_, a, b) => vec![a, b],
        Instr::Where(a, b, c) | Instr::ClampT(a, b, c) => vec![a, b, c],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::dtype::DType;
    use crate::device::DevPtr;
    use crate::ops::elementwise::BinaryOp;

    fn add2() -> FusedProgram {
        FusedProgram {
            inputs: vec![DType::F32, DType::F32],
            instrs: vec![
                Instr::Load(0),
                Instr::Load(1),
                Instr::Binary(BinaryOp::Add, 0, 1),
            ],
            out_dtype: DType::F32,
        }
    }

    fn inp(strides: &[usize]) -> FusedInput {
        FusedInput {
            ptr: DevPtr(64),
            strides: strides.to_vec(),
        }
    }

    #[test]
    fn kinds_and_merging() {
        let p = add2();
        let plan = FusedPlan::new(&p, &[inp(&[12, 4, 1]), inp(&[0, 0, 0])], &[2, 3, 4]).unwrap();
        assert_eq!(plan.shape, vec![24]);
        assert_eq!(plan.kinds, vec![InputKind::Dense, InputKind::Scalar]);
        assert!(plan.is_dense());
        assert_eq!(plan.kinds_key(), "ds");
        // A row vector broadcast over rows: two dimensions stay.
        let plan = FusedPlan::new(&p, &[inp(&[12, 4, 1]), inp(&[0, 0, 1])], &[2, 3, 4]).unwrap();
        assert_eq!(plan.shape, vec![6, 4]);
        assert_eq!(plan.strides[1], vec![0, 1]);
        assert_eq!(plan.kinds[1], InputKind::Strided);
        assert!(!plan.is_dense());
        assert_eq!(plan.rows_mask(), Some(0), "the row is read in place");
        // One value per row, and a permuted input: rows only while the innermost stride of
        // every strided input is 0 or 1.
        let plan = FusedPlan::new(&p, &[inp(&[12, 4, 1]), inp(&[3, 1, 0])], &[2, 3, 4]).unwrap();
        assert_eq!(plan.shape, vec![6, 4]);
        assert_eq!(plan.rows_mask(), Some(0b10));
        let plan = FusedPlan::new(&p, &[inp(&[1, 2]), inp(&[3, 1])], &[3, 2]).unwrap();
        assert_eq!(plan.rows_mask(), None, "input 0 is transposed");
        let plan = FusedPlan::new(&p, &[inp(&[1]), inp(&[2])], &[5]).unwrap();
        assert_eq!(plan.rows_mask(), None, "one dimension");
        // Size-1 dimensions do not matter; one element is all scalars.
        let plan = FusedPlan::new(&p, &[inp(&[5]), inp(&[0])], &[1]).unwrap();
        assert_eq!(plan.kinds, vec![InputKind::Scalar, InputKind::Scalar]);
        assert_eq!(plan.numel, 1);
        let plan = FusedPlan::new(&p, &[inp(&[]), inp(&[])], &[]).unwrap();
        assert_eq!(plan.numel, 1);
        assert!(plan.shape.is_empty());
        let plan = FusedPlan::new(&p, &[inp(&[3, 1]), inp(&[3, 1])], &[0, 3]).unwrap();
        assert_eq!(plan.numel, 0);
    }

    #[test]
    fn bad_launches_are_errors() {
        let p = add2();
        assert!(FusedPlan::new(&p, &[inp(&[1])], &[4]).is_err());
        assert!(FusedPlan::new(&p, &[inp(&[1]), inp(&[1, 1])], &[4]).is_err());
        assert!(FusedPlan::new(&p, &[inp(&[1, 1]), inp(&[1, 1])], &[usize::MAX, 4]).is_err());
        let bad = FusedProgram {
            instrs: vec![Instr::Load(2)],
            ..add2()
        };
        assert!(FusedPlan::new(&bad, &[inp(&[1]), inp(&[1])], &[4]).is_err());
    }

    #[test]
    fn uniform_registers_follow_scalars() {
        let p = add2();
        let u = uniform_registers(&p, &[InputKind::Dense, InputKind::Scalar]);
        assert_eq!(u, vec![false, true, false]);
        let u = uniform_registers(&p, &[InputKind::Scalar, InputKind::Scalar]);
        assert_eq!(u, vec![true, true, true]);
    }
}
