//! Times the pieces of `mlp_fwd_b32` (784-256-128-10, batch 32, f32) on the CPU device: each
//! layer's matmul alone, the fused matmul+bias(+relu), and the whole forward both ways.
//!
//! `cargo run --release --example mlp_bench [iters]`; RB_NUM_THREADS sets the threads.

use rocm_backend::ops::conv::Activation;
use rocm_backend::ops::elementwise::{BinaryOp, UnaryOp};
use rocm_backend::runtime::{DType, DeviceSpec, Tensor, blas, device, elementwise};
use std::time::Instant;

fn main() -> rocm_backend::Result<()> {
    let iters: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let dev = device(DeviceSpec::Cpu)?;
    let dims = [784usize, 256, 128, 10];
    let x = Tensor::randn(dev.clone(), &[32, 784], DType::F32, 1)?;
    let mut ws = Vec::new();
    for l in 0..3 {
        let w = Tensor::randn(
            dev.clone(),
            &[dims[l], dims[l + 1]],
            DType::F32,
            10 + l as u64,
        )?;
        let b = Tensor::randn(dev.clone(), &[dims[l + 1]], DType::F32, 20 + l as u64)?;
        let h = Tensor::empty(dev.clone(), &[32, dims[l + 1]], DType::F32)?;
        let hin = Tensor::randn(dev.clone(), &[32, dims[l]], DType::F32, 30 + l as u64)?;
        ws.push((w, b, h, hin));
    }
    let time = |name: &str, f: &dyn Fn() -> rocm_backend::Result<()>| -> rocm_backend::Result<()> {
        for _ in 0..iters / 10 {
            f()?;
        }
        let mut ts = Vec::with_capacity(iters);
        for _ in 0..iters {
            let t = Instant::now();
            f()?;
            ts.push(t.elapsed().as_secs_f64() * 1e6);
        }
        ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!(
            "{name:34} median {:8.1} us  best {:8.1} us",
            ts[iters / 2],
            ts[0]
        );
        Ok(())
    };
    time("for_range(2 chunks) after 5 us idle", &|| {
        let t = Instant::now();
        while t.elapsed().as_micros() < 5 {}
        rocm_backend::device::cpu::par::for_range(2, 1, |_, _| {});
        Ok(())
    })?;
    for (l, (w, b, h, hin)) in ws.iter().enumerate() {
        let flops = 2.0 * 32.0 * (dims[l] * dims[l + 1]) as f64;
        println!("layer {l}: {} MFLOP", flops / 1e6);
        time(&format!("  matmul {}x{}", dims[l], dims[l + 1]), &|| {
            blas::matmul(None, hin, w, Some(h)).map(drop)
        })?;
        time("  add bias", &|| {
            elementwise::binary(None, BinaryOp::Add, h, b, Some(h)).map(drop)
        })?;
        time("  relu", &|| {
            elementwise::unary(None, UnaryOp::Relu, h, Some(h)).map(drop)
        })?;
        time("  matmul_bias_act(relu)", &|| {
            blas::matmul_bias_act(None, hin, w, b, Activation::Relu, Some(h)).map(drop)
        })?;
    }
    time("mlp: matmul + add + relu", &|| {
        let mut prev = &x;
        for (l, (w, b, h, _)) in ws.iter().enumerate() {
            blas::matmul(None, prev, w, Some(h))?;
            elementwise::binary(None, BinaryOp::Add, h, b, Some(h))?;
            if l < 2 {
                elementwise::unary(None, UnaryOp::Relu, h, Some(h))?;
            }
            prev = h;
        }
        Ok(())
    })?;
    // PyTorch's layout: weights [out, in] through linear (x · Wᵀ + b) and relu.
    let mut lws = Vec::new();
    for l in 0..3 {
        let w = Tensor::randn(
            dev.clone(),
            &[dims[l + 1], dims[l]],
            DType::F32,
            40 + l as u64,
        )?;
        lws.push(w);
    }
    time("mlp: linear + relu ([out, in] weights)", &|| {
        let mut prev = &x;
        for (l, ((_, b, h, _), w)) in ws.iter().zip(&lws).enumerate() {
            blas::linear(None, prev, w, Some(b), Some(h))?;
            if l < 2 {
                elementwise::unary(None, UnaryOp::Relu, h, Some(h))?;
            }
            prev = h;
        }
        Ok(())
    })?;
    time("linear layer 0 ([256, 784] weights)", &|| {
        blas::linear(None, &x, &lws[0], Some(&ws[0].1), Some(&ws[0].2)).map(drop)
    })?;
    time("mlp: matmul_bias_act", &|| {
        let mut prev = &x;
        for (l, (w, b, h, _)) in ws.iter().enumerate() {
            let act = if l < 2 {
                Activation::Relu
            } else {
                Activation::None
            };
            blas::matmul_bias_act(None, prev, w, b, act, Some(h))?;
            prev = h;
        }
        Ok(())
    })
}
