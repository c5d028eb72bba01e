//! Graphs and the executor (DESIGN §2, §5 item 3): the graph IR, building by recording the
//! eager calls made on a stream ([`capture`]), the passes (dead code, folding, the seed's
//! fused patterns, elementwise chains into one generated kernel, mixed precision:
//! [`passes`]), the memory plan ([`plan`]) and execution with device-graph replay
//! ([`exec`]). Uses `runtime/` and `device/`; nothing below knows it.
//!
//! A graph is a list of [`Node`]s in recording order over [`Value`]s. A value is a graph
//! input (a placeholder given data at each run), a parameter (a real tensor used while
//! recording, bound by reference: a later change to its data is seen at the next run), or
//! an output of a node. A node whose output went into a parameter (an optimizer step, a
//! write into a caller's tensor) has an effect: it is never removed and never reordered.

pub mod capture;
pub mod exec;
pub mod passes;
pub mod plan;

use crate::base::dtype::DType;
use crate::device::Device;
use crate::ops::conv::Activation;
use crate::ops::fused::FusedProgram;
use crate::ops::registry::Op;
use crate::runtime::Tensor;
use std::fmt::Write as _;
use std::sync::Arc;

/// Index of a value in [`Graph::values`].
pub type ValueId = usize;

/// Where a value comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// The i-th graph input.
    Input(usize),
    /// A real tensor, bound by reference.
    Param(Tensor),
    /// Output `output` of node `node`.
    Node { node: usize, output: usize },
}

/// A value: its shape, dtype and source.
#[derive(Clone, Debug)]
pub struct Value {
    pub shape: Vec<usize>,
    pub dtype: DType,
    pub source: Source,
}

impl Value {
    pub fn nbytes(&self) -> usize {
        self.shape.iter().product::<usize>() * self.dtype.size()
    }
}

