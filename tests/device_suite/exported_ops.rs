//! The data ops of exported models (pad, index_select, expand, tile, flatten, cumsum, trilu,
//! scatter_add, one_hot) and their backwards against float64 references: each op is a
//! linear map given per output element as (input element, coefficient) terms, so the
//! forward sums the terms and the backward is the same map transposed.

use crate::common::*;
use rocm_backend::ErrorKind;
use rocm_backend::runtime::{DType, Tensor, data, norm, pool};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("pad_modes_and_backward", pad_modes_and_backward),
        (
            "expand_tile_flatten_and_backward",
            expand_tile_flatten_and_backward,
        ),
        (
            "cumsum_and_trilu_and_backward",
            cumsum_and_trilu_and_backward,
        ),
        (
            "index_select_scatter_add_one_hot",
            index_select_scatter_add_one_hot,
        ),
        (
            "local_response_norm_and_backward",
            local_response_norm_and_backward,
        ),
        ("max_unpool_and_backward", max_unpool_and_backward),
        ("index_copy_and_backward", index_copy_and_backward),
        ("interpolate_and_backward", interpolate_and_backward),
    ]
}

/// Per output element, its (input element, coefficient) terms; an element with no term is
/// `fill` (a constant pad) in the forward.
type Map = Vec<Vec<(usize, f64)>>;

fn unravel(mut lin: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = lin % shape[d].max(1);
        lin /= shape[d].max(1);
    }
    idx
}

fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(shape).fold(0, |a, (&i, &n)| a * n + i)
}

/// The map of an op that copies: `src(out_index)` names the input element or None.
fn copy_map(out: &[usize], x: &[usize], src: impl Fn(&[usize]) -> Option<Vec<usize>>) -> Map {
    let n: usize = out.iter().product();
    (0..n)
        .map(|e| match src(&unravel(e, out)) {
            Some(i) => vec![(ravel(&i, x), 1.0)],
            None => vec![],
        })
        .collect()
}

fn forward(map: &Map, x: &[f64], fill: f64) -> Vec<f64> {
    map.iter()
        .map(|t| {
            if t.is_empty() {
                fill
            } else {
                t.iter().map(|&(i, c)| c * x[i]).sum()
            }
        })
        .collect()
}

fn backward(map: &Map, dy: &[f64], n_in: usize) -> Vec<f64> {
    let mut dx = vec![0.0; n_in];
    for (t, &g) in map.iter().zip(dy) {
        for &(i, c) in t {
            dx[i] += c * g;
        }
    }
    dx
}

/// Checks an op's forward (every dtype in `dts`) and, for floats, its backward against `map`.
#[allow(clippy::too_many_arguments)]
fn check_map(
    dev: &Dev,
    what: &str,
    x_shape: &[usize],
    out_shape: &[usize],
    map: &Map,
    fill: f64,
    dts: &[DType],
    fwd: &dyn Fn(&Tensor, Option<&Tensor>) -> rocm_backend::Result<Tensor>,
    bwd: &dyn Fn(&Tensor) -> rocm_backend::Result<Tensor>,
) -> TestResult {
    for (k, &dt) in dts.iter().enumerate() {
        let x = if dt.is_float() {
            randn(dev, x_shape, dt, 40 + k as u64)?
        } else {
            let n: usize = x_shape.iter().product();
            let v: Vec<f64> = (0..n).map(|i| ((i * 7) % 23) as f64 - 11.0).collect();
            from_f64(dev, &v, x_shape, dt)?
        };
        let vx = values(&x)?;
        let out = poisoned(dev, out_shape, dt)?;
        let got = ok(fwd(&x, Some(&out)))?;
        ensure(
            got.shape() == out_shape,
            format!("{what} {dt}: shape {:?}", got.shape()),
        )?;
        let want: Vec<f64> = forward(map, &vx, fill)
            .iter()
            .map(|&v| round_to(dt, v))
            .collect();
        assert_close_dtype(&format!("{what} {dt}"), &values(&out)?, &want, dt)?;
        if dt.is_float() {
            let dy = randn(dev, out_shape, dt, 90 + k as u64)?;
            let dx = ok(bwd(&dy))?;
            ensure(
                dx.shape() == x_shape,
                format!("{what} {dt} backward: shape {:?}", dx.shape()),
            )?;
            let want = backward(map, &values(&dy)?, vx.len());
            // Sums of several rounded gradients.
            let tol = if dt == DType::F32 { 1e-5 } else { 2e-2 };
            assert_close(
                &format!("{what} {dt} backward"),
                &values(&dx)?,
                &want,
                tol,
                tol,
            )?;
        }
    }
    Ok(())
}

