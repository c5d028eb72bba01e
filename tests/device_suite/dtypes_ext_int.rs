//! The integer corners of PyTorch's dtype rules (issue #12 item 3): cumsum of the integer
//! dtypes and bool (an i64 result, wrapping sums) and clamp with scalar bounds on the integer
//! dtypes, against exact integer references computed here.

use crate::common::*;
use libtest_mimic::Failed;
use rocm_backend::ErrorKind;
use rocm_backend::runtime::{DType, Tensor, data, elementwise as ew};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![
        ("dtypes_ext_int_cumsum", dtypes_ext_int_cumsum),
        ("dtypes_ext_int_clamp_scalar", dtypes_ext_int_clamp_scalar),
        (
            "dtypes_ext_clamp_scalar_f64_exact",
            dtypes_ext_clamp_scalar_f64_exact,
        ),
    ]
}

/// A tensor of `dt` from exact integers (each converted as `as` converts: bool from != 0).
pub(crate) fn from_ints(
    dev: &Dev,
    v: &[i64],
    shape: &[usize],
    dt: DType,
) -> Result<Tensor, Failed> {
    let mut bytes = Vec::with_capacity(v.len() * dt.size());
    for &x in v {
        match dt {
            DType::I8 => bytes.extend_from_slice(&(x as i8).to_le_bytes()),
            DType::U8 => bytes.extend_from_slice(&(x as u8).to_le_bytes()),
            DType::Bool => bytes.push(u8::from(x != 0)),
            DType::I16 => bytes.extend_from_slice(&(x as i16).to_le_bytes()),
            DType::I32 => bytes.extend_from_slice(&(x as i32).to_le_bytes()),
            DType::I64 => bytes.extend_from_slice(&x.to_le_bytes()),
            other => return Err(format!("from_ints: {other} is not an integer dtype").into()),
        }
    }
    ok(Tensor::from_bytes(dev.clone(), &bytes, shape, dt))
}

/// The exact values of an integer or bool tensor.
pub(crate) fn ints(t: &Tensor) -> Result<Vec<i64>, Failed> {
    let mut b = vec![0u8; t.nbytes()];
    ok(t.copy_to_host(&mut b, None))?;
    let sz = t.dtype().size();
    Ok(b.chunks_exact(sz)
        .map(|c| match t.dtype() {
            DType::I8 => c[0] as i8 as i64,
            DType::U8 | DType::Bool => c[0] as i64,
            DType::I16 => i16::from_le_bytes([c[0], c[1]]) as i64,
            DType::I32 => i32::from_le_bytes(c.try_into().unwrap()) as i64,
            _ => i64::from_le_bytes(c.try_into().unwrap()),
        })
        .collect())
}

/// The value of `v` as `dt` holds it (wrapping as a cast does; bool as 0/1).
fn as_dtype(v: i64, dt: DType) -> i64 {
    match dt {
        DType::I8 => v as i8 as i64,
        DType::U8 => v as u8 as i64,
        DType::Bool => i64::from(v != 0),
        DType::I16 => v as i16 as i64,
        DType::I32 => v as i32 as i64,
        _ => v,
    }
}

/// torch.cumsum's running sums in i64 (wrapping) of `xv` over `shape` along `d`.
fn cumsum_ref(xv: &[i64], shape: &[usize], d: usize, exclusive: bool, reverse: bool) -> Vec<i64> {
    let (len, inner) = if shape.is_empty() {
        (1, 1)
    } else {
        (shape[d], shape[d + 1..].iter().product::<usize>())
    };
    (0..xv.len())
        .map(|e| {
            let j = (e / inner) % len;
            let base = e - j * inner;
            (0..len)
                .filter(|&i| match (reverse, exclusive) {
                    (false, false) => i <= j,
                    (false, true) => i < j,
                    (true, false) => i >= j,
                    (true, true) => i > j,
                })
                .fold(0i64, |a, i| a.wrapping_add(xv[base + i * inner]))
        })
        .collect()
}

