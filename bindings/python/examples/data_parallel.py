"""Data-parallel training in PyTorch DDP's design, over rocm_backend communicators.

Every rank holds the same MLP, takes its slice of the global batch, runs forward and
backward, and averages the gradients across ranks with all-reduce before the SGD step. As in
DDP, gradients are put into buckets (about `bucket_mb` each) in the order backward produces
them (last layer first), and each bucket's all-reduce starts as soon as the bucket is full,
while backward goes on computing the earlier layers' gradients:

* on a GPU the buckets are all-reduced on a communication stream that waits (an event) for
  the gradients it reduces, so RCCL/NCCL overlaps the backward kernels on the compute
  stream; the SGD step waits for the communication stream;
* on the CPU each rank has a communication thread: the bucket's all-reduce runs on it (the
  library drops the GIL inside each call) while the rank's own thread continues backward.

With N ranks at batch B each, the loss curve is the one of a single rank at batch N*B (the
mean-of-means equals the mean; only float summation order differs).

    python data_parallel.py --ranks 2 --device cpu            # threads on the CPU
    python data_parallel.py --ranks 2 --device cuda           # one process per GPU
    python data_parallel.py --ranks 1 --batch 64              # the one-rank reference

`train(...)` is what tests call (bindings/python/tests/test_comm.py).
"""

import argparse
import functools
import queue
import threading
import time

import numpy as np

import rocm_backend as rb


def init_params(sizes, seed=0):
    """(weight [out, in], bias [out]) per layer, as NumPy arrays."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / np.sqrt(fan_in)
        params.append((rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32),
                       rng.uniform(-bound, bound, (fan_out,)).astype(np.float32)))
    return params


@functools.lru_cache(maxsize=4)
def _teacher(n_in, n_out, seed):
    return np.random.default_rng(seed).standard_normal((n_in, n_out)).astype(np.float32)


def global_batch(step, batch, sizes, seed=1):
    """The step's global batch: inputs and the targets of a fixed random teacher."""
    rng = np.random.default_rng(seed * 100_003 + step)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.tanh(x @ _teacher(sizes[0], sizes[-1], seed) / np.sqrt(sizes[0])).astype(np.float32)
    return x, y


#: Distinct global batches a run cycles through (made and uploaded before the timed loop,
#: so the step time is the training step's own).
DISTINCT_BATCHES = 8


class Reducer:
    """Averages gradients across ranks in buckets, overlapped with backward (DDP's Reducer).

    `ready(grad)` is called as backward produces each gradient; a full bucket's all-reduce
    starts at once; `finish()` launches the last bucket and waits for (CPU) or orders the
    compute stream after (GPU) every all-reduce."""

    def __init__(self, comm, device, bucket_mb=1.0):
        self.comm = comm
        self.cap = int(bucket_mb * (1 << 20))
        self.bucket, self.bytes = [], 0
        self.buckets_launched = 0
        self.gpu = not device.startswith("cpu")
        if self.gpu:
            self.stream = rb.Stream(device)
            self.device = device
        else:
            self.work = queue.Queue()
            self.errors = []
            self.thread = threading.Thread(target=self._serve, daemon=True)
            self.thread.start()

    def _serve(self):
        while True:
            bucket = self.work.get()
            if bucket is None:
                self.work.task_done()
                return
            try:
                with rb.comm_group():
                    for g in bucket:
                        self.comm.all_reduce(g, op="avg")
            except Exception as e:  # surfaced by finish()
                self.errors.append(e)
            self.work.task_done()

    def ready(self, grad):
        self.bucket.append(grad)
        self.bytes += grad.nbytes
        if self.bytes >= self.cap:
            self._launch()

    def _launch(self):
        if not self.bucket:
            return
        bucket, self.bucket, self.bytes = self.bucket, [], 0
        self.buckets_launched += 1
        if self.gpu:
            ev = rb.Event(self.device)
            ev.record(None)  # after the kernels that produced these gradients
            ev.wait(self.stream)
            with rb.comm_group():
                for g in bucket:
                    self.comm.all_reduce(g, op="avg", stream=self.stream)
        else:
            self.work.put(bucket)

    def finish(self):
        self._launch()
        if self.gpu:
            ev = rb.Event(self.device)
            ev.record(self.stream)
            ev.wait(None)  # the compute (default) stream waits for the last all-reduce
        else:
            self.work.join()
            if self.errors:
                raise self.errors.pop()

    def close(self):
        if not self.gpu:
            self.work.put(None)
            self.thread.join()


