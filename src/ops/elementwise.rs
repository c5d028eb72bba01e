//! Elementwise ops: unary maps and broadcasting binary ops, with their float64 reference.

/// Unary elementwise ops. Attributes travel with the op.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum UnaryOp {
    Relu,
    Sigmoid,
    Tanh,
    /// `approximate = "tanh"` when `tanh` is true, else the exact erf form.
    Gelu {
        tanh: bool,
    },
    Silu,
    /// `x * relu6(x + 3) / 6` (torch.nn.functional.hardswish).
    Hardswish,
    Neg,
    Abs,
    Sqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Clamp {
        min: f32,
        max: f32,
    },
    /// `x > 0 ? x : slope * x` (torch.nn.functional.leaky_relu, `negative_slope`).
    LeakyRelu {
        slope: f32,
    },
    /// `x > 0 ? x : alpha * (exp(x) - 1)` (torch.nn.functional.elu).
    Elu {
        alpha: f32,
    },
    /// `scale * elu(x, alpha)` with SELU's fixed constants (torch.nn.functional.selu).
    Selu,
    /// `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))` (torch.nn.functional.celu).
    Celu {
        alpha: f32,
    },
    /// `relu6(x + 3) / 6` (torch.nn.functional.hardsigmoid).
    Hardsigmoid,
    /// `log(1 + exp(beta * x)) / beta`, `x` where `beta * x > threshold`
    /// (torch.nn.functional.softplus).
    Softplus {
        beta: f32,
        threshold: f32,
    },
    /// `x / (1 + |x|)` (torch.nn.functional.softsign).
    Softsign,
    /// `x * tanh(softplus(x))` (torch.nn.functional.mish).
    Mish,
    /// The error function (torch.erf).
    Erf,
    /// -1, 0 or 1 (torch.sign: 0 for NaN, as PyTorch).
    Sign,
    Floor,
    Ceil,
    /// Round half to even (torch.round).
    Round,
    /// `1 / x` (torch.reciprocal).
    Reciprocal,
}

/// SELU's constants (torch.nn.functional.selu).
pub const SELU_ALPHA: f64 = 1.673_263_242_354_377_284_817_042_991_671_7;
pub const SELU_SCALE: f64 = 1.050_700_987_355_480_493_419_334_985_294_6;

/// The float arithmetic the activations added for exported models need, in f32 and f64 (one
/// formula for the CPU device and the reference).
pub trait ActFloat:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    fn c(v: f64) -> Self;
    fn exp(self) -> Self;
    fn exp_m1(self) -> Self;
    fn ln_1p(self) -> Self;
    fn tanh(self) -> Self;
    fn abs(self) -> Self;
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round_even(self) -> Self;
    fn erf(self) -> Self;
    fn is_nan(self) -> bool;
}

