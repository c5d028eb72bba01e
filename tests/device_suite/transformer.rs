//! rope_cached (issue 17): rotary embedding from given cos/sin caches, rotate-half and
//! interleaved, partial rotary dims, position ids `[S]` and `[B, S]` (i32, i64) or none,
//! forward and backward against the float64 reference of `ops::nn` in every float dtype;
//! against the existing `rope` when the caches are built from the same base; the interleaved
//! form against the rotate-half form on de-interleaved features; the reference's backward
//! against finite differences; misuse answered with its ErrorKind and a message.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::ops::nn::{self as r, *};
use rocm_backend::runtime::prelude as e;
use rocm_backend::runtime::{DType, Tensor};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("rope_cached_fwd_bwd", rope_cached_fwd_bwd),
        ("rope_cached_matches_rope", rope_cached_matches_rope),
        (
            "rope_cached_interleaved_is_permuted",
            rope_cached_interleaved_is_permuted,
        ),
        (
            "rope_cached_finite_differences",
            rope_cached_finite_differences,
        ),
        ("rope_cached_misuse", rope_cached_misuse),
    ]
}

type Failed = libtest_mimic::Failed;

fn rounded(dt: DType, v: &[f64]) -> Vec<f64> {
    v.iter().map(|x| round_to(dt, *x)).collect()
}

fn expect_err<T>(r: rocm_backend::Result<T>, kind: ErrorKind, needle: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("expected {kind:?} mentioning '{needle}', got success").into()),
        Err(e) if e.kind == kind && e.message.contains(needle) => Ok(()),
        Err(e) => Err(format!(
            "expected {kind:?} mentioning '{needle}', got {:?}: {}",
            e.kind, e.message
        )
        .into()),
    }
}

/// cos/sin caches `[max_pos, half]` of the angles `p * base^(-2i/dim)` (dim = the feature
/// count the frequencies are spread over), as f64 values.
fn caches_f64(max_pos: usize, half: usize, dim: usize, base: f64) -> (Vec<f64>, Vec<f64>) {
    let mut c = Vec::with_capacity(max_pos * half);
    let mut s = Vec::with_capacity(max_pos * half);
    for p in 0..max_pos {
        for i in 0..half {
            let th = p as f64 * base.powf(-2.0 * i as f64 / dim as f64);
            c.push(th.cos());
            s.push(th.sin());
        }
    }
    (c, s)
}

/// The caches as tensors of `dt`, with the values the dtype holds.
#[allow(clippy::type_complexity)]
fn caches(
    dev: &Dev,
    max_pos: usize,
    half: usize,
    dim: usize,
    dt: DType,
) -> Result<(Tensor, Tensor, Vec<f64>, Vec<f64>), Failed> {
    let (c, s) = caches_f64(max_pos, half, dim, 10000.0);
    let ct = from_f64(dev, &c, &[max_pos, half], dt)?;
    let st = from_f64(dev, &s, &[max_pos, half], dt)?;
    let (cv, sv) = (values(&ct)?, values(&st)?);
    Ok((ct, st, cv, sv))
}

/// Which position ids a case passes.
#[derive(Clone, Copy, Debug)]
enum Pos {
    None,
    /// `[S]`, reversed and shifted: `max_pos - 1 - s`.
    Seq(DType),
    /// `[B, S]`: batch b starts at `3 b`.
    Batch(DType),
}

