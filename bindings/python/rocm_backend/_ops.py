"""Eager ops, generated from one declarative table: OPS in _ops_table.py, which is itself
generated from the crate's op table (src/ops/table.rs; `make generate`).

A row is (python name, C symbol, parameters, outputs[, python order]). Every C op has the
signature `rb_status sym(rb_stream*, parameters..., outputs...)`. A parameter is a string
"name:kind=default" in C order (no "=default": required; defaults are Python literals):
  "T"  a tensor (NumPy arrays and Python scalars are copied to the device and dtype of the
       first non-bool Tensor input, as torch.where(cond, x, 0) types the 0 by x), "T?" an optional tensor (None: NULL), "Ts" a list of tensors
       (array + count), "f32", "f64", "i32", "i64", "bool", "b32" (an int32_t 0/1 flag),
       "dtype" an rb_dtype (names accepted), "dims" an int64_t array + count (None: no
       entries), "lo"/"hi" a float where None means -inf/+inf, "shape4" four int64_t (pointer only), "f64?" a nullable double pointer,
       "red"/"approx"/"act"/"pool"/"causal"/"scat" the rb_reduction, rb_gelu_approximate,
       rb_activation, rb_pool_mode, rb_causal_mode and rb_scatter_reduce enums (names
       accepted),
       "conv"/"poolp"/"convx"/"poolx" an rb_conv_params/rb_pool_params/rb_conv_params_ex/
       rb_pool_params_ex.
The python order, when given, lists the parameter names in Python's positional order.
Outputs are the names of the `rb_tensor**` out-params: one output is returned as a Tensor
(`out=` a destination Tensor), several as a tuple (`out=` a tuple of Tensors or None). An
output "=name" is an in-place op that returns its parameter `name`.
Every generated function is `name(*params, out=None, stream=None)` (keyword arguments too).
"""

import ast
import ctypes
import os

import numpy as np

from ._core import RbError, Status, Tensor, _np_dtype_of, check, dtype_code
from ._graph import Executor, Graph, current_stream
from ._lib import lib

# The test suite's execution-mode axis: with RB_TEST_EXEC_MODE=O0..O3 every op call made
# without a stream is recorded into a one-node graph and run by an executor at that level
# (f32 kept exact: O3 is O1 + device-graph replay there).
_EXEC_MODE = os.environ.get("RB_TEST_EXEC_MODE")

REQUIRED = object()


class ConvParams(ctypes.Structure):
    """`rb_conv_params`."""

    _fields_ = [
        ("ndim", ctypes.c_int32),
        ("stride", ctypes.c_int64 * 3),
        ("padding", ctypes.c_int64 * 3),
        ("dilation", ctypes.c_int64 * 3),
        ("output_padding", ctypes.c_int64 * 3),
        ("groups", ctypes.c_int64),
    ]


class PoolParams(ctypes.Structure):
    """`rb_pool_params`."""

    _fields_ = [
        ("ndim", ctypes.c_int32),
        ("kernel", ctypes.c_int64 * 3),
        ("stride", ctypes.c_int64 * 3),
        ("padding", ctypes.c_int64 * 3),
        ("dilation", ctypes.c_int64 * 3),
        ("ceil_mode", ctypes.c_int32),
    ]


class ConvParamsEx(ctypes.Structure):
    """`rb_conv_params_ex`."""

    _fields_ = [
        ("ndim", ctypes.c_int32),
        ("stride", ctypes.c_int64 * 3),
        ("pad_before", ctypes.c_int64 * 3),
        ("pad_after", ctypes.c_int64 * 3),
        ("dilation", ctypes.c_int64 * 3),
        ("output_padding", ctypes.c_int64 * 3),
        ("groups", ctypes.c_int64),
        ("layout", ctypes.c_int32),
    ]


class PoolParamsEx(ctypes.Structure):
    """`rb_pool_params_ex`."""

    _fields_ = [
        ("ndim", ctypes.c_int32),
        ("kernel", ctypes.c_int64 * 3),
        ("stride", ctypes.c_int64 * 3),
        ("pad_before", ctypes.c_int64 * 3),
        ("pad_after", ctypes.c_int64 * 3),
        ("dilation", ctypes.c_int64 * 3),
        ("ceil_mode", ctypes.c_int32),
        ("divisor_override", ctypes.c_int64),
        ("layout", ctypes.c_int32),
    ]


_ENUMS = {
    "red": {"none": 0, "mean": 1, "sum": 2},
    "approx": {"none": 0, "tanh": 1},
    "act": {None: 0, "none": 0, "relu": 1, "gelu": 2, "gelu_erf": 2, "gelu_tanh": 3},
    "pool": {"max": 0, "avg": 1, "avg_include_pad": 1, "avg_exclude_pad": 2},
    "cmp": {"eq": 0, "ne": 1, "lt": 2, "le": 3, "gt": 4, "ge": 5},
    "scat": {
        None: 0, "none": 0, "add": 1, "sum": 1, "mul": 2, "multiply": 2, "prod": 2,
        "max": 3, "amax": 3, "min": 4, "amin": 4,
    },
    "causal": {None: 0, "none": 0, "top_left": 1, "bottom_right": 2},
}

_C = ctypes


def _enum(kind):
    table = _ENUMS[kind]

    def conv(v):
        if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
            return [int(v)]
        if v not in table:
            raise RbError(
                Status.INVALID_ARGUMENT,
                f"{v!r} is not one of {', '.join(repr(k) for k in table if k is not None)}",
            )
        return [table[v]]

    return [_C.c_int32], conv


def _dims(v):
    if v is None:
        v = []
    dims = [int(d) for d in (v if isinstance(v, (list, tuple)) else [v])]
    return [(_C.c_int64 * max(len(dims), 1))(*dims), len(dims)]


def _shape4(v):
    dims = [int(d) for d in v]
    if len(dims) != 4:
        raise RbError(Status.SHAPE_MISMATCH, f"expected 4 extents, got {len(dims)}")
    return [(_C.c_int64 * 4)(*dims)]


def _optf64(v):
    return [None if v is None else _C.byref(_C.c_double(float(v)))]


def _struct(v):
    return [_C.byref(v)]


