//! Transformer building blocks on the CPU: rotary embedding (rope) and weighted_sum, forward
//! and backward. f16/bf16 load to f32 (rope in f64 for f64); blocks run in parallel on the
//! device's pool.

use super::CpuDevice;
use super::elem::{Acc, AccElem, Param, ld, ld_acc, sp, st, st_acc};
use super::par::{for_range, row_grain};
use crate::base::dtype::DType;
use crate::device::transformer::TransformerOps;
use crate::device::{DevPtr, RawStream};
use crate::ops::nn::{RopeCachedDesc, RopeDesc, WeightedSumDesc};
use crate::{Error, Result, with_float_type, with_floating_type};

fn rope_typed<T: AccElem>(d: &RopeDesc, x: DevPtr, y: DevPtr) {
    let half = d.dim / 2;
    // cos/sin per (position, pair), computed in f64.
    let mut table = vec![(T::A::ZERO, T::A::ZERO); d.seq * half];
    for s in 0..d.seq {
        for i in 0..half {
            let (sn, cs) = d.theta(s, i).sin_cos();
            table[s * half + i] = (T::A::of(cs), T::A::of(sn));
        }
    }
    let (xp, yp) = (sp::<T>(x), sp::<T>(y));
    let d = *d;
    let table = &table;
    for_range(
        d.outer * d.seq * d.inner,
        row_grain(d.dim),
        move |v0, v1| {
            for v in v0..v1 {
                let s = (v / d.inner) % d.seq;
                let base = v * d.dim;
                // SAFETY: vector v of x and y; vectors are disjoint (x may alias y per element).
                unsafe {
                    for i in 0..half {
                        let (cs, sn) = table[s * half + i];
                        let (a, b) = (ld_acc(xp, base + i), ld_acc(xp, base + i + half));
                        st_acc(yp, base + i, a * cs - b * sn);
                        st_acc(yp, base + i + half, b * cs + a * sn);
                    }
                }
            }
        },
    );
}

/// Position ids of a rope_cached call as row indices into the caches, checked against
/// `max_pos` (empty without ids: positions are the sequence indices).
fn rope_positions(d: &RopeCachedDesc, p: DevPtr, dt: DType) -> Result<Vec<usize>> {
    let op = if d.inverse {
        "rope_cached_backward"
    } else {
        "rope_cached"
    };
    let n = d.positions();
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        // SAFETY: the ids hold d.positions() elements of dt (i32 or i64).
        let id = unsafe {
            match dt {
                DType::I32 => *p.as_ptr::<i32>().add(i) as i64,
                DType::I64 => *p.as_ptr::<i64>().add(i),
                other => {
                    return Err(Error::dtype(format!(
                        "{op}: position_ids dtype {other} is not i32 or i64"
                    )));
                }
            }
        };
        if id < 0 || id as u64 >= d.max_pos as u64 {
            return Err(Error::invalid(format!(
                "{op}: position id {id} at index {i} is outside the cos/sin caches [0, {})",
                d.max_pos
            )));
        }
        v.push(id as usize);
    }
    Ok(v)
}

#[allow(clippy::too_many_arguments)]
fn rope_cached_typed<T: AccElem>(
    d: &RopeCachedDesc,
    x: DevPtr,
    cos: DevPtr,
    sin: DevPtr,
    pos: &[usize],
    y: DevPtr,
) {
    let half = d.rot / 2;
    let (xp, yp, cp, snp) = (sp::<T>(x), sp::<T>(y), sp::<T>(cos), sp::<T>(sin));
    let d = *d;
    let sign = T::A::of(if d.inverse { -1.0 } else { 1.0 });
    for_range(
        d.outer * d.seq * d.inner,
        row_grain(d.dim),
        move |v0, v1| {
            for v in v0..v1 {
                let (os, _) = (v / d.inner, v % d.inner);
                let (o, s) = (os / d.seq, os % d.seq);
                let p = if d.has_positions {
                    pos[d.position_index(o, s)]
                } else {
                    s
                };
                let base = v * d.dim;
                // SAFETY: vector v of x and y (disjoint between vectors; x may be y per
                // element: each pair is read before it is written); row p of the caches.
                unsafe {
                    for i in 0..half {
                        let (ia, ib) = d.pair(i);
                        let c = ld_acc(cp, p * half + i);
                        let sn = sign * ld_acc(snp, p * half + i);
                        let (a, b) = (ld_acc(xp, base + ia), ld_acc(xp, base + ib));
                        st_acc(yp, base + ia, a * c - b * sn);
                        st_acc(yp, base + ib, b * c + a * sn);
                    }
                    if xp.get() != yp.get() {
                        for e in d.rot..d.dim {
                            st_acc(yp, base + e, ld_acc(xp, base + e));
                        }
                    }
                }
            }
        },
    );
}

