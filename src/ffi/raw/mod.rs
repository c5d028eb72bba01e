//! The raw entry points, for frameworks that own their memory: `rb_blas_*` ([`blas`]),
//! `rb_dnn_*` ([`dnn`]) and `rb_kernel_*` ([`kernel`]). Each export reads its C arguments
//! (enum values, host arrays, pointers as [`DevPtr`]), looks its stream up (a NULL stream is
//! the current device's default stream) and calls one function of
//! [`crate::runtime::raw`], which checks the problem and runs it. The stream is looked up
//! before anything else is checked against the data, so a bad handle is reported even for an
//! empty problem. On a stream being recorded into a graph the call is checked and recorded
//! instead of run ([`on_stream`]; see `rb_graph_capture_begin`).

/// `dev_ptrs!(ptrs; x, w, y)`: rebinds each raw pointer argument as a [`DevPtr`] (`let x =
/// dp(x);` ...) and binds `ptrs` to their `(name, pointer)` list, which [`on_stream`] checks
/// against placeholders when the call is recorded.
macro_rules! dev_ptrs {
    ($list:ident; $($p:ident),+ $(,)?) => {
        $(let $p = dp($p);)+
        let $list = [$((stringify!($p), $p)),+];
    };
}

pub mod blas;
pub mod dnn;
pub mod kernel;

use crate::Result;
use crate::device::DevPtr;
use crate::ffi::stream::{rb_stream, stream_arg};
use crate::graph::capture;
use crate::runtime::Stream;
use std::sync::Arc;

/// Runs a raw call (`call`, its C name) on `stream`, or, when the stream is being recorded
/// into a graph, checks it and records it as a node bound to the caller's pointers
/// ([`capture::GraphHandle::record_raw`]; `ptrs` names the pointers for that check). `run`
/// owns its arguments (host arrays copied) so that it can run again at every graph run.
fn on_stream<F>(call: &str, stream: *mut rb_stream, ptrs: &[(&str, DevPtr)], run: F) -> Result<()>
where
    F: Fn(Option<&Stream>) -> Result<()> + Send + Sync + 'static,
{
    let s = stream_arg(stream)?;
    if let Some(st) = &s
        && let Some(g) = capture::raw_recorder(st)
    {
        return g.record_raw(st, call, ptrs, Arc::new(run));
    }
    run(s.as_deref())
}

/// A caller's device pointer (NULL stays NULL; the runtime checks it against the count).
fn dp<T>(p: *const T) -> DevPtr {
    DevPtr(p as usize as u64)
}

/// An optional device pointer: NULL is `None`.
fn dp_opt<T>(p: *const T) -> Option<DevPtr> {
    (!p.is_null()).then(|| dp(p))
}
