//! The tuning cache (DESIGN §6): the algorithm a library search chose per problem (cuDNN
//! Find / MIOpen Find for convolutions), in memory for the process and, when a file is set,
//! on disk for the next one.
//!
//! An entry's key names everything its answer depends on: the device architecture, the
//! library and its version, the problem (direction, dtype, layout, shapes, padding, strides,
//! dilation, groups) and the math mode. Its value is the library's algorithm, math type and
//! workspace size, and whether it came from an exhaustive search (every algorithm timed) or
//! the library's heuristics. A heuristic entry is searched again when exhaustive search is
//! on; an exhaustive one is used in either mode.
//!
//! `RB_TUNING_CACHE=<file>` sets the file from the start. Exhaustive search is off by default (on with `RB_CONV_SEARCH=exhaustive` or
//! [`set_exhaustive`]) and on inside [`exhaustive_scope`] (the executor at O3, rb-bench).
//!
//! The file is text: a header line, then one `key<TAB>algo<TAB>math<TAB>workspace<TAB>mode`
//! line per entry. Setting it loads it; every new search merges the file's current entries
//! with the process's and writes them to a temporary file renamed over it (atomic: a reader
//! never sees a torn file), under an advisory lock (`<file>.lock`) so that processes writing
//! one file at once lose nothing. A file that is not a tuning cache, or has bad lines, is
//! recovered: what cannot be read is ignored and counted in the stats with a warning, never
//! an error. Thread-safe throughout.

use crate::{Error, Result};
use parking_lot::Mutex;
use std::cell::Cell;
use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::time::Duration;

const HEADER: &str = "# rocm-backend tuning cache v1";

/// An algorithm chosen for a problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Choice {
    pub algo: i32,
    pub math: i32,
    pub workspace: usize,
    /// Found by timing every algorithm (else: the library's heuristics).
    pub exhaustive: bool,
}

/// Counters since the process started (or the last [`clear`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Look-ups answered from the cache (memory or the file's entries).
    pub hits: u64,
    /// Look-ups that had to search.
    pub misses: u64,
    /// Entries held now.
    pub entries: u64,
    /// Searches run (heuristic or exhaustive).
    pub searches: u64,
    /// Of which exhaustive.
    pub exhaustive_searches: u64,
    /// Milliseconds spent searching.
    pub search_ms: f64,
    /// Entries read from the file.
    pub loaded: u64,
    /// File problems recovered from (a foreign or corrupt file, bad lines, a failed write).
    pub file_warnings: u64,
    /// The latest of those, empty when none.
    pub last_warning: String,
}

#[derive(Default)]
struct Cache {
    entries: HashMap<String, Choice>,
    file: Option<PathBuf>,
    exhaustive: Option<bool>,
    stats: Stats,
}

/// The cache; `RB_TUNING_CACHE=<file>` sets its file from the start (as
/// [`set_file`] would; an unusable path is a warning in the stats).
static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(|| {
    let mut c = Cache::default();
    if let Some(p) = std::env::var_os("RB_TUNING_CACHE").filter(|p| !p.is_empty()) {
        let path = PathBuf::from(p);
        if let Err(e) = attach(&mut c, &path) {
            warn(&mut c, format!("RB_TUNING_CACHE: {}", e.message));
        }
    }
    Mutex::new(c)
});

thread_local! {
    static SCOPE: Cell<Option<bool>> = const { Cell::new(None) };
}

fn env_exhaustive() -> bool {
    static EX: LazyLock<bool> = LazyLock::new(|| {
        std::env::var("RB_CONV_SEARCH").is_ok_and(|v| v.eq_ignore_ascii_case("exhaustive"))
    });
    *EX
}

/// Whether a search now would be exhaustive: the calling thread's [`exhaustive_scope`], else
/// [`set_exhaustive`], else `RB_CONV_SEARCH=exhaustive`.
pub fn exhaustive() -> bool {
    SCOPE
        .with(|s| s.get())
        .or(CACHE.lock().exhaustive)
        .unwrap_or_else(env_exhaustive)
}

