"""rocm_backend: Python bindings (ctypes) of the rocm-backend C library.

    import rocm_backend as rb
    rb.set_device("auto")                    # ROCm, then CUDA, then the CPU
    y = rb.matmul(rb.from_numpy(a), rb.from_numpy(b)).numpy()

Every failure raises `RbError` carrying `.status` (a `Status`) and `.message`.
"""

from . import _ops
from ._core import (
    DTYPES,
    RbError,
    Status,
    Stream,
    Tensor,
    cuda_device_count,
    cuda_is_available,
    device_info,
    empty,
    from_numpy,
    get_device,
    randint,
    randn,
    rocm_device_count,
    rocm_is_available,
    rocm_unavailable_reason,
    set_device,
    synchronize,
    version,
    zeros,
)
from ._lib import path as library_path

OPS = _ops.install(globals())

Tensor.__add__ = lambda self, other: add(self, other)  # noqa: F821 (defined by the table)
Tensor.__radd__ = lambda self, other: add(other, self)  # noqa: F821
Tensor.__matmul__ = lambda self, other: matmul(self, other)  # noqa: F821
Tensor.__rmatmul__ = lambda self, other: matmul(other, self)  # noqa: F821

__version__ = version()

__all__ = [
    "DTYPES",
    "OPS",
    "RbError",
    "Status",
    "Stream",
    "Tensor",
    "cuda_device_count",
    "cuda_is_available",
    "device_info",
    "empty",
    "from_numpy",
    "get_device",
    "library_path",
    "randint",
    "randn",
    "rocm_device_count",
    "rocm_is_available",
    "rocm_unavailable_reason",
    "set_device",
    "synchronize",
    "version",
    "zeros",
] + OPS
