//! Graphs and executors (DESIGN §5, item 3): record the eager calls made on a stream into a
//! graph, compile it for a level (O0..O3) and run it any number of times on new inputs.
//!
//! A graph is recorded between `rb_graph_capture_begin` and `rb_graph_capture_end`: every
//! eager op called on that stream becomes a node whose results are placeholders (tensors
//! with a shape and a dtype whose data is not the graph's; they are the graph's values).
//! Real tensors used while recording are parameters, bound by reference. Each recorded call
//! is also run once, on the placeholders' recording-time storage, so that it gets the eager
//! op's own checks and shape inference; real tensors it would write are not touched (the
//! node writes them when the graph runs). Calls that cannot be recorded fail, naming the
//! call, and leave the graph as it was: copying a placeholder to the host, synchronizing the
//! recorded stream, using a placeholder on another stream or outside the recording, an
//! event recorded on or waited for by the recorded stream, and `rb_function_launch` (its
//! arguments come without their sizes).
//!
//! The raw entry points (`rb_blas_*`, `rb_dnn_*`, `rb_kernel_*`) called on the recorded
//! stream are recorded as well: each is checked while recording (nothing reaches the
//! device), then runs at every executor run, in recording order with the other nodes (a
//! raw call is a barrier nothing moves across, and a graph holding one folds no
//! parameter), on the caller's pointers, bound by reference like parameters; host arrays
//! (shapes, descriptors) are copied. A pointer into a placeholder is INVALID_ARGUMENT: a
//! placeholder's memory is the recording's, not the run's.

use super::handles::{Castable, arc, arc_opt, new_handle, release};
use super::status::{guard, rb_status};
use super::stream::rb_stream;
use super::tensor::rb_tensor;
use super::util::{check_out, cstr, cstr_opt, dtype_arg, null, shape_arg, write_out, write_text};
use crate::Error;
use crate::graph::capture::GraphHandle;
use crate::graph::exec::{Config, Executor};
use crate::graph::passes::{FusedPattern, can_fuse};
use crate::runtime::{Tensor, context};
use std::ffi::c_char;
use std::fmt::Write as _;

/// An opaque graph handle.
pub struct rb_graph {
    _private: [u8; 0],
}

/// An opaque executor handle.
pub struct rb_executor {
    _private: [u8; 0],
}

impl Castable for rb_graph {
    type Rust = GraphHandle;
}
impl Castable for rb_executor {
    type Rust = Executor;
}

/// The seed's fused patterns (`FusedOpType`), as `rb_can_fuse` and the executor's stats
/// name them.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum rb_fused_op {
    None = 0,
    MatmulBias = 1,
    MatmulBiasRelu = 2,
    MatmulBiasGelu = 3,
    ConvBias = 4,
    ConvBiasRelu = 5,
    ConvBnRelu = 6,
    AddRelu = 7,
    MulAdd = 8,
}

/// How an executor compiles and runs its graph (`rb_executor_config_default` fills the
/// defaults: the graph's device, O1, no profiling, no sync, no arena bound, mixed precision
/// at O2+).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct rb_executor_config {
    /// A device string, or NULL for the device the graph was recorded on (an executor runs
    /// there; another device is RB_STATUS_UNSUPPORTED).
    pub device: *const c_char,
    /// 0: as recorded; 1: + dead code, folding, fusion, memory plan; 2: + mixed precision
    /// (bf16 matmul/conv/attention with f32 accumulation, on GPUs: the CPU device keeps
    /// them f32); 3: + device-graph replay.
    pub opt_level: i32,
    /// Time every node (synchronizing each) into `rb_executor_stats_string` and the profiler.
    pub enable_profiling: bool,
    /// Synchronize after every node (a failing node is then named by its error).
    pub sync_after_launch: bool,
    /// Bound on the planned arena in MiB; 0 for none. A plan over it is
    /// RB_STATUS_OUT_OF_MEMORY.
    pub workspace_size_mb: usize,
    /// Keep f32 ops in f32 at O2 and O3 (no mixed precision: O3 is then O1 + replay).
    pub keep_fp32: bool,
    /// Let this executor's f32 products (matmul, linear, bmm) use TF32 tensor cores on
    /// NVIDIA, as `rb_set_allow_tf32` does for the whole process (which also applies when
    /// this is false). Default false: exact f32. Added after `keep_fp32` (in its padding: the
    /// struct's size is unchanged); fill the struct with `rb_executor_config_default` first.
    pub allow_tf32: bool,
}

