//! Communicators and collectives (DESIGN §11): `rb_comm_*`, `rb_all_reduce`,
//! `rb_all_gather`, `rb_reduce_scatter`, `rb_broadcast`, `rb_send`/`rb_recv` on tensors and
//! (the `_raw` forms) on device pointers, ordered on a stream; `rb_comm_group_begin/end`.
//!
//! GPUs use the vendor's collective library (RCCL on AMD, NCCL on NVIDIA, loaded at run
//! time: without it these calls answer RB_STATUS_UNSUPPORTED naming the library); the CPU
//! device runs the ranks as threads of one process. On a GPU a call is enqueued on the
//! stream and returns; on the CPU it completes before returning (or at the group's end).
//! Every rank must make the same calls in the same order (the CPU checks counts, dtypes,
//! ops and roots across ranks: RB_STATUS_SHAPE_MISMATCH). A CPU rank waits for its peers at
//! most the communicator's timeout (`rb_comm_set_timeout_ms`, default `RB_COMM_TIMEOUT_MS`
//! or 300000 ms): a peer gone gives RB_STATUS_TIMEOUT, a peer aborted or destroyed while
//! needed RB_STATUS_ABORTED. A communicator handle may be used from several threads, but
//! the calls of one rank must be issued in one order (as NCCL requires).

use super::handles::{arc, new_handle, release};
use super::status::{guard, rb_status};
use super::stream::{rb_stream, stream_arg};
use super::tensor::rb_tensor;
use super::util::{check_out, cstr, cstr_opt, dtype_arg, null, write_out};
use crate::device::DevPtr;
use crate::device::comm::{CollCall, ReduceOp, UniqueId};
use crate::runtime::comm::{self, Comm};
use crate::runtime::{Stream, context};
use crate::{Error, Result};
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// An opaque communicator handle: one rank of a communicator.
pub struct rb_comm {
    _private: [u8; 0],
}

/// Bytes in an `rb_comm_unique_id` (NCCL_UNIQUE_ID_BYTES).
pub const RB_COMM_UNIQUE_ID_BYTES: usize = 128;

/// The id every rank of one communicator is made from (NCCL's `ncclUniqueId`, 128 bytes):
/// made by one rank with `rb_comm_get_unique_id` and carried to the others by whatever the
/// caller uses (a file, a socket, MPI_Bcast). Plain bytes: copy it freely.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct rb_comm_unique_id {
    pub internal: [c_char; 128],
}

fn comm_arg(c: *mut rb_comm) -> Result<Arc<Comm>> {
    arc(c, "comm")
}

fn op_arg(v: i32) -> Result<ReduceOp> {
    ReduceOp::from_i32(v).map_err(|e| e.context("op"))
}

fn index_arg(v: i32, arg: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(format!("{arg} is negative ({v})")))
}

/// The stream argument, refused while it is being recorded into a graph.
fn stream_for(call: &str, s: *mut rb_stream) -> Result<Option<Arc<Stream>>> {
    let s = stream_arg(s)?;
    if let Some(st) = &s {
        crate::graph::capture::check_unrecordable(call, "collectives are not graph ops", st)?;
    }
    Ok(s)
}

/// Writes a fresh unique id for a communicator on `device` (a device string, or NULL for
/// the current device) to `*out`. Call it on one rank and give the bytes to every rank.
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT,
/// RB_STATUS_DEVICE_UNAVAILABLE, RB_STATUS_UNSUPPORTED (no RCCL/NCCL) or RB_STATUS_VENDOR;
/// `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_get_unique_id(
    device: *const c_char,
    out: *mut rb_comm_unique_id,
) -> rb_status {
    guard("rb_comm_get_unique_id", || {
        check_out(out, "out")?;
        let d = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
        let id = comm::unique_id(&d)?;
        let v = rb_comm_unique_id {
            internal: id.0.map(|b| b as c_char),
        };
        unsafe { write_out(out, "out", v) }
    })
}

