#!/usr/bin/env python3
"""ResNet-50 inference three ways, timed and cross-checked in one run (issue 12):

  *_ort       ONNX Runtime on the model file (CPU EP: intra_op_num_threads = the cores in
              use, inter_op 1, sequential, all graph optimizations; on cuda the CUDA EP
              with I/O bound on the device, skipped when that EP is missing),
  *_onnx      rb.onnx.load(file, device, opt_level) -- the library's ONNX import,
  *_recorded  the same network with the same weights recorded through the Python ops
              (rb.record(), i.e. the C API's graph capture) and run by an rb.Executor.

The model is torchvision's ResNet-50 architecture (bottleneck blocks 3-4-6-3, the stride on
the 3x3 convolution, conv without bias + BatchNormalization + Relu, a 7x7/2 stem conv and a
3x3/2 pad-1 max pool, GlobalAveragePool, Flatten, Gemm 2048->1000) written with onnx.helper,
with random weights from a fixed seed (He-scaled convolutions, batch-norm running variances
in [0.5, 2), the last batch norm of each residual branch scaled down so activations stay
O(1) through the 16 blocks). Needs numpy, onnx, rocm_backend (make python) and, for the
ORT column, onnxruntime (pip install onnxruntime; onnxruntime-gpu for the CUDA EP).

    .venv/bin/python benches/resnet_onnx.py                      # cpu, batch 1, f32, O3
    python3 benches/resnet_onnx.py --device cuda --batch 32 --dtype f16

Prints the outputs' agreement, a table (name, ours ms, ORT ms, speedup = ORT / ours, min
and median over the timed runs) and the ONNX-loaded / recorded ratio (goal: <= 1.05), and
writes the results as JSON to $OUT/resnet_onnx.json (or /tmp/resnet_onnx.json). Names:
resnet50_b<batch>_<dtype>_<device>_{onnx,recorded,ort} (plus _onnx_O1 / _recorded_O1).
Timing: `--warmup` runs of each, then `--runs` rounds of one run of each contender in turn
(interleaved in a random order per round, so a change in the machine's load hits all of
them alike; on the
CPU a 100 ms pause before each run lets the previous one's spinning threads park), each run ending
with a device synchronize (a wall clock on the CPU); median and minimum. Other processes on
the machine disturb CPU numbers: the script prints the load average before and after.
On the 2-core machine of 2026-11-30 the contender made later ran faster, whichever it was
(ours or ORT; three recorded executors made in turn: 38.1 / 34.6 / 30.9 ms): by default ORT's
session is made first, then ours; `--counterbalance` makes every contender twice (ours, ORT,
ORT, ours reversed) and pools each one's two instances, `--ort-last` and `--recorded-first`
change the order. `--isolated N` also times recorded, ONNX-loaded and ORT each in a process of
its own (N rounds, the order reversed every other round), where no contender's memory,
threads or creation order can touch another's: one model per process, as deployed.
"""

import argparse
import json
import os
import re
import statistics
import sys
import time

import numpy as np

STAGES = [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]  # width, blocks, stride
EXPANSION = 4
EPS = 1e-5


# ---------------------------------------------------------------------------------------
# Weights: a flat description both builders read, so the two networks are the same one.


def make_params(seed, np_dtype):
    """[(kind, name, fields)] in execution order, with NumPy weights."""
    rng = np.random.default_rng(seed)

    def conv_bn(name, cin, cout, k, stride, pad, last_in_branch=False):
        w = rng.standard_normal((cout, cin, k, k)).astype(np.float32) * np.sqrt(2.0 / (cin * k * k))
        gamma = rng.uniform(0.5, 1.0, cout).astype(np.float32)
        if last_in_branch:
            gamma *= 0.2  # keeps the residual stream from growing block after block
        beta = rng.normal(0.0, 0.1, cout).astype(np.float32)
        mean = rng.normal(0.0, 0.1, cout).astype(np.float32)
        var = rng.uniform(0.5, 2.0, cout).astype(np.float32)
        return dict(name=name, w=w, gamma=gamma, beta=beta, mean=mean, var=var,
                    stride=stride, pad=pad)

    blocks = []
    stem = conv_bn("conv1", 3, 64, 7, 2, 3)
    cin = 64
    for si, (width, n, stride) in enumerate(STAGES):
        for bi in range(n):
            s = stride if bi == 0 else 1
            cout = width * EXPANSION
            pre = f"layer{si + 1}.{bi}"
            b = dict(
                c1=conv_bn(pre + ".conv1", cin, width, 1, 1, 0),
                c2=conv_bn(pre + ".conv2", width, width, 3, s, 1),
                c3=conv_bn(pre + ".conv3", width, cout, 1, 1, 0, last_in_branch=True),
                down=conv_bn(pre + ".downsample", cin, cout, 1, s, 0) if (s != 1 or cin != cout) else None,
            )
            blocks.append(b)
            cin = cout
    fc_w = (rng.standard_normal((1000, 2048)) / np.sqrt(2048)).astype(np.float32)
    fc_b = rng.normal(0.0, 0.01, 1000).astype(np.float32)

    def cast(d):
        return {k: (v.astype(np_dtype) if isinstance(v, np.ndarray) else v) for k, v in d.items()}

    stem = cast(stem)
    blocks = [{k: (cast(v) if v is not None else None) for k, v in b.items()} for b in blocks]
    return dict(stem=stem, blocks=blocks, fc_w=fc_w.astype(np_dtype), fc_b=fc_b.astype(np_dtype))


