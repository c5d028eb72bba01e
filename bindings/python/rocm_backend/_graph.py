"""Graphs and executors: record eager calls into a graph, run it compiled at a level.

    with rb.record() as g:                  # a graph and a stream of its own
        x = g.input((32, 784))              # a placeholder (shape and dtype, no data)
        y = rb.relu(rb.linear(x, w, b))     # recorded on the graph's stream, not run
        g.mark_output(y)
    exe = rb.Executor(g, opt_level=3)
    out = exe(rb.from_numpy(batch))         # any number of times, on new data

Real tensors used while recording (`w`, `b`) are parameters, bound by reference: a later
change to their data is seen at the next run (at O1+ a parameter-only subgraph is
computed when the plan is made; `exe.invalidate()` makes it again).
"""

import ctypes
import threading

import numpy as np

from ._core import RbError, Status, Stream, Tensor, _enc, _np_dtype_of, check, dtype_code
from ._lib import lib

vp = ctypes.c_void_p
size = ctypes.c_size_t
st = ctypes.c_int32


class ExecutorConfig(ctypes.Structure):
    """`rb_executor_config`."""

    _fields_ = [
        ("device", ctypes.c_char_p),
        ("opt_level", ctypes.c_int32),
        ("enable_profiling", ctypes.c_bool),
        ("sync_after_launch", ctypes.c_bool),
        ("workspace_size_mb", ctypes.c_size_t),
        ("keep_fp32", ctypes.c_bool),
        ("allow_tf32", ctypes.c_bool),
    ]


class ExecutorStats(ctypes.Structure):
    """`rb_executor_stats`."""

    _fields_ = [
        ("nodes_recorded", size),
        ("nodes_optimized", size),
        ("dead_removed", size),
        ("folded", size),
        ("mixed_precision_nodes", size),
        ("fused_groups", size),
        ("fused_by_pattern", size * 9),
        ("fused_elementwise", size),
        ("launches_per_run", size),
        ("planned_peak_bytes", ctypes.c_uint64),
        ("intermediate_bytes", ctypes.c_uint64),
        ("in_place", size),
        ("plan_ms", ctypes.c_double),
        ("plans", size),
        ("runs", ctypes.c_uint64),
        ("replays", ctypes.c_uint64),
        ("device_graph", ctypes.c_bool),
    ]


PATTERNS = [
    None,
    "matmul+bias",
    "matmul+bias+relu",
    "matmul+bias+gelu",
    "conv+bias",
    "conv+bias+relu",
    "conv+bn+relu",
    "add+relu",
    "mul+add",
]

for _n, _r, _a in [
    ("rb_graph_create", st, [ctypes.c_char_p, ctypes.POINTER(vp)]),
    ("rb_graph_destroy", st, [vp]),
    ("rb_graph_input", st, [vp, ctypes.POINTER(ctypes.c_int64), size, ctypes.c_int32, ctypes.POINTER(vp)]),
    ("rb_graph_capture_begin", st, [vp, vp]),
    ("rb_graph_capture_end", st, [vp, vp]),
    ("rb_graph_mark_output", st, [vp, vp, ctypes.POINTER(size)]),
    ("rb_graph_num_nodes", st, [vp, ctypes.POINTER(size)]),
    ("rb_graph_to_string", st, [vp, ctypes.c_char_p, size, ctypes.POINTER(size)]),
    ("rb_executor_config_default", st, [ctypes.POINTER(ExecutorConfig)]),
    ("rb_executor_create", st, [vp, ctypes.POINTER(ExecutorConfig), ctypes.POINTER(vp)]),
    ("rb_executor_destroy", st, [vp]),
    ("rb_executor_run", st, [vp, vp, ctypes.POINTER(vp), size, ctypes.POINTER(vp), size]),
    ("rb_executor_get_stats", st, [vp, ctypes.POINTER(ExecutorStats)]),
    ("rb_executor_stats_string", st, [vp, ctypes.c_char_p, size, ctypes.POINTER(size)]),
    ("rb_executor_invalidate", st, [vp]),
    ("rb_can_fuse", st, [ctypes.POINTER(ctypes.c_char_p), size, ctypes.POINTER(ctypes.c_int32)]),
]:
    _f = getattr(lib, _n)
    _f.restype, _f.argtypes = _r, _a

# The stream eager calls use when they are given none (set by `record`), per thread.
_local = threading.local()


def current_stream():
    """The stream `record` made current on this thread, or None."""
    return getattr(_local, "stream", None)


