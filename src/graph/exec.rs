//! The executor: a graph compiled for its device at a level, run any number of times.
//!
//! - O0 runs the nodes as recorded, one op call each, results from the caching allocator.
//! - O1 removes dead nodes, folds parameter-only subgraphs, rewrites the seed's fused
//!   patterns, fuses elementwise chains into one program each, and plans memory: the
//!   intermediates live in one arena ([`super::plan`]).
//! - O2 is O1 after [`super::passes::mixed_precision`] where the device runs bf16 products
//!   faster than f32 ones (GPUs; not the CPU device: [`crate::device::Device::faster_in_bf16`]),
//!   with [`super::passes::channels_last`] where the device runs half-precision convolutions
//!   faster channels-last.
//! - O3 is O2 replayed as a device graph (CUDA graph / hipGraph) on a non-default stream,
//!   captured on the second run of a plan (the first warms caches and compiles kernels) and
//!   kept per set of input/output addresses, so a replay copies nothing it does not have to;
//!   where the device has no graphs it runs the O2 plan and says so in the stats.
//!
//! Plans are cached per list of input shapes. A shape never seen re-plans: the recorded
//! nodes run once as at O0 (that run's results are returned), which gives every value its
//! shape, and the next run uses the new plan.

use super::passes;
use super::plan::{self, MemoryPlan};
use super::{Graph, NodeOp, Source};
use crate::device::Device;
use crate::runtime::eager::Grad;
use crate::runtime::{DType, Stream, Tensor};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Instant;

/// How an executor compiles and runs its graph.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// 0..=3.
    pub opt_level: u32,
    /// Time every node (each is synchronized) and report it to the profiler.
    pub enable_profiling: bool,
    /// Synchronize the stream after every node (to find the node that fails).
    pub sync_after_launch: bool,
    /// Upper bound on the planned arena in MiB (0: no bound).
    pub workspace_size_mb: usize,
    /// Keep f32 ops in f32 at O2 and O3 (no mixed precision; O3 is then O1 + replay).
    pub keep_fp32: bool,
    /// Let this executor's f32 products use TF32 (as the process-wide
    /// `device::blas::set_allow_tf32`, which also applies when this is false).
    pub allow_tf32: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            opt_level: 1,
            enable_profiling: false,
            sync_after_launch: false,
            workspace_size_mb: 0,
            keep_fp32: false,
            allow_tf32: false,
        }
    }
}

/// What the executor did to its graph and what a run costs.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub nodes_recorded: usize,
    pub nodes_optimized: usize,
    pub dead_removed: usize,
    pub folded: usize,
    pub mixed_precision_nodes: usize,
    /// Fused groups by pattern name.
    pub fused: Vec<(String, usize)>,
    /// Op calls per run (reshape views not counted; a library op may launch more than one
    /// kernel).
    pub launches_per_run: usize,
    pub planned_peak_bytes: usize,
    pub intermediate_bytes: usize,
    pub in_place: usize,
    pub plan_ms: f64,
    pub plans: usize,
    pub runs: u64,
    pub replays: u64,
    /// Whether runs replay a device graph.
    pub device_graph: bool,
    /// Why not, where not.
    pub device_graph_note: String,
    /// Per node of the last profiled run: name and milliseconds.
    pub node_ms: Vec<(String, f64)>,
}

struct DeviceGraph {
    key: Vec<u64>,
    handle: u64,
}

struct Plan {
    graph: Graph,
    mem: Option<MemoryPlan>,
    arena: Option<Tensor>,
    /// Fixed buffers of the graph outputs (O3: the device graph writes them).
    out_bufs: Vec<Tensor>,
    runs: AtomicU32,
    graphs: Mutex<Vec<DeviceGraph>>,
    graph_error: Mutex<Option<String>>,
}

impl Drop for Plan {
    fn drop(&mut self) {
        for g in self.graphs.get_mut().drain(..) {
            self.graph.device.graph_destroy(g.handle);
        }
    }
}

/// A graph compiled for a device and a level.
pub struct Executor {
    graph: Graph,
    config: Config,
    plans: Mutex<HashMap<Vec<Vec<usize>>, Arc<Plan>>>,
    busy: AtomicBool,
    stats: Mutex<Stats>,
}

fn shapes_of(g: &Graph) -> Vec<Vec<usize>> {
    g.inputs
        .iter()
        .map(|v| g.values[*v].shape.clone())
        .collect()
}

