//! Building graphs by recording: between [`GraphHandle::capture_begin`] and
//! [`GraphHandle::capture_end`] on a stream, every eager call made on that stream (the
//! generated C exports ask [`recorder`]) becomes a node.
//!
//! Each recorded call is also run once, on the placeholders' recording-time storage
//! (graph inputs start zero-filled), so it gets the eager op's own checks and shape
//! inference from the same code; its values are never used. Real tensors a call writes
//! (a destination, an optimizer's parameters) are not touched while recording: the call
//! runs on a scratch copy and the node writes the real tensor when the graph runs.
//!
//! What cannot be recorded fails with a status that names the call and leaves the graph as
//! it was: a copy of a placeholder to the host, a synchronize of the capturing stream, a
//! placeholder used on another stream or outside its recording.

use super::{Graph, Node, NodeOp, Source, ValueId};
use crate::base::dtype::DType;
use crate::device::DevPtr;
use crate::ops::registry::Op;
use crate::ops::table::Arg;
use crate::runtime::eager::Grad;
use crate::runtime::{Stream, Tensor, dispatch};
use crate::{Error, Result};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};

/// How a tensor is known to a recording: its storage, offset, shape and dtype.
type Key = (usize, usize, Vec<usize>, DType);

fn key(t: &Tensor) -> Key {
    (
        t.storage_id(),
        t.storage_offset(),
        t.shape().to_vec(),
        t.dtype(),
    )
}

/// A graph under construction (or finished), as C holds it.
pub struct GraphHandle {
    id: u64,
    state: Mutex<Recording>,
}

struct Recording {
    graph: Graph,
    map: HashMap<Key, ValueId>,
    /// Every placeholder and parameter seen, kept alive so that storage identities stay
    /// unique while the graph exists.
    keep: Vec<Tensor>,
    /// The stream being recorded (its address), if any.
    capturing: Option<usize>,
}

/// Streams being recorded, by address.
static CAPTURES: LazyLock<RwLock<HashMap<usize, Arc<GraphHandle>>>> =
    LazyLock::new(Default::default);
/// Storage of every placeholder, with its graph's id.
static PLACEHOLDERS: LazyLock<RwLock<HashMap<usize, u64>>> = LazyLock::new(Default::default);
/// Live graphs: when zero, eager calls skip every look-up here.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn stream_key(s: &Stream) -> usize {
    s as *const Stream as usize
}

/// True when some graph exists (eager calls then ask [`recorder`]).
#[inline]
pub fn active() -> bool {
    LIVE.load(Ordering::Relaxed) != 0
}

/// The graph recording `stream`, if any. A placeholder among `inputs` on any other stream
/// (or of another graph) is an error naming `call` and the argument.
pub fn recorder(
    call: &str,
    stream: Option<&Stream>,
    inputs: &[(&str, Option<&Tensor>)],
) -> Result<Option<Arc<GraphHandle>>> {
    if !active() {
        return Ok(None);
    }
    let rec = stream.and_then(|s| CAPTURES.read().get(&stream_key(s)).cloned());
    let ph = PLACEHOLDERS.read();
    for (name, t) in inputs {
        let Some(t) = t else { continue };
        if let Some(&g) = ph.get(&t.storage_id()) {
            match &rec {
                Some(r) if r.id == g => {}
                Some(_) => {
                    return Err(Error::invalid(format!(
                        "{call}: '{name}' is a placeholder of another graph"
                    )));
                }
                None => {
                    return Err(Error::invalid(format!(
                        "{call}: '{name}' is a placeholder of a graph (it has no data); \
                         call it on the stream being recorded, or run the graph's executor"
                    )));
                }
            }
        }
    }
    Ok(rec)
}

/// Fails when `t` is a placeholder: `call` (a copy to the host) cannot be recorded.
pub fn check_host_access(call: &str, t: &Tensor) -> Result<()> {
    if active() && PLACEHOLDERS.read().contains_key(&t.storage_id()) {
        return Err(Error::invalid(format!(
            "{call}: the tensor is a placeholder of a graph; it has no data to copy (a copy \
             to the host cannot be recorded: mark it as an output and read the executor's \
             result)"
        )));
    }
    Ok(())
}

