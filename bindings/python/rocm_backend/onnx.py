"""ONNX import: `rb.onnx.load(path_or_model, device=None, opt_level=1)` gives an executor.

    import rocm_backend as rb
    model = rb.onnx.load("resnet50.onnx", device="cpu", opt_level=1)
    y = model(x)                       # Tensors or NumPy arrays in graph-input order
    outs = model.run({"input": x})     # or ONNX Runtime style: a list of NumPy arrays

The `onnx` package (an optional dependency: `pip install onnx`) is used only to read the
file. Each ONNX node is mapped to the eager op of this package that computes it, recorded
with `rb.record()` into a graph that an `rb.Executor` runs. Initializers become parameters
(real tensors). Values known at load -- initializers, Constant nodes, and everything computed
from them and from input shapes (Shape, Gather, Unsqueeze, Concat, Cast, ...) -- are folded
with NumPy while recording, so a graph holds only the ops on data.

A graph is recorded for concrete input shapes: a model whose inputs have symbolic
dimensions is recorded again (and an executor made) for each new combination of input
shapes it is called with; `input_shapes={"name": (1, 3, 224, 224)}` fixes them at load.

Every operator, attribute value and opset this module cannot map faithfully fails at load
with an `OnnxImportError` (an `RbError` with status UNSUPPORTED) naming the node (index and
name), the operator and the attribute -- never a wrong result. Opsets 7 to 21 of the default
domain are read; see `SUPPORTED_OPS`.
"""

import math
import os

import numpy as np

from ._core import RbError, Status, Tensor
from ._graph import Executor, record

MIN_OPSET, MAX_OPSET = 7, 21

# ONNX TensorProto data types -> NumPy dtypes, and which the library holds.
_ONNX_NP = {
    1: np.float32,
    2: np.uint8,
    3: np.int8,
    4: np.uint16,
    5: np.int16,
    6: np.int32,
    7: np.int64,
    9: np.bool_,
    10: np.float16,
    11: np.float64,
    12: np.uint32,
    13: np.uint64,
}
_ONNX_NAMES = {
    0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
    7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32",
    13: "UINT64", 14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16",
}
_RB_OF_ONNX = {1: "f32", 10: "f16", 16: "bf16", 6: "i32", 7: "i64", 9: "bool", 11: "f64", 3: "i8",
               2: "u8", 5: "i16"}
_RB_OF_NP = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype(np.int32): "i32",
    np.dtype(np.int64): "i64",
    np.dtype(np.bool_): "bool",
    np.dtype(np.float64): "f64",
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.int16): "i16",
}
_NP_OF_RB = {"f32": np.float32, "f16": np.float16, "i32": np.int32, "i64": np.int64, "bool": np.bool_,
             "f64": np.float64, "i8": np.int8, "u8": np.uint8, "i16": np.int16}
_FLOAT_MAX = {"f32": float(np.finfo(np.float32).max), "f16": 65504.0, "bf16": 3.3895313892515355e38}


class OnnxImportError(RbError):
    """A model this module cannot run faithfully (status UNSUPPORTED), or a malformed one
    (INVALID_ARGUMENT). `.node_index`, `.node_name`, `.op_type` and `.attribute` say where
    (None where they do not apply)."""

    def __init__(self, message, status=Status.UNSUPPORTED, node_index=None, node_name=None,
                 op_type=None, attribute=None, shape_dependent=False, from_library=False):
        self.shape_dependent, self.from_library = shape_dependent, from_library
        self.node_index, self.node_name = node_index, node_name
        self.op_type, self.attribute = op_type, attribute
        super().__init__(status, message)


class _Unsupported(Exception):
    """Raised by a handler: what it cannot map (the attribute, if one is to blame)."""

    def __init__(self, what, attribute=None, shape_dependent=False):
        super().__init__(what)
        self.what, self.attribute, self.shape_dependent = what, attribute, shape_dependent


def _onnx():
    try:
        import onnx  # noqa: PLC0415 (an optional dependency, imported when used)
    except ImportError as e:
        raise ImportError(
            "rocm_backend.onnx needs the 'onnx' package to read models: pip install onnx"
        ) from e
    return onnx


# ---------------------------------------------------------------------------------------
# Values: a name maps to a NumPy array (known while recording: folded) or a Tensor.