fn expect_err<T>(
    r: rocm_backend::Result<T>,
    kind: ErrorKind,
    words: &[&str],
    what: &str,
) -> TestResult {
    match r {
        Ok(_) => Err(format!("{what}: succeeded, expected {kind:?}").into()),
        Err(e) => ensure(
            e.kind == kind && words.iter().all(|w| e.message.contains(w)),
            format!(
                "{what}: {:?} ({}), expected {kind:?} naming {words:?}",
                e.kind, e.message
            ),
        ),
    }
}

/// cumsum of i8/u8/i16/i32/i64/bool: an i64 result (allocated, or a given i64 `out`; i64 in
/// place) for every dim, exclusive and reverse; sums past the input dtype's range (u8 200 +
/// 100, i32 past 2^31) are exact in i64, i64 sums wrap; empty and 0-d inputs; an `out`
/// of another dtype and the integer backward are DTYPE_MISMATCH.
fn dtypes_ext_int_cumsum(dev: &Dev) -> TestResult {
    let shape = [3usize, 5, 2];
    let n = 30;
    let raw: Vec<i64> = (0..n as i64)
        .map(|i| (i * 37 % 23) - 11 + (i % 4) * 60)
        .collect();
    for dt in [
        DType::I8,
        DType::U8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::Bool,
    ] {
        let xv: Vec<i64> = raw.iter().map(|&v| as_dtype(v * 3, dt)).collect();
        let x = from_ints(dev, &xv, &shape, dt)?;
        for dim in [0i64, 1, 2, -1] {
            let d = dim.rem_euclid(3) as usize;
            for (exclusive, reverse) in [(false, false), (true, false), (false, true), (true, true)]
            {
                let what = format!("cumsum {dt} dim {dim} exclusive={exclusive} reverse={reverse}");
                let want = cumsum_ref(&xv, &shape, d, exclusive, reverse);
                let y = ok(data::cumsum(None, &x, dim, exclusive, reverse, None))?;
                ensure(
                    y.dtype() == DType::I64,
                    format!("{what}: dtype {}", y.dtype()),
                )?;
                ensure(y.shape() == shape, format!("{what}: shape {:?}", y.shape()))?;
                ensure(
                    ints(&y)? == want,
                    format!("{what}: {:?} != {want:?}", ints(&y)?),
                )?;
                // Into a given (poisoned) i64 out.
                let o = poisoned(dev, &shape, DType::I64)?;
                ok(data::cumsum(None, &x, dim, exclusive, reverse, Some(&o)))?;
                ensure(ints(&o)? == want, format!("{what} into out"))?;
            }
        }
        // An out of another dtype (x's own included, unless i64) names i64.
        let bad_dt = if dt == DType::I64 { DType::I32 } else { dt };
        let o = ok(Tensor::empty(dev.clone(), &shape, bad_dt))?;
        expect_err(
            data::cumsum(None, &x, 1, false, false, Some(&o)),
            ErrorKind::DtypeMismatch,
            &["cumsum", "i64"],
            &format!("cumsum {dt} into {bad_dt}"),
        )?;
        let of = ok(Tensor::empty(dev.clone(), &shape, DType::F32))?;
        expect_err(
            data::cumsum(None, &x, 1, false, false, Some(&of)),
            ErrorKind::DtypeMismatch,
            &["i64"],
            &format!("cumsum {dt} into f32"),
        )?;
        // Integer tensors have no gradient.
        expect_err(
            data::cumsum_backward(None, &x, 0, false, false, None),
            ErrorKind::DtypeMismatch,
            &["cumsum_backward", dt.name()],
            &format!("cumsum_backward {dt}"),
        )?;
        // Empty along and across the dim, and 0-d.
        for (sh, dim) in [(&[0usize, 3][..], 0i64), (&[2, 0], 1), (&[2, 0], 0)] {
            let e = from_ints(dev, &[], sh, dt)?;
            let y = ok(data::cumsum(None, &e, dim, false, true, None))?;
            ensure(
                y.dtype() == DType::I64 && y.shape() == sh,
                format!("cumsum {dt} empty {sh:?}: {} {:?}", y.dtype(), y.shape()),
            )?;
        }
        let s = from_ints(dev, &[as_dtype(-5, dt)], &[], dt)?;
        for exclusive in [false, true] {
            let y = ok(data::cumsum(None, &s, 0, exclusive, false, None))?;
            let want = if exclusive { 0 } else { as_dtype(-5, dt) };
            ensure(
                y.dtype() == DType::I64 && y.shape().is_empty() && ints(&y)? == [want],
                format!("cumsum {dt} 0-d exclusive={exclusive}: {:?}", ints(&y)?),
            )?;
        }
    }
    // Past the input dtype's range: exact in i64.
    let u = from_ints(dev, &[200, 100, 255], &[3], DType::U8)?;
    let y = ok(data::cumsum(None, &u, 0, false, false, None))?;
    ensure(
        ints(&y)? == [200, 300, 555],
        format!("u8 sums {:?}", ints(&y)?),
    )?;
    let big = i32::MAX as i64;
    let w = from_ints(dev, &[big, big, i32::MIN as i64], &[3], DType::I32)?;
    let y = ok(data::cumsum(None, &w, 0, false, false, None))?;
    ensure(
        ints(&y)? == [big, 2 * big, 2 * big + i32::MIN as i64],
        format!("i32 sums {:?}", ints(&y)?),
    )?;
    // i64 sums wrap (two's complement, as PyTorch's); also in place.
    let v = [i64::MAX, 1, i64::MIN + 5, -7, 3];
    let want = cumsum_ref(&v, &[5], 0, false, false);
    ensure(want[1] == i64::MIN, "the reference wraps")?;
    let t = from_ints(dev, &v, &[5], DType::I64)?;
    let y = ok(data::cumsum(None, &t, 0, false, false, None))?;
    ensure(ints(&y)? == want, format!("i64 wrap {:?}", ints(&y)?))?;
    let want_rev = cumsum_ref(&v, &[5], 0, true, true);
    ok(data::cumsum(None, &t, -1, true, true, Some(&t)))?;
    ensure(
        ints(&t)? == want_rev,
        format!("i64 in place {:?}", ints(&t)?),
    )?;
    // A longer fiber along the last dim (a thread's walk on GPUs) and along an outer one.
    let m = 1000usize;
    let lv: Vec<i64> = (0..2 * m as i64).map(|i| (i % 7) - 3).collect();
    for (sh, dim) in [([2usize, m], 1i64), ([m, 2], 0)] {
        let t = from_ints(dev, &lv, &sh, DType::I16)?;
        let want = cumsum_ref(&lv, &sh, dim as usize, false, false);
        let y = ok(data::cumsum(None, &t, dim, false, false, None))?;
        ensure(ints(&y)? == want, format!("i16 {sh:?} dim {dim}"))?;
    }
    Ok(())
}