impl TransformerOps for CpuDevice {
    fn rope(&self, _s: RawStream, dtype: DType, d: &RopeDesc, x: DevPtr, y: DevPtr) -> Result<()> {
        with_floating_type!(dtype, "rope", T => rope_typed::<T>(d, x, y));
        Ok(())
    }

    fn weighted_sum(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &WeightedSumDesc,
        x: DevPtr,
        w: DevPtr,
        y: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "weighted_sum", T => {
            let (xp, wp, yp) = (sp::<T>(x), sp::<T>(w), sp::<T>(y));
            let d = *d;
            for_range(d.outer, row_grain(d.n * d.d), move |o0, o1| {
                let mut acc = vec![0.0f32; d.d];
                for o in o0..o1 {
                    acc.fill(0.0);
                    // SAFETY: block o of each buffer; blocks are disjoint.
                    unsafe {
                        for k in 0..d.n {
                            let wk = ld(wp, o * d.n + k);
                            let base = (o * d.n + k) * d.d;
                            for (e, a) in acc.iter_mut().enumerate() {
                                *a += wk * ld(xp, base + e);
                            }
                        }
                        for (e, a) in acc.iter().enumerate() {
                            st(yp, o * d.d + e, *a);
                        }
                    }
                }
            });
        });
        Ok(())
    }

    fn weighted_sum_backward(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &WeightedSumDesc,
        x: DevPtr,
        w: DevPtr,
        dy: DevPtr,
        dx: DevPtr,
        dw: DevPtr,
    ) -> Result<()> {
        with_float_type!(dtype, "weighted_sum_backward", T => {
            let (xp, wp, dyp) = (sp::<T>(x), sp::<T>(w), sp::<T>(dy));
            let (dxp, dwp) = (Param::<T>::new(dx), Param::<T>::new(dw));
            let d = *d;
            for_range(d.outer, row_grain(d.n * d.d), move |o0, o1| {
                for o in o0..o1 {
                    // SAFETY: block o of each buffer; blocks are disjoint.
                    unsafe {
                        for k in 0..d.n {
                            let wk = ld(wp, o * d.n + k);
                            let base = (o * d.n + k) * d.d;
                            let mut s = 0.0f32;
                            for e in 0..d.d {
                                let g = ld(dyp, o * d.d + e);
                                s += ld(xp, base + e) * g;
                                if dxp.present {
                                    st(dxp.p, base + e, wk * g);
                                }
                            }
                            if dwp.present {
                                st(dwp.p, o * d.n + k, s);
                            }
                        }
                    }
                }
            });
        });
        Ok(())
    }

    fn rope_cached(
        &self,
        _s: RawStream,
        dtype: DType,
        d: &RopeCachedDesc,
        x: DevPtr,
        cos: DevPtr,
        sin: DevPtr,
        positions: DevPtr,
        pos_dtype: DType,
        y: DevPtr,
    ) -> Result<()> {
        let pos = if d.has_positions {
            rope_positions(d, positions, pos_dtype)?
        } else {
            Vec::new()
        };
        with_floating_type!(dtype, "rope_cached", T => rope_cached_typed::<T>(d, x, cos, sin, &pos, y));
        Ok(())
    }
}
