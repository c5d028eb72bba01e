//! The CPU communicator: ranks are threads of one process that meet in a rendezvous keyed by
//! the unique id. Every call is two steps: *post* (copy this rank's contribution into the
//! rendezvous: a collective's send buffer under the call's sequence number, a send's message
//! into the (from, to) mailbox) and *complete* (wait for the peers' contributions, check that
//! every rank made the same call, compute this rank's output). Outside a group a call posts
//! and completes; inside one (per thread, as NCCL's) every call posts at once and completes
//! at the outermost group end, so one thread can drive several ranks and paired send/recv
//! never deadlock.
//!
//! Waits are bounded by the communicator's timeout (`RB_COMM_TIMEOUT_MS`, default 300000 ms,
//! read when the communicator is made; [`CpuComm::set_timeout`]): a peer that never comes
//! gives ErrorKind::Timeout; a peer aborted or destroyed while a call needs it gives
//! ErrorKind::Aborted.

use crate::base::dtype::DType;
use crate::device::comm::{CollCall, CommOps, DeviceComm, ReduceOp, UNIQUE_ID_BYTES, UniqueId};
use crate::device::{DevPtr, RawStream};
use crate::{Error, Result};
use half::{bf16, f16};
use parking_lot::{Condvar, Mutex};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Weak};
use std::time::{Duration, Instant};

/// What every rank of a collective must agree on: call name, count, dtype, op, root.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sig {
    name: &'static str,
    count: usize,
    dtype: DType,
    op: Option<ReduceOp>,
    root: Option<usize>,
}

impl std::fmt::Display for Sig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} of {} {} elements", self.name, self.count, self.dtype)?;
        if let Some(op) = self.op {
            write!(f, " ({})", op.name())?;
        }
        if let Some(r) = self.root {
            write!(f, " (root {r})")?;
        }
        Ok(())
    }
}

struct Slot {
    inputs: Vec<Option<(Sig, Arc<Vec<u8>>)>>,
    done: usize,
}

#[derive(Default)]
struct State {
    joined: Vec<bool>,
    /// Ranks destroyed or aborted (with the word for messages).
    gone: Vec<Option<&'static str>>,
    slots: HashMap<u64, Slot>,
    mail: HashMap<(usize, usize), VecDeque<Arc<Vec<u8>>>>,
}

/// The rendezvous of one communicator.
struct Rendezvous {
    world: usize,
    state: Mutex<State>,
    cv: Condvar,
}

static RENDEZVOUS: LazyLock<Mutex<HashMap<UniqueId, Weak<Rendezvous>>>> =
    LazyLock::new(Default::default);

const MAGIC: &[u8; 8] = b"RBCPUCOM";

/// Whether `id` was made by [`unique_id`] (GPUs refuse such ids instead of handing NCCL
/// a bootstrap address that is not one).
pub fn is_cpu_id(id: &UniqueId) -> bool {
    id.0[..8] == MAGIC[..]
}

/// A fresh CPU unique id: a tag, the process id, a counter and the time.
pub fn unique_id() -> UniqueId {
    static COUNTER: AtomicU64 = AtomicU64::new(1);
    let mut id = [0u8; UNIQUE_ID_BYTES];
    id[..8].copy_from_slice(MAGIC);
    id[8..12].copy_from_slice(&std::process::id().to_le_bytes());
    id[12..20].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    id[20..28].copy_from_slice(&t.to_le_bytes());
    UniqueId(id)
}

fn default_timeout() -> Duration {
    let ms = std::env::var("RB_COMM_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(300_000);
    Duration::from_millis(ms.max(1))
}

/// One rank of a CPU communicator.
pub struct CpuComm {
    rv: Arc<Rendezvous>,
    rank: usize,
    /// Sequence number of this rank's next collective.
    seq: AtomicU64,
    timeout_ms: AtomicU64,
    id: UniqueId,
}

impl std::fmt::Debug for CpuComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CpuComm(rank {} of {})", self.rank, self.rv.world)
    }
}

