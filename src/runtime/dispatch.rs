//! The runtime call of every op of the registry: [`run`] takes an [`Op`] (kind and
//! attributes), its tensor inputs in the table's order (an optional input is `None`;
//! a list input takes all of them) and one [`Grad`] per output, and returns each
//! output that was made (`None` for a skipped or given one).
//!
//! @generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).

#![allow(unused_imports, unused_variables, clippy::get_first, clippy::match_single_binding, clippy::needless_borrow)]

use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::LossKind;
use crate::ops::data::ScatterReduce;
use crate::ops::optim::{AdamAttrs, SgdAttrs};
use crate::ops::reduce::ReduceOp;
use crate::ops::registry::*;
use crate::runtime::eager::Grad;
use crate::runtime::*;
use crate::{Error, Result};

fn required_input<'a>(op: &str, inputs: &[Option<&'a Tensor>], i: usize, name: &str) -> Result<&'a Tensor> {
    inputs.get(i).copied().flatten().ok_or_else(|| Error::invalid(format!("{op}: input {i} ('{name}') is missing")))
}

fn dest<'a>(g: Option<&Grad<'a>>) -> Option<&'a Tensor> {
    match g {
        Some(Grad::Into(t)) => Some(t),
        _ => None,
    }
}

fn grad<'a>(g: Option<&Grad<'a>>) -> Grad<'a> {
    g.copied().unwrap_or(Grad::New)
}

fn wanted(g: Option<&Grad<'_>>) -> bool {
    !matches!(g, Some(Grad::Skip))
}

