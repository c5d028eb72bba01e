//! What the C ABI exposes, in safe Rust: device selection, streams, tensors and eager ops.

pub mod context;
pub mod conv;
pub mod data;
pub mod eager;
pub mod event;
pub mod memory;
pub mod module;
pub mod nn;
pub mod optim;
pub mod pointwise;
pub mod raw;
pub mod reduce;
pub mod stream;
pub mod tensor;

pub use crate::base::dtype::DType;
pub use context::{DeviceSpec, current_device, device, set_device};
pub use stream::Stream;
pub use tensor::Tensor;