/// What an executor did with its graph, for its latest plan.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rb_executor_stats {
    /// Nodes as recorded, and after the level's passes.
    pub nodes_recorded: usize,
    pub nodes_optimized: usize,
    pub dead_removed: usize,
    pub folded: usize,
    pub mixed_precision_nodes: usize,
    /// Fused groups: all, and per seed pattern (index: `rb_fused_op`); chains of other
    /// elementwise ops are in `fused_elementwise`.
    pub fused_groups: usize,
    pub fused_by_pattern: [usize; 9],
    pub fused_elementwise: usize,
    /// Op calls per run (a library op may launch more than one kernel).
    pub launches_per_run: usize,
    /// The planned arena (O1+) and the sum of all intermediates' sizes.
    pub planned_peak_bytes: u64,
    pub intermediate_bytes: u64,
    /// Outputs planned in place over a dying input.
    pub in_place: usize,
    pub plan_ms: f64,
    pub plans: usize,
    pub runs: u64,
    /// Runs served by replaying a device graph (O3).
    pub replays: u64,
    pub device_graph: bool,
}

fn pattern_code(name: &str) -> Option<usize> {
    use FusedPattern::*;
    [
        MatmulBias,
        MatmulBiasRelu,
        MatmulBiasGelu,
        ConvBias,
        ConvBiasRelu,
        ConvBnRelu,
        AddRelu,
        MulAdd,
    ]
    .iter()
    // a batch norm folded into a convolution's weight and bias is a conv+bias
    .find(|p| p.name() == name || (name == "conv+bn" && **p == ConvBias))
    .map(|p| *p as usize)
}

/// Makes an empty graph for `device` (a device string, or NULL for the current device).
///
/// On success `*out` is a new handle the caller owns (`rb_graph_destroy`). Fails with
/// RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT or RB_STATUS_DEVICE_UNAVAILABLE;
/// `*out` is then unchanged. Thread-safe; a graph may be used from one thread at a time
/// while recording, from any thread afterwards.
///
/// # Safety
/// `device` is NULL or NUL-terminated; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_create(
    device: *const c_char,
    out: *mut *mut rb_graph,
) -> rb_status {
    guard("rb_graph_create", || {
        check_out(out, "out")?;
        let d = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
        unsafe { write_out(out, "out", new_handle(GraphHandle::new(d))) }
    })
}

/// Destroys a graph (a capture in progress ends). Its placeholders stay valid handles but
/// are ordinary tensors from then on; executors made from it are independent of it. NULL is
/// a no-op; a stale handle is RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_destroy(graph: *mut rb_graph) -> rb_status {
    guard("rb_graph_destroy", || {
        if let Some(g) = arc_opt(graph, "graph")? {
            g.abandon();
        }
        release(graph, "graph")
    })
}

/// Adds a graph input of `shape` (`ndim` extents) and `dtype`; `*out` receives its
/// placeholder, a new tensor handle the caller owns (zero-filled, on the graph's device).
/// Inputs are numbered in the order they are added; `rb_executor_run` takes them so.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (bad dtype or extent) or RB_STATUS_OUT_OF_MEMORY; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `shape` is readable for `ndim` values; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_input(
    graph: *mut rb_graph,
    shape: *const i64,
    ndim: usize,
    dtype: i32,
    out: *mut *mut rb_tensor,
) -> rb_status {
    guard("rb_graph_input", || {
        let g = arc(graph, "graph")?;
        check_out(out, "out")?;
        let shape = unsafe { shape_arg(shape, ndim, "shape") }?;
        let dtype = dtype_arg(dtype)?;
        let t = g.input(&shape, dtype)?;
        unsafe { write_out(out, "out", new_handle(t)) }
    })
}

/// Starts recording: from now on the eager and raw calls made on `stream` (which must be on
/// the graph's device and not NULL) are recorded into `graph` (see the module notes). A graph records one stream at a
/// time, a stream is recorded by one graph at a time.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or
/// RB_STATUS_INVALID_ARGUMENT (another device, already recording). Thread-safe.
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_capture_begin(
    graph: *mut rb_graph,
    stream: *mut rb_stream,
) -> rb_status {
    guard("rb_graph_capture_begin", || {
        let g = arc(graph, "graph")?;
        let s = arc(stream, "stream")?;
        g.capture_begin(&s)
    })
}

