//! The C ABI: the only `extern "C"` code. Each export checks its arguments, looks up its
//! handles, runs inside the panic boundary ([`guard`]) and returns an `rb_status`; the
//! message of the last failure is kept per thread for `rb_last_error_message`.
//!
//! No logic lives here: every export calls into [`crate::runtime`].
#![allow(non_camel_case_types)]

pub mod data;
pub mod device;
pub mod dnn;
pub mod event;
pub mod handles;
pub mod kernel_nn;
pub mod memory;
pub mod module;
pub mod nn;
pub mod ops;
pub mod optim;
pub mod pointwise;
pub mod profiler;
pub mod raw;
pub mod reduce;
pub mod status;
pub mod stream;
pub mod tensor;
pub mod util;

pub use status::{guard, rb_status};
