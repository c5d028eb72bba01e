//! BLAS on device pointers, with BLAS conventions: column-major matrices, transpose flags,
//! leading dimensions, alpha and beta ([`GemmDesc`], [`GeamDesc`]).

use super::{null, target};
use crate::device::{DevPtr, GeamDesc, GemmDesc, Transpose};
use crate::runtime::Stream;
use crate::{Error, Result};

/// Strided-batched GEMM: for `i < batch`, `C_i = alpha * op(A_i) * op(B_i) + beta * C_i`
/// (the desc's own rules: [`GemmDesc::validate`]). An empty problem (m, n or batch 0) does
/// nothing; `A` and `B` may be NULL when `k` or `alpha` is 0. Every matrix's extent must fit
/// the address space.
pub fn gemm(stream: Option<&Stream>, d: &GemmDesc) -> Result<()> {
    d.validate()?;
    if d.m == 0 || d.n == 0 || d.batch == 0 {
        return Ok(());
    }
    if d.c.is_null() {
        return Err(null("C"));
    }
    if d.k > 0 && d.alpha != 0.0 && (d.a.is_null() || d.b.is_null()) {
        return Err(null(if d.a.is_null() { "A" } else { "B" }));
    }
    for (ld, cols, s, name) in [
        (
            d.lda,
            if d.trans_a == Transpose::No { d.k } else { d.m },
            d.stride_a,
            "A",
        ),
        (
            d.ldb,
            if d.trans_b == Transpose::No { d.n } else { d.k },
            d.stride_b,
            "B",
        ),
        (d.ldc, d.n, d.stride_c, "C"),
    ] {
        ld.checked_mul(cols)
            .and_then(|e| s.checked_mul(d.batch).and_then(|x| x.checked_add(e)))
            .and_then(|e| e.checked_mul(d.dtype.size()))
            .ok_or_else(|| Error::invalid(format!("the extent of {name} overflows")))?;
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.gemm(raw, d)
}

/// Byte range `[start, end)` of a column-major matrix with `rows`×`cols` stored elements.
fn span(p: DevPtr, rows: usize, cols: usize, ld: usize, es: usize) -> Result<(u64, u64)> {
    let len = ld
        .checked_mul(cols - 1)
        .and_then(|e| e.checked_add(rows))
        .and_then(|e| e.checked_mul(es))
        .ok_or_else(|| Error::invalid("geam: a matrix extent overflows"))?;
    let end =
        p.0.checked_add(len as u64)
            .ok_or_else(|| Error::invalid("geam: a matrix extent overflows"))?;
    Ok((p.0, end))
}

/// Matrix addition with transposes: `C = alpha * op(A) + beta * op(B)`, all m×n. A matrix
/// whose scalar is 0 is not read (and may be NULL). `C` may be `A` itself when `A` is not
/// transposed and `ldc == lda` (likewise `B`); any other overlap of `C` with a matrix that
/// is read is INVALID_ARGUMENT.
pub fn geam(stream: Option<&Stream>, d: &GeamDesc) -> Result<()> {
    d.validate()?;
    if d.m == 0 || d.n == 0 {
        return Ok(());
    }
    if d.c.is_null() {
        return Err(null("C"));
    }
    let es = d.dtype.size();
    let cs = span(d.c, d.m, d.n, d.ldc, es)?;
    for (read, p, t, ld, name) in [
        (d.alpha != 0.0, d.a, d.trans_a, d.lda, "A"),
        (d.beta != 0.0, d.b, d.trans_b, d.ldb, "B"),
    ] {
        if !read {
            continue;
        }
        if p.is_null() {
            return Err(null(name));
        }
        let (rows, cols) = match t {
            Transpose::No => (d.m, d.n),
            Transpose::Yes => (d.n, d.m),
        };
        let ps = span(p, rows, cols, ld, es)?;
        let in_place = p == d.c && t == Transpose::No && ld == d.ldc;
        if !in_place && ps.0 < cs.1 && cs.0 < ps.1 {
            return Err(Error::invalid(format!(
                "geam: C overlaps {name}; only C == {name} with {name} not transposed and \
                 ldc == ld{} is allowed",
                name.to_ascii_lowercase()
            )));
        }
    }
    let Some((dev, raw)) = target(stream) else {
        return Ok(());
    };
    dev.geam(raw, d)
}