macro_rules! act_float {
    ($t:ty, $erf:expr) => {
        impl ActFloat for $t {
            #[inline(always)]
            fn c(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn exp_m1(self) -> Self {
                <$t>::exp_m1(self)
            }
            #[inline(always)]
            fn ln_1p(self) -> Self {
                <$t>::ln_1p(self)
            }
            #[inline(always)]
            fn tanh(self) -> Self {
                <$t>::tanh(self)
            }
            #[inline(always)]
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            #[inline(always)]
            fn floor(self) -> Self {
                <$t>::floor(self)
            }
            #[inline(always)]
            fn ceil(self) -> Self {
                <$t>::ceil(self)
            }
            #[inline(always)]
            fn round_even(self) -> Self {
                <$t>::round_ties_even(self)
            }
            #[inline(always)]
            fn erf(self) -> Self {
                $erf(self)
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    };
}
act_float!(f32, erf_f32);
act_float!(f64, libm_erf);

/// The forward of the activations of [`UnaryOp`] from `LeakyRelu` on (PyTorch's formulas,
/// NaN propagated where PyTorch propagates it); `None` for the older ops.
#[inline(always)]
fn act_forward<F: ActFloat>(op: UnaryOp, x: F) -> Option<F> {
    let zero = F::c(0.0);
    let one = F::c(1.0);
    Some(match op {
        UnaryOp::LeakyRelu { slope } => {
            if x > zero {
                x
            } else {
                x * F::c(slope as f64)
            }
        }
        // PyTorch's elu: `x <= 0 ? negcoef * expm1(x * input_scale) : x * poscoef`.
        UnaryOp::Elu { alpha } => {
            if x <= zero {
                F::c(alpha as f64) * x.exp_m1()
            } else {
                x
            }
        }
        UnaryOp::Selu => {
            if x <= zero {
                F::c(SELU_ALPHA * SELU_SCALE) * x.exp_m1()
            } else {
                x * F::c(SELU_SCALE)
            }
        }
        UnaryOp::Celu { alpha } => {
            if x <= zero {
                F::c(alpha as f64) * (x * F::c(1.0 / alpha as f64)).exp_m1()
            } else {
                x
            }
        }
        // PyTorch's hardsigmoid: min(max(x + 3, 0), 6) / 6 with std::min/max (NaN passes).
        UnaryOp::Hardsigmoid => {
            if x.is_nan() {
                x
            } else {
                let t = x + F::c(3.0);
                let t = if t < zero { zero } else { t };
                let t = if t > F::c(6.0) { F::c(6.0) } else { t };
                t / F::c(6.0)
            }
        }
        UnaryOp::Softplus { beta, threshold } => {
            let b = F::c(beta as f64);
            if x * b > F::c(threshold as f64) {
                x
            } else {
                (x * b).exp().ln_1p() / b
            }
        }
        UnaryOp::Softsign => x / (one + x.abs()),
        UnaryOp::Mish => x * x.exp().ln_1p().tanh(),
        UnaryOp::Erf => x.erf(),
        // PyTorch's sign: (0 < x) - (x < 0), so NaN gives 0.
        UnaryOp::Sign => {
            if x > zero {
                one
            } else if x < zero {
                -one
            } else {
                zero
            }
        }
        UnaryOp::Floor => x.floor(),
        UnaryOp::Ceil => x.ceil(),
        UnaryOp::Round => x.round_even(),
        UnaryOp::Reciprocal => one / x,
        _ => return None,
    })
}

/// The backward of the activations of [`act_forward`] (PyTorch's derivative formulas; the
/// rounding ops and sign give zeros).
#[inline(always)]
fn act_grad<F: ActFloat>(op: UnaryOp, x: F, dy: F) -> Option<F> {
    let zero = F::c(0.0);
    let one = F::c(1.0);
    Some(match op {
        // leaky_relu_backward: x > 0 ? dy : dy * slope.
        UnaryOp::LeakyRelu { slope } => {
            if x > zero {
                dy
            } else {
                dy * F::c(slope as f64)
            }
        }
        // elu_backward (is_result = false): x <= 0 ? dy * negiptcoef * negcoef * exp(x *
        // negiptcoef) : dy * poscoef.
        UnaryOp::Elu { alpha } => {
            if x <= zero {
                dy * F::c(alpha as f64) * x.exp()
            } else {
                dy
            }
        }
        UnaryOp::Selu => {
            if x <= zero {
                dy * F::c(SELU_ALPHA * SELU_SCALE) * x.exp()
            } else {
                dy * F::c(SELU_SCALE)
            }
        }
        UnaryOp::Celu { alpha } => {
            if x <= zero {
                dy * (x * F::c(1.0 / alpha as f64)).exp()
            } else {
                dy
            }
        }
        // hardsigmoid_backward: -3 < x < 3 ? dy / 6 : 0.
        UnaryOp::Hardsigmoid => {
            if x > F::c(-3.0) && x < F::c(3.0) {
                dy / F::c(6.0)
            } else {
                zero
            }
        }
        // softplus_backward: z = exp(x * beta); x * beta > threshold ? dy : dy * z / (z + 1).
        UnaryOp::Softplus { beta, threshold } => {
            let b = F::c(beta as f64);
            if x * b > F::c(threshold as f64) {
                dy
            } else {
                let z = (x * b).exp();
                dy * z / (z + one)
            }
        }
        UnaryOp::Softsign => {
            let d = one + x.abs();
            dy / (d * d)
        }
        // mish_backward: dy * (tanh(softplus(x)) + x * sigmoid(x) * (1 - tanh(softplus(x))^2)).
        UnaryOp::Mish => {
            let s = one / (one + (-x).exp());
            let t = x.exp().ln_1p().tanh();
            dy * (t + x * s * (one - t * t))
        }
        UnaryOp::Erf => dy * F::c(std::f64::consts::FRAC_2_SQRT_PI) * (-(x * x)).exp(),
        UnaryOp::Sign | UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Round => zero,
        // reciprocal's backward: -dy * (1/x)^2.
        UnaryOp::Reciprocal => {
            let r = one / x;
            -dy * (r * r)
        }
        _ => return None,
    })
}

impl UnaryOp {
    /// Whether the op takes the integer dtypes too (PyTorch's `neg`, `abs`, `sign` and
    /// `relu` do; the runtime composes them from the integer binary ops).
    pub fn takes_integers(&self) -> bool {
        matches!(
            self,
            UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Relu
        )
    }

    pub fn name(&self) -> &'static str {
        match self {
            UnaryOp::Relu => "relu",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Gelu { .. } => "gelu",
            UnaryOp::Silu => "silu",
            UnaryOp::Hardswish => "hardswish",
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Clamp { .. } => "clamp",
            UnaryOp::LeakyRelu { .. } => "leaky_relu",
            UnaryOp::Elu { .. } => "elu",
            UnaryOp::Selu => "selu",
            UnaryOp::Celu { .. } => "celu",
            UnaryOp::Hardsigmoid => "hardsigmoid",
            UnaryOp::Softplus { .. } => "softplus",
            UnaryOp::Softsign => "softsign",
            UnaryOp::Mish => "mish",
            UnaryOp::Erf => "erf",
            UnaryOp::Sign => "sign",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Round => "round",
            UnaryOp::Reciprocal => "reciprocal",
        }
    }

    /// The attribute checks (PyTorch's): celu's alpha must not be 0.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            UnaryOp::Celu { alpha: 0.0 } => {
                Err("celu: alpha must not be 0 (ZeroDivisionError in PyTorch)".into())
            }
            _ => Ok(()),
        }
    }

    /// The float64 reference.
    pub fn reference(&self, x: f64) -> f64 {
        match *self {
            UnaryOp::Relu => relu_f64(x),
            UnaryOp::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Gelu { tanh: false } => 0.5 * x * (1.0 + erf(x / std::f64::consts::SQRT_2)),
            UnaryOp::Gelu { tanh: true } => {
                let c = (2.0 / std::f64::consts::PI).sqrt();
                0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
            }
            UnaryOp::Silu => x / (1.0 + (-x).exp()),
            UnaryOp::Hardswish => x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Clamp { min, max } => clamp_f64(x, min as f64, max as f64),
            op => act_forward(op, x).unwrap_or(f64::NAN),
        }
    }

    /// The f32 function the CPU device evaluates (same formulas, in f32).
    #[inline(always)]
    pub fn apply_f32(&self, x: f32) -> f32 {
        match *self {
            UnaryOp::Relu => relu_f32(x),
            UnaryOp::Sigmoid => 1.0 / (1.0 + (-x).exp()),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Gelu { tanh: false } => {
                0.5 * x * (1.0 + erf_f32(x * std::f32::consts::FRAC_1_SQRT_2))
            }
            UnaryOp::Gelu { tanh: true } => {
                let c = 0.797_884_6_f32;
                0.5 * x * (1.0 + (c * (x + 0.044715 * x * x * x)).tanh())
            }
            UnaryOp::Silu => x / (1.0 + (-x).exp()),
            UnaryOp::Hardswish => x * (x + 3.0).clamp(0.0, 6.0) / 6.0,
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Clamp { min, max } => clamp_f32(x, min, max),
            op => act_forward(op, x).unwrap_or(f32::NAN),
        }
    }
}