def _contig(a):
    """`a` C-contiguous, keeping its rank (np.ascontiguousarray makes a 0-d array 1-d)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else np.array(a, order="C")


def _is_const(v):
    return isinstance(v, np.ndarray)


def _shape(v):
    return tuple(v.shape)


def _rb_dtype(v):
    if _is_const(v):
        return _RB_OF_NP.get(v.dtype)
    return v.dtype


def _norm_axis(axis, rank, what="axis"):
    """`axis` in [-rank, rank) as a non-negative axis."""
    a = int(axis)
    if not -rank <= a < rank:
        raise _Unsupported(f"{what}={axis} is out of range for rank {rank}", what)
    return a + rank if a < 0 else a


class _Node:
    """One node while it is mapped: its attributes, inputs and the recording context."""

    def __init__(self, ctx, index, node, onnx):
        self.ctx, self.index, self.proto = ctx, index, node
        self.op = node.op_type
        self.name = node.name
        self.opset = ctx.opset
        self.attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        self.inputs = list(node.input)
        self.outputs = list(node.output)

    # -- attributes --
    def attr(self, name, default=None):
        v = self.attrs.get(name, default)
        if isinstance(v, bytes):
            v = v.decode()
        return v

    def ints(self, name, default=None):
        v = self.attrs.get(name)
        return default if v is None else [int(e) for e in v]

    def fail(self, what, attribute=None):
        raise _Unsupported(what, attribute)

    def shape_fail(self, what, attribute=None):
        """A failure that depends on the input shapes (not reported by a load-time trial
        recording with symbolic dimensions bound to 1)."""
        raise _Unsupported(what, attribute, shape_dependent=True)

    def bad_attr(self, name, why="is not supported", shape_dependent=False):
        v = self.attr(name)
        raise _Unsupported(f"attribute {name}={v!r} {why}", name, shape_dependent)

    # -- inputs --
    def has(self, i):
        return i < len(self.inputs) and self.inputs[i] != ""

    def inp(self, i):
        """Input `i`: an array (a constant) or a Tensor; None when absent."""
        if not self.has(i):
            return None
        return self.ctx.value(self.inputs[i])

    def const(self, i, what):
        """Input `i`, which must be known while recording (an array)."""
        v = self.inp(i)
        if v is not None and not _is_const(v):
            self.fail(f"input {i} ('{self.inputs[i]}', {what}) must be a constant or computed "
                      f"from shapes and constants; it depends on the graph's data")
        return v

    def tensor(self, v, like=None):
        """`v` as a Tensor (constants become parameters, in the dtype of `like` when given
        and `v` is a float or a 0-d number)."""
        return self.ctx.tensor(v, like)

    def wants_output(self, i):
        return i < len(self.outputs) and self.outputs[i] != ""


class _Context:
    def __init__(self, device, opset):
        self.device, self.opset = device, opset
        self.env = {}
        self._params = {}  # id(array) -> (array, Tensor)

    def value(self, name):
        if name not in self.env:
            raise _Unsupported(f"input '{name}' is not produced by any earlier node, "
                               f"initializer or graph input (nodes not in topological order?)")
        return self.env[name]

    def tensor(self, v, like=None):
        if isinstance(v, Tensor):
            return v
        a = np.asarray(v)
        if like is not None and like.dtype in ("f32", "f16", "f64") and a.dtype != _NP_OF_RB[like.dtype]:
            # float constants (and 0-d numbers: Pow's exponent) take the tensor's float type
            if a.dtype.kind == "f" or (a.ndim == 0 and a.dtype.kind in "iu"):
                a = a.astype(_NP_OF_RB[like.dtype])
        key = id(v) if isinstance(v, np.ndarray) and a is v else None
        if key is not None and key in self._params:
            return self._params[key][1]
        if a.dtype not in _RB_OF_NP:
            raise _Unsupported(f"a constant of dtype {a.dtype} has no library dtype "
                               f"(f32, f16, f64, i8, u8, i16, i32, i64, bool)")
        t = Tensor.from_numpy(_contig(a), dtype=_RB_OF_NP[a.dtype], device=self.device)
        if key is not None:
            self._params[key] = (v, t)
        else:
            self._params[id(a)] = (a, t)
        return t


# ---------------------------------------------------------------------------------------
# Helpers shared by the handlers


def _rb():
    import rocm_backend as rb  # noqa: PLC0415 (the package is initialised by then)

    return rb


def _reshape(v, shape):
    shape = tuple(int(d) for d in shape)
    if _is_const(v):
        return v.reshape(shape)
    if tuple(v.shape) == shape:
        return v
    return v.reshape(shape)


def _permute(v, perm):
    if _is_const(v):
        return _contig(np.transpose(v, perm))
    if list(perm) == list(range(len(perm))):
        return v
    return _rb().permute(v, list(perm))


def _float_tensor(n, v, what):
    if not _is_const(v) and v.dtype not in ("f32", "f16", "bf16"):
        n.fail(f"{what} of dtype {v.dtype}: only float tensors are supported at run time")
    return v


def _spatial_pads(n, in_spatial, kernel, strides, dilations):
    """(before, after) pads from auto_pad / pads, per spatial dimension."""
    nd = len(in_spatial)
    auto = n.attr("auto_pad", "NOTSET")
    if auto == "NOTSET":
        pads = n.ints("pads", [0] * (2 * nd))
        if len(pads) != 2 * nd:
            n.bad_attr("pads", f"has {len(pads)} values; {2 * nd} expected")
        if any(p < 0 for p in pads):
            n.bad_attr("pads", "is negative")
        return pads[:nd], pads[nd:]
    if auto == "VALID":
        return [0] * nd, [0] * nd
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        n.bad_attr("auto_pad")
    before, after = [], []
    for i in range(nd):
        out = -(-in_spatial[i] // strides[i])
        total = max(0, (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in_spatial[i])
        small = total // 2
        if auto == "SAME_UPPER":
            before.append(small)
            after.append(total - small)
        else:
            before.append(total - small)
            after.append(small)
    return before, after


def _check_no_extra_outputs(n, keep=1):
    for i in range(keep, len(n.outputs)):
        if n.outputs[i]:
            n.fail(f"output {i} ('{n.outputs[i]}') is not supported (only the first "
                   f"{keep} output{'s' if keep > 1 else ''})")


# ---------------------------------------------------------------------------------------
# Handlers: one per operator; each returns the list of its output values.

_HANDLERS = {}
# attributes each operator accepts (anything else fails at load)
_ATTRS = {}


def _op(names, attrs=(), since=MIN_OPSET):
    def deco(f):
        for name in names.split():
            _HANDLERS[name] = (f, since)
            _ATTRS[name] = set(attrs)
        return f

    return deco


def _pool_kernel(n, nd):
    ks = n.ints("kernel_shape")
    if ks is None or len(ks) != nd:
        n.fail(f"attribute kernel_shape={ks!r} must give {nd} extents", "kernel_shape")
    return ks


@_op("Conv", ("auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"))
def _conv(n):
    x, w, b = n.inp(0), n.inp(1), n.inp(2)
    x = n.tensor(x)
    nd = len(w.shape) - 2
    if nd < 1 or nd > 3:
        n.fail(f"a {len(w.shape)}-D weight is not supported (1 to 3 spatial dimensions)")
    ks = n.ints("kernel_shape")
    if ks is not None and list(ks) != list(w.shape[2:]):
        n.bad_attr("kernel_shape", f"differs from the weight's spatial shape {list(w.shape[2:])}")
    strides = n.ints("strides", [1] * nd)
    dil = n.ints("dilations", [1] * nd)
    before, after = _spatial_pads(n, x.shape[2:], list(w.shape[2:]), strides, dil)
    rb = _rb()
    y = rb.conv(x, n.tensor(w, x), None if b is None else n.tensor(b, x), strides,
                [(p, q) for p, q in zip(before, after)], dil, int(n.attr("group", 1)))
    return [y]


@_op("ConvTranspose", ("auto_pad", "dilations", "group", "kernel_shape", "output_padding",
                       "output_shape", "pads", "strides"))
def _conv_transpose(n):
    x, w, b = n.tensor(n.inp(0)), n.inp(1), n.inp(2)
    nd = len(w.shape) - 2
    if nd < 1 or nd > 3:
        n.fail(f"a {len(w.shape)}-D weight is not supported")
    k = list(w.shape[2:])
    ks = n.ints("kernel_shape")
    if ks is not None and list(ks) != k:
        n.bad_attr("kernel_shape", f"differs from the weight's spatial shape {k}")
    s = n.ints("strides", [1] * nd)
    d = n.ints("dilations", [1] * nd)
    op = n.ints("output_padding", [0] * nd)
    ins = list(x.shape[2:])
    full = [s[i] * (ins[i] - 1) + (k[i] - 1) * d[i] + 1 for i in range(nd)]
    auto = n.attr("auto_pad", "NOTSET")
    out_shape = n.ints("output_shape")
    if out_shape is not None or auto in ("SAME_UPPER", "SAME_LOWER"):
        if out_shape is None:
            out_shape = [ins[i] * s[i] for i in range(nd)]
            attr = "auto_pad"
        else:
            out_shape = out_shape[-nd:]
            attr = "output_shape"
        total = [full[i] + op[i] - out_shape[i] for i in range(nd)]
        if any(t < 0 for t in total):
            n.bad_attr(attr, "asks for an output larger than the full transposed convolution", True)
        if any(t % 2 for t in total):
            # The spec and ONNX Runtime's versions disagree on which side gets the odd pad.
            n.bad_attr(attr, "gives an odd total padding (where its extra element goes differs "
                             "between ONNX versions and runtimes)", True)
        before = [t // 2 for t in total]
        after = [t - t // 2 for t in total]
    elif auto in ("NOTSET", "VALID"):
        if auto == "VALID":
            before, after = [0] * nd, [0] * nd
        else:
            pads = n.ints("pads", [0] * (2 * nd))
            if len(pads) != 2 * nd or any(p < 0 for p in pads):
                n.bad_attr("pads")
            before, after = pads[:nd], pads[nd:]
    else:
        n.bad_attr("auto_pad")
    if any(op[i] >= max(s[i], d[i]) for i in range(nd)):
        n.bad_attr("output_padding", "must be smaller than the stride or the dilation")
    # The library's padding is symmetric: pad by min(before, after), then crop the rest.
    p = [min(before[i], after[i]) for i in range(nd)]
    q = [max(0, op[i] - (after[i] - p[i])) for i in range(nd)]
    if any(q[i] >= max(s[i], d[i]) for i in range(nd)):
        n.bad_attr("pads", "cannot be expressed with symmetric padding", True)
    rb = _rb()
    y = rb.conv_transpose(x, n.tensor(w, x), None if b is None else n.tensor(b, x), s, p, q,
                          int(n.attr("group", 1)), d)
    want = [full[i] + op[i] - before[i] - after[i] for i in range(nd)]
    for i in range(nd):
        start = before[i] - p[i]
        if start != 0 or y.shape[2 + i] != want[i]:
            y = rb.slice(y, 2 + i, start, start + want[i], 1)
    return [y]


def _t2(v):
    return _permute(v, [1, 0])


@_op("Gemm", ("alpha", "beta", "transA", "transB"))
def _gemm(n):
    a, b, c = n.inp(0), n.inp(1), n.inp(2)
    alpha, beta = float(n.attr("alpha", 1.0)), float(n.attr("beta", 1.0))
    if n.attr("transA", 0):
        a = _t2(a)
    trans_b = bool(n.attr("transB", 0))
    rb = _rb()
    if _is_const(a) and _is_const(b) and (c is None or _is_const(c)):
        y = alpha * (a.astype(np.float32) @ (b.T if trans_b else b).astype(np.float32))
        if c is not None and beta != 0:
            y = y + beta * c.astype(np.float32)
        return [y.astype(a.dtype)]
    a = n.tensor(a, b if isinstance(b, Tensor) else None)
    # linear wants W as (N, K)
    if _is_const(b):
        wt = b if trans_b else b.T
        if alpha != 1.0:
            wt = (wt.astype(np.float64) * alpha).astype(b.dtype)
            alpha = 1.0
        w = n.tensor(_contig(wt), a)
    else:
        w = b if trans_b else rb.permute(b, [1, 0])
    N = w.shape[0]
    bias, late = None, None
    if c is not None and beta != 0.0:
        if _is_const(c):
            cb = c if beta == 1.0 else (c.astype(np.float64) * beta).astype(c.dtype)
            if alpha == 1.0 and cb.shape in ((N,), (1, N)):
                bias = n.tensor(_contig(cb.reshape(N)), a)
            else:
                late = n.tensor(cb, a)
        else:
            late = c if beta == 1.0 else rb.mul(c, beta)
    y = rb.linear(a, w, bias)
    if alpha != 1.0:
        y = rb.mul(y, alpha)
    if late is not None:
        y = rb.add(y, late)
    return [y]


@_op("MatMul")
def _matmul(n):
    a, b = n.inp(0), n.inp(1)
    if _is_const(a) and _is_const(b):
        return [np.matmul(a, b)]
    like = a if isinstance(a, Tensor) else b
    _float_tensor(n, like, "MatMul")
    return [_rb().matmul(n.tensor(a, like), n.tensor(b, like))]


@_op("BatchNormalization", ("epsilon", "momentum", "spatial", "training_mode", "is_test"))
def _batch_norm(n):
    if n.attr("training_mode", 0):
        n.bad_attr("training_mode", "is not supported (inference only)")
    if n.attr("spatial", 1) != 1:
        n.bad_attr("spatial", "is not supported (only spatial=1)")
    _check_no_extra_outputs(n)
    x = n.tensor(n.inp(0))
    scale, bias, mean, var = (n.tensor(n.inp(i), x) for i in range(1, 5))
    eps = float(n.attr("epsilon", 1e-5))
    return [_rb().batch_norm(x, mean, var, scale, bias, False, 0.1, eps)]


def _unary(rb_name, np_fn=None):
    def f(n):
        x = n.inp(0)
        if _is_const(x) and np_fn is not None:
            return [np_fn(x).astype(x.dtype)]
        x = _float_tensor(n, n.tensor(x), n.op)
        return [getattr(_rb(), rb_name)(x)]

    return f


for _name, _rbn, _npf in (
    ("Relu", "relu", lambda x: np.maximum(x, 0)),
    ("Sigmoid", "sigmoid", None),
    ("Tanh", "tanh", np.tanh),
    ("Neg", "neg", np.negative),
    ("Abs", "abs", np.abs),
    ("Sqrt", "sqrt", np.sqrt),
    ("Exp", "exp", np.exp),
    ("Log", "log", np.log),
    ("Sin", "sin", np.sin),
    ("Cos", "cos", np.cos),
):
    _op(_name)(_unary(_rbn, _npf))
_op("HardSwish", since=14)(_unary("hardswish"))
for _name, _rbn, _npf, _since in (
    ("Softsign", "softsign", lambda x: x / (1 + np.abs(x)), 1),
    ("Mish", "mish", None, 18),
    ("Erf", "erf", None, 1),
    ("Sign", "sign", np.sign, 9),
    ("Floor", "floor", np.floor, 1),
    ("Ceil", "ceil", np.ceil, 1),
    ("Round", "round", np.round, 11),  # half to even, as numpy
    ("Reciprocal", "reciprocal", np.reciprocal, 1),
):
    _op(_name, since=max(_since, MIN_OPSET))(_unary(_rbn, _npf))


@_op("PRelu")
def _prelu(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "PRelu")
    slope = n.inp(1)
    rb = _rb()
    nd = len(x.shape)
    if _is_const(slope):
        s = np.asarray(slope)
        # unidirectional broadcast of slope to x: one value, or one per channel (dimension
        # 1) as [C, 1, ..., 1] (torch.onnx.export's form; [C] for a 2-D x)
        if s.size == 1:
            return [rb.prelu(x, n.tensor(s.reshape(1), x))]
        if nd >= 2 and s.shape == (x.shape[1],) + (1,) * (nd - 2):
            return [rb.prelu(x, n.tensor(s.reshape(-1), x))]
        # a [C] slope that cannot broadcast from the last dimension: old PyTorch exports
        # (onnx's pytorch-converted PReLU tests) mean one slope per channel
        if nd >= 2 and s.shape == (x.shape[1],) and x.shape[-1] != s.size:
            return [rb.prelu(x, n.tensor(s, x))]
    # any other broadcastable slope: x > 0 ? x : slope * x
    st = n.tensor(slope, x)
    return [rb.where(rb.gt(x, n.tensor(np.zeros((), np.float32), x)), x, rb.mul(x, st))]


@_op("Softplus")
def _softplus(n):
    # ONNX's log(exp(x) + 1); torch's threshold 20 returns x where log1p(exp(x)) == x in f32.
    return [_rb().softplus(_float_tensor(n, n.tensor(n.inp(0)), "Softplus"), 1.0, 20.0)]


@_op("Elu", ("alpha",))
def _elu(n):
    return [_rb().elu(_float_tensor(n, n.tensor(n.inp(0)), "Elu"), float(n.attr("alpha", 1.0)))]


@_op("Celu", ("alpha",), since=12)
def _celu(n):
    alpha = float(n.attr("alpha", 1.0))
    if alpha == 0.0:
        n.bad_attr("alpha", "must not be 0")
    return [_rb().celu(_float_tensor(n, n.tensor(n.inp(0)), "Celu"), alpha)]


# ONNX's Selu defaults: torch's constants rounded to f32.
_SELU_ALPHA, _SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


@_op("Selu", ("alpha", "gamma"))
def _selu(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "Selu")
    alpha, gamma = float(n.attr("alpha", _SELU_ALPHA)), float(n.attr("gamma", _SELU_GAMMA))
    rb = _rb()
    if abs(alpha - _SELU_ALPHA) <= 1e-7 and abs(gamma - _SELU_GAMMA) <= 1e-7:
        return [rb.selu(x)]
    # other constants: gamma * elu(x, alpha)
    return [rb.mul(rb.elu(x, alpha), gamma)]


@_op("HardSigmoid", ("alpha", "beta"))
def _hard_sigmoid(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "HardSigmoid")
    alpha, beta = float(n.attr("alpha", 0.2)), float(n.attr("beta", 0.5))
    rb = _rb()
    if abs(alpha - 1.0 / 6.0) <= 1e-7 and beta == 0.5:
        return [rb.hardsigmoid(x)]  # torch's constants
    # ONNX's max(0, min(1, alpha * x + beta)), NaN propagated as clamp does
    return [rb.clamp(rb.add(rb.mul(x, alpha), beta), 0.0, 1.0)]


@_op("Clip", ("min", "max"))
def _clip(n):
    x = n.tensor(n.inp(0))
    _float_tensor(n, x, "Clip")
    top = _FLOAT_MAX.get(x.dtype, math.inf)
    rb = _rb()
    if n.opset < 11:
        lo, hi = float(n.attr("min", -top)), float(n.attr("max", top))
        return [rb.clamp(x, lo, hi)]
    lo, hi = n.inp(1), n.inp(2)
    bounds = []
    for v, default in ((lo, -top), (hi, top)):
        if v is None:
            bounds.append(default)
        elif _is_const(v):
            if v.size != 1:
                n.fail("min/max must be scalars")
            bounds.append(float(v.reshape(())))
        else:
            bounds.append(v)
    if any(isinstance(v, Tensor) for v in bounds):
        lo_t = bounds[0] if isinstance(bounds[0], Tensor) else n.tensor(np.array(bounds[0]), x)
        hi_t = bounds[1] if isinstance(bounds[1], Tensor) else n.tensor(np.array(bounds[1]), x)
        return [rb.clamp(x, lo_t, hi_t)]
    return [rb.clamp(x, bounds[0], bounds[1])]


@_op("Gelu", ("approximate",), since=20)
def _gelu(n):
    approx = n.attr("approximate", "none")
    if approx not in ("none", "tanh"):
        n.bad_attr("approximate")
    return [_rb().gelu(_float_tensor(n, n.tensor(n.inp(0)), "Gelu"), approx)]


@_op("Softmax LogSoftmax", ("axis",))
def _softmax(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), n.op)
    rank = len(x.shape)
    rb = _rb()
    f = rb.softmax if n.op == "Softmax" else rb.log_softmax
    if n.opset >= 13:
        return [f(x, _norm_axis(n.attr("axis", -1), rank))]
    # before opset 13: the input is coerced to 2-D at `axis` (default 1)
    axis = _norm_axis(n.attr("axis", 1), rank)
    if axis == rank - 1:
        return [f(x, -1)]
    shape = x.shape
    rows = int(np.prod(shape[:axis], dtype=np.int64))
    cols = int(np.prod(shape[axis:], dtype=np.int64))
    y = f(_rb_reshape_op(x, (rows, cols)), 1)
    return [y.reshape(shape)]


def _rb_reshape_op(x, shape):
    return x.reshape(tuple(shape))


def _pool_common(n, x, nd):
    ks = _pool_kernel(n, nd)
    strides = n.ints("strides", [1] * nd)
    dil = n.ints("dilations", [1] * nd)
    before, after = _spatial_pads(n, list(x.shape[2:]), ks, strides, dil)
    return ks, strides, dil, before, after


def _pool_out(in_, k, s, d, pb, pe, ceil):
    span = in_ + pb + pe - ((k - 1) * d + 1)
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= in_ + pb:
        out -= 1
    return out


@_op("MaxPool", ("auto_pad", "ceil_mode", "dilations", "kernel_shape", "pads", "storage_order",
                 "strides"))
def _max_pool(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "MaxPool")
    _check_no_extra_outputs(n)
    nd = len(x.shape) - 2
    if not 1 <= nd <= 3:
        n.fail(f"a {len(x.shape)}-D input is not supported")
    ks, strides, dil, before, after = _pool_common(n, x, nd)
    ceil = bool(n.attr("ceil_mode", 0))
    y = _rb().pool(x, "max", ks, strides, [(p, q) for p, q in zip(before, after)], dil, ceil)
    want = [_pool_out(x.shape[2 + i], ks[i], strides[i], dil[i], before[i], after[i], ceil)
            for i in range(nd)]
    if list(y.shape[2:]) != want:
        n.bad_attr("ceil_mode", f"gives {list(y.shape[2:])}, not ONNX's {want}", True)
    return [y]


@_op("AveragePool", ("auto_pad", "ceil_mode", "count_include_pad", "dilations", "kernel_shape",
                     "pads", "strides"))
def _avg_pool(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "AveragePool")
    nd = len(x.shape) - 2
    if not 1 <= nd <= 3:
        n.fail(f"a {len(x.shape)}-D input is not supported")
    ks, strides, dil, before, after = _pool_common(n, x, nd)
    if any(e != 1 for e in dil):
        n.bad_attr("dilations", "is not supported (the library's average pooling has no dilation)")
    ceil = bool(n.attr("ceil_mode", 0))
    incl = bool(n.attr("count_include_pad", 0))
    if ceil and incl:
        floor = [_pool_out(x.shape[2 + i], ks[i], strides[i], 1, before[i], after[i], False)
                 for i in range(nd)]
        up = [_pool_out(x.shape[2 + i], ks[i], strides[i], 1, before[i], after[i], True)
              for i in range(nd)]
        if floor != up:
            # the divisor of a window hanging past the padding differs between runtimes
            n.bad_attr("ceil_mode", "with count_include_pad=1 and a last window past the "
                                    "padding is not supported", True)
    mode = "avg_include_pad" if incl else "avg_exclude_pad"
    y = _rb().pool(x, mode, ks, strides, [(p, q) for p, q in zip(before, after)], 1, ceil)
    want = [_pool_out(x.shape[2 + i], ks[i], strides[i], 1, before[i], after[i], ceil)
            for i in range(nd)]
    if list(y.shape[2:]) != want:
        n.bad_attr("ceil_mode", f"gives {list(y.shape[2:])}, not ONNX's {want}", True)
    return [y]


@_op("GlobalAveragePool GlobalMaxPool")
def _global_pool(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), n.op)
    dims = list(range(2, len(x.shape)))
    rb = _rb()
    return [(rb.mean if n.op == "GlobalAveragePool" else rb.max)(x, dims, True)]


@_op("Flatten", ("axis",))
def _flatten(n):
    x = n.inp(0)
    shape = _shape(x)
    rank = len(shape)
    axis = int(n.attr("axis", 1))
    if not -rank <= axis <= rank:
        n.bad_attr("axis", f"is out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    rows = int(np.prod(shape[:axis], dtype=np.int64))
    return [_reshape(x, (rows, int(np.prod(shape[axis:], dtype=np.int64))))]


@_op("Reshape", ("allowzero",))
def _reshape_op(n):
    x, target = n.inp(0), n.const(1, "shape")
    shape = [int(d) for d in target.reshape(-1)]
    allowzero = n.attr("allowzero", 0)
    src = _shape(x)
    out = []
    for i, d in enumerate(shape):
        if d == 0 and not allowzero:
            if i >= len(src):
                n.shape_fail(f"shape {shape}: a 0 at {i} copies a dimension the input does not have")
            out.append(src[i])
        else:
            out.append(d)
    if out.count(-1) > 1:
        n.fail(f"shape {shape} has more than one -1")
    if -1 in out:
        known = int(np.prod([d for d in out if d != -1], dtype=np.int64))
        total = int(np.prod(src, dtype=np.int64))
        if known == 0 or total % known:
            n.shape_fail(f"shape {shape} cannot hold the {total} elements of {list(src)}")
        out[out.index(-1)] = total // known
    if int(np.prod(out, dtype=np.int64)) != int(np.prod(src, dtype=np.int64)):
        n.shape_fail(f"shape {shape} ({out}) does not match the input's {list(src)}")
    return [_reshape(x, out)]


@_op("Transpose", ("perm",))
def _transpose(n):
    x = n.inp(0)
    rank = len(_shape(x))
    perm = n.ints("perm", list(range(rank))[::-1])
    if sorted(perm) != list(range(rank)):
        n.bad_attr("perm", f"is not a permutation of the {rank} axes")
    return [_permute(x, perm)]


@_op("Concat", ("axis",))
def _concat(n):
    vals = [n.inp(i) for i in range(len(n.inputs)) if n.has(i)]
    rank = len(_shape(vals[0]))
    axis = _norm_axis(n.attr("axis"), rank)
    if all(_is_const(v) for v in vals):
        return [np.concatenate(vals, axis=axis)]
    like = next(v for v in vals if isinstance(v, Tensor))
    ts = [n.tensor(v, like) for v in vals]
    if len(ts) == 1:
        return [ts[0]]
    return [_rb().concat(ts, axis)]


def _slice_bounds(dim, start, end, step):
    """ONNX's clamping: concrete (start, end) where end None means 'past the front'."""
    if start < 0:
        start += dim
    if end < 0:
        end += dim
    if step > 0:
        start = min(max(start, 0), dim)
        end = min(max(end, 0), dim)
        return start, end
    start = min(max(start, 0), dim - 1)
    end = min(max(end, -1), dim - 1)
    return start, (None if end < 0 else end)