def _text(fn, h):
    n = size()
    check(fn(h, None, 0, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value)
    check(fn(h, buf, n.value, None))
    return buf.value.decode()


class Graph:
    """An `rb_graph` on `device` (default: the current one)."""

    def __init__(self, device=None):
        h = vp()
        check(lib.rb_graph_create(_enc(device), ctypes.byref(h)))
        self._h = h.value
        self._keep = []  # placeholders and parameters stay alive with the graph
        self.num_outputs = 0

    @property
    def handle(self):
        return self._h

    def input(self, shape, dtype="f32"):
        """A new graph input: its placeholder tensor."""
        if isinstance(shape, int):
            shape = (shape,)
        dims = (ctypes.c_int64 * max(len(shape), 1))(*[int(d) for d in shape])
        h = vp()
        check(lib.rb_graph_input(self._h, dims, len(shape), dtype_code(dtype), ctypes.byref(h)))
        t = Tensor(h.value)
        self._keep.append(t)
        return t

    def capture_begin(self, stream):
        check(lib.rb_graph_capture_begin(self._h, stream.handle))

    def capture_end(self, stream):
        check(lib.rb_graph_capture_end(self._h, stream.handle))

    def mark_output(self, *tensors):
        """Marks tensors the recording produced as the graph's outputs, in order."""
        for t in tensors:
            check(lib.rb_graph_mark_output(self._h, t.handle, None))
            self._keep.append(t)
            self.num_outputs += 1

    @property
    def num_nodes(self):
        n = size()
        check(lib.rb_graph_num_nodes(self._h, ctypes.byref(n)))
        return n.value

    def __str__(self):
        return _text(lib.rb_graph_to_string, self._h)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and lib is not None:
            lib.rb_graph_destroy(h)


class record:
    """`with rb.record(device=None) as g:` records the eager calls made on this thread
    without a stream of their own into a new Graph `g` (on a stream of the graph's own)."""

    def __init__(self, device=None):
        self.graph = Graph(device)
        self.stream = Stream(device)

    def __enter__(self):
        if current_stream() is not None:
            raise RbError(Status.INVALID_ARGUMENT, "rb.record: already recording on this thread")
        self.graph.capture_begin(self.stream)
        _local.stream = self.stream
        self.graph._stream = self.stream
        return self.graph

    def __exit__(self, *exc):
        _local.stream = None
        self.graph.capture_end(self.stream)
        return False


class Executor:
    """`rb.Executor(graph, opt_level=1, profiling=False, sync_after_launch=False,
    workspace_size_mb=0, keep_fp32=False, allow_tf32=False)`; call it with the graph's inputs (Tensors or arrays), get its
    outputs (one Tensor, or a tuple)."""

    def __init__(self, graph, opt_level=1, profiling=False, sync_after_launch=False,
                 workspace_size_mb=0, keep_fp32=False, allow_tf32=False):
        c = ExecutorConfig()
        check(lib.rb_executor_config_default(ctypes.byref(c)))
        c.opt_level = int(opt_level)
        c.enable_profiling = bool(profiling)
        c.sync_after_launch = bool(sync_after_launch)
        c.workspace_size_mb = int(workspace_size_mb)
        c.keep_fp32 = bool(keep_fp32)
        c.allow_tf32 = bool(allow_tf32)
        h = vp()
        check(lib.rb_executor_create(graph.handle, ctypes.byref(c), ctypes.byref(h)))
        self._h = h.value
        self._graph = graph  # parameters stay alive with the executor

    def __call__(self, *inputs, out=None, stream=None):
        # NumPy inputs keep the package's old defaults (float64 -> f32), as graphs are built.
        ins = [t if isinstance(t, Tensor) else
               Tensor.from_numpy(t, dtype=_np_dtype_of(np.asarray(t), exact=False)) for t in inputs]
        n_out = self._graph.num_outputs
        if out is None:
            dests = [None] * n_out
        elif isinstance(out, Tensor):
            dests = [out]
        else:
            dests = list(out)
        arr_in = (vp * max(len(ins), 1))(*[t.handle for t in ins])
        arr_out = (vp * max(len(dests), 1))(*[d.handle if d is not None else None for d in dests])
        check(lib.rb_executor_run(self._h, stream.handle if stream is not None else None,
                                  arr_in, len(ins), arr_out, len(dests)))
        res = [d if d is not None else Tensor(arr_out[i]) for i, d in enumerate(dests)]
        if not res:
            return None
        return res[0] if len(res) == 1 else tuple(res)

    def stats(self):
        """The executor's statistics as a dict (fused groups by pattern name)."""
        s = ExecutorStats()
        check(lib.rb_executor_get_stats(self._h, ctypes.byref(s)))
        d = {n: getattr(s, n) for n, _ in ExecutorStats._fields_ if n != "fused_by_pattern"}
        d["fused_by_pattern"] = {
            PATTERNS[i]: s.fused_by_pattern[i] for i in range(1, 9) if s.fused_by_pattern[i]
        }
        return d

    def stats_string(self):
        return _text(lib.rb_executor_stats_string, self._h)

    def invalidate(self):
        check(lib.rb_executor_invalidate(self._h))

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and lib is not None:
            lib.rb_executor_destroy(h)


def can_fuse(*ops):
    """The seed pattern the op names form (`can_fuse("matmul", "add", "relu")` ->
    "matmul+bias+relu"), or None."""
    arr = (ctypes.c_char_p * max(len(ops), 1))(*[o.encode() for o in ops])
    p = ctypes.c_int32()
    check(lib.rb_can_fuse(arr, len(ops), ctypes.byref(p)))
    return PATTERNS[p.value]