/// What a node computes.
#[derive(Clone, Debug)]
pub enum NodeOp {
    /// An op of the registry, run through `runtime::dispatch::run`.
    Op(Op),
    /// The input seen with another shape (`rb_tensor_reshape` of a placeholder): a view.
    Reshape(Vec<usize>),
    /// `act(a · b + bias)` with `b` transposed when `trans_b` (linear, and matmul+bias, with
    /// the activation folded in).
    Dense { trans_b: bool, act: Activation },
    /// `act(conv(x, w, bias) + residual)` over the inputs `[x, w, bias, residual]` (the
    /// convolution's own activation is the fused one: none or relu), made by
    /// [`passes::fuse_conv_residual`] on devices with a fused residual epilogue.
    ConvResidual(crate::ops::registry::attrs::Conv),
    /// A convolution (`residual`: with [`NodeOp::ConvResidual`]'s add) over weights the
    /// device packed when the plan was made ([`passes::pack_conv_weights`], O2+): inputs
    /// `[x, packed, bias, residual]`; `x_shape` and `w_shape` are the shapes the weights
    /// were packed for ([`crate::runtime::conv::conv_forward_packed`]); `layout`: which of
    /// x and the output (with the residual) are in the blocked layout, their values shaped
    /// so ([`passes::block_conv_layouts`]).
    ConvPacked {
        conv: crate::ops::registry::attrs::Conv,
        x_shape: Vec<usize>,
        w_shape: Vec<usize>,
        residual: bool,
        layout: crate::ops::conv::Blocked,
    },
    /// Linear layers without bias reading one input of one row, as one matrix-vector pass
    /// ([`crate::runtime::blas::linear_group`]: one launch on devices with
    /// [`crate::device::BlasOps::has_gemv_group`], else the unfused ops), made by
    /// [`passes::fuse_linear_groups`]. Inputs `[x, w_1..w_n,
    /// r_1..r_n]` (`r_i`: a residual added to product i, or absent); outputs one per
    /// product, or with `glu` (n = 2, no residuals) the one `silu(x·w_1ᵀ) * (x·w_2ᵀ)`.
    /// With `norm` ([`passes::fuse_norm_into_groups`]) the products read `rms_norm(x)`, its
    /// weight the input after the residuals
    /// ([`crate::runtime::blas::linear_group_norm`]). `settled`: no work before the node
    /// writes its weights ([`passes::settle_weights`]).
    LinearGroup {
        n: usize,
        glu: bool,
        norm: Option<crate::ops::registry::attrs::RmsNorm>,
        settled: bool,
    },
    /// A one-row `linear_add` and the rms_norm of its result (a decode step's residual
    /// stream and the next norm), made by [`passes::fuse_linear_add_norm`]: inputs `[x, w,
    /// r, norm_weight]`, outputs `[y, h]` with `y = x·wᵀ + r` and `h = rms_norm(y, [n],
    /// norm_weight, eps)` ([`crate::runtime::blas::linear_add_rms_norm`]: one launch inside
    /// a GPU's device graph, else the two ops; the same bits either way). The flag: the
    /// weight is settled, as [`NodeOp::LinearGroup`]'s.
    LinearAddNorm(crate::ops::registry::attrs::RmsNorm, bool),
    /// A decode step's new-token tensors in one pass
    /// ([`crate::runtime::transformer::rope_store`]), made by [`passes::fuse_rope_store`]:
    /// rope_cached of some (`parts[i].rotate`) and index_copy of some into caches at the same
    /// positions (`parts[i].store`: the copied source's shape). Inputs `[cos, sin, positions,
    /// x_1, cache_1, .., x_n, cache_n]` (a cache absent for a part not stored), outputs one
    /// per part (absent for a stored one); the caches are written in place (`mutated`).
    RopeStore {
        rope: crate::ops::registry::attrs::RopeCached,
        dim: i64,
        parts: Vec<RopeStorePart>,
    },
    /// A [`NodeOp::LinearGroup`] (no residuals, no gate) whose every result goes only to a
    /// [`NodeOp::RopeStore`] right after it, as one node
    /// ([`crate::runtime::transformer::linear_rope_store`]), made by
    /// [`passes::fuse_linear_rope_store`]: inputs `[x, w_1..w_n, norm_weight, cos, sin,
    /// positions, cache_1..cache_m]` (`m = parts.len()`; a cache absent for a part not
    /// stored), outputs one per part (absent for a stored one); the caches are written in
    /// place (`mutated`). One launch on a GPU inside a device graph (the products' results
    /// rotated and stored in their kernel), else the group, then the rope_store.
    LinearRopeStore {
        n: usize,
        norm: Option<crate::ops::registry::attrs::RmsNorm>,
        settled: bool,
        rope: crate::ops::registry::attrs::RopeCached,
        dim: i64,
        parts: Vec<LinearRopePart>,
    },
    /// scaled_dot_product_attention right after a decode step's cache store (a
    /// [`NodeOp::RopeStore`] writing k's and v's rows at one position), made by
    /// [`passes::settle_attention`]: inputs `[q, k, v, positions]` (the store's index),
    /// output the attention's. Run by
    /// [`crate::runtime::attention::scaled_dot_product_attention_fresh`]: a device may read
    /// the rows of the caches the store does not write before the store's kernel has
    /// finished (the same bits).
    AttentionFresh(crate::ops::registry::attrs::ScaledDotProductAttention),
    /// `linear_backward(x, w, relu_backward(h, g))` over the inputs `[x, w, h, g]`, outputs
    /// `[dx, dw, db]` as linear_backward's ([`crate::runtime::blas::linear_backward_relu`]:
    /// the gradient through the relu and the bias gradient in one pass where the device has
    /// it), made by [`passes::fuse_relu_linear_backward`].
    LinearBackwardRelu,
    /// SGD steps of `n` parameters with the same attributes as one pass
    /// ([`crate::runtime::optim::sgd_step_multi`], PyTorch's foreach SGD), made by
    /// [`passes::group_sgd_steps`]: inputs `[param, grad, momentum_buf]` per parameter, the
    /// params and buffers written in place (`mutated`).
    SgdGroup {
        attrs: crate::ops::registry::attrs::SgdStep,
        n: usize,
    },
    /// A chain of elementwise ops as one program over broadcast inputs.
    Fused {
        prog: FusedProgram,
        pattern: &'static str,
    },
    /// A raw call (`rb_blas_*`, `rb_dnn_*`, `rb_kernel_*`) recorded on the caller's device
    /// pointers: no graph values, always an effect, and a barrier nothing moves across.
    Raw(RawCall),
}

