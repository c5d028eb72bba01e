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
    /// `float` in the C ABI (a published signature: it stays `float`), widened exactly to
    /// `f64` for the Rust side (an optimizer's hyperparameters; the Rust API takes doubles).
    Hyper,
    /// `float` lower bound that must not be NaN (Python `None`: -inf), widened to `f64`
    /// (published as `float`).
    ClampMin,
    /// `float` upper bound that must not be NaN (Python `None`: +inf), widened to `f64`.
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
    /// `int32_t` holding an `rb_scatter_reduce`; `ScatterReduce`.
    ScatterReduce,
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
    /// A tensor the op may write in place although its C pointer stays `const` (published
    /// before the op wrote it: batch_norm's running statistics in training). Recording
    /// treats it as written (see `crate::graph::capture`), like the `Mut` kinds.
    pub writes: bool,
}

impl Param {
    pub const fn py(self, py: &'static str) -> Param {
        Param { py, ..self }
    }
    pub const fn default(self, default: &'static str) -> Param {
        Param { default, ..self }
    }
    pub const fn writes(self) -> Param {
        Param {
            writes: true,
            ..self
        }
    }
    /// Whether the op may write this tensor in place.
    pub const fn is_written(&self) -> bool {
        self.writes || matches!(self.arg, Arg::TensorMut | Arg::TensorOptMut)
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
        writes: false,
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
    /// f32, f16, bf16 and f64.
    FloatF64,
    /// Numeric and the dtypes added for exported models: f64, i8, u8, i16 (every dtype but
    /// bool).
    Wide,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: Wide,
        backward: "add_backward",
        ..OP
    },
    OpDef {
        name: "relu",
        family: Elementwise,
        doc: r#"Elementwise `max(x, 0)` on a floating tensor (f32, f16, bf16; f64
computed in f64) or an integer one
(i32, i64, i8, u8, i16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see
the eager-op conventions."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Relu, x, out)",
        alias: Exact,
        backward: "relu_backward",
        dtypes: Wide,
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
        dtypes: Wide,
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
        dtypes: Wide,
        backward: "mul_backward",
        ..OP
    },
    OpDef {
        name: "div",
        family: Elementwise,
        doc: r#"Elementwise a / b (true division; floating dtypes only) with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16, f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Div, a, b, out)",
        alias: Exact,
        backward: "div_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "pow",
        family: Elementwise,
        doc: r#"Elementwise a ** b (`torch.pow`) with NumPy broadcasting; both inputs of one dtype and device
(f32, f16, bf16, f64; i32, i64, i8, u8 and i16 wrapping to their width).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::binary(s, BinaryOp::Pow, a, b, out)",
        alias: Exact,
        backward: "pow_backward",
        dtypes: Wide,
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
        dtypes: Wide,
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
        dtypes: Wide,
        backward: "minimum_backward",
        ..OP
    },
    OpDef {
        name: "neg",
        family: Elementwise,
        doc: r#"Elementwise `-x` on a floating tensor (f32, f16, bf16; f64
computed in f64) or an integer one
(i32, i64, i8, u8, i16: wrapping as PyTorch, i8 -128 stays -128 and u8 wraps).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Neg, x, out)",
        alias: Exact,
        backward: "neg_backward",
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "abs",
        family: Elementwise,
        doc: r#"Elementwise `|x|` on a floating tensor (f32, f16, bf16; f64
computed in f64) or an integer one
(i32, i64, i8, u8, i16: the minimum of a signed type stays itself as in PyTorch; u8 is
the identity).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Abs, x, out)",
        alias: Exact,
        backward: "abs_backward",
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "sqrt",
        family: Elementwise,
        doc: r#"Elementwise `sqrt(x)` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Sqrt, x, out)",
        alias: Exact,
        backward: "sqrt_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "exp",
        family: Elementwise,
        doc: r#"Elementwise `exp(x)` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Exp, x, out)",
        alias: Exact,
        backward: "exp_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "log",
        family: Elementwise,
        doc: r#"Elementwise `ln(x)` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Log, x, out)",
        alias: Exact,
        backward: "log_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sin",
        family: Elementwise,
        doc: r#"Elementwise `sin(x)` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Sin, x, out)",
        alias: Exact,
        backward: "sin_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "cos",
        family: Elementwise,
        doc: r#"Elementwise `cos(x)` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Cos, x, out)",
        alias: Exact,
        backward: "cos_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sigmoid",
        family: Elementwise,
        doc: r#"Elementwise `1 / (1 + exp(-x))` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Sigmoid, x, out)",
        alias: Exact,
        backward: "sigmoid_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "tanh",
        family: Elementwise,
        doc: r#"Elementwise `tanh(x)` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Tanh, x, out)",
        alias: Exact,
        backward: "tanh_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "silu",
        family: Elementwise,
        doc: r#"Elementwise `x * sigmoid(x)` on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Silu, x, out)",
        alias: Exact,
        backward: "silu_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "hardswish",
        family: Elementwise,
        doc: r#"Elementwise `x * relu6(x + 3) / 6` (`torch.nn.functional.hardswish`) on a floating
tensor (f32, f16, bf16; f64 computed in f64); NaN propagates.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Hardswish, x, out)",
        alias: Exact,
        backward: "hardswish_backward",
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "clamp",
        family: Elementwise,
        doc: r#"`torch.clamp(x, min, max)` with number bounds: `min(max(x, min), max)` (so `max` wins
when `min > max`, as in PyTorch); `min = -inf` / `max = +inf` (Python `None`) is no bound.
The bounds are floats in the C ABI (its published signature), widened exactly to double
(the Rust API `runtime::elementwise::clamp` takes doubles): f32/f16/bf16 clamp by them as
floats, f64 in double. The integer
dtypes (i8, u8, i16, i32, i64) stay integer, as PyTorch with integer bounds: an integral
bound converts to x's dtype as PyTorch's scalar conversion does (in range: itself; on u8,
-255..-1 wrap to 256 + bound; otherwise RB_STATUS_INVALID_ARGUMENT, PyTorch's "value
cannot be converted ... without overflow"; through the C ABI an integer bound beyond
2^24 in magnitude is the float nearest to it, so clamp i32/i64 by large bounds with
`rb_clamp_tensor`).
A non-integral bound (or +inf below, -inf above) on an integer tensor is
RB_STATUS_INVALID_ARGUMENT: PyTorch would promote the result to float, so cast first.
Bool tensors are RB_STATUS_DTYPE_MISMATCH (PyTorch promotes them to int64 or float).

Fails with RB_STATUS_INVALID_ARGUMENT (NaN bound, the integer cases above) and as
`rb_relu`."#,
        params: &[
            p("x", Tensor),
            p("min", ClampMin).default("-inf"),
            p("max", ClampMax).default("inf"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::clamp(s, x, min, max, out)",
        alias: Exact,
        dtypes: Wide,
        backward: "clamp_backward",
        ..OP
    },
    OpDef {
        name: "leaky_relu",
        family: Elementwise,
        doc: r#"Elementwise `x > 0 ? x : negative_slope * x` (`torch.nn.functional.leaky_relu`) on a floating tensor (f32, f16, bf16; f64 computed in f64); NaN propagates.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor), p("negative_slope", F32).default("0.01")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::LeakyRelu { slope: negative_slope }, x, out)",
        alias: Exact,
        backward: "leaky_relu_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "elu",
        family: Elementwise,
        doc: r#"Elementwise `x > 0 ? x : alpha * (exp(x) - 1)` (`torch.nn.functional.elu`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor), p("alpha", F32).default("1.0")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Elu { alpha }, x, out)",
        alias: Exact,
        backward: "elu_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "selu",
        family: Elementwise,
        doc: r#"Elementwise `scale * (x > 0 ? x : alpha * (exp(x) - 1))` with SELU's constants (`torch.nn.functional.selu`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Selu, x, out)",
        alias: Exact,
        backward: "selu_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "celu",
        family: Elementwise,
        doc: r#"Elementwise `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))` (`torch.nn.functional.celu`) on a floating tensor (f32, f16, bf16; f64
computed in f64). RB_STATUS_INVALID_ARGUMENT when `alpha` is 0.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor), p("alpha", F32).default("1.0")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Celu { alpha }, x, out)",
        alias: Exact,
        backward: "celu_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "hardsigmoid",
        family: Elementwise,
        doc: r#"Elementwise `relu6(x + 3) / 6` (`torch.nn.functional.hardsigmoid`) on a floating tensor (f32, f16, bf16; f64 computed in f64); NaN propagates.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Hardsigmoid, x, out)",
        alias: Exact,
        backward: "hardsigmoid_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "softplus",
        family: Elementwise,
        doc: r#"Elementwise `log(1 + exp(beta * x)) / beta`, and `x` where `beta * x > threshold` (`torch.nn.functional.softplus`), on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[
            p("x", Tensor),
            p("beta", F32).default("1.0"),
            p("threshold", F32).default("20.0"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Softplus { beta, threshold }, x, out)",
        alias: Exact,
        backward: "softplus_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "softsign",
        family: Elementwise,
        doc: r#"Elementwise `x / (1 + |x|)` (`torch.nn.functional.softsign`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Softsign, x, out)",
        alias: Exact,
        backward: "softsign_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "mish",
        family: Elementwise,
        doc: r#"Elementwise `x * tanh(softplus(x))` (`torch.nn.functional.mish`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Mish, x, out)",
        alias: Exact,
        backward: "mish_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "erf",
        family: Elementwise,
        doc: r#"Elementwise error function (`torch.erf`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Erf, x, out)",
        alias: Exact,
        backward: "erf_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sign",
        family: Elementwise,
        doc: r#"Elementwise sign, -1, 0 or 1 (`torch.sign`; NaN gives 0 as in PyTorch) on a floating tensor (f32, f16, bf16; f64
computed in f64) or an integer one
(i32, i64, i8, u8, i16).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (bool). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Sign, x, out)",
        alias: Exact,
        backward: "sign_backward",
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "floor",
        family: Elementwise,
        doc: r#"Elementwise `floor(x)` (`torch.floor`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Floor, x, out)",
        alias: Exact,
        backward: "floor_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "ceil",
        family: Elementwise,
        doc: r#"Elementwise `ceil(x)` (`torch.ceil`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Ceil, x, out)",
        alias: Exact,
        backward: "ceil_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "round",
        family: Elementwise,
        doc: r#"Elementwise rounding to the nearest integer, halves to even (`torch.round`), on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Round, x, out)",
        alias: Exact,
        backward: "round_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "reciprocal",
        family: Elementwise,
        doc: r#"Elementwise `1 / x` (`torch.reciprocal`) on a floating tensor (f32, f16, bf16; f64
