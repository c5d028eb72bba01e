//! The C ABI: the only `extern "C"` code. Each export checks its arguments, looks up its
//! handles, runs inside the panic boundary ([`guard`]) and returns an `rb_status`; the
//! message of the last failure is kept per thread for `rb_last_error_message`.
//!
//! No logic lives here: every export calls into [`crate::runtime`].
#![allow(non_camel_case_types)]

pub mod args;
pub mod comm;
pub mod device;
pub mod dlpack;
pub mod eager;
pub mod event;
pub mod graph;
pub mod handles;
pub mod memory;
pub mod module;
pub mod profiler;
pub mod raw;
pub mod status;
pub mod stream;
pub mod tensor;
pub mod tuning;
pub mod types;
pub mod util;

pub use eager::*;
pub use status::{guard, rb_status};
