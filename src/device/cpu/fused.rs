//! Fused elementwise programs on the CPU ([`crate::ops::fused`]): one pass over the output
//! in chunks of [`CHUNK`] elements, spread over the thread pool. Each register that varies
//! along the output is a chunk-long f32 vector in a per-task scratch buffer (registers share
//! slots once their last reader has run), so every instruction is one tight, vectorizable
//! loop over the chunk; registers that are the same everywhere (constants, scalar inputs and
//! what is computed only from them) are single values. Inputs of any dtype are widened to
//! f32 as they are read: straight from the buffer when dense, once per launch when a scalar,
//! run by run along the innermost merged dimension when broadcast or permuted. The last
//! register is narrowed to the output's dtype.
//!
//! The arithmetic is [`FusedProgram::eval_f32`]'s, element for element (the ops'
//! `apply_f32`, the same rounding), so the fused chain equals the unfused ops bit for bit.

use super::par::{SendPtr, for_range};
use crate::Result;
use crate::base::dtype::DType;
use crate::device::fused::{FusedPlan, InputKind, operands, uniform_registers};
use crate::device::{DevPtr, FusedInput};
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp, clamp_f32, relu_f32};
use crate::ops::fused::{FusedProgram, Instr, clamp_t, round_f32, step_f32};
use half::slice::HalfFloatSliceExt;
use half::{bf16, f16};

/// Elements per register vector (a chunk of the output).
const CHUNK: usize = 4096;
/// Elements per parallel task (a multiple of CHUNK).
const GRAIN: usize = 8 * CHUNK;

/// Where a register lives while a chunk runs.
#[derive(Clone, Copy, Debug)]
enum Reg {
    /// The same value for every element (computed once per launch).
    Uniform(f32),
    /// A slot of the scratch buffer.
    Slot(usize),
    /// A dense f32 input, read in place (no copy into the scratch buffer).
    Input(usize),
}

/// An operand of one instruction's loop.
#[derive(Clone, Copy)]
enum Val<'a> {
    S(f32),
    V(&'a [f32]),
}

impl Val<'_> {
    #[inline(always)]
    fn at(self, j: usize) -> f32 {
        match self {
            Val::S(v) => v,
            Val::V(s) => s[j],
        }
    }
}

/// An input as the loop reads it.
#[derive(Clone)]
struct Source {
    dtype: DType,
    base: SendPtr<u8>,
    kind: InputKind,
    strides: Vec<usize>,
}