/// Makes rank `rank` of the `world`-rank communicator `id`.
pub fn init(id: &UniqueId, world: usize, rank: usize) -> Result<Arc<CpuComm>> {
    if world == 0 {
        return Err(Error::invalid("world_size must be at least 1"));
    }
    if rank >= world {
        return Err(Error::invalid(format!(
            "rank {rank} is out of range for world_size {world}"
        )));
    }
    if id.0[..8] != MAGIC[..] {
        return Err(Error::invalid(
            "the unique id was not made for the CPU device (rb_comm_get_unique_id on \"cpu\")",
        ));
    }
    let mut map = RENDEZVOUS.lock();
    map.retain(|_, w| w.strong_count() > 0);
    let rv = match map.get(id).and_then(Weak::upgrade) {
        Some(rv) => rv,
        None => {
            let rv = Arc::new(Rendezvous {
                world,
                state: Mutex::new(State {
                    joined: vec![false; world],
                    gone: vec![None; world],
                    ..Default::default()
                }),
                cv: Condvar::new(),
            });
            map.insert(*id, Arc::downgrade(&rv));
            rv
        }
    };
    if rv.world != world {
        return Err(Error::invalid(format!(
            "world_size {world} differs from the {} of the ranks that joined first",
            rv.world
        )));
    }
    let mut st = rv.state.lock();
    if st.joined[rank] {
        return Err(Error::invalid(format!(
            "rank {rank} of this unique id has already joined"
        )));
    }
    st.joined[rank] = true;
    drop(st);
    drop(map);
    Ok(Arc::new(CpuComm {
        rv,
        rank,
        seq: AtomicU64::new(0),
        timeout_ms: AtomicU64::new(default_timeout().as_millis() as u64),
        id: *id,
    }))
}

/// A posted call waiting to complete.
enum Pending {
    Done,
    Recv {
        buf: DevPtr,
        bytes: usize,
        peer: usize,
    },
    Coll {
        seq: u64,
        call: CollCall,
    },
}

/// The calling thread's group: its nesting depth and the calls posted in it.
struct Group {
    depth: usize,
    pending: Vec<(Arc<CpuComm>, Pending)>,
}

thread_local! {
    static GROUP: RefCell<Group> = const {
        RefCell::new(Group {
            depth: 0,
            pending: Vec::new(),
        })
    };
}

pub fn group_start() {
    GROUP.with(|g| g.borrow_mut().depth += 1);
}

/// Ends a group; at the outermost end completes every posted call (all of them, reporting
/// the first failure).
pub fn group_end() -> Result<()> {
    let pending = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.depth == 0 {
            return Err(Error::invalid("group end without a matching group start"));
        }
        g.depth -= 1;
        Ok(if g.depth == 0 {
            std::mem::take(&mut g.pending)
        } else {
            Vec::new()
        })
    })?;
    let mut first = Ok(());
    for (c, p) in pending {
        let r = c.complete(p);
        if first.is_ok() {
            first = r;
        }
    }
    first
}

fn in_group() -> bool {
    GROUP.with(|g| g.borrow().depth > 0)
}

/// # Safety
/// `p` addresses `n` readable bytes of host memory (the CPU device's memory).
unsafe fn read(p: DevPtr, n: usize) -> Vec<u8> {
    if n == 0 {
        return Vec::new();
    }
    // SAFETY: the caller's promise.
    unsafe { std::slice::from_raw_parts(p.as_ptr::<u8>(), n) }.to_vec()
}

/// # Safety
/// `p` addresses `src.len()` writable bytes of host memory.
unsafe fn write(p: DevPtr, src: &[u8]) {
    if !src.is_empty() {
        // SAFETY: the caller's promise; `src` is the rendezvous's own copy, never `p`.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p.as_mut_ptr::<u8>(), src.len()) }
    }
}

impl CpuComm {
    /// Sets how long a call waits for its peers.
    pub fn set_timeout(&self, t: Duration) {
        self.timeout_ms
            .store((t.as_millis() as u64).max(1), Ordering::Relaxed);
    }

    pub fn unique_id(&self) -> UniqueId {
        self.id
    }

    fn sig(call: &CollCall, dtype: DType) -> Sig {
        let (count, op, root) = match *call {
            CollCall::AllReduce { count, op, .. } | CollCall::ReduceScatter { count, op, .. } => {
                (count, Some(op), None)
            }
            CollCall::AllGather { count, .. } => (count, None, None),
            CollCall::Broadcast { count, root, .. } => (count, None, Some(root)),
            CollCall::Send { count, .. } | CollCall::Recv { count, .. } => (count, None, None),
        };
        Sig {
            name: call.name(),
            count,
            dtype,
            op,
            root,
        }
    }