# kind -> (ctypes argument types, converter to argument values)
_KINDS = {
    "f32": ([_C.c_float], lambda v: [float(v)]),
    "f64": ([_C.c_double], lambda v: [float(v)]),
    "i32": ([_C.c_int32], lambda v: [int(v)]),
    "i64": ([_C.c_int64], lambda v: [int(v)]),
    "bool": ([_C.c_bool], lambda v: [bool(v)]),
    "b32": ([_C.c_int32], lambda v: [int(bool(v))]),
    "dtype": ([_C.c_int32], lambda v: [dtype_code(v)]),
    "dims": ([_C.POINTER(_C.c_int64), _C.c_size_t], _dims),
    "shape4": ([_C.POINTER(_C.c_int64)], _shape4),
    "f64?": ([_C.c_void_p], _optf64),
    "lo": ([_C.c_float], lambda v: [float("-inf") if v is None else float(v)]),
    "hi": ([_C.c_float], lambda v: [float("inf") if v is None else float(v)]),
    "conv": ([_C.c_void_p], _struct),
    "poolp": ([_C.c_void_p], _struct),
    "convx": ([_C.c_void_p], _struct),
    "poolx": ([_C.c_void_p], _struct),
}
for _k in _ENUMS:
    _KINDS[_k] = _enum(_k)
_TENSOR_KINDS = ("T", "T?", "Ts")

# ---------------------------------------------------------------------------------------
# The table: generated from the op table of the Rust crate (src/ops/table.rs), one row per
# eager op of the C API.

from ._ops_table import OPS  # noqa: E402


def _parse(spec):
    name, rest = spec.split(":", 1)
    if "=" in rest:
        kind, default = rest.split("=", 1)
        default = float(default) if default in ("inf", "-inf") else ast.literal_eval(default)
    else:
        kind, default = rest, REQUIRED
    return name, kind, default


def _like(tensors):
    """The Tensor whose dtype and device scalar operands take, as in torch.where(cond, x, 0):
    the first non-bool Tensor among the op's tensor inputs (a bool condition or mask gives
    its device only, when no other Tensor is there), else None."""
    tensors = [t for t in tensors if isinstance(t, Tensor)]
    return next((t for t in tensors if t.dtype != "bool"), tensors[0] if tensors else None)


def _as_tensor(x, like):
    """`x` as a Tensor: NumPy floats and Python scalars take the dtype of `like` (see
    `_like`) unless it is bool; integer and bool arrays keep theirs (indices)."""
    if isinstance(x, Tensor):
        return x
    a = np.asarray(x)
    legacy = _np_dtype_of(a, exact=False)  # float64 -> f32, integers -> i32/i64 (indices)
    if like is None:
        return Tensor.from_numpy(a, dtype=legacy)
    if like.dtype != "bool" and (a.dtype.kind == "f" or (a.ndim == 0 and a.dtype.kind in "iu")):
        return Tensor.from_numpy(a, dtype=like.dtype, device=like.device)
    return Tensor.from_numpy(a, dtype=legacy, device=like.device)


def make_op(name, sym, params, outs, pyorder=None):
    """Builds the Python function of one table row."""
    fn = getattr(lib, sym)
    params = [_parse(p) for p in params]
    argtypes = [_C.c_void_p]
    for _, kind, _ in params:
        if kind == "Ts":
            argtypes += [_C.c_void_p, _C.c_size_t]
        elif kind in _TENSOR_KINDS:
            argtypes.append(_C.c_void_p)
        else:
            argtypes += _KINDS[kind][0]
    inplace = len(outs) == 1 and outs[0].startswith("=")
    n_out = 0 if inplace else len(outs)
    fn.argtypes = argtypes + [_C.POINTER(_C.c_void_p)] * n_out
    fn.restype = _C.c_int32
    by_name = {p[0]: p for p in params}
    order = list(pyorder) if pyorder else [p[0] for p in params]

    def op(*args, out=None, stream=None, **kwargs):
        kwargs_all = dict(kwargs)
        if len(args) > len(order):
            raise TypeError(f"{name}() takes at most {len(order)} positional arguments")
        values = {}
        for pname, v in zip(order, args):
            values[pname] = v
        for k in list(kwargs):
            if k not in by_name:
                raise TypeError(f"{name}() got an unexpected argument {k!r}")
            if k in values:
                raise TypeError(f"{name}() got multiple values for {k!r}")
            values[k] = kwargs.pop(k)
        for pname, kind, default in params:
            if pname not in values:
                if default is REQUIRED:
                    raise TypeError(f"{name}() needs the argument {pname!r}")
                values[pname] = default
        like = _like(
            t
            for p, k, _ in params
            if k in ("T", "T?", "Ts")
            for t in (values[p] if k == "Ts" and values[p] is not None else [values[p]])
        )
        if stream is None and _EXEC_MODE and current_stream() is None:
            return _through_graph(op, like, args, kwargs_all, out)
        if stream is None:
            stream = current_stream()
        keep = {}  # tensors converted from NumPy must outlive the call
        cargs = [stream.handle if stream is not None else None]
        for pname, kind, _ in params:
            v = values[pname]
            if kind == "Ts":
                ts = [_as_tensor(t, like) for t in v]
                keep[pname] = ts
                cargs += [(_C.c_void_p * max(len(ts), 1))(*(t.handle for t in ts)), len(ts)]
            elif kind in ("T", "T?"):
                if v is None and kind == "T?":
                    cargs.append(None)
                else:
                    t = _as_tensor(v, like)
                    keep[pname] = t
                    cargs.append(t.handle)
            else:
                cargs += _KINDS[kind][1](v)
        if inplace:
            if out is not None:
                raise TypeError(f"{name}() works in place and takes no out")
            check(fn(*cargs))
            return keep[outs[0][1:]]
        if out is None:
            dests = (None,) * n_out
        elif n_out == 1:
            dests = (out,)
        elif isinstance(out, (tuple, list)) and len(out) == n_out:
            dests = tuple(out)
        else:
            raise TypeError(f"{name}() out must be a tuple of {n_out} (Tensors or None)")
        for d in dests:
            if d is not None and not isinstance(d, Tensor):
                raise RbError(Status.INVALID_ARGUMENT, f"{name}: out must be a Tensor")
        hs = [_C.c_void_p(d.handle if d is not None else None) for d in dests]
        check(fn(*cargs, *(_C.byref(h) for h in hs)))
        # A gradient the op did not compute (e.g. of an absent optional input) is None.
        res = tuple(d if d is not None else (Tensor(h.value) if h.value else None) for d, h in zip(dests, hs))
        return res[0] if n_out == 1 else res

    sig = ", ".join(p if by_name[p][2] is REQUIRED else f"{p}={by_name[p][2]!r}" for p in order)
    op.__name__ = op.__qualname__ = name
    ret = outs[0][1:] if inplace else ", ".join(outs)
    op.__doc__ = f"{name}({sig}, out=None, stream=None) -> {ret}: the eager op {sym} of the C API."
    return op