/// Makes rank `rank` of the `world_size`-rank communicator `*id` on `device` (a device
/// string, or NULL for the current device). One call per rank, typically one process (or,
/// on the CPU, one thread) per rank. On GPUs this blocks until every rank has joined (NCCL's
/// ncclCommInitRank); on the CPU it returns at once.
///
/// On success `*out` is a new handle the caller owns (free it with `rb_comm_destroy`).
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (world_size < 1, rank out
/// of range, a rank that already joined, an id from another device kind),
/// RB_STATUS_DEVICE_UNAVAILABLE, RB_STATUS_UNSUPPORTED (no RCCL/NCCL) or RB_STATUS_VENDOR;
/// `*out` is then unchanged. Thread-safe.
///
/// # Safety
/// `device` is NULL or a NUL-terminated string; `id` is NULL or readable; `out` is NULL or
/// writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_init(
    device: *const c_char,
    id: *const rb_comm_unique_id,
    world_size: i32,
    rank: i32,
    out: *mut *mut rb_comm,
) -> rb_status {
    guard("rb_comm_init", || {
        check_out(out, "out")?;
        if id.is_null() {
            return Err(null("id"));
        }
        let d = context::resolve(unsafe { cstr_opt(device, "device") }?)?;
        // SAFETY: checked non-NULL; the caller's promise that it is readable.
        let raw = unsafe { *id };
        let uid = UniqueId(raw.internal.map(|b| b as u8));
        let world = index_arg(world_size, "world_size")?;
        let rank = index_arg(rank, "rank")?;
        let c = Comm::init(d, &uid, world, rank)?;
        unsafe { write_out(out, "out", new_handle(c)) }
    })
}

/// Makes one communicator over `n` devices driven by this process: `devices[i]` (device
/// strings) is rank i, and `comms[i]` receives its handle (ncclCommInitAll). GPUs must be
/// distinct devices of one kind; "cpu" may repeat (each rank then needs its own thread, or
/// all of them one group: `rb_comm_group_begin`).
///
/// On success the caller owns the `n` handles (free each with `rb_comm_destroy`). Fails with
/// RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_ARGUMENT (n < 1, mixed kinds, a repeated GPU),
/// RB_STATUS_DEVICE_UNAVAILABLE, RB_STATUS_UNSUPPORTED or RB_STATUS_VENDOR; nothing is
/// written then. Thread-safe.
///
/// # Safety
/// `devices` is NULL or holds `n` NUL-terminated strings; `comms` is NULL or has room for
/// `n` handles.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_init_all(
    devices: *const *const c_char,
    n: i32,
    comms: *mut *mut rb_comm,
) -> rb_status {
    guard("rb_comm_init_all", || {
        check_out(comms, "comms")?;
        if devices.is_null() {
            return Err(null("devices"));
        }
        let n = index_arg(n, "n")?;
        if n == 0 {
            return Err(Error::invalid("n must be at least 1"));
        }
        let mut devs = Vec::with_capacity(n);
        for i in 0..n {
            // SAFETY: the caller's promise that `devices` holds `n` entries.
            let p = unsafe { *devices.add(i) };
            let s = unsafe { cstr(p, &format!("devices[{i}]")) }?;
            devs.push(context::resolve(Some(s))?);
        }
        let cs = Comm::init_all(&devs)?;
        for (i, c) in cs.into_iter().enumerate() {
            // SAFETY: `comms` has room for `n` handles.
            unsafe { *comms.add(i) = new_handle(c) };
        }
        Ok(())
    })
}

/// Frees a communicator (rank) after its work has been issued (ncclCommDestroy); CPU peers
/// still waiting for this rank then fail with RB_STATUS_ABORTED. NULL is a no-op. Fails with
/// RB_STATUS_INVALID_HANDLE for a stale, foreign or non-communicator handle, or
/// RB_STATUS_VENDOR (the handle is released all the same). Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_destroy(comm: *mut rb_comm) -> rb_status {
    guard("rb_comm_destroy", || {
        if comm.is_null() {
            return Ok(());
        }
        let c = comm_arg(comm)?;
        release(comm, "comm")?;
        c.destroy()
    })
}

