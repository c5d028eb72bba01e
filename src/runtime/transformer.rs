//! Eager transformer building blocks on tensors: rotary embedding (rope, and rope_cached from
//! cos/sin caches; the backward is the inverse rotation) and weighted_sum, forward and backward.
//! Semantics and layouts: `crate::ops::nn`; the `out` convention of [`crate::runtime::eager`]; the backward takes a [`Grad`] per gradient.

use crate::base::dtype::DType;
use crate::device::transformer::{ROPE_STORE_MAX, RopeStorePart};
use crate::ops::elementwise::BinaryOp;
use crate::ops::nn::{RopeCachedDesc, RopeDesc, WeightedSumDesc};
use crate::ops::reduce::ReduceOp;
use crate::runtime::eager::{
    Grad, floating_input, like, optr, output, ptr, stream_for, zero_grads,
};
use crate::runtime::elementwise::binary;
use crate::runtime::reduce::reduce;
use crate::runtime::stream::Stream;
use crate::runtime::tensor::Tensor;
use crate::runtime::tensor::same_device;
use crate::{Error, Result};

/// Rotary embedding (see [`RopeDesc`] for the exact formula); `inverse` gives the backward.
#[allow(clippy::too_many_arguments)]
pub fn rope(
    stream: Option<&Stream>,
    x: &Tensor,
    seq_dim: i64,
    base: f64,
    position_offset: i64,
    inverse: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = if inverse { "rope_backward" } else { "rope" };
    floating_input(op, x, "x")?;
    let d = RopeDesc::new(op, x.shape(), seq_dim, base, position_offset, inverse)?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().rope(s.raw(), x.dtype(), &d, x.ptr(), o.ptr())?;
    Ok(o)
}