fn rope_cached_fwd_bwd(dev: &Dev) -> TestResult {
    // (shape, seq_dim, rotary dim, positions)
    let cases: &[(&[usize], i64, usize, Pos)] = &[
        (&[1, 2], 0, 2, Pos::None),
        (&[5, 8], 0, 8, Pos::Seq(DType::I64)),
        (&[2, 7, 3, 6], 1, 6, Pos::None),
        (&[2, 7, 3, 6], -3, 4, Pos::Batch(DType::I32)),
        (&[2, 3, 7, 10], -2, 6, Pos::Batch(DType::I64)),
        (&[2, 3, 7, 10], 2, 10, Pos::Seq(DType::I32)),
        (&[1, 33, 2, 130], -3, 64, Pos::None),
        (&[0, 3, 4], 1, 4, Pos::None),
    ];
    for dt in FLOATS {
        for (ci, &(shape, sd, rot, pos)) in cases.iter().enumerate() {
            let x = randn(dev, shape, dt, 1000 + ci as u64)?;
            let xv = values(&x)?;
            let nd = shape.len() as i64;
            let sdu = if sd < 0 {
                (sd + nd) as usize
            } else {
                sd as usize
            };
            let seq = shape[sdu];
            let max_pos = seq + 9;
            let (ct, st, cv, sv) = caches(dev, max_pos, rot / 2, rot, dt)?;
            let (pt, pv, pshape) = match pos {
                Pos::None => (None, None, None),
                Pos::Seq(pdt) => {
                    let v: Vec<f64> = (0..seq).map(|s| (max_pos - 1 - s) as f64).collect();
                    (
                        Some(from_f64(dev, &v, &[seq], pdt)?),
                        Some(v),
                        Some(vec![seq]),
                    )
                }
                Pos::Batch(pdt) => {
                    let b = shape[0];
                    let v: Vec<f64> = (0..b * seq)
                        .map(|i| (3 * (i / seq) + i % seq) as f64)
                        .collect();
                    (
                        Some(from_f64(dev, &v, &[b, seq], pdt)?),
                        Some(v),
                        Some(vec![b, seq]),
                    )
                }
            };
            for interleaved in [false, true] {
                for inverse in [false, true] {
                    let d = RopeCachedDesc::new(
                        "rope_cached",
                        shape,
                        &[max_pos, rot / 2],
                        &[max_pos, rot / 2],
                        pshape.as_deref(),
                        sd,
                        interleaved,
                        inverse,
                    )
                    .unwrap();
                    let out = poisoned(dev, shape, dt)?;
                    ok(e::rope_cached(
                        None,
                        &x,
                        &ct,
                        &st,
                        pt.as_ref(),
                        sd,
                        interleaved,
                        inverse,
                        Some(&out),
                    ))?;
                    let want = rounded(dt, &r::rope_cached_ref(&xv, &cv, &sv, pv.as_deref(), &d));
                    assert_close_dtype(
                        &format!(
                            "rope_cached {shape:?} sd={sd} rot={rot} {pos:?} interleaved={interleaved} inverse={inverse} {dt}"
                        ),
                        &values(&out)?,
                        &want,
                        dt,
                    )?;
                }
            }
        }
    }
    // The backward undoes the forward (f32, partial rotary dim, position ids).
    let x = randn(dev, &[2, 5, 3, 12], DType::F32, 7)?;
    let xv = values(&x)?;
    let (ct, st, _, _) = caches(dev, 20, 4, 8, DType::F32)?;
    let p = from_f64(dev, &[4.0, 9.0, 0.0, 19.0, 2.0], &[5], DType::I64)?;
    for interleaved in [false, true] {
        let y = ok(e::rope_cached(
            None,
            &x,
            &ct,
            &st,
            Some(&p),
            1,
            interleaved,
            false,
            None,
        ))?;
        let back = ok(e::rope_cached(
            None,
            &y,
            &ct,
            &st,
            Some(&p),
            1,
            interleaved,
            true,
            None,
        ))?;
        assert_close(
            &format!("rope_cached round trip interleaved={interleaved}"),
            &values(&back)?,
            &xv,
            1e-5,
            1e-5,
        )?;
    }
    Ok(())
}