/// Turns exhaustive search on or off for the process (`None`: back to the environment's
/// default).
pub fn set_exhaustive(on: Option<bool>) {
    CACHE.lock().exhaustive = on;
}

/// Runs `f` with exhaustive search `on` for the calling thread.
pub fn exhaustive_scope<R>(on: bool, f: impl FnOnce() -> R) -> R {
    struct Reset(Option<bool>);
    impl Drop for Reset {
        fn drop(&mut self) {
            SCOPE.with(|s| s.set(self.0));
        }
    }
    let _r = Reset(SCOPE.with(|s| s.replace(Some(on))));
    f()
}

/// The cached choice for `key`, if it satisfies the current mode (an exhaustive search
/// wanted and only a heuristic entry held is a miss). Counts a hit or a miss.
pub fn lookup(key: &str) -> Option<Choice> {
    let want_ex = exhaustive();
    let mut c = CACHE.lock();
    match c.entries.get(key).copied() {
        Some(ch) if ch.exhaustive || !want_ex => {
            c.stats.hits += 1;
            Some(ch)
        }
        _ => {
            c.stats.misses += 1;
            None
        }
    }
}

/// The entries held in memory whose key contains `needle` (for tests and diagnostics;
/// counts nothing).
pub fn entries_matching(needle: &str) -> Vec<(String, Choice)> {
    let c = CACHE.lock();
    c.entries
        .iter()
        .filter(|(k, _)| k.contains(needle))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

/// The choice for `key`: the cached one, or what `search` (given whether to search
/// exhaustively) finds, timed and stored.
pub fn tuned(key: &str, search: impl FnOnce(bool) -> Result<Choice>) -> Result<Choice> {
    if let Some(c) = lookup(key) {
        return Ok(c);
    }
    let ex = exhaustive();
    let t0 = std::time::Instant::now();
    let c = search(ex)?;
    store(key, c, t0.elapsed());
    Ok(c)
}

/// Stores what a search chose for `key` (it took `took`), and writes the file if one is
/// set (a failed write is a warning in the stats).
pub fn store(key: &str, choice: Choice, took: Duration) {
    let mut c = CACHE.lock();
    c.stats.searches += 1;
    c.stats.exhaustive_searches += choice.exhaustive as u64;
    c.stats.search_ms += took.as_secs_f64() * 1e3;
    c.entries.insert(key.to_string(), choice);
    if let Some(path) = c.file.clone()
        && let Err(e) = save(&mut c, &path)
    {
        warn(&mut c, format!("{}: not written: {e}", path.display()));
    }
}

/// Clears the entries held in memory and the counters (the file, if any, is left as it is
/// and stays set).
pub fn clear() {
    let mut c = CACHE.lock();
    c.entries.clear();
    c.stats = Stats::default();
}

/// The counters now.
pub fn stats() -> Stats {
    let c = CACHE.lock();
    let mut s = c.stats.clone();
    s.entries = c.entries.len() as u64;
    s
}

/// Persists the cache to `path` (None: memory only). The file's entries are loaded now
/// (the process's own win where both have a key); a missing file is created at the next
/// search. Fails only when the path is unusable (its directory does not exist, or it is a
/// directory); a corrupt or foreign file is a warning in the stats.
pub fn set_file(path: Option<&Path>) -> Result<()> {
    let mut c = CACHE.lock();
    match path {
        None => {
            c.file = None;
            Ok(())
        }
        Some(path) => attach(&mut c, path),
    }
}

fn attach(c: &mut Cache, path: &Path) -> Result<()> {
    if path.is_dir() {
        return Err(Error::invalid(format!(
            "tuning cache file {} is a directory",
            path.display()
        )));
    }
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if dir.is_some_and(|d| !d.is_dir()) {
        return Err(Error::invalid(format!(
            "tuning cache file {}: its directory does not exist",
            path.display()
        )));
    }
    let loaded = read_file(c, path);
    let n = loaded.len() as u64;
    for (k, v) in loaded {
        c.entries.entry(k).or_insert(v);
    }
    c.stats.loaded += n;
    c.file = Some(path.to_path_buf());
    Ok(())
}

fn warn(c: &mut Cache, msg: String) {
    c.stats.file_warnings += 1;
    c.stats.last_warning = msg;
}

/// The entries of `path` (none if it does not exist); what cannot be read is a warning.
fn read_file(c: &mut Cache, path: &Path) -> HashMap<String, Choice> {
    let mut out = HashMap::new();
    let text = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return out,
        Err(e) => {
            warn(c, format!("{}: not read: {e}", path.display()));
            return out;
        }
    };
    let Ok(text) = String::from_utf8(text) else {
        warn(
            c,
            format!("{}: not a tuning cache (not text); ignored", path.display()),
        );
        return out;
    };
    let mut lines = text.lines();
    if lines.next() != Some(HEADER) {
        warn(
            c,
            format!(
                "{}: not a tuning cache of this version; ignored",
                path.display()
            ),
        );
        return out;
    }
    let mut bad = 0;
    for line in lines.filter(|l| !l.is_empty()) {
        match parse_line(line) {
            Some((k, v)) => {
                out.insert(k, v);
            }
            None => bad += 1,
        }
    }
    if bad > 0 {
        warn(
            c,
            format!(
                "{}: {bad} unreadable line(s) ignored (truncated?)",
                path.display()
            ),
        );
    }
    out
}