computed in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (not f32, f16, bf16 or f64). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::unary(s, UnaryOp::Reciprocal, x, out)",
        alias: Exact,
        backward: "reciprocal_backward",
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "clamp_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_clamp`: `dy` where `min <= x <= max`, else 0 (floating dtypes; f64
compares in double with the bounds as given, f32/f16/bf16 in float, as the forward;
integer tensors have no gradient).

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
        call: "elementwise::clamp_backward(s, x, dy, min, max, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "leaky_relu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_leaky_relu` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy` where `x > 0`, else `negative_slope * dy` (PyTorch's `leaky_relu_backward`; so `negative_slope * dy` at 0).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("negative_slope", F32).default("0.01"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::LeakyRelu { slope: negative_slope }, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "elu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_elu` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy` where `x > 0`, else `dy * alpha * exp(x)` (PyTorch's `elu_backward`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("alpha", F32).default("1.0"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Elu { alpha }, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "selu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_selu` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `scale * dy` where `x > 0`, else `dy * scale * alpha * exp(x)` (PyTorch's `elu_backward`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Selu, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "celu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_celu` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy` where `x > 0`, else `dy * exp(x / alpha)` (PyTorch's `elu_backward`). RB_STATUS_INVALID_ARGUMENT when `alpha` is 0.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("alpha", F32).default("1.0"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Celu { alpha }, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "hardsigmoid_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_hardsigmoid` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy / 6` where `-3 < x < 3`, else 0 (PyTorch's `hardsigmoid_backward`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Hardsigmoid, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "softplus_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_softplus` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy` where `beta * x > threshold`, else `dy * z / (z + 1)` with `z = exp(beta * x)` (PyTorch's `softplus_backward`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("beta", F32).default("1.0"),
            p("threshold", F32).default("20.0"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Softplus { beta, threshold }, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "softsign_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_softsign` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy / (1 + |x|)^2`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Softsign, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "mish_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_mish` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy * (t + x * sigmoid(x) * (1 - t^2))` with `t = tanh(softplus(x))` (PyTorch's `mish_backward`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Mish, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "erf_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_erf` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `dy * 2 / sqrt(pi) * exp(-x^2)`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Erf, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sign_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_sign` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): Zeros (PyTorch's gradient of `sign`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Sign, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "floor_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_floor` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): Zeros (PyTorch's gradient of `floor`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Floor, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "ceil_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_ceil` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): Zeros (PyTorch's gradient of `ceil`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Ceil, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "round_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_round` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): Zeros (PyTorch's gradient of `round`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Round, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "reciprocal_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_reciprocal` from the op's input `x` and the upstream gradient `dy`
(same shape and dtype): `-dy / x^2` (PyTorch's: `-dy * (1 / x)^2`).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(`dy` or `*out` of another shape than `x`) or RB_STATUS_DTYPE_MISMATCH. Output convention
and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("out", Out)],
        call: "elementwise::unary_backward(s, UnaryOp::Reciprocal, x, dy, out)",
        alias: Exact,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "prelu",
        family: Elementwise,
        doc: r#"`torch.nn.functional.prelu(x, weight)`: `x > 0 ? x : weight[c] * x`, `c` the element's
channel (dimension 1). `weight` (one dimension or none) holds one value, or one per
channel of `x` (an `x` of fewer than two dimensions takes one value). Floating dtypes, f64 included; NaN
propagates.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (a
`weight` of another size, or `*out` of another shape), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (different devices). Output convention and threads: see `rb_add`."#,
        params: &[p("x", Tensor), p("weight", Tensor)],
        outputs: &[o("out", Out)],
        call: "elementwise::prelu(s, x, weight, out)",
        backward: "prelu_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "prelu_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_prelu` (PyTorch's): `*dx = x > 0 ? dy : weight[c] * dy` (x's shape)
and `*dweight` (weight's shape), per channel the sum of `x > 0 ? 0 : x * dy`. `dx` and
`dweight` follow the output convention of `rb_add` independently.

Fails as `rb_prelu`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape than `x`."#,
        params: &[
            p("x", Tensor),
            p("weight", Tensor),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("dx", Out), o("dweight", Out)],
        ret: Tuple,
        call: "elementwise::prelu_backward(s, x, weight, dy, dx, dweight)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "add_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_add`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Add, a, b, dy, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sub_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_sub`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Sub, a, b, dy, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "mul_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_mul`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Mul, a, b, dy, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "div_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_div`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Div, a, b, dy, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "pow_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_pow`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Pow, a, b, dy, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "maximum_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_maximum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Maximum, a, b, dy, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "minimum_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_minimum`: the gradients `*da` (a's shape) and `*db` (b's shape) from
the upstream gradient `dy` (the broadcast shape), each summed over the dimensions its
operand was broadcast along. Floating dtypes (f64 computed in f64). `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Thread-safe."#,
        params: &[p("a", Tensor), p("b", Tensor), p("dy", Tensor).py("grad")],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::binary_backward(s, BinaryOp::Minimum, a, b, dy, da, db)",
        dtypes: FloatF64,
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
        backward: "where_backward",
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
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "clamp_tensor",
        family: Elementwise,
        doc: r#"`torch.clamp(x, min=min, max=max)` with tensor bounds: `minimum(maximum(x, min), max)`
with NumPy broadcasting over the three; either bound may be NULL (not both). A NaN in `x`
or in a bound gives NaN; where `min > max` the result is `max` (PyTorch's rule). x, min
and max of one dtype (f32, f16, bf16, i32, i64) and device; the result has the broadcast
shape.

Fails with RB_STATUS_NULL_POINTER (x, out), RB_STATUS_INVALID_HANDLE,
RB_STATUS_INVALID_ARGUMENT (both bounds NULL, different devices), RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, `*out` of another shape) or RB_STATUS_DTYPE_MISMATCH (dtypes
differ, bool). Output convention and threads: see the eager-op conventions (`rb_add`)."#,
        params: &[
            p("x", Tensor).py("input"),
            p("min", TensorOpt).default("None"),
            p("max", TensorOpt).default("None"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::clamp_tensor(s, x, min, max, out)",
        alias: Exact,
        dtypes: Wide,
        backward: "clamp_tensor_backward",
        py: Py {
            name: "_clamp_tensor",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "clamp_tensor_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_clamp_tensor` (PyTorch's `clamp_backward` and
`clamp_backward_min_max`): from `x`, the bounds (as given to `rb_clamp_tensor`) and `dy`
(the broadcast shape), `*dx` gets `dy` where `min <= x <= max`; with both bounds `*dmin`
gets `dy` where `x < min` and `min < max`, `*dmax` where `x > max` or `max < min`; with
one bound, that bound gets `dy` where x is beyond it (NaN compares false). Each gradient
is summed over the dimensions its operand was broadcast along (x's, min's and max's
shapes). `dx`, `dmin` and `dmax` may each be NULL to skip that gradient; the gradient of a
NULL bound is not computed (`*dmin`/`*dmax` stay unchanged). Floating dtypes, f64 included.

Fails as `rb_clamp_tensor`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another shape
than the broadcast result; on failure no output is changed. Thread-safe."#,
        params: &[
            p("x", Tensor).py("input"),
            p("min", TensorOpt).default("None"),
            p("max", TensorOpt).default("None"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("dx", Grad), o("dmin", Grad), o("dmax", Grad)],
        ret: Array,
        call: "elementwise::clamp_tensor_backward(s, x, min, max, dy, [dx, dmin, dmax])",
        py: Py {
            order: &["input", "grad", "min", "max"],
            ..PY
        },
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "where_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_where` (`torch.where(cond, a, b)`): from `dy` (the broadcast shape of
cond, a and b), `*da` gets `dy` where `cond` is true and `*db` where it is false (zero
elsewhere), each summed over the dimensions its operand was broadcast along (a's and b's
shapes). `a` and `b` are passed for their shapes, dtype and device. `da` and `db` may each
be NULL to skip that gradient. Floating dtypes, f64 included.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, `dy` or a given output of another shape),
RB_STATUS_DTYPE_MISMATCH (cond not bool, a, b and dy differ, not floating) or
RB_STATUS_INVALID_ARGUMENT (different devices); on failure no output is changed.
Thread-safe."#,
        params: &[
            p("cond", Tensor).py("condition"),
            p("a", Tensor).py("input"),
            p("b", Tensor).py("other"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("da", Grad), o("db", Grad)],
        ret: Array,
        call: "elementwise::where_backward(s, cond, a, b, dy, [da, db])",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "add_scaled",
        family: Elementwise,
        doc: r#"`torch.add(a, b, alpha=alpha)`: `a + alpha * b` with NumPy broadcasting; both inputs of
one dtype and device. Floating dtypes compute in f32 with `alpha` rounded to f32
(PyTorch's opmath); for i32/i64 `alpha` must be an integer that fits the dtype (PyTorch:
"for integral input tensors, argument alpha must not be a floating point number").

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(shapes do not broadcast, or `*out` has another shape), RB_STATUS_DTYPE_MISMATCH (dtypes
differ, bool) or RB_STATUS_INVALID_ARGUMENT (different devices, a NaN alpha, a
non-integral or out-of-range alpha with integer tensors). Output convention and threads:
see the eager-op conventions (`rb_add`)."#,
        params: &[
            p("a", Tensor).py("input"),
            p("b", Tensor).py("other"),
            p("alpha", F64).default("1.0"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::add_scaled(s, BinaryOp::Add, a, b, alpha, out)",
        alias: Exact,
        dtypes: Wide,
        backward: "add_scaled_backward",
        py: Py {
            name: "_add_scaled",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "sub_scaled",
        family: Elementwise,
        doc: r#"`torch.sub(a, b, alpha=alpha)`: `a - alpha * b` with NumPy broadcasting; the rules of
`rb_add_scaled`.

Failures as `rb_add_scaled`. Output convention and threads: see the eager-op conventions
(`rb_add`)."#,
        params: &[
            p("a", Tensor).py("input"),
            p("b", Tensor).py("other"),
            p("alpha", F64).default("1.0"),
        ],
        outputs: &[o("out", Out)],
        call: "elementwise::add_scaled(s, BinaryOp::Sub, a, b, alpha, out)",
        alias: Exact,
        dtypes: Wide,
        backward: "sub_scaled_backward",
        py: Py {
            name: "_sub_scaled",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "add_scaled_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_add_scaled`: `*da = dy` and `*db = alpha * dy`, from the upstream
gradient `dy` (the broadcast shape), each summed over the dimensions its operand was
broadcast along (a's and b's shapes). Floating dtypes, f64 included. `da` and `db` follow the output
convention of `rb_add` independently; on failure neither is changed.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (different devices, NaN alpha).
Thread-safe."#,
        params: &[
            p("a", Tensor).py("input"),
            p("b", Tensor).py("other"),
            p("dy", Tensor).py("grad"),
            p("alpha", F64).default("1.0"),
        ],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::add_scaled_backward(s, BinaryOp::Add, a, b, dy, alpha, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sub_scaled_backward",
        family: Elementwise,
        doc: r#"The backward of `rb_sub_scaled`: `*da = dy` and `*db = -alpha * dy`, each summed over
the dimensions its operand was broadcast along. Floating dtypes, f64 included; output convention and
failures as `rb_add_scaled_backward`. Thread-safe."#,
        params: &[
            p("a", Tensor).py("input"),
            p("b", Tensor).py("other"),
            p("dy", Tensor).py("grad"),
            p("alpha", F64).default("1.0"),
        ],
        outputs: &[o("da", Out), o("db", Out)],
        ret: Tuple,
        call: "elementwise::add_scaled_backward(s, BinaryOp::Sub, a, b, dy, alpha, da, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sum",
        family: Reduce,
        doc: r#"`torch.sum(x, dims, keepdim)` (accumulated in f64) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64).

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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "mean",
        family: Reduce,
        doc: r#"`torch.mean(x, dims, keepdim)` (accumulated in f64; NaN over zero elements) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64).

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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "max",
        family: Reduce,
        doc: r#"`torch.amax(x, dims, keepdim)` (NaN propagates) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64) or an
integer one (i32, i64, i8, u8, i16).

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
        dtypes: Wide,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "min",
        family: Reduce,
        doc: r#"`torch.amin(x, dims, keepdim)` (NaN propagates) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64) or an
integer one (i32, i64, i8, u8, i16).

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
        dtypes: Wide,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "prod",
        family: Reduce,
        doc: r#"`torch.prod` over `dims` (accumulated in f64) on a floating tensor (f32, f16, bf16; f64 computed and stored in f64).

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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "argmax_all",
        family: Reduce,
        doc: r#"`torch.argmax(x)` without `dim`, on a tensor of any dtype but bool: an `RB_DTYPE_I64` tensor holding
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
        dtypes: Wide,
        py: Py {
            name: "_argmax_all",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "argmax",
        family: Reduce,
        doc: r#"`torch.argmax(x, dim, keepdim)` on a tensor of any dtype but bool: an `RB_DTYPE_I64` tensor of the first
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
        dtypes: Wide,
        py: Py {
            name: "_argmax_dim",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "max_dim",
        family: Reduce,
        doc: r#"`torch.max(x, dim, keepdim)` on a tensor of any dtype but bool: `*values`, the largest value along
`dim`, and `*indices` (`RB_DTYPE_I64`), the first index holding it; a NaN counts as the
largest (the value is NaN, the index the first NaN's). Both have x's shape without `dim`
(kept as 1 when `keepdim` is 1). Its backward is `rb_max_dim_backward`, which routes the
gradient to the returned index only (unlike `rb_max`, `torch.amax`, which shares it among
ties).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range, keepdim not 0/1, an empty `dim`), RB_STATUS_SHAPE_MISMATCH (a given
output of another shape) or RB_STATUS_DTYPE_MISMATCH (integer x, a given output of
another dtype). `values` and `indices` follow the output convention of `rb_add`
independently; on failure neither is changed. Thread-safe."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dim", I64),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("values", Out), o("indices", Out)],
        ret: Tuple,
        call: "reduce::max_dim(s, ReduceOp::Max, x, dim, keepdim, values, indices)",
        backward: "max_dim_backward",
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "min_dim",
        family: Reduce,
        doc: r#"`torch.min(x, dim, keepdim)` on a tensor of any dtype but bool: `*values`, the smallest value along
`dim`, and `*indices` (`RB_DTYPE_I64`), the first index holding it; a NaN counts as the
smallest (NaN value, the first NaN's index). Its backward is `rb_max_dim_backward`.

Failures and output convention as `rb_max_dim`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dim", I64),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("values", Out), o("indices", Out)],
        ret: Tuple,
        call: "reduce::max_dim(s, ReduceOp::Min, x, dim, keepdim, values, indices)",
        backward: "max_dim_backward",
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "max_dim_backward",
        family: Reduce,
        doc: r#"The backward of `rb_max_dim` and `rb_min_dim` with the same `dim` and `keepdim`: the
gradient of x (shape: the `ndim` extents at `x_shape`) is `dy` at the index `indices`
holds along `dim` and zero elsewhere (PyTorch's `value_selecting_reduction_backward`).
`dy` (floating) and `indices` (i32 or i64, as `rb_max_dim` returned them) have the
values' shape; a negative index counts from the end.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range, keepdim not 0/1, an index outside `[-n, n)`, different devices),
RB_STATUS_SHAPE_MISMATCH (`dy`, `indices` or `*out`) or RB_STATUS_DTYPE_MISMATCH.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("indices", Tensor),
            p("x_shape", Shape { len: "ndim" }),
            p("dim", I64),
            p("keepdim", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::max_dim_backward(s, dy, indices, &x_shape, dim, keepdim, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sum_dtype",
        family: Reduce,
        doc: r#"`torch.sum(x, dims, keepdim, dtype=dtype)`: x (any dtype) is cast to the `rb_dtype`
`dtype` (f32, f16, bf16, f64, i32 or i64; the rules of `rb_cast`) and summed in it over `dims`
(none: all): floating dtypes accumulate in f64 and round once; integer dtypes wrap on
overflow, as PyTorch's do. PyTorch's default for an integer or bool `x` (`dtype=None`) is
`RB_DTYPE_I64`; the result has `dtype`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range or repeated, keepdim not 0/1, a `dtype` that is no `rb_dtype`),
RB_STATUS_SHAPE_MISMATCH (`*out`) or RB_STATUS_DTYPE_MISMATCH (`dtype` bool, `*out` of
another dtype). Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
            p("dtype", Dtype),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce_dtype(s, ReduceOp::Sum, x, dims, keepdim, dtype, out)",
        dtypes: Any,
        py: Py {
            name: "_sum_dtype",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "prod_dtype",
        family: Reduce,
        doc: r#"`torch.prod(x, dims, keepdim, dtype=dtype)`: x cast to `dtype` and multiplied in it,
with the rules of `rb_sum_dtype` (an empty reduction gives 1).

Failures and output convention as `rb_sum_dtype`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dims", Dims { len: "ndims" }).py("dim").default("None"),
            p("keepdim", Flag).default("False"),
            p("dtype", Dtype),
        ],
        outputs: &[o("out", Out)],
        call: "reduce::reduce_dtype(s, ReduceOp::Prod, x, dims, keepdim, dtype, out)",
        dtypes: Any,
        py: Py {
            name: "_prod_dtype",
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
        backward: "permute_backward",
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
        backward: "concat_backward",
        ..OP
    },
    OpDef {
        name: "slice",
        family: Data,
        doc: r#"`x[..., start:end:step, ...]` along `dim` as a new contiguous tensor (Python/NumPy
slicing, ONNX `Slice`: negative indices count from the end; for `step` > 0 the bounds
clamp to `[0, n]`; for `step` < 0 the walk goes down from `start` and stops before `end`,
both clamped to `[-1, n - 1]`, so `start = INT64_MAX, end = INT64_MIN, step = -1`
reverses the dimension).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim out
of range, step == 0), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH. Output convention:
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
        backward: "slice_backward",
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
        doc: r#"`F.embedding(indices, weight)`: rows of the 2-D `weight` [num, dim] (any dtype) picked by `indices`
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
        dtypes: Any,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "permute_backward",
        family: Data,
        doc: r#"The backward of `rb_permute` with the same `perm`: `dy.permute(inverse(perm)).contiguous()`,
the gradient in x's dimension order. Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (not
a permutation of dy's dimensions), RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH
(`*out`). Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("perm", Dims { len: "ndim" }).py("dims"),
        ],
        outputs: &[o("out", Out)],
        call: "data::permute_backward(s, dy, perm, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "to_channels_last",
        family: Data,
        doc: r#"PyTorch's `x.to(memory_format=torch.channels_last)` (`channels_last_3d` for rank 5) as a
dense tensor: `x` `[N, C, ...]` (rank 3 to 5) becomes `[N, ..., C]`, the layout of the
RB_LAYOUT_NHWC convolutions and poolings (`rb_conv_params_ex.layout`,
`rb_pool_params_ex.layout`). A tiled transpose on GPUs. Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (rank
not 3 to 5, `*out`) or RB_STATUS_DTYPE_MISMATCH (`*out`). Output convention: `rb_add`."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "data::to_channels_last(s, x, out)",
        dtypes: Any,
        backward: "to_channels_first",
        ..OP
    },
    OpDef {
        name: "to_channels_first",
        family: Data,
        doc: r#"The inverse of `rb_to_channels_last` (and its backward): `x` `[N, ..., C]` (rank 3 to 5)
becomes `[N, C, ...]`. Any dtype. Failures as `rb_to_channels_last`."#,
        params: &[p("x", Tensor)],
        outputs: &[o("out", Out)],
        call: "data::to_channels_first(s, x, out)",
        dtypes: Any,
        backward: "to_channels_last",
        ..OP
    },
    OpDef {
        name: "concat_backward",
        family: Data,
        doc: r#"The backward of `rb_concat` for its input `index`: the part of `dy` (the concatenation's
shape) that `xs[index]` filled, with `xs[index]`'s shape. `xs` (`n` >= 1 tensors, as
given to `rb_concat`) are read for their shapes only. Any dtype (dy's).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (n
== 0, dim out of range, index >= n), RB_STATUS_SHAPE_MISMATCH (shapes that do not
concatenate, `dy` not their concatenation, `*out`) or RB_STATUS_DTYPE_MISMATCH (`*out`).
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("xs", TensorList { len: "n" }).py("tensors"),
            p("dim", I64).default("0"),
            p("index", Usize),
        ],
        outputs: &[o("out", Out)],
        call: "data::concat_backward(s, dy, xs, dim, index, out)",
        dtypes: Any,
        py: Py {
            order: &["grad", "tensors", "index", "dim"],
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "slice_backward",
        family: Data,
        doc: r#"The backward of `rb_slice` with the same `dim`, `start`, `end` and `step`: zeros of x's
shape (the `ndim` extents at `x_shape`) with `dy` (the slice's shape) written at the
elements the slice took. Any dtype (dy's).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim
out of range, step == 0, a negative extent), RB_STATUS_SHAPE_MISMATCH (`dy` not the
slice's shape, `*out`) or RB_STATUS_DTYPE_MISMATCH (`*out`). Output convention:
`rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("dim", I64),
            p("start", I64).default("0"),
            p("end", I64).default("9223372036854775807"),
            p("step", I64).default("1"),
        ],
        outputs: &[o("out", Out)],
        call: "data::slice_backward(s, dy, &x_shape, dim, start, end, step, out)",
        dtypes: Any,
        py: Py {
            name: "_slice_backward",
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "gather",
        family: Data,
        doc: r#"`torch.gather(x, dim, index)` (ONNX `GatherElements`): `out[i][j][k] = x[index[i][j][k]][j][k]`
for `dim == 0`, and so on for the other dims; `index` (i32 or i64) has x's rank and no
dimension larger than x's outside `dim`; the result has index's shape and x's dtype (any).
A negative `dim` counts from the end; a negative index value counts from the end of
`dim` (as ONNX allows; PyTorch refuses them).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (dim
out of range, an index value outside `[-n, n)`, different devices),
RB_STATUS_SHAPE_MISMATCH (ranks differ, index larger than x outside dim, `*out`) or
RB_STATUS_DTYPE_MISMATCH (index not integer, `*out`). Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dim", I64),
            p("index", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::gather(s, x, dim, index, out)",
        dtypes: Any,
        backward: "gather_backward",
        ..OP
    },
    OpDef {
        name: "gather_backward",
        family: Data,
        doc: r#"The backward of `rb_gather` with the same `dim` and `index`: zeros of x's shape (the
`ndim` extents at `x_shape`) with every element of `dy` (index's shape, floating) added
at the element the gather read (repeated indices sum: PyTorch's `scatter_add`).

Failures as `rb_gather`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another shape than
`index`. Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("dim", I64),
            p("index", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::gather_backward(s, dy, &x_shape, dim, index, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "take",
        family: Data,
        doc: r#"ONNX `Gather` (`numpy.take(x, indices, axis)`, `torch.index_select` for indices of any
rank): the slices of `x` along `axis` that `indices` (i32 or i64, any shape) names; the
result has shape `x.shape[:axis] + indices.shape + x.shape[axis+1:]` and x's dtype (any).
Negative `axis` and negative index values count from the end.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (axis
out of range, an index outside `[-n, n)`, different devices), RB_STATUS_SHAPE_MISMATCH (a
0-d x, `*out`) or RB_STATUS_DTYPE_MISMATCH (indices not integer, `*out`). Output
convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("axis", I64).default("0"),
            p("indices", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::take(s, x, axis, indices, out)",
        dtypes: Any,
        backward: "take_backward",
        py: Py {
            order: &["input", "indices", "axis"],
            ..PY
        },
        ..OP
    },
    OpDef {
        name: "take_backward",
        family: Data,
        doc: r#"The backward of `rb_take` with the same `axis` and `indices`: zeros of x's shape (the
`ndim` extents at `x_shape`) with each slice of `dy` (take's result shape, floating)
added to the slice its index names (repeated indices sum).

Failures as `rb_take`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another shape than
take's result. Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("axis", I64).default("0"),
            p("indices", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::take_backward(s, dy, &x_shape, axis, indices, out)",
        py: Py {
            order: &["grad", "x_shape", "indices", "axis"],
            ..PY
        },
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "pad",
        family: Data,
        doc: r#"`torch.nn.functional.pad(x, pads, mode, value)`: `pads` holds (before, after) pairs, the
last dimension first, for as many trailing dimensions as there are pairs (`npads` even,
at most twice x's rank; asymmetric). `mode` 0 constant (`value`; negative pads crop), 1
reflect (pads smaller than the dimension), 2 replicate. Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("pads", Dims { len: "npads" }).py("pad"),
            p("mode", I64).default("0"),
            p("value", F64).default("0.0"),
        ],
        outputs: &[o("out", Out)],
        call: "data::pad(s, x, pads, mode, value, out)",
        dtypes: Any,
        backward: "pad_backward",
        ..OP
    },
    OpDef {
        name: "pad_backward",
        family: Data,
        doc: r#"The backward of `rb_pad` with the same `pads` and `mode`: the gradient of the input of
shape `x_shape` (`ndim` extents): constant, the interior of `dy`; reflect and replicate,
each padded element's gradient added to the element it copied. Floating dtypes, f64 included.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("pads", Dims { len: "npads" }).py("pad"),
            p("mode", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "data::pad_backward(s, dy, &x_shape, pads, mode, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "index_select",
        family: Data,
        doc: r#"`torch.index_select(x, dim, index)`: the slices of `x` along `dim` that the 1-D (or 0-D)
i32/i64 `index` names, in its order; negative values count from the end, values outside
`[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device). Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dim", I64),
            p("index", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::index_select(s, x, dim, index, out)",
        dtypes: Any,
        backward: "index_select_backward",
        ..OP
    },
    OpDef {
        name: "index_select_backward",
        family: Data,
        doc: r#"The backward of `rb_index_select`: zeros of `x_shape` with each slice of `dy` added to the
slice its index names (repeated indices sum). Floating dtypes, f64 included.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("dim", I64),
            p("index", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::index_select_backward(s, dy, &x_shape, dim, index, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "expand",
        family: Data,
        doc: r#"`x.expand(shape)` made contiguous (ONNX `Expand` with a full shape): dimensions of size 1
and new leading dimensions repeat; -1 keeps a dimension. Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("shape", Dims { len: "ndim" }).py("size"),
        ],
        outputs: &[o("out", Out)],
        call: "data::expand(s, x, shape, out)",
        dtypes: Any,
        backward: "expand_backward",
        ..OP
    },
    OpDef {
        name: "expand_backward",
        family: Data,
        doc: r#"The backward of `rb_expand`: `dy` summed over the repeated dimensions into `x_shape`.
Floating dtypes, f64 included.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
        ],
        outputs: &[o("out", Out)],
        call: "data::expand_backward(s, dy, &x_shape, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "tile",
        family: Data,
        doc: r#"`x.repeat(repeats)` (ONNX `Tile`, `numpy.tile` with as many repeats as dimensions):
`nrepeats` at least x's rank, extra leading repeats add dimensions. Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("repeats", Dims { len: "nrepeats" }),
        ],
        outputs: &[o("out", Out)],
        call: "data::tile(s, x, repeats, out)",
        dtypes: Any,
        backward: "tile_backward",
        ..OP
    },
    OpDef {
        name: "tile_backward",
        family: Data,
        doc: r#"The backward of `rb_tile`: `dy` summed over the repeats into `x_shape`. Floating dtypes, f64 included.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("repeats", Dims { len: "nrepeats" }),
        ],
        outputs: &[o("out", Out)],
        call: "data::tile_backward(s, dy, &x_shape, repeats, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "flatten",
        family: Data,
        doc: r#"`torch.flatten(x, start_dim, end_dim)` as a new contiguous tensor (a 0-d `x` becomes
`[1]`); its gradient is `dy` reshaped to x's shape. Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("start_dim", I64).default("0"),
            p("end_dim", I64).default("-1"),
        ],
        outputs: &[o("out", Out)],
        call: "data::flatten(s, x, start_dim, end_dim, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "cumsum",
        family: Data,
        doc: r#"`torch.cumsum(x, dim)`, with ONNX `CumSum`'s `exclusive` (each sum leaves its own element
out) and `reverse` (sums from the end). Every dtype. Floating dtypes give x's dtype
(f16/bf16 accumulate in f32, f64 in f64), computed as a GEMM by a triangular matrix of
ones, so the cost grows with the square of the dimension's length. The integer dtypes
(i8/u8/i16/i32/i64) and bool give an **i64** result, as PyTorch's integer cumsum: the sums
are taken in i64, wrapping on overflow, a scan per fiber along `dim`; an `out` of another
dtype than i64 is RB_STATUS_DTYPE_MISMATCH. Integer tensors have no gradient
(`rb_cumsum_backward` takes the floating dtypes).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dim", I64),
            p("exclusive", Flag).default("False"),
            p("reverse", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "data::cumsum(s, x, dim, exclusive, reverse, out)",
        backward: "cumsum_backward",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "cumsum_backward",
        family: Data,
        doc: r#"The backward of `rb_cumsum` with the same `dim`, `exclusive` and `reverse`: the running
sums of `dy` the other way.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("dim", I64),
            p("exclusive", Flag).default("False"),
            p("reverse", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "data::cumsum_backward(s, dy, dim, exclusive, reverse, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "trilu",
        family: Data,
        doc: r#"`torch.triu(x, diagonal)` when `upper`, else `torch.tril(x, diagonal)` (ONNX `Trilu`),
over the last two dimensions (x has at least two); the other elements are zero. Every
dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("upper", Flag).default("True"),
            p("diagonal", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "data::trilu(s, x, upper, diagonal, out)",
        dtypes: Any,
        backward: "trilu_backward",
        ..OP
    },
    OpDef {
        name: "trilu_backward",
        family: Data,
        doc: r#"The backward of `rb_trilu` with the same `upper` and `diagonal`: `dy` masked the same way.
Floating dtypes, f64 included.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("upper", Flag).default("True"),
            p("diagonal", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "data::trilu_backward(s, dy, upper, diagonal, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "scatter_add",
        family: Data,
        doc: r#"`x.scatter_add(dim, index, src)` (ONNX `ScatterElements`, reduction add): a copy of `x`
with each element of `src` over index's shape added at the position `index` names along
`dim` (repeated indices sum). `index` (i32/i64) has x's rank and no dimension larger than
x's outside `dim` or than src's; negative values count from the end, values outside
`[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device). Every dtype but bool (f64 and the integers add in index order, integers wrapping).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dim", I64),
            p("index", Tensor),
            p("src", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::scatter_add(s, x, dim, index, src, out)",
        backward: "scatter_add_backward",
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "scatter_add_backward",
        family: Data,
        doc: r#"The backward of `rb_scatter_add`: `*dx = dy` and `*dsrc = gather(dy, dim, index)` (index's
shape). Floating dtypes, f64 included.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("dim", I64),
            p("index", Tensor),
        ],
        outputs: &[o("dx", Out), o("dsrc", Out)],
        call: "data::scatter_add_backward(s, dy, dim, index, dx, dsrc)",
        ret: Tuple,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "index_copy",
        family: Data,
        doc: r#"`x.index_copy_(dim, index, src)`, in place: the slices of `src` along `dim` are stored into
the slices of `x` that the 1-D (or 0-D) i32/i64 `index` names, in its order; `src` has x's
shape except `index.numel()` along `dim`. Negative values count from the end; values outside
`[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device); where indices repeat, which
slice lands is unspecified (as in PyTorch). The index is read on the device, so a recorded
graph writes where the index tensor says at each run (a KV cache's position). Any dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (bad
index, `src` or `index` overlapping `x`, different devices), RB_STATUS_SHAPE_MISMATCH or
RB_STATUS_DTYPE_MISMATCH, with a message naming the argument. Thread-safe (writes to one tensor
from several threads race)."#,
        params: &[
            p("x", TensorMut).py("input"),
            p("dim", I64),
            p("index", Tensor),
            p("src", Tensor).py("source"),
        ],
        outputs: &[],
        ret: Unit,
        call: "data::index_copy(s, x, dim, index, src)",
        dtypes: Any,
        py: Py {
            returns: "input",
            ..PY
        },
        backward: "index_copy_backward",
        ..OP
    },
    OpDef {
        name: "index_copy_backward",
        family: Data,
        doc: r#"The backward of `rb_index_copy`: `*dx` is `dy` with the indexed slices zeroed (they were
overwritten), `*dsrc = index_select(dy, dim, index)`. Any dtype.

Failures as `rb_index_copy`. Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("dim", I64),
            p("index", Tensor),
        ],
        outputs: &[o("dx", Out), o("dsrc", Out)],
        call: "data::index_copy_backward(s, dy, dim, index, dx, dsrc)",
        ret: Tuple,
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "topk",
        family: Data,
        doc: r#"`torch.topk(x, k, dim, largest, sorted)`: `*values` (x's dtype) and `*indices` (i64), x's
shape with `dim`'s extent `k`: the `k` largest (`largest` 1) or smallest elements along
`dim` and their positions, best first. NaN counts as larger than every number, as in
`torch.topk`; equal elements come in index order (PyTorch leaves the order of ties and of
`sorted` 0 unspecified; the result is always sorted). A negative `dim` counts from the end.
Every dtype but bool.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (`k`
outside `[0, size(dim)]`, dim out of range, a flag not 0/1), RB_STATUS_SHAPE_MISMATCH or
RB_STATUS_DTYPE_MISMATCH (bool, or a given output's shape/dtype). Output convention:
`rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("k", I64),
            p("dim", I64).default("-1"),
            p("largest", Flag).default("True"),
            p("sorted", Flag).default("True"),
        ],
        outputs: &[o("values", Out), o("indices", Out)],
        call: "data::topk(s, x, k, dim, largest, sorted, values, indices)",
        ret: Tuple,
        dtypes: Wide,
        backward: "topk_backward",
        ..OP
    },
    OpDef {
        name: "topk_backward",
        family: Data,
        doc: r#"The backward of `rb_topk`: zeros of x's shape (the `ndim` extents at `x_shape`) with
`dy` (the values' shape, floating) added at the positions `indices` (as `rb_topk` returned
them, i64 or i32) names along `dim`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (an
index out of range, dim out of range), RB_STATUS_SHAPE_MISMATCH (`dy` and `indices` differ,
or are larger than x outside `dim`) or RB_STATUS_DTYPE_MISMATCH. Output convention:
`rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("dim", I64),
            p("indices", Tensor),
        ],
        outputs: &[o("out", Out)],
        call: "data::topk_backward(s, dy, &x_shape, dim, indices, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "scatter",
        family: Data,
        doc: r#"`torch.scatter(x, dim, index, src)` and `x.scatter_reduce(dim, index, src, reduce)` (ONNX
`ScatterElements`, `Scatter`): a copy of `x` where each element of `src` over index's shape
is written (`reduce` RB_SCATTER_REDUCE_NONE) or combined (ADD, MUL, MAX, MIN, with x's
element included) at the position `index` names along `dim`: for `dim == 0`,
`out[index[i][j]][j] = src[i][j]`. `index` (i32/i64) has x's rank and no dimension larger
than x's outside `dim` or than src's; negative values count from the end; values outside
`[-n, n)` are RB_STATUS_INVALID_ARGUMENT (checked on the device). With NONE, repeated
indices leave one of their values (PyTorch: undefined; here the last along `dim`). Every
dtype for NONE; f32, f16, bf16, i32, i64 for the reductions (MAX/MIN propagate NaN).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dim", I64),
            p("index", Tensor),
            p("src", Tensor),
            p("reduce", ScatterReduce).default("'none'"),
        ],
        outputs: &[o("out", Out)],
        call: "data::scatter(s, x, dim, index, src, reduce, out)",
        dtypes: Any,
        backward: "scatter_backward",
        ..OP
    },
    OpDef {
        name: "scatter_backward",
        family: Data,
        doc: r#"The backward of `rb_scatter` with reduce NONE or ADD: `*dx = dy`, with the positions the
scatter wrote zeroed for NONE, and `*dsrc = gather(dy, dim, index)` (index's shape).
Floating dtypes, f64 included; MUL, MAX and MIN are RB_STATUS_UNSUPPORTED.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH, RB_STATUS_DTYPE_MISMATCH or RB_STATUS_UNSUPPORTED, with a message
naming the argument. Output convention: `rb_add`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("dim", I64),
            p("index", Tensor),
            p("reduce", ScatterReduce).default("'none'"),
        ],
        outputs: &[o("dx", Out), o("dsrc", Out)],
        call: "data::scatter_backward(s, dy, dim, index, reduce, dx, dsrc)",
        ret: Tuple,
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "arange",
        family: Data,
        doc: r#"`torch.arange(start, end, step, dtype=dtype)` (ONNX `Range`): a 1-D tensor of
`ceil((end - start) / step)` elements `start + i * step` (computed in double, converted to
the `rb_dtype` `dtype`; integer dtypes take integral arguments and compute in int64). It
is made on `*out`'s device when `*out` is given, else on the stream's device, else (NULL
stream) on the calling thread's current device. An op with no tensor input: recorded into
a graph like any other (on the recorded stream's device).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (a zero or non-finite step,
non-finite bounds, a step whose sign goes away from `end`, non-integral arguments for an
integer dtype, a bad dtype value, `*out` on another device than the stream),
RB_STATUS_SHAPE_MISMATCH (`*out`'s shape) or RB_STATUS_DTYPE_MISMATCH (bool, `*out`'s
dtype). Output convention: `rb_add`."#,
        params: &[
            p("start", F64),
            p("end", F64),
            p("step", F64).default("1.0"),
            p("dtype", Dtype).default("'i64'"),
        ],
        outputs: &[o("out", Out)],
        call: "data::arange(s, start, end, step, dtype, out)",
        dtypes: Wide,
        ..OP
    },
    OpDef {
        name: "one_hot",
        family: Data,
        doc: r#"`torch.nn.functional.one_hot(index, num_classes)` (ONNX `OneHot` with values 0/1): i64 of
shape `index.shape + [num_classes]`, 1 at each index value. `index` is i32 or i64; a
negative value counts from the end (ONNX); values outside `[-num_classes, num_classes)` are
RB_STATUS_INVALID_ARGUMENT (checked on the device).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT,
RB_STATUS_SHAPE_MISMATCH or RB_STATUS_DTYPE_MISMATCH, with a message naming the argument.
Output convention: `rb_add`."#,
        params: &[p("index", Tensor).py("input"), p("num_classes", I64)],
        outputs: &[o("out", Out)],
        call: "data::one_hot(s, index, num_classes, out)",
        dtypes: Any,
        ..OP
    },
    OpDef {
        name: "linear",
        family: Blas,
        doc: r#"`torch.nn.functional.linear(x, w, bias)`: `x · wᵀ + bias` with `x` `[..., k]`, `w`
`[n, k]`, `bias` `[n]` or NULL. f32, f16, bf16, and f64 (a double GEMM, then the bias in
f64).

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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "linear_backward",
        family: Blas,
        doc: r#"Gradients of `rb_linear`: new tensors `*dw` and, when `dx` / `db` are not NULL, `*dx` /
`*db` (a NULL one is not computed, as PyTorch's output mask), owned by the caller and
written only on success.

Failures as `rb_linear`. Thread-safe for distinct outputs."#,
        params: &[
            p("x", Tensor).py("input"),
            p("w", Tensor).py("weight"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("dx", NewOpt), o("dw", New), o("db", NewOpt)],
        ret: Tuple,
        call: "blas::linear_backward(s, x, w, dy, dx, db)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "matmul_bias_act",
        family: Blas,
        doc: r#"Fused `activation(a · b + bias)` (an `rb_activation`): matmul+bias, matmul+bias+relu,
matmul+bias+gelu. `a` `[..., k]`, `b` `[k, n]`, `bias` `[n]`; the epilogue runs on each
block of rows while it is in cache (f64: a double GEMM, then the bias and the activation
as f64 elementwise ops).

Failures as `rb_linear`. Output convention and threads: see the section's conventions."#,
        params: &[
            p("a", Tensor),
            p("b", Tensor),
            p("bias", Tensor),
            p("activation", Activation).default("None"),
        ],
        outputs: &[o("out", Out)],
        call: "blas::matmul_bias_act(s, a, b, bias, activation, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "matmul",
        family: Blas,
        doc: r#"`torch.matmul(a, b)`: 1-D operands are vectors, 2-D are matrices, more dimensions are
batches of matrices whose batch dimensions broadcast.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(inner dimensions differ, batch dimensions do not broadcast, `*out` of another shape),
RB_STATUS_DTYPE_MISMATCH (different dtypes, or not f32, f16, bf16 or f64) or
RB_STATUS_INVALID_ARGUMENT. f64 computes in f64 (cuBLAS/rocBLAS double GEMMs, the CPU's
`matrixmultiply` dgemm). Output convention and threads: see the eager-op section."#,
        params: &[p("a", Tensor), p("b", Tensor)],
        outputs: &[o("out", Out)],
        call: "blas::matmul(s, a, b, out)",
        dtypes: FloatF64,
        backward: "matmul_backward",
        ..OP
    },
    OpDef {
        name: "matmul_backward",
        family: Blas,
        doc: r#"Gradients of `rb_matmul` (`torch.matmul(a, b)`): from the upstream gradient `dy` (the
product's shape), `*da = dy · bᵀ` and `*db = aᵀ · dy` with a's and b's shapes, summed over
the batch dimensions each operand was broadcast along; 1-D operands as torch treats them
(a vector `a` is a row, a vector `b` a column). `da` and `db` may each be NULL to skip
that gradient. f32, f16, bf16 and f64 (computed in f64, broadcast batch sums included).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(operands that do not multiply, `dy` or a given output of another shape),
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (different devices); on failure no
output is changed. Thread-safe."#,
        params: &[
            p("a", Tensor).py("input"),
            p("b", Tensor).py("other"),
            p("dy", Tensor).py("grad"),
        ],
        outputs: &[o("da", Grad), o("db", Grad)],
        ret: Array,
        call: "blas::matmul_backward(s, a, b, dy, [da, db])",
        dtypes: FloatF64,
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
the channels). Output convention and threads: see the section's conventions.

f64: computed in f64, channels first (channels-last tensors are converted around it): on the
CPU device the float64 reference (direct loops, serial), on GPUs direct double kernels
(MIOpen and cuDNN are not used for f64; one thread per output, input or weight element, no
atomics)."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_bn_relu",
        family: Conv,
        doc: r#"Inference `relu(batch_norm(conv(x, w, bias)))` with the batch norm (`mean`, `var`,
`gamma`, `beta`, each `[K]`; `eps` > 0) folded into the convolution. `bias` may be NULL.

Failures as `rb_conv`. Output convention and threads: see the section's conventions. f32, f16 and bf16 only (PyTorch has no fused
conv + batch norm + relu op; for f64, `rb_conv` then `rb_batch_norm` and `rb_relu`)."#,
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
convention and threads: see the section's conventions. f64 as `rb_conv`."#,
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
        backward: "conv_transpose_backward_data",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_backward_data",
        family: Conv,
        doc: r#"Gradient of `rb_conv` (no activation) with respect to `x`, whose shape is the
`x_ndim` extents at `x_shape`; `dy` has the convolution's output shape.

Failures as `rb_conv`. Output convention and threads: see the section's conventions. f64 as `rb_conv`."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_backward_weight",
        family: Conv,
        doc: r#"Gradients of `rb_conv` with respect to the weight (shape: `w_ndim` extents at `w_shape`)
and, when `db` is not NULL, the bias. New tensors are written to `*dw` (and `*db`), owned
by the caller, only on success.

Failures as `rb_conv`. Thread-safe for distinct outputs. f64 as `rb_conv`."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_transpose_backward_data",
        family: Conv,
        doc: r#"Gradient of `rb_conv_transpose` (no bias) with respect to its input `x`, whose shape is
the `x_ndim` extents at `x_shape`; `dy` has the transposed convolution's output shape and
`w` is `[C, K / groups, ...]` (the forward convolution of `dy` with `w`).

Failures as `rb_conv_transpose`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another shape
than the output. Output convention and threads: see the section's conventions. f64 as `rb_conv`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("w", Tensor),
            p("x_shape", Shape { len: "x_ndim" }),
            p("params", ConvParams),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_transpose_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)",
        py: Py {
            name: "_conv_transpose_backward_data",
            ..PY
        },
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_transpose_backward_weight",
        family: Conv,
        doc: r#"Gradients of `rb_conv_transpose` with respect to the weight (shape: the `w_ndim` extents
at `w_shape`, `[C, K / groups, ...]`) and, when `db` is not NULL, the bias (`[K]`), from
the input `x` and `dy` (the output's shape). New tensors are written to `*dw` (and
`*db`), owned by the caller, only on success.

Failures as `rb_conv_transpose`. Thread-safe for distinct outputs. f64 as `rb_conv`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("w_shape", Shape { len: "w_ndim" }),
            p("params", ConvParams),
        ],
        outputs: &[o("dw", New), o("db", NewOpt)],
        ret: Tuple,
        call: "conv::conv_transpose_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)",
        py: Py {
            name: "_conv_transpose_backward_weight",
            ..PY
        },
        dtypes: FloatF64,
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
convention and threads: see the section's conventions. f64 as `rb_conv`."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_ex_backward_data",
        family: Conv,
        doc: r#"Gradient of `rb_conv_ex` (no activation) with respect to `x`, whose shape is the
`x_ndim` extents at `x_shape`; `dy` has the convolution's output shape. Equal padding on
both sides gives exactly `rb_conv_backward_data`'s result.

Failures as `rb_conv_ex`. Output convention and threads: see the section's conventions. f64 as `rb_conv`."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_ex_backward_weight",
        family: Conv,
        doc: r#"Gradients of `rb_conv_ex` with respect to the weight (shape: `w_ndim` extents at
`w_shape`) and, when `db` is not NULL, the bias. New tensors are written to `*dw` (and
`*db`), owned by the caller, only on success. Equal padding on both sides gives exactly
`rb_conv_backward_weight`'s result.

Failures as `rb_conv_ex`. Thread-safe for distinct outputs. f64 as `rb_conv`."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_transpose_ex",
        family: Conv,
        doc: r#"`rb_conv_transpose` with an `rb_conv_params_ex`, for its `layout`: `RB_LAYOUT_NHWC`
takes `x` `[N, ..., C]` and `w` `[C, k..., K / groups]` (PyTorch's channels_last
`conv_transpose{ndim}d` tensors, dense) and writes `[N, ..., K]`; GPUs run it through
channels-last cuDNN/MIOpen descriptors, other devices convert around the channels-first op.
`RB_LAYOUT_NCHW` gives exactly `rb_conv_transpose`'s result. `pad_before` and `pad_after`
must be equal (RB_STATUS_INVALID_ARGUMENT otherwise); `output_padding` is used.

Failures as `rb_conv_transpose`. Output convention and threads: see the section's
conventions. f64 as `rb_conv`."#,
        params: &[
            p("x", Tensor),
            p("w", Tensor),
            p("bias", TensorOpt),
            p("params", ConvParamsEx),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_transpose_ex(s, x, w, bias, &params.0, params.1, out)",
        py: Py {
            name: "_conv_transpose_ex",
            ..PY
        },
        backward: "conv_transpose_ex_backward_data",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_transpose_ex_backward_data",
        family: Conv,
        doc: r#"Gradient of `rb_conv_transpose_ex` (no bias) with respect to its input `x`, whose
shape is the `x_ndim` extents at `x_shape` (in `params.layout`); `dy` has the output's
shape.

Failures as `rb_conv_transpose_ex`, and RB_STATUS_SHAPE_MISMATCH when `dy` has another
shape than the output. Output convention and threads: see the section's conventions. f64 as `rb_conv`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("w", Tensor),
            p("x_shape", Shape { len: "x_ndim" }),
            p("params", ConvParamsEx),
        ],
        outputs: &[o("out", Out)],
        call: "conv::conv_transpose_ex_backward_data(s, dy, w, &x_shape, &params.0, params.1, out)",
        py: Py {
            name: "_conv_transpose_ex_backward_data",
            ..PY
        },
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "conv_transpose_ex_backward_weight",
        family: Conv,
        doc: r#"Gradients of `rb_conv_transpose_ex` with respect to the weight (shape: the `w_ndim`
extents at `w_shape`, in `params.layout`) and, when `db` is not NULL, the bias (`[K]`),
from the input `x` and `dy`. New tensors are written to `*dw` (and `*db`), owned by the
caller, only on success.

Failures as `rb_conv_transpose_ex`. Thread-safe for distinct outputs. f64 as `rb_conv`."#,
        params: &[
            p("x", Tensor),
            p("dy", Tensor).py("grad"),
            p("w_shape", Shape { len: "w_ndim" }),
            p("params", ConvParamsEx),
        ],
        outputs: &[o("dw", New), o("db", NewOpt)],
        ret: Tuple,
        call: "conv::conv_transpose_ex_backward_weight(s, x, dy, &w_shape, &params.0, params.1, db)",
        py: Py {
            name: "_conv_transpose_ex_backward_weight",
            ..PY
        },
        dtypes: FloatF64,
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
conventions.

f64: computed in f64 (GPUs: double kernels over channels-first tensors, channels-last ones
converted around them)."#,
        params: &[p("mode", PoolMode), p("x", Tensor), p("params", PoolParams)],
        outputs: &[o("out", Out)],
        call: "pool::pool(s, mode, x, &params.0, params.1, out)",
        py: Py {
            name: "_pool",
            ..PY
        },
        backward: "pool_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "pool_backward",
        family: Pool,
        doc: r#"Gradient of `rb_pool` with respect to `x`, from `x` and `dy`.

Failures as `rb_pool`. Output convention and threads: see the section's conventions. f64 as `rb_pool`."#,
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
        dtypes: FloatF64,
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
conventions. f64 as `rb_pool`."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "pool_ex_backward",
        family: Pool,
        doc: r#"Gradient of `rb_pool_ex` with respect to `x`, from `x` and `dy`. Equal padding and no
divisor give exactly `rb_pool_backward`'s result.

Failures as `rb_pool_ex`. Output convention and threads: see the section's conventions. f64 as `rb_pool`."#,
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
        dtypes: FloatF64,
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
written. Threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[p("x", Tensor), p("params", PoolParams)],
        outputs: &[o("out", Out), o("indices", Out)],
        ret: Tuple,
        call: "pool::max_pool_with_indices(s, x, &params.0, params.1, out, indices)",
        py: Py {
            name: "_max_pool_with_indices",
            ..PY
        },
        backward: "max_pool_backward_indices",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "max_unpool",
        family: Pool,
        doc: r#"`torch.nn.functional.max_unpool{1,2,3}d` (ONNX `MaxUnpool`): zeros of shape `[N, C,
output_size...]` (`ndim` spatial extents) with each element of `x` `[N, C, ...]` written at
the flat spatial position its index names in its plane; `indices` (i32/i64, x's shape) as
`rb_max_pool_with_indices` writes them. A position named several times gets the mean of
its values (PyTorch leaves it undefined). Index values outside `[-L, L)` (`L` the output
plane's size) are RB_STATUS_INVALID_ARGUMENT, checked on the device. f32, f16, bf16 and f64
(the scatter-adds, counts and mean in f64, on every device).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT. Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("indices", Tensor),
            p("output_size", Shape { len: "ndim" }),
        ],
        outputs: &[o("out", Out)],
        call: "pool::max_unpool(s, x, indices, &output_size, out)",
        backward: "max_unpool_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "max_unpool_backward",
        family: Pool,
        doc: r#"The backward of `rb_max_unpool`: `dy` (the unpooled shape) read at `indices`, of
indices' shape (PyTorch's, for positions named once).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (an index out of range). f32, f16, bf16 and f64 (a gather)."#,
        params: &[p("dy", Tensor).py("grad"), p("indices", Tensor)],
        outputs: &[o("out", Out)],
        call: "pool::max_unpool_backward(s, dy, indices, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "interpolate",
        family: Pool,
        doc: r#"`torch.nn.functional.interpolate(x, size, mode, align_corners)` (ONNX `Resize`) on
`x` `[N, C, spatial...]` (1 to 3 spatial dimensions) to the `ndim` spatial extents `size`:
`mode` 0 is PyTorch's `nearest`, 1 its `linear`, `bilinear` or `trilinear` (by rank) with
`align_corners` either way. Floating dtypes and f64 (linear: source positions and weights in
f64, as PyTorch's double kernels); nearest takes every dtype.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH,
RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT (a mode that is none). Output
convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("size", Shape { len: "ndim" }),
            p("mode", I64).default("0"),
            p("align_corners", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::interpolate(s, x, &size, mode, align_corners, out)",
        dtypes: Any,
        backward: "interpolate_backward",
        ..OP
    },
    OpDef {
        name: "interpolate_backward",
        family: Pool,
        doc: r#"The backward of `rb_interpolate` with the same `mode` and `align_corners`: the gradient
of the input of shape `x_shape` (`ndim` extents) from `dy` (the resized shape). f32, f16,
bf16 and f64 (weights and source positions in f64 as the forward; the scatter-adds in f64).

Fails as `rb_interpolate`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "ndim" }),
            p("mode", I64).default("0"),
            p("align_corners", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::interpolate_backward(s, dy, &x_shape, mode, align_corners, out)",
        dtypes: FloatF64,
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
convention and threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("indices", Tensor),
            p("x_shape", Shape { len: "x_ndim" }).py("input_shape"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::max_pool_backward_indices(s, dy, indices, &x_shape, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adaptive_avg_pool2d",
        family: Pool,
        doc: r#"`adaptive_avg_pool2d(x, (out_h, out_w))` on `x` `[N, C, H, W]`.

Failures as `rb_pool`. Output convention and threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[p("x", Tensor), p("out_h", Usize), p("out_w", Usize)],
        outputs: &[o("out", Out)],
        call: "pool::adaptive_avg_pool2d(s, x, [out_h, out_w], out)",
        backward: "adaptive_avg_pool2d_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adaptive_avg_pool2d_backward",
        family: Pool,
        doc: r#"Gradient of `rb_adaptive_avg_pool2d` with respect to its input of shape `x_shape` (4
extents).

Failures as `rb_pool`. Output convention and threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape4).py("input_shape"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::adaptive_avg_pool2d_backward(s, dy, &x_shape, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adaptive_avg_pool",
        family: Pool,
        doc: r#"`adaptive_avg_pool{ndim}d(x, output_size)` (ONNX `GlobalAveragePool` for all ones):
`output_size` has `ndim` (1 to 3) positive extents; `x` is `[N, C, spatial...]` (`layout`
0, RB_LAYOUT_NCHW) or `[N, spatial..., C]` (`layout` 1, RB_LAYOUT_NHWC, PyTorch's
channels_last), the output in the same layout. Output `o` along a dim is the mean of input
`[floor(o * in / out), ceil((o + 1) * in / out))` (f32 accumulation). N = 0 or C = 0 give
an empty output.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH
(rank not `ndim` + 2, an empty spatial dim, `*out`), RB_STATUS_DTYPE_MISMATCH or
RB_STATUS_INVALID_ARGUMENT (an output extent of zero, a bad layout). Output convention and
threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[
            p("x", Tensor),
            p("output_size", Shape { len: "ndim" }),
            p("layout", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::adaptive_avg_pool(s, x, &output_size, layout, out)",
        backward: "adaptive_avg_pool_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adaptive_avg_pool_backward",
        family: Pool,
        doc: r#"Gradient of `rb_adaptive_avg_pool` with respect to its input of shape `x_shape`
(`x_ndim` extents, in `layout`), from `dy` (the pooled shape, same layout).

Failures as `rb_adaptive_avg_pool` (RB_STATUS_SHAPE_MISMATCH also for a `dy` that is not
the pooled shape). Output convention and threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("x_shape", Shape { len: "x_ndim" }).py("input_shape"),
            p("layout", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::adaptive_avg_pool_backward(s, dy, &x_shape, layout, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adaptive_max_pool",
        family: Pool,
        doc: r#"`adaptive_max_pool{ndim}d(x, output_size, return_indices=True)` (ONNX
`GlobalMaxPool` for all ones), shapes and layouts as `rb_adaptive_avg_pool`: writes the
maxima to `*out` and PyTorch's indices to `*indices` (i64, same shape and layout): the flat
index of each maximum within its `[spatial...]` plane of `x` (`(d * H + h) * W + w`, the
same values in either layout), the first position in scan order among ties, the last NaN
of a window holding NaNs (NaN propagates).

Failures as `rb_adaptive_avg_pool` (RB_STATUS_DTYPE_MISMATCH also for a given `*indices`
that is not i64). Each output follows the output convention independently; on failure
neither is written. Threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[
            p("x", Tensor),
            p("output_size", Shape { len: "ndim" }),
            p("layout", I64).default("0"),
        ],
        outputs: &[o("out", Out), o("indices", Out)],
        ret: Tuple,
        call: "pool::adaptive_max_pool(s, x, &output_size, layout, out, indices)",
        py: Py {
            name: "_adaptive_max_pool",
            ..PY
        },
        backward: "adaptive_max_pool_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adaptive_max_pool_backward",
        family: Pool,
        doc: r#"Gradient of `rb_adaptive_max_pool` (PyTorch's `adaptive_max_pool{n}d_backward`): zeros
of `x_shape` (`x_ndim` extents, in `layout`) with `dy` added at `indices` (i64, `dy`'s
shape, as `rb_adaptive_max_pool` writes them) of each plane; windows that share a maximum
add up, in a fixed order (deterministic).

Failures as `rb_adaptive_avg_pool_backward`; RB_STATUS_DTYPE_MISMATCH also for `indices`
not i64, RB_STATUS_SHAPE_MISMATCH for `indices` not of `dy`'s shape,
RB_STATUS_INVALID_ARGUMENT for an index outside its output's window (checked on the
device). Output convention and threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("indices", Tensor),
            p("x_shape", Shape { len: "x_ndim" }).py("input_shape"),
            p("layout", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::adaptive_max_pool_backward(s, dy, indices, &x_shape, layout, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "max_pool_with_indices_ex",
        family: Pool,
        doc: r#"`rb_max_pool_with_indices` with `params` an `rb_pool_params_ex` (`divisor_override`
0): padding per side and the layout; RB_LAYOUT_NHWC takes `x` `[N, spatial..., C]` and
writes the values and indices `[N, spatial..., C]` (PyTorch's channels_last results), the
indices' values those of channels first (flat within each `[spatial...]` plane).

Failures as `rb_pool_ex` and `rb_max_pool_with_indices`. Each output follows the output
convention independently; on failure neither is written. Threads: see the section's
conventions. f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[p("x", Tensor), p("params", PoolParamsEx)],
        outputs: &[o("out", Out), o("indices", Out)],
        ret: Tuple,
        call: "pool::max_pool_with_indices_ex(s, x, &params.0, params.1, out, indices)",
        py: Py {
            name: "_max_pool_with_indices_ex",
            ..PY
        },
        backward: "max_pool_backward_indices_ex",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "max_pool_backward_indices_ex",
        family: Pool,
        doc: r#"`rb_max_pool_backward_indices` in `layout` (an `rb_layout`): RB_LAYOUT_NHWC takes
`dy` and `indices` `[N, spatial..., C]` (as `rb_max_pool_with_indices_ex` writes them) and
`x_shape` `[N, spatial..., C]`, and writes the result in that layout.

Failures as `rb_max_pool_backward_indices` (RB_STATUS_INVALID_ARGUMENT also for a bad
layout). Output convention and threads: see the section's conventions.
f64 in f64 on every device (GPUs: double kernels)."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("indices", Tensor),
            p("x_shape", Shape { len: "x_ndim" }).py("input_shape"),
            p("layout", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "pool::max_pool_backward_indices_ex(s, dy, indices, &x_shape, layout, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "softmax",
        family: Softmax,
        doc: r#"`torch.softmax(x, dim)` on a floating tensor (f32, f16, bf16; f64 computed in f64); `dim` may be negative.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
(dim out of range), RB_STATUS_SHAPE_MISMATCH (`*out` of another shape) or
RB_STATUS_DTYPE_MISMATCH; `*out` is then unchanged. Output convention and threads: see
the eager-op conventions."#,
        params: &[p("x", Tensor), p("dim", I64).default("-1")],
        outputs: &[o("out", Out)],
        call: "softmax::softmax(s, x, dim, out)",
        backward: "softmax_backward",
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "local_response_norm",
        family: Norm,
        doc: r#"`torch.nn.functional.local_response_norm(x, size, alpha, beta, k)` (ONNX `LRN`): `x /