@_op("Slice", ("starts", "ends", "axes"))
def _slice(n):
    x = n.inp(0)
    shape = _shape(x)
    rank = len(shape)
    if n.opset < 10:
        starts, ends = n.ints("starts"), n.ints("ends")
        axes = n.ints("axes", list(range(len(starts))))
        steps = [1] * len(starts)
    else:
        for a in ("starts", "ends", "axes"):
            if a in n.attrs:
                n.bad_attr(a, f"is an input from opset 10 (this model is opset {n.opset})")
        starts = [int(v) for v in n.const(1, "starts").reshape(-1)]
        ends = [int(v) for v in n.const(2, "ends").reshape(-1)]
        ax = n.const(3, "axes")
        axes = list(range(len(starts))) if ax is None else [int(v) for v in ax.reshape(-1)]
        st = n.const(4, "steps")
        steps = [1] * len(starts) if st is None else [int(v) for v in st.reshape(-1)]
    if not len(starts) == len(ends) == len(axes) == len(steps):
        n.fail("starts, ends, axes and steps differ in length")
    axes = [_norm_axis(a, rank, "axes") for a in axes]
    if len(set(axes)) != len(axes):
        n.fail(f"axes {axes} repeat")
    rb = _rb()
    for a, s, e, k in zip(axes, starts, ends, steps):
        if k == 0:
            n.fail("a step of 0")
        dim = shape[a]
        s, e = _slice_bounds(dim, s, e, k)
        if _is_const(x):
            idx = [slice(None)] * rank
            idx[a] = slice(s, e, k)
            x = _contig(x[tuple(idx)])
        elif not (k == 1 and s == 0 and e == dim):
            x = rb.slice(x, a, s, e, k)
    return [x]


