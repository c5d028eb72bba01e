//! Graph passes, run by the executor for its level:
//!
//! - O1: [`eliminate_dead`], [`fold_constants`] (parameter-only subgraphs, evaluated when the
//!   plan is made), [`fuse_patterns`] (the seed's `FusedOpType` patterns: matmul+bias
//!   (+relu|gelu), linear+relu|gelu, conv+relu, conv+bn+relu, and add+relu / mul+add as part
//!   of the chains), [`fuse_conv_residual`] (conv + add(+relu) into the convolution's
//!   epilogue, on the CPU device), [`fuse_elementwise`] (chains of elementwise ops into one
//!   program).
//! - O2: [`mixed_precision`] first (matmul, linear, conv and attention in bf16 with f32
//!   accumulation, an autocast-style allow list; reductions, norms and losses stay f32; only
//!   on devices where bf16 products are faster: not the CPU device), and
//!   after the O1 passes [`channels_last`] (half-precision convolutions and the elementwise
//!   nodes reading them on channels-last memory, where the device is faster so).
//!
//! Every pass keeps the order of nodes with effects and never moves a read of a real tensor
//! across a node that writes one.

use super::{Graph, LinearRopePart, Node, NodeOp, RopeStorePart, Source, ValueId};
use crate::base::dtype::DType;
use crate::ops::conv::{Activation, Blocked};
use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use crate::ops::fused::{FusedProgram, Instr};
use crate::ops::registry::{Op, attrs};
use crate::runtime::eager::Grad;
use crate::runtime::{Stream, Tensor, dispatch};
use crate::{Error, Result};
use std::collections::{HashMap, HashSet};

/// Whether `RB_GRAPH_SKIP` (fusion labels, commas or spaces) names `label`: the executor
/// then skips that pass (a comparison aid, as XLA's `--xla_disable_hlo_passes`). Read once.
pub fn skipped(label: &str) -> bool {
    static SKIP: std::sync::LazyLock<Vec<String>> = std::sync::LazyLock::new(|| {
        std::env::var("RB_GRAPH_SKIP")
            .unwrap_or_default()
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    });
    SKIP.iter().any(|s| s == label)
}

/// The seed's fused patterns (`FusedOpType`), with the C enum's numbering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FusedPattern {
    MatmulBias = 1,
    MatmulBiasRelu = 2,
    MatmulBiasGelu = 3,
    ConvBias = 4,
    ConvBiasRelu = 5,
    ConvBnRelu = 6,
    AddRelu = 7,
    MulAdd = 8,
}

impl FusedPattern {
    pub fn name(self) -> &'static str {
        match self {
            FusedPattern::MatmulBias => "matmul+bias",
            FusedPattern::MatmulBiasRelu => "matmul+bias+relu",
            FusedPattern::MatmulBiasGelu => "matmul+bias+gelu",
            FusedPattern::ConvBias => "conv+bias",
            FusedPattern::ConvBiasRelu => "conv+bias+relu",
            FusedPattern::ConvBnRelu => "conv+bn+relu",
            FusedPattern::AddRelu => "add+relu",
            FusedPattern::MulAdd => "mul+add",
        }
    }
}

/// `rb_can_fuse`: the pattern a sequence of op names forms, if it is one of the seed's.
/// "linear" counts as matmul+bias.
pub fn can_fuse(ops: &[&str]) -> Option<FusedPattern> {
    use FusedPattern::*;
    Some(match ops {
        ["matmul", "add"] | ["linear"] => MatmulBias,
        ["matmul", "add", "relu"] | ["linear", "relu"] => MatmulBiasRelu,
        ["matmul", "add", "gelu"] | ["linear", "gelu"] => MatmulBiasGelu,
        ["conv", "add"] => ConvBias,
        ["conv", "add", "relu"] | ["conv", "relu"] => ConvBiasRelu,
        ["conv", "batch_norm", "relu"] => ConvBnRelu,
        ["add", "relu"] => AddRelu,
        ["mul", "add"] => MulAdd,
        _ => return None,
    })
}

/// Real tensors some node writes (their data changes while the graph runs).
fn written_params(g: &Graph) -> HashSet<usize> {
    let mut s = HashSet::new();
    for n in &g.nodes {
        for t in n.into.iter().flatten() {
            s.insert(t.storage_id());
        }
        for &i in &n.mutated {
            if let Some(v) = n.inputs[i]
                && let Source::Param(t) = &g.values[v].source
            {
                s.insert(t.storage_id());
            }
        }
    }
    s
}

/// Outputs an op computes only when asked (`Grad::Skip` otherwise): the table's `NewOpt`
/// outputs (linear_backward's dx and db, a weight gradient's db: PyTorch's output mask).
fn optional_outputs(op: &NodeOp) -> Vec<usize> {
    match op {
        NodeOp::Op(o) => (o.kind().def().outputs.iter().enumerate())
            .filter(|(_, out)| out.kind == crate::ops::table::OutKind::NewOpt)
            .map(|(k, _)| k)
            .collect(),
        _ => vec![],
    }
}

/// Drops nodes whose results nothing needs (nodes with effects stay) and the optional
/// outputs ([`optional_outputs`]) nothing reads, so they are not computed (a training step's
/// first-layer dx); values no node or output names are left in place (they cost nothing).
pub fn eliminate_dead(g: &mut Graph) -> usize {
    let mut needed: HashSet<ValueId> = g.outputs.iter().copied().collect();
    let mut keep = vec![false; g.nodes.len()];
    for (i, n) in g.nodes.iter_mut().enumerate().rev() {
        let live = n.has_effect() || n.outputs.iter().flatten().any(|v| needed.contains(v));
        if live {
            keep[i] = true;
            for k in optional_outputs(&n.op) {
                if let Some(v) = n.outputs.get(k).copied().flatten()
                    && !needed.contains(&v)
                    && n.into.get(k).is_none_or(|t| t.is_none())
                {
                    n.outputs[k] = None;
                }
            }
            needed.extend(n.inputs.iter().flatten());
        }
    }
    let before = g.nodes.len();
    let mut it = keep.iter();
    g.nodes.retain(|_| *it.next().unwrap());
    renumber(g);
    before - g.nodes.len()
}

/// Points every node-output value back at its node after nodes were removed or merged.
pub fn renumber(g: &mut Graph) {
    for (i, n) in g.nodes.iter().enumerate() {
        for (k, o) in n.outputs.iter().enumerate() {
            if let Some(v) = o {
                g.values[*v].source = Source::Node { node: i, output: k };
            }
        }
    }
}

/// Evaluates nodes whose inputs are all parameters no node writes (and constants made
/// here) once, now, on `stream`; their outputs become constants. Returns how many folded.
pub fn fold_constants(g: &mut Graph, stream: Option<&Stream>) -> Result<usize> {
    // A raw call may write any caller memory: no parameter is known to be constant.
    if g.nodes.iter().any(|n| matches!(n.op, NodeOp::Raw(_))) {
        return Ok(0);
    }
    let written = written_params(g);
    let mut folded = 0;
    let outputs: HashSet<ValueId> = g.outputs.iter().copied().collect();
    let mut i = 0;
    while i < g.nodes.len() {
        let n = &g.nodes[i];
        let constant_in = |v: &ValueId| match &g.values[*v].source {
            Source::Param(t) => !written.contains(&t.storage_id()),
            _ => false,
        };
        let foldable = !n.has_effect()
            && !n.inputs.is_empty()
            && n.inputs.iter().flatten().all(constant_in)
            && n.outputs.iter().flatten().all(|v| !outputs.contains(v))
            && matches!(n.op, NodeOp::Op(_) | NodeOp::Reshape(_));
        if !foldable {
            i += 1;
            continue;
        }
        let ins: Vec<Option<Tensor>> = n
            .inputs
            .iter()
            .map(|v| {
                v.map(|v| match &g.values[v].source {
                    Source::Param(t) => t.clone(),
                    _ => unreachable!("checked above"),
                })
            })
            .collect();
        let results = run_node(stream, &n.op, &ins, &vec![Grad::New; n.outputs.len()])?;
        let outs = n.outputs.clone();
        for (k, v) in outs.iter().enumerate() {
            if let (Some(v), Some(Some(t))) = (v, results.get(k)) {
                g.values[*v].source = Source::Param(t.clone());
            }
        }
        g.nodes.remove(i);
        folded += 1;
    }
    renumber(g);
    Ok(folded)
}

/// The planned buffer result `i` goes into, where the executor gives one.
fn into_of<'a>(outputs: &[Grad<'a>], i: usize) -> Option<&'a Tensor> {
    match outputs.get(i) {
        Some(Grad::Into(t)) => Some(*t),
        _ => None,
    }
}