def _through_graph(op, like, args, kwargs, out):
    """The RB_TEST_EXEC_MODE path: record `op(*args, **kwargs, out=out)` on a graph's
    stream (with the eager call's own checks), then return what an executor at that level
    computes: new results come from the executor; given destinations and tensors written
    in place are written when the graph runs."""
    from ._core import Stream

    if like is None:
        # An op without tensor inputs (arange) records on its destination's device.
        firsts = out if isinstance(out, (tuple, list)) else (out,)
        like = next((t for t in firsts if t is not None), None)
    device = like.device if like is not None else None
    g = Graph(device)
    s = Stream(device)
    g.capture_begin(s)
    try:
        res = op(*args, stream=s, out=out, **kwargs)
    finally:
        g.capture_end(s)
    many = isinstance(res, tuple)
    res = res if many else (res,)
    given = out if isinstance(out, (tuple, list)) else (out,)
    new = [
        i
        for i, r in enumerate(res)
        if r is not None and not any(r is d for d in given) and not any(r is a for a in args)
        and not any(r is v for v in kwargs.values())
    ]
    if new:
        g.mark_output(*[res[i] for i in new])
    # f32 stays f32 (the axis compares with eager at eager's tolerances)
    exe = Executor(g, opt_level=int(_EXEC_MODE[1:]), keep_fp32=True)
    got = exe(stream=s if _EXEC_MODE == "O3" else None)
    got = [] if got is None else list(got) if isinstance(got, tuple) else [got]
    final = list(res)
    for i, t in zip(new, got):
        final[i] = t
    s.synchronize()
    return tuple(final) if many else final[0]


# ---------------------------------------------------------------------------------------
# Torch-style convolution and pooling over the raw rows


def _tuple(v, n, what):
    if isinstance(v, (int, np.integer)):
        return [int(v)] * n
    v = [int(e) for e in v]
    if len(v) != n:
        raise RbError(Status.INVALID_ARGUMENT, f"{what} needs {n} values, got {len(v)}")
    return v


def _pad3(v):
    return (_C.c_int64 * 3)(*(list(v) + [0] * (3 - len(v))))


def conv_params(ndim, stride=1, padding=0, dilation=1, groups=1, output_padding=0):
    """An `rb_conv_params` for `ndim` spatial dimensions (ints broadcast)."""
    p = ConvParams()
    p.ndim = ndim
    p.stride = _pad3(_tuple(stride, ndim, "stride"))
    p.padding = _pad3(_tuple(padding, ndim, "padding"))
    p.dilation = _pad3(_tuple(dilation, ndim, "dilation"))
    p.output_padding = _pad3(_tuple(output_padding, ndim, "output_padding"))
    p.groups = int(groups)
    return p


