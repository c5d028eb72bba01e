//! The op table: every eager op written down once (PyTorch's native_functions.yaml is the
//! model). A row names the op, its family, its documentation, its C parameters in order
//! (tensors and attributes, with their Python names and defaults), its outputs, the runtime
//! call that runs it, whether its output may alias an input, the dtypes it takes, and its
//! backward.
//!
//! From this table `tools/opgen.rs` (run by build.rs; `make generate` writes the files)
//! generates, committed and checked fresh by `tests/generated.rs`:
//! * `src/ffi/eager/<family>.rs`: the C exports `rb_<name>`;
//! * `src/ops/registry.rs`: the op registry ([`OpKind`](crate::ops::registry::OpKind), one
//!   attribute struct per op, [`Op`](crate::ops::registry::Op));
//! * `src/runtime/dispatch.rs`: the runtime call of every [`Op`](crate::ops::registry::Op),
//!   used by the graph executor;
//! * `bindings/python/rocm_backend/_ops_table.py`: the Python prototypes.
//!
//! This file is plain data with no imports (build.rs includes it with `#[path]`). Adding an
//! elementwise op is a row here, its `UnaryOp`/`BinaryOp` variant and its device kernels.

/// The op family: the file name of the op's code in every layer (`ffi/eager/<family>.rs`,
/// `runtime/<family>.rs`, `device/<family>.rs`, `device/cpu/<family>.rs`,
/// `device/gpu/<family>.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Elementwise,
    Reduce,
    Data,
    Blas,
    Conv,
    Pool,
    Softmax,
    Norm,
    Loss,
    Attention,
    Transformer,
    Optim,
}

impl Family {
    pub const ALL: [Family; 12] = [
        Family::Elementwise,
        Family::Reduce,
        Family::Data,
        Family::Blas,
        Family::Conv,
        Family::Pool,
        Family::Softmax,
        Family::Norm,
        Family::Loss,
        Family::Attention,
        Family::Transformer,
        Family::Optim,
    ];

    /// The file (module) name of the family in every layer.
    pub const fn file(self) -> &'static str {
        match self {
            Family::Elementwise => "elementwise",
            Family::Reduce => "reduce",
            Family::Data => "data",
            Family::Blas => "blas",
            Family::Conv => "conv",
            Family::Pool => "pool",
            Family::Softmax => "softmax",
            Family::Norm => "norm",
            Family::Loss => "loss",
            Family::Attention => "attention",
            Family::Transformer => "transformer",
            Family::Optim => "optim",
        }
    }
}

/// The kind of one C parameter (after the leading `rb_stream *stream`), which fixes its C
/// type, its Rust type in the runtime call and its Python kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    /// `const rb_tensor *`, required; `&Tensor` in the call.
    Tensor,
    /// `rb_tensor *` written in place; `&Tensor`.
    TensorMut,
    /// `const rb_tensor *` that may be NULL; `Option<&Tensor>`.
    TensorOpt,
    /// `rb_tensor *` written in place that may be NULL; `Option<&Tensor>`.
    TensorOptMut,
    /// `const rb_tensor *const *` with a `size_t` count named `len` (at least one);
    /// `&[&Tensor]`.
    TensorList { len: &'static str },
    /// `int64_t`.
    I64,
    /// `int64_t` that must not be negative; `usize`.
    Usize,
    /// `int64_t` optimizer step count, at least 1; `u64`.
    Step,
    /// `double`.
    F64,
    /// `float`.
    F32,
    /// `float` lower bound that must not be NaN (Python `None`: -inf).
    ClampMin,
    /// `float` upper bound that must not be NaN (Python `None`: +inf).
    ClampMax,
    /// `bool`.
    Bool,
    /// `int32_t` 0 or 1; `bool`.
    Flag,
    /// `int32_t` holding an `rb_dtype`; `DType`.
    Dtype,
    /// `const int64_t *` + `size_t` count named `len`: dimension indices (may be negative);
    /// `&[i64]`.
    Dims { len: &'static str },
    /// `const int64_t *` + `size_t` count named `len`: extents; `Vec<usize>`.
    Shape { len: &'static str },
    /// `const int64_t *` of four extents; `Vec<usize>`.
    Shape4,
    /// `const double *` that may be NULL; `Option<f64>`.
    OptF64,
    /// `int32_t` holding an `rb_reduction`; `Reduction`.
    Reduction,
    /// `int32_t` holding an `rb_gelu_approximate`; the `UnaryOp::Gelu` it selects.
    GeluApprox,
    /// `int32_t` holding an `rb_activation`; `Activation`.
    Activation,
    /// `int32_t` holding an `rb_pool_mode`; `PoolKind`.
    PoolMode,
    /// `int32_t` holding an `rb_compare_op`; `CompareOp`.
    Compare,
    /// `const rb_conv_params *`; `(ConvAttrs, spatial rank)`.
    ConvParams,
    /// `const rb_pool_params *`; `(PoolAttrs, spatial rank)`.
    PoolParams,
    /// `int32_t` holding an `rb_causal_mode`; `Causal`.
    CausalMode,
    /// `const rb_conv_params_ex *`; `(ConvAttrsEx, spatial rank)`.
    ConvParamsEx,
    /// `const rb_pool_params_ex *`; `(PoolAttrsEx, spatial rank)`.
    PoolParamsEx,
}

impl Arg {
    /// Whether the parameter is a tensor (an op input).
    pub const fn is_tensor(self) -> bool {
        matches!(
            self,
            Arg::Tensor
                | Arg::TensorMut
                | Arg::TensorOpt
                | Arg::TensorOptMut
                | Arg::TensorList { .. }
        )
    }
}

/// One C parameter.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The C name (also the name in the runtime call).
    pub name: &'static str,
    pub arg: Arg,
    /// The Python keyword ("" = the C name).
    pub py: &'static str,
    /// The Python default as a Python literal ("" = required).
    pub default: &'static str,
}

impl Param {
    pub const fn py(self, py: &'static str) -> Param {
        Param { py, ..self }
    }
    pub const fn default(self, default: &'static str) -> Param {
        Param { default, ..self }
    }
    /// The Python keyword.
    pub const fn py_name(&self) -> &'static str {
        if self.py.is_empty() {
            self.name
        } else {
            self.py
        }
    }
}

pub const fn p(name: &'static str, arg: Arg) -> Param {
    Param {
        name,
        arg,
        py: "",
        default: "",
    }
}

/// How an output travels through its `rb_tensor **` parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutKind {
    /// Required pointer; `*p == NULL` makes a new tensor, otherwise `*p` is the destination.
    /// `Option<&Tensor>` (the destination) in the call.
    Out,
    /// May be NULL (the gradient is not computed); otherwise as `Out`. `Grad` in the call.
    Grad,
    /// As `Grad`, but the pointer is required.
    GradRequired,
    /// Required pointer; always a new tensor (`*p` is not read). Not in the call.
    New,
    /// May be NULL (not computed); otherwise a new tensor. `bool` (wanted) in the call.
    NewOpt,
}

/// One output.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    pub name: &'static str,
    pub kind: OutKind,
}

pub const fn o(name: &'static str, kind: OutKind) -> Output {
    Output { name, kind }
}

/// What the runtime call returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ret {
    /// `Tensor` (the one output).
    One,
    /// A tuple with one `Tensor` or `Option<Tensor>` per output.
    Tuple,
    /// An array of `Option<Tensor>`, one per output.
    Array,
    /// An array of `Tensor`, one per output.
    ArrayRequired,
    /// `()`: the op writes its `TensorMut` parameters in place.
    Unit,
}

/// Whether an output may share memory with an input (PyTorch's rule: only ops that read
/// each element before writing the same element may run in place).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alias {
    /// No output may overlap any input: RB_STATUS_INVALID_ARGUMENT ("output overlaps input").
    Never,
    /// An output may be exactly an input of the result's shape (in place); a partial
    /// overlap is refused.
    Exact,
}

/// The dtypes an op takes (its first tensor input's dtype).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtypes {
    /// f32, f16, bf16.
    Float,
    /// f32, f16, bf16, i32, i64.
    Numeric,
    /// Every dtype, bool included.
    Any,
}

/// Python-facing overrides of a row.
#[derive(Clone, Copy, Debug)]
pub struct Py {
    /// The Python function name ("" = the op name).
    pub name: &'static str,
    /// The Python positional order of the parameters (empty: the C order).
    pub order: &'static [&'static str],
    /// For in-place ops: the parameter the Python function returns.
    pub returns: &'static str,
}

pub const PY: Py = Py {
    name: "",
    order: &[],
    returns: "",
};

