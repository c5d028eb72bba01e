"""Issue 17's missing arguments against PyTorch itself (and ONNX's reference RotaryEmbedding):
class weights of cross_entropy / nll_loss / binary_cross_entropy, class-probability targets,
rope_cached (rotate-half and interleaved). Skipped where torch is not installed; runs on the
CPU device and on every GPU this package sees. PyTorch computes in float64 on the CPU.
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
F = torch.nn.functional

import rocm_backend as rb  # noqa: E402

DEVICES = ["cpu"]
if rb.cuda_is_available():
    DEVICES.append("cuda:0")
if rb.rocm_is_available():
    DEVICES.append("rocm:0")

TOL = {"f32": 2e-5, "f16": 2e-2, "bf16": 3e-2}


@pytest.fixture(params=DEVICES)
def dev(request):
    rb.set_device(request.param)
    yield request.param
    rb.set_device("cpu")


def rnd(shape, seed, lo=None, hi=None):
    rng = np.random.default_rng(seed)
    if lo is not None:
        return rng.uniform(lo, hi, shape)
    return rng.standard_normal(shape)


def held(a, dt):
    """`a` rounded to dt (what the device holds), as float64."""
    return rb.from_numpy(np.asarray(a, dtype=np.float32), dtype=dt).numpy().astype(np.float64)


def T(a, dt="f32"):
    a = np.asarray(a)
    if a.dtype.kind in "iu":
        return rb.from_numpy(a)
    return rb.from_numpy(a.astype(np.float32), dtype=dt)


def check(got, want, dt, what):
    got = got.numpy().astype(np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (what, got.shape, want.shape)
    tol = TOL[dt]
    scale = max(1.0, float(np.abs(want).max()) if want.size else 1.0)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale if dt != "f32" else tol, err_msg=what)


def torch_loss(fn, x, dy, **kw):
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    y = fn(xt, **kw)
    (y * torch.tensor(dy, dtype=torch.float64)).sum().backward()
    return y.detach().numpy(), xt.grad.numpy()


@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 5), (7,), (4, 97)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("ls", [0.0, 0.2])
def test_cross_entropy_weight(dev, dt, shape, reduction, ls):
    cd = 0 if len(shape) == 1 else 1
    c = shape[cd]
    x = held(rnd(shape, 1), dt)
    tshape = () if len(shape) == 1 else (shape[0],) + shape[2:]
    t = np.random.default_rng(2).integers(0, c, tshape).astype(np.int64)
    if t.ndim:
        t.flat[0] = -100
    w = held(rnd(c, 3, 0.0, 2.0), dt)
    w[min(1, c - 1)] = 0.0
    out_shape = np.shape(F.cross_entropy(torch.tensor(x), torch.tensor(t), reduction=reduction))
    dy = held(rnd(out_shape, 4), dt)
    ty, tg = torch_loss(
        lambda a: F.cross_entropy(a, torch.tensor(t), weight=torch.tensor(w), reduction=reduction, label_smoothing=ls),
        x,
        dy,
    )
    what = f"{dev} cross_entropy weight {shape} {reduction} ls={ls} {dt}"
    check(rb.cross_entropy(T(x, dt), T(t), T(w, dt), reduction=reduction, label_smoothing=ls), ty, dt, what)
    g = rb.cross_entropy_backward(T(dy, dt), T(x, dt), T(t), weight=T(w, dt), reduction=reduction, label_smoothing=ls)
    check(g, tg, dt, what + " backward")
    if ls == 0.0:
        logp = held(F.log_softmax(torch.tensor(x), cd).numpy(), dt)
        ty, tg = torch_loss(lambda a: F.nll_loss(a, torch.tensor(t), weight=torch.tensor(w), reduction=reduction), logp, dy)
        what = f"{dev} nll_loss weight {shape} {reduction} {dt}"
        check(rb.nll_loss(T(logp, dt), T(t), weight=T(w, dt), reduction=reduction), ty, dt, what)
        g = rb.nll_loss_backward(T(dy, dt), T(logp, dt), T(t), T(w, dt), reduction=reduction)
        check(g, tg, dt, what + " backward")


@pytest.mark.parametrize("dt", ["f32", "bf16"])
@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 5), (7,), (4, 97)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("ls,weighted", [(0.0, False), (0.3, False), (0.0, True), (0.3, True)])
def test_cross_entropy_probabilities(dev, dt, shape, reduction, ls, weighted):
    cd = 0 if len(shape) == 1 else 1
    c = shape[cd]
    x = held(rnd(shape, 5), dt)
    p = held(F.softmax(torch.tensor(rnd(shape, 6)), cd).numpy(), dt)
    w = held(rnd(c, 7, 0.1, 2.0), dt) if weighted else None
    tw = None if w is None else torch.tensor(w)
    out_shape = np.shape(F.cross_entropy(torch.tensor(x), torch.tensor(p), reduction=reduction))
    dy = held(rnd(out_shape, 8), dt)
    ty, tg = torch_loss(
        lambda a: F.cross_entropy(a, torch.tensor(p), weight=tw, reduction=reduction, label_smoothing=ls), x, dy
    )
    what = f"{dev} cross_entropy probabilities {shape} {reduction} ls={ls} weighted={weighted} {dt}"
    kw = {} if w is None else {"weight": T(w, dt)}
    check(rb.cross_entropy(T(x, dt), T(p, dt), reduction=reduction, label_smoothing=ls, **kw), ty, dt, what)
    g = rb.cross_entropy_backward(T(dy, dt), T(x, dt), T(p, dt), reduction=reduction, label_smoothing=ls, **kw)
    check(g, tg, dt, what + " backward")


@pytest.mark.parametrize("dt", ["f32", "f16"])
@pytest.mark.parametrize("wshape", [(3, 5), (5,), (3, 1), ()])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_binary_cross_entropy_weight(dev, dt, wshape, reduction):
    x = held(rnd((3, 5), 9, 0.05, 0.95), dt)
    t = held(rnd((3, 5), 10, 0.0, 1.0), dt)
    w = held(rnd(wshape, 11, 0.0, 2.0), dt)
    out_shape = (3, 5) if reduction == "none" else ()
    dy = held(rnd(out_shape, 12), dt)
    ty, tg = torch_loss(
        lambda a: F.binary_cross_entropy(a, torch.tensor(t), weight=torch.tensor(w), reduction=reduction), x, dy
    )
    what = f"{dev} binary_cross_entropy weight {wshape} {reduction} {dt}"
    check(rb.binary_cross_entropy(T(x, dt), T(t, dt), T(w, dt), reduction=reduction), ty, dt, what)
    g = rb.binary_cross_entropy_backward(T(dy, dt), T(x, dt), T(t, dt), weight=T(w, dt), reduction=reduction)
    check(g, tg, dt, what + " backward")


def _onnx_rotary(x, cos, sin, pos, interleaved, rot):
    """ONNX RotaryEmbedding (opset 23) through onnx's reference evaluator: x [B, H, S, D],
    position_ids [B, S]."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    from onnx.reference import ReferenceEvaluator

    node = helper.make_node(
        "RotaryEmbedding",
        ["X", "cos", "sin", "pos"],
        ["Y"],
        interleaved=int(interleaved),
        rotary_embedding_dim=rot,
    )
    graph = helper.make_graph(
        [node],
        "rope",
        [
            helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x.shape)),
            helper.make_tensor_value_info("cos", TensorProto.FLOAT, list(cos.shape)),
            helper.make_tensor_value_info("sin", TensorProto.FLOAT, list(sin.shape)),
            helper.make_tensor_value_info("pos", TensorProto.INT64, list(pos.shape)),
        ],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, list(x.shape))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    try:
        ev = ReferenceEvaluator(model)
    except Exception as e:  # an onnx without RotaryEmbedding
        pytest.skip(f"onnx reference RotaryEmbedding unavailable: {e}")
    return ev.run(None, {"X": x, "cos": cos, "sin": sin, "pos": pos})[0]


