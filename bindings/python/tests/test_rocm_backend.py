"""Tests of the rocm_backend Python package against NumPy, including the error paths."""

import gc
import threading
import weakref

import numpy as np
import pytest

import rocm_backend as rb
from rocm_backend import RbError, Status

RNG = np.random.default_rng(1234)
TOL = {"f32": 1e-5, "f16": 1e-2, "bf16": 1e-2}


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def assert_close(got, want, dtype="f32"):
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


# ---- package and devices ----------------------------------------------------------------


def test_version_matches_header_macros():
    import pathlib
    import re

    assert re.fullmatch(r"\d+\.\d+\.\d+", rb.__version__)
    header = pathlib.Path(__file__).resolve().parents[3] / "include" / "rocm_backend.h"
    if header.is_file():
        h = header.read_text()
        parts = [re.search(rf"#define RB_VERSION_{p} (\d+)", h).group(1) for p in ("MAJOR", "MINOR", "PATCH")]
        assert ".".join(parts) == rb.__version__


def test_allow_tf32_is_opt_in():
    # As torch.backends.cuda.matmul.allow_tf32: off by default, a process-wide setter.
    assert rb.get_allow_tf32() is False
    assert rb.backends.cuda.matmul.allow_tf32 is False
    try:
        rb.backends.cuda.matmul.allow_tf32 = True
        assert rb.get_allow_tf32() is True
        rb.set_allow_tf32(False)
        assert rb.backends.cuda.matmul.allow_tf32 is False
    finally:
        rb.set_allow_tf32(False)
    # The executor's own switch is a config field.
    from rocm_backend._graph import ExecutorConfig
    assert "allow_tf32" in dict(ExecutorConfig._fields_)


def test_devices():
    rb.set_device("cpu")
    assert rb.get_device() == "cpu"
    info = rb.device_info()
    assert info["kind"] == "cpu" and info["device"] == "cpu" and info["ordinal"] == 0
    assert info["name"] and info["arch"] and info["family"]
    assert info["total_memory"] > 0 and 0 <= info["free_memory"] <= info["total_memory"]
    assert info["compute_units"] >= 1 and info["warp_size"] == 1
    rb.set_device("auto")
    if not rb.rocm_is_available() and not rb.cuda_is_available():
        assert rb.get_device() == "cpu"
    assert rb.rocm_is_available() == (rb.rocm_device_count() > 0)
    assert rb.cuda_is_available() == (rb.cuda_device_count() > 0)
    rb.synchronize()


def test_rocm_unavailable_is_an_error_with_a_reason():
    if rb.rocm_is_available():
        pytest.skip("ROCm is available on this machine")
    assert rb.rocm_unavailable_reason()
    with pytest.raises(RbError) as e:
        rb.set_device("rocm:0")
    assert e.value.status == Status.DEVICE_UNAVAILABLE
    assert e.value.status_name == "RB_STATUS_DEVICE_UNAVAILABLE"
    assert "rb_set_device" in e.value.message
    assert rb.get_device() == "cpu"  # unchanged


@pytest.mark.parametrize("bad", ["tpu", "", "cpu:x", "rocm:-1"])
def test_unknown_device_strings(bad):
    with pytest.raises(RbError) as e:
        rb.set_device(bad)
    assert e.value.status == Status.INVALID_ARGUMENT
    assert int(e.value.status) == 1 and e.value.message


def test_device_threads_have_their_own_last_error():
    errors = {}

    def worker(i):
        try:
            rb.zeros((2, -i - 1))
        except RbError as e:
            errors[i] = e.message

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert sorted(errors) == [0, 1, 2, 3]
    for i, m in errors.items():
        assert str(-i - 1) in m


# ---- tensors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "np_dtype,name",
    [(np.float32, "f32"), (np.float16, "f16"), (np.int32, "i32"), (np.int64, "i64"), (np.bool_, "bool")],
)
def test_numpy_round_trip(np_dtype, name):
    a = (RNG.standard_normal((3, 4, 5)) * 10).astype(np_dtype)
    t = rb.from_numpy(a)
    assert t.shape == (3, 4, 5) and t.ndim == 3 and t.dtype == name and t.device == "cpu"
    assert t.nbytes == a.nbytes and t.size == a.size and len(t) == 3
    b = t.numpy()
    assert b.dtype == a.dtype
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.asarray(t), a)


