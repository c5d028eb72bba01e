"""The profiler from Python: a Chrome trace of a few ops loads as JSON with named tracks,
the calls as complete events and the memory counters; a bad path raises RbError."""

import json

import numpy as np
import pytest

import rocm_backend as rb


def test_chrome_trace(tmp_path):
    rb.profiler_enable()
    rb.profiler_reset()
    try:
        a = rb.from_numpy(np.ones((32, 32), np.float32))
        y = rb.relu(rb.matmul(a, a))
        del y
        path = tmp_path / "trace.json"
        rb.profiler_export_chrome_trace(path)
    finally:
        rb.profiler_enable(False)
    d = json.loads(path.read_text())
    ev = d["traceEvents"]
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    assert "host" in names
    calls = [e["name"] for e in ev if e["ph"] == "X"]
    assert "rb_matmul" in calls and "rb_relu" in calls, calls
    assert all(e["dur"] >= 0 for e in ev if e["ph"] == "X")
    mem = [e for e in ev if e["ph"] == "C" and e["name"] == "memory"]
    assert mem and all("tensor_bytes" in e["args"] for e in mem)
    assert "rb_matmul" in rb.profiler_summary()


def test_bad_path():
    with pytest.raises(rb.RbError) as e:
        rb.profiler_export_chrome_trace("/nonexistent-dir/x/trace.json")
    assert e.value.status == rb.Status.INVALID_ARGUMENT