/// Runs one node's op (the executor's step and constant folding).
pub fn run_node(
    stream: Option<&Stream>,
    op: &NodeOp,
    inputs: &[Option<Tensor>],
    outputs: &[Grad<'_>],
) -> Result<Vec<Option<Tensor>>> {
    let refs: Vec<Option<&Tensor>> = inputs.iter().map(|t| t.as_ref()).collect();
    match op {
        NodeOp::Op(op) => dispatch::run(stream, op, &refs, outputs),
        NodeOp::Reshape(shape) => {
            let x = refs[0].ok_or_else(|| Error::internal("reshape without input"))?;
            Ok(vec![Some(x.reshape(shape)?)])
        }
        NodeOp::Dense { trans_b, act } => {
            let (a, b) = match (refs[0], refs[1]) {
                (Some(a), Some(b)) => (a, b),
                _ => return Err(Error::internal("dense without its operands")),
            };
            let out = into_of(outputs, 0);
            let name = op.name();
            let r = crate::runtime::blas::dense(&name, stream, a, b, *trans_b, refs[2], *act, out)?;
            Ok(vec![Some(r)])
        }
        NodeOp::ConvResidual(c) => {
            let (Some(x), Some(w), Some(r)) = (refs[0], refs[1], refs[3]) else {
                return Err(Error::internal("conv+add without its operands"));
            };
            let out = into_of(outputs, 0);
            let (attrs, ndim) = &c.params;
            let y = crate::runtime::conv::conv_residual(
                stream,
                x,
                w,
                refs[2],
                r,
                attrs,
                *ndim,
                c.activation,
                out,
            )?;
            Ok(vec![Some(y)])
        }
        NodeOp::ConvPacked {
            conv,
            x_shape,
            w_shape,
            residual,
            layout,
        } => {
            let (Some(x), Some(w)) = (refs[0], refs[1]) else {
                return Err(Error::internal("packed conv without its operands"));
            };
            let r = if *residual {
                Some(
                    refs[3]
                        .ok_or_else(|| Error::internal("packed conv+add without its residual"))?,
                )
            } else {
                None
            };
            let (attrs, ndim) = &conv.params;
            let y = crate::runtime::conv::conv_forward_packed(
                stream,
                x,
                x_shape,
                w_shape,
                w,
                refs[2],
                r,
                attrs,
                *ndim,
                conv.activation,
                into_of(outputs, 0),
                *layout,
            )?;
            Ok(vec![Some(y)])
        }
        NodeOp::LinearGroup {
            n,
            glu,
            norm,
            settled,
        } => {
            let n = *n;
            let x = refs[0].ok_or_else(|| Error::internal("linear group without its input"))?;
            let ws = refs[1..1 + n]
                .iter()
                .map(|w| w.ok_or_else(|| Error::internal("linear group without a weight")))
                .collect::<Result<Vec<_>>>()?;
            let rs: Vec<Option<&Tensor>> = (0..n)
                .map(|i| refs.get(1 + n + i).copied().flatten())
                .collect();
            let outs: Vec<Option<&Tensor>> =
                (0..outputs.len()).map(|i| into_of(outputs, i)).collect();
            let norm = norm
                .as_ref()
                .map(|a| (refs.get(1 + 2 * n).copied().flatten(), a.eps));
            let ys = crate::runtime::blas::linear_group_norm(
                stream, x, norm, &ws, &rs, *glu, &outs, *settled,
            )?;
            Ok(ys.into_iter().map(Some).collect())
        }
        NodeOp::LinearAddNorm(a, settled) => {
            let need = |i: usize, what: &str| {
                refs.get(i).copied().flatten().ok_or_else(|| {
                    Error::internal(format!("linear_add_rms_norm without its {what}"))
                })
            };
            let (x, w, r) = (need(0, "x")?, need(1, "weight")?, need(2, "residual")?);
            let into = |k: usize| into_of(outputs, k);
            let [y, h] = crate::runtime::blas::linear_add_rms_norm(
                stream,
                x,
                w,
                r,
                refs.get(3).copied().flatten(),
                &a.normalized_shape,
                a.eps,
                [into(0), into(1)],
                *settled,
            )?;
            Ok(vec![Some(y), Some(h)])
        }
        NodeOp::RopeStore { rope, dim, parts } => {
            let need = |i: usize| {
                refs.get(i)
                    .copied()
                    .flatten()
                    .ok_or_else(|| Error::internal(format!("rope_store without its input {i}")))
            };
            let (cos, sin, pos) = (need(0)?, need(1)?, need(2)?);
            let items = parts
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let store = match &p.store {
                        Some(shape) => Some((need(4 + 2 * i)?, shape.clone())),
                        None => None,
                    };
                    Ok(crate::runtime::transformer::RopeStoreItem {
                        x: need(3 + 2 * i)?,
                        rotate: p.rotate,
                        store,
                        out: into_of(outputs, i),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            crate::runtime::transformer::rope_store(
                stream,
                cos,
                sin,
                pos,
                rope.seq_dim,
                rope.interleaved,
                *dim,
                &items,
            )
        }
        NodeOp::LinearRopeStore {
            n,
            norm,
            settled,
            rope,
            dim,
            parts,
        } => {
            let n = *n;
            let need = |i: usize| {
                refs.get(i).copied().flatten().ok_or_else(|| {
                    Error::internal(format!("linear_rope_store without its input {i}"))
                })
            };
            let x = need(0)?;
            let ws = (1..1 + n).map(need).collect::<Result<Vec<_>>>()?;
            let norm = norm
                .as_ref()
                .map(|a| (refs.get(1 + n).copied().flatten(), a.eps));
            let at = 2 + n; // cos, sin, positions, then the caches
            let (cos, sin, pos) = (need(at)?, need(at + 1)?, need(at + 2)?);
            let items = parts
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let store = match &p.store {
                        Some(shape) => Some((need(at + 3 + i)?, shape.clone())),
                        None => None,
                    };
                    Ok(crate::runtime::transformer::LinearRopeItem {
                        product: p.product,
                        x_shape: p.x_shape.clone(),
                        rotate: p.rotate,
                        store,
                        out: into_of(outputs, i),
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            crate::runtime::transformer::linear_rope_store(
                stream,
                x,
                norm,
                &ws,
                *settled,
                (cos, sin, pos, rope.seq_dim, rope.interleaved, *dim),
                &items,
            )
        }
        NodeOp::AttentionFresh(a) => {
            let need = |i: usize| {
                refs.get(i)
                    .copied()
                    .flatten()
                    .ok_or_else(|| Error::internal(format!("attention without its input {i}")))
            };
            let out = into_of(outputs, 0);
            let y = crate::runtime::attention::scaled_dot_product_attention_fresh(
                stream,
                need(0)?,
                need(1)?,
                need(2)?,
                a.is_causal,
                a.scale,
                out,
                need(3)?,
            )?;
            Ok(vec![Some(y)])
        }
        NodeOp::LinearBackwardRelu => {
            let need = |i: usize, what: &str| {
                refs.get(i).copied().flatten().ok_or_else(|| {
                    Error::internal(format!("relu_linear_backward without its {what}"))
                })
            };
            let (x, w, h, g) = (need(0, "x")?, need(1, "w")?, need(2, "h")?, need(3, "dy")?);
            let want = |k: usize| !matches!(outputs.get(k), Some(Grad::Skip));
            let (dx, dw, db) =
                crate::runtime::blas::linear_backward_relu(stream, x, w, h, g, want(0), want(2))?;
            Ok(vec![dx, Some(dw), db])
        }
        NodeOp::SgdGroup { attrs: a, n } => {
            let n = *n;
            let mut ps = Vec::with_capacity(n);
            let mut gs = Vec::with_capacity(n);
            let mut bs = Vec::with_capacity(n);
            for i in 0..n {
                let (Some(p), Some(g)) = (refs[3 * i], refs[3 * i + 1]) else {
                    return Err(Error::internal("grouped sgd step without its operands"));
                };
                ps.push(p);
                gs.push(g);
                bs.push(refs[3 * i + 2]);
            }
            let attrs = crate::ops::optim::SgdAttrs {
                lr: a.lr,
                momentum: a.momentum,
                dampening: a.dampening,
                weight_decay: a.weight_decay,
                nesterov: a.nesterov,
                first_step: a.first_step,
            };
            crate::runtime::optim::sgd_step_multi(stream, &ps, &gs, &bs, &attrs)?;
            Ok(vec![])
        }
        NodeOp::Fused { prog, .. } => {
            let first = refs
                .iter()
                .flatten()
                .next()
                .ok_or_else(|| Error::internal("fused node without inputs"))?;
            let shapes: Vec<&[usize]> = refs.iter().flatten().map(|t| t.shape()).collect();
            let mut shape: Vec<usize> = vec![];
            for s in &shapes {
                shape = crate::base::shape::broadcast_shapes(&shape, s)?;
            }
            let out = match outputs.first() {
                Some(Grad::Into(t)) => (*t).clone(),
                _ => Tensor::empty(first.device().clone(), &shape, prog.out_dtype)?,
            };
            let ins: Vec<crate::device::FusedInput> = refs
                .iter()
                .flatten()
                .map(|t| crate::device::FusedInput {
                    ptr: t.ptr(),
                    strides: crate::base::shape::broadcast_strides(t.shape(), &shape),
                })
                .collect();
            if out.numel() > 0 {
                let raw = stream.map(|s| s.raw()).unwrap_or_default();
                out.device()
                    .fused_elementwise(raw, prog, &ins, &shape, out.ptr())?;
            }
            Ok(vec![Some(out)])
        }
        NodeOp::Raw(r) => {
            (r.run)(stream)?;
            Ok(vec![])
        }
    }
}

fn single_use(g: &Graph, u: &[usize], v: ValueId) -> bool {
    u[v] == 1 && !g.outputs.contains(&v)
}

/// The producer node of `v`, if a node makes it.
fn producer(g: &Graph, v: ValueId) -> Option<usize> {
    match g.values[v].source {
        Source::Node { node, .. } => Some(node),
        _ => None,
    }
}

/// The readers of each value: (node, input position), in node order.
fn readers(g: &Graph) -> Vec<Vec<(usize, usize)>> {
    let mut uses = vec![vec![]; g.values.len()];
    for (i, n) in g.nodes.iter().enumerate() {
        for (k, v) in n.inputs.iter().enumerate() {
            if let Some(v) = v {
                uses[*v].push((i, k));
            }
        }
    }
    uses
}

/// O1's conv+bn folding for inference: a convolution (no activation) whose only reader is an
/// eval-mode batch norm, with the weight, bias and the four statistics/affine tensors all
/// parameters no node writes, becomes one convolution on a folded weight and bias made now
/// (in f64, rounded once to the weight's dtype: `w' = w * s`, `b' = (b - mean) * s + beta`,
/// `s = gamma / sqrt(var + eps)`); in f32 a relu that alone reads the result goes into the
/// convolution's epilogue. `split` (before [`mixed_precision`]): f32 too folds as f16/bf16
/// do, the scale into the weight and the shift an elementwise add after a convolution without
/// a bias, so that the convolution alone goes to bf16 (and channels-last) and the shift
/// fuses with the casts, relus and residual adds around it. Returns a label per fold
/// ("conv+bn+relu" or "conv+bn").
pub fn fold_conv_bn(g: &mut Graph, split: bool) -> Result<Vec<&'static str>> {
    let written = written_params(g);
    let constant = |g: &Graph, v: Option<ValueId>| -> Option<Tensor> {
        match &g.values[v?].source {
            Source::Param(t) if !written.contains(&t.storage_id()) => Some(t.clone()),
            _ => None,
        }
    };
    let mut folded = vec![];
    let mut i = 0;
    while i < g.nodes.len() {
        let u = g.use_counts();
        let n = &g.nodes[i];
        let mut conv = match &n.op {
            NodeOp::Op(Op::Conv(c)) if c.activation == Activation::None && !n.has_effect() => {
                c.clone()
            }
            _ => {
                i += 1;
                continue;
            }
        };
        let Some(out) = n.outputs.first().copied().flatten() else {
            i += 1;
            continue;
        };
        let reader = single_use(g, &u, out)
            .then(|| g.nodes.iter().position(|m| m.inputs.contains(&Some(out))))
            .flatten();
        let Some(j) = reader else {
            i += 1;
            continue;
        };
        let m = &g.nodes[j];
        let bn_eps = match &m.op {
            NodeOp::Op(Op::BatchNorm(bn)) if !bn.training && !m.has_effect() => bn.eps,
            _ => {
                i += 1;
                continue;
            }
        };
        let w = constant(g, n.inputs[1]);
        let bias_ok =
            n.inputs.get(2).copied().flatten().is_none() || constant(g, n.inputs[2]).is_some();
        let stats: Option<Vec<Tensor>> = (1..5)
            .map(|k| constant(g, m.inputs.get(k).copied().flatten()))
            .collect();
        let (Some(w), true, Some(stats)) = (w, bias_ok, stats) else {
            i += 1;
            continue;
        };
        let c_out = w.shape()[0];
        let f = |t: &Tensor| t.to_f64_vec();
        let bias = match n.inputs.get(2).copied().flatten() {
            Some(_) => Some(f(&constant(g, n.inputs[2]).unwrap())?),
            None => None,
        };
        let (w2, b2) = crate::ops::conv::fold_batch_norm(
            &f(&w)?,
            bias.as_deref(),
            &f(&stats[0])?,
            &f(&stats[1])?,
            &f(&stats[2])?,
            &f(&stats[3])?,
            bn_eps,
            c_out,
        );
        let x_in = n.inputs[0];
        let wt = crate::runtime::conv::from_f64(&w, &w2, w.shape())?;
        let wv = g.add_value(wt.shape(), wt.dtype(), Source::Param(wt.clone()));
        let outs = g.nodes[j].outputs.clone();
        if w.dtype() == DType::F32 && !split {
            let bt = crate::runtime::conv::from_f64(&w, &b2, &[c_out])?;
            let bv = g.add_value(bt.shape(), bt.dtype(), Source::Param(bt.clone()));
            // A relu that alone reads the batch norm's result: into the epilogue.
            let relu = outs[0].filter(|y| single_use(g, &u, *y)).and_then(|y| {
                g.nodes.iter().position(|k| {
                    k.inputs.contains(&Some(y)) && matches!(k.op, NodeOp::Op(Op::Relu))
                })
            });
            let outs = match relu {
                Some(r) => {
                    conv.activation = Activation::Relu;
                    g.nodes[r].outputs.clone()
                }
                None => outs,
            };
            folded.push(if relu.is_some() {
                "conv+bn+relu"
            } else {
                "conv+bn"
            });
            // The folded convolution takes the place of the last node it replaces (its
            // inputs exist there); the others go.
            let last = relu.unwrap_or(j);
            g.nodes[last] = Node {
                op: NodeOp::Op(Op::Conv(conv)),
                inputs: vec![x_in, Some(wv), Some(bv)],
                outputs: outs,
                into: vec![None],
                mutated: vec![],
            };
            let mut gone: Vec<usize> = [i, j].into_iter().filter(|&k| k != last).collect();
            gone.sort_unstable_by(|a, b| b.cmp(a));
            for k in gone {
                g.nodes.remove(k);
            }
        } else {
            // f16/bf16: the library's convolution with a bias rounds once, through an f32
            // path that is slower than the half-precision engines; here the scale goes into
            // the weight and the shift stays an elementwise add ([C, 1, ...] broadcast) that
            // fuses with what follows (relu, a residual add): the rounding of the recorded
            // conv -> batch_norm sequence, in two kernels instead of three or four.
            let Some(y) = outs[0] else {
                i += 1;
                continue;
            };
            let mut bshape = vec![c_out];
            bshape.extend(std::iter::repeat_n(1, w.shape().len() - 2));
            let bt = crate::runtime::conv::from_f64(&w, &b2, &bshape)?;
            let bv = g.add_value(bt.shape(), bt.dtype(), Source::Param(bt.clone()));
            let (yshape, ydt) = (g.values[y].shape.clone(), g.values[y].dtype);
            let mid = g.add_value(&yshape, ydt, Source::Node { node: i, output: 0 });
            g.nodes[i] = Node {
                op: NodeOp::Op(Op::Conv(conv)),
                inputs: vec![x_in, Some(wv), None],
                outputs: vec![Some(mid)],
                into: vec![None],
                mutated: vec![],
            };
            g.nodes[j] = Node {
                op: NodeOp::Op(Op::Add),
                inputs: vec![Some(mid), Some(bv)],
                outputs: outs,
                into: vec![None],
                mutated: vec![],
            };
            folded.push("conv+bn");
        }
        renumber(g);
    }
    Ok(folded)
}

/// Rewrites the seed's patterns whose heads are not elementwise: matmul+add(bias)
/// (+relu|gelu) and linear+relu|gelu into one dense node, conv+relu into conv with the
/// activation, conv+batch_norm(eval)+relu into conv_bn_relu. Returns the patterns used.
pub fn fuse_patterns(g: &mut Graph) -> Vec<FusedPattern> {
    let mut found = vec![];
    loop {
        let u = g.use_counts();
        let mut rewrite: Option<(Vec<usize>, Node, FusedPattern)> = None;
        'scan: for (i, n) in g.nodes.iter().enumerate() {
            if n.has_effect() {
                continue;
            }
            let Some(out) = n.outputs.first().copied().flatten() else {
                continue;
            };
            // The single consumer of this node's only output.
            let consumer = |v: ValueId| -> Option<usize> {
                if !single_use(g, &u, v) {
                    return None;
                }
                g.nodes
                    .iter()
                    .position(|m| m.inputs.contains(&Some(v)) && !m.has_effect())
            };
            let act_of = |m: &Node| match &m.op {
                NodeOp::Op(Op::Relu) => Some(Activation::Relu),
                NodeOp::Op(Op::Gelu(a)) => match a.approximate {
                    UnaryOp::Gelu { tanh } => Some(Activation::Gelu { tanh }),
                    _ => None,
                },
                _ => None,
            };
            match &n.op {
                NodeOp::Op(Op::Matmul) => {
                    let (Some(a), Some(b)) = (n.inputs[0], n.inputs[1]) else {
                        continue;
                    };
                    if g.values[b].shape.len() != 2 || g.values[a].shape.is_empty() {
                        continue;
                    }
                    // The fused dense op computes f32, f16 and bf16 (not f64).
                    if !g.values[a].dtype.is_float() {
                        continue;
                    }
                    let nn = g.values[b].shape[1];
                    let Some(j) = consumer(out) else { continue };
                    let m = &g.nodes[j];
                    if !matches!(m.op, NodeOp::Op(Op::Add)) {
                        continue;
                    }
                    let bias = if m.inputs[0] == Some(out) {
                        m.inputs[1]
                    } else {
                        m.inputs[0]
                    };
                    let Some(bias) = bias else { continue };
                    if g.values[bias].shape != [nn] || g.values[bias].dtype != g.values[out].dtype {
                        continue;
                    }
                    let Some(y) = m.outputs[0] else { continue };
                    if g.values[y].shape != g.values[out].shape {
                        continue;
                    }
                    let mut nodes = vec![i, j];
                    let mut act = Activation::None;
                    let mut last = y;
                    if let Some(k) = consumer(y)
                        && let Some(a) = act_of(&g.nodes[k])
                    {
                        act = a;
                        nodes.push(k);
                        last = g.nodes[k].outputs[0].unwrap_or(last);
                    }
                    let pat = match act {
                        Activation::None => FusedPattern::MatmulBias,
                        Activation::Relu => FusedPattern::MatmulBiasRelu,
                        Activation::Gelu { .. } => FusedPattern::MatmulBiasGelu,
                    };
                    let node = Node {
                        op: NodeOp::Dense {
                            trans_b: false,
                            act,
                        },
                        inputs: vec![Some(a), Some(b), Some(bias)],
                        outputs: vec![Some(last)],
                        into: vec![None],
                        mutated: vec![],
                    };
                    rewrite = Some((nodes, node, pat));
                    break 'scan;
                }
                NodeOp::Op(Op::Linear) => {
                    let Some(j) = consumer(out) else { continue };
                    let Some(act) = act_of(&g.nodes[j]) else {
                        continue;
                    };
                    let last = g.nodes[j].outputs[0].unwrap_or(out);
                    let pat = match act {
                        Activation::Gelu { .. } => FusedPattern::MatmulBiasGelu,
                        _ => FusedPattern::MatmulBiasRelu,
                    };
                    let node = Node {
                        op: NodeOp::Dense { trans_b: true, act },
                        inputs: n.inputs.clone(),
                        outputs: vec![Some(last)],
                        into: vec![None],
                        mutated: vec![],
                    };
                    rewrite = Some((vec![i, j], node, pat));
                    break 'scan;
                }
                NodeOp::Op(Op::Conv(c)) if c.activation == Activation::None => {
                    let Some(j) = consumer(out) else { continue };
                    let m = &g.nodes[j];
                    if matches!(m.op, NodeOp::Op(Op::Relu)) {
                        let mut c2 = c.clone();
                        c2.activation = Activation::Relu;
                        let node = Node {
                            op: NodeOp::Op(Op::Conv(c2)),
                            inputs: n.inputs.clone(),
                            outputs: m.outputs.clone(),
                            into: vec![None],
                            mutated: vec![],
                        };
                        rewrite = Some((vec![i, j], node, FusedPattern::ConvBiasRelu));
                        break 'scan;
                    }
                    if let NodeOp::Op(Op::BatchNorm(bn)) = &m.op {
                        // eval-mode batch norm with all four statistics/affine tensors
                        if bn.training || m.inputs[1..5].iter().any(|v| v.is_none()) {
                            continue;
                        }
                        let Some(y) = m.outputs[0] else { continue };
                        let Some(k) = consumer(y) else { continue };
                        if !matches!(g.nodes[k].op, NodeOp::Op(Op::Relu)) {
                            continue;
                        }
                        let node = Node {
                            op: NodeOp::Op(Op::ConvBnRelu(attrs::ConvBnRelu {
                                eps: bn.eps,
                                params: c.params.clone(),
                            })),
                            // x, w, bias, mean, var, gamma, beta
                            inputs: vec![
                                n.inputs[0],
                                n.inputs[1],
                                n.inputs[2],
                                m.inputs[1],
                                m.inputs[2],
                                m.inputs[3],
                                m.inputs[4],
                            ],
                            outputs: g.nodes[k].outputs.clone(),
                            into: vec![None],
                            mutated: vec![],
                        };
                        rewrite = Some((vec![i, j, k], node, FusedPattern::ConvBnRelu));
                        break 'scan;
                    }
                }
                _ => {}
            }
        }
        let Some((nodes, node, pat)) = rewrite else {
            break;
        };
        // The fused node takes the place of the last one it replaces (its inputs exist
        // there; the replaced intermediates had no other reader).
        let last = *nodes.iter().max().unwrap();
        g.nodes[last] = node;
        let mut drop: Vec<usize> = nodes.into_iter().filter(|&k| k != last).collect();
        drop.sort_unstable_by(|a, b| b.cmp(a));
        for k in drop {
            g.nodes.remove(k);
        }
        renumber(g);
        found.push(pat);
    }
    found
}

/// A relu's backward that reads the relu's input `z` reads its output `relu(z)` instead
/// (PyTorch's `threshold_backward(grad, result)`): both are `x <= 0 ? 0 : dy`, and
/// `relu(z) <= 0` exactly where `z <= 0` (a NaN `z` gives a NaN output, which passes `dy`
/// either way), so the gradient keeps its bits. A training step's `z = linear(x)` is then
/// read by the relu alone and [`fuse_patterns`] puts the relu into the product's epilogue.
/// Runs before [`fuse_patterns`]; returns the number of backwards rewritten.
pub fn relu_backward_reads_output(g: &mut Graph) -> usize {
    let mut n = 0;
    for j in 0..g.nodes.len() {
        if !matches!(g.nodes[j].op, NodeOp::Op(Op::ReluBackward)) {
            continue;
        }
        let Some(z) = g.nodes[j].inputs[0] else {
            continue;
        };
        let relu_out =
            g.nodes[..j]
                .iter()
                .enumerate()
                .find_map(|(i, m)| match (&m.op, m.inputs.first()) {
                    (NodeOp::Op(Op::Relu), Some(&Some(v))) if v == z && !m.has_effect() => {
                        Some((i, m.outputs.first().copied().flatten()?))
                    }
                    _ => None,
                });
        // Nothing between may write the output in place.
        let written = |i: usize, h: ValueId| {
            g.nodes[i + 1..j]
                .iter()
                .any(|m| m.mutated.iter().any(|&k| m.inputs.get(k) == Some(&Some(h))))
        };
        if let Some((i, h)) = relu_out
            && !written(i, h)
            && g.values[h].shape == g.values[z].shape
            && g.values[h].dtype == g.values[z].dtype
        {
            g.nodes[j].inputs[0] = Some(h);
            n += 1;
        }
    }
    n
}

/// A linear_backward whose `dy` is a relu_backward's output read by nothing else becomes one
/// [`NodeOp::LinearBackwardRelu`] (a training step's hidden layer: the gradient through
/// the relu and the bias gradient in one pass on devices with
/// [`crate::device::BlasOps::has_relu_backward_sum_rows`]; the unfused ops elsewhere, so
/// the node forms on every device). Runs after [`eliminate_dead`] (an unread dx is already
/// dropped). Returns a label per fusion.
pub fn fuse_relu_linear_backward(g: &mut Graph) -> Vec<&'static str> {
    let mut found = vec![];
    loop {
        let u = g.use_counts();
        let hit = g.nodes.iter().enumerate().find_map(|(j, n)| {
            if !matches!(n.op, NodeOp::Op(Op::LinearBackward)) || n.has_effect() {
                return None;
            }
            let dy = n.inputs.get(2).copied().flatten()?;
            let i = producer(g, dy)?;
            let r = &g.nodes[i];
            (matches!(r.op, NodeOp::Op(Op::ReluBackward))
                && !r.has_effect()
                && single_use(g, &u, dy)
                && r.inputs.iter().all(|v| v.is_some()))
            .then_some((i, j))
        });
        let Some((i, j)) = hit else { break };
        let (r, n) = (&g.nodes[i], &g.nodes[j]);
        let node = Node {
            op: NodeOp::LinearBackwardRelu,
            inputs: vec![n.inputs[0], n.inputs[1], r.inputs[0], r.inputs[1]],
            outputs: n.outputs.clone(),
            into: n.into.clone(),
            mutated: vec![],
        };
        g.nodes[j] = node;
        g.nodes.remove(i);
        renumber(g);
        found.push("relu_backward+linear_backward");
    }
    found
}

/// A convolution (no activation yet) whose only reader is an add of a tensor of its output's
/// shape (a ResNet block's last convolution and its shortcut), and a relu that alone reads
/// the sum, become one [`NodeOp::ConvResidual`], on devices that add a residual in the
/// convolution's epilogue ([`crate::device::ConvOps::has_conv_residual`]), in f32 (the
/// fused sum rounds as the unfused one). Runs after [`fold_conv_bn`] and [`fuse_patterns`]
/// (the batch norm is in the convolution's bias by then) and before [`fuse_elementwise`]
/// (which would take the add+relu). Returns a label per fusion ("conv+add+relu" or
/// "conv+add").
pub fn fuse_conv_residual(g: &mut Graph) -> Vec<&'static str> {
    let mut made = vec![];
    if !g.device.has_conv_residual() {
        return made;
    }
    loop {
        let u = g.use_counts();
        let consumer = |g: &Graph, v: ValueId| -> Option<usize> {
            if !single_use(g, &u, v) {
                return None;
            }
            g.nodes
                .iter()
                .position(|m| m.inputs.contains(&Some(v)) && !m.has_effect())
        };
        let mut rewrite: Option<(Vec<usize>, Node, bool)> = None;
        for (i, n) in g.nodes.iter().enumerate() {
            let NodeOp::Op(Op::Conv(c)) = &n.op else {
                continue;
            };
            if c.activation != Activation::None || n.has_effect() {
                continue;
            }
            let Some(out) = n.outputs.first().copied().flatten() else {
                continue;
            };
            if g.values[out].dtype != DType::F32 {
                continue;
            }
            let Some(j) = consumer(g, out) else { continue };
            let m = &g.nodes[j];
            if !matches!(m.op, NodeOp::Op(Op::Add)) {
                continue;
            }
            let (Some(a), Some(b)) = (m.inputs[0], m.inputs[1]) else {
                continue;
            };
            // the other operand: not the convolution's output itself (conv + conv)
            let r = if a == out { b } else { a };
            if r == out
                || g.values[r].shape != g.values[out].shape
                || g.values[r].dtype != DType::F32
            {
                continue;
            }
            let Some(y) = m.outputs[0] else { continue };
            let mut nodes = vec![i, j];
            let mut c2 = c.clone();
            let mut last = y;
            if let Some(k) = consumer(g, y)
                && matches!(g.nodes[k].op, NodeOp::Op(Op::Relu))
                && let Some(z) = g.nodes[k].outputs[0]
            {
                c2.activation = Activation::Relu;
                nodes.push(k);
                last = z;
            }
            // the convolution moves to the last node's place: not across an effect
            let end = *nodes.iter().max().unwrap();
            if g.nodes[i + 1..end].iter().any(|n| n.has_effect()) {
                continue;
            }
            let node = Node {
                op: NodeOp::ConvResidual(c2),
                inputs: vec![n.inputs[0], n.inputs[1], n.inputs[2], Some(r)],
                outputs: vec![Some(last)],
                into: vec![None],
                mutated: vec![],
            };
            let relu = nodes.len() == 3;
            rewrite = Some((nodes, node, relu));
            break;
        }
        let Some((nodes, node, relu)) = rewrite else {
            break;
        };
        // In the place of the last node replaced (every input exists there).
        let last = *nodes.iter().max().unwrap();
        g.nodes[last] = node;
        let mut drop: Vec<usize> = nodes.into_iter().filter(|&k| k != last).collect();
        drop.sort_unstable_by(|a, b| b.cmp(a));
        for k in drop {
            g.nodes.remove(k);
        }
        renumber(g);
        made.push(if relu { "conv+add+relu" } else { "conv+add" });
    }
    made
}

/// O2+ on devices with a packed weight form for a convolution
/// ([`crate::device::ConvOps::conv_packed_weight_len`]: the CPU's AVX-512 convolutions): an
/// f32 convolution (or [`NodeOp::ConvResidual`]) whose weight is a parameter no node writes
/// gets its weights packed now, and reads them packed at every run
/// ([`NodeOp::ConvPacked`]). As with [`fold_constants`], the packed weights are the
/// parameter's data when the plan is made (`rb_executor_invalidate` packs them again). Runs
/// after the fusions (the batch norms folded into the weights, the residual adds joined).
/// Returns how many convolutions read packed weights.
pub fn pack_conv_weights(g: &mut Graph, stream: Option<&Stream>) -> Result<usize> {
    // A raw call may write any caller memory: no parameter is known to be constant.
    if g.nodes.iter().any(|n| matches!(n.op, NodeOp::Raw(_))) {
        return Ok(0);
    }
    let written = written_params(g);
    // (weight, input shape, attributes) -> its packing: one for convolutions of one geometry
    // sharing a weight, so the device offers the same form for each
    type Key = (ValueId, Vec<usize>, (crate::ops::conv::ConvAttrs, usize));
    struct Packing {
        key: Key,
        w: Tensor,
        len: usize,
    }
    let mut packings: Vec<Packing> = vec![];
    // (node, its packing, the conv, residual, input and weight shapes)
    let mut convs = vec![];
    for (i, n) in g.nodes.iter().enumerate() {
        let (conv, residual) = match &n.op {
            NodeOp::Op(Op::Conv(c)) => (c.clone(), false),
            NodeOp::ConvResidual(c) => (c.clone(), true),
            _ => continue,
        };
        let (Some(x), Some(w)) = (n.inputs[0], n.inputs[1]) else {
            continue;
        };
        let (xv, wv) = (&g.values[x], &g.values[w]);
        let Source::Param(wt) = &wv.source else {
            continue;
        };
        if n.has_effect()
            || xv.dtype != DType::F32
            || wv.dtype != DType::F32
            || written.contains(&wt.storage_id())
        {
            continue;
        }
        let (x_shape, w_shape) = (xv.shape.clone(), wv.shape.clone());
        let key: Key = (w, x_shape.clone(), conv.params.clone());
        let at = match packings.iter().position(|p| p.key == key) {
            Some(at) => at,
            None => {
                let (attrs, ndim) = &conv.params;
                let Some(len) =
                    crate::runtime::conv::conv_packed_len(stream, &x_shape, wt, attrs, *ndim)?
                else {
                    continue;
                };
                packings.push(Packing {
                    key,
                    w: wt.clone(),
                    len,
                });
                packings.len() - 1
            }
        };
        convs.push((i, at, conv, residual, x_shape, w_shape));
    }
    if packings.is_empty() {
        return Ok(0);
    }
    // Every packing in one buffer, each from a 64-byte boundary: one allocation, which the
    // CPU puts on huge pages (a model's packed weights are tens of MB in pieces mostly under
    // 2 MiB, each on 4 KiB pages otherwise).
    // (the weights packed are F32: the filter above)
    const DT: DType = DType::F32;
    let align_values = 64 / DT.size();
    let total: usize = packings
        .iter()
        .map(|p| p.len.next_multiple_of(align_values))
        .sum();
    let buf = Tensor::empty(g.device.clone(), &[total], DT)?;
    let mut values = Vec::with_capacity(packings.len());
    let mut off = 0;
    for p in &packings {
        let view = Tensor::view_at(&buf, off * DT.size(), &[p.len], DT)?;
        let (_, x_shape, (attrs, ndim)) = &p.key;
        crate::runtime::conv::conv_pack_weight_into(stream, x_shape, &p.w, attrs, *ndim, &view)?;
        values.push(g.add_value(&[p.len], DT, Source::Param(view)));
        off += p.len.next_multiple_of(align_values);
    }
    let packed = convs.len();
    for (i, at, conv, residual, x_shape, w_shape) in convs {
        let n = &mut g.nodes[i];
        n.inputs[1] = Some(values[at]);
        n.op = NodeOp::ConvPacked {
            conv,
            x_shape,
            w_shape,
            residual,
            layout: Blocked::default(),
        };
    }
    Ok(packed)
}

/// Whether `n`, a packed convolution, runs with its tensors in `layout` on `g`'s device
/// ([`crate::device::ConvOps::conv_packed_layout`]); false for any other node.
fn takes_layout(g: &Graph, n: &Node, layout: Blocked) -> bool {
    match &n.op {
        NodeOp::ConvPacked {
            conv,
            x_shape,
            w_shape,
            ..
        } => crate::ops::conv::conv_geom("conv", x_shape, w_shape, &conv.params.0, conv.params.1)
            .is_ok_and(|c| g.device.conv_packed_layout(&c, DType::F32, layout)),
        _ => false,
    }
}

/// Keeps the values between packed convolutions ([`NodeOp::ConvPacked`]) in the blocked
/// layout `[n, c / 16, h, w, 16]` where the device takes it
/// ([`crate::device::ConvOps::conv_packed_layout`]: the CPU's AVX-512 convolutions): a
/// convolution's output is blocked when another packed convolution reads it as its input,
/// and every packed convolution that adds it as a residual writes blocked too (the residual
/// has the output's layout); its value is then shaped so. Readers of a blocked value that
/// are not packed convolutions (a pool, a graph output) read an NCHW copy, a permute made
/// right after it. A blocked output is written in whole 64-byte lines, a position's 16
/// channels at a time, where NCHW takes a transposed tile stored across 16 rows. Run after
/// [`pack_conv_weights`]; returns the convolutions that write blocked.
pub fn block_conv_layouts(g: &mut Graph) -> usize {
    use crate::ops::conv::{BLOCK_LANES, blocked_shape};
    let takes = |n: &Node, layout: Blocked| takes_layout(g, n, layout);
    let uses = readers(g);
    // a packed convolution reading a value as its input (0) or residual (3)
    let packed: Vec<bool> = g
        .nodes
        .iter()
        .map(|n| matches!(n.op, NodeOp::ConvPacked { .. }))
        .collect();
    let packed_read = |(j, k): (usize, usize)| (k == 0 || k == 3) && packed[j];
    let conv_out = |i: usize| match (&g.nodes[i].op, g.nodes[i].outputs.first()) {
        (NodeOp::ConvPacked { .. }, Some(Some(o)))
            if g.nodes[i].into.first().is_none_or(|t| t.is_none()) =>
        {
            Some(*o)
        }
        _ => None,
    };
    // Candidates: a packed convolution writing a value of its own that some packed
    // convolution reads as its input or residual, or that adds a residual (the end of a
    // residual stream: kept blocked, its other readers read a copy); each packed convolution
    // reading it as its input must take it blocked.
    let mut blocked: Vec<bool> = (0..g.nodes.len())
        .map(|i| {
            conv_out(i).is_some_and(|o| {
                takes(&g.nodes[i], Blocked { x: false, y: true })
                    && g.values[o]
                        .shape
                        .get(1)
                        .is_some_and(|c| c.is_multiple_of(BLOCK_LANES))
                    && (matches!(g.nodes[i].op, NodeOp::ConvPacked { residual: true, .. })
                        || uses[o].iter().any(|&u| packed_read(u)))
                    && uses[o].iter().all(|&(j, k)| {
                        k != 0
                            || !packed_read((j, k))
                            || takes(&g.nodes[j], Blocked { x: true, y: false })
                    })
            })
        })
        .collect();
    // A convolution's residual has its output's layout: drop candidates until each residual
    // and its reader agree (only ever dropping: this ends).
    loop {
        let mut changed = false;
        for i in 0..g.nodes.len() {
            if !matches!(g.nodes[i].op, NodeOp::ConvPacked { residual: true, .. }) {
                continue;
            }
            let r = g.nodes[i].inputs.get(3).copied().flatten();
            let r_blocked = r.and_then(|r| producer(g, r)).is_some_and(|p| blocked[p]);
            if r_blocked != blocked[i] {
                if let Some(p) = r.and_then(|r| producer(g, r)).filter(|&p| blocked[p]) {
                    blocked[p] = false;
                }
                blocked[i] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Every convolution must take the layout it gets; else nothing changes.
    let x_blocked = |i: usize| {
        g.nodes[i].inputs[0]
            .and_then(|x| producer(g, x))
            .is_some_and(|p| blocked[p])
    };
    for (i, (n, &y)) in g.nodes.iter().zip(&blocked).enumerate() {
        if matches!(n.op, NodeOp::ConvPacked { .. }) {
            let layout = Blocked { x: x_blocked(i), y };
            if layout != Blocked::default() && !takes(n, layout) {
                return 0;
            }
        }
    }
    let count = blocked.iter().filter(|&&b| b).count();
    if count == 0 {
        return 0;
    }
    let plan: Vec<(bool, Option<ValueId>)> = (0..g.nodes.len())
        .map(|i| (x_blocked(i), conv_out(i)))
        .collect();
    let outputs: HashSet<ValueId> = g.outputs.iter().copied().collect();
    let mut inserts: Vec<(usize, Vec<Node>)> = vec![];
    for (i, &(x, o)) in plan.iter().enumerate() {
        if let NodeOp::ConvPacked { layout, .. } = &mut g.nodes[i].op {
            layout.x = x;
            layout.y = blocked[i];
        }
        if !blocked[i] {
            continue;
        }
        let o = o.expect("a candidate writes a value");
        let nchw = g.values[o].shape.clone();
        g.values[o].shape = blocked_shape(&nchw);
        // readers other than packed convolutions (and graph outputs) read an NCHW copy
        let others: Vec<(usize, usize)> = uses[o]
            .iter()
            .copied()
            .filter(|&u| !packed_read(u))
            .collect();
        if others.is_empty() && !outputs.contains(&o) {
            continue;
        }
        // [n, c/16, h, w, 16] -> [n, c/16, 16, h, w] -> [n, c, h, w]
        let rank = nchw.len();
        let mut perm: Vec<i64> = vec![0, 1, rank as i64];
        perm.extend(2..rank as i64);
        let mut mid = vec![nchw[0], nchw[1] / BLOCK_LANES, BLOCK_LANES];
        mid.extend_from_slice(&nchw[2..]);
        let dt = g.values[o].dtype;
        let m = g.add_value(&mid, dt, Source::Node { node: 0, output: 0 });
        let c = g.add_value(&nchw, dt, Source::Node { node: 0, output: 0 });
        for (j, k) in others {
            g.nodes[j].inputs[k] = Some(c);
        }
        for out in g.outputs.iter_mut().filter(|v| **v == o) {
            *out = c;
        }
        let node = |op: NodeOp, from: ValueId, to: ValueId| Node {
            op,
            inputs: vec![Some(from)],
            outputs: vec![Some(to)],
            into: vec![None],
            mutated: vec![],
        };
        inserts.push((
            i + 1,
            vec![
                node(NodeOp::Op(Op::Permute(attrs::Permute { perm })), o, m),
                node(NodeOp::Reshape(nchw), m, c),
            ],
        ));
    }
    for (at, nodes) in inserts.into_iter().rev() {
        for (k, n) in nodes.into_iter().enumerate() {
            g.nodes.insert(at + k, n);
        }
    }
    renumber(g);
    count
}

/// A 2-D max pooling between packed convolutions pools their blocked layout: a packed
/// convolution whose output (NCHW after [`block_conv_layouts`]) only the pooling reads, the
/// pooling's output read only by packed convolutions as their input (ResNet's stem, its
/// max pool and layer 1's first convolutions). The convolution writes blocked, the pooling
/// pools the blocked value viewed as a channels-last tensor of 16 channels
/// (`[n, c/16, h, w, 16]` as `[n·c/16, h, w, 16]`, by reshape views), and its readers take
/// it blocked; where the device pools that natively
/// ([`crate::device::PoolOps::channels_last_pool_forward`]: the CPU). Returns how many
/// poolings so.
pub fn block_pool_layouts(g: &mut Graph) -> usize {
    use crate::ops::conv::{BLOCK_LANES, Layout, blocked_shape};
    use crate::ops::pool::{PoolAttrsEx, PoolKind, pool_geom_ex};
    let dev = g.device.clone();
    // a packed convolution taking `x` or `y` blocked, its other tensor as it is now
    let takes = |n: &Node, x: Option<bool>, y: Option<bool>| match &n.op {
        NodeOp::ConvPacked { layout, .. } => takes_layout(
            g,
            n,
            Blocked {
                x: x.unwrap_or(layout.x),
                y: y.unwrap_or(layout.y),
            },
        ),
        _ => false,
    };
    let uses = readers(g);
    let outputs: HashSet<ValueId> = g.outputs.iter().copied().collect();
    let own = |n: &Node| n.into.first().is_none_or(|t| t.is_none());
    let mut rewrites = vec![];
    for (i, n) in g.nodes.iter().enumerate() {
        let ex = match &n.op {
            NodeOp::Op(Op::Pool(pa)) if pa.params.1 == 2 && pa.mode == PoolKind::Max => {
                PoolAttrsEx {
                    attrs: pa.params.0.clone(),
                    pad_after: pa.params.0.padding.clone(),
                    divisor_override: None,
                    layout: Layout::ChannelsFirst,
                }
            }
            NodeOp::Op(Op::PoolEx(pa))
                if pa.params.1 == 2
                    && pa.mode == PoolKind::Max
                    && pa.params.0.layout == Layout::ChannelsFirst =>
            {
                pa.params.0.clone()
            }
            _ => continue,
        };
        let (Some(Some(x)), Some(Some(o))) = (n.inputs.first(), n.outputs.first()) else {
            continue;
        };
        let (x, o) = (*x, *o);
        let Some(p) = producer(g, x) else { continue };
        let xs = g.values[x].shape.clone();
        let ok = n.outputs.len() == 1
            && !n.has_effect()
            && own(n)
            && own(&g.nodes[p])
            && g.values[x].dtype == DType::F32
            && xs.len() == 4
            && xs[1].is_multiple_of(BLOCK_LANES)
            && matches!(g.nodes[p].op, NodeOp::ConvPacked { layout, .. } if !layout.y)
            && takes(&g.nodes[p], None, Some(true))
            && uses[x].len() == 1
            && !outputs.contains(&x)
            && !outputs.contains(&o)
            && !uses[o].is_empty()
            && uses[o]
                .iter()
                .all(|&(j, k)| k == 0 && takes(&g.nodes[j], Some(true), None));
        if !ok {
            continue;
        }
        // the pooling of [n·c/16, 16, h, w] channels last, as the device would run it
        let lanes = [xs[0] * xs[1] / BLOCK_LANES, BLOCK_LANES, xs[2], xs[3]];
        let Ok(geom) = pool_geom_ex("max_pool2d", PoolKind::Max, &lanes, &ex, 2) else {
            continue;
        };
        let os = &g.values[o].shape;
        if geom.y_shape() != [lanes[0], BLOCK_LANES, os[2], os[3]]
            || !dev.channels_last_pool_forward(&geom, DType::F32)
        {
            continue;
        }
        rewrites.push((i, p, x, o, ex, lanes));
    }
    let count = rewrites.len();
    let mut inserts: Vec<(usize, Node)> = vec![];
    for (i, p, x, o, ex, lanes) in rewrites {
        if let NodeOp::ConvPacked { layout, .. } = &mut g.nodes[p].op {
            layout.y = true;
        }
        for &(j, _) in &uses[o] {
            if let NodeOp::ConvPacked { layout, .. } = &mut g.nodes[j].op {
                layout.x = true;
            }
        }
        let (xs, os) = (g.values[x].shape.clone(), g.values[o].shape.clone());
        g.values[x].shape = blocked_shape(&xs);
        g.values[o].shape = blocked_shape(&os);
        let last = |s: &[usize]| vec![lanes[0], s[2], s[3], BLOCK_LANES];
        let xl = g.add_value(&last(&xs), DType::F32, Source::Node { node: 0, output: 0 });
        let ol = g.add_value(&last(&os), DType::F32, Source::Node { node: 0, output: 0 });
        let view = |shape: Vec<usize>, from: ValueId, to: ValueId| Node {
            op: NodeOp::Reshape(shape),
            inputs: vec![Some(from)],
            outputs: vec![Some(to)],
            into: vec![None],
            mutated: vec![],
        };
        inserts.push((i, view(last(&xs), x, xl)));
        inserts.push((i + 1, view(blocked_shape(&os), ol, o)));
        let n = &mut g.nodes[i];
        n.op = NodeOp::Op(Op::PoolEx(attrs::PoolEx {
            mode: PoolKind::Max,
            params: (
                PoolAttrsEx {
                    layout: Layout::ChannelsLast,
                    ..ex
                },
                2,
            ),
        }));
        n.inputs[0] = Some(xl);
        n.outputs[0] = Some(ol);
    }
    // (from the last position, so earlier positions stay valid)
    inserts.sort_by_key(|a| std::cmp::Reverse(a.0));
    for (at, node) in inserts {
        g.nodes.insert(at, node);
    }
    renumber(g);
    count
}

/// A linear without bias over one input row in f32/f16/bf16 (a decode step's projection):
/// its input, weight and output.
fn decode_linear(g: &Graph, n: &Node) -> Option<(ValueId, ValueId, ValueId)> {
    if !matches!(n.op, NodeOp::Op(Op::Linear)) || n.has_effect() {
        return None;
    }
    let (Some(x), Some(w), None) = (n.inputs[0], n.inputs[1], n.inputs.get(2).copied().flatten())
    else {
        return None;
    };
    let out = n.outputs.first().copied().flatten()?;
    let (xv, wv) = (&g.values[x], &g.values[w]);
    let k = *xv.shape.last()?;
    let rows = xv.shape.iter().product::<usize>() / k.max(1);
    (xv.dtype.is_float() && wv.shape.len() == 2 && wv.shape[1] == k && k > 0 && rows == 1)
        .then_some((x, w, out))
}

/// Whether a node with an effect lies strictly between nodes `a` and `b` (either order).
fn effect_between(g: &Graph, a: usize, b: usize) -> bool {
    let (lo, hi) = (a.min(b), a.max(b));
    g.nodes[lo + 1..hi].iter().any(|n| n.has_effect())
}

/// Replaces nodes `nodes` by `node`, placed where the node `at` was.
fn replace_nodes(g: &mut Graph, nodes: &[usize], at: usize, node: Node) {
    g.nodes[at] = node;
    let mut drop: Vec<usize> = nodes.iter().copied().filter(|&k| k != at).collect();
    drop.sort_unstable_by(|a, b| b.cmp(a));
    for k in drop {
        g.nodes.remove(k);
    }
    renumber(g);
}

/// An rms_norm over one row whose result only a [`NodeOp::LinearGroup`] reads (a decode
/// step's norm before q/k/v or gate/up) → the group reads the norm's input with `norm` set
/// ([`crate::runtime::blas::linear_group_norm`]): on devices with the grouped pass the
/// norm's scale is applied to each product's f32 sum, so the norm is no launch and no
/// pass of its own (its normalized input is not rounded to the element type, where the ops
/// round it once); elsewhere the node runs the norm, then the products. Runs after
/// [`fuse_linear_groups`] and [`fuse_linear_add_norm`], which takes first the norms of a
/// one-row product's result (normalized once, where a folded norm is re-derived by every
/// block of the group: on an H200 the Llama decode step of torch_anchors_graph.py took
/// 1075 us with its norms so against 1143 us with all of them folded); nothing moves across
/// a node with an effect.
pub fn fuse_norm_into_groups(g: &mut Graph) -> Vec<&'static str> {
    let mut made = vec![];
    loop {
        let u = g.use_counts();
        let mut rewrite: Option<(usize, usize)> = None;
        for (j, m) in g.nodes.iter().enumerate() {
            let NodeOp::Op(Op::RmsNorm(a)) = &m.op else {
                continue;
            };
            let (Some(y), Some(h)) = (m.inputs[0], m.outputs[0]) else {
                continue;
            };
            let cols = *g.values[y].shape.last().unwrap_or(&0);
            if m.has_effect()
                || cols == 0
                || a.normalized_shape != [cols]
                || g.values[y].shape.iter().product::<usize>() != cols
                || !single_use(g, &u, h)
            {
                continue;
            }
            let Some(i) = g.nodes.iter().position(|n| n.inputs.contains(&Some(h))) else {
                continue;
            };
            let n = &g.nodes[i];
            let NodeOp::LinearGroup { norm: None, .. } = n.op else {
                continue;
            };
            let nw = m.inputs.get(1).copied().flatten();
            if n.inputs[0] != Some(h)
                || n.inputs[1..].contains(&Some(h))
                || effect_between(g, j, i)
                || nw.is_some_and(|v| producer(g, v).is_some_and(|p| p >= i))
            {
                continue;
            }
            rewrite = Some((j, i));
            break;
        }
        let Some((j, i)) = rewrite else {
            break;
        };
        let NodeOp::Op(Op::RmsNorm(a)) = g.nodes[j].op.clone() else {
            unreachable!()
        };
        let (y, nw) = (
            g.nodes[j].inputs[0],
            g.nodes[j].inputs.get(1).copied().flatten(),
        );
        let node = &mut g.nodes[i];
        if let NodeOp::LinearGroup { norm, .. } = &mut node.op {
            *norm = Some(a);
        }
        node.inputs[0] = y;
        node.inputs.push(nw);
        g.nodes.remove(j);
        renumber(g);
        made.push("rms_norm+linear");
    }
    made
}

/// A one-row `linear_add` ([`fuse_linear_groups`]) whose result an rms_norm over its
/// whole row reads (a decode step's residual stream and the next layer's norm) →
/// [`NodeOp::LinearAddNorm`] at the product's place, both results kept (the sum is the
/// residual stream read later too). The node runs the two ops in order; with
/// `RB_GPU_NORM_TAIL=1`, where the device can (a GPU inside its device graph:
/// [`crate::device::BlasOps::gemv_group_norm`]), the product's last block normalizes its
/// result instead, saving the norm's launch but measured slower on an H200
/// ([`crate::runtime::blas::linear_add_rms_norm`]). Equal bits either way. Runs before [`fuse_norm_into_groups`]; nothing moves across a node with
/// an effect.
pub fn fuse_linear_add_norm(g: &mut Graph) -> Vec<&'static str> {
    let mut made = vec![];
    loop {
        let mut rewrite: Option<(usize, usize, Node)> = None;
        'scan: for (i, n) in g.nodes.iter().enumerate() {
            if !matches!(
                n.op,
                NodeOp::LinearGroup {
                    n: 1,
                    glu: false,
                    norm: None,
                    ..
                }
            ) || n.has_effect()
            {
                continue;
            }
            let (Some(x), Some(w), Some(r), Some(y)) = (
                n.inputs[0],
                n.inputs[1],
                n.inputs.get(2).copied().flatten(),
                n.outputs[0],
            ) else {
                continue;
            };
            let cols = *g.values[y].shape.last().unwrap_or(&0);
            if cols == 0 || g.values[y].shape.iter().product::<usize>() != cols {
                continue;
            }
            for (j, m) in g.nodes.iter().enumerate().skip(i + 1) {
                let NodeOp::Op(Op::RmsNorm(a)) = &m.op else {
                    continue;
                };
                if m.inputs[0] != Some(y) {
                    continue;
                }
                let nw = m.inputs.get(1).copied().flatten();
                let Some(h) = m.outputs[0] else { continue };
                if m.has_effect()
                    || a.normalized_shape != [cols]
                    || effect_between(g, i, j)
                    || nw.is_some_and(|v| producer(g, v).is_some_and(|p| p >= i))
                {
                    continue;
                }
                let node = Node {
                    op: NodeOp::LinearAddNorm(a.clone(), false),
                    inputs: vec![Some(x), Some(w), Some(r), nw],
                    outputs: vec![Some(y), Some(h)],
                    into: vec![None, None],
                    mutated: vec![],
                };
                rewrite = Some((i, j, node));
                break 'scan;
            }
        }
        let Some((i, j, node)) = rewrite else {
            break;
        };
        replace_nodes(g, &[i, j], i, node);
        made.push("linear+add+rms_norm");
    }
    made
}

/// Decode-time linear layers (no bias, one input row: [`decode_linear`]) as matrix-vector
/// passes of [`NodeOp::LinearGroup`] (one launch on devices with
/// [`crate::device::BlasOps::has_gemv_group`]; elsewhere the node runs the ops it replaced,
/// with the same results as unfused):
/// - `silu(linear(x, w₁)) * linear(x, w₃)` (SwiGLU) → `linear_swiglu`, the gate in the
///   product's epilogue;
/// - `linear(x, w) + r` with `r` of the product's shape (a residual) → `linear_add`;
/// - two or three other linears reading the same `x` (q/k/v) → `linear_x2` / `linear_x3`.
///
/// The fused results round once (f32 accumulation, the residual or gate added before the
/// rounding) where the unfused ops round each step. Runs after [`fuse_patterns`] (a linear
/// with an activation is a dense node by then) and before [`fuse_elementwise`] (which would
/// take the silu, the mul and the add). Nothing moves across a node with an effect.
pub fn fuse_linear_groups(g: &mut Graph) -> Vec<&'static str> {
    let mut made = vec![];
    let max = crate::device::blas::GEMV_GROUP_MAX;
    loop {
        let u = g.use_counts();
        let reader = |v: ValueId| -> Option<usize> {
            if !single_use(g, &u, v) {
                return None;
            }
            g.nodes.iter().position(|m| m.inputs.contains(&Some(v)))
        };
        let mut rewrite: Option<(Vec<usize>, usize, Node, &'static str)> = None;
        'scan: for (i, n) in g.nodes.iter().enumerate() {
            let Some((x, w, out)) = decode_linear(g, n) else {
                continue;
            };
            let Some(j) = reader(out) else { continue };
            let m = &g.nodes[j];
            if m.has_effect() {
                continue;
            }
            // SwiGLU: silu(out) * up, up = linear(x, w3) read only by the mul
            if matches!(m.op, NodeOp::Op(Op::Silu))
                && let Some(s1) = m.outputs[0]
                && let Some(k) = reader(s1)
                && matches!(g.nodes[k].op, NodeOp::Op(Op::Mul))
                && !g.nodes[k].has_effect()
                && let (Some(a), Some(b)) = (g.nodes[k].inputs[0], g.nodes[k].inputs[1])
                && let Some(y) = g.nodes[k].outputs[0]
            {
                let up = if a == s1 { b } else { a };
                if up != s1
                    && single_use(g, &u, up)
                    && let Some(l) = producer(g, up)
                    && let Some((x3, w3, _)) = decode_linear(g, &g.nodes[l])
                    && x3 == x
                    && g.values[w3].shape == g.values[w].shape
                    && g.values[up].shape == g.values[out].shape
                    && g.values[y].shape == g.values[out].shape
                {
                    let nodes = vec![i, j, k, l];
                    let lo = *nodes.iter().min().unwrap();
                    if effect_between(g, lo, k) {
                        continue;
                    }
                    let node = Node {
                        op: NodeOp::LinearGroup {
                            n: 2,
                            glu: true,
                            norm: None,
                            settled: false,
                        },
                        // [x, w1, w3, r1, r2] (no residuals)
                        inputs: vec![Some(x), Some(w), Some(w3), None, None],
                        outputs: vec![Some(y)],
                        into: vec![None],
                        mutated: vec![],
                    };
                    rewrite = Some((nodes, k, node, "linear+silu*mul"));
                    break 'scan;
                }
            }
            // residual: out + r, r of out's shape (not out itself)
            if matches!(m.op, NodeOp::Op(Op::Add))
                && let (Some(a), Some(b)) = (m.inputs[0], m.inputs[1])
                && let Some(y) = m.outputs[0]
            {
                let r = if a == out { b } else { a };
                if r != out
                    && g.values[r].shape == g.values[out].shape
                    && g.values[r].dtype == g.values[out].dtype
                    && g.values[y].shape == g.values[out].shape
                    && !effect_between(g, i, j)
                {
                    let node = Node {
                        op: NodeOp::LinearGroup {
                            n: 1,
                            glu: false,
                            norm: None,
                            settled: false,
                        },
                        inputs: vec![Some(x), Some(w), Some(r)],
                        outputs: vec![Some(y)],
                        into: vec![None],
                        mutated: vec![],
                    };
                    rewrite = Some((vec![i, j], j, node, "linear+add"));
                    break 'scan;
                }
            }
        }
        if rewrite.is_none() {
            // siblings: plain linears reading the same x, in order, at the first one's place
            'group: for (i, n) in g.nodes.iter().enumerate() {
                let Some((x, w, out)) = decode_linear(g, n) else {
                    continue;
                };
                let dtype = g.values[out].dtype;
                let mut nodes = vec![i];
                let (mut ws, mut outs) = (vec![Some(w)], vec![Some(out)]);
                for (q, m) in g.nodes.iter().enumerate().skip(i + 1) {
                    if nodes.len() == max {
                        break;
                    }
                    if m.has_effect() {
                        break;
                    }
                    let Some((x2, w2, o2)) = decode_linear(g, m) else {
                        continue;
                    };
                    // the weight must exist at the first product's place
                    if x2 != x
                        || g.values[o2].dtype != dtype
                        || producer(g, w2).is_some_and(|p| p >= i)
                    {
                        continue;
                    }
                    nodes.push(q);
                    ws.push(Some(w2));
                    outs.push(Some(o2));
                }
                if nodes.len() < 2 {
                    continue;
                }
                let k = nodes.len();
                let mut inputs = vec![Some(x)];
                inputs.extend(ws);
                inputs.extend(std::iter::repeat_n(None, k));
                let node = Node {
                    op: NodeOp::LinearGroup {
                        n: k,
                        glu: false,
                        norm: None,
                        settled: false,
                    },
                    inputs,
                    outputs: outs,
                    into: vec![None; k],
                    mutated: vec![],
                };
                let label = if k == 2 { "linear_x2" } else { "linear_x3" };
                rewrite = Some((nodes, i, node, label));
                break 'group;
            }
        }
        let Some((nodes, at, node, label)) = rewrite else {
            break;
        };
        replace_nodes(g, &nodes, at, node);
        made.push(label);
    }
    made
}

