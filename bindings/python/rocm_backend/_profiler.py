"""The profiler: kernel timings, the C calls on the host and memory counters, as a text
summary or a Chrome trace (open it in Perfetto or chrome://tracing)."""

import ctypes
import os

from ._core import check
from ._lib import lib


def profiler_enable(on=True):
    """Turns profiling on (or off) for the process (also on at start with RB_PROFILE=1)."""
    check(lib.rb_profiler_enable(bool(on)))


def profiler_reset():
    """Drops every record and the timeline."""
    check(lib.rb_profiler_reset())


def profiler_summary():
    """The per-kernel summary table as text."""
    n = ctypes.c_size_t()
    check(lib.rb_profiler_summary(None, 0, ctypes.byref(n)))
    buf = ctypes.create_string_buffer(n.value)
    check(lib.rb_profiler_summary(buf, n.value, None))
    return buf.value.decode("utf-8", "replace")


def profiler_export_chrome_trace(path):
    """Writes the timeline since profiling began (or the last reset) to `path` as Chrome
    trace JSON: one track per stream with kernel names and durations, the C calls per host
    thread, and "memory" counter events."""
    check(lib.rb_profiler_export_chrome_trace(os.fsencode(os.fspath(path))))