fn parse_line(line: &str) -> Option<(String, Choice)> {
    let f: Vec<&str> = line.split('\t').collect();
    if f.len() != 5 || f[0].is_empty() {
        return None;
    }
    let exhaustive = match f[4] {
        "exhaustive" => true,
        "heuristic" => false,
        _ => return None,
    };
    Some((
        f[0].to_string(),
        Choice {
            algo: f[1].parse().ok()?,
            math: f[2].parse().ok()?,
            workspace: f[3].parse().ok()?,
            exhaustive,
        },
    ))
}

/// Merges the file's entries with ours (ours win) and writes them atomically, holding the
/// advisory lock so that concurrent writers lose nothing.
fn save(c: &mut Cache, path: &Path) -> std::io::Result<()> {
    let lock_path = path.with_extension(match path.extension() {
        Some(e) => format!("{}.lock", e.to_string_lossy()),
        None => "lock".into(),
    });
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)?;
    let _held = FileLock::exclusive(&lock)?;
    let theirs = read_file(c, path);
    for (k, v) in theirs {
        c.entries.entry(k).or_insert(v);
    }
    let mut keys: Vec<&String> = c.entries.keys().collect();
    keys.sort();
    let mut text = String::with_capacity(64 * keys.len() + 64);
    text.push_str(HEADER);
    text.push('\n');
    for k in keys {
        let v = &c.entries[k];
        let mode = if v.exhaustive {
            "exhaustive"
        } else {
            "heuristic"
        };
        text.push_str(&format!(
            "{k}\t{}\t{}\t{}\t{mode}\n",
            v.algo, v.math, v.workspace
        ));
    }
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        path.file_name()
            .map_or("tuning".into(), |n| n.to_string_lossy()),
        std::process::id()
    ));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

/// An exclusive `flock` held until dropped.
struct FileLock<'a>(&'a std::fs::File);

impl<'a> FileLock<'a> {
    fn exclusive(f: &'a std::fs::File) -> std::io::Result<Self> {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor for the life of `f`.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(FileLock(f))
    }
}

impl Drop for FileLock<'_> {
    fn drop(&mut self) {
        use std::os::fd::AsRawFd;
        // SAFETY: as above.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_round_trip_and_bad_lines_are_refused() {
        let (k, v) = parse_line("arch|lib|p\t3\t1\t4096\texhaustive").unwrap();
        assert_eq!(k, "arch|lib|p");
        assert_eq!(
            v,
            Choice {
                algo: 3,
                math: 1,
                workspace: 4096,
                exhaustive: true
            }
        );
        assert!(parse_line("arch|lib|p\t3\t1\t40").is_none());
        assert!(parse_line("arch|lib|p\tx\t1\t40\theuristic").is_none());
        assert!(parse_line("arch|lib|p\t3\t1\t40\tmaybe").is_none());
    }
}