/// The node whose work comes right before node `i`'s in the stream: the nearest earlier
/// node that may launch any (a reshape view launches none, nor a node whose results are all
/// empty), when every node between is without an effect; None when there is none (the work
/// before is the caller's) or a node between has an effect.
fn prev_launching(g: &Graph, i: usize) -> Option<usize> {
    let mut j = i;
    while j > 0 {
        j -= 1;
        let n = &g.nodes[j];
        let outs: Vec<ValueId> = n.outputs.iter().flatten().copied().collect();
        let empty = !outs.is_empty()
            && outs
                .iter()
                .all(|&v| g.values[v].shape.iter().product::<usize>() == 0);
        if !(matches!(n.op, NodeOp::Reshape(_)) || empty) {
            return Some(j);
        }
        if n.has_effect() {
            return None;
        }
    }
    None
}

/// Marks the grouped decode products whose weights are settled by the time they run (the
/// `settled` flag of [`NodeOp::LinearGroup`] and [`NodeOp::LinearAddNorm`], which lets a GPU
/// issue the first weight loads before it waits for the previous kernel): every weight is a
/// value no node makes (a graph input or a parameter), and the node right before is one
/// without an effect, so what it launches writes only results of its own, while everything
/// before it has finished when the product may start (an early kernel starts only after the
/// previous one has waited for its own predecessors). Never the first node: the work queued
/// before a run is the caller's. Run last, on the final order; returns how many it marked.
pub fn settle_weights(g: &mut Graph) -> usize {
    let mut marked = 0;
    for i in 1..g.nodes.len() {
        let prev_quiet = prev_launching(g, i).is_some_and(|j| !g.nodes[j].has_effect());
        let n = &g.nodes[i];
        let weights = match &n.op {
            NodeOp::LinearGroup { n: k, .. } | NodeOp::LinearRopeStore { n: k, .. } => 1..1 + *k,
            NodeOp::LinearAddNorm(..) => 1..2,
            _ => continue,
        };
        // (a linear+rope+store writes its caches, never its weights: those are apart)
        let own_effect = match &n.op {
            NodeOp::LinearRopeStore { .. } => {
                n.into.iter().any(|t| t.is_some())
                    || n.mutated.iter().any(|&m| {
                        n.inputs[m].is_some_and(|c| n.inputs[weights.clone()].contains(&Some(c)))
                    })
            }
            _ => n.has_effect(),
        };
        // (and a linear+rope+store's tables and position, which its GPU kernel reads early too)
        let early_reads = match &n.op {
            NodeOp::LinearRopeStore { n: k, .. } => vec![weights, *k + 2..*k + 5],
            _ => vec![weights],
        };
        let settled = prev_quiet
            && !own_effect
            && early_reads.into_iter().all(|r| {
                n.inputs[r]
                    .iter()
                    .all(|w| w.is_some_and(|v| producer(g, v).is_none()))
            });
        match &mut g.nodes[i].op {
            NodeOp::LinearGroup { settled: s, .. }
            | NodeOp::LinearAddNorm(_, s)
            | NodeOp::LinearRopeStore { settled: s, .. } => *s = settled,
            _ => unreachable!(),
        }
        marked += settled as usize;
    }
    marked
}