/// One tensor of a [`NodeOp::RopeStore`]: rotated or not, and stored into a cache seen with
/// this shape, or returned.
#[derive(Clone, Debug)]
pub struct RopeStorePart {
    pub rotate: bool,
    pub store: Option<Vec<usize>>,
}

/// One tensor of a [`NodeOp::LinearRopeStore`]: product `product`'s result seen with shape
/// `x_shape`, rotated or not, stored into a cache seen with `store`'s shape, or returned.
#[derive(Clone, Debug)]
pub struct LinearRopePart {
    pub product: usize,
    pub x_shape: Vec<usize>,
    pub rotate: bool,
    pub store: Option<Vec<usize>>,
}

/// The body of a recorded raw call: the call's own checks and launch on the caller's
/// pointers (host arrays copied at recording), run on the executor's stream.
pub type RawFn = dyn Fn(Option<&crate::runtime::Stream>) -> crate::Result<()> + Send + Sync;

/// A recorded raw call: its C name and its body.
#[derive(Clone)]
pub struct RawCall {
    pub name: String,
    pub run: Arc<RawFn>,
}

impl std::fmt::Debug for RawCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawCall({})", self.name)
    }
}

impl NodeOp {
    /// A short name (the dump, stats, profiler labels).
    pub fn name(&self) -> String {
        match self {
            NodeOp::Op(op) => op.kind().name().to_string(),
            NodeOp::Reshape(_) => "reshape".into(),
            NodeOp::Dense { trans_b, act } => {
                let base = if *trans_b { "linear" } else { "matmul_bias" };
                match act {
                    Activation::None => base.to_string(),
                    Activation::Relu => format!("{base}_relu"),
                    Activation::Gelu { .. } => format!("{base}_gelu"),
                }
            }
            NodeOp::ConvResidual(c) => match c.activation {
                Activation::Relu => "conv_add_relu".into(),
                _ => "conv_add".into(),
            },
            NodeOp::ConvPacked { conv, residual, .. } => {
                let base = if *residual { "conv_add" } else { "conv" };
                match conv.activation {
                    Activation::None => format!("{base}_packed"),
                    Activation::Relu => format!("{base}_relu_packed"),
                    Activation::Gelu { .. } => format!("{base}_gelu_packed"),
                }
            }
            NodeOp::LinearGroup { n, glu, norm, .. } => {
                let base = match (n, glu) {
                    (_, true) => "linear_swiglu".to_string(),
                    (1, false) => "linear_add".into(),
                    _ => format!("linear_x{n}"),
                };
                match norm {
                    Some(_) => format!("rms_norm+{base}"),
                    None => base,
                }
            }
            NodeOp::LinearAddNorm(..) => "linear_add_rms_norm".into(),
            NodeOp::RopeStore { parts, .. } => format!("rope_store_x{}", parts.len()),
            NodeOp::LinearRopeStore { n, norm, .. } => match norm {
                Some(_) => format!("rms_norm+linear_x{n}+rope_store"),
                None => format!("linear_x{n}+rope_store"),
            },
            NodeOp::AttentionFresh(_) => "scaled_dot_product_attention_fresh".into(),
            NodeOp::LinearBackwardRelu => "relu_linear_backward".into(),
            NodeOp::SgdGroup { n, .. } => format!("sgd_step_x{n}"),
            NodeOp::Fused { pattern, .. } => format!("fused[{pattern}]"),
            NodeOp::Raw(r) => r.name.clone(),
        }
    }
}