const DTS: [DType; 5] = [DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64];

fn pad_modes_and_backward(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[i64], i64)] = &[
        (&[2, 3, 5], &[1, 2], 0),
        (&[2, 3, 5], &[1, 2], 1),
        (&[2, 3, 5], &[1, 2], 2),
        (&[2, 3, 5], &[4, 0, 2, 1], 1),
        (&[2, 3, 5], &[3, 1, 2, 2], 2),
        (&[2, 3, 5], &[0, -2, 2, 1], 0),
        (&[2, 3, 5], &[-1, -1, 0, 0, 1, 1], 0),
        (&[1, 2, 4, 6], &[2, 3, 1, 2, 1, 0], 1),
        (&[1, 2, 4, 6], &[2, 3, 3, 0, 0, 1], 2),
        (&[3, 70], &[5, 69], 1),
        (&[0, 4], &[1, 1], 0),
        (&[2, 4], &[], 0),
    ];
    for &(shape, pads, mode) in cases {
        let nd = shape.len();
        let mut out = shape.to_vec();
        let mut lr = vec![(0i64, 0i64); nd];
        for k in 0..pads.len() / 2 {
            let d = nd - 1 - k;
            lr[d] = (pads[2 * k], pads[2 * k + 1]);
            out[d] = (shape[d] as i64 + lr[d].0 + lr[d].1) as usize;
        }
        let map = copy_map(&out, shape, |o| {
            let mut src = vec![0usize; nd];
            for d in 0..nd {
                let n = shape[d] as i64;
                let i = o[d] as i64 - lr[d].0;
                let j = match mode {
                    0 if i < 0 || i >= n => return None,
                    1 if i < 0 => -i,
                    1 if i >= n => 2 * (n - 1) - i,
                    2 => i.clamp(0, n - 1),
                    _ => i,
                };
                src[d] = j as usize;
            }
            Some(src)
        });
        let value = -3.0;
        let what = format!("pad {shape:?} {pads:?} mode {mode}");
        let fwd = |x: &Tensor, o: Option<&Tensor>| data::pad(None, x, pads, mode, value, o);
        let bwd = |dy: &Tensor| data::pad_backward(None, dy, shape, pads, mode, None);
        let fill = if mode == 0 { value } else { 0.0 };
        check_map(dev, &what, shape, &out, &map, fill, &DTS, &fwd, &bwd)?;
    }
    // Misuse: an odd pad count, reflect as wide as the dimension, negative reflect pads,
    // a mode that is none, a crop past the extent.
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    for (pads, mode, kind) in [
        (&[1][..], 0, ErrorKind::InvalidArgument),
        (&[3, 0], 1, ErrorKind::InvalidArgument),
        (&[-1, 0], 1, ErrorKind::InvalidArgument),
        (&[1, 1], 5, ErrorKind::InvalidArgument),
        (&[-2, -2], 0, ErrorKind::ShapeMismatch),
        (&[1, 1, 1, 1, 1, 1], 0, ErrorKind::InvalidArgument),
    ] {
        let e = data::pad(None, &x, pads, mode, 0.0, None).unwrap_err();
        ensure(
            e.kind == kind && e.message.starts_with("pad:"),
            format!("pad {pads:?} mode {mode}: {e:?}"),
        )?;
    }
    Ok(())
}

