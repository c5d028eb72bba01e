//! BLAS on raw pointers, with BLAS conventions: column-major matrices, transpose flags
//! (`rb_operation`), leading dimensions, alpha and beta. Pointers address memory of the
//! stream's device (host memory for the CPU device); NULL stream means the current device's
//! default stream. Work is queued on the stream: synchronize before reading the result on
//! the host. The checks and the call: [`crate::runtime::raw::blas`].

use super::{dp, on_stream};
use crate::device::{GeamDesc, GemmDesc, Transpose};
use crate::ffi::status::{guard, rb_status};
use crate::ffi::stream::rb_stream;
use crate::runtime::DType;
use crate::runtime::raw::blas;
use crate::{Error, Result};
use std::ffi::c_void;

fn trans(v: i32, arg: &str) -> Result<Transpose> {
    match v {
        0 => Ok(Transpose::No),
        1 => Ok(Transpose::Yes),
        _ => Err(Error::invalid(format!(
            "{arg}={v} is not an rb_operation (0 or 1)"
        ))),
    }
}

fn dim(v: i64, arg: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(format!("{arg}={v} is negative")))
}

/// The two GEMM exports: the C arguments as a [`GemmDesc`], then [`blas::gemm`].
#[allow(clippy::too_many_arguments)]
fn gemm(
    call: &str,
    stream: *mut rb_stream,
    dtype: DType,
    transa: i32,
    transb: i32,
    m: i64,
    n: i64,
    k: i64,
    alpha: f32,
    a: *const c_void,
    lda: i64,
    b: *const c_void,
    ldb: i64,
    beta: f32,
    c: *mut c_void,
    ldc: i64,
    batch: i64,
    stride_a: i64,
    stride_b: i64,
    stride_c: i64,
) -> Result<()> {
    let d = GemmDesc {
        dtype,
        trans_a: trans(transa, "transa")?,
        trans_b: trans(transb, "transb")?,
        m: dim(m, "m")?,
        n: dim(n, "n")?,
        k: dim(k, "k")?,
        alpha,
        a: dp(a),
        lda: dim(lda, "lda")?,
        b: dp(b),
        ldb: dim(ldb, "ldb")?,
        beta,
        c: dp(c),
        ldc: dim(ldc, "ldc")?,
        batch: dim(batch, "batch_count")?,
        stride_a: dim(stride_a, "stride_a")?,
        stride_b: dim(stride_b, "stride_b")?,
        stride_c: dim(stride_c, "stride_c")?,
    };
    let ptrs = [("A", d.a), ("B", d.b), ("C", d.c)];
    on_stream(call, stream, &ptrs, move |s| blas::gemm(s, &d))
}

/// Single-precision GEMM: `C = alpha * op(A) * op(B) + beta * C`, column-major, `op(A)` m×k,
/// `op(B)` k×n, `C` m×n; `transa`/`transb` are `rb_operation` values. When `beta` is 0, `C`
/// is not read (NaNs in it do not propagate).
///
/// Fails with RB_STATUS_NULL_POINTER, RB_STATUS_INVALID_HANDLE (stream),
/// RB_STATUS_INVALID_ARGUMENT (negative size, leading dimension too small, bad flag) or
/// RB_STATUS_VENDOR; `C` is then unchanged. Thread-safe for distinct `C`.
///
/// # Safety
/// The matrices must be valid memory of the stream's device for the sizes given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_blas_sgemm(
    stream: *mut rb_stream,
    transa: i32,
    transb: i32,
    m: i64,
    n: i64,
    k: i64,
    alpha: f32,
    a: *const f32,
    lda: i64,
    b: *const f32,
    ldb: i64,
    beta: f32,
    c: *mut f32,
    ldc: i64,
) -> rb_status {
    guard("rb_blas_sgemm", || {
        gemm(
            "rb_blas_sgemm",
            stream,
            DType::F32,
            transa,
            transb,
            m,
            n,
            k,
            alpha,
            a as _,
            lda,
            b as _,
            ldb,
            beta,
            c as _,
            ldc,
            1,
            0,
            0,
            0,
        )
    })
}

