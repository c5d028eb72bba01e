//! The sources generated from the op table (src/ops/table.rs, by tools/opgen.rs) must be
//! committed fresh: each committed file equals what the build generates. `make generate`
//! (RB_GENERATE=1 cargo build) refreshes them.

use std::path::Path;

fn files(dir: &Path, base: &Path, out: &mut Vec<String>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, base, out);
        } else {
            out.push(p.strip_prefix(base).unwrap().to_string_lossy().into_owned());
        }
    }
}

#[test]
fn generated_sources_are_committed_fresh() {
    let gen_dir = Path::new(env!("RB_GENERATED_DIR"));
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut list = vec![];
    files(gen_dir, gen_dir, &mut list);
    list.sort();
    assert!(list.len() >= 4, "too few generated files: {list:?}");
    let mut stale = vec![];
    for f in &list {
        let want = std::fs::read_to_string(gen_dir.join(f)).unwrap();
        let have = std::fs::read_to_string(root.join(f)).unwrap_or_default();
        if want != have {
            stale.push(f.clone());
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files (run `make generate` and commit): {stale:?}"
    );
}

#[test]
fn no_stray_files_in_generated_folders() {
    // Every file in src/ffi/eager was generated: a removed op leaves no export behind.
    let gen_dir = Path::new(env!("RB_GENERATED_DIR")).join("src/ffi/eager");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/ffi/eager");
    let (mut want, mut have) = (vec![], vec![]);
    files(&gen_dir, &gen_dir, &mut want);
    files(&root, &root, &mut have);
    want.sort();
    have.sort();
    assert_eq!(
        want, have,
        "src/ffi/eager holds files the generator did not write"
    );
}
