//! Keeps the AMD conformance checks from drifting away from the Rust declarations: every
//! symbol of every `dyn_symbols!` table in src/device/gpu/vendor/hip.rs and every `pub const`
//! there must be checked in tests/amd/hip_rs_decls.inc (which tests/amd/conformance.cpp
//! compiles against the real ROCm headers in `make amd-checks`), and nothing checked there
//! may be gone from hip.rs. Regenerate with `python3 tests/amd/gen_conformance.py`.

use std::collections::BTreeSet;

const HIP_RS: &str = include_str!("../src/device/gpu/vendor/hip.rs");
const DECLS: &str = include_str!("amd/hip_rs_decls.inc");

/// Strips `//` comments (hip.rs has no `//` inside string literals that matter here).
fn code_lines(src: &str) -> impl Iterator<Item = &str> {
    src.lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
}

/// `(req|opt) name: fn(...)` entries of the dyn_symbols! tables.
fn declared_symbols() -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut in_table = false;
    for l in code_lines(HIP_RS) {
        if l.starts_with("dyn_symbols!") {
            in_table = true;
        } else if in_table && l == "}" {
            in_table = false;
        } else if in_table {
            for kind in ["req ", "opt "] {
                if let Some(rest) = l.strip_prefix(kind) {
                    let name = rest.split(':').next().unwrap().trim();
                    assert!(
                        rest[name.len()..].trim_start().starts_with(": fn("),
                        "unexpected table entry in hip.rs: {l}"
                    );
                    out.insert(name.to_string());
                }
            }
        }
    }
    out
}

/// `pub const NAME: ...` items.
fn declared_consts() -> BTreeSet<String> {
    code_lines(HIP_RS)
        .filter_map(|l| l.strip_prefix("pub const "))
        .map(|r| r.split(':').next().unwrap().trim().to_string())
        .collect()
}

/// What hip_rs_decls.inc checks: `ABI_CHECK_FN(sym, ...)` and `ABI_CHECK_VALUE(..);  // CONST`.
fn checked() -> (BTreeSet<String>, BTreeSet<String>) {
    let mut fns = BTreeSet::new();
    let mut consts = BTreeSet::new();
    for l in DECLS.lines() {
        if let Some(r) = l.strip_prefix("ABI_CHECK_FN(") {
            fns.insert(r.split(',').next().unwrap().trim().to_string());
        } else if l.starts_with("ABI_CHECK_VALUE(")
            && let Some(c) = l.rsplit("// ").next()
            && c.chars()
                .all(|ch| ch.is_ascii_uppercase() || ch.is_ascii_digit() || ch == '_')
        {
            consts.insert(c.to_string());
        }
    }
    (fns, consts)
}

#[test]
fn every_hip_rs_symbol_is_checked_against_the_rocm_headers() {
    let declared = declared_symbols();
    assert!(declared.len() >= 20, "hip.rs parse found only {declared:?}");
    let (fns, _) = checked();
    let missing: Vec<_> = declared.difference(&fns).collect();
    let stale: Vec<_> = fns.difference(&declared).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "tests/amd/hip_rs_decls.inc lags hip.rs: unchecked {missing:?}, no longer declared {stale:?}; \
         run python3 tests/amd/gen_conformance.py"
    );
}

#[test]
fn every_hip_rs_constant_is_checked_against_the_rocm_headers() {
    let declared = declared_consts();
    assert!(
        declared.contains("HIP_ERROR_NO_DEVICE"),
        "hip.rs parse found {declared:?}"
    );
    let (_, consts) = checked();
    let missing: Vec<_> = declared.difference(&consts).collect();
    let stale: Vec<_> = consts.difference(&declared).collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "tests/amd/hip_rs_decls.inc lags hip.rs: unchecked {missing:?}, no longer declared {stale:?}; \
         run python3 tests/amd/gen_conformance.py"
    );
}
