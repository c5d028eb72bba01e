//! The first slice of ops on every device: random fills, add with broadcasting, relu,
//! matmul and raw GEMM, each against the float64 reference.

use crate::common::*;
use rocm_backend::ops::elementwise::{BinaryOp, UnaryOp};
use rocm_backend::ops::{matmul, random};
use rocm_backend::runtime::{DType, Tensor, blas, elementwise};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("randn_matches_counter_rng", randn_matches_counter_rng),
        ("randint_in_range", randint_in_range),
        ("add_broadcasting", add_broadcasting),
        ("add_integers", add_integers),
        ("relu_all_float_dtypes", relu_all_float_dtypes),
        ("matmul_shapes", matmul_shapes),
        ("gemm_blas_conventions", gemm_blas_conventions),
        ("gemm_skinny_shapes", gemm_skinny_shapes),
        ("gemm_deep_small_products", gemm_deep_small_products),
        ("out_tensor_is_checked", out_tensor_is_checked),
    ]
}

fn randn_matches_counter_rng(dev: &Dev) -> TestResult {
    let t = randn(dev, &[3, 1001], DType::F32, 42)?;
    let want: Vec<f64> = (0..3003)
        .map(|i| random::normal_f32(42, i) as f64)
        .collect();
    assert_close("randn", &values(&t)?, &want, 1e-6, 1e-6)
}

fn randint_in_range(dev: &Dev) -> TestResult {
    for dt in [DType::I32, DType::I64] {
        let t = ok(Tensor::randint(dev.clone(), &[1000], dt, -3, 9, 5))?;
        let v = values(&t)?;
        ensure(
            v.iter().all(|x| (-3.0..9.0).contains(x)),
            "randint out of range",
        )?;
        ensure(v.contains(&-3.0) && v.contains(&8.0), "randint misses ends")?;
    }
    Ok(())
}

fn add_broadcasting(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[1], &[1]),
        (&[1000], &[1000]),
        (&[3, 1, 5], &[4, 1]),
        (&[2, 3, 4], &[4]),
        (&[], &[7, 3]),
        (&[0, 3], &[3]),
        (&[257, 33], &[257, 1]),
    ];
    for dt in FLOATS {
        for (i, (sa, sb)) in cases.iter().enumerate() {
            let a = randn(dev, sa, dt, 1 + i as u64)?;
            let b = randn(dev, sb, dt, 100 + i as u64)?;
            let (shape, _) = ok(rocm_backend::base::shape::BroadcastLayout::new(&[sa, sb]))?;
            let out = poisoned(dev, &shape, dt)?;
            ok(elementwise::binary(None, BinaryOp::Add, &a, &b, Some(&out)))?;
            let (va, vb) = (values(&a)?, values(&b)?);
            let sa_s = rocm_backend::base::shape::broadcast_strides(sa, &shape);
            let sb_s = rocm_backend::base::shape::broadcast_strides(sb, &shape);
            let n: usize = shape.iter().product();
            let want: Vec<f64> = (0..n)
                .map(|lin| {
                    let (mut oa, mut ob, mut rem) = (0, 0, lin);
                    for d in (0..shape.len()).rev() {
                        let k = rem % shape[d];
                        rem /= shape[d];
                        oa += k * sa_s[d];
                        ob += k * sb_s[d];
                    }
                    round_to(dt, va[oa] + vb[ob])
                })
                .collect();
            assert_close_dtype(
                &format!("add {sa:?}+{sb:?} {dt}"),
                &values(&out)?,
                &want,
                dt,
            )?;
        }
    }
    Ok(())
}

fn add_integers(dev: &Dev) -> TestResult {
    for dt in [DType::I32, DType::I64] {
        let a = ok(Tensor::randint(dev.clone(), &[5, 7], dt, -100, 100, 1))?;
        let b = ok(Tensor::randint(dev.clone(), &[7], dt, -100, 100, 2))?;
        let o = ok(elementwise::binary(None, BinaryOp::Add, &a, &b, None))?;
        let (va, vb, vo) = (values(&a)?, values(&b)?, values(&o)?);
        let want: Vec<f64> = (0..35).map(|i| va[i] + vb[i % 7]).collect();
        assert_close("int add", &vo, &want, 0.0, 0.0)?;
    }
    Ok(())
}

fn relu_all_float_dtypes(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for n in [1usize, 17, 4099] {
            let x = randn(dev, &[n], dt, n as u64)?;
            let out = poisoned(dev, &[n], dt)?;
            ok(elementwise::unary(None, UnaryOp::Relu, &x, Some(&out)))?;
            let want: Vec<f64> = values(&x)?.iter().map(|v| v.max(0.0)).collect();
            assert_close_dtype("relu", &values(&out)?, &want, dt)?;
        }
    }
    Ok(())
}