def pool_params(ndim, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    """An `rb_pool_params` (stride None: the kernel size, as in PyTorch)."""
    p = PoolParams()
    p.ndim = ndim
    k = _tuple(kernel_size, ndim, "kernel_size")
    p.kernel = _pad3(k)
    p.stride = _pad3(k if stride is None else _tuple(stride, ndim, "stride"))
    p.padding = _pad3(_tuple(padding, ndim, "padding"))
    p.dilation = _pad3(_tuple(dilation, ndim, "dilation"))
    p.ceil_mode = int(bool(ceil_mode))
    return p


def _sides(padding, ndim, what="padding"):
    """Padding as (before, after) lists: an int or `ndim` ints (symmetric), or `ndim`
    (before, after) pairs, one per spatial dim in order."""
    if isinstance(padding, (int, np.integer)):
        return [int(padding)] * ndim, [int(padding)] * ndim
    v = list(padding)
    if v and all(isinstance(e, (tuple, list)) for e in v):
        if len(v) != ndim or any(len(e) != 2 for e in v):
            raise RbError(Status.INVALID_ARGUMENT, f"{what} needs {ndim} (before, after) pairs, got {padding!r}")
        return [int(e[0]) for e in v], [int(e[1]) for e in v]
    p = _tuple(v, ndim, what)
    return p, list(p)


def _conv_sides(padding, ndim, weight_shape, stride, dilation, what):
    """conv's `padding`: 'valid', 'same' (stride 1; PyTorch puts the odd extra after), an int,
    `ndim` ints, or `ndim` (before, after) pairs."""
    if isinstance(padding, str):
        if padding == "valid":
            return [0] * ndim, [0] * ndim
        if padding != "same":
            raise RbError(Status.INVALID_ARGUMENT, f"{what}: invalid padding string {padding!r}, should be one of 'valid', 'same'")
        if any(s != 1 for s in _tuple(stride, ndim, "stride")):
            raise RbError(Status.INVALID_ARGUMENT, f"{what}: padding='same' is not supported for strided convolutions")
        k = list(weight_shape)[2:]
        total = [d * (kk - 1) for d, kk in zip(_tuple(dilation, ndim, "dilation"), k)]
        before = [t // 2 for t in total]
        return before, [t - b for t, b in zip(total, before)]
    return _sides(padding, ndim)


_LAYOUTS = {
    None: 0, "NCHW": 0, "NCL": 0, "NCDHW": 0, "channels_first": 0, "contiguous_format": 0,
    "NHWC": 1, "NLC": 1, "NDHWC": 1, "channels_last": 1, "channels_last_3d": 1,
}


def _layout(layout):
    """An `rb_layout` from "NCHW"/"NHWC" (also "NCL"/"NLC", "NCDHW"/"NDHWC",
    "channels_first"/"channels_last", or torch.channels_last / torch.contiguous_format)."""
    if isinstance(layout, int) and layout in (0, 1):
        return layout
    key = layout if layout is None or isinstance(layout, str) else str(layout).replace("torch.", "")
    if key not in _LAYOUTS:
        raise RbError(Status.INVALID_ARGUMENT, f"layout {layout!r} is not one of 'NCHW', 'NHWC' (or channels_first / channels_last)")
    return _LAYOUTS[key]


def _first_shape(shape, layout):
    """A tensor shape as channels first (`[N, ..., C]` -> `[N, C, ...]` for channels last)."""
    shape = list(shape)
    return shape if layout == 0 else [shape[0], shape[-1]] + shape[1:-1]


def conv_params_ex(ndim, stride=1, pad_before=0, pad_after=0, dilation=1, groups=1, output_padding=0, layout=None):
    """An `rb_conv_params_ex` for `ndim` spatial dimensions (ints broadcast)."""
    p = ConvParamsEx()
    p.layout = _layout(layout)
    p.ndim = ndim
    p.stride = _pad3(_tuple(stride, ndim, "stride"))
    p.pad_before = _pad3(_tuple(pad_before, ndim, "padding"))
    p.pad_after = _pad3(_tuple(pad_after, ndim, "padding"))
    p.dilation = _pad3(_tuple(dilation, ndim, "dilation"))
    p.output_padding = _pad3(_tuple(output_padding, ndim, "output_padding"))
    p.groups = int(groups)
    return p


def pool_params_ex(ndim, kernel_size, stride=None, pad_before=0, pad_after=0, dilation=1, ceil_mode=False, divisor_override=None, layout=None):
    """An `rb_pool_params_ex` (stride None: the kernel size; divisor_override None: none)."""
    p = PoolParamsEx()
    p.layout = _layout(layout)
    p.ndim = ndim
    k = _tuple(kernel_size, ndim, "kernel_size")
    p.kernel = _pad3(k)
    p.stride = _pad3(k if stride is None else _tuple(stride, ndim, "stride"))
    p.pad_before = _pad3(_tuple(pad_before, ndim, "padding"))
    p.pad_after = _pad3(_tuple(pad_after, ndim, "padding"))
    p.dilation = _pad3(_tuple(dilation, ndim, "dilation"))
    p.ceil_mode = int(bool(ceil_mode))
    if divisor_override is not None and int(divisor_override) == 0:
        raise RbError(Status.INVALID_ARGUMENT, "divisor_override must not be zero")
    p.divisor_override = 0 if divisor_override is None else int(divisor_override)
    return p


def _spatial(t, what):
    nd = len(t.shape) - 2 if isinstance(t, Tensor) else len(t) - 2
    if not 1 <= nd <= 3:
        raise RbError(Status.SHAPE_MISMATCH, f"{what}: expected a 3-D, 4-D or 5-D tensor")
    return nd


def _define_conv(ns):
    def conv(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, activation=None, out=None, stream=None, layout=None):
        """conv{1,2,3}d (spatial rank from `weight`), then `activation` (None, "relu",
        "gelu", "gelu_tanh"), fused. `padding`: an int, one int per spatial dim, 'valid',
        'same' (stride 1; an odd total puts the extra after, as PyTorch), or one
        (before, after) pair per spatial dim (rb_conv_ex). `layout` "NHWC" (channels
        last): `input` `[N, ..., C]`, `weight` `[K, ..., C / groups]`, the result
        `[N, ..., K]` (PyTorch's channels_last, as dense tensors)."""
        nd = _spatial(weight, "conv")
        lay = _layout(layout)
        before, after = _conv_sides(padding, nd, _first_shape(weight.shape, lay), stride, dilation, f"conv{nd}d")
        if lay != 0:
            p = conv_params_ex(nd, stride, before, after, dilation, groups, layout=lay)
            return ns["_conv_ex"](input, weight, bias, p, activation, out=out, stream=stream)
        if before == after:
            p = conv_params(nd, stride, before, dilation, groups)
            return ns["_conv"](input, weight, bias, p, activation, out=out, stream=stream)
        p = conv_params_ex(nd, stride, before, after, dilation, groups)
        return ns["_conv_ex"](input, weight, bias, p, activation, out=out, stream=stream)

    def conv_transpose(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, out=None, stream=None, layout=None):
        """conv_transpose{1,2,3}d with torch's argument order. `layout` "NHWC" (channels
        last, rb_conv_transpose_ex): `input` `[N, ..., C]`, `weight` `[C, k..., K / groups]`
        (torch's channels_last weight), the result `[N, ..., K]`."""
        nd = _spatial(weight, "conv_transpose")
        lay = _layout(layout)
        if lay != 0:
            p = conv_params_ex(nd, stride, padding, padding, dilation, groups, output_padding, layout=lay)
            return ns["_conv_transpose_ex"](input, weight, bias, p, out=out, stream=stream)
        p = conv_params(nd, stride, padding, dilation, groups, output_padding)
        return ns["_conv_transpose"](input, weight, bias, p, out=out, stream=stream)

    def conv_backward_data(grad, weight, input_shape, stride=1, padding=0, dilation=1, groups=1, out=None, stream=None, layout=None):
        """Gradient of conv (no activation) with respect to its input of `input_shape`
        (`padding` and `layout` as conv's)."""
        nd = _spatial(weight, "conv_backward_data")
        lay = _layout(layout)
        before, after = _conv_sides(padding, nd, _first_shape(weight.shape, lay), stride, dilation, "conv_backward_data")
        if lay != 0:
            p = conv_params_ex(nd, stride, before, after, dilation, groups, layout=lay)
            return ns["_conv_ex_backward_data"](grad, weight, list(input_shape), p, out=out, stream=stream)
        if before == after:
            p = conv_params(nd, stride, before, dilation, groups)
            return ns["_conv_backward_data"](grad, weight, list(input_shape), p, out=out, stream=stream)
        p = conv_params_ex(nd, stride, before, after, dilation, groups)
        return ns["_conv_ex_backward_data"](grad, weight, list(input_shape), p, out=out, stream=stream)

    def conv_backward_weight(input, grad, weight_shape, stride=1, padding=0, dilation=1, groups=1, out=None, stream=None, layout=None):
        """Gradients of conv with respect to the weight (of `weight_shape`) and the bias:
        `(dw, db)` (`padding` and `layout` as conv's)."""
        nd = _spatial(list(weight_shape), "conv_backward_weight")
        lay = _layout(layout)
        before, after = _conv_sides(padding, nd, _first_shape(weight_shape, lay), stride, dilation, "conv_backward_weight")
        if lay != 0:
            p = conv_params_ex(nd, stride, before, after, dilation, groups, layout=lay)
            return ns["_conv_ex_backward_weight"](input, grad, list(weight_shape), p, out=out, stream=stream)
        if before == after:
            p = conv_params(nd, stride, before, dilation, groups)
            return ns["_conv_backward_weight"](input, grad, list(weight_shape), p, out=out, stream=stream)
        p = conv_params_ex(nd, stride, before, after, dilation, groups)
        return ns["_conv_ex_backward_weight"](input, grad, list(weight_shape), p, out=out, stream=stream)

    def conv_bn_relu(input, weight, bias, running_mean, running_var, gamma, beta, eps=1e-5, stride=1, padding=0, dilation=1, groups=1, out=None, stream=None):
        """Inference relu(batch_norm(conv(x, w, bias))) with the batch norm folded in."""
        p = conv_params(_spatial(weight, "conv_bn_relu"), stride, padding, dilation, groups)
        return ns["_conv_bn_relu"](input, weight, bias, running_mean, running_var, gamma, beta, eps, p, out=out, stream=stream)

    def pool(input, mode, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, divisor_override=None, out=None, stream=None, layout=None):
        """Pooling with `mode` "max", "avg" (count_include_pad) or "avg_exclude_pad";
        `padding` an int, one per spatial dim or one (before, after) pair per spatial dim;
        `divisor_override` (average) as PyTorch's (rb_pool_ex); `layout` "NHWC": `input`
        and the result `[N, ..., C]` (channels last)."""
        nd = _spatial(input, "pool")
        before, after = _sides(padding, nd)
        lay = _layout(layout)
        if before == after and divisor_override is None and lay == 0:
            p = pool_params(nd, kernel_size, stride, before, dilation, ceil_mode)
            return ns["_pool"](mode, input, p, out=out, stream=stream)
        p = pool_params_ex(nd, kernel_size, stride, before, after, dilation, ceil_mode, divisor_override, lay)
        return ns["_pool_ex"](mode, input, p, out=out, stream=stream)

    def pool_backward(input, grad, mode, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, divisor_override=None, out=None, stream=None, layout=None):
        """Gradient of `pool` with respect to `input` (`layout` as pool's)."""
        nd = _spatial(input, "pool_backward")
        before, after = _sides(padding, nd)
        lay = _layout(layout)
        if before == after and divisor_override is None and lay == 0:
            p = pool_params(nd, kernel_size, stride, before, dilation, ceil_mode)
            return ns["_pool_backward"](mode, input, grad, p, out=out, stream=stream)
        p = pool_params_ex(nd, kernel_size, stride, before, after, dilation, ceil_mode, divisor_override, lay)
        return ns["_pool_ex_backward"](mode, input, grad, p, out=out, stream=stream)

    def max_pool_with_indices(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, out=None, stream=None, layout=None):
        """max pooling with PyTorch's indices: `(values, indices)` (i64, flat within each
        spatial plane); `padding` as pool's; `layout` "NHWC": input, values and indices
        `[N, ..., C]` (the indices' values as channels first)."""
        nd = _spatial(input, "max_pool_with_indices")
        before, after = _sides(padding, nd)
        lay = _layout(layout)
        if before == after and lay == 0:
            p = pool_params(nd, kernel_size, stride, before, dilation, ceil_mode)
            return ns["_max_pool_with_indices"](input, p, out=out, stream=stream)
        p = pool_params_ex(nd, kernel_size, stride, before, after, dilation, ceil_mode, None, lay)
        return ns["_max_pool_with_indices_ex"](input, p, out=out, stream=stream)

    def _unpool(nd):
        def max_unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None, out=None, stream=None):
            """torch.nn.functional.max_unpool{nd}d(input, indices, kernel_size, stride=None,
            padding=0, output_size=None) (rb_max_unpool of the C API)."""
            shape = list(input.shape)
            if len(shape) != nd + 2:
                raise RbError(Status.SHAPE_MISMATCH, f"max_unpool{nd}d: input must be {nd + 2}-D")
            k = [kernel_size] * nd if isinstance(kernel_size, int) else list(kernel_size)
            st = k if stride is None else ([stride] * nd if isinstance(stride, int) else list(stride))
            pd = [padding] * nd if isinstance(padding, int) else list(padding)
            if output_size is None:
                size = [(shape[2 + i] - 1) * st[i] - 2 * pd[i] + k[i] for i in range(nd)]
            else:
                size = list(output_size)[-nd:]
            return ns["max_unpool"](input, indices, size, out=out, stream=stream)

        max_unpool.__name__ = max_unpool.__qualname__ = f"max_unpool{nd}d"
        return max_unpool

    raw_interp, raw_interp_bwd = ns["interpolate"], ns["interpolate_backward"]
    interp_modes = {"nearest": 0, "linear": 1, "bilinear": 1, "trilinear": 1}

    def _interp_mode(mode):
        if mode not in interp_modes:
            raise ValueError(f"interpolate: mode {mode!r} is not one of {sorted(interp_modes)}")
        return interp_modes[mode]

    def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None, out=None, stream=None):
        """torch.nn.functional.interpolate(input, size=None, scale_factor=None, mode='nearest',
        align_corners=None) for modes nearest, linear, bilinear, trilinear (rb_interpolate);
        a scale_factor gives size floor(extent * scale_factor) (as recompute_scale_factor=True)."""
        nd = len(input.shape) - 2
        if size is None:
            if scale_factor is None:
                raise ValueError("interpolate: give size or scale_factor")
            sf = [scale_factor] * nd if isinstance(scale_factor, (int, float)) else list(scale_factor)
            size = [int(input.shape[2 + i] * sf[i]) for i in range(nd)]
        elif isinstance(size, int):
            size = [size] * nd
        return raw_interp(input, list(size), _interp_mode(mode), bool(align_corners), out=out, stream=stream)

    def interpolate_backward(grad, x_shape, mode="nearest", align_corners=None, out=None, stream=None):
        """The backward of interpolate: the gradient of the input of x_shape."""
        return raw_interp_bwd(grad, list(x_shape), _interp_mode(mode), bool(align_corners), out=out, stream=stream)

    defs = {
        "interpolate": interpolate,
        "interpolate_backward": interpolate_backward,
        "max_unpool1d": _unpool(1),
        "max_unpool2d": _unpool(2),
        "max_unpool3d": _unpool(3),
        "conv": conv,
        "conv_transpose": conv_transpose,
        "conv_backward_data": conv_backward_data,
        "conv_backward_weight": conv_backward_weight,
        "conv_bn_relu": conv_bn_relu,
        "pool": pool,
        "pool_backward": pool_backward,
        "max_pool_with_indices": max_pool_with_indices,
    }
    for nd in (1, 2, 3):

        def convnd(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, out=None, stream=None, layout=None, _nd=nd):
            if _spatial(weight, f"conv{_nd}d") != _nd:
                raise RbError(Status.SHAPE_MISMATCH, f"conv{_nd}d: weight must be {_nd + 2}-D")
            return conv(input, weight, bias, stride, padding, dilation, groups, out=out, stream=stream, layout=layout)

        def convtnd(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1, out=None, stream=None, layout=None, _nd=nd):
            if _spatial(weight, f"conv_transpose{_nd}d") != _nd:
                raise RbError(Status.SHAPE_MISMATCH, f"conv_transpose{_nd}d: weight must be {_nd + 2}-D")
            return conv_transpose(input, weight, bias, stride, padding, output_padding, groups, dilation, out=out, stream=stream, layout=layout)

        def maxnd(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False, out=None, stream=None, layout=None, _nd=nd):
            if _spatial(input, f"max_pool{_nd}d") != _nd:
                raise RbError(Status.SHAPE_MISMATCH, f"max_pool{_nd}d: input must be {_nd + 2}-D")
            if return_indices:
                return max_pool_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode, out=out, stream=stream, layout=layout)
            return pool(input, "max", kernel_size, stride, padding, dilation, ceil_mode, out=out, stream=stream, layout=layout)

        def avgnd(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None, out=None, stream=None, layout=None, _nd=nd):
            if _spatial(input, f"avg_pool{_nd}d") != _nd:
                raise RbError(Status.SHAPE_MISMATCH, f"avg_pool{_nd}d: input must be {_nd + 2}-D")
            mode = "avg_include_pad" if count_include_pad else "avg_exclude_pad"
            return pool(input, mode, kernel_size, stride, padding, 1, ceil_mode, divisor_override, out=out, stream=stream, layout=layout)

        for prefix, f in (("conv", convnd), ("conv_transpose", convtnd), ("max_pool", maxnd), ("avg_pool", avgnd)):
            f.__name__ = f.__qualname__ = f"{prefix}{nd}d"
            f.__doc__ = f"torch.nn.functional.{prefix}{nd}d"
            defs[f.__name__] = f
    return defs


