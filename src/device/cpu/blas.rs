//! BLAS on the CPU: GEMM, GEAM, and GEMM + bias + activation (linear, matmul+bias+act) with
//! the column sums of linear's bias gradient. f32 GEMM runs through the system BLAS when one
//! is installed (see [`super::sysblas`]); without one, large products on AVX-512 machines run
//! the library's own packed kernel ([`super::gemm_packed`], which says why it is ours and not
//! a crate's) and the rest `matrixmultiply` (packed AVX/FMA kernels, threaded);
//! f16/bf16 widen to f32, multiply, and round back.
//! Skinny f32 products (dense layers at small batch) on AVX-512 machines run the kernel of
//! [`super::gemm_skinny`] instead, which does not pack the large operand; GEMM + bias + act
//! runs in row blocks whose output stays in cache for the epilogue (fused into the skinny
//! kernel's store where it applies).

use super::CpuDevice;
use super::elem::FloatElem;
use super::par::{SendPtr, for_range};
use super::sysblas;
use crate::base::dtype::DType;
use crate::device::blas::{BlasOps, GeamDesc, GemmDesc, Transpose};
use crate::device::{DevPtr, RawStream};
use crate::ops::conv::Activation;
use crate::{Result, with_float_type};

/// Element strides (row, column) of op(X) for a column-major X with leading dimension `ld`.
fn op_strides(t: Transpose, ld: usize) -> (isize, isize) {
    match t {
        Transpose::No => (1, ld as isize),
        Transpose::Yes => (ld as isize, 1),
    }
}

/// # Safety
/// The pointers in `d` must address matrices of the sizes `d` describes.
unsafe fn sgemm_one(d: &GemmDesc, a: *const f32, b: *const f32, c: *mut f32) {
    let (m, n, k) = (d.m, d.n, d.k);
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 || d.alpha == 0.0 {
        for j in 0..n {
            for i in 0..m {
                // SAFETY: C is m×n with leading dimension ldc.
                unsafe {
                    let p = c.add(i + j * d.ldc);
                    *p = if d.beta == 0.0 { 0.0 } else { d.beta * *p };
                }
            }
        }
        return;
    }
    if super::gemm_skinny::applies(d) {
        // SAFETY: caller's contract; m, n, k >= 1 here; applies() checked the CPU.
        unsafe { super::gemm_skinny::sgemm(d, a, b, c) };
        return;
    }
    if let Some(blas) = super::sysblas::get() {
        let fits = [m, n, k, d.lda, d.ldb, d.ldc]
            .iter()
            .all(|&v| v <= i32::MAX as usize);
        if fits {
            let t = |t| {
                if t == Transpose::No {
                    sysblas::CBLAS_NO_TRANS
                } else {
                    sysblas::CBLAS_TRANS
                }
            };
            // SAFETY: caller's contract; CBLAS reads op(A) m×k, op(B) k×n and writes C m×n,
            // and (like every reference BLAS) does not read C when beta == 0.
            unsafe {
                (blas.sgemm)(
                    sysblas::CBLAS_COL_MAJOR,
                    t(d.trans_a),
                    t(d.trans_b),
                    m as i32,
                    n as i32,
                    k as i32,
                    d.alpha,
                    a,
                    d.lda as i32,
                    b,
                    d.ldb as i32,
                    d.beta,
                    c,
                    d.ldc as i32,
                )
            };
            return;
        }
    }
    let (rsa, csa) = op_strides(d.trans_a, d.lda);
    let (rsb, csb) = op_strides(d.trans_b, d.ldb);
    if super::gemm_packed::applies(m, n, k) {
        // SAFETY: caller's contract; applies() checked the CPU; the kernel does not read C
        // when beta == 0.
        unsafe {
            super::gemm_packed::sgemm(m, n, k, d.alpha, a, rsa, csa, b, rsb, csb, d.beta, c, d.ldc)
        };
        return;
    }
    // SAFETY: caller's contract; matrixmultiply ignores C's old contents when beta == 0.
    unsafe {
        matrixmultiply::sgemm(
            m,
            k,
            n,
            d.alpha,
            a,
            rsa,
            csa,
            b,
            rsb,
            csb,
            d.beta,
            c,
            1,
            d.ldc as isize,
        )
    };
}

