#!/usr/bin/env python3
"""Where a Llama decode step's time goes inside the executor's device-graph replay.

Records torch_anchors_graph.py's llama_decode_f16_8x4096 step (8 layers, d 4096, 32 heads of
128, SwiGLU 11008, RMSNorm, rotate-half RoPE, KV cache of 2048, f16; weights made by PyTorch
as the anchor makes them and shared zero-copy through DLPack) through the package's ops, runs
it with an rb.Executor at --opt-level, and lists each kernel of one replayed step from
torch.profiler (CUPTI records every kernel of the process, inside device graphs too): its
start, its duration, and how far it moved the step's end ("adds": this kernel's end minus the
latest end before it; with early launches a kernel starts before the previous one ends, so
the adds, not the durations, sum to the step). Then the adds summed by kernel name per layer,
and the bytes each product read over its add (the rate the step sees).

    RB_LIBRARY=.../librocm_backend.so PYTHONPATH=bindings/python \
        python3 scripts/llama_timeline.py [--opt-level 3] [--runs 5]   # OUT=dir: JSON there
"""

import argparse
import json
import os
import statistics

L, D, H, HD, FF, T = 8, 4096, 32, 128, 11008, 2048


def record_step(rb, device, layers, cos, sin, posr, dims):
    """The anchor's decode() recorded through the package's ops: a graph of input x [1, 1, D]."""
    D, H, HD = dims
    with rb.record(device) as gr:
        x = gr.input((1, 1, D), "f16")
        for p in layers:
            h = rb.rms_norm(x, [D], p["n1"], 0.0009765625)
            q = rb.rope_cached(rb.linear(h, p["wq"]).reshape(1, 1, H, HD), cos, sin, posr, 1, False)
            k = rb.rope_cached(rb.linear(h, p["wk"]).reshape(1, 1, H, HD), cos, sin, posr, 1, False)
            v = rb.linear(h, p["wv"]).reshape(1, 1, H, HD)
            q, k, v = q.reshape(1, H, 1, HD), k.reshape(1, H, 1, HD), v.reshape(1, H, 1, HD)
            rb.index_copy(p["kc"], 2, posr, k)
            rb.index_copy(p["vc"], 2, posr, v)
            a = rb.scaled_dot_product_attention(q, p["kc"], p["vc"]).reshape(1, 1, D)
            x = rb.add(x, rb.linear(a, p["wo"]))
            h = rb.rms_norm(x, [D], p["n2"], 0.0009765625)
            m = rb.mul(rb.silu(rb.linear(h, p["w1"])), rb.linear(h, p["w3"]))
            x = rb.add(x, rb.linear(m, p["w2"]))
        gr.mark_output(x)
    return gr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--opt-level", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--show", type=int, default=24, help="kernels of the step listed one by one")
    args = ap.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile

    import rocm_backend as rb

    dev = "cuda:0"
    rb.set_device("cuda")
    dt = torch.float16
    g = torch.Generator(device=dev).manual_seed(0)

    def w(*s):
        return torch.randn(*s, device=dev, dtype=dt, generator=g) * 0.02

    tl = [dict(wq=w(D, D), wk=w(D, D), wv=w(D, D), wo=w(D, D), w1=w(FF, D), w3=w(FF, D), w2=w(D, FF),
               n1=torch.ones(D, device=dev, dtype=dt), n2=torch.ones(D, device=dev, dtype=dt),
               kc=w(1, H, T, HD), vc=w(1, H, T, HD)) for _ in range(L)]
    pos = T - 1
    inv = 1.0 / (10000 ** (torch.arange(0, HD, 2, device=dev, dtype=torch.float32) / HD))
    ang = torch.arange(T, device=dev, dtype=torch.float32)[:, None] * inv[None, :]
    cos_t, sin_t = torch.cos(ang).to(dt), torch.sin(ang).to(dt)
    pos_t = torch.tensor([pos], device=dev, dtype=torch.int64)
    x0_t = w(1, 1, D)
    torch.cuda.synchronize()

    r = rb.from_dlpack
    layers = [{k: r(v) for k, v in p.items()} for p in tl]
    cos, sin, posr = r(cos_t), r(sin_t), r(pos_t)

    gr = record_step(rb, "cuda", layers, cos, sin, posr, (D, H, HD))
    exe = rb.Executor(gr, opt_level=args.opt_level)
    xin = r(x0_t)
    # A stream of our own: device graphs need a non-default stream.
    st = rb.Stream("cuda")
    for _ in range(5):
        out = exe(xin, stream=st)
    torch.cuda.synchronize()
    print(exe.stats_string(), flush=True)

    # Host clock around 30 back-to-back runs on our stream (device-wide synchronize).
    import time
    ts = []
    for _ in range(5):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(30):
            exe(xin, stream=st)
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) / 30 * 1e6)
    wall = statistics.median(ts)
    nbytes = L * (4 * D * D + 3 * D * FF + 2 * H * T * HD) * 2
    print(f"wall per step (host clock over 30 runs, median of 5): {wall:.1f} us, "
          f"{nbytes / wall / 1e3:.0f} GB/s", flush=True)

    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(args.runs):
            exe(xin, stream=st)
            torch.cuda.synchronize()
    ks = []
    for e in prof.events():
        if e.device_type.name != "CUDA":
            continue
        t0 = e.time_range.start
        t1 = e.time_range.end
        ks.append((t0, t1, e.name))
    ks.sort()
    per = len(ks) // args.runs
    print(f"{len(ks)} kernels over {args.runs} runs: {per} per step", flush=True)
    # Steps: split where a gap > 20 us separates kernels.
    steps, cur = [], [ks[0]]
    for k in ks[1:]:
        if k[0] - max(c[1] for c in cur) > 20:
            steps.append(cur)
            cur = [k]
        else:
            cur.append(k)
    steps.append(cur)
    steps = [s for s in steps if len(s) == per] or steps
    spans = [max(k[1] for k in s) - s[0][0] for s in steps]
    best = steps[min(range(len(steps)), key=lambda i: spans[i])]
    print(f"step spans (first kernel start to last end): {', '.join(f'{v:.1f}' for v in spans)} us")

    base = best[0][0]
    latest = best[0][0]
    rows = []
    for t0, t1, n in best:
        add = max(0.0, t1 - latest)
        rows.append(dict(name=n, start=t0 - base, dur=t1 - t0, adds=add, overlap=max(0.0, latest - t0)))
        latest = max(latest, t1)
    print(f"\n# one step, kernel by kernel (us): start, duration, adds to the step's end, overlap with earlier")
    for i, rr in enumerate(rows):
        if i < args.show or i >= len(rows) - 4:
            print(f"{i:3d} {rr['start']:8.1f} {rr['dur']:7.1f} {rr['adds']:7.1f} {rr['overlap']:6.1f}  {rr['name'][:40]}")
    agg = {}
    for rr in rows:
        a = agg.setdefault(rr["name"], [0, 0.0, 0.0])
        a[0] += 1
        a[1] += rr["dur"]
        a[2] += rr["adds"]
    total_adds = sum(rr["adds"] for rr in rows)
    print(f"\n# by kernel, one step: count, sum of durations, sum of adds (step {total_adds:.1f} us)")
    for n, (c, d, a) in sorted(agg.items(), key=lambda kv: -kv[1][2]):
        print(f"{c:4d} {d:9.1f} {a:9.1f} {100 * a / total_adds:5.1f}%  {n[:90]}")
    # Whole-step: durations summed against the span.
    print(f"\nsum of durations {sum(rr['dur'] for rr in rows):.1f} us, span {total_adds:.1f} us, "
          f"bytes/span {nbytes / total_adds / 1e3:.0f} GB/s")
    out = os.environ.get("OUT")
    if out:
        with open(os.path.join(out, f"llama_timeline_O{args.opt_level}.json"), "w") as f:
            json.dump(dict(wall_us=wall, rows=rows, spans=spans), f)
    # Correctness against PyTorch's step (f16), as a guard that the recording is the anchor's.
    with torch.no_grad():
        import torch.nn.functional as F
        xt = x0_t
        c, s_ = cos_t[pos], sin_t[pos]

        def rope(t):
            t1, t2 = t[..., : HD // 2], t[..., HD // 2:]
            return torch.cat([t1 * c - t2 * s_, t1 * s_ + t2 * c], dim=-1)
        for p in tl:
            h = F.rms_norm(xt, (D,), p["n1"])
            q = rope((h @ p["wq"].T).view(1, 1, H, HD).transpose(1, 2))
            a = F.scaled_dot_product_attention(q, p["kc"], p["vc"])  # caches already hold k, v
            xt = xt + a.transpose(1, 2).reshape(1, 1, D) @ p["wo"].T
            h = F.rms_norm(xt, (D,), p["n2"])
            xt = xt + (F.silu(h @ p["w1"].T) * (h @ p["w3"].T)) @ p["w2"].T
        got = torch.from_dlpack(out) if hasattr(out, "__dlpack__") else None
        if got is not None:
            err = ((got.float() - xt.float()).abs() / (1 + xt.float().abs())).max().item()
            print(f"largest |ours - torch| / (1 + |torch|): {err:.3e}")


if __name__ == "__main__":
    main()