    fn check_usable(&self, st: &State) -> Result<()> {
        match st.gone[self.rank] {
            Some(w) => Err(Error::aborted(format!(
                "rank {} of this communicator was {w}",
                self.rank
            ))),
            None => Ok(()),
        }
    }

    fn post(self: &Arc<Self>, call: CollCall, dtype: DType) -> Result<Pending> {
        let world = self.rv.world;
        if let CollCall::Send { peer, .. } | CollCall::Recv { peer, .. } = call
            && peer >= world
        {
            return Err(Error::invalid(format!(
                "peer {peer} is out of range for a communicator of {world} ranks"
            )));
        }
        if let CollCall::Broadcast { root, .. } = call
            && root >= world
        {
            return Err(Error::invalid(format!(
                "root {root} is out of range for a communicator of {world} ranks"
            )));
        }
        let (sb, _) = call.extents(dtype, world);
        match call {
            CollCall::Send { buf, peer, .. } => {
                // SAFETY: the runtime checked that `buf` holds the message.
                let msg = Arc::new(unsafe { read(buf, sb) });
                let mut st = self.rv.state.lock();
                self.check_usable(&st)?;
                st.mail.entry((self.rank, peer)).or_default().push_back(msg);
                drop(st);
                self.rv.cv.notify_all();
                Ok(Pending::Done)
            }
            CollCall::Recv { buf, peer, .. } => {
                self.check_usable(&self.rv.state.lock())?;
                Ok(Pending::Recv {
                    buf,
                    bytes: call.extents(dtype, world).1,
                    peer,
                })
            }
            _ => {
                let send = match call {
                    CollCall::AllReduce { send, .. }
                    | CollCall::AllGather { send, .. }
                    | CollCall::ReduceScatter { send, .. } => Some(send),
                    CollCall::Broadcast { send, root, .. } if root == self.rank => Some(send),
                    _ => None,
                };
                // SAFETY: the runtime checked that `send` holds `sb` bytes.
                let data = Arc::new(send.map(|s| unsafe { read(s, sb) }).unwrap_or_default());
                let mut st = self.rv.state.lock();
                self.check_usable(&st)?;
                let seq = self.seq.fetch_add(1, Ordering::Relaxed);
                let slot = st.slots.entry(seq).or_insert_with(|| Slot {
                    inputs: vec![None; world],
                    done: 0,
                });
                slot.inputs[self.rank] = Some((Self::sig(&call, dtype), data));
                drop(st);
                self.rv.cv.notify_all();
                Ok(Pending::Coll { seq, call })
            }
        }
    }