/// Fails when `stream` is being recorded: `call` (a synchronize) cannot be recorded.
pub fn check_sync(call: &str, stream: &Stream) -> Result<()> {
    if active() && CAPTURES.read().contains_key(&stream_key(stream)) {
        return Err(Error::invalid(format!(
            "{call}: the stream is being recorded into a graph; a synchronize cannot be \
             recorded (end the capture first)"
        )));
    }
    Ok(())
}

/// Fails with UNSUPPORTED when `stream` is being recorded: `call` cannot be recorded, for
/// the reason `why`.
pub fn check_unrecordable(call: &str, why: &str, stream: &Stream) -> Result<()> {
    if active() && CAPTURES.read().contains_key(&stream_key(stream)) {
        return Err(Error::unsupported(format!(
            "{call}: the stream is being recorded into a graph, and {why} (end the capture \
             first)"
        )));
    }
    Ok(())
}

/// The graph recording `stream`, if any (a raw call on it is recorded with
/// [`GraphHandle::record_raw`]).
pub fn raw_recorder(stream: &Stream) -> Option<Arc<GraphHandle>> {
    if !active() {
        return None;
    }
    CAPTURES.read().get(&stream_key(stream)).cloned()
}

/// The graph `t` is a placeholder of, if any.
pub fn placeholder_graph(t: &Tensor) -> Option<u64> {
    if !active() {
        return None;
    }
    PLACEHOLDERS.read().get(&t.storage_id()).copied()
}

