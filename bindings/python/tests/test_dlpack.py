"""DLPack, both ways and zero-copy.

On the CPU with NumPy (always): shared memory both ways (a write on one side is seen on the
other), the producer's deleter runs once and only when the last user is gone, the legacy
and versioned protocols, read-only arrays, non-contiguous arrays refused, bad input as
RbError. On a GPU with PyTorch and CuPy (skipped, with the reason, where torch/cupy or a
CUDA device is missing): `torch.from_dlpack(t)` and `rb.from_dlpack(torch_tensor)` share
the pointer, and an op on rb's side on a torch tensor gives torch's answer. Run there with
RB_TEST_DEVICE=cuda (scripts/gpu-run.sh does).
"""

import ctypes
import gc
import os
import weakref

import numpy as np
import pytest

import rocm_backend as rb

DEVICE = os.environ.get("RB_TEST_DEVICE", "cpu")
NP_HAS_DLPACK = hasattr(np, "from_dlpack")
needs_np = pytest.mark.skipif(not NP_HAS_DLPACK, reason="NumPy < 1.23 has no from_dlpack")


@pytest.fixture(autouse=True)
def test_device():
    """Overrides conftest's: the NumPy tests run on the CPU whatever RB_TEST_DEVICE says (so
    the GPU tests below skip with their reason instead of failing in set_device on a
    machine without one); the GPU tests pick their device themselves."""
    rb.set_device("cpu")
    yield


def _np_ptr(a):
    return a.__array_interface__["data"][0]


# ---------------------------------------------------------------------------------------
# CPU, NumPy


@needs_np
def test_numpy_to_rb_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = rb.from_dlpack(a)
    assert t.shape == (3, 4) and t.dtype == "f32" and t.device == "cpu"
    assert t.data_ptr() == _np_ptr(a)
    a[1, 2] = -5.0  # NumPy writes, rb sees it
    assert t.numpy()[1, 2] == -5.0
    rb.fill(t, 2.0)  # rb writes, NumPy sees it
    assert (a == 2.0).all()
    y = rb.add(t, t)  # an op on it
    np.testing.assert_array_equal(y.numpy(), np.full((3, 4), 4.0, np.float32))


@needs_np
def test_rb_to_numpy_shares_memory():
    t = rb.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    a = np.from_dlpack(t)
    assert a.shape == (2, 3) and a.dtype == np.float32
    assert _np_ptr(a) == t.data_ptr()
    a[0, 0] = 42.0
    assert t.numpy()[0, 0] == 42.0
    rb.fill(t, 1.0)
    assert (a == 1.0).all()
    # The array keeps the storage alive after the Tensor is gone.
    del t
    gc.collect()
    assert (a == 1.0).all()


@needs_np
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.int64, np.bool_, np.float64,
                                   np.int8, np.uint8, np.int16])
def test_dtypes_round_trip(dtype):
    a = (np.arange(10) % 3).astype(dtype)
    t = rb.from_dlpack(a)
    assert t.data_ptr() == _np_ptr(a)
    back = np.from_dlpack(t)
    assert back.dtype == a.dtype
    np.testing.assert_array_equal(back, a)


@needs_np
def test_deleter_runs_once_when_the_last_user_goes():
    # A NumPy array that owns nothing else: when rb's tensor (the only user of the capsule)
    # goes, NumPy's deleter drops its reference to the array; track it with a weakref to a
    # subclass instance (ndarray itself takes no weakrefs).
    class Arr(np.ndarray):
        pass

    base = np.arange(8, dtype=np.float32).view(Arr)
    ref = weakref.ref(base)
    t = rb.from_dlpack(base)
    v = t.reshape(2, 4)  # a view of the same storage
    del base
    gc.collect()
    assert ref() is not None, "the producer's array lives while rb uses it"
    del t
    gc.collect()
    assert ref() is not None, "a view still uses it"
    np.testing.assert_array_equal(v.numpy().ravel(), np.arange(8, dtype=np.float32))
    del v
    gc.collect()
    assert ref() is None, "the deleter ran when the last view went"


def test_our_capsule_deleter_runs_once():
    # Our export, consumed by ourselves: the storage is released exactly once. Counting
    # through the library's own live-handle view is not exposed, so count frees through a
    # capsule we never consume: its destructor calls the deleter once and nothing crashes.
    t = rb.from_numpy(np.ones(4, np.float32))
    cap = t.__dlpack__(max_version=(1, 1))
    del cap
    gc.collect()
    cap = t.__dlpack__()
    del cap, t
    gc.collect()


@needs_np
def test_versioned_and_legacy_protocols():
    t = rb.from_numpy(np.arange(4, dtype=np.float32))
    api = ctypes.pythonapi
    api.PyCapsule_IsValid.restype = ctypes.c_int
    api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    v = t.__dlpack__(max_version=(1, 0))
    assert api.PyCapsule_IsValid(v, b"dltensor_versioned")
    legacy = t.__dlpack__()
    assert api.PyCapsule_IsValid(legacy, b"dltensor")
    # Raw capsules are accepted too, and renamed "used_..." once taken.
    u = rb.from_dlpack(v)
    assert api.PyCapsule_IsValid(v, b"used_dltensor_versioned")
    w = rb.from_dlpack(legacy)
    assert u.data_ptr() == w.data_ptr() == t.data_ptr()
    with pytest.raises(rb.RbError):
        rb.from_dlpack(v)  # already used
    assert t.__dlpack_device__() == (1, 0)