impl UnaryOp {
    /// The float64 reference of the backward: `dx` for input `x` and upstream gradient `dy`
    /// (PyTorch's formulas; abs'(0) = 0, clamp passes the gradient where min <= x <= max).
    pub fn grad_reference(&self, x: f64, dy: f64) -> f64 {
        use std::f64::consts::{PI, SQRT_2};
        match *self {
            // PyTorch's threshold_backward: 0 where x <= 0, else dy (a NaN x passes dy).
            UnaryOp::Relu => {
                if x <= 0.0 {
                    0.0
                } else {
                    dy
                }
            }
            UnaryOp::Sigmoid => {
                let s = 1.0 / (1.0 + (-x).exp());
                dy * s * (1.0 - s)
            }
            UnaryOp::Tanh => {
                let t = x.tanh();
                dy * (1.0 - t * t)
            }
            UnaryOp::Gelu { tanh: false } => {
                let cdf = 0.5 * (1.0 + erf(x / SQRT_2));
                let pdf = (-0.5 * x * x).exp() / (2.0 * PI).sqrt();
                dy * (cdf + x * pdf)
            }
            UnaryOp::Gelu { tanh: true } => {
                let (beta, kappa) = ((2.0 / PI).sqrt(), 0.044715);
                let t = (beta * (x + kappa * x * x * x)).tanh();
                let left = 0.5 * x;
                let right = 1.0 + t;
                dy * (0.5 * right + left * (1.0 - t * t) * beta * (1.0 + 3.0 * kappa * x * x))
            }
            UnaryOp::Silu => {
                let s = 1.0 / (1.0 + (-x).exp());
                dy * s * (1.0 + x * (1.0 - s))
            }
            // PyTorch's hardswish_backward: 0 below -3, dy * (x / 3 + 1/2) up to 3, else dy.
            UnaryOp::Hardswish => {
                if x < -3.0 {
                    0.0
                } else if x <= 3.0 {
                    dy * (x / 3.0 + 0.5)
                } else {
                    dy
                }
            }
            UnaryOp::Neg => -dy,
            UnaryOp::Abs => {
                if x > 0.0 {
                    dy
                } else if x < 0.0 {
                    -dy
                } else {
                    0.0 * dy
                }
            }
            UnaryOp::Sqrt => dy / (2.0 * x.sqrt()),
            UnaryOp::Exp => dy * x.exp(),
            UnaryOp::Log => dy / x,
            UnaryOp::Sin => dy * x.cos(),
            UnaryOp::Cos => -dy * x.sin(),
            UnaryOp::Clamp { min, max } => {
                if x >= min as f64 && x <= max as f64 {
                    dy
                } else {
                    0.0
                }
            }
            op => act_grad(op, x, dy).unwrap_or(f64::NAN),
        }
    }