fn expand_tile_flatten_and_backward(dev: &Dev) -> TestResult {
    let cases: &[(&[usize], &[i64])] = &[
        (&[3, 1], &[2, 3, 4]),
        (&[1, 4, 1], &[-1, 4, 5]),
        (&[], &[3, 2]),
        (&[2, 3], &[2, 3]),
        (&[1], &[0]),
    ];
    for &(shape, target) in cases {
        let out: Vec<usize> = target
            .iter()
            .enumerate()
            .map(|(k, &t)| {
                let lead = target.len() - shape.len();
                if t < 0 { shape[k - lead] } else { t as usize }
            })
            .collect();
        let lead = out.len() - shape.len();
        let map = copy_map(&out, shape, |o| {
            Some(
                (0..shape.len())
                    .map(|d| if shape[d] == 1 { 0 } else { o[d + lead] })
                    .collect(),
            )
        });
        let what = format!("expand {shape:?} to {target:?}");
        let fwd = |x: &Tensor, o: Option<&Tensor>| data::expand(None, x, target, o);
        let bwd = |dy: &Tensor| data::expand_backward(None, dy, shape, None);
        check_map(dev, &what, shape, &out, &map, 0.0, &DTS, &fwd, &bwd)?;
    }
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    expect_kind(
        data::expand(None, &x, &[4, 3], None),
        ErrorKind::ShapeMismatch,
        "expand",
    )?;
    let tiles: &[(&[usize], &[i64])] = &[
        (&[2, 3], &[2, 3]),
        (&[2, 3], &[3, 1, 2]),
        (&[4], &[1]),
        (&[2, 1, 3], &[1, 5, 0]),
        (&[5, 7], &[2, 2]),
    ];
    for &(shape, reps) in tiles {
        let lead = reps.len() - shape.len();
        let out: Vec<usize> = (0..reps.len())
            .map(|k| reps[k] as usize * if k < lead { 1 } else { shape[k - lead] })
            .collect();
        let map = copy_map(&out, shape, |o| {
            Some((0..shape.len()).map(|d| o[d + lead] % shape[d]).collect())
        });
        let what = format!("tile {shape:?} by {reps:?}");
        let fwd = |x: &Tensor, o: Option<&Tensor>| data::tile(None, x, reps, o);
        let bwd = |dy: &Tensor| data::tile_backward(None, dy, shape, reps, None);
        check_map(dev, &what, shape, &out, &map, 0.0, &DTS, &fwd, &bwd)?;
    }
    expect_kind(
        data::tile(None, &x, &[2], None),
        ErrorKind::ShapeMismatch,
        "tile",
    )?;
    // flatten: a copy in the same order.
    for (shape, a, b, want) in [
        (&[2, 3, 4][..], 0, -1, &[24][..]),
        (&[2, 3, 4], 1, 2, &[2, 12]),
        (&[2, 3, 4, 5], 1, -2, &[2, 12, 5]),
        (&[], 0, -1, &[1]),
    ] {
        let x = randn(dev, shape, DType::BF16, 3)?;
        let y = ok(data::flatten(None, &x, a, b, None))?;
        ensure(
            y.shape() == want,
            format!("flatten {shape:?} {a} {b}: {:?}", y.shape()),
        )?;
        assert_close("flatten", &values(&y)?, &values(&x)?, 0.0, 0.0)?;
    }
    expect_kind(
        data::flatten(None, &x, 1, 0, None),
        ErrorKind::InvalidArgument,
        "flatten",
    )?;
    Ok(())
}

fn expect_kind<T>(r: rocm_backend::Result<T>, kind: ErrorKind, op: &str) -> TestResult {
    match r {
        Ok(_) => Err(format!("{op}: expected {kind:?}, got success").into()),
        Err(e) => ensure(
            e.kind == kind && e.message.contains(op),
            format!(
                "{op}: expected {kind:?} naming the op, got {:?}: {}",
                e.kind, e.message
            ),
        ),
    }
}

fn cumsum_and_trilu_and_backward(dev: &Dev) -> TestResult {
    let floats = [DType::F32, DType::F16, DType::BF16];
    for (shape, dim) in [
        (&[4, 37][..], 1i64),
        (&[4, 37], 0),
        (&[2, 3, 5], -2),
        (&[300], 0),
        (&[], 0),
    ] {
        let nd = shape.len();
        let d = if nd == 0 {
            0
        } else {
            (dim.rem_euclid(nd as i64)) as usize
        };
        for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)] {
            let n: usize = shape.iter().product();
            let map: Map = (0..n)
                .map(|e| {
                    let o = unravel(e, shape);
                    if nd == 0 {
                        return if exclusive { vec![] } else { vec![(0, 1.0)] };
                    }
                    (0..shape[d])
                        .filter(|&i| match (reverse, exclusive) {
                            (false, false) => i <= o[d],
                            (false, true) => i < o[d],
                            (true, false) => i >= o[d],
                            (true, true) => i > o[d],
                        })
                        .map(|i| {
                            let mut s = o.clone();
                            s[d] = i;
                            (ravel(&s, shape), 1.0)
                        })
                        .collect()
                })
                .collect();
            let what = format!("cumsum {shape:?} dim {dim} excl {exclusive} rev {reverse}");
            let fwd =
                |x: &Tensor, o: Option<&Tensor>| data::cumsum(None, x, dim, exclusive, reverse, o);
            let bwd = |dy: &Tensor| data::cumsum_backward(None, dy, dim, exclusive, reverse, None);
            check_map(dev, &what, shape, shape, &map, 0.0, &floats, &fwd, &bwd)?;
        }
    }
    let xi = ok(Tensor::zeros(dev.clone(), &[3], DType::I64))?;
    // Integer cumsum gives i64 (dtypes_ext_int_cumsum); integers have no gradient.
    expect_kind(
        data::cumsum_backward(None, &xi, 0, false, false, None),
        ErrorKind::DtypeMismatch,
        "cumsum_backward",
    )?;
    for (shape, upper, k) in [
        (&[5, 7][..], true, 0i64),
        (&[5, 7], false, 0),
        (&[2, 4, 6], true, 2),
        (&[2, 4, 6], false, -1),
        (&[3, 3], true, -5),
        (&[3, 3], false, 9),
        (&[2, 0, 3], true, 0),
    ] {
        let nd = shape.len();
        let map = copy_map(shape, shape, |o| {
            let diff = o[nd - 1] as i64 - o[nd - 2] as i64;
            let keep = if upper { diff >= k } else { diff <= k };
            keep.then(|| o.to_vec())
        });
        let what = format!("trilu {shape:?} upper {upper} k {k}");
        let fwd = |x: &Tensor, o: Option<&Tensor>| data::trilu(None, x, upper, k, o);
        let bwd = |dy: &Tensor| data::trilu_backward(None, dy, upper, k, None);
        check_map(dev, &what, shape, shape, &map, 0.0, &DTS, &fwd, &bwd)?;
    }
    let x = randn(dev, &[4], DType::F32, 1)?;
    expect_kind(
        data::trilu(None, &x, true, 0, None),
        ErrorKind::ShapeMismatch,
        "trilu",
    )
}