/// One op.
#[derive(Clone, Copy, Debug)]
pub struct OpDef {
    /// The op's name; the C export is `rb_<name>`.
    pub name: &'static str,
    pub family: Family,
    /// The documentation of the C export (Markdown; it lands in the header).
    pub doc: &'static str,
    pub params: &'static [Param],
    pub outputs: &'static [Output],
    pub ret: Ret,
    /// The runtime call, a Rust expression in `crate::runtime` naming `s`
    /// (`Option<&Stream>`), the parameters and the outputs by name.
    pub call: &'static str,
    pub alias: Alias,
    pub dtypes: Dtypes,
    /// The op computing this op's gradients ("" = none, or this is a backward op).
    pub backward: &'static str,
    pub py: Py,
}

/// Defaults for the fields most rows leave alone.
pub const OP: OpDef = OpDef {
    name: "",
    family: Family::Elementwise,
    doc: "",
    params: &[],
    outputs: &[],
    ret: Ret::One,
    call: "",
    alias: Alias::Never,
    dtypes: Dtypes::Float,
    backward: "",
    py: PY,
};

use Alias::*;
use Arg::*;
use Dtypes::*;
use Family::*;
use OutKind::*;
use Ret::*;

/// Every eager op, grouped by family.
pub static OPS: &[OpDef] = &[
    OpDef {
        name: "add_relu",
        family: Elementwise,
        doc: r#"Fused `max(a + b, 0)` with NumPy broadcasting.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see
the section's conventions."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::add_relu(s, a, b, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "mul_add",
        family: Elementwise,
        doc: r#"Fused `a * b + c` with NumPy broadcasting over all three.

Failures as `rb_add_relu`. Output convention and threads: see the section's conventions."#,
        params: &[p("a", Tensor), p("b", Tensor), p("c", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::mul_add(s, a, b, c, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "add",
        family: Elementwise,
        doc: r#"Elementwise `a + b` with NumPy broadcasting; both inputs of one dtype and device.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the
eager-op conventions at the top of this section."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Add, a, b, out)",
        alias: Exact,
        dtypes: Numeric,
        backward: "add_backward",
        ..OP
    },
    OpDef {
        name: "relu",
        family: Elementwise,
        doc: r#"Elementwise `max(x, 0)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see
the eager-op conventions."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Relu, x, out)",
        alias: Exact,
        backward: "relu_backward",
        ..OP
    },
    OpDef {
        name: "sub",
        family: Elementwise,
        doc: r#"Elementwise a - b with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16; i32 and i64 where PyTorch allows).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Sub, a, b, out)",
        alias: Exact,
        dtypes: Numeric,
        backward: "sub_backward",
        ..OP
    },
    OpDef {
        name: "mul",
        family: Elementwise,
        doc: r#"Elementwise a * b with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16; i32 and i64 where PyTorch allows).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Mul, a, b, out)",
        alias: Exact,
        dtypes: Numeric,
        backward: "mul_backward",
        ..OP
    },
    OpDef {
        name: "div",
        family: Elementwise,
        doc: r#"Elementwise a / b (true division; floating dtypes only) with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16; i32 and i64 where PyTorch allows).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Div, a, b, out)",
        alias: Exact,
        backward: "div_backward",
        ..OP
    },
    OpDef {
        name: "pow",
        family: Elementwise,
        doc: r#"Elementwise a ** b (`torch.pow`) with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16; i32 and i64 where PyTorch allows).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Pow, a, b, out)",
        alias: Exact,
        backward: "pow_backward",
        dtypes: Numeric,
        ..OP
    },
    OpDef {
        name: "maximum",
        family: Elementwise,
        doc: r#"Elementwise the larger of a and b (NaN propagates) with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16; i32 and i64 where PyTorch allows).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Maximum, a, b, out)",
        alias: Exact,
        dtypes: Numeric,
        backward: "maximum_backward",
        ..OP
    },
    OpDef {
        name: "minimum",
        family: Elementwise,
        doc: r#"Elementwise the smaller of a and b (NaN propagates) with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16; i32 and i64 where PyTorch allows).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Minimum, a, b, out)",
        alias: Exact,
        dtypes: Numeric,
        backward: "minimum_backward",
        ..OP
    },
    OpDef {
        name: "neg",
        family: Elementwise,
        doc: r#"Elementwise `-x` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Neg, x, out)",
        alias: Exact,
        backward: "neg_backward",
        ..OP
    },
    OpDef {
        name: "abs",
        family: Elementwise,
        doc: r#"Elementwise `|x|` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Abs, x, out)",
        alias: Exact,
        backward: "abs_backward",
        ..OP
    },
    OpDef {
        name: "sqrt",
        family: Elementwise,
        doc: r#"Elementwise `sqrt(x)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Sqrt, x, out)",
        alias: Exact,
        backward: "sqrt_backward",
        ..OP
    },
    OpDef {
        name: "exp",
        family: Elementwise,
        doc: r#"Elementwise `exp(x)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Exp, x, out)",
        alias: Exact,
        backward: "exp_backward",
        ..OP
    },
    OpDef {
        name: "log",
        family: Elementwise,
        doc: r#"Elementwise `ln(x)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Log, x, out)",
        alias: Exact,
        backward: "log_backward",
        ..OP
    },
    OpDef {
        name: "sin",
        family: Elementwise,
        doc: r#"Elementwise `sin(x)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Sin, x, out)",
        alias: Exact,
        backward: "sin_backward",
        ..OP
    },
    OpDef {
        name: "cos",
        family: Elementwise,
        doc: r#"Elementwise `cos(x)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Cos, x, out)",
        alias: Exact,
        backward: "cos_backward",
        ..OP
    },
    OpDef {
        name: "sigmoid",
        family: Elementwise,
        doc: r#"Elementwise `1 / (1 + exp(-x))` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Sigmoid, x, out)",
        alias: Exact,
        backward: "sigmoid_backward",
        ..OP
    },
    OpDef {
        name: "tanh",
        family: Elementwise,
        doc: r#"Elementwise `tanh(x)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Tanh, x, out)",
        alias: Exact,
        backward: "tanh_backward",
        ..OP
    },
    OpDef {
        name: "silu",
        family: Elementwise,
        doc: r#"Elementwise `x * sigmoid(x)` on a floating tensor (f32, f16, bf16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Silu, x, out)",
        alias: Exact,
        backward: "silu_backward",
        ..OP
    },
    OpDef {
        name: "hardswish",
        family: Elementwise,
        doc: r#"Elementwise `x * relu6(x + 3) / 6` (`torch.nn.functional.hardswish`) on a floating
tensor (f32, f16, bf16); NaN propagates.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Hardswish, x, out)",
        alias: Exact,
        backward: "hardswish_backward",
        ..OP
    },
    OpDef {
        name: "gelu",
        family: Elementwise,
        doc: r#"GELU on a floating tensor: `approximate` is an `rb_gelu_approximate` (0: exact erf form,
1: tanh form), as `torch.nn.functional.gelu`.

Fails with RB_STATUS_INVALID_ARGUMENT (bad `approximate`) and as `rb_relu`."#,
        params: &[
            p("x", Tensor),
            p("approximate", GeluApprox).default("'none'"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, approximate, x, out)",
        alias: Exact,
        backward: "gelu_backward",
        ..OP
    },
    OpDef {
        name: "clamp",
        family: Elementwise,
        doc: r#"`torch.clamp(x, min, max)` on a floating tensor: `min(max(x, min), max)` (so `max` wins
when `min > max`, as in PyTorch).

Fails with RB_STATUS_INVALID_ARGUMENT (NaN bound) and as `rb_relu`."#,
        params: &[
            p("x", Tensor),
            p("min", ClampMin).default("-inf"),
            p("max", ClampMax).default("inf"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Clamp { min, max }, x, out)",
        alias: Exact,
        dtypes: Numeric,
        backward: "clamp_backward",
        ..OP
    },
    OpDef {
        name: "relu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_relu`: `dx = drelu(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Relu, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "neg_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_neg`: `dx = dneg(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Neg, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "abs_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_abs`: `dx = dabs(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Abs, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "sqrt_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_sqrt`: `dx = dsqrt(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Sqrt, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "exp_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_exp`: `dx = dexp(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Exp, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "log_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_log`: `dx = dlog(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Log, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "sin_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_sin`: `dx = dsin(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Sin, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "cos_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_cos`: `dx = dcos(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Cos, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "sigmoid_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_sigmoid`: `dx = dsigmoid(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Sigmoid, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "tanh_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_tanh`: `dx = dtanh(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Tanh, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "silu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_silu`: `dx = dsilu(x)/dx * dy`, from the op's input `x` and the
upstream gradient `dy` (same shape and dtype); PyTorch's gradient formulas.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Silu, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "hardswish_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_hardswish` (PyTorch's `hardswish_backward`): `dx = 0` where
`x < -3`, `dy * (x / 3 + 1/2)` where `x <= 3`, else `dy`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Hardswish, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "gelu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_gelu` with the same `approximate` (PyTorch's `gelu_backward`).

Fails with RB_STATUS_INVALID_ARGUMENT (bad `approximate`) and as `rb_relu_backward`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("approximate", GeluApprox).default("'none'"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, approximate, x, dy, out)",
        alias: Exact,
        ..OP
    },
    OpDef {
        name: "clamp_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_clamp`: `dy` where `min <= x <= max`, else 0.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("min", ClampMin).default("-inf"),
            p("max", ClampMax).default("inf"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Clamp { min, max }, x, dy, out)",
        alias: Exact,
        dtypes: Numeric,
        ..OP
    },
    OpDef {
        name: "add_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_add`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Add, a, b, dy, da, db)",
        ..OP
    },
    OpDef {
        name: "sub_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_sub`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Sub, a, b, dy, da, db)",
        ..OP
    },
    OpDef {
        name: "mul_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_mul`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Mul, a, b, dy, da, db)",
        ..OP
    },
    OpDef {
        name: "div_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_div`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Div, a, b, dy, da, db)",
        ..OP
    },
    OpDef {
        name: "pow_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_pow`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Pow, a, b, dy, da, db)",
        ..OP
    },
    OpDef {
        name: "maximum_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_maximum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Maximum, a, b, dy, da, db)",
        ..OP
    },
    OpDef {
        name: "minimum_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_minimum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Minimum, a, b, dy, da, db)",
        ..OP
    },
    OpDef {
        name: "eq",
        family: Elementwise,
        doc: r#"Elementwise `a == b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
both inputs of one dtype (any) and device. NaN compares unequal to everything.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::compare(s, CompareOp::Eq, a, b, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "ne",
        family: Elementwise,
        doc: r#"Elementwise `a != b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
both inputs of one dtype (any) and device. NaN compares unequal to everything.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::compare(s, CompareOp::Ne, a, b, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "lt",
        family: Elementwise,
        doc: r#"Elementwise `a < b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
both inputs of one dtype (any) and device. NaN compares unequal to everything.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::compare(s, CompareOp::Lt, a, b, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "le",
        family: Elementwise,
        doc: r#"Elementwise `a <= b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
both inputs of one dtype (any) and device. NaN compares unequal to everything.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::compare(s, CompareOp::Le, a, b, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "gt",
        family: Elementwise,
        doc: r#"Elementwise `a > b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
both inputs of one dtype (any) and device. NaN compares unequal to everything.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::compare(s, CompareOp::Gt, a, b, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "ge",
        family: Elementwise,
        doc: r#"Elementwise `a >= b` with NumPy broadcasting, as a bool tensor (`RB_DTYPE_BOOL`);
both inputs of one dtype (any) and device. NaN compares unequal to everything.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::compare(s, CompareOp::Ge, a, b, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "where",
        family: Elementwise,
        doc: r#"`torch.where(cond, a, b)`: `a` where the bool tensor `cond` is true, else `b`, with
three-way NumPy broadcasting, in one pass; `a` and `b` of one dtype (any) and device.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH (cond not bool, a and b differ) or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[
            p("cond", Tensor).py("condition"),
            p("a", Tensor).py("input"),
            p("b", Tensor).py("other"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::where_(s, cond, a, b, out)",
        alias: Exact,
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "where_compare",
        family: Elementwise,
        doc: r#"`torch.where(a op b, x, y)` fused: `x` where `a op b` holds, else `y` (`op` an
`rb_compare_op`), with four-way NumPy broadcasting. On GPUs one kernel and no bool
temporary (`torch.where(a > b, a, b)` reads only `a` and `b`); on the CPU a comparison
then `rb_where`. All four inputs of one dtype (any) and device; the output has it too.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (an `op` that is not an
`rb_compare_op`, different devices). Output convention and threads: see the eager-op
conventions (`rb_add`)."#,
        params: &[
            p("op", Compare),
            p("a", Tensor),
            p("b", Tensor),
            p("x", Tensor),
            p("y", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::where_compare(s, op, a, b, x, y, out)",
        alias: Exact,
        dtypes: Numeric,
        ..OP
    },
    OpDef {
        name: "sum",
        family: Reduce,
        doc: r#"`torch.sum(x, dims, keepdim)` (accumulated in f64) on a floating tensor.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range or repeated, keepdim not 0/1),
RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce(s, ReduceOp::Sum, x, dims, keepdim, out)",
        dtypes: Numeric,
        backward: "sum_backward",
        ..OP
    },
    OpDef {
        name: "sum_backward",
        family: Reduce,
        doc: r#"The backward of `rb_sum` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
(the reduction's shape): `dx = dy` broadcast back.

Fails as `rb_sum`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce_backward(s, ReduceOp::Sum, x, dims, keepdim, dy, out)",
        py: Py {
            order: &["x", "grad", "dim", "keepdim"],
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "mean",
        family: Reduce,
        doc: r#"`torch.mean(x, dims, keepdim)` (accumulated in f64; NaN over zero elements) on a floating tensor.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range or repeated, keepdim not 0/1),
RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce(s, ReduceOp::Mean, x, dims, keepdim, out)",
        backward: "mean_backward",
        ..OP
    },
    OpDef {
        name: "mean_backward",
        family: Reduce,
        doc: r#"The backward of `rb_mean` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
(the reduction's shape): `dx = dy / count` broadcast back.

Fails as `rb_mean`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce_backward(s, ReduceOp::Mean, x, dims, keepdim, dy, out)",
        py: Py {
            order: &["x", "grad", "dim", "keepdim"],
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "max",
        family: Reduce,
        doc: r#"`torch.amax(x, dims, keepdim)` (NaN propagates) on a floating tensor.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range or repeated, keepdim not 0/1, reducing an empty dimension),
RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce(s, ReduceOp::Max, x, dims, keepdim, out)",
        dtypes: Numeric,
        backward: "max_backward",
        ..OP
    },
    OpDef {
        name: "max_backward",
        family: Reduce,
        doc: r#"The backward of `rb_max` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
(the reduction's shape): the gradient shared evenly between tied maxima (`torch.amax`'s rule).

Fails as `rb_max`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce_backward(s, ReduceOp::Max, x, dims, keepdim, dy, out)",
        py: Py {
            order: &["x", "grad", "dim", "keepdim"],
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "min",
        family: Reduce,
        doc: r#"`torch.amin(x, dims, keepdim)` (NaN propagates) on a floating tensor.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range or repeated, keepdim not 0/1, reducing an empty dimension),
RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce(s, ReduceOp::Min, x, dims, keepdim, out)",
        dtypes: Numeric,
        backward: "min_backward",
        ..OP
    },
    OpDef {
        name: "min_backward",
        family: Reduce,
        doc: r#"The backward of `rb_min` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
(the reduction's shape): the gradient shared evenly between tied minima.

Fails as `rb_min`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce_backward(s, ReduceOp::Min, x, dims, keepdim, dy, out)",
        py: Py {
            order: &["x", "grad", "dim", "keepdim"],
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "prod",
        family: Reduce,
        doc: r#"`torch.prod` over `dims` (accumulated in f64) on a floating tensor.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range or repeated, keepdim not 0/1),
RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce(s, ReduceOp::Prod, x, dims, keepdim, out)",
        dtypes: Numeric,
        backward: "prod_backward",
        ..OP
    },
    OpDef {
        name: "prod_backward",
        family: Reduce,
        doc: r#"The backward of `rb_prod` with the same `dims` and `keepdim`: `dx` (x's shape) from `dy`
(the reduction's shape): `dx = dy * (product of the other elements)` (exact with zeros).

Fails as `rb_prod`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape."#,
        params: &[
            p("x", Tensor),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce_backward(s, ReduceOp::Prod, x, dims, keepdim, dy, out)",
        py: Py {
            order: &["x", "grad", "dim", "keepdim"],
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "argmax_all",
        family: Reduce,
        doc: r#"`torch.argmax(x)` without `dim`, on a floating tensor: an `RB_DTYPE_I64` tensor holding
the index of the first largest value of the flattened `x` (a NaN counts as the largest);
its shape is `[]`, or `x`'s rank with every size 1 when `keepdim` is 1.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(empty `x`, keepdim not 0/1), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (an
integer `x`, or a given `*out` of the wrong shape or dtype). Output convention (a new
tensor the caller destroys, or the given `*out` written in place; `*out` untouched on
failure): `rb_add`. Thread-safe; `x` is only read."#,
        params: &[p("x", Tensor), p("keepdim", Flag).default("False")],
        outputs: &[o("out", Out)],
        call: "reduce::argmax_all(s, x, keepdim, out)",
        dtypes: Numeric,
        py: Py {
            name: "_argmax_all",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "argmax",
        family: Reduce,
        doc: r#"`torch.argmax(x, dim, keepdim)` on a floating tensor: an `RB_DTYPE_I64` tensor of the first
index of the largest value along `dim` (a NaN counts as the largest).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range, keepdim not 0/1, empty dimension), RB_STATUS_SHAPE_MISMATCH or
RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dim", I64),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::argmax(s, x, dim, keepdim, out)",
        dtypes: Numeric,
        py: Py {
            name: "_argmax_dim",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "permute",
        family: Data,
        doc: r#"`x.permute(perm).contiguous()`: `perm` holds `ndim` dimension indices (negative count
from the end), a permutation of x's dimensions.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (not a
permutation), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (`*out`). Output
convention: `rb_add`."#,
        params: &[p("x", Tensor), p("perm", Dims { len: "ndim" }).py("dims")],
        outputs: &[o("out", Out)],
        call: "data::permute(s, x, perm, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "concat",
        family: Data,
        doc: r#"`torch.cat(xs, dim)`: `n` (>= 1) tensors of one dtype and device whose shapes agree
outside `dim`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (n == 0,
dim out of range), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH. Output convention:
`rb_add`."#,
        params: &[
            p("xs", TensorList { len: "n" }).py("tensors"),
            p("dim", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "data::concat(s, xs, dim, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "slice",
        family: Data,
        doc: r#"`x[..., start:end:step, ...]` along `dim` as a new contiguous tensor (Python slicing:
negative indices count from the end, out-of-range bounds clamp; `step` > 0).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim out
of range, step <= 0), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH. Output convention:
`rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dim", I64),
            p("start", I64).default("0"),
            p("end", I64).default("9223372036854775807"),
            p("step", I64).default("1"),
        ],
        outputs: &[o("out", Out)],
        call: "data::slice(s, x, dim, start, end, step, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "cast",
        family: Data,
        doc: r#"`x.to(dtype)`: converts to the `rb_dtype` `dtype` with PyTorch's rules (floats to integers
truncate toward zero; non-zero to bool is true).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (bad
dtype), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH (`*out`). Output convention:
`rb_add`."#,
        params: &[p("x", Tensor), p("dtype", Dtype)],
        outputs: &[o("out", Out)],
        call: "data::cast(s, x, dtype, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "fill",
        family: Data,
        doc: r#"Sets every element of `x` to `value` (converted as a cast would), in place.

Fails with RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe (writes to one
tensor from several threads race)."#,
        params: &[p("x", TensorMut), p("value", F64)],
        outputs: &[],
        ret: Unit,
        call: "data::fill(s, x, value)",
        dtypes: Any,
        py: Py { returns: "x", ..PY },
        ..OP
    },
    OpDef {
        name: "copy",
        family: Data,
        doc: r#"`dst.copy_(src)`: same shape; the dtype converts when both are on one device; across
devices the data goes through host memory and the dtypes must match.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH or
RB_STATUS_DTYPE_MISMATCH. Thread-safe."#,
        params: &[p("src", Tensor), p("dst", TensorMut)],
        outputs: &[],
        ret: Unit,
        call: "data::copy(s, src, dst)",
        dtypes: Any,
        py: Py {
            returns: "dst",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "embedding",
        family: Data,
        doc: r#"`F.embedding(indices, weight)`: rows of the 2-D `weight` [num, dim] picked by `indices`
(i32 or i64, any shape); the result has shape `indices.shape + [dim]`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (an index
outside [0, num)), RB_STATUS_SHAPE_MISMATCH (weight not 2-D) or RB_STATUS_DTYPE_MISMATCH
(indices not integer). Output convention: `rb_add`."#,
        params: &[p("weight", Tensor), p("indices", Tensor).py("input")],
        outputs: &[o("out", Out)],
        call: "data::embedding(s, weight, indices, out)",
        py: Py {
            order: &["input", "weight"],
            ..PY
        },
        backward: "embedding_backward",
        ..OP
    },
    OpDef {
        name: "embedding_backward",
        family: Data,
        doc: r#"The weight gradient of `rb_embedding`, dense [num_embeddings, dim]: each row of `dy`
(shape `indices.shape + [dim]`) added to the row its index names (repeated indices sum).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(negative num_embeddings, index out of range), RB_STATUS_SHAPE_MISMATCH or
RB_STATUS_DTYPE_MISMATCH. Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("indices", Tensor),
            p("num_embeddings", Usize),
        ],
        outputs: &[o("out", Out)],
        call: "data::embedding_backward(s, dy, indices, num_embeddings, out)",
        ..OP
    },
    OpDef {
        name: "linear",
        family: Blas,
        doc: r#"`torch.nn.functional.linear(x, w, bias)`: `x · wᵀ + bias` with `x` `[..., k]`, `w`
`[n, k]`, `bias` `[n]` or NULL.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention and threads: see
the section's conventions."#,
        params: &[
            p("x", Tensor).py("input"),
            p("w", Tensor).py("weight"),
            p("bias", TensorOpt).default("None"),
        ],
        outputs: &[o("out", Out)],
        call: "blas::linear(s, x, w, bias, out)",
        backward: "linear_backward",
        ..OP
    },
    OpDef {
        name: "linear_backward",
        family: Blas,
        doc: r#"Gradients of `rb_linear`: new tensors `*dx`, `*dw` and, when `db` is not NULL, `*db`,
owned by the caller and written only on success.

Failures as `rb_linear`. Thread-safe for distinct outputs."#,
        params: &[
            p("x", Tensor).py("input"),
            p("w", Tensor).py("weight"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("dx", New), o("dw", New), o("db", NewOpt)],
        ret: Tuple,
        call: "blas::linear_backward(s, x, w, dy, db)",
        ..OP
    },
    OpDef {
        name: "matmul_bias_act",
        family: Blas,
        doc: r#"Fused `activation(a · b + bias)` (an `rb_activation`): matmul+bias, matmul+bias+relu,
matmul+bias+gelu. `a` `[..., k]`, `b` `[k, n]`, `bias` `[n]`; the epilogue runs on each
block of rows while it is in cache.

Failures as `rb_linear`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("a", Tensor),
            p("b", Tensor),
            p("bias", Tensor),
            p("activation", Activation).default("None"),
        ],
        outputs: &[o("out", Out)],
        call: "blas::matmul_bias_act(s, a, b, bias, activation, out)",
        ..OP
    },
    OpDef {
        name: "matmul",
        family: Blas,
        doc: r#"`torch.matmul(a, b)`: 1-D operands are vectors, 2-D are matrices, more dimensions are
batches of matrices whose batch dimensions broadcast.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(inner dimensions differ, batch dimensions do not broadcast, `*out` of another shape),
RB_STATUS_DTYPE_MISMATCH (different or non-floating dtypes) or RB_STATUS_INVALID_ARGUMENT.
Output convention and threads: see the eager-op section."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "blas::matmul(s, a, b, out)",
        ..OP
    },
    OpDef {
        name: "conv",
        family: Conv,
        doc: r#"Convolution `conv{ndim}d(x, w, bias)` (ndim from `params`) followed by `activation` (an
`rb_activation`), fused: conv, conv+bias, conv+bias+relu. `x` `[N, C, ...]`, `w`
`[K, C / groups, ...]`, `bias` `[K]` or NULL.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(ranks, channels, kernel larger than the padded input, `*out` of another shape),
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad params, groups not dividing
the channels). Output convention and threads: see the section's conventions."#,
        params: &[
            p("x", Tensor),
            p("w", Tensor),
            p("bias", TensorOpt),
            p("params", ConvParams),
            p("activation", Activation),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv(s, x, w, bias, &params.0, params.1, activation, out)",
        py: Py {
            name: "_conv",
            ..PY
        },
        backward: "conv_backward_data",
        ..OP
    },
    OpDef {
        name: "conv_bn_relu",
        family: Conv,
        doc: r#"Inference `relu(batch_norm(conv(x, w, bias)))` with the batch norm (`mean`, `var`,
`gamma`, `beta`, each `[K]`; `eps` > 0) folded into the convolution. `bias` may be NULL.

Failures as `rb_conv`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("x", Tensor),
            p("w", Tensor),
            p("bias", TensorOpt),
            p("mean", Tensor),
            p("var", Tensor),
            p("gamma", Tensor),
            p("beta", Tensor),
            p("eps", F64),
            p("params", ConvParams),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_bn_relu(s, x, w, bias, [mean, var, gamma, beta], eps, &params.0, params.1, out)",
        py: Py {
            name: "_conv_bn_relu",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "conv_transpose",
        family: Conv,
        doc: r#"Transposed convolution (`conv_transpose{ndim}d`), `x` `[N, C, ...]`, `w`
`[C, K / groups, ...]`, `bias` `[K]` or NULL; uses `params.output_padding`.

Failures as `rb_conv` (output_padding must be smaller than stride or dilation). Output
convention and threads: see the section's conventions."#,
        params: &[
            p("x", Tensor),
            p("w", Tensor),
            p("bias", TensorOpt),
            p("params", ConvParams),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_transpose(s, x, w, bias, &params.0, params.1, out)",
        py: Py {
            name: "_conv_transpose",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "conv_backward_data",
        family: Conv,
        doc: r#"Gradient of `rb_conv` (no activation) with respect to `x`, whose shape is the
`x_ndim` extents at `x_shape`; `dy` has the convolution's output shape.

Failures as `rb_conv`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("w", Tensor),
            p("x_shape", Shape { len: "x_ndim" }),
            p("params", ConvParams),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)",
        py: Py {
            name: "_conv_backward_data",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "conv_backward_weight",
        family: Conv,
        doc: r#"Gradients of `rb_conv` with respect to the weight (shape: `w_ndim` extents at `w_shape`)
and, when `db` is not NULL, the bias. New tensors are written to `*dw` (and `*db`), owned
by the caller, only on success.

Failures as `rb_conv`. Thread-safe for distinct outputs."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("w_shape", Shape { len: "w_ndim" }),
            p("params", ConvParams),
        ],
        outputs: &[o("dw", New), o("db", NewOpt)],
        ret: Tuple,
        call: "conv::conv_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)",
        py: Py {
            name: "_conv_backward_weight",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "conv_ex",
        family: Conv,
        doc: r#"`rb_conv` with padding per side: `params` (an `rb_conv_params_ex`) gives the padding
before (`pad_before`) and after (`pad_after`) each spatial dim, so PyTorch's
`padding='same'` with an odd total padding (the extra after), ONNX's SAME_UPPER /
SAME_LOWER and explicit ONNX `pads` are exact: the result is `conv{ndim}d(F.pad(x, pads),
w, bias)` followed by `activation`. Equal padding on both sides gives exactly `rb_conv`'s
result; otherwise the input is zero-padded by the difference first (a copy in the
stream's memory). `output_padding` is not used (as by `rb_conv`).

Failures as `rb_conv` (RB_STATUS_INVALID_ARGUMENT also for a negative padding). Output
convention and threads: see the section's conventions."#,
        params: &[
            p("x", Tensor),
            p("w", Tensor),
            p("bias", TensorOpt),
            p("params", ConvParamsEx),
            p("activation", Activation),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_ex(s, x, w, bias, &params.0, params.1, activation, out)",
        py: Py {
            name: "_conv_ex",
            ..PY
        },
        backward: "conv_ex_backward_data",
        ..OP
    },
    OpDef {
        name: "conv_ex_backward_data",
        family: Conv,
        doc: r#"Gradient of `rb_conv_ex` (no activation) with respect to `x`, whose shape is the
`x_ndim` extents at `x_shape`; `dy` has the convolution's output shape. Equal padding on
both sides gives exactly `rb_conv_backward_data`'s result.

Failures as `rb_conv_ex`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("w", Tensor),
            p("x_shape", Shape { len: "x_ndim" }),
            p("params", ConvParamsEx),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_ex_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)",
        py: Py {
            name: "_conv_ex_backward_data",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "conv_ex_backward_weight",
        family: Conv,
        doc: r#"Gradients of `rb_conv_ex` with respect to the weight (shape: `w_ndim` extents at
`w_shape`) and, when `db` is not NULL, the bias. New tensors are written to `*dw` (and
`*db`), owned by the caller, only on success. Equal padding on both sides gives exactly
`rb_conv_backward_weight`'s result.

Failures as `rb_conv_ex`. Thread-safe for distinct outputs."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("w_shape", Shape { len: "w_ndim" }),
            p("params", ConvParamsEx),
        ],
        outputs: &[o("dw", New), o("db", NewOpt)],
        ret: Tuple,
        call: "conv::conv_ex_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)",
        py: Py {
            name: "_conv_ex_backward_weight",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "pool",
        family: Pool,
        doc: r#"Pooling (`mode`: an `rb_pool_mode`) of `x` `[N, C, ...]` with `params` (a zero stride
entry is not allowed; pass the kernel size for PyTorch's default).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (padding above half the kernel,
dilation with average pooling, bad mode). Output convention and threads: see the section's
conventions."#,
        params: &[p("mode", PoolMode), p("x", Tensor), p("params", PoolParams)],
        outputs: &[o("out", Out)],
        call: "pool::pool(s, mode, x, &params.0, params.1, out)",
        py: Py {
            name: "_pool",
            ..PY
        },
        backward: "pool_backward",
        ..OP
    },
    OpDef {
        name: "pool_backward",
        family: Pool,
        doc: r#"Gradient of `rb_pool` with respect to `x`, from `x` and `dy`.

Failures as `rb_pool`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("mode", PoolMode),
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("params", PoolParams),
        ],
        outputs: &[o("out", Out)],
        call: "pool::pool_backward(s, mode, x, dy, &params.0, params.1, out)",
        py: Py {
            name: "_pool_backward",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "pool_ex",
        family: Pool,
        doc: r#"`rb_pool` with padding per side and average pooling's divisor: `params` (an
`rb_pool_params_ex`) gives the padding before (`pad_before`) and after (`pad_after`) each
spatial dim (each at most half the kernel; PyTorch's `ceil_mode` rule with the padding
before: the last window starts inside the input or that padding), and
`divisor_override` (0: none; otherwise every average window sum is divided by it,
PyTorch's `avg_pool{n}d(divisor_override=)`; average modes only). Padding counts in the
divisor of `RB_POOL_MODE_AVG_INCLUDE_PAD` up to the padded end on each side. Equal padding
and no divisor give exactly `rb_pool`'s result.

Failures as `rb_pool` (RB_STATUS_INVALID_ARGUMENT also for a negative padding or a
divisor with max pooling). Output convention and threads: see the section's
conventions."#,
        params: &[
            p("mode", PoolMode),
            p("x", Tensor),
            p("params", PoolParamsEx),
        ],
        outputs: &[o("out", Out)],
        call: "pool::pool_ex(s, mode, x, &params.0, params.1, out)",
        py: Py {
            name: "_pool_ex",
            ..PY
        },
        backward: "pool_ex_backward",
        ..OP
    },
    OpDef {
        name: "pool_ex_backward",
        family: Pool,
        doc: r#"Gradient of `rb_pool_ex` with respect to `x`, from `x` and `dy`. Equal padding and no
divisor give exactly `rb_pool_backward`'s result.

Failures as `rb_pool_ex`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("mode", PoolMode),
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("params", PoolParamsEx),
        ],
        outputs: &[o("out", Out)],
        call: "pool::pool_ex_backward(s, mode, x, dy, &params.0, params.1, out)",
        py: Py {
            name: "_pool_ex_backward",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "max_pool_with_indices",
        family: Pool,
        doc: r#"`max_pool{ndim}d(x, ..., return_indices=True)` with `params` (an `rb_pool_params`; ndim
from it) on `x` `[N, C, ...]`: writes the values to `*out` and PyTorch's indices to
`*indices` (i64, same shape): the flat index of each maximum within its `[spatial...]`
plane of `x` (`(d * H + h) * W + w`), the first position in scan order among ties, the
last NaN of a window holding NaNs.

Failures as `rb_pool` (RB_STATUS_DTYPE_MISMATCH also for a given `*indices` that is not
i64). Each output follows the output convention independently; on failure neither is
written. Threads: see the section's conventions."#,
        params: &[p("x", Tensor), p("params", PoolParams)],
        outputs: &[o("out", Out), o("indices", Out)],
        ret: Tuple,
        call: "pool::max_pool_with_indices(s, x, &params.0, params.1, out, indices)",
        py: Py {
            name: "_max_pool_with_indices",
            ..PY
        },
        backward: "max_pool_backward_indices",
        ..OP
    },
    OpDef {
        name: "max_pool_backward_indices",
        family: Pool,
        doc: r#"Gradient of max pooling through its indices (PyTorch's
`max_pool{n}d_with_indices_backward`): the result, of the input's shape (the `x_ndim` (3 to
5) extents at `x_shape`, `[N, C, spatial...]`), is zero but for `dy[n, c, o]` added at
`indices[n, c, o]` of plane `(n, c)` (windows that share a maximum add up). `indices`
(i64) has `dy`'s shape, as `rb_max_pool_with_indices` writes it.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `indices` not of one `[N, C, ...]` shape, `*out` of another shape),
RB_STATUS_DTYPE_MISMATCH (`dy` not floating, `indices` not i64) or
RB_STATUS_INVALID_ARGUMENT (an index outside the plane, a rank other than 3 to 5). Output
convention and threads: see the section's conventions."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("indices", Tensor),
            p("x_shape", Shape { len: "x_ndim" }).py("input_shape"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::max_pool_backward_indices(s, dy, indices, &x_shape, out)",
        ..OP
    },
    OpDef {
        name: "adaptive_avg_pool2d",
        family: Pool,
        doc: r#"`adaptive_avg_pool2d(x, (out_h, out_w))` on `x` `[N, C, H, W]`.

Failures as `rb_pool`. Output convention and threads: see the section's conventions."#,
        params: &[p("x", Tensor), p("out_h", Usize), p("out_w", Usize)],
        outputs: &[o("out", Out)],
        call: "pool::adaptive_avg_pool2d(s, x, [out_h, out_w], out)",
        backward: "adaptive_avg_pool2d_backward",
        ..OP
    },
    OpDef {
        name: "adaptive_avg_pool2d_backward",
        family: Pool,
        doc: r#"Gradient of `rb_adaptive_avg_pool2d` with respect to its input of shape `x_shape` (4
extents).

Failures as `rb_pool`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape4).py("input_shape"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::adaptive_avg_pool2d_backward(s, dy, &x_shape, out)",
        ..OP
    },
    OpDef {
        name: "softmax",
        family: Softmax,
        doc: r#"`torch.softmax(x, dim)` on a floating tensor; `dim` may be negative.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range), RB_STATUS_SHAPE_MISMATCH (`*out` of another shape) or
RB_STATUS_DTYPE_MISMATCH; `*out` is then unchanged. Output convention and threads: see
the eager-op conventions."#,
        params: &[p("x", Tensor), p("dim", I64).default("-1")],
        outputs: &[o("out", Out)],
        call: "softmax::softmax(s, x, dim, out)",
        backward: "softmax_backward",
        ..OP
    },
    OpDef {
        name: "log_softmax",
        family: Softmax,
        doc: "`torch.log_softmax(x, dim)`. Failures as `rb_softmax`.",
        params: &[p("x", Tensor), p("dim", I64).default("-1")],
        outputs: &[o("out", Out)],
        call: "softmax::log_softmax(s, x, dim, out)",
        backward: "log_softmax_backward",
        ..OP
    },
    OpDef {
        name: "softmax_backward",
        family: Softmax,
        doc: r#"Gradient of softmax from its output `y` and the output gradient `dy` (same shape):
`y * (dy - sum(dy * y, dim))`. Failures as `rb_softmax`, plus RB_STATUS_SHAPE_MISMATCH /
RB_STATUS_DTYPE_MISMATCH when `dy` differs from `y`."#,
        params: &[
            p("y", Tensor),
            p("dy", Tensor).py("grad"),
            p("dim", I64).default("-1"),
        ],
        outputs: &[o("out", Out)],
        call: "softmax::softmax_backward(s, y, dy, dim, out)",
        ..OP
    },
    OpDef {
        name: "log_softmax_backward",
        family: Softmax,
        doc: r#"Gradient of log_softmax from its output `y`: `dy - exp(y) * sum(dy, dim)`. Failures as
`rb_softmax_backward`."#,
        params: &[
            p("y", Tensor),
            p("dy", Tensor).py("grad"),
            p("dim", I64).default("-1"),
        ],
        outputs: &[o("out", Out)],
        call: "softmax::log_softmax_backward(s, y, dy, dim, out)",
        ..OP
    },
    OpDef {
        name: "layer_norm",
        family: Norm,
        doc: r#"`torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps)`:
`normalized_shape` (`ndim` extents) must be the trailing dims of `x`; `weight` and `bias`
(that shape, x's dtype) may be NULL.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad eps, empty
normalized_shape); `*out` is then unchanged. Output convention and threads: see the
eager-op conventions."#,
        params: &[
            p("x", Tensor),
            p("normalized_shape", Shape { len: "ndim" }),
            p("weight", TensorOpt).default("None"),
            p("bias", TensorOpt).default("None"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::layer_norm(s, x, &normalized_shape, weight, bias, eps, out)",
        backward: "layer_norm_backward",
        ..OP
    },
    OpDef {
        name: "layer_norm_backward",
        family: Norm,
        doc: r#"layer_norm backward: writes the gradients asked for through `dx`, `dweight`, `dbias`
(each may be NULL to skip; see the gradient convention above). Statistics are
recomputed from `x`. Failures as `rb_layer_norm`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x", Tensor),
            p("normalized_shape", Shape { len: "ndim" }),
            p("weight", TensorOpt).default("None"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("dx", Grad), o("dweight", Grad), o("dbias", Grad)],
        ret: Array,
        call: "norm::layer_norm_backward(s, dy, x, &normalized_shape, weight, eps, [dx, dweight, dbias])",
        ..OP
    },
    OpDef {
        name: "rms_norm",
        family: Norm,
        doc: r#"`torch.nn.functional.rms_norm(x, normalized_shape, weight, eps)` with an explicit `eps`
(PyTorch's default `eps=None` is `torch.finfo(x.dtype).eps`); `weight` may be NULL.
Failures as `rb_layer_norm`."#,
        params: &[
            p("x", Tensor),
            p("normalized_shape", Shape { len: "ndim" }),
            p("weight", TensorOpt).default("None"),
            p("eps", F64).default("1e-6"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::rms_norm(s, x, &normalized_shape, weight, eps, out)",
        backward: "rms_norm_backward",
        ..OP
    },
    OpDef {
        name: "rms_norm_backward",
        family: Norm,
        doc: r#"rms_norm backward through `dx` and `dweight` (each may be NULL to skip). Failures as
`rb_layer_norm`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x", Tensor),
            p("normalized_shape", Shape { len: "ndim" }),
            p("weight", TensorOpt).default("None"),
            p("eps", F64).default("1e-6"),
        ],
        outputs: &[o("dx", Grad), o("dweight", Grad)],
        ret: Array,
        call: "norm::rms_norm_backward(s, dy, x, &normalized_shape, weight, eps, [dx, dweight])",
        ..OP
    },
    OpDef {
        name: "group_norm",
        family: Norm,
        doc: r#"`torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)` on `[N, C, *]`;
`weight`/`bias` (`[C]`) may be NULL. Failures as `rb_layer_norm` (INVALID_ARGUMENT when
num_groups does not divide C)."#,
        params: &[
            p("x", Tensor),
            p("num_groups", Usize),
            p("weight", TensorOpt).default("None"),
            p("bias", TensorOpt).default("None"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::group_norm(s, x, num_groups, weight, bias, eps, out)",
        backward: "group_norm_backward",
        ..OP
    },
    OpDef {
        name: "group_norm_backward",
        family: Norm,
        doc: r#"group_norm backward through `dx`, `dweight`, `dbias` (each may be NULL to skip).
Failures as `rb_group_norm`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x", Tensor),
            p("num_groups", Usize),
            p("weight", TensorOpt).default("None"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("dx", Grad), o("dweight", Grad), o("dbias", Grad)],
        ret: Array,
        call: "norm::group_norm_backward(s, dy, x, num_groups, weight, eps, [dx, dweight, dbias])",
        ..OP
    },
    OpDef {
        name: "batch_norm",
        family: Norm,
        doc: r#"`torch.nn.functional.batch_norm(x, running_mean, running_var, weight, bias, training,
momentum, eps)` on `[N, C, *]`. `running_mean`/`running_var` (`[C]`, x's dtype) are
updated in place when `training` (batch mean, unbiased batch variance, `momentum`); they
may be NULL (together) when training, and are required otherwise. `weight`/`bias` may be
NULL. Failures as `rb_layer_norm` (INVALID_ARGUMENT: one value per channel in training,
missing running stats in eval); on failure nothing is written."#,
        params: &[
            p("x", Tensor),
            p("running_mean", TensorOpt).default("None"),
            p("running_var", TensorOpt).default("None"),
            p("weight", TensorOpt).default("None"),
            p("bias", TensorOpt).default("None"),
            p("training", Bool).default("False"),
            p("momentum", F64).default("0.1"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::batch_norm(s, x, running_mean, running_var, weight, bias, training, momentum, eps, out)",
        backward: "batch_norm_backward",
        ..OP
    },
    OpDef {
        name: "batch_norm_backward",
        family: Norm,
        doc: r#"batch_norm backward through `dx`, `dweight`, `dbias` (each may be NULL to skip):
through the batch statistics when `training`, else with the running stats as
constants. Failures as `rb_batch_norm`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x", Tensor),
            p("running_mean", TensorOpt).default("None"),
            p("running_var", TensorOpt).default("None"),
            p("weight", TensorOpt).default("None"),
            p("training", Bool).default("False"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("dx", Grad), o("dweight", Grad), o("dbias", Grad)],
        ret: Array,
        call: "norm::batch_norm_backward(s, dy, x, running_mean, running_var, weight, training, eps, [dx, dweight, dbias])",
        ..OP
    },
    OpDef {
        name: "mse_loss",
        family: Loss,
        doc: r#"`torch.nn.functional.mse_loss(input, target, reduction)`; `reduction` is an
`rb_reduction`; input and target of one shape and floating dtype. The result is
input-shaped for RB_REDUCTION_NONE, else 0-d.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad reduction); `*out` is then
unchanged. Output convention and threads: see the eager-op conventions."#,
        params: &[
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss(s, LossKind::Mse, input, target, reduction, -100, 0.0, out)",
        backward: "mse_loss_backward",
        ..OP
    },
    OpDef {
        name: "mse_loss_backward",
        family: Loss,
        doc: r#"Gradient of mse_loss with respect to `input`; `grad_out` is shaped like the loss.
Failures as `rb_mse_loss`."#,
        params: &[
            p("grad_out", Tensor).py("grad"),
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_backward(s, LossKind::Mse, grad_out, input, target, reduction, -100, 0.0, out)",
        ..OP
    },
    OpDef {
        name: "bce_loss",
        family: Loss,
        doc: r#"`torch.nn.functional.binary_cross_entropy(input, target, reduction)` on probabilities
(logs clamped at -100 as PyTorch does). Failures as `rb_mse_loss`."#,
        params: &[
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss(s, LossKind::Bce, input, target, reduction, -100, 0.0, out)",
        py: Py {
            name: "binary_cross_entropy",
            ..PY
        },
        backward: "bce_loss_backward",
        ..OP
    },
    OpDef {
        name: "bce_loss_backward",
        family: Loss,
        doc: "Gradient of bce_loss with respect to `input`. Failures as `rb_mse_loss`.",
        params: &[
            p("grad_out", Tensor).py("grad"),
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_backward(s, LossKind::Bce, grad_out, input, target, reduction, -100, 0.0, out)",
        py: Py {
            name: "binary_cross_entropy_backward",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "cross_entropy",
        family: Loss,
        doc: r#"`torch.nn.functional.cross_entropy(input, target, reduction=, ignore_index=,
label_smoothing=)` with logits `[N, C, d...]` (or `[C]`) and class-index targets
`[N, d...]` (i32 or i64). One fused pass per item (log-softmax, gather, reduce); `mean`
divides by the number of non-ignored targets. Fails as `rb_mse_loss`, plus
RB_STATUS_INVALID_ARGUMENT for a target outside `[0, C)` that is not `ignore_index` or a
label_smoothing outside [0, 1]."#,
        params: &[
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
            p("label_smoothing", F64).default("0.0"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss(s, LossKind::CrossEntropy, input, target, reduction, ignore_index, label_smoothing, out)",
        backward: "cross_entropy_backward",
        ..OP
    },
    OpDef {
        name: "cross_entropy_backward",
        family: Loss,
        doc: "Gradient of cross_entropy with respect to the logits. Failures as `rb_cross_entropy`.",
        params: &[
            p("grad_out", Tensor).py("grad"),
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
            p("label_smoothing", F64).default("0.0"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_backward(s, LossKind::CrossEntropy, grad_out, input, target, reduction, ignore_index, label_smoothing, out)",
        ..OP
    },
    OpDef {
        name: "nll_loss",
        family: Loss,
        doc: r#"`torch.nn.functional.nll_loss(input, target, reduction=, ignore_index=)` on
log-probabilities `[N, C, d...]` (or `[C]`). Failures as `rb_cross_entropy`."#,
        params: &[
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss(s, LossKind::Nll, input, target, reduction, ignore_index, 0.0, out)",
        backward: "nll_loss_backward",
        ..OP
    },
    OpDef {
        name: "nll_loss_backward",
        family: Loss,
        doc: "Gradient of nll_loss with respect to `input`. Failures as `rb_cross_entropy`.",
        params: &[
            p("grad_out", Tensor).py("grad"),
            p("input", Tensor),
            p("target", Tensor),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_backward(s, LossKind::Nll, grad_out, input, target, reduction, ignore_index, 0.0, out)",
        ..OP
    },
    OpDef {
        name: "scaled_dot_product_attention",
        family: Attention,
        doc: r#"`torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=, scale=)` with q
`[..., Sq, D]`, k `[..., Sk, D]`, v `[..., Sk, Dv]` (equal leading dims, one dtype);
the result is `[..., Sq, Dv]`. `scale` NULL means `1/sqrt(D)`. The causal mask is
PyTorch's: query i sees keys j <= i.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (non-finite scale). Output
convention and threads: see the eager-op conventions."#,
        params: &[
            p("q", Tensor).py("query"),
            p("k", Tensor).py("key"),
            p("v", Tensor).py("value"),
            p("is_causal", Bool).default("False"),
            p("scale", OptF64).default("None"),
        ],
        outputs: &[o("out", Out)],
        call: "attention::scaled_dot_product_attention(s, q, k, v, is_causal, scale, out)",
        backward: "scaled_dot_product_attention_backward",
        ..OP
    },
    OpDef {
        name: "scaled_dot_product_attention_backward",
        family: Attention,
        doc: r#"Backward of `rb_scaled_dot_product_attention` from the output gradient `dout`: writes
`dq`, `dk`, `dv` (all required, NULL gives RB_STATUS_NULL_POINTER; see the gradient
convention above). Failures as the forward."#,
        params: &[
            p("dout", Tensor).py("grad"),
            p("q", Tensor).py("query"),
            p("k", Tensor).py("key"),
            p("v", Tensor).py("value"),
            p("is_causal", Bool).default("False"),
            p("scale", OptF64).default("None"),
        ],
        outputs: &[
            o("dq", GradRequired),
            o("dk", GradRequired),
            o("dv", GradRequired),
        ],
        ret: ArrayRequired,
        call: "attention::scaled_dot_product_attention_backward(s, dout, q, k, v, is_causal, scale, [dq, dk, dv])",
        ..OP
    },
    OpDef {
        name: "scaled_dot_product_attention_ex",
        family: Attention,
        doc: r#"`torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
is_causal=, scale=scale, enable_gqa=enable_gqa)` (PyTorch's math backend, no dropout) with
q `[..., Hq, Sq, D]`, k `[..., Hk, Sk, D]`, v `[..., Hv, Sk, Dv]` of one dtype (rank >= 2;
the head dim is dim -3); the result is `[L..., Sq, Dv]`:
* `attn_mask` (NULL: none): bool (true = the key takes part) or a float added to the
  scores (f32 or q's dtype), broadcast to the scores `[..., Sq, Sk]`;
* `causal` (an `rb_causal_mode`): 0 none, 1 top-left (`is_causal=True`: query i sees keys
  j <= i), 2 bottom-right (`torch.nn.attention.bias.causal_lower_right`, KV-cache
  decoding: j <= i + Sk - Sq); a mask and a causal mode exclude each other, as in PyTorch;
* `scale` NULL means `1/sqrt(D)`;
* `enable_gqa` 1: grouped-query attention, Hk and Hv divide Hq and query head h uses key
  head `h / (Hq / Hk)` (value head `h / (Hq / Hv)`), as `enable_gqa=True`;
* the leading dims of q, k, v broadcast (NumPy rules; without grouping a head dim of 1
  broadcasts too) to the result's `L`.

A query whose every score is -inf (every key masked out, or none visible: bottom-right
with Sq > Sk) gives 0, as PyTorch's `_safe_softmax`. With only `is_causal`-style arguments
the result equals `rb_scaled_dot_product_attention`'s.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(dims that do not match or broadcast, heads that do not divide, a mask that does not
broadcast to the scores), RB_STATUS_DTYPE_MISMATCH (q, k, v of different or non-floating
dtypes; a mask neither bool, f32 nor q's dtype) or RB_STATUS_INVALID_ARGUMENT (non-finite
scale, bad `causal` or `enable_gqa`, a mask with a causal mode, different devices). Output
convention and threads: see the eager-op conventions."#,
        params: &[
            p("q", Tensor).py("query"),
            p("k", Tensor).py("key"),
            p("v", Tensor).py("value"),
            p("attn_mask", TensorOpt).default("None"),
            p("causal", CausalMode).default("'none'"),
            p("scale", OptF64).default("None"),
            p("enable_gqa", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "attention::scaled_dot_product_attention_ex(s, q, k, v, attn_mask, causal, scale, enable_gqa, out)",
        backward: "scaled_dot_product_attention_ex_backward",
        ..OP
    },
    OpDef {
        name: "scaled_dot_product_attention_ex_backward",
        family: Attention,
        doc: r#"Backward of `rb_scaled_dot_product_attention_ex` from the output gradient `dout`: writes
`dq`, `dk`, `dv` of q's, k's and v's shapes (all required, NULL gives
RB_STATUS_NULL_POINTER; see the gradient convention above): `dk` and `dv` are summed over
the query heads sharing a key/value head and over the dims their input was broadcast
along; the mask gets no gradient. Failures as the forward."#,
        params: &[
            p("dout", Tensor).py("grad"),
            p("q", Tensor).py("query"),
            p("k", Tensor).py("key"),
            p("v", Tensor).py("value"),
            p("attn_mask", TensorOpt).default("None"),
            p("causal", CausalMode).default("'none'"),
            p("scale", OptF64).default("None"),
            p("enable_gqa", Flag).default("False"),
        ],
        outputs: &[
            o("dq", GradRequired),
            o("dk", GradRequired),
            o("dv", GradRequired),
        ],
        ret: ArrayRequired,
        call: "attention::scaled_dot_product_attention_ex_backward(s, dout, q, k, v, attn_mask, causal, scale, enable_gqa, [dq, dk, dv])",
        ..OP
    },
    OpDef {
        name: "rope",
        family: Transformer,
        doc: r#"Rotary position embedding, rotate-half form (GPT-NeoX / LLaMA): along the last dim `D`
(even), with `h = D/2` and `theta_i = p * base^(-2i/D)`, `y[i] = x[i] cos - x[i+h] sin`,
`y[i+h] = x[i+h] cos + x[i] sin`, where `p = position_offset + s` and `s` is the index
along `seq_dim` (any dim but the last, e.g. -2 for `[B, H, S, D]`, -3 for `[B, S, H, D]`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(odd last dim, rank < 2), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (bad
seq_dim or base). Output convention and threads: see the eager-op conventions."#,
        params: &[
            p("x", Tensor),
            p("seq_dim", I64).default("-2"),
            p("base", F64).default("10000.0"),
            p("position_offset", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "transformer::rope(s, x, seq_dim, base, position_offset, false, out)",
        backward: "rope_backward",
        ..OP
    },
    OpDef {
        name: "rope_backward",
        family: Transformer,
        doc: "Gradient of `rb_rope`: the rotation by `-theta` of `dy`. Failures as `rb_rope`.",
        params: &[
            p("dy", Tensor).py("grad"),
            p("seq_dim", I64).default("-2"),
            p("base", F64).default("10000.0"),
            p("position_offset", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "transformer::rope(s, dy, seq_dim, base, position_offset, true, out)",
        ..OP
    },
    OpDef {
        name: "weighted_sum",
        family: Transformer,
        doc: r#"`weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`, w `[..., N]`
(x's dtype), result `[..., D]` (attention's probabilities-times-values for one query).
Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH or
RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions."#,
        params: &[p("x", Tensor), p("w", Tensor)],
        outputs: &[o("out", Out)],
        call: "transformer::weighted_sum(s, x, w, out)",
        backward: "weighted_sum_backward",
        ..OP
    },
    OpDef {
        name: "weighted_sum_backward",
        family: Transformer,
        doc: r#"weighted_sum backward through `dx` and `dw` (each may be NULL to skip). Failures as
`rb_weighted_sum`."#,
        params: &[p("dy", Tensor).py("grad"), p("x", Tensor), p("w", Tensor)],
        outputs: &[o("dx", Grad), o("dw", Grad)],
        ret: Array,
        call: "transformer::weighted_sum_backward(s, dy, x, w, [dx, dw])",
        ..OP
    },
    OpDef {
        name: "sgd_step",
        family: Optim,
        doc: r#"One `torch.optim.SGD` step, in place: `d = grad + weight_decay * param`; with momentum,
`buf = first_step ? d : momentum * buf + (1 - dampening) * d` and `d = nesterov ? d +
momentum * buf : buf`; then `param -= lr * d`. `momentum_buf` (param's shape and dtype) is
required when momentum != 0 and may be NULL otherwise; `first_step` (0/1) says it holds no
state yet. Floating dtypes; all tensors on one device.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(negative lr/momentum/weight_decay, nesterov without momentum or with dampening, a flag not
0/1, a missing buffer), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is
updated then. Thread-safe (concurrent steps on one tensor race)."#,
        params: &[
            p("param", TensorMut),
            p("grad", Tensor),
            p("momentum_buf", TensorOptMut)
                .py("momentum_buffer")
                .default("None"),
            p("lr", F32),
            p("momentum", F32).default("0.0"),
            p("dampening", F32).default("0.0"),
            p("weight_decay", F32).default("0.0"),
            p("nesterov", Flag).default("False"),
            p("first_step", Flag).default("False"),
        ],
        outputs: &[],
        ret: Unit,
        call: "optim::sgd_step(s, param, grad, momentum_buf, &SgdAttrs { lr, momentum, dampening, weight_decay, nesterov, first_step })",
        py: Py {
            returns: "param",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "adam_step",
        family: Optim,
        doc: r#"One `torch.optim.Adam` (L2 weight decay added to the gradient) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
`amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
one (1 on the first call). All tensors of param's shape, dtype (floating) and device.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (lr or
eps or weight_decay negative, a beta outside [0, 1), step < 1, amsgrad not 0/1, missing
max_exp_avg_sq), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is updated
then. Thread-safe (concurrent steps on one tensor race)."#,
        params: &[
            p("param", TensorMut),
            p("grad", Tensor),
            p("exp_avg", TensorMut),
            p("exp_avg_sq", TensorMut),
            p("max_exp_avg_sq", TensorOptMut).default("None"),
            p("lr", F32).default("1e-3"),
            p("beta1", F32).default("0.9"),
            p("beta2", F32).default("0.999"),
            p("eps", F32).default("1e-8"),
            p("weight_decay", F32).default("0.0"),
            p("step", Step),
            p("amsgrad", Flag).default("False"),
        ],
        outputs: &[],
        ret: Unit,
        call: "optim::adam_step(s, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, &AdamAttrs { lr, beta1, beta2, eps, weight_decay, step, amsgrad, decoupled: false })",
        py: Py {
            returns: "param",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "adamw_step",
        family: Optim,
        doc: r#"One `torch.optim.AdamW` (decoupled weight decay: `param *= 1 - lr * weight_decay`) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
`amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
one (1 on the first call). All tensors of param's shape, dtype (floating) and device.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (lr or
eps or weight_decay negative, a beta outside [0, 1), step < 1, amsgrad not 0/1, missing
max_exp_avg_sq), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH; nothing is updated
then. Thread-safe (concurrent steps on one tensor race)."#,
        params: &[
            p("param", TensorMut),
            p("grad", Tensor),
            p("exp_avg", TensorMut),
            p("exp_avg_sq", TensorMut),
            p("max_exp_avg_sq", TensorOptMut).default("None"),
            p("lr", F32).default("1e-3"),
            p("beta1", F32).default("0.9"),
            p("beta2", F32).default("0.999"),
            p("eps", F32).default("1e-8"),
            p("weight_decay", F32).default("0.01"),
            p("step", Step),
            p("amsgrad", Flag).default("False"),
        ],
        outputs: &[],
        ret: Unit,
        call: "optim::adam_step(s, param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, &AdamAttrs { lr, beta1, beta2, eps, weight_decay, step, amsgrad, decoupled: true })",
        py: Py {
            returns: "param",
            ..PY
        },
        ..OP
    },
];
