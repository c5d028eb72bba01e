//! The kernel compile cache with a fake compiler that counts its calls: cold and warm runs
//! (also across a fresh cache on the same directory, as a new process would see it), the key
//! changing with each input, recovery from corrupt and truncated entries, and threads and
//! processes racing on one key.

use rocm_backend::ErrorKind;
use rocm_backend::device::gpu::kernel_cache::{KernelCache, KernelCompiler, cache_key};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

struct FakeCompiler {
    calls: AtomicU64,
    version: String,
    delay_ms: u64,
}

impl FakeCompiler {
    fn new() -> Self {
        FakeCompiler {
            calls: AtomicU64::new(0),
            version: "fakecc 1.0".into(),
            delay_ms: 0,
        }
    }
    fn calls(&self) -> u64 {
        self.calls.load(Ordering::SeqCst)
    }
}

/// The "code": large enough that a torn write would be visible, derived from every input.
fn code_for(source: &str, name: &str, options: &[String], arch: &str, version: &str) -> Vec<u8> {
    let unit = format!("{source}|{name}|{options:?}|{arch}|{version};");
    unit.as_bytes().repeat(64 * 1024 / unit.len() + 1)
}

impl KernelCompiler for FakeCompiler {
    fn compile(
        &self,
        source: &str,
        name: &str,
        options: &[String],
        arch: &str,
    ) -> rocm_backend::Result<Vec<u8>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.delay_ms > 0 {
            std::thread::sleep(std::time::Duration::from_millis(self.delay_ms));
        }
        if source.contains("syntax error") {
            return Err(rocm_backend::Error::new(
                ErrorKind::Compilation,
                "error: expected ';'",
            ));
        }
        Ok(code_for(source, name, options, arch, &self.version))
    }
    fn compiler_version(&self) -> String {
        self.version.clone()
    }
}

fn opts(o: &[&str]) -> Vec<String> {
    o.iter().map(|s| s.to_string()).collect()
}

const SRC: &str = "extern \"C\" __global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }";

#[test]
fn cold_then_warm_in_memory_and_across_processes() {
    let dir = tempfile::tempdir().unwrap();
    let cc = FakeCompiler::new();
    let o = opts(&["-O3"]);
    let c = KernelCache::new(Some(dir.path().to_path_buf()));
    let a = c.get_or_compile(&cc, SRC, "k", &o, "gfx90a").unwrap();
    assert_eq!(*a, code_for(SRC, "k", &o, "gfx90a", "fakecc 1.0"));
    assert_eq!(cc.calls(), 1);
    let s = c.stats();
    assert_eq!((s.memory_hits, s.disk_hits, s.misses), (0, 0, 1));
    assert!(s.compile_ms >= 0.0);
    // Warm in memory: nothing compiled.
    let b = c.get_or_compile(&cc, SRC, "k", &o, "gfx90a").unwrap();
    assert!(Arc::ptr_eq(&a, &b));
    assert_eq!(cc.calls(), 1);
    let s = c.stats();
    assert_eq!((s.memory_hits, s.misses), (1, 1));
    assert!((s.hit_rate - 0.5).abs() < 1e-12);
    // A fresh cache on the same directory (a new process): served from disk.
    let c2 = KernelCache::new(Some(dir.path().to_path_buf()));
    let d = c2.get_or_compile(&cc, SRC, "k", &o, "gfx90a").unwrap();
    assert_eq!(*d, *a);
    assert_eq!(cc.calls(), 1, "the warm run compiles nothing");
    let s2 = c2.stats();
    assert_eq!((s2.memory_hits, s2.disk_hits, s2.misses), (0, 1, 0));
    assert_eq!(s2.hit_rate, 1.0);
    // Exactly one entry on disk and no temporary files left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    assert_eq!(
        names[0],
        format!("{}.bin", cache_key(SRC, "k", &o, "gfx90a", "fakecc 1.0"))
    );
}