/// One f64 GEMM of a [`GemmDesc`] (column-major) through `matrixmultiply`'s dgemm, with
/// alpha and beta in f64 (PyTorch's double matmul).
///
/// # Safety
/// The matrices the descriptor names exist.
unsafe fn dgemm_one(d: &GemmDesc, a: *const f64, b: *const f64, c: *mut f64) {
    let (m, n, k) = (d.m, d.n, d.k);
    if m == 0 || n == 0 {
        return;
    }
    let (alpha, beta) = (f64::from(d.alpha), f64::from(d.beta));
    if k == 0 || alpha == 0.0 {
        for j in 0..n {
            for i in 0..m {
                // SAFETY: C is m×n with leading dimension ldc.
                unsafe {
                    let p = c.add(i + j * d.ldc);
                    *p = if beta == 0.0 { 0.0 } else { beta * *p };
                }
            }
        }
        return;
    }
    let (rsa, csa) = op_strides(d.trans_a, d.lda);
    let (rsb, csb) = op_strides(d.trans_b, d.ldb);
    // SAFETY: caller's contract; matrixmultiply ignores C's old contents when beta == 0.
    unsafe {
        matrixmultiply::dgemm(
            m,
            k,
            n,
            alpha,
            a,
            rsa,
            csa,
            b,
            rsb,
            csb,
            beta,
            c,
            1,
            d.ldc as isize,
        )
    };
}

/// Copies op-less storage of a column-major matrix (`rows`×`cols`, leading dim `ld`) to f32.
fn widen<T: FloatElem>(p: *const T, rows: usize, cols: usize, ld: usize) -> Vec<f32> {
    let mut v = vec![0f32; rows * cols];
    for j in 0..cols {
        for i in 0..rows {
            // SAFETY: the matrix spans `ld * (cols - 1) + rows` elements.
            v[i + j * rows] = unsafe { (*p.add(i + j * ld)).to_f32() };
        }
    }
    v
}

fn gemm_half<T: FloatElem>(d: &GemmDesc) {
    let (ar, ac) = if d.trans_a == Transpose::No {
        (d.m, d.k)
    } else {
        (d.k, d.m)
    };
    let (br, bc) = if d.trans_b == Transpose::No {
        (d.k, d.n)
    } else {
        (d.n, d.k)
    };
    let es = std::mem::size_of::<T>();
    for bi in 0..d.batch {
        let a = d.a.offset(bi * d.stride_a * es).as_ptr::<T>();
        let b = d.b.offset(bi * d.stride_b * es).as_ptr::<T>();
        let c = d.c.offset(bi * d.stride_c * es).as_mut_ptr::<T>();
        let wa = widen(a, ar, ac, d.lda);
        let wb = widen(b, br, bc, d.ldb);
        let mut wc = if d.beta == 0.0 {
            vec![0f32; d.m * d.n]
        } else {
            widen(c, d.m, d.n, d.ldc)
        };
        let dd = GemmDesc {
            lda: ar.max(1),
            ldb: br.max(1),
            ldc: d.m.max(1),
            ..*d
        };
        // SAFETY: the widened copies are dense with the leading dimensions above.
        unsafe { sgemm_one(&dd, wa.as_ptr(), wb.as_ptr(), wc.as_mut_ptr()) };
        for j in 0..d.n {
            for i in 0..d.m {
                // SAFETY: C is m×n with leading dimension ldc.
                unsafe { *c.add(i + j * d.ldc) = T::from_f32(wc[i + j * d.m]) };
            }
        }
    }
}

