//! What the C ABI exposes, in safe Rust: device selection, streams, tensors and eager ops.

pub mod context;
pub mod dtype;
pub mod eager;
pub mod error;
pub mod event;
pub mod memory;
pub mod module;
pub mod stream;
pub mod tensor;

pub use context::{DeviceSpec, current_device, device, set_device};
pub use dtype::DType;
pub use stream::Stream;
pub use tensor::Tensor;