def rank_main(comm, device, sizes, batch, steps, lr, bucket_mb, out=None):
    """Trains on one rank; returns the global mean loss per step (from every rank)."""
    rank, world = comm.rank, comm.size
    params = [(rb.from_numpy(w, device=device), rb.from_numpy(b, device=device))
              for w, b in init_params(sizes)]
    # DDP broadcasts rank 0's parameters at the start, so every rank starts alike.
    for w, b in params:
        comm.broadcast(w, root=0)
        comm.broadcast(b, root=0)
    reducer = Reducer(comm, device, bucket_mb)
    one = rb.from_numpy(np.array(1.0, dtype=np.float32), device=device)
    data = []
    for k in range(min(steps, DISTINCT_BATCHES)):
        x, y = global_batch(k, batch * world, sizes)
        data.append((rb.from_numpy(x[rank * batch:(rank + 1) * batch], device=device),
                     rb.from_numpy(y[rank * batch:(rank + 1) * batch], device=device)))
    losses = []
    rb.synchronize()
    t0 = time.perf_counter()
    try:
        for step in range(steps):
            xs, ys = data[step % len(data)]
            # forward
            h, saved = xs, []
            for i, (w, b) in enumerate(params):
                z = rb.linear(h, w, b)
                saved.append((h, z))
                h = z if i == len(params) - 1 else rb.relu(z)
            loss = rb.mse_loss(h, ys)
            # backward, gradients handed to the reducer as they appear (last layer first)
            g = rb.mse_loss_backward(one, h, ys)
            grads = [None] * len(params)
            for i in reversed(range(len(params))):
                hin, z = saved[i]
                if i != len(params) - 1:
                    g = rb.relu_backward(z, g)
                dx, dw, db = rb.linear_backward(hin, params[i][0], g)
                grads[i] = (dw, db)
                reducer.ready(dw)
                reducer.ready(db)
                g = dx
            reducer.finish()
            for (w, b), (dw, db) in zip(params, grads):
                rb.sgd_step(w, dw, lr=lr)
                rb.sgd_step(b, db, lr=lr)
            comm.all_reduce(loss, op="avg")
            losses.append(loss)  # read after the loop: no host sync per step
        losses = [float(l.numpy()) for l in losses]
    finally:
        reducer.close()
    elapsed = time.perf_counter() - t0
    if out is not None:
        out[rank] = (losses, elapsed, reducer.buckets_launched)
    return losses


def train(ranks=2, device="cpu", sizes=(32, 64, 64, 64, 8), batch=16, steps=10, lr=0.05,
          bucket_mb=0.01, timeout_ms=60_000):
    """Trains with `ranks` threads (CPU: one process, ranks on the CPU device; GPUs: rank r
    on device "<kind>:r", one thread each, ranks in one process through init_all is not used
    so that the same code runs as one process per GPU). Returns rank 0's losses."""
    uid = rb.comm_unique_id(device if device == "cpu" else f"{device}:0")
    out = {}
    errs = []

    def run(r):
        dev = "cpu" if device == "cpu" else f"{device}:{r}"
        try:
            with rb.Comm(uid, ranks, r, device=dev, timeout_ms=timeout_ms) as comm:
                rank_main(comm, dev, list(sizes), batch, steps, lr, bucket_mb, out)
        except Exception as e:
            errs.append(e)

    threads = [threading.Thread(target=run, args=(r,)) for r in range(ranks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errs:
        raise errs[0]
    curves = [out[r][0] for r in range(ranks)]
    for c in curves[1:]:
        assert c == curves[0], "ranks disagree on the global loss"
    train.last = out
    return curves[0]


def _process_main(uid, ranks, r, device, args, q):  # one process per GPU
    dev = f"{device}:{r}"
    rb.set_device(dev)
    with rb.Comm(uid, ranks, r, device=dev) as comm:
        out = {}
        rank_main(comm, dev, args.sizes, args.batch, args.steps, args.lr, args.bucket_mb, out)
        q.put((r, out[r]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--device", default="cpu", help="cpu, cuda or rocm")
    ap.add_argument("--batch", type=int, default=32, help="per rank")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--bucket-mb", type=float, default=25.0)
    ap.add_argument("--sizes", type=lambda s: [int(v) for v in s.split(",")],
                    default=[256, 512, 512, 512, 16], help="layer widths, e.g. 4096,4096,4096,4096,4096")
    args = ap.parse_args()
    if args.device == "cpu":
        losses = train(args.ranks, "cpu", args.sizes, args.batch, args.steps, args.lr, args.bucket_mb)
        _, elapsed, nb = train.last[0]
    else:
        import multiprocessing as mp
        ctx = mp.get_context("spawn")
        uid = rb.comm_unique_id(f"{args.device}:0")
        q = ctx.Queue()
        ps = [ctx.Process(target=_process_main, args=(uid, args.ranks, r, args.device, args, q))
              for r in range(args.ranks)]
        for p in ps:
            p.start()
        res = dict(q.get() for _ in ps)
        for p in ps:
            p.join()
        losses, elapsed, nb = res[0]
    for s, l in enumerate(losses):
        print(f"step {s:3d}  loss {l:.6f}")
    n = args.ranks * args.batch * args.steps
    print(f"{args.ranks} ranks x batch {args.batch}: {args.steps} steps in {elapsed:.3f} s "
          f"({n / elapsed:.0f} samples/s, {nb} buckets all-reduced)")


if __name__ == "__main__":
    main()