/// A scaled_dot_product_attention whose work comes right after a decode step's cache store
/// ([`NodeOp::RopeStore`]; reshape views between) becomes [`NodeOp::AttentionFresh`], which
/// lets a GPU read the caches' other rows before it waits for the store's kernel: its k
/// and v are caches that store writes (the values themselves, not views), along their key
/// dim (the second to last), at the store's one position (an i64 or i32 element the store
/// does not write); the attention writes no real tensor. What the store writes besides, its
/// results (the rotated q) and other caches' rows at the position, the attention reads
/// after the wait. Run last, on the final order; returns how many it made.
pub fn settle_attention(g: &mut Graph) -> usize {
    let mut made = 0;
    for i in 1..g.nodes.len() {
        let n = &g.nodes[i];
        let NodeOp::Op(Op::ScaledDotProductAttention(a)) = &n.op else {
            continue;
        };
        let Some(j) = prev_launching(g, i) else {
            continue;
        };
        let st = &g.nodes[j];
        let (dim, pos_at) = match &st.op {
            NodeOp::RopeStore { dim, .. } => (dim, 2),
            NodeOp::LinearRopeStore { dim, n: w, .. } => (dim, 4 + w),
            _ => continue,
        };
        let (Some(k), Some(v), Some(pos)) = (
            n.inputs.get(1).copied().flatten(),
            n.inputs.get(2).copied().flatten(),
            st.inputs.get(pos_at).copied().flatten(),
        ) else {
            continue;
        };
        let caches: Vec<ValueId> = st.mutated.iter().filter_map(|&m| st.inputs[m]).collect();
        let key_dim = |x: ValueId| {
            let rank = g.values[x].shape.len() as i64;
            rank >= 2 && (if *dim < 0 { dim + rank } else { *dim }) == rank - 2
        };
        let pv = &g.values[pos];
        let ok = !n.has_effect()
            && caches.contains(&k)
            && caches.contains(&v)
            && key_dim(k)
            && key_dim(v)
            && !caches.contains(&pos)
            && pv.shape.iter().product::<usize>() == 1
            && matches!(pv.dtype, DType::I64 | DType::I32);
        if !ok {
            continue;
        }
        let a = a.clone();
        let n = &mut g.nodes[i];
        n.op = NodeOp::AttentionFresh(a);
        n.inputs.truncate(3);
        n.inputs.push(Some(pos));
        made += 1;
    }
    made
}

