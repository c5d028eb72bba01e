"""Finding and loading librocm_backend.so, and the ctypes prototypes of its C API.

Search order: $RB_LIBRARY, the package directory (where `pip install` puts it), then the
repository's target/release and target/debug (for a package used from a checkout).
"""

import ctypes
import os
from pathlib import Path

_NAME = "librocm_backend.so"


def _candidates():
    env = os.environ.get("RB_LIBRARY")
    if env:
        yield Path(env)
        return
    here = Path(__file__).resolve().parent
    yield here / _NAME
    repo = here.parent.parent.parent  # bindings/python/rocm_backend -> repository root
    yield repo / "target" / "release" / _NAME
    yield repo / "target" / "debug" / _NAME


def _load():
    tried = []
    for p in _candidates():
        if p.is_file():
            return ctypes.CDLL(str(p)), p
        tried.append(str(p))
    raise ImportError(
        "rocm_backend: librocm_backend.so not found (tried: "
        + ", ".join(tried)
        + "); build it with `cargo build --release` or set RB_LIBRARY"
    )


lib, path = _load()

c_status = ctypes.c_int32
vp = ctypes.c_void_p
i64p = ctypes.POINTER(ctypes.c_int64)
size = ctypes.c_size_t
cstr = ctypes.c_char_p


class DeviceProperties(ctypes.Structure):
    """`rb_device_properties`."""

    _fields_ = [
        ("kind", ctypes.c_int32),
        ("ordinal", ctypes.c_int32),
        ("device", ctypes.c_char * 32),
        ("name", ctypes.c_char * 256),
        ("arch", ctypes.c_char * 64),
        ("family", ctypes.c_char * 32),
        ("total_memory", ctypes.c_uint64),
        ("free_memory", ctypes.c_uint64),
        ("compute_units", ctypes.c_uint32),
        ("warp_size", ctypes.c_uint32),
        ("matrix_cores", ctypes.c_bool),
        ("bf16", ctypes.c_bool),
        ("fp8", ctypes.c_bool),
    ]


_PROTOS = {
    "rb_status_string": (cstr, [ctypes.c_int32]),
    "rb_last_error_message": (cstr, []),
    "rb_version": (cstr, []),
    "rb_set_device": (c_status, [cstr]),
    "rb_get_device": (c_status, [ctypes.c_char_p, size]),
    "rb_set_allow_tf32": (c_status, [ctypes.c_bool]),
    "rb_get_allow_tf32": (c_status, [ctypes.POINTER(ctypes.c_bool)]),
    "rb_device_info": (c_status, [cstr, ctypes.POINTER(DeviceProperties)]),
    "rb_synchronize": (c_status, []),
    "rb_rocm_is_available": (ctypes.c_bool, []),
    "rb_rocm_unavailable_reason": (cstr, []),
    "rb_rocm_device_count": (ctypes.c_int32, []),
    "rb_cuda_is_available": (ctypes.c_bool, []),
    "rb_cuda_device_count": (ctypes.c_int32, []),
    "rb_stream_create": (c_status, [cstr, ctypes.POINTER(vp)]),
    "rb_stream_destroy": (c_status, [vp]),
    "rb_stream_synchronize": (c_status, [vp]),
    "rb_tensor_empty": (c_status, [cstr, i64p, size, ctypes.c_int32, ctypes.POINTER(vp)]),
    "rb_tensor_zeros": (c_status, [cstr, i64p, size, ctypes.c_int32, ctypes.POINTER(vp)]),
    "rb_tensor_from_host": (
        c_status,
        [cstr, vp, size, i64p, size, ctypes.c_int32, ctypes.POINTER(vp)],
    ),
    "rb_tensor_randn": (
        c_status,
        [cstr, i64p, size, ctypes.c_int32, ctypes.c_uint64, ctypes.POINTER(vp)],
    ),
    "rb_tensor_randint": (
        c_status,
        [
            cstr,
            i64p,
            size,
            ctypes.c_int32,
            ctypes.c_int64,
            ctypes.c_int64,
            ctypes.c_uint64,
            ctypes.POINTER(vp),
        ],
    ),
    "rb_tensor_destroy": (c_status, [vp]),
    "rb_tensor_ndim": (c_status, [vp, ctypes.POINTER(size)]),
    "rb_tensor_shape": (c_status, [vp, i64p, size]),
    "rb_tensor_dtype": (c_status, [vp, ctypes.POINTER(ctypes.c_int32)]),
    "rb_tensor_nbytes": (c_status, [vp, ctypes.POINTER(size)]),
    "rb_tensor_device": (
        c_status,
        [vp, ctypes.POINTER(ctypes.c_int32), ctypes.POINTER(ctypes.c_int32)],
    ),
    "rb_tensor_copy_to_host": (c_status, [vp, vp, size]),
    "rb_tensor_copy_from_host": (c_status, [vp, vp, size]),
    "rb_tensor_reshape": (c_status, [vp, i64p, size, ctypes.POINTER(vp)]),
    "rb_tensor_data_ptr": (c_status, [vp, ctypes.POINTER(vp)]),
    "rb_tensor_to_device": (c_status, [vp, cstr, ctypes.POINTER(vp)]),
    "rb_tensor_from_dlpack": (c_status, [vp, ctypes.POINTER(vp)]),
    "rb_tensor_from_dlpack_legacy": (c_status, [vp, ctypes.POINTER(vp)]),
    "rb_tensor_to_dlpack": (c_status, [vp, ctypes.c_uint64, ctypes.c_bool, ctypes.POINTER(vp)]),
    "rb_tensor_to_dlpack_legacy": (c_status, [vp, ctypes.c_bool, ctypes.POINTER(vp)]),
    "rb_tensor_is_read_only": (c_status, [vp, ctypes.POINTER(ctypes.c_bool)]),
    "rb_profiler_enable": (c_status, [ctypes.c_bool]),
    "rb_profiler_reset": (c_status, []),
    "rb_profiler_summary": (c_status, [ctypes.c_char_p, size, ctypes.POINTER(size)]),
    "rb_profiler_export_chrome_trace": (c_status, [cstr]),
}

for _name, (_res, _args) in _PROTOS.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args