def _adaptive(ns):
    raw = ns["adaptive_avg_pool2d"]
    avg, mx = ns["adaptive_avg_pool"], ns["_adaptive_max_pool"]
    avg_bwd, mx_bwd = ns["adaptive_avg_pool_backward"], ns["adaptive_max_pool_backward"]

    def size_of(input, output_size, nd, lay, what):
        # PyTorch's output_size: an int, or one entry per spatial dim (None: the input's).
        shape = list(input.shape)
        if len(shape) != nd + 2:
            raise RbError(Status.SHAPE_MISMATCH, f"{what}: input must be {nd + 2}-D (N, C and {nd} spatial), got {shape}")
        sp = shape[1:-1] if lay else shape[2:]
        if isinstance(output_size, (int, np.integer)) or output_size is None:
            output_size = [output_size] * nd
        output_size = list(output_size)
        if len(output_size) != nd:
            raise RbError(Status.INVALID_ARGUMENT, f"{what}: output_size needs {nd} values, got {len(output_size)}")
        return [sp[i] if v is None else int(v) for i, v in enumerate(output_size)]

    def adaptive_avg_pool2d(input, output_size, out=None, stream=None, layout=None):
        """torch.nn.functional.adaptive_avg_pool2d (output_size an int or (h, w), None
        entries keep the input's extent); `layout` "NHWC": `input` and the result
        `[N, H, W, C]`."""
        lay = _layout(layout)
        h, w = size_of(input, output_size, 2, lay, "adaptive_avg_pool2d")
        if lay == 0:
            return raw(input, h, w, out=out, stream=stream)
        return avg(input, [h, w], lay, out=out, stream=stream)

    def make(nd):
        def adaptive_avg(input, output_size, out=None, stream=None, layout=None):
            lay = _layout(layout)
            return avg(input, size_of(input, output_size, nd, lay, f"adaptive_avg_pool{nd}d"), lay, out=out, stream=stream)

        def adaptive_max(input, output_size, return_indices=False, out=None, stream=None, layout=None):
            lay = _layout(layout)
            v, i = mx(input, size_of(input, output_size, nd, lay, f"adaptive_max_pool{nd}d"), lay, out=out, stream=stream)
            return (v, i) if return_indices else v

        adaptive_avg.__name__ = adaptive_avg.__qualname__ = f"adaptive_avg_pool{nd}d"
        adaptive_avg.__doc__ = (f"torch.nn.functional.adaptive_avg_pool{nd}d (rb_adaptive_avg_pool); `layout` "
                                "\"NHWC\": `input` and the result channels last.")
        adaptive_max.__name__ = adaptive_max.__qualname__ = f"adaptive_max_pool{nd}d"
        adaptive_max.__doc__ = (f"torch.nn.functional.adaptive_max_pool{nd}d(input, output_size, return_indices) "
                                "(rb_adaptive_max_pool): the indices are i64, flat within each spatial plane; "
                                "`layout` \"NHWC\": input, result and indices channels last.")
        def adaptive_avg_backward(grad, input_shape, out=None, stream=None, layout=None):
            return avg_bwd(grad, list(input_shape), _layout(layout), out=out, stream=stream)

        def adaptive_max_backward(grad, indices, input_shape, out=None, stream=None, layout=None):
            return mx_bwd(grad, indices, list(input_shape), _layout(layout), out=out, stream=stream)

        adaptive_avg_backward.__name__ = adaptive_avg_backward.__qualname__ = f"adaptive_avg_pool{nd}d_backward"
        adaptive_avg_backward.__doc__ = f"Gradient of adaptive_avg_pool{nd}d with respect to its input of `input_shape`."
        adaptive_max_backward.__name__ = adaptive_max_backward.__qualname__ = f"adaptive_max_pool{nd}d_backward"
        adaptive_max_backward.__doc__ = (f"Gradient of adaptive_max_pool{nd}d through its indices (PyTorch's "
                                         f"adaptive_max_pool{nd}d_backward).")
        return adaptive_avg, adaptive_max, adaptive_avg_backward, adaptive_max_backward

    defs = {"adaptive_avg_pool2d": adaptive_avg_pool2d}
    for nd in (1, 2, 3):
        for f in make(nd):
            # adaptive_avg_pool2d_backward stays the generated rb_adaptive_avg_pool2d_backward.
            if f.__name__ not in ("adaptive_avg_pool2d", "adaptive_avg_pool2d_backward"):
                defs[f.__name__] = f
    return defs