/// Aborts a communicator that is stuck or whose peer is gone (ncclCommAbort): calls in
/// flight on it (on other threads) and later calls fail with RB_STATUS_ABORTED; CPU peers
/// waiting for this rank fail with RB_STATUS_ABORTED. The handle stays valid until
/// `rb_comm_destroy`. Idempotent. Fails with RB_STATUS_NULL_POINTER,
/// RB_STATUS_INVALID_HANDLE or RB_STATUS_VENDOR. Thread-safe (it is meant to be called from
/// another thread than the one that is stuck).
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_abort(comm: *mut rb_comm) -> rb_status {
    guard("rb_comm_abort", || comm_arg(comm)?.abort())
}

/// Writes this rank's number (0..size) to `*out`. Fails with RB_STATUS_NULL_POINTER or
/// RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_rank(comm: *mut rb_comm, out: *mut i32) -> rb_status {
    guard("rb_comm_rank", || {
        check_out(out, "out")?;
        let c = comm_arg(comm)?;
        unsafe { write_out(out, "out", c.rank() as i32) }
    })
}

/// Writes the number of ranks of the communicator to `*out`. Fails with
/// RB_STATUS_NULL_POINTER or RB_STATUS_INVALID_HANDLE. Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_size(comm: *mut rb_comm, out: *mut i32) -> rb_status {
    guard("rb_comm_size", || {
        check_out(out, "out")?;
        let c = comm_arg(comm)?;
        unsafe { write_out(out, "out", c.size() as i32) }
    })
}

/// Sets how long a CPU rank waits for its peers in one call before RB_STATUS_TIMEOUT
/// (`ms` >= 1; GPU communicators ignore it: their waits are the vendor library's). Fails
/// with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE or RB_STATUS_INVALID_ARGUMENT.
/// Thread-safe.
///
/// # Safety
/// None: the handle is checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_comm_set_timeout_ms(comm: *mut rb_comm, ms: i64) -> rb_status {
    guard("rb_comm_set_timeout_ms", || {
        let c = comm_arg(comm)?;
        if ms < 1 {
            return Err(Error::invalid(format!("ms must be at least 1, not {ms}")));
        }
        c.set_timeout(std::time::Duration::from_millis(ms as u64));
        Ok(())
    })
}

/// Starts a group of collective calls on the calling thread (ncclGroupStart): the calls
/// made until the matching `rb_comm_group_end`, on any communicator, are issued together,
/// so one thread may drive several ranks and paired `rb_send`/`rb_recv` cannot deadlock.
/// Groups nest; buffers must stay alive until the outermost end. Always succeeds unless
/// the vendor library fails (RB_STATUS_VENDOR). Per thread.
#[unsafe(no_mangle)]
pub extern "C" fn rb_comm_group_begin() -> rb_status {
    guard("rb_comm_group_begin", comm::group_begin)
}

/// Ends a group (ncclGroupEnd). At the outermost end the group's calls are launched (GPUs)
/// or completed (the CPU); the first failure among them is returned (RB_STATUS_TIMEOUT,
/// RB_STATUS_ABORTED, RB_STATUS_SHAPE_MISMATCH, RB_STATUS_VENDOR, ...). Fails with
/// RB_STATUS_INVALID_ARGUMENT without a matching begin on this thread. Per thread.
#[unsafe(no_mangle)]
pub extern "C" fn rb_comm_group_end() -> rb_status {
    guard("rb_comm_group_end", comm::group_end)
}