def test_bf16_round_trip_rounds_to_nearest_even():
    a = rand(64)
    t = rb.from_numpy(a, dtype="bf16")
    assert t.dtype == "bf16" and t.nbytes == 128
    b = t.numpy()
    assert b.dtype == np.float32
    assert_close(b, a, "bf16")
    # exact values survive; ties round to even
    exact = np.array([1.0, -2.5, 0.0, 3.140625], dtype=np.float32)
    np.testing.assert_array_equal(rb.from_numpy(exact, dtype="bf16").numpy(), exact)
    tie = np.array([1.0 + 2.0**-8], dtype=np.float32)  # halfway between 1 and 1+2^-7
    assert rb.from_numpy(tie, dtype="bf16").numpy()[0] == 1.0


def test_float64_and_non_contiguous_input():
    a = RNG.standard_normal((6, 8))  # float64: f64, as torch.from_numpy
    t = rb.from_numpy(a[:, ::2])
    assert t.dtype == "f64" and t.shape == (6, 4)
    np.testing.assert_array_equal(t.numpy(), a[:, ::2])
    assert rb.from_numpy(a[:, ::2], dtype="f32").dtype == "f32"
    # Python lists take torch.tensor's defaults; small integer arrays keep their type.
    assert rb.from_numpy([[1.5, 2.0]]).dtype == "f32"
    assert rb.from_numpy([1, 2]).dtype == "i64"
    for np_dt, name in ((np.int8, "i8"), (np.uint8, "u8"), (np.int16, "i16"), (np.uint16, "i64")):
        x = rb.from_numpy(np.array([1, 2, 3], np_dt))
        assert x.dtype == name and x.numpy().tolist() == [1, 2, 3]
    # NumPy arguments of ops keep the old defaults (float64 -> f32, integers -> i64).
    assert rb.add(rb.from_numpy(np.ones(2, np.float32)), np.ones(2)).dtype == "f32"


def test_zero_dim_and_empty_tensors():
    s = rb.from_numpy(np.float32(2.5))
    assert s.shape == () and s.ndim == 0 and s.numpy() == np.float32(2.5)
    e = rb.zeros((0, 7))
    assert e.shape == (0, 7) and e.numpy().shape == (0, 7) and e.nbytes == 0


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16", "i32", "i64", "bool"])
def test_zeros_and_empty(dtype):
    z = rb.zeros((4, 3), dtype=dtype)
    assert z.dtype == dtype and z.shape == (4, 3)
    assert not np.any(z.numpy())
    e = rb.empty((2, 2), dtype=dtype)
    assert e.shape == (2, 2) and e.dtype == dtype


def test_randn_reproducible_and_normal():
    a = rb.randn((10000,), seed=7).numpy()
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05
    np.testing.assert_array_equal(a, rb.randn(10000, seed=7).numpy())
    assert not np.array_equal(a, rb.randn(10000, seed=8).numpy())
    h = rb.randn((100,), dtype="f16", seed=7)
    assert h.dtype == "f16"
    assert_close(h.numpy(), a[:100].astype(np.float16), "f16")


def test_randint_range():
    r = rb.randint((5000,), -3, 4, seed=1)
    v = r.numpy()
    assert r.dtype == "i64" and v.min() == -3 and v.max() == 3
    assert rb.randint((10,), 0, 5, dtype="i32").numpy().dtype == np.int32


def test_reshape_is_a_view_and_copy_():
    a = rand(2, 6)
    t = rb.from_numpy(a)
    v = t.reshape(3, 4)
    assert v.shape == (3, 4)
    np.testing.assert_array_equal(v.numpy(), a.reshape(3, 4))
    t.copy_(np.ones((2, 6), np.float32))
    np.testing.assert_array_equal(v.numpy(), np.ones((3, 4), np.float32))


def test_del_destroys_the_handle():
    t = rb.zeros((2, 2))
    h = t.handle
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is None
    # the raw handle is now stale: the library answers INVALID_HANDLE instead of crashing
    assert rb._lib.lib.rb_tensor_destroy(h) == Status.INVALID_HANDLE