/// Whether two SGD steps' attributes are the same.
/// A decode step's new-token tensors as one [`NodeOp::RopeStore`] (`rope+store`): in a run
/// of nodes that are only `index_copy`s of one index (one position) along one dim,
/// `rope_cached`s at that position with one pair of cos/sin caches (at least one), and
/// reshape views, the copies and rotations become one node; a rotated tensor that only a copy reads (through
/// reshape views) is rotated straight into its cache. At most
/// [`crate::device::transformer::ROPE_STORE_MAX`] tensors, at least two ops replaced. The
/// run's other views keep their order, those of rotated results after the node. One launch on
/// a GPU inside a device graph; elsewhere the node runs the ops it replaced, in order
/// (bit-equal either way).
pub fn fuse_rope_store(g: &mut Graph) -> Vec<&'static str> {
    use crate::device::transformer::ROPE_STORE_MAX;
    let mut made = vec![];
    let mut skip: HashSet<usize> = HashSet::new(); // index_copy nodes already tried
    loop {
        let u = g.use_counts();
        let mut rewrite: Option<(usize, usize, Vec<Node>)> = None;
        for (c0, n) in g.nodes.iter().enumerate() {
            let NodeOp::Op(Op::IndexCopy(a)) = &n.op else {
                continue;
            };
            let Some(idx) = n.inputs.get(1).copied().flatten() else {
                continue;
            };
            if skip.contains(&c0) || g.values[idx].shape.iter().product::<usize>() != 1 {
                continue;
            }
            skip.insert(c0);
            let dim = a.dim;
            let is_store = |m: &Node| {
                matches!(&m.op, NodeOp::Op(Op::IndexCopy(b)) if b.dim == dim)
                    && m.inputs.get(1).copied().flatten() == Some(idx)
                    && m.mutated == [0]
                    && m.into.iter().all(|t| t.is_none())
            };
            let rope_key = |m: &Node| match &m.op {
                NodeOp::Op(Op::RopeCached(r))
                    if m.inputs.get(3).copied().flatten() == Some(idx) && !m.has_effect() =>
                {
                    Some((m.inputs[1], m.inputs[2], r.seq_dim, r.interleaved))
                }
                _ => None,
            };
            let in_run = |m: &Node| {
                is_store(m) || rope_key(m).is_some() || matches!(m.op, NodeOp::Reshape(_))
            };
            let (mut lo, mut hi) = (c0, c0);
            while lo > 0 && in_run(&g.nodes[lo - 1]) {
                lo -= 1;
            }
            while hi + 1 < g.nodes.len() && in_run(&g.nodes[hi + 1]) {
                hi += 1;
            }
            let stores: Vec<usize> = (lo..=hi).filter(|&i| is_store(&g.nodes[i])).collect();
            let ropes: Vec<usize> = (lo..=hi)
                .filter(|&i| rope_key(&g.nodes[i]).is_some())
                .collect();
            let key = ropes.first().and_then(|&r| rope_key(&g.nodes[r]));
            if ropes.iter().any(|&r| rope_key(&g.nodes[r]) != key) {
                continue;
            }
            // a store's source through single-use reshape views back to a rope's result
            let mut consumed = HashSet::new();
            let mut views = vec![];
            let mut parts: Vec<(Option<usize>, Option<usize>)> = vec![]; // (rope, store)
            for &st in &stores {
                let mut v = g.nodes[st].inputs[2];
                let mut chain = vec![];
                let mut from = None;
                while let Some(val) = v {
                    if !single_use(g, &u, val) {
                        break;
                    }
                    let Some(p) = producer(g, val) else { break };
                    match &g.nodes[p].op {
                        NodeOp::Reshape(_) if p >= lo => {
                            chain.push(p);
                            v = g.nodes[p].inputs[0];
                        }
                        _ if ropes.contains(&p) && !consumed.contains(&p) => {
                            from = Some(p);
                            break;
                        }
                        _ => break,
                    }
                }
                if let Some(r) = from {
                    consumed.insert(r);
                    views.extend(chain);
                }
                parts.push((from, Some(st)));
            }
            for &r in &ropes {
                if !consumed.contains(&r) {
                    parts.push((Some(r), None));
                }
            }
            if parts.len() > ROPE_STORE_MAX || stores.len() + ropes.len() < 2 {
                continue;
            }
            // copies alone stay apart: the one pass is for a step that rotates
            let Some((cos, sin, seq_dim, interleaved)) = key else {
                continue;
            };
            // in the order of the ops replaced (the rope's, else the copy's)
            parts.sort_by_key(|&(r, st)| r.or(st));
            let mut inputs = vec![cos, sin, Some(idx)];
            let (mut outputs, mut mutated, mut specs) = (vec![], vec![], vec![]);
            let mut rotated = HashSet::new();
            for &(r, st) in &parts {
                inputs.push(match (r, st) {
                    (Some(r), _) => g.nodes[r].inputs[0],
                    (None, Some(st)) => g.nodes[st].inputs[2],
                    (None, None) => unreachable!("a part is a rope or a copy"),
                });
                match st {
                    Some(st) => {
                        mutated.push(inputs.len());
                        inputs.push(g.nodes[st].inputs[0]);
                        outputs.push(None);
                        let src = g.nodes[st].inputs[2].expect("index_copy's source");
                        specs.push(RopeStorePart {
                            rotate: r.is_some(),
                            store: Some(g.values[src].shape.clone()),
                        });
                    }
                    None => {
                        inputs.push(None);
                        let y = g.nodes[r.expect("a rope")].outputs[0];
                        rotated.extend(y);
                        outputs.push(y);
                        specs.push(RopeStorePart {
                            rotate: true,
                            store: None,
                        });
                    }
                }
            }
            let n = specs.len();
            let node = Node {
                op: NodeOp::RopeStore {
                    rope: attrs::RopeCached {
                        seq_dim,
                        interleaved,
                    },
                    dim,
                    parts: specs,
                },
                inputs,
                outputs,
                into: vec![None; n],
                mutated,
            };
            // the run's other views: before the node, or after it when they see a rotated
            // result (through one another)
            let members: HashSet<usize> =
                stores.iter().chain(&ropes).chain(&views).copied().collect();
            let (mut pre, mut post) = (vec![], vec![]);
            let mut late = rotated;
            for i in lo..=hi {
                if members.contains(&i) {
                    continue;
                }
                let m = &g.nodes[i];
                if m.inputs.iter().flatten().any(|v| late.contains(v)) {
                    late.extend(m.outputs.iter().flatten());
                    post.push(m.clone());
                } else {
                    pre.push(m.clone());
                }
            }
            let mut run = pre;
            run.push(node);
            run.extend(post);
            rewrite = Some((lo, hi, run));
            break;
        }
        let Some((lo, hi, run)) = rewrite else {
            break;
        };
        g.nodes.splice(lo..=hi, run);
        renumber(g);
        skip.clear();
        made.push("rope+store");
    }
    made
}

