"""Every eager op of the Python package against a NumPy reference (f32, CPU device).

References are written out here: formulas, explicit windows for convolution and pooling,
and backward ops against central finite differences of the float64 NumPy forward.
"""

import itertools
import math
import os

import numpy as np
import pytest

import rocm_backend as rb
from rocm_backend import RbError, Status

TOL = 1e-4
T = rb.from_numpy


def rnd(*shape, seed=None, lo=None, hi=None):
    rng = np.random.default_rng(abs(hash((shape, seed))) % (2**32))
    if lo is not None:
        return rng.uniform(lo, hi, shape).astype(np.float32)
    return rng.standard_normal(shape).astype(np.float32)


def close(t, ref, tol=TOL):
    got = t.numpy() if isinstance(t, rb.Tensor) else np.asarray(t)
    ref = np.asarray(ref)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)


def fd(f, args, i, dy, eps=1e-5):
    """d(sum(f(*args) * dy)) / d args[i] by central differences in float64."""
    args = [np.array(a, dtype=np.float64) if np.asarray(a).dtype.kind == "f" else a for a in args]
    x = args[i]
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + eps
        fp = np.sum(np.asarray(f(*args)) * dy)
        x[idx] = old - eps
        fm = np.sum(np.asarray(f(*args)) * dy)
        x[idx] = old
        g[idx] = (fp - fm) / (2 * eps)
    return g


def f64(*arrays):
    return [np.asarray(a, dtype=np.float64) for a in arrays]


# ---------------------------------------------------------------------------------------
# Elementwise

BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "pow": np.power,
    "maximum": np.maximum,
    "minimum": np.minimum,
}
SHAPES = [((3, 4), (3, 4)), ((2, 3, 4), (4,)), ((3, 1), (1, 5)), ((5,), ())]


def _operands(name, sa, sb):
    a, b = rnd(*sa, seed=1), rnd(*sb, seed=2)
    if name == "pow":
        a = np.abs(a) + 0.5
    if name == "div":
        b = np.sign(b) * (np.abs(b) + 0.5)
    return a, b


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_binary(name, sa, sb):
    a, b = _operands(name, sa, sb)
    close(getattr(rb, name)(T(a), T(b)), BINARY[name](a, b))


@pytest.mark.parametrize("name", BINARY)
@pytest.mark.parametrize("sa,sb", SHAPES[:3])
def test_binary_backward(name, sa, sb):
    a, b = _operands(name, sa, sb)
    dy = rnd(*np.broadcast_shapes(sa, sb), seed=3)
    da, db = getattr(rb, f"{name}_backward")(T(a), T(b), T(dy))
    f = BINARY[name]
    close(da, fd(f, [a, b], 0, dy), 1e-3)
    close(db, fd(f, [a, b], 1, dy), 1e-3)


def test_operators():
    a, b = rnd(3, 4, seed=1), np.abs(rnd(3, 4, seed=2)) + 0.5
    ta, tb = T(a), T(b)
    close(ta + tb, a + b)
    close(ta - tb, a - b)
    close(ta * tb, a * b)
    close(ta / tb, a / b)
    close(tb**ta, b**a)
    close(2.0 - ta, 2.0 - a)
    close(ta * 3, a * 3)
    close(1 / tb, 1 / b)
    close(-ta, -a)
    close(abs(ta), np.abs(a))
    close(ta @ tb.reshape(4, 3), a @ b.reshape(4, 3))
    for op in ("__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__"):
        np.testing.assert_array_equal(getattr(ta, op)(tb).numpy(), getattr(a, op)(b))
    np.testing.assert_array_equal((ta > 0).numpy(), a > 0)
    assert len({ta, tb}) == 2  # still hashable
    assert ta != None and not (ta == None)  # noqa: E711 (identity, not elementwise)
    assert bool(T(np.float32(2)) > 1) and not bool(T(np.float32(0)) > 1)
    with pytest.raises(ValueError):
        bool(ta > 0)


CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


@pytest.mark.parametrize("name", CMP)
def test_comparisons(name):
    a = np.round(rnd(3, 4, seed=1))
    b = np.round(rnd(4, seed=2))
    r = getattr(rb, name)(T(a), T(b))
    assert r.dtype == "bool"
    np.testing.assert_array_equal(r.numpy(), CMP[name](a, b))
    ai = np.array([[1, 2], [3, 4]], dtype=np.int32)
    np.testing.assert_array_equal(getattr(rb, name)(T(ai), T(ai.T.copy())).numpy(), CMP[name](ai, ai.T))


def test_where():
    c = rnd(3, 4, seed=1) > 0
    a, b = rnd(3, 4, seed=2), rnd(4, seed=3)
    close(rb.where(T(c), T(a), T(b)), np.where(c, a, b))
    close(rb.where(T(a) > 0, T(a), 0.0), np.where(a > 0, a, 0))


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_scalars_take_the_value_operands_dtype(dtype):
    """A Python scalar (or NumPy float) operand takes the dtype of the op's first non-bool
    Tensor input, as torch.where(cond, x, 0) types the 0 by x: never the bool condition's."""
    c = rnd(3, 4, seed=11) > 0
    x = rb.from_numpy(rnd(3, 4, seed=12), dtype=dtype)
    xv = x.numpy().astype(np.float64)
    cond = T(c)
    for got, want in [
        (rb.where(cond, x, 0), np.where(c, xv, 0)),
        (rb.where(cond, 0, x), np.where(c, 0, xv)),
        (rb.where(cond, x, -1.5), np.where(c, xv, -1.5)),
        (rb.where(cond, x, np.full(4, 0.5)), np.where(c, xv, 0.5)),
        (rb.where(x > 0, x, 0), np.where(xv > 0, xv, 0)),
    ]:
        assert got.dtype == dtype
        np.testing.assert_array_equal(got.numpy().astype(np.float64), want)
    # Only bool tensors: scalars keep their own dtype (a Python float is f32), as torch's
    # default dtype.
    both = rb.where(cond, 1.0, 0.0)
    assert both.dtype == "f32"
    np.testing.assert_array_equal(both.numpy(), np.where(c, 1.0, 0.0))
    # The same rule in every op that takes scalars.
    for name in ("add", "sub", "mul", "div", "pow", "maximum", "minimum"):
        op = getattr(rb, name)
        for got in (op(x, 2), op(2, x), op(x, 0.5), op(np.float32(0.5), x)):
            assert got.dtype == dtype, name
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        op = getattr(rb, name)
        for got, want in ((op(x, 0), CMP[name](xv, 0)), (op(0, x), CMP[name](0, xv))):
            assert got.dtype == "bool", name
            np.testing.assert_array_equal(got.numpy(), want)
    assert (x + 1).dtype == (1 - x).dtype == (x * 2.5).dtype == (x**2).dtype == dtype


@pytest.mark.parametrize("op", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_where_compare(op):
    a, b = np.round(rnd(3, 4, seed=4)), np.round(rnd(4, seed=5))
    x, y = rnd(3, 1, seed=6), rnd(3, 4, seed=7)
    close(rb.where_compare(op, T(a), T(b), T(x), T(y)), np.where(CMP[op](a, b), x, y))
    close(rb.where_compare(op, T(a), T(a.T.copy().T), T(a), T(b)), np.where(CMP[op](a, a), a, b))


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    erf = np.vectorize(math.erf)
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


UNARY = {
    "relu": lambda x: np.maximum(x, 0),
    "neg": np.negative,
    "abs": np.abs,
    "sqrt": np.sqrt,
    "exp": np.exp,
    "log": np.log,
    "sin": np.sin,
    "cos": np.cos,
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "tanh": np.tanh,
    "silu": lambda x: x / (1 + np.exp(-x)),
    "hardswish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
}


def _unary_input(name):
    x = rnd(4, 5, seed=7)
    x = np.where(np.abs(x) < 0.05, 0.3, x)  # keep kinks (relu, abs) away from FD
    if name in ("sqrt", "log"):
        x = np.abs(x) + 0.2
    return x.astype(np.float32)


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    x = _unary_input(name)
    close(getattr(rb, name)(T(x)), UNARY[name](x.astype(np.float64)))


@pytest.mark.parametrize("name", UNARY)
def test_unary_backward(name):
    x = _unary_input(name)
    dy = rnd(4, 5, seed=8)
    close(getattr(rb, f"{name}_backward")(T(x), T(dy)), fd(UNARY[name], [x], 0, dy), 1e-3)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu(approximate):
    x, dy = _unary_input("gelu"), rnd(4, 5, seed=8)
    close(rb.gelu(T(x), approximate=approximate), _gelu(x.astype(np.float64), approximate))
    close(rb.gelu_backward(T(x), T(dy), approximate), fd(lambda v: _gelu(v, approximate), [x], 0, dy), 1e-3)


def test_clamp():
    x, dy = rnd(4, 5, seed=1), rnd(4, 5, seed=2)
    close(rb.clamp(T(x), -0.5, 0.7), np.clip(x, -0.5, 0.7))
    close(rb.clamp(T(x), min=0.0), np.maximum(x, 0))
    close(rb.clamp(T(x), None, 0.2), np.minimum(x, 0.2))
    inside = (x >= -0.5) & (x <= 0.7)
    close(rb.clamp_backward(T(x), T(dy), min=-0.5, max=0.7), np.where(inside, dy, 0))


# The activations of exported models (torch.nn.functional semantics), references in float64.
_SELU_A, _SELU_S = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_erf = np.vectorize(math.erf)


def _softplus(x, beta=1.0, threshold=20.0):
    return np.where(x * beta > threshold, x, np.log1p(np.exp(np.minimum(x * beta, threshold))) / beta)


ACTS = [
    ("leaky_relu", {}, lambda x: np.where(x > 0, x, 0.01 * x)),
    ("leaky_relu", {"negative_slope": 0.2}, lambda x: np.where(x > 0, x, 0.2 * x)),
    ("elu", {}, lambda x: np.where(x > 0, x, np.expm1(np.minimum(x, 0)))),
    ("elu", {"alpha": 1.7}, lambda x: np.where(x > 0, x, 1.7 * np.expm1(np.minimum(x, 0)))),
    ("selu", {}, lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * np.expm1(np.minimum(x, 0)))),
    ("celu", {"alpha": 0.6}, lambda x: np.maximum(x, 0) + np.minimum(0, 0.6 * np.expm1(x / 0.6))),
    ("hardsigmoid", {}, lambda x: np.clip(x + 3, 0, 6) / 6),
    ("softplus", {}, _softplus),
    ("softplus", {"beta": 2.0, "threshold": 1.0}, lambda x: _softplus(x, 2.0, 1.0)),
    ("softsign", {}, lambda x: x / (1 + np.abs(x))),
    ("mish", {}, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("erf", {}, _erf),
    ("reciprocal", {}, lambda x: 1 / x),
]


def _act_input(name, kw):
    x = rnd(5, 7, seed=17) * 2.5
    # Keep finite differences off the kinks (0, +-3, the softplus threshold) and 1/x off 0.
    x = np.where(np.abs(x) < 0.05, 0.3, x)
    x = np.where(np.abs(np.abs(x) - 3) < 0.05, 2.5, x)
    if name == "softplus":
        t = kw.get("threshold", 20.0) / kw.get("beta", 1.0)
        x = np.where(np.abs(x - t) < 0.05, t + 0.3, x)
    return x.astype(np.float32)


@pytest.mark.parametrize("name,kw,ref", ACTS, ids=[f"{a[0]}-{i}" for i, a in enumerate(ACTS)])
def test_activation(name, kw, ref):
    x = _act_input(name, kw)
    close(getattr(rb, name)(T(x), **kw), ref(x.astype(np.float64)))
    dy = rnd(5, 7, seed=18)
    close(getattr(rb, f"{name}_backward")(T(x), T(dy), **kw), fd(ref, [x], 0, dy), 1e-3)


def test_activation_kinks_and_nan():
    nan, inf = float("nan"), float("inf")
    x = np.array([-3.0, -0.0, 0.0, 3.0, nan, inf, -inf], np.float32)
    ones = np.ones_like(x)
    # PyTorch's values at the kinks: leaky_relu'(0) = slope, hardsigmoid' = 0 at +-3,
    # elu'(0) = alpha (the x <= 0 branch), NaN propagates forward.
    close(rb.leaky_relu_backward(T(x), T(ones), 0.1), [0.1, 0.1, 0.1, 1, 0.1, 1, 0.1], 1e-7)
    close(rb.hardsigmoid_backward(T(x), T(ones)), [0, 1 / 6, 1 / 6, 0, 0, 0, 0], 1e-6)
    close(rb.elu_backward(T(x), T(ones), alpha=2.0).numpy()[:4], [2 * math.exp(-3), 2, 2, 1], 1e-6)
    for name in ("leaky_relu", "elu", "selu", "celu", "hardsigmoid", "softplus", "softsign",
                 "mish", "erf", "floor", "ceil", "round", "reciprocal"):
        got = getattr(rb, name)(T(x)).numpy()
        assert np.isnan(got[4]), name
    with pytest.raises(RbError) as e:
        rb.celu(T(x), alpha=0.0)
    assert e.value.status == Status.INVALID_ARGUMENT and "alpha" in str(e.value)


def test_rounding_and_sign():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, -1.2, 1.7, 0.0, float("nan"), float("inf")], np.float32)
    close(rb.round(T(x)), np.round(x), 0)  # half to even, as torch.round
    close(rb.floor(T(x)), np.floor(x), 0)
    close(rb.ceil(T(x)), np.ceil(x), 0)
    ref = np.sign(x)
    ref[np.isnan(x)] = 0  # torch.sign(nan) is 0
    close(rb.sign(T(x)), ref, 0)
    dy = rnd(11, seed=3)
    for name in ("round", "floor", "ceil", "sign"):
        close(getattr(rb, f"{name}_backward")(T(x), T(dy)), np.zeros(11), 0)
    for dt in ("f16", "bf16"):
        xh = rb.cast(T(x), dt)
        close(rb.cast(rb.round(xh), "f32"), np.round(x), 0)


@pytest.mark.parametrize("shape,c", [((2, 3, 4, 5), 3), ((2, 3, 4, 5), 1), ((6, 4), 4), ((5,), 1)])
def test_prelu(shape, c):
    x, w, dy = rnd(*shape, seed=21), rnd(c, seed=22), rnd(*shape, seed=23)
    x = np.where(np.abs(x) < 0.05, 0.3, x).astype(np.float32)
    wb = w.reshape((c,) + (1,) * (len(shape) - 2)) if c > 1 else w

    def ref(xv, wv):
        wv = wv.reshape((c,) + (1,) * (len(shape) - 2)) if c > 1 else wv
        return np.where(xv > 0, xv, wv * xv)

    close(rb.prelu(T(x), T(w)), np.where(x > 0, x, wb * x))
    dx, dw = rb.prelu_backward(T(x), T(w), T(dy))
    close(dx, fd(ref, [x, w], 0, dy), 1e-3)
    close(dw, fd(ref, [x, w], 1, dy), 1e-3)
    with pytest.raises(RbError) as e:
        rb.prelu(T(x), T(rnd(c + 1, seed=1)))
    assert e.value.status == Status.SHAPE_MISMATCH


# ---------------------------------------------------------------------------------------
# Reductions

REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}
DIMS = [None, 1, -1, (0, 2), (0, 1, 2)]


@pytest.mark.parametrize("name", REDUCE)
@pytest.mark.parametrize("dim", DIMS)
@pytest.mark.parametrize("keepdim", [False, True])
def test_reductions(name, dim, keepdim):
    x = rnd(2, 3, 4, seed=5) * 0.8 + 0.1
    ref = REDUCE[name](x.astype(np.float64), axis=dim, keepdims=keepdim)
    close(getattr(rb, name)(T(x), dim, keepdim), ref)
    dy = rnd(*np.shape(ref), seed=6)
    f = lambda v: REDUCE[name](v, axis=dim, keepdims=keepdim)  # noqa: E731
    close(getattr(rb, f"{name}_backward")(T(x), T(dy), dim=dim, keepdim=keepdim), fd(f, [x], 0, dy), 1e-3)


def test_reduction_aliases_and_argmax():
    x = rnd(3, 5, 2, seed=9)
    close(rb.amax(T(x), dim=1), x.max(1))
    close(rb.amin(T(x)), x.min())
    for dim in (0, 1, -1):
        r = rb.argmax(T(x), dim)
        assert r.dtype == "i64"
        np.testing.assert_array_equal(r.numpy(), np.argmax(x, axis=dim))
    np.testing.assert_array_equal(rb.argmax(T(x), 1, keepdim=True).numpy(), np.argmax(x, 1)[:, None])
    # dim=None: the flattened index (torch.argmax(x)); keepdim keeps every dim as 1
    r = rb.argmax(T(x))
    assert r.shape == () and r.dtype == "i64"
    assert int(r.numpy()) == int(np.argmax(x))
    assert rb.argmax(T(x), keepdim=True).shape == (1,) * x.ndim
    with pytest.raises(rb.RbError):
        rb.argmax(rb.from_numpy(np.zeros((0, 3), np.float32)))


# ---------------------------------------------------------------------------------------
# Data movement


def test_permute_concat_slice():
    x = rnd(2, 3, 4, seed=1)
    close(rb.permute(T(x), (2, 0, 1)), x.transpose(2, 0, 1))
    close(rb.permute(T(x), [-1, 1, 0]), x.transpose(2, 1, 0))
    y = rnd(2, 5, 4, seed=2)
    close(rb.concat([T(x), T(y)], dim=1), np.concatenate([x, y], 1))
    close(rb.cat([T(x), T(x), T(x)]), np.concatenate([x, x, x], 0))
    close(rb.slice(T(x), 2, 1, 4, 2), x[:, :, 1:4:2])
    close(rb.slice(T(x), dim=0, start=-1), x[-1:])
    close(rb.slice(T(x), 1, 1, 100), x[:, 1:])


def test_cast_fill_copy():
    x = rnd(3, 4, seed=1) * 10
    c = rb.cast(T(x), "i32")
    assert c.dtype == "i32"
    np.testing.assert_array_equal(c.numpy(), np.trunc(x).astype(np.int32))
    h = rb.cast(T(x), np.float16)
    assert h.dtype == "f16"
    close(h, x.astype(np.float16), 1e-2)
    t = T(x)
    assert rb.fill(t, 2.5) is t
    close(t, np.full((3, 4), 2.5))
    d = rb.zeros((3, 4))
    assert rb.copy(T(x), d) is d
    close(d, x)