pub(super) fn fused_elementwise(
    prog: &FusedProgram,
    inputs: &[FusedInput],
    out_shape: &[usize],
    out: DevPtr,
) -> Result<()> {
    let Some(plan) = FusedPlan::for_launch(prog, inputs, out_shape, out)? else {
        return Ok(());
    };
    let sources: Vec<Source> = inputs
        .iter()
        .enumerate()
        .map(|(k, inp)| Source {
            dtype: prog.inputs[k],
            base: SendPtr(inp.ptr.as_mut_ptr::<u8>()),
            kind: plan.kinds[k],
            strides: plan.strides[k].clone(),
        })
        .collect();

    // Uniform registers are computed here, once; the others get scratch slots.
    let uniform = uniform_registers(prog, &plan.kinds);
    let n_instr = prog.instrs.len();
    let mut last_use = vec![0usize; n_instr];
    for (i, ins) in prog.instrs.iter().enumerate() {
        for a in operands(ins) {
            last_use[a] = i;
        }
    }
    // Dense f32 inputs are read in place, and the last instruction writes straight into an
    // f32 output, unless the output overlaps a dense input (an in-place launch: then every
    // input is copied before the chunk's store, as one pass of the unfused op would read it).
    let out_bytes = plan.numel * prog.out_dtype.size();
    let overlaps = |k: usize| {
        let b = inputs[k].ptr.0;
        let e = b + (plan.numel * prog.inputs[k].size()) as u64;
        b < out.0 + out_bytes as u64 && out.0 < e
    };
    let in_place: Vec<bool> = (0..inputs.len())
        .map(|k| plan.kinds[k] == InputKind::Dense && prog.inputs[k] == DType::F32 && !overlaps(k))
        .collect();
    let direct_out = prog.out_dtype == DType::F32
        && (0..inputs.len()).all(|k| plan.kinds[k] != InputKind::Dense || !overlaps(k));
    let mut regs: Vec<Reg> = Vec::with_capacity(n_instr);
    let mut free_slots: Vec<usize> = Vec::new();
    let mut n_slots = 0usize;
    let mut uvals: Vec<f32> = Vec::with_capacity(n_instr);
    for (i, ins) in prog.instrs.iter().enumerate() {
        if uniform[i] {
            let v = match *ins {
                Instr::Load(k) => {
                    // SAFETY: a scalar input has at least one element at its base.
                    unsafe { load_one(sources[k].dtype, sources[k].base.get(), 0) }
                }
                _ => step_f32(ins, &uvals, |_| unreachable!("loads are read above")),
            };
            uvals.push(v);
            regs.push(Reg::Uniform(v));
        } else if let Instr::Load(k) = *ins
            && in_place[k]
        {
            uvals.push(0.0);
            regs.push(Reg::Input(k));
        } else {
            uvals.push(0.0);
            let s = free_slots.pop().unwrap_or_else(|| {
                n_slots += 1;
                n_slots - 1
            });
            regs.push(Reg::Slot(s));
        }
        // Operands whose last reader this is give their slots back (after the output took
        // one, so an instruction never writes a slot it reads).
        for a in operands(ins) {
            if last_use[a] == i
                && let Reg::Slot(s) = regs[a]
                && !free_slots.contains(&s)
            {
                free_slots.push(s);
            }
        }
    }
    let out_dtype = prog.out_dtype;
    let last = *regs.last().expect("validated: at least one instruction");
    let direct_out = direct_out && matches!(last, Reg::Slot(_));
    let out_base = SendPtr(out.as_mut_ptr::<u8>());
    let plan = &plan;
    let (regs, sources) = (&regs, &sources);
    for_range(plan.numel, GRAIN, move |s, e| {
        let mut scratch = vec![0f32; n_slots.max(1) * CHUNK];
        let mut at = s;
        while at < e {
            let len = CHUNK.min(e - at);
            // SAFETY: the output holds numel elements of out_dtype; chunks are disjoint.
            let direct = direct_out.then(|| unsafe { (out_base.get() as *mut f32).add(at) });
            run_chunk(prog, plan, sources, regs, &mut scratch, at, len, direct);
            if direct.is_none() {
                // SAFETY: as above; an Input register does not overlap the output.
                unsafe {
                    let val = match last {
                        Reg::Uniform(v) => Val::S(v),
                        Reg::Slot(k) => Val::V(&scratch[k * CHUNK..k * CHUNK + len]),
                        Reg::Input(k) => Val::V(std::slice::from_raw_parts(
                            (sources[k].base.get() as *const f32).add(at),
                            len,
                        )),
                    };
                    store_run(out_dtype, out_base.get(), at, len, val);
                }
            }
            at += len;
        }
    });
    Ok(())
}

/// Runs every non-uniform instruction over output elements `at..at + len`; the last one
/// into `direct` (the f32 output at `at`) when given.
#[allow(clippy::too_many_arguments)]
fn run_chunk(
    prog: &FusedProgram,
    plan: &FusedPlan,
    sources: &[Source],
    regs: &[Reg],
    scratch: &mut [f32],
    at: usize,
    len: usize,
    direct: Option<*mut f32>,
) {
    let base = scratch.as_mut_ptr();
    // SAFETY (all slices below): slot k is scratch[k*CHUNK..(k+1)*CHUNK]; an instruction's
    // output slot differs from its operands' slots (see the slot assignment), so the one
    // mutable slice never overlaps a shared one.
    let slot = |k: usize| unsafe { std::slice::from_raw_parts(base.add(k * CHUNK), len) };
    // SAFETY: a dense input holds the output's elements; it does not overlap the output
    // (Input registers are made only then).
    let input = |k: usize| unsafe {
        std::slice::from_raw_parts((sources[k].base.get() as *const f32).add(at), len)
    };
    let val = |r: usize| match regs[r] {
        Reg::Uniform(v) => Val::S(v),
        Reg::Slot(k) => Val::V(slot(k)),
        Reg::Input(k) => Val::V(input(k)),
    };
    let last = prog.instrs.len() - 1;
    for (i, ins) in prog.instrs.iter().enumerate() {
        let Reg::Slot(k) = regs[i] else { continue };
        let out = match direct {
            // SAFETY: the caller's output chunk, which no operand overlaps.
            Some(p) if i == last => unsafe { std::slice::from_raw_parts_mut(p, len) },
            _ => unsafe { std::slice::from_raw_parts_mut(base.add(k * CHUNK), len) },
        };
        match *ins {
            Instr::Load(x) => load_input(&sources[x], plan, at, out),
            Instr::Const(_) => unreachable!("constants are uniform"),
            Instr::Unary(op, a) => unary(op, val(a), out),
            Instr::Binary(op, a, b) => binary(op, val(a), val(b), out),
            Instr::Compare(op, a, b) => compare(op, val(a), val(b), out),
            Instr::Where(c, a, b) => {
                let (c, a, b) = (val(c), val(a), val(b));
                for (j, o) in out.iter_mut().enumerate() {
                    *o = if c.at(j) != 0.0 { a.at(j) } else { b.at(j) };
                }
            }
            Instr::ClampT(x, lo, hi) => {
                let (x, lo, hi) = (val(x), val(lo), val(hi));
                for (j, o) in out.iter_mut().enumerate() {
                    *o = clamp_t(x.at(j), lo.at(j), hi.at(j));
                }
            }
            Instr::Round(d, a) => round(d, val(a), out),
        }
    }
}