    /// Waits under the lock until `ready` holds; fails on abort, a needed peer gone, or the
    /// timeout. `needs` names the peers whose contribution is still missing.
    fn wait<'a>(
        &self,
        mut st: parking_lot::MutexGuard<'a, State>,
        what: &str,
        mut needs: impl FnMut(&State) -> Vec<usize>,
    ) -> Result<parking_lot::MutexGuard<'a, State>> {
        let timeout = Duration::from_millis(self.timeout_ms.load(Ordering::Relaxed));
        let deadline = Instant::now() + timeout;
        loop {
            self.check_usable(&st)?;
            let missing = needs(&st);
            if missing.is_empty() {
                return Ok(st);
            }
            if let Some(&p) = missing.iter().find(|&&p| st.gone[p].is_some()) {
                return Err(Error::aborted(format!(
                    "{what}: rank {p} was {} before it took part",
                    st.gone[p].unwrap_or("destroyed")
                )));
            }
            if self.rv.cv.wait_until(&mut st, deadline).timed_out() {
                let missing = needs(&st);
                if !missing.is_empty() {
                    return Err(Error::timeout(format!(
                        "{what}: rank {} waited {} ms for ranks {missing:?} (a peer gone or \
                         stuck?); abort the communicator",
                        self.rank,
                        timeout.as_millis()
                    )));
                }
            }
        }
    }

    fn complete(&self, p: Pending) -> Result<()> {
        match p {
            Pending::Done => Ok(()),
            Pending::Recv { buf, bytes, peer } => {
                let key = (peer, self.rank);
                let st = self.rv.state.lock();
                let mut st = self.wait(st, &format!("recv from rank {peer}"), |s| {
                    if s.mail.get(&key).is_some_and(|q| !q.is_empty()) {
                        vec![]
                    } else {
                        vec![peer]
                    }
                })?;
                let msg = st
                    .mail
                    .get_mut(&key)
                    .and_then(|q| q.pop_front())
                    .ok_or_else(|| Error::internal("recv: the message vanished"))?;
                drop(st);
                if msg.len() != bytes {
                    return Err(Error::shape(format!(
                        "recv from rank {peer}: the message has {} bytes, the receive buffer {bytes}",
                        msg.len()
                    )));
                }
                // SAFETY: the runtime checked that `buf` holds `bytes`.
                unsafe { write(buf, &msg) };
                Ok(())
            }
            Pending::Coll { seq, call } => self.complete_coll(seq, call),
        }
    }

    fn complete_coll(&self, seq: u64, call: CollCall) -> Result<()> {
        let world = self.rv.world;
        let st = self.rv.state.lock();
        let what = format!("{} #{seq}", call.name());
        let mut st = self.wait(st, &what, |s| match s.slots.get(&seq) {
            Some(slot) => (0..world).filter(|&r| slot.inputs[r].is_none()).collect(),
            None => (0..world).collect(),
        })?;
        let slot = st.slots.get_mut(&seq).expect("slot present");
        let inputs: Vec<(Sig, Arc<Vec<u8>>)> = slot.inputs.iter().flatten().cloned().collect();
        slot.done += 1;
        if slot.done == world {
            st.slots.remove(&seq);
        }
        drop(st);
        let mine = inputs[self.rank].0;
        if let Some((r, (s, _))) = inputs.iter().enumerate().find(|(_, (s, _))| *s != mine) {
            return Err(Error::shape(format!(
                "{what}: rank {} called {mine}, rank {r} called {s}",
                self.rank
            )));
        }
        let dtype = mine.dtype;
        let e = dtype.size();
        match call {
            CollCall::AllReduce {
                recv, count, op, ..
            } => {
                let parts: Vec<&[u8]> = inputs.iter().map(|(_, d)| &d[..]).collect();
                let out = reduce(&parts, dtype, op, count);
                // SAFETY: the runtime checked `recv`.
                unsafe { write(recv, &out) };
            }
            CollCall::ReduceScatter {
                recv, count, op, ..
            } => {
                let b = count * e;
                let parts: Vec<&[u8]> = inputs
                    .iter()
                    .map(|(_, d)| &d[self.rank * b..(self.rank + 1) * b])
                    .collect();
                let out = reduce(&parts, dtype, op, count);
                // SAFETY: as above.
                unsafe { write(recv, &out) };
            }
            CollCall::AllGather { recv, .. } => {
                let out: Vec<u8> = inputs.iter().flat_map(|(_, d)| d.iter().copied()).collect();
                // SAFETY: as above.
                unsafe { write(recv, &out) };
            }
            CollCall::Broadcast { recv, root, .. } => {
                // SAFETY: as above.
                unsafe { write(recv, &inputs[root].1) };
            }
            CollCall::Send { .. } | CollCall::Recv { .. } => unreachable!(),
        }
        Ok(())
    }

    fn mark_gone(&self, word: &'static str) {
        let mut st = self.rv.state.lock();
        if st.gone[self.rank].is_none() {
            st.gone[self.rank] = Some(word);
        }
        drop(st);
        self.rv.cv.notify_all();
    }
}