impl Executor {
    /// Compiles `graph` (which must have an output or write a real tensor, e.g. a training
    /// step that updates its parameters) at `config.opt_level`; the
    /// plan for the recorded input shapes is made now.
    pub fn new(graph: Graph, config: Config) -> Result<Self> {
        let _tf32 = config
            .allow_tf32
            .then(|| crate::device::blas::tf32_scope(true));
        if config.opt_level > 3 {
            return Err(Error::invalid(format!(
                "rb_executor_create: opt_level {} is not 0, 1, 2 or 3",
                config.opt_level
            )));
        }
        if graph.outputs.is_empty() && !graph.nodes.iter().any(|n| n.has_effect()) {
            return Err(Error::invalid(
                "rb_executor_create: the graph has no outputs (rb_graph_mark_output) and \
                 writes no tensor: running it would do nothing",
            ));
        }
        let e = Executor {
            graph,
            config,
            plans: Mutex::new(HashMap::new()),
            busy: AtomicBool::new(false),
            stats: Mutex::new(Stats::default()),
        };
        let key = shapes_of(&e.graph);
        let p = e.make_plan(e.graph.clone(), None)?;
        e.plans.lock().insert(key, Arc::new(p));
        Ok(e)
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.graph.device
    }

    pub fn config(&self) -> Config {
        self.config
    }

    pub fn stats(&self) -> Stats {
        self.stats.lock().clone()
    }

    /// Drops every plan (folded constants are computed again at the next run).
    pub fn invalidate(&self) {
        self.plans.lock().clear();
    }

