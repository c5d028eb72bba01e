//! Pooling's fast paths (the compile-time window/stride kernels of kernels/pool.hip) against
//! the float64 reference of `ops::pool`: every variant, odd sizes, padding, ceil_mode,
//! count_include_pad, padding per side, divisor_override, NaN and -inf, f32/f16/bf16.

use crate::common::*;
use rocm_backend::ops::pool::{self, PoolAttrs, PoolAttrsEx, PoolKind};
use rocm_backend::runtime::DType;
use rocm_backend::runtime::prelude as nn;

pub fn tests() -> Vec<(&'static str, Body)> {
    vec![("pool_fast_paths", pool_fast_paths)]
}

fn ex(k: usize, s: usize, pb: [usize; 2], pa: [usize; 2], nd: usize, ceil: bool) -> PoolAttrsEx {
    PoolAttrsEx {
        attrs: PoolAttrs {
            kernel: vec![k; nd],
            stride: vec![s; nd],
            padding: pb[..nd].to_vec(),
            dilation: vec![1],
            ceil_mode: ceil,
        },
        pad_after: pa[..nd].to_vec(),
        divisor_override: None,
    }
}

fn pool_fast_paths(dev: &Dev) -> TestResult {
    // (spatial rank, shape, window, stride, pad before, pad after, ceil_mode)
    let cases: Vec<(
        usize,
        Vec<usize>,
        usize,
        usize,
        [usize; 2],
        [usize; 2],
        bool,
    )> = vec![
        (2, vec![2, 3, 8, 8], 2, 2, [0, 0], [0, 0], false),
        (2, vec![1, 5, 9, 11], 2, 2, [1, 0], [0, 1], true),
        (2, vec![2, 3, 13, 17], 3, 2, [1, 1], [1, 1], false),
        (2, vec![1, 2, 12, 7], 3, 2, [1, 1], [1, 1], true),
        (2, vec![1, 2, 10, 9], 3, 2, [0, 1], [1, 0], true),
        (2, vec![3, 2, 7, 5], 3, 1, [1, 1], [1, 1], false),
        (2, vec![1, 1, 9, 33], 3, 1, [0, 0], [0, 0], false),
        (2, vec![1, 3, 1, 1], 3, 2, [1, 1], [1, 1], false),
        (1, vec![2, 3, 11], 2, 2, [0, 0], [0, 0], true),
        (1, vec![2, 3, 13], 3, 2, [1, 0], [1, 0], false),
        (1, vec![1, 2, 10], 3, 2, [1, 0], [0, 0], true),
    ];
    let kinds = [
        PoolKind::Max,
        PoolKind::Avg {
            count_include_pad: true,
        },
        PoolKind::Avg {
            count_include_pad: false,
        },
    ];
    for dt in FLOATS {
        for kind in kinds {
            for (i, (nd, xs, k, s, pb, pa, ceil)) in cases.iter().enumerate() {
                let mut attrs = ex(*k, *s, *pb, *pa, *nd, *ceil);
                for div in [None, Some(5)] {
                    if div.is_some() && kind == PoolKind::Max {
                        continue;
                    }
                    attrs.divisor_override = div;
                    let what = format!("fast pool {kind:?} case {i} {dt} divisor {div:?}");
                    let g = ok(pool::pool_geom_ex("pool", kind, xs, &attrs, *nd))?;
                    let x = randn(dev, xs, dt, 900 + i as u64)?;
                    let mut xv = values(&x)?;
                    // NaN and -inf in max pooling: a NaN wins its windows, -inf is a value.
                    if kind == PoolKind::Max && xv.len() > 7 {
                        xv[3] = f64::NAN;
                        xv[7] = f64::NEG_INFINITY;
                    }
                    let x = from_f64(dev, &xv, xs, dt)?;
                    let out = poisoned(dev, &g.y_shape(), dt)?;
                    ok(nn::pool_ex(None, kind, &x, &attrs, *nd, Some(&out)))?;
                    let want: Vec<f64> = pool::pool_reference(&g, &xv)
                        .iter()
                        .map(|v| round_to(dt, *v))
                        .collect();
                    assert_close_dtype(&what, &values(&out)?, &want, dt)?;
                }
            }
        }
    }
    Ok(())
}
