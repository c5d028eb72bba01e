//! What every eager op on tensors shares (the ops themselves live in one file per op family:
//! [`super::elementwise`], [`super::blas`], [`super::conv`], [`super::pool`],
//! [`super::softmax`], [`super::norm`], [`super::loss`], [`super::attention`],
//! [`super::transformer`], [`super::reduce`], [`super::data`], [`super::optim`]): validate
//! against the op contract, pick or check the output, and call the device. `out = None`
//! allocates the result; `Some(t)` writes into `t`, which must have the result's shape, dtype
//! and device. Backward ops with several gradients take a [`Grad`] per gradient.

use crate::base::dtype::DType;
use crate::device::DevPtr;
use crate::runtime::stream::Stream;
use crate::runtime::tensor::{Tensor, same_device};
use crate::{Error, Result};

/// The stream to run on: the given one (which must be on the inputs' device) or the
/// device's default stream.
pub(crate) fn stream_for(op: &str, stream: Option<&Stream>, t: &Tensor) -> Result<Stream> {
    match stream {
        Some(s) if !same_device(s.device(), t.device()) => Err(Error::invalid(format!(
            "{op}: the stream is on {} but the tensors are on {}",
            s.device().name(),
            t.device().name()
        ))),
        Some(s) => Ok(Stream::borrowed(s.device().clone(), s.raw())),
        None => Ok(Stream::default_for(t.device().clone())),
    }
}

pub(crate) fn check_same(op: &str, a: &Tensor, b: &Tensor) -> Result<()> {
    if !same_device(a.device(), b.device()) {
        return Err(Error::invalid(format!(
            "{op}: operands are on different devices ({} and {})",
            a.device().name(),
            b.device().name()
        )));
    }
    if a.dtype() != b.dtype() {
        return Err(Error::dtype(format!(
            "{op}: operands have different dtypes ({} and {})",
            a.dtype(),
            b.dtype()
        )));
    }
    Ok(())
}

/// Returns `out` after checking it, or a new tensor of `shape` and `dtype`.
pub fn output(
    op: &str,
    like: &Tensor,
    out: Option<&Tensor>,
    shape: &[usize],
    dtype: DType,
) -> Result<Tensor> {
    match out {
        None => Tensor::empty(like.device().clone(), shape, dtype),
        Some(o) => {
            if !same_device(o.device(), like.device()) {
                return Err(Error::invalid(format!(
                    "{op}: out is on {}, inputs on {}",
                    o.device().name(),
                    like.device().name()
                )));
            }
            if o.shape() != shape {
                return Err(Error::shape(format!(
                    "{op}: out has shape {:?}, the result has {shape:?}",
                    o.shape()
                )));
            }
            if o.dtype() != dtype {
                return Err(Error::dtype(format!(
                    "{op}: out has dtype {}, the result has {dtype}",
                    o.dtype()
                )));
            }
            Ok(o.clone())
        }
    }
}

/// Where one gradient of a backward op goes.
#[derive(Clone, Copy, Debug)]
pub enum Grad<'a> {
    /// Not computed.
    Skip,
    /// Into a new tensor.
    New,
    /// Into this tensor (checked like `out`).
    Into(&'a Tensor),
}

impl<'a> Grad<'a> {
    pub(crate) fn make(self, op: &str, like: &Tensor, shape: &[usize]) -> Result<Option<Tensor>> {
        match self {
            Grad::Skip => Ok(None),
            Grad::New => output(op, like, None, shape, like.dtype()).map(Some),
            Grad::Into(t) => output(op, like, Some(t), shape, like.dtype()).map(Some),
        }
    }
}

pub(crate) fn ptr(t: &Option<Tensor>) -> DevPtr {
    t.as_ref().map_or(DevPtr::NULL, |t| t.ptr())
}

pub(crate) fn optr(t: Option<&Tensor>) -> DevPtr {
    t.map_or(DevPtr::NULL, |t| t.ptr())
}

/// A floating input (f32, f16, bf16 or f64): else DTYPE_MISMATCH naming the op and argument.
pub(crate) fn floating_input(op: &str, x: &Tensor, arg: &str) -> Result<()> {
    if !x.dtype().is_floating() {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {}, not f32, f16, bf16 or f64",
            x.dtype()
        )));
    }
    Ok(())
}

