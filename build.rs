//! Generates, into OUT_DIR, the sources the op table implies (`tools/opgen.rs` over
//! `src/ops/table.rs`; `tests/generated.rs` checks the committed copies equal them, and
//! `RB_GENERATE=1`, i.e. `make generate`, writes them over the committed files first) and
//! the C header with cbindgen (`tests/header.rs` checks the committed
//! include/rocm_backend.h equals it; `make header` refreshes the committed copy).

#[path = "tools/opgen.rs"]
mod opgen;
#[path = "src/ops/table.rs"]
#[allow(dead_code)]
mod table;

fn main() {
    println!("cargo:rerun-if-changed=src/ops/table.rs");
    println!("cargo:rerun-if-changed=tools/opgen.rs");
    println!("cargo:rerun-if-env-changed=RB_GENERATE");
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let gen_dir = out_dir.join("generated");
    let bless = std::env::var("RB_GENERATE").is_ok_and(|v| v == "1");
    for (path, text) in opgen::generate(table::OPS) {
        let dst = gen_dir.join(&path);
        std::fs::create_dir_all(dst.parent().unwrap()).unwrap();
        std::fs::write(&dst, &text).unwrap();
        if bless {
            let src = std::path::Path::new(&crate_dir).join(&path);
            std::fs::create_dir_all(src.parent().unwrap()).unwrap();
            if std::fs::read_to_string(&src).ok().as_deref() != Some(text.as_str()) {
                std::fs::write(&src, &text).unwrap();
            }
        }
    }
    println!("cargo:rustc-env=RB_GENERATED_DIR={}", gen_dir.display());
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let out = out_dir.join("rocm_backend.h");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml"))
        .expect("cbindgen.toml is readable");
    let version = format!(
        "#define RB_VERSION_MAJOR {}\n#define RB_VERSION_MINOR {}\n#define RB_VERSION_PATCH {}\n",
        std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap(),
        std::env::var("CARGO_PKG_VERSION_MINOR").unwrap(),
        std::env::var("CARGO_PKG_VERSION_PATCH").unwrap(),
    );
    match cbindgen::Builder::new()
        .with_src(format!("{crate_dir}/src/ffi/mod.rs"))
        .with_config(config)
        .with_after_include(version)
        .generate()
    {
        Ok(b) => {
            b.write_to_file(&out);
        }
        Err(e) => {
            // A header that cannot be generated is a build error, shown with its cause.
            panic!("cbindgen failed: {e}");
        }
    }
    println!("cargo:rustc-env=RB_GENERATED_HEADER={}", out.display());
    // A SONAME, so programs linked against the installed .so record "librocm_backend.so"
    // instead of the path they were linked with (the CMake package relies on it).
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,librocm_backend.so");
    }
}
