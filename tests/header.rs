//! The committed include/rocm_backend.h must equal what the build generates, and the
//! version macros must equal Cargo.toml's version. `make header` (RB_BLESS=1) refreshes it.

#[test]
fn committed_header_is_current() {
    let generated = std::fs::read_to_string(env!("RB_GENERATED_HEADER")).unwrap();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/include/rocm_backend.h");
    if std::env::var_os("RB_BLESS").is_some() {
        std::fs::write(path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/rocm_backend.h differs from the generated header; run `make header` and commit it"
    );
}

#[test]
fn version_macros_match_cargo() {
    let h = std::fs::read_to_string(env!("RB_GENERATED_HEADER")).unwrap();
    for (name, v) in [
        ("RB_VERSION_MAJOR", env!("CARGO_PKG_VERSION_MAJOR")),
        ("RB_VERSION_MINOR", env!("CARGO_PKG_VERSION_MINOR")),
        ("RB_VERSION_PATCH", env!("CARGO_PKG_VERSION_PATCH")),
    ] {
        assert!(
            h.contains(&format!("#define {name} {v}\n")),
            "{name} != {v}"
        );
    }
    // SAFETY: rb_version returns a static NUL-terminated string.
    let s = unsafe { std::ffi::CStr::from_ptr(rocm_backend::ffi::status::rb_version()) };
    assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}
