//! The op contract (DESIGN §5): shapes, dtypes, broadcasting, attributes, shape inference,
//! and the float64 reference every device is tested against. Semantics are PyTorch's.

pub mod conv;
pub mod data;
pub mod elementwise;
pub mod fused;
pub mod matmul;
pub mod nn;
pub mod optim;
pub mod pool;
pub mod random;
pub mod reduce;
#[rustfmt::skip]
pub mod registry;
pub mod support;
pub mod table;
