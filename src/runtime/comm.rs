//! Communicators (DESIGN §11): a [`Comm`] is one rank of a group of ranks that run
//! collectives together (all-reduce, all-gather, reduce-scatter, broadcast, send/recv), on
//! tensors or on raw device pointers, ordered on a stream. GPUs use RCCL / NCCL; the CPU
//! device uses threads of one process (`device/cpu/comm.rs`). Sizes and dtypes are checked
//! here, before the device sees the call.

use super::{Stream, Tensor};
use crate::base::dtype::DType;
use crate::device::comm::{self as dcomm, CollCall, DeviceComm, ReduceOp, UniqueId, check_dtype};
use crate::device::{DevPtr, Device, DeviceKind, RawStream};
use crate::{Error, Result};
use std::sync::Arc;
use std::time::Duration;

pub use crate::device::comm::{ReduceOp as Op, UNIQUE_ID_BYTES};

/// One rank of a communicator.
#[derive(Debug)]
pub struct Comm {
    device: Arc<dyn Device>,
    inner: Arc<dyn DeviceComm>,
}

/// A fresh unique id from `device` (made once, by one rank, and given to every rank).
pub fn unique_id(device: &Arc<dyn Device>) -> Result<UniqueId> {
    device.comm_unique_id()
}

/// Starts a group of calls on this thread ([`dcomm::group_start`]).
pub fn group_begin() -> Result<()> {
    dcomm::group_start()
}

/// Ends a group of calls on this thread ([`dcomm::group_end`]).
pub fn group_end() -> Result<()> {
    dcomm::group_end()
}

impl Comm {
    /// Rank `rank` of the `world`-rank communicator made from `id`, on `device`.
    pub fn init(device: Arc<dyn Device>, id: &UniqueId, world: usize, rank: usize) -> Result<Comm> {
        if world == 0 {
            return Err(Error::invalid("world_size must be at least 1"));
        }
        if rank >= world {
            return Err(Error::invalid(format!(
                "rank {rank} is out of range for world_size {world}"
            )));
        }
        let inner = device.comm_init(id, world, rank)?;
        Ok(Comm { device, inner })
    }

    /// One communicator over `devices` (rank i on `devices[i]`), driven by this process. The
    /// devices are all of one kind; GPUs are distinct; the CPU may repeat (one rank per
    /// entry, each to be driven by its own thread or inside a group).
    pub fn init_all(devices: &[Arc<dyn Device>]) -> Result<Vec<Comm>> {
        let first = devices
            .first()
            .ok_or_else(|| Error::invalid("init_all needs at least one device"))?;
        let kind = first.kind();
        if let Some(d) = devices.iter().find(|d| d.kind() != kind) {
            return Err(Error::invalid(format!(
                "init_all: devices of different kinds ({} and {})",
                first.name(),
                d.name()
            )));
        }
        let ordinals: Vec<usize> = devices.iter().map(|d| d.ordinal()).collect();
        if kind != DeviceKind::Cpu {
            for (i, o) in ordinals.iter().enumerate() {
                if ordinals[..i].contains(o) {
                    return Err(Error::invalid(format!(
                        "init_all: {} appears twice",
                        devices[i].name()
                    )));
                }
            }
        }
        let inners = first.comm_init_all(&ordinals)?;
        Ok(devices
            .iter()
            .zip(inners)
            .map(|(d, inner)| Comm {
                device: d.clone(),
                inner,
            })
            .collect())
    }