/// `out[j] = f(a[j])` for a non-uniform `a`.
#[inline(always)]
fn map1(a: Val, out: &mut [f32], f: impl Fn(f32) -> f32) {
    match a {
        Val::V(a) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = f(x);
            }
        }
        Val::S(x) => out.fill(f(x)),
    }
}

/// `out[j] = f(a[j], b[j])`, with a loop for each operand being a vector or a value.
#[inline(always)]
fn map2(a: Val, b: Val, out: &mut [f32], f: impl Fn(f32, f32) -> f32) {
    match (a, b) {
        (Val::V(a), Val::V(b)) => {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = f(x, y);
            }
        }
        (Val::V(a), Val::S(y)) => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = f(x, y);
            }
        }
        (Val::S(x), Val::V(b)) => {
            for (o, &y) in out.iter_mut().zip(b) {
                *o = f(x, y);
            }
        }
        (Val::S(x), Val::S(y)) => out.fill(f(x, y)),
    }
}

/// A unary op, one loop per op (the op a constant in it, so its body is straight-line and
/// the cheap ones vectorize).
fn unary(op: UnaryOp, a: Val, out: &mut [f32]) {
    macro_rules! go {
        ($op:expr) => {
            map1(a, out, |v| $op.apply_f32(v))
        };
    }
    match op {
        UnaryOp::Relu => map1(a, out, relu_f32),
        UnaryOp::Neg => map1(a, out, |v| -v),
        UnaryOp::Abs => map1(a, out, |v| v.abs()),
        UnaryOp::Sqrt => map1(a, out, |v| v.sqrt()),
        UnaryOp::Clamp { min, max } => map1(a, out, |v| clamp_f32(v, min, max)),
        UnaryOp::Sigmoid => go!(UnaryOp::Sigmoid),
        UnaryOp::Tanh => go!(UnaryOp::Tanh),
        UnaryOp::Gelu { tanh: false } => go!(UnaryOp::Gelu { tanh: false }),
        UnaryOp::Gelu { tanh: true } => go!(UnaryOp::Gelu { tanh: true }),
        UnaryOp::Silu => go!(UnaryOp::Silu),
        UnaryOp::Hardswish => go!(UnaryOp::Hardswish),
        UnaryOp::Exp => go!(UnaryOp::Exp),
        UnaryOp::Log => go!(UnaryOp::Log),
        UnaryOp::Sin => go!(UnaryOp::Sin),
        UnaryOp::Cos => go!(UnaryOp::Cos),
        UnaryOp::LeakyRelu { slope } => go!(UnaryOp::LeakyRelu { slope }),
        UnaryOp::Elu { alpha } => go!(UnaryOp::Elu { alpha }),
        UnaryOp::Selu => go!(UnaryOp::Selu),
        UnaryOp::Celu { alpha } => go!(UnaryOp::Celu { alpha }),
        UnaryOp::Hardsigmoid => go!(UnaryOp::Hardsigmoid),
        UnaryOp::Softplus { beta, threshold } => go!(UnaryOp::Softplus { beta, threshold }),
        UnaryOp::Softsign => go!(UnaryOp::Softsign),
        UnaryOp::Mish => go!(UnaryOp::Mish),
        UnaryOp::Erf => go!(UnaryOp::Erf),
        UnaryOp::Sign => go!(UnaryOp::Sign),
        UnaryOp::Floor => map1(a, out, |v| v.floor()),
        UnaryOp::Ceil => map1(a, out, |v| v.ceil()),
        UnaryOp::Round => map1(a, out, |v| v.round_ties_even()),
        UnaryOp::Reciprocal => map1(a, out, |v| 1.0 / v),
    }
}