    fn make_plan(&self, mut g: Graph, stream: Option<&Stream>) -> Result<Plan> {
        let t0 = Instant::now();
        let level = self.config.opt_level;
        let mut st = Stats {
            nodes_recorded: g.nodes.len(),
            ..Default::default()
        };
        let mut folded_first = vec![];
        if level >= 2 && !self.config.keep_fp32 && g.device.faster_in_bf16() {
            // Batch norms after convolutions fold first (the shift an elementwise add), so
            // that no f32 batch norm sits between a bf16 convolution and its readers.
            folded_first = passes::fold_conv_bn(&mut g, true)?;
            // Before the patterns: the products go to the BLAS/DNN library in bf16 and
            // their bias and activation into the elementwise chains (measured faster on an
            // H100 than a bf16 dense node with its epilogue: the MLP replays in 16 us against
            // 25 us); bf16 -> f32 -> bf16 round trips between them go.
            st.mixed_precision_nodes = passes::mixed_precision(&mut g);
            passes::remove_cast_round_trips(&mut g);
        }
        if level >= 1 {
            st.dead_removed = passes::eliminate_dead(&mut g);
            st.folded = passes::fold_constants(&mut g, stream)?;
            // conv+bn(+relu) on constant parameters folded now (labels "conv+bn+relu" and
            // "conv+bn"), then the seed's patterns and the elementwise chains.
            let mut folded = passes::fold_conv_bn(&mut g, false)?;
            folded.append(&mut folded_first);
            // A training step's relu backward reads the relu's output, so its product's
            // output has the relu as its only reader and the relu fuses into it.
            passes::relu_backward_reads_output(&mut g);
            let pats = passes::fuse_patterns(&mut g);
            let residual = passes::fuse_conv_residual(&mut g);
            let on = |label: &str| !passes::skipped(label);
            let groups = on("linear_groups").then(|| passes::fuse_linear_groups(&mut g));
            // A norm of a product's result first joins that product (normalized once, after
            // it: passes::fuse_linear_add_norm); the norms left fold into their groups.
            let add_norm = on("linear+add+rms_norm").then(|| passes::fuse_linear_add_norm(&mut g));
            let norm_groups = on("rms_norm+linear").then(|| passes::fuse_norm_into_groups(&mut g));
            let rope_store = on("rope+store").then(|| passes::fuse_rope_store(&mut g));
            let linear_rope =
                on("linear+rope+store").then(|| passes::fuse_linear_rope_store(&mut g));
            let relu_bwd = passes::fuse_relu_linear_backward(&mut g);
            let sgd = passes::group_sgd_steps(&mut g);
            let chains = passes::fuse_elementwise(&mut g);
            // O2: half-precision convolutions channels-last where the device is faster so;
            // the weights' conversions fold with the constants, unread conversions go.
            let cl = if level >= 2 {
                passes::channels_last(&mut g)
            } else {
                0
            };
            if cl > 0 {
                st.folded += passes::fold_constants(&mut g, stream)?;
                st.dead_removed += passes::eliminate_dead(&mut g);
            }
            // O2: convolution weights packed in the device's own layout, once.
            let packed = if level >= 2 {
                passes::pack_conv_weights(&mut g, stream)?
            } else {
                0
            };
            // and the values between them in the blocked layout where the device takes it
            let blocked = if packed > 0 && on("blocked_layout") {
                passes::block_conv_layouts(&mut g) + passes::block_pool_layouts(&mut g)
            } else {
                0
            };
            let mut counts: Vec<(String, usize)> = vec![];
            for name in folded
                .into_iter()
                .chain(pats.iter().map(|p| p.name()))
                .chain(residual)
                .chain(groups.into_iter().flatten())
                .chain(norm_groups.into_iter().flatten())
                .chain(add_norm.into_iter().flatten())
                .chain(rope_store.into_iter().flatten())
                .chain(linear_rope.into_iter().flatten())
                .chain(relu_bwd)
                .chain(std::iter::repeat_n("sgd_step group", sgd))
                .chain(chains)
            {
                match counts.iter_mut().find(|(n, _)| n == name) {
                    Some(c) => c.1 += 1,
                    None => counts.push((name.to_string(), 1)),
                }
            }
            if cl > 0 {
                counts.push(("channels-last conv".to_string(), cl));
            }
            if packed > 0 {
                counts.push(("packed conv weights".to_string(), packed));
            }
            if blocked > 0 {
                counts.push(("blocked conv layout".to_string(), blocked));
            }
            let settled = passes::settle_weights(&mut g);
            if settled > 0 {
                counts.push(("settled weights".to_string(), settled));
            }
            let fresh = on("settled_attention").then(|| passes::settle_attention(&mut g));
            if let Some(fresh) = fresh.filter(|&n| n > 0) {
                counts.push(("settled attention".to_string(), fresh));
            }
            st.fused = counts;
        }
        st.nodes_optimized = g.nodes.len();
        st.launches_per_run = g
            .nodes
            .iter()
            .filter(|n| !matches!(n.op, NodeOp::Reshape(_)))
            .count();
        let m = plan::plan(&g);
        st.intermediate_bytes = m.intermediate_bytes;
        let (mem, arena) = if level >= 1 {
            if self.config.workspace_size_mb > 0
                && m.arena_bytes > self.config.workspace_size_mb << 20
            {
                return Err(Error::oom(format!(
                    "rb_executor: the memory plan needs {} bytes, more than workspace_size_mb = {}",
                    m.arena_bytes, self.config.workspace_size_mb
                )));
            }
            let a = Tensor::empty(g.device.clone(), &[m.arena_bytes / 4], DType::F32)?;
            st.planned_peak_bytes = m.arena_bytes;
            st.in_place = m.in_place;
            (Some(m), Some(a))
        } else {
            (None, None)
        };
        let out_bufs = if level >= 3 {
            g.outputs
                .iter()
                .map(|v| Tensor::empty(g.device.clone(), &g.values[*v].shape, g.values[*v].dtype))
                .collect::<Result<Vec<_>>>()?
        } else {
            vec![]
        };
        st.plan_ms = t0.elapsed().as_secs_f64() * 1e3;
        st.device_graph_note = match level {
            3 => "captured at the second run on a non-default stream".into(),
            _ => format!("O{level}: no device graph"),
        };
        {
            let mut s = self.stats.lock();
            let (runs, replays, plans) = (s.runs, s.replays, s.plans + 1);
            *s = Stats {
                runs,
                replays,
                plans,
                ..st
            };
        }
        Ok(Plan {
            graph: g,
            mem,
            arena,
            out_bufs,
            runs: AtomicU32::new(0),
            graphs: Mutex::new(vec![]),
            graph_error: Mutex::new(None),
        })
    }

