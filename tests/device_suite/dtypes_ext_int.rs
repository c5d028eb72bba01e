//! The integer corners of PyTorch's dtype rules (issue #12 item 3): cumsum of the integer
//! dtypes and bool (an i64 result, wrapping sums) and clamp with scalar bounds on the integer
//! dtypes, against exact integer references computed here.

use crate::common::*;
use libtest_mimic::Failed;
use rocm_backend::ErrorKind;
use rocm_backend::runtime::{DType, Tensor, data};

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![("dtypes_ext_int_cumsum", dtypes_ext_int_cumsum)]
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