@_op("Gather", ("axis",))
def _gather(n):
    data, idx = n.inp(0), n.inp(1)
    rank = len(_shape(data))
    axis = _norm_axis(n.attr("axis", 0), rank)
    if _is_const(idx):
        dim = _shape(data)[axis]
        if idx.size and (idx.min() < -dim or idx.max() >= dim):
            n.shape_fail(f"indices out of range for axis {axis} of extent {dim}")
    if _is_const(data) and _is_const(idx):
        return [np.take(data, idx.astype(np.int64), axis=axis)]
    if _is_const(idx):
        idx_t = n.tensor(_contig(idx.astype(np.int64)))
    else:
        idx_t = idx if idx.dtype == "i64" else _rb().cast(idx, "i64")
    return [_rb().take(n.tensor(data), idx_t, axis)]


def _np_div(a, b):
    if a.dtype.kind in "iu":
        q = np.abs(a) // np.abs(b)
        return (q * np.sign(a) * np.sign(b)).astype(np.result_type(a, b))
    return a / b


_BINARY = {
    "Add": ("add", np.add),
    "Sub": ("sub", np.subtract),
    "Mul": ("mul", np.multiply),
    "Div": ("div", _np_div),
    "Pow": ("pow", lambda a, b: np.power(a, b).astype(a.dtype)),
    "Equal": ("eq", np.equal),
    "Less": ("lt", np.less),
    "Greater": ("gt", np.greater),
    "LessOrEqual": ("le", np.less_equal),
    "GreaterOrEqual": ("ge", np.greater_equal),
}


@_op(" ".join(_BINARY))
def _binary(n):
    if n.op in ("LessOrEqual", "GreaterOrEqual") and n.opset < 12:
        n.fail(f"{n.op} does not exist before opset 12")
    a, b = n.inp(0), n.inp(1)
    rb_name, np_fn = _BINARY[n.op]
    if _is_const(a) and _is_const(b):
        return [np.asarray(np_fn(a, b))]
    like = a if isinstance(a, Tensor) else b
    if like.dtype not in ("f32", "f16", "bf16") and n.op in ("Div", "Pow"):
        n.fail(f"{n.op} of {like.dtype} tensors at run time is not supported (integer "
               f"division/power rounding)")
    if n.op == "Pow":
        # the exponent may have another type (opset 12+): compute in the base's type
        if _is_const(b):
            b = b.astype(_NP_OF_RB[like.dtype]) if a is like else b
        elif a is like and b.dtype != like.dtype:
            b = _rb().cast(b, like.dtype)
    return [getattr(_rb(), rb_name)(n.tensor(a, like), n.tensor(b, like))]


@_op("Where")
def _where(n):
    c, a, b = n.inp(0), n.inp(1), n.inp(2)
    if _is_const(c) and _is_const(a) and _is_const(b):
        return [np.where(c, a, b)]
    like = a if isinstance(a, Tensor) else (b if isinstance(b, Tensor) else None)
    cond = n.tensor(c)
    return [_rb().where(cond, n.tensor(a, like), n.tensor(b, like))]


_REDUCE = {
    "ReduceMean": ("mean", np.mean),
    "ReduceSum": ("sum", np.sum),
    "ReduceMax": ("max", np.max),
    "ReduceMin": ("min", np.min),
    "ReduceProd": ("prod", np.prod),
}


@_op(" ".join(_REDUCE), ("axes", "keepdims", "noop_with_empty_axes"))
def _reduce(n):
    x = n.inp(0)
    rank = len(_shape(x))
    axes_as_input = n.opset >= (13 if n.op == "ReduceSum" else 18)
    if axes_as_input:
        if "axes" in n.attrs:
            n.bad_attr("axes", f"is an input from opset {13 if n.op == 'ReduceSum' else 18}")
        a = n.const(1, "axes")
        axes = None if a is None else [int(v) for v in a.reshape(-1)]
        noop = bool(n.attr("noop_with_empty_axes", 0))
    else:
        if "noop_with_empty_axes" in n.attrs:
            n.bad_attr("noop_with_empty_axes", f"does not exist at opset {n.opset}")
        axes = n.ints("axes")
        noop = False
    if not axes:
        if noop:
            return [x]
        axes = list(range(rank))
    axes = sorted({_norm_axis(a, rank, "axes") for a in axes})
    keep = bool(n.attr("keepdims", 1))
    rb_name, np_fn = _REDUCE[n.op]
    if _is_const(x):
        return [np.asarray(np_fn(x, axis=tuple(axes), keepdims=keep)).astype(x.dtype)]
    _float_tensor(n, x, n.op)
    if rank == 0:
        return [x]
    return [getattr(_rb(), rb_name)(x, axes, keep)]


