"""rocm_backend: Python bindings (ctypes) of the rocm-backend C library.

    import rocm_backend as rb
    rb.set_device("auto")                    # ROCm, then CUDA, then the CPU
    y = rb.matmul(rb.from_numpy(a), rb.from_numpy(b)).numpy()
    t = rb.from_dlpack(torch_or_numpy_array)  # zero-copy, both ways (DLPack)

Every failure raises `RbError` carrying `.status` (a `Status`) and `.message`.
"""

from . import _dlpack, _ops
from ._comm import Comm, Event, comm_group, comm_unique_id
from ._core import (
    DTYPES,
    RbError,
    Status,
    Stream,
    Tensor,
    backends,
    cuda_device_count,
    cuda_is_available,
    device_info,
    empty,
    from_numpy,
    get_allow_tf32,
    get_device,
    randint,
    randn,
    rocm_device_count,
    rocm_is_available,
    rocm_unavailable_reason,
    set_allow_tf32,
    set_device,
    synchronize,
    version,
    zeros,
)
from ._dlpack import from_dlpack
from ._graph import Executor, Graph, can_fuse, record
from ._profiler import profiler_enable, profiler_export_chrome_trace, profiler_reset, profiler_summary
from ._lib import path as library_path
from ._tuning import TuningCache, tuning_cache
from . import onnx  # noqa: E402 (rb.onnx.load; the onnx package is imported when used)

OPS = _ops.install(globals())

_g = globals()


def _binop(name, reflected=False):
    op = _g[name]
    if reflected:
        return lambda self, other: op(other, self)
    return lambda self, other: op(self, other)


for _dunder, _name in (
    ("add", "add"),
    ("sub", "sub"),
    ("mul", "mul"),
    ("truediv", "div"),
    ("pow", "pow"),
    ("matmul", "matmul"),
):
    setattr(Tensor, f"__{_dunder}__", _binop(_name))
    setattr(Tensor, f"__r{_dunder}__", _binop(_name, reflected=True))


def _cmpop(name):
    op = _g[name]

    def cmp(self, other):
        if other is None:
            return NotImplemented
        return op(self, other)

    return cmp


def _tensor_bool(self):
    if self.size != 1:
        raise ValueError("the truth value of a tensor with more than one element is ambiguous")
    return bool(self.numpy().reshape(()))


for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    setattr(Tensor, f"__{_name}__", _cmpop(_name))
Tensor.__bool__ = _tensor_bool
Tensor.__hash__ = object.__hash__  # __eq__ is elementwise (as in torch); keep identity hashing
Tensor.__neg__ = lambda self: neg(self)  # noqa: F821 (defined by the table)
Tensor.__abs__ = lambda self: abs(self)  # noqa: F821
del _dunder, _name

__version__ = version()

__all__ = [
    "Comm",
    "Event",
    "comm_group",
    "comm_unique_id",
    "DTYPES",
    "OPS",
    "RbError",
    "Status",
    "Stream",
    "Tensor",
    "backends",
    "cuda_device_count",
    "cuda_is_available",
    "device_info",
    "empty",
    "from_dlpack",
    "from_numpy",
    "get_allow_tf32",
    "get_device",
    "onnx",
    "library_path",
    "profiler_enable",
    "profiler_export_chrome_trace",
    "profiler_reset",
    "profiler_summary",
    "randint",
    "randn",
    "rocm_device_count",
    "rocm_is_available",
    "rocm_unavailable_reason",
    "set_allow_tf32",
    "set_device",
    "synchronize",
    "tuning_cache",
    "TuningCache",
    "version",
    "zeros",
] + OPS
