//! The kernel compile cache: compiled code keyed by a SHA-256 of (source, kernel name, options,
//! architecture, compiler version), kept in memory and on disk.
//!
//! On disk an entry is `<dir>/<key>.bin`: a 48-byte header (magic `RBKC0001`, payload length
//! as u64 LE, SHA-256 of the payload) followed by the payload. Entries are written to a
//! temporary file in the same directory and renamed into place, so a concurrent reader (a
//! thread or another process) sees the whole entry or none; a truncated or corrupt entry fails
//! its header check and is compiled again and rewritten. A directory that cannot be written
//! leaves the cache working in memory only.
//!
//! The directory is `$RB_CACHE_DIR`, else `$XDG_CACHE_HOME/rocm_backend`, else
//! `$HOME/.cache/rocm_backend`.

use crate::{Error, Result};
use parking_lot::Mutex;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock};
use std::time::Instant;

/// Compiles kernel source for one architecture (hiprtc, nvrtc, or a test double).
pub trait KernelCompiler: Send + Sync {
    /// Compiles `source` for `arch` with `options`; `name` is the kernel the caller wants
    /// (compilers that need name expressions use it). Errors are `ErrorKind::Compilation`
    /// with the compiler's log.
    fn compile(&self, source: &str, name: &str, options: &[String], arch: &str) -> Result<Vec<u8>>;
    /// Identifies the compiler and its version (part of the cache key).
    fn compiler_version(&self) -> String;
}

/// Counters of a [`KernelCache`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KernelCacheStats {
    pub memory_hits: u64,
    pub disk_hits: u64,
    /// Look-ups that had to compile.
    pub misses: u64,
    /// (memory + disk hits) / look-ups; 0 when nothing was looked up.
    pub hit_rate: f64,
    /// Wall-clock milliseconds spent compiling.
    pub compile_ms: f64,
    /// Compilations that failed.
    pub compile_errors: u64,
    /// Disk entries found truncated or corrupt (and recompiled).
    pub corrupt_entries: u64,
    /// Disk entries that could not be written (the cache then works in memory only).
    pub disk_write_errors: u64,
    /// Entries held in memory now.
    pub memory_entries: u64,
}

#[derive(Default)]
struct Counters {
    memory_hits: u64,
    disk_hits: u64,
    misses: u64,
    compile_ns: u128,
    compile_errors: u64,
    corrupt_entries: u64,
    disk_write_errors: u64,
}

/// The cache; see the module documentation. `Send + Sync`.
pub struct KernelCache {
    dir: Option<PathBuf>,
    memory: Mutex<HashMap<String, Arc<Vec<u8>>>>,
    /// One lock per key being compiled, so threads of this process compile a key once.
    inflight: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    counters: Mutex<Counters>,
}

const MAGIC: &[u8; 8] = b"RBKC0001";
const HEADER: usize = 8 + 8 + 32;

/// The default cache directory from the environment (None when no variable gives one).
pub fn default_dir() -> Option<PathBuf> {
    let env = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    env("RB_CACHE_DIR")
        .or_else(|| env("XDG_CACHE_HOME").map(|d| d.join("rocm_backend")))
        .or_else(|| env("HOME").map(|d| d.join(".cache").join("rocm_backend")))
}

/// The cache key of one compilation: hex SHA-256 over the length-prefixed inputs.
pub fn cache_key(
    source: &str,
    name: &str,
    options: &[String],
    arch: &str,
    compiler_version: &str,
) -> String {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"rocm-backend kernel cache v1");
    field(source.as_bytes());
    field(name.as_bytes());
    field(&(options.len() as u64).to_le_bytes());
    for o in options {
        field(o.as_bytes());
    }
    field(arch.as_bytes());
    field(compiler_version.as_bytes());
    hex(&h.finalize())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn encode(payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(HEADER + payload.len());
    v.extend_from_slice(MAGIC);
    v.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    v.extend_from_slice(&Sha256::digest(payload));
    v.extend_from_slice(payload);
    v
}