fn index_select_scatter_add_one_hot(dev: &Dev) -> TestResult {
    let floats = [DType::F32, DType::F16, DType::BF16];
    for idt in [DType::I64, DType::I32] {
        // index_select along each dimension, repeated and negative indices.
        let shape = [3usize, 4, 5];
        for dim in 0..3usize {
            let n = shape[dim] as i64;
            let iv: Vec<i64> = vec![n - 1, 0, -1, 1, 0];
            let idx = from_f64(
                dev,
                &iv.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                &[5],
                idt,
            )?;
            let mut out = shape.to_vec();
            out[dim] = iv.len();
            let map = copy_map(&out, &shape, |o| {
                let mut s = o.to_vec();
                s[dim] = iv[o[dim]].rem_euclid(n) as usize;
                Some(s)
            });
            let what = format!("index_select dim {dim} {idt}");
            let fwd =
                |x: &Tensor, o: Option<&Tensor>| data::index_select(None, x, dim as i64, &idx, o);
            let bwd =
                |dy: &Tensor| data::index_select_backward(None, dy, &shape, dim as i64, &idx, None);
            check_map(dev, &what, &shape, &out, &map, 0.0, &DTS, &fwd, &bwd)?;
        }
        // Out of range: a clear status, on the GPU through the device-side check.
        let x = randn(dev, &[3, 4], DType::F32, 1)?;
        let bad = from_f64(dev, &[0.0, 4.0], &[2], idt)?;
        expect_kind(
            data::index_select(None, &x, 1, &bad, None),
            ErrorKind::InvalidArgument,
            "index_select",
        )?;
        let bad2 = from_f64(dev, &[0.0, 1.0, 2.0, 3.0], &[2, 2], idt)?;
        expect_kind(
            data::index_select(None, &x, 1, &bad2, None),
            ErrorKind::ShapeMismatch,
            "index_select",
        )?;
        // scatter_add: out = x + scatter of src (index smaller than src, duplicates sum).
        for &dt in &floats {
            let xs = [4usize, 3];
            let x = randn(dev, &xs, dt, 5)?;
            let src = randn(dev, &[3, 3], dt, 6)?;
            let iv = [3i64, 0, 3, -1, 1, 0];
            let idx = from_f64(
                dev,
                &iv.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                &[2, 3],
                idt,
            )?;
            let got = ok(data::scatter_add(None, &x, 0, &idx, &src, None))?;
            let mut want = values(&x)?;
            let vs = values(&src)?;
            for i in 0..2 {
                for j in 0..3 {
                    let r = iv[i * 3 + j].rem_euclid(4) as usize;
                    want[r * 3 + j] += vs[i * 3 + j];
                }
            }
            let want: Vec<f64> = want.iter().map(|&v| round_to(dt, v)).collect();
            let tol = if dt == DType::F32 { 1e-5 } else { 2e-2 };
            assert_close(
                &format!("scatter_add {dt} {idt}"),
                &values(&got)?,
                &want,
                tol,
                tol,
            )?;
            let dy = randn(dev, &xs, dt, 7)?;
            let (dx, dsrc) = ok(data::scatter_add_backward(None, &dy, 0, &idx, None, None))?;
            let vd = values(&dy)?;
            assert_close("scatter_add dx", &values(&dx)?, &vd, 0.0, 0.0)?;
            let want: Vec<f64> = (0..6)
                .map(|e| vd[iv[e].rem_euclid(4) as usize * 3 + e % 3])
                .collect();
            assert_close("scatter_add dsrc", &values(&dsrc)?, &want, 0.0, 0.0)?;
            let bad = from_f64(dev, &[0.0, 4.0, 0.0], &[1, 3], idt)?;
            expect_kind(
                data::scatter_add(None, &x, 0, &bad, &src, None),
                ErrorKind::InvalidArgument,
                "scatter_add",
            )?;
        }
        // one_hot: i64 rows with one 1; negative values count from the end; bounds checked.
        let iv = [0.0, 3.0, -1.0, 2.0, 2.0, 1.0];
        let idx = from_f64(dev, &iv, &[2, 3], idt)?;
        let oh = ok(data::one_hot(None, &idx, 4, None))?;
        ensure(
            oh.dtype() == DType::I64 && oh.shape() == [2, 3, 4],
            "one_hot dtype/shape",
        )?;
        let want: Vec<f64> = (0..24)
            .map(|e| {
                let v = (iv[e / 4] as i64).rem_euclid(4) as usize;
                f64::from(u8::from(e % 4 == v))
            })
            .collect();
        assert_close("one_hot", &values(&oh)?, &want, 0.0, 0.0)?;
        let bad = from_f64(dev, &[0.0, 4.0], &[2], idt)?;
        expect_kind(
            data::one_hot(None, &bad, 4, None),
            ErrorKind::InvalidArgument,
            "one_hot",
        )?;
        expect_kind(
            data::one_hot(None, &idx, 0, None),
            ErrorKind::InvalidArgument,
            "one_hot",
        )?;
    }
    Ok(())
}

