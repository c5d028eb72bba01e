//! DESIGN §2: data flows down only. `src/base` is at the bottom; `src/ops` and `src/device`
//! may use `base` (and `device` may use `ops`), never the layers above them (`runtime`,
//! `graph`, `ffi`). This test reads the sources and fails on any upward path.

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Lines of the files under `src/<layer>` that name one of `forbidden` (`crate::X` or
/// `$crate::X`), comments excluded.
fn upward(layer: &str, forbidden: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src")
        .join(layer);
    let mut files = vec![];
    rust_files(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {}", root.display());
    let mut bad = vec![];
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for m in forbidden {
                if code.contains(&format!("crate::{m}")) {
                    bad.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    bad
}

#[test]
fn base_imports_nothing_above_it() {
    let bad = upward("base", &["ops", "device", "runtime", "graph", "ffi"]);
    assert!(
        bad.is_empty(),
        "src/base names a layer above it:\n{}",
        bad.join("\n")
    );
}

#[test]
fn ops_imports_only_base() {
    let bad = upward("ops", &["device", "runtime", "graph", "ffi"]);
    assert!(
        bad.is_empty(),
        "src/ops names a layer above it:\n{}",
        bad.join("\n")
    );
}

#[test]
fn device_imports_only_ops_and_base() {
    let bad = upward("device", &["runtime", "graph", "ffi"]);
    assert!(
        bad.is_empty(),
        "src/device names a layer above it:\n{}",
        bad.join("\n")
    );
}

#[test]
fn runtime_does_not_know_c_handles_or_graphs() {
    let bad = upward("runtime", &["ffi", "graph"]);
    assert!(
        bad.is_empty(),
        "src/runtime names a layer above it:\n{}",
        bad.join("\n")
    );
}