    /// Runs the graph on `inputs` (one per graph input, in order) and returns its outputs.
    /// `dests[i]`, when given, receives output `i` (same shape and dtype) and is returned.
    pub fn run(
        &self,
        stream: Option<&Stream>,
        inputs: &[&Tensor],
        dests: &[Option<&Tensor>],
    ) -> Result<Vec<Tensor>> {
        if self
            .busy
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return Err(Error::invalid(
                "rb_executor_run: the executor is running on another thread (an executor runs \
                 one call at a time; make one per thread)",
            ));
        }
        struct Release<'a>(&'a AtomicBool);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _release = Release(&self.busy);
        let _tf32 = self
            .config
            .allow_tf32
            .then(|| crate::device::blas::tf32_scope(true));
        // O3 tunes exhaustively: every algorithm a convolution could use is timed once per
        // problem (through the tuning cache, on the library's own stream and buffers).
        if self.config.opt_level >= 3 {
            crate::device::tuning::exhaustive_scope(true, || self.run_inner(stream, inputs, dests))
        } else {
            self.run_inner(stream, inputs, dests)
        }
    }

    fn run_inner(
        &self,
        stream: Option<&Stream>,
        inputs: &[&Tensor],
        dests: &[Option<&Tensor>],
    ) -> Result<Vec<Tensor>> {
        self.check_inputs(stream, inputs, dests)?;
        let key: Vec<Vec<usize>> = inputs.iter().map(|t| t.shape().to_vec()).collect();
        let plan = self.plans.lock().get(&key).cloned();
        self.stats.lock().runs += 1;
        let Some(plan) = plan else {
            // A new shape: run as recorded (the results), learning every value's shape.
            let mut g = self.graph.clone();
            let (outs, shapes) = run_nodes(&g, None, stream, inputs, dests, &self.config, None)?;
            for (v, s) in shapes.into_iter().enumerate() {
                if let Some((shape, dtype)) = s {
                    g.values[v].shape = shape;
                    g.values[v].dtype = dtype;
                }
            }
            for (i, v) in g.inputs.clone().into_iter().enumerate() {
                g.values[v].shape = inputs[i].shape().to_vec();
            }
            let p = self.make_plan(g, stream)?;
            self.plans.lock().insert(key, Arc::new(p));
            return Ok(outs);
        };
        let n = plan.runs.fetch_add(1, Ordering::Relaxed);
        if self.config.opt_level >= 3
            && n >= 1
            && !self.config.enable_profiling
            && let Some(r) = self.replay(&plan, stream, inputs, dests)?
        {
            return Ok(r);
        }
        let mut node_ms = vec![];
        let prof = self.config.enable_profiling.then_some(&mut node_ms);
        let mem = plan.mem.as_ref().zip(plan.arena.as_ref());
        let (outs, _) = run_nodes(&plan.graph, mem, stream, inputs, dests, &self.config, prof)?;
        if self.config.enable_profiling {
            self.stats.lock().node_ms = node_ms;
        }
        Ok(outs)
    }

    fn check_inputs(
        &self,
        stream: Option<&Stream>,
        inputs: &[&Tensor],
        dests: &[Option<&Tensor>],
    ) -> Result<()> {
        let g = &self.graph;
        if inputs.len() != g.inputs.len() {
            return Err(Error::invalid(format!(
                "rb_executor_run: {} inputs given, the graph has {}",
                inputs.len(),
                g.inputs.len()
            )));
        }
        if dests.len() != g.outputs.len() {
            return Err(Error::invalid(format!(
                "rb_executor_run: {} outputs given, the graph has {}",
                dests.len(),
                g.outputs.len()
            )));
        }
        if let Some(s) = stream
            && !crate::runtime::tensor::same_device(s.device(), &g.device)
        {
            return Err(Error::invalid(format!(
                "rb_executor_run: the stream is on {}, the graph on {}",
                s.device().name(),
                g.device.name()
            )));
        }
        for (i, (t, v)) in inputs.iter().zip(&g.inputs).enumerate() {
            let val = &g.values[*v];
            if !crate::runtime::tensor::same_device(t.device(), &g.device) {
                return Err(Error::invalid(format!(
                    "rb_executor_run: input {i} is on {}, the graph on {}",
                    t.device().name(),
                    g.device.name()
                )));
            }
            if t.dtype() != val.dtype {
                return Err(Error::dtype(format!(
                    "rb_executor_run: input {i} has dtype {}, the graph's input {}",
                    t.dtype(),
                    val.dtype
                )));
            }
            if t.shape().len() != val.shape.len() {
                return Err(Error::shape(format!(
                    "rb_executor_run: input {i} has rank {} (shape {:?}), the graph's input {:?}",
                    t.shape().len(),
                    t.shape(),
                    val.shape
                )));
            }
        }
        Ok(())
    }

    /// O3: replays the device graph for these addresses (capturing it first if needed).
    /// `None`: no device graph here (the caller runs the plan).
    fn replay(
        &self,
        plan: &Plan,
        stream: Option<&Stream>,
        inputs: &[&Tensor],
        dests: &[Option<&Tensor>],
    ) -> Result<Option<Vec<Tensor>>> {
        let Some(s) = stream else {
            self.note("device graphs need a non-default stream: ran the O2 plan");
            return Ok(None);
        };
        if s.raw() == crate::device::RawStream::DEFAULT {
            self.note("device graphs need a non-default stream: ran the O2 plan");
            return Ok(None);
        }
        if let Some(e) = plan.graph_error.lock().clone() {
            self.note(&e);
            return Ok(None);
        }
        let dev = plan.graph.device.clone();
        let mut key: Vec<u64> = inputs.iter().map(|t| t.ptr().0).collect();
        key.extend(dests.iter().map(|d| d.map_or(0, |t| t.ptr().0)));
        let found = plan
            .graphs
            .lock()
            .iter()
            .find(|g| g.key == key)
            .map(|g| g.handle);
        let handle = match found {
            Some(h) => h,
            None => {
                // Capture: every output goes to a fixed buffer (a given destination, or the
                // plan's own) and nothing allocated during the capture is freed to the pool.
                let fixed: Vec<Option<&Tensor>> = dests
                    .iter()
                    .zip(&plan.out_bufs)
                    .map(|(d, b)| (*d).or(Some(b)))
                    .collect();
                if let Err(e) = dev.graph_capture_begin(s.raw()) {
                    let msg = format!("device graph capture unavailable ({e}): ran the O2 plan");
                    *plan.graph_error.lock() = Some(msg.clone());
                    self.note(&msg);
                    return Ok(None);
                }
                let mem = plan.mem.as_ref().zip(plan.arena.as_ref());
                let r = run_nodes(&plan.graph, mem, stream, inputs, &fixed, &self.config, None);
                let r = r.map(drop);
                let end = dev.graph_capture_end(s.raw());
                let h = match (r, end) {
                    (Ok(()), Ok(h)) => h,
                    (Err(e), Ok(h)) => {
                        // A node that cannot be captured (or a real error, which the
                        // uncaptured run then reports).
                        dev.graph_destroy(h);
                        let msg = format!(
                            "a node failed while capturing ({e}): runs the O2 plan instead"
                        );
                        *plan.graph_error.lock() = Some(msg.clone());
                        self.note(&msg);
                        return Ok(None);
                    }
                    (_, Err(e)) => {
                        let msg =
                            format!("device graph capture failed ({e}): runs the O2 plan instead");
                        *plan.graph_error.lock() = Some(msg.clone());
                        self.note(&msg);
                        return Ok(None);
                    }
                };
                let mut gs = plan.graphs.lock();
                if gs.len() >= 4 {
                    let old = gs.remove(0);
                    dev.graph_destroy(old.handle);
                }
                gs.push(DeviceGraph { key, handle: h });
                h
            }
        };
        dev.graph_launch(handle, s.raw())?;
        // Outputs without a destination are copied out of the plan's buffers.
        let mut outs = vec![];
        for (d, b) in dests.iter().zip(&plan.out_bufs) {
            match d {
                Some(t) => outs.push((*t).clone()),
                None => {
                    let t = Tensor::empty(dev.clone(), b.shape(), b.dtype())?;
                    if t.nbytes() > 0 {
                        dev.copy_d2d(b.ptr(), t.ptr(), t.nbytes(), s.raw())?;
                    }
                    outs.push(t);
                }
            }
        }
        let mut st = self.stats.lock();
        st.replays += 1;
        st.device_graph = true;
        st.device_graph_note = "replayed as a device graph".into();
        Ok(Some(outs))
    }

    fn note(&self, msg: &str) {
        let mut st = self.stats.lock();
        st.device_graph = false;
        st.device_graph_note = msg.to_string();
    }
}

