"""DLPack interop (the array-API protocol), zero-copy both ways.

    t = rb.from_dlpack(np_array)          # or a torch / CuPy / JAX array: no copy
    a = np.from_dlpack(t)                 # torch.from_dlpack(t), cupy.from_dlpack(t)

`Tensor.__dlpack__(stream=None, max_version=None, dl_device=None, copy=None)` returns a
PyCapsule named "dltensor_versioned" (DLPack 1.x) when the consumer passes a `max_version`
of (1, x) or later, else a legacy "dltensor" capsule; `Tensor.__dlpack_device__()` returns
`(device_type, device_id)` (kDLCPU=1, kDLCUDA=2, kDLROCM=10). The capsule's destructor calls
the managed tensor's deleter when no consumer took it (its name still unchanged); a
consumer renames it "used_dltensor(_versioned)" and calls the deleter itself. The storage
stays alive until then, also when the Tensor is collected.

Streams: `stream` is the consumer's stream (array-API semantics): None means the device's
default stream (legacy default on CUDA), -1 "no synchronization", any other value a
stream the consumer will read on. The library waits for its queued work on the tensor's
device before handing the capsule out unless the consumer says -1 (or the device is the
CPU), so any consumer stream may read it. `rb.from_dlpack` asks the producer for its data
on the stream the library reads on (CUDA: 1, the legacy default; ROCm: 0; CPU: None).
"""

import ctypes

from ._core import RbError, Status, Tensor, check
from ._lib import lib

KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_ROCM = 10
KDL_ROCM_HOST = 11

FLAG_READ_ONLY = 1
FLAG_IS_COPIED = 2

_KIND_TO_DL = {0: KDL_CPU, 1: KDL_ROCM, 2: KDL_CUDA}

# DLPack's structures (dlpack.h, v1.1), for reading a capsule's deleter.


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

# The CPython capsule API through ctypes.pythonapi (the GIL is held: PYFUNCTYPE).
_api = ctypes.pythonapi
_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _Destructor]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]

_VERSIONED = b"dltensor_versioned"
_LEGACY = b"dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"
_USED_LEGACY = b"used_dltensor"


def _capsule_deleter(name, struct):
    # The destructor gets the capsule as a raw PyObject*; it runs with the GIL held.
    is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
        ("PyCapsule_IsValid", ctypes.pythonapi)
    )
    get_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )

    def destroy(capsule):
        # A consumer that took the tensor renamed the capsule and owns the deleter call.
        if not is_valid(capsule, name):
            return
        p = get_raw(capsule, name)
        if p:
            m = ctypes.cast(p, ctypes.POINTER(struct))
            if m.contents.deleter:
                m.contents.deleter(m)

    return _Destructor(destroy)


# Kept alive for the life of the module: capsules point at them.
_DESTROY_VERSIONED = _capsule_deleter(_VERSIONED, DLManagedTensorVersioned)
_DESTROY_LEGACY = _capsule_deleter(_LEGACY, DLManagedTensor)


def _dlpack_device(t):
    k, o = ctypes.c_int32(), ctypes.c_int32()
    check(lib.rb_tensor_device(t.handle, ctypes.byref(k), ctypes.byref(o)))
    return (_KIND_TO_DL.get(k.value, k.value), 0 if k.value == 0 else o.value)


def _is_read_only(t):
    ro = ctypes.c_bool()
    check(lib.rb_tensor_is_read_only(t.handle, ctypes.byref(ro)))
    return ro.value


def _tensor_dlpack_device(self):
    """`(device_type, device_id)` of the array-API protocol: (1, 0) on the CPU, (2, N) on
    cuda:N, (10, N) on rocm:N."""
    return _dlpack_device(self)