/// Rotary embedding from cos/sin caches `[max_pos, rotary_dim / 2]` (see
/// [`RopeCachedDesc`]); `position_ids` (i32/i64, `[S]` or `[B, S]`) or `0..S`; `inverse`
/// gives the backward (the rotation by `-theta`).
#[allow(clippy::too_many_arguments)]
pub fn rope_cached(
    stream: Option<&Stream>,
    x: &Tensor,
    cos: &Tensor,
    sin: &Tensor,
    position_ids: Option<&Tensor>,
    seq_dim: i64,
    interleaved: bool,
    inverse: bool,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = if inverse {
        "rope_cached_backward"
    } else {
        "rope_cached"
    };
    floating_input(op, x, "x")?;
    like(op, x, cos, cos.shape(), "cos")?;
    like(op, x, sin, sin.shape(), "sin")?;
    if let Some(p) = position_ids {
        if !same_device(x.device(), p.device()) {
            return Err(Error::invalid(format!(
                "{op}: position_ids is on {}, x on {}",
                p.device().name(),
                x.device().name()
            )));
        }
        if !matches!(p.dtype(), DType::I32 | DType::I64) {
            return Err(Error::dtype(format!(
                "{op}: position_ids has dtype {}, expected i32 or i64",
                p.dtype()
            )));
        }
    }
    let d = RopeCachedDesc::new(
        op,
        x.shape(),
        cos.shape(),
        sin.shape(),
        position_ids.map(|p| p.shape()),
        seq_dim,
        interleaved,
        inverse,
    )?;
    let o = output(op, x, out, x.shape(), x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    s.device().rope_cached(
        s.raw(),
        x.dtype(),
        &d,
        x.ptr(),
        cos.ptr(),
        sin.ptr(),
        optr(position_ids),
        position_ids.map_or(DType::I64, |p| p.dtype()),
        o.ptr(),
    )?;
    Ok(o)
}

/// One tensor of [`rope_store`]: `x` rotated by [`rope_cached`] (`rotate`) or as it is, then
/// either returned (written into `out` when given) or, with `store: Some((cache, src_shape))`,
/// copied into `cache` by [`crate::runtime::data::index_copy`] at the positions along the
/// given dim, seen with the shape `src_shape`.
#[derive(Clone, Debug)]
pub struct RopeStoreItem<'a> {
    pub x: &'a Tensor,
    pub rotate: bool,
    pub store: Option<(&'a Tensor, Vec<usize>)>,
    pub out: Option<&'a Tensor>,
}

/// A decode step's new-token tensors (the executor's `rope+store`, made by
/// [`crate::graph::passes::fuse_rope_store`]): each item as [`RopeStoreItem`] says, with the
/// one set of caches `cos`/`sin`, `positions` and `seq_dim`/`interleaved` for the rotations
/// and `positions` along `dim` for the stores. Returns the results of the items that are not
/// stored (`None` for the others). Where the device runs
/// [`crate::device::TransformerOps::rope_store`] now (a GPU capturing a device graph) and
/// there is one position, one token and at least one rotated tensor, one pass: results
/// bit-equal to the ops'; elsewhere the ops one by one, in order (they check the positions).
#[allow(clippy::too_many_arguments)]
pub fn rope_store(
    stream: Option<&Stream>,
    cos: &Tensor,
    sin: &Tensor,
    positions: &Tensor,
    seq_dim: i64,
    interleaved: bool,
    dim: i64,
    items: &[RopeStoreItem],
) -> Result<Vec<Option<Tensor>>> {
    let op = "rope_store";
    let Some(first) = items.first() else {
        return Err(Error::invalid(format!("{op}: no tensors")));
    };
    if items.iter().any(|it| !it.rotate && it.store.is_none()) {
        return Err(Error::invalid(format!(
            "{op}: a tensor neither rotated nor stored"
        )));
    }
    let s = stream_for(op, stream, first.x)?;
    let dev = s.device();
    if items.len() <= ROPE_STORE_MAX && dev.rope_store_now(s.raw()) {
        let views: Vec<PlanItem> = items
            .iter()
            .map(|it| PlanItem {
                like: it.x,
                shape: it.x.shape(),
                dtype: it.x.dtype(),
                rotate: it.rotate,
                store: it.store.as_ref().map(|(c, sh)| (*c, sh.as_slice())),
                out: it.out,
            })
            .collect();
        let rope = (cos, sin, positions, seq_dim, interleaved, dim);
        if let Some((d, mut parts, outs)) = rope_store_plan(op, rope, &views)? {
            for (p, it) in parts.iter_mut().zip(items) {
                p.x = it.x.ptr();
            }
            dev.rope_store(
                s.raw(),
                first.x.dtype(),
                &d,
                cos.ptr(),
                sin.ptr(),
                positions.ptr(),
                positions.dtype(),
                &parts,
            )?;
            return Ok(outs);
        }
    }
    let mut res = vec![];
    for it in items {
        let y = if it.rotate {
            let out = if it.store.is_some() { None } else { it.out };
            rope_cached(
                Some(&s),
                it.x,
                cos,
                sin,
                Some(positions),
                seq_dim,
                interleaved,
                false,
                out,
            )?
        } else {
            it.x.clone()
        };
        match &it.store {
            Some((cache, shape)) => {
                crate::runtime::data::index_copy(
                    Some(&s),
                    cache,
                    dim,
                    positions,
                    &y.reshape(shape)?,
                )?;
                res.push(None);
            }
            None => res.push(Some(y)),
        }
    }
    Ok(res)
}

/// One tensor as [`rope_store_plan`] sees it: its shape and dtype (`like`: a tensor of its
/// device, for the outputs made), rotated or not, stored (a cache and the copied shape) or
/// returned (into `out` where given).
struct PlanItem<'a> {
    like: &'a Tensor,
    shape: &'a [usize],
    dtype: DType,
    rotate: bool,
    store: Option<(&'a Tensor, &'a [usize])>,
    out: Option<&'a Tensor>,
}

/// `(cos, sin, positions, seq_dim, interleaved, dim)` of a rope_store.
type RopeArgs<'a> = (&'a Tensor, &'a Tensor, &'a Tensor, i64, bool, i64);