fn matmul_shapes(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[usize])] = &[
        (&[3, 4], &[4, 5]),
        (&[1, 1], &[1, 1]),
        (&[4], &[4, 5]),
        (&[3, 4], &[4]),
        (&[4], &[4]),
        (&[2, 33, 17], &[2, 17, 65]),
        (&[2, 1, 3, 4], &[5, 4, 6]),
        (&[7, 0], &[0, 3]),
    ];
    for dt in FLOATS {
        for (i, (sa, sb)) in cases.iter().enumerate() {
            let a = randn(dev, sa, dt, 10 + i as u64)?;
            let b = randn(dev, sb, dt, 20 + i as u64)?;
            let p = ok(matmul::plan(sa, sb))?;
            let out = poisoned(dev, &p.out_shape, dt)?;
            ok(blas::matmul(None, &a, &b, Some(&out)))?;
            let (va, vb) = (values(&a)?, values(&b)?);
            // Reference: loop over the broadcast batch with explicit index arithmetic.
            let nb: usize = p.batch.iter().product();
            let (m, k, n) = (p.m, p.k, p.n);
            let bs =
                |shape: &[usize]| rocm_backend::base::shape::broadcast_strides(shape, &p.batch);
            let (sa_b, sb_b) = (bs(&p.a_batch), bs(&p.b_batch));
            let mut want = Vec::new();
            for bi in 0..nb {
                let (mut oa, mut ob, mut rem) = (0, 0, bi);
                for d in (0..p.batch.len()).rev() {
                    let idx = rem % p.batch[d];
                    rem /= p.batch[d];
                    oa += idx * sa_b[d];
                    ob += idx * sb_b[d];
                }
                let am = &va[oa * m * k..(oa + 1) * m * k];
                let bm = &vb[ob * k * n..(ob + 1) * k * n];
                want.extend(
                    matmul::reference_2d(am, bm, m, k, n)
                        .into_iter()
                        .map(|v| round_to(dt, v)),
                );
            }
            let tol = if dt == DType::F32 { 1e-4 } else { 2e-2 };
            assert_close(
                &format!("matmul {sa:?}@{sb:?} {dt}"),
                &values(&out)?,
                &want,
                tol,
                tol,
            )?;
        }
    }
    Ok(())
}

/// One column-major GEMM on `dev`, `C (m×n) = alpha·op(A)·op(B) + beta·C`, against the f64
/// reference: A and B random with their leading dimensions padded by `pad` (lda, ldb, ldc),
/// C random, or NaN-poisoned when beta is 0 (it must not be read). C's padding rows must be
/// left as they were. Returns C's m×n part and the reference, column by column.
#[allow(clippy::too_many_arguments)]
fn gemm_against_reference(
    dev: &Dev,
    (m, n, k): (usize, usize, usize),
    (ta, tb): (bool, bool),
    (alpha, beta): (f32, f32),
    pad: [usize; 3],
    seed: u64,
) -> Result<(Vec<f64>, Vec<f64>), libtest_mimic::Failed> {
    let (ar, ac) = if ta { (k, m) } else { (m, k) };
    let (br, bc) = if tb { (n, k) } else { (k, n) };
    let (lda, ldb, ldc) = (ar + pad[0], br + pad[1], m + pad[2]);
    let a = randn(dev, &[lda * ac], DType::F32, seed)?;
    let b = randn(dev, &[ldb * bc], DType::F32, seed + 1)?;
    let c = if beta == 0.0 {
        poisoned(dev, &[ldc * n], DType::F32)?
    } else {
        randn(dev, &[ldc * n], DType::F32, seed + 2)?
    };
    let (va, vb, vc) = (values(&a)?, values(&b)?, values(&c)?);
    let desc = raw_gemm_desc(
        DType::F32,
        (m, n, k),
        (ta, tb),
        (alpha, beta),
        (&a, lda),
        (&b, ldb),
        (&c, ldc),
    );
    ok(dev.gemm(Default::default(), &desc))?;
    ok(dev.synchronize())?;
    let got = values(&c)?;
    let (mut g, mut w) = (Vec::new(), Vec::new());
    for j in 0..n {
        for i in 0..m {
            let s = gemm_ref_at((&va, lda, ta), (&vb, ldb, tb), k, i, j);
            let old = if beta == 0.0 { 0.0 } else { vc[i + j * ldc] };
            g.push(got[i + j * ldc]);
            w.push(alpha as f64 * s + beta as f64 * old);
        }
        for i in m..ldc {
            let at = i + j * ldc;
            ensure(
                got[at].to_bits() == vc[at].to_bits(),
                format!("gemm {m}x{n}x{k} wrote C's padding row {i}"),
            )?;
        }
    }
    Ok((g, w))
}

