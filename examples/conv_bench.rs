//! Times conv3x3_float32_8x64x56x56 (the ONNX Runtime anchor's problem: N=8, C=K=64,
//! 56x56, 3x3, padding 1, stride 1) and a few related convolutions on the CPU device.
//! `cargo run --release --example conv_bench [iters]`

use rocm_backend::device::{GemmDesc, Transpose};
use rocm_backend::ops::conv::{Activation, ConvAttrs};
use rocm_backend::runtime::context::{self, DeviceSpec};
use rocm_backend::runtime::conv as nn;
use rocm_backend::runtime::{DType, Tensor};
use std::time::Instant;

fn main() {
    let iters: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let dev = context::device(DeviceSpec::Cpu).unwrap();
    let cases: [(&str, [usize; 4], [usize; 4], usize); 3] = [
        (
            "conv3x3_float32_8x64x56x56",
            [8, 64, 56, 56],
            [64, 64, 3, 3],
            1,
        ),
        (
            "conv1x1_float32_8x64x56x56",
            [8, 64, 56, 56],
            [64, 64, 1, 1],
            0,
        ),
        (
            "conv3x3_float32_1x64x56x56",
            [1, 64, 56, 56],
            [64, 64, 3, 3],
            1,
        ),
    ];
    for (name, xs, ws, pad) in cases {
        let x = Tensor::randn(dev.clone(), &xs, DType::F32, 1).unwrap();
        let w = Tensor::randn(dev.clone(), &ws, DType::F32, 2).unwrap();
        let a = ConvAttrs {
            padding: vec![pad],
            ..ConvAttrs::default()
        };
        let y = nn::conv(None, &x, &w, None, &a, 2, Activation::None, None).unwrap();
        for _ in 0..3 {
            nn::conv(None, &x, &w, None, &a, 2, Activation::None, Some(&y)).unwrap();
        }
        let t = Instant::now();
        for _ in 0..iters {
            nn::conv(None, &x, &w, None, &a, 2, Activation::None, Some(&y)).unwrap();
        }
        let s = t.elapsed().as_secs_f64() / iters as f64;
        let flops = 2.0 * (y.numel() * ws[1] * ws[2] * ws[3]) as f64;
        println!("{name}: {:.3} ms, {:.1} GFLOP/s", s * 1e3, flops / s / 1e9);
    }
    // The GEMM one image of the 3x3 case makes (m=3136, n=64, k=576), alone, for comparison.
    let (m, n, k) = (3136usize, 64usize, 576usize);
    let a = Tensor::randn(dev.clone(), &[m * k], DType::F32, 3).unwrap();
    let b = Tensor::randn(dev.clone(), &[k * n], DType::F32, 4).unwrap();
    let c = Tensor::randn(dev.clone(), &[m * n], DType::F32, 5).unwrap();
    let desc = GemmDesc {
        dtype: DType::F32,
        trans_a: Transpose::No,
        trans_b: Transpose::No,
        m,
        n,
        k,
        alpha: 1.0,
        a: a.ptr(),
        lda: m,
        b: b.ptr(),
        ldb: k,
        beta: 0.0,
        c: c.ptr(),
        ldc: m,
        batch: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    };
    let t = Instant::now();
    for _ in 0..iters * 8 {
        dev.gemm(Default::default(), &desc).unwrap();
    }
    let s = t.elapsed().as_secs_f64() / (iters * 8) as f64;
    println!(
        "gemm_3136x64x576: {:.3} ms, {:.1} GFLOP/s",
        s * 1e3,
        2.0 * (m * n * k) as f64 / s / 1e9
    );
}