def test_embedding():
    w = rnd(6, 3, seed=1)
    idx = np.array([[0, 5, 2], [2, 2, 1]], dtype=np.int64)
    close(rb.embedding(T(idx), T(w)), w[idx])
    close(rb.embedding(T(idx.astype(np.int32)), weight=T(w)), w[idx])
    dy = rnd(2, 3, 3, seed=2)
    ref = np.zeros((6, 3))
    np.add.at(ref, idx, dy)
    close(rb.embedding_backward(T(dy), T(idx), 6), ref)


# ---------------------------------------------------------------------------------------
# Optimizers


@pytest.mark.parametrize("nesterov,momentum,dampening,wd", [(False, 0.0, 0.0, 0.0), (False, 0.9, 0.1, 0.01), (True, 0.9, 0.0, 0.0)])
def test_sgd_step(nesterov, momentum, dampening, wd):
    p, buf = rnd(5, seed=1).astype(np.float64), None
    tp = T(p, dtype="f32")  # an f32 parameter, its reference in float64
    tb = rb.zeros(5) if momentum else None
    for step in range(3):
        g = rnd(5, seed=10 + step)
        rb.sgd_step(tp, T(g), tb, lr=0.1, momentum=momentum, dampening=dampening, weight_decay=wd, nesterov=nesterov, first_step=step == 0)
        d = g + wd * p
        if momentum:
            buf = d if buf is None else momentum * buf + (1 - dampening) * d
            d = d + momentum * buf if nesterov else buf
        p = p - 0.1 * d
    close(tp, p)
    if momentum:
        close(tb, buf)


@pytest.mark.parametrize("name", ["adam_step", "adamw_step"])
@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_steps(name, amsgrad):
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.99, 1e-8, 0.05
    p = rnd(6, seed=1).astype(np.float64)
    m, v, vmax = np.zeros(6), np.zeros(6), np.zeros(6)
    tp, tm, tv = T(p, dtype="f32"), rb.zeros(6), rb.zeros(6)
    tvmax = rb.zeros(6) if amsgrad else None
    for t in range(1, 4):
        g = rnd(6, seed=20 + t).astype(np.float64)
        getattr(rb, name)(tp, T(g, dtype="f32"), tm, tv, tvmax, lr=lr, beta1=b1, beta2=b2, eps=eps, weight_decay=wd, step=t, amsgrad=amsgrad)
        if name == "adamw_step":
            p = p * (1 - lr * wd)
        else:
            g = g + wd * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        vmax = np.maximum(vmax, v)
        vv = vmax if amsgrad else v
        denom = np.sqrt(vv) / math.sqrt(1 - b2**t) + eps
        p = p - lr / (1 - b1**t) * m / denom
    close(tp, p)
    close(tm, m)
    close(tv, v)


# ---------------------------------------------------------------------------------------
# Softmax, normalization


def _softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


def _log_softmax(x, dim):
    s = x - x.max(dim, keepdims=True)
    return s - np.log(np.exp(s).sum(dim, keepdims=True))


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax(dim):
    x, dy = rnd(3, 4, 5, seed=1), rnd(3, 4, 5, seed=2)
    y = rb.softmax(T(x), dim)
    close(y, _softmax(x.astype(np.float64), dim))
    ly = rb.log_softmax(T(x), dim=dim)
    close(ly, _log_softmax(x.astype(np.float64), dim))
    close(rb.softmax_backward(y, T(dy), dim), fd(lambda v: _softmax(v, dim), [x], 0, dy), 1e-3)
    close(rb.log_softmax_backward(ly, T(dy), dim), fd(lambda v: _log_softmax(v, dim), [x], 0, dy), 1e-3)


def _layer_norm(x, shape, w, b, eps):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    mu = x.mean(axes, keepdims=True)
    var = x.var(axes, keepdims=True)
    y = (x - mu) / np.sqrt(var + eps)
    return y * w + b


def test_layer_norm():
    x, w, b, dy = rnd(3, 2, 4, seed=1), rnd(2, 4, seed=2), rnd(2, 4, seed=3), rnd(3, 2, 4, seed=4)
    close(rb.layer_norm(T(x), (2, 4), T(w), T(b)), _layer_norm(*f64(x), (2, 4), w, b, 1e-5))
    close(rb.layer_norm(T(x), [4], eps=1e-3), _layer_norm(*f64(x), (4,), 1.0, 0.0, 1e-3))
    dx, dw, db = rb.layer_norm_backward(T(dy), T(x), (2, 4), T(w))
    f = lambda x_, w_, b_: _layer_norm(x_, (2, 4), w_, b_, 1e-5)  # noqa: E731
    close(dx, fd(f, [x, w, b], 0, dy), 1e-3)
    close(dw, fd(f, [x, w, b], 1, dy), 1e-3)
    close(db, fd(f, [x, w, b], 2, dy), 1e-3)


def _rms_norm(x, shape, w, eps):
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    return x / np.sqrt((x * x).mean(axes, keepdims=True) + eps) * w


def test_rms_norm():
    x, w, dy = rnd(3, 6, seed=1), rnd(6, seed=2), rnd(3, 6, seed=3)
    close(rb.rms_norm(T(x), (6,), T(w), eps=1e-6), _rms_norm(*f64(x), (6,), w, 1e-6))
    close(rb.rms_norm(T(x), 6), _rms_norm(*f64(x), (6,), 1.0, 1e-6))
    dx, dw = rb.rms_norm_backward(T(dy), T(x), (6,), T(w))
    f = lambda x_, w_: _rms_norm(x_, (6,), w_, 1e-6)  # noqa: E731
    close(dx, fd(f, [x, w], 0, dy), 1e-3)
    close(dw, fd(f, [x, w], 1, dy), 1e-3)


def _group_norm(x, g, w, b, eps):
    n, c = x.shape[:2]
    xr = x.reshape(n, g, -1)
    y = ((xr - xr.mean(2, keepdims=True)) / np.sqrt(xr.var(2, keepdims=True) + eps)).reshape(x.shape)
    bshape = (1, c) + (1,) * (x.ndim - 2)
    return y * np.reshape(w, bshape) + np.reshape(b, bshape)


def test_group_norm():
    x, w, b, dy = rnd(2, 6, 3, seed=1), rnd(6, seed=2), rnd(6, seed=3), rnd(2, 6, 3, seed=4)
    close(rb.group_norm(T(x), 3, T(w), T(b)), _group_norm(*f64(x), 3, w, b, 1e-5))
    close(rb.group_norm(T(x), 2), _group_norm(*f64(x), 2, np.ones(6), np.zeros(6), 1e-5))
    dx, dw, db = rb.group_norm_backward(T(dy), T(x), 3, T(w))
    f = lambda x_, w_, b_: _group_norm(x_, 3, w_, b_, 1e-5)  # noqa: E731
    close(dx, fd(f, [x, w, b], 0, dy), 1e-3)
    close(dw, fd(f, [x, w, b], 1, dy), 1e-3)
    close(db, fd(f, [x, w, b], 2, dy), 1e-3)


def _bn(x, mean, var, w, b, eps):
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * w.reshape(shape) + b.reshape(shape)


def _bn_train(x, w, b, eps):
    axes = (0,) + tuple(range(2, x.ndim))
    return _bn(x, x.mean(axes), x.var(axes), w, b, eps)


def test_batch_norm():
    x, w, b, dy = rnd(4, 3, 2, seed=1), rnd(3, seed=2), rnd(3, seed=3), rnd(4, 3, 2, seed=4)
    rm, rv = rnd(3, seed=5), np.abs(rnd(3, seed=6)) + 0.5
    trm, trv = T(rm), T(rv)
    y = rb.batch_norm(T(x), trm, trv, T(w), T(b), training=True, momentum=0.2)
    close(y, _bn_train(*f64(x), w, b, 1e-5))
    axes = (0, 2)
    close(trm, 0.8 * rm + 0.2 * x.mean(axes, dtype=np.float64))
    close(trv, 0.8 * rv + 0.2 * x.var(axes, ddof=1, dtype=np.float64))
    close(rb.batch_norm(T(x), T(rm), T(rv), T(w), T(b)), _bn(*f64(x, rm, rv, w, b), 1e-5))
    close(rb.batch_norm(T(x), training=True), _bn_train(*f64(x), np.ones(3), np.zeros(3), 1e-5))
    dx, dw, db = rb.batch_norm_backward(T(dy), T(x), None, None, T(w), training=True)
    f = lambda x_, w_, b_: _bn_train(x_, w_, b_, 1e-5)  # noqa: E731
    close(dx, fd(f, [x, w, b], 0, dy), 1e-3)
    close(dw, fd(f, [x, w, b], 1, dy), 1e-3)
    close(db, fd(f, [x, w, b], 2, dy), 1e-3)
    dx, dw, db = rb.batch_norm_backward(T(dy), T(x), T(rm), T(rv), T(w), training=False)
    g = lambda x_, w_, b_: _bn(x_, rm.astype(np.float64), rv.astype(np.float64), w_, b_, 1e-5)  # noqa: E731
    close(dx, fd(g, [x, w, b], 0, dy), 1e-3)
    close(dw, fd(g, [x, w, b], 1, dy), 1e-3)


# ---------------------------------------------------------------------------------------
# Losses


def _reduce(l, reduction, count=None):
    if reduction == "none":
        return l
    if reduction == "sum":
        return np.asarray(l.sum())
    return np.asarray(l.sum() / (l.size if count is None else count))


def _mse(x, t, reduction):
    return _reduce((x - t) ** 2, reduction)


def _bce(x, t, reduction):
    return _reduce(-(t * np.log(x) + (1 - t) * np.log(1 - x)), reduction)


def _nll(logp, t, reduction, ignore_index=-100):
    """logp [N, C, d...] (or [C]), t [N, d...]."""
    if logp.ndim == 1:
        logp, t = logp[None], np.asarray(t)[None]
        squeeze = True
    else:
        squeeze = False
    keep = t != ignore_index
    tt = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, tt[:, None], axis=1)[:, 0]
    l = np.where(keep, -picked, 0.0)
    if squeeze and reduction == "none":
        return l[0]
    return _reduce(l, reduction, count=keep.sum())


def _ce(x, t, reduction, ignore_index=-100, smoothing=0.0):
    logp = _log_softmax(x, 0 if x.ndim == 1 else 1)
    nll = _nll(logp, t, "none", ignore_index)
    if smoothing == 0:
        return _nll(logp, t, reduction, ignore_index)
    c = x.shape[0 if x.ndim == 1 else 1]
    smooth = -logp.sum(0 if x.ndim == 1 else 1) / c
    keep = np.asarray(t) != ignore_index
    l = (1 - smoothing) * nll + smoothing * np.where(keep, smooth, 0.0)
    return _reduce(l, reduction, count=keep.sum())


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_mse_and_bce(reduction):
    x, t = rnd(3, 4, seed=1, lo=0.05, hi=0.95), rnd(3, 4, seed=2, lo=0.0, hi=1.0)
    for name, ref in (("mse_loss", _mse), ("binary_cross_entropy", _bce)):
        y = getattr(rb, name)(T(x), T(t), reduction=reduction)
        close(y, ref(*f64(x, t), reduction))
        dy = rnd(*np.shape(ref(x, t, reduction)), seed=3)
        close(getattr(rb, f"{name}_backward")(T(dy), T(x), T(t), reduction), fd(lambda a: ref(a, t, reduction), [x], 0, dy), 1e-3)
    close(rb.bce_loss(T(x), T(t)), _bce(*f64(x, t), "mean"))


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (5,)])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_and_nll(reduction, shape, smoothing):
    x = rnd(*shape, seed=1)
    c = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = np.random.default_rng(4).integers(0, c, tshape).astype(np.int64)
    if len(shape) > 1:
        t.flat[1] = -100  # ignored
    y = rb.cross_entropy(T(x), T(t), reduction=reduction, label_smoothing=smoothing)
    close(y, _ce(*f64(x), t, reduction, smoothing=smoothing))
    dy = rnd(*np.shape(_ce(x, t, reduction)), seed=5)
    f = lambda a: _ce(a, t, reduction, smoothing=smoothing)  # noqa: E731
    close(rb.cross_entropy_backward(T(dy), T(x), T(t), reduction, label_smoothing=smoothing), fd(f, [x], 0, dy), 1e-3)
    if smoothing == 0:
        logp = _log_softmax(x.astype(np.float64), 0 if x.ndim == 1 else 1)
        close(rb.nll_loss(T(logp.astype(np.float32)), T(t), reduction), _nll(logp, t, reduction))
        g = lambda a: _nll(a, t, reduction)  # noqa: E731
        close(rb.nll_loss_backward(T(dy), T(logp.astype(np.float32)), T(t), reduction), fd(g, [logp], 0, dy), 1e-3)


def test_loss_ignore_index_custom():
    x = rnd(4, 3, seed=1)
    t = np.array([0, 2, 1, 2])
    close(rb.cross_entropy(T(x), T(t), ignore_index=2), _ce(*f64(x), t, "mean", ignore_index=2))
    close(rb.nll_loss(T(x), T(t), ignore_index=1, reduction="sum"), _nll(*f64(x), t, "sum", ignore_index=1))


# Class weights, class-probability targets (issue 17): torch's formulas written out.


def _wnll(logp, t, w, reduction, ignore_index=-100):
    """torch.nn.functional.nll_loss with weight: mean divides by the summed target weights."""
    t = np.asarray(t)
    squeeze = logp.ndim == 1
    if squeeze:
        logp, t = logp[None], t[None]
    keep = t != ignore_index
    tt = np.where(keep, t, 0)
    picked = np.take_along_axis(logp, tt[:, None], axis=1)[:, 0]
    wt = np.where(keep, w[tt], 0.0)
    l = -wt * picked
    if squeeze and reduction == "none":
        return l[0]
    return _reduce(l, reduction, count=wt.sum())


def _wce(x, t, w, reduction, ignore_index=-100, smoothing=0.0):
    """torch's cross_entropy_loss_label_smoothing with weight."""
    cd = 0 if x.ndim == 1 else 1
    c = x.shape[cd]
    logp = _log_softmax(x, cd)
    nll = _wnll(logp, t, w, "none", ignore_index)
    shape = [1] * x.ndim
    shape[cd] = c
    keep = np.asarray(t) != ignore_index
    smooth = np.where(keep, -(logp * w.reshape(shape)).sum(cd), 0.0)
    l = (1 - smoothing) * nll + smoothing / c * smooth
    wsum = np.where(keep, w[np.where(keep, t, 0)], 0.0).sum()
    return _reduce(l, reduction, count=wsum)


def _prob_ce(x, p, w, reduction, smoothing=0.0):
    """torch's cross_entropy_loss_prob_target: mean divides by the item count."""
    cd = 0 if x.ndim == 1 else 1
    c = x.shape[cd]
    shape = [1] * x.ndim
    shape[cd] = c
    p = p * (1 - smoothing) + smoothing / c
    wb = 1.0 if w is None else w.reshape(shape)
    l = -(_log_softmax(x, cd) * p * wb).sum(cd)
    return _reduce(np.asarray(l), reduction)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (5,)])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_weighted_cross_entropy_and_nll(reduction, shape, smoothing):
    x = rnd(*shape, seed=11)
    c = shape[0] if len(shape) == 1 else shape[1]
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = np.random.default_rng(6).integers(0, c, tshape).astype(np.int64)
    if len(shape) > 1:
        t.flat[1] = -100  # ignored
    w = rnd(c, seed=12, lo=0.2, hi=2.0)
    w[1] = 0.0  # a class that does not count
    ref = _wce(*f64(x), t, *f64(w), reduction, smoothing=smoothing)
    close(rb.cross_entropy(T(x), T(t), weight=T(w), reduction=reduction, label_smoothing=smoothing), ref)
    # torch's position for the weight, and the C function's own Python name.
    close(rb.cross_entropy(T(x), T(t), T(w), reduction=reduction, label_smoothing=smoothing), ref)
    close(rb.cross_entropy_weighted(T(x), T(t), T(w), reduction, -100, smoothing), ref)
    dy = rnd(*np.shape(ref), seed=13)
    f = lambda a: _wce(a, t, w.astype(np.float64), reduction, smoothing=smoothing)  # noqa: E731
    g = rb.cross_entropy_backward(T(dy), T(x), T(t), weight=T(w), reduction=reduction, label_smoothing=smoothing)
    close(g, fd(f, [x], 0, dy), 1e-3)
    if smoothing == 0:
        logp = _log_softmax(x.astype(np.float64), 0 if x.ndim == 1 else 1).astype(np.float32)
        ref = _wnll(*f64(logp), t, *f64(w), reduction)
        close(rb.nll_loss(T(logp), T(t), T(w), reduction=reduction), ref)
        close(rb.nll_loss(T(logp), T(t), reduction=reduction, weight=w), ref)
        h = lambda a: _wnll(a, t, w.astype(np.float64), reduction)  # noqa: E731
        close(rb.nll_loss_backward(T(dy), T(logp), T(t), T(w), reduction=reduction), fd(h, [logp], 0, dy), 1e-3)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(4, 5), (2, 3, 4), (5,)])
@pytest.mark.parametrize("smoothing,weighted", [(0.0, False), (0.25, False), (0.0, True), (0.25, True)])
def test_prob_target_cross_entropy(reduction, shape, smoothing, weighted):
    x = rnd(*shape, seed=21)
    cd = 0 if len(shape) == 1 else 1
    p = _softmax(rnd(*shape, seed=22).astype(np.float64), cd).astype(np.float32)
    w = rnd(shape[cd], seed=23, lo=0.2, hi=2.0) if weighted else None
    wk = {"weight": T(w)} if weighted else {}
    w64 = None if w is None else w.astype(np.float64)
    ref = _prob_ce(*f64(x, p), w64, reduction, smoothing)
    close(rb.cross_entropy(T(x), T(p), reduction=reduction, label_smoothing=smoothing, **wk), ref)
    dy = rnd(*np.shape(ref), seed=24)
    f = lambda a: _prob_ce(a, p.astype(np.float64), w64, reduction, smoothing)  # noqa: E731
    g = rb.cross_entropy_backward(T(dy), T(x), T(p), reduction=reduction, label_smoothing=smoothing, **wk)
    close(g, fd(f, [x], 0, dy), 1e-3)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("wshape", [(3, 4), (4,), (3, 1), ()])
def test_weighted_bce(reduction, wshape):
    x, t = rnd(3, 4, seed=31, lo=0.05, hi=0.95), rnd(3, 4, seed=32, lo=0.0, hi=1.0)
    w = rnd(*wshape, seed=33, lo=0.0, hi=2.0)
    ref = _reduce(np.broadcast_to(w.astype(np.float64), x.shape) * -(t * np.log(x) + (1 - t) * np.log(1 - x)).astype(np.float64), reduction)
    close(rb.binary_cross_entropy(T(x), T(t), weight=T(w), reduction=reduction), ref)
    close(rb.bce_loss(T(x), T(t), T(w), reduction=reduction), ref)
    dy = rnd(*np.shape(ref), seed=34)

    def f(a):
        return _reduce(w.astype(np.float64) * -(t * np.log(a) + (1 - t) * np.log(1 - a)), reduction)

    close(rb.binary_cross_entropy_backward(T(dy), T(x), T(t), T(w), reduction=reduction), fd(f, [x], 0, dy), 1e-3)


