"""PyTorch anchors on one GPU for the names the shared anchor scripts lack (issue 13): f16/bf16
softmax, layer_norm, rms_norm and cross_entropy over 16384 x 4096, the matrix-vector
products of decoding, gemv_<dtype>_<out>x<in>: F.linear(x [1, in], W [out, in]) (bytes: W's),
mlp_fwd_4096x4096_gelu_<dtype> (Linear-GELU-Linear, PyTorch's unfused half path),
and attention (F.scaled_dot_product_attention, PyTorch's own choice of backend):
  sdpa_portable_float16_b8h16s2048d64[_causal]: the forward (the anchor rb-bench's portable
    kernel is held to; TFLOPs as 4 b h s^2 d, halved when causal);
  sdpa_bwd_<dtype>_b8h16s2048d64[_causal]: the backward alone, torch.autograd.grad(out,
    (q, k, v), g, retain_graph=True) after one forward (rb-bench times one backward call,
    which recomputes the forward's logsumexp itself); TFLOPs as 2.5x the forward's;
  sdpa_decode_float16_b1h32kv8s4096d128: one query per head, 32 query heads on 8 key/value
    heads (enable_gqa), 4096 keys, d 128; GBps: K and V bytes.
Same output as ../shared/bench/torch_anchors*.py (a table, and $OUT/torch_anchors_half.json in
compare.py's format), so rb-bench's JSON lines up with it:
    python3 compare.py ours.json torch_anchors_half.json"""
import json, os, statistics
import torch, torch.nn.functional as F
torch.backends.cuda.matmul.allow_tf32 = False
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
    print(f"{name:40s} {ms*1000:10.1f} us  " + "  ".join(f"{k}={v:.1f}" for k, v in kw.items()), flush=True)
R, C = 16384, 4096
for dt in (torch.float16, torch.bfloat16):
    tag = str(dt)[6:]
    X = torch.randn(R, C, device=dev, dtype=dt)
    w = torch.randn(C, device=dev, dtype=dt); bb = torch.randn(C, device=dev, dtype=dt)
    T = torch.randint(0, C, (R,), device=dev)
    ms = bench(lambda: torch.softmax(X, -1)); put(f"softmax_{tag}_16384x4096", ms, GBps=4 * X.numel() / ms / 1e6)
    ms = bench(lambda: F.layer_norm(X, (C,), w, bb)); put(f"layernorm_{tag}_16384x4096", ms, GBps=4 * X.numel() / ms / 1e6)
    ms = bench(lambda: F.rms_norm(X, (C,), w)); put(f"rmsnorm_{tag}_16384x4096", ms, GBps=4 * X.numel() / ms / 1e6)
    ms = bench(lambda: F.cross_entropy(X, T)); put(f"cross_entropy_{tag}_16384x4096", ms, GBps=2 * X.numel() / ms / 1e6)
for dt in (torch.float16, torch.bfloat16, torch.float32):
    tag = str(dt)[6:]
    for out, inp in ((4096, 11008), (11008, 4096)):
        W = torch.randn(out, inp, device=dev, dtype=dt); x = torch.randn(1, inp, device=dev, dtype=dt)
        ms = bench(lambda: F.linear(x, W), iters=200)
        put(f"gemv_{tag}_{out}x{inp}", ms, GBps=W.numel() * W.element_size() / ms / 1e6)
# mlp_fwd_4096x4096_gelu_<dtype>: torch_anchors.py's f32 MLP in half precision, PyTorch's
# unfused path (nn.Linear: cuBLASLt with the bias; then the GELU kernel; then nn.Linear).
for dt in (torch.float16, torch.bfloat16):
    tag = str(dt)[6:]
    big = torch.nn.Sequential(torch.nn.Linear(4096, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096)).to(dev, dt)
    xb = torch.randn(4096, 4096, device=dev, dtype=dt)
    with torch.no_grad():
        ms = bench(lambda: big(xb), iters=20)
    put(f"mlp_fwd_4096x4096_gelu_{tag}", ms, TFLOPs=2 * 2 * 4096**3 / ms / 1e9)
    del big, xb
B, H, S, D = 8, 16, 2048, 64
for causal in (False, True):
    sfx = "_causal" if causal else ""
    fl = 4 * B * H * S * S * D / (2 if causal else 1)
    q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=torch.float16) for _ in range(3))
    ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
    put(f"sdpa_portable_float16_b{B}h{H}s{S}d{D}{sfx}", ms, TFLOPs=fl / ms / 1e9)
    for dt in (torch.float16, torch.bfloat16):
        tag = str(dt)[6:]
        q, k, v = (torch.randn(B, H, S, D, device=dev, dtype=dt, requires_grad=True) for _ in range(3))
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        g = torch.randn_like(out)
        ms = bench(lambda: torch.autograd.grad(out, (q, k, v), g, retain_graph=True))
        put(f"sdpa_bwd_{tag}_b{B}h{H}s{S}d{D}{sfx}", ms, TFLOPs=2.5 * fl / ms / 1e9)
q = torch.randn(1, 32, 1, 128, device=dev, dtype=torch.float16)
k, v = (torch.randn(1, 8, 4096, 128, device=dev, dtype=torch.float16) for _ in range(2))
ms = bench(lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=True), iters=200)
put("sdpa_decode_float16_b1h32kv8s4096d128", ms, GBps=(k.numel() + v.numel()) * 2 / ms / 1e6)
json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "results": res},
          open(os.environ.get("OUT", "/tmp") + "/torch_anchors_half.json", "w"), indent=1)