/// `x.index_copy_(dim, index, src)` along every dim of a [3, 4, 5] tensor in every dtype
/// (negative indices count from the end; the rest of x is untouched), the KV-cache shape
/// (one position of [1, H, T, D] written), its backward, and the refusals.
fn index_copy_and_backward(dev: &Dev) -> TestResult {
    let shape = [3usize, 4, 5];
    for idt in [DType::I64, DType::I32] {
        for &dt in &[DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64] {
            for dim in 0..3usize {
                let n = shape[dim] as i64;
                // Unique targets (PyTorch leaves repeated ones unspecified), one negative.
                let iv: Vec<i64> = vec![n - 1, 0, -2];
                let idx = from_f64(
                    dev,
                    &iv.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                    &[3],
                    idt,
                )?;
                let mut ss = shape.to_vec();
                ss[dim] = iv.len();
                // Integers: small whole values (randn is floating only).
                let vals = |n: usize, seed: usize| -> Vec<f64> {
                    (0..n)
                        .map(|e| ((e * 7 + seed * 13) % 23) as f64 - 11.0)
                        .collect()
                };
                let (x, src) = if dt.is_float() {
                    (
                        randn(dev, &shape, dt, 11 + dim as u64)?,
                        randn(dev, &ss, dt, 21 + dim as u64)?,
                    )
                } else {
                    (
                        from_f64(dev, &vals(60, dim), &shape, dt)?,
                        from_f64(dev, &vals(ss.iter().product(), dim + 5), &ss, dt)?,
                    )
                };
                let mut want = values(&x)?;
                let vs = values(&src)?;
                let cs = [shape[1] * shape[2], shape[2], 1];
                for (e, &v) in vs.iter().enumerate() {
                    let mut o = unravel(e, &ss);
                    o[dim] = iv[o[dim]].rem_euclid(n) as usize;
                    want[o[0] * cs[0] + o[1] * cs[1] + o[2]] = v;
                }
                ok(data::index_copy(None, &x, dim as i64, &idx, &src))?;
                let what = format!("index_copy dim {dim} {dt} {idt}");
                assert_close(&what, &values(&x)?, &want, 0.0, 0.0)?;
                if dt.is_float() {
                    let dy = randn(dev, &shape, dt, 31)?;
                    let (dx, dsrc) = ok(data::index_copy_backward(
                        None, &dy, dim as i64, &idx, None, None,
                    ))?;
                    let vd = values(&dy)?;
                    let mut want_dx = vd.clone();
                    let mut want_ds = vec![0.0; vs.len()];
                    for (e, w) in want_ds.iter_mut().enumerate() {
                        let mut o = unravel(e, &ss);
                        o[dim] = iv[o[dim]].rem_euclid(n) as usize;
                        let at = o[0] * cs[0] + o[1] * cs[1] + o[2];
                        *w = vd[at];
                        want_dx[at] = 0.0;
                    }
                    assert_close(&format!("{what} dx"), &values(&dx)?, &want_dx, 0.0, 0.0)?;
                    assert_close(&format!("{what} dsrc"), &values(&dsrc)?, &want_ds, 0.0, 0.0)?;
                }
            }
        }
        // A KV cache [1, H, T, D]: position T-1 of every head written from [1, H, 1, D].
        let (h, t, d) = (4usize, 9usize, 8usize);
        let cache = randn(dev, &[1, h, t, d], DType::F16, 41)?;
        let before = values(&cache)?;
        let k = randn(dev, &[1, h, 1, d], DType::F16, 42)?;
        let pos = from_f64(dev, &[(t - 1) as f64], &[1], idt)?;
        ok(data::index_copy(None, &cache, 2, &pos, &k))?;
        let vk = values(&k)?;
        let want: Vec<f64> = (0..before.len())
            .map(|e| {
                let (hh, tt, dd) = (e / (t * d), (e / d) % t, e % d);
                if tt == t - 1 {
                    vk[hh * d + dd]
                } else {
                    before[e]
                }
            })
            .collect();
        assert_close("index_copy kv cache", &values(&cache)?, &want, 0.0, 0.0)?;
        // Refusals: out-of-range index (checked on the device), 2-D index, wrong src shape,
        // dtype mismatch, src aliasing x; an empty index writes nothing.
        let x = randn(dev, &[3, 4], DType::F32, 1)?;
        let src = randn(dev, &[3, 2], DType::F32, 2)?;
        let bad = from_f64(dev, &[0.0, 4.0], &[2], idt)?;
        expect_kind(
            data::index_copy(None, &x, 1, &bad, &src),
            ErrorKind::InvalidArgument,
            "index_copy",
        )?;
        let i2 = from_f64(dev, &[0.0, 1.0], &[1, 2], idt)?;
        expect_kind(
            data::index_copy(None, &x, 1, &i2, &src),
            ErrorKind::ShapeMismatch,
            "index_copy",
        )?;
        let ok_idx = from_f64(dev, &[0.0, 1.0], &[2], idt)?;
        let wrong = randn(dev, &[2, 2], DType::F32, 3)?;
        expect_kind(
            data::index_copy(None, &x, 1, &ok_idx, &wrong),
            ErrorKind::ShapeMismatch,
            "index_copy",
        )?;
        let half = randn(dev, &[3, 2], DType::F16, 4)?;
        expect_kind(
            data::index_copy(None, &x, 1, &ok_idx, &half),
            ErrorKind::DtypeMismatch,
            "index_copy",
        )?;
        let sq = randn(dev, &[2, 2], DType::F32, 5)?;
        expect_kind(
            data::index_copy(None, &sq, 0, &ok_idx, &sq),
            ErrorKind::InvalidArgument,
            "index_copy",
        )?;
        let before = values(&x)?;
        let none = from_f64(dev, &[], &[0], idt)?;
        let empty_src = randn(dev, &[3, 0], DType::F32, 6)?;
        ok(data::index_copy(None, &x, 1, &none, &empty_src))?;
        assert_close("index_copy empty", &values(&x)?, &before, 0.0, 0.0)?;
    }
    Ok(())
}

