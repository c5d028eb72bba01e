"""The tuning cache: the convolution algorithm the DNN library's search chose per problem.

    tc = rb.tuning_cache()
    tc.set_file("~/.cache/rb-tuning.txt")   # persist: later processes search nothing
    tc.set_exhaustive(True)                 # time every algorithm (cudnn.benchmark = True)
    print(tc.stats())                       # hits, misses, entries, searches, ...
    tc.clear()

Executors at O3 search exhaustively whatever the setting.
"""

import ctypes
import os

from ._core import check
from ._lib import lib


class TuningCacheStats(ctypes.Structure):
    """`rb_tuning_cache_stats`."""

    _fields_ = [
        ("hits", ctypes.c_uint64),
        ("misses", ctypes.c_uint64),
        ("entries", ctypes.c_uint64),
        ("searches", ctypes.c_uint64),
        ("exhaustive_searches", ctypes.c_uint64),
        ("search_ms", ctypes.c_double),
        ("loaded", ctypes.c_uint64),
        ("file_warnings", ctypes.c_uint64),
    ]


class TuningCache:
    """The process's tuning cache (one per process; `rb.tuning_cache()` returns it)."""

    def set_exhaustive(self, on):
        """True: exhaustive search; False: the library's heuristics; None: the default."""
        check(lib.rb_tuning_cache_set_exhaustive(-1 if on is None else int(bool(on))))

    def set_file(self, path):
        """Persist to `path` (None: memory only); its entries are loaded now."""
        p = None if path is None else os.fsencode(os.path.expanduser(os.fspath(path)))
        check(lib.rb_tuning_cache_set_file(p))

    def clear(self):
        """Forget the process's entries and reset the counters (the file is left alone)."""
        check(lib.rb_tuning_cache_clear())

    def stats(self):
        """The counters as a dict, with the latest file warning under "last_warning"."""
        s = TuningCacheStats()
        check(lib.rb_tuning_cache_get_stats(ctypes.byref(s)))
        out = {name: getattr(s, name) for name, _ in TuningCacheStats._fields_}
        need = ctypes.c_size_t(0)
        check(lib.rb_tuning_cache_last_warning(None, 0, ctypes.byref(need)))
        buf = ctypes.create_string_buffer(need.value)
        check(lib.rb_tuning_cache_last_warning(buf, need.value, None))
        out["last_warning"] = buf.value.decode("utf-8", "replace")
        return out


st = ctypes.c_int32
for _n, _a in [
    ("rb_tuning_cache_set_exhaustive", [ctypes.c_int32]),
    ("rb_tuning_cache_set_file", [ctypes.c_char_p]),
    ("rb_tuning_cache_clear", []),
    ("rb_tuning_cache_get_stats", [ctypes.POINTER(TuningCacheStats)]),
    ("rb_tuning_cache_last_warning", [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t)]),
]:
    _f = getattr(lib, _n)
    _f.restype, _f.argtypes = st, _a

_CACHE = TuningCache()


def tuning_cache():
    """The process's tuning cache."""
    return _CACHE