/// rope_store's one pass for `items`, where it takes them (one position, one token, at least
/// one rotated tensor, one dtype, caches of the copied shapes): the rotated parts' desc, the
/// device parts (their `x` NULL: the caller's) and the results, `None` for a stored item
/// (the outputs made here). `Ok(None)`: the ops one by one instead.
#[allow(clippy::type_complexity)]
fn rope_store_plan(
    op: &str,
    (cos, sin, positions, seq_dim, interleaved, dim): RopeArgs,
    items: &[PlanItem],
) -> Result<Option<(RopeCachedDesc, Vec<RopeStorePart>, Vec<Option<Tensor>>)>> {
    let Some(first) = items.first() else {
        return Ok(None);
    };
    let dt = first.dtype;
    let mut desc: Option<RopeCachedDesc> = None;
    let mut fits = positions.numel() == 1
        && matches!(positions.dtype(), DType::I32 | DType::I64)
        && cos.dtype() == dt
        && sin.dtype() == dt
        && dt.is_float()
        && dt != DType::F64;
    for it in items.iter().filter(|it| it.rotate) {
        let d = RopeCachedDesc::new(
            op,
            it.shape,
            cos.shape(),
            sin.shape(),
            Some(positions.shape()),
            seq_dim,
            interleaved,
            false,
        );
        match d {
            Ok(d) if d.seq == 1 && desc.as_ref().is_none_or(|e| e.dim == d.dim) => desc = Some(d),
            _ => fits = false,
        }
    }
    let Some(d) = desc.filter(|_| fits) else {
        return Ok(None);
    };
    let mut parts = vec![];
    let mut outs = vec![];
    for it in items {
        let n: usize = it.shape.iter().product();
        if it.dtype != dt || !n.is_multiple_of(d.dim.max(1)) {
            return Ok(None);
        }
        let (y, cache) = match it.store {
            Some((c, shape)) => {
                let rank = c.shape().len() as i64;
                let cd = if dim < 0 { dim + rank } else { dim };
                let mut want = c.shape().to_vec();
                let ok = (0..rank).contains(&cd) && {
                    want[cd as usize] = 1;
                    want == shape && shape.iter().product::<usize>() == n
                };
                if !ok || c.dtype() != dt {
                    return Ok(None);
                }
                let t = c.shape()[cd as usize];
                let inner: usize = c.shape()[cd as usize + 1..].iter().product();
                outs.push(None);
                (c.ptr(), Some((t, inner.max(1))))
            }
            None => {
                let o = output(op, it.like, it.out, it.shape, dt)?;
                let p = o.ptr();
                outs.push(Some(o));
                (p, None)
            }
        };
        parts.push(RopeStorePart {
            x: crate::device::DevPtr::NULL,
            n,
            rotate: it.rotate,
            y,
            cache,
        });
    }
    Ok(Some((d, parts, outs)))
}

/// One tensor of [`linear_rope_store`]: product `product`'s result seen with shape
/// `x_shape`, rotated or not, stored into a cache (the copied shape) or returned (into `out`
/// where given).
pub struct LinearRopeItem<'a> {
    pub product: usize,
    pub x_shape: Vec<usize>,
    pub rotate: bool,
    pub store: Option<(&'a Tensor, Vec<usize>)>,
    pub out: Option<&'a Tensor>,
}