@_op("LayerNormalization", ("axis", "epsilon", "stash_type"), since=17)
def _layer_norm(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "LayerNormalization")
    _check_no_extra_outputs(n)
    if n.attr("stash_type", 1) != 1:
        n.bad_attr("stash_type", "is not supported (only 1: float statistics)")
    rank = len(x.shape)
    axis = _norm_axis(n.attr("axis", -1), rank)
    norm = list(x.shape[axis:])
    params = []
    for i in (1, 2):
        v = n.inp(i)
        if v is None:
            params.append(None)
            continue
        if tuple(v.shape) != tuple(norm):
            if int(np.prod(v.shape, dtype=np.int64)) != int(np.prod(norm, dtype=np.int64)):
                n.shape_fail(f"input {i} of shape {list(v.shape)} is not the normalized shape {norm}")
            v = _reshape(v, norm)
        params.append(n.tensor(v, x))
    return [_rb().layer_norm(x, norm, params[0], params[1], float(n.attr("epsilon", 1e-5)))]


@_op("Dropout", ("ratio", "seed", "is_test"))
def _dropout(n):
    if n.opset >= 12:
        mode = n.const(2, "training_mode")
        if mode is not None and bool(mode.reshape(())):
            n.fail("training_mode=True is not supported (inference only)")
    x = n.inp(0)
    outs = [x]
    if n.wants_output(1):
        outs.append(np.ones(_shape(x), dtype=np.bool_))
    return outs


@_op("Identity")
def _identity(n):
    return [n.inp(0)]


@_op("Constant", ("value", "value_float", "value_floats", "value_int", "value_ints",
                  "sparse_value", "value_string", "value_strings"))
def _constant(n):
    onnx = _onnx()
    if "value" in n.attrs:
        return [onnx.numpy_helper.to_array(n.attrs["value"])]
    for k, dt in (("value_float", np.float32), ("value_floats", np.float32),
                  ("value_int", np.int64), ("value_ints", np.int64)):
        if k in n.attrs:
            return [np.array(n.attrs[k], dtype=dt)]
    k = next(iter(n.attrs), None)
    n.fail(f"attribute {k} is not supported", k)


@_op("ConstantOfShape", ("value",))
def _constant_of_shape(n):
    shape = [int(d) for d in n.const(0, "shape").reshape(-1)]
    if "value" in n.attrs:
        v = _onnx().numpy_helper.to_array(n.attrs["value"]).reshape(-1)
        if v.size != 1:
            n.bad_attr("value", "must hold one element")
        return [np.full(shape, v[0], dtype=v.dtype)]
    return [np.zeros(shape, dtype=np.float32)]


@_op("Shape", ("start", "end"))
def _shape_op(n):
    s = np.array(_shape(n.inp(0)), dtype=np.int64)
    if n.opset < 15 and ("start" in n.attrs or "end" in n.attrs):
        n.fail("start/end do not exist before opset 15", "start")
    r = len(s)
    start, end = int(n.attr("start", 0)), n.attr("end")
    start = min(max(start + r if start < 0 else start, 0), r)
    end = r if end is None else min(max(int(end) + r if int(end) < 0 else int(end), 0), r)
    return [s[start:end]]


@_op("Size")
def _size(n):
    return [np.array(int(np.prod(_shape(n.inp(0)), dtype=np.int64)), dtype=np.int64)]


def _axes_arg(n, since):
    if n.opset >= since:
        if "axes" in n.attrs:
            n.bad_attr("axes", f"is an input from opset {since}")
        a = n.const(1, "axes")
        return None if a is None else [int(v) for v in a.reshape(-1)]
    return n.ints("axes")


@_op("Unsqueeze", ("axes",))
def _unsqueeze(n):
    x = n.inp(0)
    axes = _axes_arg(n, 13)
    if not axes:
        n.fail("axes are required")
    shape = list(_shape(x))
    out_rank = len(shape) + len(axes)
    axes = sorted(_norm_axis(a, out_rank, "axes") for a in axes)
    for a in axes:
        shape.insert(a, 1)
    return [_reshape(x, shape)]


@_op("Squeeze", ("axes",))
def _squeeze(n):
    x = n.inp(0)
    shape = list(_shape(x))
    axes = _axes_arg(n, 13)
    if axes is None:
        axes = [i for i, d in enumerate(shape) if d == 1]
    axes = {_norm_axis(a, len(shape), "axes") for a in axes}
    if any(shape[a] != 1 for a in axes):
        n.shape_fail(f"cannot squeeze axes {sorted(axes)} of shape {shape}")
    return [_reshape(x, [d for i, d in enumerate(shape) if i not in axes])]


@_op("Cast", ("to", "saturate"))
def _cast(n):
    to = int(n.attr("to"))
    x = n.inp(0)
    if _is_const(x):
        if to not in _ONNX_NP:
            n.bad_attr("to", f"({_ONNX_NAMES.get(to, to)}) is not supported")
        return [x.astype(_ONNX_NP[to])]
    if to not in _RB_OF_ONNX:
        n.bad_attr("to", f"({_ONNX_NAMES.get(to, to)}) has no library dtype")
    target = _RB_OF_ONNX[to]
    if target == x.dtype:
        return [x]
    if x.dtype in ("f32", "f16", "bf16", "f64") and target in ("i8", "u8", "i16", "i32", "i64"):
        # the library's float -> integer conversion is not pinned to truncation here
        n.bad_attr("to", f"({_ONNX_NAMES[to]}) from a {x.dtype} tensor at run time is not supported")
    return [_rb().cast(x, target)]


@_op("Range")
def _range(n):
    """ONNX Range. Bounds known while recording (constants, or computed from shapes and
    constants: dynamic batch sizes included) are folded into a constant here, as
    `rb.arange` would compute it; bounds that depend on the graph's data would make the
    result's length depend on the data, which a recorded graph cannot hold (the library's
    arange op takes its bounds at recording), so they fail at load, naming the node."""
    vals = [n.inp(i) for i in range(3)]
    if any(v is None for v in vals):
        n.fail("start, limit and delta are required")
    if not all(_is_const(v) for v in vals):
        n.fail("start, limit and delta depend on the graph's data: the result's length "
               "would too, which a recorded graph cannot hold (bounds computed from shapes "
               "and constants are supported)")
    s, lim, d = vals
    if float(np.asarray(d).reshape(())) == 0:
        n.fail("delta is 0")
    return [np.arange(s.reshape(()), lim.reshape(()), d.reshape(()), dtype=s.dtype)]


@_op("Expand")
def _expand(n):
    x, shape = n.inp(0), n.const(1, "shape")
    out_shape = np.broadcast_shapes(_shape(x), tuple(int(d) for d in shape.reshape(-1)))
    if _is_const(x):
        return [_contig(np.broadcast_to(x, out_shape))]
    if tuple(x.shape) == out_shape:
        return [x]
    return [_rb().expand(x, list(out_shape))]


@_op("Max Min Sum Mean")
def _variadic(n):
    vals = [n.inp(i) for i in range(len(n.inputs)) if n.has(i)]
    np_fn = {"Max": np.maximum, "Min": np.minimum, "Sum": np.add, "Mean": np.add}[n.op]
    if all(_is_const(v) for v in vals):
        acc = vals[0]
        for v in vals[1:]:
            acc = np_fn(acc, v)
        if n.op == "Mean":
            acc = (acc / len(vals)).astype(vals[0].dtype)
        return [np.asarray(acc)]
    rb = _rb()
    like = next(v for v in vals if isinstance(v, Tensor))
    if n.op == "Mean" or like.dtype == "bool":
        if like.dtype not in ("f32", "f16", "bf16", "f64"):
            n.fail(f"{n.op} of dtype {like.dtype}: only floating tensors are supported at run time")
    fn = {"Max": rb.maximum, "Min": rb.minimum, "Sum": rb.add, "Mean": rb.add}[n.op]
    acc = n.tensor(vals[0], like)
    for v in vals[1:]:
        acc = fn(acc, n.tensor(v, like))
    if n.op == "Mean":
        acc = rb.div(acc, n.tensor(np.array(len(vals)), like))
    return [acc]


@_op("LeakyRelu", ("alpha",))
def _leaky_relu(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "LeakyRelu")
    alpha = float(n.attr("alpha", 0.01))
    return [_rb().leaky_relu(x, alpha)]