/// GEAM in f32 math, columns of C in parallel. Element (i, j) of C is written after A and B
/// at (i, j) are read, so C may be A or B itself (the in-place cases of [`GeamDesc`]).
fn geam_typed<T: FloatElem>(d: &GeamDesc) {
    let (a, b, c) = (
        SendPtr(d.a.0 as usize as *mut T),
        SendPtr(d.b.0 as usize as *mut T),
        SendPtr(d.c.0 as usize as *mut T),
    );
    let at = |t: Transpose, ld: usize, i: usize, j: usize| match t {
        Transpose::No => i + j * ld,
        Transpose::Yes => j + i * ld,
    };
    let grain = (GEAM_GRAIN / d.m.max(1)).max(1);
    for_range(d.n, grain, move |j0, j1| {
        let (a, b, c) = (a.get(), b.get(), c.get());
        for j in j0..j1 {
            for i in 0..d.m {
                // SAFETY: the caller's contract: A, B and C span the matrices `d` describes;
                // A (B) is not read when alpha (beta) is 0.
                unsafe {
                    let mut v = 0f32;
                    if d.alpha != 0.0 {
                        v = d.alpha * (*a.add(at(d.trans_a, d.lda, i, j))).to_f32();
                    }
                    if d.beta != 0.0 {
                        v += d.beta * (*b.add(at(d.trans_b, d.ldb, i, j))).to_f32();
                    }
                    *c.add(i + j * d.ldc) = T::from_f32(v);
                }
            }
        }
    });
}

const GEAM_GRAIN: usize = 1 << 15;

impl BlasOps for CpuDevice {
    fn geam(&self, _s: RawStream, d: &GeamDesc) -> Result<()> {
        d.validate()?;
        if d.m == 0 || d.n == 0 {
            return Ok(());
        }
        with_float_type!(d.dtype, "geam", T => geam_typed::<T>(d));
        Ok(())
    }

    fn gemm(&self, _s: RawStream, d: &GemmDesc) -> Result<()> {
        d.validate()?;
        match d.dtype {
            DType::F32 => {
                for bi in 0..d.batch {
                    let off = |p: DevPtr, stride: usize| p.offset(bi * stride * 4);
                    // SAFETY: the caller guarantees the described matrices exist.
                    unsafe {
                        sgemm_one(
                            d,
                            off(d.a, d.stride_a).as_ptr(),
                            off(d.b, d.stride_b).as_ptr(),
                            off(d.c, d.stride_c).as_mut_ptr(),
                        )
                    };
                }
            }
            DType::F16 => gemm_half::<half::f16>(d),
            DType::BF16 => gemm_half::<half::bf16>(d),
            DType::F64 => {
                for bi in 0..d.batch {
                    let off = |p: DevPtr, stride: usize| p.offset(bi * stride * 8);
                    // SAFETY: the caller guarantees the described matrices exist.
                    unsafe {
                        dgemm_one(
                            d,
                            off(d.a, d.stride_a).as_ptr(),
                            off(d.b, d.stride_b).as_ptr(),
                            off(d.c, d.stride_c).as_mut_ptr(),
                        )
                    };
                }
            }
            _ => unreachable!("validate() rejects non-floating dtypes"),
        }
        Ok(())
    }