    pub fn rank(&self) -> usize {
        self.inner.rank()
    }
    pub fn size(&self) -> usize {
        self.inner.size()
    }
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }
    /// How long a CPU rank waits for its peers before ErrorKind::Timeout.
    pub fn set_timeout(&self, t: Duration) {
        self.inner.set_timeout(t)
    }
    /// Abandons the communicator (pending and later calls fail).
    pub fn abort(&self) -> Result<()> {
        self.inner.abort()
    }
    /// Frees the communicator's resources; later calls fail.
    pub fn destroy(&self) -> Result<()> {
        self.inner.destroy()
    }
    /// An error met asynchronously (NCCL), if any.
    pub fn async_error(&self) -> Result<()> {
        self.inner.async_error()
    }

    fn raw_stream(&self, stream: Option<&Stream>) -> Result<RawStream> {
        match stream {
            None => Ok(RawStream::DEFAULT),
            Some(s) if super::tensor::same_device(s.device(), &self.device) => Ok(s.raw()),
            Some(s) => Err(Error::invalid(format!(
                "the stream is on {}, the communicator on {}",
                s.device().name(),
                self.device.name()
            ))),
        }
    }

    fn tensor(&self, t: &Tensor, arg: &str) -> Result<()> {
        if !t.same_device(&self.device) {
            return Err(Error::invalid(format!(
                "{arg} is on {}, the communicator on {}",
                t.device().name(),
                self.device.name()
            )));
        }
        check_dtype(t.dtype()).map_err(|e| e.context(arg))
    }

    fn pair(&self, send: &Tensor, recv: &Tensor) -> Result<DType> {
        self.tensor(send, "send")?;
        self.tensor(recv, "recv")?;
        if send.dtype() != recv.dtype() {
            return Err(Error::dtype(format!(
                "send is {}, recv {}",
                send.dtype(),
                recv.dtype()
            )));
        }
        Ok(send.dtype())
    }

    /// Runs a raw call on device pointers: the pointers must hold what `call` reads and
    /// writes for `dtype` (see [`CollCall`]); only NULL and the peer/root are checked.
    pub fn call_raw(&self, stream: Option<&Stream>, call: CollCall, dtype: DType) -> Result<()> {
        check_dtype(dtype)?;
        let count = match call {
            CollCall::AllReduce { count, .. }
            | CollCall::AllGather { count, .. }
            | CollCall::ReduceScatter { count, .. }
            | CollCall::Broadcast { count, .. }
            | CollCall::Send { count, .. }
            | CollCall::Recv { count, .. } => count,
        };
        if count
            .checked_mul(dtype.size())
            .and_then(|b| b.checked_mul(self.size()))
            .is_none_or(|b| b > isize::MAX as usize)
        {
            return Err(Error::invalid(format!(
                "count {count} of {dtype} overflows the address space"
            )));
        }
        let (sb, rb) = call.extents(dtype, self.size());
        let nonnull = |p: DevPtr, b: usize, arg: &str| {
            if b > 0 && p.is_null() {
                Err(Error::new(
                    crate::ErrorKind::NullPointer,
                    format!("{arg} is NULL"),
                ))
            } else {
                Ok(())
            }
        };
        let world = self.size();
        match call {
            CollCall::AllReduce { send, recv, .. }
            | CollCall::AllGather { send, recv, .. }
            | CollCall::ReduceScatter { send, recv, .. } => {
                nonnull(send, sb, "send")?;
                nonnull(recv, rb, "recv")?;
            }
            CollCall::Broadcast {
                send, recv, root, ..
            } => {
                if root >= world {
                    return Err(Error::invalid(format!(
                        "root {root} is out of range for a communicator of {world} ranks"
                    )));
                }
                if root == self.rank() {
                    nonnull(send, sb, "send")?;
                }
                nonnull(recv, rb, "recv")?;
            }
            CollCall::Send { buf, peer, .. } | CollCall::Recv { buf, peer, .. } => {
                if peer >= world {
                    return Err(Error::invalid(format!(
                        "peer {peer} is out of range for a communicator of {world} ranks"
                    )));
                }
                nonnull(buf, sb.max(rb), "buf")?;
            }
        }
        let s = self.raw_stream(stream)?;
        self.inner.call(call, dtype, s)
    }

    /// `recv = op(send of every rank)`, elementwise; `send` and `recv` have the same number
    /// of elements and dtype (they may be the same tensor).
    pub fn all_reduce(
        &self,
        stream: Option<&Stream>,
        send: &Tensor,
        recv: &Tensor,
        op: ReduceOp,
    ) -> Result<()> {
        let dtype = self.pair(send, recv)?;
        if send.numel() != recv.numel() {
            return Err(Error::shape(format!(
                "all_reduce: send has {} elements, recv {}",
                send.numel(),
                recv.numel()
            )));
        }
        self.call_raw(
            stream,
            CollCall::AllReduce {
                send: send.ptr(),
                recv: recv.ptr(),
                count: send.numel(),
                op,
            },
            dtype,
        )
    }

    /// `recv` = every rank's `send`, concatenated in rank order (`size` times its elements).
    pub fn all_gather(&self, stream: Option<&Stream>, send: &Tensor, recv: &Tensor) -> Result<()> {
        let dtype = self.pair(send, recv)?;
        if send.numel() * self.size() != recv.numel() {
            return Err(Error::shape(format!(
                "all_gather: recv has {} elements, not {} ranks x {} (send)",
                recv.numel(),
                self.size(),
                send.numel()
            )));
        }
        self.call_raw(
            stream,
            CollCall::AllGather {
                send: send.ptr(),
                recv: recv.ptr(),
                count: send.numel(),
            },
            dtype,
        )
    }

    /// `recv` = this rank's part (part `rank` of `size` equal parts) of `op(send of every
    /// rank)`; `send` has `size` times `recv`'s elements.
    pub fn reduce_scatter(
        &self,
        stream: Option<&Stream>,
        send: &Tensor,
        recv: &Tensor,
        op: ReduceOp,
    ) -> Result<()> {
        let dtype = self.pair(send, recv)?;
        if recv.numel() * self.size() != send.numel() {
            return Err(Error::shape(format!(
                "reduce_scatter: send has {} elements, not {} ranks x {} (recv)",
                send.numel(),
                self.size(),
                recv.numel()
            )));
        }
        self.call_raw(
            stream,
            CollCall::ReduceScatter {
                send: send.ptr(),
                recv: recv.ptr(),
                count: recv.numel(),
                op,
            },
            dtype,
        )
    }

    /// Every rank's `recv` = `root`'s `send` (`send` is read on the root only; `None` means
    /// `recv` itself, in place).
    pub fn broadcast(
        &self,
        stream: Option<&Stream>,
        send: Option<&Tensor>,
        recv: &Tensor,
        root: usize,
    ) -> Result<()> {
        let send = send.unwrap_or(recv);
        let dtype = self.pair(send, recv)?;
        if send.numel() != recv.numel() {
            return Err(Error::shape(format!(
                "broadcast: send has {} elements, recv {}",
                send.numel(),
                recv.numel()
            )));
        }
        self.call_raw(
            stream,
            CollCall::Broadcast {
                send: send.ptr(),
                recv: recv.ptr(),
                count: recv.numel(),
                root,
            },
            dtype,
        )
    }

    /// Sends `t` to rank `peer` (which receives it with [`Comm::recv`] of the same size).
    pub fn send(&self, stream: Option<&Stream>, t: &Tensor, peer: usize) -> Result<()> {
        self.tensor(t, "tensor")?;
        self.call_raw(
            stream,
            CollCall::Send {
                buf: t.ptr(),
                count: t.numel(),
                peer,
            },
            t.dtype(),
        )
    }

    /// Receives into `t` what rank `peer` sends.
    pub fn recv(&self, stream: Option<&Stream>, t: &Tensor, peer: usize) -> Result<()> {
        self.tensor(t, "tensor")?;
        self.call_raw(
            stream,
            CollCall::Recv {
                buf: t.ptr(),
                count: t.numel(),
                peer,
            },
            t.dtype(),
        )
    }
}