/// The executor's `linear+rope+store` ([`crate::graph::NodeOp::LinearRopeStore`]): the
/// grouped products of one row `x` ([`crate::runtime::blas::linear_group_norm`] with `norm`,
/// no residuals, no gate), each result then one item of [`rope_store`] (`items`: every
/// product exactly once). Returns the items' results as rope_store does. Where the device
/// runs [`crate::device::BlasOps::gemv_group_rope`] now (a GPU capturing a device graph,
/// rope_store's one pass taking the items), one pass with the bits of the two; elsewhere the
/// products, then rope_store. `weights_settled`: the caller's word that no work queued before
/// writes the weights, the cos/sin tables or the positions (a GPU kernel then reads them
/// before it waits for the previous one).
#[allow(clippy::too_many_arguments)]
pub fn linear_rope_store(
    stream: Option<&Stream>,
    x: &Tensor,
    norm: Option<(Option<&Tensor>, f64)>,
    ws: &[&Tensor],
    weights_settled: bool,
    rope: RopeArgs,
    items: &[LinearRopeItem],
) -> Result<Vec<Option<Tensor>>> {
    use crate::device::blas::{GemvInputNorm, GemvRope};
    let op = "linear_rope_store";
    let mut seen = vec![false; ws.len()];
    for it in items {
        match seen.get_mut(it.product) {
            Some(s) if !*s => *s = true,
            _ => {
                return Err(Error::invalid(format!(
                    "{op}: item of product {} (products: {}, each once)",
                    it.product,
                    ws.len()
                )));
            }
        }
    }
    if seen.iter().any(|s| !s) {
        return Err(Error::invalid(format!(
            "{op}: every product's result goes to one item"
        )));
    }
    let s = stream_for(op, stream, x)?;
    let dev = s.device();
    let k = x.shape().last().copied().unwrap_or(0);
    let (cos, sin, positions, ..) = rope;
    let one_row = k > 0 && x.numel() == k;
    let shapes_fit = items.iter().all(|it| {
        ws[it.product].shape().len() == 2
            && ws[it.product].shape()[1] == k
            && it.x_shape.iter().product::<usize>() == ws[it.product].shape()[0]
    });
    let weights_fit = ws
        .iter()
        .all(|w| w.dtype() == x.dtype() && w.same_device(x.device()));
    let norm_fits = norm.is_none_or(|(w, _)| {
        w.is_none_or(|w| w.shape() == [k] && w.dtype() == x.dtype() && w.same_device(x.device()))
    });
    if one_row
        && shapes_fit
        && weights_fit
        && norm_fits
        && items.len() <= ROPE_STORE_MAX
        && dev.rope_store_now(s.raw())
    {
        // the items in product order for the device, their results back in the items' order
        let mut order: Vec<usize> = (0..items.len()).collect();
        order.sort_by_key(|&i| items[i].product);
        let views: Vec<PlanItem> = order
            .iter()
            .map(|&i| {
                let it = &items[i];
                PlanItem {
                    like: x,
                    shape: &it.x_shape,
                    dtype: x.dtype(),
                    rotate: it.rotate,
                    store: it.store.as_ref().map(|(c, sh)| (*c, sh.as_slice())),
                    out: it.out,
                }
            })
            .collect();
        if let Some((d, parts, outs)) = rope_store_plan(op, rope, &views)? {
            let wptrs: Vec<_> = ws.iter().map(|w| w.ptr()).collect();
            let gr = GemvRope {
                desc: &d,
                cos: cos.ptr(),
                sin: sin.ptr(),
                positions: positions.ptr(),
                pos_dtype: positions.dtype(),
                parts: &parts,
            };
            let norm_dev = norm.map(|(w, eps)| GemvInputNorm {
                w: w.map_or(crate::device::DevPtr::NULL, |t| t.ptr()),
                eps,
            });
            let apart = outs
                .iter()
                .flatten()
                .all(|o| o.ptr() != x.ptr() && ws.iter().all(|w| w.ptr() != o.ptr()));
            if apart
                && dev.gemv_group_rope(
                    s.raw(),
                    x.dtype(),
                    x.ptr(),
                    k,
                    &wptrs,
                    norm_dev,
                    weights_settled,
                    &gr,
                )?
            {
                let mut res: Vec<Option<Tensor>> = vec![None; items.len()];
                for (slot, o) in order.iter().zip(outs) {
                    res[*slot] = o;
                }
                return Ok(res);
            }
        }
    }
    let ys = crate::runtime::blas::linear_group_norm(
        Some(&s),
        x,
        norm,
        ws,
        &[],
        false,
        &[],
        weights_settled,
    )?;
    let views = items
        .iter()
        .map(|it| ys[it.product].reshape(&it.x_shape))
        .collect::<Result<Vec<_>>>()?;
    let store_items: Vec<RopeStoreItem> = items
        .iter()
        .zip(&views)
        .map(|(it, v)| RopeStoreItem {
            x: v,
            rotate: it.rotate,
            store: it.store.clone(),
            out: it.out,
        })
        .collect();
    let (cos, sin, positions, seq_dim, interleaved, dim) = rope;
    rope_store(
        Some(&s),
        cos,
        sin,
        positions,
        seq_dim,
        interleaved,
        dim,
        &store_items,
    )
}