    fn gemm_bias_act(
        &self,
        s: RawStream,
        dtype: DType,
        x: DevPtr,
        w: DevPtr,
        w_is_nk: bool,
        bias: Option<DevPtr>,
        act: Activation,
        y: DevPtr,
        m: usize,
        k: usize,
        n: usize,
    ) -> Result<()> {
        if m == 0 || n == 0 {
            return Ok(());
        }
        with_float_type!(dtype, "gemm_bias_act", T => {
            let es = std::mem::size_of::<T>();
            let b = bias.map(|b| super::elem::widen::<T>(b, n));
            // Row blocks whose output (about 256 KiB) stays in cache for the epilogue.
            let mb = (65536 / n).clamp(64, 4096).min(m);
            let mut r0 = 0;
            while r0 < m {
                let rows = mb.min(m - r0);
                // Column-major: Yᵀ (n×rows) = op(W) (n×k) · Xᵀ (k×rows).
                let desc = GemmDesc {
                    dtype,
                    trans_a: if w_is_nk { Transpose::Yes } else { Transpose::No },
                    trans_b: Transpose::No,
                    m: n,
                    n: rows,
                    k,
                    alpha: 1.0,
                    a: w,
                    lda: if w_is_nk { k.max(1) } else { n },
                    b: x.offset(r0 * k * es),
                    ldb: k.max(1),
                    beta: 0.0,
                    c: y.offset(r0 * n * es),
                    ldc: n,
                    batch: 1,
                    stride_a: 0,
                    stride_b: 0,
                    stride_c: 0,
                };
                let is_f32 = dtype == DType::F32;
                let fused = is_f32
                    && k > 0
                    && !matches!(act, Activation::Gelu { .. })
                    && super::gemm_skinny::applies(&desc);
                if fused {
                    // The skinny kernel adds the bias and applies ReLU before its store.
                    let ep = super::gemm_skinny::Epilogue {
                        bias: b.as_ref().map_or(std::ptr::null(), |b| b.as_ptr()),
                        relu: act == Activation::Relu,
                    };
                    // SAFETY: the desc addresses W, the rows of X and Y (checked by the
                    // caller); the bias holds n floats; applies() checked the CPU.
                    unsafe {
                        super::gemm_skinny::sgemm_epilogue(
                            &desc,
                            desc.a.as_mut_ptr::<f32>(),
                            desc.b.as_mut_ptr::<f32>(),
                            desc.c.as_mut_ptr::<f32>(),
                            ep,
                        )
                    };
                    r0 += rows;
                    continue;
                }
                // f16/bf16: the rows start as the bias and the GEMM adds to them (beta = 1) in
                // f32, so the bias is in before the one rounding (PyTorch's addmm).
                let pre = bias.filter(|_| !is_f32);
                if let Some(bp) = pre {
                    let ys = SendPtr(y.offset(r0 * n * es).as_mut_ptr::<T>());
                    let bs = SendPtr(bp.as_mut_ptr::<T>());
                    for_range(rows, (8192 / n).max(1), move |a0, a1| {
                        for r in a0..a1 {
                            // SAFETY: the bias holds n elements, each row of Y n more.
                            unsafe { std::ptr::copy_nonoverlapping(bs.get(), ys.get().add(r * n), n) };
                        }
                    });
                }
                let beta = if pre.is_some() { 1.0 } else { 0.0 };
                self.gemm(s, &GemmDesc { beta, ..desc })?;
                if (b.is_some() && pre.is_none()) || act != Activation::None {
                    let ys = SendPtr(y.offset(r0 * n * es).as_mut_ptr::<T>());
                    let b = b.as_deref().filter(|_| pre.is_none());
                    for_range(rows, (8192 / n).max(1), move |a0, a1| {
                        for r in a0..a1 {
                            let row = unsafe { std::slice::from_raw_parts_mut(ys.get().add(r * n), n) };
                            for (j, v) in row.iter_mut().enumerate() {
                                let bj = b.map_or(0.0, |b| b[j]);
                                *v = T::from_f32(act.apply_f32(v.to_f32() + bj));
                            }
                        }
                    });
                }
                r0 += rows;
            }
        });
        Ok(())
    }

    fn sum_rows(
        &self,
        _s: RawStream,
        dtype: DType,
        x: DevPtr,
        out: DevPtr,
        rows: usize,
        cols: usize,
    ) -> Result<()> {
        with_float_type!(dtype, "sum_rows", T => {
            let xs = SendPtr(x.as_mut_ptr::<T>());
            let os = SendPtr(out.as_mut_ptr::<T>());
            for_range(cols, 64, move |c0, c1| {
                let mut acc = vec![0f64; c1 - c0];
                for r in 0..rows {
                    let row = unsafe { std::slice::from_raw_parts(xs.get().add(r * cols + c0), c1 - c0) };
                    for (a, v) in acc.iter_mut().zip(row) {
                        *a += v.to_f32() as f64;
                    }
                }
                for (j, a) in acc.iter().enumerate() {
                    unsafe { *os.get().add(c0 + j) = T::from_f32(*a as f32) };
                }
            });
        });
        Ok(())
    }
}
