"""Eager ops, generated from one declarative table: adding an op is one line in OPS.

A row is (python name, C symbol, tensor inputs, attributes). Every C op has the signature
`rb_status sym(rb_stream*, const rb_tensor* inputs..., attributes..., rb_tensor** out)`.
Attributes are (name, kind, default) with kind one of:
  "f32" float, "f64" double, "i32" int32_t, "i64" int64_t, "bool" bool,
  "dtype" an rb_dtype (int32_t; names accepted), "dims" an int64_t array + size_t count
  (two C arguments). A default of REQUIRED makes the attribute mandatory.
The generated function is `name(*inputs, *attributes, out=None, stream=None)`; inputs that
are not Tensors (NumPy arrays, Python scalars) are copied to the device of the first tensor
input, in its dtype. `out` (a Tensor) receives the result in place.
"""

import ctypes

import numpy as np

from ._core import RbError, Status, Tensor, check, dtype_code
from ._lib import lib

REQUIRED = object()

OPS = [
    ("add", "rb_add", ("a", "b"), ()),
    ("relu", "rb_relu", ("x",), ()),
    ("matmul", "rb_matmul", ("a", "b"), ()),
]


def _dims(v):
    dims = [int(d) for d in (v if isinstance(v, (list, tuple)) else [v])]
    return [(ctypes.c_int64 * max(len(dims), 1))(*dims), len(dims)]


# kind -> (ctypes argument types, converter to argument values)
_KINDS = {
    "f32": ([ctypes.c_float], lambda v: [float(v)]),
    "f64": ([ctypes.c_double], lambda v: [float(v)]),
    "i32": ([ctypes.c_int32], lambda v: [int(v)]),
    "i64": ([ctypes.c_int64], lambda v: [int(v)]),
    "bool": ([ctypes.c_bool], lambda v: [bool(v)]),
    "dtype": ([ctypes.c_int32], lambda v: [dtype_code(v)]),
    "dims": ([ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t], _dims),
}


def _as_tensor(x, like):
    if isinstance(x, Tensor):
        return x
    if like is None:
        return Tensor.from_numpy(np.asarray(x))
    return Tensor.from_numpy(np.asarray(x), dtype=like.dtype, device=like.device)


def make_op(name, sym, inputs, attrs):
    """Builds the Python function of one table row."""
    fn = getattr(lib, sym)
    argtypes = [ctypes.c_void_p] + [ctypes.c_void_p] * len(inputs)
    for _, kind, _ in attrs:
        argtypes += _KINDS[kind][0]
    fn.argtypes = argtypes + [ctypes.POINTER(ctypes.c_void_p)]
    fn.restype = ctypes.c_int32
    n_in = len(inputs)

    def op(*args, out=None, stream=None, **kwargs):
        if len(args) < n_in:
            raise TypeError(f"{name}() takes {n_in} tensor inputs ({', '.join(inputs)})")
        if len(args) > n_in + len(attrs):
            raise TypeError(f"{name}() got {len(args)} positional arguments")
        like = next((a for a in args[:n_in] if isinstance(a, Tensor)), None)
        tensors = [_as_tensor(a, like) for a in args[:n_in]]
        values = []
        for i, (aname, kind, default) in enumerate(attrs):
            if n_in + i < len(args):
                v = args[n_in + i]
            elif aname in kwargs:
                v = kwargs.pop(aname)
            elif default is REQUIRED:
                raise TypeError(f"{name}() needs the attribute {aname!r}")
            else:
                v = default
            values += _KINDS[kind][1](v)
        if kwargs:
            raise TypeError(f"{name}() got unexpected arguments {sorted(kwargs)}")
        if out is not None and not isinstance(out, Tensor):
            raise RbError(Status.INVALID_ARGUMENT, f"{name}: out must be a Tensor")
        h = ctypes.c_void_p(out.handle if out is not None else None)
        s = stream.handle if stream is not None else None
        check(fn(s, *(t.handle for t in tensors), *values, ctypes.byref(h)))
        return out if out is not None else Tensor(h.value)

    sig = ", ".join(list(inputs) + [a[0] for a in attrs])
    op.__name__ = op.__qualname__ = name
    op.__doc__ = f"{name}({sig}, out=None, stream=None): the eager op {sym} of the C API."
    return op


def install(namespace):
    """Defines every op of the table in `namespace` (the package's globals)."""
    for row in OPS:
        namespace[row[0]] = make_op(*row)
    return [row[0] for row in OPS]
