#!/usr/bin/env python3
"""Per-kernel GPU time of ResNet-50 inference, ours against PyTorch's, in one process.

Both run under torch.profiler (CUPTI records every kernel of the process, whoever launched
it, cuDNN's included): PyTorch's torchvision ResNet-50 in eval mode as
../shared/bench/torch_anchors_graph.py runs it (f16: channels_last; cudnn.benchmark on,
TF32 off), and the same architecture recorded through the library (benches/resnet_onnx.py's
recorded network, run by an executor at --opt-level; --keep-fp32 keeps f32 products
exact, as rb-bench's resnet50_b32_f32 names do, else O2+ runs them in bf16). Prints, for each side, the
kernels grouped by name (count per run, us per run, share), the total kernel time per run
and the wall time per run (CUDA events, outside the profiler).

    RB_LIBRARY=.../librocm_backend.so PYTHONPATH=bindings/python \
        python3 scripts/resnet_kernels.py --dtype f16 --batch 32   # OUT=dir: JSON there
"""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benches"))


def kernel_table(prof, runs):
    rows = {}
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        us = e.device_time if hasattr(e, "device_time") else e.cuda_time
        r = rows.setdefault(e.name, [0, 0.0])
        r[0] += 1
        r[1] += us
    return {k: (c / runs, t / runs) for k, (c, t) in rows.items()}


def show(title, table, wall_us, top):
    total = sum(t for _, t in table.values())
    print(f"\n## {title}: kernels {total:.1f} us per run, wall {wall_us:.1f} us per run, "
          f"{sum(c for c, _ in table.values()):.0f} kernels per run")
    for name, (c, t) in sorted(table.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{t:9.1f} us {100 * t / max(total, 1e-9):5.1f}% x{c:5.1f}  {name[:150]}")
    return total


def timed(fn, torch, iters=30, warm=5):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(iters):
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        ts.append(s.elapsed_time(e) * 1e3)
    return statistics.median(ts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="f16", choices=["f16", "f32"])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--opt-level", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--top", type=int, default=40)
    ap.add_argument("--skip-torch", action="store_true")
    ap.add_argument("--keep-fp32", action="store_true",
                    help="f32 kept at O2+ (exact f32, as rb-bench's resnet50_b32_f32 names run); "
                         "default: the executor's mixed precision (bf16 products on GPUs)")
    args = ap.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    import resnet_onnx as R
    import rocm_backend as rb

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    half = args.dtype == "f16"
    shape = (args.batch, 3, 224, 224)
    out = {}

    # --- ours: the recorded network through an executor (the stream the executor runs on
    # is its own at O3; rb.synchronize waits for the device) ---
    rb.set_device("cuda")
    params = R.make_params(0, np.float16 if half else np.float32)
    exe = R.record_rb(rb, params, "cuda", shape, args.dtype, args.opt_level)
    if args.keep_fp32:
        exe = rb.Executor(exe._graph, opt_level=args.opt_level, keep_fp32=True)
    x_np = np.random.default_rng(1).standard_normal(shape).astype(np.float16 if half else np.float32)
    x_rb = rb.Tensor.from_numpy(x_np, device="cuda")

    def ours():
        exe(x_rb)

    for _ in range(5):
        ours()
    rb.synchronize()
    ts = []
    for _ in range(30):
        t0 = time.perf_counter()
        ours()
        rb.synchronize()
        ts.append((time.perf_counter() - t0) * 1e6)
    wall_ours = statistics.median(ts)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(args.runs):
            ours()
        rb.synchronize()
    tab = kernel_table(prof, args.runs)
    print(exe.stats_string() if hasattr(exe, "stats_string") else "")
    out["ours"] = dict(wall_us=wall_ours, kernels_us=show(
        f"ours O{args.opt_level} {args.dtype}{' (f32 kept)' if args.keep_fp32 else ''} b{args.batch}", tab, wall_ours, args.top),
        table={k: list(v) for k, v in tab.items()})

    if not args.skip_torch:
        import torchvision
        m = torchvision.models.resnet50().cuda().eval()
        x = torch.randn(*shape, device="cuda")
        if half:
            m = m.half().to(memory_format=torch.channels_last)
            x = x.half().to(memory_format=torch.channels_last)
        with torch.no_grad():
            wall = timed(lambda: m(x), torch)
            g = torch.cuda.CUDAGraph()
            s = torch.cuda.Stream()
            s.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(s):
                for _ in range(3):
                    m(x)
            torch.cuda.current_stream().wait_stream(s)
            with torch.cuda.graph(g):
                m(x)
            wall_g = timed(g.replay, torch)
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(args.runs):
                    m(x)
                torch.cuda.synchronize()
        tab = kernel_table(prof, args.runs)
        out["torch"] = dict(wall_eager_us=wall, wall_graph_us=wall_g, kernels_us=show(
            f"PyTorch eager {args.dtype} b{args.batch} (CUDA graph {wall_g:.1f} us)", tab, wall,
            args.top), table={k: list(v) for k, v in tab.items()})

    d = os.environ.get("OUT") or "/tmp"
    with open(os.path.join(d, f"resnet_kernels_{args.dtype}.json"), "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