/// PyTorch's local_response_norm in float64 over `(N, C, inner)`.
fn lrn_ref(x: &[f64], shape: &[usize], size: usize, alpha: f64, beta: f64, k: f64) -> Vec<f64> {
    let c = shape[1];
    let inner: usize = shape[2..].iter().product();
    (0..x.len())
        .map(|e| {
            let (n, ch, i) = (e / (c * inner), (e / inner) % c, e % inner);
            let lo = ch.saturating_sub(size / 2);
            let hi = (ch + (size - 1) / 2).min(c - 1);
            let s: f64 = (lo..=hi).map(|j| x[(n * c + j) * inner + i].powi(2)).sum();
            x[e] / (k + alpha / size as f64 * s).powf(beta)
        })
        .collect()
}

fn local_response_norm_and_backward(dev: &Dev) -> TestResult {
    for (shape, size, alpha, beta, k) in [
        (&[2usize, 7, 3, 4][..], 5usize, 1e-4, 0.75, 1.0),
        (&[2, 6, 5], 2, 0.1, 0.5, 2.0),
        (&[1, 4, 2, 2, 3], 3, 0.2, 0.75, 1.0),
        (&[3, 3, 1], 7, 0.5, 1.0, 0.5),
    ] {
        for dt in [DType::F32, DType::F16, DType::BF16] {
            let x = randn(dev, shape, dt, 11)?;
            let dy = randn(dev, shape, dt, 12)?;
            let (vx, vd) = (values(&x)?, values(&dy)?);
            let what = format!("local_response_norm {shape:?} size {size} {dt}");
            let out = poisoned(dev, shape, dt)?;
            ok(norm::local_response_norm(
                None,
                &x,
                size as i64,
                alpha,
                beta,
                k,
                Some(&out),
            ))?;
            let want: Vec<f64> = lrn_ref(&vx, shape, size, alpha, beta, k)
                .iter()
                .map(|&v| round_to(dt, v))
                .collect();
            assert_close_dtype(&what, &values(&out)?, &want, dt)?;
            let dx = ok(norm::local_response_norm_backward(
                None,
                &x,
                &dy,
                size as i64,
                alpha,
                beta,
                k,
                None,
            ))?;
            // Central differences of the float64 forward.
            let h = 1e-6;
            let want: Vec<f64> = (0..vx.len())
                .map(|e| {
                    let (mut p, mut m) = (vx.clone(), vx.clone());
                    p[e] += h;
                    m[e] -= h;
                    let (fp, fm) = (
                        lrn_ref(&p, shape, size, alpha, beta, k),
                        lrn_ref(&m, shape, size, alpha, beta, k),
                    );
                    (0..vx.len()).map(|j| (fp[j] - fm[j]) * vd[j]).sum::<f64>() / (2.0 * h)
                })
                .collect();
            let tol = if dt == DType::F32 { 1e-4 } else { 3e-2 };
            assert_close(&format!("{what} backward"), &values(&dx)?, &want, tol, tol)?;
        }
    }
    let x = randn(dev, &[3, 4], DType::F32, 1)?;
    expect_kind(
        norm::local_response_norm(None, &x, 3, 1e-4, 0.75, 1.0, None),
        ErrorKind::ShapeMismatch,
        "local_response_norm",
    )?;
    let x = randn(dev, &[2, 3, 4], DType::F32, 1)?;
    expect_kind(
        norm::local_response_norm(None, &x, 0, 1e-4, 0.75, 1.0, None),
        ErrorKind::InvalidArgument,
        "local_response_norm",
    )
}

