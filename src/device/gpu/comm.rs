//! GPU communicators through the vendor's collective library (RCCL / NCCL, `vendor/nccl.rs`):
//! every call is the library's own, enqueued on the caller's stream, so collectives overlap
//! compute on other streams. Group start/end go to every collective library loaded.

use super::GpuDevice;
use super::vendor::Vendor;
use super::vendor::nccl::{CollLib, NcclUniqueId, nccl, nccl_dtype, nccl_op, nccl_opt};
use crate::base::dtype::DType;
use crate::device::RawStream;
use crate::device::comm::{CollCall, CommOps, DeviceComm, UniqueId};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::ffi::{c_int, c_void};
use std::sync::Arc;

/// Life of a GPU communicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    Live,
    Aborted,
    Destroyed,
}

/// One rank: an `ncclComm_t` on one GPU.
pub struct GpuComm {
    lib: Arc<CollLib>,
    vendor: Arc<dyn Vendor>,
    ordinal: usize,
    comm: Mutex<(u64, Life)>,
    rank: usize,
    size: usize,
}

impl std::fmt::Debug for GpuComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "GpuComm({} rank {} of {} on device {})",
            self.lib.name, self.rank, self.size, self.ordinal
        )
    }
}

fn h(v: u64) -> *mut c_void {
    v as usize as *mut c_void
}

impl GpuComm {
    fn made(
        lib: Arc<CollLib>,
        vendor: Arc<dyn Vendor>,
        ordinal: usize,
        c: *mut c_void,
    ) -> Result<Self> {
        let (mut n, mut r): (c_int, c_int) = (0, 0);
        lib.check("ncclCommCount", nccl!(lib, ncclCommCount(c, &mut n)))?;
        lib.check("ncclCommUserRank", nccl!(lib, ncclCommUserRank(c, &mut r)))?;
        Ok(GpuComm {
            lib,
            vendor,
            ordinal,
            comm: Mutex::new((c as usize as u64, Life::Live)),
            rank: r as usize,
            size: n as usize,
        })
    }

    fn live(&self) -> Result<u64> {
        let g = self.comm.lock();
        match g.1 {
            Life::Live => Ok(g.0),
            Life::Aborted => Err(Error::aborted("the communicator was aborted")),
            Life::Destroyed => Err(Error::aborted("the communicator was destroyed")),
        }
    }
}

impl DeviceComm for GpuComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn call(&self, call: CollCall, dtype: DType, stream: RawStream) -> Result<()> {
        let c = h(self.live()?);
        self.vendor.bind(self.ordinal)?;
        let dt = nccl_dtype(dtype)?;
        let s = h(stream.0);
        let lib = &self.lib;
        let peer_ok = |p: usize| {
            if p < self.size {
                Ok(p as c_int)
            } else {
                Err(Error::invalid(format!(
                    "peer {p} is out of range for a communicator of {} ranks",
                    self.size
                )))
            }
        };
        let (name, r) = match call {
            CollCall::AllReduce {
                send,
                recv,
                count,
                op,
            } => (
                "ncclAllReduce",
                nccl!(
                    lib,
                    ncclAllReduce(
                        send.as_ptr(),
                        recv.as_mut_ptr(),
                        count,
                        dt,
                        nccl_op(op),
                        c,
                        s
                    )
                ),
            ),
            CollCall::AllGather { send, recv, count } => (
                "ncclAllGather",
                nccl!(
                    lib,
                    ncclAllGather(send.as_ptr(), recv.as_mut_ptr(), count, dt, c, s)
                ),
            ),
            CollCall::ReduceScatter {
                send,
                recv,
                count,
                op,
            } => (
                "ncclReduceScatter",
                nccl!(
                    lib,
                    ncclReduceScatter(
                        send.as_ptr(),
                        recv.as_mut_ptr(),
                        count,
                        dt,
                        nccl_op(op),
                        c,
                        s
                    )
                ),
            ),
            CollCall::Broadcast {
                send,
                recv,
                count,
                root,
            } => {
                let root = peer_ok(root)?;
                (
                    "ncclBroadcast",
                    nccl!(
                        lib,
                        ncclBroadcast(send.as_ptr(), recv.as_mut_ptr(), count, dt, root, c, s)
                    ),
                )
            }
            CollCall::Send { buf, count, peer } => {
                let p = peer_ok(peer)?;
                let r = nccl_opt!(lib, ncclSend(buf.as_ptr(), count, dt, p, c, s)).ok_or_else(
                    || Error::unsupported(format!("{} lacks ncclSend (before 2.7)", lib.name)),
                )?;
                ("ncclSend", r)
            }
            CollCall::Recv { buf, count, peer } => {
                let p = peer_ok(peer)?;
                let r = nccl_opt!(lib, ncclRecv(buf.as_mut_ptr(), count, dt, p, c, s)).ok_or_else(
                    || Error::unsupported(format!("{} lacks ncclRecv (before 2.7)", lib.name)),
                )?;
                ("ncclRecv", r)
            }
        };
        lib.check(name, r)
    }
    fn abort(&self) -> Result<()> {
        let mut g = self.comm.lock();
        if g.1 != Life::Live {
            return Ok(());
        }
        let c = h(g.0);
        g.1 = Life::Aborted;
        drop(g);
        let _ = self.vendor.bind(self.ordinal);
        let r = match nccl_opt!(self.lib, ncclCommAbort(c)) {
            Some(r) => r,
            None => nccl!(self.lib, ncclCommDestroy(c)),
        };
        self.lib.check("ncclCommAbort", r)
    }
    fn destroy(&self) -> Result<()> {
        let mut g = self.comm.lock();
        if g.1 != Life::Live {
            return Ok(());
        }
        let c = h(g.0);
        g.1 = Life::Destroyed;
        drop(g);
        let _ = self.vendor.bind(self.ordinal);
        self.lib
            .check("ncclCommDestroy", nccl!(self.lib, ncclCommDestroy(c)))
    }
    fn async_error(&self) -> Result<()> {
        let c = h(self.live()?);
        let mut e: c_int = 0;
        match nccl_opt!(self.lib, ncclCommGetAsyncError(c, &mut e)) {
            Some(r) => {
                self.lib.check("ncclCommGetAsyncError", r)?;
                self.lib.check("the communicator (asynchronous error)", e)
            }
            None => Ok(()),
        }
    }
}