/// The range of an integer dtype.
fn range(dt: DType) -> (i64, i64) {
    match dt {
        DType::I8 => (i8::MIN as i64, i8::MAX as i64),
        DType::U8 => (0, u8::MAX as i64),
        DType::I16 => (i16::MIN as i64, i16::MAX as i64),
        DType::I32 => (i32::MIN as i64, i32::MAX as i64),
        _ => (i64::MIN, i64::MAX),
    }
}

/// clamp with number bounds on i8/u8/i16/i32/i64 stays in the dtype (torch.clamp with int
/// bounds): both bounds, one, none (a copy), min > max (max wins), the dtype's own limits,
/// into an out and in place, empty; a bound converts as PyTorch's Scalar::to<scalar_t>
/// (u8 -255..-1 wrap to 256 + b; beyond the range INVALID_ARGUMENT); bounds exact past 2^24
/// (i32) and 2^53 (i64, doubles); a non-integral bound, +inf below or -inf above is
/// INVALID_ARGUMENT (torch would promote to float); bool is DTYPE_MISMATCH; integer tensors
/// have no clamp gradient.
fn dtypes_ext_int_clamp_scalar(dev: &Dev) -> TestResult {
    let inf = f64::INFINITY;
    for dt in [DType::I8, DType::U8, DType::I16, DType::I32, DType::I64] {
        let (lo, hi) = range(dt);
        let xv: Vec<i64> = [lo, -5, 0, 1, 2, 3, 5, 7, 100, hi]
            .iter()
            .map(|&v| as_dtype(v, dt))
            .collect();
        let x = from_ints(dev, &xv, &[2, 5], dt)?;
        let clamp_ref = |a: Option<i64>, b: Option<i64>| -> Vec<i64> {
            xv.iter()
                .map(|&v| {
                    let v = a.map_or(v, |a| v.max(a));
                    b.map_or(v, |b| v.min(b))
                })
                .collect()
        };
        for (mn, mx, a, b) in [
            (2.0, 5.0, Some(2), Some(5)),
            (-inf, 5.0, None, Some(5)),
            (2.0, inf, Some(2), None),
            (5.0, 2.0, Some(5), Some(2)),
            (-inf, inf, None, None),
            (lo as f64, hi as f64, Some(lo), Some(hi)),
            (0.0, 0.0, Some(0), Some(0)),
        ] {
            // i64's limits as doubles are 2^63 (out of range): its own limits stop at 2^62.
            let (mn, a) = if dt == DType::I64 && a == Some(lo) {
                (-(2f64.powi(62)), Some(-(1i64 << 62)))
            } else {
                (mn, a)
            };
            let (mx, b) = if dt == DType::I64 && b == Some(hi) {
                (2f64.powi(62), Some(1i64 << 62))
            } else {
                (mx, b)
            };
            let what = format!("clamp {dt} [{mn}, {mx}]");
            let want = clamp_ref(a, b);
            let y = ok(ew::clamp(None, &x, mn, mx, None))?;
            ensure(y.dtype() == dt, format!("{what}: dtype {}", y.dtype()))?;
            ensure(
                ints(&y)? == want,
                format!("{what}: {:?} != {want:?}", ints(&y)?),
            )?;
            let o = poisoned(dev, &[2, 5], dt)?;
            ok(ew::clamp(None, &x, mn, mx, Some(&o)))?;
            ensure(ints(&o)? == want, format!("{what} into out"))?;
            let c = from_ints(dev, &xv, &[2, 5], dt)?;
            ok(ew::clamp(None, &c, mn, mx, Some(&c)))?;
            ensure(ints(&c)? == want, format!("{what} in place"))?;
        }
        // Out of the dtype's range: PyTorch's overflow error (u8 -255..-1 wrap).
        let below = lo as f64
            - if dt == DType::I64 {
                2048.0 * 2048.0 * 4096.0
            } else {
                1.0
            };
        if dt == DType::U8 {
            let y = ok(ew::clamp(None, &x, -1.0, inf, None))?;
            ensure(
                ints(&y)? == vec![255; 10],
                format!("u8 min -1 wraps to 255: {:?}", ints(&y)?),
            )?;
            let y = ok(ew::clamp(None, &x, -inf, -250.0, None))?;
            ensure(
                ints(&y)? == clamp_ref(None, Some(6)),
                format!("u8 max -250 is 6: {:?}", ints(&y)?),
            )?;
            expect_err(
                ew::clamp(None, &x, -256.0, inf, None),
                ErrorKind::InvalidArgument,
                &["u8", "overflow"],
                "u8 min -256",
            )?;
        } else {
            expect_err(
                ew::clamp(None, &x, below, inf, None),
                ErrorKind::InvalidArgument,
                &[dt.name(), "overflow"],
                &format!("{dt} min below range"),
            )?;
        }
        let above = if dt == DType::I64 {
            2f64.powi(63)
        } else {
            hi as f64 + 1.0
        };
        expect_err(
            ew::clamp(None, &x, -inf, above, None),
            ErrorKind::InvalidArgument,
            &[dt.name(), "overflow"],
            &format!("{dt} max above range"),
        )?;
        // Non-integral bounds: torch would promote to float.
        for (mn, mx) in [(2.5, inf), (-inf, 0.1), (inf, inf), (-inf, -inf)] {
            expect_err(
                ew::clamp(None, &x, mn, mx, None),
                ErrorKind::InvalidArgument,
                &["float"],
                &format!("clamp {dt} [{mn}, {mx}]"),
            )?;
        }
        expect_err(
            ew::clamp(None, &x, f64::NAN, 1.0, None),
            ErrorKind::InvalidArgument,
            &["NaN"],
            "clamp NaN",
        )?;
        expect_err(
            ew::clamp_backward(None, &x, &x, 0.0, 1.0, None),
            ErrorKind::DtypeMismatch,
            &[dt.name()],
            &format!("clamp_backward {dt}"),
        )?;
        let e = from_ints(dev, &[], &[0, 3], dt)?;
        let y = ok(ew::clamp(None, &e, 1.0, 2.0, None))?;
        ensure(
            y.dtype() == dt && y.shape() == [0, 3],
            format!("clamp {dt} empty"),
        )?;
    }
    // Bounds a float cannot hold: i32 past 2^24, i64 past 2^53 (exact doubles).
    let t = from_ints(dev, &[16_777_218, 0, -16_777_219], &[3], DType::I32)?;
    let y = ok(ew::clamp(None, &t, -16_777_217.0, 16_777_217.0, None))?;
    ensure(
        ints(&y)? == [16_777_217, 0, -16_777_217],
        format!("i32 past 2^24: {:?}", ints(&y)?),
    )?;
    let b = (1i64 << 53) + 2;
    let t = from_ints(dev, &[i64::MAX, 5, i64::MIN], &[3], DType::I64)?;
    let y = ok(ew::clamp(None, &t, -(b as f64), b as f64, None))?;
    ensure(
        ints(&y)? == [b, 5, -b],
        format!("i64 past 2^53: {:?}", ints(&y)?),
    )?;
    // bool: PyTorch promotes it.
    let bt = from_ints(dev, &[0, 1], &[2], DType::Bool)?;
    expect_err(
        ew::clamp(None, &bt, 0.0, 1.0, None),
        ErrorKind::DtypeMismatch,
        &["bool"],
        "clamp bool",
    )?;
    Ok(())
}

