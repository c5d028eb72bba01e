//! What every layer shares, at the bottom of the crate: dtypes, the one error type, shapes
//! and broadcasting. It imports nothing from the rest of the crate.

pub mod dtype;
pub mod error;
pub mod shape;

pub use dtype::DType;
pub use error::{Error, ErrorKind, Result};