/// Runs `op` eagerly on `stream` (None: the inputs' device's default stream).
pub fn run(
    stream: Option<&Stream>,
    op: &Op,
    inputs: &[Option<&Tensor>],
    outputs: &[Grad<'_>],
) -> Result<Vec<Option<Tensor>>> {
    let s = stream;
    match op {
        Op::AddRelu => {
            let a = required_input("add_relu", inputs, 0, "a")?;
            let b = required_input("add_relu", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::add_relu(s, a, b, out)?)])
        }
        Op::MulAdd => {
            let a = required_input("mul_add", inputs, 0, "a")?;
            let b = required_input("mul_add", inputs, 1, "b")?;
            let c = required_input("mul_add", inputs, 2, "c")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::mul_add(s, a, b, c, out)?)])
        }
        Op::Add => {
            let a = required_input("add", inputs, 0, "a")?;
            let b = required_input("add", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::binary(s, BinaryOp::Add, a, b, out)?)])
        }
        Op::Relu => {
            let x = required_input("relu", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Relu, x, out)?)])
        }
        Op::Sub => {
            let a = required_input("sub", inputs, 0, "a")?;
            let b = required_input("sub", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::binary(s, BinaryOp::Sub, a, b, out)?)])
        }
        Op::Mul => {
            let a = required_input("mul", inputs, 0, "a")?;
            let b = required_input("mul", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::binary(s, BinaryOp::Mul, a, b, out)?)])
        }
        Op::Div => {
            let a = required_input("div", inputs, 0, "a")?;
            let b = required_input("div", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::binary(s, BinaryOp::Div, a, b, out)?)])
        }
        Op::Pow => {
            let a = required_input("pow", inputs, 0, "a")?;
            let b = required_input("pow", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::binary(s, BinaryOp::Pow, a, b, out)?)])
        }
        Op::Maximum => {
            let a = required_input("maximum", inputs, 0, "a")?;
            let b = required_input("maximum", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::binary(s, BinaryOp::Maximum, a, b, out)?)])
        }
        Op::Minimum => {
            let a = required_input("minimum", inputs, 0, "a")?;
            let b = required_input("minimum", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::binary(s, BinaryOp::Minimum, a, b, out)?)])
        }
        Op::Neg => {
            let x = required_input("neg", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Neg, x, out)?)])
        }
        Op::Abs => {
            let x = required_input("abs", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Abs, x, out)?)])
        }
        Op::Sqrt => {
            let x = required_input("sqrt", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Sqrt, x, out)?)])
        }
        Op::Exp => {
            let x = required_input("exp", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Exp, x, out)?)])
        }
        Op::Log => {
            let x = required_input("log", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Log, x, out)?)])
        }
        Op::Sin => {
            let x = required_input("sin", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Sin, x, out)?)])
        }
        Op::Cos => {
            let x = required_input("cos", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Cos, x, out)?)])
        }
        Op::Sigmoid => {
            let x = required_input("sigmoid", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Sigmoid, x, out)?)])
        }
        Op::Tanh => {
            let x = required_input("tanh", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Tanh, x, out)?)])
        }
        Op::Silu => {
            let x = required_input("silu", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Silu, x, out)?)])
        }
        Op::Hardswish => {
            let x = required_input("hardswish", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Hardswish, x, out)?)])
        }
        Op::Gelu(attrs) => {
            let x = required_input("gelu", inputs, 0, "x")?;
            let approximate = attrs.approximate;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, approximate, x, out)?)])
        }
        Op::Clamp(attrs) => {
            let x = required_input("clamp", inputs, 0, "x")?;
            let min = attrs.min;
            let max = attrs.max;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::clamp(s, x, min, max, out)?)])
        }
        Op::LeakyRelu(attrs) => {
            let x = required_input("leaky_relu", inputs, 0, "x")?;
            let negative_slope = attrs.negative_slope;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::LeakyRelu { slope: negative_slope }, x, out)?)])
        }
        Op::Elu(attrs) => {
            let x = required_input("elu", inputs, 0, "x")?;
            let alpha = attrs.alpha;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Elu { alpha }, x, out)?)])
        }
        Op::Selu => {
            let x = required_input("selu", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Selu, x, out)?)])
        }
        Op::Celu(attrs) => {
            let x = required_input("celu", inputs, 0, "x")?;
            let alpha = attrs.alpha;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Celu { alpha }, x, out)?)])
        }
        Op::Hardsigmoid => {
            let x = required_input("hardsigmoid", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Hardsigmoid, x, out)?)])
        }
        Op::Softplus(attrs) => {
            let x = required_input("softplus", inputs, 0, "x")?;
            let beta = attrs.beta;
            let threshold = attrs.threshold;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Softplus { beta, threshold }, x, out)?)])
        }
        Op::Softsign => {
            let x = required_input("softsign", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Softsign, x, out)?)])
        }
        Op::Mish => {
            let x = required_input("mish", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Mish, x, out)?)])
        }
        Op::Erf => {
            let x = required_input("erf", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Erf, x, out)?)])
        }
        Op::Sign => {
            let x = required_input("sign", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Sign, x, out)?)])
        }
        Op::Floor => {
            let x = required_input("floor", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Floor, x, out)?)])
        }
        Op::Ceil => {
            let x = required_input("ceil", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Ceil, x, out)?)])
        }
        Op::Round => {
            let x = required_input("round", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Round, x, out)?)])
        }
        Op::Reciprocal => {
            let x = required_input("reciprocal", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary(s, UnaryOp::Reciprocal, x, out)?)])
        }
        Op::ReluBackward => {
            let x = required_input("relu_backward", inputs, 0, "x")?;
            let dy = required_input("relu_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Relu, x, dy, out)?)])
        }
        Op::NegBackward => {
            let x = required_input("neg_backward", inputs, 0, "x")?;
            let dy = required_input("neg_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Neg, x, dy, out)?)])
        }
        Op::AbsBackward => {
            let x = required_input("abs_backward", inputs, 0, "x")?;
            let dy = required_input("abs_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Abs, x, dy, out)?)])
        }
        Op::SqrtBackward => {
            let x = required_input("sqrt_backward", inputs, 0, "x")?;
            let dy = required_input("sqrt_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Sqrt, x, dy, out)?)])
        }
        Op::ExpBackward => {
            let x = required_input("exp_backward", inputs, 0, "x")?;
            let dy = required_input("exp_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Exp, x, dy, out)?)])
        }
        Op::LogBackward => {
            let x = required_input("log_backward", inputs, 0, "x")?;
            let dy = required_input("log_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Log, x, dy, out)?)])
        }
        Op::SinBackward => {
            let x = required_input("sin_backward", inputs, 0, "x")?;
            let dy = required_input("sin_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Sin, x, dy, out)?)])
        }
        Op::CosBackward => {
            let x = required_input("cos_backward", inputs, 0, "x")?;
            let dy = required_input("cos_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Cos, x, dy, out)?)])
        }
        Op::SigmoidBackward => {
            let x = required_input("sigmoid_backward", inputs, 0, "x")?;
            let dy = required_input("sigmoid_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Sigmoid, x, dy, out)?)])
        }
        Op::TanhBackward => {
            let x = required_input("tanh_backward", inputs, 0, "x")?;
            let dy = required_input("tanh_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Tanh, x, dy, out)?)])
        }
        Op::SiluBackward => {
            let x = required_input("silu_backward", inputs, 0, "x")?;
            let dy = required_input("silu_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Silu, x, dy, out)?)])
        }
        Op::HardswishBackward => {
            let x = required_input("hardswish_backward", inputs, 0, "x")?;
            let dy = required_input("hardswish_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Hardswish, x, dy, out)?)])
        }
        Op::GeluBackward(attrs) => {
            let x = required_input("gelu_backward", inputs, 0, "x")?;
            let dy = required_input("gelu_backward", inputs, 1, "dy")?;
            let approximate = attrs.approximate;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, approximate, x, dy, out)?)])
        }
        Op::ClampBackward(attrs) => {
            let x = required_input("clamp_backward", inputs, 0, "x")?;
            let dy = required_input("clamp_backward", inputs, 1, "dy")?;
            let min = attrs.min;
            let max = attrs.max;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::clamp_backward(s, x, dy, min, max, out)?)])
        }
        Op::LeakyReluBackward(attrs) => {
            let x = required_input("leaky_relu_backward", inputs, 0, "x")?;
            let dy = required_input("leaky_relu_backward", inputs, 1, "dy")?;
            let negative_slope = attrs.negative_slope;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::LeakyRelu { slope: negative_slope }, x, dy, out)?)])
        }
        Op::EluBackward(attrs) => {
            let x = required_input("elu_backward", inputs, 0, "x")?;
            let dy = required_input("elu_backward", inputs, 1, "dy")?;
            let alpha = attrs.alpha;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Elu { alpha }, x, dy, out)?)])
        }
        Op::SeluBackward => {
            let x = required_input("selu_backward", inputs, 0, "x")?;
            let dy = required_input("selu_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Selu, x, dy, out)?)])
        }
        Op::CeluBackward(attrs) => {
            let x = required_input("celu_backward", inputs, 0, "x")?;
            let dy = required_input("celu_backward", inputs, 1, "dy")?;
            let alpha = attrs.alpha;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Celu { alpha }, x, dy, out)?)])
        }
        Op::HardsigmoidBackward => {
            let x = required_input("hardsigmoid_backward", inputs, 0, "x")?;
            let dy = required_input("hardsigmoid_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Hardsigmoid, x, dy, out)?)])
        }
        Op::SoftplusBackward(attrs) => {
            let x = required_input("softplus_backward", inputs, 0, "x")?;
            let dy = required_input("softplus_backward", inputs, 1, "dy")?;
            let beta = attrs.beta;
            let threshold = attrs.threshold;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Softplus { beta, threshold }, x, dy, out)?)])
        }
        Op::SoftsignBackward => {
            let x = required_input("softsign_backward", inputs, 0, "x")?;
            let dy = required_input("softsign_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Softsign, x, dy, out)?)])
        }
        Op::MishBackward => {
            let x = required_input("mish_backward", inputs, 0, "x")?;
            let dy = required_input("mish_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Mish, x, dy, out)?)])
        }
        Op::ErfBackward => {
            let x = required_input("erf_backward", inputs, 0, "x")?;
            let dy = required_input("erf_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Erf, x, dy, out)?)])
        }
        Op::SignBackward => {
            let x = required_input("sign_backward", inputs, 0, "x")?;
            let dy = required_input("sign_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Sign, x, dy, out)?)])
        }
        Op::FloorBackward => {
            let x = required_input("floor_backward", inputs, 0, "x")?;
            let dy = required_input("floor_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Floor, x, dy, out)?)])
        }
        Op::CeilBackward => {
            let x = required_input("ceil_backward", inputs, 0, "x")?;
            let dy = required_input("ceil_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Ceil, x, dy, out)?)])
        }
        Op::RoundBackward => {
            let x = required_input("round_backward", inputs, 0, "x")?;
            let dy = required_input("round_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Round, x, dy, out)?)])
        }
        Op::ReciprocalBackward => {
            let x = required_input("reciprocal_backward", inputs, 0, "x")?;
            let dy = required_input("reciprocal_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::unary_backward(s, UnaryOp::Reciprocal, x, dy, out)?)])
        }
        Op::Prelu => {
            let x = required_input("prelu", inputs, 0, "x")?;
            let weight = required_input("prelu", inputs, 1, "weight")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::prelu(s, x, weight, out)?)])
        }
        Op::PreluBackward => {
            let x = required_input("prelu_backward", inputs, 0, "x")?;
            let weight = required_input("prelu_backward", inputs, 1, "weight")?;
            let dy = required_input("prelu_backward", inputs, 2, "dy")?;
            let dx = dest(outputs.get(0));
            let dweight = dest(outputs.get(1));
            let (r0, r1) = elementwise::prelu_backward(s, x, weight, dy, dx, dweight)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::AddBackward => {
            let a = required_input("add_backward", inputs, 0, "a")?;
            let b = required_input("add_backward", inputs, 1, "b")?;
            let dy = required_input("add_backward", inputs, 2, "dy")?;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::binary_backward(s, BinaryOp::Add, a, b, dy, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::SubBackward => {
            let a = required_input("sub_backward", inputs, 0, "a")?;
            let b = required_input("sub_backward", inputs, 1, "b")?;
            let dy = required_input("sub_backward", inputs, 2, "dy")?;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::binary_backward(s, BinaryOp::Sub, a, b, dy, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::MulBackward => {
            let a = required_input("mul_backward", inputs, 0, "a")?;
            let b = required_input("mul_backward", inputs, 1, "b")?;
            let dy = required_input("mul_backward", inputs, 2, "dy")?;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::binary_backward(s, BinaryOp::Mul, a, b, dy, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::DivBackward => {
            let a = required_input("div_backward", inputs, 0, "a")?;
            let b = required_input("div_backward", inputs, 1, "b")?;
            let dy = required_input("div_backward", inputs, 2, "dy")?;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::binary_backward(s, BinaryOp::Div, a, b, dy, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::PowBackward => {
            let a = required_input("pow_backward", inputs, 0, "a")?;
            let b = required_input("pow_backward", inputs, 1, "b")?;
            let dy = required_input("pow_backward", inputs, 2, "dy")?;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::binary_backward(s, BinaryOp::Pow, a, b, dy, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::MaximumBackward => {
            let a = required_input("maximum_backward", inputs, 0, "a")?;
            let b = required_input("maximum_backward", inputs, 1, "b")?;
            let dy = required_input("maximum_backward", inputs, 2, "dy")?;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::binary_backward(s, BinaryOp::Maximum, a, b, dy, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::MinimumBackward => {
            let a = required_input("minimum_backward", inputs, 0, "a")?;
            let b = required_input("minimum_backward", inputs, 1, "b")?;
            let dy = required_input("minimum_backward", inputs, 2, "dy")?;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::binary_backward(s, BinaryOp::Minimum, a, b, dy, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::Eq => {
            let a = required_input("eq", inputs, 0, "a")?;
            let b = required_input("eq", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::compare(s, CompareOp::Eq, a, b, out)?)])
        }
        Op::Ne => {
            let a = required_input("ne", inputs, 0, "a")?;
            let b = required_input("ne", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::compare(s, CompareOp::Ne, a, b, out)?)])
        }
        Op::Lt => {
            let a = required_input("lt", inputs, 0, "a")?;
            let b = required_input("lt", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::compare(s, CompareOp::Lt, a, b, out)?)])
        }
        Op::Le => {
            let a = required_input("le", inputs, 0, "a")?;
            let b = required_input("le", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::compare(s, CompareOp::Le, a, b, out)?)])
        }
        Op::Gt => {
            let a = required_input("gt", inputs, 0, "a")?;
            let b = required_input("gt", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::compare(s, CompareOp::Gt, a, b, out)?)])
        }
        Op::Ge => {
            let a = required_input("ge", inputs, 0, "a")?;
            let b = required_input("ge", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::compare(s, CompareOp::Ge, a, b, out)?)])
        }
        Op::Where => {
            let cond = required_input("where", inputs, 0, "cond")?;
            let a = required_input("where", inputs, 1, "a")?;
            let b = required_input("where", inputs, 2, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::where_(s, cond, a, b, out)?)])
        }
        Op::WhereCompare(attrs) => {
            let op = attrs.op;
            let a = required_input("where_compare", inputs, 0, "a")?;
            let b = required_input("where_compare", inputs, 1, "b")?;
            let x = required_input("where_compare", inputs, 2, "x")?;
            let y = required_input("where_compare", inputs, 3, "y")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::where_compare(s, op, a, b, x, y, out)?)])
        }
        Op::ClampTensor => {
            let x = required_input("clamp_tensor", inputs, 0, "x")?;
            let min = inputs.get(1).copied().flatten();
            let max = inputs.get(2).copied().flatten();
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::clamp_tensor(s, x, min, max, out)?)])
        }
        Op::ClampTensorBackward => {
            let x = required_input("clamp_tensor_backward", inputs, 0, "x")?;
            let min = inputs.get(1).copied().flatten();
            let max = inputs.get(2).copied().flatten();
            let dy = required_input("clamp_tensor_backward", inputs, 3, "dy")?;
            let dx = grad(outputs.get(0));
            let dmin = grad(outputs.get(1));
            let dmax = grad(outputs.get(2));
            let [r0, r1, r2] = elementwise::clamp_tensor_backward(s, x, min, max, dy, [dx, dmin, dmax])?;
            Ok(vec![r0, r1, r2])
        }
        Op::WhereBackward => {
            let cond = required_input("where_backward", inputs, 0, "cond")?;
            let a = required_input("where_backward", inputs, 1, "a")?;
            let b = required_input("where_backward", inputs, 2, "b")?;
            let dy = required_input("where_backward", inputs, 3, "dy")?;
            let da = grad(outputs.get(0));
            let db = grad(outputs.get(1));
            let [r0, r1] = elementwise::where_backward(s, cond, a, b, dy, [da, db])?;
            Ok(vec![r0, r1])
        }
        Op::AddScaled(attrs) => {
            let a = required_input("add_scaled", inputs, 0, "a")?;
            let b = required_input("add_scaled", inputs, 1, "b")?;
            let alpha = attrs.alpha;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::add_scaled(s, BinaryOp::Add, a, b, alpha, out)?)])
        }
        Op::SubScaled(attrs) => {
            let a = required_input("sub_scaled", inputs, 0, "a")?;
            let b = required_input("sub_scaled", inputs, 1, "b")?;
            let alpha = attrs.alpha;
            let out = dest(outputs.get(0));
            Ok(vec![Some(elementwise::add_scaled(s, BinaryOp::Sub, a, b, alpha, out)?)])
        }
        Op::AddScaledBackward(attrs) => {
            let a = required_input("add_scaled_backward", inputs, 0, "a")?;
            let b = required_input("add_scaled_backward", inputs, 1, "b")?;
            let dy = required_input("add_scaled_backward", inputs, 2, "dy")?;
            let alpha = attrs.alpha;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::add_scaled_backward(s, BinaryOp::Add, a, b, dy, alpha, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::SubScaledBackward(attrs) => {
            let a = required_input("sub_scaled_backward", inputs, 0, "a")?;
            let b = required_input("sub_scaled_backward", inputs, 1, "b")?;
            let dy = required_input("sub_scaled_backward", inputs, 2, "dy")?;
            let alpha = attrs.alpha;
            let da = dest(outputs.get(0));
            let db = dest(outputs.get(1));
            let (r0, r1) = elementwise::add_scaled_backward(s, BinaryOp::Sub, a, b, dy, alpha, da, db)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::Sum(attrs) => {
            let x = required_input("sum", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce(s, ReduceOp::Sum, x, dims, keepdim, out)?)])
        }
        Op::SumBackward(attrs) => {
            let x = required_input("sum_backward", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let dy = required_input("sum_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce_backward(s, ReduceOp::Sum, x, dims, keepdim, dy, out)?)])
        }
        Op::Mean(attrs) => {
            let x = required_input("mean", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce(s, ReduceOp::Mean, x, dims, keepdim, out)?)])
        }
        Op::MeanBackward(attrs) => {
            let x = required_input("mean_backward", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let dy = required_input("mean_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce_backward(s, ReduceOp::Mean, x, dims, keepdim, dy, out)?)])
        }
        Op::Max(attrs) => {
            let x = required_input("max", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce(s, ReduceOp::Max, x, dims, keepdim, out)?)])
        }
        Op::MaxBackward(attrs) => {
            let x = required_input("max_backward", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let dy = required_input("max_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce_backward(s, ReduceOp::Max, x, dims, keepdim, dy, out)?)])
        }
        Op::Min(attrs) => {
            let x = required_input("min", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce(s, ReduceOp::Min, x, dims, keepdim, out)?)])
        }
        Op::MinBackward(attrs) => {
            let x = required_input("min_backward", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let dy = required_input("min_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce_backward(s, ReduceOp::Min, x, dims, keepdim, dy, out)?)])
        }
        Op::Prod(attrs) => {
            let x = required_input("prod", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce(s, ReduceOp::Prod, x, dims, keepdim, out)?)])
        }
        Op::ProdBackward(attrs) => {
            let x = required_input("prod_backward", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let dy = required_input("prod_backward", inputs, 1, "dy")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce_backward(s, ReduceOp::Prod, x, dims, keepdim, dy, out)?)])
        }
        Op::ArgmaxAll(attrs) => {
            let x = required_input("argmax_all", inputs, 0, "x")?;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::argmax_all(s, x, keepdim, out)?)])
        }
        Op::Argmax(attrs) => {
            let x = required_input("argmax", inputs, 0, "x")?;
            let dim = attrs.dim;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::argmax(s, x, dim, keepdim, out)?)])
        }
        Op::MaxDim(attrs) => {
            let x = required_input("max_dim", inputs, 0, "x")?;
            let dim = attrs.dim;
            let keepdim = attrs.keepdim;
            let values = dest(outputs.get(0));
            let indices = dest(outputs.get(1));
            let (r0, r1) = reduce::max_dim(s, ReduceOp::Max, x, dim, keepdim, values, indices)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::MinDim(attrs) => {
            let x = required_input("min_dim", inputs, 0, "x")?;
            let dim = attrs.dim;
            let keepdim = attrs.keepdim;
            let values = dest(outputs.get(0));
            let indices = dest(outputs.get(1));
            let (r0, r1) = reduce::max_dim(s, ReduceOp::Min, x, dim, keepdim, values, indices)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::MaxDimBackward(attrs) => {
            let dy = required_input("max_dim_backward", inputs, 0, "dy")?;
            let indices = required_input("max_dim_backward", inputs, 1, "indices")?;
            let x_shape = &attrs.x_shape;
            let dim = attrs.dim;
            let keepdim = attrs.keepdim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::max_dim_backward(s, dy, indices, &x_shape, dim, keepdim, out)?)])
        }
        Op::SumDtype(attrs) => {
            let x = required_input("sum_dtype", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let dtype = attrs.dtype;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce_dtype(s, ReduceOp::Sum, x, dims, keepdim, dtype, out)?)])
        }
        Op::ProdDtype(attrs) => {
            let x = required_input("prod_dtype", inputs, 0, "x")?;
            let dims: &[i64] = &attrs.dims;
            let keepdim = attrs.keepdim;
            let dtype = attrs.dtype;
            let out = dest(outputs.get(0));
            Ok(vec![Some(reduce::reduce_dtype(s, ReduceOp::Prod, x, dims, keepdim, dtype, out)?)])
        }
        Op::Permute(attrs) => {
            let x = required_input("permute", inputs, 0, "x")?;
            let perm: &[i64] = &attrs.perm;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::permute(s, x, perm, out)?)])
        }
        Op::Concat(attrs) => {
            let xs: Vec<&Tensor> = inputs.iter().copied().flatten().collect();
            let xs: &[&Tensor] = &xs;
            let dim = attrs.dim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::concat(s, xs, dim, out)?)])
        }
        Op::Slice(attrs) => {
            let x = required_input("slice", inputs, 0, "x")?;
            let dim = attrs.dim;
            let start = attrs.start;
            let end = attrs.end;
            let step = attrs.step;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::slice(s, x, dim, start, end, step, out)?)])
        }
        Op::Cast(attrs) => {
            let x = required_input("cast", inputs, 0, "x")?;
            let dtype = attrs.dtype;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::cast(s, x, dtype, out)?)])
        }
        Op::Fill(attrs) => {
            let x = required_input("fill", inputs, 0, "x")?;
            let value = attrs.value;
            data::fill(s, x, value)?;
            Ok(vec![])
        }
        Op::Copy => {
            let src = required_input("copy", inputs, 0, "src")?;
            let dst = required_input("copy", inputs, 1, "dst")?;
            data::copy(s, src, dst)?;
            Ok(vec![])
        }
        Op::Embedding => {
            let weight = required_input("embedding", inputs, 0, "weight")?;
            let indices = required_input("embedding", inputs, 1, "indices")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::embedding(s, weight, indices, out)?)])
        }
        Op::EmbeddingBackward(attrs) => {
            let dy = required_input("embedding_backward", inputs, 0, "dy")?;
            let indices = required_input("embedding_backward", inputs, 1, "indices")?;
            let num_embeddings = attrs.num_embeddings;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::embedding_backward(s, dy, indices, num_embeddings, out)?)])
        }
        Op::PermuteBackward(attrs) => {
            let dy = required_input("permute_backward", inputs, 0, "dy")?;
            let perm: &[i64] = &attrs.perm;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::permute_backward(s, dy, perm, out)?)])
        }
        Op::ToChannelsLast => {
            let x = required_input("to_channels_last", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::to_channels_last(s, x, out)?)])
        }
        Op::ToChannelsFirst => {
            let x = required_input("to_channels_first", inputs, 0, "x")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::to_channels_first(s, x, out)?)])
        }
        Op::ConcatBackward(attrs) => {
            let dy = required_input("concat_backward", inputs, 0, "dy")?;
            let xs: Vec<&Tensor> = inputs.get(1..).unwrap_or(&[]).iter().copied().flatten().collect();
            let xs: &[&Tensor] = &xs;
            let dim = attrs.dim;
            let index = attrs.index;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::concat_backward(s, dy, xs, dim, index, out)?)])
        }
        Op::SliceBackward(attrs) => {
            let dy = required_input("slice_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let dim = attrs.dim;
            let start = attrs.start;
            let end = attrs.end;
            let step = attrs.step;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::slice_backward(s, dy, &x_shape, dim, start, end, step, out)?)])
        }
        Op::Gather(attrs) => {
            let x = required_input("gather", inputs, 0, "x")?;
            let dim = attrs.dim;
            let index = required_input("gather", inputs, 1, "index")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::gather(s, x, dim, index, out)?)])
        }
        Op::GatherBackward(attrs) => {
            let dy = required_input("gather_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let dim = attrs.dim;
            let index = required_input("gather_backward", inputs, 1, "index")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::gather_backward(s, dy, &x_shape, dim, index, out)?)])
        }
        Op::Take(attrs) => {
            let x = required_input("take", inputs, 0, "x")?;
            let axis = attrs.axis;
            let indices = required_input("take", inputs, 1, "indices")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::take(s, x, axis, indices, out)?)])
        }
        Op::TakeBackward(attrs) => {
            let dy = required_input("take_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let axis = attrs.axis;
            let indices = required_input("take_backward", inputs, 1, "indices")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::take_backward(s, dy, &x_shape, axis, indices, out)?)])
        }
        Op::Pad(attrs) => {
            let x = required_input("pad", inputs, 0, "x")?;
            let pads: &[i64] = &attrs.pads;
            let mode = attrs.mode;
            let value = attrs.value;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::pad(s, x, pads, mode, value, out)?)])
        }
        Op::PadBackward(attrs) => {
            let dy = required_input("pad_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let pads: &[i64] = &attrs.pads;
            let mode = attrs.mode;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::pad_backward(s, dy, &x_shape, pads, mode, out)?)])
        }
        Op::IndexSelect(attrs) => {
            let x = required_input("index_select", inputs, 0, "x")?;
            let dim = attrs.dim;
            let index = required_input("index_select", inputs, 1, "index")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::index_select(s, x, dim, index, out)?)])
        }
        Op::IndexSelectBackward(attrs) => {
            let dy = required_input("index_select_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let dim = attrs.dim;
            let index = required_input("index_select_backward", inputs, 1, "index")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::index_select_backward(s, dy, &x_shape, dim, index, out)?)])
        }
        Op::Expand(attrs) => {
            let x = required_input("expand", inputs, 0, "x")?;
            let shape: &[i64] = &attrs.shape;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::expand(s, x, shape, out)?)])
        }
        Op::ExpandBackward(attrs) => {
            let dy = required_input("expand_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::expand_backward(s, dy, &x_shape, out)?)])
        }
        Op::Tile(attrs) => {
            let x = required_input("tile", inputs, 0, "x")?;
            let repeats: &[i64] = &attrs.repeats;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::tile(s, x, repeats, out)?)])
        }
        Op::TileBackward(attrs) => {
            let dy = required_input("tile_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let repeats: &[i64] = &attrs.repeats;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::tile_backward(s, dy, &x_shape, repeats, out)?)])
        }
        Op::Flatten(attrs) => {
            let x = required_input("flatten", inputs, 0, "x")?;
            let start_dim = attrs.start_dim;
            let end_dim = attrs.end_dim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::flatten(s, x, start_dim, end_dim, out)?)])
        }
        Op::Cumsum(attrs) => {
            let x = required_input("cumsum", inputs, 0, "x")?;
            let dim = attrs.dim;
            let exclusive = attrs.exclusive;
            let reverse = attrs.reverse;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::cumsum(s, x, dim, exclusive, reverse, out)?)])
        }
        Op::CumsumBackward(attrs) => {
            let dy = required_input("cumsum_backward", inputs, 0, "dy")?;
            let dim = attrs.dim;
            let exclusive = attrs.exclusive;
            let reverse = attrs.reverse;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::cumsum_backward(s, dy, dim, exclusive, reverse, out)?)])
        }
        Op::Trilu(attrs) => {
            let x = required_input("trilu", inputs, 0, "x")?;
            let upper = attrs.upper;
            let diagonal = attrs.diagonal;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::trilu(s, x, upper, diagonal, out)?)])
        }
        Op::TriluBackward(attrs) => {
            let dy = required_input("trilu_backward", inputs, 0, "dy")?;
            let upper = attrs.upper;
            let diagonal = attrs.diagonal;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::trilu_backward(s, dy, upper, diagonal, out)?)])
        }
        Op::ScatterAdd(attrs) => {
            let x = required_input("scatter_add", inputs, 0, "x")?;
            let dim = attrs.dim;
            let index = required_input("scatter_add", inputs, 1, "index")?;
            let src = required_input("scatter_add", inputs, 2, "src")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::scatter_add(s, x, dim, index, src, out)?)])
        }
        Op::ScatterAddBackward(attrs) => {
            let dy = required_input("scatter_add_backward", inputs, 0, "dy")?;
            let dim = attrs.dim;
            let index = required_input("scatter_add_backward", inputs, 1, "index")?;
            let dx = dest(outputs.get(0));
            let dsrc = dest(outputs.get(1));
            let (r0, r1) = data::scatter_add_backward(s, dy, dim, index, dx, dsrc)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::IndexCopy(attrs) => {
            let x = required_input("index_copy", inputs, 0, "x")?;
            let dim = attrs.dim;
            let index = required_input("index_copy", inputs, 1, "index")?;
            let src = required_input("index_copy", inputs, 2, "src")?;
            data::index_copy(s, x, dim, index, src)?;
            Ok(vec![])
        }
        Op::IndexCopyBackward(attrs) => {
            let dy = required_input("index_copy_backward", inputs, 0, "dy")?;
            let dim = attrs.dim;
            let index = required_input("index_copy_backward", inputs, 1, "index")?;
            let dx = dest(outputs.get(0));
            let dsrc = dest(outputs.get(1));
            let (r0, r1) = data::index_copy_backward(s, dy, dim, index, dx, dsrc)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::Topk(attrs) => {
            let x = required_input("topk", inputs, 0, "x")?;
            let k = attrs.k;
            let dim = attrs.dim;
            let largest = attrs.largest;
            let sorted = attrs.sorted;
            let values = dest(outputs.get(0));
            let indices = dest(outputs.get(1));
            let (r0, r1) = data::topk(s, x, k, dim, largest, sorted, values, indices)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::TopkBackward(attrs) => {
            let dy = required_input("topk_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let dim = attrs.dim;
            let indices = required_input("topk_backward", inputs, 1, "indices")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::topk_backward(s, dy, &x_shape, dim, indices, out)?)])
        }
        Op::Scatter(attrs) => {
            let x = required_input("scatter", inputs, 0, "x")?;
            let dim = attrs.dim;
            let index = required_input("scatter", inputs, 1, "index")?;
            let src = required_input("scatter", inputs, 2, "src")?;
            let reduce = attrs.reduce;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::scatter(s, x, dim, index, src, reduce, out)?)])
        }
        Op::ScatterBackward(attrs) => {
            let dy = required_input("scatter_backward", inputs, 0, "dy")?;
            let dim = attrs.dim;
            let index = required_input("scatter_backward", inputs, 1, "index")?;
            let reduce = attrs.reduce;
            let dx = dest(outputs.get(0));
            let dsrc = dest(outputs.get(1));
            let (r0, r1) = data::scatter_backward(s, dy, dim, index, reduce, dx, dsrc)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::Arange(attrs) => {
            let start = attrs.start;
            let end = attrs.end;
            let step = attrs.step;
            let dtype = attrs.dtype;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::arange(s, start, end, step, dtype, out)?)])
        }
        Op::OneHot(attrs) => {
            let index = required_input("one_hot", inputs, 0, "index")?;
            let num_classes = attrs.num_classes;
            let out = dest(outputs.get(0));
            Ok(vec![Some(data::one_hot(s, index, num_classes, out)?)])
        }
        Op::Linear => {
            let x = required_input("linear", inputs, 0, "x")?;
            let w = required_input("linear", inputs, 1, "w")?;
            let bias = inputs.get(2).copied().flatten();
            let out = dest(outputs.get(0));
            Ok(vec![Some(blas::linear(s, x, w, bias, out)?)])
        }
        Op::LinearBackward => {
            let x = required_input("linear_backward", inputs, 0, "x")?;
            let w = required_input("linear_backward", inputs, 1, "w")?;
            let dy = required_input("linear_backward", inputs, 2, "dy")?;
            let dx = wanted(outputs.get(0));
            let db = wanted(outputs.get(2));
            let (r0, r1, r2) = blas::linear_backward(s, x, w, dy, dx, db)?;
            Ok(vec![r0, Some(r1), r2])
        }
        Op::MatmulBiasAct(attrs) => {
            let a = required_input("matmul_bias_act", inputs, 0, "a")?;
            let b = required_input("matmul_bias_act", inputs, 1, "b")?;
            let bias = required_input("matmul_bias_act", inputs, 2, "bias")?;
            let activation = attrs.activation;
            let out = dest(outputs.get(0));
            Ok(vec![Some(blas::matmul_bias_act(s, a, b, bias, activation, out)?)])
        }
        Op::Matmul => {
            let a = required_input("matmul", inputs, 0, "a")?;
            let b = required_input("matmul", inputs, 1, "b")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(blas::matmul(s, a, b, out)?)])
        }
        Op::MatmulBackward => {
            let a = required_input("matmul_backward", inputs, 0, "a")?;
            let b = required_input("matmul_backward", inputs, 1, "b")?;
            let dy = required_input("matmul_backward", inputs, 2, "dy")?;
            let da = grad(outputs.get(0));
            let db = grad(outputs.get(1));
            let [r0, r1] = blas::matmul_backward(s, a, b, dy, [da, db])?;
            Ok(vec![r0, r1])
        }
        Op::Conv(attrs) => {
            let x = required_input("conv", inputs, 0, "x")?;
            let w = required_input("conv", inputs, 1, "w")?;
            let bias = inputs.get(2).copied().flatten();
            let params = &attrs.params;
            let activation = attrs.activation;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv(s, x, w, bias, &params.0, params.1, activation, out)?)])
        }
        Op::ConvBnRelu(attrs) => {
            let x = required_input("conv_bn_relu", inputs, 0, "x")?;
            let w = required_input("conv_bn_relu", inputs, 1, "w")?;
            let bias = inputs.get(2).copied().flatten();
            let mean = required_input("conv_bn_relu", inputs, 3, "mean")?;
            let var = required_input("conv_bn_relu", inputs, 4, "var")?;
            let gamma = required_input("conv_bn_relu", inputs, 5, "gamma")?;
            let beta = required_input("conv_bn_relu", inputs, 6, "beta")?;
            let eps = attrs.eps;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_bn_relu(s, x, w, bias, [mean, var, gamma, beta], eps, &params.0, params.1, out)?)])
        }
        Op::ConvTranspose(attrs) => {
            let x = required_input("conv_transpose", inputs, 0, "x")?;
            let w = required_input("conv_transpose", inputs, 1, "w")?;
            let bias = inputs.get(2).copied().flatten();
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_transpose(s, x, w, bias, &params.0, params.1, out)?)])
        }
        Op::ConvBackwardData(attrs) => {
            let dy = required_input("conv_backward_data", inputs, 0, "dy")?;
            let w = required_input("conv_backward_data", inputs, 1, "w")?;
            let x_shape = &attrs.x_shape;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?)])
        }
        Op::ConvBackwardWeight(attrs) => {
            let x = required_input("conv_backward_weight", inputs, 0, "x")?;
            let dy = required_input("conv_backward_weight", inputs, 1, "dy")?;
            let w_shape = &attrs.w_shape;
            let params = &attrs.params;
            let db = wanted(outputs.get(1));
            let (r0, r1) = conv::conv_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
            Ok(vec![Some(r0), r1])
        }
        Op::ConvTransposeBackwardData(attrs) => {
            let dy = required_input("conv_transpose_backward_data", inputs, 0, "dy")?;
            let w = required_input("conv_transpose_backward_data", inputs, 1, "w")?;
            let x_shape = &attrs.x_shape;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_transpose_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?)])
        }
        Op::ConvTransposeBackwardWeight(attrs) => {
            let x = required_input("conv_transpose_backward_weight", inputs, 0, "x")?;
            let dy = required_input("conv_transpose_backward_weight", inputs, 1, "dy")?;
            let w_shape = &attrs.w_shape;
            let params = &attrs.params;
            let db = wanted(outputs.get(1));
            let (r0, r1) = conv::conv_transpose_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
            Ok(vec![Some(r0), r1])
        }
        Op::ConvEx(attrs) => {
            let x = required_input("conv_ex", inputs, 0, "x")?;
            let w = required_input("conv_ex", inputs, 1, "w")?;
            let bias = inputs.get(2).copied().flatten();
            let params = &attrs.params;
            let activation = attrs.activation;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_ex(s, x, w, bias, &params.0, params.1, activation, out)?)])
        }
        Op::ConvExBackwardData(attrs) => {
            let dy = required_input("conv_ex_backward_data", inputs, 0, "dy")?;
            let w = required_input("conv_ex_backward_data", inputs, 1, "w")?;
            let x_shape = &attrs.x_shape;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_ex_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?)])
        }
        Op::ConvExBackwardWeight(attrs) => {
            let x = required_input("conv_ex_backward_weight", inputs, 0, "x")?;
            let dy = required_input("conv_ex_backward_weight", inputs, 1, "dy")?;
            let w_shape = &attrs.w_shape;
            let params = &attrs.params;
            let db = wanted(outputs.get(1));
            let (r0, r1) = conv::conv_ex_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
            Ok(vec![Some(r0), r1])
        }
        Op::ConvTransposeEx(attrs) => {
            let x = required_input("conv_transpose_ex", inputs, 0, "x")?;
            let w = required_input("conv_transpose_ex", inputs, 1, "w")?;
            let bias = inputs.get(2).copied().flatten();
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_transpose_ex(s, x, w, bias, &params.0, params.1, out)?)])
        }
        Op::ConvTransposeExBackwardData(attrs) => {
            let dy = required_input("conv_transpose_ex_backward_data", inputs, 0, "dy")?;
            let w = required_input("conv_transpose_ex_backward_data", inputs, 1, "w")?;
            let x_shape = &attrs.x_shape;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(conv::conv_transpose_ex_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)?)])
        }
        Op::ConvTransposeExBackwardWeight(attrs) => {
            let x = required_input("conv_transpose_ex_backward_weight", inputs, 0, "x")?;
            let dy = required_input("conv_transpose_ex_backward_weight", inputs, 1, "dy")?;
            let w_shape = &attrs.w_shape;
            let params = &attrs.params;
            let db = wanted(outputs.get(1));
            let (r0, r1) = conv::conv_transpose_ex_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)?;
            Ok(vec![Some(r0), r1])
        }
        Op::Pool(attrs) => {
            let mode = attrs.mode;
            let x = required_input("pool", inputs, 0, "x")?;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::pool(s, mode, x, &params.0, params.1, out)?)])
        }
        Op::PoolBackward(attrs) => {
            let mode = attrs.mode;
            let x = required_input("pool_backward", inputs, 0, "x")?;
            let dy = required_input("pool_backward", inputs, 1, "dy")?;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::pool_backward(s, mode, x, dy, &params.0, params.1, out)?)])
        }
        Op::PoolEx(attrs) => {
            let mode = attrs.mode;
            let x = required_input("pool_ex", inputs, 0, "x")?;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::pool_ex(s, mode, x, &params.0, params.1, out)?)])
        }
        Op::PoolExBackward(attrs) => {
            let mode = attrs.mode;
            let x = required_input("pool_ex_backward", inputs, 0, "x")?;
            let dy = required_input("pool_ex_backward", inputs, 1, "dy")?;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::pool_ex_backward(s, mode, x, dy, &params.0, params.1, out)?)])
        }
        Op::MaxPoolWithIndices(attrs) => {
            let x = required_input("max_pool_with_indices", inputs, 0, "x")?;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            let indices = dest(outputs.get(1));
            let (r0, r1) = pool::max_pool_with_indices(s, x, &params.0, params.1, out, indices)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::MaxUnpool(attrs) => {
            let x = required_input("max_unpool", inputs, 0, "x")?;
            let indices = required_input("max_unpool", inputs, 1, "indices")?;
            let output_size = &attrs.output_size;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::max_unpool(s, x, indices, &output_size, out)?)])
        }
        Op::MaxUnpoolBackward => {
            let dy = required_input("max_unpool_backward", inputs, 0, "dy")?;
            let indices = required_input("max_unpool_backward", inputs, 1, "indices")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::max_unpool_backward(s, dy, indices, out)?)])
        }
        Op::Interpolate(attrs) => {
            let x = required_input("interpolate", inputs, 0, "x")?;
            let size = &attrs.size;
            let mode = attrs.mode;
            let align_corners = attrs.align_corners;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::interpolate(s, x, &size, mode, align_corners, out)?)])
        }
        Op::InterpolateBackward(attrs) => {
            let dy = required_input("interpolate_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let mode = attrs.mode;
            let align_corners = attrs.align_corners;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::interpolate_backward(s, dy, &x_shape, mode, align_corners, out)?)])
        }
        Op::MaxPoolBackwardIndices(attrs) => {
            let dy = required_input("max_pool_backward_indices", inputs, 0, "dy")?;
            let indices = required_input("max_pool_backward_indices", inputs, 1, "indices")?;
            let x_shape = &attrs.x_shape;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::max_pool_backward_indices(s, dy, indices, &x_shape, out)?)])
        }
        Op::AdaptiveAvgPool2d(attrs) => {
            let x = required_input("adaptive_avg_pool2d", inputs, 0, "x")?;
            let out_h = attrs.out_h;
            let out_w = attrs.out_w;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::adaptive_avg_pool2d(s, x, [out_h, out_w], out)?)])
        }
        Op::AdaptiveAvgPool2dBackward(attrs) => {
            let dy = required_input("adaptive_avg_pool2d_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::adaptive_avg_pool2d_backward(s, dy, &x_shape, out)?)])
        }
        Op::AdaptiveAvgPool(attrs) => {
            let x = required_input("adaptive_avg_pool", inputs, 0, "x")?;
            let output_size = &attrs.output_size;
            let layout = attrs.layout;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::adaptive_avg_pool(s, x, &output_size, layout, out)?)])
        }
        Op::AdaptiveAvgPoolBackward(attrs) => {
            let dy = required_input("adaptive_avg_pool_backward", inputs, 0, "dy")?;
            let x_shape = &attrs.x_shape;
            let layout = attrs.layout;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::adaptive_avg_pool_backward(s, dy, &x_shape, layout, out)?)])
        }
        Op::AdaptiveMaxPool(attrs) => {
            let x = required_input("adaptive_max_pool", inputs, 0, "x")?;
            let output_size = &attrs.output_size;
            let layout = attrs.layout;
            let out = dest(outputs.get(0));
            let indices = dest(outputs.get(1));
            let (r0, r1) = pool::adaptive_max_pool(s, x, &output_size, layout, out, indices)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::AdaptiveMaxPoolBackward(attrs) => {
            let dy = required_input("adaptive_max_pool_backward", inputs, 0, "dy")?;
            let indices = required_input("adaptive_max_pool_backward", inputs, 1, "indices")?;
            let x_shape = &attrs.x_shape;
            let layout = attrs.layout;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::adaptive_max_pool_backward(s, dy, indices, &x_shape, layout, out)?)])
        }
        Op::MaxPoolWithIndicesEx(attrs) => {
            let x = required_input("max_pool_with_indices_ex", inputs, 0, "x")?;
            let params = &attrs.params;
            let out = dest(outputs.get(0));
            let indices = dest(outputs.get(1));
            let (r0, r1) = pool::max_pool_with_indices_ex(s, x, &params.0, params.1, out, indices)?;
            Ok(vec![Some(r0), Some(r1)])
        }
        Op::MaxPoolBackwardIndicesEx(attrs) => {
            let dy = required_input("max_pool_backward_indices_ex", inputs, 0, "dy")?;
            let indices = required_input("max_pool_backward_indices_ex", inputs, 1, "indices")?;
            let x_shape = &attrs.x_shape;
            let layout = attrs.layout;
            let out = dest(outputs.get(0));
            Ok(vec![Some(pool::max_pool_backward_indices_ex(s, dy, indices, &x_shape, layout, out)?)])
        }
        Op::Softmax(attrs) => {
            let x = required_input("softmax", inputs, 0, "x")?;
            let dim = attrs.dim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(softmax::softmax(s, x, dim, out)?)])
        }
        Op::LogSoftmax(attrs) => {
            let x = required_input("log_softmax", inputs, 0, "x")?;
            let dim = attrs.dim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(softmax::log_softmax(s, x, dim, out)?)])
        }
        Op::SoftmaxBackward(attrs) => {
            let y = required_input("softmax_backward", inputs, 0, "y")?;
            let dy = required_input("softmax_backward", inputs, 1, "dy")?;
            let dim = attrs.dim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(softmax::softmax_backward(s, y, dy, dim, out)?)])
        }
        Op::LogSoftmaxBackward(attrs) => {
            let y = required_input("log_softmax_backward", inputs, 0, "y")?;
            let dy = required_input("log_softmax_backward", inputs, 1, "dy")?;
            let dim = attrs.dim;
            let out = dest(outputs.get(0));
            Ok(vec![Some(softmax::log_softmax_backward(s, y, dy, dim, out)?)])
        }
        Op::LocalResponseNorm(attrs) => {
            let x = required_input("local_response_norm", inputs, 0, "x")?;
            let size = attrs.size;
            let alpha = attrs.alpha;
            let beta = attrs.beta;
            let k = attrs.k;
            let out = dest(outputs.get(0));
            Ok(vec![Some(norm::local_response_norm(s, x, size, alpha, beta, k, out)?)])
        }
        Op::LocalResponseNormBackward(attrs) => {
            let x = required_input("local_response_norm_backward", inputs, 0, "x")?;
            let dy = required_input("local_response_norm_backward", inputs, 1, "dy")?;
            let size = attrs.size;
            let alpha = attrs.alpha;
            let beta = attrs.beta;
            let k = attrs.k;
            let out = dest(outputs.get(0));
            Ok(vec![Some(norm::local_response_norm_backward(s, x, dy, size, alpha, beta, k, out)?)])
        }
        Op::LayerNorm(attrs) => {
            let x = required_input("layer_norm", inputs, 0, "x")?;
            let normalized_shape = &attrs.normalized_shape;
            let weight = inputs.get(1).copied().flatten();
            let bias = inputs.get(2).copied().flatten();
            let eps = attrs.eps;
            let out = dest(outputs.get(0));
            Ok(vec![Some(norm::layer_norm(s, x, &normalized_shape, weight, bias, eps, out)?)])
        }
        Op::LayerNormBackward(attrs) => {
            let dy = required_input("layer_norm_backward", inputs, 0, "dy")?;
            let x = required_input("layer_norm_backward", inputs, 1, "x")?;
            let normalized_shape = &attrs.normalized_shape;
            let weight = inputs.get(2).copied().flatten();
            let eps = attrs.eps;
            let dx = grad(outputs.get(0));
            let dweight = grad(outputs.get(1));
            let dbias = grad(outputs.get(2));
            let [r0, r1, r2] = norm::layer_norm_backward(s, dy, x, &normalized_shape, weight, eps, [dx, dweight, dbias])?;
            Ok(vec![r0, r1, r2])
        }
        Op::RmsNorm(attrs) => {
            let x = required_input("rms_norm", inputs, 0, "x")?;
            let normalized_shape = &attrs.normalized_shape;
            let weight = inputs.get(1).copied().flatten();
            let eps = attrs.eps;
            let out = dest(outputs.get(0));
            Ok(vec![Some(norm::rms_norm(s, x, &normalized_shape, weight, eps, out)?)])
        }
        Op::RmsNormBackward(attrs) => {
            let dy = required_input("rms_norm_backward", inputs, 0, "dy")?;
            let x = required_input("rms_norm_backward", inputs, 1, "x")?;
            let normalized_shape = &attrs.normalized_shape;
            let weight = inputs.get(2).copied().flatten();
            let eps = attrs.eps;
            let dx = grad(outputs.get(0));
            let dweight = grad(outputs.get(1));
            let [r0, r1] = norm::rms_norm_backward(s, dy, x, &normalized_shape, weight, eps, [dx, dweight])?;
            Ok(vec![r0, r1])
        }
        Op::GroupNorm(attrs) => {
            let x = required_input("group_norm", inputs, 0, "x")?;
            let num_groups = attrs.num_groups;
            let weight = inputs.get(1).copied().flatten();
            let bias = inputs.get(2).copied().flatten();
            let eps = attrs.eps;
            let out = dest(outputs.get(0));
            Ok(vec![Some(norm::group_norm(s, x, num_groups, weight, bias, eps, out)?)])
        }
        Op::GroupNormBackward(attrs) => {
            let dy = required_input("group_norm_backward", inputs, 0, "dy")?;
            let x = required_input("group_norm_backward", inputs, 1, "x")?;
            let num_groups = attrs.num_groups;
            let weight = inputs.get(2).copied().flatten();
            let eps = attrs.eps;
            let dx = grad(outputs.get(0));
            let dweight = grad(outputs.get(1));
            let dbias = grad(outputs.get(2));
            let [r0, r1, r2] = norm::group_norm_backward(s, dy, x, num_groups, weight, eps, [dx, dweight, dbias])?;
            Ok(vec![r0, r1, r2])
        }
        Op::BatchNorm(attrs) => {
            let x = required_input("batch_norm", inputs, 0, "x")?;
            let running_mean = inputs.get(1).copied().flatten();
            let running_var = inputs.get(2).copied().flatten();
            let weight = inputs.get(3).copied().flatten();
            let bias = inputs.get(4).copied().flatten();
            let training = attrs.training;
            let momentum = attrs.momentum;
            let eps = attrs.eps;
            let out = dest(outputs.get(0));
            Ok(vec![Some(norm::batch_norm(s, x, running_mean, running_var, weight, bias, training, momentum, eps, out)?)])
        }
        Op::BatchNormBackward(attrs) => {
            let dy = required_input("batch_norm_backward", inputs, 0, "dy")?;
            let x = required_input("batch_norm_backward", inputs, 1, "x")?;
            let running_mean = inputs.get(2).copied().flatten();
            let running_var = inputs.get(3).copied().flatten();
            let weight = inputs.get(4).copied().flatten();
            let training = attrs.training;
            let eps = attrs.eps;
            let dx = grad(outputs.get(0));
            let dweight = grad(outputs.get(1));
            let dbias = grad(outputs.get(2));
            let [r0, r1, r2] = norm::batch_norm_backward(s, dy, x, running_mean, running_var, weight, training, eps, [dx, dweight, dbias])?;
            Ok(vec![r0, r1, r2])
        }
        Op::BatchNormChannelsLast(attrs) => {
            let x = required_input("batch_norm_channels_last", inputs, 0, "x")?;
            let running_mean = inputs.get(1).copied().flatten();
            let running_var = inputs.get(2).copied().flatten();
            let weight = inputs.get(3).copied().flatten();
            let bias = inputs.get(4).copied().flatten();
            let training = attrs.training;
            let momentum = attrs.momentum;
            let eps = attrs.eps;
            let out = dest(outputs.get(0));
            Ok(vec![Some(norm::batch_norm_channels_last(s, x, running_mean, running_var, weight, bias, training, momentum, eps, out)?)])
        }
        Op::BatchNormChannelsLastBackward(attrs) => {
            let dy = required_input("batch_norm_channels_last_backward", inputs, 0, "dy")?;
            let x = required_input("batch_norm_channels_last_backward", inputs, 1, "x")?;
            let running_mean = inputs.get(2).copied().flatten();
            let running_var = inputs.get(3).copied().flatten();
            let weight = inputs.get(4).copied().flatten();
            let training = attrs.training;
            let eps = attrs.eps;
            let dx = grad(outputs.get(0));
            let dweight = grad(outputs.get(1));
            let dbias = grad(outputs.get(2));
            let [r0, r1, r2] = norm::batch_norm_channels_last_backward(s, dy, x, running_mean, running_var, weight, training, eps, [dx, dweight, dbias])?;
            Ok(vec![r0, r1, r2])
        }
        Op::MseLoss(attrs) => {
            let input = required_input("mse_loss", inputs, 0, "input")?;
            let target = required_input("mse_loss", inputs, 1, "target")?;
            let reduction = attrs.reduction;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss(s, LossKind::Mse, input, target, reduction, -100, 0.0, out)?)])
        }
        Op::MseLossBackward(attrs) => {
            let grad_out = required_input("mse_loss_backward", inputs, 0, "grad_out")?;
            let input = required_input("mse_loss_backward", inputs, 1, "input")?;
            let target = required_input("mse_loss_backward", inputs, 2, "target")?;
            let reduction = attrs.reduction;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_backward(s, LossKind::Mse, grad_out, input, target, reduction, -100, 0.0, out)?)])
        }
        Op::BceLoss(attrs) => {
            let input = required_input("bce_loss", inputs, 0, "input")?;
            let target = required_input("bce_loss", inputs, 1, "target")?;
            let reduction = attrs.reduction;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss(s, LossKind::Bce, input, target, reduction, -100, 0.0, out)?)])
        }
        Op::BceLossBackward(attrs) => {
            let grad_out = required_input("bce_loss_backward", inputs, 0, "grad_out")?;
            let input = required_input("bce_loss_backward", inputs, 1, "input")?;
            let target = required_input("bce_loss_backward", inputs, 2, "target")?;
            let reduction = attrs.reduction;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_backward(s, LossKind::Bce, grad_out, input, target, reduction, -100, 0.0, out)?)])
        }
        Op::CrossEntropy(attrs) => {
            let input = required_input("cross_entropy", inputs, 0, "input")?;
            let target = required_input("cross_entropy", inputs, 1, "target")?;
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let label_smoothing = attrs.label_smoothing;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss(s, LossKind::CrossEntropy, input, target, reduction, ignore_index, label_smoothing, out)?)])
        }
        Op::CrossEntropyBackward(attrs) => {
            let grad_out = required_input("cross_entropy_backward", inputs, 0, "grad_out")?;
            let input = required_input("cross_entropy_backward", inputs, 1, "input")?;
            let target = required_input("cross_entropy_backward", inputs, 2, "target")?;
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let label_smoothing = attrs.label_smoothing;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_backward(s, LossKind::CrossEntropy, grad_out, input, target, reduction, ignore_index, label_smoothing, out)?)])
        }
        Op::NllLoss(attrs) => {
            let input = required_input("nll_loss", inputs, 0, "input")?;
            let target = required_input("nll_loss", inputs, 1, "target")?;
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss(s, LossKind::Nll, input, target, reduction, ignore_index, 0.0, out)?)])
        }
        Op::NllLossBackward(attrs) => {
            let grad_out = required_input("nll_loss_backward", inputs, 0, "grad_out")?;
            let input = required_input("nll_loss_backward", inputs, 1, "input")?;
            let target = required_input("nll_loss_backward", inputs, 2, "target")?;
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_backward(s, LossKind::Nll, grad_out, input, target, reduction, ignore_index, 0.0, out)?)])
        }
        Op::CrossEntropyWeighted(attrs) => {
            let input = required_input("cross_entropy_weighted", inputs, 0, "input")?;
            let target = required_input("cross_entropy_weighted", inputs, 1, "target")?;
            let weight = inputs.get(2).copied().flatten();
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let label_smoothing = attrs.label_smoothing;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_weighted(s, LossKind::CrossEntropy, input, target, weight, reduction, ignore_index, label_smoothing, out)?)])
        }
        Op::CrossEntropyWeightedBackward(attrs) => {
            let grad_out = required_input("cross_entropy_weighted_backward", inputs, 0, "grad_out")?;
            let input = required_input("cross_entropy_weighted_backward", inputs, 1, "input")?;
            let target = required_input("cross_entropy_weighted_backward", inputs, 2, "target")?;
            let weight = inputs.get(3).copied().flatten();
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let label_smoothing = attrs.label_smoothing;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_weighted_backward(s, LossKind::CrossEntropy, grad_out, input, target, weight, reduction, ignore_index, label_smoothing, out)?)])
        }
        Op::NllLossWeighted(attrs) => {
            let input = required_input("nll_loss_weighted", inputs, 0, "input")?;
            let target = required_input("nll_loss_weighted", inputs, 1, "target")?;
            let weight = inputs.get(2).copied().flatten();
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_weighted(s, LossKind::Nll, input, target, weight, reduction, ignore_index, 0.0, out)?)])
        }
        Op::NllLossWeightedBackward(attrs) => {
            let grad_out = required_input("nll_loss_weighted_backward", inputs, 0, "grad_out")?;
            let input = required_input("nll_loss_weighted_backward", inputs, 1, "input")?;
            let target = required_input("nll_loss_weighted_backward", inputs, 2, "target")?;
            let weight = inputs.get(3).copied().flatten();
            let reduction = attrs.reduction;
            let ignore_index = attrs.ignore_index;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_weighted_backward(s, LossKind::Nll, grad_out, input, target, weight, reduction, ignore_index, 0.0, out)?)])
        }
        Op::BceLossWeighted(attrs) => {
            let input = required_input("bce_loss_weighted", inputs, 0, "input")?;
            let target = required_input("bce_loss_weighted", inputs, 1, "target")?;
            let weight = inputs.get(2).copied().flatten();
            let reduction = attrs.reduction;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_weighted(s, LossKind::Bce, input, target, weight, reduction, -100, 0.0, out)?)])
        }
        Op::BceLossWeightedBackward(attrs) => {
            let grad_out = required_input("bce_loss_weighted_backward", inputs, 0, "grad_out")?;
            let input = required_input("bce_loss_weighted_backward", inputs, 1, "input")?;
            let target = required_input("bce_loss_weighted_backward", inputs, 2, "target")?;
            let weight = inputs.get(3).copied().flatten();
            let reduction = attrs.reduction;
            let out = dest(outputs.get(0));
            Ok(vec![Some(loss::loss_weighted_backward(s, LossKind::Bce, grad_out, input, target, weight, reduction, -100, 0.0, out)?)])
        }
        Op::ScaledDotProductAttention(attrs) => {
            let q = required_input("scaled_dot_product_attention", inputs, 0, "q")?;
            let k = required_input("scaled_dot_product_attention", inputs, 1, "k")?;
            let v = required_input("scaled_dot_product_attention", inputs, 2, "v")?;
            let is_causal = attrs.is_causal;
            let scale = attrs.scale;
            let out = dest(outputs.get(0));
            Ok(vec![Some(attention::scaled_dot_product_attention(s, q, k, v, is_causal, scale, out)?)])
        }
        Op::ScaledDotProductAttentionBackward(attrs) => {
            let dout = required_input("scaled_dot_product_attention_backward", inputs, 0, "dout")?;
            let q = required_input("scaled_dot_product_attention_backward", inputs, 1, "q")?;
            let k = required_input("scaled_dot_product_attention_backward", inputs, 2, "k")?;
            let v = required_input("scaled_dot_product_attention_backward", inputs, 3, "v")?;
            let is_causal = attrs.is_causal;
            let scale = attrs.scale;
            let dq = grad(outputs.get(0));
            let dk = grad(outputs.get(1));
            let dv = grad(outputs.get(2));
            let [r0, r1, r2] = attention::scaled_dot_product_attention_backward(s, dout, q, k, v, is_causal, scale, [dq, dk, dv])?;
            Ok(vec![Some(r0), Some(r1), Some(r2)])
        }
        Op::ScaledDotProductAttentionEx(attrs) => {
            let q = required_input("scaled_dot_product_attention_ex", inputs, 0, "q")?;
            let k = required_input("scaled_dot_product_attention_ex", inputs, 1, "k")?;
            let v = required_input("scaled_dot_product_attention_ex", inputs, 2, "v")?;
            let attn_mask = inputs.get(3).copied().flatten();
            let causal = attrs.causal;
            let scale = attrs.scale;
            let enable_gqa = attrs.enable_gqa;
            let out = dest(outputs.get(0));
            Ok(vec![Some(attention::scaled_dot_product_attention_ex(s, q, k, v, attn_mask, causal, scale, enable_gqa, out)?)])
        }
        Op::ScaledDotProductAttentionExBackward(attrs) => {
            let dout = required_input("scaled_dot_product_attention_ex_backward", inputs, 0, "dout")?;
            let q = required_input("scaled_dot_product_attention_ex_backward", inputs, 1, "q")?;
            let k = required_input("scaled_dot_product_attention_ex_backward", inputs, 2, "k")?;
            let v = required_input("scaled_dot_product_attention_ex_backward", inputs, 3, "v")?;
            let attn_mask = inputs.get(4).copied().flatten();
            let causal = attrs.causal;
            let scale = attrs.scale;
            let enable_gqa = attrs.enable_gqa;
            let dq = grad(outputs.get(0));
            let dk = grad(outputs.get(1));
            let dv = grad(outputs.get(2));
            let [r0, r1, r2] = attention::scaled_dot_product_attention_ex_backward(s, dout, q, k, v, attn_mask, causal, scale, enable_gqa, [dq, dk, dv])?;
            Ok(vec![Some(r0), Some(r1), Some(r2)])
        }
        Op::Rope(attrs) => {
            let x = required_input("rope", inputs, 0, "x")?;
            let seq_dim = attrs.seq_dim;
            let base = attrs.base;
            let position_offset = attrs.position_offset;
            let out = dest(outputs.get(0));
            Ok(vec![Some(transformer::rope(s, x, seq_dim, base, position_offset, false, out)?)])
        }
        Op::RopeBackward(attrs) => {
            let dy = required_input("rope_backward", inputs, 0, "dy")?;
            let seq_dim = attrs.seq_dim;
            let base = attrs.base;
            let position_offset = attrs.position_offset;
            let out = dest(outputs.get(0));
            Ok(vec![Some(transformer::rope(s, dy, seq_dim, base, position_offset, true, out)?)])
        }
        Op::RopeCached(attrs) => {
            let x = required_input("rope_cached", inputs, 0, "x")?;
            let cos = required_input("rope_cached", inputs, 1, "cos")?;
            let sin = required_input("rope_cached", inputs, 2, "sin")?;
            let position_ids = inputs.get(3).copied().flatten();
            let seq_dim = attrs.seq_dim;
            let interleaved = attrs.interleaved;
            let out = dest(outputs.get(0));
            Ok(vec![Some(transformer::rope_cached(s, x, cos, sin, position_ids, seq_dim, interleaved, false, out)?)])
        }
        Op::RopeCachedBackward(attrs) => {
            let dy = required_input("rope_cached_backward", inputs, 0, "dy")?;
            let cos = required_input("rope_cached_backward", inputs, 1, "cos")?;
            let sin = required_input("rope_cached_backward", inputs, 2, "sin")?;
            let position_ids = inputs.get(3).copied().flatten();
            let seq_dim = attrs.seq_dim;
            let interleaved = attrs.interleaved;
            let out = dest(outputs.get(0));
            Ok(vec![Some(transformer::rope_cached(s, dy, cos, sin, position_ids, seq_dim, interleaved, true, out)?)])
        }
        Op::WeightedSum => {
            let x = required_input("weighted_sum", inputs, 0, "x")?;
            let w = required_input("weighted_sum", inputs, 1, "w")?;
            let out = dest(outputs.get(0));
            Ok(vec![Some(transformer::weighted_sum(s, x, w, out)?)])
        }
        Op::WeightedSumBackward => {
            let dy = required_input("weighted_sum_backward", inputs, 0, "dy")?;
            let x = required_input("weighted_sum_backward", inputs, 1, "x")?;
            let w = required_input("weighted_sum_backward", inputs, 2, "w")?;
            let dx = grad(outputs.get(0));
            let dw = grad(outputs.get(1));
            let [r0, r1] = transformer::weighted_sum_backward(s, dy, x, w, [dx, dw])?;
            Ok(vec![r0, r1])
        }
        Op::SgdStep(attrs) => {
            let param = required_input("sgd_step", inputs, 0, "param")?;
            let grad = required_input("sgd_step", inputs, 1, "grad")?;
            let momentum_buf = inputs.get(2).copied().flatten();
            let lr = attrs.lr;
            let momentum = attrs.momentum;
            let dampening = attrs.dampening;
            let weight_decay = attrs.weight_decay;
            let nesterov = attrs.nesterov;
            let first_step = attrs.first_step;
            optim::sgd_step(s, param, grad, momentum_buf, &SgdAttrs { lr, momentum, dampening, weight_decay, nesterov, first_step })?;
            Ok(vec![])
        }
        Op::AdamStep(attrs) => {
            let param = required_input("adam_step", inputs, 0, "param")?;
            let grad = required_input("adam_step", inputs, 1, "grad")?;
            let exp_avg = required_input("adam_step", inputs, 2, "exp_avg")?;
            let exp_avg_sq = required_input("adam_step", inputs, 3, "exp_avg_sq")?;
            let max_exp_avg_sq = inputs.get(4).copied().flatten();
            let lr = attrs.lr;
            let beta1 = attrs.beta1;
            let beta2 = attrs.beta2;
            let eps = attrs.eps;
            let weight_decay = attrs.weight_decay;
            let step = attrs.step;
            let amsgrad = attrs.amsgrad;
            optim::adam_step(s, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, &AdamAttrs { lr, beta1, beta2, eps, weight_decay, step, amsgrad, decoupled: false })?;
            Ok(vec![])
        }
        Op::AdamwStep(attrs) => {
            let param = required_input("adamw_step", inputs, 0, "param")?;
            let grad = required_input("adamw_step", inputs, 1, "grad")?;
            let exp_avg = required_input("adamw_step", inputs, 2, "exp_avg")?;
            let exp_avg_sq = required_input("adamw_step", inputs, 3, "exp_avg_sq")?;
            let max_exp_avg_sq = inputs.get(4).copied().flatten();
            let lr = attrs.lr;
            let beta1 = attrs.beta1;
            let beta2 = attrs.beta2;
            let eps = attrs.eps;
            let weight_decay = attrs.weight_decay;
            let step = attrs.step;
            let amsgrad = attrs.amsgrad;
            optim::adam_step(s, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, &AdamAttrs { lr, beta1, beta2, eps, weight_decay, step, amsgrad, decoupled: true })?;
            Ok(vec![])
        }
    }
}
