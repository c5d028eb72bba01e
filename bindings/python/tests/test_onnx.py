"""ONNX import (rb.onnx.load): models built with onnx.helper, run through an executor and
compared with ONNX's own NumPy reference implementation (onnx.reference, shipped with the
onnx package) and hand-written NumPy, plus ONNX Runtime when it is importable; operators and
attributes that cannot be mapped fail at load with the node, operator and attribute named."""

import os
import sys

import numpy as np
import pytest

import rocm_backend as rb

onnx = pytest.importorskip("onnx", reason="the optional 'onnx' package is not installed (pip install onnx)")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402
from onnx.reference.op_run import OpRun  # noqa: E402

try:
    import onnxruntime as ort
except ImportError:  # optional: compared with when present (the GPU machine has it)
    ort = None

DEVICE = os.environ.get("RB_TEST_DEVICE", "cpu")
F, F16, I64 = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT64
INT_MAX = 2**63 - 1


def _ir(opset):
    return 7 if opset <= 13 else 8 if opset <= 17 else 9 if opset <= 20 else 10


def make_model(nodes, inputs, outputs, inits=None, opset=17):
    """A checked ModelProto: `inputs`/`outputs` are (name, elem type, shape) triples."""
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(*i) for i in inputs],
        [helper.make_tensor_value_info(*o) for o in outputs],
        initializer=[numpy_helper.from_array(np.asarray(v), k) for k, v in (inits or {}).items()],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = _ir(opset)
    if all(o[2] is not None for o in outputs):
        onnx.checker.check_model(m)
    return m


class BatchNormalization(OpRun):
    """Inference batch norm in NumPy: onnx.reference's versions 6 to 13 compute training
    statistics whenever `momentum` has its default (onnx 1.23)."""

    op_domain = ""

    def _run(self, x, scale, bias, mean, var, epsilon=1e-5, **_):
        shape = (-1,) + (1,) * (x.ndim - 2)
        eps = 1e-5 if epsilon is None else epsilon
        y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + eps) * scale.reshape(shape)
        return ((y + bias.reshape(shape)).astype(x.dtype),)


class _Softmax2D(OpRun):
    """Softmax before opset 13 (the input coerced to 2-D at `axis`): onnx.reference applies
    opset 13's semantics to every version (onnx 1.23)."""

    op_domain = ""

    def _run(self, x, axis=None):
        # the default (1) from the node itself: the evaluator fills in opset 13's (-1)
        axis = next((a.i for a in self.onnx_node.attribute if a.name == "axis"), 1)
        axis = axis + x.ndim if axis < 0 else axis
        flat = x.reshape(int(np.prod(x.shape[:axis])), -1)
        e = np.exp(flat - flat.max(1, keepdims=True))
        y = e / e.sum(1, keepdims=True)
        if self.op_type == "LogSoftmax":
            y = np.log(y)
        return (y.reshape(x.shape).astype(x.dtype),)


class Softmax(_Softmax2D):
    pass


class LogSoftmax(_Softmax2D):
    pass


def reference_evaluator(model):
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    ops = [BatchNormalization] + ([Softmax, LogSoftmax] if opset < 13 else [])
    return ReferenceEvaluator(model, new_ops=ops)


def references(model, feeds, numpy_reference=True, ort_reference=True):
    """[(name, outputs)]: onnx.reference (unless `numpy_reference` is False: a model it cannot
    evaluate), ONNX Runtime when importable (unless `ort_reference` is False: a model whose
    types its CPU kernels lack)."""
    refs = []
    if numpy_reference:
        refs.append(("onnx.reference", _numpy_reference(model, feeds)))
    if ort is not None and ort_reference:
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        refs.append(("onnxruntime", sess.run(None, feeds)))
    return refs


def _numpy_reference(model, feeds):
    try:
        ref = reference_evaluator(model).run(None, feeds)
    except (TypeError, ValueError, NotImplementedError):
        # onnx.reference has bugs in a few old operator versions (BatchNormalization-7):
        # evaluate the model converted to opset 13 by onnx's version converter instead
        from onnx import version_converter

        ref = reference_evaluator(version_converter.convert_version(model, 13)).run(None, feeds)
    return ref


def check(model, feeds, rtol=1e-4, atol=1e-4, opt_level=1, numpy_reference=True, ort_reference=True,
          **kw):
    """Loads `model`, runs it on `feeds`, compares every output with the references;
    returns the outputs."""
    m = rb.onnx.load(model, device=DEVICE, opt_level=opt_level, **kw)
    got = m.run(None, feeds)
    for name, ref in references(model, feeds, numpy_reference, ort_reference):
        assert len(got) == len(ref)
        for i, (g, r) in enumerate(zip(got, ref)):
            assert g.shape == np.asarray(r).shape, (name, i, g.shape, np.asarray(r).shape)
            np.testing.assert_allclose(
                g.astype(np.float64), np.asarray(r).astype(np.float64), rtol=rtol, atol=atol,
                err_msg=f"output {i} against {name}")
    return got


def rnd(*shape, seed=0, scale=1.0, dtype=np.float32):
    return np.asarray(np.random.default_rng(seed).standard_normal(shape) * scale).astype(dtype)


OPSETS = [7, 11, 13, 17, 21]


# ---------------------------------------------------------------------------------------
# Whole models


