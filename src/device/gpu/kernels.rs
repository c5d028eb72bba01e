//! The kernels the GPU ops launch, named in one place, by op type (as candle's `UnaryOpT`
//! carries its `KERNEL` name).
//!
//! * One [`Kernel`] table per kernel family of kernels/*.hip: its source, its base name and
//!   the suffixes it is built for (the dtype suffix rule, element sizes, row plans...). An op
//!   asks its table for the name (`UNARY.dtype(op.name(), dtype)?`, `FILL.size(bytes)`)
//!   instead of formatting one.
//! * The codes the kernels' `op`/`act`/`kind` arguments take ([`unary`], [`binary`],
//!   [`compare`], [`act`], [`loss`]), defined once here; the .hip files `#define` the same
//!   `RB_<FAMILY>_<NAME>` values and switch on those names. The per-op f32 unary kernels are
//!   named by op: `rb_unary_f32_x4_<op>`; the per-op vector kernels by dtype and op
//!   ([`Suffix::DtypeOp`]): `rb_unary_h8_<f16|bf16>_<op>`, `rb_binary_h8_<f16|bf16>_<op>`,
//!   `rb_pw_unary_bwd_v_<dtype>_<op>`.
//!
//! The unit tests below expand the sources' macros and check that every name a table can
//! produce is a kernel of its source, that the sources' op codes and switch labels are these,
//! and that no GPU op spells a kernel name itself. They need no GPU.

use super::jit::{self, Source};
use crate::base::dtype::DType;
use crate::ops::conv::Activation;
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::nn::LossKind;
use crate::{Error, Result};

/// The floating dtypes (f16/bf16 compute in f32).
pub const FLOAT: &[DType] = &[DType::F32, DType::F16, DType::BF16];
/// The floating and integer dtypes.
pub const NUMERIC: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64];
/// The dtypes of the arithmetic binary kernels: the numeric ones, f64 and the small
/// integers.
pub const BINARY_DTYPES: &[DType] = &[
    DType::F32,
    DType::F16,
    DType::BF16,
    DType::I32,
    DType::I64,
    DType::F64,
    DType::I8,
    DType::U8,
    DType::I16,
];
/// The floating dtypes and f64 (the GEMM's).
pub const FLOAT_F64: &[DType] = &[DType::F32, DType::F16, DType::BF16, DType::F64];
/// The integer dtypes.
pub const INTS: &[DType] = &[DType::I32, DType::I64];
/// Every integer dtype and bool.
pub const INTEGRAL_BOOL: &[DType] = &[
    DType::I32,
    DType::I64,
    DType::Bool,
    DType::I8,
    DType::U8,
    DType::I16,
];
/// The half-precision dtypes.
pub const HALF: &[DType] = &[DType::F16, DType::BF16];
/// Every dtype.
pub const ALL_DTYPES: &[DType] = &DType::ALL;
/// Every element size of a dtype, in bytes.
pub const DTYPE_SIZES: &[usize] = &[1, 2, 4, 8];

/// The kernel-name suffix of a floating dtype, or DTYPE_MISMATCH naming `op`.
pub fn float_suffix(op: &str, dtype: DType) -> Result<&'static str> {
    Ok(match dtype {
        DType::F32 => "f32",
        DType::F16 => "f16",
        DType::BF16 => "bf16",
        other => {
            return Err(Error::dtype(format!(
                "{op}: dtype {other} is not supported (f32, f16 or bf16)"
            )));
        }
    })
}

/// What follows a family's base name.
#[derive(Clone, Copy, Debug)]
pub enum Suffix {
    /// Nothing: one kernel, named `base`.
    Lone,
    /// `_<dtype>` (`_f32`, `_i64`, `_bool`, ...) for each of these dtypes.
    Dtype(&'static [DType]),
    /// `_<dtype><variant>` for each floating dtype and each variant (`""`, `"_i32"`, `"_v4"`).
    FloatThen(&'static [&'static str]),
    /// `_<dtype><variant>` for each of these dtypes and each variant.
    DtypeThen(&'static [DType], &'static [&'static str]),
    /// `_<dtype>_v<v>_n<n>_<w|b>` for each floating dtype and register-row plan
    /// ([`row_suffix`]).
    FloatRows,
    /// `_<prefix><n>` for each `n`: element bytes (`_b4`), word bytes (`_w16`).
    Size(&'static str, &'static [usize]),
    /// `_<op>` for each unary op (the names of [`unary::ALL`]).
    UnaryOp,
    /// `_<dtype>_<op>` for each of these dtypes and each op of a code family (one kernel per
    /// dtype and op: the op folded at compile time).
    DtypeOp(&'static [DType], &'static [OpCode]),
}

/// A family of kernels in one source: `<base><suffix>` for each suffix it is built for.
pub struct Kernel {
    pub src: &'static Source,
    pub base: &'static str,
    pub suffix: Suffix,
}

impl Kernel {
    /// The name of a lone kernel.
    pub fn lone(&self) -> &'static str {
        debug_assert!(matches!(self.suffix, Suffix::Lone), "{}", self.base);
        self.base
    }

    /// `<base>_<dtype>` when the family is built for `dtype`, else DTYPE_MISMATCH naming `op`
    /// (the floating families' message: ops that take other dtypes check them first).
    pub fn dtype(&self, op: &str, dtype: DType) -> Result<String> {
        let ok = match self.suffix {
            Suffix::Dtype(list) | Suffix::DtypeThen(list, _) => list.contains(&dtype),
            Suffix::FloatThen(_) | Suffix::FloatRows => dtype.is_float(),
            _ => false,
        };
        if !ok {
            // Every family with dtypes is built for the floating ones: float_suffix's message.
            float_suffix(op, dtype)?;
            return Err(Error::dtype(format!(
                "{op}: dtype {dtype} is not supported"
            )));
        }
        Ok(format!("{}_{}", self.base, dtype.name()))
    }

    /// `<base>_<suffix>` for a dtype suffix already checked by [`float_suffix`] (ops that
    /// launch several kernels of one dtype check it once, before anything else).
    pub fn suffixed(&self, suffix: &str) -> String {
        format!("{}_{suffix}", self.base)
    }

    /// `<base>_<dtype><variant>` (a [`Suffix::FloatThen`] or [`Suffix::DtypeThen`] family).
    pub fn dtype_then(&self, op: &str, dtype: DType, variant: &str) -> Result<String> {
        Ok(self.dtype(op, dtype)? + variant)
    }

    /// `<base>_<dtype>_v<v>_n<n>_<w|b>` (a [`Suffix::FloatRows`] family).
    pub fn rows(&self, op: &str, dtype: DType, v: u32, n: u32, warp: bool) -> Result<String> {
        Ok(self.dtype(op, dtype)? + &row_suffix(v, n, warp))
    }

    /// `<base>_<prefix><n>` (a [`Suffix::Size`] family).
    pub fn size(&self, n: usize) -> String {
        match self.suffix {
            Suffix::Size(prefix, _) => format!("{}_{prefix}{n}", self.base),
            _ => unreachable!("{} has no size suffix", self.base),
        }
    }

    /// The sizes a [`Suffix::Size`] family is built for.
    pub fn sizes(&self) -> &'static [usize] {
        match self.suffix {
            Suffix::Size(_, sizes) => sizes,
            _ => &[],
        }
    }