/// `w`'s shape with a trailing 1 (it broadcasts over x's last dimension).
fn col_shape(w: &Tensor) -> Vec<usize> {
    let mut c = w.shape().to_vec();
    c.push(1);
    c
}

/// `weighted_sum(x, w) = torch.sum(x * w[..., None], dim=-2)`: x `[..., N, D]`,
/// w `[..., N]`, result `[..., D]`. Floating dtypes; f64 through the f64 product and sum.
pub fn weighted_sum(
    stream: Option<&Stream>,
    x: &Tensor,
    w: &Tensor,
    out: Option<&Tensor>,
) -> Result<Tensor> {
    let op = "weighted_sum";
    floating_input(op, x, "x")?;
    like(op, x, w, w.shape(), "w")?;
    let (d, shape) = WeightedSumDesc::new(op, x.shape(), w.shape())?;
    let o = output(op, x, out, &shape, x.dtype())?;
    if o.numel() == 0 {
        return Ok(o);
    }
    let s = stream_for(op, stream, x)?;
    if d.n == 0 {
        s.device()
            .fill(s.raw(), o.dtype(), o.ptr(), o.numel(), 0.0)?;
        return Ok(o);
    }
    if x.dtype() == DType::F64 {
        // f64: `sum(x * w[..., None], -2)` through the f64 product and reduction.
        let xw = binary(Some(&s), BinaryOp::Mul, x, &w.reshape(&col_shape(w))?, None)?;
        reduce(Some(&s), ReduceOp::Sum, &xw, &[-2], false, Some(&o))?;
        return Ok(o);
    }
    s.device()
        .weighted_sum(s.raw(), x.dtype(), &d, x.ptr(), w.ptr(), o.ptr())?;
    Ok(o)
}

/// weighted_sum backward: `(dx, dw)` as requested.
pub fn weighted_sum_backward(
    stream: Option<&Stream>,
    dy: &Tensor,
    x: &Tensor,
    w: &Tensor,
    grads: [Grad<'_>; 2],
) -> Result<[Option<Tensor>; 2]> {
    let op = "weighted_sum_backward";
    floating_input(op, x, "x")?;
    like(op, x, w, w.shape(), "w")?;
    let (d, shape) = WeightedSumDesc::new(op, x.shape(), w.shape())?;
    like(op, x, dy, &shape, "dy")?;
    let dx = grads[0].make(op, x, x.shape())?;
    let dw = grads[1].make(op, x, w.shape())?;
    let s = stream_for(op, stream, x)?;
    if d.d == 0 {
        zero_grads(&s, &[&dw])?;
    } else if x.numel() > 0 && x.dtype() == DType::F64 {
        // f64: dx = w[..., None] * dy[..., None, :], dw = sum(x * dy[..., None, :], -1).
        let mut rs = shape.clone();
        rs.insert(rs.len() - 1, 1);
        let dyr = dy.reshape(&rs)?;
        if let Some(g) = &dx {
            binary(
                Some(&s),
                BinaryOp::Mul,
                &w.reshape(&col_shape(w))?,
                &dyr,
                Some(g),
            )?;
        }
        if let Some(g) = &dw {
            let xdy = binary(Some(&s), BinaryOp::Mul, x, &dyr, None)?;
            reduce(Some(&s), ReduceOp::Sum, &xdy, &[-1], false, Some(g))?;
        }
    } else if x.numel() > 0 {
        s.device().weighted_sum_backward(
            s.raw(),
            x.dtype(),
            &d,
            x.ptr(),
            w.ptr(),
            dy.ptr(),
            ptr(&dx),
            ptr(&dw),
        )?;
    }
    Ok([dx, dw])
}