    /// The backward the CPU device evaluates (same formulas, in f32).
    #[inline(always)]
    pub fn grad_f32(&self, x: f32, dy: f32) -> f32 {
        match *self {
            // PyTorch's threshold_backward: 0 where x <= 0, else dy (a NaN x passes dy).
            UnaryOp::Relu => {
                if x <= 0.0 {
                    0.0
                } else {
                    dy
                }
            }
            UnaryOp::Sigmoid => {
                let s = 1.0 / (1.0 + (-x).exp());
                dy * s * (1.0 - s)
            }
            UnaryOp::Tanh => {
                let t = x.tanh();
                dy * (1.0 - t * t)
            }
            UnaryOp::Gelu { tanh: false } => {
                let cdf = 0.5 * (1.0 + erf_f32(x * std::f32::consts::FRAC_1_SQRT_2));
                let pdf = (-0.5 * x * x).exp() * 0.398_942_3_f32;
                dy * (cdf + x * pdf)
            }
            UnaryOp::Gelu { tanh: true } => {
                let (beta, kappa) = (0.797_884_6_f32, 0.044715_f32);
                let t = (beta * (x + kappa * x * x * x)).tanh();
                dy * (0.5 * (1.0 + t)
                    + 0.5 * x * (1.0 - t * t) * beta * (1.0 + 3.0 * kappa * x * x))
            }
            UnaryOp::Silu => {
                let s = 1.0 / (1.0 + (-x).exp());
                dy * s * (1.0 + x * (1.0 - s))
            }
            // PyTorch's hardswish_backward: 0 below -3, dy * (x / 3 + 1/2) up to 3, else dy.
            UnaryOp::Hardswish => {
                if x < -3.0 {
                    0.0
                } else if x <= 3.0 {
                    dy * (x / 3.0 + 0.5)
                } else {
                    dy
                }
            }
            UnaryOp::Neg => -dy,
            UnaryOp::Abs => {
                if x > 0.0 {
                    dy
                } else if x < 0.0 {
                    -dy
                } else {
                    0.0 * dy
                }
            }
            UnaryOp::Sqrt => dy / (2.0 * x.sqrt()),
            UnaryOp::Exp => dy * x.exp(),
            UnaryOp::Log => dy / x,
            UnaryOp::Sin => dy * x.cos(),
            UnaryOp::Cos => -dy * x.sin(),
            UnaryOp::Clamp { min, max } => {
                if x >= min && x <= max {
                    dy
                } else {
                    0.0
                }
            }
            op => act_grad(op, x, dy).unwrap_or(f32::NAN),
        }
    }
}