/// Stops recording `stream`. Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or
/// RB_STATUS_INVALID_ARGUMENT (the graph is not recording this stream). Thread-safe.
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_capture_end(
    graph: *mut rb_graph,
    stream: *mut rb_stream,
) -> rb_status {
    guard("rb_graph_capture_end", || {
        let g = arc(graph, "graph")?;
        let s = arc(stream, "stream")?;
        g.capture_end(&s)
    })
}

/// Marks `tensor` (a placeholder a recorded call produced) as the graph's next output;
/// `*index` (when not NULL) receives its position among the outputs.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or
/// RB_STATUS_INVALID_ARGUMENT (not a result of this graph). Thread-safe.
///
/// # Safety
/// `index` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_mark_output(
    graph: *mut rb_graph,
    tensor: *const rb_tensor,
    index: *mut usize,
) -> rb_status {
    guard("rb_graph_mark_output", || {
        let g = arc(graph, "graph")?;
        let t = arc(tensor, "tensor")?;
        let i = g.mark_output(&t)?;
        if !index.is_null() {
            unsafe { index.write(i) };
        }
        Ok(())
    })
}

/// `*out` receives the number of nodes recorded so far. Fails with RB_STATUS_NULL_POINTER
/// or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_num_nodes(graph: *const rb_graph, out: *mut usize) -> rb_status {
    guard("rb_graph_num_nodes", || {
        let g = arc(graph, "graph")?;
        check_out(out, "out")?;
        unsafe { write_out(out, "out", g.snapshot().num_nodes()) }
    })
}

/// Writes the graph as text into `buf` (`len` bytes, NUL-terminated): its inputs, one line
/// per node (`node i: %outputs = op(%inputs)`, each value with its dtype and shape), and its
/// outputs. `*needed` (when not NULL) receives the size the text needs, NUL included, also
/// when `buf` is too small; `buf` may be NULL with `len` 0 to ask only for that size.
///
/// Fails with RB_STATUS_INVALID_HANDLE, RB_STATUS_NULL_POINTER (`buf` NULL with `len` > 0) or
/// RB_STATUS_INVALID_ARGUMENT (`len` too small; `buf` unchanged). Thread-safe.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes; `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_graph_to_string(
    graph: *const rb_graph,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> rb_status {
    guard("rb_graph_to_string", || {
        let g = arc(graph, "graph")?;
        unsafe { write_text(&g.snapshot().to_text(), buf, len, needed) }
    })
}

/// Fills `*out` with the default configuration (the graph's device, O1, no profiling, no
/// sync after launches, no arena bound). Fails with RB_STATUS_NULL_POINTER. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_executor_config_default(out: *mut rb_executor_config) -> rb_status {
    guard("rb_executor_config_default", || {
        let d = Config::default();
        unsafe {
            write_out(
                out,
                "out",
                rb_executor_config {
                    device: std::ptr::null(),
                    opt_level: d.opt_level as i32,
                    enable_profiling: d.enable_profiling,
                    sync_after_launch: d.sync_after_launch,
                    workspace_size_mb: d.workspace_size_mb,
                    keep_fp32: d.keep_fp32,
                    allow_tf32: d.allow_tf32,
                },
            )
        }
    })
}

/// Compiles `graph` (as recorded now: later recording does not change the executor) for its
/// device at `config` (NULL: the defaults). The plan for the recorded input shapes is made
/// here (folding runs parameter-only nodes now, on the device's default stream; at O2+ the
/// CPU packs the weights of f32 convolutions that no node writes now, once).
///
/// On success `*out` is a new handle the caller owns (`rb_executor_destroy`). Fails with
/// RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT (no outputs
/// and no tensor written, a level outside 0..3, still recording), RB_STATUS_UNSUPPORTED (another device than the
/// graph's), RB_STATUS_OUT_OF_MEMORY (the plan exceeds `workspace_size_mb` or the device),
/// or the status of a folded node; `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `config` is NULL or readable; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_executor_create(
    graph: *const rb_graph,
    config: *const rb_executor_config,
    out: *mut *mut rb_executor,
) -> rb_status {
    guard("rb_executor_create", || {
        let g = arc(graph, "graph")?;
        check_out(out, "out")?;
        let mut c = Config::default();
        let snap = g.snapshot();
        if !config.is_null() {
            // SAFETY: caller's contract.
            let cc = unsafe { *config };
            if cc.opt_level < 0 {
                return Err(Error::invalid(format!(
                    "rb_executor_create: opt_level {} is not 0, 1, 2 or 3",
                    cc.opt_level
                )));
            }
            c.opt_level = cc.opt_level as u32;
            c.enable_profiling = cc.enable_profiling;
            c.sync_after_launch = cc.sync_after_launch;
            c.workspace_size_mb = cc.workspace_size_mb;
            c.keep_fp32 = cc.keep_fp32;
            c.allow_tf32 = cc.allow_tf32;
            if let Some(d) = unsafe { cstr_opt(cc.device, "config.device") }? {
                let d = context::resolve(Some(d))?;
                if !crate::runtime::tensor::same_device(&d, &snap.device) {
                    return Err(Error::unsupported(format!(
                        "rb_executor_create: the graph was recorded on {}; an executor runs \
                         where its graph was recorded (asked for {})",
                        snap.device.name(),
                        d.name()
                    )));
                }
            }
        }
        if g.is_capturing() {
            return Err(Error::invalid(
                "rb_executor_create: the graph is still recording (rb_graph_capture_end)",
            ));
        }
        let e = Executor::new(snap, c)?;
        unsafe { write_out(out, "out", new_handle(e)) }
    })
}

