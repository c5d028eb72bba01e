//! The tuning cache (DESIGN §6; [`crate::device::tuning`]): the algorithm the DNN library's
//! search chose per convolution problem (cuDNN Find, MIOpen Find), kept for the process and,
//! with `rb_tuning_cache_set_file`, in a file for later processes. Entries are keyed by the
//! device architecture, the library and its version, the layout, the math mode and the
//! problem. Every function is thread-safe.

use super::status::{guard, rb_status};
use super::util::{cstr_opt, write_out, write_text};
use crate::device::tuning;
use std::ffi::c_char;
use std::path::Path;

/// The tuning cache's counters (`rb_tuning_cache_get_stats`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct rb_tuning_cache_stats {
    /// Look-ups answered from the cache (including entries the file brought).
    pub hits: u64,
    /// Look-ups that searched.
    pub misses: u64,
    /// Entries held now.
    pub entries: u64,
    /// Searches run, and of those exhaustive ones (every algorithm timed).
    pub searches: u64,
    pub exhaustive_searches: u64,
    /// Milliseconds spent searching.
    pub search_ms: f64,
    /// Entries read from files set with `rb_tuning_cache_set_file`.
    pub loaded: u64,
    /// File problems recovered from (a foreign or corrupt file, unreadable lines, a failed
    /// write); the latest is `rb_tuning_cache_last_warning`.
    pub file_warnings: u64,
}

/// Chooses how convolution algorithms are searched from now on: `mode` 1 exhaustive (every
/// algorithm timed once per problem, like `torch.backends.cudnn.benchmark = True`), 0 the
/// library's heuristics, -1 the default (heuristics unless `RB_CONV_SEARCH=exhaustive`).
/// Executors at O3 search exhaustively whatever this says. MIOpen always runs its Find;
/// `MIOPEN_FIND_MODE` and `MIOPEN_USER_DB_PATH` are MIOpen's own and are honoured.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT for another `mode`. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_tuning_cache_set_exhaustive(mode: i32) -> rb_status {
    guard("rb_tuning_cache_set_exhaustive", || {
        let m = match mode {
            -1 => None,
            0 => Some(false),
            1 => Some(true),
            _ => {
                return Err(crate::Error::invalid(format!(
                    "mode={mode} must be -1 (default), 0 (heuristic) or 1 (exhaustive)"
                )));
            }
        };
        tuning::set_exhaustive(m);
        Ok(())
    })
}

/// Persists the tuning cache to the file at `path` (NUL-terminated; NULL turns persistence
/// off). The file's entries are loaded now; every later search merges the file's current
/// entries with the process's and rewrites it atomically under an advisory lock, so several
/// processes may share one file. A file that is not a tuning cache, or is truncated, is
/// recovered: what cannot be read is ignored and counted in `file_warnings`, never an error.
///
/// Fails with RB_STATUS_INVALID_ARGUMENT when `path` is a directory, is not UTF-8, or names
/// a directory that does not exist; the previous setting then stays. Thread-safe.
///
/// # Safety
/// `path` is NULL or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tuning_cache_set_file(path: *const c_char) -> rb_status {
    guard("rb_tuning_cache_set_file", || {
        let p = unsafe { cstr_opt(path, "path") }?;
        tuning::set_file(p.map(Path::new))
    })
}

/// Forgets the process's entries and resets the counters; the file, if one is set, is left
/// as it is (and stays set: its entries come back only with another
/// `rb_tuning_cache_set_file`). Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rb_tuning_cache_clear() -> rb_status {
    guard("rb_tuning_cache_clear", || {
        tuning::clear();
        Ok(())
    })
}

/// Fills `*out` with the tuning cache's counters.
///
/// Fails with RB_STATUS_NULL_POINTER (`out`). Thread-safe.
///
/// # Safety
/// `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tuning_cache_get_stats(out: *mut rb_tuning_cache_stats) -> rb_status {
    guard("rb_tuning_cache_get_stats", || {
        let s = tuning::stats();
        let v = rb_tuning_cache_stats {
            hits: s.hits,
            misses: s.misses,
            entries: s.entries,
            searches: s.searches,
            exhaustive_searches: s.exhaustive_searches,
            search_ms: s.search_ms,
            loaded: s.loaded,
            file_warnings: s.file_warnings,
        };
        unsafe { write_out(out, "out", v) }
    })
}

/// Copies the latest file warning (empty when none) into `buf` (`len` bytes, NUL-terminated,
/// truncated to fit); `*needed` (if not NULL) receives the bytes the whole text needs. `buf`
/// may be NULL with `len` 0 to ask the size.
///
/// Fails with RB_STATUS_NULL_POINTER (`buf` NULL with `len` > 0). Thread-safe.
///
/// # Safety
/// `buf` is NULL or holds `len` writable bytes; `needed` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_tuning_cache_last_warning(
    buf: *mut c_char,
    len: usize,
    needed: *mut usize,
) -> rb_status {
    guard("rb_tuning_cache_last_warning", || unsafe {
        write_text(&tuning::stats().last_warning, buf, len, needed)
    })
}