/// All-reduce on tensors: every rank's `recv` = `op` (an `rb_collective_op`) over every
/// rank's `send`, elementwise. `send` and `recv` have the same element count and dtype
/// (f32, f16, bf16, i32, i64) and live on the communicator's device; they may be the same
/// tensor (in place). `stream` may be NULL (the device's default stream).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (a destroyed communicator or
/// tensor), RB_STATUS_INVALID_ARGUMENT (bad op, another device), RB_STATUS_SHAPE_MISMATCH
/// (element counts, here or across ranks), RB_STATUS_DTYPE_MISMATCH, RB_STATUS_TIMEOUT,
/// RB_STATUS_ABORTED, RB_STATUS_UNSUPPORTED (a stream being recorded) or RB_STATUS_VENDOR.
/// The handles are not consumed. Thread-safe (see the module conventions on ordering).
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_all_reduce(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const rb_tensor,
    recv: *mut rb_tensor,
    op: i32,
) -> rb_status {
    guard("rb_all_reduce", || {
        let c = comm_arg(comm)?;
        let s = stream_for("rb_all_reduce", stream)?;
        let (a, b) = (arc(send, "send")?, arc(recv, "recv")?);
        c.all_reduce(s.as_deref(), &a, &b, op_arg(op)?)
    })
}

/// All-gather on tensors: every rank's `recv` = every rank's `send` concatenated in rank
/// order; `recv` has size x `send`'s elements, same dtype. Failures and thread-safety as
/// `rb_all_reduce`.
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_all_gather(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const rb_tensor,
    recv: *mut rb_tensor,
) -> rb_status {
    guard("rb_all_gather", || {
        let c = comm_arg(comm)?;
        let s = stream_for("rb_all_gather", stream)?;
        let (a, b) = (arc(send, "send")?, arc(recv, "recv")?);
        c.all_gather(s.as_deref(), &a, &b)
    })
}

/// Reduce-scatter on tensors: `recv` = part `rank` (of size equal parts) of `op` over every
/// rank's `send`; `send` has size x `recv`'s elements, same dtype. Failures and
/// thread-safety as `rb_all_reduce`.
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_reduce_scatter(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const rb_tensor,
    recv: *mut rb_tensor,
    op: i32,
) -> rb_status {
    guard("rb_reduce_scatter", || {
        let c = comm_arg(comm)?;
        let s = stream_for("rb_reduce_scatter", stream)?;
        let (a, b) = (arc(send, "send")?, arc(recv, "recv")?);
        c.reduce_scatter(s.as_deref(), &a, &b, op_arg(op)?)
    })
}

/// Broadcast on tensors: every rank's `recv` = rank `root`'s `send`. `send` is read on the
/// root only and may be NULL (then `recv` is the root's data, in place); same element count
/// and dtype as `recv`. Failures and thread-safety as `rb_all_reduce` (RB_STATUS_INVALID_ARGUMENT
/// also for a root out of range).
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_broadcast(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const rb_tensor,
    recv: *mut rb_tensor,
    root: i32,
) -> rb_status {
    guard("rb_broadcast", || {
        let c = comm_arg(comm)?;
        let s = stream_for("rb_broadcast", stream)?;
        let a = super::handles::arc_opt(send, "send")?;
        let b = arc(recv, "recv")?;
        c.broadcast(s.as_deref(), a.as_deref(), &b, index_arg(root, "root")?)
    })
}

/// Sends `tensor` to rank `peer`, which must `rb_recv` the same element count and dtype
/// from this rank (pair them inside a group when both sides also receive). Failures and
/// thread-safety as `rb_all_reduce` (RB_STATUS_INVALID_ARGUMENT for a peer out of range).
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_send(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    tensor: *const rb_tensor,
    peer: i32,
) -> rb_status {
    guard("rb_send", || {
        let c = comm_arg(comm)?;
        let s = stream_for("rb_send", stream)?;
        let t = arc(tensor, "tensor")?;
        c.send(s.as_deref(), &t, index_arg(peer, "peer")?)
    })
}

/// Receives into `tensor` what rank `peer` sends (RB_STATUS_SHAPE_MISMATCH on the CPU when
/// the message has another size). Failures and thread-safety as `rb_send`.
///
/// # Safety
/// None: the handles are checked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_recv(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    tensor: *mut rb_tensor,
    peer: i32,
) -> rb_status {
    guard("rb_recv", || {
        let c = comm_arg(comm)?;
        let s = stream_for("rb_recv", stream)?;
        let t = arc(tensor, "tensor")?;
        c.recv(s.as_deref(), &t, index_arg(peer, "peer")?)
    })
}