def test_loss_weight_positions():
    x = rnd(4, 3, seed=41)
    t = np.array([0, 2, 1, 2])
    w = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    # The package's own positional order still works (reduction third) ...
    close(rb.cross_entropy(T(x), T(t), "sum"), _ce(*f64(x), t, "sum"))
    close(rb.cross_entropy(T(x), T(t), "mean", 2, 0.1), _ce(*f64(x), t, "mean", ignore_index=2, smoothing=0.1))
    # ... a tensor, array or None third is torch's weight.
    close(rb.cross_entropy(T(x), T(t), None, reduction="sum"), _ce(*f64(x), t, "sum"))
    close(rb.cross_entropy(T(x), T(t), w, reduction="sum"), _wce(*f64(x), t, *f64(w), "sum"))
    with pytest.raises(TypeError):
        rb.cross_entropy(T(x), T(t), T(w), "sum")
    with pytest.raises(TypeError):
        rb.cross_entropy(T(x), T(t), T(w), weight=T(w))
    assert "weight" in rb.cross_entropy.__doc__


def _rope_cached(x, cos, sin, pos, seq_dim, interleaved):
    """ONNX RotaryEmbedding with caches [max_pos, R/2]; pos None, [S] or [B, S]."""
    h = cos.shape[1]
    r = 2 * h
    sd = seq_dim % x.ndim
    s = x.shape[sd]
    pos = np.arange(s) if pos is None else np.asarray(pos)
    shape = [1] * x.ndim
    shape[sd], shape[-1] = s, h
    if pos.ndim == 2:
        shape[0] = pos.shape[0]
    c, sn = cos[pos].reshape(shape), sin[pos].reshape(shape)
    xr, rest = x[..., :r], x[..., r:]
    a, b = (xr[..., 0::2], xr[..., 1::2]) if interleaved else (xr[..., :h], xr[..., h:])
    a2, b2 = a * c - b * sn, b * c + a * sn
    out = np.stack([a2, b2], -1).reshape(xr.shape) if interleaved else np.concatenate([a2, b2], -1)
    return np.concatenate([out, rest], -1)


