"""Errors, dtypes, devices, streams and the Tensor class over the C API."""

import ctypes
import enum

import numpy as np

from ._lib import DeviceProperties, lib

# ---------------------------------------------------------------------------------------
# Errors


class Status(enum.IntEnum):
    """`rb_status`: the result of every fallible C call."""

    SUCCESS = 0
    INVALID_ARGUMENT = 1
    NULL_POINTER = 2
    INVALID_HANDLE = 3
    DEVICE_UNAVAILABLE = 4
    OUT_OF_MEMORY = 5
    SHAPE_MISMATCH = 6
    DTYPE_MISMATCH = 7
    UNSUPPORTED = 8
    COMPILATION = 9
    VENDOR = 10
    INTERNAL = 11
    TIMEOUT = 12
    ABORTED = 13


class RbError(RuntimeError):
    """A failed call: `.status` is a `Status` (an int; `.status.name` its name, also in
    `.status_name` as "RB_STATUS_..."), `.message` the library's message."""

    def __init__(self, status, message):
        try:
            self.status = Status(status)
        except ValueError:
            self.status = int(status)
        self.message = message
        self.status_name = lib.rb_status_string(int(status)).decode()
        super().__init__(f"{self.status_name}: {message}")


def check(status):
    """Raises RbError with the calling thread's last message when `status` is not SUCCESS."""
    if status != 0:
        raise RbError(status, lib.rb_last_error_message().decode("utf-8", "replace"))


def _invalid(message):
    return RbError(Status.INVALID_ARGUMENT, message)


# ---------------------------------------------------------------------------------------
# Dtypes: the library's names ("f32", "f16", "bf16", "i32", "i64", "bool", "f64", "i8", "u8",
# "i16"); NumPy dtypes and their names are accepted too.

DTYPES = {"f32": 0, "f16": 1, "bf16": 2, "i32": 3, "i64": 4, "bool": 5, "f64": 6, "i8": 7, "u8": 8, "i16": 9}
_NAMES = {v: k for k, v in DTYPES.items()}
_ALIASES = {
    "float32": "f32",
    "float16": "f16",
    "half": "f16",
    "bfloat16": "bf16",
    "int32": "i32",
    "int64": "i64",
    "bool_": "bool",
    "float64": "f64",
    "double": "f64",
    "int8": "i8",
    "uint8": "u8",
    "int16": "i16",
}
# NumPy storage of each dtype (bf16 is stored as its raw 16 bits).
_NP_STORAGE = {
    "f32": np.float32,
    "f16": np.float16,
    "bf16": np.uint16,
    "i32": np.int32,
    "i64": np.int64,
    "bool": np.bool_,
    "f64": np.float64,
    "i8": np.int8,
    "u8": np.uint8,
    "i16": np.int16,
}


def dtype_code(dtype):
    """The `rb_dtype` value of a name, a NumPy dtype, or an int (passed through: the library
    checks its range)."""
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        return int(dtype)
    if not isinstance(dtype, str):
        try:
            dtype = np.dtype(dtype).name
        except TypeError:
            raise _invalid(f"{dtype!r} is not a dtype") from None
    name = _ALIASES.get(dtype, dtype)
    if name not in DTYPES:
        raise _invalid(f"{dtype!r} is not a dtype (one of {', '.join(DTYPES)})")
    return DTYPES[name]


def dtype_name(code):
    return _NAMES.get(code, str(code))


def _np_dtype_of(arr, exact=True):
    """The library dtype for a NumPy array when none is given. `exact` (a NumPy array given to
    `from_numpy`, as `torch.from_numpy`): float64 stays f64 and int8/uint8/int16 stay
    i8/u8/i16. Otherwise (Python lists and scalars, the NumPy arguments of ops, executor
    inputs: the defaults this package has always had, torch.tensor's for lists) float64
    becomes f32 and the small integers i64. Other unsigned integers become i64; unsupported
    kinds are rejected."""
    k = arr.dtype
    if k == np.float64:
        return "f64" if exact else "f32"
    if k == np.float32:
        return "f32"
    if k == np.float16:
        return "f16"
    if k == np.int32:
        return "i32"
    if exact and k in (np.int8, np.uint8, np.int16):
        return {np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.int16): "i16"}[k]
    if k.kind in "iu":
        return "i64"
    if k == np.bool_:
        return "bool"
    raise RbError(Status.DTYPE_MISMATCH, f"NumPy dtype {k} has no rocm_backend dtype")


def _f32_to_bf16_bits(a):
    """Round-to-nearest-even float32 -> bfloat16 bits (NaN stays NaN)."""
    u = np.ascontiguousarray(a, dtype=np.float32).view(np.uint32)
    r = ((u >> 16) & 1) + np.uint32(0x7FFF)
    bits = ((u + r) >> 16).astype(np.uint16)
    return np.where(np.isnan(a), np.uint16(0x7FC0), bits)