impl GraphHandle {
    /// A new, empty graph for `device`.
    pub fn new(device: Arc<dyn crate::device::Device>) -> Self {
        LIVE.fetch_add(1, Ordering::Relaxed);
        GraphHandle {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            state: Mutex::new(Recording {
                graph: Graph::new(device),
                map: HashMap::new(),
                keep: vec![],
                capturing: None,
            }),
        }
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// A copy of the graph as recorded so far.
    pub fn snapshot(&self) -> Graph {
        self.state.lock().graph.clone()
    }

    /// Whether a capture is in progress.
    pub fn is_capturing(&self) -> bool {
        self.state.lock().capturing.is_some()
    }

    fn placeholder(&self, st: &mut Recording, t: &Tensor, v: ValueId) {
        st.map.insert(key(t), v);
        st.keep.push(t.clone());
        PLACEHOLDERS.write().insert(t.storage_id(), self.id);
    }

    /// A new graph input of `shape` and `dtype`: a placeholder tensor (zero-filled, so a
    /// recorded call that looks at data, e.g. an index check, sees valid zeros).
    pub fn input(&self, shape: &[usize], dtype: DType) -> Result<Tensor> {
        let mut st = self.state.lock();
        let t = Tensor::zeros(st.graph.device.clone(), shape, dtype)?;
        let k = st.graph.inputs.len();
        let v = st.graph.add_value(shape, dtype, Source::Input(k));
        st.graph.inputs.push(v);
        self.placeholder(&mut st, &t, v);
        Ok(t)
    }

    /// Starts recording the calls made on `stream` (on the graph's device).
    pub fn capture_begin(self: &Arc<Self>, stream: &Arc<Stream>) -> Result<()> {
        let mut st = self.state.lock();
        if !crate::runtime::tensor::same_device(stream.device(), &st.graph.device) {
            return Err(Error::invalid(format!(
                "rb_graph_capture_begin: the stream is on {}, the graph on {}",
                stream.device().name(),
                st.graph.device.name()
            )));
        }
        if st.capturing.is_some() {
            return Err(Error::invalid(
                "rb_graph_capture_begin: the graph is already recording a stream",
            ));
        }
        let k = stream_key(stream);
        let mut caps = CAPTURES.write();
        if caps.contains_key(&k) {
            return Err(Error::invalid(
                "rb_graph_capture_begin: the stream is already being recorded by a graph",
            ));
        }
        caps.insert(k, self.clone());
        st.capturing = Some(k);
        Ok(())
    }

    /// Stops recording `stream`.
    pub fn capture_end(&self, stream: &Stream) -> Result<()> {
        let mut st = self.state.lock();
        if st.capturing != Some(stream_key(stream)) {
            return Err(Error::invalid(
                "rb_graph_capture_end: the graph is not recording this stream",
            ));
        }
        CAPTURES.write().remove(&stream_key(stream));
        st.capturing = None;
        Ok(())
    }

    /// Marks `t` (a tensor the recording produced) as the next graph output.
    pub fn mark_output(&self, t: &Tensor) -> Result<usize> {
        let mut st = self.state.lock();
        let Some(&v) = st.map.get(&key(t)) else {
            return Err(Error::invalid(
                "rb_graph_mark_output: the tensor was not produced by this graph's recording",
            ));
        };
        if matches!(st.graph.values[v].source, Source::Param(_)) {
            return Err(Error::invalid(
                "rb_graph_mark_output: the tensor is a parameter of the graph, not a result",
            ));
        }
        st.graph.outputs.push(v);
        Ok(st.graph.outputs.len() - 1)
    }

    /// The value of `t`: a known placeholder or parameter; a view (reshape) of a known
    /// placeholder, recorded as a reshape node; else a new parameter.
    fn value_of(&self, st: &mut Recording, t: &Tensor) -> ValueId {
        if let Some(&v) = st.map.get(&key(t)) {
            return v;
        }
        let base = st
            .map
            .iter()
            .filter(|(k, v)| {
                k.0 == t.storage_id()
                    && k.1 == t.storage_offset()
                    && k.3 == t.dtype()
                    && k.2.iter().product::<usize>() == t.numel()
                    && !matches!(st.graph.values[**v].source, Source::Param(_))
            })
            .map(|(_, v)| *v)
            .max();
        if let Some(x) = base {
            let n = st.graph.nodes.len();
            let y = st
                .graph
                .add_value(t.shape(), t.dtype(), Source::Node { node: n, output: 0 });
            st.graph.nodes.push(Node {
                op: NodeOp::Reshape(t.shape().to_vec()),
                inputs: vec![Some(x)],
                outputs: vec![Some(y)],
                into: vec![None],
                mutated: vec![],
            });
            st.map.insert(key(t), y);
            st.keep.push(t.clone());
            return y;
        }
        let v = st
            .graph
            .add_value(t.shape(), t.dtype(), Source::Param(t.clone()));
        st.map.insert(key(t), v);
        st.keep.push(t.clone());
        v
    }

    /// Records one eager call: runs it once for its checks and shapes (on scratch copies of
    /// the real tensors it would write), then adds the node. On failure nothing is added.
    pub fn record(
        &self,
        stream: Option<&Stream>,
        op: Op,
        inputs: &[Option<&Tensor>],
        outputs: &[Grad<'_>],
    ) -> Result<Vec<Option<Tensor>>> {
        let mut st = self.state.lock();
        // Tensor parameters the op writes in place.
        let def = op.kind().def();
        // batch_norm writes its running statistics only when training.
        let eval_bn = matches!(&op, Op::BatchNorm(a) if !a.training);
        let mut_flags: Vec<bool> = def
            .params
            .iter()
            .filter(|p| p.arg.is_tensor())
            .flat_map(|p| match p.arg {
                Arg::TensorList { .. } => vec![false; inputs.len()],
                _ => vec![p.is_written() && !(p.writes && eval_bn)],
            })
            .collect();
        let mut scratch: Vec<Option<Tensor>> = Vec::with_capacity(inputs.len());
        let mut mutated = vec![];
        for (i, t) in inputs.iter().enumerate() {
            match t {
                Some(t) if mut_flags.get(i).copied().unwrap_or(false) => {
                    mutated.push(i);
                    if is_ph_locked(&st, t) {
                        scratch.push(None);
                    } else {
                        scratch.push(Some(copy_of(t)?));
                    }
                }
                _ => scratch.push(None),
            }
        }
        let run_inputs: Vec<Option<&Tensor>> = inputs
            .iter()
            .zip(&scratch)
            .map(|(t, s)| s.as_ref().or(*t))
            .collect();
        // Destinations that are real tensors: the recording writes a stand-in of the same
        // shape, dtype and device (so the op's own checks of `out` apply).
        let stand_ins: Vec<Option<Tensor>> = outputs
            .iter()
            .map(|g| match g {
                Grad::Into(t) if !is_ph_locked(&st, t) => {
                    Tensor::empty(t.device().clone(), t.shape(), t.dtype()).map(Some)
                }
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        let run_outputs: Vec<Grad<'_>> = outputs
            .iter()
            .zip(&stand_ins)
            .map(|(g, s)| match s {
                Some(s) => Grad::Into(s),
                None => *g,
            })
            .collect();
        let results = dispatch::run(stream, &op, &run_inputs, &run_outputs)?;
        // The call succeeded: add its values and node.
        let in_ids: Vec<Option<ValueId>> = inputs
            .iter()
            .map(|t| t.map(|t| self.value_of(&mut st, t)))
            .collect();
        let n = st.graph.nodes.len();
        let (mut out_ids, mut into, mut ret) = (vec![], vec![], vec![]);
        for (k, g) in outputs.iter().enumerate() {
            let r = results.get(k).cloned().flatten();
            let src = Source::Node { node: n, output: k };
            match (g, r) {
                (Grad::Into(t), _) => {
                    let v = st.graph.add_value(t.shape(), t.dtype(), src);
                    // A placeholder written names the new value from here on; a real
                    // tensor is written when the graph runs (an effect), and later reads
                    // of it in the graph read this node's result.
                    into.push((!is_ph_locked(&st, t)).then(|| (*t).clone()));
                    st.map.insert(key(t), v);
                    out_ids.push(Some(v));
                    ret.push(None);
                }
                (Grad::New, Some(r)) => {
                    let v = st.graph.add_value(r.shape(), r.dtype(), src);
                    self.placeholder(&mut st, &r, v);
                    out_ids.push(Some(v));
                    into.push(None);
                    ret.push(Some(r));
                }
                _ => {
                    out_ids.push(None);
                    into.push(None);
                    ret.push(None);
                }
            }
        }
        st.graph.nodes.push(Node {
            op: NodeOp::Op(op),
            inputs: in_ids,
            outputs: out_ids,
            into,
            mutated,
        });
        Ok(ret)
    }

    /// Records a raw call (`call`, its C name) made on the stream being recorded: `ptrs`
    /// (the caller's device pointers it names) must not point into a placeholder (its
    /// storage is the recording's, not the run's: use the eager op on the tensor instead);
    /// `run` is checked now, in check-only mode (nothing reaches the device), and becomes a
    /// node run on the executor's stream each time the graph runs. The pointers are bound by
    /// reference, as parameters are: a later change to their data is seen at the next run.
    /// On failure nothing is added.
    pub fn record_raw(
        &self,
        stream: &Stream,
        call: &str,
        ptrs: &[(&str, DevPtr)],
        run: Arc<super::RawFn>,
    ) -> Result<()> {
        let mut st = self.state.lock();
        for (name, p) in ptrs {
            if p.is_null() {
                continue;
            }
            let inside = st.keep.iter().any(|t| {
                let (lo, hi) = t.storage_range();
                (lo..hi).contains(&p.0) && is_ph_locked(&st, t)
            });
            if inside {
                return Err(Error::invalid(format!(
                    "{call}: '{name}' points into a placeholder of the graph being recorded \
                     (its memory is the recording's, not the run's); use the eager op on the \
                     placeholder tensor, or pass memory of your own"
                )));
            }
        }
        crate::runtime::raw::checks_only(|| run(Some(stream)))?;
        st.graph.nodes.push(Node {
            op: NodeOp::Raw(super::RawCall {
                name: call.to_string(),
                run,
            }),
            inputs: vec![],
            outputs: vec![],
            into: vec![],
            mutated: vec![],
        });
        Ok(())
    }

    /// Stops any capture (the graph is being destroyed).
    pub fn abandon(&self) {
        let mut st = self.state.lock();
        if let Some(k) = st.capturing.take() {
            CAPTURES.write().remove(&k);
        }
    }
}

fn is_ph_locked(st: &Recording, t: &Tensor) -> bool {
    st.map
        .get(&key(t))
        .is_some_and(|v| !matches!(st.graph.values[*v].source, Source::Param(_)))
}

/// A copy of `t` (a real tensor a recorded call would write).
fn copy_of(t: &Tensor) -> Result<Tensor> {
    let c = Tensor::empty(t.device().clone(), t.shape(), t.dtype())?;
    if t.nbytes() > 0 {
        t.device()
            .copy_d2d(t.ptr(), c.ptr(), t.nbytes(), Default::default())?;
        t.device().synchronize()?;
    }
    Ok(c)
}

impl Drop for GraphHandle {
    fn drop(&mut self) {
        let st = self.state.get_mut();
        if let Some(k) = st.capturing.take() {
            CAPTURES.write().remove(&k);
        }
        PLACEHOLDERS.write().retain(|_, g| *g != self.id);
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}