/// A [`NodeOp::LinearGroup`] without residuals or gate whose every result a
/// [`NodeOp::RopeStore`] alone reads (through single-use reshape views), each as one of its
/// parts' tensors, with no node with an effect between them → one
/// [`NodeOp::LinearRopeStore`] at the store's place (`linear+rope+store`): on a GPU inside
/// a device graph the products' kernel rotates and stores its results (no rope_store
/// launch); elsewhere the node runs the two (bit-equal either way). Runs after
/// [`fuse_rope_store`]; returns a label per fusion.
pub fn fuse_linear_rope_store(g: &mut Graph) -> Vec<&'static str> {
    let mut made = vec![];
    loop {
        let u = g.use_counts();
        let mut rewrite: Option<(Vec<usize>, usize, Node)> = None;
        'stores: for (si, st) in g.nodes.iter().enumerate() {
            let NodeOp::RopeStore { rope, dim, parts } = &st.op else {
                continue;
            };
            let mut group: Option<usize> = None;
            let mut views = vec![];
            let mut lparts = vec![];
            for (i, p) in parts.iter().enumerate() {
                let Some(xv) = st.inputs.get(3 + 2 * i).copied().flatten() else {
                    continue 'stores;
                };
                // back through single-use views to one result of one group
                let mut v = xv;
                let (gi, product) = loop {
                    if !single_use(g, &u, v) {
                        continue 'stores;
                    }
                    let Some(pn) = producer(g, v) else {
                        continue 'stores;
                    };
                    match &g.nodes[pn].op {
                        NodeOp::Reshape(_) => {
                            views.push(pn);
                            match g.nodes[pn].inputs[0] {
                                Some(w) => v = w,
                                None => continue 'stores,
                            }
                        }
                        NodeOp::LinearGroup { glu: false, .. } => {
                            let at = g.nodes[pn].outputs.iter().position(|o| *o == Some(v));
                            match at {
                                Some(at) => break (pn, at),
                                None => continue 'stores,
                            }
                        }
                        _ => continue 'stores,
                    }
                };
                if group.is_some_and(|x| x != gi) {
                    continue 'stores;
                }
                group = Some(gi);
                lparts.push(LinearRopePart {
                    product,
                    x_shape: g.values[xv].shape.clone(),
                    rotate: p.rotate,
                    store: p.store.clone(),
                });
            }
            let Some(gi) = group else {
                continue;
            };
            let gn = &g.nodes[gi];
            let NodeOp::LinearGroup { n, norm, .. } = &gn.op else {
                continue;
            };
            let n = *n;
            let mut products: Vec<usize> = lparts.iter().map(|p| p.product).collect();
            products.sort_unstable();
            let every_once = products == (0..n).collect::<Vec<_>>();
            let no_residuals =
                (1 + n..1 + 2 * n).all(|i| gn.inputs.get(i).copied().flatten().is_none());
            if !every_once
                || !no_residuals
                || gn.has_effect()
                || gi > si
                || effect_between(g, gi, si)
            {
                continue;
            }
            let mut inputs: Vec<Option<ValueId>> = gn.inputs[..1 + n].to_vec();
            inputs.push(gn.inputs.get(1 + 2 * n).copied().flatten());
            inputs.extend_from_slice(&st.inputs[..3]);
            let mut mutated = vec![];
            for i in 0..parts.len() {
                if st.inputs.get(4 + 2 * i).copied().flatten().is_some() {
                    mutated.push(inputs.len());
                }
                inputs.push(st.inputs.get(4 + 2 * i).copied().flatten());
            }
            let node = Node {
                op: NodeOp::LinearRopeStore {
                    n,
                    norm: norm.clone(),
                    settled: false,
                    rope: rope.clone(),
                    dim: *dim,
                    parts: lparts,
                },
                inputs,
                outputs: st.outputs.clone(),
                into: st.into.clone(),
                mutated,
            };
            let mut nodes = views;
            nodes.push(gi);
            nodes.push(si);
            rewrite = Some((nodes, si, node));
            break;
        }
        let Some((nodes, at, node)) = rewrite else {
            break;
        };
        replace_nodes(g, &nodes, at, node);
        made.push("linear+rope+store");
    }
    made
}

