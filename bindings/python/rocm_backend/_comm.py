"""Communicators and collectives (RCCL on AMD, NCCL on NVIDIA, threads on the CPU).

    uid = rb.comm_unique_id("cpu")             # 128 bytes: make on one rank, give to all
    comm = rb.Comm(uid, world_size=2, rank=r, device="cpu")
    comm.all_reduce(grad)                      # in place, sum
    comm.all_reduce(x, out, op="avg")
    with rb.comm_group():                      # issued together (one thread, many ranks;
        comm.send(a, peer=1)                   #  paired send/recv never deadlock)
        comm.recv(b, peer=1)

On a GPU the calls are enqueued on the stream (default: the device's default stream) and
return; on the CPU they complete before returning, or at the end of the group.
"""

import contextlib
import ctypes

from ._core import Tensor, _enc, _invalid, check, dtype_code
from ._lib import lib

vp = ctypes.c_void_p
_st = ctypes.c_int32
_i32 = ctypes.c_int32
_size = ctypes.c_size_t

UNIQUE_ID_BYTES = 128


class _UniqueId(ctypes.Structure):
    """`rb_comm_unique_id`."""

    _fields_ = [("internal", ctypes.c_char * UNIQUE_ID_BYTES)]


OPS = {"sum": 0, "prod": 1, "max": 2, "min": 3, "avg": 4}

_PROTOS = {
    "rb_comm_get_unique_id": [ctypes.c_char_p, ctypes.POINTER(_UniqueId)],
    "rb_comm_init": [ctypes.c_char_p, ctypes.POINTER(_UniqueId), _i32, _i32, ctypes.POINTER(vp)],
    "rb_comm_init_all": [ctypes.POINTER(ctypes.c_char_p), _i32, ctypes.POINTER(vp)],
    "rb_comm_destroy": [vp],
    "rb_comm_abort": [vp],
    "rb_comm_rank": [vp, ctypes.POINTER(_i32)],
    "rb_comm_size": [vp, ctypes.POINTER(_i32)],
    "rb_comm_set_timeout_ms": [vp, ctypes.c_int64],
    "rb_comm_group_begin": [],
    "rb_comm_group_end": [],
    "rb_all_reduce": [vp, vp, vp, vp, _i32],
    "rb_all_gather": [vp, vp, vp, vp],
    "rb_reduce_scatter": [vp, vp, vp, vp, _i32],
    "rb_broadcast": [vp, vp, vp, vp, _i32],
    "rb_send": [vp, vp, vp, _i32],
    "rb_recv": [vp, vp, vp, _i32],
    "rb_all_reduce_raw": [vp, vp, vp, vp, _size, _i32, _i32],
    "rb_all_gather_raw": [vp, vp, vp, vp, _size, _i32],
    "rb_reduce_scatter_raw": [vp, vp, vp, vp, _size, _i32, _i32],
    "rb_broadcast_raw": [vp, vp, vp, vp, _size, _i32, _i32],
    "rb_send_raw": [vp, vp, vp, _size, _i32, _i32],
    "rb_recv_raw": [vp, vp, vp, _size, _i32, _i32],
    "rb_event_create": [ctypes.c_char_p, ctypes.POINTER(vp)],
    "rb_event_destroy": [vp],
    "rb_event_record": [vp, vp],
    "rb_event_synchronize": [vp],
    "rb_stream_wait_event": [vp, vp],
}
for _name, _args in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _st
    _f.argtypes = _args


class Event:
    """An `rb_event` on `device`: `record(stream)` marks the work queued so far on `stream`
    (None: the device's default stream); `wait(stream)` makes `stream` wait for it (how a
    communication stream waits for the gradients it reduces); `synchronize()` waits on the
    host."""

    __slots__ = ("_h",)

    def __init__(self, device=None):
        h = vp()
        check(lib.rb_event_create(_enc(device), ctypes.byref(h)))
        self._h = h.value

    def record(self, stream=None):
        check(lib.rb_event_record(self._h, _sh(stream)))
        return self

    def wait(self, stream=None):
        check(lib.rb_stream_wait_event(_sh(stream), self._h))

    def synchronize(self):
        check(lib.rb_event_synchronize(self._h))

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and lib is not None:
            lib.rb_event_destroy(h)


def comm_unique_id(device=None):
    """A fresh unique id (128 bytes) for a communicator on `device` (default: current)."""
    uid = _UniqueId()
    check(lib.rb_comm_get_unique_id(_enc(device), ctypes.byref(uid)))
    return bytes(ctypes.string_at(ctypes.addressof(uid), UNIQUE_ID_BYTES))


def _uid(b):
    b = bytes(b)
    if len(b) != UNIQUE_ID_BYTES:
        raise _invalid(f"a unique id has {UNIQUE_ID_BYTES} bytes, not {len(b)}")
    uid = _UniqueId()
    ctypes.memmove(ctypes.addressof(uid), b, UNIQUE_ID_BYTES)
    return uid


def _op(op):
    if isinstance(op, str):
        if op not in OPS:
            raise _invalid(f"unknown reduce op {op!r} (one of {', '.join(OPS)})")
        return OPS[op]
    return int(op)


def _sh(stream):
    return None if stream is None else stream.handle


@contextlib.contextmanager
def comm_group():
    """Groups the collective calls made inside the block on this thread (ncclGroupStart /
    ncclGroupEnd); the group's first failure is raised at its end."""
    check(lib.rb_comm_group_begin())
    try:
        yield
    finally:
        check(lib.rb_comm_group_end())


