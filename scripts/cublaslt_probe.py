#!/usr/bin/env python3
"""Probe of cuBLASLt through ctypes, run on the lent GPU beside PyTorch: ResNet-50's exact-f32
1x1 convolutions (b32, NCHW, stride 1) as batched row-major products.

Per image the convolution is y[n] (co x hw) = W (co x ci) . x[n] (ci x hw), row-major
(ORDER_ROW layouts, A's batch stride 0). Each shape is timed for every algorithm of the
heuristic (exact CUBLAS_COMPUTE_32F, no TF32) against PyTorch's cudnn.benchmark convolution:
the plain product; with the BIAS (+ RELU) epilogue (cuBLASLt 13.1 refuses it on row-major
layouts: status 15, NOT_SUPPORTED; its bias runs along D's rows, the spatial positions in the
column-major form); and for a bottleneck's last convolution (co == 4 ci) with the residual as
C (beta 1: D = relu(W.x + z)). Every result is checked against float64. On the H200
(2026-11-29) the plain products summed 3394 us against cuDNN's 4092 us over the stride-1 1x1
convolutions: src/device/gpu/conv.rs's exhaustive search times them (column-major form, the
bias in its epilogue kernel). A development tool. Usage: python3 scripts/cublaslt_probe.py
"""
import ctypes as C
import glob
import os

import torch
import torch.nn.functional as F


def load():
    paths = []
    try:
        import nvidia.cublas as nb
        for p in nb.__path__:
            paths += sorted(glob.glob(os.path.join(p, "lib", "libcublasLt.so*")))
    except ImportError:
        pass
    paths += ["libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"]
    for p in paths:
        try:
            return C.CDLL(p), p
        except OSError:
            continue
    raise SystemExit("no libcublasLt")


lt, ltpath = load()
lt.cublasLtGetVersion.restype = C.c_size_t
print("cublasLt", lt.cublasLtGetVersion(), ltpath, flush=True)

# cublasLt.h / library_types.h
CUBLAS_COMPUTE_32F, CUDA_R_32F = 68, 0
L_TYPE, L_ORDER, L_ROWS, L_COLS, L_LD, L_BATCH, L_STRIDE = 0, 1, 2, 3, 4, 5, 6
ORDER_COL, ORDER_ROW = 0, 1
D_EPILOGUE, D_BIAS_POINTER = 7, 8
EPI_DEFAULT, EPI_RELU, EPI_BIAS, EPI_RELU_BIAS = 1, 2, 4, 6
P_MAX_WS = 1


def chk(what, st):
    if st != 0:
        raise RuntimeError(f"{what}: status {st}")


class Heur(C.Structure):
    _fields_ = [("algo", C.c_uint64 * 8), ("ws", C.c_size_t), ("state", C.c_int),
                ("waves", C.c_float), ("reserved", C.c_int * 4)]


handle = C.c_void_p()
chk("create", lt.cublasLtCreate(C.byref(handle)))
WS = torch.empty(32 << 20, dtype=torch.uint8, device="cuda")


def layout(rows, cols, ld, batch, stride, order):
    h = C.c_void_p()
    chk("layout", lt.cublasLtMatrixLayoutCreate(C.byref(h), CUDA_R_32F, C.c_uint64(rows), C.c_uint64(cols), C.c_int64(ld)))
    for attr, val in ((L_ORDER, C.c_int32(order)), (L_BATCH, C.c_int32(batch)), (L_STRIDE, C.c_int64(stride))):
        chk(f"layout attr {attr}", lt.cublasLtMatrixLayoutSetAttribute(h, attr, C.byref(val), C.sizeof(val)))
    return h


def timeit(fn, iters=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters):
        fn()
    e.record()
    torch.cuda.synchronize()
    return s.elapsed_time(e) / iters * 1000.0


