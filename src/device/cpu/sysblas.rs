//! A system BLAS loaded at run time (like the GPU vendor libraries): OpenBLAS, BLIS or MKL,
//! whichever is found first, through its CBLAS `sgemm`. Without one the CPU device uses its
//! own packed AVX-512 kernel for large products ([`super::gemm_packed`]) and the pure-Rust
//! `matrixmultiply` crate for the rest (and on CPUs without AVX-512). All paths are exact
//! fp32.
//!
//! Search order: `RB_BLAS_LIBRARY` (a path or soname), then libopenblas.so.0, libopenblas.so,
//! libblis.so.4, libblis.so, libmkl_rt.so.2, libmkl_rt.so. `RB_BLAS=rust` forces the
//! fallback. Threads follow `RB_NUM_THREADS` (the CPU device's pool size).

use libloading::Library;
use std::sync::LazyLock;

/// `cblas_sgemm(order, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)`, LP64.
type CblasSgemm = unsafe extern "C" fn(
    i32,
    i32,
    i32,
    i32,
    i32,
    i32,
    f32,
    *const f32,
    i32,
    *const f32,
    i32,
    f32,
    *mut f32,
    i32,
);
type SetThreads = unsafe extern "C" fn(i32);

pub const CBLAS_COL_MAJOR: i32 = 102;
pub const CBLAS_NO_TRANS: i32 = 111;
pub const CBLAS_TRANS: i32 = 112;

/// A loaded system BLAS.
pub struct SysBlas {
    /// Kept alive for the function pointers below.
    _lib: Library,
    pub sgemm: CblasSgemm,
    /// The library's name as found.
    pub name: String,
}

const CANDIDATES: &[&str] = &[
    "libopenblas.so.0",
    "libopenblas.so",
    "libblis.so.4",
    "libblis.so",
    "libmkl_rt.so.2",
    "libmkl_rt.so",
];

fn load(name: &str) -> Option<SysBlas> {
    // SAFETY: loading a BLAS runs its initializers, which is what they are for.
    let lib = unsafe { Library::new(name) }.ok()?;
    // SAFETY: the symbol has the CBLAS signature above in every LP64 CBLAS.
    let sgemm: CblasSgemm = unsafe { *lib.get::<CblasSgemm>(b"cblas_sgemm\0").ok()? };
    let threads = super::par::num_threads() as i32;
    for setter in [
        &b"openblas_set_num_threads\0"[..],
        b"bli_thread_set_num_threads\0",
        b"MKL_Set_Num_Threads\0",
    ] {
        // SAFETY: each setter takes one int.
        if let Ok(f) = unsafe { lib.get::<SetThreads>(setter) } {
            unsafe { f(threads) };
            break;
        }
    }
    Some(SysBlas {
        _lib: lib,
        sgemm,
        name: name.to_string(),
    })
}

static BLAS: LazyLock<Option<SysBlas>> = LazyLock::new(|| {
    if std::env::var("RB_BLAS").is_ok_and(|v| v == "rust") {
        return None;
    }
    if let Ok(p) = std::env::var("RB_BLAS_LIBRARY") {
        return load(&p);
    }
    CANDIDATES.iter().find_map(|n| load(n))
});

/// The system BLAS, if one was found.
pub fn get() -> Option<&'static SysBlas> {
    BLAS.as_ref()
}

/// Which GEMM the CPU device uses for a large f32 product: the system library's name, or
/// the library's own kernel ("packed AVX-512 32x12 (rocm-backend)", with `matrixmultiply`
/// for small products), or "matrixmultiply (Rust)" on a CPU without AVX-512 (or with
/// `RB_GEMM_PACKED=0`). Skinny products (n <= 64) run [`super::gemm_skinny`] first on
/// AVX-512 whatever this says.
pub fn backend_name() -> String {
    match get() {
        Some(b) => format!("system BLAS {}", b.name),
        None if super::gemm_packed::applies(1024, 1024, 1024) => {
            "packed AVX-512 32x12 (rocm-backend's own; matrixmultiply for products under 2M multiply-adds)".to_string()
        }
        None => "matrixmultiply (Rust)".to_string(),
    }
}