def _tensor_dlpack(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule over this tensor's memory (the array-API `__dlpack__`).

    `max_version` (a (major, minor) tuple) of 1.x or later gives a versioned capsule, else a
    legacy one. `dl_device` other than this tensor's device raises BufferError (no
    cross-device export). `copy=True` exports a fresh copy (flagged IS_COPIED); False or None
    share memory (always possible here). `stream`: see the module's introduction."""
    dev = _dlpack_device(self)
    if dl_device is not None and tuple(dl_device) != dev:
        raise BufferError(f"__dlpack__: the tensor is on {dev}, dl_device {tuple(dl_device)} asked for")
    if stream is not None and not isinstance(stream, int):
        raise TypeError("__dlpack__: stream must be an int or None")
    if dev[0] == KDL_CPU and stream not in (None, -1):
        raise BufferError("__dlpack__: a CPU tensor takes stream=None")
    src, flags = self, 0
    if copy:
        h = ctypes.c_void_p()
        check(lib.rb_tensor_to_device(self.handle, self.device.encode(), ctypes.byref(h)))
        src, flags = Tensor(h.value), FLAG_IS_COPIED
    sync = dev[0] != KDL_CPU and stream != -1
    versioned = max_version is not None and int(max_version[0]) >= 1
    out = ctypes.c_void_p()
    if versioned:
        check(lib.rb_tensor_to_dlpack(src.handle, flags, sync, ctypes.byref(out)))
        return _api.PyCapsule_New(out.value, _VERSIONED, _DESTROY_VERSIONED)
    if _is_read_only(src):
        raise BufferError("__dlpack__: a read-only tensor needs a DLPack 1.x consumer (max_version)")
    check(lib.rb_tensor_to_dlpack_legacy(src.handle, sync, ctypes.byref(out)))
    return _api.PyCapsule_New(out.value, _LEGACY, _DESTROY_LEGACY)


def _consumer_stream(dev):
    if dev[0] == KDL_CUDA:
        return 1  # the legacy default stream, which the library's default stream is
    if dev[0] == KDL_ROCM:
        return 0  # the default stream
    return None


def from_dlpack(obj, *, device=None, copy=None):
    """An rb Tensor over the memory of any object with `__dlpack__` (NumPy, PyTorch, CuPy,
    JAX, another rb Tensor) or of a raw DLPack capsule, without a copy.

    The memory stays the producer's and is given back (its deleter runs) when the Tensor
    and every view of it are gone. It must be contiguous row-major (else RbError
    UNSUPPORTED: make it contiguous first) and on a device this process runs (else RbError
    DEVICE_UNAVAILABLE). A read-only array (e.g. a NumPy array with writeable=False)
    becomes a read-only Tensor: ops refuse to write it. `device` must be None (the data
    stays where it is: use `.to(...)`-style copies explicitly); `copy=True` is refused (use
    rb.copy on the result)."""
    if device is not None:
        raise BufferError("from_dlpack: device= is not supported (the data is not moved)")
    if copy:
        raise BufferError("from_dlpack: copy=True is not supported (take a view, then copy it)")
    if hasattr(obj, "__dlpack__"):
        dev = tuple(obj.__dlpack_device__()) if hasattr(obj, "__dlpack_device__") else (KDL_CPU, 0)
        stream = _consumer_stream(dev)
        try:
            capsule = obj.__dlpack__(stream=stream, max_version=(1, 1))
        except TypeError:
            # A producer from before the 2023 protocol (no max_version keyword).
            capsule = obj.__dlpack__(stream=stream) if stream is not None else obj.__dlpack__()
    else:
        capsule = obj
    h = ctypes.c_void_p()
    if _api.PyCapsule_IsValid(capsule, _VERSIONED):
        p = _api.PyCapsule_GetPointer(capsule, _VERSIONED)
        check(lib.rb_tensor_from_dlpack(p, ctypes.byref(h)))
        _api.PyCapsule_SetName(capsule, _USED_VERSIONED)
    elif _api.PyCapsule_IsValid(capsule, _LEGACY):
        p = _api.PyCapsule_GetPointer(capsule, _LEGACY)
        check(lib.rb_tensor_from_dlpack_legacy(p, ctypes.byref(h)))
        _api.PyCapsule_SetName(capsule, _USED_LEGACY)
    else:
        raise RbError(
            Status.INVALID_ARGUMENT,
            f"from_dlpack: {type(obj).__name__} has no __dlpack__ and is not an unused DLPack capsule",
        )
    return Tensor(h.value)


def data_ptr(t):
    """The address of the tensor's first element (host or device memory)."""
    p = ctypes.c_void_p()
    check(lib.rb_tensor_data_ptr(t.handle, ctypes.byref(p)))
    return p.value or 0


def is_read_only(t):
    return _is_read_only(t)


Tensor.__dlpack__ = _tensor_dlpack
Tensor.__dlpack_device__ = _tensor_dlpack_device
Tensor.data_ptr = data_ptr
Tensor.is_read_only = property(is_read_only)
