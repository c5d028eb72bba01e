"""PyTorch anchors on one GPU for the DNN names the shared anchor scripts lack (issue 14):
bf16 convolution, channels-last (NHWC) convolution, transposed convolution, pooling,
adaptive pooling and batch norm, f16 and bf16 pooling. Channels last is
PyTorch's memory format (`.to(memory_format=torch.channels_last)`, input and weight), the
layout rb-bench's `_nhwc` names hand the library as dense [N, H, W, C] tensors. Same output as
../shared/bench/torch_anchors*.py (a table, and $OUT/torch_anchors_dnn.json in compare.py's
format), so rb-bench's JSON lines up with it:
    python3 compare.py ours.json torch_anchors_dnn.json"""
import json, os, statistics
import torch, torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
torch.backends.cudnn.benchmark = True
dev = "cuda"; res = {}
def bench(fn, iters=50, warm=10):
    for _ in range(warm): fn()
    torch.cuda.synchronize(); ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize(); ts.append(s.elapsed_time(e))
    return statistics.median(ts)
def put(name, ms, **kw):
    res[name] = dict(ms=round(ms, 5), **{k: round(v, 2) for k, v in kw.items()})
    print(f"{name:44s} {ms*1000:10.1f} us  " + "  ".join(f"{k}={v:.1f}" for k, v in kw.items()), flush=True)
CL = torch.channels_last
flops3 = 2 * 32 * 64 * 56 * 56 * 64 * 9
# conv3x3 / convT3x3, ResNet-50 stage-1 shapes: bf16 (NCHW), f16/bf16 channels last.
for dt in (torch.float16, torch.bfloat16):
    tag = str(dt)[6:]
    inp = torch.randn(32, 64, 56, 56, device=dev, dtype=dt); wt = torch.randn(64, 64, 3, 3, device=dev, dtype=dt)
    if dt == torch.bfloat16:
        ms = bench(lambda: F.conv2d(inp, wt, padding=1)); put(f"conv3x3_{tag}_32x64x56x56", ms, TFLOPs=flops3 / ms / 1e9)
        ms = bench(lambda: F.conv_transpose2d(inp, wt, padding=1)); put(f"convT3x3_{tag}_32x64x56x56", ms, TFLOPs=flops3 / ms / 1e9)
    ic, wc = inp.to(memory_format=CL), wt.to(memory_format=CL)
    ms = bench(lambda: F.conv2d(ic, wc, padding=1)); put(f"conv3x3_{tag}_32x64x56x56_nhwc", ms, TFLOPs=flops3 / ms / 1e9)
    ms = bench(lambda: F.conv_transpose2d(ic, wc, padding=1)); put(f"convT3x3_{tag}_32x64x56x56_nhwc", ms, TFLOPs=flops3 / ms / 1e9)
    del inp, wt, ic, wc
# pooling over [32, 64, 112, 112]: bytes = the input and the output (a quarter of it).
for dt, tag in ((torch.float32, "f32"), (torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
    inp = torch.randn(32, 64, 112, 112, device=dev, dtype=dt)
    nbytes = inp.element_size() * inp.numel() * 1.25
    ic = inp.to(memory_format=CL)
    if dt != torch.float32:  # the f32 NCHW names are ../shared/bench/torch_anchors.py's
        ms = bench(lambda: F.max_pool2d(inp, 3, 2, 1)); put(f"maxpool3x3s2_{tag}_32x64x112", ms, GBps=nbytes / ms / 1e6)
        ms = bench(lambda: F.avg_pool2d(inp, 2, 2)); put(f"avgpool2x2_{tag}_32x64x112", ms, GBps=nbytes / ms / 1e6)
    ms = bench(lambda: F.max_pool2d(ic, 3, 2, 1)); put(f"maxpool3x3s2_{tag}_32x64x112_nhwc", ms, GBps=nbytes / ms / 1e6)
    ms = bench(lambda: F.avg_pool2d(ic, 2, 2)); put(f"avgpool2x2_{tag}_32x64x112_nhwc", ms, GBps=nbytes / ms / 1e6)
    # The backward passes (bytes: dy, x for max, dx).
    x = inp.clone().requires_grad_(); y = F.max_pool2d(x, 3, 2, 1); gy = torch.randn_like(y)
    ms = bench(lambda: torch.autograd.grad(y, x, gy, retain_graph=True)); put(f"maxpool3x3s2_bwd_{tag}_32x64x112", ms, GBps=inp.element_size() * inp.numel() * 2.25 / ms / 1e6)
    y2 = F.avg_pool2d(x, 2, 2); gy2 = torch.randn_like(y2)
    ms = bench(lambda: torch.autograd.grad(y2, x, gy2, retain_graph=True)); put(f"avgpool2x2_bwd_{tag}_32x64x112", ms, GBps=inp.element_size() * inp.numel() * 1.25 / ms / 1e6)
    del inp, ic, x, y, y2
# adaptive pooling to 1 x 1 over ResNet-50's last activation [32, 2048, 7, 7], f32 (bytes:
# the input and the output; max pooling also writes i64 indices), NCHW and channels last.
inp = torch.randn(32, 2048, 7, 7, device=dev)
nb = 4 * inp.numel()
for t, sfx in ((inp, ""), (inp.to(memory_format=CL), "_nhwc")):
    ms = bench(lambda: F.adaptive_avg_pool2d(t, 1)); put(f"adaptive_avg_pool2d_f32_32x2048x7x7{sfx}", ms, GBps=nb * (1 + 1 / 49) / ms / 1e6)
    ms = bench(lambda: F.adaptive_max_pool2d(t, 1, return_indices=True)); put(f"adaptive_max_pool2d_f32_32x2048x7x7{sfx}", ms, GBps=nb * (1 + 3 / 49) / ms / 1e6)
del inp, t
# batch_norm, training forward, on channels-last f16 activations [32, 64, 112, 112] (weight,
# bias and running stats f16, as rb-bench passes them): bytes = x read twice, y written.
inp = torch.randn(32, 64, 112, 112, device=dev, dtype=torch.float16).to(memory_format=CL)
rm = torch.zeros(64, device=dev, dtype=torch.float16); rv = torch.ones(64, device=dev, dtype=torch.float16)
g = torch.randn(64, device=dev, dtype=torch.float16); be = torch.randn(64, device=dev, dtype=torch.float16)
ms = bench(lambda: F.batch_norm(inp, rm, rv, g, be, training=True, momentum=0.1, eps=1e-5)); put("batchnorm_f16_32x64x112_nhwc", ms, GBps=6 * inp.numel() / ms / 1e6)
del inp
json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": res},
          open(os.environ.get("OUT", "/tmp") + "/torch_anchors_dnn.json", "w"), indent=1)