def _attention(ns):
    plain, ex = ns["scaled_dot_product_attention"], ns["scaled_dot_product_attention_ex"]

    def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False, causal_lower_right=False, out=None, stream=None):
        """torch.nn.functional.scaled_dot_product_attention (dropout_p must be 0).
        `causal_lower_right=True` applies the bottom-right aligned causal mask of
        torch.nn.attention.bias.causal_lower_right (query i sees keys j <= i + Sk - Sq)
        instead of is_causal's top-left one; a query that sees no key gives 0."""
        if dropout_p != 0.0:
            raise RbError(Status.INVALID_ARGUMENT, f"scaled_dot_product_attention: dropout_p={dropout_p} is not supported (only 0.0)")
        lead = [tuple(t.shape if isinstance(t, Tensor) else np.shape(t))[:-2] for t in (query, key, value)]
        if attn_mask is None and not enable_gqa and not causal_lower_right and lead[0] == lead[1] == lead[2]:
            return plain(query, key, value, is_causal, scale, out=out, stream=stream)
        causal = "bottom_right" if causal_lower_right else ("top_left" if is_causal else "none")
        return ex(query, key, value, attn_mask, causal, scale, enable_gqa, out=out, stream=stream)

    return {"scaled_dot_product_attention": scaled_dot_product_attention}