def test_use_after_destroy_raises():
    t = rb.zeros((2, 2))
    t.destroy()
    with pytest.raises(RbError) as e:
        t.numpy()
    assert e.value.status == Status.INVALID_HANDLE


def test_stale_and_foreign_handles_are_invalid_handle():
    t = rb.zeros((2, 2))
    h = t.handle
    t.destroy()
    ghost = rb.Tensor(h)
    with pytest.raises(RbError) as e:
        ghost.shape
    assert e.value.status == Status.INVALID_HANDLE
    ghost._h = None
    s = rb.Stream()
    as_tensor = rb.Tensor(s.handle)  # a stream handle posing as a tensor
    with pytest.raises(RbError) as e:
        as_tensor.dtype
    assert e.value.status == Status.INVALID_HANDLE and "rb_stream" in e.value.message
    as_tensor._h = None


# ---- creation errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    "call,status",
    [
        (lambda: rb.zeros((2, -3)), Status.INVALID_ARGUMENT),
        (lambda: rb.zeros((2**62, 2**62)), Status.INVALID_ARGUMENT),
        (lambda: rb.zeros((2,), dtype=99), Status.INVALID_ARGUMENT),
        (lambda: rb.zeros((2,), dtype=-1), Status.INVALID_ARGUMENT),
        (lambda: rb.zeros((2,), dtype="f128"), Status.INVALID_ARGUMENT),
        (lambda: rb.zeros((2,), dtype="u16"), Status.INVALID_ARGUMENT),
        (lambda: rb.randn((2,), dtype="f64"), Status.DTYPE_MISMATCH),
        (lambda: rb.zeros((2,), device="mars"), Status.INVALID_ARGUMENT),
        (lambda: rb.randn((2,), dtype="i32"), Status.DTYPE_MISMATCH),
        (lambda: rb.randint((2,), 5, 5), Status.INVALID_ARGUMENT),
        (lambda: rb.randint((2,), 0, 5, dtype="f32"), Status.DTYPE_MISMATCH),
        (lambda: rb.from_numpy(np.array(["x"])), Status.DTYPE_MISMATCH),
        (lambda: rb.zeros((2, 3)).reshape(4, 2), Status.SHAPE_MISMATCH),
        (lambda: rb.zeros((2, 3)).copy_(np.ones((3, 2))), Status.SHAPE_MISMATCH),
    ],
)
def test_creation_errors(call, status):
    with pytest.raises(RbError) as e:
        call()
    assert e.value.status == status
    assert e.value.message


# ---- ops against NumPy ------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(
    "sa,sb",
    [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 5), (3, 1)), ((), (7,)), ((1,), (1,)), ((0, 3), (3,))],
)
def test_add_broadcasts_like_numpy(dtype, sa, sb):
    a, b = rand(*sa), rand(*sb)
    ta, tb = rb.from_numpy(a, dtype=dtype), rb.from_numpy(b, dtype=dtype)
    got = rb.add(ta, tb)
    assert got.dtype == dtype and got.shape == np.broadcast_shapes(sa, sb)
    assert_close(got.numpy(), ta.numpy().astype(np.float64) + tb.numpy().astype(np.float64), dtype)
    assert_close((ta + tb).numpy(), got.numpy(), dtype)


def test_add_integers_and_scalars():
    a = RNG.integers(-100, 100, (4, 5))
    got = rb.add(rb.from_numpy(a), rb.from_numpy(a[0]))
    np.testing.assert_array_equal(got.numpy(), a + a[0])
    t = rb.from_numpy(rand(3))
    assert_close((t + 1.5).numpy(), t.numpy() + 1.5)
    assert_close((1.5 + t).numpy(), t.numpy() + 1.5)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_relu(dtype):
    a = rand(5, 33)
    t = rb.from_numpy(a, dtype=dtype)
    assert_close(rb.relu(t).numpy(), np.maximum(t.numpy(), 0), dtype)


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
@pytest.mark.parametrize(
    "sa,sb",
    [((4, 5), (5, 3)), ((1, 1), (1, 1)), ((17, 33), (33, 9)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((5,), (5, 2)), ((3, 5), (5,)), ((5,), (5,))],
)
def test_matmul_like_numpy(dtype, sa, sb):
    a, b = rand(*sa), rand(*sb)
    ta, tb = rb.from_numpy(a, dtype=dtype), rb.from_numpy(b, dtype=dtype)
    want = np.matmul(ta.numpy().astype(np.float64), tb.numpy().astype(np.float64))
    got = rb.matmul(ta, tb)
    assert got.shape == want.shape and got.dtype == dtype
    tol = 1e-4 if dtype == "f32" else 2e-2
    np.testing.assert_allclose(got.numpy().astype(np.float64), want, rtol=tol, atol=tol * max(1, sa[-1] ** 0.5))
    np.testing.assert_allclose((ta @ tb).numpy(), got.numpy())


def test_mlp_forward_against_numpy():
    x, w1, b1, w2, b2 = rand(8, 20), rand(20, 16), rand(16), rand(16, 4), rand(4)
    t = [rb.from_numpy(v) for v in (x, w1, b1, w2, b2)]
    y = rb.relu(t[0] @ t[1] + t[2]) @ t[3] + t[4]
    want = np.maximum(x @ w1 + b1, 0) @ w2 + b2
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-4, atol=1e-4)