/// Destroys an executor (its plans, arena and device graphs are freed once no run is using
/// them). NULL is a no-op; a stale handle is RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_executor_destroy(exec: *mut rb_executor) -> rb_status {
    guard("rb_executor_destroy", || release(exec, "exec"))
}

/// Runs the executor's graph on `stream` (NULL: the device's default stream; device-graph
/// replay at O3 needs a stream of its own) with `inputs` (`n_inputs` tensor handles, one per
/// graph input in order, of the recorded dtypes and ranks; a new shape makes a new plan,
/// cached). `outputs` holds `n_outputs` slots, one per graph output: a NULL slot receives a
/// new tensor handle the caller owns; a slot holding a tensor handle receives the result in
/// that tensor (same shape and dtype).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE, RB_STATUS_INVALID_ARGUMENT
/// (wrong counts, another device, the executor busy on another thread), RB_STATUS_DTYPE_MISMATCH,
/// RB_STATUS_SHAPE_MISMATCH (rank, or an op's own check for a new shape), or a node's status
/// (its message names the node); no output slot is written then. One executor runs one call
/// at a time (a second thread gets RB_STATUS_INVALID_ARGUMENT); separate executors run
/// concurrently.
///
/// # Safety
/// `inputs` is readable for `n_inputs` handles; `outputs` readable and writable for
/// `n_outputs` handles (either may be NULL when its count is 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_executor_run(
    exec: *mut rb_executor,
    stream: *mut rb_stream,
    inputs: *const *const rb_tensor,
    n_inputs: usize,
    outputs: *mut *mut rb_tensor,
    n_outputs: usize,
) -> rb_status {
    guard("rb_executor_run", || {
        let e = arc(exec, "exec")?;
        let s = arc_opt(stream, "stream")?;
        if n_inputs > 0 && inputs.is_null() {
            return Err(null("inputs"));
        }
        if n_outputs > 0 && outputs.is_null() {
            return Err(null("outputs"));
        }
        let mut ins = vec![];
        for i in 0..n_inputs {
            // SAFETY: caller's contract.
            let h = unsafe { *inputs.add(i) };
            ins.push(arc(h, &format!("inputs[{i}]"))?);
        }
        let mut dests = vec![];
        for i in 0..n_outputs {
            // SAFETY: caller's contract.
            let h = unsafe { *outputs.add(i) };
            dests.push(arc_opt(h as *const rb_tensor, &format!("outputs[{i}]"))?);
        }
        let in_refs: Vec<&Tensor> = ins.iter().map(|t| &**t).collect();
        let d_refs: Vec<Option<&Tensor>> = dests.iter().map(|t| t.as_deref()).collect();
        let res = e.run(s.as_deref(), &in_refs, &d_refs)?;
        for (i, (r, d)) in res.into_iter().zip(&dests).enumerate() {
            if d.is_none() {
                // SAFETY: caller's contract.
                unsafe { *outputs.add(i) = new_handle(r) };
            }
        }
        Ok(())
    })
}

