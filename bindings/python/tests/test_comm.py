"""Communicators and collectives from Python (issue 16): every collective on CPU ranks
(threads), errors as RbError with their statuses, and the data-parallel example: N ranks at
batch B give the loss curve of one rank at batch N*B."""

import importlib.util
import pathlib
import threading

import numpy as np
import pytest

import rocm_backend as rb

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "examples" / "data_parallel.py"


def _example():
    spec = importlib.util.spec_from_file_location("data_parallel", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def on_ranks(n, body, timeout_ms=20_000):
    """Runs body(comm) on n threads (one CPU rank each); returns the results by rank."""
    uid = rb.comm_unique_id("cpu")
    out, errs = {}, []

    def run(r):
        try:
            with rb.Comm(uid, n, r, device="cpu", timeout_ms=timeout_ms) as c:
                out[r] = body(c)
        except Exception as e:  # re-raised below
            errs.append(e)

    ts = [threading.Thread(target=run, args=(r,)) for r in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errs:
        raise errs[0]
    return [out[r] for r in range(n)]


def data(r, n=12):
    return (np.arange(n, dtype=np.float32) % 5 - 2) * (r + 1)


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32", "i64"])
def test_collectives(n, dtype):
    def body(c):
        r = c.rank
        res = {}
        for op in ("sum", "prod", "max", "min", "avg"):
            x = rb.from_numpy(data(r), dtype=dtype)
            res[op] = c.all_reduce(x, op=op).numpy().astype(np.float64)
        x = rb.from_numpy(data(r, 3 * n), dtype=dtype)
        res["rs"] = c.reduce_scatter(x, op="sum").numpy().astype(np.float64)
        res["ag"] = c.all_gather(rb.from_numpy(data(r, 3), dtype=dtype)).numpy().astype(np.float64)
        res["bc"] = c.broadcast(rb.from_numpy(data(r), dtype=dtype), root=n - 1).numpy().astype(np.float64)
        got = rb.zeros([12], dtype=dtype)
        with rb.comm_group():
            c.send(rb.from_numpy(data(r), dtype=dtype), peer=(r + 1) % n)
            c.recv(got, peer=(r - 1) % n)
        res["ring"] = got.numpy().astype(np.float64)
        return res

    out = on_ranks(n, body)
    parts = np.stack([data(r).astype(np.float64) for r in range(n)])
    want = {"sum": parts.sum(0), "prod": parts.prod(0), "max": parts.max(0), "min": parts.min(0)}
    want["avg"] = np.trunc(parts.sum(0) / n) if dtype in ("i32", "i64") else parts.sum(0) / n
    tol = 1e-2 if dtype in ("f16", "bf16") else 1e-6
    big = np.stack([data(r, 3 * n).astype(np.float64) for r in range(n)]).sum(0)
    for r, res in enumerate(out):
        for op, w in want.items():
            np.testing.assert_allclose(res[op], w, rtol=tol, atol=tol, err_msg=f"{op} rank {r}")
        np.testing.assert_allclose(res["rs"], big[3 * r:3 * r + 3], rtol=tol)
        np.testing.assert_allclose(res["ag"], np.concatenate([data(q, 3) for q in range(n)]), rtol=tol)
        np.testing.assert_allclose(res["bc"], data(n - 1), rtol=tol)
        np.testing.assert_allclose(res["ring"], data((r - 1) % n), rtol=tol)


def test_init_all_and_group_on_one_thread():
    comms = rb.Comm.init_all(["cpu", "cpu"])
    xs = [rb.from_numpy(data(r)) for r in range(2)]
    with rb.comm_group():
        for c, x in zip(comms, xs):
            c.all_reduce(x)
    for x in xs:
        np.testing.assert_allclose(x.numpy(), data(0) + data(1))
    assert [c.rank for c in comms] == [0, 1] and comms[0].size == 2
    for c in comms:
        c.destroy()


def test_errors():
    uid = rb.comm_unique_id("cpu")
    assert len(uid) == 128
    with pytest.raises(rb.RbError) as e:
        rb.Comm(uid, 2, 2, device="cpu")
    assert e.value.status == rb.Status.INVALID_ARGUMENT
    c = rb.Comm(uid, 1, 0, device="cpu")
    with pytest.raises(rb.RbError) as e:
        c.all_reduce(rb.zeros([4]), rb.zeros([3]))
    assert e.value.status == rb.Status.SHAPE_MISMATCH
    with pytest.raises(rb.RbError) as e:
        c.all_reduce(rb.zeros([4]), op="median")
    with pytest.raises(rb.RbError) as e:
        c.broadcast(rb.zeros([4]), root=3)
    assert e.value.status == rb.Status.INVALID_ARGUMENT
    c.abort()
    with pytest.raises(rb.RbError) as e:
        c.all_reduce(rb.zeros([4]))
    assert e.value.status == rb.Status.ABORTED
    c.destroy()
    with pytest.raises(rb.RbError):
        c.rank
    # a peer that never comes: TIMEOUT
    uid = rb.comm_unique_id("cpu")
    c0 = rb.Comm(uid, 2, 0, device="cpu", timeout_ms=100)
    c1 = rb.Comm(uid, 2, 1, device="cpu")
    with pytest.raises(rb.RbError) as e:
        c0.all_reduce(rb.zeros([4]))
    assert e.value.status == rb.Status.TIMEOUT and "abort" in e.value.message
    c0.destroy()
    c1.destroy()


def test_raw_pointers():
    def body(c):
        x = np.full(4, c.rank + 1.0, dtype=np.float32)
        y = np.zeros(4, dtype=np.float32)
        c.all_reduce_raw(x.ctypes.data, y.ctypes.data, 4, "f32", "sum")
        return y

    for y in on_ranks(2, body):
        np.testing.assert_array_equal(y, np.full(4, 3.0))


@pytest.mark.parametrize("ranks", [2, 4])
def test_data_parallel_matches_one_rank_at_n_times_the_batch(ranks):
    ex = _example()
    kw = dict(sizes=(16, 48, 48, 48, 4), steps=30, lr=0.5, bucket_mb=0.004)
    dp = ex.train(ranks=ranks, batch=8, **kw)
    buckets = ex.train.last[0][2]
    one = ex.train(ranks=1, batch=8 * ranks, **kw)
    assert buckets > kw["steps"], "the gradients should go in several buckets per step"
    np.testing.assert_allclose(dp, one, rtol=1e-4, atol=1e-6)
    assert np.mean(dp[-5:]) < np.mean(dp[:5]), f"the loss should fall: {dp}"


def test_one_rank_every_call_on_the_test_device():
    """RB_TEST_DEVICE=cuda (or rocm) runs a one-rank RCCL/NCCL communicator through every
    call; skipped, with the reason, where the device has no collective library."""
    import os

    dev = os.environ.get("RB_TEST_DEVICE", "cpu")
    try:
        uid = rb.comm_unique_id(dev)
    except rb.RbError as e:
        if e.status in (rb.Status.UNSUPPORTED, rb.Status.DEVICE_UNAVAILABLE):
            pytest.skip(f"{dev}: {e.message}")
        raise
    s = rb.Stream(dev)
    with rb.Comm(uid, 1, 0, device=dev) as c:
        assert (c.rank, c.size) == (0, 1)
        for dtype in ("f32", "f16", "bf16", "i32", "i64"):
            v = np.arange(8) % 5 - 2
            x = rb.from_numpy(v, dtype=dtype, device=dev)
            for op in ("sum", "prod", "max", "min", "avg"):
                y = c.all_reduce(x, rb.Tensor.empty([8], dtype, dev), op=op, stream=s)
                s.synchronize()
                np.testing.assert_array_equal(y.numpy().astype(np.float64), v)
            np.testing.assert_array_equal(c.all_gather(x, stream=s).numpy().astype(np.float64), v)
            np.testing.assert_array_equal(c.reduce_scatter(x, stream=s).numpy().astype(np.float64), v)
            z = rb.Tensor.zeros([8], dtype, dev)
            c.broadcast(z, root=0, send=x, stream=s)
            s.synchronize()
            np.testing.assert_array_equal(z.numpy().astype(np.float64), v)
            w = rb.Tensor.zeros([8], dtype, dev)
            with rb.comm_group():
                c.send(x, peer=0, stream=s)
                c.recv(w, peer=0, stream=s)
            s.synchronize()
            np.testing.assert_array_equal(w.numpy().astype(np.float64), v)
        ev = rb.Event(dev).record(s)
        ev.wait(None)
        ev.synchronize()
