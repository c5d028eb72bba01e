//! Times softmax over the rows of a 4096x1024 f32 tensor on the CPU device, the
//! `softmax_f32_4096x1024` case of ../shared/bench/cpu_anchors.py (GB/s = 8 * numel / s:
//! one read and one write of every element).
//!
//! `cargo run --release --example softmax_bench [iters] [rows]`; RB_NUM_THREADS sets the
//! threads. A small `rows` (e.g. 64: 256 KiB, cache-resident) measures the kernel's compute
//! throughput apart from memory bandwidth.

use rocm_backend::runtime::context::{self, DeviceSpec};
use rocm_backend::runtime::{DType, Tensor, softmax};
use std::time::Instant;

fn main() -> rocm_backend::Result<()> {
    let iters: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let rows: usize = std::env::args()
        .nth(2)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4096);
    let dev = context::device(DeviceSpec::Cpu)?;
    for (name, cols, log) in [
        (format!("softmax_f32_{rows}x1024"), 1024usize, false),
        (format!("log_softmax_f32_{rows}x1024"), 1024, true),
    ] {
        let x = Tensor::randn(dev.clone(), &[rows, cols], DType::F32, 1)?;
        let y = Tensor::empty(dev.clone(), &[rows, cols], DType::F32)?;
        let run = || {
            if log {
                softmax::log_softmax(None, &x, -1, Some(&y))
            } else {
                softmax::softmax(None, &x, -1, Some(&y))
            }
        };
        for _ in 0..10 {
            run()?;
        }
        let mut best = f64::INFINITY;
        let mut total = 0.0;
        for _ in 0..iters {
            let t = Instant::now();
            run()?;
            let s = t.elapsed().as_secs_f64();
            best = best.min(s);
            total += s;
        }
        let mean = total / iters as f64;
        let bytes = 8.0 * (rows * cols) as f64;
        println!(
            "{name}: mean {:.3} ms ({:.1} GB/s), best {:.3} ms ({:.1} GB/s), {} threads",
            mean * 1e3,
            bytes / mean / 1e9,
            best * 1e3,
            bytes / best / 1e9,
            rocm_backend::device::cpu::par::num_threads()
        );
    }
    Ok(())
}