/// Fills `*out` with the executor's statistics for its latest plan. Fails with
/// RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_executor_get_stats(
    exec: *const rb_executor,
    out: *mut rb_executor_stats,
) -> rb_status {
    guard("rb_executor_get_stats", || {
        let e = arc(exec, "exec")?;
        check_out(out, "out")?;
        let s = e.stats();
        let mut r = rb_executor_stats {
            nodes_recorded: s.nodes_recorded,
            nodes_optimized: s.nodes_optimized,
            dead_removed: s.dead_removed,
            folded: s.folded,
            mixed_precision_nodes: s.mixed_precision_nodes,
            launches_per_run: s.launches_per_run,
            planned_peak_bytes: s.planned_peak_bytes as u64,
            intermediate_bytes: s.intermediate_bytes as u64,
            in_place: s.in_place,
            plan_ms: s.plan_ms,
            plans: s.plans,
            runs: s.runs,
            replays: s.replays,
            device_graph: s.device_graph,
            ..Default::default()
        };
        for (name, n) in &s.fused {
            r.fused_groups += n;
            match pattern_code(name) {
                Some(c) => r.fused_by_pattern[c] += n,
                None => r.fused_elementwise += n,
            }
        }
        unsafe { write_out(out, "out", r) }
    })
}

/// Writes the executor's statistics as text (`key value` lines, fused groups by pattern,
/// the device-graph note, and with profiling on the last run's time per node) into `buf`;
/// buffer rules as `rb_graph_to_string`. Thread-safe.
///
/// # Safety
/// `buf` is NULL or writable for `len` bytes; `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_executor_stats_string(
    exec: *const rb_executor,
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> rb_status {
    guard("rb_executor_stats_string", || {
        let e = arc(exec, "exec")?;
        let s = e.stats();
        let mut t = String::new();
        writeln!(t, "opt_level {}", e.config().opt_level).unwrap();
        writeln!(t, "nodes_recorded {}", s.nodes_recorded).unwrap();
        writeln!(t, "nodes_optimized {}", s.nodes_optimized).unwrap();
        writeln!(t, "dead_removed {}", s.dead_removed).unwrap();
        writeln!(t, "folded {}", s.folded).unwrap();
        writeln!(t, "mixed_precision_nodes {}", s.mixed_precision_nodes).unwrap();
        for (n, c) in &s.fused {
            writeln!(t, "fused {n} {c}").unwrap();
        }
        writeln!(t, "launches_per_run {}", s.launches_per_run).unwrap();
        writeln!(t, "planned_peak_bytes {}", s.planned_peak_bytes).unwrap();
        writeln!(t, "intermediate_bytes {}", s.intermediate_bytes).unwrap();
        writeln!(t, "in_place {}", s.in_place).unwrap();
        writeln!(t, "plan_ms {:.3}", s.plan_ms).unwrap();
        writeln!(t, "plans {}", s.plans).unwrap();
        writeln!(t, "runs {}", s.runs).unwrap();
        writeln!(t, "replays {}", s.replays).unwrap();
        writeln!(
            t,
            "device_graph {} ({})",
            s.device_graph, s.device_graph_note
        )
        .unwrap();
        for (n, ms) in &s.node_ms {
            writeln!(t, "node {n} {ms:.4} ms").unwrap();
        }
        unsafe { write_text(&t, buf, len, needed) }
    })
}

/// Drops the executor's plans: parameter-only subgraphs folded at O1+ (and convolution
/// weights packed at O2+) are computed again (from the parameters' current data) at the
/// next run. Fails with RB_STATUS_NULL_POINTER or
/// RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_executor_invalidate(exec: *mut rb_executor) -> rb_status {
    guard("rb_executor_invalidate", || {
        arc(exec, "exec")?.invalidate();
        Ok(())
    })
}

/// Whether the `n` op names in `ops` (e.g. {"matmul", "add", "relu"}; "linear" counts as
/// matmul+bias) form one of the seed's fused patterns: `*pattern` receives it (an
/// `rb_fused_op`), or RB_FUSED_OP_NONE. Fails with RB_STATUS_NULL_POINTER (a NULL name or array with `n` > 0).
/// Thread-safe.
///
/// # Safety
/// `ops` is readable for `n` NUL-terminated strings; `pattern` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_can_fuse(
    ops: *const *const c_char,
    n: usize,
    pattern: *mut i32,
) -> rb_status {
    guard("rb_can_fuse", || {
        check_out(pattern, "pattern")?;
        if n > 0 && ops.is_null() {
            return Err(null("ops"));
        }
        let mut names = vec![];
        for i in 0..n {
            // SAFETY: caller's contract.
            let p = unsafe { *ops.add(i) };
            names.push(unsafe { cstr(p, &format!("ops[{i}]")) }?);
        }
        // FusedPattern has rb_fused_op's numbering.
        let r = can_fuse(&names).map_or(rb_fused_op::None as i32, |p| p as i32);
        unsafe { write_out(pattern, "pattern", r) }
    })
}