def lt_conv1x1(w, x, b, z, relu, limit=16):
    """Every heuristic algorithm's time for D = [relu](W.x [+ z] [+ b]) (b None: no bias);
    (best us, its error)."""
    n, ci, h, wd = x.shape
    co, hw = w.shape[0], h * wd
    y = torch.empty(n, co, h, wd, device="cuda")
    desc = C.c_void_p()
    chk("desc", lt.cublasLtMatmulDescCreate(C.byref(desc), CUBLAS_COMPUTE_32F, CUDA_R_32F))
    epi = C.c_uint32([[EPI_DEFAULT, EPI_RELU], [EPI_BIAS, EPI_RELU_BIAS]][b is not None][relu])
    chk("epilogue", lt.cublasLtMatmulDescSetAttribute(desc, D_EPILOGUE, C.byref(epi), 4))
    if b is not None:
        bp = C.c_void_p(b.data_ptr())
        chk("bias", lt.cublasLtMatmulDescSetAttribute(desc, D_BIAS_POINTER, C.byref(bp), 8))
    la = layout(co, ci, ci, n, 0, ORDER_ROW)
    lb = layout(ci, hw, hw, n, ci * hw, ORDER_ROW)
    lc = layout(co, hw, hw, n, co * hw, ORDER_ROW)
    pref = C.c_void_p()
    chk("pref", lt.cublasLtMatmulPreferenceCreate(C.byref(pref)))
    wsz = C.c_uint64(WS.numel())
    chk("pref ws", lt.cublasLtMatmulPreferenceSetAttribute(pref, P_MAX_WS, C.byref(wsz), 8))
    res = (Heur * limit)()
    cnt = C.c_int(0)
    st = lt.cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, lc, lc, pref, limit, res, C.byref(cnt))
    if st != 0 or cnt.value == 0:
        return None, f"no algorithm (status {st}, {cnt.value})"
    alpha = C.c_float(1.0)
    beta = C.c_float(1.0 if z is not None else 0.0)
    cptr = z.data_ptr() if z is not None else y.data_ptr()
    ref = F.conv2d(x.double(), w.double()[:, :, None, None], None if b is None else b.double())
    if z is not None:
        ref = ref + z.double()
    if relu:
        ref = ref.clamp_min(0)
    best = None
    stream = torch.cuda.current_stream().cuda_stream
    for i in range(cnt.value):
        def run(i=i):
            chk("matmul", lt.cublasLtMatmul(handle, desc, C.byref(alpha), C.c_void_p(w.data_ptr()), la,
                                            C.c_void_p(x.data_ptr()), lb, C.byref(beta), C.c_void_p(cptr), lc,
                                            C.c_void_p(y.data_ptr()), lc, C.byref(res[i], 0), C.c_void_p(WS.data_ptr()),
                                            C.c_size_t(WS.numel()), C.c_void_p(stream)))
        try:
            run()
            torch.cuda.synchronize()
        except RuntimeError as e:
            print(f"    algo {i}: {e}", flush=True)
            continue
        err = ((y.double() - ref).abs().max() / ref.abs().max()).item()
        us = timeit(run)
        if VERBOSE:
            print(f"    algo {i:2d} {us:8.1f} us err {err:.1e} ws {res[i].ws}", flush=True)
        if err < 1e-5 and (best is None or us < best[0]):
            best = (us, err)
    return best, f"{cnt.value} algorithms"


VERBOSE = False


def main():
    torch.manual_seed(0)
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    shapes = [  # (count, ci, co, hw): ResNet-50's stride-1 1x1 convolutions
        (1, 64, 64, 56), (4, 64, 256, 56), (2, 256, 64, 56), (1, 256, 128, 56), (4, 128, 512, 28),
        (3, 512, 128, 28), (1, 512, 256, 28), (6, 256, 1024, 14), (5, 1024, 256, 14),
        (1, 1024, 512, 14), (3, 512, 2048, 7), (2, 2048, 512, 7)]
    tot_t = tot_l = 0.0
    for cnt, ci, co, hw in shapes:
        x = torch.randn(32, ci, hw, hw, device="cuda")
        w = torch.randn(co, ci, 1, 1, device="cuda") * (1.0 / ci ** 0.5)
        b = torch.randn(co, device="cuda")
        resid = co == 4 * ci
        relu = not resid
        if resid:
            z = torch.randn(32, co, hw, hw, device="cuda")
            t_torch = timeit(lambda: torch.relu_(F.conv2d(x, w, b) + z))
        else:
            z = None
            t_torch = timeit(lambda: torch.relu_(F.conv2d(x, w, b)))
        t_conv = timeit(lambda: F.conv2d(x, w))
        what = "conv+b+z,relu" if resid else "conv+b,relu"
        print(f"1x1 {ci}->{co} @{hw} x{cnt}: torch {what} {t_torch:.1f} us (conv alone {t_conv:.1f})", flush=True)
        wv = w.view(co, ci)
        line = f"RESULT 1x1 {ci}->{co} @{hw} x{cnt}: cudnn conv {t_conv:.1f} us"
        plain, how = lt_conv1x1(wv, x, None, None, False)
        line += f", cuBLASLt row-major plain {plain[0]:.1f} us ({plain[0] / t_conv:.2f}x)" if plain else f", plain: {how}"
        tot_l += cnt * min(t_conv, plain[0] if plain else t_conv)
        fused, how = lt_conv1x1(wv, x, b, z, relu)
        line += f", with bias{'+z' if resid else ''}+relu {fused[0]:.1f} us" if fused else f", with bias: {how}"
        if resid:
            zr, how = lt_conv1x1(wv, x, None, z, True)
            line += f", z (beta 1)+relu {zr[0]:.1f} us against torch's tail {t_torch:.1f}" if zr else f", z+relu: {how}"
        print(line, flush=True)
        tot_t += cnt * t_conv
        torch.cuda.empty_cache()
    print(f"TOTAL stride-1 1x1: cudnn convs alone {tot_t:.0f} us, min(cudnn, cuBLASLt plain) {tot_l:.0f} us", flush=True)


if __name__ == "__main__":
    main()