def forward(em, p, x):
    """ResNet-50 on an emitter (ONNX node writer or rb ops)."""
    y = em.conv_bn(x, p["stem"], relu=True)
    y = em.max_pool(y)
    for b in p["blocks"]:
        idt = y if b["down"] is None else em.conv_bn(y, b["down"], relu=False)
        t = em.conv_bn(y, b["c1"], relu=True)
        t = em.conv_bn(t, b["c2"], relu=True)
        t = em.conv_bn(t, b["c3"], relu=False)
        y = em.add_relu(t, idt)
    y = em.global_avg_pool(y)
    return em.flatten_gemm(y, p["fc_w"], p["fc_b"])


class OnnxEmitter:
    def __init__(self, onnx):
        self.h, self.nph = onnx.helper, onnx.numpy_helper
        self.nodes, self.inits, self.k = [], [], 0

    def _name(self, base):
        self.k += 1
        return f"{base}_{self.k}"

    def _init(self, name, arr):
        self.inits.append(self.nph.from_array(np.ascontiguousarray(arr), name))
        return name

    def conv_bn(self, x, c, relu):
        n = c["name"]
        k = c["w"].shape[2]
        w = self._init(n + ".weight", c["w"])
        yc = self._name(n)
        self.nodes.append(self.h.make_node("Conv", [x, w], [yc], name=n, kernel_shape=[k, k],
                                           strides=[c["stride"]] * 2, pads=[c["pad"]] * 4))
        bn = n.replace("conv", "bn") if "conv" in n else n + ".bn"
        ins = [self._init(f"{bn}.{f}", c[f]) for f in ("gamma", "beta", "mean", "var")]
        yb = self._name(bn)
        self.nodes.append(self.h.make_node("BatchNormalization", [yc] + ins, [yb], name=bn,
                                           epsilon=EPS))
        if not relu:
            return yb
        yr = self._name(n + ".relu")
        self.nodes.append(self.h.make_node("Relu", [yb], [yr], name=yr))
        return yr

    def max_pool(self, x):
        y = self._name("maxpool")
        self.nodes.append(self.h.make_node("MaxPool", [x], [y], name=y, kernel_shape=[3, 3],
                                           strides=[2, 2], pads=[1, 1, 1, 1]))
        return y

    def add_relu(self, a, b):
        s, r = self._name("add"), self._name("relu")
        self.nodes.append(self.h.make_node("Add", [a, b], [s], name=s))
        self.nodes.append(self.h.make_node("Relu", [s], [r], name=r))
        return r

    def global_avg_pool(self, x):
        y = self._name("avgpool")
        self.nodes.append(self.h.make_node("GlobalAveragePool", [x], [y], name=y))
        return y

    def flatten_gemm(self, x, w, b):
        f = self._name("flatten")
        self.nodes.append(self.h.make_node("Flatten", [x], [f], name=f, axis=1))
        self.nodes.append(self.h.make_node("Gemm", [f, self._init("fc.weight", w),
                                                    self._init("fc.bias", b)], ["logits"],
                                           name="fc", transB=1))
        return "logits"


def build_onnx(onnx, p, batch, elem):
    em = OnnxEmitter(onnx)
    out = forward(em, p, "input")
    assert out == "logits"
    h = onnx.helper
    g = h.make_graph(em.nodes, "resnet50",
                     [h.make_tensor_value_info("input", elem, [batch, 3, 224, 224])],
                     [h.make_tensor_value_info("logits", elem, [batch, 1000])],
                     initializer=em.inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)], producer_name="resnet_onnx.py")
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