@_op("Pad", ("mode", "pads", "value"))
def _pad(n):
    x = n.tensor(n.inp(0))
    rank = len(x.shape)
    mode = n.attr("mode", "constant")
    modes = {"constant": "constant", "reflect": "reflect", "edge": "replicate"}
    if mode not in modes:
        n.bad_attr("mode", "is not supported (constant, reflect, edge)")
    if n.opset < 11:
        pads, value = n.ints("pads"), float(n.attr("value", 0.0))
        if pads is None:
            n.fail("attribute pads is required", "pads")
        axes = list(range(rank))
    else:
        for a in ("pads", "value"):
            if a in n.attrs:
                n.bad_attr(a, f"is an input from opset 11 (this model is opset {n.opset})")
        pads = n.const(1, "pads")
        if pads is None:
            n.fail("input pads is required")
        pads = [int(p) for p in pads.reshape(-1)]
        cv = n.const(2, "constant_value") if n.has(2) else None
        value = 0.0 if cv is None or cv.size == 0 else float(cv.reshape(-1)[0])
        axes = list(range(rank))
        if n.has(3):
            ax = n.const(3, "axes")
            axes = [_norm_axis(int(a), rank) for a in ax.reshape(-1)]
    if len(pads) != 2 * len(axes):
        n.fail(f"{len(pads)} pads for {len(axes)} axes (expected begins then ends)")
    begin = dict(zip(axes, pads[:len(axes)]))
    end = dict(zip(axes, pads[len(axes):]))
    first = min(axes) if axes else rank
    torch_pads = []
    for d in range(rank - 1, first - 1, -1):
        torch_pads += [begin.get(d, 0), end.get(d, 0)]
    if mode != "constant" and any(p < 0 for p in torch_pads):
        n.fail(f"negative pads need mode constant (mode {mode})", "mode")
    return [_rb().pad(x, torch_pads, modes[mode], value)]


@_op("LRN", ("alpha", "beta", "bias", "size"))
def _lrn(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "LRN")
    size = n.attr("size")
    if size is None or int(size) < 1:
        n.fail("attribute size (at least 1) is required", "size")
    size = int(size)
    if size % 2 == 0:
        # ONNX's window for an even size, [c - (size-1)//2, c + size//2], is PyTorch's mirrored
        n.bad_attr("size", "is even (the library has PyTorch's window, which differs for even sizes)")
    return [_rb().local_response_norm(x, size, float(n.attr("alpha", 1e-4)),
                                      float(n.attr("beta", 0.75)), float(n.attr("bias", 1.0)))]


@_op("MaxUnpool", ("kernel_shape", "pads", "strides"), since=9)
def _max_unpool(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "MaxUnpool")
    nd = len(x.shape) - 2
    if nd < 1 or nd > 3:
        n.fail(f"a {len(x.shape)}-D input is not supported (1 to 3 spatial dimensions)")
    ks = _pool_kernel(n, nd)
    st = n.ints("strides", [1] * nd)
    pads = n.ints("pads", [0] * (2 * nd))
    if n.has(2):
        size = [int(v) for v in n.const(2, "output_shape").reshape(-1)][2:]
    else:
        size = [(x.shape[2 + i] - 1) * st[i] - pads[i] - pads[nd + i] + ks[i] for i in range(nd)]
    N, C = x.shape[0], x.shape[1]
    plane = int(np.prod(size, dtype=np.int64))
    # ONNX's indices are flat over the whole tensor: subtract each plane's start
    offs = (np.arange(N * C, dtype=np.int64) * plane).reshape((N, C) + (1,) * nd)
    rb = _rb()
    idx = _index_tensor(n, 1)
    if idx.dtype != "i64":
        idx = rb.cast(idx, "i64")
    idx = rb.sub(idx, n.tensor(offs))
    return [rb.max_unpool(x, idx, size)]


@_op("Resize", ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a",
                "exclude_outside", "extrapolation_value", "antialias", "axes",
                "keep_aspect_ratio_policy"), since=11)
def _resize(n):
    x = n.tensor(n.inp(0))
    nd = len(x.shape) - 2
    if nd < 1 or nd > 3:
        n.fail(f"a {len(x.shape)}-D input is not supported (N, C and 1 to 3 spatial dimensions)")
    for a, ok in (("antialias", 0), ("exclude_outside", 0)):
        if int(n.attr(a, ok)) != ok:
            n.bad_attr(a)
    if n.attr("axes") is not None:
        n.bad_attr("axes", "is not supported (all axes only)")
    if n.attr("keep_aspect_ratio_policy", "stretch") != "stretch":
        n.bad_attr("keep_aspect_ratio_policy")
    mode = n.attr("mode", "nearest")
    ctm = n.attr("coordinate_transformation_mode", "half_pixel")
    if mode == "nearest":
        if ctm != "asymmetric":
            n.bad_attr("coordinate_transformation_mode",
                       "is not supported for nearest (asymmetric, as PyTorch exports it)")
        if n.attr("nearest_mode", "round_prefer_floor") != "floor":
            n.bad_attr("nearest_mode", "is not supported (floor, as PyTorch exports it)")
        rb_mode, align = "nearest", False
    elif mode == "linear":
        if ctm in ("half_pixel", "pytorch_half_pixel"):
            align = False
        elif ctm == "align_corners":
            align = True
        else:
            n.bad_attr("coordinate_transformation_mode",
                       "is not supported for linear (half_pixel, pytorch_half_pixel, align_corners)")
        rb_mode = "linear"
    else:
        n.bad_attr("mode", "is not supported (nearest, linear)")
    sizes = n.const(3, "sizes") if n.has(3) else None
    scales = n.const(2, "scales") if n.has(2) else None
    if sizes is not None and sizes.size:
        size = [int(v) for v in sizes.reshape(-1)]
    elif scales is not None and scales.size:
        sc = [float(v) for v in scales.reshape(-1)]
        if len(sc) != nd + 2 or sc[0] != 1 or sc[1] != 1:
            n.fail(f"scales {sc} must be 1 for N and C")
        size = [int(x.shape[i] * sc[i]) for i in range(nd + 2)]
        if any(abs(x.shape[i] * sc[i] - size[i]) > 1e-6 for i in range(2, nd + 2)):
            n.fail(f"scales {sc} do not give whole extents (the library resizes by size)")
    else:
        n.fail("scales or sizes is required")
    if list(size[:2]) != list(x.shape[:2]):
        n.fail(f"sizes {size} must keep N and C {list(x.shape[:2])}")
    if rb_mode == "linear":
        _float_tensor(n, x, "Resize")
    return [_rb().interpolate(x, size[2:], mode=rb_mode, align_corners=align)]


@_op("Tile")
def _tile(n):
    x = n.tensor(n.inp(0))
    reps = n.const(1, "repeats")
    return [_rb().tile(x, [int(r) for r in reps.reshape(-1)])]


@_op("CumSum", ("exclusive", "reverse"), since=11)
def _cumsum(n):
    x = _float_tensor(n, n.tensor(n.inp(0)), "CumSum")
    axis = n.const(1, "axis")
    return [_rb().cumsum(x, int(axis.reshape(-1)[0]), bool(n.attr("exclusive", 0)),
                         bool(n.attr("reverse", 0)))]


@_op("Trilu", ("upper",), since=14)
def _trilu(n):
    x = n.tensor(n.inp(0))
    k = 0
    if n.has(1):
        k = int(n.const(1, "k").reshape(-1)[0])
    return [_rb().trilu(x, bool(n.attr("upper", 1)), k)]


def _index_tensor(n, i):
    idx = n.inp(i)
    if _is_const(idx):
        return n.tensor(_contig(idx.astype(np.int64)))
    return idx if idx.dtype in ("i32", "i64") else _rb().cast(idx, "i64")


@_op("GatherElements", ("axis",), since=11)
def _gather_elements(n):
    x = n.tensor(n.inp(0))
    axis = _norm_axis(n.attr("axis", 0), len(x.shape))
    return [_rb().gather(x, axis, _index_tensor(n, 1))]


_SCATTER_REDUCTIONS = {"none": ("none", 9), "add": ("add", 16), "mul": ("mul", 16),
                       "max": ("max", 18), "min": ("min", 18)}


@_op("ScatterElements Scatter", ("axis", "reduction"), since=9)
def _scatter_elements(n):
    """ONNX ScatterElements (and its opset 9-10 name Scatter): `rb.scatter` with the
    reduction none, add, mul (opset 16) or max, min (opset 18)."""
    if n.op == "ScatterElements" and n.opset < 11:
        n.fail("ScatterElements needs opset 11 (Scatter before)")
    if n.op == "Scatter" and n.opset >= 11:
        n.fail("Scatter was removed in opset 11 (ScatterElements replaces it)")
    x = n.tensor(n.inp(0))
    red = n.attr("reduction", "none")
    if n.op == "Scatter" and "reduction" in n.attrs:
        n.bad_attr("reduction", "is not an attribute of Scatter")
    if red not in _SCATTER_REDUCTIONS or n.opset < _SCATTER_REDUCTIONS[red][1]:
        n.bad_attr("reduction", "is not supported (none; add and mul from opset 16; max and "
                                "min from opset 18)")
    axis = _norm_axis(n.attr("axis", 0), len(x.shape))
    if red != "none" and x.dtype == "bool":
        n.fail(f"reduction {red} of a bool tensor is not supported")
    return [_rb().scatter(x, axis, _index_tensor(n, 1), n.tensor(n.inp(2), x),
                          _SCATTER_REDUCTIONS[red][0])]