type Shapes = Vec<Option<(Vec<usize>, DType)>>;

/// Runs `g`'s nodes in order: intermediates in `mem`'s arena where planned, else from the
/// allocator. Returns the outputs and every value's shape.
fn run_nodes(
    g: &Graph,
    mem: Option<(&MemoryPlan, &Tensor)>,
    stream: Option<&Stream>,
    inputs: &[&Tensor],
    dests: &[Option<&Tensor>],
    config: &Config,
    mut prof: Option<&mut Vec<(String, f64)>>,
) -> Result<(Vec<Tensor>, Shapes)> {
    let nv = g.values.len();
    let mut vals: Vec<Option<Tensor>> = vec![None; nv];
    for (v, val) in g.values.iter().enumerate() {
        match &val.source {
            Source::Input(i) => vals[v] = Some(inputs[*i].clone()),
            Source::Param(t) => vals[v] = Some(t.clone()),
            Source::Node { .. } => {}
        }
    }
    let mut dest_of: HashMap<usize, &Tensor> = HashMap::new();
    for (o, d) in g.outputs.iter().zip(dests) {
        if let Some(d) = d {
            let val = &g.values[*o];
            if d.shape() != val.shape.as_slice() || d.dtype() != val.dtype {
                return Err(Error::shape(format!(
                    "rb_executor_run: an output destination has shape {:?} {}, the output {:?} {}",
                    d.shape(),
                    d.dtype(),
                    val.shape,
                    val.dtype
                )));
            }
            dest_of.insert(*o, d);
        }
    }
    let sync = |s: Option<&Stream>| match s {
        Some(s) => s.synchronize(),
        None => g.device.synchronize(),
    };
    for n in &g.nodes {
        let ins: Vec<Option<Tensor>> =
            n.inputs
                .iter()
                .map(|v| match v {
                    None => Ok(None),
                    Some(v) => vals[*v].clone().map(Some).ok_or_else(|| {
                        Error::internal(format!("graph value {v} used before made"))
                    }),
                })
                .collect::<Result<_>>()?;
        let mut targets: Vec<Option<Tensor>> = vec![];
        for (k, o) in n.outputs.iter().enumerate() {
            let t = match o {
                None => None,
                Some(o) => match (&n.into[k], dest_of.get(o), mem) {
                    (Some(t), _, _) => Some(t.clone()),
                    (None, Some(d), _) => Some((*d).clone()),
                    (None, None, Some((m, arena))) => match m.offsets.get(*o).copied().flatten() {
                        Some(off) if !matches!(n.op, NodeOp::Reshape(_)) => {
                            let val = &g.values[*o];
                            Some(Tensor::view_at(arena, off, &val.shape, val.dtype)?)
                        }
                        _ => None,
                    },
                    _ => None,
                },
            };
            targets.push(t);
        }
        let grads: Vec<Grad<'_>> = n
            .outputs
            .iter()
            .zip(&targets)
            .map(|(o, t)| match (o, t) {
                (None, _) => Grad::Skip,
                (Some(_), Some(t)) => Grad::Into(t),
                (Some(_), None) => Grad::New,
            })
            .collect();
        let t0 = prof.is_some().then(|| {
            let _ = sync(stream);
            Instant::now()
        });
        let res = passes::run_node(stream, &n.op, &ins, &grads)
            .map_err(|e| e.context(&format!("graph node {}", n.op.name())))?;
        if config.sync_after_launch {
            sync(stream).map_err(|e| e.context(&format!("graph node {}", n.op.name())))?;
        }
        if let (Some(t0), Some(p)) = (t0, prof.as_deref_mut()) {
            sync(stream)?;
            let ms = t0.elapsed().as_secs_f64() * 1e3;
            let name = n.op.name();
            crate::device::gpu::profiler::profiler().record(&format!("graph/{name}"), ms);
            p.push((name, ms));
        }
        for (k, o) in n.outputs.iter().enumerate() {
            let Some(o) = o else { continue };
            let r = res.get(k).cloned().flatten();
            vals[*o] = match (r, &targets[k]) {
                (Some(r), _) => Some(r),
                (None, Some(t)) => Some(t.clone()),
                (None, None) => {
                    return Err(Error::internal(format!(
                        "graph node {} made no output {k}",
                        n.op.name()
                    )));
                }
            };
        }
    }
    let mut outs = vec![];
    for o in &g.outputs {
        let t = vals[*o]
            .clone()
            .ok_or_else(|| Error::internal("a graph output was not made"))?;
        // An output in the arena (a view of an input that is planned) is copied out.
        let t = match mem {
            Some((_, arena)) if t.storage_id() == arena.storage_id() => {
                let c = Tensor::empty(t.device().clone(), t.shape(), t.dtype())?;
                if t.nbytes() > 0 {
                    let raw = stream.map(|s| s.raw()).unwrap_or_default();
                    t.device().copy_d2d(t.ptr(), c.ptr(), t.nbytes(), raw)?;
                }
                c
            }
            _ => t,
        };
        outs.push(t);
    }
    let shapes = vals
        .iter()
        .map(|t| t.as_ref().map(|t| (t.shape().to_vec(), t.dtype())))
        .collect();
    Ok((outs, shapes))
}