class RbEmitter:
    """The same network through the package's eager ops, recorded into a graph."""

    def __init__(self, rb, device):
        self.rb, self.device = rb, device
        self.keep = []

    def t(self, a):
        t = self.rb.Tensor.from_numpy(np.ascontiguousarray(a), device=self.device)
        self.keep.append(t)
        return t

    def conv_bn(self, x, c, relu):
        rb = self.rb
        y = rb.conv(x, self.t(c["w"]), None, c["stride"], c["pad"])
        y = rb.batch_norm(y, self.t(c["mean"]), self.t(c["var"]), self.t(c["gamma"]),
                          self.t(c["beta"]), False, 0.1, EPS)
        return rb.relu(y) if relu else y

    def max_pool(self, x):
        return self.rb.pool(x, "max", 3, 2, 1)

    def add_relu(self, a, b):
        return self.rb.relu(self.rb.add(a, b))

    def global_avg_pool(self, x):
        return self.rb.mean(x, [2, 3], True)

    def flatten_gemm(self, x, w, b):
        x = x.reshape((x.shape[0], int(np.prod(x.shape[1:]))))
        return self.rb.linear(x, self.t(w), self.t(b))


def record_rb(rb, p, device, shape, dtype, opt_level):
    em = RbEmitter(rb, device)
    with rb.record(device) as g:
        x = g.input(shape, dtype)
        g.mark_output(forward(em, p, x))
    g._bench_params = em.keep  # parameters stay alive with the graph
    return rb.Executor(g, opt_level=opt_level)


# ---------------------------------------------------------------------------------------
# Timing


# The name suffix of a contender's second instance (--counterbalance).
AGAIN = "#2"


def timed_interleaved(fns, warmup, runs, pause=0.02):
    """{name: (fn, sync)} timed round-robin -- one run of each per round, `runs` rounds
    after `warmup`, in a new random order every round -- so that a change in the machine's
    load hits every contender alike, and so does whatever a run leaves behind for the next
    (with a fixed order, the contender right after ONNX Runtime ran ~1.15-1.4x slower on the
    2-core machine). `pause` seconds (untimed) before each run let the previous contender's
    thread pool stop spinning."""
    for fn, sync in fns.values():
        for _ in range(warmup):
            fn()
        sync()
    ts = {k: [] for k in fns}
    names = list(fns)
    rng = np.random.default_rng(0)
    for _ in range(runs):
        for k in rng.permutation(names):
            fn, sync = fns[k]
            time.sleep(pause)
            t0 = time.perf_counter()
            fn()
            sync()
            ts[k].append((time.perf_counter() - t0) * 1e3)
    return {k: dict(ms=statistics.median(v), min_ms=min(v), runs=runs,
                    p90_ms=sorted(v)[min(len(v) - 1, int(0.9 * len(v)))], samples=v)
            for k, v in ts.items()}


def cores_in_use():
    env = os.environ.get("RB_NUM_THREADS")
    if env and env.strip().isdigit() and int(env) > 0:
        return int(env)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def agree(name, got, ref, tol):
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    if got.shape != ref.shape:
        return f"{name}: shape {got.shape} != {ref.shape}", False
    if not np.all(np.isfinite(got)):
        return f"{name}: non-finite values", False
    scale = max(float(np.abs(ref).max()), 1e-30)
    err = float(np.abs(got - ref).max()) / scale
    top_same = float(np.mean(np.argmax(got, 1) == np.argmax(ref, 1)))
    ok = err <= tol
    return (f"{name}: max |diff| / max |ref| = {err:.2e} (tolerance {tol:.0e}), "
            f"top-1 agrees on {top_same * 100:.0f}% of the batch  {'ok' if ok else 'MISMATCH'}"), ok


def layer_names(p, conv_add=False):
    """The network's nodes in the recorded executor's order at O1+ (conv+bn(+relu) fused,
    add+relu fused): (name, description). `conv_add`: the CPU executor's order, where each
    block's add+relu goes into the epilogue of the convolution whose output it adds first
    (conv3, or in a stage's first block the downsample, which then runs last)."""
    def conv(c):
        co, ci, k, _ = c["w"].shape
        return (c["name"], f"conv{k}x{k}/{c['stride']} {ci}->{co}")
    out = [conv(p["stem"]), ("maxpool", "maxpool 3x3/2")]
    for b in p["blocks"]:
        if conv_add:
            out += [conv(b["c1"]), conv(b["c2"]), conv(b["c3"])]
            if b["down"] is not None:
                out.append(conv(b["down"]))
            continue
        if b["down"] is not None:
            out.append(conv(b["down"]))
        out += [conv(b["c1"]), conv(b["c2"]), conv(b["c3"]),
                (b["c1"]["name"].rsplit(".", 1)[0] + ".add_relu", "add+relu")]
    return out + [("avgpool", "mean"), ("flatten", "reshape"), ("fc", "linear 2048->1000")]