/// One node: an op over values.
#[derive(Clone, Debug)]
pub struct Node {
    pub op: NodeOp,
    /// Inputs in the op table's order (`None`: an optional input not given).
    pub inputs: Vec<Option<ValueId>>,
    /// One per output (`None`: the output was not wanted).
    pub outputs: Vec<Option<ValueId>>,
    /// Per output: the real tensor it is written into (an effect), if any.
    pub into: Vec<Option<Tensor>>,
    /// Inputs (positions in `inputs`) the op writes in place (an optimizer's state, fill,
    /// copy): the node has an effect.
    pub mutated: Vec<usize>,
}

impl Node {
    /// True when the node writes into a real tensor, or is a raw call (never removed,
    /// never moved).
    pub fn has_effect(&self) -> bool {
        self.into.iter().any(|t| t.is_some())
            || !self.mutated.is_empty()
            || matches!(self.op, NodeOp::Raw(_))
    }
}

/// A recorded graph.
#[derive(Clone, Debug)]
pub struct Graph {
    pub device: Arc<dyn Device>,
    pub values: Vec<Value>,
    pub nodes: Vec<Node>,
    pub inputs: Vec<ValueId>,
    pub outputs: Vec<ValueId>,
}

impl Graph {
    pub fn new(device: Arc<dyn Device>) -> Self {
        Graph {
            device,
            values: vec![],
            nodes: vec![],
            inputs: vec![],
            outputs: vec![],
        }
    }

    pub fn add_value(&mut self, shape: &[usize], dtype: DType, source: Source) -> ValueId {
        self.values.push(Value {
            shape: shape.to_vec(),
            dtype,
            source,
        });
        self.values.len() - 1
    }

    /// The number of real computing nodes (reshape views not counted).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    /// One line per node: `%out = op(%in, ...)  shapes dtypes`, then the inputs and outputs.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let v = |id: ValueId| -> String {
            let val = &self.values[id];
            let src = match &val.source {
                Source::Input(i) => format!("in{i}"),
                Source::Param(_) => format!("p{id}"),
                Source::Node { .. } => format!("v{id}"),
            };
            format!("%{src}:{}{:?}", val.dtype, val.shape)
        };
        for (i, id) in self.inputs.iter().enumerate() {
            writeln!(s, "input {i}: {}", v(*id)).unwrap();
        }
        for (i, n) in self.nodes.iter().enumerate() {
            let outs: Vec<String> = n
                .outputs
                .iter()
                .zip(&n.into)
                .map(|(o, into)| match (o, into) {
                    (Some(o), Some(_)) => format!("{} (into a parameter)", v(*o)),
                    (Some(o), None) => v(*o),
                    (None, _) => "_".into(),
                })
                .collect();
            let ins: Vec<String> = n
                .inputs
                .iter()
                .map(|i| i.map_or("none".to_string(), v))
                .collect();
            writeln!(
                s,
                "node {i}: {} = {}({})",
                outs.join(", "),
                n.op.name(),
                ins.join(", ")
            )
            .unwrap();
        }
        for (i, id) in self.outputs.iter().enumerate() {
            writeln!(s, "output {i}: {}", v(*id)).unwrap();
        }
        s
    }

    /// For every value, the index of the last node that reads it (`usize::MAX` for graph
    /// outputs, which live to the end; `None` for values nothing reads).
    pub fn last_uses(&self) -> Vec<Option<usize>> {
        let mut last = vec![None; self.values.len()];
        for (i, n) in self.nodes.iter().enumerate() {
            for v in n.inputs.iter().flatten() {
                last[*v] = Some(i);
            }
        }
        for o in &self.outputs {
            last[*o] = Some(usize::MAX);
        }
        last
    }

    /// How many nodes read each value (graph outputs count once more).
    pub fn use_counts(&self) -> Vec<usize> {
        let mut n = vec![0; self.values.len()];
        for node in &self.nodes {
            for v in node.inputs.iter().flatten() {
                n[*v] += 1;
            }
        }
        for o in &self.outputs {
            n[*o] += 1;
        }
        n
    }
}