def cnn(opset, dtype=np.float32):
    et = F16 if dtype == np.float16 else F
    inits = {
        "w1": rnd(8, 3, 3, 3, seed=1, scale=0.3, dtype=dtype),
        "b1": rnd(8, seed=2, scale=0.1, dtype=dtype),
        "g": (1 + rnd(8, seed=3, scale=0.1)).astype(dtype),
        "beta": rnd(8, seed=4, scale=0.1, dtype=dtype),
        "mean": rnd(8, seed=5, scale=0.1, dtype=dtype),
        "var": (1 + np.abs(rnd(8, seed=6))).astype(dtype),
        "w2": rnd(16, 8, 3, 3, seed=7, scale=0.2, dtype=dtype),
        "fc_w": rnd(10, 16, seed=8, scale=0.3, dtype=dtype),
        "fc_b": rnd(10, seed=9, scale=0.1, dtype=dtype),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1],
                         strides=[1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "g", "beta", "mean", "var"], ["bn"],
                         name="bn1", epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", pads=[0, 1, 1, 2],
                         strides=[2, 1]),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], transB=1),
    ]
    return make_model(nodes, [("x", et, [2, 3, 16, 16])], [("y", et, [2, 10])], inits, opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_small_cnn(opset):
    check(cnn(opset), {"x": rnd(2, 3, 16, 16, seed=10)})


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_small_cnn_every_level(level):
    tol = 3e-2 if level >= 2 else 1e-4
    check(cnn(13), {"x": rnd(2, 3, 16, 16, seed=11)}, rtol=tol, atol=tol, opt_level=level)


def test_small_cnn_f16():
    model = cnn(17, np.float16)
    x = rnd(2, 3, 16, 16, seed=12, dtype=np.float16)
    m = rb.onnx.load(model, device=DEVICE)
    got = m.run(None, {"x": x})[0]
    assert got.dtype == np.float16
    # reference: the same model in f32 (the library computes f16 ops in f32)
    ref = reference_evaluator(cnn(17)).run(None, {"x": x.astype(np.float32)})[0]
    np.testing.assert_allclose(got.astype(np.float32), ref, rtol=2e-2, atol=2e-2)


def mlp(opset):
    inits = {
        "w1": rnd(20, 32, seed=1, scale=0.2), "b1": rnd(32, seed=2, scale=0.1),
        "w2": rnd(32, 5, seed=3, scale=0.2), "b2": rnd(5, seed=4, scale=0.1),
    }
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["m1"]),
        helper.make_node("Add", ["m1", "b1"], ["a1"]),
        helper.make_node("Relu", ["a1"], ["r1"]),
        helper.make_node("MatMul", ["r1", "w2"], ["m2"]),
        helper.make_node("Add", ["m2", "b2"], ["a2"]),
        helper.make_node("Softmax", ["a2"], ["y"], axis=1 if opset < 13 else -1),
    ]
    return make_model(nodes, [("x", F, [4, 20])], [("y", F, [4, 5])], inits, opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_mlp(opset):
    check(mlp(opset), {"x": rnd(4, 20, seed=5)})


def attention(opset, B=2, S=5, E=16, H=4):
    D = E // H
    inits = {
        "wq": rnd(E, E, seed=1, scale=0.3), "wk": rnd(E, E, seed=2, scale=0.3),
        "wv": rnd(E, E, seed=3, scale=0.3), "wo": rnd(E, E, seed=4, scale=0.3),
        "bo": rnd(E, seed=5, scale=0.1), "scale": np.array(1 / np.sqrt(D), np.float32),
        "heads": np.array([0, 0, H, D], np.int64), "merge": np.array([0, 0, -1], np.int64),
    }
    nodes = []
    for p in "qkv":
        nodes += [
            helper.make_node("MatMul", ["x", f"w{p}"], [f"{p}0"]),
            helper.make_node("Reshape", [f"{p}0", "heads"], [f"{p}1"]),
            helper.make_node("Transpose", [f"{p}1"], [f"{p}h"],
                             perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("MatMul", ["qh", "kh"], ["s0"]),
        helper.make_node("Mul", ["s0", "scale"], ["s1"]),
        helper.make_node("Softmax", ["s1"], ["p"], axis=-1 if opset >= 13 else 3),
        helper.make_node("MatMul", ["p", "vh"], ["o0"]),
        helper.make_node("Transpose", ["o0"], ["o1"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["o1", "merge"], ["o2"]),
        helper.make_node("MatMul", ["o2", "wo"], ["o3"]),
        helper.make_node("Add", ["o3", "bo"], ["o4"]),
        helper.make_node("Add", ["o4", "x"], ["res"]),
    ]
    out = "res"
    if opset >= 17:
        inits["ln_g"] = 1 + rnd(E, seed=6, scale=0.1)
        inits["ln_b"] = rnd(E, seed=7, scale=0.1)
        nodes.append(helper.make_node("LayerNormalization", ["res", "ln_g", "ln_b"], ["ln"],
                                      axis=-1, epsilon=1e-5))
        out = "ln"
    if opset >= 20:
        nodes.append(helper.make_node("Gelu", [out], ["gelu"], approximate="tanh"))
        out = "gelu"
    nodes.append(helper.make_node("Identity", [out], ["y"]))
    return make_model(nodes, [("x", F, [B, S, E])], [("y", F, [B, S, E])], inits, opset)


@pytest.mark.parametrize("opset", OPSETS)
def test_attention_block(opset):
    check(attention(opset), {"x": rnd(2, 5, 16, seed=8)})


def test_dynamic_batch_and_shape_derived_constants():
    """Shape -> Gather -> Unsqueeze -> Concat -> Reshape with a symbolic batch: recorded per
    input shape, the shape arithmetic folded."""
    inits = {"zero": np.array(0, np.int64), "tail": np.array([-1], np.int64),
             "w": rnd(12, 3, seed=1)}
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n"], ["n1"], axes=[0]),
        helper.make_node("Concat", ["n1", "tail"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "w"], ["y"]),
    ]
    model = make_model(nodes, [("x", F, ["N", 3, 4])], [("y", F, ["N", 3])], inits, 11)
    m = rb.onnx.load(model, device=DEVICE)
    for n in (1, 2, 7):
        x = rnd(n, 3, 4, seed=n)
        np.testing.assert_allclose(m(x).numpy(), x.reshape(n, 12) @ inits["w"], rtol=1e-5, atol=1e-5)
        check(model, {"x": x})
    # the same with opset 13 Unsqueeze (axes an input)
    inits["ax"] = np.array([0], np.int64)
    nodes[2] = helper.make_node("Unsqueeze", ["n", "ax"], ["n1"])
    check(make_model(nodes, [("x", F, ["N", 3, 4])], [("y", F, ["N", 3])], inits, 13),
          {"x": rnd(3, 3, 4, seed=3)})


# ---------------------------------------------------------------------------------------
# Operators and their attributes


def one(op, inputs, inits=None, opset=17, n_out=1, **attrs):
    """A one-node model: `inputs` are (name, array) pairs (graph inputs), `inits` constants."""
    ins = [n for n, _ in inputs] + list((inits or {}).keys())
    node_inputs = attrs.pop("node_inputs", ins)
    node = helper.make_node(op, node_inputs, [f"y{i}" for i in range(n_out)], name="the_node", **attrs)
    vi = [(n, F if a.dtype == np.float32 else F16 if a.dtype == np.float16 else I64, list(a.shape))
          for n, a in inputs]
    outs = [(f"y{i}", F, None) for i in range(n_out)]
    return make_model([node], vi, outs, inits, opset), dict(inputs)


def test_softmax_before_opset_13_coerces_to_2d():
    x = rnd(2, 3, 4, seed=1)
    for op in ("Softmax", "LogSoftmax"):
        model, feeds = one(op, [("x", x)], opset=11, axis=1)
        got = check(model, feeds)[0]
        flat = x.reshape(2, 12)
        e = np.exp(flat - flat.max(1, keepdims=True))
        want = (e / e.sum(1, keepdims=True)).reshape(2, 3, 4)
        np.testing.assert_allclose(got, want if op == "Softmax" else np.log(want), rtol=1e-5, atol=1e-5)
        # opset 13: the axis alone
        check(*one(op, [("x", x)], opset=13, axis=1))
        # default axis (1 before 13, -1 from 13)
        check(*one(op, [("x", x)], opset=7))
        check(*one(op, [("x", x)], opset=13))


@pytest.mark.parametrize("opset", [7, 11, 13])
def test_clip(opset):
    x = rnd(3, 4, seed=2) * 3
    if opset < 11:
        check(*one("Clip", [("x", x)], opset=opset, min=-1.0, max=0.5))
        check(*one("Clip", [("x", x)], opset=opset, max=0.5))
    else:
        check(*one("Clip", [("x", x)], {"lo": np.array(-1, np.float32), "hi": np.array(0.5, np.float32)}, opset=opset))
        check(*one("Clip", [("x", x)], {"hi": np.array(0.5, np.float32)}, opset=opset,
                   node_inputs=["x", "", "hi"]))
        check(*one("Clip", [("x", x), ("lo", np.array(-0.25, np.float32))], opset=opset))


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_opset_20(approximate):
    check(*one("Gelu", [("x", rnd(3, 7, seed=3) * 2)], opset=20, approximate=approximate), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("op", ["Relu", "Sigmoid", "Tanh", "Neg", "Abs", "Exp", "Sin", "Cos"])
def test_unary(op):
    check(*one(op, [("x", rnd(2, 5, seed=4))], opset=13), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("op", ["Add", "Sub", "Mul", "Div", "Pow"])
@pytest.mark.parametrize("opset", [7, 13])
def test_binary_broadcast(op, opset):
    a = np.abs(rnd(2, 1, 4, seed=5)) + 0.5
    b = rnd(3, 1, seed=6) if op != "Pow" else np.array([[2.0], [0.5], [3.0]], np.float32)
    check(*one(op, [("a", a), ("b", b)], opset=opset), rtol=1e-5, atol=1e-5)
    check(*one(op, [("a", a)], {"c": b}, opset=opset), rtol=1e-5, atol=1e-5)
    if op == "Pow" and opset >= 13:  # an integer exponent (opset 12+)
        check(*one(op, [("a", a)], {"c": np.array(2, np.int64)}, opset=opset), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("attrs", [
    dict(transA=0, transB=0), dict(transA=1, transB=0), dict(transA=0, transB=1),
    dict(transA=1, transB=1, alpha=0.5, beta=2.0), dict(alpha=2.0, beta=0.0),
])
@pytest.mark.parametrize("c_shape", [(6,), (1, 6), (4, 6), (4, 1), ()])
def test_gemm(attrs, c_shape):
    a = rnd(*((3, 4) if attrs.get("transA") else (4, 3)), seed=7)
    b = rnd(*((6, 3) if attrs.get("transB") else (3, 6)), seed=8)
    c = rnd(*c_shape, seed=9)
    check(*one("Gemm", [("a", a)], {"b": b, "c": c}, opset=13, **attrs))
    check(*one("Gemm", [("a", a), ("b", b), ("c", c)], opset=13, **attrs))
    if not c_shape:
        check(*one("Gemm", [("a", a)], {"b": b}, opset=13, **attrs))


@pytest.mark.parametrize("shapes", [((2, 3, 4, 5), (5, 6)), ((3, 4, 5), (2, 1, 5, 2)), ((5,), (2, 5, 3)),
                                    ((2, 4, 5), (5,)), ((1, 4, 5), (3, 5, 2))])
def test_matmul_batched_broadcast(shapes):
    a, b = rnd(*shapes[0], seed=10), rnd(*shapes[1], seed=11)
    check(*one("MatMul", [("a", a), ("b", b)], opset=13))
    check(*one("MatMul", [("a", a)], {"b": b}, opset=13))


@pytest.mark.parametrize("attrs", [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[3, 2], strides=[2, 1], pads=[0, 1, 1, 0]),
    dict(kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
    dict(kernel_shape=[3, 3], auto_pad="SAME_UPPER", strides=[2, 2]),
    dict(kernel_shape=[2, 2], auto_pad="SAME_LOWER"),
    dict(kernel_shape=[2, 2], auto_pad="VALID", strides=[2, 2]),
])
@pytest.mark.parametrize("op", ["MaxPool", "AveragePool0", "AveragePool1"])
def test_pools(op, attrs):
    x = rnd(2, 3, 9, 8, seed=12)
    attrs = dict(attrs)
    if op.startswith("AveragePool"):
        attrs["count_include_pad"] = int(op[-1])
        op = "AveragePool"
        if attrs.get("ceil_mode") and attrs["count_include_pad"]:
            # a last window past the padding: refused (runtimes differ)
            with pytest.raises(rb.onnx.OnnxImportError, match="ceil_mode"):
                rb.onnx.load(one(op, [("x", x)], opset=13, **attrs)[0], device=DEVICE)
            return
    check(*one(op, [("x", x)], opset=13, **attrs), rtol=1e-5, atol=1e-5)


def test_max_pool_dilations_and_global_pools():
    x = rnd(2, 3, 10, 9, seed=13)
    check(*one("MaxPool", [("x", x)], opset=13, kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 1, 1, 1]))
    check(*one("GlobalAveragePool", [("x", x)], opset=13), rtol=1e-5, atol=1e-6)
    check(*one("GlobalMaxPool", [("x", x)], opset=13))
    check(*one("AveragePool", [("x", rnd(1, 2, 7, seed=1))], opset=7, kernel_shape=[3], pads=[1, 1]))


@pytest.mark.parametrize("attrs", [
    dict(),
    dict(strides=[2, 2]),
    dict(strides=[2, 2], pads=[1, 1, 1, 1], output_padding=[1, 1]),
    dict(strides=[2, 2], pads=[0, 1, 2, 1]),
    dict(strides=[3, 2], pads=[2, 0, 0, 1], output_padding=[2, 1]),
    dict(strides=[2, 2], auto_pad="SAME_UPPER", kernel_shape=[4, 4]),
    dict(strides=[2, 1], dilations=[2, 1]),
])
def test_conv_transpose(attrs):
    x = rnd(2, 4, 5, 5, seed=14)
    w = rnd(4, 3 if attrs.get("group") != 2 else 3, 4 if attrs.get("kernel_shape") else 3,
            4 if attrs.get("kernel_shape") else 3, seed=15, scale=0.3)
    b = rnd(w.shape[1] * attrs.get("group", 1), seed=16)
    check(*one("ConvTranspose", [("x", x)], {"w": w, "b": b}, opset=13, **attrs))


def test_conv_transpose_output_shape():
    """output_shape (onnx.reference does not take it: the reference is the same convolution
    with the pads output_shape implies)."""
    x, w, b = rnd(2, 4, 5, 5, seed=14), rnd(4, 3, 3, 3, seed=15, scale=0.3), rnd(3, seed=16)
    model, feeds = one("ConvTranspose", [("x", x)], {"w": w, "b": b}, opset=13, strides=[2, 2],
                       output_shape=[9, 11])
    got = rb.onnx.load(model, device=DEVICE).run(None, feeds)[0]
    padded, _ = one("ConvTranspose", [("x", x)], {"w": w, "b": b}, opset=13, strides=[2, 2], pads=[1, 0, 1, 0])
    assert got.shape == (2, 3, 9, 11)
    np.testing.assert_allclose(got, reference_evaluator(padded).run(None, feeds)[0], rtol=1e-4, atol=1e-4)
    if ort is not None:
        check(model, feeds, numpy_reference=False)


def test_conv_transpose_groups():
    """group=2 (onnx.reference has no grouped ConvTranspose: the reference is two
    ungrouped halves, concatenated)."""
    x, w, b = rnd(2, 4, 5, 5, seed=14), rnd(4, 3, 3, 3, seed=15, scale=0.3), rnd(6, seed=16)
    attrs = dict(strides=[2, 1], dilations=[2, 1], pads=[1, 0, 0, 1])
    model, feeds = one("ConvTranspose", [("x", x)], {"w": w, "b": b}, opset=13, group=2, **attrs)
    got = rb.onnx.load(model, device=DEVICE).run(None, feeds)[0]
    halves = []
    for g in range(2):
        m, f = one("ConvTranspose", [("x", x[:, 2 * g:2 * g + 2])], {"w": w[2 * g:2 * g + 2], "b": b[3 * g:3 * g + 3]},
                   opset=13, **attrs)
        halves.append(reference_evaluator(m).run(None, f)[0])
    np.testing.assert_allclose(got, np.concatenate(halves, 1), rtol=1e-4, atol=1e-4)
    if ort is not None:
        check(model, feeds, numpy_reference=False)


@pytest.mark.parametrize("attrs", [
    dict(group=2, dilations=[2, 1], strides=[1, 2]),
    dict(auto_pad="SAME_UPPER", strides=[2, 2]),
    dict(auto_pad="SAME_LOWER"),
    dict(auto_pad="VALID"),
])
def test_conv_attributes(attrs):
    x = rnd(1, 4, 9, 8, seed=17)
    w = rnd(6, 2 if attrs.get("group") else 4, 3, 2, seed=18, scale=0.3)
    check(*one("Conv", [("x", x)], {"w": w}, opset=11, **attrs))
    check(*one("Conv", [("x", rnd(1, 4, 11, seed=19))], {"w": rnd(6, 4, 3, seed=20)}, opset=11,
               pads=[2, 1], strides=[2]))


def _np_slice(x, starts, ends, axes, steps):
    idx = [slice(None)] * x.ndim
    for s, e, a, k in zip(starts, ends, axes, steps):
        d = x.shape[a]
        s = s + d if s < 0 else s
        e = e + d if e < 0 else e
        if k > 0:
            s, e = min(max(s, 0), d), min(max(e, 0), d)
        else:
            s, e = min(max(s, 0), d - 1), min(max(e, -1), d - 1)
        idx[a] = slice(s, None if e < 0 else e, k)
    return x[tuple(idx)]


@pytest.mark.parametrize("case", [
    ([1, 0], [3, INT_MAX], [0, 2], [1, 1]),
    ([-3], [-1], [1], [1]),
    ([0, 1], [INT_MAX, 100], [-1, 0], [2, 1]),
    ([-1], [-INT_MAX], [2], [-1]),
    ([4, 2], [0, -100], [2, 1], [-2, -1]),
    ([-100], [100], [1], [3]),
    ([5], [2], [0], [1]),
])
def test_slice(case):
    x = rnd(3, 4, 6, seed=21)
    starts, ends, axes, steps = case
    inits = {"st": np.array(starts, np.int64), "en": np.array(ends, np.int64),
             "ax": np.array(axes, np.int64), "sp": np.array(steps, np.int64)}
    got = check(*one("Slice", [("x", x)], inits, opset=13))[0]
    np.testing.assert_array_equal(got, _np_slice(x, starts, ends, [a % 3 for a in axes], steps))
    if all(k == 1 for k in steps):  # opset < 10: attributes, no steps
        model, feeds = one("Slice", [("x", x)], opset=9, starts=starts, ends=ends, axes=axes)
        np.testing.assert_array_equal(check(model, feeds)[0], got)
        # opset 10: inputs without steps
        del inits["sp"]
        check(*one("Slice", [("x", x)], inits, opset=10))


def test_concat_gather():
    a, b = rnd(2, 3, seed=22), rnd(2, 5, seed=23)
    check(*one("Concat", [("a", a), ("b", b)], opset=7, axis=1))
    check(*one("Concat", [("a", a)], {"c": b}, opset=13, axis=-1))
    x = rnd(5, 4, seed=24)
    for idx, axis in ((np.array([0, -1, 2], np.int64), 0), (np.array(2, np.int64), 1),
                      (np.array([[1, 0], [-2, 3]], np.int64), 1)):
        check(*one("Gather", [("x", x)], {"i": idx}, opset=13, axis=axis))
    # indices from the graph (an embedding lookup)
    check(*one("Gather", [("i", np.array([[1, 4], [0, 3]], np.int64))], {"emb": x}, opset=13,
               node_inputs=["emb", "i"]))


@pytest.mark.parametrize("op", ["ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd"])
@pytest.mark.parametrize("opset", [11, 13, 18])
@pytest.mark.parametrize("axes,keepdims", [([1], 1), ([0, -1], 0), (None, 1), (None, 0)])
def test_reduce(op, opset, axes, keepdims):
    x = rnd(2, 3, 4, seed=25)
    as_input = opset >= (13 if op == "ReduceSum" else 18)
    if as_input:
        inits = {} if axes is None else {"axes": np.array(axes, np.int64)}
        check(*one(op, [("x", x)], inits, opset=opset, keepdims=keepdims), rtol=1e-5, atol=1e-5)
    else:
        kw = {} if axes is None else {"axes": axes}
        check(*one(op, [("x", x)], opset=opset, keepdims=keepdims, **kw), rtol=1e-5, atol=1e-5)


def test_reduce_noop_with_empty_axes():
    x = rnd(2, 3, seed=26)
    got = check(*one("ReduceSum", [("x", x)], opset=13, noop_with_empty_axes=1))[0]
    np.testing.assert_array_equal(got, x)
    got = check(*one("ReduceMean", [("x", x)], opset=18, noop_with_empty_axes=0))[0]
    assert got.shape == (1, 1)


@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_norm(axis):
    x = rnd(2, 3, 8, seed=27)
    shape = x.shape[axis:]
    inits = {"g": 1 + rnd(*shape, seed=28, scale=0.1), "b": rnd(*shape, seed=29, scale=0.1)}
    check(*one("LayerNormalization", [("x", x)], inits, opset=17, axis=axis, epsilon=1e-3), rtol=1e-4, atol=1e-4)


def test_reshape_flatten_transpose_squeeze():
    x = rnd(2, 3, 4, seed=30)
    check(*one("Reshape", [("x", x)], {"s": np.array([0, -1], np.int64)}, opset=13))
    check(*one("Reshape", [("x", x)], {"s": np.array([4, 0, 2, -1], np.int64)}, opset=13))
    check(*one("Reshape", [("x", x)], {"s": np.array([6, 4], np.int64)}, opset=14, allowzero=1))
    for axis in (0, 1, 2, 3, -1):
        check(*one("Flatten", [("x", x)], opset=13, axis=axis))
    check(*one("Transpose", [("x", x)], opset=13))
    check(*one("Transpose", [("x", x)], opset=13, perm=[1, 0, 2]))
    y = rnd(2, 1, 4, 1, seed=31)
    check(*one("Squeeze", [("x", y)], opset=11, axes=[1]))
    check(*one("Squeeze", [("x", y)], opset=11))
    check(*one("Squeeze", [("x", y)], {"a": np.array([-1], np.int64)}, opset=13))
    check(*one("Unsqueeze", [("x", x)], opset=11, axes=[0, 4]))
    check(*one("Unsqueeze", [("x", x)], {"a": np.array([1, -1], np.int64)}, opset=13))


def test_constants_dropout_identity_cast_expand_where():
    x = rnd(2, 3, seed=32)
    c = helper.make_tensor("c", F, [3], [1.0, 2.0, 3.0])
    nodes = [
        helper.make_node("Constant", [], ["k"], value=c),
        helper.make_node("Constant", [], ["k2"], value_float=0.5),
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("ConstantOfShape", ["sh"], ["ones"],
                         value=helper.make_tensor("v", F, [1], [1.5])),
        helper.make_node("Mul", ["x", "k"], ["m"]),
        helper.make_node("Add", ["m", "ones"], ["a"]),
        helper.make_node("Mul", ["a", "k2"], ["a2"]),
        helper.make_node("Dropout", ["a2", "ratio"], ["d", "mask"]),
        helper.make_node("Identity", ["d"], ["i"]),
        helper.make_node("Cast", ["i"], ["h"], to=TensorProto.FLOAT16),
        helper.make_node("Cast", ["h"], ["f"], to=TensorProto.FLOAT),
        helper.make_node("Greater", ["f", "k2"], ["gt"]),
        helper.make_node("Where", ["gt", "f", "k2"], ["w"]),
        helper.make_node("Expand", ["w", "es"], ["y"]),
    ]
    inits = {"es": np.array([4, 2, 1], np.int64), "ratio": np.array(0.3, np.float32)}
    check(make_model(nodes, [("x", F, [2, 3])], [("y", F, None)], inits, 13), {"x": x}, rtol=1e-3, atol=1e-3)
    # an output that is a constant, one that is an input, one that is a view
    nodes = [helper.make_node("Constant", [], ["k"], value=c),
             helper.make_node("Identity", ["x"], ["same"]),
             helper.make_node("Reshape", ["x", "s"], ["view"])]
    model = make_model(nodes, [("x", F, [2, 3])], [("k", F, None), ("same", F, None), ("view", F, None)],
                       {"s": np.array([3, 2], np.int64)}, 13)
    check(model, {"x": x})


@pytest.mark.parametrize("op,opset,attrs", [
    ("LeakyRelu", 13, {}),
    ("Elu", 13, {}),
    ("Elu", 13, {"alpha": 0.4}),
    ("Selu", 13, {}),
    ("Selu", 13, {"alpha": 1.2, "gamma": 0.9}),
    ("Celu", 13, {"alpha": 0.7}),
    ("HardSigmoid", 13, {}),
    ("HardSigmoid", 13, {"alpha": 1.0 / 6.0, "beta": 0.5}),
    ("Softplus", 13, {}),
    ("Softsign", 13, {}),
    ("Mish", 18, {}),
    ("Erf", 13, {}),
    ("Sign", 13, {}),
    ("Floor", 13, {}),
    ("Ceil", 13, {}),
    ("Round", 13, {}),
    ("Reciprocal", 13, {}),
])
def test_activations_and_rounding(op, opset, attrs):
    x = rnd(4, 9, seed=60) * 3
    if op == "Round":
        x[0, :6] = [-2.5, -1.5, -0.5, 0.5, 1.5, 2.5]  # halves to even
    check(*one(op, [("x", x)], opset=opset, **attrs), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("slope_shape", [(3, 1, 1), (1,), (), (5,), (1, 1, 5)])
def test_prelu(slope_shape):
    x = rnd(2, 3, 4, 5, seed=62)
    slope = rnd(*slope_shape, seed=63) if slope_shape else np.array(0.3, np.float32)
    check(*one("PRelu", [("x", x)], {"slope": slope}, opset=13), rtol=1e-6, atol=1e-6)
    # a slope that is a graph input: the general form
    check(*one("PRelu", [("x", x), ("slope", slope)], opset=13), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode,pads,opset", [
    ("constant", [0, 1, 2, 0, 0, 2, 1, 1], 13),
    ("reflect", [0, 0, 1, 2, 0, 0, 2, 1], 13),
    ("edge", [0, 1, 2, 0, 0, 2, 1, 3], 13),
    ("reflect", [0, 0, 1, 2, 0, 0, 2, 1], 7),
])
def test_pad(mode, pads, opset):
    x = rnd(2, 3, 4, 5, seed=70)
    if opset < 11:
        check(*one("Pad", [("x", x)], opset=opset, mode=mode, pads=pads), rtol=0, atol=0)
        return
    inits = {"pads": np.array(pads, np.int64), "v": np.array(0.75, np.float32)}
    check(*one("Pad", [("x", x)], inits, opset=opset, mode=mode), rtol=0, atol=0)


def test_pad_axes_opset_18():
    x = rnd(2, 3, 4, seed=71)
    inits = {"pads": np.array([1, 2, 0, 3], np.int64), "v": np.array(1.5, np.float32),
             "axes": np.array([-1, 1], np.int64)}
    check(*one("Pad", [("x", x)], inits, opset=18, mode="constant"), rtol=0, atol=0)


def test_tile_cumsum_trilu():
    x = rnd(3, 4, seed=72)
    check(*one("Tile", [("x", x)], {"r": np.array([2, 3], np.int64)}, opset=13), rtol=0, atol=0)
    for excl in (0, 1):
        for rev in (0, 1):
            check(*one("CumSum", [("x", x)], {"ax": np.array(1, np.int64)}, opset=14,
                       exclusive=excl, reverse=rev), rtol=1e-5, atol=1e-5)
    for upper in (0, 1):
        check(*one("Trilu", [("x", x)], {"k": np.array(1, np.int64)}, opset=14, upper=upper),
              rtol=0, atol=0)
        check(*one("Trilu", [("x", rnd(2, 3, 5, seed=73))], opset=14, upper=upper), rtol=0, atol=0)


def test_gather_scatter_elements_one_hot():
    x = rnd(3, 4, seed=74)
    idx = np.array([[0, 2, 1, 0], [2, 2, 0, 1]], np.int64)
    check(*one("GatherElements", [("x", x)], {"i": idx}, opset=13, axis=0), rtol=0, atol=0)
    check(*one("ScatterElements", [("x", x)], {"i": idx, "u": rnd(2, 4, seed=75)}, opset=16,
               axis=0, reduction="add"), rtol=1e-6, atol=1e-6)
    e = _load_error(one("ScatterElements", [("x", x)], {"i": idx, "u": rnd(2, 4, seed=75)},
                        opset=16, axis=0, reduction="max")[0])
    assert "(ScatterElements)" in str(e) and e.attribute == "reduction"
    labels = np.array([[1, 0, 3], [2, 2, -1]], np.int64)
    for axis, values in ((-1, [0.0, 1.0]), (0, [-1.0, 2.0]), (1, [0.0, 1.0])):
        check(*one("OneHot", [("x", x)], {"l": labels, "d": np.array(4, np.int64),
                                           "v": np.array(values, np.float32)},
                   opset=11, axis=axis, node_inputs=["l", "d", "v"]), rtol=0, atol=0)


@pytest.mark.parametrize("attrs", [dict(size=5), dict(size=3, alpha=0.01, beta=0.5, bias=2.0), dict(size=1)])
def test_lrn(attrs):
    # N == C: onnx.reference's LRN loops its channel window over range(N) (channels past N
    # keep a zero square sum, fewer fail), so other batches would test its bug
    check(*one("LRN", [("x", rnd(5, 5, 4, 3, seed=76))], opset=13, **attrs), rtol=1e-5, atol=1e-6)


def test_lrn_even_size_refused():
    e = _load_error(one("LRN", [("x", rnd(2, 7, 4, 3, seed=76))], opset=13, size=4)[0])
    assert "(LRN)" in str(e) and e.attribute == "size"


def test_max_unpool():
    # MaxPool's values and indices (flat over the whole tensor, as ONNX writes them), then
    # MaxUnpool with and without output_shape
    x = rnd(2, 3, 6, 8, seed=77)
    win = x.reshape(2, 3, 3, 2, 4, 2).transpose(0, 1, 2, 4, 3, 5).reshape(2, 3, 3, 4, 4)
    arg = win.argmax(-1)
    vals = np.take_along_axis(win, arg[..., None], -1)[..., 0]
    h = np.arange(3)[:, None] * 2 + arg // 2
    w = np.arange(4)[None, :] * 2 + arg % 2
    plane = (np.arange(2)[:, None] * 3 + np.arange(3)[None, :])[:, :, None, None] * 48
    idx = (plane + h * 8 + w).astype(np.int64)
    check(*one("MaxUnpool", [("x", vals)], {"i": idx}, opset=11, kernel_shape=[2, 2], strides=[2, 2]),
          rtol=0, atol=0)
    got = check(*one("MaxUnpool", [("x", vals)], {"i": idx, "s": np.array([2, 3, 6, 8], np.int64)},
                     opset=11, kernel_shape=[2, 2], strides=[2, 2]), rtol=0, atol=0)[0]
    np.testing.assert_array_equal(got, np.where(got != 0, x, 0))


@pytest.mark.parametrize("attrs,sizes,scales", [
    (dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), [2, 3, 10, 8], None),
    (dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), None, [1, 1, 2.0, 3.0]),
    (dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"), [2, 3, 7, 9], None),
    (dict(mode="linear", coordinate_transformation_mode="half_pixel"), None, [1, 1, 2.0, 2.0]),
    (dict(mode="linear", coordinate_transformation_mode="align_corners"), [2, 3, 7, 9], None),
])
def test_resize(attrs, sizes, scales):
    x = rnd(2, 3, 5, 4, seed=78)
    inits = {"roi": np.array([], np.float32),
             "scales": np.array(scales if scales else [], np.float32)}
    if sizes:
        inits["sizes"] = np.array(sizes, np.int64)
    model, feeds = one("Resize", [("x", x)], inits, opset=13, node_inputs=["x"] + list(inits), **attrs)
    check(model, feeds, rtol=1e-5, atol=1e-5)


def test_resize_refuses_unmapped_modes():
    x = rnd(1, 1, 4, 4, seed=79)
    inits = {"roi": np.array([], np.float32), "scales": np.array([1, 1, 2, 2], np.float32)}
    e = _load_error(one("Resize", [("x", x)], inits, opset=13, mode="cubic")[0])
    assert "(Resize)" in str(e) and e.attribute == "mode"
    e = _load_error(one("Resize", [("x", x)], inits, opset=13, mode="nearest")[0])
    assert e.attribute == "coordinate_transformation_mode"


def test_activation_attributes_refused():
    e = _load_error(one("Celu", [("x", rnd(2, 3, seed=61))], opset=13, alpha=0.0)[0])
    assert "(Celu)" in str(e) and e.attribute == "alpha"
    e = _load_error(one("Elu", [("x", rnd(2, 3, seed=61))], opset=13, beta=1.0)[0])
    assert "(Elu)" in str(e) and e.attribute == "beta"
    e = _load_error(one("Mish", [("x", rnd(2, 3, seed=61))], opset=17)[0])
    assert "Mish" in str(e) and "opset 18" in str(e)


def test_leaky_relu_variadic():
    x, y = rnd(3, 4, seed=33), rnd(4, seed=34)
    check(*one("LeakyRelu", [("x", x)], opset=13, alpha=0.2))
    for op in ("Max", "Min", "Sum", "Mean"):
        check(*one(op, [("x", x), ("y", y)], {"z": rnd(3, 1, seed=35)}, opset=13), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("variant", ["div_last_half", "mul_first_half", "constants"])
def test_exported_erf_gelu_is_recognised(variant):
    """torch.onnx.export before opset 20 writes F.gelu as Div(x, sqrt 2), Erf, Add 1, Mul x,
    Mul 0.5: mapped to the library's gelu; other Erf uses run as rb.erf."""
    w = rnd(6, 6, seed=50)
    inits = {"w": w, "sqrt2": np.array(np.sqrt(2), np.float32), "one": np.array(1, np.float32),
             "half": np.array(0.5, np.float32), "rsqrt2": np.array(np.sqrt(0.5), np.float32)}
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"])]
    if variant == "constants":
        del inits["sqrt2"], inits["half"]
        nodes += [helper.make_node("Constant", [], ["sqrt2"], value=numpy_helper.from_array(np.array(1.4142135, np.float32))),
                  helper.make_node("Constant", [], ["half"], value=numpy_helper.from_array(np.array(0.5, np.float32)))]
    if variant == "mul_first_half":
        nodes += [helper.make_node("Mul", ["h", "rsqrt2"], ["d"]),
                  helper.make_node("Mul", ["half", "h"], ["hh"]),
                  helper.make_node("Erf", ["d"], ["e"], name="erf"),
                  helper.make_node("Add", ["one", "e"], ["a"]),
                  helper.make_node("Mul", ["hh", "a"], ["g"])]
    else:
        nodes += [helper.make_node("Div", ["h", "sqrt2"], ["d"]),
                  helper.make_node("Erf", ["d"], ["e"], name="erf"),
                  helper.make_node("Add", ["e", "one"], ["a"]),
                  helper.make_node("Mul", ["h", "a"], ["m"]),
                  helper.make_node("Mul", ["m", "half"], ["g"])]
    nodes.append(helper.make_node("Relu", ["g"], ["y"]))
    model = make_model(nodes, [("x", F, [3, 6])], [("y", F, [3, 6])], inits, 13)
    m = rb.onnx.load(model, device=DEVICE)
    assert "gelu" in str(m.graph([(3, 6)]))
    check(model, {"x": rnd(3, 6, seed=51)}, rtol=1e-5, atol=1e-5)
    # an intermediate also used elsewhere: not rewritten, the Erf runs as rb.erf
    nodes[-1] = helper.make_node("Add", ["g", "e"], ["y"])
    model = make_model(nodes, [("x", F, [3, 6])], [("y", F, [3, 6])], inits, 13)
    assert "gelu" not in str(rb.onnx.load(model, device=DEVICE).graph([(3, 6)]))
    check(model, {"x": rnd(3, 6, seed=51)}, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------
# What cannot be mapped fails at load, naming the node, the operator and the attribute


def _load_error(model):
    with pytest.raises(rb.onnx.OnnxImportError) as e:
        rb.onnx.load(model, device=DEVICE)
    assert e.value.status == rb.Status.UNSUPPORTED
    return e.value


def test_unsupported_operator_names_the_node():
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="first"),
             helper.make_node("Hardmax", ["r"], ["y"], name="my_hardmax")]
    e = _load_error(make_model(nodes, [("x", F, [2])], [("y", F, [2])], opset=13))
    assert "node 1 'my_hardmax' (Hardmax)" in str(e) and "hardmax" in e.message
    assert (e.node_index, e.node_name, e.op_type) == (1, "my_hardmax", "Hardmax")


@pytest.mark.parametrize("op,attrs,attr,opset,extra", [
    ("Gelu", dict(approximate="sigmoid"), "approximate", 20, {}),
    ("MaxPool", dict(kernel_shape=[2, 2], auto_pad="SAME"), "auto_pad", 13, {}),
    ("BatchNormalization", dict(training_mode=1), "training_mode", 15, "bn"),
    ("LayerNormalization", dict(stash_type=0), "stash_type", 17, "ln"),
    ("AveragePool", dict(kernel_shape=[2, 2], dilations=[2, 2]), "dilations", 19, {}),
    ("Conv", dict(kernel_shape=[2, 2], bogus=3), "bogus", 13, "conv"),
    ("ConvTranspose", dict(strides=[2, 2], output_shape=[10, 9]), "output_shape", 13, "convt"),
    ("BatchNormalization", dict(spatial=0), "spatial", 7, "bn"),
])
def test_unsupported_attribute_names_the_node_and_attribute(op, attrs, attr, opset, extra):
    x = rnd(1, 2, 5, 5, seed=36)
    inits = {}
    if extra == "bn":
        inits = {k: np.ones(2, np.float32) for k in ("s", "b", "m", "v")}
    elif extra == "ln":
        inits = {"g": np.ones(5, np.float32)}
    elif extra == "conv":
        inits = {"w": rnd(3, 2, 2, 2, seed=37)}
    elif extra == "convt":
        inits = {"w": rnd(2, 3, 3, 3, seed=37)}
    node = helper.make_node(op, ["x"] + list(inits), ["y"], name="bad", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, x.shape)],
                              [helper.make_tensor_value_info("y", F, None)],
                              initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    e = _load_error(model)
    assert "node 0 'bad'" in str(e) and f"({op})" in str(e) and attr in str(e), str(e)
    assert e.attribute == attr


def test_unsupported_outputs_and_opsets():
    x = rnd(1, 1, 4, 4, seed=38)
    model, _ = one("MaxPool", [("x", x)], opset=13, n_out=2, kernel_shape=[2, 2])
    e = _load_error(model)
    assert "output 1" in str(e) and "(MaxPool)" in str(e)
    for opset in (6, 22):
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", F, [2])],
                                  [helper.make_tensor_value_info("y", F, [2])])
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        assert f"opset {opset}" in str(_load_error(m))
    # a custom domain
    graph = helper.make_graph([helper.make_node("Foo", ["x"], ["y"], domain="com.example", name="f")], "g",
                              [helper.make_tensor_value_info("x", F, [2])],
                              [helper.make_tensor_value_info("y", F, [2])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
    assert "com.example" in str(_load_error(m))


def test_dynamic_shapes_still_fail_at_load():
    nodes = [helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Softmax", ["r"], ["s"], axis=-1),
             helper.make_node("Hardmax", ["s"], ["y"], name="hardmax")]
    m = make_model(nodes, [("x", F, ["N", 4])], [("y", F, None)], None, 13)
    assert "(Hardmax)" in str(_load_error(m))


def test_symbolic_shapes_attribute_errors_still_fail_at_load():
    """With symbolic dimensions the load records a trial graph (unknown dimensions bound to
    1): attribute values it cannot map are reported there, not at the first call."""
    nodes = [helper.make_node("Gelu", ["x"], ["y"], name="g", approximate="exact")]
    e = _load_error(make_model(nodes, [("x", F, ["N", 4])], [("y", F, ["N", 4])], opset=20))
    assert "node 0 'g' (Gelu)" in str(e) and "approximate" in str(e)
    nodes = [helper.make_node("Concat", ["x", "x"], ["y"], name="c")]  # no axis: malformed
    with pytest.raises(rb.onnx.OnnxImportError, match="node 0 'c' \\(Concat\\)"):
        rb.onnx.load(make_model(nodes, [("x", F, [2, 4])], [("y", F, None)], opset=13))


def test_missing_onnx_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnx", None)
    with pytest.raises(ImportError, match="pip install onnx"):
        rb.onnx.load(b"")


def test_load_from_file_and_bytes(tmp_path):
    model = mlp(13)
    p = tmp_path / "mlp.onnx"
    onnx.save(model, str(p))
    x = rnd(4, 20, seed=39)
    ref = ReferenceEvaluator(model).run(None, {"x": x})[0]
    for src in (str(p), p, model.SerializeToString()):
        m = rb.onnx.load(src, device=DEVICE)
        assert m.input_names == ["x"] and m.output_names == ["y"] and m.opset == 13
        np.testing.assert_allclose(m(x).numpy(), ref, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(m(x=x).numpy(), ref, rtol=1e-5, atol=1e-6)
    assert m.executor([(4, 20)]).stats()["nodes_recorded"] >= 5


# ---------------------------------------------------------------------------------------
# ONNX Runtime and real exported files, where available


@pytest.mark.skipif(ort is None, reason="onnxruntime is not installed (the NumPy reference is used instead)")
@pytest.mark.parametrize("opset", OPSETS)
def test_models_match_onnxruntime(opset):
    for model, feeds in ((cnn(opset), {"x": rnd(2, 3, 16, 16, seed=40)}), (mlp(opset), {"x": rnd(4, 20, seed=41)}),
                         (attention(opset), {"x": rnd(2, 5, 16, seed=42)})):
        sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        want = sess.run(None, feeds)
        got = rb.onnx.load(model, device=DEVICE).run(None, feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


# Real exported files that ship with the onnx package (onnx/backend/test/data): PyTorch's
# exports of its modules and operators (opset 6: converted to opset 11 with onnx's version
# converter), each with an input and the output PyTorch computed, and the "light" versions of
# model-zoo architectures (ResNet-50, DenseNet-121, Inception v2, ShuffleNet, SqueezeNet,
# VGG-19; weights made by ConstantOfShape) with their expected outputs.
_DATA = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
_EXPORTS = sorted(
    os.path.join(kind, name)
    for kind in ("pytorch-converted", "pytorch-operator")
    for name in (os.listdir(os.path.join(_DATA, kind)) if os.path.isdir(os.path.join(_DATA, kind)) else [])
)
# what these files hold that the library cannot run yet: refused at load, by name
_REFUSED = ("Pad", "Elu", "Selu", "Softplus", "PRelu", "Split", "Tile", "InstanceNormalization", "DOUBLE")
# library bugs found by these files (an error, never a wrong result)
_LIBRARY_BUGS = {}  # known library bugs a case may hit (none now)


def _pb(path):
    return numpy_helper.to_array(onnx.load_tensor(path))


@pytest.mark.parametrize("case", _EXPORTS)
def test_pytorch_exports(case):
    d = os.path.join(_DATA, case)
    model = onnx.load(os.path.join(d, "model.onnx"))
    if model.opset_import[0].version < 7:
        from onnx import version_converter

        model = version_converter.convert_version(model, 11)
    data = os.path.join(d, "test_data_set_0")
    ins = [_pb(os.path.join(data, f)) for f in sorted(os.listdir(data)) if f.startswith("input_")]
    want = [_pb(os.path.join(data, f)) for f in sorted(os.listdir(data)) if f.startswith("output_")]
    try:
        m = rb.onnx.load(model, device=DEVICE)
        got = m.run(None, dict(zip(m.input_names, ins)))
    except rb.onnx.OnnxImportError as e:
        if case in _LIBRARY_BUGS and DEVICE == "cpu":
            pytest.xfail(f"library bug: {_LIBRARY_BUGS[case]} ({e})")
        assert e.status == rb.Status.UNSUPPORTED and any(r in str(e) for r in _REFUSED), str(e)
        return
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


_LIGHT = ["resnet50", "densenet121", "inception_v2", "shufflenet", "squeezenet", "vgg19",
          "bvlc_alexnet", "inception_v1", "zfnet512"]  # the last three hold LRN


def _light(name):
    path = os.path.join(_DATA, "light", f"light_{name}.onnx")
    if not os.path.exists(path):
        pytest.skip(f"{path} is not in this onnx package")
    return onnx.load(path)


def _light_feeds(model, rng=None):
    """The onnx backend test's input for these models (arange / n), or random."""
    inits = {i.name for i in model.graph.initializer}
    feeds = {}
    for x in model.graph.input:
        if x.name not in inits:
            shape = tuple(d.dim_value if d.HasField("dim_value") else 1 for d in x.type.tensor_type.shape.dim)
            n = int(np.prod(shape))
            feeds[x.name] = (rng.random(shape, np.float32) if rng is not None
                             else (np.arange(n).reshape(shape) / n).astype(np.float32))
    return feeds


@pytest.mark.parametrize("name", _LIGHT)
def test_model_zoo_architectures(name):
    model = _light(name)
    feeds = _light_feeds(model)
    got = rb.onnx.load(model, device=DEVICE).run(None, feeds)
    prefix = os.path.join(_DATA, "light", f"light_{name}_output_")
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, _pb(f"{prefix}{i}.pb"), rtol=1e-3, atol=1e-6)


def _random_weights(model, seed=0):
    """The light model with random weights in place of its ConstantOfShape ones (batch-norm
    variances positive), so that outputs tell layers apart."""
    rng = np.random.default_rng(seed)
    inits = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    bn = {}
    for n in model.graph.node:
        if n.op_type == "BatchNormalization":
            bn.update({n.input[1]: "scale", n.input[4]: "var"})
    keep, new = [], []
    for n in model.graph.node:
        if n.op_type == "ConstantOfShape" and n.input[0] in inits:
            shape = tuple(int(d) for d in inits[n.input[0]])
            fan = int(np.prod(shape[1:])) if len(shape) > 1 else 1
            v = rng.standard_normal(shape) / np.sqrt(fan)
            role = bn.get(n.output[0])
            if role == "scale":
                v = 1 + 0.1 * v
            elif role == "var":
                v = 0.5 + np.abs(v)
            elif len(shape) == 1:
                v = 0.1 * v
            new.append(numpy_helper.from_array(v.astype(np.float32), n.output[0]))
        else:
            keep.append(n)
    del model.graph.node[:]
    model.graph.node.extend(keep)
    model.graph.initializer.extend(new)
    return model


@pytest.mark.skipif(ort is None, reason="onnxruntime is not installed (the model-zoo files are "
                                        "checked against their stored outputs instead)")
@pytest.mark.parametrize("name", _LIGHT)
def test_model_zoo_architectures_random_weights_match_onnxruntime(name):
    model = _random_weights(_light(name))
    feeds = _light_feeds(model, np.random.default_rng(1))
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = rb.onnx.load(model, device=DEVICE).run(None, feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-5 * max(1.0, float(np.abs(w).max())))


def _exported_files():
    env = os.environ.get("RB_ONNX_MODELS")
    return [p for p in env.split(os.pathsep) if p] if env else []


def test_real_exported_models():
    """A torchvision model exported with torch.onnx (when torch and torchvision are here),
    and the files named in $RB_ONNX_MODELS, against ONNX Runtime."""
    files = _exported_files()
    tmp = None
    if not files:
        try:
            import torch
            import torchvision
        except ImportError:
            pytest.skip("no real model: torch/torchvision are not installed and $RB_ONNX_MODELS is unset")
        import tempfile
        tmp = tempfile.mkdtemp()
        net = torchvision.models.resnet18(weights=None).eval()
        files = [os.path.join(tmp, "resnet18.onnx")]
        torch.onnx.export(net, torch.randn(1, 3, 64, 64), files[0], opset_version=17)
    if ort is None:
        pytest.skip("onnxruntime is not installed: real models are compared with it")
    for path in files:
        sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
        feeds = {}
        for i in sess.get_inputs():
            shape = [d if isinstance(d, int) else 1 for d in i.shape]
            feeds[i.name] = rnd(*shape, seed=43)
        want = sess.run(None, feeds)
        got = rb.onnx.load(path, device=DEVICE).run(None, feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-3, err_msg=path)


def _np_topk(x, k, axis, largest):
    """NumPy TopK (no ties in the inputs used): values and int64 indices, best first."""
    order = np.argsort(-x if largest else x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis), idx.astype(np.int64)


@pytest.mark.parametrize("opset", [7, 10, 11, 13])
@pytest.mark.parametrize("axis,largest", [(-1, 1), (0, 1), (1, 0)])
def test_topk(opset, axis, largest):
    x = rnd(4, 6, 5, seed=80)
    k = 3
    attrs = {"axis": axis}
    inits = {}
    ins = ["x"]
    if opset < 10:
        attrs["k"] = k
    else:
        inits["k"] = np.array([k], np.int64)
        ins.append("k")
    if opset >= 11:
        attrs["largest"] = largest
    elif largest == 0:
        return  # smallest needs opset 11
    node = helper.make_node("TopK", ins, ["v", "i"], name="topk", **attrs)
    oshape = list(x.shape)
    oshape[axis] = k
    m = make_model([node], [("x", F, list(x.shape))], [("v", F, oshape), ("i", I64, oshape)], inits, opset)
    got = check(m, {"x": x}, rtol=0, atol=0)
    v, i = _np_topk(x, k, axis, largest)
    np.testing.assert_array_equal(got[0], v)
    np.testing.assert_array_equal(got[1], i)
    assert got[1].dtype == np.int64


def test_topk_refusals():
    x = rnd(2, 5, seed=81)
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk")
    m = make_model([node], [("x", F, [2, 5])], [("v", F, None), ("i", I64, None)],
                   {"k": np.array([6], np.int64)}, 13)
    assert "(TopK)" in str(_load_error(m)) and "k=6" in str(_load_error(m))
    # k computed from the graph's data cannot be recorded
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], name="topk")]
    m = make_model(nodes, [("x", F, [2, 5]), ("k", I64, [1])], [("v", F, None), ("i", I64, None)],
                   None, 13)
    assert "(TopK)" in str(_load_error(m)) and "depends on the graph's data" in str(_load_error(m))
    assert x.shape == (2, 5)


@pytest.mark.parametrize("reduction,opset", [("none", 11), ("none", 13), ("add", 16), ("mul", 16),
                                             ("max", 18), ("min", 18)])
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_elements(reduction, opset, axis):
    x = rnd(4, 5, seed=82)
    if reduction == "none":  # unique targets: duplicates are undefined
        idx = np.array([[3, 0, 1, 2], [0, 1, 2, 3], [1, 2, 3, 0]], np.int64) if axis == 0 else \
            np.array([[4, 0], [1, 3], [2, 0]], np.int64)
    else:
        idx = np.array([[0, 1, 0, 3], [0, 1, 2, -1], [0, 0, 3, 3]], np.int64) if axis == 0 else \
            np.array([[4, 0], [1, 1], [-1, 2]], np.int64)
    u = rnd(*idx.shape, seed=83)
    attrs = {"axis": axis}
    if reduction != "none" or opset >= 16:
        attrs["reduction"] = reduction
    got = check(*one("ScatterElements", [("x", x)], {"i": idx, "u": u}, opset=opset, **attrs),
                rtol=1e-6, atol=1e-6)
    want = x.astype(np.float64).copy()
    n = x.shape[axis]
    for r, c in np.ndindex(idx.shape):
        at = (idx[r, c] % n, c) if axis == 0 else (r, idx[r, c] % n)
        a, s = want[at], u[r, c]
        want[at] = {"none": s, "add": a + s, "mul": a * s, "max": max(a, s), "min": min(a, s)}[reduction]
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-6)