/// Comparisons with NumPy broadcasting; the result is a bool tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CompareOp {
    pub fn name(&self) -> &'static str {
        match self {
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
            CompareOp::Lt => "lt",
            CompareOp::Le => "le",
            CompareOp::Gt => "gt",
            CompareOp::Ge => "ge",
        }
    }

    /// The comparison (IEEE: every comparison with NaN is false except `ne`).
    #[inline(always)]
    pub fn apply<T: PartialOrd>(&self, a: T, b: T) -> bool {
        match self {
            CompareOp::Eq => a == b,
            CompareOp::Ne => a != b,
            CompareOp::Lt => a < b,
            CompareOp::Le => a <= b,
            CompareOp::Gt => a > b,
            CompareOp::Ge => a >= b,
        }
    }
}

/// Binary elementwise ops with NumPy broadcasting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Maximum,
    Minimum,
}

impl BinaryOp {
    pub fn name(&self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Pow => "pow",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
        }
    }

    pub fn reference(&self, a: f64, b: f64) -> f64 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Pow => a.powf(b),
            BinaryOp::Maximum => nan_max(a, b),
            BinaryOp::Minimum => nan_min(a, b),
        }
    }

    #[inline(always)]
    pub fn apply_f32(&self, a: f32, b: f32) -> f32 {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Pow => a.powf(b),
            BinaryOp::Maximum => {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else {
                    a.max(b)
                }
            }
            BinaryOp::Minimum => {
                if a.is_nan() || b.is_nan() {
                    f32::NAN
                } else {
                    a.min(b)
                }
            }
        }
    }

    /// Integer semantics (i32/i64 tensors), PyTorch's: division truncates toward zero is
    /// not PyTorch's true division, so `Div` on integers is rejected by the runtime.
    #[inline(always)]
    pub fn apply_i64(&self, a: i64, b: i64) -> i64 {
        match self {
            BinaryOp::Add => a.wrapping_add(b),
            BinaryOp::Sub => a.wrapping_sub(b),
            BinaryOp::Mul => a.wrapping_mul(b),
            BinaryOp::Div => a.checked_div(b).unwrap_or(0),
            BinaryOp::Pow => {
                if b < 0 {
                    0
                } else {
                    a.wrapping_pow(b.min(u32::MAX as i64) as u32)
                }
            }
            BinaryOp::Maximum => a.max(b),
            BinaryOp::Minimum => a.min(b),
        }
    }
}