#[test]
fn every_input_makes_a_new_entry() {
    let dir = tempfile::tempdir().unwrap();
    let c = KernelCache::new(Some(dir.path().to_path_buf()));
    let cc = FakeCompiler::new();
    let o = opts(&["-O3"]);
    c.get_or_compile(&cc, SRC, "k", &o, "gfx90a").unwrap();
    c.get_or_compile(&cc, &format!("{SRC} "), "k", &o, "gfx90a")
        .unwrap();
    c.get_or_compile(&cc, SRC, "k2", &o, "gfx90a").unwrap();
    c.get_or_compile(&cc, SRC, "k", &opts(&["-O2"]), "gfx90a")
        .unwrap();
    c.get_or_compile(&cc, SRC, "k", &o, "gfx942").unwrap();
    let cc2 = FakeCompiler {
        version: "fakecc 2.0".into(),
        ..FakeCompiler::new()
    };
    c.get_or_compile(&cc2, SRC, "k", &o, "gfx90a").unwrap();
    assert_eq!(cc.calls() + cc2.calls(), 6);
    assert_eq!(c.stats().misses, 6);
    assert_eq!(c.stats().memory_entries, 6);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 6);
}

#[test]
fn corrupt_and_truncated_entries_are_recompiled() {
    let dir = tempfile::tempdir().unwrap();
    let cc = FakeCompiler::new();
    let o = opts(&[]);
    let key = cache_key(SRC, "k", &o, "sm_90", "fakecc 1.0");
    let path = dir.path().join(format!("{key}.bin"));
    let good = KernelCache::new(Some(dir.path().to_path_buf()))
        .get_or_compile(&cc, SRC, "k", &o, "sm_90")
        .unwrap();
    let bytes = std::fs::read(&path).unwrap();
    type Damage = Box<dyn Fn(&mut Vec<u8>)>;
    let damage: Vec<Damage> = vec![
        Box::new(|b| b.truncate(b.len() / 2)),
        Box::new(|b| b.truncate(20)),
        Box::new(|b| {
            let n = b.len();
            b[n - 100] ^= 0x40
        }),
        Box::new(|b| b[0] = b'Z'),
        Box::new(|b| b.clear()),
    ];
    for (i, d) in damage.iter().enumerate() {
        let mut b = bytes.clone();
        d(&mut b);
        std::fs::write(&path, &b).unwrap();
        let c = KernelCache::new(Some(dir.path().to_path_buf()));
        let v = c.get_or_compile(&cc, SRC, "k", &o, "sm_90").unwrap();
        assert_eq!(*v, *good, "damage {i}");
        let s = c.stats();
        assert_eq!(
            (s.corrupt_entries, s.misses, s.disk_hits),
            (1, 1, 0),
            "damage {i}"
        );
        // The entry was rewritten whole.
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "damage {i}");
    }
    assert_eq!(cc.calls(), 1 + damage.len() as u64);
}

#[test]
fn compile_errors_are_reported_and_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let c = KernelCache::new(Some(dir.path().to_path_buf()));
    let cc = FakeCompiler::new();
    for _ in 0..2 {
        let e = c
            .get_or_compile(&cc, "syntax error", "k", &[], "gfx90a")
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::Compilation);
        assert!(e.message.contains("expected ';'"), "{}", e.message);
        assert!(e.message.contains("'k'"), "{}", e.message);
    }
    assert_eq!(cc.calls(), 2);
    assert_eq!(c.stats().compile_errors, 2);
    assert_eq!(
        std::fs::read_dir(dir.path())
            .map(|d| d.count())
            .unwrap_or(0),
        0
    );
}

#[test]
fn clear_empties_memory_and_disk_only_of_own_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README"), "not ours").unwrap();
    let c = KernelCache::new(Some(dir.path().to_path_buf()));
    let cc = FakeCompiler::new();
    c.get_or_compile(&cc, SRC, "k", &[], "gfx90a").unwrap();
    c.get_or_compile(&cc, SRC, "k", &[], "gfx1030").unwrap();
    c.clear().unwrap();
    assert_eq!(c.stats().memory_entries, 0);
    let left: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(left, vec![std::ffi::OsString::from("README")]);
    c.get_or_compile(&cc, SRC, "k", &[], "gfx90a").unwrap();
    assert_eq!(cc.calls(), 3, "cleared entries compile again");
    // Clearing a cache whose directory does not exist yet is fine.
    KernelCache::new(Some(dir.path().join("none")))
        .clear()
        .unwrap();
}

