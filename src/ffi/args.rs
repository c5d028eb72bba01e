//! The conversions of C arguments into their Rust values, one function per kind of
//! parameter of the op table (`crate::ops::table::Arg`): the generated eager exports call
//! these, so every op reads a given kind of argument the same way and fails with the same
//! message. Only argument checking lives here; everything an op means is in the runtime.

use super::handles::arc;
use super::tensor::rb_tensor;
use super::types::{rb_conv_params, rb_conv_params_ex, rb_pool_params, rb_pool_params_ex};
use super::util::null;
use crate::base::dtype::DType;
use crate::base::shape;
use crate::ops::conv::{Activation, ConvAttrs, ConvAttrsEx, Layout};
use crate::ops::elementwise::{CompareOp, UnaryOp};
use crate::ops::nn::{Causal, Reduction};
use crate::ops::pool::{PoolAttrs, PoolAttrsEx, PoolKind};
use crate::runtime::Tensor;
use crate::{Error, Result};
use std::sync::Arc;

/// A 0/1 flag.
pub fn flag(v: i32, arg: &str) -> Result<bool> {
    match v {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(Error::invalid(format!("{arg}={v} must be 0 or 1"))),
    }
}

/// An `int64_t` count that must not be negative.
pub fn non_negative(v: i64, arg: &str) -> Result<usize> {
    usize::try_from(v).map_err(|_| Error::invalid(format!("{arg}={v} is negative")))
}

/// An optimizer step count (at least 1).
pub fn step(v: i64, op: &str) -> Result<u64> {
    u64::try_from(v)
        .ok()
        .filter(|s| *s >= 1)
        .ok_or_else(|| Error::invalid(format!("{op}: step={v} must be >= 1")))
}

/// A clamp bound: any float but NaN.
pub fn bound(v: f64, op: &str) -> Result<f64> {
    if v.is_nan() {
        Err(Error::invalid(format!("{op}: min and max must not be NaN")))
    } else {
        Ok(v)
    }
}

/// An `rb_dtype`.
pub fn dtype(v: i32, op: &str) -> Result<DType> {
    DType::from_i32(v).map_err(|e| e.context(op))
}

/// An `rb_reduction`.
pub fn reduction(v: i32, op: &str) -> Result<Reduction> {
    Reduction::from_i32(v, op)
}

/// An `rb_causal_mode`.
pub fn causal(v: i32, op: &str) -> Result<Causal> {
    Causal::from_i32(v, op)
}

/// An `rb_gelu_approximate`: the gelu it selects.
pub fn gelu(v: i32) -> Result<UnaryOp> {
    match v {
        0 => Ok(UnaryOp::Gelu { tanh: false }),
        1 => Ok(UnaryOp::Gelu { tanh: true }),
        v => Err(Error::invalid(format!(
            "gelu: approximate={v} is not an rb_gelu_approximate (0 none, 1 tanh)"
        ))),
    }
}

/// An `rb_scatter_reduce`.
pub fn scatter_reduce(v: i32, op: &str) -> Result<crate::ops::data::ScatterReduce> {
    crate::ops::data::ScatterReduce::from_i32(v, op)
}

/// An `rb_compare_op`.
pub fn compare(v: i32, op: &str) -> Result<CompareOp> {
    Ok(match v {
        0 => CompareOp::Eq,
        1 => CompareOp::Ne,
        2 => CompareOp::Lt,
        3 => CompareOp::Le,
        4 => CompareOp::Gt,
        5 => CompareOp::Ge,
        v => {
            return Err(Error::invalid(format!(
                "{op}: op={v} is not an rb_compare_op (0 eq .. 5 ge)"
            )));
        }
    })
}

/// An `rb_activation`.
pub fn activation(v: i32) -> Result<Activation> {
    Ok(match v {
        0 => Activation::None,
        1 => Activation::Relu,
        2 => Activation::Gelu { tanh: false },
        3 => Activation::Gelu { tanh: true },
        _ => {
            return Err(Error::invalid(format!(
                "activation={v} is not an rb_activation (0..3)"
            )));
        }
    })
}

/// An `rb_pool_mode`.
pub fn pool_mode(v: i32) -> Result<PoolKind> {
    Ok(match v {
        0 => PoolKind::Max,
        1 => PoolKind::Avg {
            count_include_pad: true,
        },
        2 => PoolKind::Avg {
            count_include_pad: false,
        },
        _ => {
            return Err(Error::invalid(format!(
                "mode={v} is not an rb_pool_mode (0..2)"
            )));
        }
    })
}

/// Dimension indices (negative counts from the end): `len` values at `p` (NULL allowed when
/// `len` is 0).
///
/// # Safety
/// `p` is NULL or readable for `len` values.
pub unsafe fn dims<'a>(p: *const i64, len: usize) -> Result<&'a [i64]> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(null("dims"));
    }
    if len > shape::MAX_DIMS {
        return Err(Error::invalid(format!("dims: {len} entries is too many")));
    }
    // SAFETY: caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// Extents: `len` non-negative values at `p` (NULL allowed when `len` is 0).
pub use super::util::shape_arg as shape;

/// A nullable `const double *`.
///
/// # Safety
/// `p` is NULL or points to a readable double.
pub unsafe fn opt_f64(p: *const f64) -> Option<f64> {
    if p.is_null() {
        None
    } else {
        // SAFETY: caller's contract.
        Some(unsafe { *p })
    }
}