class Comm:
    """One rank of a communicator (`rb_comm`).

    `Comm(unique_id, world_size, rank, device=None, timeout_ms=None)`: `unique_id` from
    `comm_unique_id()` on one rank; one `Comm` per rank (a process per GPU, or a thread per
    rank on the CPU). `timeout_ms` bounds a CPU rank's wait for its peers (RbError with
    Status.TIMEOUT). Destroyed when collected or by `destroy()`."""

    __slots__ = ("_h", "_device")

    def __init__(self, unique_id, world_size, rank, device=None, timeout_ms=None, _handle=None):
        self._device = device
        if _handle is not None:
            self._h = _handle
        else:
            h = vp()
            uid = _uid(unique_id)
            check(lib.rb_comm_init(_enc(device), ctypes.byref(uid), int(world_size), int(rank), ctypes.byref(h)))
            self._h = h.value
        if timeout_ms is not None:
            self.set_timeout(timeout_ms)

    @staticmethod
    def init_all(devices):
        """One communicator over `devices` (rank i on devices[i]) for this process."""
        devs = [d.encode() for d in devices]
        arr = (ctypes.c_char_p * len(devs))(*devs)
        hs = (vp * len(devs))()
        check(lib.rb_comm_init_all(arr, len(devs), hs))
        return [Comm(None, None, None, device=d, _handle=h) for d, h in zip(devices, hs)]

    @property
    def handle(self):
        if not self._h:
            raise _invalid("the communicator was destroyed")
        return self._h

    @property
    def rank(self):
        v = _i32()
        check(lib.rb_comm_rank(self.handle, ctypes.byref(v)))
        return v.value

    @property
    def size(self):
        v = _i32()
        check(lib.rb_comm_size(self.handle, ctypes.byref(v)))
        return v.value

    def set_timeout(self, ms):
        check(lib.rb_comm_set_timeout_ms(self.handle, int(ms)))

    def all_reduce(self, send, recv=None, op="sum", stream=None):
        """`recv` (default: `send`, in place) = op over every rank's `send`; returns it."""
        recv = send if recv is None else recv
        check(lib.rb_all_reduce(self.handle, _sh(stream), send.handle, recv.handle, _op(op)))
        return recv

    def all_gather(self, send, recv=None, stream=None):
        """Every rank's `send` concatenated in rank order along dimension 0 (`recv` has size
        times send's rows; made when None); returns it."""
        if recv is None:
            shape = list(send.shape) or [1]
            shape[0] *= self.size
            recv = Tensor.empty(shape, send.dtype, send.device)
        check(lib.rb_all_gather(self.handle, _sh(stream), send.handle, recv.handle))
        return recv

    def reduce_scatter(self, send, recv=None, op="sum", stream=None):
        """This rank's part (along dimension 0) of op over every rank's `send`; returns it."""
        if recv is None:
            shape = list(send.shape)
            if not shape or shape[0] % self.size:
                raise _invalid(f"reduce_scatter: dimension 0 of {shape} does not split into {self.size} ranks")
            shape[0] //= self.size
            recv = Tensor.empty(shape, send.dtype, send.device)
        check(lib.rb_reduce_scatter(self.handle, _sh(stream), send.handle, recv.handle, _op(op)))
        return recv

    def broadcast(self, tensor, root=0, send=None, stream=None):
        """`tensor` on every rank = root's `send` (default: root's `tensor`); returns it."""
        check(lib.rb_broadcast(self.handle, _sh(stream), None if send is None else send.handle, tensor.handle, int(root)))
        return tensor

    def send(self, tensor, peer, stream=None):
        check(lib.rb_send(self.handle, _sh(stream), tensor.handle, int(peer)))

    def recv(self, tensor, peer, stream=None):
        check(lib.rb_recv(self.handle, _sh(stream), tensor.handle, int(peer)))
        return tensor

    # raw device pointers (ints): count elements of dtype
    def all_reduce_raw(self, send, recv, count, dtype="f32", op="sum", stream=None):
        check(lib.rb_all_reduce_raw(self.handle, _sh(stream), send, recv, count, dtype_code(dtype), _op(op)))

    def all_gather_raw(self, send, recv, count, dtype="f32", stream=None):
        check(lib.rb_all_gather_raw(self.handle, _sh(stream), send, recv, count, dtype_code(dtype)))

    def reduce_scatter_raw(self, send, recv, count, dtype="f32", op="sum", stream=None):
        check(lib.rb_reduce_scatter_raw(self.handle, _sh(stream), send, recv, count, dtype_code(dtype), _op(op)))

    def broadcast_raw(self, send, recv, count, dtype="f32", root=0, stream=None):
        check(lib.rb_broadcast_raw(self.handle, _sh(stream), send, recv, count, dtype_code(dtype), int(root)))

    def send_raw(self, buf, count, dtype, peer, stream=None):
        check(lib.rb_send_raw(self.handle, _sh(stream), buf, count, dtype_code(dtype), int(peer)))

    def recv_raw(self, buf, count, dtype, peer, stream=None):
        check(lib.rb_recv_raw(self.handle, _sh(stream), buf, count, dtype_code(dtype), int(peer)))

    def abort(self):
        """Abandons the communicator: calls in flight on other threads and later calls fail
        with Status.ABORTED."""
        check(lib.rb_comm_abort(self.handle))

    def destroy(self):
        h, self._h = getattr(self, "_h", None), None
        if h:
            check(lib.rb_comm_destroy(h))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.destroy()

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and lib is not None:
            lib.rb_comm_destroy(h)

    def __repr__(self):
        if not self._h:
            return "Comm(destroyed)"
        return f"Comm(rank={self.rank}, size={self.size}, device={self._device!r})"
