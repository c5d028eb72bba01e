//! Generates the C header with cbindgen into OUT_DIR; `tests/header.rs` checks that the
//! committed include/rocm_backend.h equals it (`make header` refreshes the committed copy).

fn main() {
    println!("cargo:rerun-if-changed=src/ffi");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    let crate_dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("rocm_backend.h");
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