(k + alpha / size * s)^beta` with `s` the sum of `x^2` over the channels `[c - size/2, c +
(size-1)/2]` (dimension 1 of an `(N, C, ...)` input, at least three dimensions; zeros past
the edges). f32, f16, bf16 and f64 (in f64).

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (fewer
than three dimensions, `*out`), RB_STATUS_DTYPE_MISMATCH or RB_STATUS_INVALID_ARGUMENT
(`size` < 1). Output convention: `rb_add`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("size", I64),
            p("alpha", F64).default("1e-4"),
            p("beta", F64).default("0.75"),
            p("k", F64).default("1.0"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::local_response_norm(s, x, size, alpha, beta, k, out)",
        backward: "local_response_norm_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "local_response_norm_backward",
        family: Norm,
        doc: r#"The backward of `rb_local_response_norm` with the same attributes, from its input `x`
and the upstream gradient `dy` (x's shape).

Fails as `rb_local_response_norm`, and with RB_STATUS_SHAPE_MISMATCH when `dy` has another
shape than `x`."#,
        params: &[
            p("x", Tensor).py("input"),
            p("dy", Tensor).py("grad"),
            p("size", I64),
            p("alpha", F64).default("1e-4"),
            p("beta", F64).default("0.75"),
            p("k", F64).default("1.0"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::local_response_norm_backward(s, x, dy, size, alpha, beta, k, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "layer_norm",
        family: Norm,
        doc: r#"`torch.nn.functional.layer_norm(x, normalized_shape, weight, bias, eps)`:
`normalized_shape` (`ndim` extents) must be the trailing dims of `x`; `weight` and `bias`
(that shape, x's dtype) may be NULL. f32, f16, bf16, and f64 (computed in f64, as row means
and sums and elementwise ops).

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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "group_norm",
        family: Norm,
        doc: r#"`torch.nn.functional.group_norm(x, num_groups, weight, bias, eps)` on `[N, C, *]`;
`weight`/`bias` (`[C]`) may be NULL. Failures as `rb_layer_norm` (INVALID_ARGUMENT when
num_groups does not divide C). f64 is computed in f64 (group means and
sums and elementwise ops)."#,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
missing running stats in eval); on failure nothing is written. f64 is computed in f64
(channel means and sums and elementwise ops)."#,
        params: &[
            p("x", Tensor),
            p("running_mean", TensorOpt).default("None").writes(),
            p("running_var", TensorOpt).default("None").writes(),
            p("weight", TensorOpt).default("None"),
            p("bias", TensorOpt).default("None"),
            p("training", Bool).default("False"),
            p("momentum", F64).default("0.1"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::batch_norm(s, x, running_mean, running_var, weight, bias, training, momentum, eps, out)",
        backward: "batch_norm_backward",
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "batch_norm_channels_last",
        family: Norm,
        doc: r#"`rb_batch_norm` on a channels-last `x` `[N, ..., C]` (PyTorch's batch_norm of a
channels_last tensor; rank 2 is `[N, C]` itself): the same statistics, running-stat
updates and results as `rb_batch_norm` of the channels-first tensor (up to rounding), in
the caller's layout. Runs on the NHWC rows directly (GPUs: per-channel partial statistics
over row blocks of C contiguous channels, then elementwise passes; the CPU: row blocks;
f64: channel means and sums and elementwise ops, in f64).
Failures as `rb_batch_norm`."#,
        params: &[
            p("x", Tensor),
            p("running_mean", TensorOpt).default("None").writes(),
            p("running_var", TensorOpt).default("None").writes(),
            p("weight", TensorOpt).default("None"),
            p("bias", TensorOpt).default("None"),
            p("training", Bool).default("False"),
            p("momentum", F64).default("0.1"),
            p("eps", F64).default("1e-5"),
        ],
        outputs: &[o("out", Out)],
        call: "norm::batch_norm_channels_last(s, x, running_mean, running_var, weight, bias, training, momentum, eps, out)",
        backward: "batch_norm_channels_last_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "batch_norm_channels_last_backward",
        family: Norm,
        doc: r#"`rb_batch_norm_backward` for `rb_batch_norm_channels_last`: `dy`, `x` and `dx`
channels-last `[N, ..., C]`. Failures as `rb_batch_norm`."#,
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
        call: "norm::batch_norm_channels_last_backward(s, dy, x, running_mean, running_var, weight, training, eps, [dx, dweight, dbias])",
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "cross_entropy",
        family: Loss,
        doc: r#"`torch.nn.functional.cross_entropy(input, target, reduction=, ignore_index=,
label_smoothing=)` with logits `[N, C, d...]` (or `[C]`) and class-index targets
`[N, d...]` (i32 or i64). One fused pass per item (log-softmax, gather, reduce); `mean`
divides by the number of non-ignored targets. A floating target of the input's shape and
dtype holds class probabilities (PyTorch's soft targets; see `rb_cross_entropy_weighted`).
Fails as `rb_mse_loss`, plus
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "cross_entropy_weighted",
        family: Loss,
        doc: r#"`torch.nn.functional.cross_entropy(input, target, weight=, reduction=, ignore_index=,
label_smoothing=)`: `rb_cross_entropy` with class weights. `weight` is NULL (all ones) or
`[C]` of the input's dtype: an item with target `t` weighs `weight[t]` and `mean` divides by
the summed weight of the non-ignored targets (NaN when that is 0, as PyTorch); label
smoothing weighs class `c`'s share by `weight[c]`. A floating target of the input's shape
and dtype holds class probabilities (as in `rb_cross_entropy`): the item loss is
`-sum_c weight[c] t'[c] log_softmax(input)[c]` with `t' = t (1 - label_smoothing) +
label_smoothing / C`, `mean` divides by the item count, and `ignore_index` must be negative.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (a
weight that is not `[C]`), RB_STATUS_DTYPE_MISMATCH (a weight or probability target of
another dtype; a floating target of another shape, taken as class indices, as PyTorch) or RB_STATUS_INVALID_ARGUMENT (a target
outside `[0, C)` that is not `ignore_index`, a label_smoothing outside [0, 1], a bad
reduction, an `ignore_index` >= 0 with probability targets); `*out` is then unchanged. On a
GPU the call reads a status word back (it synchronizes the stream), as `rb_cross_entropy`.
Output convention and threads: see the eager-op conventions."#,
        params: &[
            p("input", Tensor),
            p("target", Tensor),
            p("weight", TensorOpt).default("None"),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
            p("label_smoothing", F64).default("0.0"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_weighted(s, LossKind::CrossEntropy, input, target, weight, reduction, ignore_index, label_smoothing, out)",
        backward: "cross_entropy_weighted_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "cross_entropy_weighted_backward",
        family: Loss,
        doc: r#"Gradient of `rb_cross_entropy_weighted` with respect to the logits; `grad_out` is
shaped like the loss. Failures as `rb_cross_entropy_weighted`."#,
        params: &[
            p("grad_out", Tensor).py("grad"),
            p("input", Tensor),
            p("target", Tensor),
            p("weight", TensorOpt).default("None"),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
            p("label_smoothing", F64).default("0.0"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_weighted_backward(s, LossKind::CrossEntropy, grad_out, input, target, weight, reduction, ignore_index, label_smoothing, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "nll_loss_weighted",
        family: Loss,
        doc: r#"`torch.nn.functional.nll_loss(input, target, weight=, reduction=, ignore_index=)`:
`rb_nll_loss` with class weights. `weight` is NULL (all ones) or `[C]` of the input's dtype:
the item loss is `-weight[t] input[t]` and `mean` divides by the summed weight of the
non-ignored targets (NaN when that is 0). Failures as `rb_cross_entropy_weighted` (targets
are class indices only)."#,
        params: &[
            p("input", Tensor),
            p("target", Tensor),
            p("weight", TensorOpt).default("None"),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_weighted(s, LossKind::Nll, input, target, weight, reduction, ignore_index, 0.0, out)",
        backward: "nll_loss_weighted_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "nll_loss_weighted_backward",
        family: Loss,
        doc: r#"Gradient of `rb_nll_loss_weighted` with respect to `input`. Failures as
`rb_nll_loss_weighted`."#,
        params: &[
            p("grad_out", Tensor).py("grad"),
            p("input", Tensor),
            p("target", Tensor),
            p("weight", TensorOpt).default("None"),
            p("reduction", Reduction).default("'mean'"),
            p("ignore_index", I64).default("-100"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_weighted_backward(s, LossKind::Nll, grad_out, input, target, weight, reduction, ignore_index, 0.0, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "bce_loss_weighted",
        family: Loss,
        doc: r#"`torch.nn.functional.binary_cross_entropy(input, target, weight=, reduction=)`:
`rb_bce_loss` with each element's loss multiplied by `weight`, which is NULL (all ones) or
of the input's dtype and broadcasts (NumPy rules) to the input's shape; `mean` divides by
the element count. Fails as `rb_bce_loss`, plus RB_STATUS_SHAPE_MISMATCH for a weight that
does not broadcast to the input and RB_STATUS_DTYPE_MISMATCH for one of another dtype."#,
        params: &[
            p("input", Tensor),
            p("target", Tensor),
            p("weight", TensorOpt).default("None"),
            p("reduction", Reduction).default("'mean'"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_weighted(s, LossKind::Bce, input, target, weight, reduction, -100, 0.0, out)",
        py: Py {
            name: "binary_cross_entropy_weighted",
            ..PY
        },
        backward: "bce_loss_weighted_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "bce_loss_weighted_backward",
        family: Loss,
        doc: r#"Gradient of `rb_bce_loss_weighted` with respect to `input`. Failures as
`rb_bce_loss_weighted`."#,
        params: &[
            p("grad_out", Tensor).py("grad"),
            p("input", Tensor),
            p("target", Tensor),
            p("weight", TensorOpt).default("None"),
            p("reduction", Reduction).default("'mean'"),
        ],
        outputs: &[o("out", Out)],
        call: "loss::loss_weighted_backward(s, LossKind::Bce, grad_out, input, target, weight, reduction, -100, 0.0, out)",
        py: Py {
            name: "binary_cross_entropy_weighted_backward",
            ..PY
        },
        dtypes: FloatF64,
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
convention and threads: see the eager-op conventions.

f64: computed in f64 on every device through the math path (scores, softmax, weighted
values; GPUs: double GEMMs of the vendor BLAS and double softmax/dS kernels, O(Sq x Sk)
scratch)."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "scaled_dot_product_attention_backward",
        family: Attention,
        doc: r#"Backward of `rb_scaled_dot_product_attention` from the output gradient `dout`: writes
`dq`, `dk`, `dv` (all required, NULL gives RB_STATUS_NULL_POINTER; see the gradient
convention above). Failures as the forward. f64 as `rb_scaled_dot_product_attention`."#,
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
        dtypes: FloatF64,
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
convention and threads: see the eager-op conventions. f64 as `rb_scaled_dot_product_attention`."#,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "scaled_dot_product_attention_ex_backward",
        family: Attention,
        doc: r#"Backward of `rb_scaled_dot_product_attention_ex` from the output gradient `dout`: writes
`dq`, `dk`, `dv` of q's, k's and v's shapes (all required, NULL gives
RB_STATUS_NULL_POINTER; see the gradient convention above): `dk` and `dv` are summed over
the query heads sharing a key/value head and over the dims their input was broadcast
along; the mask gets no gradient. Failures as the forward. f64 as `rb_scaled_dot_product_attention`."#,
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
        dtypes: FloatF64,
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
seq_dim or base). Output convention and threads: see the eager-op conventions.

f64: computed in f64 on every device (GPUs: double kernels, angles and products in double)."#,
        params: &[
            p("x", Tensor),
            p("seq_dim", I64).default("-2"),
            p("base", F64).default("10000.0"),
            p("position_offset", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "transformer::rope(s, x, seq_dim, base, position_offset, false, out)",
        backward: "rope_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "rope_backward",
        family: Transformer,
        doc: "Gradient of `rb_rope`: the rotation by `-theta` of `dy`. Failures as `rb_rope`. f64 as `rb_rope`.",
        params: &[
            p("dy", Tensor).py("grad"),
            p("seq_dim", I64).default("-2"),
            p("base", F64).default("10000.0"),
            p("position_offset", I64).default("0"),
        ],
        outputs: &[o("out", Out)],
        call: "transformer::rope(s, dy, seq_dim, base, position_offset, true, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "rope_cached",
        family: Transformer,
        doc: r#"Rotary position embedding from given cos/sin caches (ONNX `RotaryEmbedding`; Hugging
Face `apply_rotary_pos_emb`). `cos` and `sin` are `[max_pos, R/2]` of x's dtype (ONNX's
layout: one angle per rotated pair; HF's duplicated `[max_pos, R]` caches are passed as
their first half of columns), `R` even and at most the last dim `D` of x: the first `R`
features of each vector rotate, the other `D - R` are copied. With `(a, b)` pair `i` of a
vector at position `p` (`(x[i], x[i + R/2])`, rotate-half as GPT-NeoX / LLaMA; or with
`interleaved` = 1 `(x[2i], x[2i+1])`, GPT-J and ONNX `interleaved=1`), `c = cos[p, i]`,
`s = sin[p, i]`: `a' = a c - b s`, `b' = b c + a s`. `seq_dim` is x's sequence dim (any but
the last). Positions: `position_ids` NULL gives `0..S-1` along `seq_dim`; else an i32/i64
tensor `[S]` (shared) or `[B, S]` with `B` x's first dim (ONNX's `[batch, seq]`; seq_dim
must not be 0), every id in `[0, max_pos)`.

Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH (rank
< 2, cos/sin not 2-D or of different shapes, a rotary dim of 0 or above `D`, position_ids
of another shape), RB_STATUS_DTYPE_MISMATCH (cos/sin not of x's dtype, position_ids not
i32/i64) or RB_STATUS_INVALID_ARGUMENT (bad seq_dim, interleaved not 0/1, caches shorter
than the sequence without position_ids, a position id outside `[0, max_pos)`). With
position_ids on a GPU the ids are checked there and a status word is read back (the call
synchronizes the stream). Output convention and threads: see the eager-op conventions. f64 as `rb_rope`."#,
        params: &[
            p("x", Tensor),
            p("cos", Tensor),
            p("sin", Tensor),
            p("position_ids", TensorOpt).default("None"),
            p("seq_dim", I64).default("-2"),
            p("interleaved", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "transformer::rope_cached(s, x, cos, sin, position_ids, seq_dim, interleaved, false, out)",
        backward: "rope_cached_backward",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "rope_cached_backward",
        family: Transformer,
        doc: r#"Gradient of `rb_rope_cached` with respect to x: `dy` rotated by `-theta` (the pass-through
features copied). Failures as `rb_rope_cached`. f64 as `rb_rope`."#,
        params: &[
            p("dy", Tensor).py("grad"),
            p("cos", Tensor),
            p("sin", Tensor),
            p("position_ids", TensorOpt).default("None"),
            p("seq_dim", I64).default("-2"),
            p("interleaved", Flag).default("False"),
        ],
        outputs: &[o("out", Out)],
        call: "transformer::rope_cached(s, dy, cos, sin, position_ids, seq_dim, interleaved, true, out)",
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "weighted_sum",
        family: Transformer,
        doc: r#"`weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`, w `[..., N]`
(x's dtype), result `[..., D]` (attention's probabilities-times-values for one query).
Floating dtypes (f64 computed in f64).
Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_SHAPE_MISMATCH or
RB_STATUS_DTYPE_MISMATCH. Output convention and threads: see the eager-op conventions."#,
        params: &[p("x", Tensor), p("w", Tensor)],
        outputs: &[o("out", Out)],
        call: "transformer::weighted_sum(s, x, w, out)",
        backward: "weighted_sum_backward",
        dtypes: FloatF64,
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "sgd_step",
        family: Optim,
        doc: r#"One `torch.optim.SGD` step, in place: `d = grad + weight_decay * param`; with momentum,
`buf = first_step ? d : momentum * buf + (1 - dampening) * d` and `d = nesterov ? d +
momentum * buf : buf`; then `param -= lr * d`. `momentum_buf` (param's shape and dtype) is
required when momentum != 0 and may be NULL otherwise; `first_step` (0/1) says it holds no
state yet. Floating dtypes. The hyperparameters are floats in the C ABI (its published
signature; Python's wrapper passes them through it): f64 parameters compute in f64 with
them widened exactly, f32/f16/bf16 ones in float. The Rust API (`runtime::optim` with
`SgdAttrs` in f64) takes exact doubles, as PyTorch's Python floats. All tensors on one
device.

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
            p("lr", Hyper),
            p("momentum", Hyper).default("0.0"),
            p("dampening", Hyper).default("0.0"),
            p("weight_decay", Hyper).default("0.0"),
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adam_step",
        family: Optim,
        doc: r#"One `torch.optim.Adam` (L2 weight decay added to the gradient) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
`amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
one (1 on the first call). All tensors of param's shape, dtype (floating) and device. The
hyperparameters are floats in the C ABI (its published signature; Python's wrapper passes
them through it): f64 parameters compute in f64 with them widened exactly, f32/f16/bf16
ones in float (the bias corrections in double). The Rust API (`runtime::optim` with
`AdamAttrs` in f64) takes exact doubles, as PyTorch's Python floats.

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
            p("lr", Hyper).default("1e-3"),
            p("beta1", Hyper).default("0.9"),
            p("beta2", Hyper).default("0.999"),
            p("eps", Hyper).default("1e-8"),
            p("weight_decay", Hyper).default("0.0"),
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
        dtypes: FloatF64,
        ..OP
    },
    OpDef {
        name: "adamw_step",
        family: Optim,
        doc: r#"One `torch.optim.AdamW` (decoupled weight decay: `param *= 1 - lr * weight_decay`) step, in place on `param`, `exp_avg`, `exp_avg_sq` and, with
`amsgrad` = 1, `max_exp_avg_sq` (else it may be NULL). `step` is the step count including this
one (1 on the first call). All tensors of param's shape, dtype (floating) and device. The
hyperparameters are floats in the C ABI (its published signature; Python's wrapper passes
them through it): f64 parameters compute in f64 with them widened exactly, f32/f16/bf16
ones in float (the bias corrections in double). The Rust API (`runtime::optim` with
`AdamAttrs` in f64) takes exact doubles, as PyTorch's Python floats.

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
            p("lr", Hyper).default("1e-3"),
            p("beta1", Hyper).default("0.9"),
            p("beta2", Hyper).default("0.999"),
            p("eps", Hyper).default("1e-8"),
            p("weight_decay", Hyper).default("0.01"),
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
        dtypes: FloatF64,
        ..OP
    },
];