fn raw_call(
    func: &str,
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    dtype: i32,
    make: impl FnOnce(&Comm) -> Result<CollCall>,
) -> rb_status {
    guard(func, || {
        let c = comm_arg(comm)?;
        let s = stream_for(func, stream)?;
        let d = dtype_arg(dtype)?;
        let call = make(&c)?;
        c.call_raw(s.as_deref(), call, d)
    })
}

fn p(v: *const c_void) -> DevPtr {
    DevPtr(v as usize as u64)
}

/// `rb_all_reduce` on device pointers (host pointers on the CPU): `count` elements of
/// `dtype` (an `rb_dtype`: f32, f16, bf16, i32, i64) at `send` and at `recv` (they may be
/// equal). Failures as `rb_all_reduce` (RB_STATUS_NULL_POINTER for a NULL buffer with
/// count > 0).
///
/// # Safety
/// `send` and `recv` address `count` elements of `dtype` on the communicator's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_all_reduce_raw(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: i32,
    op: i32,
) -> rb_status {
    raw_call("rb_all_reduce_raw", comm, stream, dtype, |_| {
        Ok(CollCall::AllReduce {
            send: p(send),
            recv: p(recv),
            count,
            op: op_arg(op)?,
        })
    })
}

/// `rb_all_gather` on device pointers: `count` elements at `send`, size x `count` at `recv`.
///
/// # Safety
/// The buffers address those elements of `dtype` on the communicator's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_all_gather_raw(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: i32,
) -> rb_status {
    raw_call("rb_all_gather_raw", comm, stream, dtype, |_| {
        Ok(CollCall::AllGather {
            send: p(send),
            recv: p(recv),
            count,
        })
    })
}

/// `rb_reduce_scatter` on device pointers: size x `count` elements at `send`, `count` at
/// `recv`.
///
/// # Safety
/// The buffers address those elements of `dtype` on the communicator's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_reduce_scatter_raw(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: i32,
    op: i32,
) -> rb_status {
    raw_call("rb_reduce_scatter_raw", comm, stream, dtype, |_| {
        Ok(CollCall::ReduceScatter {
            send: p(send),
            recv: p(recv),
            count,
            op: op_arg(op)?,
        })
    })
}

/// `rb_broadcast` on device pointers: `count` elements at `recv` (and at `send` on the
/// root; `send` may equal `recv`, and is ignored elsewhere).
///
/// # Safety
/// The buffers address those elements of `dtype` on the communicator's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_broadcast_raw(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    send: *const c_void,
    recv: *mut c_void,
    count: usize,
    dtype: i32,
    root: i32,
) -> rb_status {
    raw_call("rb_broadcast_raw", comm, stream, dtype, |_| {
        Ok(CollCall::Broadcast {
            send: p(send),
            recv: p(recv),
            count,
            root: index_arg(root, "root")?,
        })
    })
}

/// `rb_send` on a device pointer: `count` elements of `dtype` at `buf` to rank `peer`.
///
/// # Safety
/// `buf` addresses those elements on the communicator's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_send_raw(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    buf: *const c_void,
    count: usize,
    dtype: i32,
    peer: i32,
) -> rb_status {
    raw_call("rb_send_raw", comm, stream, dtype, |_| {
        Ok(CollCall::Send {
            buf: p(buf),
            count,
            peer: index_arg(peer, "peer")?,
        })
    })
}

/// `rb_recv` on a device pointer: `count` elements of `dtype` into `buf` from rank `peer`.
///
/// # Safety
/// `buf` addresses those elements on the communicator's device.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_recv_raw(
    comm: *mut rb_comm,
    stream: *mut rb_stream,
    buf: *mut c_void,
    count: usize,
    dtype: i32,
    peer: i32,
) -> rb_status {
    raw_call("rb_recv_raw", comm, stream, dtype, |_| {
        Ok(CollCall::Recv {
            buf: p(buf),
            count,
            peer: index_arg(peer, "peer")?,
        })
    })
}