def _bf16_bits_to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


# ---------------------------------------------------------------------------------------
# Devices


def _enc(s):
    return None if s is None else s.encode()


def set_device(device):
    """Makes `device` ("cpu", "rocm", "rocm:N", "cuda", "cuda:N", "auto") the current device
    of this thread (and the default of threads that have not chosen one)."""
    check(lib.rb_set_device(_enc(device)))


def get_device():
    """The calling thread's current device string, e.g. "cpu"."""
    buf = ctypes.create_string_buffer(64)
    check(lib.rb_get_device(buf, len(buf)))
    return buf.value.decode()


def set_allow_tf32(allow):
    """Lets this process's f32 matrix products use TF32 tensor cores on NVIDIA (as
    `torch.backends.cuda.matmul.allow_tf32 = allow`); off by default (exact f32)."""
    check(lib.rb_set_allow_tf32(bool(allow)))


def get_allow_tf32():
    """The process-wide TF32 setting of `set_allow_tf32`."""
    out = ctypes.c_bool()
    check(lib.rb_get_allow_tf32(ctypes.byref(out)))
    return out.value


class _Matmul:
    """`backends.cuda.matmul`: `allow_tf32`, read and set as in torch."""

    @property
    def allow_tf32(self):
        return get_allow_tf32()

    @allow_tf32.setter
    def allow_tf32(self, allow):
        set_allow_tf32(allow)


class _Cuda:
    matmul = _Matmul()


class _Backends:
    """`rocm_backend.backends.cuda.matmul.allow_tf32 = True`, as torch.backends."""

    cuda = _Cuda()


backends = _Backends()


def device_info(device=None):
    """What `device` (default: the current one) says about itself, as a dict."""
    p = DeviceProperties()
    check(lib.rb_device_info(_enc(device), ctypes.byref(p)))
    kinds = {0: "cpu", 1: "rocm", 2: "cuda"}
    out = {}
    for name, _ in DeviceProperties._fields_:
        v = getattr(p, name)
        out[name] = v.decode("utf-8", "replace") if isinstance(v, bytes) else v
    out["kind"] = kinds.get(p.kind, p.kind)
    return out


def synchronize():
    """Waits for all work queued on the current device."""
    check(lib.rb_synchronize())


def rocm_is_available():
    return bool(lib.rb_rocm_is_available())


def rocm_unavailable_reason():
    return lib.rb_rocm_unavailable_reason().decode()


def rocm_device_count():
    return int(lib.rb_rocm_device_count())


def cuda_is_available():
    return bool(lib.rb_cuda_is_available())


def cuda_device_count():
    return int(lib.rb_cuda_device_count())


def version():
    return lib.rb_version().decode()


# ---------------------------------------------------------------------------------------
# Streams


class Stream:
    """An `rb_stream` on a device (default: the current one)."""

    __slots__ = ("_h",)

    def __init__(self, device=None):
        h = ctypes.c_void_p()
        check(lib.rb_stream_create(_enc(device), ctypes.byref(h)))
        self._h = h.value

    @property
    def handle(self):
        return self._h

    def synchronize(self):
        check(lib.rb_stream_synchronize(self._h))

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and lib is not None:
            lib.rb_stream_destroy(h)


# ---------------------------------------------------------------------------------------
# Tensors


def _shape_arg(shape):
    if isinstance(shape, (int, np.integer)):
        shape = (shape,)
    dims = [int(d) for d in shape]
    return (ctypes.c_int64 * max(len(dims), 1))(*dims), len(dims)


def _device_string(kind, ordinal):
    return {0: "cpu", 1: f"rocm:{ordinal}", 2: f"cuda:{ordinal}"}.get(kind, f"{kind}:{ordinal}")