fn binary(op: BinaryOp, a: Val, b: Val, out: &mut [f32]) {
    match op {
        BinaryOp::Add => map2(a, b, out, |x, y| x + y),
        BinaryOp::Sub => map2(a, b, out, |x, y| x - y),
        BinaryOp::Mul => map2(a, b, out, |x, y| x * y),
        BinaryOp::Div => map2(a, b, out, |x, y| x / y),
        BinaryOp::Pow => map2(a, b, out, |x, y| BinaryOp::Pow.apply_f32(x, y)),
        BinaryOp::Maximum => map2(a, b, out, |x, y| BinaryOp::Maximum.apply_f32(x, y)),
        BinaryOp::Minimum => map2(a, b, out, |x, y| BinaryOp::Minimum.apply_f32(x, y)),
    }
}

fn compare(op: CompareOp, a: Val, b: Val, out: &mut [f32]) {
    let f = |c: bool| c as u8 as f32;
    match op {
        CompareOp::Eq => map2(a, b, out, |x, y| f(x == y)),
        CompareOp::Ne => map2(a, b, out, |x, y| f(x != y)),
        CompareOp::Lt => map2(a, b, out, |x, y| f(x < y)),
        CompareOp::Le => map2(a, b, out, |x, y| f(x <= y)),
        CompareOp::Gt => map2(a, b, out, |x, y| f(x > y)),
        CompareOp::Ge => map2(a, b, out, |x, y| f(x >= y)),
    }
}

fn round(d: DType, a: Val, out: &mut [f32]) {
    match d {
        DType::F32 => map1(a, out, |v| v),
        DType::F16 => match a {
            // Through the slice conversions (hardware F16C where the CPU has it).
            Val::V(a) => {
                let mut h = [f16::ZERO; CHUNK];
                let h = &mut h[..a.len()];
                h.convert_from_f32_slice(a);
                h.convert_to_f32_slice(out);
            }
            Val::S(v) => out.fill(round_f32(d, v)),
        },
        d => map1(a, out, |v| round_f32(d, v)),
    }
}

/// Element `i` of a buffer of `dtype`, as f32 (bool as 0/1).
///
/// # Safety
/// `p` holds at least `i + 1` elements of `dtype`.
#[inline(always)]
unsafe fn load_one(dtype: DType, p: *const u8, i: usize) -> f32 {
    // SAFETY: the caller's contract.
    unsafe {
        match dtype {
            DType::F32 => *(p as *const f32).add(i),
            DType::F16 => (*(p as *const f16).add(i)).to_f32(),
            DType::BF16 => (*(p as *const bf16).add(i)).to_f32(),
            DType::I32 => *(p as *const i32).add(i) as f32,
            DType::I64 => *(p as *const i64).add(i) as f32,
            DType::Bool => (*p.add(i) != 0) as u8 as f32,
            // Not fused (graph::passes fuses f32/f16/bf16/bool only); kept total.
            DType::F64 => *(p as *const f64).add(i) as f32,
            DType::I8 => *(p as *const i8).add(i) as f32,
            DType::U8 => *p.add(i) as f32,
            DType::I16 => *(p as *const i16).add(i) as f32,
        }
    }
}

/// Reads `out.len()` elements of `dtype` starting at element `off`, `stride` elements apart.
///
/// # Safety
/// Every element read lies inside the input's buffer (the caller's strides say so).
unsafe fn load_strided(dtype: DType, p: *const u8, off: usize, stride: usize, out: &mut [f32]) {
    let n = out.len();
    // SAFETY: the caller's contract.
    unsafe {
        if stride == 0 {
            out.fill(load_one(dtype, p, off));
            return;
        }
        if stride == 1 {
            match dtype {
                DType::F32 => {
                    out.copy_from_slice(std::slice::from_raw_parts((p as *const f32).add(off), n))
                }
                DType::F16 => std::slice::from_raw_parts((p as *const f16).add(off), n)
                    .convert_to_f32_slice(out),
                DType::BF16 => std::slice::from_raw_parts((p as *const bf16).add(off), n)
                    .convert_to_f32_slice(out),
                DType::I32 => {
                    let s = std::slice::from_raw_parts((p as *const i32).add(off), n);
                    for (o, &v) in out.iter_mut().zip(s) {
                        *o = v as f32;
                    }
                }
                DType::I64 => {
                    let s = std::slice::from_raw_parts((p as *const i64).add(off), n);
                    for (o, &v) in out.iter_mut().zip(s) {
                        *o = v as f32;
                    }
                }
                DType::Bool => {
                    let s = std::slice::from_raw_parts(p.add(off), n);
                    for (o, &v) in out.iter_mut().zip(s) {
                        *o = (v != 0) as u8 as f32;
                    }
                }
                _ => {
                    for (j, o) in out.iter_mut().enumerate() {
                        *o = load_one(dtype, p, off + j);
                    }
                }
            }
            return;
        }
        for (j, o) in out.iter_mut().enumerate() {
            *o = load_one(dtype, p, off + j * stride);
        }
    }
}