@needs_np
def test_rb_to_rb_and_copy():
    t = rb.from_numpy(np.arange(3, dtype=np.float32))
    s = rb.from_dlpack(t)
    assert s.data_ptr() == t.data_ptr()
    c = np.from_dlpack(t, copy=True) if _np_copy_kw() else None
    if c is not None:
        assert _np_ptr(c) != t.data_ptr()
    cap = t.__dlpack__(max_version=(1, 1), copy=True)
    u = rb.from_dlpack(cap)
    assert u.data_ptr() != t.data_ptr()
    np.testing.assert_array_equal(u.numpy(), t.numpy())


def _np_copy_kw():
    import inspect

    try:
        return "copy" in inspect.signature(np.from_dlpack).parameters
    except (TypeError, ValueError):
        return False


@needs_np
def test_read_only_array_becomes_a_read_only_tensor():
    a = np.arange(4, dtype=np.float32)
    a.flags.writeable = False
    try:
        t = rb.from_dlpack(a)
    except (BufferError, TypeError) as e:  # NumPy < 2 refuses read-only exports
        pytest.skip(f"this NumPy does not export read-only arrays: {e}")
    assert t.is_read_only
    with pytest.raises(rb.RbError) as e:
        rb.fill(t, 1.0)
    assert e.value.status == rb.Status.INVALID_ARGUMENT and "read-only" in e.value.message
    with pytest.raises(rb.RbError):
        t.copy_(np.zeros(4, np.float32))
    np.testing.assert_array_equal(rb.add(t, t).numpy(), 2 * a)
    assert (a == np.arange(4)).all()
    # A legacy consumer cannot be told: refused.
    with pytest.raises(BufferError):
        t.__dlpack__()


@needs_np
def test_non_contiguous_is_refused():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    with pytest.raises(rb.RbError) as e:
        rb.from_dlpack(a.T)
    assert e.value.status == rb.Status.UNSUPPORTED and "contiguous" in e.value.message
    with pytest.raises(rb.RbError):
        rb.from_dlpack(a[:, ::2])
    # A contiguous slice (offset into the buffer) is fine.
    t = rb.from_dlpack(a[1:])
    np.testing.assert_array_equal(t.numpy(), a[1:])
    # A uint32 array has no rb dtype (float64 is "f64").
    with pytest.raises(rb.RbError) as e:
        rb.from_dlpack(np.zeros(3, np.uint32))
    assert e.value.status == rb.Status.DTYPE_MISMATCH


def test_bad_input():
    with pytest.raises(rb.RbError):
        rb.from_dlpack(object())
    t = rb.zeros((2,))
    with pytest.raises(BufferError):
        t.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        rb.from_dlpack(t, device="cuda:0")


# ---------------------------------------------------------------------------------------
# GPU: PyTorch and CuPy on CUDA (the lent GPU machine)


def _torch_cuda():
    if not DEVICE.startswith("cuda"):
        pytest.skip(f"RB_TEST_DEVICE={DEVICE}: the GPU DLPack tests run with RB_TEST_DEVICE=cuda")
    torch = pytest.importorskip("torch", reason="PyTorch is not installed")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    if not rb.cuda_is_available():
        pytest.skip("rocm_backend sees no CUDA device")
    rb.set_device("cuda:0")
    return torch


def test_torch_cuda_to_rb_zero_copy_and_ops():
    torch = _torch_cuda()
    x = torch.randn(64, 32, device="cuda")
    w = torch.randn(32, 16, device="cuda")
    tx, tw = rb.from_dlpack(x), rb.from_dlpack(w)
    assert tx.device == "cuda:0" and tx.data_ptr() == x.data_ptr()
    y = rb.matmul(tx, tw)
    ty = torch.from_dlpack(y)  # back to torch, no copy
    assert ty.data_ptr() == y.data_ptr() and ty.device.type == "cuda"
    torch.testing.assert_close(ty, x @ w, rtol=1e-4, atol=1e-4)
    r = torch.from_dlpack(rb.relu(tx))
    torch.testing.assert_close(r, torch.relu(x))
    # Shared memory both ways on the device.
    x.fill_(3.0)
    torch.cuda.synchronize()
    assert float(tx.numpy()[0, 0]) == 3.0
    rb.fill(tx, 5.0)
    rb.synchronize()
    assert float(x[0, 0]) == 5.0


def test_torch_cuda_from_rb_keeps_storage_and_streams():
    torch = _torch_cuda()
    t = rb.randn((1000,), seed=3, device="cuda:0")
    expect = t.numpy()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        x = torch.from_dlpack(t)  # torch passes its current stream; rb waits for its work
        z = x * 2
    del t
    gc.collect()
    s.synchronize()
    np.testing.assert_allclose(z.cpu().numpy(), 2 * expect, rtol=1e-6)
    assert x.__dlpack_device__() == (2, 0)


def test_torch_non_contiguous_refused():
    torch = _torch_cuda()
    x = torch.randn(8, 4, device="cuda").t()
    with pytest.raises(rb.RbError) as e:
        rb.from_dlpack(x)
    assert e.value.status == rb.Status.UNSUPPORTED
    rb.from_dlpack(x.contiguous())


def test_cupy_both_ways():
    if not DEVICE.startswith("cuda"):
        pytest.skip(f"RB_TEST_DEVICE={DEVICE}: the GPU DLPack tests run with RB_TEST_DEVICE=cuda")
    cp = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("CuPy sees no CUDA device")
    except Exception as e:  # noqa: BLE001 (CuPy without a driver)
        pytest.skip(f"CuPy cannot reach CUDA: {e}")
    if not rb.cuda_is_available():
        pytest.skip("rocm_backend sees no CUDA device")
    rb.set_device("cuda:0")
    a = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    t = rb.from_dlpack(a)
    assert t.data_ptr() == a.data.ptr
    b = cp.from_dlpack(rb.mul(t, t))
    cp.testing.assert_allclose(b, a * a)
    c = cp.from_dlpack(t)
    assert c.data.ptr == a.data.ptr