@_op("TopK", ("axis", "k", "largest", "sorted"))
def _topk(n):
    """ONNX TopK: `rb.topk` (k an attribute before opset 10, a constant input from opset 10;
    largest and sorted from opset 11). Values and int64 indices; equal elements come in
    index order, as ONNX asks."""
    x = n.tensor(n.inp(0))
    if n.opset < 10:
        k = n.attr("k")
        if k is None:
            n.fail("attribute k is required before opset 10", "k")
    else:
        if "k" in n.attrs:
            n.bad_attr("k", "is an input from opset 10")
        kv = n.const(1, "k")
        if kv is None:
            n.fail("input k is required")
        k = np.asarray(kv).reshape(-1)[0]
    for a in ("largest", "sorted"):
        if a in n.attrs and n.opset < 11:
            n.bad_attr(a, "is an attribute from opset 11")
    largest, sorted_ = int(n.attr("largest", 1)), int(n.attr("sorted", 1))
    if largest not in (0, 1):
        n.bad_attr("largest", "must be 0 or 1")
    if sorted_ not in (0, 1):
        n.bad_attr("sorted", "must be 0 or 1")
    axis = _norm_axis(n.attr("axis", -1), len(x.shape))
    k = int(k)
    if not 0 <= k <= x.shape[axis]:
        n.shape_fail(f"k={k} is out of range [0, {x.shape[axis]}] for axis {axis}")
    values, indices = _rb().topk(x, k, axis, bool(largest), bool(sorted_))
    return [values, indices]


@_op("OneHot", ("axis",), since=9)
def _one_hot(n):
    idx = _index_tensor(n, 0)
    depth = n.const(1, "depth")
    values = n.const(2, "values")
    if depth is None or values is None or values.size != 2:
        n.fail("depth and values (off, on) are required constants")
    axis = int(n.attr("axis", -1))
    rank = len(idx.shape) + 1
    if not -rank <= axis < rank:
        n.bad_attr("axis", f"is out of range for rank {rank}")
    axis = axis + rank if axis < 0 else axis
    rb = _rb()
    hot = rb.one_hot(idx, int(depth.reshape(-1)[0]))
    off, on = (values.reshape(-1)[0], values.reshape(-1)[1])
    if values.dtype.kind == "f":
        hot = rb.cast(hot, _rb_dtype(values))
        if off != 0 or on != 1:
            hot = rb.add(rb.mul(hot, float(on - off)), float(off))
    elif off != 0 or on != 1:
        n.fail(f"integer values ({off}, {on}) other than (0, 1) are not supported")
    if axis != rank - 1:
        perm = list(range(rank - 1))
        perm.insert(axis, rank - 1)
        hot = rb.permute(hot, perm)
    return [hot]


SUPPORTED_OPS = sorted(k for k in _HANDLERS if not k.startswith("_"))

# Operators that exported models often hold and the library cannot compute yet (issue 12,
# item 3): named in the load error so the reason is plain.
_MISSING = {
    "Upsample": "not mapped (Resize is)",
    "ScatterND": "not mapped (ScatterElements is; ScatterND's index tuples are not)",
    "InstanceNormalization": "not mapped (group_norm with one channel per group would do; "
                             "not implemented here)",
    "Hardmax": "the library has no hardmax op",
    "ArgMax": "not mapped",
    "ArgMin": "not mapped",
    "If": "control flow (subgraphs) is not supported",
    "Loop": "control flow (subgraphs) is not supported",
    "Scan": "control flow (subgraphs) is not supported",
}


@_op("_GeluErf")
def _gelu_erf(n):
    """The exact GELU that exporters write out before opset 20 (see _fuse_gelu_erf)."""
    return [_rb().gelu(_float_tensor(n, n.tensor(n.inp(0)), "Gelu"), "none")]


def _fuse_gelu_erf(nodes, inits, graph_outputs, onnx):
    """Rewrites the exact GELU as exporters write it before opset 20 --
    x * 0.5 * (1 + Erf(x / sqrt(2))), as Div (or Mul by 1/sqrt(2)), Erf, Add 1, Mul x, Mul 0.5
    in either order -- into one internal _GeluErf node (one gelu kernel instead of five ops).
    Only exact matches are rewritten: each intermediate used once and not a graph output, the
    constants sqrt(2) (to 1e-6), 1 and 0.5. An Erf anywhere else runs as rb.erf."""
    if not any(nd.op_type == "Erf" for _, nd in nodes):
        return nodes
    consts = dict(inits)
    for _, nd in nodes:
        if nd.op_type == "Constant" and len(nd.attribute) == 1 and nd.attribute[0].name == "value":
            consts[nd.output[0]] = onnx.numpy_helper.to_array(nd.attribute[0].t)
    producer, uses = {}, {}
    for k, (_, nd) in enumerate(nodes):
        for o in nd.output:
            producer[o] = k
        for i in nd.input:
            uses.setdefault(i, []).append(k)
    for o in graph_outputs:
        uses.setdefault(o, []).extend([None, None])

    def scalar(name, value, rel=0.0):
        v = consts.get(name)
        if v is None or v.size != 1 or v.dtype.kind != "f":
            return False
        x = float(v.reshape(-1)[0])
        return x == value if rel == 0 else abs(x - value) <= rel * abs(value)

    def other(nd, name):
        """The input of binary node `nd` that is not `name` (None if `name` is not one)."""
        ins = list(nd.input)
        if len(ins) != 2 or name not in ins:
            return None
        return ins[1] if ins[0] == name else ins[0]

    def only_use(name):
        u = uses.get(name, [])
        return nodes[u[0]][1] if len(u) == 1 and u[0] is not None else None

    drop, insert = set(), {}
    for k, (idx, erf) in enumerate(nodes):
        if erf.op_type != "Erf" or erf.domain not in ("", "ai.onnx"):
            continue
        d = producer.get(erf.input[0])
        if d is None or only_use(erf.input[0]) is not erf:
            continue
        dn = nodes[d][1]
        if dn.op_type == "Div" and scalar(dn.input[1], math.sqrt(2.0), 1e-6):
            x = dn.input[0]
        elif dn.op_type == "Mul" and (scalar(dn.input[1], math.sqrt(0.5), 1e-6)
                                      or scalar(dn.input[0], math.sqrt(0.5), 1e-6)):
            x = dn.input[0] if scalar(dn.input[1], math.sqrt(0.5), 1e-6) else dn.input[1]
        else:
            continue
        add = only_use(erf.output[0])
        if add is None or add.op_type != "Add" or not scalar(other(add, erf.output[0]), 1.0):
            continue
        m = only_use(add.output[0])
        if m is None or m.op_type != "Mul":
            continue
        partner = other(m, add.output[0])
        chain = [d, k, producer[add.output[0]], producer[m.output[0]]]
        if partner == x:  # (x * (1 + erf)) * 0.5
            h = only_use(m.output[0])
            if h is None or h.op_type != "Mul" or not scalar(other(h, m.output[0]), 0.5):
                continue
            chain.append(producer[h.output[0]])
            out = h.output[0]
        else:  # (x * 0.5) * (1 + erf)
            p = producer.get(partner)
            if p is None or only_use(partner) is not m:
                continue
            pn = nodes[p][1]
            if pn.op_type != "Mul" or other(pn, x) is None or not scalar(other(pn, x), 0.5):
                continue
            chain.append(p)
            out = m.output[0]
        if drop & set(chain):
            continue
        drop.update(chain)
        fused = onnx.helper.make_node("_GeluErf", [x], [out], name=erf.name or f"gelu_{idx}")
        insert[max(chain)] = (idx, fused)
    if not drop:
        return nodes
    res = []
    for k, entry in enumerate(nodes):
        if k in insert:
            res.append(insert[k])
        elif k not in drop:
            res.append(entry)
    return res


# ---------------------------------------------------------------------------------------
# The model


def _where_msg(index, node):
    return f"node {index} '{node.name}' ({node.op_type})"