@pytest.mark.parametrize("interleaved", [False, True])
@pytest.mark.parametrize("rot", [8, 4])
def test_rope_cached_against_onnx(dev, interleaved, rot):
    b, h, s, d, max_pos = 2, 3, 5, 8, 16
    x = rnd((b, h, s, d), 13).astype(np.float32)
    theta = np.arange(max_pos)[:, None] * 10000.0 ** (-2.0 * np.arange(rot // 2) / rot)
    cos, sin = np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)
    pos = (np.arange(s)[None] + np.array([[0], [7]])).astype(np.int64)
    want = _onnx_rotary(x, cos, sin, pos, interleaved, rot)
    got = rb.rope_cached(T(x), T(cos), T(sin), T(pos), seq_dim=-2, interleaved=interleaved)
    check(got, want, "f32", f"{dev} rope_cached vs onnx interleaved={interleaved} rot={rot}")
    # The backward is the transpose: <rope(x), dy> = <x, rope_backward(dy)>.
    dy = rnd((b, h, s, d), 14).astype(np.float32)
    gx = rb.rope_cached_backward(T(dy), T(cos), T(sin), T(pos), seq_dim=-2, interleaved=interleaved).numpy()
    lhs = float((want.astype(np.float64) * dy).sum())
    rhs = float((x.astype(np.float64) * gx).sum())
    assert abs(lhs - rhs) < 1e-3 * max(1.0, abs(lhs))


@pytest.mark.parametrize("dt", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("shape,size", [((2, 3, 11), 4), ((1, 2, 3), 5), ((2, 3, 7, 5), (3, 2)),
                                        ((1, 2, 3, 3), (5, 4)), ((1, 2, 5, 4, 3), (2, 3, 4))])
@pytest.mark.parametrize("channels_last", [False, True])
def test_adaptive_pool_vs_torch(dev, dt, shape, size, channels_last):
    """adaptive_{avg,max}_pool{1,2,3}d and their backward against torch (float64 on the
    values the device holds): values, indices (NaN, ties), gradients (shared maxima)."""
    nd = len(shape) - 2
    x = held(np.round(rnd(shape, 11) * 2), dt)
    x.reshape(-1)[::7] = np.nan
    perm = [0] + list(range(2, nd + 2)) + [1]
    inv = list(np.argsort(perm))
    lay = "NHWC" if channels_last else "NCHW"
    to_l = (lambda a: np.ascontiguousarray(np.asarray(a).transpose(perm))) if channels_last else np.asarray
    to_f = (lambda a: a.numpy().transpose(inv)) if channels_last else (lambda a: a.numpy())
    xt = torch.tensor(x, requires_grad=True)
    yt, it = getattr(F, f"adaptive_max_pool{nd}d")(xt, size, return_indices=True)
    v, i = getattr(rb, f"adaptive_max_pool{nd}d")(T(to_l(x), dt), size, return_indices=True, layout=lay)
    np.testing.assert_array_equal(to_f(v).astype(np.float64), held(yt.detach().numpy(), dt))
    np.testing.assert_array_equal(to_f(i), it.numpy())
    dy = held(rnd(yt.shape, 12), dt)
    (yt * torch.tensor(dy)).sum().backward()
    dx = rb.adaptive_max_pool_backward(T(to_l(dy), dt), i, list(to_l(x).shape), int(channels_last))
    check(rb.from_numpy(to_f(dx).astype(np.float32)), xt.grad.numpy(), dt, "adaptive_max_pool backward")
    xa = held(rnd(shape, 13), dt)
    xt = torch.tensor(xa, requires_grad=True)
    yt = getattr(F, f"adaptive_avg_pool{nd}d")(xt, size)
    y = getattr(rb, f"adaptive_avg_pool{nd}d")(T(to_l(xa), dt), size, layout=lay)
    check(rb.from_numpy(to_f(y).astype(np.float32)), yt.detach().numpy(), dt, "adaptive_avg_pool")
    (yt * torch.tensor(dy)).sum().backward()
    dx = rb.adaptive_avg_pool_backward(T(to_l(dy), dt), list(to_l(xa).shape), int(channels_last))
    check(rb.from_numpy(to_f(dx).astype(np.float32)), xt.grad.numpy(), dt, "adaptive_avg_pool backward")