def test_scatter_opset_9_and_int_data():
    x = np.arange(12, dtype=np.int64).reshape(3, 4)
    idx = np.array([[2, 0, 1, 1]], np.int64)
    u = np.array([[-5, -6, -7, -8]], np.int64)
    node = helper.make_node("Scatter", ["x", "i", "u"], ["y"], name="s", axis=0)
    m = make_model([node], [("x", I64, [3, 4])], [("y", I64, [3, 4])], {"i": idx, "u": u}, 9)
    got = rb.onnx.load(m, device=DEVICE).run(None, {"x": x})
    want = x.copy()
    np.put_along_axis(want, idx, u, 0)
    np.testing.assert_array_equal(got[0], want)


@pytest.mark.parametrize("elem,np_dtype", [(TensorProto.DOUBLE, np.float64), (TensorProto.INT8, np.int8),
                                           (TensorProto.UINT8, np.uint8), (TensorProto.INT16, np.int16)])
def test_added_element_types(elem, np_dtype):
    """DOUBLE, INT8, UINT8 and INT16 graph inputs and constants: Add, Mul, Max, Less, Where,
    Transpose and a Cast to FLOAT, against onnx.reference."""
    x = (np.arange(12).reshape(3, 4) % 5 + 1).astype(np_dtype)
    c = np.array([2, 1, 3, 1], np_dtype)
    nodes = [helper.make_node("Add", ["x", "c"], ["a"]),
             helper.make_node("Mul", ["a", "c"], ["m"]),
             helper.make_node("Max", ["m", "x"], ["mx"]),
             helper.make_node("Less", ["x", "c"], ["lt"]),
             helper.make_node("Where", ["lt", "mx", "x"], ["w"]),
             helper.make_node("Transpose", ["w"], ["t"], perm=[1, 0]),
             helper.make_node("Cast", ["t"], ["y"], to=TensorProto.FLOAT)]
    m = make_model(nodes, [("x", elem, [3, 4])], [("t", elem, [4, 3]), ("y", F, [4, 3])], {"c": c}, 13)
    # ONNX Runtime's CPU Add/Mul/Max have no INT8, UINT8 or INT16 kernels (the session
    # refuses the model): onnx.reference alone judges those.
    got = check(m, {"x": x}, rtol=0, atol=0, ort_reference=elem == TensorProto.DOUBLE)
    assert got[0].dtype == np_dtype