/// `t` must be on `x`'s device with `x`'s dtype and the given shape.
pub(crate) fn like(op: &str, x: &Tensor, t: &Tensor, shape: &[usize], arg: &str) -> Result<()> {
    if !same_device(x.device(), t.device()) {
        return Err(Error::invalid(format!(
            "{op}: {arg} is on {}, the input on {}",
            t.device().name(),
            x.device().name()
        )));
    }
    if t.dtype() != x.dtype() {
        return Err(Error::dtype(format!(
            "{op}: {arg} has dtype {}, the input {}",
            t.dtype(),
            x.dtype()
        )));
    }
    if t.shape() != shape {
        return Err(Error::shape(format!(
            "{op}: {arg} has shape {:?}, expected {shape:?}",
            t.shape()
        )));
    }
    Ok(())
}

pub(crate) fn opt_like(
    op: &str,
    x: &Tensor,
    t: Option<&Tensor>,
    shape: &[usize],
    arg: &str,
) -> Result<()> {
    match t {
        Some(t) => like(op, x, t, shape, arg),
        None => Ok(()),
    }
}

/// Zero-fills gradients of parameters when the input is empty (nothing to sum).
pub(crate) fn zero_grads(s: &Stream, grads: &[&Option<Tensor>]) -> Result<()> {
    for g in grads.iter().copied().flatten() {
        if g.numel() > 0 {
            s.device()
                .fill(s.raw(), g.dtype(), g.ptr(), g.numel(), 0.0)?;
        }
    }
    Ok(())
}

pub(crate) fn float_only(op: &str, t: &Tensor) -> Result<()> {
    if !t.dtype().is_float() {
        return Err(Error::dtype(format!(
            "{op}: dtype {} is not f32, f16 or bf16",
            t.dtype()
        )));
    }
    Ok(())
}

/// [`float_only`] with f64 too (the ops that compute f64 in f64).
pub(crate) fn floating_only(op: &str, t: &Tensor) -> Result<()> {
    if !t.dtype().is_floating() {
        return Err(Error::dtype(format!(
            "{op}: dtype {} is not f32, f16, bf16 or f64",
            t.dtype()
        )));
    }
    Ok(())
}

pub(crate) fn check_bias(op: &str, x: &Tensor, b: Option<&Tensor>, n: usize) -> Result<()> {
    if let Some(b) = b {
        check_same(op, x, b)?;
        if b.shape() != [n] {
            return Err(Error::shape(format!(
                "{op}: bias has shape {:?}, expected [{n}]",
                b.shape()
            )));
        }
    }
    Ok(())
}

pub(crate) fn check_ndim(op: &str, ndim: usize) -> Result<()> {
    if !(1..=3).contains(&ndim) {
        return Err(Error::invalid(format!(
            "{op}: {ndim} spatial dimensions, expected 1, 2 or 3"
        )));
    }
    Ok(())
}

/// PyTorch's rule for writing into a given output: an op whose output may not alias its
/// inputs fails when the destination shares any byte with an input (INVALID_ARGUMENT,
/// "output overlaps input 'x'"); an elementwise op (`exact_ok`) may write into an input it
/// reads element by element, if the destination is exactly that input (same address, shape
/// and dtype), but not into one it only partly overlaps.
pub fn check_overlap(
    op: &str,
    out: &Tensor,
    inputs: &[(&str, Option<&Tensor>)],
    exact_ok: bool,
) -> Result<()> {
    if out.nbytes() == 0 {
        return Ok(());
    }
    let (o0, o1) = (out.ptr().0, out.ptr().0 + out.nbytes() as u64);
    for (name, t) in inputs {
        let Some(t) = t else { continue };
        if t.nbytes() == 0 || !same_device(t.device(), out.device()) {
            continue;
        }
        let (i0, i1) = (t.ptr().0, t.ptr().0 + t.nbytes() as u64);
        if i0 >= o1 || o0 >= i1 {
            continue;
        }
        let exact = i0 == o0 && t.shape() == out.shape() && t.dtype() == out.dtype();
        if !(exact_ok && exact) {
            return Err(Error::invalid(format!(
                "{op}: output overlaps input '{name}'"
            )));
        }
    }
    Ok(())
}