fn gemm_blas_conventions(dev: &Dev) -> TestResult {
    // Column-major C(m×n) = alpha·op(A)·op(B) + beta·C with padded leading dimensions.
    for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
        let (got, want) =
            gemm_against_reference(dev, (5, 7, 3), (ta, tb), (1.5, -0.5), [2, 1, 3], 1)?;
        assert_close(&format!("gemm ta={ta} tb={tb}"), &got, &want, 1e-5, 1e-5)?;
    }
    Ok(())
}

/// Small f32 products of every transpose combination and of long k (GPUs run these in one
/// launch, `rb_gemm_small_f32`: 16 x 16 tiles, up to eight warps over k in 32-deep chunks,
/// the next chunk loaded while one is multiplied): k of one partial chunk, of exactly one
/// chunk per warp, of several chunks per warp with a partial last one, and the longest k of
/// the path; m and n off the tile edge; padded leading dimensions; alpha/beta, and beta = 0
/// over a NaN-poisoned C (C must not be read), against the f64 reference.
fn gemm_deep_small_products(dev: &Dev) -> TestResult {
    let cases: [(usize, usize, usize); 6] = [
        (33, 17, 5),
        (16, 16, 256),
        (70, 9, 1000),
        (1, 300, 257),
        (17, 40, 8192),
        (40, 33, 784),
    ];
    for (ci, &(m, n, k)) in cases.iter().enumerate() {
        for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
            for (alpha, beta) in [(1.0f32, 0.0f32), (0.5, 2.0)] {
                let seed = 100 + 10 * ci as u64;
                let (got, want) = gemm_against_reference(
                    dev,
                    (m, n, k),
                    (ta, tb),
                    (alpha, beta),
                    [1, 3, 2],
                    seed,
                )?;
                // k products of N(0,1) values: sums of size ~sqrt(k), each addition off by
                // up to half an ulp of it, over k additions in any order (random-walk bound
                // ~ eps * k, eps = 6e-8, times a margin).
                let tol = 1e-7 * (k as f64).max(64.0);
                assert_close(
                    &format!("gemm {m}x{n}x{k} ta={ta} tb={tb} alpha={alpha} beta={beta}"),
                    &got,
                    &want,
                    tol,
                    tol,
                )?;
            }
        }
    }
    Ok(())
}

/// Skinny column-major GEMMs (`n <= 64`, B not transposed, A as is or transposed: a dense
/// layer at a small batch, weights `[in, out]` or `[out, in]`), which the CPU runs with its
/// own register-blocked kernels: row counts around the 48-row
/// block edge and last blocks of 1, 2 and 3 vectors (full and masked), column counts around the 8-column block edge, padded leading dimensions,
/// alpha/beta, and beta = 0 over a NaN-poisoned C (C must not be read).
fn gemm_skinny_shapes(dev: &Dev) -> TestResult {
    let cases: [(usize, usize, usize); 11] = [
        (32, 1, 5),
        (24, 5, 11),
        (8, 4, 3),
        (47, 7, 13),
        (48, 8, 300),
        (49, 9, 64),
        (100, 16, 1),
        (256, 32, 784),
        (130, 64, 40),
        (10, 32, 128),
        (96, 65, 17),
    ];
    for (ci, &(m, n, k)) in cases.iter().enumerate() {
        // op(A) is m×k: A is m×k (as is) or k×m (transposed: PyTorch's linear weights).
        for (ta, alpha, beta) in [
            (false, 1.0f32, 0.0f32),
            (false, 0.75, -1.25),
            (true, 1.0, 0.0),
            (true, 0.75, -1.25),
        ] {
            let seed = 10 + 3 * ci as u64;
            let (got, want) = gemm_against_reference(
                dev,
                (m, n, k),
                (ta, false),
                (alpha, beta),
                [3, 1, 2],
                seed,
            )?;
            assert_close(
                &format!("skinny gemm ta={ta} {m}x{n}x{k} alpha={alpha} beta={beta}"),
                &got,
                &want,
                1e-4,
                1e-4,
            )?;
        }
    }
    Ok(())
}

fn out_tensor_is_checked(dev: &Dev) -> TestResult {
    let a = randn(dev, &[2, 3], DType::F32, 1)?;
    let wrong_shape = poisoned(dev, &[3, 2], DType::F32)?;
    let e = elementwise::binary(None, BinaryOp::Add, &a, &a, Some(&wrong_shape)).unwrap_err();
    ensure(
        e.kind == rocm_backend::ErrorKind::ShapeMismatch,
        format!("{e:?}"),
    )?;
    let wrong_dtype = poisoned(dev, &[2, 3], DType::F16)?;
    let e = elementwise::binary(None, BinaryOp::Add, &a, &a, Some(&wrong_dtype)).unwrap_err();
    ensure(
        e.kind == rocm_backend::ErrorKind::DtypeMismatch,
        format!("{e:?}"),
    )?;
    Ok(())
}