/// Caches built from rope's base give rope's result: positions `0..S`, and `[S]` ids
/// `offset + s` against rope's position_offset; `[B, S]` ids with one offset per batch
/// against rope with that offset on each batch's slice.
fn rope_cached_matches_rope(dev: &Dev) -> TestResult {
    for dt in FLOATS {
        for (shape, sd) in [(&[2, 3, 7, 8][..], -2i64), (&[3, 6, 2, 16], 1)] {
            let nd = shape.len() as i64;
            let seq = shape[if sd < 0 {
                (sd + nd) as usize
            } else {
                sd as usize
            }];
            let dim = shape[shape.len() - 1];
            let x = randn(dev, shape, dt, 11)?;
            let (c, s) = caches_f64(64, dim / 2, dim, 10000.0);
            // f32 caches rounded to dt, as a framework would hold them.
            let ct = from_f64(dev, &c, &[64, dim / 2], dt)?;
            let st = from_f64(dev, &s, &[64, dim / 2], dt)?;
            let what = format!("rope_cached = rope {shape:?} {dt}");
            // Caches rounded to f16/bf16 are a coarser rotation: compare at a looser tolerance.
            let tol = if dt == DType::F32 { 1e-5 } else { 2e-2 };
            for inverse in [false, true] {
                let want = values(&ok(e::rope(None, &x, sd, 10000.0, 0, inverse, None))?)?;
                let got = values(&ok(e::rope_cached(
                    None, &x, &ct, &st, None, sd, false, inverse, None,
                ))?)?;
                assert_close(&format!("{what} inverse={inverse}"), &got, &want, tol, tol)?;
            }
            let off = 13;
            let ids: Vec<f64> = (0..seq).map(|s| (off + s) as f64).collect();
            let p = from_f64(dev, &ids, &[seq], DType::I64)?;
            let want = values(&ok(e::rope(
                None, &x, sd, 10000.0, off as i64, false, None,
            ))?)?;
            let got = values(&ok(e::rope_cached(
                None,
                &x,
                &ct,
                &st,
                Some(&p),
                sd,
                false,
                false,
                None,
            ))?)?;
            assert_close(&format!("{what} offset {off}"), &got, &want, tol, tol)?;
            // [B, S]: batch b at offset 5 b; each batch slice against rope with that offset.
            let b = shape[0];
            let ids: Vec<f64> = (0..b * seq)
                .map(|i| (5 * (i / seq) + i % seq) as f64)
                .collect();
            let p = from_f64(dev, &ids, &[b, seq], DType::I32)?;
            let got = values(&ok(e::rope_cached(
                None,
                &x,
                &ct,
                &st,
                Some(&p),
                sd,
                false,
                false,
                None,
            ))?)?;
            let per = x.numel() / b;
            for bi in 0..b {
                let want = values(&ok(e::rope(
                    None,
                    &x,
                    sd,
                    10000.0,
                    5 * bi as i64,
                    false,
                    None,
                ))?)?;
                assert_close(
                    &format!("{what} batch {bi}"),
                    &got[bi * per..(bi + 1) * per],
                    &want[bi * per..(bi + 1) * per],
                    tol,
                    tol,
                )?;
            }
        }
    }
    Ok(())
}