fn same_sgd(a: &attrs::SgdStep, b: &attrs::SgdStep) -> bool {
    a.lr == b.lr
        && a.momentum == b.momentum
        && a.dampening == b.dampening
        && a.weight_decay == b.weight_decay
        && a.nesterov == b.nesterov
        && a.first_step == b.first_step
}

/// A training step's SGD steps with the same attributes and dtype as one
/// [`NodeOp::SgdGroup`] (PyTorch's foreach SGD: one launch for up to eight parameters on
/// GPUs), placed where the last of them was. A step moves later only past nodes that do
/// not read its parameter or momentum buffer and write none of its operands; nothing moves
/// past a raw call or a node writing into a real tensor, and a parameter updated twice is
/// not grouped. Returns the number of groups made.
pub fn group_sgd_steps(g: &mut Graph) -> usize {
    let mut made = 0;
    let mut from = 0;
    while let Some(s0) =
        (from..g.nodes.len()).find(|&i| matches!(g.nodes[i].op, NodeOp::Op(Op::SgdStep(_))))
    {
        let NodeOp::Op(Op::SgdStep(a0)) = &g.nodes[s0].op else {
            unreachable!()
        };
        let a0 = a0.clone();
        let dtype = |g: &Graph, n: &Node| n.inputs[0].map(|v| g.values[v].dtype);
        let d0 = dtype(g, &g.nodes[s0]);
        // the written values (params, buffers) and the read gradients of the group so far
        let written =
            |n: &Node| -> Vec<ValueId> { n.mutated.iter().filter_map(|&k| n.inputs[k]).collect() };
        let mut w: Vec<ValueId> = written(&g.nodes[s0]);
        let mut r: Vec<ValueId> = g.nodes[s0].inputs.iter().flatten().copied().collect();
        let mut group = vec![s0];
        for q in s0 + 1..g.nodes.len() {
            let n = &g.nodes[q];
            if let NodeOp::Op(Op::SgdStep(a)) = &n.op
                && same_sgd(a, &a0)
                && dtype(g, n) == d0
                && n.inputs.iter().flatten().all(|v| !w.contains(v))
                && written(n).iter().all(|v| !r.contains(v))
            {
                w.extend(written(n));
                r.extend(n.inputs.iter().flatten().copied());
                group.push(q);
                continue;
            }
            let reads_written = n.inputs.iter().flatten().any(|v| w.contains(v));
            let writes_read = written(n).iter().any(|v| r.contains(v));
            if matches!(n.op, NodeOp::Raw(_))
                || n.into.iter().any(|t| t.is_some())
                || reads_written
                || writes_read
            {
                break;
            }
        }
        if group.len() < 2 {
            from = s0 + 1;
            continue;
        }
        let last = *group.last().unwrap();
        let mut inputs = vec![];
        let mut mutated = vec![];
        for &i in &group {
            let n = &g.nodes[i];
            let base = inputs.len();
            for k in 0..3 {
                inputs.push(n.inputs.get(k).copied().flatten());
            }
            mutated.extend(n.mutated.iter().map(|&k| base + k));
        }
        let node = Node {
            op: NodeOp::SgdGroup {
                attrs: a0,
                n: group.len(),
            },
            inputs,
            outputs: vec![],
            into: vec![],
            mutated,
        };
        replace_nodes(g, &group, last, node);
        made += 1;
        from = last + 1 - (group.len() - 1);
    }
    made
}

/// The elementwise instructions of a node, if it can join a fused chain: `args` are the
/// registers of its inputs in order.
fn elementwise_instrs(op: &NodeOp, args: &[usize], base: usize) -> Option<Vec<Instr>> {
    let NodeOp::Op(op) = op else { return None };
    let un = |u: UnaryOp| Some(vec![Instr::Unary(u, args[0])]);
    let bin = |b: BinaryOp| Some(vec![Instr::Binary(b, args[0], args[1])]);
    let cmp = |c: CompareOp| Some(vec![Instr::Compare(c, args[0], args[1])]);
    match op {
        Op::Add => bin(BinaryOp::Add),
        Op::Sub => bin(BinaryOp::Sub),
        Op::Mul => bin(BinaryOp::Mul),
        Op::Div => bin(BinaryOp::Div),
        Op::Pow => bin(BinaryOp::Pow),
        Op::Maximum => bin(BinaryOp::Maximum),
        Op::Minimum => bin(BinaryOp::Minimum),
        Op::Relu => un(UnaryOp::Relu),
        Op::Neg => un(UnaryOp::Neg),
        Op::Abs => un(UnaryOp::Abs),
        Op::Sqrt => un(UnaryOp::Sqrt),
        Op::Exp => un(UnaryOp::Exp),
        Op::Log => un(UnaryOp::Log),
        Op::Sin => un(UnaryOp::Sin),
        Op::Cos => un(UnaryOp::Cos),
        Op::Sigmoid => un(UnaryOp::Sigmoid),
        Op::Tanh => un(UnaryOp::Tanh),
        Op::Silu => un(UnaryOp::Silu),
        Op::Hardswish => un(UnaryOp::Hardswish),
        Op::LeakyRelu(a) => un(UnaryOp::LeakyRelu {
            slope: a.negative_slope,
        }),
        Op::Elu(a) => un(UnaryOp::Elu { alpha: a.alpha }),
        Op::Selu => un(UnaryOp::Selu),
        Op::Celu(a) if a.alpha != 0.0 => un(UnaryOp::Celu { alpha: a.alpha }),
        Op::Hardsigmoid => un(UnaryOp::Hardsigmoid),
        Op::Softplus(a) => un(UnaryOp::Softplus {
            beta: a.beta,
            threshold: a.threshold,
        }),
        Op::Softsign => un(UnaryOp::Softsign),
        Op::Mish => un(UnaryOp::Mish),
        Op::Erf => un(UnaryOp::Erf),
        Op::Sign => un(UnaryOp::Sign),
        Op::Floor => un(UnaryOp::Floor),
        Op::Ceil => un(UnaryOp::Ceil),
        Op::Round => un(UnaryOp::Round),
        Op::Reciprocal => un(UnaryOp::Reciprocal),
        Op::Gelu(a) => un(a.approximate),
        // Fused chains are f32/f16/bf16: the bounds rounded to f32, as `elementwise::clamp`.
        Op::Clamp(c) => un(UnaryOp::Clamp {
            min: c.min as f32,
            max: c.max as f32,
        }),
        Op::Eq => cmp(CompareOp::Eq),
        Op::Ne => cmp(CompareOp::Ne),
        Op::Lt => cmp(CompareOp::Lt),
        Op::Le => cmp(CompareOp::Le),
        Op::Gt => cmp(CompareOp::Gt),
        Op::Ge => cmp(CompareOp::Ge),
        Op::Where => Some(vec![Instr::Where(args[0], args[1], args[2])]),
        Op::AddRelu => Some(vec![
            Instr::Binary(BinaryOp::Add, args[0], args[1]),
            Instr::Unary(UnaryOp::Relu, base),
        ]),
        Op::MulAdd => Some(vec![
            Instr::Binary(BinaryOp::Mul, args[0], args[1]),
            Instr::Binary(BinaryOp::Add, base, args[2]),
        ]),
        Op::Cast(_) => Some(vec![]),
        _ => None,
    }
}

fn is_elementwise(g: &Graph, n: &Node) -> bool {
    if n.has_effect() || n.outputs.len() != 1 || n.outputs[0].is_none() {
        return false;
    }
    if elementwise_instrs(&n.op, &[0, 0, 0], 0).is_none() {
        return false;
    }
    // Float or bool data only (the program computes in f32).
    let ok = |d: DType| d.is_float() || d == DType::Bool;
    n.inputs.iter().flatten().all(|v| ok(g.values[*v].dtype))
        && ok(g.values[n.outputs[0].unwrap()].dtype)
        && n.inputs.iter().all(|v| v.is_some())
}

/// Fuses chains of two or more elementwise nodes whose intermediate results have no other
/// reader into one [`NodeOp::Fused`] program each. Returns the patterns made (add+relu and
/// mul+add by name, others as "elementwise").
pub fn fuse_elementwise(g: &mut Graph) -> Vec<&'static str> {
    let u = g.use_counts();
    // Groups of node indices, each a chain in node order.
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = vec![];
    for i in 0..g.nodes.len() {
        let n = &g.nodes[i];
        if n.has_effect() {
            // Nothing moves across an effect: close every open chain.
            group_of.clear();
            continue;
        }
        if !is_elementwise(g, n) {
            continue;
        }
        let out = n.outputs[0].unwrap();
        let out_shape = &g.values[out].shape;
        // Join the chain of an input made by an open chain's tail read only here.
        let mut joined = None;
        for v in n.inputs.iter().flatten() {
            if let Some(p) = producer(g, *v)
                && let Some(&gi) = group_of.get(&p)
                && single_use(g, &u, *v)
                && &g.values[*v].shape == out_shape
            {
                joined = Some(gi);
                break;
            }
        }
        let gi = match joined {
            Some(gi) => {
                groups[gi].push(i);
                gi
            }
            None => {
                groups.push(vec![i]);
                groups.len() - 1
            }
        };
        group_of.retain(|_, v| *v != gi);
        group_of.insert(i, gi);
    }
    let mut made = vec![];
    let mut replace: Vec<(Vec<usize>, Node)> = vec![];
    for grp in groups.into_iter().filter(|g| g.len() >= 2) {
        let (prog, inputs, label) = build_program(g, &grp);
        let last = *grp.last().unwrap();
        let node = Node {
            op: NodeOp::Fused {
                prog,
                pattern: label,
            },
            inputs: inputs.into_iter().map(Some).collect(),
            outputs: g.nodes[last].outputs.clone(),
            into: vec![None],
            mutated: vec![],
        };
        made.push(label);
        replace.push((grp, node));
    }
    let mut remove = vec![];
    for (grp, node) in replace {
        let last = *grp.last().unwrap();
        g.nodes[last] = node;
        remove.extend(grp[..grp.len() - 1].iter().copied());
    }
    remove.sort_unstable_by(|a, b| b.cmp(a));
    for k in remove {
        g.nodes.remove(k);
    }
    renumber(g);
    made
}

