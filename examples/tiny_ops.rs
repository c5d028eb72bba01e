//! Times small eager ops on the CPU device (the per-op cost a framework sees at small
//! batch): relu and a broadcast bias add on [32, 256] f32, in place and out of place.
//!
//! `cargo run --release --example tiny_ops [iters]`

use rocm_backend::ops::elementwise::{BinaryOp, UnaryOp};
use rocm_backend::runtime::{DType, DeviceSpec, Tensor, device, elementwise};
use std::time::Instant;

fn main() -> rocm_backend::Result<()> {
    let iters: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20000);
    let dev = device(DeviceSpec::Cpu)?;
    let h = Tensor::randn(dev.clone(), &[32, 256], DType::F32, 1)?;
    let o = Tensor::empty(dev.clone(), &[32, 256], DType::F32)?;
    let b = Tensor::randn(dev.clone(), &[256], DType::F32, 2)?;
    let time = |name: &str, f: &dyn Fn() -> rocm_backend::Result<()>| -> rocm_backend::Result<()> {
        for _ in 0..iters / 10 {
            f()?;
        }
        let t = Instant::now();
        for _ in 0..iters {
            f()?;
        }
        println!(
            "{name:34} {:8.2} us",
            t.elapsed().as_secs_f64() * 1e6 / iters as f64
        );
        Ok(())
    };
    time("relu [32,256] out of place", &|| {
        elementwise::unary(None, UnaryOp::Relu, &h, Some(&o)).map(drop)
    })?;
    time("relu [32,256] in place", &|| {
        elementwise::unary(None, UnaryOp::Relu, &o, Some(&o)).map(drop)
    })?;
    time("add [32,256] + [256] out of place", &|| {
        elementwise::binary(None, BinaryOp::Add, &h, &b, Some(&o)).map(drop)
    })?;
    time("add [32,256] + [32,256]", &|| {
        elementwise::binary(None, BinaryOp::Add, &h, &h, Some(&o)).map(drop)
    })?;
    Ok(())
}