/// A list of `len` tensor handles (at least one).
///
/// # Safety
/// `p` is NULL or readable for `len` handles.
pub unsafe fn tensor_list(
    p: *const *const rb_tensor,
    len: usize,
    arg: &str,
    op: &str,
) -> Result<Vec<Arc<Tensor>>> {
    if len == 0 {
        return Err(Error::invalid(format!(
            "{op}: the list of tensors is empty"
        )));
    }
    if p.is_null() {
        return Err(null(arg));
    }
    // SAFETY: caller's contract.
    let hs = unsafe { std::slice::from_raw_parts(p, len) };
    hs.iter()
        .enumerate()
        .map(|(i, &h)| arc(h, &format!("{arg}[{i}]")))
        .collect()
}

fn ndim(v: i32) -> Result<usize> {
    match v {
        1..=3 => Ok(v as usize),
        _ => Err(Error::invalid(format!("params.ndim={v} is not 1, 2 or 3"))),
    }
}

fn list(v: &[i64; 3], nd: usize, name: &str) -> Result<Vec<usize>> {
    v[..nd]
        .iter()
        .map(|&x| {
            usize::try_from(x)
                .map_err(|_| Error::invalid(format!("params.{name}: {x} is negative")))
        })
        .collect()
}

/// An `rb_conv_params`: the attributes and the spatial rank.
///
/// # Safety
/// `p` is NULL or points to an `rb_conv_params`.
pub unsafe fn conv_params(p: *const rb_conv_params) -> Result<(ConvAttrs, usize)> {
    if p.is_null() {
        return Err(null("params"));
    }
    // SAFETY: caller's contract.
    let p = unsafe { *p };
    let nd = ndim(p.ndim)?;
    let groups = usize::try_from(p.groups)
        .map_err(|_| Error::invalid(format!("params.groups={} is negative", p.groups)))?;
    Ok((
        ConvAttrs {
            stride: list(&p.stride, nd, "stride")?,
            padding: list(&p.padding, nd, "padding")?,
            dilation: list(&p.dilation, nd, "dilation")?,
            groups,
            output_padding: list(&p.output_padding, nd, "output_padding")?,
        },
        nd,
    ))
}

/// An `rb_pool_params`: the attributes and the spatial rank.
///
/// # Safety
/// `p` is NULL or points to an `rb_pool_params`.
pub unsafe fn pool_params(p: *const rb_pool_params) -> Result<(PoolAttrs, usize)> {
    if p.is_null() {
        return Err(null("params"));
    }
    // SAFETY: caller's contract.
    let p = unsafe { *p };
    let nd = ndim(p.ndim)?;
    Ok((
        PoolAttrs {
            kernel: list(&p.kernel, nd, "kernel")?,
            stride: list(&p.stride, nd, "stride")?,
            padding: list(&p.padding, nd, "padding")?,
            dilation: list(&p.dilation, nd, "dilation")?,
            ceil_mode: p.ceil_mode != 0,
        },
        nd,
    ))
}

/// An `rb_conv_params_ex`: the attributes (`padding` = `pad_before`) and the spatial rank.
///
/// # Safety
/// `p` is NULL or points to an `rb_conv_params_ex`.
pub unsafe fn conv_params_ex(p: *const rb_conv_params_ex) -> Result<(ConvAttrsEx, usize)> {
    if p.is_null() {
        return Err(null("params"));
    }
    // SAFETY: caller's contract.
    let p = unsafe { *p };
    let nd = ndim(p.ndim)?;
    let groups = usize::try_from(p.groups)
        .map_err(|_| Error::invalid(format!("params.groups={} is negative", p.groups)))?;
    Ok((
        ConvAttrsEx {
            attrs: ConvAttrs {
                stride: list(&p.stride, nd, "stride")?,
                padding: list(&p.pad_before, nd, "pad_before")?,
                dilation: list(&p.dilation, nd, "dilation")?,
                groups,
                output_padding: list(&p.output_padding, nd, "output_padding")?,
            },
            pad_after: list(&p.pad_after, nd, "pad_after")?,
            layout: Layout::from_i32(p.layout, "params")?,
        },
        nd,
    ))
}

/// An `rb_pool_params_ex`: the attributes (`padding` = `pad_before`) and the spatial rank.
///
/// # Safety
/// `p` is NULL or points to an `rb_pool_params_ex`.
pub unsafe fn pool_params_ex(p: *const rb_pool_params_ex) -> Result<(PoolAttrsEx, usize)> {
    if p.is_null() {
        return Err(null("params"));
    }
    // SAFETY: caller's contract.
    let p = unsafe { *p };
    let nd = ndim(p.ndim)?;
    Ok((
        PoolAttrsEx {
            attrs: PoolAttrs {
                kernel: list(&p.kernel, nd, "kernel")?,
                stride: list(&p.stride, nd, "stride")?,
                padding: list(&p.pad_before, nd, "pad_before")?,
                dilation: list(&p.dilation, nd, "dilation")?,
                ceil_mode: p.ceil_mode != 0,
            },
            pad_after: list(&p.pad_after, nd, "pad_after")?,
            divisor_override: (p.divisor_override != 0).then_some(p.divisor_override),
            layout: Layout::from_i32(p.layout, "params")?,
        },
        nd,
    ))
}