def profile(rb, params, dev, shape, args, x_rb, x_np, model_path, threads):
    """Per-layer minimum over `args.profile` runs: ours (the recorded executor, profiling on:
    each node synchronized) against ORT's node events, matched by the conv names (ORT's
    fused nodes keep the conv's name as a prefix)."""
    n = args.profile
    g_exe = record_rb(rb, params, dev, shape, args.dtype, args.opt_level)
    exe = rb.Executor(g_exe._graph, opt_level=args.opt_level, profiling=True)
    names = layer_names(params)
    mins = None
    copy_min = None
    for _ in range(n + 1):
        exe(x_rb)
        rb.synchronize()
        rows = [(line.split()[1], float(line.split()[-2]))
                for line in exe.stats_string().splitlines() if line.startswith("node ")]
        # The blocked layout's NCHW copies (a permute and its reshape view, made by the
        # executor where a blocked value has other readers), and the views a max pool of
        # blocked values reads and writes through, are no layer of the model.
        ms, copy_ms, i = [], 0.0, 0
        while i < len(rows):
            if rows[i][0] == "permute":
                copy_ms += rows[i][1]
                if i + 1 < len(rows) and rows[i + 1][0] == "reshape":
                    copy_ms += rows[i + 1][1]
                    i += 1
            elif rows[i][0] == "reshape" and "pool_ex" in (
                    rows[i - 1][0] if i > 0 else "", rows[i + 1][0] if i + 1 < len(rows) else ""):
                # the views around a max pool of blocked values (block_pool_layouts)
                copy_ms += rows[i][1]
            else:
                ms.append(rows[i][1])
            i += 1
        copy_min = copy_ms if copy_min is None else min(copy_min, copy_ms)
        if len(ms) != len(names) and len(ms) == len(layer_names(params, True)):
            names = layer_names(params, True)
        if len(ms) != len(names):
            print(f"# profile: {len(ms)} nodes, expected {len(names)}: not matched by name")
            names = [(f"node{i}", "?") for i in range(len(ms))]
        mins = ms if mins is None else [min(a, b) for a, b in zip(mins, ms)]
    ort_ms = {}
    try:
        if dev.split(":")[0] != "cpu" or args.no_ort:
            raise ImportError  # ORT's side of the table is its CPU EP's profile
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.enable_profiling = True
        so.profile_file_prefix = os.path.join(os.environ.get("OUT") or "/tmp", "ort_profile")
        sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
        for _ in range(n + 1):
            sess.run(None, {"input": x_np})
        path = sess.end_profiling()
        with open(path) as f:
            events = json.load(f)
        runs = {}
        for e in events:
            if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
                runs.setdefault(e["name"][: -len("_kernel_time")], []).append(e["dur"] / 1e3)
        for k, v in runs.items():
            # ORT names a fused node after its last node ("layer1.0.conv2.relu_12_nchwc",
            # "layer1.0.bn3_14_nchwc": conv3 + bn3 + add + relu): back to the layer's name
            base = re.sub(r"_\d+$", "", k.removesuffix("_nchwc"))
            base = re.sub(r"\.relu$", "", base)
            base = re.sub(r"\.bn(\d)$", r".conv\1", base)
            base = re.sub(r"\.downsample\.bn$", ".downsample", base)
            ort_ms[base] = ort_ms.get(base, 0.0) + min(v)
    except ImportError:
        pass

    def ort_for(name):
        return ort_ms.get(name)
    print(f"\n# per layer, min of {n} runs (ours: the recorded executor at O{args.opt_level}, "
          f"each node synchronized)")
    print(f"{'layer':28s} {'what':22s} {'ours ms':>8s} {'ORT ms':>8s}")
    by_kind, tot = {}, [0.0, 0.0]
    conv_add = names == layer_names(params, True)
    downs = {nm for nm, _ in names if nm.endswith("downsample")}
    for (name, what), m in zip(names, mins):
        o = ort_for(name)
        ours_add = conv_add and (name.endswith("downsample") or (
            name.endswith("conv3") and name.replace("conv3", "downsample") not in downs))
        note = ("(ORT: + add + relu)" if name.endswith("conv3") else "",
                "(ours: + add + relu)" if ours_add else "")
        note = " " + " ".join(n for n in note if n) if any(note) else ""
        print(f"{name:28s} {what:22s} {m:8.3f} {'' if o is None else f'{o:8.3f}'}{note}")
        k = by_kind.setdefault(what, [0.0, 0.0, 0])
        k[0] += m
        k[1] += o or 0.0
        k[2] += 1
        tot[0] += m
    if copy_min:
        print(f"{'(layout copies)':28s} {'permute+reshape':22s} {copy_min:8.3f}")
        by_kind.setdefault("layout copies", [0.0, 0.0, 0])
        by_kind["layout copies"][0] += copy_min
        by_kind["layout copies"][2] += 1
        tot[0] += copy_min
    tot[1] = sum(ort_ms.values())
    print(f"\n{'kind':30s} {'count':>5s} {'ours ms':>8s} {'ORT ms':>8s}")
    for what, (a, b, c) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
        print(f"{what:30s} {c:5d} {a:8.3f} {b:8.3f}")
    print(f"{'total (sum of node minimums)':30s} {'':5s} {tot[0]:8.3f} {tot[1]:8.3f}")
    known = {nm for nm, _ in names}
    other = {k: v for k, v in ort_ms.items() if k not in known}
    if other:
        print("# ORT nodes without a layer of ours: " +
              ", ".join(f"{k} {v:.3f}" for k, v in sorted(other.items(), key=lambda kv: -kv[1])))