/// The payload of an entry file, or None when it is truncated or corrupt.
fn decode(file: &[u8]) -> Option<&[u8]> {
    if file.len() < HEADER || &file[..8] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(file[8..16].try_into().ok()?) as usize;
    let payload = &file[HEADER..];
    if payload.len() != len || Sha256::digest(payload).as_slice() != &file[16..48] {
        return None;
    }
    Some(payload)
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

fn write_atomic(dir: &Path, key: &str, payload: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{key}.{}.{}.tmp",
        std::process::id(),
        TMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let res = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&encode(payload))?;
        f.sync_all()?;
        std::fs::rename(&tmp, dir.join(format!("{key}.bin")))
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

fn is_entry_name(n: &str) -> bool {
    let is_key = |k: &str| k.len() == 64 && k.bytes().all(|c| c.is_ascii_hexdigit());
    if let Some(k) = n.strip_suffix(".bin") {
        return is_key(k);
    }
    // Leftover temporary files of a crashed writer: ".<key>.<pid>.<n>.tmp".
    n.strip_prefix('.')
        .and_then(|r| r.strip_suffix(".tmp"))
        .and_then(|r| r.split('.').next())
        .is_some_and(is_key)
}

impl KernelCache {
    /// A cache over `dir` (None: [`default_dir`]; memory only when that is None too).
    pub fn new(dir: Option<PathBuf>) -> Self {
        Self::with_dir(dir.or_else(default_dir))
    }

    /// A cache that never touches the disk.
    pub fn memory_only() -> Self {
        Self::with_dir(None)
    }

    fn with_dir(dir: Option<PathBuf>) -> Self {
        KernelCache {
            dir,
            memory: Mutex::default(),
            inflight: Mutex::default(),
            counters: Mutex::default(),
        }
    }

    /// The directory entries are kept in (None: memory only).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// The compiled code for the inputs: from memory, else from disk, else compiled (and then
    /// stored in both). Compilation errors are returned and not cached.
    pub fn get_or_compile(
        &self,
        compiler: &dyn KernelCompiler,
        source: &str,
        name: &str,
        options: &[String],
        arch: &str,
    ) -> Result<Arc<Vec<u8>>> {
        let key = cache_key(source, name, options, arch, &compiler.compiler_version());
        if let Some(v) = self.memory.lock().get(&key).cloned() {
            self.counters.lock().memory_hits += 1;
            return Ok(v);
        }
        let gate = self.inflight.lock().entry(key.clone()).or_default().clone();
        let _g = gate.lock();
        let res = self.load_or_compile(&key, compiler, source, name, options, arch);
        self.inflight.lock().remove(&key);
        res
    }

    fn load_or_compile(
        &self,
        key: &str,
        compiler: &dyn KernelCompiler,
        source: &str,
        name: &str,
        options: &[String],
        arch: &str,
    ) -> Result<Arc<Vec<u8>>> {
        // Another thread may have finished this key while we waited for the gate.
        if let Some(v) = self.memory.lock().get(key).cloned() {
            self.counters.lock().memory_hits += 1;
            return Ok(v);
        }
        if let Some(dir) = &self.dir {
            let path = dir.join(format!("{key}.bin"));
            if let Ok(bytes) = std::fs::read(&path) {
                match decode(&bytes) {
                    Some(p) => {
                        let v = Arc::new(p.to_vec());
                        self.memory.lock().insert(key.to_string(), v.clone());
                        self.counters.lock().disk_hits += 1;
                        return Ok(v);
                    }
                    None => self.counters.lock().corrupt_entries += 1,
                }
            }
        }
        let t = Instant::now();
        let out = compiler.compile(source, name, options, arch);
        let ns = t.elapsed().as_nanos();
        {
            let mut c = self.counters.lock();
            c.misses += 1;
            c.compile_ns += ns;
            if out.is_err() {
                c.compile_errors += 1;
            }
        }
        let code =
            Arc::new(out.map_err(|e| e.context(&format!("compiling kernel '{name}' for {arch}")))?);
        if let Some(dir) = &self.dir
            && write_atomic(dir, key, &code).is_err()
        {
            self.counters.lock().disk_write_errors += 1;
        }
        self.memory.lock().insert(key.to_string(), code.clone());
        Ok(code)
    }

    pub fn stats(&self) -> KernelCacheStats {
        let c = self.counters.lock();
        let hits = c.memory_hits + c.disk_hits;
        let total = hits + c.misses;
        KernelCacheStats {
            memory_hits: c.memory_hits,
            disk_hits: c.disk_hits,
            misses: c.misses,
            hit_rate: if total == 0 {
                0.0
            } else {
                hits as f64 / total as f64
            },
            compile_ms: c.compile_ns as f64 / 1e6,
            compile_errors: c.compile_errors,
            corrupt_entries: c.corrupt_entries,
            disk_write_errors: c.disk_write_errors,
            memory_entries: self.memory.lock().len() as u64,
        }
    }

    /// Zeroes the counters (entries stay).
    pub fn reset_stats(&self) {
        *self.counters.lock() = Counters::default();
    }

    /// Drops every entry, in memory and on disk (only the cache's own files are removed).
    pub fn clear(&self) -> Result<()> {
        self.memory.lock().clear();
        let Some(dir) = &self.dir else { return Ok(()) };
        let rd = match std::fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => {
                return Err(Error::invalid(format!(
                    "cannot read the kernel cache directory {}: {e}",
                    dir.display()
                )));
            }
        };
        let mut first_err = None;
        for ent in rd.flatten() {
            let n = ent.file_name();
            if n.to_str().is_some_and(is_entry_name)
                && let Err(e) = std::fs::remove_file(ent.path())
                && e.kind() != std::io::ErrorKind::NotFound
            {
                first_err.get_or_insert(Error::invalid(format!(
                    "cannot remove {}: {e}",
                    ent.path().display()
                )));
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

static GLOBAL: LazyLock<KernelCache> = LazyLock::new(|| KernelCache::new(None));

/// The process-wide kernel cache (directory from the environment at first use).
pub fn kernel_cache() -> &'static KernelCache {
    &GLOBAL
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_depends_on_every_input() {
        let o = vec!["-O3".to_string()];
        let base = cache_key("src", "k", &o, "gfx90a", "hiprtc 6.4");
        let variants = [
            cache_key("src2", "k", &o, "gfx90a", "hiprtc 6.4"),
            cache_key("src", "k2", &o, "gfx90a", "hiprtc 6.4"),
            cache_key("src", "k", &["-O2".to_string()], "gfx90a", "hiprtc 6.4"),
            cache_key("src", "k", &[], "gfx90a", "hiprtc 6.4"),
            cache_key("src", "k", &o, "gfx942", "hiprtc 6.4"),
            cache_key("src", "k", &o, "gfx90a", "hiprtc 6.3"),
            // Field boundaries matter: "srck" + "" differs from "src" + "k".
            cache_key("srck", "", &o, "gfx90a", "hiprtc 6.4"),
            cache_key(
                "src",
                "k",
                &["-O".to_string(), "3".to_string()],
                "gfx90a",
                "hiprtc 6.4",
            ),
        ];
        for v in &variants {
            assert_ne!(&base, v);
        }
        assert_eq!(base, cache_key("src", "k", &o, "gfx90a", "hiprtc 6.4"));
        assert_eq!(base.len(), 64);
    }

    #[test]
    fn encode_decode_detects_damage() {
        let e = encode(b"hello kernel");
        assert_eq!(decode(&e), Some(&b"hello kernel"[..]));
        assert_eq!(decode(&e[..e.len() - 1]), None);
        assert_eq!(decode(&e[..10]), None);
        let mut bad = e.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(decode(&bad), None);
        let mut bad = e.clone();
        bad[0] = b'X';
        assert_eq!(decode(&bad), None);
        assert_eq!(decode(&encode(b"")), Some(&b""[..]));
    }

    #[test]
    fn entry_names() {
        let k = "a".repeat(64);
        assert!(is_entry_name(&format!("{k}.bin")));
        assert!(is_entry_name(&format!(".{k}.123.4.tmp")));
        assert!(!is_entry_name("notes.txt"));
        assert!(!is_entry_name(&format!("{}.bin", "g".repeat(64))));
    }
}