/// Fills `out` with input `src` at output elements `at..at + out.len()`.
fn load_input(src: &Source, plan: &FusedPlan, at: usize, out: &mut [f32]) {
    let p = src.base.get() as *const u8;
    // SAFETY: the plan's strides keep every read inside the input (the Device contract).
    unsafe {
        match src.kind {
            InputKind::Scalar => out.fill(load_one(src.dtype, p, 0)),
            InputKind::Dense => load_strided(src.dtype, p, at, 1, out),
            InputKind::Strided => {
                // Walk the chunk in runs along the innermost merged dimension.
                let shape = &plan.shape;
                let nd = shape.len();
                let inner = shape[nd - 1];
                let istride = src.strides[nd - 1];
                let mut idx = vec![0usize; nd];
                let mut rem = at;
                for d in (0..nd).rev() {
                    idx[d] = rem % shape[d];
                    rem /= shape[d];
                }
                let mut done = 0;
                while done < out.len() {
                    let run = (inner - idx[nd - 1]).min(out.len() - done);
                    let off: usize = idx.iter().zip(&src.strides).map(|(i, s)| i * s).sum();
                    load_strided(src.dtype, p, off, istride, &mut out[done..done + run]);
                    done += run;
                    idx[nd - 1] += run;
                    let mut d = nd - 1;
                    while d > 0 && idx[d] == shape[d] {
                        idx[d] = 0;
                        idx[d - 1] += 1;
                        d -= 1;
                    }
                }
            }
        }
    }
}