fn max_unpool_and_backward(dev: &Dev) -> TestResult {
    // [N, C, spatial], indices into an output plane of `lo` elements, with a repeat (mean).
    for (shape, out_sp) in [
        (&[2usize, 3, 2, 3][..], &[4usize, 5][..]),
        (&[1, 2, 7], &[9]),
        (&[1, 1, 2, 2, 2], &[3, 3, 3]),
    ] {
        let (n, c) = (shape[0], shape[1]);
        let l: usize = shape[2..].iter().product();
        let lo: usize = out_sp.iter().product();
        for idt in [DType::I64, DType::I32] {
            // distinct positions, but position 0 of each plane named twice
            let iv: Vec<i64> = (0..n * c * l)
                .map(|e| {
                    let j = e % l;
                    if j == 1 { 0 } else { ((j * 7 + 3) % lo) as i64 }
                })
                .collect();
            let idx = from_f64(
                dev,
                &iv.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                shape,
                idt,
            )?;
            for dt in [DType::F32, DType::F16, DType::BF16] {
                let x = randn(dev, shape, dt, 21)?;
                let vx = values(&x)?;
                let mut oshape = vec![n, c];
                oshape.extend_from_slice(out_sp);
                let out = poisoned(dev, &oshape, dt)?;
                ok(pool::max_unpool(None, &x, &idx, out_sp, Some(&out)))?;
                let (mut sum, mut cnt) = (vec![0.0; n * c * lo], vec![0.0; n * c * lo]);
                for e in 0..vx.len() {
                    let p = (e / l) * lo + iv[e] as usize;
                    sum[p] += vx[e];
                    cnt[p] += 1.0;
                }
                let want: Vec<f64> = sum
                    .iter()
                    .zip(&cnt)
                    .map(|(&s, &k)| round_to(dt, if k > 0.0 { s / k } else { 0.0 }))
                    .collect();
                let what = format!("max_unpool {shape:?} to {out_sp:?} {dt} {idt}");
                assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                let dy = randn(dev, &oshape, dt, 22)?;
                let vd = values(&dy)?;
                let dx = ok(pool::max_unpool_backward(None, &dy, &idx, None))?;
                let want: Vec<f64> = (0..vx.len())
                    .map(|e| vd[(e / l) * lo + iv[e] as usize])
                    .collect();
                assert_close(&format!("{what} backward"), &values(&dx)?, &want, 0.0, 0.0)?;
            }
            // An index past the plane: a clear status (the device-side check on GPUs).
            let x = randn(dev, shape, DType::F32, 23)?;
            let mut bad = iv.clone();
            bad[0] = lo as i64;
            let bad = from_f64(
                dev,
                &bad.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                shape,
                idt,
            )?;
            expect_kind(
                pool::max_unpool(None, &x, &bad, out_sp, None),
                ErrorKind::InvalidArgument,
                "max_unpool",
            )?;
        }
    }
    let x = randn(dev, &[1, 2, 3, 3], DType::F32, 1)?;
    let idx = ok(Tensor::zeros(dev.clone(), &[1, 2, 3, 3], DType::I64))?;
    expect_kind(
        pool::max_unpool(None, &x, &idx, &[5], None),
        ErrorKind::ShapeMismatch,
        "max_unpool",
    )
}