/// The interleaved form is the rotate-half form on features reordered to
/// `[x0, x2, .., x(R-2), x1, x3, .., x(R-1), pass-through]` and back (ONNX's definition).
fn rope_cached_interleaved_is_permuted(dev: &Dev) -> TestResult {
    let shape = [2usize, 5, 3, 10];
    let (rot, dim, max_pos) = (6usize, 10usize, 8usize);
    let x = randn(dev, &shape, DType::F32, 21)?;
    let xv = values(&x)?;
    let (ct, st, _, _) = caches(dev, max_pos, rot / 2, rot, DType::F32)?;
    // perm[j] = the original feature at position j of the de-interleaved vector.
    let mut perm: Vec<usize> = (0..rot / 2).map(|i| 2 * i).collect();
    perm.extend((0..rot / 2).map(|i| 2 * i + 1));
    perm.extend(rot..dim);
    let vecs = xv.len() / dim;
    let mut xp = vec![0.0; xv.len()];
    for v in 0..vecs {
        for (j, &f) in perm.iter().enumerate() {
            xp[v * dim + j] = xv[v * dim + f];
        }
    }
    let xpt = from_f64(dev, &xp, &shape, DType::F32)?;
    let half = values(&ok(e::rope_cached(
        None, &xpt, &ct, &st, None, 1, false, false, None,
    ))?)?;
    let inter = values(&ok(e::rope_cached(
        None, &x, &ct, &st, None, 1, true, false, None,
    ))?)?;
    let mut want = vec![0.0; xv.len()];
    for v in 0..vecs {
        for (j, &f) in perm.iter().enumerate() {
            want[v * dim + f] = half[v * dim + j];
        }
    }
    assert_close(
        "interleaved = permuted rotate-half",
        &inter,
        &want,
        1e-6,
        1e-6,
    )
}

/// The reference backward (inverse rotation) against central differences of the forward.
fn rope_cached_finite_differences(dev: &Dev) -> TestResult {
    let _ = dev;
    let shape = [2usize, 3, 2, 6];
    let (c, s) = caches_f64(7, 2, 4, 10000.0);
    let ids = [6.0, 0.0, 3.0, 1.0, 5.0, 2.0];
    let x: Vec<f64> = (0..72)
        .map(|i| ((i * 37 % 17) as f64 - 8.0) / 5.0)
        .collect();
    let rr: Vec<f64> = (0..72)
        .map(|i| ((i * 29 % 13) as f64 - 6.0) / 4.0)
        .collect();
    for interleaved in [false, true] {
        let d = RopeCachedDesc::new(
            "rope_cached",
            &shape,
            &[7, 2],
            &[7, 2],
            Some(&[2, 3]),
            1,
            interleaved,
            false,
        )
        .unwrap();
        let di = RopeCachedDesc { inverse: true, ..d };
        let analytic = r::rope_cached_ref(&rr, &c, &s, Some(&ids), &di);
        let h = 1e-5;
        let mut q = x.clone();
        let mut num = vec![0.0; x.len()];
        let dotf = |p: &[f64]| -> f64 {
            r::rope_cached_ref(p, &c, &s, Some(&ids), &d)
                .iter()
                .zip(&rr)
                .map(|(a, b)| a * b)
                .sum()
        };
        for i in 0..x.len() {
            q[i] = x[i] + h;
            let a = dotf(&q);
            q[i] = x[i] - h;
            let b = dotf(&q);
            q[i] = x[i];
            num[i] = (a - b) / (2.0 * h);
        }
        assert_close(
            &format!("rope_cached interleaved={interleaved} vs finite differences"),
            &analytic,
            &num,
            1e-6,
            1e-6,
        )?;
    }
    Ok(())
}

