//! What the C ABI exposes, in safe Rust: device selection, streams, tensors and eager ops.

pub mod context;
pub mod conv;
pub mod data;
#[rustfmt::skip]
pub mod dispatch;
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

// TEMPORARY shims until the family split lands.
pub mod elementwise {
    pub use super::conv::{add_relu, mul_add};
    pub use super::eager::{binary, unary};
    pub use super::pointwise::*;
}
pub mod blas {
    pub use super::conv::{linear, linear_backward, matmul_bias_act};
    pub use super::eager::matmul;
}
pub mod pool {
    pub use super::conv::{adaptive_avg_pool2d, adaptive_avg_pool2d_backward, pool, pool_backward};
}
pub mod softmax {
    pub use super::nn::{log_softmax, log_softmax_backward, softmax, softmax_backward};
}
pub mod norm {
    pub use super::nn::*;
}
pub mod loss {
    pub use super::nn::{loss, loss_backward};
}
pub mod attention {
    pub use super::nn::{scaled_dot_product_attention, scaled_dot_product_attention_backward};
}
pub mod transformer {
    pub use super::nn::{rope, weighted_sum, weighted_sum_backward};
}