class OnnxModel:
    """An ONNX model mapped onto the library: call it with the graph inputs (in order, or by
    name) as Tensors or NumPy arrays; it returns a Tensor (one output) or a tuple. `run`
    takes a dict and returns NumPy arrays, as ONNX Runtime's `InferenceSession.run`.

    `.input_names`, `.output_names`, `.opset`; `.executor(shapes)` the `rb.Executor` for
    those input shapes (recorded on first use); `.graph(shapes)` its `rb.Graph`."""

    def __init__(self, proto, device=None, opt_level=1, input_shapes=None, **executor_options):
        onnx = _onnx()
        self.device = device
        self.opt_level = opt_level
        self._exec_options = executor_options
        self._onnx = onnx
        self.opset = _default_opset(proto)
        g = proto.graph
        self._inits = {t.name: onnx.numpy_helper.to_array(t) for t in g.initializer}
        # (index in the file, node): the index stays the file's after rewrites
        self._nodes = _fuse_gelu_erf(list(enumerate(g.node)), self._inits,
                                     [o.name for o in g.output], onnx)
        for t in g.sparse_initializer:
            raise OnnxImportError(f"sparse initializer '{t.values.name}' is not supported")
        self._inputs = []
        for vi in g.input:
            if vi.name in self._inits:
                continue  # an initializer listed among the inputs (IR < 4): a constant
            tt = vi.type.tensor_type
            if not vi.type.HasField("tensor_type"):
                raise OnnxImportError(f"graph input '{vi.name}' is not a tensor")
            if tt.elem_type not in _RB_OF_ONNX:
                raise OnnxImportError(
                    f"graph input '{vi.name}' has dtype {_ONNX_NAMES.get(tt.elem_type, tt.elem_type)}"
                    f" (supported: FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT8, UINT8, INT16, INT32, "
                    f"INT64, BOOL)")
            dims = None
            if tt.HasField("shape"):
                dims = [d.dim_value if d.HasField("dim_value") else None for d in tt.shape.dim]
            self._inputs.append((vi.name, _RB_OF_ONNX[tt.elem_type], dims))
        self.input_names = [i[0] for i in self._inputs]
        self.output_names = [o.name for o in g.output]
        self._cache = {}
        self._validate()
        shapes, trial = self._load_shapes(input_shapes)
        if shapes is not None:
            try:
                self._prepare(shapes)
            except OnnxImportError as e:
                if not trial or not (e.from_library or e.shape_dependent):
                    raise
            except RbError:
                if not trial:
                    raise

    # -- load-time checks --
    def _validate(self):
        for i, node in self._nodes:
            where = _where_msg(i, node)
            if node.domain not in ("", "ai.onnx"):
                raise OnnxImportError(
                    f"rb.onnx: {where}: operator domain '{node.domain}' is not supported",
                    node_index=i, node_name=node.name, op_type=node.op_type)
            if node.op_type not in _HANDLERS:
                why = _MISSING.get(node.op_type, "not supported")
                raise OnnxImportError(
                    f"rb.onnx: {where}: operator {node.op_type} is not supported ({why})",
                    node_index=i, node_name=node.name, op_type=node.op_type)
            _, since = _HANDLERS[node.op_type]
            if self.opset < since:
                raise OnnxImportError(
                    f"rb.onnx: {where}: operator {node.op_type} needs opset {since} "
                    f"(the model is opset {self.opset})",
                    node_index=i, node_name=node.name, op_type=node.op_type)
            for a in node.attribute:
                if a.name not in _ATTRS[node.op_type]:
                    raise OnnxImportError(
                        f"rb.onnx: {where}: attribute {a.name} is not supported",
                        node_index=i, node_name=node.name, op_type=node.op_type,
                        attribute=a.name)

    def _load_shapes(self, given):
        """Shapes to record at load: the declared ones, `given` ones, symbolic dims as 1
        (a trial recording that checks what it can: its shape errors are not reported)."""
        given = dict(given or {})
        unknown = set(given) - set(self.input_names)
        if unknown:
            raise OnnxImportError(f"input_shapes names {sorted(unknown)}, not graph inputs "
                                  f"{self.input_names}", Status.INVALID_ARGUMENT)
        shapes, trial = [], False
        for name, _, dims in self._inputs:
            if name in given:
                shapes.append(tuple(int(d) for d in given[name]))
            elif dims is None:
                return None, True
            else:
                if any(d is None for d in dims):
                    trial = True
                shapes.append(tuple(1 if d is None else int(d) for d in dims))
        return tuple(shapes), trial

    # -- recording --
    def _prepare(self, shapes):
        if shapes in self._cache:
            return self._cache[shapes]
        graph = self._record(shapes)
        exe = Executor(graph, opt_level=self.opt_level, **self._exec_options)
        self._cache[shapes] = (graph, exe)
        return graph, exe

    def graph(self, shapes):
        return self._prepare(tuple(tuple(s) for s in shapes))[0]

    def executor(self, shapes):
        return self._prepare(tuple(tuple(s) for s in shapes))[1]

    def _record(self, shapes):
        onnx = self._onnx
        ctx = _Context(self.device, self.opset)
        ctx.env.update(self._inits)
        with record(self.device) as g:
            for (name, dtype, _), shape in zip(self._inputs, shapes):
                ctx.env[name] = g.input(shape, dtype)
            for i, node in self._nodes:
                n = _Node(ctx, i, node, onnx)
                fn, _ = _HANDLERS[node.op_type]
                try:
                    outs = fn(n)
                except _Unsupported as e:
                    raise OnnxImportError(
                        f"rb.onnx: {_where_msg(i, node)}: {e.what}", node_index=i,
                        node_name=node.name, op_type=node.op_type, attribute=e.attribute,
                        shape_dependent=e.shape_dependent) from None
                except RbError as e:
                    raise OnnxImportError(
                        f"rb.onnx: {_where_msg(i, node)}: {e.status_name}: {e.message}",
                        status=e.status if isinstance(e.status, Status) else Status.INTERNAL,
                        node_index=i, node_name=node.name, op_type=node.op_type,
                        from_library=True) from None
                except (TypeError, ValueError, IndexError, KeyError, AttributeError) as e:
                    # a malformed node (a required attribute or input missing, ...)
                    raise OnnxImportError(
                        f"rb.onnx: {_where_msg(i, node)}: cannot be mapped: "
                        f"{type(e).__name__}: {e}", status=Status.INVALID_ARGUMENT,
                        node_index=i, node_name=node.name, op_type=node.op_type,
                        shape_dependent=True) from None
                for k, name in enumerate(node.output[len(outs):], len(outs)):
                    if name:
                        raise OnnxImportError(
                            f"rb.onnx: {_where_msg(i, node)}: output {k} ('{name}') is not "
                            f"supported", node_index=i, node_name=node.name,
                            op_type=node.op_type)
                for name, v in zip(node.output, outs):
                    if name:
                        ctx.env[name] = v
            marked = set()
            for name in self.output_names:
                v = ctx.value(name) if name in ctx.env else None
                if v is None:
                    raise OnnxImportError(f"graph output '{name}' is not computed by the graph")
                t = ctx.tensor(v)
                if id(t) in marked:
                    t = _identity_copy(t)
                try:
                    g.mark_output(t)
                except RbError:
                    # a view (reshape), a parameter or a constant: give it a node of its own
                    t = _identity_copy(t)
                    g.mark_output(t)
                marked.add(id(t))
            g._onnx_context = ctx  # parameters stay alive with the graph
        return g

    # -- running --
    def _inputs_from(self, args, named):
        if named:
            if args:
                raise TypeError("pass the inputs by position or by name, not both")
            missing = [n for n in self.input_names if n not in named]
            extra = [n for n in named if n not in self.input_names]
            if missing or extra:
                raise TypeError(f"inputs: missing {missing}, unknown {extra} "
                                f"(graph inputs: {self.input_names})")
            args = [named[n] for n in self.input_names]
        if len(args) != len(self._inputs):
            raise TypeError(f"the model takes {len(self._inputs)} inputs ({self.input_names}), "
                            f"got {len(args)}")
        ts = []
        for (name, dtype, _), a in zip(self._inputs, args):
            if isinstance(a, Tensor):
                ts.append(a)
            else:
                ts.append(Tensor.from_numpy(np.asarray(a), dtype=dtype, device=self.device))
        return ts

    def __call__(self, *args, **named):
        ts = self._inputs_from(args, named)
        _, exe = self._prepare(tuple(tuple(t.shape) for t in ts))
        return exe(*ts)

    def run(self, output_names=None, feeds=None):
        """ONNX Runtime style: `run(None, {"x": array})` (or `run({"x": array})`) -> a list
        of NumPy arrays, one per requested output (None: all)."""
        if feeds is None and isinstance(output_names, dict):
            output_names, feeds = None, output_names
        res = self(**feeds)
        res = list(res) if isinstance(res, tuple) else [res]
        arrays = dict(zip(self.output_names, (t.numpy() for t in res)))
        return [arrays[n] for n in (output_names or self.output_names)]


def _identity_copy(t):
    rb = _rb()
    if len(t.shape) == 0:
        return rb.permute(t.reshape(1), [0]).reshape(())
    return rb.permute(t, list(range(len(t.shape))))


def _default_opset(proto):
    versions = {o.domain: o.version for o in proto.opset_import}
    v = versions.get("", versions.get("ai.onnx"))
    if v is None:
        raise OnnxImportError("the model imports no opset of the default ONNX domain")
    if not MIN_OPSET <= v <= MAX_OPSET:
        raise OnnxImportError(
            f"opset {v} of the default domain is not supported (opsets {MIN_OPSET} to "
            f"{MAX_OPSET})")
    return v


def load(model, device=None, opt_level=1, input_shapes=None, **executor_options):
    """Loads an ONNX model -- a path, the file's bytes, or an `onnx.ModelProto` -- and maps
    it onto the library's ops: an `OnnxModel`, run like an `rb.Executor`.

    `device`: where parameters live and the graph runs (None: the current device);
    `opt_level`: the executor's level (0 to 3); `input_shapes`: {input name: shape} for
    inputs with symbolic dimensions (else a graph is recorded per shape seen at run time);
    further keywords (`keep_fp32`, `profiling`, ...) go to `rb.Executor`.

    Raises `OnnxImportError` naming the node, operator and attribute that cannot be mapped,
    and ImportError when the `onnx` package is missing."""
    onnx = _onnx()
    if isinstance(model, (str, os.PathLike)):
        proto = onnx.load(os.fspath(model))
    elif isinstance(model, (bytes, bytearray)):
        proto = onnx.load_from_string(bytes(model))
    elif isinstance(model, onnx.ModelProto):
        proto = model
    else:
        raise TypeError(f"rb.onnx.load: a path, bytes or onnx.ModelProto, not {type(model).__name__}")
    return OnnxModel(proto, device=device, opt_level=opt_level, input_shapes=input_shapes,
                     **executor_options)


__all__ = ["OnnxImportError", "OnnxModel", "SUPPORTED_OPS", "load"]