fn rope_cached_misuse(dev: &Dev) -> TestResult {
    use ErrorKind::*;
    let f = |shape: &[usize]| randn(dev, shape, DType::F32, 1);
    let x = f(&[2, 5, 8])?;
    let (c, s) = (f(&[5, 4])?, f(&[5, 4])?);
    // Caches shorter than the sequence (no ids), forward and backward.
    let short = f(&[4, 4])?;
    for inverse in [false, true] {
        let name = if inverse {
            "rope_cached_backward"
        } else {
            "rope_cached"
        };
        expect_err(
            e::rope_cached(None, &x, &short, &short, None, 1, false, inverse, None),
            InvalidArgument,
            &format!("{name}: the sequence has 5 positions"),
        )?;
        // Ids outside the caches: past the end and negative, i32 and i64, each path.
        for pdt in [DType::I32, DType::I64] {
            for (bad, at) in [(5.0, 3usize), (-1.0, 0)] {
                let mut ids = vec![0.0, 1.0, 2.0, 3.0, 4.0];
                ids[at] = bad;
                let p = from_f64(dev, &ids, &[5], pdt)?;
                expect_err(
                    e::rope_cached(None, &x, &c, &s, Some(&p), 1, true, inverse, None),
                    InvalidArgument,
                    &format!("{name}: position id {bad} at index {at}"),
                )?;
                let mut ids2 = vec![0.0; 10];
                ids2[5 + at] = bad;
                let p2 = from_f64(dev, &ids2, &[2, 5], pdt)?;
                expect_err(
                    e::rope_cached(None, &x, &c, &s, Some(&p2), -2, false, inverse, None),
                    InvalidArgument,
                    &format!("{name}: position id {bad} at index {}", 5 + at),
                )?;
            }
        }
    }
    // Shapes: a rotary dim above D, caches not 2-D or different, ids of another shape.
    expect_err(
        e::rope_cached(
            None,
            &x,
            &f(&[5, 5])?,
            &f(&[5, 5])?,
            None,
            1,
            false,
            false,
            None,
        ),
        ShapeMismatch,
        "rope_cached: cos/sin",
    )?;
    expect_err(
        e::rope_cached(
            None,
            &x,
            &f(&[5, 0])?,
            &f(&[5, 0])?,
            None,
            1,
            false,
            false,
            None,
        ),
        ShapeMismatch,
        "rope_cached: cos/sin",
    )?;
    expect_err(
        e::rope_cached(
            None,
            &x,
            &f(&[5, 4, 1])?,
            &f(&[5, 4, 1])?,
            None,
            1,
            false,
            false,
            None,
        ),
        ShapeMismatch,
        "rope_cached: cos",
    )?;
    expect_err(
        e::rope_cached(None, &x, &c, &f(&[6, 4])?, None, 1, false, false, None),
        ShapeMismatch,
        "rope_cached: sin",
    )?;
    let ids = from_f64(dev, &[0.0; 6], &[6], DType::I64)?;
    expect_err(
        e::rope_cached(None, &x, &c, &s, Some(&ids), 1, false, false, None),
        ShapeMismatch,
        "rope_cached: position_ids",
    )?;
    let ids = from_f64(dev, &[0.0; 10], &[5, 2], DType::I64)?;
    expect_err(
        e::rope_cached(None, &x, &c, &s, Some(&ids), 1, false, false, None),
        ShapeMismatch,
        "rope_cached: position_ids",
    )?;
    // [B, S] ids need a batch dim before the sequence.
    let ids = from_f64(dev, &[0.0; 10], &[2, 5], DType::I64)?;
    let xs = f(&[5, 2, 8])?;
    expect_err(
        e::rope_cached(None, &xs, &c, &s, Some(&ids), 0, false, false, None),
        ShapeMismatch,
        "rope_cached: position_ids",
    )?;
    // Dtypes.
    expect_err(
        e::rope_cached(
            None,
            &x,
            &randn(dev, &[5, 4], DType::F16, 1)?,
            &s,
            None,
            1,
            false,
            false,
            None,
        ),
        DtypeMismatch,
        "rope_cached: cos",
    )?;
    expect_err(
        e::rope_cached(None, &x, &c, &s, Some(&f(&[5])?), 1, false, false, None),
        DtypeMismatch,
        "rope_cached: position_ids",
    )?;
    // seq_dim: the feature dim, out of range; rank 1.
    expect_err(
        e::rope_cached(None, &x, &c, &s, None, -1, false, false, None),
        InvalidArgument,
        "rope_cached: seq_dim",
    )?;
    expect_err(
        e::rope_cached(None, &x, &c, &s, None, 3, false, false, None),
        InvalidArgument,
        "rope_cached",
    )?;
    expect_err(
        e::rope_cached(None, &f(&[8])?, &c, &s, None, 0, false, false, None),
        ShapeMismatch,
        "rope_cached",
    )?;
    Ok(())
}