    /// `<base>_<op>` (a [`Suffix::UnaryOp`] family).
    pub fn op(&self, op: OpCode) -> String {
        format!("{}_{}", self.base, op.name)
    }

    /// `<base>_<dtype>_<op>` (a [`Suffix::DtypeOp`] family), or DTYPE_MISMATCH naming `what`
    /// when the family is not built for `dtype`.
    pub fn dtype_op(&self, what: &str, dtype: DType, op: OpCode) -> Result<String> {
        match self.suffix {
            Suffix::DtypeOp(list, ops) if list.contains(&dtype) && ops.contains(&op) => {
                Ok(format!("{}_{}_{}", self.base, dtype.name(), op.name))
            }
            _ => Err(Error::dtype(format!(
                "{what}: {} has no {dtype} kernel for {}",
                self.base, op.name
            ))),
        }
    }

    /// Whether a [`Suffix::Dtype`] or [`Suffix::DtypeOp`] family is built for `dtype`.
    pub fn has_dtype(&self, dtype: DType) -> bool {
        match self.suffix {
            Suffix::Dtype(list) | Suffix::DtypeOp(list, _) => list.contains(&dtype),
            _ => false,
        }
    }

    /// Every kernel of the family.
    pub fn names(&self) -> Vec<String> {
        let b = self.base;
        match self.suffix {
            Suffix::Lone => vec![b.to_string()],
            Suffix::Dtype(list) => list.iter().map(|d| format!("{b}_{}", d.name())).collect(),
            Suffix::FloatThen(variants) => dtype_then_names(b, FLOAT, variants),
            Suffix::DtypeThen(list, variants) => dtype_then_names(b, list, variants),
            Suffix::FloatRows => FLOAT
                .iter()
                .flat_map(|d| row_suffixes().map(move |r| format!("{b}_{}{r}", d.name())))
                .collect(),
            Suffix::Size(prefix, sizes) => {
                sizes.iter().map(|n| format!("{b}_{prefix}{n}")).collect()
            }
            Suffix::UnaryOp => unary::ALL
                .iter()
                .map(|o| format!("{b}_{}", o.name))
                .collect(),
            Suffix::DtypeOp(list, ops) => list
                .iter()
                .flat_map(|d| {
                    ops.iter()
                        .map(move |o| format!("{b}_{}_{}", d.name(), o.name))
                })
                .collect(),
        }
    }
}

/// `<base>_<dtype><variant>` for each dtype and variant.
fn dtype_then_names(base: &str, dtypes: &[DType], variants: &[&str]) -> Vec<String> {
    dtypes
        .iter()
        .flat_map(|d| {
            variants
                .iter()
                .map(move |v| format!("{base}_{}{v}", d.name()))
        })
        .collect()
}

/// Elements per chunk of the register-row kernels.
pub const ROW_VS: [u32; 2] = [1, 4];
/// Chunks per thread of the register-row kernels, one warp per row (warp mode stops at 4)...
pub const ROW_WARP_NS: [u32; 3] = [1, 2, 4];
/// ...and one block per row.
pub const ROW_BLOCK_NS: [u32; 4] = [1, 2, 4, 8];

/// `_v<v>_n<n>_<w|b>`: a register-row kernel's plan (kernels/norm.hip `RB_ROWS_NS`).
pub fn row_suffix(v: u32, n: u32, warp: bool) -> String {
    format!("_v{v}_n{n}_{}", if warp { "w" } else { "b" })
}

fn row_suffixes() -> impl Iterator<Item = String> {
    ROW_VS.into_iter().flat_map(|v| {
        let warp = ROW_WARP_NS.iter().map(move |&n| row_suffix(v, n, true));
        let block = ROW_BLOCK_NS.iter().map(move |&n| row_suffix(v, n, false));
        warp.chain(block)
    })
}

/// An op code a kernel argument takes: `RB_<FAMILY>_<NAME>` in the kernel sources, `name`
/// in kernel names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpCode {
    pub name: &'static str,
    pub code: i32,
}