/// interpolate against values PyTorch gives, every float dtype (and i32 for nearest); the
/// backward by the adjoint identity `<dy, interp(x)> == <interp_backward(dy), x>` on 1-3
/// spatial dimensions, both modes, align_corners both ways.
fn interpolate_and_backward(dev: &Dev) -> TestResult {
    let anchors: &[(usize, i64, bool, &[f64])] = &[
        (8, 1, false, &[0.0, 0.25, 0.75, 1.25, 1.75, 2.25, 2.75, 3.0]),
        (7, 1, true, &[0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0]),
        (8, 0, false, &[0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0]),
        (3, 0, false, &[0.0, 1.0, 2.0]),
        (2, 1, false, &[0.5, 2.5]),
    ];
    for &(n, mode, align, want) in anchors {
        let dts: &[DType] = if mode == 0 {
            &[DType::F32, DType::F16, DType::BF16, DType::I32]
        } else {
            &[DType::F32, DType::F16, DType::BF16]
        };
        for &dt in dts {
            let x = from_f64(dev, &[0.0, 1.0, 2.0, 3.0], &[1, 1, 4], dt)?;
            let out = poisoned(dev, &[1, 1, n], dt)?;
            ok(pool::interpolate(None, &x, &[n], mode, align, Some(&out)))?;
            assert_close_dtype(
                &format!("interpolate 4 -> {n} mode {mode} align {align} {dt}"),
                &values(&out)?,
                want,
                dt,
            )?;
        }
    }
    for (shape, size) in [
        (&[2usize, 3, 5, 4][..], &[7usize, 9][..]),
        (&[2, 3, 5, 4], &[3, 2]),
        (&[1, 2, 6], &[13]),
        (&[1, 2, 3, 4, 2], &[5, 3, 4]),
        (&[1, 1, 3, 3], &[3, 3]),
    ] {
        for (mode, align) in [(0, false), (1, false), (1, true)] {
            let x = randn(dev, shape, DType::F32, 31)?;
            let mut oshape = shape[..2].to_vec();
            oshape.extend_from_slice(size);
            let dy = randn(dev, &oshape, DType::F32, 32)?;
            let y = ok(pool::interpolate(None, &x, size, mode, align, None))?;
            let dx = ok(pool::interpolate_backward(
                None, &dy, shape, mode, align, None,
            ))?;
            let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| p * q).sum::<f64>();
            let (l, r) = (
                dot(&values(&dy)?, &values(&y)?),
                dot(&values(&dx)?, &values(&x)?),
            );
            ensure(
                (l - r).abs() <= 1e-4 * (1.0 + l.abs()),
                format!(
                    "interpolate {shape:?} -> {size:?} mode {mode} align {align}: <dy, y> {l} vs <dx, x> {r}"
                ),
            )?;
        }
    }
    let x = randn(dev, &[2, 3], DType::F32, 1)?;
    expect_kind(
        pool::interpolate(None, &x, &[4], 0, false, None),
        ErrorKind::ShapeMismatch,
        "interpolate",
    )?;
    let x = randn(dev, &[1, 1, 3], DType::F32, 1)?;
    expect_kind(
        pool::interpolate(None, &x, &[4], 3, false, None),
        ErrorKind::InvalidArgument,
        "interpolate",
    )
}