#[test]
fn unwritable_directory_falls_back_to_memory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    // A directory below a regular file cannot be created.
    let c = KernelCache::new(Some(file.join("cache")));
    let cc = FakeCompiler::new();
    c.get_or_compile(&cc, SRC, "k", &[], "gfx90a").unwrap();
    c.get_or_compile(&cc, SRC, "k", &[], "gfx90a").unwrap();
    let s = c.stats();
    assert_eq!((s.misses, s.memory_hits, s.disk_write_errors), (1, 1, 1));
}

#[test]
fn threads_racing_on_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let cc = Arc::new(FakeCompiler {
        delay_ms: 20,
        ..FakeCompiler::new()
    });
    // One shared cache: its threads compile the key once.
    let shared = Arc::new(KernelCache::new(Some(dir.path().to_path_buf())));
    // Separate caches on the same directory behave like separate processes.
    let hs: Vec<_> = (0..8)
        .map(|i| {
            let cc = cc.clone();
            let shared = shared.clone();
            let path = dir.path().to_path_buf();
            std::thread::spawn(move || {
                let own;
                let c: &KernelCache = if i % 2 == 0 {
                    &shared
                } else {
                    own = KernelCache::new(Some(path));
                    &own
                };
                let mut got = Vec::new();
                for _ in 0..5 {
                    got.push(c.get_or_compile(&*cc, SRC, "k", &[], "gfx942").unwrap());
                }
                got
            })
        })
        .collect();
    let want = code_for(SRC, "k", &[], "gfx942", "fakecc 1.0");
    for h in hs {
        for v in h.join().unwrap() {
            assert_eq!(*v, want);
        }
    }
    let s = shared.stats();
    assert_eq!(
        s.misses + s.disk_hits,
        1,
        "the shared cache compiled or loaded once: {s:?}"
    );
    assert!(cc.calls() >= 1 && cc.calls() <= 5, "{}", cc.calls());
    let files: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(files.len(), 1, "one entry, no temporary files left");
}

/// Run as a child process by `processes_racing_on_one_key`.
#[test]
fn child_process_worker() {
    let Some(dir) = std::env::var_os("RB_KERNEL_CACHE_CHILD_DIR") else {
        return; // only meaningful as a child
    };
    let c = KernelCache::new(Some(dir.into()));
    let cc = FakeCompiler {
        delay_ms: 5,
        ..FakeCompiler::new()
    };
    let want = code_for(SRC, "k", &[], "gfx90a", "fakecc 1.0");
    for round in 0..20 {
        // Read through a fresh cache each round so the disk is consulted every time.
        let fresh = KernelCache::new(c.dir().map(|d| d.to_path_buf()));
        let v = fresh.get_or_compile(&cc, SRC, "k", &[], "gfx90a").unwrap();
        assert_eq!(*v, want, "round {round}");
        assert_eq!(fresh.stats().corrupt_entries, 0, "a torn entry was seen");
        if round % 5 == 0 {
            // Rewrite the entry under the other processes' feet.
            let _ = std::fs::remove_file(fresh.dir().unwrap().join(format!(
                "{}.bin",
                cache_key(SRC, "k", &[], "gfx90a", "fakecc 1.0")
            )));
        }
    }
}

#[test]
fn processes_racing_on_one_key() {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let kids: Vec<_> = (0..4)
        .map(|_| {
            std::process::Command::new(&exe)
                .args(["--exact", "child_process_worker", "--test-threads", "1"])
                .env("RB_KERNEL_CACHE_CHILD_DIR", dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        let out = k.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "child failed: {text}");
        assert!(
            text.contains("1 passed"),
            "child did not run the worker: {text}"
        );
    }
    let c = KernelCache::new(Some(dir.path().to_path_buf()));
    let cc = FakeCompiler::new();
    let v = c.get_or_compile(&cc, SRC, "k", &[], "gfx90a").unwrap();
    assert_eq!(*v, code_for(SRC, "k", &[], "gfx90a", "fakecc 1.0"));
}