/// Elementwise reduction of `parts` (each `count` elements of `dtype`), in rank order:
/// floats in f32 (f16/bf16 rounded once at the end), integers with wrapping arithmetic.
fn reduce(parts: &[&[u8]], dtype: DType, op: ReduceOp, count: usize) -> Vec<u8> {
    let n = parts.len();
    if dtype.is_float() {
        let load = |p: &[u8]| -> Vec<f32> {
            match dtype {
                DType::F32 => p
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                    .collect(),
                DType::F16 => p
                    .chunks_exact(2)
                    .map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32())
                    .collect(),
                _ => p
                    .chunks_exact(2)
                    .map(|b| bf16::from_le_bytes([b[0], b[1]]).to_f32())
                    .collect(),
            }
        };
        let mut acc = load(parts[0]);
        for p in &parts[1..] {
            let v = load(p);
            let f: fn(f32, f32) -> f32 = match op {
                ReduceOp::Sum | ReduceOp::Avg => |a, b| a + b,
                ReduceOp::Prod => |a, b| a * b,
                ReduceOp::Max => f32::max,
                ReduceOp::Min => f32::min,
            };
            acc.iter_mut().zip(&v).for_each(|(a, &b)| *a = f(*a, b));
        }
        if op == ReduceOp::Avg {
            let k = n as f32;
            acc.iter_mut().for_each(|a| *a /= k);
        }
        debug_assert_eq!(acc.len(), count);
        let mut out = vec![0u8; count * dtype.size()];
        match dtype {
            DType::F32 => out
                .chunks_exact_mut(4)
                .zip(&acc)
                .for_each(|(o, a)| o.copy_from_slice(&a.to_le_bytes())),
            DType::F16 => out
                .chunks_exact_mut(2)
                .zip(&acc)
                .for_each(|(o, &a)| o.copy_from_slice(&f16::from_f32(a).to_le_bytes())),
            _ => out
                .chunks_exact_mut(2)
                .zip(&acc)
                .for_each(|(o, &a)| o.copy_from_slice(&bf16::from_f32(a).to_le_bytes())),
        }
        out
    } else {
        let load = |p: &[u8]| -> Vec<i64> {
            match dtype {
                DType::I32 => p
                    .chunks_exact(4)
                    .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64)
                    .collect(),
                _ => p
                    .chunks_exact(8)
                    .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
                    .collect(),
            }
        };
        let mut acc = load(parts[0]);
        for p in &parts[1..] {
            let v = load(p);
            let f: fn(i64, i64) -> i64 = match op {
                ReduceOp::Sum | ReduceOp::Avg => i64::wrapping_add,
                ReduceOp::Prod => i64::wrapping_mul,
                ReduceOp::Max => i64::max,
                ReduceOp::Min => i64::min,
            };
            acc.iter_mut().zip(&v).for_each(|(a, &b)| *a = f(*a, b));
        }
        debug_assert_eq!(acc.len(), count);
        let mut out = vec![0u8; count * dtype.size()];
        if dtype == DType::I32 {
            // The i64 sum and product wrapped to 32 bits are the i32 wrapping results.
            out.chunks_exact_mut(4).zip(&acc).for_each(|(o, &a)| {
                let mut a = a as i32;
                if op == ReduceOp::Avg {
                    a /= n as i32;
                }
                o.copy_from_slice(&a.to_le_bytes())
            });
        } else {
            out.chunks_exact_mut(8).zip(&acc).for_each(|(o, &a)| {
                let a = if op == ReduceOp::Avg { a / n as i64 } else { a };
                o.copy_from_slice(&a.to_le_bytes())
            });
        }
        out
    }
}

/// The runtime's handle on a CPU rank: the [`DeviceComm`] over an `Arc<CpuComm>` (posts
/// need the `Arc` to queue themselves in the thread's group).
#[derive(Debug)]
pub struct CpuRank(pub Arc<CpuComm>);

impl DeviceComm for CpuRank {
    fn rank(&self) -> usize {
        self.0.rank
    }
    fn size(&self) -> usize {
        self.0.rv.world
    }
    fn call(&self, call: CollCall, dtype: DType, _stream: RawStream) -> Result<()> {
        let p = self.0.post(call, dtype)?;
        if in_group() {
            GROUP.with(|g| g.borrow_mut().pending.push((self.0.clone(), p)));
            Ok(())
        } else {
            self.0.complete(p)
        }
    }
    fn set_timeout(&self, t: Duration) {
        self.0.set_timeout(t)
    }
    fn abort(&self) -> Result<()> {
        self.0.mark_gone("aborted");
        Ok(())
    }
    fn destroy(&self) -> Result<()> {
        self.0.mark_gone("destroyed");
        Ok(())
    }
}

/// A rank dropped without `destroy` leaves like a destroyed one: peers waiting for it get
/// ErrorKind::Aborted, not a timeout.
impl Drop for CpuRank {
    fn drop(&mut self) {
        self.0.mark_gone("destroyed");
    }
}

impl CommOps for super::CpuDevice {
    fn comm_unique_id(&self) -> Result<UniqueId> {
        Ok(unique_id())
    }
    fn comm_init(&self, id: &UniqueId, world: usize, rank: usize) -> Result<Arc<dyn DeviceComm>> {
        Ok(Arc::new(CpuRank(init(id, world, rank)?)))
    }
    fn comm_init_all(&self, ordinals: &[usize]) -> Result<Vec<Arc<dyn DeviceComm>>> {
        let id = unique_id();
        let n = ordinals.len();
        (0..n).map(|r| self.comm_init(&id, n, r)).collect()
    }
}
