//! rocm-backend: a GPU compute backend for deep-learning frameworks.
//!
//! The crate is layered as `../shared/DESIGN.md` describes; data flows down only:
//!
//! * [`ffi`] — the C ABI, the only `extern "C"` code: argument checks, handle look-up, the
//!   panic boundary, status codes and the per-thread last-error message.
//! * [`runtime`] — what the ABI exposes, in safe Rust: devices, streams, tensors, eager ops.
//! * [`ops`] — the op contract: shapes, dtypes, broadcasting, attributes, shape inference and
//!   the float64 reference the tests compare against.
//! * [`device`] — one trait per op family, which every device implements; `cpu` is the
//!   embedded default. An op family has the same file name in `runtime`, `device` and each
//!   device (`runtime/conv.rs`, `device/conv.rs`, `cpu/conv.rs`, `gpu/conv.rs`).
//! * [`base`] — what every layer shares: dtypes, the error type, shapes and broadcasting.
//!   Nothing in `base`, `ops` or `device` imports from a layer above it (`tests/layering.rs`).

pub mod base;
pub mod device;
pub mod ffi;
pub mod graph;
pub mod ops;
pub mod runtime;

pub use base::error::{Error, ErrorKind, Result};