def test_out_argument_and_stream():
    a, b = rand(3, 4), rand(3, 4)
    ta, tb = rb.from_numpy(a), rb.from_numpy(b)
    out = rb.empty((3, 4))
    s = rb.Stream("cpu")
    r = rb.add(ta, tb, out=out, stream=s)
    s.synchronize()
    assert r is out
    assert_close(out.numpy(), a + b)
    rb.relu(ta, out=ta)  # in place
    assert_close(ta.numpy(), np.maximum(a, 0))


@pytest.mark.parametrize(
    "call,status,word",
    [
        (lambda: rb.matmul(rb.zeros((2, 3)), rb.zeros((4, 5))), Status.SHAPE_MISMATCH, "rb_matmul"),
        (lambda: rb.matmul(rb.zeros((2, 3)), rb.zeros((3, 2), dtype="f16")), Status.DTYPE_MISMATCH, "rb_matmul"),
        (lambda: rb.matmul(rb.zeros((2, 3), "i32"), rb.zeros((3, 2), "i32")), Status.DTYPE_MISMATCH, "rb_matmul"),
        (lambda: rb.add(rb.zeros((2, 3)), rb.zeros((4,))), Status.SHAPE_MISMATCH, "rb_add"),
        (lambda: rb.add(rb.zeros((2, 3)), rb.zeros((2, 3)), out=rb.zeros((3, 2))), Status.SHAPE_MISMATCH, "rb_add"),
        (lambda: rb.add(rb.zeros((2,)), rb.zeros((2,), dtype="i64")), Status.DTYPE_MISMATCH, "rb_add"),
        (lambda: rb.sigmoid(rb.zeros((2,), dtype="i32")), Status.DTYPE_MISMATCH, "rb_sigmoid"),
    ],
)
def test_op_errors(call, status, word):
    with pytest.raises(RbError) as e:
        call()
    assert e.value.status == status
    assert word in e.value.message
    assert e.value.status_name == "RB_STATUS_" + status.name


def test_op_argument_errors():
    with pytest.raises(TypeError):
        rb.add(rb.zeros((2,)))
    with pytest.raises(TypeError):
        rb.relu(rb.zeros((2,)), bogus=1)


def test_ops_table_defines_the_ops():
    assert {"add", "relu", "matmul"} <= set(rb.OPS)
    assert rb.add.__name__ == "add" and "rb_add" in rb.add.__doc__


def test_tuning_cache(tmp_path):
    tc = rb.tuning_cache()
    assert tc is rb.tuning_cache()
    with pytest.raises(rb.RbError):
        tc.set_file(tmp_path / "no" / "such" / "dir.txt")
    with pytest.raises(rb.RbError):
        tc.set_file(tmp_path)  # a directory
    bad = tmp_path / "foreign.txt"
    bad.write_bytes(b"\x00not a tuning cache")
    before = tc.stats()["file_warnings"]
    tc.set_file(bad)  # recovered, with a warning
    s = tc.stats()
    assert s["file_warnings"] == before + 1 and "not a tuning cache" in s["last_warning"]
    tc.set_file(None)
    tc.set_exhaustive(True)
    tc.set_exhaustive(None)
    tc.clear()
    assert tc.stats()["entries"] == 0 and tc.stats()["hits"] == 0
