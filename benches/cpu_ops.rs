//! Criterion benches of the CPU device's hot ops (GEMM, a broadcasting add, softmax, a 3x3
//! convolution). `cargo bench --bench cpu_ops`; rb-bench is the cross-device benchmark.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rocm_backend::ops::conv::{Activation, ConvAttrs};
use rocm_backend::ops::elementwise::BinaryOp;
use rocm_backend::runtime::context::{self, DeviceSpec};
use rocm_backend::runtime::{DType, Tensor, blas, conv, elementwise, softmax};

fn benches(c: &mut Criterion) {
    let dev = context::device(DeviceSpec::Cpu).unwrap();
    let randn =
        |shape: &[usize], seed| Tensor::randn(dev.clone(), shape, DType::F32, seed).unwrap();

    let mut g = c.benchmark_group("cpu");
    g.sample_size(20);
    let n = 512;
    let (a, b) = (randn(&[n, n], 1), randn(&[n, n], 2));
    let o = randn(&[n, n], 3);
    g.throughput(Throughput::Elements(2 * (n * n * n) as u64));
    g.bench_function("matmul_f32_512", |bch| {
        bch.iter(|| blas::matmul(None, &a, &b, Some(&o)).unwrap())
    });

    let m = 1 << 22;
    let (x, y) = (randn(&[m], 4), randn(&[m], 5));
    let z = randn(&[m], 6);
    g.throughput(Throughput::Bytes(12 * m as u64));
    g.bench_function("add_f32_4M", |bch| {
        bch.iter(|| elementwise::binary(None, BinaryOp::Add, &x, &y, Some(&z)).unwrap())
    });

    let s = randn(&[1024, 1024], 7);
    let so = randn(&[1024, 1024], 8);
    g.throughput(Throughput::Bytes(8 * 1024 * 1024));
    g.bench_function("softmax_f32_1024x1024", |bch| {
        bch.iter(|| softmax::softmax(None, &s, -1, Some(&so)).unwrap())
    });

    let (cx, cw) = (randn(&[2, 64, 28, 28], 9), randn(&[64, 64, 3, 3], 10));
    let co = randn(&[2, 64, 28, 28], 11);
    let attrs = ConvAttrs {
        padding: vec![1],
        ..Default::default()
    };
    g.throughput(Throughput::Elements(2 * 2 * 64 * 28 * 28 * 64 * 9));
    g.bench_function("conv3x3_f32_2x64x28x28", |bch| {
        bch.iter(|| {
            conv::conv(None, &cx, &cw, None, &attrs, 2, Activation::None, Some(&co)).unwrap()
        })
    });
    g.finish();
}

criterion_group!(cpu, benches);
criterion_main!(cpu);
