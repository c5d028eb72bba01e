//! Communicators and collectives (DESIGN §11): the device-level trait every device
//! implements. GPUs go through the vendor's collective library (RCCL on AMD, NCCL on NVIDIA,
//! `gpu/comm.rs` over `vendor/nccl.rs`); the CPU device implements the same calls with
//! threads of one process meeting in a shared rendezvous keyed by the unique id
//! (`cpu/comm.rs`), so the whole suite runs anywhere.
//!
//! Group semantics are NCCL's: [`group_start`]/[`group_end`] are per calling thread and span
//! every communicator; calls made between them are issued at once and complete at the
//! outermost end (so one thread can drive several ranks, and paired send/recv never
//! deadlock).

use super::{DevPtr, RawStream};
use crate::Result;
use crate::base::dtype::DType;
use std::fmt;
use std::sync::Arc;

/// Size of a unique id, NCCL_UNIQUE_ID_BYTES (RCCL's too).
pub const UNIQUE_ID_BYTES: usize = 128;

/// The id every rank of one communicator is made from (`ncclUniqueId`): made once by one
/// rank and carried to the others by whatever the caller uses.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct UniqueId(pub [u8; UNIQUE_ID_BYTES]);

impl fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "UniqueId(")?;
        for b in &self.0[..16] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "..)")
    }
}

/// Reductions; the discriminants are NCCL's `ncclRedOp_t` and the C ABI's `rb_reduce_op`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum = 0,
    Prod = 1,
    Max = 2,
    Min = 3,
    /// The sum divided by the number of ranks (integer division for integer dtypes).
    Avg = 4,
}

impl ReduceOp {
    pub const ALL: [ReduceOp; 5] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Max,
        ReduceOp::Min,
        ReduceOp::Avg,
    ];
    pub fn from_i32(v: i32) -> Result<Self> {
        Self::ALL
            .get(usize::try_from(v).unwrap_or(usize::MAX))
            .copied()
            .ok_or_else(|| {
                crate::Error::invalid(format!(
                    "{v} is not a reduce op (0 sum, 1 prod, 2 max, 3 min, 4 avg)"
                ))
            })
    }
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Avg => "avg",
        }
    }
}

/// The dtypes collectives take: f32, f16, bf16, i32, i64 (not bool).
pub fn check_dtype(dtype: DType) -> Result<()> {
    match dtype {
        DType::F32 | DType::F16 | DType::BF16 | DType::I32 | DType::I64 => Ok(()),
        d => Err(crate::Error::dtype(format!(
            "collectives take f32, f16, bf16, i32 or i64, not {d}"
        ))),
    }
}

/// One collective or point-to-point call, in NCCL's terms. `count` is in elements: the
/// whole buffer for all-reduce and broadcast, each rank's part for all-gather (`recv` holds
/// `count * size`) and reduce-scatter (`send` holds `count * size`), the message for
/// send/recv.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollCall {
    AllReduce {
        send: DevPtr,
        recv: DevPtr,
        count: usize,
        op: ReduceOp,
    },
    AllGather {
        send: DevPtr,
        recv: DevPtr,
        count: usize,
    },
    ReduceScatter {
        send: DevPtr,
        recv: DevPtr,
        count: usize,
        op: ReduceOp,
    },
    /// `send` is read on `root` only; every rank's `recv` gets root's data.
    Broadcast {
        send: DevPtr,
        recv: DevPtr,
        count: usize,
        root: usize,
    },
    Send {
        buf: DevPtr,
        count: usize,
        peer: usize,
    },
    Recv {
        buf: DevPtr,
        count: usize,
        peer: usize,
    },
}

impl CollCall {
    pub fn name(&self) -> &'static str {
        match self {
            CollCall::AllReduce { .. } => "all_reduce",
            CollCall::AllGather { .. } => "all_gather",
            CollCall::ReduceScatter { .. } => "reduce_scatter",
            CollCall::Broadcast { .. } => "broadcast",
            CollCall::Send { .. } => "send",
            CollCall::Recv { .. } => "recv",
        }
    }
    /// Bytes of (send, recv) the call touches for `dtype` on a communicator of `size` ranks.
    pub fn extents(&self, dtype: DType, size: usize) -> (usize, usize) {
        let e = dtype.size();
        match *self {
            CollCall::AllReduce { count, .. } | CollCall::Broadcast { count, .. } => {
                (count * e, count * e)
            }
            CollCall::AllGather { count, .. } => (count * e, count * size * e),
            CollCall::ReduceScatter { count, .. } => (count * size * e, count * e),
            CollCall::Send { count, .. } => (count * e, 0),
            CollCall::Recv { count, .. } => (0, count * e),
        }
    }
}

/// One rank's member of a communicator, on its device.
pub trait DeviceComm: Send + Sync + fmt::Debug {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Issues `call` on `stream` (GPUs: asynchronously, ordered on the stream; the CPU:
    /// completes before returning, or at the end of the thread's group).
    fn call(&self, call: CollCall, dtype: DType, stream: RawStream) -> Result<()>;
    /// Abandons the communicator: pending and later calls fail, peers waiting on this rank
    /// fail (CPU) or are released by their own abort (NCCL's ncclCommAbort). Idempotent.
    fn abort(&self) -> Result<()>;
    /// Frees the communicator after its work is issued; later calls fail. Idempotent.
    fn destroy(&self) -> Result<()>;
    /// Sets how long a call waits for its peers (the CPU; GPUs ignore it: their waits are
    /// the vendor's).
    fn set_timeout(&self, t: std::time::Duration) {
        let _ = t;
    }
    /// An error the communicator met asynchronously (NCCL's ncclCommGetAsyncError).
    fn async_error(&self) -> Result<()> {
        Ok(())
    }
}

/// What a device does for communicators. The defaults answer UNSUPPORTED.
pub trait CommOps {
    /// A fresh unique id for a new communicator.
    fn comm_unique_id(&self) -> Result<UniqueId> {
        Err(crate::Error::unsupported("no collectives on this device"))
    }
    /// This process's member `rank` of the `world`-rank communicator made from `id` (NCCL
    /// blocks until every rank has joined; the CPU returns at once).
    fn comm_init(&self, id: &UniqueId, world: usize, rank: usize) -> Result<Arc<dyn DeviceComm>> {
        let _ = (id, world, rank);
        Err(crate::Error::unsupported("no collectives on this device"))
    }
    /// One communicator over the devices of this kind with `ordinals` (ncclCommInitAll),
    /// driven by one process: member i is rank i.
    fn comm_init_all(&self, ordinals: &[usize]) -> Result<Vec<Arc<dyn DeviceComm>>> {
        let _ = ordinals;
        Err(crate::Error::unsupported("no collectives on this device"))
    }
}

/// Starts a group of calls on the calling thread (ncclGroupStart): calls made until the
/// matching [`group_end`] are issued together. Groups nest.
pub fn group_start() -> Result<()> {
    super::cpu::comm::group_start();
    super::gpu::comm::group_start()
}

/// Ends a group (ncclGroupEnd); at the outermost end the group's calls complete (the CPU)
/// or are launched (GPUs). Fails with INVALID_ARGUMENT without a matching start.
pub fn group_end() -> Result<()> {
    let g = super::gpu::comm::group_end();
    let c = super::cpu::comm::group_end();
    g.and(c)
}