@pytest.mark.parametrize("seq_dim", [-2, -3, 1])
@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("rot,pos", [(6, None), (4, "seq"), (6, "batch")])
def test_rope_cached(seq_dim, interleaved, rot, pos):
    x, dy = rnd(2, 3, 4, 6, seed=51), rnd(2, 3, 4, 6, seed=52)
    s = x.shape[seq_dim]
    theta = np.arange(12)[:, None] * 10000.0 ** (-2.0 * np.arange(rot // 2) / rot)
    cos, sin = np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)
    if pos == "seq":
        ids = (11 - np.arange(s)).astype(np.int64)
    elif pos == "batch":
        ids = (np.arange(s)[None] + np.array([[0], [5]])).astype(np.int32)
    else:
        ids = None
    pid = None if ids is None else T(ids)
    ref = _rope_cached(*f64(x, cos, sin), ids, seq_dim, interleaved)
    close(rb.rope_cached(T(x), T(cos), T(sin), pid, seq_dim, interleaved), ref)
    close(rb.rope_cached(T(x), T(cos), T(sin), position_ids=pid, seq_dim=seq_dim, interleaved=interleaved), ref)
    f = lambda a: _rope_cached(a, *f64(cos, sin), ids, seq_dim, interleaved)  # noqa: E731
    g = rb.rope_cached_backward(T(dy), T(cos), T(sin), pid, seq_dim=seq_dim, interleaved=interleaved)
    close(g, fd(f, [x], 0, dy), 1e-3)
    if rot == 6 and pos is None and not interleaved:
        # Caches from the base reproduce rope.
        close(rb.rope_cached(T(x), T(cos), T(sin), seq_dim=seq_dim), rb.rope(T(x), seq_dim).numpy())


@pytest.mark.parametrize(
    "call,status,name",
    [
        (lambda: rb.cross_entropy(T(rnd(2, 3)), T(np.array([0, 1])), weight=T(rnd(4))), Status.SHAPE_MISMATCH, "weight"),
        (lambda: rb.nll_loss(T(rnd(2, 3)), T(np.array([0, 1])), weight=T(rnd(2))), Status.SHAPE_MISMATCH, "weight"),
        (lambda: rb.binary_cross_entropy(T(rnd(2, 3, lo=0.1, hi=0.9)), T(rnd(2, 3, lo=0.1, hi=0.9)), weight=T(rnd(2))), Status.SHAPE_MISMATCH, "weight"),
        (lambda: rb.cross_entropy(T(rnd(2, 3)), T(rnd(2, 3)), ignore_index=1), Status.INVALID_ARGUMENT, "ignore_index"),
        (lambda: rb.cross_entropy(T(rnd(2, 3)), T(rnd(2, 4))), Status.DTYPE_MISMATCH, "cross_entropy"),
        (lambda: rb.rope_cached(T(rnd(5, 8)), T(rnd(4, 4)), T(rnd(4, 4)), seq_dim=0), Status.INVALID_ARGUMENT, "rope_cached"),
        (lambda: rb.rope_cached(T(rnd(5, 8)), T(rnd(5, 4)), T(rnd(5, 4)), T(np.array([0, 1, 2, 3, 7])), 0), Status.INVALID_ARGUMENT, "position id 7"),
        (lambda: rb.rope_cached(T(rnd(5, 8)), T(rnd(5, 5)), T(rnd(5, 5)), seq_dim=0), Status.SHAPE_MISMATCH, "rotary dim"),
    ],
)
def test_loss_and_rope_cached_errors(call, status, name):
    with pytest.raises(RbError) as e:
        call()
    assert e.value.status == status
    assert name in e.value.message


# ---------------------------------------------------------------------------------------
# Transformer ops


def _rope(x, seq_dim, base, offset):
    d = x.shape[-1]
    h = d // 2
    s = x.shape[seq_dim]
    pos = offset + np.arange(s)
    theta = pos[:, None] * base ** (-2.0 * np.arange(h) / d)  # [S, h]
    shape = [1] * x.ndim
    shape[seq_dim] = s
    shape[-1] = h
    cos, sin = np.cos(theta).reshape(shape), np.sin(theta).reshape(shape)
    x1, x2 = x[..., :h], x[..., h:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


@pytest.mark.parametrize("seq_dim,offset", [(-2, 0), (-3, 5), (1, 2)])
def test_rope(seq_dim, offset):
    x, dy = rnd(2, 3, 4, 6, seed=1), rnd(2, 3, 4, 6, seed=2)
    close(rb.rope(T(x), seq_dim, position_offset=offset), _rope(x.astype(np.float64), seq_dim, 10000.0, offset))
    close(rb.rope(T(x), seq_dim=seq_dim, base=100.0), _rope(x.astype(np.float64), seq_dim, 100.0, 0))
    f = lambda a: _rope(a, seq_dim, 10000.0, offset)  # noqa: E731
    close(rb.rope_backward(T(dy), seq_dim, position_offset=offset), fd(f, [x], 0, dy), 1e-3)


def _sdpa(q, k, v, causal, scale):
    d = q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(d) if scale is None else scale)
    if causal:
        sq, sk = s.shape[-2:]
        s = np.where(np.tril(np.ones((sq, sk), bool)), s, -np.inf)
    return _softmax(s, -1) @ v


@pytest.mark.parametrize("causal,scale", [(False, None), (True, None), (True, 0.3)])
def test_sdpa(causal, scale):
    q, k, v = rnd(2, 4, 3, seed=1), rnd(2, 4, 3, seed=2), rnd(2, 4, 5, seed=3)
    close(rb.scaled_dot_product_attention(T(q), T(k), T(v), is_causal=causal, scale=scale), _sdpa(*f64(q, k, v), causal, scale))
    dy = rnd(2, 4, 5, seed=4)
    dq, dk, dv = rb.scaled_dot_product_attention_backward(T(dy), T(q), T(k), T(v), causal, scale)
    f = lambda a, b, c: _sdpa(a, b, c, causal, scale)  # noqa: E731
    close(dq, fd(f, [q, k, v], 0, dy), 1e-3)
    close(dk, fd(f, [q, k, v], 1, dy), 1e-3)
    close(dv, fd(f, [q, k, v], 2, dy), 1e-3)
    close(rb.sdpa(T(q), T(k), T(v)), _sdpa(*f64(q, k, v), False, None))


def test_weighted_sum():
    x, w, dy = rnd(2, 5, 3, seed=1), rnd(2, 5, seed=2), rnd(2, 3, seed=3)
    f = lambda a, b: np.sum(a * b[..., None], -2)  # noqa: E731
    close(rb.weighted_sum(T(x), T(w)), f(*f64(x, w)))
    dx, dw = rb.weighted_sum_backward(T(dy), T(x), T(w))
    close(dx, fd(f, [x, w], 0, dy))
    close(dw, fd(f, [x, w], 1, dy))


# ---------------------------------------------------------------------------------------
# Matrix products and fused ops


def test_linear_and_fused():
    x, w, b = rnd(2, 3, 4, seed=1), rnd(5, 4, seed=2), rnd(5, seed=3)
    close(rb.linear(T(x), T(w), T(b)), x @ w.T + b)
    close(rb.linear(T(x), T(w)), x @ w.T)
    dy = rnd(2, 3, 5, seed=4)
    dx, dw, db = rb.linear_backward(T(x), T(w), T(dy))
    close(dx, dy @ w)
    close(dw, dy.reshape(-1, 5).astype(np.float64).T @ x.reshape(-1, 4))
    close(db, dy.sum((0, 1)))
    a, bb = rnd(3, 4, seed=5), rnd(4, 5, seed=6)
    close(rb.matmul(T(a), T(bb)), a @ bb)
    z = a.astype(np.float64) @ bb + b
    close(rb.matmul_bias_act(T(a), T(bb), T(b)), z)
    close(rb.matmul_bias_act(T(a), T(bb), T(b), activation="relu"), np.maximum(z, 0))
    close(rb.matmul_bias_act(T(a), T(bb), T(b), "gelu"), _gelu(z))
    close(rb.matmul_bias_act(T(a), T(bb), T(b), "gelu_tanh"), _gelu(z, "tanh"))
    close(rb.add_relu(T(a), T(b[:4])), np.maximum(a + b[:4], 0))
    c = rnd(4, seed=7)
    close(rb.mul_add(T(a), T(c), T(a)), a * c + a)


# ---------------------------------------------------------------------------------------
# Convolution and pooling: window references


def _windows(xp, k, stride, dilation, out):
    """For each kernel offset, the strided slice of the padded input it meets."""
    nd = len(k)
    for kk in itertools.product(*(range(e) for e in k)):
        sl = tuple(slice(kk[i] * dilation[i], kk[i] * dilation[i] + stride[i] * (out[i] - 1) + 1, stride[i]) for i in range(nd))
        yield kk, xp[(slice(None), slice(None)) + sl]


def _tup(v, n):
    return [v] * n if isinstance(v, int) else list(v)


def _conv_ref(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    nd = x.ndim - 2
    s, p, d = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd)
    k = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(e, e) for e in p])
    out = [(x.shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    n, kout = x.shape[0], w.shape[0]
    cg, kg = x.shape[1] // groups, kout // groups
    y = np.zeros([n, kout] + out)
    for kk, win in _windows(xp, k, s, d, out):
        for g in range(groups):
            wk = w[(slice(g * kg, (g + 1) * kg), slice(None)) + kk]  # [kg, cg]
            y[:, g * kg : (g + 1) * kg] += np.einsum("nc...,kc->nk...", win[:, g * cg : (g + 1) * cg], wk)
    if b is not None:
        y += np.reshape(b, (1, -1) + (1,) * nd)
    return y


def _conv_transpose_ref(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    nd = x.ndim - 2
    s, p, d, op = _tup(stride, nd), _tup(padding, nd), _tup(dilation, nd), _tup(output_padding, nd)
    k = w.shape[2:]
    inn = x.shape[2:]
    out = [(inn[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + op[i] + 1 for i in range(nd)]
    full = [(inn[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + op[i] for i in range(nd)]
    cin, kg = x.shape[1], w.shape[1]
    cg = cin // groups
    y = np.zeros([x.shape[0], kg * groups] + full)
    for kk in itertools.product(*(range(e) for e in k)):
        sl = tuple(slice(kk[i] * d[i], kk[i] * d[i] + s[i] * (inn[i] - 1) + 1, s[i]) for i in range(nd))
        for g in range(groups):
            wk = w[(slice(g * cg, (g + 1) * cg), slice(None)) + kk]  # [cg, kg]
            y[(slice(None), slice(g * kg, (g + 1) * kg)) + sl] += np.einsum("nc...,ck->nk...", x[:, g * cg : (g + 1) * cg], wk)
    y = y[(slice(None), slice(None)) + tuple(slice(p[i], p[i] + out[i]) for i in range(nd))]
    if b is not None:
        y += np.reshape(b, (1, -1) + (1,) * nd)
    return y


CONVS = [
    # x shape, w shape, kwargs
    ((2, 3, 7), (4, 3, 3), {}),
    ((1, 4, 6), (4, 2, 2), dict(stride=2, padding=1, groups=2)),
    ((2, 2, 5, 6), (3, 2, 3, 3), dict(padding=1)),
    ((1, 4, 7, 7), (6, 2, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)),
    ((1, 2, 4, 4, 5), (2, 2, 2, 3, 2), dict(stride=1, padding=(0, 1, 1))),
    # kernel taps that reach past the padded input (5 taps on 1 element with padding 2)
    ((1, 4, 1), (4, 4, 5), dict(padding=2)),
    ((1, 2, 1, 1), (3, 2, 5, 5), dict(padding=2)),
]


@pytest.mark.parametrize("xs,ws,kw", CONVS)
def test_conv(xs, ws, kw):
    x, w, b = rnd(*xs, seed=1), rnd(*ws, seed=2) * 0.5, rnd(ws[0], seed=3)
    ref = _conv_ref(*f64(x, w, b), **kw)
    nd = len(xs) - 2
    close(getattr(rb, f"conv{nd}d")(T(x), T(w), T(b), **kw), ref)
    close(rb.conv(T(x), T(w), None, **kw), ref - np.reshape(b, (1, -1) + (1,) * nd))
    close(rb.conv(T(x), T(w), T(b), activation="relu", **kw), np.maximum(ref, 0))
    dy = rnd(*ref.shape, seed=4)
    f = lambda a, c: _conv_ref(a, c, None, **kw)  # noqa: E731
    close(rb.conv_backward_data(T(dy), T(w), xs, **kw), fd(f, [x, w], 0, dy, eps=1e-3), 1e-3)
    dw, db = rb.conv_backward_weight(T(x), T(dy), ws, **kw)
    close(dw, fd(f, [x, w], 1, dy, eps=1e-3), 1e-3)
    close(db, dy.sum(tuple(i for i in range(dy.ndim) if i != 1)))


CONVT = [
    ((2, 3, 5), (3, 2, 3), {}),
    ((1, 4, 4), (4, 1, 3), dict(stride=2, padding=1, output_padding=1, groups=2)),
    ((1, 2, 3, 4), (2, 3, 2, 3), dict(stride=(2, 1), padding=(0, 1), dilation=(1, 2))),
    ((1, 2, 2, 3, 2), (2, 2, 2, 2, 2), dict(stride=2)),
]


@pytest.mark.parametrize("xs,ws,kw", CONVT)
def test_conv_transpose(xs, ws, kw):
    x, w, b = rnd(*xs, seed=1), rnd(*ws, seed=2), rnd(ws[1] * kw.get("groups", 1), seed=3)
    nd = len(xs) - 2
    close(getattr(rb, f"conv_transpose{nd}d")(T(x), T(w), T(b), **kw), _conv_transpose_ref(*f64(x, w, b), **kw))
    close(rb.conv_transpose(T(x), T(w), **kw), _conv_transpose_ref(*f64(x, w), **kw))


def test_conv_bn_relu():
    x, w, b = rnd(2, 3, 5, 5, seed=1), rnd(4, 3, 3, 3, seed=2), rnd(4, seed=3)
    mean, var = rnd(4, seed=4), np.abs(rnd(4, seed=5)) + 0.5
    gamma, beta = rnd(4, seed=6), rnd(4, seed=7)
    z = _conv_ref(*f64(x, w, b), padding=1)
    ref = np.maximum(_bn(z, *f64(mean, var, gamma, beta), 1e-5), 0)
    close(rb.conv_bn_relu(T(x), T(w), T(b), T(mean), T(var), T(gamma), T(beta), padding=1), ref)
    ref0 = np.maximum(_bn(z - b.reshape(1, -1, 1, 1), *f64(mean, var, gamma, beta), 1e-3), 0)
    close(rb.conv_bn_relu(T(x), T(w), None, T(mean), T(var), T(gamma), T(beta), eps=1e-3, padding=1), ref0)


def _pool_ref(x, mode, k, stride=None, padding=0, dilation=1):
    nd = x.ndim - 2
    k = _tup(k, nd)
    s = k if stride is None else _tup(stride, nd)
    p, d = _tup(padding, nd), _tup(dilation, nd)
    out = [(x.shape[2 + i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    pads = [(0, 0), (0, 0)] + [(e, e) for e in p]
    if mode == "max":
        xp = np.pad(x, pads, constant_values=-np.inf)
        return np.max([w for _, w in _windows(xp, k, s, d, out)], 0)
    total = np.sum([w for _, w in _windows(np.pad(x, pads), k, s, d, out)], 0)
    if mode == "avg_include_pad":
        return total / np.prod(k)
    ones = np.pad(np.ones_like(x), pads)
    return total / np.sum([w for _, w in _windows(ones, k, s, d, out)], 0)


POOLS = [
    ((2, 3, 8), 3, dict(stride=2, padding=1)),
    ((1, 2, 6, 7), 2, {}),
    ((1, 2, 7, 6), (3, 2), dict(stride=(2, 1), padding=(1, 1))),
    ((1, 1, 4, 5, 4), 2, dict(stride=1)),
]


@pytest.mark.parametrize("xs,k,kw", POOLS)
@pytest.mark.parametrize("mode", ["max", "avg_include_pad", "avg_exclude_pad"])
def test_pool(xs, k, kw, mode):
    x = rnd(*xs, seed=1)
    nd = len(xs) - 2
    ref = _pool_ref(x.astype(np.float64), mode, k, **kw)
    if mode == "max":
        close(getattr(rb, f"max_pool{nd}d")(T(x), k, **kw), ref)
    else:
        close(getattr(rb, f"avg_pool{nd}d")(T(x), k, count_include_pad=mode == "avg_include_pad", **kw), ref)
    close(rb.pool(T(x), mode, k, **kw), ref)
    dy = rnd(*ref.shape, seed=2)
    close(rb.pool_backward(T(x), T(dy), mode, k, **kw), fd(lambda a: _pool_ref(a, mode, k, **kw), [x], 0, dy), 1e-3)


def test_max_pool_dilation():
    x = rnd(1, 2, 7, 7, seed=3)
    close(rb.max_pool2d(T(x), 3, stride=2, dilation=2, padding=1), _pool_ref(x, "max", 3, 2, 1, 2))


def _max_pool_ceil_ref(x, k, s, p):
    """max pooling with ceil_mode: windows may run past the right edge (but must start
    inside the input or its left padding)."""
    nd = x.ndim - 2
    out, extra = [], []
    for i in range(nd):
        n = x.shape[2 + i]
        o = -(-(n + 2 * p - k) // s) + 1
        if (o - 1) * s >= n + p:
            o -= 1
        out.append(o)
        extra.append(max(0, (o - 1) * s + k - (n + 2 * p)))
    xp = np.pad(x, [(0, 0), (0, 0)] + [(p, p + e) for e in extra], constant_values=-np.inf)
    return np.max([w for _, w in _windows(xp, [k] * nd, [s] * nd, [1] * nd, out)], 0)


@pytest.mark.parametrize("shape,k,s,p", [((1, 2, 7, 8), 3, 2, 0), ((1, 1, 6, 5), 2, 2, 1), ((2, 2, 9), 4, 3, 1)])
def test_max_pool_ceil_mode(shape, k, s, p):
    x = rnd(*shape, seed=4)
    ref = _max_pool_ceil_ref(x, k, s, p)
    close(rb.pool(T(x), "max", k, s, p, ceil_mode=True), ref)


def test_half_precision_inputs():
    a, b = rnd(3, 4, seed=1), rnd(4, seed=2)
    for dt in ("f16", "bf16"):
        r = rb.mul(T(a, dtype=dt), T(b, dtype=dt))
        assert r.dtype == dt
        close(r, a * b, 3e-2)
        close(rb.softmax(T(a, dtype=dt)), _softmax(a.astype(np.float64), -1), 1e-2)


def _adaptive_ref(x, oh, ow):
    h, w = x.shape[2:]
    y = np.zeros(x.shape[:2] + (oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, h1 = (i * h) // oh, -(-((i + 1) * h) // oh)
            w0, w1 = (j * w) // ow, -(-((j + 1) * w) // ow)
            y[:, :, i, j] = x[:, :, h0:h1, w0:w1].mean((2, 3))
    return y


@pytest.mark.parametrize("size", [(3, 2), 1, (4, 5)])
def test_adaptive_avg_pool2d(size):
    x = rnd(2, 3, 7, 5, seed=1)
    oh, ow = (size, size) if isinstance(size, int) else size
    ref = _adaptive_ref(x.astype(np.float64), oh, ow)
    close(rb.adaptive_avg_pool2d(T(x), size), ref)
    dy = rnd(*ref.shape, seed=2)
    close(rb.adaptive_avg_pool2d_backward(T(dy), x.shape), fd(lambda a: _adaptive_ref(a, oh, ow), [x], 0, dy), 1e-3)


def _adaptive_nd_ref(x, out, op):
    """adaptive_{avg,max}_pool{n}d as PyTorch computes it (float64): the window of output o
    along a dim is [floor(o*in/out), ceil((o+1)*in/out)); max: the first maximum in scan
    order, the last NaN, indices flat within each spatial plane."""
    sp = x.shape[2:]
    y = np.zeros(x.shape[:2] + tuple(out))
    idx = np.zeros(y.shape, dtype=np.int64)
    for o in np.ndindex(*out):
        sl = [slice((o[d] * sp[d]) // out[d], -(-((o[d] + 1) * sp[d]) // out[d])) for d in range(len(out))]
        for n, c in np.ndindex(*x.shape[:2]):
            w = x[(n, c) + tuple(sl)]
            if op == "avg":
                y[(n, c) + o] = w.mean()
                continue
            flat, best, m = w.reshape(-1), 0, -np.inf
            for k, v in enumerate(flat):
                if v > m or np.isnan(v):
                    best, m = k, v
            pos = np.unravel_index(best, w.shape)
            y[(n, c) + o] = m
            idx[(n, c) + o] = np.ravel_multi_index(tuple(sl[d].start + pos[d] for d in range(len(out))), sp)
    return y, idx


@pytest.mark.parametrize("layout", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape,size", [((2, 3, 11), 4), ((1, 2, 3), (5,)), ((2, 3, 7, 5), (3, 2)),
                                        ((1, 2, 3, 3), (5, None)), ((1, 2, 5, 4, 3), (2, 3, 4))])
def test_adaptive_pool_nd(shape, size, layout):
    nd = len(shape) - 2
    x = np.round(rnd(*shape, seed=3) * 2).astype(np.float32)
    x.reshape(-1)[::7] = np.nan
    out = [size] * nd if isinstance(size, int) else [shape[2 + d] if v is None else v for d, v in enumerate(size)]
    last = layout == "NHWC"
    perm = [0] + list(range(2, nd + 2)) + [1]
    inv = list(np.argsort(perm))
    to_l = (lambda a: np.ascontiguousarray(a.transpose(perm))) if last else (lambda a: a)
    to_f = (lambda a: a.transpose(inv)) if last else (lambda a: a)
    xd = x.astype(np.float64)
    ymax, imax = _adaptive_nd_ref(xd, out, "max")
    v, i = getattr(rb, f"adaptive_max_pool{nd}d")(T(to_l(x)), size, return_indices=True, layout=layout)
    assert i.dtype == "i64"
    np.testing.assert_array_equal(to_f(v.numpy()), ymax)
    np.testing.assert_array_equal(to_f(i.numpy()), imax)
    dy = rnd(*ymax.shape, seed=4)
    dx = rb.adaptive_max_pool_backward(T(to_l(dy)), i, list(to_l(x).shape), 1 if last else 0)
    want = np.zeros(x.shape)
    for pos in np.ndindex(*ymax.shape):
        want[pos[:2] + np.unravel_index(imax[pos], x.shape[2:])] += dy[pos]
    close(to_f(dx.numpy()), want)
    xa = rnd(*shape, seed=5)
    yavg, _ = _adaptive_nd_ref(xa.astype(np.float64), out, "avg")
    close(to_f(getattr(rb, f"adaptive_avg_pool{nd}d")(T(to_l(xa)), size, layout=layout).numpy()), yavg)
    dyv = rnd(*yavg.shape, seed=6)
    got = rb.adaptive_avg_pool_backward(T(to_l(dyv)), list(to_l(xa).shape), 1 if last else 0)
    close(to_f(got.numpy()), fd(lambda a: _adaptive_nd_ref(a, out, "avg")[0], [xa], 0, dyv), 1e-3)


def test_max_pool_with_indices_nhwc():
    x = np.round(rnd(2, 3, 7, 8, seed=7) * 2).astype(np.float32)
    v, i = rb.max_pool_with_indices(T(x), 3, 2, 1)
    vl, il = rb.max_pool_with_indices(T(np.ascontiguousarray(x.transpose(0, 2, 3, 1))), 3, 2, 1, layout="NHWC")
    np.testing.assert_array_equal(vl.numpy().transpose(0, 3, 1, 2), v.numpy())
    np.testing.assert_array_equal(il.numpy().transpose(0, 3, 1, 2), i.numpy())
    dy = rnd(*v.shape, seed=8)
    dx = rb.max_pool_backward_indices(T(dy), i, list(x.shape))
    dxl = rb.max_pool_backward_indices_ex(T(np.ascontiguousarray(dy.transpose(0, 2, 3, 1))), il, [2, 7, 8, 3], 1)
    close(dxl.numpy().transpose(0, 3, 1, 2), dx.numpy())


def test_adaptive_pool_errors():
    with pytest.raises(RbError) as e:
        rb.adaptive_avg_pool2d(T(rnd(1, 2, 0, 3)), 2)
    assert e.value.status == Status.SHAPE_MISMATCH
    with pytest.raises(RbError) as e:
        rb.adaptive_max_pool1d(T(rnd(1, 2, 5)), 0)
    assert e.value.status == Status.INVALID_ARGUMENT
    v = rb.adaptive_max_pool2d(T(rnd(0, 2, 4, 4)), 2)
    assert v.shape == (0, 2, 2, 2)


# ---------------------------------------------------------------------------------------
# Out, streams, NumPy inputs, errors


def test_out_and_stream_and_numpy_inputs():
    a, b = rnd(3, 4, seed=1), rnd(3, 4, seed=2)
    o = rb.empty((3, 4))
    s = rb.Stream()
    assert rb.mul(T(a), b, out=o, stream=s) is o
    s.synchronize()
    close(o, a * b)
    da, db = rb.empty((3, 4)), rb.empty((3, 4))
    r = rb.mul_backward(T(a), T(b), T(b), out=(da, None))
    assert r[0] is da and r[1] is not db
    close(da, b * b)
    close(r[1], a * b)


@pytest.mark.parametrize(
    "call,status,name",
    [
        (lambda: rb.add(T(rnd(3, 4)), T(rnd(5))), Status.SHAPE_MISMATCH, "add"),
        (lambda: rb.matmul(T(rnd(3, 4)), T(rnd(3, 4))), Status.SHAPE_MISMATCH, "matmul"),
        (lambda: rb.conv2d(T(rnd(1, 3, 5, 5)), T(rnd(2, 2, 3, 3))), Status.SHAPE_MISMATCH, "conv"),
        (lambda: rb.layer_norm(T(rnd(3, 4)), (5,)), Status.SHAPE_MISMATCH, "layer_norm"),
        (lambda: rb.sum(T(rnd(3, 4)), dim=2), Status.INVALID_ARGUMENT, "sum"),
        (lambda: rb.softmax(T(rnd(3, 4)), dim=5), Status.INVALID_ARGUMENT, "softmax"),
        (lambda: rb.group_norm(T(rnd(2, 6, 3)), 4), Status.INVALID_ARGUMENT, "group_norm"),
        (lambda: rb.embedding(T(np.array([0, 7])), T(rnd(4, 2))), Status.INVALID_ARGUMENT, "embedding"),
        (lambda: rb.embedding(T(rnd(2)), T(rnd(4, 2))), Status.DTYPE_MISMATCH, "embedding"),
        (lambda: rb.add(T(rnd(3)), T(np.arange(3, dtype=np.int32))), Status.DTYPE_MISMATCH, "add"),
        (lambda: rb.mse_loss(T(rnd(3)), T(rnd(3)), reduction="avg"), Status.INVALID_ARGUMENT, "avg"),
        (lambda: rb.adam_step(T(rnd(3)), T(rnd(3)), rb.zeros(3), rb.zeros(3), step=0), Status.INVALID_ARGUMENT, "step"),
        (lambda: rb.add(T(rnd(3)), T(rnd(3)), out=rb.empty((4,))), Status.SHAPE_MISMATCH, "add"),
    ],
)
def test_errors(call, status, name):
    with pytest.raises(RbError) as e:
        call()
    assert e.value.status == status
    assert e.value.status_name == "RB_STATUS_" + status.name
    assert name in e.value.message


def test_python_argument_errors():
    with pytest.raises(TypeError):
        rb.add(T(rnd(3)))
    with pytest.raises(TypeError):
        rb.softmax(T(rnd(3)), dims=0)
    with pytest.raises(TypeError):
        rb.fill(T(rnd(3)), 1.0, out=rb.empty(3))
    with pytest.raises(TypeError):
        rb.add_backward(T(rnd(3)), T(rnd(3)), T(rnd(3)), out=rb.empty(3))
    assert "clamp(x, min=-inf, max=inf, out=None" in rb.clamp.__doc__


def test_every_header_op_is_wrapped():
    import pathlib
    import re

    header = pathlib.Path(__file__).resolve().parents[3] / "include" / "rocm_backend.h"
    if not header.is_file():
        pytest.skip("not run from a checkout")
    src = header.read_text()
    syms = set(re.findall(r"^rb_status (rb_\w+)\(rb_stream \*stream", src, re.M))
    syms -= {s for s in syms if re.match(r"rb_(kernel|dnn|blas|memory|stream)_", s)}
    wrapped = {row[1] for row in rb._ops.OPS}
    assert sorted(syms - wrapped) == []


# ---------------------------------------------------------------------------------------
# Issue 17: tensor bounds, alpha, negative steps, gather/take, max/min with indices and
# the backward ops of matmul, permute, concat, where and conv_transpose


def test_clamp_tensor_bounds():
    x, lo, hi = rnd(3, 4, seed=1), rnd(4, seed=2) - 0.5, rnd(3, 1, seed=3) + 0.5
    ref = np.minimum(np.maximum(x, lo), hi)
    close(rb.clamp(T(x), T(lo), T(hi)), ref, 0)
    close(rb.clamp(T(x), min=T(lo)), np.maximum(x, lo), 0)
    close(rb.clamp(T(x), max=hi), np.minimum(x, hi), 0)  # a NumPy bound is a tensor bound
    close(rb.clamp(T(x), T(lo), 0.25), np.minimum(np.maximum(x, lo), 0.25), 0)
    # NaN in x or a bound propagates; min > max gives max.
    xn = np.array([np.nan, 1.0, 5.0], np.float32)
    got = rb.clamp(T(xn), T(np.array([0.0, np.nan, 3.0], np.float32)), T(np.array([1.0, 2.0, 2.0], np.float32))).numpy()
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == 2.0
    xi = np.arange(-5, 5, dtype=np.int64)
    got = rb.clamp(T(xi), T(np.full(10, -2, np.int64)), T(np.full(10, 3, np.int64))).numpy()
    assert got.dtype == np.int64 and (got == np.clip(xi, -2, 3)).all()
    with pytest.raises(RbError) as e:
        rb.clamp(T(x), T(rnd(5)), None)
    assert e.value.status == Status.SHAPE_MISMATCH


def test_clamp_tensor_backward():
    x, lo, hi, dy = rnd(3, 4, seed=4), rnd(4, seed=5) - 0.3, rnd(3, 1, seed=6) + 0.3, rnd(3, 4, seed=7)
    dx, dlo, dhi = rb.clamp_tensor_backward(T(x), T(dy), T(lo), T(hi))
    f = lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi)  # noqa: E731
    close(dx, fd(f, [x, lo, hi], 0, dy), 1e-3)
    close(dlo, fd(f, [x, lo, hi], 1, dy), 1e-3)
    close(dhi, fd(f, [x, lo, hi], 2, dy), 1e-3)
    # Ties: x == min passes to x; min > max sends everything to max.
    x = np.array([1.0, 2.0, 5.0], np.float32)
    lo = np.array([1.0, 3.0, 6.0], np.float32)
    hi = np.array([2.0, 2.0, 4.0], np.float32)
    dx, dlo, dhi = rb.clamp_tensor_backward(T(x), T(np.ones(3, np.float32)), T(lo), T(hi))
    close(dx, [1, 0, 0], 0)
    close(dlo, [0, 0, 0], 0)
    close(dhi, [0, 1, 1], 0)
    dx, dlo, dhi = rb.clamp_tensor_backward(T(x), T(np.ones(3, np.float32)), T(lo))
    close(dlo, [0, 1, 1], 0)
    assert dhi is None


@pytest.mark.parametrize("name, sign", [("add", 1), ("sub", -1)])
def test_add_sub_alpha(name, sign):
    a, b, dy = rnd(3, 4, seed=8), rnd(4, seed=9), rnd(3, 4, seed=10)
    op = getattr(rb, name)
    close(op(T(a), T(b), alpha=2.5), a + sign * 2.5 * b.astype(np.float64), 1e-5)
    close(op(T(a), T(b)), a + sign * b.astype(np.float64), 1e-6)
    close(op(T(a), T(b), alpha=0), a, 0)
    ai, bi = np.arange(6, dtype=np.int32).reshape(2, 3), np.array([1, -2, 3], np.int32)
    got = op(T(ai), T(bi), alpha=3).numpy()
    assert got.dtype == np.int32 and (got == ai + sign * 3 * bi).all()
    with pytest.raises(RbError) as e:
        op(T(ai), T(bi), alpha=0.5)
    assert e.value.status == Status.INVALID_ARGUMENT
    da, db = getattr(rb, f"{name}_scaled_backward")(T(a), T(b), T(dy), alpha=-1.5)
    f = lambda a, b: a + sign * -1.5 * b  # noqa: E731
    close(da, fd(f, [a, b], 0, dy), 1e-3)
    close(db, fd(f, [a, b], 1, dy), 1e-3)


def test_slice_negative_steps_and_backward():
    x = rnd(5, 8, 4, seed=11)
    close(rb.slice(T(x), 1, step=-1), x[:, ::-1], 0)
    close(rb.slice(T(x), 1, 6, 1, -2), x[:, 6:1:-2], 0)
    close(rb.slice(T(x), -1, -1, -9, -3), x[..., -1:-9:-3], 0)
    close(rb.slice(T(x), 0, 2, 4, -1), x[2:4:-1], 0)
    for start, end, step in [(6, 1, -2), (None, None, -1), (1, 7, 3), (None, -2, 1)]:
        dy = x[:, start:end:step]
        ref = np.zeros_like(x)
        ref[:, start:end:step] = dy
        close(rb.slice_backward(T(np.ascontiguousarray(dy)), x.shape, 1, start, end, step), ref, 0)
    with pytest.raises(RbError) as e:
        rb.slice(T(x), 0, step=0)
    assert e.value.status == Status.INVALID_ARGUMENT


def test_gather_and_take():
    x = rnd(3, 5, 4, seed=12)
    idx = np.array([[[0, -1, 2, -5]], [[4, 1, -2, 0]], [[3, 3, -3, 1]]], np.int64)  # [3, 1, 4]
    ref = np.take_along_axis(x, idx % 5, axis=1)
    close(rb.gather(T(x), 1, T(idx)), ref, 0)
    close(rb.gather(T(x), -2, T(idx.astype(np.int32))), ref, 0)
    dy = rnd(3, 1, 4, seed=13)
    dx = np.zeros_like(x, dtype=np.float64)
    for i, j, k in np.ndindex(idx.shape):
        dx[i, idx[i, j, k] % 5, k] += dy[i, j, k]
    close(rb.gather_backward(T(dy), x.shape, 1, T(idx)), dx)
    ind = np.array([[4, -1], [0, 2], [-5, 4]], np.int64)
    close(rb.take(T(x), T(ind), axis=1), np.take(x, ind, axis=1), 0)
    dy = rnd(3, 3, 2, 4, seed=14)
    dx = np.zeros_like(x, dtype=np.float64)
    np.add.at(dx, (slice(None), ind % 5), dy)
    close(rb.take_backward(T(dy), x.shape, T(ind), axis=1), dx)
    with pytest.raises(RbError) as e:
        rb.gather(T(x), 1, T(np.full((1, 1, 1), 5, np.int64)))
    assert e.value.status == Status.INVALID_ARGUMENT


@pytest.mark.parametrize("name, npf, argf", [("max_dim", np.max, np.argmax), ("min_dim", np.min, np.argmin)])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_max_min_dim(name, npf, argf, dim):
    x = np.round(rnd(4, 6, seed=15) * 2) / 2  # ties
    x[1, 3] = np.nan
    values, indices = getattr(rb, name)(T(x), dim)
    close(values, npf(x, axis=dim), 0)
    ind = indices.numpy()
    assert ind.dtype == np.int64 and (ind == argf(x, axis=dim)).all()
    values, indices = getattr(rb, name)(T(x), dim, keepdim=True)
    assert values.shape == npf(x, axis=dim, keepdims=True).shape
    dy = rnd(*values.shape, seed=16)
    ref = np.zeros_like(x)
    np.put_along_axis(ref, indices.numpy(), dy, axis=dim)
    close(rb.max_dim_backward(T(dy), indices, x.shape, dim, keepdim=True), ref, 0)


@pytest.mark.parametrize("sa, sb", [((3, 4), (4, 5)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,)), ((2, 1, 3, 4), (5, 4, 2))])
def test_matmul_backward(sa, sb):
    a, b = rnd(*sa, seed=17), rnd(*sb, seed=18)
    dy = rnd(*np.matmul(a, b).shape, seed=19)
    da, db = rb.matmul_backward(T(a), T(b), T(dy))
    close(da, fd(np.matmul, [a, b], 0, dy), 1e-3)
    close(db, fd(np.matmul, [a, b], 1, dy), 1e-3)


def test_permute_concat_where_backward():
    x = rnd(2, 3, 4, seed=20)
    y = rb.permute(T(x), (2, 0, 1))
    close(rb.permute_backward(y, (2, 0, 1)), x, 0)
    parts = [rnd(2, 3, seed=21), rnd(2, 1, seed=22), rnd(2, 4, seed=23)]
    cat = rb.cat([T(p) for p in parts], 1)
    for i, p in enumerate(parts):
        close(rb.concat_backward(cat, [T(q) for q in parts], i, dim=1), p, 0)
    cond = rnd(3, 1, seed=24) > 0
    a, b, dy = rnd(4, seed=25), rnd(3, 4, seed=26), rnd(3, 4, seed=27)
    da, db = rb.where_backward(T(cond), T(a), T(b), T(dy))
    close(da, np.where(cond, dy, 0).sum(axis=0))
    close(db, np.where(cond, 0, dy))


def test_conv_transpose_backward_split():
    x, w = rnd(2, 4, 3, 3, seed=28), rnd(4, 3, 2, 2, seed=29)
    kw = dict(stride=2, padding=1, output_padding=1)
    y = _conv_transpose_ref(*f64(x, w), **kw)
    dy = rnd(*y.shape, seed=30)
    f = lambda x, w: _conv_transpose_ref(x, w, **kw)  # noqa: E731
    close(rb.conv_transpose_backward_data(T(dy), T(w), x.shape, **kw), fd(f, [x, w], 0, dy), 1e-3)
    dw, db = rb.conv_transpose_backward_weight(T(x), T(dy), w.shape, **kw)
    close(dw, fd(f, [x, w], 1, dy), 1e-3)
    close(db, dy.astype(np.float64).sum(axis=(0, 2, 3)), 1e-4)


def test_sum_prod_dtype():
    x = rnd(3, 4, seed=31)
    close(rb.sum(T(x), 1, dtype="f16"), x.astype(np.float16).astype(np.float64).sum(1), 1e-2)
    xi = np.arange(-6, 6, dtype=np.int32).reshape(3, 4)
    got = rb.sum(T(xi), 0).numpy()
    assert got.dtype == np.int64 and (got == xi.sum(0)).all()
    got = rb.prod(T(xi + 7), 1, keepdim=True).numpy()
    assert got.dtype == np.int64 and (got == np.prod((xi + 7).astype(np.int64), 1, keepdims=True)).all()
    got = rb.sum(T(x * 10), dtype="i32").numpy()
    assert got.dtype == np.int32 and got == np.trunc(x * 10).astype(np.int32).sum()
    big = np.full(4, 2**31 - 1, np.int32)
    assert rb.sum(T(big), dtype="i32").numpy() == big.sum(dtype=np.int32)  # wraps as torch
    assert rb.sum(T(np.array([True, False, True])), 0).numpy() == 2


# ---------------------------------------------------------------------------------------
# Issue 17: attention masks, GQA, causal alignments, batch broadcasting; pooling indices,
# divisor_override and padding per side; convolution padding 'same'/'valid'/per side


def _sdpa_ex(q, k, v, mask=None, causal="none", scale=None, gqa=False):
    """PyTorch's math backend: GQA repeat_interleave, broadcasting matmuls, the mask added,
    _safe_softmax (a row of only -inf gives 0)."""
    if gqa and k.shape[-3] != q.shape[-3]:
        k = np.repeat(k, q.shape[-3] // k.shape[-3], axis=-3)
    if gqa and v.shape[-3] != q.shape[-3]:
        v = np.repeat(v, q.shape[-3] // v.shape[-3], axis=-3)
    d = q.shape[-1]
    s = q @ np.swapaxes(k, -1, -2) * (1 / math.sqrt(d) if scale is None else scale)
    sq, sk = s.shape[-2:]
    if causal != "none":
        keep = np.tril(np.ones((sq, sk), bool), 0 if causal == "top_left" else sk - sq)
        s = np.where(keep, s, -np.inf)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask)
    dead = np.all(np.isneginf(s), -1, keepdims=True)
    e = np.exp(s - np.where(dead, 0.0, np.max(s, -1, keepdims=True)))
    z = np.sum(e, -1, keepdims=True)
    p = np.where(dead, 0.0, e / np.where(z == 0, 1.0, z))
    return p @ v


SDPA_EX = [
    # q, k, v shapes, mask (shape, kind), causal, gqa
    ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3), ((1, 1, 5), "bool"), "none", False),
    ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 4), ((3, 5), "float"), "none", False),
    ((1, 4, 3, 4), (1, 2, 6, 4), (1, 2, 6, 2), None, "top_left", True),
    ((1, 4, 2, 4), (1, 1, 5, 4), (1, 1, 5, 4), None, "bottom_right", True),
    ((1, 2, 4, 4), (1, 2, 2, 4), (1, 2, 2, 3), None, "bottom_right", False),
    ((2, 3, 3, 4), (1, 3, 4, 4), (3, 4, 2), None, "none", False),
]


@pytest.mark.parametrize("qs,ks,vs,m,causal,gqa", SDPA_EX)
def test_sdpa_ex(qs, ks, vs, m, causal, gqa):
    q, k, v = rnd(*qs, seed=1), rnd(*ks, seed=2), rnd(*vs, seed=3)
    mask = None
    if m is not None:
        mask = rnd(*m[0], seed=4)
        if m[1] == "bool":
            mask = mask > -0.6
            mask[..., 0, :] = False  # a fully masked query row gives 0
        else:
            mask[..., 0, 1] = -np.inf
    ref = _sdpa_ex(*f64(q, k, v), mask=None if mask is None else (mask if mask.dtype == bool else mask.astype(np.float64)), causal=causal, gqa=gqa)
    got = rb.scaled_dot_product_attention(
        T(q), T(k), T(v), attn_mask=None if mask is None else T(mask), is_causal=causal == "top_left",
        enable_gqa=gqa, causal_lower_right=causal == "bottom_right",
    )
    close(got, ref)
    assert np.all(np.isfinite(got.numpy()))
    close(rb.scaled_dot_product_attention_ex(T(q), T(k), T(v), None if mask is None else T(mask), causal, 0.5, gqa),
          _sdpa_ex(*f64(q, k, v), mask=mask if mask is None or mask.dtype == bool else mask.astype(np.float64), causal=causal, scale=0.5, gqa=gqa))
    dy = rnd(*ref.shape, seed=5)
    dq, dk, dv = rb.scaled_dot_product_attention_ex_backward(T(dy), T(q), T(k), T(v), None if mask is None else T(mask), causal, None, gqa)
    mm = None if mask is None else (mask if mask.dtype == bool else mask.astype(np.float64))
    f = lambda a, b, c: _sdpa_ex(a, b, c, mm, causal, None, gqa)  # noqa: E731
    close(dq, fd(f, [q, k, v], 0, dy), 1e-3)
    close(dk, fd(f, [q, k, v], 1, dy), 1e-3)
    close(dv, fd(f, [q, k, v], 2, dy), 1e-3)


def test_sdpa_ex_misuse():
    q, k = rnd(1, 4, 3, 8, seed=1), rnd(1, 3, 5, 8, seed=2)
    with pytest.raises(RbError) as e:
        rb.scaled_dot_product_attention(T(q), T(k), T(k), enable_gqa=True)
    assert e.value.status == Status.SHAPE_MISMATCH
    q, k = rnd(2, 3, 8, seed=1), rnd(2, 5, 8, seed=2)
    with pytest.raises(RbError) as e:
        rb.scaled_dot_product_attention(T(q), T(k), T(k), attn_mask=np.ones((3, 5), bool), is_causal=True)
    assert e.value.status == Status.INVALID_ARGUMENT
    with pytest.raises(RbError) as e:
        rb.scaled_dot_product_attention(T(q), T(k), T(k), dropout_p=0.1)
    assert e.value.status == Status.INVALID_ARGUMENT
    with pytest.raises(RbError) as e:
        rb.scaled_dot_product_attention_ex(T(q), T(k), T(k), None, 3)
    assert e.value.status == Status.INVALID_ARGUMENT


def _max_pool_indices_ref(x, k, s, p, d=1):
    """max_pool with PyTorch's indices: ties to the first, the last NaN, flat per plane."""
    nd = x.ndim - 2
    k, s, p, d = _tup(k, nd), _tup(s, nd), _tup(p, nd), _tup(d, nd)
    sp = x.shape[2:]
    out = [(sp[i] + 2 * p[i] - d[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(nd)]
    y = np.zeros(x.shape[:2] + tuple(out))
    idx = np.zeros(x.shape[:2] + tuple(out), np.int64)
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        for o in itertools.product(*(range(e) for e in out)):
            best, bv = None, -np.inf
            for kk in itertools.product(*(range(e) for e in k)):
                pos = [o[i] * s[i] - p[i] + kk[i] * d[i] for i in range(nd)]
                if any(q < 0 or q >= sp[i] for i, q in enumerate(pos)):
                    continue
                v = x[(n, c) + tuple(pos)]
                if best is None or v > bv or np.isnan(v):
                    best, bv = int(np.ravel_multi_index(pos, sp)), v
            y[(n, c) + o], idx[(n, c) + o] = bv, best
    return y, idx


@pytest.mark.parametrize("xs,k,kw", [((2, 3, 9), 3, dict(stride=2, padding=1)), ((1, 2, 6, 7), (3, 2), dict(stride=1, padding=(1, 0))),
                                     ((1, 2, 7, 7), 3, dict(stride=2, padding=1, dilation=2)), ((1, 1, 4, 5, 4), 2, dict(stride=1))])
def test_max_pool_return_indices(xs, k, kw):
    x = np.round(rnd(*xs, seed=1) * 2)  # ties
    x.reshape(-1)[3::7] = np.nan
    nd = len(xs) - 2
    y, i = getattr(rb, f"max_pool{nd}d")(T(x), k, return_indices=True, **kw)
    ry, ri = _max_pool_indices_ref(x.astype(np.float64), k, kw.get("stride", k), kw.get("padding", 0), kw.get("dilation", 1))
    np.testing.assert_array_equal(y.numpy(), ry.astype(np.float32))
    assert i.dtype == "i64"
    np.testing.assert_array_equal(i.numpy(), ri)
    dy = rnd(*ry.shape, seed=2)
    want = np.zeros((xs[0] * xs[1], int(np.prod(xs[2:]))))
    np.add.at(want, (np.arange(xs[0] * xs[1])[:, None], ri.reshape(xs[0] * xs[1], -1)), dy.reshape(xs[0] * xs[1], -1))
    close(rb.max_pool_backward_indices(T(dy), i, list(xs)), want.reshape(xs))
    with pytest.raises(RbError) as e:
        rb.max_pool_backward_indices(T(dy), T(np.full(ri.shape, 10**6, np.int64)), list(xs))
    assert e.value.status == Status.INVALID_ARGUMENT


def _pool_sides_ref(x, mode, k, stride, before, after, divisor=None):
    """Pooling on an explicitly padded input (-inf for max, 0 for averages counting the
    padding), no ceil_mode."""
    nd = x.ndim - 2
    k, s = _tup(k, nd), _tup(stride, nd)
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(before, after)), constant_values=-np.inf if mode == "max" else 0.0)
    out = [(xp.shape[2 + i] - k[i]) // s[i] + 1 for i in range(nd)]
    wins = [w for _, w in _windows(xp, k, s, [1] * nd, out)]
    if mode == "max":
        return np.max(wins, 0)
    return np.sum(wins, 0) / (np.prod(k) if divisor is None else divisor)


@pytest.mark.parametrize("xs,k,s,pads", [((1, 2, 7, 8), (3, 2), (2, 2), [(1, 0), (0, 1)]), ((2, 3, 10), 4, 3, [(2, 1)]),
                                         ((1, 1, 4, 5, 6), 2, 1, [(0, 1), (1, 0), (1, 1)])])
def test_pool_padding_per_side(xs, k, s, pads):
    x = rnd(*xs, seed=3)
    nd = len(xs) - 2
    before, after = [p[0] for p in pads], [p[1] for p in pads]
    for mode in ("max", "avg_include_pad"):
        ref = _pool_sides_ref(x.astype(np.float64), mode, k, s, before, after)
        close(rb.pool(T(x), mode, k, s, pads), ref)
        dy = rnd(*ref.shape, seed=4)
        g = fd(lambda a: _pool_sides_ref(a, mode, k, s, before, after), [x], 0, dy)
        close(rb.pool_backward(T(x), T(dy), mode, k, s, pads), g, 1e-3)
    ref = _pool_sides_ref(x.astype(np.float64), "avg_include_pad", k, s, before, after, divisor=3)
    close(getattr(rb, f"avg_pool{nd}d")(T(x), k, s, pads, divisor_override=3), ref)


def test_avg_pool_divisor_override():
    x = rnd(2, 3, 7, 6, seed=5)
    ref = _pool_sides_ref(x.astype(np.float64), "avg_include_pad", 3, 2, [1, 1], [1, 1], divisor=5)
    close(rb.avg_pool2d(T(x), 3, 2, 1, divisor_override=5), ref)
    close(rb.avg_pool2d(T(x), 3, 2, 1, count_include_pad=False, divisor_override=5), ref)
    dy = rnd(*ref.shape, seed=6)
    g = fd(lambda a: _pool_sides_ref(a, "avg_include_pad", 3, 2, [1, 1], [1, 1], divisor=5), [x], 0, dy)
    close(rb.pool_backward(T(x), T(dy), "avg", 3, 2, 1, divisor_override=5), g, 1e-3)
    with pytest.raises(RbError) as e:
        rb.avg_pool2d(T(x), 3, divisor_override=0)
    assert e.value.status == Status.INVALID_ARGUMENT


def _conv_sides_ref(x, w, b, before, after, stride=1, dilation=1, groups=1):
    xp = np.pad(x, [(0, 0), (0, 0)] + list(zip(before, after)))
    return _conv_ref(xp, w, b, stride, 0, dilation, groups)


@pytest.mark.parametrize("xs,ws,kw", [((2, 3, 9), (4, 3, 4), dict(dilation=1)), ((1, 2, 6, 7), (3, 2, 2, 3), dict(dilation=(2, 1))),
                                      ((1, 2, 4, 5, 3), (2, 1, 2, 3, 2), dict(groups=2))])
def test_conv_padding_same_valid_and_per_side(xs, ws, kw):
    x, w, b = rnd(*xs, seed=1), rnd(*ws, seed=2) * 0.5, rnd(ws[0], seed=3)
    nd = len(xs) - 2
    dil = _tup(kw.get("dilation", 1), nd)
    total = [dil[i] * (ws[2 + i] - 1) for i in range(nd)]
    before, after = [t // 2 for t in total], [t - t // 2 for t in total]
    conv = getattr(rb, f"conv{nd}d")
    ref = _conv_sides_ref(*f64(x, w, b), before, after, **kw)
    assert ref.shape[2:] == tuple(xs[2:])  # 'same'
    close(conv(T(x), T(w), T(b), padding="same", **kw), ref)
    close(conv(T(x), T(w), T(b), padding="valid", **kw), _conv_ref(*f64(x, w, b), **kw))
    pads = [(1, 0)] + [(0, 2)] * (nd - 1)
    ref2 = _conv_sides_ref(*f64(x, w, b), [p[0] for p in pads], [p[1] for p in pads], **kw)
    close(conv(T(x), T(w), T(b), padding=pads, **kw), ref2)
    dy = rnd(*ref2.shape, seed=4)
    f = lambda a, c: _conv_sides_ref(a, c, None, [p[0] for p in pads], [p[1] for p in pads], **kw)  # noqa: E731
    close(rb.conv_backward_data(T(dy), T(w), xs, padding=pads, **kw), fd(f, [x, w], 0, dy, eps=1e-3), 1e-3)
    dw, db = rb.conv_backward_weight(T(x), T(dy), ws, padding=pads, **kw)
    close(dw, fd(f, [x, w], 1, dy, eps=1e-3), 1e-3)
    close(db, dy.sum(tuple(i for i in range(dy.ndim) if i != 1)))
    with pytest.raises(RbError) as e:
        conv(T(x), T(w), padding="same", stride=2)
    assert e.value.status == Status.INVALID_ARGUMENT


def _nhwc(a):
    return np.ascontiguousarray(np.moveaxis(a, 1, -1))


def _nchw(a):
    return np.ascontiguousarray(np.moveaxis(a, -1, 1))


@pytest.mark.parametrize("xs,ws,kw", [((2, 4, 7, 6), (6, 2, 3, 3), dict(stride=2, padding=1, groups=2)),
                                      ((1, 3, 9), (4, 3, 3), dict(dilation=2, padding="same")),
                                      ((1, 2, 4, 5, 3), (3, 2, 2, 3, 2), dict(padding=[(1, 0), (0, 1), (1, 1)]))])
def test_conv_channels_last(xs, ws, kw):
    x, w, b = rnd(*xs, seed=11), rnd(*ws, seed=12) * 0.5, rnd(ws[0], seed=13)
    ref = rb.conv(T(x), T(w), T(b), **kw).numpy()
    got = rb.conv(T(_nhwc(x)), T(_nhwc(w)), T(b), layout="NHWC", **kw).numpy()
    close(_nchw(got), ref)
    dy = rnd(*ref.shape, seed=14)
    dx = rb.conv_backward_data(T(dy), T(w), xs, **kw).numpy()
    got = rb.conv_backward_data(T(_nhwc(dy)), T(_nhwc(w)), _nhwc(x).shape, layout="channels_last", **kw).numpy()
    close(_nchw(got), dx)
    dw, db = rb.conv_backward_weight(T(x), T(dy), ws, **kw)
    gw, gb = rb.conv_backward_weight(T(_nhwc(x)), T(_nhwc(dy)), _nhwc(w).shape, layout="NHWC", **kw)
    close(_nchw(gw.numpy()), dw.numpy())
    close(gb.numpy(), db.numpy())


@pytest.mark.parametrize("xs,ws,kw", [((2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
                                      ((1, 4, 7), (4, 2, 3), dict(groups=2, dilation=2)),
                                      ((1, 2, 3, 4, 3), (2, 3, 2, 3, 2), dict(stride=(1, 2, 1), padding=(0, 1, 1)))])
def test_conv_transpose_channels_last(xs, ws, kw):
    # rb_conv_transpose_ex with RB_LAYOUT_NHWC against the float64 reference of the
    # channels-first op, forward and both gradients (dy finite differences of the reference).
    x, w, b = rnd(*xs, seed=41), rnd(*ws, seed=42) * 0.5, rnd(ws[1] * kw.get("groups", 1), seed=43)
    ref = _conv_transpose_ref(*f64(x, w, b), **kw)
    got = rb.conv_transpose(T(_nhwc(x)), T(_nhwc(w)), T(b), layout="NHWC", **kw).numpy()
    close(_nchw(got), ref)
    nd = len(xs) - 2
    got = getattr(rb, f"conv_transpose{nd}d")(T(_nhwc(x)), T(_nhwc(w)), T(b), layout="NHWC", **kw).numpy()
    close(_nchw(got), ref)
    dy = rnd(*ref.shape, seed=44)
    f = lambda x, w: _conv_transpose_ref(x, w, **kw)  # noqa: E731
    got = rb.conv_transpose_backward_data(T(_nhwc(dy)), T(_nhwc(w)), _nhwc(x).shape, layout="NHWC", **kw).numpy()
    close(_nchw(got), fd(f, [x, w], 0, dy), 1e-3)
    gw, gb = rb.conv_transpose_backward_weight(T(_nhwc(x)), T(_nhwc(dy)), _nhwc(w).shape, layout="NHWC", **kw)
    close(_nchw(gw.numpy()), fd(f, [x, w], 1, dy), 1e-3)
    close(gb.numpy(), dy.sum(tuple(i for i in range(dy.ndim) if i != 1)))


@pytest.mark.parametrize("xs,k,s,p", [((2, 8, 9, 7), 3, 2, 1), ((1, 3, 8, 8), 2, 2, 0), ((2, 5, 11), 3, 2, 1),
                                      ((1, 4, 5, 6, 7), 2, 1, 1)])
def test_pool_channels_last(xs, k, s, p):
    x = rnd(*xs, seed=21)
    nd = len(xs) - 2
    for mode in ("max", "avg_include_pad", "avg_exclude_pad"):
        ref = rb.pool(T(x), mode, k, s, p).numpy()
        got = rb.pool(T(_nhwc(x)), mode, k, s, p, layout="NHWC").numpy()
        close(_nchw(got), ref)
        dy = rnd(*ref.shape, seed=22)
        dx = rb.pool_backward(T(x), T(dy), mode, k, s, p).numpy()
        got = rb.pool_backward(T(_nhwc(x)), T(_nhwc(dy)), mode, k, s, p, layout="NHWC").numpy()
        close(_nchw(got), dx)
    got = getattr(rb, f"max_pool{nd}d")(T(_nhwc(x)), k, s, p, layout="NHWC").numpy()
    close(_nchw(got), rb.pool(T(x), "max", k, s, p).numpy())
    with pytest.raises(RbError) as e:
        rb.pool(T(x), "max", k, s, p, layout="NWHC")
    assert e.value.status == Status.INVALID_ARGUMENT


def test_to_channels_last_and_back():
    for xs in ((2, 3, 5), (2, 5, 7, 3), (1, 3, 2, 5, 4)):
        x = rnd(*xs, seed=31)
        last = rb.to_channels_last(T(x)).numpy()
        np.testing.assert_array_equal(last, _nhwc(x))
        np.testing.assert_array_equal(rb.to_channels_first(T(last)).numpy(), x)


@pytest.mark.parametrize("xs", [(4, 3), (2, 3, 7), (2, 5, 3, 4), (1, 4, 2, 3, 5)])
def test_batch_norm_channels_last(xs):
    x = rnd(*xs, seed=41)
    c = xs[1]
    w, b = rnd(c, seed=42), rnd(c, seed=43)
    xl = _nhwc(x) if len(xs) > 2 else x
    for training in (True, False):
        m1, v1 = rnd(c, seed=44), np.full(c, 1.5, np.float32)
        rm1, rv1, rm2, rv2 = T(m1), T(v1), T(m1.copy()), T(v1.copy())
        ref = rb.batch_norm(T(x), rm1, rv1, T(w), T(b), training).numpy()
        got = rb.batch_norm_channels_last(T(xl), rm2, rv2, T(w), T(b), training).numpy()
        close(_nchw(got) if len(xs) > 2 else got, ref)
        close(rm2.numpy(), rm1.numpy())
        close(rv2.numpy(), rv1.numpy())
# ---------------------------------------------------------------------------------------
# Data ops of exported models (torch semantics; numpy references, backwards by finite
# differences of the float64 forward)


@pytest.mark.parametrize("pad,mode", [
    ((1, 2), "constant"), ((1, 2), "reflect"), ((1, 2), "replicate"),
    ((2, 0, 1, 2), "reflect"), ((3, 1, 0, 2), "replicate"), ((0, -1, 2, 1), "constant"),
    ((1, 1, 2, 0, 1, 0), "constant"),
])
def test_pad(pad, mode):
    x = rnd(2, 3, 5, seed=31)
    widths = [(0, 0)] * 3
    for k in range(len(pad) // 2):
        widths[2 - k] = (pad[2 * k], pad[2 * k + 1])

    def ref(v):
        crop = tuple(slice(max(-a, 0), v.shape[d] - max(-b, 0)) for d, (a, b) in enumerate(widths))
        v = v[crop]
        w = [(max(a, 0), max(b, 0)) for a, b in widths]
        if mode == "constant":
            return np.pad(v, w, constant_values=1.5)
        return np.pad(v, w, mode={"reflect": "reflect", "replicate": "edge"}[mode])

    close(rb.pad(T(x), pad, mode, value=1.5), ref(x.astype(np.float64)), 0)
    y = ref(x)
    dy = rnd(*y.shape, seed=32)
    close(rb.pad_backward(T(dy), x.shape, pad, mode), fd(ref, [x], 0, dy), 1e-3)


def test_pad_refuses_bad_modes_and_widths():
    x = T(rnd(2, 3, seed=1))
    with pytest.raises(RbError) as e:
        rb.pad(x, (3, 0), "reflect")
    assert e.value.status == Status.INVALID_ARGUMENT and "reflect" in str(e.value)
    with pytest.raises(ValueError):
        rb.pad(x, (1, 1), "circular")


@pytest.mark.parametrize("shape,size,want", [
    ((3, 1), (2, 3, 4), (2, 3, 4)),
    ((3, 1), (5, 2, 3, 4), (5, 2, 3, 4)),
    ((2, 3, 1), (-1, 3, 4), (2, 3, 4)),
])
def test_expand(shape, size, want):
    x = rnd(*shape, seed=33)
    close(rb.expand(T(x), size), np.broadcast_to(x, want), 0)
    dy = rnd(*want, seed=34)
    f = lambda v: np.broadcast_to(v, want)  # noqa: E731
    close(rb.expand_backward(T(dy), x.shape), fd(f, [x], 0, dy), 1e-3)


@pytest.mark.parametrize("reps", [(2, 3), (2, 1, 2), (1, 1)])
def test_tile(reps):
    x = rnd(3, 4, seed=35)
    close(rb.tile(T(x), reps), np.tile(x, reps), 0)
    dy = rnd(*np.tile(x, reps).shape, seed=36)
    close(rb.tile_backward(T(dy), x.shape, reps), fd(lambda v: np.tile(v, reps), [x], 0, dy), 1e-3)


def test_flatten():
    x = rnd(2, 3, 4, 5, seed=37)
    close(rb.flatten(T(x)), x.reshape(-1), 0)
    close(rb.flatten(T(x), 1, 2), x.reshape(2, 12, 5), 0)
    close(rb.flatten(T(x), -3, -1), x.reshape(2, 60), 0)


@pytest.mark.parametrize("dim,exclusive,reverse", [(1, False, False), (0, False, False), (-1, True, False),
                                                   (1, False, True), (2, True, True)])
def test_cumsum(dim, exclusive, reverse):
    x = rnd(3, 4, 5, seed=38)

    def ref(v):
        v = np.flip(v, dim) if reverse else v
        c = np.cumsum(v, dim)
        if exclusive:
            c = c - v
        return np.flip(c, dim) if reverse else c

    close(rb.cumsum(T(x), dim, exclusive, reverse), ref(x.astype(np.float64)))
    dy = rnd(3, 4, 5, seed=39)
    close(rb.cumsum_backward(T(dy), dim, exclusive, reverse), fd(ref, [x], 0, dy), 1e-3)


@pytest.mark.parametrize("k", [-2, 0, 1, 5])
def test_triu_tril(k):
    x = rnd(2, 4, 6, seed=40)
    close(rb.triu(T(x), k), np.triu(x, k), 0)
    close(rb.tril(T(x), k), np.tril(x, k), 0)
    dy = rnd(2, 4, 6, seed=41)
    close(rb.trilu_backward(T(dy), True, k), np.triu(dy, k), 0)
    xi = np.arange(12, dtype=np.int64).reshape(3, 4)
    close(rb.tril(T(xi), k), np.tril(xi, k), 0)


def test_index_select_scatter_add_one_hot():
    x = rnd(3, 4, 5, seed=42)
    idx = np.array([2, 0, -1, 2], np.int64)
    close(rb.index_select(T(x), 1, T(idx)), np.take(x, idx, axis=1), 0)
    dy = rnd(3, 4, 5, seed=43)
    f = lambda v: np.take(v, idx, axis=1)  # noqa: E731
    close(rb.index_select_backward(T(dy), x.shape, 1, T(idx)), fd(f, [x], 0, dy), 1e-3)
    with pytest.raises(RbError) as e:
        rb.index_select(T(x), 1, T(np.array([4], np.int64)))
    assert e.value.status == Status.INVALID_ARGUMENT and "index_select" in str(e.value)

    base, src = rnd(4, 3, seed=44), rnd(2, 3, seed=45)
    index = np.array([[3, 0, 3], [3, 1, 0]], np.int64)
    want = base.astype(np.float64).copy()
    np.add.at(want, (index, np.arange(3)[None, :].repeat(2, 0)), src)
    close(rb.scatter_add(T(base), 0, T(index), T(src)), want)
    g = rnd(4, 3, seed=46)
    dx, dsrc = rb.scatter_add_backward(T(g), 0, T(index))
    close(dx, g, 0)
    close(dsrc, np.take_along_axis(g, index, 0), 0)

    labels = np.array([[0, 3], [2, 1]], np.int64)
    oh = rb.one_hot(T(labels), 4)
    assert oh.dtype == "i64"
    close(oh, np.eye(4, dtype=np.int64)[labels], 0)
    with pytest.raises(RbError) as e:
        rb.one_hot(T(np.array([4], np.int64)), 4)
    assert e.value.status == Status.INVALID_ARGUMENT


def _lrn(x, size, alpha=1e-4, beta=0.75, k=1.0):
    sq, s = x * x, np.zeros_like(x)
    for c in range(x.shape[1]):
        lo, hi = max(0, c - size // 2), min(x.shape[1] - 1, c + (size - 1) // 2)
        s[:, c] = sq[:, lo:hi + 1].sum(1)
    return x / (k + alpha / size * s) ** beta


@pytest.mark.parametrize("shape,size,attrs", [((2, 7, 3, 4), 5, {}), ((2, 6, 5), 2, dict(alpha=0.1, beta=0.5, k=2.0)),
                                              ((1, 4, 2, 2, 3), 3, dict(alpha=0.2))])
def test_local_response_norm(shape, size, attrs):
    x = rnd(*shape, seed=47)
    close(rb.local_response_norm(T(x), size, **attrs), _lrn(x.astype(np.float64), size, **attrs))
    dy = rnd(*shape, seed=48)
    close(rb.local_response_norm_backward(T(x), T(dy), size, **attrs),
          fd(lambda v: _lrn(v, size, **attrs), [x], 0, dy), 1e-3)
    with pytest.raises(RbError) as e:
        rb.local_response_norm(T(rnd(3, 4, seed=1)), 3)
    assert e.value.status == Status.SHAPE_MISMATCH


def test_max_unpool2d():
    x = rnd(2, 3, 6, 8, seed=49)
    y, i = rb.max_pool2d(T(x), 2, return_indices=True)
    u = rb.max_unpool2d(y, i, 2)
    yn, iv = y.numpy(), i.numpy()
    want = np.zeros((2, 3, 48), np.float32)
    np.put_along_axis(want, iv.reshape(2, 3, -1), yn.reshape(2, 3, -1), axis=2)
    close(u, want.reshape(2, 3, 6, 8), 0)
    assert rb.max_unpool2d(y, i, 2, output_size=(7, 9)).shape == (2, 3, 7, 9)
    dy = rnd(2, 3, 6, 8, seed=50)
    close(rb.max_unpool_backward(T(dy), i), np.take_along_axis(dy.reshape(2, 3, -1), iv.reshape(2, 3, -1), 2).reshape(yn.shape), 0)
    with pytest.raises(RbError) as e:
        rb.max_unpool2d(y, T(np.full(iv.shape, 48, np.int64)), 2)
    assert e.value.status == Status.INVALID_ARGUMENT


def _interp_ref(x, size, mode, align):
    """PyTorch's nearest / (bi|tri)linear, separable, in float64 (source indices as its f32)."""
    out = x.astype(np.float64)
    for k, n_out in enumerate(size):
        d = 2 + k
        n_in = out.shape[d]
        o = np.arange(n_out)
        if mode == "nearest":
            idx = o if n_out == n_in else np.minimum(np.floor(o.astype(np.float32) * np.float32(n_in / n_out)), n_in - 1).astype(int)
            out = np.take(out, idx, axis=d)
            continue
        if align:
            src = (np.float32((n_in - 1) / (n_out - 1)) if n_out > 1 else np.float32(0)) * o.astype(np.float32)
        else:
            src = np.maximum(np.float32(n_in / n_out) * (o.astype(np.float32) + np.float32(0.5)) - np.float32(0.5), 0)
        h0 = np.minimum(np.floor(src).astype(int), n_in - 1)
        h1 = np.where(h0 < n_in - 1, h0 + 1, h0)
        w1 = (src - h0).astype(np.float64)
        shp = [1] * out.ndim
        shp[d] = n_out
        out = np.take(out, h0, axis=d) * (1 - w1).reshape(shp) + np.take(out, h1, axis=d) * w1.reshape(shp)
    return out


@pytest.mark.parametrize("shape,size,mode,align", [
    ((2, 3, 5, 4), (7, 9), "nearest", None), ((2, 3, 5, 4), (10, 8), "nearest", None),
    ((2, 3, 5, 4), (3, 2), "nearest", None), ((1, 2, 6), (13,), "nearest", None),
    ((2, 3, 5, 4), (7, 9), "bilinear", False), ((2, 3, 5, 4), (7, 9), "bilinear", True),
    ((2, 3, 5, 4), (3, 2), "bilinear", False), ((1, 2, 6), (13,), "linear", True),
    ((1, 2, 3, 4, 2), (5, 3, 4), "trilinear", False),
])
def test_interpolate(shape, size, mode, align):
    x = rnd(*shape, seed=51)
    close(rb.interpolate(T(x), size, mode=mode, align_corners=align), _interp_ref(x, size, mode, align), 1e-5)
    dy = rnd(*(shape[:2] + tuple(size)), seed=52)
    close(rb.interpolate_backward(T(dy), shape, mode, align),
          fd(lambda v: _interp_ref(v, size, mode, align), [x], 0, dy), 1e-3)


def test_interpolate_torch_values():
    x = T(np.arange(4, dtype=np.float32).reshape(1, 1, 4))
    close(rb.interpolate(x, 8, mode="linear", align_corners=False), [[[0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3]]], 1e-6)
    close(rb.interpolate(x, 7, mode="linear", align_corners=True), [[[0, 0.5, 1, 1.5, 2, 2.5, 3]]], 1e-6)
    close(rb.interpolate(x, 8), [[[0, 0, 1, 1, 2, 2, 3, 3]]], 0)
    close(rb.interpolate(x, 3), [[[0, 1, 2]]], 0)
    with pytest.raises(ValueError):
        rb.interpolate(x, 3, mode="bicubic")


def _topk_ref(x, k, dim, largest):
    """torch.topk's values in float64 (NaN above every number), best first."""
    a = np.moveaxis(x.astype(np.float64), dim, -1)
    key = np.where(np.isnan(a), np.inf, a)
    nan = np.isnan(a)
    if largest:
        order = np.lexsort((-key, ~nan), axis=-1)  # NaN first, then descending
    else:
        order = np.lexsort((key, nan), axis=-1)  # ascending, NaN last
    vals = np.take_along_axis(a, order, -1)[..., :k]
    return np.moveaxis(vals, -1, dim)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32", "i64"])
def test_topk(dtype):
    rng = np.random.default_rng(7)
    x = rng.integers(-8, 8, (4, 6, 5)).astype(np.float32) * 0.5  # ties on purpose
    if dtype in ("f32", "f16", "bf16"):
        x[0, 1, 2] = x[2, 3, 1] = np.nan
    else:
        x = x.astype(np.int64) * 2
    t = rb.Tensor.from_numpy(x, dtype=dtype)
    xv = t.numpy().astype(np.float64)
    for dim in (0, 1, -1):
        for k in (0, 1, 3):
            for largest in (True, False):
                v, i = rb.topk(t, k, dim, largest)
                assert v.dtype == dtype and i.dtype == "i64"
                ref = _topk_ref(xv, k, dim, largest)
                close(v.numpy().astype(np.float64), ref, 0)
                idx = i.numpy()
                # the indices name elements holding the values (ties in any order), distinct
                np.testing.assert_array_equal(np.take_along_axis(xv, idx, dim), v.numpy().astype(np.float64))
                srt = np.sort(np.moveaxis(idx, dim, -1), -1)
                assert (np.diff(srt, axis=-1) > 0).all()
    with pytest.raises(RbError) as e:
        rb.topk(t, 7, 1)
    assert e.value.status == Status.INVALID_ARGUMENT and "topk" in str(e.value)


def test_topk_backward_and_empty():
    x = rnd(3, 7, seed=50)
    v, i = rb.topk(T(x), 3, 1)
    g = rnd(3, 3, seed=51)
    want = np.zeros_like(x)
    np.put_along_axis(want, i.numpy(), g, 1)
    close(rb.topk_backward(T(g), x.shape, 1, i), want, 0)
    v, i = rb.topk(T(np.zeros((0, 4), np.float32)), 2)
    assert v.shape == (0, 2) and i.shape == (0, 2)


@pytest.mark.parametrize("reduce", ["none", "add", "mul", "amax", "amin"])
@pytest.mark.parametrize("dtype", ["f32", "i32", "i64", "f16"])
def test_scatter(reduce, dtype):
    x = (np.arange(20).reshape(4, 5) % 7 - 3).astype(np.float32)
    src = (np.arange(15).reshape(3, 5) % 5 - 2).astype(np.float32)
    if reduce == "none":  # unique indices per column (duplicates are undefined in torch)
        index = np.array([[3, 0, 1, 2], [0, 1, 2, 3], [1, 2, 3, 0]], np.int64)
    else:
        index = np.array([[0, 1, 0, 3], [0, 1, 2, 3], [0, 0, 3, 3]], np.int64)
    want = x.astype(np.float64).copy()
    for r in range(3):
        for c in range(4):
            a, s = want[index[r, c], c], src[r, c]
            want[index[r, c], c] = {"none": s, "add": a + s, "mul": a * s, "amax": max(a, s), "amin": min(a, s)}[reduce]
    got = rb.scatter(rb.Tensor.from_numpy(x, dtype=dtype), 0, T(index), rb.Tensor.from_numpy(src, dtype=dtype), reduce)
    assert got.dtype == dtype
    close(got, want, 0)
    # along dim 1
    idx1 = np.array([[4, 0], [1, 3], [2, 2]], np.int64) if reduce != "none" else np.array([[4, 0], [1, 3], [2, 0]], np.int64)
    want = x.astype(np.float64).copy()
    for r in range(3):
        for c in range(2):
            a, s = want[r, idx1[r, c]], src[r, c]
            want[r, idx1[r, c]] = {"none": s, "add": a + s, "mul": a * s, "amax": max(a, s), "amin": min(a, s)}[reduce]
    got = rb.scatter(rb.Tensor.from_numpy(x, dtype=dtype), 1, T(idx1), rb.Tensor.from_numpy(src, dtype=dtype), reduce)
    close(got, want, 0)


def test_scatter_backward():
    x, src = rnd(4, 3, seed=52), rnd(2, 3, seed=53)
    index = np.array([[3, 0, 2], [1, 2, 0]], np.int64)
    f = lambda a, b: _np_scatter(a, index, b)  # noqa: E731
    got = rb.scatter(T(x), 0, T(index), T(src))
    close(got, f(x, src), 0)
    g = rnd(4, 3, seed=54)
    dx, dsrc = rb.scatter_backward(T(g), 0, T(index))
    close(dx, fd(f, [x, src], 0, g), 1e-3)
    close(dsrc, fd(f, [x, src], 1, g), 1e-3)
    with pytest.raises(RbError) as e:
        rb.scatter_backward(T(g), 0, T(index), "mul")
    assert e.value.status == Status.UNSUPPORTED
    with pytest.raises(RbError) as e:
        rb.scatter(T(x), 0, T(np.array([[4, 0, 0]], np.int64)), T(src))
    assert e.value.status == Status.INVALID_ARGUMENT and "scatter" in str(e.value)


def _np_scatter(a, index, b):
    out = np.array(a, dtype=np.float64, copy=True)
    np.put_along_axis(out, index, b, 0)
    return out


@pytest.mark.parametrize("args,kw", [((5,), {}), ((2, 9, 3), {}), ((0.5, 2.0, 0.25), {}), ((10, -10, -4), {}),
                                     ((0, 1, 0.1), {"dtype": "f32"}), ((3, 3), {}), ((1, 7, 2), {"dtype": "f16"}),
                                     ((-4, 4, 3), {"dtype": "i32"}), ((0, 5), {"dtype": "bf16"})])
def test_arange(args, kw):
    got = rb.arange(*args, **kw)
    ints = all(isinstance(a, int) for a in args)
    dt = kw.get("dtype", "i64" if ints else "f32")
    assert got.dtype == dt
    npdt = {"i64": np.int64, "i32": np.int32, "f32": np.float32, "f16": np.float16, "bf16": np.float32}[dt]
    want = np.arange(*[np.float64(a) for a in args]).astype(npdt)
    close(got, want, 0)
    dev = rb.arange(*args, device="cpu", **kw)
    close(dev, want, 0)


def test_arange_errors():
    for args, status in (((0, 5, 0), Status.INVALID_ARGUMENT), ((5, 0, 1), Status.INVALID_ARGUMENT),
                         ((0.5, 3), Status.INVALID_ARGUMENT)):
        with pytest.raises(RbError) as e:
            rb.arange(*args, dtype="i64")
        assert e.value.status == status and "arange" in str(e.value)
    with pytest.raises(RbError) as e:
        rb.arange(3, dtype="bool")
    assert e.value.status == Status.DTYPE_MISMATCH


@pytest.mark.parametrize("dtype,np_dtype", [("f64", np.float64), ("i8", np.int8), ("u8", np.uint8), ("i16", np.int16)])
def test_extended_dtypes(dtype, np_dtype):
    info = np.finfo(np_dtype) if np_dtype == np.float64 else np.iinfo(np_dtype)
    a = np.array([[info.min, info.max, 0, 1], [2, 3, 5, 7]], np_dtype)
    if np_dtype == np.float64:
        a[1] = [1.0 / 3.0, -1e-300, 1 + 2.0**-40, np.nan]
    t = rb.Tensor.from_numpy(a, dtype=dtype)
    assert t.dtype == dtype and t.nbytes == a.nbytes
    back = t.numpy()
    assert back.dtype == np_dtype
    np.testing.assert_array_equal(back, a)
    assert rb.Tensor.zeros([2], dtype).numpy().dtype == np_dtype
    # cast to and from every dtype on values both hold
    small = np.array([0, 1, 3, 100], np.float64)
    for other in ("f32", "f16", "bf16", "i32", "i64", "f64", "i8", "u8", "i16"):
        x = rb.Tensor.from_numpy(small, dtype=dtype)
        y = rb.cast(x, other)
        assert y.dtype == other
        close(y.numpy().astype(np.float64), small, 0)
        close(rb.cast(y, dtype), small, 0)
    # arithmetic wraps to the width (as torch's); comparisons; data ops
    x = rb.Tensor.from_numpy(a[1:], dtype=dtype)
    y = rb.Tensor.from_numpy(a[1:][:, ::-1].copy(), dtype=dtype)
    with np.errstate(over="ignore", invalid="ignore"):
        for f, g in ((rb.add, np.add), (rb.mul, np.multiply), (rb.sub, np.subtract), (rb.maximum, np.maximum)):
            np.testing.assert_array_equal(f(x, y).numpy(), g(a[1:], a[1:][:, ::-1]))
    np.testing.assert_array_equal(rb.lt(x, y).numpy(), a[1:] < a[1:][:, ::-1])
    np.testing.assert_array_equal(rb.permute(t, [1, 0]).numpy(), a.T)
    np.testing.assert_array_equal(rb.concat([t, t], 0).numpy(), np.concatenate([a, a]))
    if dtype != "f64":
        with pytest.raises(RbError) as e:
            rb.div(x, y)
        assert e.value.status == Status.DTYPE_MISMATCH and dtype in str(e.value)
    if dtype != "f64":
        with pytest.raises(RbError) as e:
            rb.silu(x)
        assert e.value.status == Status.DTYPE_MISMATCH and dtype in str(e.value)
    if dtype == "f64":  # the f64 unary ops compute in f64
        v = np.array([0.5, 2.0, 1 + 2.0**-40], np.float64)
        np.testing.assert_allclose(rb.exp(rb.Tensor.from_numpy(v, dtype="f64")).numpy(), np.exp(v), rtol=1e-14)
        np.testing.assert_allclose(rb.sqrt(rb.Tensor.from_numpy(v, dtype="f64")).numpy(), np.sqrt(v), rtol=1e-15)
    else:
        with pytest.raises(RbError) as e:
            rb.exp(x)
        assert e.value.status == Status.DTYPE_MISMATCH and dtype in str(e.value)


def test_f64_ops():
    """float64 inputs through the activations, reductions, softmax and norms: computed in
    f64 (values not representable in f32 survive), against float64 NumPy references."""
    def D(a):
        return rb.Tensor.from_numpy(np.asarray(a, np.float64), dtype="f64")

    def eq(got, want, rtol=1e-13):
        assert got.dtype == "f64"
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-14)

    x = (rnd(5, 7, seed=31).astype(np.float64) * 2.5) + 1e-10
    for name, kw, ref in ACTS:
        # The C API takes the parameters (slope, alpha, beta, threshold) as float: a value
        # like 0.01 arrives rounded to f32 (torch keeps a double), hence 1e-7 there.
        params = kw or name in ("leaky_relu", "elu", "celu", "softplus")
        eq(getattr(rb, name)(D(x), **kw), ref(x), 1e-7 if params else 1e-13)
    for approximate in ("none", "tanh"):
        eq(rb.gelu(D(x), approximate=approximate), _gelu(x, approximate))
    eq(rb.silu(D(x)), x / (1 + np.exp(-x)))
    for name, f in REDUCE.items():
        eq(getattr(rb, name)(D(x), 1), f(x, axis=1), 1e-12)
        eq(getattr(rb, name)(D(x)), f(x), 1e-12)
    assert rb.argmax(D(x), 1).numpy().tolist() == np.argmax(x, 1).tolist()
    eq(rb.softmax(D(x), 1), _softmax(x, 1))
    eq(rb.log_softmax(D(x), 0), _log_softmax(x, 0))
    w, b = rnd(7, seed=32).astype(np.float64), rnd(7, seed=33).astype(np.float64)
    eq(rb.layer_norm(D(x), (7,), D(w), D(b)), _layer_norm(x, (7,), w, b, 1e-5), 1e-12)
    eq(rb.rms_norm(D(x), (7,), D(w), eps=1e-6), _rms_norm(x, (7,), w, 1e-6), 1e-12)
    W = rnd(3, 7, seed=34).astype(np.float64)
    eq(rb.linear(D(x), D(W), D(b[:3])), x @ W.T + b[:3], 1e-12)
    # Broadcasting binary backward: the broadcast gradient summed in f64.
    da, db = rb.mul_backward(D(x), D(w), D(np.ones_like(x)))
    eq(da, np.broadcast_to(w, x.shape))
    eq(db, x.sum(0), 1e-12)


def test_f64_losses_data_optim():
    """float64 through the losses, cumsum, topk, the data ops' gradients and the optimizer
    steps: computed in f64, against float64 NumPy references."""
    def D(a):
        return rb.Tensor.from_numpy(np.asarray(a, np.float64), dtype="f64")

    def eq(got, want, rtol=1e-12):
        assert got.dtype == "f64"
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=1e-14)

    x = rnd(4, 5, seed=41).astype(np.float64) * 2 + 1e-10
    y = rnd(4, 5, seed=42).astype(np.float64)
    for red in ("none", "mean", "sum"):
        d = (x - y) ** 2
        eq(rb.mse_loss(D(x), D(y), red), {"none": d, "mean": d.mean(), "sum": d.sum()}[red])
    p = 1 / (1 + np.exp(-x))
    q = 1 / (1 + np.exp(-y))
    eq(rb.binary_cross_entropy(D(p), D(q), "sum"), -(q * np.log(p) + (1 - q) * np.log(1 - p)).sum())
    t = np.array([1, 4, -100, 0], np.int64)
    for red in ("none", "mean", "sum"):
        eq(rb.cross_entropy(D(x), T(t), reduction=red), _ce(x, t, red))
        eq(rb.cross_entropy(D(x), T(t), reduction=red, label_smoothing=0.125),
           _ce(x, t, red, smoothing=0.125))
    w = np.linspace(0.5, 2.0, 5)
    eq(rb.cross_entropy(D(x), T(t), D(w), reduction="mean"), _wce(x, t, w, "mean"))
    # cumsum and its backward.
    eq(rb.cumsum(D(x), 1), np.cumsum(x, 1))
    eq(rb.cumsum_backward(D(x), 0), np.cumsum(x[::-1], 0)[::-1])
    # topk in f64 and in int8 with its extremes.
    v, i = rb.topk(D(x), 2, 1)
    eq(v, -np.sort(-x, 1)[:, :2], 0)
    a8 = np.array([[-128, 127, 0, 127], [5, -1, -128, 3]], np.int8)
    v, i = rb.topk(rb.Tensor.from_numpy(a8, dtype="i8"), 2, 1, largest=False)
    assert v.dtype == "i8"
    np.testing.assert_array_equal(v.numpy(), np.sort(a8, 1)[:, :2])
    np.testing.assert_array_equal(i.numpy(), np.argsort(a8, 1, kind="stable")[:, :2])
    # SGD with momentum on f64 parameters (lr etc. are f32 attributes: 0.125 is exact).
    g = rnd(4, 5, seed=43).astype(np.float64)
    tp, tb = D(x), D(np.zeros_like(x))
    rb.sgd_step(tp, D(g), tb, lr=0.125, momentum=0.5, first_step=True)
    eq(tp, x - 0.125 * g)
    rb.sgd_step(tp, D(g), tb, lr=0.125, momentum=0.5)
    eq(tp, x - 0.125 * g - 0.125 * (0.5 * g + g))


def test_f64_optimizer_hyperparameters_widened():
    """f64 sgd_step/adam_step/adamw_step compute in f64 with the hyperparameters as the C
    ABI passes them (floats, its published signature, widened exactly): three steps match
    float64 NumPy references of torch's formulas on the float32-rounded values to 1e-14
    (an f32 computation would differ near 1e-7)."""
    f = lambda v: float(np.float32(v))
    n = 23
    p0 = 1.0 + 0.03 * np.arange(n)
    g = 0.5 - 0.021 * np.arange(n)
    D = lambda a: rb.Tensor.from_numpy(np.ascontiguousarray(a), dtype="f64")
    # SGD with momentum, dampening, weight decay.
    lr, mom, damp, wd = f(0.1), f(0.9), f(0.1), f(0.01)
    p, b = p0.copy(), np.zeros(n)
    tp, tg, tb = D(p0), D(g), D(np.zeros(n))
    for step in range(3):
        d = g + wd * p
        b = d if step == 0 else mom * b + (1 - damp) * d
        p = p - lr * b
        rb.sgd_step(tp, tg, tb, lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01, first_step=step == 0)
    np.testing.assert_allclose(tp.numpy(), p, rtol=1e-14, atol=1e-15)
    b1, b2, eps = f(0.9), f(0.999), f(1e-8)
    for name, decoupled in (("adam_step", False), ("adamw_step", True)):
        p, m, v = p0.copy(), np.zeros(n), np.zeros(n)
        tp, tm, tv = D(p0), D(np.zeros(n)), D(np.zeros(n))
        for step in range(1, 4):
            gi = g.copy()
            if decoupled:
                p = p * (1 - lr * wd)
            else:
                gi = gi + wd * p
            m = b1 * m + (1 - b1) * gi
            v = b2 * v + (1 - b2) * gi * gi
            p = p - lr / (1 - b1**step) * m / (np.sqrt(v) / np.sqrt(1 - b2**step) + eps)
            getattr(rb, name)(tp, tg, tm, tv, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01, step=step)
        np.testing.assert_allclose(tp.numpy(), p, rtol=1e-14, atol=1e-15, err_msg=name)


@pytest.mark.parametrize("dtype,np_dtype", [("i8", np.int8), ("u8", np.uint8), ("i16", np.int16)])
def test_small_int_unary_and_extremes(dtype, np_dtype):
    """neg/abs/sign/relu and max/min/argmax on the small integers, as torch's integer
    kernels (neg wraps; abs of the signed minimum is itself; u8 abs is the identity)."""
    info = np.iinfo(np_dtype)
    a = np.array([[info.min, -1 if info.min < 0 else 1, 0, 5], [info.max, 3, info.max, 2]], np_dtype)
    t = rb.Tensor.from_numpy(a, dtype=dtype)
    with np.errstate(over="ignore"):
        want = {"neg": (-a.astype(np.int64)).astype(np_dtype),
                "abs": a if np_dtype == np.uint8 else np.abs(a.astype(np.int64)).astype(np_dtype),
                "sign": np.sign(a.astype(np.int64)).astype(np_dtype),
                "relu": np.maximum(a, 0).astype(np_dtype)}
    for name, ref in want.items():
        got = getattr(rb, name)(t)
        assert got.dtype == dtype, name
        np.testing.assert_array_equal(got.numpy(), ref, err_msg=name)
    np.testing.assert_array_equal(rb.max(t, 1).numpy(), a.max(1))
    np.testing.assert_array_equal(rb.min(t).numpy(), a.min())
    assert rb.argmax(t, 1).numpy().tolist() == np.argmax(a, 1).tolist()


@pytest.mark.parametrize("dtype,np_dtype", [("i8", np.int8), ("u8", np.uint8), ("i16", np.int16)])
def test_small_int_sum_prod_promote_to_i64(dtype, np_dtype):
    a = np.array([[100, 120, 7], [127, 3, 1]], np_dtype)
    t = rb.Tensor.from_numpy(a, dtype=dtype)
    s = rb.sum(t, 1)
    assert s.dtype == "i64"  # torch: integer sums are int64
    np.testing.assert_array_equal(s.numpy(), a.astype(np.int64).sum(1))
    np.testing.assert_array_equal(rb.prod(t, 0).numpy(), a.astype(np.int64).prod(0))
    with pytest.raises(RbError) as e:
        rb.sum(t, 1, dtype=dtype)  # reductions in the small integers are not provided
    assert e.value.status == Status.DTYPE_MISMATCH and dtype in str(e.value)


@pytest.mark.parametrize("dtype,np_dtype", [("i8", np.int8), ("u8", np.uint8), ("i16", np.int16),
                                             ("i32", np.int32), ("i64", np.int64), ("bool", np.bool_)])
def test_int_cumsum_is_i64(dtype, np_dtype):
    """torch.cumsum of an integer or bool tensor returns int64 (sums past the input dtype's
    range are exact; exclusive/reverse as ONNX CumSum); an out of another dtype is refused."""
    rng = np.random.default_rng(5)
    if np_dtype == np.bool_:
        a = rng.integers(0, 2, (3, 4, 5)).astype(np.bool_)
    else:
        info = np.iinfo(np_dtype)
        lo, hi = max(info.min, -(2**40)), min(info.max, 2**40)
        a = rng.integers(lo, hi, (3, 4, 5), endpoint=True).astype(np_dtype)
    t = rb.Tensor.from_numpy(a, dtype=dtype)
    w = a.astype(np.int64)
    for dim in (0, 1, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                v = np.flip(w, dim) if reverse else w
                c = np.cumsum(v, dim)
                if exclusive:
                    c = c - v
                ref = np.flip(c, dim) if reverse else c
                got = rb.cumsum(t, dim, exclusive, reverse)
                assert got.dtype == "i64"
                np.testing.assert_array_equal(got.numpy(), ref)
    e = rb.cumsum(rb.Tensor.from_numpy(np.zeros((0, 3), np_dtype), dtype=dtype), 0)
    assert e.dtype == "i64" and e.shape == (0, 3)
    if dtype != "i64":
        with pytest.raises(RbError) as err:
            rb.cumsum(t, 0, out=rb.Tensor.from_numpy(a, dtype=dtype))
        assert err.value.status == Status.DTYPE_MISMATCH and "i64" in str(err.value)
    with pytest.raises(RbError) as err:
        rb.cumsum_backward(t, 0)  # integer tensors have no gradient
    assert err.value.status == Status.DTYPE_MISMATCH


@pytest.mark.parametrize("dtype,np_dtype", [("i8", np.int8), ("u8", np.uint8), ("i16", np.int16),
                                             ("i32", np.int32), ("i64", np.int64)])
def test_int_clamp_scalar_bounds(dtype, np_dtype):
    """torch.clamp(int_tensor, min=2, max=5) stays integer; torch converts a bound with
    Scalar::to<scalar_t> (out of range: an overflow error; u8 lets -255..-1 wrap); a
    non-integral bound would promote to float in torch: refused, cast first."""
    info = np.iinfo(np_dtype)
    a = np.array([info.min, -3 if info.min < 0 else 3, 0, 2, 4, 6, 100, info.max], np_dtype)
    t = rb.Tensor.from_numpy(a, dtype=dtype)
    for lo, hi in [(2, 5), (None, 5), (2, None), (5, 2), (-1 if info.min < 0 else 1, 0)]:
        got = rb.clamp(t, lo, hi)
        assert got.dtype == dtype
        ref = a.astype(np.int64)
        if lo is not None:
            ref = np.maximum(ref, lo)
        if hi is not None:
            ref = np.minimum(ref, hi)
        np.testing.assert_array_equal(got.numpy(), ref.astype(np_dtype))
    with pytest.raises(RbError) as e:
        rb.clamp(t, 2.5)
    assert e.value.status == Status.INVALID_ARGUMENT and "float" in str(e.value)
    with pytest.raises(RbError) as e:
        rb.clamp(t, None, float(info.max) * 2 + 2)
    assert e.value.status == Status.INVALID_ARGUMENT and "overflow" in str(e.value)
    if dtype == "u8":
        np.testing.assert_array_equal(rb.clamp(t, -1).numpy(), np.full(a.shape, 255, np.uint8))
    if dtype in ("i32", "i64"):
        # Bounds a C float cannot hold pass exactly (rb_clamp's bounds are floats, so the
        # Python wrapper sends integer bounds past 2^24 as 0-d tensors to rb_clamp_tensor).
        b = 2**24 + 1
        got = rb.clamp(rb.Tensor.from_numpy(np.array([b + 1, -b - 2], np_dtype), dtype=dtype), -b, b)
        assert got.numpy().tolist() == [b, -b]
    with pytest.raises(RbError) as e:
        rb.clamp(rb.Tensor.from_numpy(np.array([True, False]), dtype="bool"), 0, 1)
    assert e.value.status == Status.DTYPE_MISMATCH


def test_clamp_f64_float_bounds():
    """f64 clamps in double by the bounds as the C ABI passes them (floats, widened)."""
    lo = float(np.float32(0.1))  # 0.10000000149011612
    x = np.array([lo, 0.1, 0.3, np.nan, 0.2])
    got = rb.clamp(rb.Tensor.from_numpy(x, dtype="f64"), 0.1, 0.25).numpy()
    np.testing.assert_array_equal(got, np.clip(x, lo, 0.25))
    assert got[1] == lo and got[4] == 0.2  # no f32 rounding of the values themselves
    g = rb.clamp_backward(rb.Tensor.from_numpy(x, dtype="f64"), rb.Tensor.from_numpy(np.ones(5), dtype="f64"), 0.1, 0.25)
    assert g.numpy().tolist() == [1.0, 0.0, 0.0, 0.0, 1.0]


def test_int_cumsum_i64_wraps():
    a = np.array([2**63 - 1, 1, 5], np.int64)
    got = rb.cumsum(rb.Tensor.from_numpy(a, dtype="i64"), 0).numpy()
    with np.errstate(over="ignore"):
        assert got.tolist() == np.cumsum(a).tolist() == [2**63 - 1, -(2**63), -(2**63) + 5]


def test_matmul_f64():
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((2, 3, 4)), rng.standard_normal((4, 5))
    ta, tb = rb.Tensor.from_numpy(a, dtype="f64"), rb.Tensor.from_numpy(b, dtype="f64")
    y = rb.matmul(ta, tb)
    assert y.dtype == "f64"
    np.testing.assert_allclose(y.numpy(), a @ b, rtol=1e-12, atol=1e-12)
    g = rng.standard_normal((2, 3, 5))
    da, db = rb.matmul_backward(ta, tb, rb.Tensor.from_numpy(g, dtype="f64"))
    np.testing.assert_allclose(da.numpy(), g @ b.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(db.numpy(), np.einsum("bmk,bmn->kn", a, g), rtol=1e-12, atol=1e-12)


def test_f64_dnn_ops():
    """float64 through group_norm, batch_norm (+channels last), local_response_norm and
    their backwards: computed in f64, against float64 NumPy references (finite differences of
    the float64 forward for the backwards)."""
    def D(a):
        return rb.Tensor.from_numpy(np.asarray(a, np.float64), dtype="f64")

    def eq(got, want, rtol=1e-12, atol=1e-13):
        assert got.dtype == "f64"
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)

    x = rnd(2, 6, 3, seed=61).astype(np.float64) * 3 + 1e-10
    w, b = rnd(6, seed=62).astype(np.float64), rnd(6, seed=63).astype(np.float64)
    dy = rnd(2, 6, 3, seed=64).astype(np.float64)
    eq(rb.group_norm(D(x), 3, D(w), D(b)), _group_norm(x, 3, w, b, 1e-5))
    f = lambda x_, w_, b_: _group_norm(x_, 3, w_, b_, 1e-5)  # noqa: E731
    for got, i in zip(rb.group_norm_backward(D(dy), D(x), 3, D(w)), range(3)):
        eq(got, fd(f, [x, w, b], i, dy), 1e-6, 1e-7)
    eq(rb.batch_norm(D(x), training=True), _bn_train(x, np.ones(6), np.zeros(6), 1e-5))
    rm, rv = rnd(6, seed=65).astype(np.float64), np.abs(rnd(6, seed=66)).astype(np.float64) + 0.5
    trm, trv = D(rm), D(rv)
    eq(rb.batch_norm(D(x), trm, trv, D(w), D(b), training=True, momentum=0.2), _bn_train(x, w, b, 1e-5))
    eq(trm, 0.8 * rm + 0.2 * x.mean((0, 2)))
    eq(trv, 0.8 * rv + 0.2 * x.var((0, 2), ddof=1))
    eq(rb.batch_norm(D(x), D(rm), D(rv), D(w), D(b)), _bn(x, rm, rv, w, b, 1e-5))
    g = lambda x_, w_, b_: _bn_train(x_, w_, b_, 1e-5)  # noqa: E731
    for got, i in zip(rb.batch_norm_backward(D(dy), D(x), None, None, D(w), training=True), range(3)):
        eq(got, fd(g, [x, w, b], i, dy), 1e-6, 1e-7)
    xl = np.ascontiguousarray(x.transpose(0, 2, 1))  # [N, L, C]
    eq(rb.batch_norm_channels_last(D(xl), None, None, D(w), D(b), training=True),
       _bn_train(x, w, b, 1e-5).transpose(0, 2, 1))
    x4 = rnd(2, 7, 3, 2, seed=67).astype(np.float64)
    eq(rb.local_response_norm(D(x4), 5), _lrn(x4, 5))
    dy4 = rnd(2, 7, 3, 2, seed=68).astype(np.float64)
    eq(rb.local_response_norm_backward(D(x4), D(dy4), 5), fd(lambda a: _lrn(a, 5), [x4], 0, dy4), 1e-6, 1e-8)


def test_f64_pool_ops():
    """float64 pooling (max/avg forward and backward, with indices in both layouts and its
    backward, adaptive avg/max and their backwards) and linear interpolation: computed in
    f64 on every device (GPUs: double kernels), against float64 NumPy references."""
    def D(a):
        return rb.Tensor.from_numpy(np.asarray(a, np.float64), dtype="f64")

    def eq(got, want, rtol=1e-13, atol=1e-14):
        assert got.dtype == "f64"
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)

    x = rnd(2, 3, 7, 6, seed=71).astype(np.float64) + 1e-10
    for mode in ("max", "avg_include_pad"):
        ref = _pool_ref(x, mode, 3, 2, 1)
        eq(rb.pool(D(x), mode, 3, 2, 1), ref)
        dy = rnd(*ref.shape, seed=72).astype(np.float64)
        eq(rb.pool_backward(D(x), D(dy), mode, 3, 2, 1), fd(lambda a: _pool_ref(a, mode, 3, 2, 1), [x], 0, dy), 1e-6, 1e-8)
    # Max pooling with indices: ties (halves, nudged below f32's precision), NaN; both layouts.
    xt = np.round(x * 2) / 2 + 1e-10 * (np.arange(x.size).reshape(x.shape) % 2)
    xt.reshape(-1)[5::11] = np.nan
    v, i = rb.max_pool2d(D(xt), 3, stride=2, padding=1, return_indices=True)
    ry, ri = _max_pool_indices_ref(xt, 3, 2, 1, 1)
    eq(v, ry, 0, 0)
    np.testing.assert_array_equal(i.numpy(), ri)
    dy = rnd(*ry.shape, seed=73).astype(np.float64) + 1e-11
    want = np.zeros((6, 42))
    np.add.at(want, (np.arange(6)[:, None], ri.reshape(6, -1)), dy.reshape(6, -1))
    eq(rb.max_pool_backward_indices(D(dy), i, list(xt.shape)), want.reshape(xt.shape))
    vl, il = rb.max_pool_with_indices(D(np.ascontiguousarray(xt.transpose(0, 2, 3, 1))), 3, 2, 1, layout="NHWC")
    eq(rb.Tensor.from_numpy(np.ascontiguousarray(vl.numpy().transpose(0, 3, 1, 2)), dtype="f64"), ry, 0, 0)
    np.testing.assert_array_equal(il.numpy().transpose(0, 3, 1, 2), ri)
    dxl = rb.max_pool_backward_indices_ex(D(np.ascontiguousarray(dy.transpose(0, 2, 3, 1))), il, [2, 7, 6, 3], 1)
    np.testing.assert_allclose(dxl.numpy().transpose(0, 3, 1, 2), want.reshape(xt.shape), rtol=1e-13, atol=1e-14)
    # Adaptive pooling (overlapping windows), forward and backward, both layouts.
    eq(rb.adaptive_avg_pool2d(D(x), (3, 2)), _adaptive_ref(x, 3, 2))
    dy = rnd(2, 3, 3, 2, seed=74).astype(np.float64)
    eq(rb.adaptive_avg_pool2d_backward(D(dy), x.shape), fd(lambda a: _adaptive_ref(a, 3, 2), [x], 0, dy), 1e-6, 1e-8)
    ymax, imax = _adaptive_nd_ref(xt, [4, 4], "max")
    for layout in ("NCHW", "NHWC"):
        last = layout == "NHWC"
        to_l = (lambda a: np.ascontiguousarray(a.transpose(0, 2, 3, 1))) if last else (lambda a: a)
        to_f = (lambda a: a.transpose(0, 3, 1, 2)) if last else (lambda a: a)
        v, i = rb.adaptive_max_pool2d(D(to_l(xt)), 4, return_indices=True, layout=layout)
        np.testing.assert_array_equal(to_f(v.numpy()), ymax)
        np.testing.assert_array_equal(to_f(i.numpy()), imax)
        dy = rnd(*ymax.shape, seed=75).astype(np.float64) + 1e-11
        want = np.zeros(xt.shape)
        for pos in np.ndindex(*ymax.shape):
            want[pos[:2] + np.unravel_index(imax[pos], xt.shape[2:])] += dy[pos]
        dx = rb.adaptive_max_pool_backward(D(to_l(dy)), i, list(to_l(xt).shape), 1 if last else 0)
        np.testing.assert_allclose(to_f(dx.numpy()), want, rtol=1e-13, atol=1e-14)
        yavg, _ = _adaptive_nd_ref(x, [4, 4], "avg")
        got = rb.adaptive_avg_pool2d(D(to_l(x)), 4, layout=layout)
        np.testing.assert_allclose(to_f(got.numpy()), yavg, rtol=1e-13, atol=1e-14)
        got = rb.adaptive_avg_pool_backward(D(to_l(dy)), list(to_l(x).shape), 1 if last else 0)
        np.testing.assert_allclose(to_f(got.numpy()), fd(lambda a: _adaptive_nd_ref(a, [4, 4], "avg")[0], [x], 0, dy),
                                   rtol=1e-6, atol=1e-8)
    eq(rb.interpolate(D(x), (9, 11), mode="bilinear", align_corners=True),
       _interp_ref(x, (9, 11), "bilinear", True), 1e-6)  # the reference's sources are f32
    src = np.clip((np.arange(7) + 0.5) * (4 / 7) - 0.5, 0, 3)  # f64 sources, as torch's double
    eq(rb.interpolate(D(np.arange(4.0).reshape(1, 1, 4)), 7, mode="linear"), src.reshape(1, 1, 7), 1e-15)


def test_f64_attention_rope():
    """float64 scaled_dot_product_attention (+ backward) and rope / rope_cached (+ backward):
    computed in f64 (every device), against float64 NumPy references."""
    def D(a):
        return rb.Tensor.from_numpy(np.asarray(a, np.float64), dtype="f64")

    def eq(got, want, rtol=1e-12, atol=1e-13):
        assert got.dtype == "f64"
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)

    q, k, v = (rnd(2, 4, 3, seed=s).astype(np.float64) + 1e-10 for s in (81, 82, 83))
    for causal in (False, True):
        eq(rb.scaled_dot_product_attention(D(q), D(k), D(v), is_causal=causal), _sdpa(q, k, v, causal, None))
        dy = rnd(2, 4, 3, seed=84).astype(np.float64)
        got = rb.scaled_dot_product_attention_backward(D(dy), D(q), D(k), D(v), is_causal=causal)
        for i, g in enumerate(got):
            eq(g, fd(lambda a, b, c: _sdpa(a, b, c, causal, None), [q, k, v], i, dy), 1e-6, 1e-8)
    x = rnd(2, 3, 4, 6, seed=85).astype(np.float64) + 1e-10
    eq(rb.rope(D(x), -2, position_offset=3), _rope(x, -2, 10000.0, 3), 1e-13, 1e-14)
    dy = rnd(2, 3, 4, 6, seed=86).astype(np.float64)
    eq(rb.rope_backward(D(dy), -2, position_offset=3), fd(lambda a: _rope(a, -2, 10000.0, 3), [x], 0, dy), 1e-6, 1e-8)
    theta = np.arange(12)[:, None] * 10000.0 ** (-2.0 * np.arange(3) / 6)
    cos, sin = np.cos(theta), np.sin(theta)
    eq(rb.rope_cached(D(x), D(cos), D(sin), None, -2), _rope_cached(x, cos, sin, None, -2, False), 1e-13, 1e-14)


def test_f64_conv():
    """float64 convolutions (grouped, strided, dilated; transposed) and their gradients:
    computed in f64 (the CPU device), against float64 NumPy references."""
    def D(a):
        return rb.Tensor.from_numpy(np.asarray(a, np.float64), dtype="f64")

    def eq(got, want, rtol=1e-12, atol=1e-13):
        assert got.dtype == "f64"
        np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=atol)

    kw = dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2), groups=2)
    x, w, b = rnd(2, 4, 7, 6, seed=91).astype(np.float64) + 1e-10, rnd(6, 2, 3, 2, seed=92).astype(np.float64), rnd(6, seed=93).astype(np.float64)
    ref = _conv_ref(x, w, b, **kw)
    eq(rb.conv2d(D(x), D(w), D(b), **kw), ref)
    dy = rnd(*ref.shape, seed=94).astype(np.float64)
    f = lambda a, c: _conv_ref(a, c, None, **kw)  # noqa: E731
    eq(rb.conv_backward_data(D(dy), D(w), x.shape, **kw), fd(f, [x, w], 0, dy), 1e-6, 1e-8)
    dw, db = rb.conv_backward_weight(D(x), D(dy), w.shape, **kw)
    eq(dw, fd(f, [x, w], 1, dy), 1e-6, 1e-8)
    eq(db, dy.sum((0, 2, 3)))
    tkw = dict(stride=2, padding=1, output_padding=1)
    xt, wt, bt = rnd(1, 3, 4, 3, seed=95).astype(np.float64), rnd(3, 2, 3, 3, seed=96).astype(np.float64), rnd(2, seed=97).astype(np.float64)
    eq(rb.conv_transpose2d(D(xt), D(wt), D(bt), **tkw), _conv_transpose_ref(xt, wt, bt, **tkw))