class Tensor:
    """A dense row-major tensor owned by the library. The handle is destroyed when the object
    is collected (or by `destroy()`)."""

    __slots__ = ("_h", "__weakref__")

    def __init__(self, handle):
        """Takes ownership of a raw `rb_tensor*` handle (an int)."""
        self._h = handle

    # -- creation --
    @staticmethod
    def _create(fn, *args):
        h = ctypes.c_void_p()
        check(fn(*args, ctypes.byref(h)))
        return Tensor(h.value)

    @staticmethod
    def empty(shape, dtype="f32", device=None):
        dims, n = _shape_arg(shape)
        return Tensor._create(lib.rb_tensor_empty, _enc(device), dims, n, dtype_code(dtype))

    @staticmethod
    def zeros(shape, dtype="f32", device=None):
        dims, n = _shape_arg(shape)
        return Tensor._create(lib.rb_tensor_zeros, _enc(device), dims, n, dtype_code(dtype))

    @staticmethod
    def randn(shape, dtype="f32", seed=0, device=None):
        """Standard normal samples; the same seed gives the same tensor on every device."""
        dims, n = _shape_arg(shape)
        return Tensor._create(
            lib.rb_tensor_randn, _enc(device), dims, n, dtype_code(dtype), int(seed)
        )

    @staticmethod
    def randint(shape, low, high, dtype="i64", seed=0, device=None):
        """Integers drawn uniformly from [low, high)."""
        dims, n = _shape_arg(shape)
        return Tensor._create(
            lib.rb_tensor_randint,
            _enc(device),
            dims,
            n,
            dtype_code(dtype),
            int(low),
            int(high),
            int(seed),
        )

    @staticmethod
    def from_numpy(array, dtype=None, device=None):
        """A copy of `array` on `device`. `dtype` defaults to a NumPy array's own, as
        torch.from_numpy (float64 is f64, int8/uint8/int16 are i8/u8/i16; other unsigned
        integers become i64); a Python list or scalar takes torch.tensor's defaults (floats
        f32, integers i64). "bf16" rounds to nearest even."""
        a = np.asarray(array)
        if dtype is None:
            name = _np_dtype_of(a, exact=isinstance(array, np.ndarray))
        else:
            name = dtype_name(dtype_code(dtype))
        if name not in DTYPES:
            raise _invalid(f"{dtype!r} is not a dtype")
        if name == "bf16":
            data = _f32_to_bf16_bits(a.astype(np.float32))
        else:
            data = np.ascontiguousarray(a, dtype=_NP_STORAGE[name])
        dims, n = _shape_arg(a.shape)
        return Tensor._create(
            lib.rb_tensor_from_host,
            _enc(device),
            data.ctypes.data_as(ctypes.c_void_p),
            data.nbytes,
            dims,
            n,
            DTYPES[name],
        )

    # -- queries --
    @property
    def handle(self):
        if not self._h:
            raise RbError(Status.INVALID_HANDLE, "the tensor was destroyed")
        return self._h

    @property
    def ndim(self):
        n = ctypes.c_size_t()
        check(lib.rb_tensor_ndim(self.handle, ctypes.byref(n)))
        return n.value

    @property
    def shape(self):
        dims = (ctypes.c_int64 * 16)()
        check(lib.rb_tensor_shape(self.handle, dims, 16))
        return tuple(dims[: self.ndim])

    @property
    def dtype(self):
        d = ctypes.c_int32()
        check(lib.rb_tensor_dtype(self.handle, ctypes.byref(d)))
        return dtype_name(d.value)

    @property
    def device(self):
        k, o = ctypes.c_int32(), ctypes.c_int32()
        check(lib.rb_tensor_device(self.handle, ctypes.byref(k), ctypes.byref(o)))
        return _device_string(k.value, o.value)

    @property
    def nbytes(self):
        n = ctypes.c_size_t()
        check(lib.rb_tensor_nbytes(self.handle, ctypes.byref(n)))
        return n.value

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        s = self.shape
        if not s:
            raise TypeError("len() of a 0-d tensor")
        return s[0]

    # -- data --
    def numpy(self):
        """A NumPy copy (waits for queued work). bf16 comes back as float32 (exactly)."""
        name = self.dtype
        out = np.empty(self.shape, dtype=_NP_STORAGE[name])
        check(lib.rb_tensor_copy_to_host(self.handle, out.ctypes.data_as(ctypes.c_void_p), out.nbytes))
        return _bf16_bits_to_f32(out) if name == "bf16" else out

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def copy_(self, array):
        """Overwrites the tensor with `array` (same shape; converted to the tensor's dtype)."""
        name = self.dtype
        a = np.asarray(array)
        if a.shape != self.shape:
            raise RbError(Status.SHAPE_MISMATCH, f"copy_: array of shape {a.shape}, tensor {self.shape}")
        data = (
            _f32_to_bf16_bits(a.astype(np.float32))
            if name == "bf16"
            else np.ascontiguousarray(a, dtype=_NP_STORAGE[name])
        )
        check(lib.rb_tensor_copy_from_host(self.handle, data.ctypes.data_as(ctypes.c_void_p), data.nbytes))
        return self

    def reshape(self, *shape):
        """A view of the same storage with another shape."""
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        dims, n = _shape_arg(shape)
        return Tensor._create(lib.rb_tensor_reshape, self.handle, dims, n)

    # -- lifetime --
    def destroy(self):
        """Releases the handle now (later use raises RbError INVALID_HANDLE)."""
        h, self._h = self._h, None
        if h:
            check(lib.rb_tensor_destroy(h))

    def __del__(self):
        h = getattr(self, "_h", None)
        self._h = None
        if h and lib is not None:
            try:
                lib.rb_tensor_destroy(h)
            except Exception:  # interpreter shutdown
                pass

    def __repr__(self):
        if not self._h:
            return "Tensor(<destroyed>)"
        return f"Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device})"


empty = Tensor.empty
zeros = Tensor.zeros
randn = Tensor.randn
randint = Tensor.randint
from_numpy = Tensor.from_numpy