/// GEMM of any floating `dtype` (RB_DTYPE_F32, RB_DTYPE_F16 or RB_DTYPE_BF16; all three
/// matrices of that type, accumulation in f32), strided-batched: for `i < batch_count`,
/// `C + i*stride_c = alpha * op(A + i*stride_a) * op(B + i*stride_b) + beta * (C + i*stride_c)`
/// with strides in elements (0 reuses one matrix for every batch).
///
/// Failures as `rb_blas_sgemm`, plus RB_STATUS_DTYPE_MISMATCH for a non-floating dtype.
///
/// # Safety
/// The matrices must be valid memory of the stream's device for the sizes given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_blas_gemm_strided_batched(
    stream: *mut rb_stream,
    dtype: i32,
    transa: i32,
    transb: i32,
    m: i64,
    n: i64,
    k: i64,
    alpha: f32,
    a: *const c_void,
    lda: i64,
    stride_a: i64,
    b: *const c_void,
    ldb: i64,
    stride_b: i64,
    beta: f32,
    c: *mut c_void,
    ldc: i64,
    stride_c: i64,
    batch_count: i64,
) -> rb_status {
    guard("rb_blas_gemm_strided_batched", || {
        let dt = DType::from_i32(dtype)?;
        gemm(
            "rb_blas_gemm_strided_batched",
            stream,
            dt,
            transa,
            transb,
            m,
            n,
            k,
            alpha,
            a,
            lda,
            b,
            ldb,
            beta,
            c,
            ldc,
            batch_count,
            stride_a,
            stride_b,
            stride_c,
        )
    })
}

/// Matrix addition with transposes (cuBLAS/rocBLAS `geam`): `C = alpha * op(A) + beta *
/// op(B)`, column-major, `op(A)`, `op(B)` and `C` all m×n; `dtype` is RB_DTYPE_F32,
/// RB_DTYPE_F16 or RB_DTYPE_BF16 (all three matrices of that type, math in f32); `transa`/
/// `transb` are `rb_operation` values; `alpha` and `beta` are passed by value as in
/// `rb_blas_gemm_strided_batched`. When `alpha` is 0, `A` is not read and may be NULL (NaNs
/// in it do not propagate); likewise `B` with `beta`. In-place use as cuBLAS allows it: `C`
/// may be `A` itself when `transa` is RB_OPERATION_NONE and `ldc == lda` (likewise `B`);
/// any other overlap of `C` with a matrix that is read is rejected.
///
/// Fails with RB_STATUS_NULL_POINTER (`C`, or a matrix whose scalar is nonzero, NULL when
/// m, n > 0), RB_STATUS_INVALID_HANDLE (stream), RB_STATUS_INVALID_ARGUMENT (negative size,
/// leading dimension too small, bad flag or dtype value, forbidden overlap),
/// RB_STATUS_DTYPE_MISMATCH (a non-floating dtype), RB_STATUS_UNSUPPORTED or
/// RB_STATUS_VENDOR; `C` is then unchanged. Thread-safe for distinct `C`.
///
/// # Safety
/// The matrices must be valid memory of the stream's device for the sizes given.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rb_blas_geam(
    stream: *mut rb_stream,
    dtype: i32,
    transa: i32,
    transb: i32,
    m: i64,
    n: i64,
    alpha: f32,
    a: *const c_void,
    lda: i64,
    beta: f32,
    b: *const c_void,
    ldb: i64,
    c: *mut c_void,
    ldc: i64,
) -> rb_status {
    guard("rb_blas_geam", || {
        let d = GeamDesc {
            dtype: DType::from_i32(dtype)?,
            trans_a: trans(transa, "transa")?,
            trans_b: trans(transb, "transb")?,
            m: dim(m, "m")?,
            n: dim(n, "n")?,
            alpha,
            a: dp(a),
            lda: dim(lda, "lda")?,
            beta,
            b: dp(b),
            ldb: dim(ldb, "ldb")?,
            c: dp(c),
            ldc: dim(ldc, "ldc")?,
        };
        let ptrs = [("A", d.a), ("B", d.b), ("C", d.c)];
        on_stream("rb_blas_geam", stream, &ptrs, move |s| blas::geam(s, &d))
    })
}