/// The program of a chain, its external inputs, and its label.
fn build_program(g: &Graph, grp: &[usize]) -> (FusedProgram, Vec<ValueId>, &'static str) {
    let mut instrs: Vec<Instr> = vec![];
    let mut reg: HashMap<ValueId, usize> = HashMap::new();
    let mut inputs: Vec<ValueId> = vec![];
    let mut in_dtypes = vec![];
    for &i in grp {
        let n = &g.nodes[i];
        let mut args = vec![];
        for v in n.inputs.iter().flatten() {
            let r = match reg.get(v) {
                Some(&r) => r,
                None => {
                    inputs.push(*v);
                    in_dtypes.push(g.values[*v].dtype);
                    instrs.push(Instr::Load(inputs.len() - 1));
                    let r = instrs.len() - 1;
                    reg.insert(*v, r);
                    r
                }
            };
            args.push(r);
        }
        let base = instrs.len();
        let body = elementwise_instrs(&n.op, &args, base).expect("checked elementwise");
        let out = n.outputs[0].unwrap();
        let dt = g.values[out].dtype;
        if body.is_empty() {
            // a cast: round to the target dtype
            instrs.push(Instr::Round(dt, args[0]));
        } else {
            instrs.extend(body);
            if dt != DType::F32 {
                let last = instrs.len() - 1;
                instrs.push(Instr::Round(dt, last));
            }
        }
        reg.insert(out, instrs.len() - 1);
    }
    let out = g.nodes[*grp.last().unwrap()].outputs[0].unwrap();
    let names: Vec<&str> = grp
        .iter()
        .map(|&i| match &g.nodes[i].op {
            NodeOp::Op(op) => op.kind().name(),
            _ => "",
        })
        .collect();
    let label = match names.as_slice() {
        ["add", "relu"] => "add+relu",
        ["mul", "add"] => "mul+add",
        _ => "elementwise",
    };
    (
        FusedProgram {
            inputs: in_dtypes,
            instrs,
            out_dtype: g.values[out].dtype,
        },
        inputs,
        label,
    )
}

/// O2: matmul, linear, dense, conv and attention on f32 data run in bf16 (f32 accumulation
/// inside the op), with casts inserted around them; everything else stays as recorded.
pub fn mixed_precision(g: &mut Graph) -> usize {
    let low = DType::BF16;
    let mut changed = 0;
    let mut i = 0;
    while i < g.nodes.len() {
        let allow = match &g.nodes[i].op {
            NodeOp::Op(op) => matches!(
                op,
                Op::Matmul | Op::Linear | Op::Conv(_) | Op::ScaledDotProductAttention(_)
            ),
            NodeOp::Dense { .. } => true,
            _ => false,
        };
        let n = &g.nodes[i];
        let all_f32 = n
            .inputs
            .iter()
            .flatten()
            .all(|v| g.values[*v].dtype == DType::F32);
        if !allow || n.has_effect() || !all_f32 || n.outputs.len() != 1 {
            i += 1;
            continue;
        }
        let Some(out) = n.outputs[0] else {
            i += 1;
            continue;
        };
        // casts of the inputs, before the node
        let mut new_inputs = vec![];
        let mut pre = vec![];
        for v in n.inputs.clone() {
            match v {
                None => new_inputs.push(None),
                Some(v) => {
                    let shape = g.values[v].shape.clone();
                    let c = g.add_value(&shape, low, Source::Node { node: 0, output: 0 });
                    pre.push(Node {
                        op: NodeOp::Op(Op::Cast(attrs::Cast { dtype: low })),
                        inputs: vec![Some(v)],
                        outputs: vec![Some(c)],
                        into: vec![None],
                        mutated: vec![],
                    });
                    new_inputs.push(Some(c));
                }
            }
        }
        let shape = g.values[out].shape.clone();
        let lo_out = g.add_value(&shape, low, Source::Node { node: 0, output: 0 });
        let post = Node {
            op: NodeOp::Op(Op::Cast(attrs::Cast { dtype: DType::F32 })),
            inputs: vec![Some(lo_out)],
            outputs: vec![Some(out)],
            into: vec![None],
            mutated: vec![],
        };
        g.nodes[i].inputs = new_inputs;
        g.nodes[i].outputs = vec![Some(lo_out)];
        let k = pre.len();
        g.nodes.insert(i + 1, post);
        for (j, p) in pre.into_iter().enumerate() {
            g.nodes.insert(i + j, p);
        }
        i += k + 2;
        changed += 1;
    }
    renumber(g);
    changed
}

/// Replaces every read of `from` (node inputs, graph outputs) by `to`.
fn replace_value(g: &mut Graph, from: ValueId, to: ValueId) {
    for n in &mut g.nodes {
        for v in n.inputs.iter_mut().flatten() {
            if *v == from {
                *v = to;
            }
        }
    }
    for o in &mut g.outputs {
        if *o == from {
            *o = to;
        }
    }
}

/// `cast(cast(x, f32), d)` where `x` already has dtype `d` (f16 or bf16, exact in f32) is
/// `x`: the readers of the outer cast read `x` (the inner cast goes when nothing else reads
/// it). Returns how many were removed.
pub fn remove_cast_round_trips(g: &mut Graph) -> usize {
    let mut n = 0;
    for i in 0..g.nodes.len() {
        let node = &g.nodes[i];
        let (NodeOp::Op(Op::Cast(outer)), Some(y), Some(v)) = (
            &node.op,
            node.outputs.first().copied().flatten(),
            node.inputs.first().copied().flatten(),
        ) else {
            continue;
        };
        let Some(p) = producer(g, v) else { continue };
        let inner = &g.nodes[p];
        let (NodeOp::Op(Op::Cast(c)), Some(x)) =
            (&inner.op, inner.inputs.first().copied().flatten())
        else {
            continue;
        };
        let d = g.values[x].dtype;
        if c.dtype == DType::F32 && outer.dtype == d && matches!(d, DType::F16 | DType::BF16) {
            if g.outputs.contains(&y) {
                continue;
            }
            replace_value(g, y, x);
            n += 1;
        }
    }
    n
}

/// Appends a node taking `inputs` to one new value of `shape`/`dtype`; returns the value.
fn push_node(
    g: &mut Graph,
    op: NodeOp,
    inputs: Vec<Option<ValueId>>,
    shape: &[usize],
    dtype: DType,
) -> ValueId {
    let v = g.add_value(shape, dtype, Source::Node { node: 0, output: 0 });
    push(
        g,
        Node {
            op,
            inputs,
            outputs: vec![Some(v)],
            into: vec![None],
            mutated: vec![],
        },
    );
    v
}

/// Appends `n`, its outputs' sources pointing at it.
fn push(g: &mut Graph, n: Node) {
    let i = g.nodes.len();
    for (k, o) in n.outputs.iter().enumerate() {
        if let Some(v) = o {
            g.values[*v].source = Source::Node { node: i, output: k };
        }
    }
    g.nodes.push(n);
}

/// The channels-last value `v` was converted from (`v = to_channels_first(x)`), if any.
fn channels_last_source(g: &Graph, v: ValueId) -> Option<ValueId> {
    let p = producer(g, v)?;
    match &g.nodes.get(p)?.op {
        NodeOp::Op(Op::ToChannelsFirst) => g.nodes[p].inputs[0],
        _ => None,
    }
}

/// O2 where the device runs half-precision convolutions faster on channels-last memory
/// (cuDNN's tensor-core engines: ResNet-50's 3x3 64-channel f16 convolution takes 26 us
/// channels-last against 57 us channels-first on the H100): 2-D f16/bf16 convolutions
/// without a bias run channels-last (`conv_ex` with the layout flag; the weight converted,
/// folded with the constants), their results stay channels-last through the 2-D poolings
/// (`pool_ex` with the layout flag) and elementwise nodes that read them (channel vectors `[C, 1, 1]` read as `[C]`, other full operands
/// converted), and a conversion back is left only where a channels-first reader needs one
/// (pairs of conversions cancel; the dead ones go). Returns how many convolutions changed.
pub fn channels_last(g: &mut Graph) -> usize {
    use crate::ops::conv::{ConvAttrsEx, Layout};
    let dev = g.device.clone();
    let mut convs = 0;
    let old = std::mem::take(&mut g.nodes);
    for n in old {
        // Every node before `n` is in g.nodes with its outputs' sources set (push), so
        // channels_last_source answers for n's inputs.
        if let NodeOp::Op(Op::Conv(a)) = &n.op
            && !n.has_effect()
            && n.outputs.len() == 1
            && let (Some(Some(x)), Some(Some(w)), None, Some(y)) = (
                n.inputs.first().copied(),
                n.inputs.get(1).copied(),
                n.inputs.get(2).copied().flatten(),
                n.outputs[0],
            )
        {
            let dt = g.values[x].dtype;
            let xs = g.values[x].shape.clone();
            let ws = g.values[w].shape.clone();
            let ok = a.params.1 == 2
                && xs.len() == 4
                && matches!(dt, DType::F16 | DType::BF16)
                && matches!(a.activation, Activation::None | Activation::Relu)
                && crate::ops::conv::conv_geom("conv2d", &xs, &ws, &a.params.0, 2).is_ok()
                && dev.has_channels_last_conv();
            if ok {
                let a = a.clone();
                let xl = match channels_last_source(g, x) {
                    Some(v) => v,
                    None => push_node(
                        g,
                        NodeOp::Op(Op::ToChannelsLast),
                        vec![Some(x)],
                        &Layout::last_shape(&xs),
                        dt,
                    ),
                };
                let wl = push_node(
                    g,
                    NodeOp::Op(Op::ToChannelsLast),
                    vec![Some(w)],
                    &Layout::last_shape(&ws),
                    dt,
                );
                let ex = ConvAttrsEx {
                    pad_after: a.params.0.padding.clone(),
                    attrs: a.params.0.clone(),
                    layout: Layout::ChannelsLast,
                };
                let ys = g.values[y].shape.clone();
                let yl = push_node(
                    g,
                    NodeOp::Op(Op::ConvEx(attrs::ConvEx {
                        params: (ex, 2),
                        activation: a.activation,
                    })),
                    vec![Some(xl), Some(wl), None],
                    &Layout::last_shape(&ys),
                    dt,
                );
                push(
                    g,
                    Node {
                        op: NodeOp::Op(Op::ToChannelsFirst),
                        inputs: vec![Some(yl)],
                        outputs: vec![Some(y)],
                        into: vec![None],
                        mutated: vec![],
                    },
                );
                convs += 1;
                continue;
            }
        }
        // A 2-D pooling of a channels-last result pools channels-last.
        if let NodeOp::Op(Op::Pool(pa)) = &n.op
            && pa.params.1 == 2
            && !n.has_effect()
            && n.outputs.len() == 1
            && let (Some(Some(x)), Some(o)) = (n.inputs.first().copied(), n.outputs[0])
            && g.values[x].shape.len() == 4
            && let Some(xl) = channels_last_source(g, x)
        {
            let ex = crate::ops::pool::PoolAttrsEx {
                attrs: pa.params.0.clone(),
                pad_after: pa.params.0.padding.clone(),
                divisor_override: None,
                layout: Layout::ChannelsLast,
            };
            let (os, dt) = (g.values[o].shape.clone(), g.values[o].dtype);
            let ol = push_node(
                g,
                NodeOp::Op(Op::PoolEx(attrs::PoolEx {
                    mode: pa.mode,
                    params: (ex, 2),
                })),
                vec![Some(xl)],
                &Layout::last_shape(&os),
                dt,
            );
            push(
                g,
                Node {
                    op: NodeOp::Op(Op::ToChannelsFirst),
                    inputs: vec![Some(ol)],
                    outputs: vec![Some(o)],
                    into: vec![None],
                    mutated: vec![],
                },
            );
            continue;
        }
        // An elementwise reader of a channels-last result runs channels-last.
        let elementwise = matches!(n.op, NodeOp::Fused { .. }) || is_elementwise(g, &n);
        if convs > 0
            && elementwise
            && n.outputs.len() == 1
            && let Some(o) = n.outputs[0]
            && n.inputs.iter().all(|v| v.is_some())
        {
            let os = g.values[o].shape.clone();
            let kinds: Vec<u8> = n
                .inputs
                .iter()
                .map(|v| {
                    let v = v.unwrap();
                    let s = &g.values[v].shape;
                    let numel: usize = s.iter().product();
                    if os.len() != 4 {
                        9
                    } else if s == &os && channels_last_source(g, v).is_some() {
                        0 // converted from channels-last: read that
                    } else if numel == 1 && s.len() <= 4 {
                        1 // a scalar broadcasts either way
                    } else if s[..] == [os[1], 1, 1] || s[..] == [1, os[1], 1, 1] {
                        2 // a channel vector
                    } else if s == &os {
                        3 // a full channels-first operand: converted
                    } else {
                        9
                    }
                })
                .collect();
            if kinds.contains(&0) && kinds.iter().all(|&k| k < 9) {
                let mut n = n;
                let c = os[1];
                for (slot, kind) in n.inputs.iter_mut().zip(kinds) {
                    let v = slot.unwrap();
                    let dt = g.values[v].dtype;
                    *slot = Some(match kind {
                        0 => channels_last_source(g, v).unwrap(),
                        1 => v,
                        2 => push_node(g, NodeOp::Reshape(vec![c]), vec![Some(v)], &[c], dt),
                        _ => push_node(
                            g,
                            NodeOp::Op(Op::ToChannelsLast),
                            vec![Some(v)],
                            &Layout::last_shape(&os),
                            dt,
                        ),
                    });
                }
                let dt = g.values[o].dtype;
                let ol = g.add_value(
                    &Layout::last_shape(&os),
                    dt,
                    Source::Node { node: 0, output: 0 },
                );
                n.outputs = vec![Some(ol)];
                push(g, n);
                push(
                    g,
                    Node {
                        op: NodeOp::Op(Op::ToChannelsFirst),
                        inputs: vec![Some(ol)],
                        outputs: vec![Some(o)],
                        into: vec![None],
                        mutated: vec![],
                    },
                );
                continue;
            }
        }
        push(g, n);
    }
    // (push kept every output's source current: no renumbering needed.)
    // to_channels_last(to_channels_first(x)) is x.
    for i in 0..g.nodes.len() {
        if let (NodeOp::Op(Op::ToChannelsLast), Some(Some(v)), Some(Some(y))) = (
            &g.nodes[i].op,
            g.nodes[i].inputs.first().copied(),
            g.nodes[i].outputs.first().copied(),
        ) && let Some(x) = channels_last_source(g, v)
            && !g.outputs.contains(&y)
        {
            replace_value(g, y, x);
        }
    }
    convs
}
