//! Times `add_f32_16M` (two 16M-element f32 inputs, one output: 3 x 64 MiB moved) on the CPU
//! device, the way `../shared/bench/cpu_anchors.py` times NumPy's `x + y`, and prints GB/s
//! for a fresh output per call (as NumPy allocates) and for a reused output.
//!
//! `cargo run --release --example add_bandwidth`

use rocm_backend::ops::elementwise::BinaryOp;
use rocm_backend::runtime::{DType, DeviceSpec, Tensor, device, elementwise};
use std::time::Instant;

fn main() -> rocm_backend::Result<()> {
    let dev = device(DeviceSpec::Cpu)?;
    let n = 1usize << 24;
    let x = Tensor::randn(dev.clone(), &[n], DType::F32, 1)?;
    let y = Tensor::randn(dev.clone(), &[n], DType::F32, 2)?;
    let out = Tensor::empty(dev.clone(), &[n], DType::F32)?;
    let bytes = 12.0 * n as f64;
    let best = |f: &dyn Fn() -> rocm_backend::Result<()>| -> rocm_backend::Result<f64> {
        for _ in 0..3 {
            f()?;
        }
        let mut best = f64::INFINITY;
        for _ in 0..20 {
            let t = Instant::now();
            f()?;
            best = best.min(t.elapsed().as_secs_f64());
        }
        Ok(best)
    };
    let fresh = best(&|| elementwise::binary(None, BinaryOp::Add, &x, &y, None).map(drop))?;
    let reused = best(&|| elementwise::binary(None, BinaryOp::Add, &x, &y, Some(&out)).map(drop))?;
    println!(
        "add_f32_16M threads={} fresh output: {:.3} ms {:.2} GB/s; reused output: {:.3} ms {:.2} GB/s",
        rocm_backend::device::cpu::par::num_threads(),
        fresh * 1e3,
        bytes / fresh / 1e9,
        reused * 1e3,
        bytes / reused / 1e9
    );
    Ok(())
}