def _argmax(ns):
    by_dim, flat = ns["_argmax_dim"], ns["_argmax_all"]

    def argmax(x, dim=None, keepdim=False, out=None, stream=None):
        """torch.argmax: the index of the first largest value along `dim` (int64), or of
        the flattened tensor when `dim` is None (a NaN counts as the largest)."""
        if dim is None:
            return flat(x, keepdim, out=out, stream=stream)
        return by_dim(x, dim, keepdim, out=out, stream=stream)

    return {"argmax": argmax}


def _dataops(ns):
    """torch-style overloads whose C functions differ: tensor bounds for clamp, alpha for
    add/sub, None bounds and negative steps for slice, the split conv_transpose backward."""
    raw_clamp, raw_add, raw_sub, raw_slice = ns["clamp"], ns["add"], ns["sub"], ns["slice"]
    INT64_MAX, INT64_MIN = 2**63 - 1, -(2**63)

    def clamp(x, min=-float("inf"), max=float("inf"), out=None, stream=None):
        """clamp(x, min=-inf, max=inf, out=None, stream=None) -> out: torch.clamp with scalar
        bounds (None: unbounded; the eager op rb_clamp of the C API) or tensor bounds
        (broadcast, either may be None; rb_clamp_tensor), with torch's NaN rules and `max`
        winning where min > max."""
        if isinstance(min, (Tensor, np.ndarray)) or isinstance(max, (Tensor, np.ndarray)):
            like = x if isinstance(x, Tensor) else None
            lo = None if min is None else _as_tensor(min, like)
            hi = None if max is None else _as_tensor(max, like)
            return ns["_clamp_tensor"](x, lo, hi, out=out, stream=stream)
        big = [b for b in (min, max) if isinstance(b, (int, np.integer)) and abs(int(b)) > 2**24]
        if big and isinstance(x, Tensor) and x.dtype in ("i32", "i64"):
            # rb_clamp's bounds are floats (its published signature): integer bounds past
            # 2^24 go exactly as 0-d tensors of x's dtype (torch converts them so too).
            info = np.iinfo(np.int32 if x.dtype == "i32" else np.int64)
            for b in (min, max):
                if b is not None and isinstance(b, (int, np.integer)) and not info.min <= int(b) <= info.max:
                    raise ValueError(f"clamp: bound {b} cannot be converted to {x.dtype} without overflow")
            as0d = lambda b: None if b is None or b in (float("inf"), -float("inf")) else _as_tensor(np.array(int(b)), x)
            return ns["_clamp_tensor"](x, as0d(min), as0d(max), out=out, stream=stream)
        return raw_clamp(x, min, max, out=out, stream=stream)

    def add(input, other, alpha=1, out=None, stream=None):
        """torch.add(input, other, alpha=1): input + alpha * other (the eager ops rb_add and
        rb_add_scaled of the C API)."""
        if alpha == 1:
            return raw_add(input, other, out=out, stream=stream)
        return ns["_add_scaled"](input, other, alpha, out=out, stream=stream)

    def sub(input, other, alpha=1, out=None, stream=None):
        """torch.sub(input, other, alpha=1): input - alpha * other (the eager ops rb_sub and
        rb_sub_scaled of the C API)."""
        if alpha == 1:
            return raw_sub(input, other, out=out, stream=stream)
        return ns["_sub_scaled"](input, other, alpha, out=out, stream=stream)

    def _bounds(start, end, step):
        if start is None:
            start = 0 if step > 0 else INT64_MAX
        if end is None:
            end = INT64_MAX if step > 0 else INT64_MIN
        return start, end

    def slice(x, dim, start=None, end=None, step=1, out=None, stream=None):
        """x[..., start:end:step, ...] along dim with Python/NumPy slicing (negative steps
        too; None bounds as in Python)."""
        start, end = _bounds(start, end, step)
        return raw_slice(x, dim, start, end, step, out=out, stream=stream)

    def slice_backward(grad, x_shape, dim, start=None, end=None, step=1, out=None, stream=None):
        """The backward of slice: grad scattered into zeros of x_shape."""
        start, end = _bounds(start, end, step)
        return ns["_slice_backward"](grad, list(x_shape), dim, start, end, step, out=out, stream=stream)

    def conv_transpose_backward_data(grad, weight, input_shape, stride=1, padding=0, output_padding=0, groups=1, dilation=1, out=None, stream=None, layout=None):
        """Gradient of conv_transpose (no bias) with respect to its input of `input_shape`
        (`layout` as conv_transpose's)."""
        nd = _spatial(weight, "conv_transpose_backward_data")
        lay = _layout(layout)
        if lay != 0:
            p = conv_params_ex(nd, stride, padding, padding, dilation, groups, output_padding, layout=lay)
            return ns["_conv_transpose_ex_backward_data"](grad, weight, list(input_shape), p, out=out, stream=stream)
        p = conv_params(nd, stride, padding, dilation, groups, output_padding)
        return ns["_conv_transpose_backward_data"](grad, weight, list(input_shape), p, out=out, stream=stream)

    def conv_transpose_backward_weight(input, grad, weight_shape, stride=1, padding=0, output_padding=0, groups=1, dilation=1, out=None, stream=None, layout=None):
        """Gradients of conv_transpose with respect to the weight (of `weight_shape`) and the
        bias: `(dw, db)` (`layout` as conv_transpose's)."""
        nd = _spatial(list(weight_shape), "conv_transpose_backward_weight")
        lay = _layout(layout)
        if lay != 0:
            p = conv_params_ex(nd, stride, padding, padding, dilation, groups, output_padding, layout=lay)
            return ns["_conv_transpose_ex_backward_weight"](input, grad, list(weight_shape), p, out=out, stream=stream)
        p = conv_params(nd, stride, padding, dilation, groups, output_padding)
        return ns["_conv_transpose_backward_weight"](input, grad, list(weight_shape), p, out=out, stream=stream)

    def _typed_reduction(name):
        raw = ns[name]

        def reduction(input, dim=None, keepdim=False, dtype=None, out=None, stream=None):
            # torch: integer and bool inputs reduce to int64 unless a dtype is given.
            if dtype is None and isinstance(input, Tensor) and input.dtype in ("i8", "u8", "i16", "i32", "i64", "bool"):
                dtype = "i64"
            if dtype is None:
                return raw(input, dim, keepdim, out=out, stream=stream)
            return ns[f"_{name}_dtype"](input, dim, keepdim, dtype, out=out, stream=stream)

        reduction.__name__ = reduction.__qualname__ = name
        reduction.__doc__ = (
            f"torch.{name}(input, dim=None, keepdim=False, dtype=None): with a dtype the input is "
            f"cast to it first (rb_{name}_dtype of the C API); integer inputs give int64."
        )
        return reduction

    pad_modes = {"constant": 0, "reflect": 1, "replicate": 2}
    raw_pad, raw_pad_backward = ns["pad"], ns["pad_backward"]

    def _pad_mode(mode):
        if isinstance(mode, str):
            if mode not in pad_modes:
                raise ValueError(f"pad: mode {mode!r} is not 'constant', 'reflect' or 'replicate'")
            return pad_modes[mode]
        return int(mode)

    def pad(input, pad, mode="constant", value=0.0, out=None, stream=None):
        """torch.nn.functional.pad(input, pad, mode='constant', value=0): `pad` holds (before,
        after) pairs, the last dimension first; modes 'constant', 'reflect', 'replicate'
        (rb_pad of the C API)."""
        return raw_pad(input, list(pad), _pad_mode(mode), 0.0 if value is None else float(value),
                       out=out, stream=stream)

    def pad_backward(grad, x_shape, pad, mode="constant", out=None, stream=None):
        """The backward of pad: the gradient of the input of x_shape."""
        return raw_pad_backward(grad, list(x_shape), list(pad), _pad_mode(mode), out=out, stream=stream)

    def triu(input, diagonal=0, out=None, stream=None):
        """torch.triu(input, diagonal=0) (rb_trilu with upper = 1)."""
        return ns["trilu"](input, True, diagonal, out=out, stream=stream)

    def tril(input, diagonal=0, out=None, stream=None):
        """torch.tril(input, diagonal=0) (rb_trilu with upper = 0)."""
        return ns["trilu"](input, False, diagonal, out=out, stream=stream)

    raw_arange = ns["arange"]

    def arange(start, end=None, step=1, dtype=None, device=None, out=None, stream=None):
        """torch.arange(start, end, step, dtype=None, device=None) (rb_arange of the C API):
        `arange(n)` counts from 0; dtype None is i64 when every bound is an integer, else
        f32 (torch's default). On `out`'s device, else the stream's, else `device`, else
        the current device (`set_device`)."""
        if end is None:
            start, end = 0, start
        bounds = (start, end, step)
        if dtype is None:
            ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in bounds)
            dtype = "i64" if ints else "f32"
        if device is not None and out is None and stream is None:
            s, e, d = (float(v) for v in bounds)
            if d != 0 and all(np.isfinite(v) for v in bounds) and (e - s) / d >= 0:
                out = Tensor.empty([int(np.ceil((e - s) / d))], dtype, device)
        return raw_arange(float(start), float(end), float(step), dtype, out=out, stream=stream)

    return {
        "arange": arange,
        "pad": pad,
        "pad_backward": pad_backward,
        "triu": triu,
        "tril": tril,
        "sum": _typed_reduction("sum"),
        "prod": _typed_reduction("prod"),
        "clamp": clamp,
        "add": add,
        "sub": sub,
        "slice": slice,
        "slice_backward": slice_backward,
        "conv_transpose_backward_data": conv_transpose_backward_data,
        "conv_transpose_backward_weight": conv_transpose_backward_weight,
    }