/// One module per op-code family: a const per op and `ALL`, in code order.
macro_rules! op_codes {
    ($($(#[$doc:meta])* $family:ident { $($op:ident = $code:literal => $name:literal),* $(,)? })*) => {
        $(
            $(#[$doc])*
            pub mod $family {
                use super::OpCode;
                $(pub const $op: OpCode = OpCode { name: $name, code: $code };)*
                /// Every op of the family, in code order.
                pub const ALL: &[OpCode] = &[$($op),*];
            }
        )*
    };
}

op_codes! {
    /// UnaryOp codes: `op` of `rb_unary_*` (kernels/elementwise.hip) and `rb_pw_unary_bwd_*`
    /// (kernels/pointwise.hip); `rb_unary_f32_x4_<name>` is one op's f32 kernel.
    unary {
        RELU = 0 => "relu",
        SIGMOID = 1 => "sigmoid",
        TANH = 2 => "tanh",
        GELU = 3 => "gelu",
        GELU_TANH = 4 => "gelu_tanh",
        SILU = 5 => "silu",
        NEG = 6 => "neg",
        ABS = 7 => "abs",
        SQRT = 8 => "sqrt",
        EXP = 9 => "exp",
        LOG = 10 => "log",
        SIN = 11 => "sin",
        COS = 12 => "cos",
        CLAMP = 13 => "clamp",
        HARDSWISH = 14 => "hardswish",
        LEAKY_RELU = 15 => "leaky_relu",
        ELU = 16 => "elu",
        SELU = 17 => "selu",
        CELU = 18 => "celu",
        HARDSIGMOID = 19 => "hardsigmoid",
        SOFTPLUS = 20 => "softplus",
        SOFTSIGN = 21 => "softsign",
        MISH = 22 => "mish",
        ERF = 23 => "erf",
        SIGN = 24 => "sign",
        FLOOR = 25 => "floor",
        CEIL = 26 => "ceil",
        ROUND = 27 => "round",
        RECIPROCAL = 28 => "reciprocal",
    }
    /// BinaryOp codes: `op` of `rb_binary_*` (kernels/elementwise.hip) and
    /// `rb_pw_binary_bwd_*` (kernels/pointwise.hip).
    binary {
        ADD = 0 => "add",
        SUB = 1 => "sub",
        MUL = 2 => "mul",
        DIV = 3 => "div",
        POW = 4 => "pow",
        MAXIMUM = 5 => "maximum",
        MINIMUM = 6 => "minimum",
    }
    /// CompareOp codes: `op` of `rb_pw_compare_*` and `rb_pw_where_cmp_*`
    /// (kernels/pointwise.hip).
    compare {
        EQ = 0 => "eq",
        NE = 1 => "ne",
        LT = 2 => "lt",
        LE = 3 => "le",
        GT = 4 => "gt",
        GE = 5 => "ge",
    }
    /// Activation codes: `act` of `rb_pw_bias_act_*` (kernels/pointwise.hip) and
    /// `rb_bias_act_*` (kernels/pool.hip).
    act {
        NONE = 0 => "none",
        RELU = 1 => "relu",
        GELU = 2 => "gelu",
        GELU_TANH = 3 => "gelu_tanh",
    }
    /// LossKind codes: `kind` of the kernels of kernels/loss.hip; COUNT only counts and checks
    /// class targets.
    loss {
        MSE = 0 => "mse",
        BCE = 1 => "bce",
        NLL = 2 => "nll",
        CE = 3 => "ce",
        COUNT = 4 => "count",
    }
}

/// A unary op's code and its two float parameters (clamp's bounds).
pub fn unary_op(op: UnaryOp) -> (OpCode, f32, f32) {
    match op {
        UnaryOp::Relu => (unary::RELU, 0.0, 0.0),
        UnaryOp::Sigmoid => (unary::SIGMOID, 0.0, 0.0),
        UnaryOp::Tanh => (unary::TANH, 0.0, 0.0),
        UnaryOp::Gelu { tanh: false } => (unary::GELU, 0.0, 0.0),
        UnaryOp::Gelu { tanh: true } => (unary::GELU_TANH, 0.0, 0.0),
        UnaryOp::Silu => (unary::SILU, 0.0, 0.0),
        UnaryOp::Hardswish => (unary::HARDSWISH, 0.0, 0.0),
        UnaryOp::Neg => (unary::NEG, 0.0, 0.0),
        UnaryOp::Abs => (unary::ABS, 0.0, 0.0),
        UnaryOp::Sqrt => (unary::SQRT, 0.0, 0.0),
        UnaryOp::Exp => (unary::EXP, 0.0, 0.0),
        UnaryOp::Log => (unary::LOG, 0.0, 0.0),
        UnaryOp::Sin => (unary::SIN, 0.0, 0.0),
        UnaryOp::Cos => (unary::COS, 0.0, 0.0),
        UnaryOp::Clamp { min, max } => (unary::CLAMP, min, max),
        UnaryOp::LeakyRelu { slope } => (unary::LEAKY_RELU, slope, 0.0),
        UnaryOp::Elu { alpha } => (unary::ELU, alpha, 0.0),
        UnaryOp::Selu => (unary::SELU, 0.0, 0.0),
        UnaryOp::Celu { alpha } => (unary::CELU, alpha, 0.0),
        UnaryOp::Hardsigmoid => (unary::HARDSIGMOID, 0.0, 0.0),
        UnaryOp::Softplus { beta, threshold } => (unary::SOFTPLUS, beta, threshold),
        UnaryOp::Softsign => (unary::SOFTSIGN, 0.0, 0.0),
        UnaryOp::Mish => (unary::MISH, 0.0, 0.0),
        UnaryOp::Erf => (unary::ERF, 0.0, 0.0),
        UnaryOp::Sign => (unary::SIGN, 0.0, 0.0),
        UnaryOp::Floor => (unary::FLOOR, 0.0, 0.0),
        UnaryOp::Ceil => (unary::CEIL, 0.0, 0.0),
        UnaryOp::Round => (unary::ROUND, 0.0, 0.0),
        UnaryOp::Reciprocal => (unary::RECIPROCAL, 0.0, 0.0),
    }
}

pub fn binary_op(op: BinaryOp) -> OpCode {
    match op {
        BinaryOp::Add => binary::ADD,
        BinaryOp::Sub => binary::SUB,
        BinaryOp::Mul => binary::MUL,
        BinaryOp::Div => binary::DIV,
        BinaryOp::Pow => binary::POW,
        BinaryOp::Maximum => binary::MAXIMUM,
        BinaryOp::Minimum => binary::MINIMUM,
    }
}

pub fn compare_op(op: CompareOp) -> OpCode {
    match op {
        CompareOp::Eq => compare::EQ,
        CompareOp::Ne => compare::NE,
        CompareOp::Lt => compare::LT,
        CompareOp::Le => compare::LE,
        CompareOp::Gt => compare::GT,
        CompareOp::Ge => compare::GE,
    }
}

pub fn act_op(a: Activation) -> OpCode {
    match a {
        Activation::None => act::NONE,
        Activation::Relu => act::RELU,
        Activation::Gelu { tanh: false } => act::GELU,
        Activation::Gelu { tanh: true } => act::GELU_TANH,
    }
}

pub fn loss_op(k: LossKind) -> OpCode {
    match k {
        LossKind::Mse => loss::MSE,
        LossKind::Bce => loss::BCE,
        LossKind::Nll => loss::NLL,
        LossKind::CrossEntropy => loss::CE,
    }
}

/// The tables, each with its name (for the tests).
macro_rules! tables {
    ($($(#[$doc:meta])* $name:ident = $src:ident, $base:literal, $suffix:expr;)*) => {
        $($(#[$doc])* pub static $name: Kernel = Kernel { src: &jit::$src, base: $base, suffix: $suffix };)*
        /// Every table.
        pub static ALL: &[(&str, &Kernel)] = &[$((stringify!($name), &$name)),*];
    };
}

use Suffix::{Dtype, DtypeThen, FloatRows, FloatThen, Lone, Size};

tables! {
    // ---- kernels/elementwise.hip
    FILL = ELEMENTWISE, "rb_fill", Size("b", DTYPE_SIZES);
    RANDN = ELEMENTWISE, "rb_randn", Dtype(FLOAT);
    RANDINT = ELEMENTWISE, "rb_randint", Lone;
    CAST = ELEMENTWISE, "rb_cast", Lone;
    /// f32 -> f16/bf16 and back, 8 elements per thread.
    CAST_F32_H8 = ELEMENTWISE, "rb_cast_f32_h8", Dtype(HALF);
    CAST_H8_F32 = ELEMENTWISE, "rb_cast_h8_f32", Dtype(HALF);
    UNARY = ELEMENTWISE, "rb_unary", Dtype(FLOAT);
    /// f64 unary ops (every UnaryOp) in double, and their backward.
    UNARY_D = ELEMENTWISE, "rb_unary_d", Dtype(&[DType::F64]);
    UNARY_BWD_D = ELEMENTWISE, "rb_unary_bwd_d", Dtype(&[DType::F64]);
    /// f32 16-byte vectors, one kernel per op.
    UNARY_F32_X4 = ELEMENTWISE, "rb_unary_f32_x4", Suffix::UnaryOp;
    /// f16/bf16 16-byte vectors, one kernel per dtype and op.
    UNARY_H8 = ELEMENTWISE, "rb_unary_h8", Suffix::DtypeOp(HALF, unary::ALL);
    BINARY = ELEMENTWISE, "rb_binary", Dtype(BINARY_DTYPES);
    /// f16/bf16 16-byte vectors, one kernel per dtype and op; same-shape, scalar or
    /// trailing-broadcast operands (their periods).
    BINARY_H8 = ELEMENTWISE, "rb_binary_h8", Suffix::DtypeOp(HALF, binary::ALL);
    BINARY_F32_FLAT = ELEMENTWISE, "rb_binary_f32_flat", Lone;
    BINARY_F32_FLAT_V4 = ELEMENTWISE, "rb_binary_f32_flat_v4", Lone;
    /// Column-major `C = beta * C` (GEMM with k = 0).
    SCALE_CM = ELEMENTWISE, "rb_scale_cm", Dtype(FLOAT_F64);

    // ---- kernels/pointwise.hip
    PW_UNARY_BWD = POINTWISE, "rb_pw_unary_bwd", Dtype(FLOAT);
    /// Same-shape unary backward in 16-byte vectors, one kernel per dtype and op.
    PW_UNARY_BWD_V = POINTWISE, "rb_pw_unary_bwd_v", Suffix::DtypeOp(FLOAT, unary::ALL);
    PW_BINARY_BWD = POINTWISE, "rb_pw_binary_bwd", Dtype(FLOAT_F64);
    PW_COMPARE = POINTWISE, "rb_pw_compare", Dtype(ALL_DTYPES);
    PW_COMPARE_F32_FLAT = POINTWISE, "rb_pw_compare_f32_flat", Lone;
    /// Same-shape f16/bf16 comparisons, 8 halves per thread.
    PW_COMPARE_H8 = POINTWISE, "rb_pw_compare_h8", Dtype(HALF);
    PW_WHERE = POINTWISE, "rb_pw_where", Size("b", DTYPE_SIZES);
    PW_WHERE_B4_FLAT = POINTWISE, "rb_pw_where_b4_flat", Lone;
    PW_WHERE_B2_FLAT = POINTWISE, "rb_pw_where_b2_flat", Lone;
    PW_WHERE_CMP = POINTWISE, "rb_pw_where_cmp", Dtype(ALL_DTYPES);
    PW_WHERE_CMP_F32_FLAT = POINTWISE, "rb_pw_where_cmp_f32_flat", Lone;
    PW_WHERE_CMP_H8 = POINTWISE, "rb_pw_where_cmp_h8", Dtype(HALF);
    PW_ADD_RELU = POINTWISE, "rb_pw_add_relu", Dtype(FLOAT);
    PW_ADD_RELU_F32_FLAT = POINTWISE, "rb_pw_add_relu_f32_flat", Lone;
    PW_MUL_ADD = POINTWISE, "rb_pw_mul_add", Dtype(FLOAT);
    /// GEMM epilogue: bias + activation on row-major `[m, n]`.
    PW_BIAS_ACT = POINTWISE, "rb_pw_bias_act", Dtype(FLOAT);
    /// The same in 16-byte vectors over a 2-D grid, and the bias broadcast (`fill`).
    PW_BIAS_ACT_V = POINTWISE, "rb_pw_bias_act_v", Dtype(FLOAT);
    PW_SUM_ROWS = POINTWISE, "rb_pw_sum_rows", Dtype(FLOAT);

    // ---- kernels/data.hip
    GEAM = DATA, "rb_geam", Dtype(FLOAT);
    TRANSPOSE = DATA, "rb_transpose", Size("b", DTYPE_SIZES);
    COPY_ND = DATA, "rb_copy_nd", Size("b", &[1, 2, 4, 8, 16]);
    /// Rows copied in words of 16, 8, 4 or 2 bytes (the widest first).
    EMBEDDING = DATA, "rb_embedding", Size("w", &[16, 8, 4, 2]);
    EMBEDDING_BWD = DATA, "rb_embedding_bwd", Dtype(FLOAT);
    /// `rb_copy_nd` with signed source strides (negative-step slices).
    COPY_ND_SIGNED = DATA, "rb_copy_nd_signed", Size("b", DTYPE_SIZES);
    /// Gather along one axis (torch.gather, ONNX Gather/GatherElements), by element size.
    GATHER_AXIS = DATA, "rb_gather_axis", Size("b", DTYPE_SIZES);
    /// Its backward: atomic f32 adds into the indexed tensor.
    SCATTER_ADD_AXIS = DATA, "rb_scatter_add_axis", Dtype(FLOAT);
    /// torch.topk along the last axis: a bitonic sort per row in shared memory (rows up to
    /// 2048) or a repeated block-wide selection (longer rows).
    TOPK_SORT = DATA, "rb_topk_sort", Dtype(BINARY_DTYPES);
    TOPK_SELECT = DATA, "rb_topk_select", Dtype(BINARY_DTYPES);
    /// torch.scatter (writes, by element size) and scatter_reduce (add/mul/max/min, by
    /// dtype): a thread per fiber along the axis.
    SCATTER_AXIS = DATA, "rb_scatter_axis", Size("b", DTYPE_SIZES);
    SCATTER_RED = DATA, "rb_scatter_red", Dtype(BINARY_DTYPES);
    /// torch.arange.
    ARANGE = DATA, "rb_arange", Dtype(BINARY_DTYPES);
    /// torch.cumsum of the integer dtypes and bool: i64 running sums, a thread per fiber.
    CUMSUM_INT = DATA, "rb_cumsum_int", Dtype(INTEGRAL_BOOL);

    // ---- kernels/reduce.hip
    REDUCE_ROWS_WARP = REDUCE, "rb_reduce_rows_warp", Dtype(FLOAT_F64);
    REDUCE_FULL = REDUCE, "rb_reduce_full", Dtype(FLOAT_F64);
    REDUCE_ROWS = REDUCE, "rb_reduce_rows", Dtype(FLOAT_F64);
    REDUCE_COLS = REDUCE, "rb_reduce_cols", Dtype(FLOAT_F64);
    REDUCE_COMBINE = REDUCE, "rb_reduce_combine", Dtype(FLOAT_F64);
    ARGMAX = REDUCE, "rb_argmax", Dtype(FLOAT_F64);
    REDUCE_STATS = REDUCE, "rb_reduce_stats", Dtype(FLOAT_F64);
    REDUCE_BACKWARD = REDUCE, "rb_reduce_backward", Dtype(FLOAT_F64);
    /// Integer sum/prod (wrapping), a block per output.
    REDUCE_INT = REDUCE, "rb_reduce_int", Dtype(INTS);

    // ---- kernels/optim.hip
    SGD = OPTIM, "rb_sgd", Dtype(FLOAT_F64);
    /// Several tensors' SGD steps in one launch (f32, f16, bf16).
    SGD_MULTI = OPTIM, "rb_sgd_multi", Dtype(FLOAT);
    ADAM = OPTIM, "rb_adam", Dtype(FLOAT_F64);

    // ---- kernels/norm.hip: register-row kernels
    SOFTMAX_ROWS = NORM, "rb_softmax_rows", FloatRows;
    SOFTMAX_BWD_ROWS = NORM, "rb_softmax_bwd_rows", FloatRows;
    ROWNORM_ROWS = NORM, "rb_rownorm_rows", FloatRows;
    /// The same with the weight and bias loaded before the reductions (a few rows).
    ROWNORM_PRE_ROWS = NORM, "rb_rownorm_pre_rows", FloatRows;
    ROWNORM_BWD_ROWS = NORM, "rb_rownorm_bwd_rows", FloatRows;
    // ---- kernels/norm.hip: loop kernels
    COLSUM_PARTS = NORM, "rb_colsum_parts", Dtype(FLOAT);
    SOFTMAX_LOOP = NORM, "rb_softmax_loop", Dtype(FLOAT);
    SOFTMAX_STRIDED = NORM, "rb_softmax_strided", Dtype(FLOAT);
    SOFTMAX_BWD_LOOP = NORM, "rb_softmax_bwd_loop", Dtype(FLOAT);
    SOFTMAX_BWD_STRIDED = NORM, "rb_softmax_bwd_strided", Dtype(FLOAT);
    /// f64 softmax / log_softmax and the backward: a block per group, in double.
    SOFTMAX_D = NORM, "rb_softmax_d", Dtype(&[DType::F64]);
    SOFTMAX_BWD_D = NORM, "rb_softmax_bwd_d", Dtype(&[DType::F64]);
    SETNORM = NORM, "rb_setnorm", Dtype(FLOAT);
    GROUPNORM_BWD = NORM, "rb_groupnorm_bwd", Dtype(FLOAT);
    ROWNORM_BWD_LOOP = NORM, "rb_rownorm_bwd_loop", Dtype(FLOAT);
    ROWNORM_COLS = NORM, "rb_rownorm_cols", Dtype(FLOAT);
    // ---- kernels/norm.hip: batch_norm
    BN_PARTIAL = NORM, "rb_bn_partial", Dtype(FLOAT);
    BN_FINALIZE = NORM, "rb_bn_finalize", Dtype(FLOAT);
    /// Scalar (`_v1`) or 4-element vector (`_v4`) loads.
    BN_APPLY = NORM, "rb_bn_apply", FloatThen(&["_v1", "_v4"]);
    BN_BWD_PARTIAL = NORM, "rb_bn_bwd_partial", Dtype(FLOAT);
    BN_BWD_FINALIZE = NORM, "rb_bn_bwd_finalize", Dtype(FLOAT);
    BN_BWD_APPLY = NORM, "rb_bn_bwd_apply", Dtype(FLOAT);
    /// Channels-last batch_norm ([rows, C]): partials in BN_PARTIAL / BN_BWD_PARTIAL's
    /// layout (combined by BN_FINALIZE / BN_BWD_FINALIZE), elementwise passes with `_v1` or
    /// `_v4` (4 channels a step).
    BN_NHWC_PARTIAL = NORM, "rb_bn_nhwc_partial", Dtype(FLOAT);
    BN_NHWC_BWD_PARTIAL = NORM, "rb_bn_nhwc_bwd_partial", Dtype(FLOAT);
    BN_NHWC_APPLY = NORM, "rb_bn_nhwc_apply", FloatThen(&["_v1", "_v4"]);
    BN_NHWC_BWD_APPLY = NORM, "rb_bn_nhwc_bwd_apply", FloatThen(&["_v1", "_v4"]);

    // ---- kernels/loss.hip
    LOSS_ITEMS = LOSS, "rb_loss_items", Dtype(FLOAT);
    CE_ROWS = LOSS, "rb_ce_rows", Dtype(FLOAT);
    LOSS_FINAL = LOSS, "rb_loss_final", Dtype(FLOAT);
    LOSS_BWD_ELEM = LOSS, "rb_loss_bwd_elem", Dtype(FLOAT);
    NLL_BWD = LOSS, "rb_nll_bwd", Dtype(FLOAT);
    CE_BWD_ROWS = LOSS, "rb_ce_bwd_rows", Dtype(FLOAT);
    CE_BWD_STRIDED = LOSS, "rb_ce_bwd_strided", Dtype(FLOAT);
    ROPE = LOSS, "rb_rope", Dtype(FLOAT_F64);
    WSUM = LOSS, "rb_wsum", Dtype(FLOAT);
    WSUM_DX = LOSS, "rb_wsum_dx", Dtype(FLOAT);
    WSUM_DW = LOSS, "rb_wsum_dw", Dtype(FLOAT);
    /// Losses with class weights / class-probability targets (LossExt): items, the final
    /// reduction, the backward.
    WLOSS_ITEMS = LOSS, "rb_wloss_items", Dtype(FLOAT);
    WLOSS_FINAL = LOSS, "rb_wloss_final", Dtype(FLOAT);
    WLOSS_BWD = LOSS, "rb_wloss_bwd", Dtype(FLOAT);
    /// f64 losses (every kind, weights and probabilities included) in double: items, the
    /// final reduction, the backward.
    LOSS_ITEMS_D = LOSS, "rb_loss_items_d", Dtype(&[DType::F64]);
    LOSS_FINAL_D = LOSS, "rb_loss_final_d", Dtype(&[DType::F64]);
    LOSS_BWD_D = LOSS, "rb_loss_bwd_d", Dtype(&[DType::F64]);
    /// rope from cos/sin caches (rotate-half or interleaved).
    ROPE_CACHED = LOSS, "rb_rope_cached", Dtype(FLOAT_F64);
    /// A decode step's rope_cached + index_copy of one position, up to three tensors in one
    /// launch (the executor's `rope+store`).
    ROPE_STORE = LOSS, "rb_rope_store", Dtype(FLOAT);

    // ---- kernels/attention.hip
    ATT_SOFTMAX = ATTENTION, "rb_att_softmax", Lone;
    ATT_DSCORES = ATTENTION, "rb_att_dscores", Lone;
    /// The GEMM path's softmax (scale applied in it) and dS in double (f64 attention).
    ATT_SOFTMAX_F64 = ATTENTION, "rb_att_softmax_f64", Lone;
    ATT_DSCORES_F64 = ATTENTION, "rb_att_dscores_f64", Lone;

    // ---- kernels/flash_attention.hip
    /// Fused forward: head dims up to 64 or 128; `_dec` one warp per block (decoding).
    FA_FWD = FLASH_ATTENTION, "rb_fa_fwd", FloatThen(&["_d64", "_d128", "_d64_dec", "_d128_dec"]);
    /// Merges the split-KV partials of the fused forward.
    FA_COMBINE = FLASH_ATTENTION, "rb_fa_combine", Dtype(FLOAT);
    FA_DEC = FLASH_ATTENTION, "rb_fa_dec",
        FloatThen(&["_d64", "_d128", "_d64_r4", "_d128_r4", "_d64_r1", "_d128_r1"]);
    /// Fused backward over key tiles (head dims up to 64 or 128), and its D = rowsum(dO O).
    FA_BWD = FLASH_ATTENTION, "rb_fa_bwd", FloatThen(&["_d64", "_d128"]);
    FA_BWD_DOT = FLASH_ATTENTION, "rb_fa_bwd_dot", Dtype(FLOAT);

    // ---- kernels/blas.hip
    /// Matrix-vector / skinny products `C = alpha * Aᵀ B + beta * C` (n <= 8): `_v` 16-byte
    /// vectors, `_s` one element at a time.
    GEMV_T = BLAS, "rb_gemv_t", FloatThen(&["_v", "_v1", "_s"]);
    /// Up to three matrix-vector products sharing one input (+ residual each), or the
    /// SwiGLU product of two: `_v` 16-byte vectors, `_s` one element at a time, `_vn` vectors
    /// reading the rms_norm of the input, `_vg` / `_vng` the gated pairs, `_vr` / `_vnr` the
    /// results through rope_store (the executor's linear+rope+store).
    GEMV_GRP = BLAS, "rb_gemv_grp", FloatThen(&["_v", "_s", "_vn", "_vg", "_vng", "_vr", "_vnr"]);
    /// One of those products with its residual, and the rms_norm of its result in its last
    /// block (`_n<N>`: the rms_norm row plan's chunks per thread).
    GEMV_GRP_NORM = BLAS, "rb_gemv_grp_norm", FloatThen(&["_n1", "_n2", "_n4", "_n8"]);
    /// Small f32 products in one launch (a 16 x 16 tile of C per block), with a bias and
    /// relu epilogue.
    GEMM_SMALL = BLAS, "rb_gemm_small", Dtype(&[DType::F32]);

    // ---- kernels/pool.hip
    /// `_i32`: every index of the problem fits in an `int`.
    POOL_FWD = POOL, "rb_pool_fwd", FloatThen(&["", "_i32"]);
    POOL_BWD = POOL, "rb_pool_bwd", FloatThen(&["", "_i32"]);
    /// Channels-last pooling: V (1 or 4) channels per thread, `_i32` as above.
    POOL_NHWC_FWD = POOL, "rb_pool_nhwc_fwd", FloatThen(&["_v1", "_v1_i32", "_v4", "_v4_i32"]);
    POOL_NHWC_BWD = POOL, "rb_pool_nhwc_bwd", FloatThen(&["_v1", "_v1_i32", "_v4", "_v4_i32"]);
    /// The fast 2D/1D forward paths, one kernel per window and stride (src/device/gpu/pool.rs).
    POOL2_FWD = POOL, "rb_pool2_fwd", FloatThen(&[
        "_max_k2s2", "_max_k3s2", "_max_k3s1", "_avg_k2s2", "_avg_k3s2", "_avg_k3s1",
        "_max_k1x2s2", "_max_k1x3s2", "_avg_k1x2s2", "_avg_k1x3s2",
    ]);
    /// Pooling backward as gathers: max pooling's arg-max pass (the window position as a
    /// byte `_a8` or an int `_a32`), then one thread per input element (`_avg`, `_max_a8`,
    /// `_max_a32`); both layouts, `_i32` as above.
    POOL_ARG = POOL, "rb_pool_arg", FloatThen(&["_a8", "_a8_i32", "_a32", "_a32_i32"]);
    POOL_GATHER = POOL, "rb_pool_gather", FloatThen(&[
        "_avg", "_avg_i32", "_max_a8", "_max_a8_i32", "_max_a32", "_max_a32_i32",
    ]);
    /// The fast 2D/1D backward paths (the forward's windows): arg-max pass and gather.
    POOL2_ARG = POOL, "rb_pool2_arg", FloatThen(&[
        "_max_k2s2", "_max_k3s2", "_max_k3s1", "_max_k1x2s2", "_max_k1x3s2",
    ]);
    POOL2_BWD = POOL, "rb_pool2_bwd", FloatThen(&[
        "_max_k2s2", "_max_k3s2", "_max_k3s1", "_avg_k2s2", "_avg_k3s2", "_avg_k3s1",
        "_max_k1x2s2", "_max_k1x3s2", "_avg_k1x2s2", "_avg_k1x3s2",
    ]);
    /// Max pooling with PyTorch's indices (`_i32` as above; f64 in double) and its scatter
    /// backward (f32 atomics).
    POOL_FWD_IDX = POOL, "rb_pool_fwd_idx", DtypeThen(FLOAT_F64, &["", "_i32"]);
    POOL_BWD_IDX = POOL, "rb_pool_bwd_idx", Dtype(FLOAT);
    /// The same in channels last.
    POOL_NHWC_FWD_IDX = POOL, "rb_pool_nhwc_fwd_idx", DtypeThen(FLOAT_F64, &["", "_i32"]);
    POOL_NHWC_BWD_IDX = POOL, "rb_pool_nhwc_bwd_idx", Dtype(FLOAT);
    /// The f64 scatter backward of either layout: one thread per plane, in order, no atomics.
    POOL_BWD_IDX_F64 = POOL, "rb_pool_bwd_idx_f64", Lone;
    /// Adaptive average and max pooling (both layouts), forward and the backward gather;
    /// `_i32` as above; f64 in double.
    ADAPTIVE_FWD = POOL, "rb_adaptive_fwd", DtypeThen(FLOAT_F64, &["_avg", "_avg_i32", "_max", "_max_i32"]);
    ADAPTIVE_BWD = POOL, "rb_adaptive_bwd", DtypeThen(FLOAT_F64, &["_avg", "_avg_i32", "_max", "_max_i32"]);
    /// Convolution epilogue: bias + activation over `[n, c, sp]`.
    BIAS_ACT = POOL, "rb_bias_act", Dtype(FLOAT);
    BIAS_GRAD = POOL, "rb_bias_grad", Dtype(FLOAT);
    /// Zero-padding / cropping copies for the convolutions (2- and 4-byte elements).
    PAD_COPY = POOL, "rb_pad_copy", Size("b", &[2, 4]);
    /// f64 max/avg pooling, channels first: forward and the backward gather, in double.
    POOL_FWD_F64 = POOL, "rb_pool_fwd_f64", Lone;
    POOL_BWD_F64 = POOL, "rb_pool_bwd_f64", Lone;
    /// f64 convolution (no DNN library has double): direct forward (bias + activation in),
    /// data-gradient gather, weight gradient and bias gradient.
    CONV_FWD_F64 = POOL, "rb_conv_fwd_f64", Lone;
    CONV_BWD_DATA_F64 = POOL, "rb_conv_bwd_data_f64", Lone;
    CONV_BWD_WEIGHT_F64 = POOL, "rb_conv_bwd_weight_f64", Lone;
    CONV_BIAS_GRAD_F64 = POOL, "rb_conv_bias_grad_f64", Lone;
}

/// The families launched early where the device can (`Vendor::launch_early`: NVIDIA's
/// programmatic dependent launch, sm_90+): every kernel of these begins with
/// `rb_pdl_enter()` (kernels/common.h), before any memory access, at most after L2
/// prefetches of its own weights (the tests below check the sources). A kernel of these
/// starts while the previous kernel of its stream finishes, which hides the launch and the
/// first loads of the chains of small kernels: a decoding step, a small training step.
pub static EARLY: &[&Kernel] = &[
    &GEMV_T,
    &GEMV_GRP,
    &GEMV_GRP_NORM,
    &GEMM_SMALL,
    &SOFTMAX_ROWS,
    &SOFTMAX_BWD_ROWS,
    &ROWNORM_ROWS,
    &ROWNORM_PRE_ROWS,
    &ROWNORM_BWD_ROWS,
    &ROPE_CACHED,
    &ROPE_STORE,
    &SCATTER_AXIS,
    &FA_DEC,
    &FA_COMBINE,
    &CAST_F32_H8,
    &CAST_H8_F32,
    &PW_BIAS_ACT,
    &PW_BIAS_ACT_V,
    &PW_SUM_ROWS,
    &CE_ROWS,
    &LOSS_FINAL,
    &CE_BWD_ROWS,
    &SGD,
    &SGD_MULTI,
];

/// The names of [`EARLY`]'s kernels.
static EARLY_NAMES: std::sync::LazyLock<std::collections::HashSet<String>> =
    std::sync::LazyLock::new(|| EARLY.iter().flat_map(|k| k.names()).collect());

/// Whether the built-in kernel `name` is one of [`EARLY`].
pub fn launches_early(name: &str) -> bool {
    EARLY_NAMES.contains(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeSet, HashMap};

    fn is_ident(c: char) -> bool {
        c.is_ascii_alphanumeric() || c == '_'
    }

    /// The arguments of a macro call whose `(` is at `open`, and the index after its `)`.
    fn call_args(s: &str, open: usize) -> (Vec<String>, usize) {
        let (mut depth, mut args, mut cur) = (0, vec![], String::new());
        for (i, c) in s[open..].char_indices() {
            match c {
                '(' => {
                    depth += 1;
                    if depth == 1 {
                        continue;
                    }
                }
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        args.push(cur.trim().to_string());
                        return (args, open + i + 1);
                    }
                }
                ',' if depth == 1 => {
                    args.push(cur.trim().to_string());
                    cur.clear();
                    continue;
                }
                _ => {}
            }
            cur.push(c);
        }
        panic!("unbalanced macro call at {open}");
    }

    /// Replaces whole identifiers of `body` that are `params` by `args`, then pastes `##`.
    fn substitute(body: &str, params: &[String], args: &[String]) -> String {
        let mut out = String::new();
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            match params.iter().position(|p| p == word) {
                Some(i) => out.push_str(&args[i]),
                None => out.push_str(word),
            }
            word.clear();
        };
        for c in body.chars() {
            if is_ident(c) {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        let mut pasted = String::new();
        for (i, part) in out.split("##").enumerate() {
            if i == 0 {
                pasted.push_str(part.trim_end());
            } else {
                pasted.push_str(part.trim());
            }
        }
        pasted
    }

    /// The source with its function-like macros expanded (enough of the C preprocessor for
    /// the kernel files: `#define F(a, b) ...`, `\` continuations, `##`, nested calls).
    fn expand(src: &str) -> String {
        let joined = src.replace("\\\n", " ");
        let mut macros: HashMap<String, (Vec<String>, String)> = HashMap::new();
        let mut text = String::new();
        for line in joined.lines() {
            let t = line.trim_start();
            if let Some(def) = t.strip_prefix("#define ") {
                let name_end = def.find(|c: char| !is_ident(c)).unwrap_or(def.len());
                if def[name_end..].starts_with('(') {
                    let close = def.find(')').unwrap();
                    let params = def[name_end + 1..close]
                        .split(',')
                        .map(|p| p.trim().to_string())
                        .collect();
                    macros.insert(
                        def[..name_end].to_string(),
                        (params, def[close + 1..].to_string()),
                    );
                }
            } else if !t.starts_with('#') {
                text.push_str(line);
                text.push('\n');
            }
        }
        for _ in 0..8 {
            let mut out = String::new();
            let mut rest = text.as_str();
            let mut changed = false;
            while let Some(start) = rest.find(|c: char| is_ident(c)) {
                out.push_str(&rest[..start]);
                let len = rest[start..]
                    .find(|c: char| !is_ident(c))
                    .unwrap_or(rest.len() - start);
                let word = &rest[start..start + len];
                let after = &rest[start + len..];
                match macros.get(word) {
                    Some((params, body)) if after.trim_start().starts_with('(') => {
                        let open = start + len + (after.len() - after.trim_start().len());
                        let (args, end) = call_args(rest, open);
                        out.push_str(&substitute(body, params, &args));
                        out.push(' ');
                        rest = &rest[end..];
                        changed = true;
                    }
                    _ => {
                        out.push_str(word);
                        rest = after;
                    }
                }
            }
            out.push_str(rest);
            text = out;
            if !changed {
                break;
            }
        }
        text
    }

    /// The kernels a source defines: `RB_KERNEL void <name>(`, macros expanded.
    fn kernels_of(src: &str) -> BTreeSet<String> {
        let text = expand(src);
        let mut names = BTreeSet::new();
        let mut rest = text.as_str();
        while let Some(i) = rest.find("RB_KERNEL") {
            rest = &rest[i + "RB_KERNEL".len()..];
            let t = rest.trim_start();
            if let Some(t) = t.strip_prefix("void") {
                let t = t.trim_start();
                let end = t.find(|c: char| !is_ident(c)).unwrap_or(t.len());
                if t[end..].trim_start().starts_with('(') {
                    names.insert(t[..end].to_string());
                }
            }
        }
        names
    }

    /// The body of kernel `name` in the expanded `text`: from after its `{` to its `}`.
    fn kernel_body<'a>(text: &'a str, name: &str) -> Option<&'a str> {
        let head = format!("RB_KERNEL void {name}");
        let mut at = 0;
        let start = loop {
            let i = text[at..].find(&head)? + at;
            let after = &text[i + head.len()..];
            if after.trim_start().starts_with('(') {
                break i + head.len();
            }
            at = i + head.len();
        };
        let open = start + text[start..].find('{')?;
        let end = jit::block_end(text, open)?;
        Some(&text[open + 1..end - 1])
    }

    /// Whether a kernel body begins with `rb_pdl_enter();`, after at most calls of
    /// `..._prefetch...(...)` functions.
    fn begins_with_pdl_enter(body: &str) -> bool {
        for stmt in body.split(';') {
            let t = stmt.trim();
            // (a grouped product told its weights are safe to read early waits inside, after
            // its first weight loads: kernels/blas.hip's rb_gemv_grp; a decode attention
            // told which cache rows are fresh, after its first loads of the others:
            // kernels/flash_attention.hip's rb_fa_dec)
            if t == "rb_pdl_enter()"
                || t == "if (!early) rb_pdl_enter()"
                || t == "if (!fresh) rb_pdl_enter()"
            {
                return true;
            }
            let callee = t.split(['(', '<']).next().unwrap_or("");
            if !(callee.contains("prefetch") && callee.chars().all(is_ident)) {
                return false;
            }
        }
        false
    }

    /// Every kernel of an early-launched family begins with rb_pdl_enter(); every kernel of
    /// the sources that does is of one (none left launched plainly by mistake).
    #[test]
    fn early_kernels_begin_with_pdl_enter() {
        let expanded: HashMap<&str, String> = sources()
            .into_iter()
            .map(|s| (s.name, expand(s.text)))
            .collect();
        let mut bad = vec![];
        let mut count = 0;
        for k in EARLY {
            let text = &expanded[k.src.name];
            for name in k.names() {
                count += 1;
                match kernel_body(text, &name) {
                    Some(body) if begins_with_pdl_enter(body) => {}
                    _ => bad.push(name),
                }
            }
        }
        assert!(
            bad.is_empty(),
            "early kernels without rb_pdl_enter first: {bad:?}"
        );
        assert!(count > 100, "{count}");
        let mut unlisted = vec![];
        for src in sources() {
            let text = &expanded[src.name];
            for name in kernels_of(src.text) {
                let body = kernel_body(text, &name).expect("a kernel has a body");
                if begins_with_pdl_enter(body) != launches_early(&name) {
                    unlisted.push(name);
                }
            }
        }
        assert!(
            unlisted.is_empty(),
            "rb_pdl_enter first but not in EARLY (or the reverse): {unlisted:?}"
        );
        assert!(launches_early("rb_gemv_grp_f16_v"));
        assert!(!launches_early("rb_randn_f16"));
        assert!(begins_with_pdl_enter(
            " rb_gemv_prefetch<1>(a, lda, m, k, s); rb_pdl_enter(); f();"
        ));
        assert!(!begins_with_pdl_enter(" x[0] = 1; rb_pdl_enter();"));
    }

    fn sources() -> Vec<&'static Source> {
        vec![
            &jit::ELEMENTWISE,
            &jit::POINTWISE,
            &jit::OPTIM,
            &jit::REDUCE,
            &jit::DATA,
            &jit::NORM,
            &jit::LOSS,
            &jit::ATTENTION,
            &jit::FLASH_ATTENTION,
            &jit::BLAS,
            &jit::POOL,
        ]
    }

    #[test]
    fn the_expander_handles_the_kernel_macros() {
        let src = "#define K(S, T) \\\n  RB_KERNEL void rb_k_##S(T* x) { f<T>(x); }\n\
                   #define KS(S, T, V) K(S##_v##V, T) K(S##_w, T)\nKS(f32, float, 4)\n\
                   RB_KERNEL void rb_plain(int a) {}\n";
        let names: Vec<_> = kernels_of(src).into_iter().collect();
        assert_eq!(names, ["rb_k_f32_v4", "rb_k_f32_w", "rb_plain"]);
    }

    #[test]
    fn every_table_is_listed() {
        let text = include_str!("kernels.rs");
        let mut declared = BTreeSet::new();
        let mut in_tables = false;
        for line in text.lines() {
            if line.starts_with("tables! {") {
                in_tables = true;
            } else if in_tables && line == "}" {
                break;
            } else if in_tables
                && let Some((name, rest)) = line.trim().split_once(" = ")
                && rest.contains(", \"rb_")
            {
                declared.insert(name.to_string());
            }
        }
        let listed: BTreeSet<_> = ALL.iter().map(|(n, _)| n.to_string()).collect();
        assert!(declared.len() > 60, "{declared:?}");
        assert_eq!(declared, listed);
    }

    /// Every name a table can produce is a kernel of the table's source.
    #[test]
    fn every_kernel_name_exists() {
        let defined: HashMap<&str, BTreeSet<String>> = sources()
            .into_iter()
            .map(|s| (s.name, kernels_of(s.text)))
            .collect();
        let mut missing = vec![];
        let mut count = 0;
        for (table, k) in ALL {
            let have = &defined[k.src.name];
            for name in k.names() {
                count += 1;
                if !have.contains(&name) {
                    missing.push(format!("{table}: {name} is not in kernels/{}", k.src.name));
                }
            }
        }
        assert!(missing.is_empty(), "{}", missing.join("\n"));
        assert!(count > 300, "only {count} names");
    }

    /// The op-code families, the sources that `#define RB_<FAMILY>_<NAME>` them, and the
    /// `switch (<arg>)` they label in each.
    fn code_families() -> Vec<(
        &'static str,
        &'static [OpCode],
        &'static str,
        Vec<&'static Source>,
    )> {
        vec![
            (
                "UNARY",
                unary::ALL,
                "op",
                vec![&jit::ELEMENTWISE, &jit::POINTWISE],
            ),
            (
                "BINARY",
                binary::ALL,
                "op",
                vec![&jit::ELEMENTWISE, &jit::POINTWISE],
            ),
            ("COMPARE", compare::ALL, "op", vec![&jit::POINTWISE]),
            ("ACT", act::ALL, "act", vec![&jit::POINTWISE, &jit::POOL]),
            ("LOSS", loss::ALL, "kind", vec![&jit::LOSS]),
        ]
    }

    #[test]
    fn op_codes_are_dense_and_distinct() {
        for (family, ops, _, _) in code_families() {
            for (i, op) in ops.iter().enumerate() {
                assert_eq!(op.code, i as i32, "{family}::{}", op.name);
            }
            let names: BTreeSet<_> = ops.iter().map(|o| o.name).collect();
            assert_eq!(names.len(), ops.len(), "{family}");
        }
    }

    /// The sources `#define` exactly the Rust codes, and every switch over a family's
    /// argument labels each of its ops by name (no bare numbers).
    #[test]
    fn op_codes_match_the_kernels() {
        let mut bad = vec![];
        for (family, ops, arg, srcs) in code_families() {
            let prefix = format!("RB_{family}_");
            for src in srcs {
                let mut defined = HashMap::new();
                for line in src.text.lines() {
                    if let Some(def) = line.trim().strip_prefix("#define ")
                        && let Some(name) = def.strip_prefix(&prefix)
                    {
                        let mut parts = name.split_whitespace();
                        let (n, v) = (parts.next().unwrap(), parts.next().unwrap_or(""));
                        if !n.contains('(') {
                            defined.insert(n.to_string(), v.to_string());
                        }
                    }
                }
                let want: HashMap<String, String> = ops
                    .iter()
                    .map(|o| (o.name.to_uppercase(), o.code.to_string()))
                    .collect();
                if defined != want {
                    bad.push(format!(
                        "{}: {prefix}* are {defined:?}, Rust has {want:?}",
                        src.name
                    ));
                }
                // Every `switch (<arg>)` labels its cases by name (no bare numbers), and one
                // over this family labels each of its ops.
                let mut switches = 0;
                for (i, _) in src.text.match_indices(&format!("switch ({arg})")) {
                    let body = &src.text[i..];
                    let end = body.find("\n  }\n").unwrap_or(body.len());
                    let body = &body[..end];
                    for line in body.lines() {
                        let t = line.trim();
                        if t.starts_with("case ") && t.as_bytes()[5].is_ascii_digit() {
                            bad.push(format!(
                                "{}: bare label `{t}` in a switch ({arg})",
                                src.name
                            ));
                        }
                    }
                    if !body.contains(&format!("case {prefix}")) {
                        continue;
                    }
                    switches += 1;
                    for o in ops {
                        let label = format!("case {prefix}{}:", o.name.to_uppercase());
                        if !body.contains(&label) {
                            bad.push(format!("{}: a switch ({arg}) lacks `{label}`", src.name));
                        }
                    }
                }
                let comparisons = src.text.matches(&format!("{arg} == {prefix}")).count();
                if switches + comparisons == 0 {
                    bad.push(format!("{}: nothing uses {prefix}*", src.name));
                }
            }
        }
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    /// `RB_UNARY_X4(name, RB_UNARY_NAME)` and the other per-op kernel macros: each per-op
    /// kernel runs the op it is named by, and every op of its family has one.
    #[test]
    fn per_op_kernels_run_their_op() {
        for (src, mac, family, ops) in [
            (&jit::ELEMENTWISE, "RB_UNARY_X4", "UNARY", unary::ALL),
            (&jit::ELEMENTWISE, "RB_UNARY_H8", "UNARY", unary::ALL),
            (&jit::ELEMENTWISE, "RB_BINARY_H8", "BINARY", binary::ALL),
            (&jit::POINTWISE, "RB_PW_UNARY_BWD_V", "UNARY", unary::ALL),
        ] {
            let text = src.text;
            let mut seen = BTreeSet::new();
            for (i, _) in text.match_indices(&format!("{mac}(")) {
                let (args, _) = call_args(text, i + mac.len());
                if args[0] == "NAME" {
                    continue; // the #define
                }
                assert_eq!(
                    args[1],
                    format!("RB_{family}_{}", args[0].to_uppercase()),
                    "{mac}: {args:?}"
                );
                seen.insert(args[0].clone());
            }
            let want: BTreeSet<_> = ops.iter().map(|o| o.name.to_string()).collect();
            assert_eq!(seen, want, "{mac}");
        }
    }

    /// No GPU op spells a kernel name: every name comes from a table here.
    #[test]
    fn no_kernel_name_outside_this_file() {
        let all: BTreeSet<String> = sources().iter().flat_map(|s| kernels_of(s.text)).collect();
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/device/gpu");
        let mut bad = vec![];
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "rs") || p.ends_with("kernels.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Unit tests may spell a name to check what a table gives.
            let code = text.split("#[cfg(test)]").next().unwrap();
            for (i, line) in code.lines().enumerate() {
                for (j, _) in line.match_indices("\"rb_") {
                    let lit = &line[j + 1..];
                    let end = lit.find(|c: char| !is_ident(c)).unwrap_or(lit.len());
                    let stem = &lit[..end];
                    if all.iter().any(|k| k.starts_with(stem)) {
                        bad.push(format!("{}:{}: {}", p.display(), i + 1, line.trim()));
                    }
                }
            }
        }
        assert!(
            bad.is_empty(),
            "kernel names spelled outside kernels.rs:\n{}",
            bad.join("\n")
        );
    }
}
