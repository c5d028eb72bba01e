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

/// Every function declaration of the header, normalized to one line: `ret name(args);`.
fn declarations(header: &str) -> Vec<String> {
    let mut text = String::new();
    let mut rest = header;
    while let Some(i) = rest.find("/*") {
        text.push_str(&rest[..i]);
        rest = rest[i..].find("*/").map_or("", |j| &rest[i + j + 2..]);
    }
    text.push_str(rest);
    let mut out = vec![];
    for stmt in text.split(';') {
        // The statement's own lines: after the last preprocessor line, brace or blank line.
        let lines: Vec<&str> = stmt.lines().collect();
        let start = lines
            .iter()
            .rposition(|l| l.trim().is_empty() || l.starts_with('#') || l.contains(['{', '}']))
            .map_or(0, |i| i + 1);
        let s = lines[start..].join(" ");
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        let Some(open) = s.find('(') else { continue };
        let Some(p) = s[..open].rfind(' ') else {
            continue;
        };
        let (ret, name) = (&s[..p], &s[p + 1..open]);
        let (ret, name) = match name.strip_prefix('*') {
            Some(n) => (format!("{ret} *"), n),
            None => (ret.to_string(), name),
        };
        if !name.starts_with("rb_") || !s.ends_with(')') || ret.starts_with("typedef") {
            continue;
        }
        let args = s[open + 1..s.len() - 1]
            .replace("( ", "(")
            .replace(" )", ")");
        out.push(format!("{ret} {name}({args});"));
    }
    out.sort();
    out
}

/// The published ABI never changes: every declaration in tests/abi_declarations.txt is in
/// the header exactly (a new function is allowed and is added by RB_BLESS=1).
#[test]
fn published_abi_is_unchanged() {
    let h = std::fs::read_to_string(env!("RB_GENERATED_HEADER")).unwrap();
    let have = declarations(&h);
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/abi_declarations.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let head: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
    let want: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    let missing: Vec<&&str> = want
        .iter()
        .filter(|d| !have.iter().any(|h| h == *d))
        .collect();
    assert!(
        missing.is_empty(),
        "published declarations changed or removed:\n{}",
        missing
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    );
    if std::env::var_os("RB_BLESS").is_some() && have.len() != want.len() {
        std::fs::write(path, format!("{}\n{}\n", head.join("\n"), have.join("\n"))).unwrap();
        return;
    }
    assert_eq!(
        have.len(),
        want.len(),
        "new declarations: RB_BLESS=1 cargo test --test header"
    );
}