impl BinaryOp {
    /// The float64 reference of the backward: `(da, db)` for one output element, before the
    /// reduction over broadcast dimensions (PyTorch's formulas: pow's grads are masked where
    /// the exponent is 0 / where `a == 0` and `b >= 0`; maximum/minimum split ties evenly).
    pub fn grad_reference(&self, a: f64, b: f64, dy: f64) -> (f64, f64) {
        match self {
            BinaryOp::Add => (dy, dy),
            BinaryOp::Sub => (dy, -dy),
            BinaryOp::Mul => (dy * b, dy * a),
            // PyTorch's `-grad * ((self / other) / other)`: no `b * b` to overflow.
            BinaryOp::Div => (dy / b, -dy * ((a / b) / b)),
            BinaryOp::Pow => {
                let ga = if b == 0.0 {
                    0.0
                } else {
                    dy * b * a.powf(b - 1.0)
                };
                let gb = if a == 0.0 && b >= 0.0 {
                    0.0
                } else {
                    dy * a.powf(b) * a.ln()
                };
                (ga, gb)
            }
            // PyTorch's derivatives.yaml: `where(a == b, grad / 2, grad)`, zeroed for the
            // operand that loses. Comparisons with NaN are false, so both sides get `grad`.
            BinaryOp::Maximum | BinaryOp::Minimum => {
                let g = if a == b { dy / 2.0 } else { dy };
                let (a_loses, b_loses) = if *self == BinaryOp::Maximum {
                    (a < b, a > b)
                } else {
                    (a > b, a < b)
                };
                (if a_loses { 0.0 } else { g }, if b_loses { 0.0 } else { g })
            }
        }
    }

    /// The backward the CPU device evaluates, in f32.
    #[inline(always)]
    pub fn grad_f32(&self, a: f32, b: f32, dy: f32) -> (f32, f32) {
        match self {
            BinaryOp::Add => (dy, dy),
            BinaryOp::Sub => (dy, -dy),
            BinaryOp::Mul => (dy * b, dy * a),
            // PyTorch's `-grad * ((self / other) / other)`: no `b * b` to overflow.
            BinaryOp::Div => (dy / b, -dy * ((a / b) / b)),
            BinaryOp::Pow => {
                let ga = if b == 0.0 {
                    0.0
                } else {
                    dy * b * a.powf(b - 1.0)
                };
                let gb = if a == 0.0 && b >= 0.0 {
                    0.0
                } else {
                    dy * a.powf(b) * a.ln()
                };
                (ga, gb)
            }
            // PyTorch's derivatives.yaml: `where(a == b, grad / 2, grad)`, zeroed for the
            // operand that loses. Comparisons with NaN are false, so both sides get `grad`.
            BinaryOp::Maximum | BinaryOp::Minimum => {
                let g = if a == b { dy * 0.5 } else { dy };
                let (a_loses, b_loses) = if *self == BinaryOp::Maximum {
                    (a < b, a > b)
                } else {
                    (a > b, a < b)
                };
                (if a_loses { 0.0 } else { g }, if b_loses { 0.0 } else { g })
            }
        }
    }
}

fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// erf in float64 (Abramowitz–Stegun 7.1.26 is too coarse; this is W. J. Cody's rational
/// approximation as used by many libms, accurate to ~1e-16).
pub fn erf(x: f64) -> f64 {
    libm_erf(x)
}

/// erf in f32, accurate to about 1 ulp (from the float64 routine).
#[inline(always)]
pub fn erf_f32(x: f32) -> f32 {
    // A minimax polynomial would be faster; the f64 path keeps the CPU exact to f32.
    libm_erf(x as f64) as f32
}