def _is_weight(v):
    return v is None or isinstance(v, (Tensor, np.ndarray))


def _weighted_losses(ns):
    """cross_entropy, nll_loss, binary_cross_entropy and their backwards with torch's
    `weight=` (issue 17). Positional arguments keep this package's order (after the
    tensors: reduction, then ignore_index and label_smoothing where the loss has them); a
    Tensor, NumPy array or None in the first position after the tensors is the weight,
    torch's position (`F.cross_entropy(input, target, weight)`), and the remaining arguments
    then go by keyword. With a weight the call goes to the `rb_*_weighted` C function, else to
    the plain one."""
    defs = {}
    for name, weighted, n_tensors in (
        ("cross_entropy", "cross_entropy_weighted", 2),
        ("cross_entropy_backward", "cross_entropy_weighted_backward", 3),
        ("nll_loss", "nll_loss_weighted", 2),
        ("nll_loss_backward", "nll_loss_weighted_backward", 3),
        ("binary_cross_entropy", "binary_cross_entropy_weighted", 2),
        ("binary_cross_entropy_backward", "binary_cross_entropy_weighted_backward", 3),
    ):

        def f(*args, weight=None, out=None, stream=None, _name=name, _plain=ns[name], _w=ns[weighted], _n=n_tensors, **kwargs):
            args = list(args)
            if len(args) > _n and _is_weight(args[_n]):
                if "weight" in kwargs or weight is not None:
                    raise TypeError(f"{_name}() got multiple values for 'weight'")
                if len(args) > _n + 1:
                    raise TypeError(f"{_name}(): after a positional weight, pass the other arguments by keyword")
                weight = args.pop(_n)
            if weight is None:
                return _plain(*args, out=out, stream=stream, **kwargs)
            return _w(*args[:_n], weight, *args[_n:], out=out, stream=stream, **kwargs)

        f.__name__ = f.__qualname__ = name
        f.__doc__ = (
            f"{name}(..., weight=None, out=None, stream=None): {ns[name].__doc__} "
            f"With weight (keyword, or a tensor right after the tensor arguments, torch's "
            f"position) it runs {weighted}."
        )
        defs[name] = f
    return defs


# torch-style aliases
_ALIASES = {
    "cat": "concat",
    "amax": "max",
    "amin": "min",
    "bce_loss": "binary_cross_entropy",
    "bce_loss_backward": "binary_cross_entropy_backward",
    "sdpa": "scaled_dot_product_attention",
}


def install(namespace):
    """Defines every op of the table (and the conv/pool wrappers) in `namespace`; returns
    the public names."""
    names = []
    for row in OPS:
        namespace[row[0]] = make_op(*row)
        if not row[0].startswith("_"):
            names.append(row[0])
    for extra in (
        _define_conv(namespace),
        _adaptive(namespace),
        _argmax(namespace),
        _dataops(namespace),
        _weighted_losses(namespace),
        _attention(namespace),
    ):
        for n, f in extra.items():
            namespace[n] = f
            if n not in names:
                names.append(n)
    for alias, target in _ALIASES.items():
        namespace[alias] = namespace[target]
        names.append(alias)
    return names