impl Drop for GpuComm {
    fn drop(&mut self) {
        let _ = self.destroy();
    }
}

impl CommOps for GpuDevice {
    fn comm_unique_id(&self) -> Result<UniqueId> {
        let lib = self.vendor.collectives()?;
        let mut id = NcclUniqueId { internal: [0; 128] };
        lib.check("ncclGetUniqueId", nccl!(lib, ncclGetUniqueId(&mut id)))?;
        Ok(UniqueId::from(&id))
    }
    fn comm_init(&self, id: &UniqueId, world: usize, rank: usize) -> Result<Arc<dyn DeviceComm>> {
        if rank >= world {
            return Err(Error::invalid(format!(
                "rank {rank} is out of range for world_size {world}"
            )));
        }
        if crate::device::cpu::comm::is_cpu_id(id) {
            return Err(Error::invalid(
                "the unique id was made for the CPU device (rb_comm_get_unique_id on this GPU)",
            ));
        }
        let lib = self.vendor.collectives()?;
        self.vendor.bind(self.ordinal)?;
        let mut c: *mut c_void = std::ptr::null_mut();
        let r = nccl!(
            lib,
            ncclCommInitRank(
                &mut c,
                world as c_int,
                NcclUniqueId::from(id),
                rank as c_int
            )
        );
        lib.check("ncclCommInitRank", r)?;
        Ok(Arc::new(GpuComm::made(
            lib,
            self.vendor.clone(),
            self.ordinal,
            c,
        )?))
    }
    fn comm_init_all(&self, ordinals: &[usize]) -> Result<Vec<Arc<dyn DeviceComm>>> {
        let lib = self.vendor.collectives()?;
        let devs: Vec<c_int> = ordinals.iter().map(|&o| o as c_int).collect();
        let mut cs: Vec<*mut c_void> = vec![std::ptr::null_mut(); devs.len()];
        let r = nccl!(
            lib,
            ncclCommInitAll(cs.as_mut_ptr(), devs.len() as c_int, devs.as_ptr())
        );
        lib.check("ncclCommInitAll", r)?;
        cs.into_iter()
            .zip(ordinals)
            .map(|(c, &o)| {
                GpuComm::made(lib.clone(), self.vendor.clone(), o, c)
                    .map(|g| Arc::new(g) as Arc<dyn DeviceComm>)
            })
            .collect()
    }
}

/// ncclGroupStart on every loaded collective library.
pub fn group_start() -> Result<()> {
    for lib in super::vendor::nccl::loaded() {
        lib.check("ncclGroupStart", nccl!(lib, ncclGroupStart()))?;
    }
    Ok(())
}

/// ncclGroupEnd on every loaded collective library.
pub fn group_end() -> Result<()> {
    let mut first = Ok(());
    for lib in super::vendor::nccl::loaded() {
        let r = lib.check("ncclGroupEnd", nccl!(lib, ncclGroupEnd()));
        if first.is_ok() {
            first = r;
        }
    }
    first
}