/// Stores `v` (one per element, or one value for all) as `dtype` at elements `at..at + len`,
/// with the cast rules of `elem::store_f64` (floats to integers truncate, saturating; bool
/// is non-zero).
///
/// # Safety
/// `p` holds at least `at + len` writable elements of `dtype`.
unsafe fn store_run(dtype: DType, p: *mut u8, at: usize, len: usize, v: Val) {
    // SAFETY: the caller's contract.
    unsafe {
        macro_rules! put {
            ($T:ty, $f:expr) => {{
                let o = std::slice::from_raw_parts_mut((p as *mut $T).add(at), len);
                match v {
                    Val::V(s) => {
                        for (o, &x) in o.iter_mut().zip(s) {
                            *o = $f(x);
                        }
                    }
                    Val::S(x) => o.fill($f(x)),
                }
            }};
        }
        match (dtype, v) {
            (DType::F32, Val::V(s)) => {
                std::slice::from_raw_parts_mut((p as *mut f32).add(at), len).copy_from_slice(s)
            }
            (DType::F16, Val::V(s)) => std::slice::from_raw_parts_mut((p as *mut f16).add(at), len)
                .convert_from_f32_slice(s),
            (DType::BF16, Val::V(s)) => {
                std::slice::from_raw_parts_mut((p as *mut bf16).add(at), len)
                    .convert_from_f32_slice(s)
            }
            (DType::F32, _) => put!(f32, |x: f32| x),
            (DType::F16, _) => put!(f16, f16::from_f32),
            (DType::BF16, _) => put!(bf16, bf16::from_f32),
            (DType::I32, _) => put!(i32, |x: f32| x as i64 as i32),
            (DType::I64, _) => put!(i64, |x: f32| x as i64),
            (DType::Bool, _) => put!(u8, |x: f32| (x != 0.0) as u8),
            // Not fused (see load_one); kept total.
            (DType::F64, _) => put!(f64, |x: f32| x as f64),
            (DType::I8, _) => put!(i8, |x: f32| x as i64 as i8),
            (DType::U8, _) => put!(u8, |x: f32| x as i64 as u8),
            (DType::I16, _) => put!(i16, |x: f32| x as i64 as i16),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::shape::{broadcast_strides, contiguous_strides};
    use crate::device::cpu::elem::{load_f64, store_f64};

    /// A host buffer of `dtype` holding pseudo-random values (integers for integer dtypes,
    /// 0/1 for bool), with its values as f64.
    fn buffer(dtype: DType, n: usize, seed: u64) -> (Vec<u8>, Vec<f64>) {
        let mut bytes = vec![0u8; n.max(1) * dtype.size() + 64];
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let u = (x >> 11) as f64 / (1u64 << 53) as f64;
            let v = match dtype {
                DType::I32 | DType::I64 => (u * 20.0 - 10.0).round(),
                DType::Bool => (u < 0.5) as u8 as f64,
                _ => u * 6.0 - 3.0,
            };
            // SAFETY: the buffer holds n elements of dtype.
            unsafe {
                store_f64(dtype, bytes.as_mut_ptr(), i, v);
                vals.push(load_f64(dtype, bytes.as_ptr(), i));
            }
        }
        (bytes, vals)
    }

    /// Runs `prog` with inputs of `shapes` broadcast to `out_shape` (or read through
    /// explicit `strides` where given) and checks every element: bit for bit against
    /// `eval_f32` and within the dtype's tolerance against `eval_f64`.
    fn check(
        prog: &FusedProgram,
        shapes: &[&[usize]],
        strides: &[Option<Vec<usize>>],
        out_shape: &[usize],
    ) {
        let numel: usize = out_shape.iter().product();
        let mut bufs = Vec::new();
        let mut inputs = Vec::new();
        let mut all_strides = Vec::new();
        for (k, s) in shapes.iter().enumerate() {
            let n: usize = s.iter().product();
            let (b, v) = buffer(prog.inputs[k], n, k as u64 + 1);
            let st = strides[k]
                .clone()
                .unwrap_or_else(|| broadcast_strides(s, out_shape));
            inputs.push(FusedInput {
                ptr: DevPtr(b.as_ptr() as u64),
                strides: st.clone(),
            });
            bufs.push((b, v));
            all_strides.push(st);
        }
        let osize = prog.out_dtype.size();
        // Poisoned: an element the loop forgets fails.
        let mut out = vec![0xA5u8; numel * osize + 8];
        fused_elementwise(prog, &inputs, out_shape, DevPtr(out.as_mut_ptr() as u64)).unwrap();
        assert!(
            out[numel * osize..].iter().all(|&b| b == 0xA5),
            "wrote past the end"
        );
        let cstr = contiguous_strides(out_shape);
        let mut regs = Vec::new();
        for i in 0..numel {
            let mut rem = i;
            let mut offs = vec![0usize; shapes.len()];
            for d in (0..out_shape.len()).rev() {
                let ix = rem % out_shape[d];
                rem /= out_shape[d];
                for (k, o) in offs.iter_mut().enumerate() {
                    *o += ix * all_strides[k][d];
                }
            }
            let _ = &cstr;
            let x64: Vec<f64> = (0..shapes.len()).map(|k| bufs[k].1[offs[k]]).collect();
            let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
            // SAFETY: `out` holds numel elements.
            let got = unsafe { load_f64(prog.out_dtype, out.as_ptr(), i) };
            let mut want32 = vec![0u8; 8];
            unsafe {
                store_f64(
                    prog.out_dtype,
                    want32.as_mut_ptr(),
                    0,
                    prog.eval_f32(&x32, &mut regs) as f64,
                );
            }
            let w32 = unsafe { load_f64(prog.out_dtype, want32.as_ptr(), 0) };
            assert!(
                got == w32 || (got.is_nan() && w32.is_nan()),
                "element {i}: {got} but eval_f32 gives {w32} (inputs {x64:?})"
            );
            let w64 = prog.eval_f64(&x64);
            let tol = match prog.out_dtype {
                DType::F32 => 1e-5,
                DType::F16 | DType::BF16 => 1e-2,
                _ => 0.0,
            };
            let w = if prog.out_dtype.is_float() {
                w64
            } else {
                let mut t = [0u8; 8];
                unsafe {
                    store_f64(prog.out_dtype, t.as_mut_ptr(), 0, w64);
                    load_f64(prog.out_dtype, t.as_ptr(), 0)
                }
            };
            assert!(
                (w.is_nan() && got.is_nan()) || (got - w).abs() <= 1e-6 + tol * w.abs(),
                "element {i}: {got} but eval_f64 gives {w} (inputs {x64:?})"
            );
        }
    }

    fn gelu_chain(dt: DType, out: DType) -> FusedProgram {
        // y = gelu(x * a + b) * c
        FusedProgram {
            inputs: vec![dt; 4],
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
            out_dtype: out,
        }
    }

    #[test]
    fn gelu_chain_dense_any_size() {
        let p = gelu_chain(DType::F32, DType::F32);
        for n in [1usize, 7, CHUNK - 1, CHUNK + 3, 3 * GRAIN + 17] {
            let s: &[usize] = &[n];
            check(&p, &[s, s, s, s], &[None, None, None, None], &[n]);
        }
    }

    #[test]
    fn broadcasts_scalars_and_permuted_inputs() {
        // relu((x + bias) * scale) clamped to [lo, x], with bias a row, scale a column,
        // lo a scalar.
        let p = FusedProgram {
            inputs: vec![DType::F32; 4],
            instrs: vec![
                Instr::Load(0),
                Instr::Load(1),
                Instr::Binary(BinaryOp::Add, 0, 1),
                Instr::Load(2),
                Instr::Binary(BinaryOp::Mul, 2, 3),
                Instr::Unary(UnaryOp::Relu, 4),
                Instr::Load(3),
                Instr::ClampT(5, 6, 0),
            ],
            out_dtype: DType::F32,
        };
        let out = [3usize, 5, 7];
        check(
            &p,
            &[&[3, 5, 7], &[7], &[3, 1, 1], &[1]],
            &[None, None, None, None],
            &out,
        );
        // A transposed x: shape [7, 5, 3] read as [3, 5, 7].
        check(
            &p,
            &[&[7, 5, 3], &[7], &[3, 1, 1], &[]],
            &[Some(vec![1, 3, 15]), None, None, None],
            &out,
        );
        // Short rows (inner dimension 2) across chunk boundaries.
        let out = [CHUNK + 5, 2];
        check(
            &p,
            &[&[CHUNK + 5, 2], &[2], &[CHUNK + 5, 1], &[1]],
            &[None, None, None, None],
            &out,
        );
    }

    #[test]
    fn half_inputs_and_outputs_round_like_the_unfused_ops() {
        // f16 x * bf16 y stored as f16 by the unfused mul, then tanh in f16.
        let p = FusedProgram {
            inputs: vec![DType::F16, DType::BF16],
            instrs: vec![
                Instr::Load(0),
                Instr::Load(1),
                Instr::Binary(BinaryOp::Mul, 0, 1),
                Instr::Round(DType::F16, 2),
                Instr::Unary(UnaryOp::Tanh, 3),
            ],
            out_dtype: DType::F16,
        };
        check(&p, &[&[1000], &[1000]], &[None, None], &[1000]);
        let p = FusedProgram {
            out_dtype: DType::BF16,
            ..p
        };
        check(&p, &[&[40, 25], &[25]], &[None, None], &[40, 25]);
        let p = gelu_chain(DType::BF16, DType::BF16);
        let s: &[usize] = &[CHUNK + 9];
        check(
            &p,
            &[s, s, &[1], s],
            &[None, None, None, None],
            &[CHUNK + 9],
        );
    }

    #[test]
    fn integers_bools_comparisons_and_where() {
        // where(c, a, b) > 0.5 with a i32, b i64, c bool; stored as bool, and the where
        // stored as i64 and i32.
        let sel = vec![
            Instr::Load(0),
            Instr::Load(1),
            Instr::Load(2),
            Instr::Where(2, 0, 1),
        ];
        let p = FusedProgram {
            inputs: vec![DType::I32, DType::I64, DType::Bool],
            instrs: [
                sel.clone(),
                vec![Instr::Const(0.5), Instr::Compare(CompareOp::Gt, 3, 4)],
            ]
            .concat(),
            out_dtype: DType::Bool,
        };
        check(
            &p,
            &[&[9, 11], &[11], &[9, 1]],
            &[None, None, None],
            &[9, 11],
        );
        for out in [DType::I64, DType::I32, DType::F32] {
            let p = FusedProgram {
                inputs: vec![DType::I32, DType::I64, DType::Bool],
                instrs: sel.clone(),
                out_dtype: out,
            };
            check(&p, &[&[300], &[300], &[300]], &[None, None, None], &[300]);
        }
        // Every comparison, and Round to an integer.
        for op in [
            CompareOp::Eq,
            CompareOp::Ne,
            CompareOp::Lt,
            CompareOp::Le,
            CompareOp::Gt,
            CompareOp::Ge,
        ] {
            let p = FusedProgram {
                inputs: vec![DType::F32, DType::I32],
                instrs: vec![
                    Instr::Load(0),
                    Instr::Round(DType::I32, 0),
                    Instr::Load(1),
                    Instr::Compare(op, 1, 2),
                ],
                out_dtype: DType::F32,
            };
            check(&p, &[&[500], &[500]], &[None, None], &[500]);
        }
    }

    #[test]
    fn every_unary_and_binary_op() {
        let unary = [
            UnaryOp::Relu,
            UnaryOp::Sigmoid,
            UnaryOp::Tanh,
            UnaryOp::Gelu { tanh: false },
            UnaryOp::Gelu { tanh: true },
            UnaryOp::Silu,
            UnaryOp::Hardswish,
            UnaryOp::Neg,
            UnaryOp::Abs,
            UnaryOp::Sqrt,
            UnaryOp::Exp,
            UnaryOp::Log,
            UnaryOp::Sin,
            UnaryOp::Cos,
            UnaryOp::Clamp {
                min: -1.0,
                max: 0.5,
            },
            UnaryOp::LeakyRelu { slope: 0.1 },
            UnaryOp::Elu { alpha: 1.5 },
            UnaryOp::Selu,
            UnaryOp::Celu { alpha: 0.5 },
            UnaryOp::Hardsigmoid,
            UnaryOp::Softplus {
                beta: 2.0,
                threshold: 3.0,
            },
            UnaryOp::Softsign,
            UnaryOp::Mish,
            UnaryOp::Erf,
            UnaryOp::Sign,
            UnaryOp::Floor,
            UnaryOp::Ceil,
            UnaryOp::Round,
            UnaryOp::Reciprocal,
        ];
        for op in unary {
            let p = FusedProgram {
                inputs: vec![DType::F32],
                instrs: vec![Instr::Load(0), Instr::Unary(op, 0)],
                out_dtype: DType::F32,
            };
            check(&p, &[&[257]], &[None], &[257]);
        }
        for op in [
            BinaryOp::Add,
            BinaryOp::Sub,
            BinaryOp::Mul,
            BinaryOp::Div,
            BinaryOp::Pow,
            BinaryOp::Maximum,
            BinaryOp::Minimum,
        ] {
            // A scalar constant on each side, and two vectors.
            let p = FusedProgram {
                inputs: vec![DType::F32, DType::F32],
                instrs: vec![
                    Instr::Load(0),
                    Instr::Const(1.5),
                    Instr::Binary(op, 0, 1),
                    Instr::Binary(op, 1, 2),
                    Instr::Load(1),
                    Instr::Binary(op, 3, 4),
                ],
                out_dtype: DType::F32,
            };
            check(&p, &[&[33], &[33]], &[None, None], &[33]);
        }
    }

    #[test]
    fn empty_scalar_and_uniform_outputs() {
        let p = gelu_chain(DType::F32, DType::F32);
        // Empty: nothing is read or written (NULL buffers are fine).
        let none = FusedInput {
            ptr: DevPtr::NULL,
            strides: vec![5, 1],
        };
        let inputs = vec![none.clone(), none.clone(), none.clone(), none];
        fused_elementwise(&p, &inputs, &[0, 5], DevPtr::NULL).unwrap();
        // A 0-d output, and an output where every input is a scalar.
        check(&p, &[&[], &[], &[], &[]], &[None, None, None, None], &[]);
        let one: &[usize] = &[1];
        check(
            &p,
            &[one, one, one, one],
            &[None, None, None, None],
            &[4, 1, 3],
        );
        // Size-1 dimensions in the output.
        let s: &[usize] = &[2, 1, 5];
        check(&p, &[s, s, &[1, 1, 5], s], &[None, None, None, None], s);
    }

    #[test]
    fn in_place_over_an_input() {
        // out = x: every input is read before the chunk's store.
        let p = gelu_chain(DType::F32, DType::F32);
        let n = 3 * CHUNK + 5;
        let (mut xb, x) = buffer(DType::F32, n, 1);
        let xp = DevPtr(xb.as_mut_ptr() as u64);
        let (ab, a) = buffer(DType::F32, n, 2);
        let (bb, b) = buffer(DType::F32, 1, 3);
        let i = |buf: &Vec<u8>, st: usize| FusedInput {
            ptr: DevPtr(buf.as_ptr() as u64),
            strides: vec![st],
        };
        let xi = FusedInput {
            ptr: xp,
            strides: vec![1],
        };
        let ins = [xi.clone(), i(&ab, 1), i(&bb, 0), xi];
        fused_elementwise(&p, &ins, &[n], xp).unwrap();
        let mut regs = Vec::new();
        for j in 0..n {
            let want = p.eval_f32(
                &[x[j] as f32, a[j] as f32, b[0] as f32, x[j] as f32],
                &mut regs,
            );
            // SAFETY: xb holds n f32.
            let got = unsafe { *(xp.0 as *const f32).add(j) };
            assert!(
                got == want || (got.is_nan() && want.is_nan()),
                "{j}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn bad_arguments_are_errors() {
        let p = gelu_chain(DType::F32, DType::F32);
        let x = [0f32; 4];
        let i = FusedInput {
            ptr: DevPtr(x.as_ptr() as u64),
            strides: vec![1],
        };
        let mut out = [0f32; 4];
        let o = DevPtr(out.as_mut_ptr() as u64);
        assert!(fused_elementwise(&p, std::slice::from_ref(&i), &[4], o).is_err());
        let four = vec![i.clone(), i.clone(), i.clone(), i.clone()];
        assert!(fused_elementwise(&p, &four, &[2, 2], o).is_err());
        assert!(fused_elementwise(&p, &four, &[4], DevPtr::NULL).is_err());
        fused_elementwise(&p, &four, &[4], o).unwrap();
    }
}
