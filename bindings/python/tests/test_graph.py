"""Graphs and executors from Python: rb.record, rb.Executor at every level, stats, misuse."""

import numpy as np
import pytest

import rocm_backend as rb


def mlp_params(rng):
    dims = [784, 256, 128, 10]
    return [
        (rb.from_numpy((rng.standard_normal((dims[i + 1], dims[i])) * 0.05).astype(np.float32)),
         rb.from_numpy((rng.standard_normal(dims[i + 1]) * 0.1).astype(np.float32)))
        for i in range(3)
    ]


def mlp_numpy(params, x):
    h = x.astype(np.float64)
    for i, (w, b) in enumerate(params):
        h = h @ w.numpy().astype(np.float64).T + b.numpy()
        if i < 2:
            h = np.maximum(h, 0)
    return h


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_recorded_mlp_runs_at_every_level(level):
    rng = np.random.default_rng(0)
    params = mlp_params(rng)
    with rb.record() as g:
        x = g.input((32, 784))
        h = x
        for i, (w, b) in enumerate(params):
            h = rb.linear(h, w, b)
            if i < 2:
                h = rb.relu(h)
        g.mark_output(h)
    assert g.num_nodes == 5
    assert "linear" in str(g)
    exe = rb.Executor(g, opt_level=level)
    for seed in range(3):
        xb = np.random.default_rng(seed + 1).standard_normal((32, 784)).astype(np.float32)
        y = exe(xb).numpy()
        tol = 3e-2 if level >= 2 else 1e-4
        np.testing.assert_allclose(y, mlp_numpy(params, xb), rtol=tol, atol=tol)
    s = exe.stats()
    assert s["nodes_recorded"] == 5
    if level == 1:
        assert s["launches_per_run"] == 3
        assert s["fused_by_pattern"] == {"matmul+bias+relu": 2}
        assert 0 < s["planned_peak_bytes"] <= s["intermediate_bytes"]


def test_elementwise_chain_fuses_and_matches():
    rng = np.random.default_rng(1)
    a, b, c = (rb.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in ((4, 100), (100,), (4, 1)))
    with rb.record() as g:
        x = g.input((4, 100))
        g.mark_output(rb.gelu(x * a + b) * c)
    e0, e1 = rb.Executor(g, opt_level=0), rb.Executor(g, opt_level=1)
    assert e1.stats()["launches_per_run"] == 1
    assert e1.stats()["fused_elementwise"] == 1
    xb = rng.standard_normal((4, 100)).astype(np.float32)
    np.testing.assert_allclose(e1(xb).numpy(), e0(xb).numpy(), rtol=1e-6, atol=1e-6)


def test_what_cannot_be_recorded_is_an_error_and_the_graph_survives():
    with rb.record() as g:
        x = g.input((3,))
        y = rb.exp(x)
        with pytest.raises(rb.RbError) as e:
            y.numpy()
        assert e.value.status == rb.Status.INVALID_ARGUMENT
        assert "placeholder" in e.value.message
        with pytest.raises(rb.RbError):
            g._stream.synchronize()
        z = rb.relu(y)
        g.mark_output(z)
    # a placeholder outside its recording
    with pytest.raises(rb.RbError) as e:
        rb.exp(x)
    assert "placeholder" in e.value.message
    exe = rb.Executor(g)
    out = exe(np.array([-1.0, 0.0, 1.0], np.float32)).numpy()
    np.testing.assert_allclose(out, np.exp([-1.0, 0.0, 1.0]), rtol=1e-6)


def test_executor_misuse():
    with rb.record() as g:
        x = g.input((2, 3))
        g.mark_output(rb.relu(x))
    exe = rb.Executor(g)
    with pytest.raises(rb.RbError) as e:
        exe()
    assert e.value.status == rb.Status.INVALID_ARGUMENT
    with pytest.raises(rb.RbError) as e:
        exe(np.zeros((2, 3), np.int32))
    assert e.value.status == rb.Status.DTYPE_MISMATCH
    with pytest.raises(rb.RbError) as e:
        exe(np.zeros((2, 3, 1), np.float32))
    assert e.value.status == rb.Status.SHAPE_MISMATCH
    with pytest.raises(rb.RbError) as e:
        rb.Executor(g, opt_level=9)
    assert e.value.status == rb.Status.INVALID_ARGUMENT
    empty = rb.Graph()
    with pytest.raises(rb.RbError) as e:
        rb.Executor(empty)
    assert e.value.status == rb.Status.INVALID_ARGUMENT
    # a new shape of the same rank re-plans
    np.testing.assert_allclose(exe(np.full((5, 3), -2.0, np.float32)).numpy(), np.zeros((5, 3)))


def test_can_fuse():
    assert rb.can_fuse("matmul", "add", "relu") == "matmul+bias+relu"
    assert rb.can_fuse("conv", "batch_norm", "relu") == "conv+bn+relu"
    assert rb.can_fuse("mul", "add") == "mul+add"
    assert rb.can_fuse("relu", "mul") is None