/// clamp of f64 by number bounds uses the exact doubles (0.1 is not a float): forward and
/// backward (x exactly at the bound passes the gradient); NaN in x propagates.
fn dtypes_ext_clamp_scalar_f64_exact(dev: &Dev) -> TestResult {
    let xv = [0.1, 0.099_999_999_999_999_99, 0.2, 0.3, f64::NAN, -1.0];
    let x = from_f64(dev, &xv, &[6], DType::F64)?;
    let y = ok(ew::clamp(None, &x, 0.1, 0.25, None))?;
    let want = [0.1, 0.1, 0.2, 0.25, f64::NAN, 0.1];
    assert_close("clamp f64 [0.1, 0.25]", &values(&y)?, &want, 0.0, 0.0)?;
    let y = ok(ew::clamp(None, &x, f64::NEG_INFINITY, 0.1, None))?;
    let want = [0.1, 0.099_999_999_999_999_99, 0.1, 0.1, f64::NAN, -1.0];
    assert_close("clamp f64 max 0.1", &values(&y)?, &want, 0.0, 0.0)?;
    let dy = from_f64(dev, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[6], DType::F64)?;
    let g = ok(ew::clamp_backward(None, &x, &dy, 0.1, 0.2, None))?;
    // dy where min <= x <= max (0.1 and 0.2 exactly on the bounds; NaN x: PyTorch's mask
    // is false, 0).
    assert_close(
        "clamp_backward f64",
        &values(&g)?,
        &[1.0, 0.0, 3.0, 0.0, 0.0, 0.0],
        0.0,
        0.0,
    )?;
    let o = poisoned(dev, &[6], DType::F64)?;
    ok(ew::clamp_backward(
        None,
        &x,
        &dy,
        0.1,
        f64::INFINITY,
        Some(&o),
    ))?;
    assert_close(
        "clamp_backward f64 min only",
        &values(&o)?,
        &[1.0, 0.0, 3.0, 4.0, 0.0, 0.0],
        0.0,
        0.0,
    )?;
    Ok(())
}