// Port of FreeBSD's s_erf.c (public domain, Sun Microsystems), the routine behind most libms.
#[allow(clippy::excessive_precision, clippy::unreadable_literal)]
fn libm_erf(x: f64) -> f64 {
    const ERX: f64 = 8.45062911510467529297e-01;
    const EFX8: f64 = 1.02703333676410069053e+00;
    const PP: [f64; 5] = [
        1.28379167095512558561e-01,
        -3.25042107247001499370e-01,
        -2.84817495755985104766e-02,
        -5.77027029648944159157e-03,
        -2.37630166566501626084e-05,
    ];
    const QQ: [f64; 5] = [
        3.97917223959155352819e-01,
        6.50222499887672944485e-02,
        5.08130628187576562776e-03,
        1.32494738004321644526e-04,
        -3.96022827877536812320e-06,
    ];
    const PA: [f64; 7] = [
        -2.36211856075265944077e-03,
        4.14856118683748331666e-01,
        -3.72207876035701323847e-01,
        3.18346619901161753674e-01,
        -1.10894694282396677476e-01,
        3.54783043256182359371e-02,
        -2.16637559486879084300e-03,
    ];
    const QA: [f64; 6] = [
        1.06420880400844228286e-01,
        5.40397917702171048937e-01,
        7.18286544141962662868e-02,
        1.26171219808761642112e-01,
        1.36370839120290507362e-02,
        1.19844998467991074170e-02,
    ];
    const RA: [f64; 8] = [
        -9.86494403484714822705e-03,
        -6.93858572707181764372e-01,
        -1.05586262253232909814e+01,
        -6.23753324503260060396e+01,
        -1.62396669462573470355e+02,
        -1.84605092906711035994e+02,
        -8.12874355063065934246e+01,
        -9.81432934416914548592e+00,
    ];
    const SA: [f64; 8] = [
        1.96512716674392571292e+01,
        1.37657754143519042600e+02,
        4.34565877475229228821e+02,
        6.45387271733267880336e+02,
        4.29008140027567833386e+02,
        1.08635005541779435134e+02,
        6.57024977031928170135e+00,
        -6.04244152148580987438e-02,
    ];
    const RB: [f64; 7] = [
        -9.86494292470009928597e-03,
        -7.99283237680523006574e-01,
        -1.77579549177547519889e+01,
        -1.60636384855821916062e+02,
        -6.37566443368389627722e+02,
        -1.02509513161107724954e+03,
        -4.83519191608651397019e+02,
    ];
    const SB: [f64; 7] = [
        3.03380607434824582924e+01,
        3.25792512996573918826e+02,
        1.53672958608443695994e+03,
        3.19985821950859553908e+03,
        2.55305040643316442583e+03,
        4.74528541206955367215e+02,
        -2.24409524465858183362e+01,
    ];
    if x.is_nan() {
        return x;
    }
    let sign = x < 0.0;
    let ax = x.abs();
    if ax < 0.84375 {
        if ax < 1.0 / (1u64 << 28) as f64 {
            return 0.125 * (8.0 * x + EFX8 * x);
        }
        let z = x * x;
        let r = PP[0] + z * (PP[1] + z * (PP[2] + z * (PP[3] + z * PP[4])));
        let s = 1.0 + z * (QQ[0] + z * (QQ[1] + z * (QQ[2] + z * (QQ[3] + z * QQ[4]))));
        return x + x * (r / s);
    }
    if ax < 1.25 {
        let s = ax - 1.0;
        let p =
            PA[0] + s * (PA[1] + s * (PA[2] + s * (PA[3] + s * (PA[4] + s * (PA[5] + s * PA[6])))));
        let q =
            1.0 + s * (QA[0] + s * (QA[1] + s * (QA[2] + s * (QA[3] + s * (QA[4] + s * QA[5])))));
        return if sign { -ERX - p / q } else { ERX + p / q };
    }
    if ax >= 6.0 {
        return if sign { -1.0 } else { 1.0 };
    }
    let s = 1.0 / (ax * ax);
    let (r, ss) = if ax < 1.0 / 0.35 {
        (
            RA[0]
                + s * (RA[1]
                    + s * (RA[2]
                        + s * (RA[3] + s * (RA[4] + s * (RA[5] + s * (RA[6] + s * RA[7])))))),
            1.0 + s
                * (SA[0]
                    + s * (SA[1]
                        + s * (SA[2]
                            + s * (SA[3] + s * (SA[4] + s * (SA[5] + s * (SA[6] + s * SA[7]))))))),
        )
    } else {
        (
            RB[0] + s * (RB[1] + s * (RB[2] + s * (RB[3] + s * (RB[4] + s * (RB[5] + s * RB[6]))))),
            1.0 + s
                * (SB[0]
                    + s * (SB[1]
                        + s * (SB[2] + s * (SB[3] + s * (SB[4] + s * (SB[5] + s * SB[6])))))),
        )
    };
    let z = f64::from_bits(ax.to_bits() & 0xffff_ffff_0000_0000);
    let r = (-z * z - 0.5625).exp() * ((z - ax) * (z + ax) + r / ss).exp();
    let res = 1.0 - r / ax;
    if sign { -res } else { res }
}