ISOLATED = ("recorded", "onnx", "ort")


def ort_options(ort, threads):
    """ONNX Runtime's session options for every ORT contender: `threads` intra-op threads,
    one inter-op, sequential, all graph optimizations."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return so


def isolated_worker(args):
    """`--worker WHAT`: one contender alone in this process (the model file from the parent,
    the weights from the same seed), `--warmup` runs, then `--runs` runs each after the
    timing pause; prints its samples as one JSON line."""
    shape = (args.batch, 3, 224, 224)
    np_dtype = np.float16 if args.dtype == "f16" else np.float32
    x_np = np.random.default_rng(args.seed + 1).standard_normal(shape).astype(np_dtype)
    gpu = args.device.split(":")[0] != "cpu"
    if args.worker == "ort":
        import onnxruntime as ort

        so = ort_options(ort, args.threads or cores_in_use())
        sess = ort.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
        feeds = {"input": x_np}
        fn, sync = (lambda: sess.run(None, feeds)), (lambda: None)
    else:
        import rocm_backend as rb

        rb.set_device(args.device)
        x_rb = rb.Tensor.from_numpy(x_np, device=args.device)
        if args.worker == "onnx":
            m = rb.onnx.load(args.model, device=args.device, opt_level=args.opt_level)
            exe = m.executor([shape])
        else:
            exe = record_rb(rb, make_params(args.seed, np_dtype), args.device, shape,
                            args.dtype, args.opt_level)
        fn, sync = (lambda: exe(x_rb)), rb.synchronize
    t = timed_interleaved({args.worker: (fn, sync)}, args.warmup or 5, args.runs or 30,
                          0.0 if gpu else 0.1)
    print(json.dumps(dict(worker=args.worker, samples=t[args.worker]["samples"])))


def isolated(args, tag, model_path):
    """`--isolated N`: N rounds of one process per contender (recorded, ONNX-loaded, ORT; the
    order reversed every other round), none sharing a process with another: no contender's
    memory, threads or creation order can touch another's. Returns {name: result}."""
    import subprocess

    samples = {w: [] for w in ISOLATED}
    rounds = []
    for r in range(args.isolated):
        order = ISOLATED if r % 2 == 0 else ISOLATED[::-1]
        medians = {}
        for w in order:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", w, "--model", model_path,
                   "--device", args.device, "--batch", str(args.batch), "--dtype", args.dtype,
                   "--opt-level", str(args.opt_level), "--seed", str(args.seed)]
            for flag, v in (("--runs", args.runs), ("--warmup", args.warmup),
                            ("--threads", args.threads)):
                if v is not None:
                    cmd += [flag, str(v)]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            got = json.loads(out.strip().splitlines()[-1])["samples"]
            samples[w] += got
            medians[w] = round(statistics.median(got), 3)
        rounds.append(medians)
    res = {}
    for w, v in samples.items():
        res[f"{tag}_{w}_isolated"] = dict(ms=statistics.median(v), min_ms=min(v), runs=len(v),
                                          rounds_ms=[m[w] for m in rounds])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu", help="cpu (default), cuda, cuda:N, rocm")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--dtype", default="f32", choices=["f32", "f16"])
    ap.add_argument("--opt-level", type=int, default=3, help="the headline level (default 3)")
    ap.add_argument("--also-level", type=int, default=1,
                    help="a second level also timed (default 1; -1: none)")
    ap.add_argument("--warmup", type=int, default=None, help="default: 5 (cpu), 20 (gpu)")
    ap.add_argument("--runs", type=int, default=None, help="default: 30 (cpu), 100 (gpu)")
    ap.add_argument("--threads", type=int, default=None,
                    help="ORT intra-op threads (default: RB_NUM_THREADS or the cores in use)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model", default=None, help="where to save the .onnx file")
    ap.add_argument("--no-ort", action="store_true", help="skip ONNX Runtime")
    ap.add_argument("--counterbalance", action="store_true",
                    help="make every contender twice, in the order ours, ORT, ORT, ours "
                         "reversed, and pool each one's two instances' runs (on the CPU the "
                         "contenders made later ran faster, whichever they were: 2026-11-30)")
    ap.add_argument("--ort-last", action="store_true",
                    help="make ONNX Runtime's session after our executors (the default makes "
                         "it first)")
    ap.add_argument("--recorded-first", action="store_true",
                    help="make the recorded executor before the ONNX-loaded one (the default "
                         "makes the ONNX one first): on the CPU the executor made first ran "
                         "slower, whichever it was (2026-11-30: its memory, not the import)")
    ap.add_argument("--isolated", type=int, default=0, metavar="N",
                    help="also time each of recorded, ONNX-loaded (at --opt-level) and ORT "
                         "in a process of its own, N rounds (the order reversed every other "
                         "round), and print their pooled medians (CPU)")
    ap.add_argument("--worker", choices=ISOLATED, help=argparse.SUPPRESS)
    ap.add_argument("--profile", type=int, default=0, metavar="N",
                    help="also profile N runs per node (the recorded executor with profiling "
                         "on, ORT with enable_profiling) and print the per-layer minimums "
                         "side by side")
    args = ap.parse_args()
    if args.worker:
        return isolated_worker(args)

    import onnx

    import rocm_backend as rb

    dev = args.device
    kind = dev.split(":")[0]
    gpu = kind != "cpu"
    warmup = args.warmup if args.warmup is not None else (20 if gpu else 5)
    runs = args.runs if args.runs is not None else (100 if gpu else 30)
    threads = args.threads or cores_in_use()
    np_dtype = np.float16 if args.dtype == "f16" else np.float32
    elem = onnx.TensorProto.FLOAT16 if args.dtype == "f16" else onnx.TensorProto.FLOAT
    # f32 with reassociation (a different summation order per runtime): 1e-3 of the largest
    # logit; f16, and f32 on GPUs (ORT's CUDA EP may use TF32, O2+ runs bf16 products): 3e-2.
    tol = 3e-2 if (args.dtype == "f16" or gpu) else 1e-3
    out_dir = os.environ.get("OUT") or "/tmp"
    os.makedirs(out_dir, exist_ok=True)
    model_path = args.model or os.path.join(out_dir, f"resnet50_b{args.batch}_{args.dtype}.onnx")
    tag = f"resnet50_b{args.batch}_{args.dtype}_{kind}"
    shape = (args.batch, 3, 224, 224)

    load0 = os.getloadavg()
    print(f"# {tag}: device {dev}, batch {args.batch}, {args.dtype}, O{args.opt_level}, "
          f"{threads} thread(s), warm-up {warmup}, median of {runs}; "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    info = rb.device_info(dev)
    print(f"# rb device: {info.get('name', '?')}")

    params = make_params(args.seed, np_dtype)
    model = build_onnx(onnx, params, args.batch, elem)
    onnx.save(model, model_path)
    print(f"# model: {model_path} ({os.path.getsize(model_path) / 2**20:.1f} MiB, "
          f"{len(model.graph.node)} nodes)")
    x_np = np.random.default_rng(args.seed + 1).standard_normal(shape).astype(np_dtype)

    rb.set_device(dev)

    def sync():
        rb.synchronize()

    results = {}
    outputs = {}
    contenders = {}  # result name -> (run, synchronize): timed together at the end
    no_sync = lambda: None  # noqa: E731 (ORT's runs return when done)

    # --- ONNX Runtime (its session made before ours, or after with --ort-last) ---
    ort_res = None
    ort_provider = None

    def make_ort(again=""):
        nonlocal ort_provider
        if not args.no_ort:
            try:
                import onnxruntime as ort
            except ImportError:
                ort = None
                print("# onnxruntime is not installed: no ORT column (pip install onnxruntime)")
            if ort is not None:
                so = ort_options(ort, threads)
                if gpu:
                    if kind == "cuda" and "CUDAExecutionProvider" in ort.get_available_providers():
                        dev_id = int(dev.split(":")[1]) if ":" in dev else 0
                        sess = ort.InferenceSession(model_path, so, providers=[
                            ("CUDAExecutionProvider", {"device_id": dev_id, "cudnn_conv_algo_search": "EXHAUSTIVE"})])
                        xv = ort.OrtValue.ortvalue_from_numpy(x_np, "cuda", dev_id)
                        binding = sess.io_binding()
                        binding.bind_ortvalue_input("input", xv)
                        binding.bind_output("logits", "cuda", dev_id)

                        def ort_run():
                            sess.run_with_iobinding(binding)
                            binding.synchronize_outputs()

                        ort_run()
                        outputs["ort"] = binding.copy_outputs_to_cpu()[0]
                        contenders[f"{tag}_ort{again}"] = (ort_run, no_sync)
                        ort_provider = sess.get_providers()[0]
                    else:
                        print(f"# onnxruntime has no execution provider for {kind}: no ORT column")
                else:
                    sess = ort.InferenceSession(model_path, so, providers=["CPUExecutionProvider"])
                    feeds = {"input": x_np}
                    outputs["ort"] = sess.run(None, feeds)[0]
                    contenders[f"{tag}_ort{again}"] = (lambda: sess.run(None, feeds), no_sync)
                    ort_provider = sess.get_providers()[0]

    if not args.ort_last and not args.counterbalance:
        make_ort()

    # --- the library: ONNX import and the recorded network, at each level ---
    x_rb = rb.Tensor.from_numpy(x_np, device=dev)
    levels = [args.opt_level] + ([args.also_level] if args.also_level >= 0 and
                                 args.also_level != args.opt_level else [])
    stats = {}
    extra = {}
    keep = []
    def make_ours(again="", backwards=False):
        for lvl in (levels[::-1] if backwards else levels):
            suffix = "" if lvl == args.opt_level else f"_O{lvl}"

            def load_onnx():
                t0 = time.perf_counter()
                m = rb.onnx.load(model_path, device=dev, opt_level=lvl)
                return m, m.executor([shape]), time.perf_counter() - t0

            def record():
                t0 = time.perf_counter()
                exe = record_rb(rb, params, dev, shape, args.dtype, lvl)
                return exe, time.perf_counter() - t0

            # (which executor is made first changes its speed on the CPU: see
            # --counterbalance; --recorded-first swaps the order)
            if args.recorded_first != backwards:
                exe_rec, rec_s = record()
                m, exe_onnx, load_s = load_onnx()
            else:
                m, exe_onnx, load_s = load_onnx()
                exe_rec, rec_s = record()
            keep.extend([m, exe_onnx, exe_rec])
            for what, exe, setup_s in (("onnx", exe_onnx, load_s), ("recorded", exe_rec, rec_s)):
                y = exe(x_rb)
                sync()
                outputs.setdefault(what + suffix, y.numpy())
                name = f"{tag}_{what}{suffix}{again}"
                contenders[name] = (lambda e=exe: e(x_rb), sync)
                extra[name] = dict(setup_s=setup_s, opt_level=lvl, exe=exe)

    if args.counterbalance:
        # A B C C B A: every contender made once early and once late, the same mean place
        make_ours()
        make_ort()
        make_ort(AGAIN)
        make_ours(AGAIN, backwards=True)
    else:
        make_ours()
    if args.ort_last and not args.counterbalance:
        make_ort()

    # (on the CPU, ONNX Runtime's threads go on disturbing the next run for tens of ms: its
    # pause alternated with ours, 2026-11-30, 20 rounds each, ours 32.47 / 30.16 / 29.32 /
    # 29.75 ms after pauses of 10 / 20 / 50 / 100 ms, 28.0-29.9 alone; ORT's 27.1-27.7
    # after each)
    timed = timed_interleaved(contenders, warmup, runs, 0.0 if gpu else 0.1)
    for name in [k for k in timed if k.endswith(AGAIN)]:
        # (a contender's two instances pooled: the median and minimum of both's runs)
        a, b = timed[name[:-len(AGAIN)]], timed.pop(name)
        both = a["samples"] + b["samples"]
        a.update(ms=statistics.median(both), min_ms=min(both), runs=len(both),
                 p90_ms=sorted(both)[min(len(both) - 1, int(0.9 * len(both)))],
                 instances_ms=[round(a["ms"], 3), round(b["ms"], 3)])
        if name in extra:
            extra.pop(name)
    for name, r in timed.items():
        r.pop("samples")
        if name in extra:
            exe = extra[name].pop("exe")
            st = exe.stats()
            r.update(extra[name], launches_per_run=st["launches_per_run"],
                     nodes_optimized=st["nodes_optimized"])
            stats[name[len(tag) + 1:]] = st
        else:
            r["provider"] = ort_provider
            ort_res = r
        results[name] = r
    del keep

    # --- agreement ---
    ref_name = "ort" if "ort" in outputs else "recorded"
    ref = outputs[ref_name].astype(np.float64)
    print(f"# outputs: logits {ref.shape}, max |logit| {np.abs(ref).max():.3g} ({ref_name})")
    all_ok = True
    for k, v in outputs.items():
        if k == ref_name:
            continue
        line, ok = agree(f"{k} vs {ref_name}", v, ref, tol)
        all_ok &= ok
        print("#   " + line)

    # --- table ---
    ort_ms = ort_res["ms"] if ort_res else None
    print()
    print(f"{'name':40s} {'ours ms':>9s} {'min':>8s} {'ORT ms':>9s} {'min':>8s} {'speedup':>8s} "
          f"{'(of mins)':>9s}")
    for name, r in results.items():
        if name.endswith("_ort"):
            continue
        sp = f"{ort_ms / r['ms']:.2f}x" if ort_ms else "-"
        spm = f"{ort_res['min_ms'] / r['min_ms']:.2f}x" if ort_res else "-"
        o = f"{ort_ms:9.2f} {ort_res['min_ms']:8.2f}" if ort_res else f"{'-':>9s} {'-':>8s}"
        print(f"{name:40s} {r['ms']:9.2f} {r['min_ms']:8.2f} {o} {sp:>8s} {spm:>9s}")
    if ort_res:
        print(f"{tag + '_ort':40s} {'':9s} {'':8s} {ort_ms:9.2f} {ort_res['min_ms']:8.2f} "
              f"({ort_res['provider']}, {threads} threads)")
    ratios = {}
    for lvl in levels:
        suffix = "" if lvl == args.opt_level else f"_O{lvl}"
        a, b = results[f"{tag}_onnx{suffix}"], results[f"{tag}_recorded{suffix}"]
        ratios[f"O{lvl}"] = a["ms"] / b["ms"]
        print(f"ONNX-loaded / recorded at O{lvl}: {a['ms'] / b['ms']:.3f} (median), "
              f"{a['min_ms'] / b['min_ms']:.3f} (min); launches per run "
              f"{a['launches_per_run']} vs {b['launches_per_run']}")
    ours = ["recorded", "ONNX-loaded"] if args.recorded_first else ["ONNX-loaded", "recorded"]
    made = ours + ["ORT"] if args.ort_last else ["ORT"] + ours
    if args.counterbalance:
        made = ["ours"] + ["ORT", "ORT"] + ["ours reversed"]
        for name, r in results.items():
            print(f"# {name}: its two instances' medians {r['instances_ms']} ms")
    print(f"# made in the order: {', '.join(made)} (ours: {', '.join(ours)} at each level)")
    load1 = os.getloadavg()
    print(f"# load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    for k, st in stats.items():
        print(f"# stats {k}: nodes {st['nodes_recorded']} -> {st['nodes_optimized']}, "
              f"launches {st['launches_per_run']}, fused {st['fused_by_pattern']}, "
              f"folded {st['folded']}")

    if args.profile:
        profile(rb, params, dev, shape, args, x_rb, x_np, model_path, threads)

    iso = {}
    if args.isolated:
        iso = isolated(args, tag, model_path)
        o = iso[f"{tag}_ort_isolated"]
        print()
        print(f"# one process per contender, {args.isolated} rounds (recorded, ONNX-loaded, ORT; "
              f"reversed every other round), {runs} runs each a round, pooled:")
        print(f"{'name':40s} {'ours ms':>9s} {'min':>8s} {'ORT ms':>9s} {'min':>8s} {'speedup':>8s} "
              f"{'(of mins)':>9s}")
        for name, r in iso.items():
            if "_ort_" in name:
                continue
            print(f"{name:40s} {r['ms']:9.2f} {r['min_ms']:8.2f} {o['ms']:9.2f} {o['min_ms']:8.2f} "
                  f"{o['ms'] / r['ms']:7.2f}x {o['min_ms'] / r['min_ms']:8.2f}x")
        for name, r in iso.items():
            print(f"# {name}: each round's median {r['rounds_ms']} ms")
        load2 = os.getloadavg()
        print(f"# load average after: {load2[0]:.2f} {load2[1]:.2f} {load2[2]:.2f}")

    doc = dict(config=dict(device=dev, batch=args.batch, dtype=args.dtype,
                           opt_level=args.opt_level, threads=threads, warmup=warmup, runs=runs,
                           load_before=load0, load_after=load1, rb_device=info.get("name")),
               results=results, isolated=iso, onnx_over_recorded=ratios,
               outputs_agree=all_ok)
    path = os.path.join(out_dir, "resnet_onnx.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"# wrote {path}")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