/// `relu(x)` as PyTorch computes it: NaN propagates (`f32::max(NaN, 0)` would give 0).
#[inline(always)]
pub fn relu_f32(x: f32) -> f32 {
    if x < 0.0 { 0.0 } else { x }
}

/// [`relu_f32`] in f64.
#[inline(always)]
pub fn relu_f64(x: f64) -> f64 {
    if x < 0.0 { 0.0 } else { x }
}

/// `torch.clamp(x, min, max)`: `min(max(x, min), max)` with NaN propagated.
#[inline(always)]
pub fn clamp_f32(x: f32, min: f32, max: f32) -> f32 {
    if x.is_nan() { x } else { x.max(min).min(max) }
}

/// [`clamp_f32`] in f64.
#[inline(always)]
pub fn clamp_f64(x: f64, min: f64, max: f64) -> f64 {
    if x.is_nan() { x } else { x.max(min).min(max) }
}

/// `torch.clamp(x, min=Tensor, max=Tensor)` for one element (either bound may be absent):
/// `minimum(maximum(x, min), max)`, a NaN anywhere (x or a bound) gives NaN, and `max` wins
/// when `min > max`.
pub fn clamp_tensor_reference(x: f64, min: Option<f64>, max: Option<f64>) -> f64 {
    let mut v = x;
    if let Some(lo) = min {
        v = nan_max(v, lo);
    }
    if let Some(hi) = max {
        v = nan_min(v, hi);
    }
    v
}

/// PyTorch's gradients of `torch.clamp(x, min=Tensor, max=Tensor)` for one element,
/// before the sums over broadcast dimensions (derivatives.yaml: `clamp_backward` and
/// `clamp_backward_min_max`): `(dx, dmin, dmax)`. x gets `dy` where `min <= x <= max`
/// (comparisons with an absent bound hold); with both bounds, `min` gets `dy` where
/// `x < min` and `min < max`, `max` where `x > max` or `max < min`; with one bound it gets
/// `dy` where x is beyond it. A NaN compares false everywhere.
pub fn clamp_tensor_grad_reference(
    x: f64,
    min: Option<f64>,
    max: Option<f64>,
    dy: f64,
) -> (f64, f64, f64) {
    let pick = |c: bool| if c { dy } else { 0.0 };
    let dx = pick(min.is_none_or(|lo| x >= lo) && max.is_none_or(|hi| x <= hi));
    let (dmin, dmax) = match (min, max) {
        (Some(lo), Some(hi)) => (pick(x < lo && lo < hi), pick(x > hi || hi < lo)),
        (Some(lo), None) => (pick(x < lo), 0.0),
        (None, Some(hi)) => (0.0, pick(x > hi)),
        (None, None) => (0.0, 0.0),
    };
    (dx, dmin, dmax)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn erf_matches_known_values() {
        let cases = [
            (0.0, 0.0),
            (0.5, 0.520_499_877_813_046_5),
            (1.0, 0.842_700_792_949_714_9),
            (2.0, 0.995_322_265_018_952_7),
            (-1.5, -0.966_105_146_475_310_7),
            (3.5, 0.999_999_256_901_627_7),
        ];
        for (x, e) in cases {
            assert!((erf(x) - e).abs() < 1e-15, "erf({x}) = {} != {e}", erf(x));
        }
    }
}
