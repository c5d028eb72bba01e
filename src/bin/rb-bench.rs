//! rb-bench: the cross-device benchmark. Prints a table and writes JSON in the format of
//! `../shared/bench/compare.py`, with the names of the anchor scripts
//! (`cpu_anchors.py`, `torch_anchors.py`) so the two line up.
//!
//! ```text
//! rb-bench --device cpu|rocm|cuda|auto [--filter REGEX] [--iters N] [--warmup N] [--json PATH]
//!          [--trace PATH]
//! ```
//!
//! `--trace PATH` profiles the run and writes it as Chrome trace JSON (Perfetto,
//! chrome://tracing): a span per benchmark on the "rb-bench" track, the timed GPU kernels on
//! their streams, the C calls on the host, and the memory counters
//! (`rb_profiler_export_chrome_trace`). Profiling adds two events per GPU launch, so the
//! figures of a traced run are not the ones to quote.
//!
//! Every figure is the median over `--iters` timed repetitions after `--warmup` untimed ones;
//! a repetition runs the op `inner` times (more for tiny ops). Throughput figures on a GPU
//! are timed with device events around the repetition on the default stream, as the PyTorch
//! anchors are; latencies (`us`: eager overhead, the MLP through the C API) and every CPU
//! figure use the host clock and end with a device synchronize, so queued work is counted.
//! Inputs are random normal, never zeros.

use rocm_backend::device::{Device, DeviceKind, GemmDesc, Transpose};
use rocm_backend::ffi;
use rocm_backend::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};
use rocm_backend::ops::nn::{LossKind, Reduction};
use rocm_backend::ops::reduce::ReduceOp;
use rocm_backend::ops::registry::OpKind;
use rocm_backend::runtime::context::{self, DeviceSpec};
use rocm_backend::runtime::eager::Grad;
use rocm_backend::runtime::event::Event;
use rocm_backend::runtime::{DType, Tensor, elementwise, loss, norm, reduce, softmax};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

#[path = "rb-bench/llama.rs"]
mod llama;

type Dev = Arc<dyn Device>;
type Res<T> = rocm_backend::Result<T>;

struct Opts {
    device: String,
    filter: Option<regex::Regex>,
    iters: usize,
    warmup: usize,
    json: Option<String>,
    trace: Option<String>,
}

fn parse_args() -> Result<Opts, String> {
    let mut o = Opts {
        device: "auto".into(),
        filter: None,
        iters: 7,
        warmup: 2,
        json: None,
        trace: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match a.as_str() {
            "--device" => o.device = val("--device")?,
            "--filter" => {
                let f = val("--filter")?;
                o.filter = Some(regex::Regex::new(&f).map_err(|e| e.to_string())?)
            }
            "--iters" => o.iters = val("--iters")?.parse().map_err(|_| "bad --iters")?,
            "--warmup" => o.warmup = val("--warmup")?.parse().map_err(|_| "bad --warmup")?,
            "--json" => o.json = Some(val("--json")?),
            "--trace" => o.trace = Some(val("--trace")?),
            "-h" | "--help" => {
                println!(
                    "rb-bench --device cpu|rocm|cuda|auto [--filter REGEX] [--iters N] [--warmup N] [--json PATH] [--trace PATH]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    Ok(o)
}

/// One measurement: milliseconds per op and the throughput figure it implies.
struct Measure {
    ms: f64,
    unit: &'static str,
    value: f64,
}

struct Bench<'a> {
    dev: Dev,
    opts: &'a Opts,
    results: BTreeMap<String, Measure>,
}

impl Bench<'_> {
    fn wanted(&self, name: &str) -> bool {
        self.opts.filter.as_ref().is_none_or(|f| f.is_match(name))
    }

    /// Times `f` (one op) and records `name` with `work` units per op (`unit`: "GFLOPs",
    /// "GBps" or "us").
    fn time(
        &mut self,
        name: &str,
        inner: usize,
        unit: &'static str,
        work: f64,
        mut f: impl FnMut() -> Res<()>,
    ) -> Res<()> {
        for _ in 0..self.opts.warmup {
            for _ in 0..inner {
                f()?;
            }
            self.dev.synchronize()?;
        }
        // Throughput figures on a GPU are timed as the anchors time them: device events
        // around the op(s) on the default stream. Latencies ("us": host time per call, e.g.
        // eager overhead, the MLP through the C API) and the CPU use the host clock with a
        // synchronize.
        let events = if self.dev.kind() != DeviceKind::Cpu && unit != "us" {
            Some((Event::new(self.dev.clone())?, Event::new(self.dev.clone())?))
        } else {
            None
        };
        let mut ts = Vec::with_capacity(self.opts.iters);
        for _ in 0..self.opts.iters.max(1) {
            let t = Instant::now();
            if let Some((e0, _)) = &events {
                e0.record(None)?;
            }
            for _ in 0..inner {
                f()?;
            }
            if let Some((e0, e1)) = &events {
                e1.record(None)?;
                e1.synchronize()?;
                ts.push(Event::elapsed_ms(e0, e1)? as f64 / 1e3 / inner as f64);
                continue;
            }
            self.dev.synchronize()?;
            ts.push(t.elapsed().as_secs_f64() / inner as f64);
        }
        ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let s = ts[ts.len() / 2];
        let value = match unit {
            "GFLOPs" => work / s / 1e9,
            "TFLOPs" => work / s / 1e12,
            "GBps" => work / s / 1e9,
            // `work` is the bus bytes: size * 2(n-1)/n, as nccl-tests and the anchor count.
            "busbw_GBps" => work / s / 1e9,
            _ => s * 1e6,
        };
        let label = if unit == "us" { "us" } else { unit };
        println!("{name:40} {:12.1} us  {label}={value:.1}", s * 1e6);
        self.results.insert(
            name.to_string(),
            Measure {
                ms: s * 1e3,
                unit,
                value,
            },
        );
        Ok(())
    }

    fn run(&mut self, name: &str, body: impl FnOnce(&mut Self) -> Res<()>) {
        if !self.wanted(name) {
            return;
        }
        // The op a benchmark exercises, from its name; a device that does not run it says so
        // without trying (Device::supports).
        if let Some((op, dt)) = bench_op(name)
            && !self.dev.supports(op, &[dt])
        {
            println!(
                "{name:40} unsupported: {} does not run {} on {dt}",
                self.dev.name(),
                op.name()
            );
            return;
        }
        let prof = rocm_backend::device::gpu::profiler::profiler();
        let t0 = Instant::now();
        if let Err(e) = body(self) {
            println!("{name:40} skipped: {:?}: {}", e.kind, e.message);
        }
        prof.record_span(
            rocm_backend::device::gpu::profiler::TraceSpan {
                name: name.to_string(),
                cat: "bench",
                process: "rb-bench".to_string(),
                track: 1,
                ts_us: prof.micros(t0),
                dur_us: t0.elapsed().as_secs_f64() * 1e6,
            },
            false,
        );
    }
}

/// All-reduce bus bandwidth, named as `../shared/bench/allreduce_anchor.py` names it
/// (`allreduce_f32_{1,16,256,1024}MiB_{n}gpu`): one communicator over every GPU of the
/// device's kind (rb_comm_init_all), an in-place f32 sum on each GPU's default stream in one
/// group, timed with events on the first GPU as the anchor times rank 0. Bus bandwidth as
/// nccl-tests compute it: algbw * 2(n-1)/n. Fewer than 2 GPUs: a skip line per name. On the
/// CPU a small version (`allreduce_f32_{1,16}MiB_2rank_cpu`: two ranks driven by one thread
/// in a group) measures the CPU communicator.
fn comm_suite(b: &mut Bench) {
    use rocm_backend::device::comm::ReduceOp as Op;
    use rocm_backend::runtime::comm::{self, Comm};
    let kind = b.dev.kind();
    let (n, sizes, suffix): (usize, &[usize], String) = if kind == DeviceKind::Cpu {
        (2, &[1, 16], "2rank_cpu".into())
    } else {
        let n = context::device_count(kind);
        (n, &[1, 16, 256, 1024], format!("{}gpu", n.max(2)))
    };
    for &mb in sizes {
        let name = format!("allreduce_f32_{mb}MiB_{suffix}");
        if !b.wanted(&name) {
            continue;
        }
        if n < 2 {
            println!("{name:40} skipped: needs >= 2 GPUs of one kind ({n} present)");
            continue;
        }
        b.run(&name, |b| {
            let devs: Vec<Dev> = if kind == DeviceKind::Cpu {
                vec![b.dev.clone(); n]
            } else {
                (0..n)
                    .map(|i| {
                        context::device(match kind {
                            DeviceKind::Rocm => DeviceSpec::Rocm(i),
                            _ => DeviceSpec::Cuda(i),
                        })
                    })
                    .collect::<Res<_>>()?
            };
            let comms = Comm::init_all(&devs)?;
            let count = mb * (1 << 20) / 4;
            let xs: Vec<Tensor> = devs
                .iter()
                .map(|d| Tensor::randn(d.clone(), &[count], DType::F32, 1))
                .collect::<Res<_>>()?;
            let bytes = (count * 4) as f64;
            let bus = bytes * 2.0 * (n - 1) as f64 / n as f64;
            b.time(&name, 1, "busbw_GBps", bus, || {
                comm::group_begin()?;
                let r = comms
                    .iter()
                    .zip(&xs)
                    .try_for_each(|(c, x)| c.all_reduce(None, x, x, Op::Sum));
                comm::group_end().and(r)
            })?;
            for d in &devs[1..] {
                d.synchronize()?;
            }
            for c in &comms {
                c.destroy()?;
            }
            Ok(())
        });
    }
}

/// The op and dtype a benchmark name measures (`conv3x3_float16_...` is conv on f16).
fn bench_op(name: &str) -> Option<(OpKind, DType)> {
    // bfloat16 first: "bfloat16" contains "float16".
    let dt = if name.contains("bfloat16") || name.contains("_bf16") {
        DType::BF16
    } else if name.contains("float16") || name.contains("_f16") {
        DType::F16
    } else {
        DType::F32
    };
    let op = match name.split('_').next()? {
        n if n.starts_with("conv") && !n.starts_with("convT") => OpKind::Conv,
        n if n.starts_with("convT") => OpKind::ConvTranspose,
        n if n.starts_with("maxpool") || n.starts_with("avgpool") => OpKind::Pool,
        "softmax" => OpKind::Softmax,
        "layernorm" => OpKind::LayerNorm,
        "rmsnorm" => OpKind::RmsNorm,
        "cross" => OpKind::CrossEntropy,
        "sdpa" => OpKind::ScaledDotProductAttention,
        "embedding" => OpKind::Embedding,
        _ => return None,
    };
    Some((op, dt))
}

fn randn(dev: &Dev, shape: &[usize], seed: u64) -> Res<Tensor> {
    Tensor::randn(dev.clone(), shape, DType::F32, seed)
}

fn gemm_desc(a: &Tensor, b: &Tensor, c: &Tensor, n: usize) -> GemmDesc {
    GemmDesc {
        dtype: a.dtype(),
        trans_a: Transpose::No,
        trans_b: Transpose::No,
        m: n,
        n,
        k: n,
        alpha: 1.0,
        a: b.ptr(),
        lda: n,
        b: a.ptr(),
        ldb: n,
        beta: 0.0,
        c: c.ptr(),
        ldc: n,
        batch: 1,
        stride_a: 0,
        stride_b: 0,
        stride_c: 0,
    }
}

fn cpu_suite(b: &mut Bench) {
    let dev = b.dev.clone();
    for n in [256usize, 1024, 2048] {
        b.run(&format!("gemm_float32_{n}"), |b| {
            let (x, y) = (randn(&dev, &[n, n], 1)?, randn(&dev, &[n, n], 2)?);
            let c = Tensor::empty(dev.clone(), &[n, n], DType::F32)?;
            let d = gemm_desc(&x, &y, &c, n);
            let inner = (2048 / n).max(1);
            b.time(
                &format!("gemm_float32_{n}"),
                inner,
                "GFLOPs",
                2.0 * (n * n * n) as f64,
                || dev.gemm(Default::default(), &d),
            )
        });
    }
    b.run("add_f32_16M", |b| {
        let n = 1 << 24;
        let (x, y) = (randn(&dev, &[n], 1)?, randn(&dev, &[n], 2)?);
        let o = Tensor::empty(dev.clone(), &[n], DType::F32)?;
        b.time("add_f32_16M", 1, "GBps", 12.0 * n as f64, || {
            elementwise::binary(None, BinaryOp::Add, &x, &y, Some(&o)).map(|_| ())
        })
    });
    b.run("conv3x3_float32_8x64x56x56", |b| {
        let (x, w) = (
            randn(&dev, &[8, 64, 56, 56], 1)?,
            randn(&dev, &[64, 64, 3, 3], 2)?,
        );
        let o = Tensor::empty(dev.clone(), &[8, 64, 56, 56], DType::F32)?;
        let a = rocm_backend::ops::conv::ConvAttrs {
            padding: vec![1],
            ..Default::default()
        };
        let act = rocm_backend::ops::conv::Activation::None;
        let flops = 2.0 * (8 * 64 * 56 * 56 * 64 * 9) as f64;
        b.time("conv3x3_float32_8x64x56x56", 1, "GFLOPs", flops, || {
            rocm_backend::runtime::conv::conv(None, &x, &w, None, &a, 2, act, Some(&o)).map(|_| ())
        })
    });
    b.run("softmax_f32_4096x1024", |b| {
        let x = randn(&dev, &[4096, 1024], 1)?;
        let o = Tensor::empty(dev.clone(), &[4096, 1024], DType::F32)?;
        b.time(
            "softmax_f32_4096x1024",
            1,
            "GBps",
            8.0 * (4096 * 1024) as f64,
            || softmax::softmax(None, &x, -1, Some(&o)).map(|_| ()),
        )
    });
    b.run("mlp_fwd_b32", |b| mlp_fwd_c_api(b, "mlp_fwd_b32", true));
    b.run("mlp_fwd_b32_unfused", |b| {
        mlp_fwd_c_api(b, "mlp_fwd_b32_unfused", false)
    });
}

fn gpu_suite(b: &mut Bench) {
    let dev = b.dev.clone();
    b.run("copy_d2d_1GiB", |b| {
        let n = 1usize << 28;
        let x = randn(&dev, &[n], 1)?;
        let y = Tensor::empty(dev.clone(), &[n], DType::F32)?;
        b.time("copy_d2d_1GiB", 1, "GBps", 8.0 * n as f64, || {
            dev.copy_d2d(x.ptr(), y.ptr(), n * 4, Default::default())
        })
    });
    for (dt, n, name) in [
        (DType::F32, 4096usize, "gemm_float32_4096"),
        (DType::F16, 8192, "gemm_float16_8192"),
        (DType::BF16, 8192, "gemm_bfloat16_8192"),
    ] {
        b.run(name, |b| {
            let x = Tensor::randn(dev.clone(), &[n, n], dt, 1)?;
            let y = Tensor::randn(dev.clone(), &[n, n], dt, 2)?;
            let c = Tensor::empty(dev.clone(), &[n, n], dt)?;
            let d = gemm_desc(&x, &y, &c, n);
            b.time(name, 1, "TFLOPs", 2.0 * (n * n * n) as f64, || {
                dev.gemm(Default::default(), &d)
            })
        });
    }
    let n = 1usize << 26;
    b.run("add_f32_64M", |b| {
        let (x, y) = (randn(&dev, &[n], 1)?, randn(&dev, &[n], 2)?);
        let o = Tensor::empty(dev.clone(), &[n], DType::F32)?;
        b.time("add_f32_64M", 1, "GBps", 12.0 * n as f64, || {
            elementwise::binary(None, BinaryOp::Add, &x, &y, Some(&o)).map(|_| ())
        })
    });
    for (name, op) in [
        ("relu_f32_64M", UnaryOp::Relu),
        ("gelu_f32_64M", UnaryOp::Gelu { tanh: false }),
        ("silu_f32_64M", UnaryOp::Silu),
        ("mish_f32_64M", UnaryOp::Mish),
        ("leaky_relu_f32_64M", UnaryOp::LeakyRelu { slope: 0.01 }),
        ("round_f32_64M", UnaryOp::Round),
        (
            "clamp_f32_64M",
            UnaryOp::Clamp {
                min: -0.5,
                max: 0.5,
            },
        ),
    ] {
        b.run(name, |b| {
            let x = randn(&dev, &[n], 1)?;
            let o = Tensor::empty(dev.clone(), &[n], DType::F32)?;
            b.time(name, 1, "GBps", 8.0 * n as f64, || {
                elementwise::unary(None, op, &x, Some(&o)).map(|_| ())
            })
        });
    }
    b.run("where_gt_f32_64M", |b| {
        // torch.where(x > y, x, y): the fused op, one kernel on GPUs.
        let (x, y) = (randn(&dev, &[n], 1)?, randn(&dev, &[n], 2)?);
        let o = Tensor::empty(dev.clone(), &[n], DType::F32)?;
        b.time("where_gt_f32_64M", 1, "GBps", 12.0 * n as f64, || {
            elementwise::where_compare(None, CompareOp::Gt, &x, &y, &x, &y, Some(&o)).map(|_| ())
        })
    });
    b.run("sum_f32_64M", |b| {
        let x = randn(&dev, &[n], 1)?;
        b.time("sum_f32_64M", 1, "GBps", 4.0 * n as f64, || {
            reduce::reduce(None, ReduceOp::Sum, &x, &[], false, None).map(|_| ())
        })
    });
    b.run("rowsum_f32_8192x8192", |b| {
        let x = randn(&dev, &[8192, 8192], 1)?;
        let o = Tensor::empty(dev.clone(), &[8192], DType::F32)?;
        b.time("rowsum_f32_8192x8192", 1, "GBps", 4.0 * n as f64, || {
            reduce::reduce(None, ReduceOp::Sum, &x, &[1], false, Some(&o)).map(|_| ())
        })
    });
    let (rows, cols) = (16384usize, 4096usize);
    b.run("softmax_f32_16384x4096", |b| {
        let x = randn(&dev, &[rows, cols], 1)?;
        let o = Tensor::empty(dev.clone(), &[rows, cols], DType::F32)?;
        b.time(
            "softmax_f32_16384x4096",
            5,
            "GBps",
            8.0 * (rows * cols) as f64,
            || softmax::softmax(None, &x, -1, Some(&o)).map(|_| ()),
        )
    });
    b.run("layernorm_f32_16384x4096", |b| {
        let x = randn(&dev, &[rows, cols], 1)?;
        let (w, bb) = (randn(&dev, &[cols], 2)?, randn(&dev, &[cols], 3)?);
        let o = Tensor::empty(dev.clone(), &[rows, cols], DType::F32)?;
        b.time(
            "layernorm_f32_16384x4096",
            5,
            "GBps",
            8.0 * (rows * cols) as f64,
            || norm::layer_norm(None, &x, &[cols], Some(&w), Some(&bb), 1e-5, Some(&o)).map(|_| ()),
        )
    });
    b.run("rmsnorm_f32_16384x4096", |b| {
        let x = randn(&dev, &[rows, cols], 1)?;
        let w = randn(&dev, &[cols], 2)?;
        let o = Tensor::empty(dev.clone(), &[rows, cols], DType::F32)?;
        b.time(
            "rmsnorm_f32_16384x4096",
            5,
            "GBps",
            8.0 * (rows * cols) as f64,
            // F.rms_norm's default eps: the dtype's machine epsilon.
            || {
                norm::rms_norm(None, &x, &[cols], Some(&w), f32::EPSILON as f64, Some(&o))
                    .map(|_| ())
            },
        )
    });
    b.run("layernorm_bwd_f32_16384x4096", |b| {
        let (x, g) = (
            randn(&dev, &[rows, cols], 1)?,
            randn(&dev, &[rows, cols], 4)?,
        );
        let w = randn(&dev, &[cols], 2)?;
        let dx = Tensor::empty(dev.clone(), &[rows, cols], DType::F32)?;
        let (dw, db) = (
            Tensor::empty(dev.clone(), &[cols], DType::F32)?,
            Tensor::empty(dev.clone(), &[cols], DType::F32)?,
        );
        b.time(
            "layernorm_bwd_f32_16384x4096",
            5,
            "GBps",
            12.0 * (rows * cols) as f64,
            || {
                let grads = [Grad::Into(&dx), Grad::Into(&dw), Grad::Into(&db)];
                norm::layer_norm_backward(None, &g, &x, &[cols], Some(&w), 1e-5, grads).map(|_| ())
            },
        )
    });
    // F.batch_norm on ResNet-50 stage-1 activations, with running stats, weight and bias.
    for (name, training, bytes) in [
        ("batchnorm_train_f32_32x64x56", true, 12.0),
        ("batchnorm_infer_f32_32x64x56", false, 8.0),
    ] {
        b.run(name, |b| {
            let shape = [32usize, 64, 56, 56];
            let x = randn(&dev, &shape, 1)?;
            let (g, be) = (randn(&dev, &[64], 2)?, randn(&dev, &[64], 3)?);
            let rm = Tensor::zeros(dev.clone(), &[64], DType::F32)?;
            let rv = Tensor::empty(dev.clone(), &[64], DType::F32)?;
            rocm_backend::runtime::data::fill(None, &rv, 1.0)?;
            let o = Tensor::empty(dev.clone(), &shape, DType::F32)?;
            let n: usize = shape.iter().product();
            b.time(name, 5, "GBps", bytes * n as f64, || {
                norm::batch_norm(
                    None,
                    &x,
                    Some(&rm),
                    Some(&rv),
                    Some(&g),
                    Some(&be),
                    training,
                    0.1,
                    1e-5,
                    Some(&o),
                )
                .map(|_| ())
            })
        });
    }
    // F.batch_norm (training, running stats, weight and bias, all f16) on channels-last f16
    // activations [32, 64, 112, 112], dense [32, 112, 112, 64]: bytes = x read twice, y
    // written (as benches/torch_anchors_dnn.py counts them).
    b.run("batchnorm_f16_32x64x112_nhwc", |b| {
        let shape = [32usize, 112, 112, 64];
        let f16 = DType::F16;
        let x = Tensor::randn(dev.clone(), &shape, f16, 1)?;
        let g = Tensor::randn(dev.clone(), &[64], f16, 2)?;
        let be = Tensor::randn(dev.clone(), &[64], f16, 3)?;
        let rm = Tensor::zeros(dev.clone(), &[64], f16)?;
        let rv = Tensor::empty(dev.clone(), &[64], f16)?;
        rocm_backend::runtime::data::fill(None, &rv, 1.0)?;
        let o = Tensor::empty(dev.clone(), &shape, f16)?;
        let n: usize = shape.iter().product();
        b.time(
            "batchnorm_f16_32x64x112_nhwc",
            5,
            "GBps",
            6.0 * n as f64,
            || {
                norm::batch_norm_channels_last(
                    None,
                    &x,
                    Some(&rm),
                    Some(&rv),
                    Some(&g),
                    Some(&be),
                    true,
                    0.1,
                    1e-5,
                    Some(&o),
                )
                .map(|_| ())
            },
        )
    });
    b.run("cross_entropy_f32_16384x4096", |b| {
        let x = randn(&dev, &[rows, cols], 1)?;
        let t = Tensor::randint(dev.clone(), &[rows], DType::I64, 0, cols as i64, 2)?;
        b.time(
            "cross_entropy_f32_16384x4096",
            1,
            "GBps",
            4.0 * (rows * cols) as f64,
            || {
                loss::loss(
                    None,
                    LossKind::CrossEntropy,
                    &x,
                    &t,
                    Reduction::Mean,
                    -100,
                    0.0,
                    None,
                )
                .map(|_| ())
            },
        )
    });
    gpu_conv_pool(b);
    gpu_extra(b);
    gpu_half(b);
    b.run("eager_tiny_op_overhead", |b| {
        let x = randn(&dev, &[16], 1)?;
        let one = Tensor::from_f32(dev.clone(), &[1.0], &[1])?;
        b.time("eager_tiny_op_overhead", 20000, "us", 0.0, || {
            elementwise::binary(None, BinaryOp::Add, &x, &one, Some(&x)).map(|_| ())
        })
    });
    b.run("mlp_fwd_b32_eager", |b| {
        mlp_fwd_c_api(b, "mlp_fwd_b32_eager", true)
    });
    b.run("mlp_fwd_b32_eager_unfused", |b| {
        mlp_fwd_c_api(b, "mlp_fwd_b32_eager_unfused", false)
    });
}

/// The names of torch_anchors.py's GEMM variants (TF32, bmm, the large MLP) and of
/// torch_anchors_extra.py (attention, half elementwise, Adam, embedding, backwards), with
/// their shapes, dtypes and semantics.
fn gpu_extra(b: &mut Bench) {
    use rocm_backend::device::blas::set_allow_tf32;
    use rocm_backend::ops::conv::Activation;
    use rocm_backend::ops::optim::AdamAttrs;
    let dev = b.dev.clone();
    b.run("gemm_tf32_4096", |b| {
        // torch.backends.cuda.matmul.allow_tf32 = True around A @ B, as the anchor.
        let n = 4096usize;
        let (x, y) = (randn(&dev, &[n, n], 1)?, randn(&dev, &[n, n], 2)?);
        let c = Tensor::empty(dev.clone(), &[n, n], DType::F32)?;
        let d = gemm_desc(&x, &y, &c, n);
        set_allow_tf32(true);
        let r = b.time(
            "gemm_tf32_4096",
            1,
            "TFLOPs",
            2.0 * (n * n * n) as f64,
            || dev.gemm(Default::default(), &d),
        );
        set_allow_tf32(false);
        r
    });
    b.run("bmm_f32_64x512x64x512", |b| {
        // torch.bmm(A [64, 512, 64], B [64, 64, 512]) -> [64, 512, 512]; column-major
        // Cᵀ = Bᵀ Aᵀ per batch.
        let (bt, m, k) = (64usize, 512usize, 64usize);
        let (x, y) = (randn(&dev, &[bt, m, k], 1)?, randn(&dev, &[bt, k, m], 2)?);
        let c = Tensor::empty(dev.clone(), &[bt, m, m], DType::F32)?;
        let d = GemmDesc {
            dtype: DType::F32,
            trans_a: Transpose::No,
            trans_b: Transpose::No,
            m,
            n: m,
            k,
            alpha: 1.0,
            a: y.ptr(),
            lda: m,
            b: x.ptr(),
            ldb: k,
            beta: 0.0,
            c: c.ptr(),
            ldc: m,
            batch: bt,
            stride_a: k * m,
            stride_b: m * k,
            stride_c: m * m,
        };
        let flops = 2.0 * (bt * m * k * m) as f64;
        b.time("bmm_f32_64x512x64x512", 5, "TFLOPs", flops, || {
            dev.gemm(Default::default(), &d)
        })
    });
    // Linear(4096, 4096) -> GELU -> Linear(4096, 4096) on a batch of 4096: exact f32
    // (torch_anchors.py), and f16/bf16 (benches/torch_anchors_half.py: PyTorch's linear, then
    // its GELU kernel), each linear one library call with its bias (+ GELU) epilogue.
    for (dt, name) in [
        (DType::F32, "mlp_fwd_4096x4096_gelu_f32"),
        (DType::F16, "mlp_fwd_4096x4096_gelu_float16"),
        (DType::BF16, "mlp_fwd_4096x4096_gelu_bfloat16"),
    ] {
        b.run(name, |b| {
            let n = 4096usize;
            let rnd = |shape: &[usize], seed: u64| Tensor::randn(dev.clone(), shape, dt, seed);
            let x = rnd(&[n, n], 1)?;
            let (w1, w2) = (rnd(&[n, n], 2)?, rnd(&[n, n], 3)?);
            let (b1, b2) = (rnd(&[n], 4)?, rnd(&[n], 5)?);
            let (h, y) = (
                Tensor::empty(dev.clone(), &[n, n], dt)?,
                Tensor::empty(dev.clone(), &[n, n], dt)?,
            );
            let s = Default::default();
            let gelu = Activation::Gelu { tanh: false };
            let flops = 2.0 * 2.0 * (n * n * n) as f64;
            b.time(name, 1, "TFLOPs", flops, || {
                dev.gemm_bias_act(
                    s,
                    dt,
                    x.ptr(),
                    w1.ptr(),
                    true,
                    Some(b1.ptr()),
                    gelu,
                    h.ptr(),
                    n,
                    n,
                    n,
                )?;
                dev.gemm_bias_act(
                    s,
                    dt,
                    h.ptr(),
                    w2.ptr(),
                    true,
                    Some(b2.ptr()),
                    Activation::None,
                    y.ptr(),
                    n,
                    n,
                    n,
                )
            })
        });
    }
    for (dt, tag) in [(DType::F16, "float16"), (DType::BF16, "bfloat16")] {
        for causal in [false, true] {
            let name = format!(
                "sdpa_{tag}_b8h16s2048d64{}",
                if causal { "_causal" } else { "" }
            );
            b.run(&name.clone(), |b| {
                let shape = [8usize, 16, 2048, 64];
                let q = Tensor::randn(dev.clone(), &shape, dt, 1)?;
                let k = Tensor::randn(dev.clone(), &shape, dt, 2)?;
                let v = Tensor::randn(dev.clone(), &shape, dt, 3)?;
                let o = Tensor::empty(dev.clone(), &shape, dt)?;
                let fl =
                    4.0 * (8u64 * 16 * 2048 * 2048 * 64) as f64 / if causal { 2.0 } else { 1.0 };
                b.time(&name, 1, "TFLOPs", fl, || {
                    rocm_backend::runtime::attention::scaled_dot_product_attention(
                        None,
                        &q,
                        &k,
                        &v,
                        causal,
                        None,
                        Some(&o),
                    )
                    .map(|_| ())
                })
            });
        }
    }
    // The portable fused kernel alone (kernels/flash_attention.hip; the default path may
    // differ once a vendor-library path exists).
    for causal in [false, true] {
        let name = format!(
            "sdpa_portable_float16_b8h16s2048d64{}",
            if causal { "_causal" } else { "" }
        );
        b.run(&name.clone(), |b| {
            use rocm_backend::device::attention::{AttentionPath, set_attention_path};
            let shape = [8usize, 16, 2048, 64];
            let q = Tensor::randn(dev.clone(), &shape, DType::F16, 1)?;
            let k = Tensor::randn(dev.clone(), &shape, DType::F16, 2)?;
            let v = Tensor::randn(dev.clone(), &shape, DType::F16, 3)?;
            let o = Tensor::empty(dev.clone(), &shape, DType::F16)?;
            let fl = 4.0 * (8u64 * 16 * 2048 * 2048 * 64) as f64 / if causal { 2.0 } else { 1.0 };
            set_attention_path(AttentionPath::Portable);
            let r = b.time(&name, 1, "TFLOPs", fl, || {
                rocm_backend::runtime::attention::scaled_dot_product_attention(
                    None,
                    &q,
                    &k,
                    &v,
                    causal,
                    None,
                    Some(&o),
                )
                .map(|_| ())
            });
            set_attention_path(AttentionPath::Auto);
            r
        });
    }
    // The backward: one scaled_dot_product_attention_backward call (given q, k, v and dO it
    // recomputes the forward's logsumexp itself); PyTorch's anchor times
    // torch.autograd.grad(out, (q, k, v), g) after one forward. Work: 2.5x the forward's
    // 4 b h s^2 d flops (halved when causal).
    for (dt, tag) in [(DType::F16, "float16"), (DType::BF16, "bfloat16")] {
        for causal in [false, true] {
            let name = format!(
                "sdpa_bwd_{tag}_b8h16s2048d64{}",
                if causal { "_causal" } else { "" }
            );
            b.run(&name.clone(), |b| {
                use rocm_backend::runtime::eager::Grad;
                let shape = [8usize, 16, 2048, 64];
                let q = Tensor::randn(dev.clone(), &shape, dt, 1)?;
                let k = Tensor::randn(dev.clone(), &shape, dt, 2)?;
                let v = Tensor::randn(dev.clone(), &shape, dt, 3)?;
                let g = Tensor::randn(dev.clone(), &shape, dt, 4)?;
                let gq = Tensor::empty(dev.clone(), &shape, dt)?;
                let gk = Tensor::empty(dev.clone(), &shape, dt)?;
                let gv = Tensor::empty(dev.clone(), &shape, dt)?;
                let fl =
                    10.0 * (8u64 * 16 * 2048 * 2048 * 64) as f64 / if causal { 2.0 } else { 1.0 };
                b.time(&name, 1, "TFLOPs", fl, || {
                    rocm_backend::runtime::attention::scaled_dot_product_attention_backward(
                        None,
                        &g,
                        &q,
                        &k,
                        &v,
                        causal,
                        None,
                        [Grad::Into(&gq), Grad::Into(&gk), Grad::Into(&gv)],
                    )
                    .map(|_| ())
                })
            });
        }
    }
    // Decoding: one query per head, 32 query heads on 8 key/value heads (GQA), 4096 cached
    // keys, d 128; bytes: K and V read once.
    {
        let name = "sdpa_decode_float16_b1h32kv8s4096d128";
        b.run(name, |b| {
            use rocm_backend::ops::nn::Causal;
            let q = Tensor::randn(dev.clone(), &[1, 32, 1, 128], DType::F16, 1)?;
            let k = Tensor::randn(dev.clone(), &[1, 8, 4096, 128], DType::F16, 2)?;
            let v = Tensor::randn(dev.clone(), &[1, 8, 4096, 128], DType::F16, 3)?;
            let o = Tensor::empty(dev.clone(), &[1, 32, 1, 128], DType::F16)?;
            let bytes = 2.0 * (8u64 * 4096 * 128 * 2) as f64;
            b.time(name, 1, "GBps", bytes, || {
                rocm_backend::runtime::attention::scaled_dot_product_attention_ex(
                    None,
                    &q,
                    &k,
                    &v,
                    None,
                    Causal::None,
                    None,
                    true,
                    Some(&o),
                )
                .map(|_| ())
            })
        });
    }
    let n = 1usize << 26;
    for (dt, tag) in [(DType::F16, "float16"), (DType::BF16, "bfloat16")] {
        let name = format!("add_{tag}_64M");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), &[n], dt, 1)?;
            let y = Tensor::randn(dev.clone(), &[n], dt, 2)?;
            let o = Tensor::empty(dev.clone(), &[n], dt)?;
            b.time(&name, 1, "GBps", 6.0 * n as f64, || {
                elementwise::binary(None, BinaryOp::Add, &x, &y, Some(&o)).map(|_| ())
            })
        });
        let name = format!("gelu_{tag}_64M");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), &[n], dt, 1)?;
            let o = Tensor::empty(dev.clone(), &[n], dt)?;
            b.time(&name, 1, "GBps", 4.0 * n as f64, || {
                elementwise::unary(None, UnaryOp::Gelu { tanh: false }, &x, Some(&o)).map(|_| ())
            })
        });
    }
    // Adam over 16M f32 parameters: PyTorch's fused and foreach are both one step of all
    // parameters; ours is one fused kernel either way.
    for name in ["adam_step_f32_16M_fused", "adam_step_f32_16M_foreach"] {
        b.run(name, |b| {
            let n = 1usize << 24;
            let p = randn(&dev, &[n], 1)?;
            let g = randn(&dev, &[n], 2)?;
            let m = Tensor::zeros(dev.clone(), &[n], DType::F32)?;
            let v = Tensor::zeros(dev.clone(), &[n], DType::F32)?;
            let mut step = 0u64;
            b.time(name, 1, "GBps", 28.0 * n as f64, || {
                step += 1;
                let attrs = AdamAttrs {
                    lr: 1e-3,
                    beta1: 0.9,
                    beta2: 0.999,
                    eps: 1e-8,
                    weight_decay: 0.0,
                    step,
                    amsgrad: false,
                    decoupled: false,
                };
                rocm_backend::runtime::optim::adam_step(None, &p, &g, &m, &v, None, &attrs)
            })
        });
    }
    b.run("embedding_f32_50000x1024_16384", |b| {
        let w = randn(&dev, &[50000, 1024], 1)?;
        let idx = Tensor::randint(dev.clone(), &[16384], DType::I64, 0, 50000, 2)?;
        let o = Tensor::empty(dev.clone(), &[16384, 1024], DType::F32)?;
        b.time(
            "embedding_f32_50000x1024_16384",
            5,
            "GBps",
            2.0 * 4.0 * (16384 * 1024) as f64,
            || rocm_backend::runtime::data::embedding(None, &w, &idx, Some(&o)).map(|_| ()),
        )
    });
    b.run("gelu_bwd_f32_16384x4096", |b| {
        let (rows, cols) = (16384usize, 4096usize);
        let x = randn(&dev, &[rows, cols], 1)?;
        let g = randn(&dev, &[rows, cols], 2)?;
        let dx = Tensor::empty(dev.clone(), &[rows, cols], DType::F32)?;
        b.time(
            "gelu_bwd_f32_16384x4096",
            1,
            "GBps",
            12.0 * (rows * cols) as f64,
            || {
                elementwise::unary_backward(None, UnaryOp::Gelu { tanh: false }, &x, &g, Some(&dx))
                    .map(|_| ())
            },
        )
    });
}

/// f16/bf16 softmax, layer_norm, rms_norm and cross_entropy over 16384 x 4096, and the
/// matrix-vector products of decoding (`gemv_<dtype>_<out>x<in>`: y [1, out] = x [1, in] ·
/// Wᵀ, W [out, in]; bytes: W's), with the names of benches/torch_anchors_half.py.
fn gpu_half(b: &mut Bench) {
    let dev = b.dev.clone();
    let (rows, cols) = (16384usize, 4096usize);
    let n = (rows * cols) as f64;
    for (dt, tag) in [(DType::F16, "float16"), (DType::BF16, "bfloat16")] {
        let x = |s| Tensor::randn(dev.clone(), &[rows, cols], dt, s);
        let o = || Tensor::empty(dev.clone(), &[rows, cols], dt);
        let name = format!("softmax_{tag}_16384x4096");
        b.run(&name.clone(), |b| {
            let (x, o) = (x(1)?, o()?);
            b.time(&name, 5, "GBps", 4.0 * n, || {
                softmax::softmax(None, &x, -1, Some(&o)).map(|_| ())
            })
        });
        let name = format!("layernorm_{tag}_16384x4096");
        b.run(&name.clone(), |b| {
            let (x, o) = (x(1)?, o()?);
            let w = Tensor::randn(dev.clone(), &[cols], dt, 2)?;
            let bb = Tensor::randn(dev.clone(), &[cols], dt, 3)?;
            b.time(&name, 5, "GBps", 4.0 * n, || {
                norm::layer_norm(None, &x, &[cols], Some(&w), Some(&bb), 1e-5, Some(&o)).map(|_| ())
            })
        });
        let name = format!("rmsnorm_{tag}_16384x4096");
        b.run(&name.clone(), |b| {
            let (x, o) = (x(1)?, o()?);
            let w = Tensor::randn(dev.clone(), &[cols], dt, 2)?;
            // F.rms_norm's default eps: the dtype's machine epsilon.
            let eps = if dt == DType::F16 {
                0.0009765625
            } else {
                0.0078125
            };
            b.time(&name, 5, "GBps", 4.0 * n, || {
                norm::rms_norm(None, &x, &[cols], Some(&w), eps, Some(&o)).map(|_| ())
            })
        });
        let name = format!("cross_entropy_{tag}_16384x4096");
        b.run(&name.clone(), |b| {
            let x = x(1)?;
            let t = Tensor::randint(dev.clone(), &[rows], DType::I64, 0, cols as i64, 2)?;
            b.time(&name, 1, "GBps", 2.0 * n, || {
                loss::loss(
                    None,
                    LossKind::CrossEntropy,
                    &x,
                    &t,
                    Reduction::Mean,
                    -100,
                    0.0,
                    None,
                )
                .map(|_| ())
            })
        });
    }
    for (dt, tag) in [
        (DType::F16, "float16"),
        (DType::BF16, "bfloat16"),
        (DType::F32, "float32"),
    ] {
        for (out, inp) in [(4096usize, 11008usize), (11008, 4096)] {
            let name = format!("gemv_{tag}_{out}x{inp}");
            b.run(&name.clone(), |b| {
                let w = Tensor::randn(dev.clone(), &[out, inp], dt, 1)?;
                let x = Tensor::randn(dev.clone(), &[1, inp], dt, 2)?;
                let y = Tensor::empty(dev.clone(), &[1, out], dt)?;
                let bytes = (out * inp * dt.size()) as f64;
                let none = rocm_backend::ops::conv::Activation::None;
                b.time(&name, 20, "GBps", bytes, || {
                    dev.gemm_bias_act(
                        Default::default(),
                        dt,
                        x.ptr(),
                        w.ptr(),
                        true,
                        None,
                        none,
                        y.ptr(),
                        1,
                        inp,
                        out,
                    )
                })
            });
        }
    }
}

/// Convolution and pooling with the names and semantics of torch_anchors.py (ResNet-50
/// stage-1 shapes; exact fp32: no TF32; the algorithm chosen by the library's search), and
/// those of benches/torch_anchors_dnn.py: bf16, channels-last (`_nhwc`: dense `[N, H, W, C]`
/// tensors, a channels-last `[K, kH, kW, C]` weight, RB_LAYOUT_NHWC; transposed convolution
/// too), f16 and bf16 pooling, pooling backward, adaptive pooling to 1 x 1 (ResNet-50's
/// head).
fn gpu_conv_pool(b: &mut Bench) {
    use rocm_backend::ops::conv::{Activation, ConvAttrs, ConvAttrsEx, Layout};
    use rocm_backend::ops::pool::{PoolAttrs, PoolAttrsEx, PoolKind};
    use rocm_backend::runtime::prelude as cv;
    let dev = b.dev.clone();
    let flops3 = 2.0 * (32u64 * 64 * 56 * 56 * 64 * 9) as f64;
    for (dt, tag) in [
        (DType::F32, "float32"),
        (DType::F16, "float16"),
        (DType::BF16, "bfloat16"),
    ] {
        let a = ConvAttrs {
            padding: vec![1],
            ..Default::default()
        };
        let name = format!("conv3x3_{tag}_32x64x56x56");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), &[32, 64, 56, 56], dt, 1)?;
            let w = Tensor::randn(dev.clone(), &[64, 64, 3, 3], dt, 2)?;
            let o = Tensor::empty(dev.clone(), &[32, 64, 56, 56], dt)?;
            b.time(&name, 1, "TFLOPs", flops3, || {
                cv::conv(None, &x, &w, None, &a, 2, Activation::None, Some(&o)).map(|_| ())
            })
        });
        let name = format!("convT3x3_{tag}_32x64x56x56");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), &[32, 64, 56, 56], dt, 1)?;
            let w = Tensor::randn(dev.clone(), &[64, 64, 3, 3], dt, 2)?;
            let o = Tensor::empty(dev.clone(), &[32, 64, 56, 56], dt)?;
            b.time(&name, 1, "TFLOPs", flops3, || {
                cv::conv_transpose(None, &x, &w, None, &a, 2, Some(&o)).map(|_| ())
            })
        });
        if dt == DType::F32 {
            continue;
        }
        let ex = ConvAttrsEx {
            attrs: a.clone(),
            pad_after: vec![1],
            layout: Layout::ChannelsLast,
        };
        let name = format!("conv3x3_{tag}_32x64x56x56_nhwc");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), &[32, 56, 56, 64], dt, 1)?;
            let w = Tensor::randn(dev.clone(), &[64, 3, 3, 64], dt, 2)?;
            let o = Tensor::empty(dev.clone(), &[32, 56, 56, 64], dt)?;
            b.time(&name, 1, "TFLOPs", flops3, || {
                cv::conv_ex(None, &x, &w, None, &ex, 2, Activation::None, Some(&o)).map(|_| ())
            })
        });
        // conv_transpose2d on channels-last tensors: x [32, 56, 56, 64], the weight
        // [C, K, 3, 3] as channels_last, dense [C, 3, 3, K].
        let name = format!("convT3x3_{tag}_32x64x56x56_nhwc");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), &[32, 56, 56, 64], dt, 1)?;
            let w = Tensor::randn(dev.clone(), &[64, 3, 3, 64], dt, 2)?;
            let o = Tensor::empty(dev.clone(), &[32, 56, 56, 64], dt)?;
            b.time(&name, 1, "TFLOPs", flops3, || {
                cv::conv_transpose_ex(None, &x, &w, None, &ex, 2, Some(&o)).map(|_| ())
            })
        });
    }
    b.run("conv7x7s2_f32_32x3x224", |b| {
        let x = randn(&dev, &[32, 3, 224, 224], 1)?;
        let w = randn(&dev, &[64, 3, 7, 7], 2)?;
        let o = Tensor::empty(dev.clone(), &[32, 64, 112, 112], DType::F32)?;
        let a = ConvAttrs {
            stride: vec![2],
            padding: vec![3],
            ..Default::default()
        };
        let flops = 2.0 * (32u64 * 64 * 112 * 112 * 3 * 49) as f64;
        b.time("conv7x7s2_f32_32x3x224", 1, "TFLOPs", flops, || {
            cv::conv(None, &x, &w, None, &a, 2, Activation::None, Some(&o)).map(|_| ())
        })
    });
    // Pooling over [32, 64, 112, 112] to 56 x 56: bytes = the input and the output (a quarter
    // of it); the backward moves dy, dx (and x for max pooling).
    let numel = (32 * 64 * 112 * 112) as f64;
    let avg = PoolKind::Avg {
        count_include_pad: true,
    };
    for (dt, tag) in [
        (DType::F32, "f32"),
        (DType::F16, "float16"),
        (DType::BF16, "bfloat16"),
    ] {
        let es = dt.size() as f64;
        for (base, kind, k, p) in [
            ("maxpool3x3s2", PoolKind::Max, 3usize, 1usize),
            ("avgpool2x2", avg, 2, 0),
        ] {
            let ex = PoolAttrsEx {
                attrs: PoolAttrs {
                    kernel: vec![k],
                    stride: vec![2],
                    padding: vec![p],
                    dilation: vec![1],
                    ceil_mode: false,
                },
                pad_after: vec![p],
                divisor_override: None,
                layout: Layout::ChannelsFirst,
            };
            for nhwc in [false, true] {
                let sfx = if nhwc { "_nhwc" } else { "" };
                let name = format!("{base}_{tag}_32x64x112{sfx}");
                let (xs, ys): (&[usize], &[usize]) = if nhwc {
                    (&[32, 112, 112, 64], &[32, 56, 56, 64])
                } else {
                    (&[32, 64, 112, 112], &[32, 64, 56, 56])
                };
                let ex = PoolAttrsEx {
                    layout: if nhwc {
                        Layout::ChannelsLast
                    } else {
                        Layout::ChannelsFirst
                    },
                    ..ex.clone()
                };
                b.run(&name.clone(), |b| {
                    let x = Tensor::randn(dev.clone(), xs, dt, 1)?;
                    let o = Tensor::empty(dev.clone(), ys, dt)?;
                    b.time(&name, 1, "GBps", es * numel * 1.25, || {
                        cv::pool_ex(None, kind, &x, &ex, 2, Some(&o)).map(|_| ())
                    })
                });
                if nhwc {
                    continue;
                }
                let name = format!("{base}_bwd_{tag}_32x64x112");
                let moved = if kind == PoolKind::Max { 2.25 } else { 1.25 };
                b.run(&name.clone(), |b| {
                    let x = Tensor::randn(dev.clone(), xs, dt, 1)?;
                    let dy = Tensor::randn(dev.clone(), ys, dt, 2)?;
                    let dx = Tensor::empty(dev.clone(), xs, dt)?;
                    b.time(&name, 1, "GBps", es * numel * moved, || {
                        cv::pool_ex_backward(None, kind, &x, &dy, &ex, 2, Some(&dx)).map(|_| ())
                    })
                });
            }
        }
    }
    // Adaptive pooling to 1 x 1 over ResNet-50's last activation [32, 2048, 7, 7], f32
    // (bytes: the input and the output, 1/49 of it; max pooling also writes i64 indices).
    let numel = (32 * 2048 * 49) as f64;
    for nhwc in [false, true] {
        let sfx = if nhwc { "_nhwc" } else { "" };
        let xs: &[usize] = if nhwc {
            &[32, 7, 7, 2048]
        } else {
            &[32, 2048, 7, 7]
        };
        let ys: &[usize] = if nhwc {
            &[32, 1, 1, 2048]
        } else {
            &[32, 2048, 1, 1]
        };
        let lay = nhwc as i64;
        let name = format!("adaptive_avg_pool2d_f32_32x2048x7x7{sfx}");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), xs, DType::F32, 1)?;
            let o = Tensor::empty(dev.clone(), ys, DType::F32)?;
            b.time(&name, 1, "GBps", 4.0 * numel * (1.0 + 1.0 / 49.0), || {
                cv::adaptive_avg_pool(None, &x, &[1, 1], lay, Some(&o)).map(|_| ())
            })
        });
        let name = format!("adaptive_max_pool2d_f32_32x2048x7x7{sfx}");
        b.run(&name.clone(), |b| {
            let x = Tensor::randn(dev.clone(), xs, DType::F32, 1)?;
            let o = Tensor::empty(dev.clone(), ys, DType::F32)?;
            let i = Tensor::empty(dev.clone(), ys, DType::I64)?;
            b.time(&name, 1, "GBps", 4.0 * numel * (1.0 + 3.0 / 49.0), || {
                cv::adaptive_max_pool(None, &x, &[1, 1], lay, Some(&o), Some(&i)).map(|_| ())
            })
        });
    }
}

/// The seed's MLP (784-256-128-10, batch 32) forward through the C API, as a C caller makes
/// it: matmul, bias add and relu per layer, with preallocated outputs.
/// The seed's MLP forward (784-256-128-10, batch 32, f32, weights `[in, out]`) through the C
/// API, with preallocated outputs: per layer one `rb_matmul_bias_act` (`fused`, as ONNX
/// Runtime runs the anchor's Gemm(+bias)+Relu), or `rb_matmul`, `rb_add` and `rb_relu`.
fn mlp_fwd_c_api(b: &mut Bench, name: &str, fused: bool) -> Res<()> {
    use ffi::rb_matmul_bias_act;
    use ffi::tensor::{rb_tensor, rb_tensor_destroy, rb_tensor_empty, rb_tensor_randn};
    use ffi::types::rb_activation;
    use ffi::{rb_add, rb_matmul, rb_relu};
    let dev = b.dev.name();
    let cdev = std::ffi::CString::new(dev).unwrap();
    let dims = [784i64, 256, 128, 10];
    let mk = |shape: &[i64], seed: u64| -> Res<*mut rb_tensor> {
        let mut t: *mut rb_tensor = std::ptr::null_mut();
        // SAFETY: valid arguments; a failure is returned as an error.
        let st =
            unsafe { rb_tensor_randn(cdev.as_ptr(), shape.as_ptr(), shape.len(), 0, seed, &mut t) };
        check(st)?;
        Ok(t)
    };
    let empty = |shape: &[i64]| -> Res<*mut rb_tensor> {
        let mut t: *mut rb_tensor = std::ptr::null_mut();
        // SAFETY: as above.
        check(unsafe { rb_tensor_empty(cdev.as_ptr(), shape.as_ptr(), shape.len(), 0, &mut t) })?;
        Ok(t)
    };
    let x = mk(&[32, 784], 1)?;
    let mut ws = Vec::new();
    let mut hs = Vec::new();
    for l in 0..3 {
        ws.push((
            mk(&[dims[l], dims[l + 1]], 10 + l as u64)?,
            mk(&[dims[l + 1]], 20 + l as u64)?,
        ));
        hs.push(empty(&[32, dims[l + 1]])?);
    }
    let r = b.time(name, 200, "us", 0.0, || {
        let mut prev = x;
        for (l, (w, bias)) in ws.iter().enumerate() {
            let mut h = hs[l];
            // SAFETY: live handles; outputs preallocated with the right shapes.
            unsafe {
                if fused {
                    let act = if l < 2 {
                        rb_activation::Relu
                    } else {
                        rb_activation::None
                    };
                    check(rb_matmul_bias_act(
                        std::ptr::null_mut(),
                        prev,
                        *w,
                        *bias,
                        act as i32,
                        &mut h,
                    ))?;
                } else {
                    check(rb_matmul(std::ptr::null_mut(), prev, *w, &mut h))?;
                    check(rb_add(std::ptr::null_mut(), h, *bias, &mut h))?;
                    if l < 2 {
                        check(rb_relu(std::ptr::null_mut(), h, &mut h))?;
                    }
                }
            }
            prev = h;
        }
        Ok(())
    });
    // SAFETY: handles made above, destroyed once.
    unsafe {
        for t in std::iter::once(x)
            .chain(hs)
            .chain(ws.iter().flat_map(|(w, b)| [*w, *b]))
        {
            rb_tensor_destroy(t);
        }
    }
    r
}

fn check(st: ffi::rb_status) -> Res<()> {
    if st == ffi::rb_status::Success {
        Ok(())
    } else {
        // SAFETY: the library's message is a valid C string.
        let m = unsafe { std::ffi::CStr::from_ptr(ffi::status::rb_last_error_message()) };
        Err(rocm_backend::Error::internal(
            m.to_string_lossy().into_owned(),
        ))
    }
}

fn main() {
    let opts = match parse_args() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rb-bench: {e}");
            std::process::exit(2);
        }
    };
    // torch_anchors.py times convolutions with cudnn.benchmark = True: search every
    // algorithm once per problem here too (one thread, so cuDNN's Find disturbs nothing).
    if std::env::var_os("RB_CONV_SEARCH").is_none() {
        // SAFETY: no other thread exists yet.
        unsafe { std::env::set_var("RB_CONV_SEARCH", "exhaustive") };
    }
    let spec = match DeviceSpec::parse(&opts.device) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("rb-bench: {}", e.message);
            std::process::exit(2);
        }
    };
    let dev = match context::set_device(spec) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("rb-bench: {}", e.message);
            std::process::exit(1);
        }
    };
    if opts.trace.is_some() {
        rocm_backend::device::gpu::profiler::profiler().set_enabled(true);
    }
    let info = dev.info().unwrap_or_default();
    println!("rb-bench on {} ({}, {})", dev.name(), info.name, info.arch);
    if dev.kind() == rocm_backend::device::DeviceKind::Cpu {
        println!(
            "cpu threads: {}, gemm: {}",
            rocm_backend::device::cpu::par::num_threads(),
            rocm_backend::device::cpu::sysblas::backend_name()
        );
    }
    let mut b = Bench {
        dev: dev.clone(),
        opts: &opts,
        results: BTreeMap::new(),
    };
    if dev.kind() == rocm_backend::device::DeviceKind::Cpu {
        cpu_suite(&mut b);
    } else {
        gpu_suite(&mut b);
    }
    graph_suite(&mut b);
    comm_suite(&mut b);
    if dev.kind() != rocm_backend::device::DeviceKind::Cpu {
        let k = rocm_backend::device::gpu::kernel_cache::kernel_cache().stats();
        println!(
            "kernel cache: {} memory hits, {} disk hits, {} misses (compiled), {:.1} ms compiling",
            k.memory_hits, k.disk_hits, k.misses, k.compile_ms
        );
        let t = rocm_backend::device::tuning::stats();
        println!(
            "tuning cache: {} hits, {} misses, {} entries, {} searches ({} exhaustive, {:.1} ms), \
             {} loaded from a file, {} file warnings",
            t.hits,
            t.misses,
            t.entries,
            t.searches,
            t.exhaustive_searches,
            t.search_ms,
            t.loaded,
            t.file_warnings
        );
    }
    if let Some(path) = &opts.trace {
        let c = std::ffi::CString::new(path.as_str()).unwrap_or_default();
        // SAFETY: a NUL-terminated path.
        let st = unsafe { ffi::profiler::rb_profiler_export_chrome_trace(c.as_ptr()) };
        if let Err(e) = check(st) {
            eprintln!("rb-bench: --trace: {}", e.message);
            std::process::exit(1);
        }
        println!("trace written to {path}");
    }
    if let Some(path) = &opts.json {
        let mut s = String::new();
        s.push_str(&format!(
            "{{\n \"device\": {:?},\n \"name\": {:?},\n \"results\": {{\n",
            dev.name(),
            info.name
        ));
        let n = b.results.len();
        for (i, (k, m)) in b.results.iter().enumerate() {
            let extra = if m.unit == "us" {
                String::new()
            } else {
                format!(", \"{}\": {:.3}", m.unit, m.value)
            };
            s.push_str(&format!(
                "  {k:?}: {{\"ms\": {:.6}{extra}}}{}\n",
                m.ms,
                if i + 1 < n { "," } else { "" }
            ));
        }
        s.push_str(" }\n}\n");
        if let Err(e) = std::fs::write(path, s) {
            eprintln!("rb-bench: cannot write {path}: {e}");
            std::process::exit(1);
        }
    }
}

/// The graph executor (issue 11): the MLP forward recorded as matmul+add+relu and run at
/// O0, O1 and O3 (back-to-back runs on a stream of its own, one synchronize, as the
/// anchor's `mlp_fwd_b32_cudagraph`), and the elementwise chain `gelu(x * a + b) * c`
/// eager (four ops) and at O1 (one fused kernel), against the copy bandwidth of this run.
fn graph_suite(b: &mut Bench) {
    use rocm_backend::graph::capture::GraphHandle;
    use rocm_backend::graph::exec::{Config, Executor};
    use rocm_backend::ops::registry::{Op, attrs};
    use rocm_backend::runtime::Stream;
    let dev = b.dev.clone();
    let rec = |g: &GraphHandle, op: Op, ins: &[Option<&Tensor>]| -> Res<Tensor> {
        Ok(g.record(None, op, ins, &[Grad::New])?[0].clone().unwrap())
    };
    let exec = |g: &GraphHandle, level: u32, keep_fp32: bool| {
        Executor::new(
            g.snapshot(),
            Config {
                opt_level: level,
                keep_fp32,
                ..Default::default()
            },
        )
    };
    // O3 also with keep_fp32 (no mixed precision: f32 products with their epilogues).
    for (level, keep) in [(0u32, false), (1, false), (3, false), (3, true)] {
        let tag = if keep { "_fp32" } else { "" };
        let name = format!("mlp_fwd_b32_graph_O{level}{tag}");
        b.run(&name.clone(), |b| {
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[32, 784], DType::F32)?;
            let dims = [784usize, 256, 128, 10];
            let mut h = x;
            let mut params = vec![];
            for l in 0..3 {
                let w = randn(&dev, &[dims[l], dims[l + 1]], 10 + l as u64)?;
                let bias = randn(&dev, &[dims[l + 1]], 20 + l as u64)?;
                h = rec(&g, Op::Matmul, &[Some(&h), Some(&w)])?;
                h = rec(&g, Op::Add, &[Some(&h), Some(&bias)])?;
                if l < 2 {
                    h = rec(&g, Op::Relu, &[Some(&h)])?;
                }
                params.push((w, bias));
            }
            g.mark_output(&h)?;
            let e = exec(&g, level, keep)?;
            let s = Stream::new(dev.clone())?;
            let xin = randn(&dev, &[32, 784], 1)?;
            let out = Tensor::empty(dev.clone(), &[32, 10], DType::F32)?;
            b.time(&name, 500, "us", 0.0, || {
                e.run(Some(&s), &[&xin], &[Some(&out)]).map(|_| ())
            })?;
            if level == 3 && keep {
                // The anchor's name for the same workload replayed as a device graph, in exact
                // f32 as the anchor runs it (keep_fp32: no mixed precision).
                let ms = b.results[&name].ms;
                let m = Measure {
                    ms,
                    unit: "us",
                    value: ms * 1e3,
                };
                b.results.insert("mlp_fwd_b32_cudagraph".into(), m);
            }
            let st = e.stats();
            println!(
                "{:40} nodes {} -> {}, fused {:?}, launches/run {}, planned peak {} B of {} B \
                 intermediates, plan {:.2} ms, device graph: {} ({})",
                format!("  stats O{level}{tag}"),
                st.nodes_recorded,
                st.nodes_optimized,
                st.fused,
                st.launches_per_run,
                st.planned_peak_bytes,
                st.intermediate_bytes,
                st.plan_ms,
                st.device_graph,
                st.device_graph_note
            );
            Ok(())
        });
    }
    train_suite(b, &dev);
    resnet_suite(b, &dev);
    llama::llama_suite(b, &dev);
    let (n, tag) = if dev.kind() == DeviceKind::Cpu {
        (1usize << 22, "4M")
    } else {
        (1usize << 26, "64M")
    };
    let chain = format!("elementwise_chain_f32_{tag}");
    b.run(&chain.clone(), |b| {
        let x = randn(&dev, &[n], 1)?;
        let a = randn(&dev, &[n], 2)?;
        let bb = randn(&dev, &[n], 3)?;
        let c = randn(&dev, &[n], 4)?;
        let y = Tensor::empty(dev.clone(), &[n], DType::F32)?;
        let bytes = 5.0 * 4.0 * n as f64;
        let t1 = Tensor::empty(dev.clone(), &[n], DType::F32)?;
        b.time(&format!("{chain}_eager"), 1, "GBps", bytes, || {
            elementwise::binary(None, BinaryOp::Mul, &x, &a, Some(&t1))?;
            elementwise::binary(None, BinaryOp::Add, &t1, &bb, Some(&t1))?;
            elementwise::unary(None, UnaryOp::Gelu { tanh: false }, &t1, Some(&t1))?;
            elementwise::binary(None, BinaryOp::Mul, &t1, &c, Some(&y)).map(|_| ())
        })?;
        let g = GraphHandle::new(dev.clone());
        let xp = g.input(&[n], DType::F32)?;
        let h = rec(&g, Op::Mul, &[Some(&xp), Some(&a)])?;
        let h = rec(&g, Op::Add, &[Some(&h), Some(&bb)])?;
        let gelu = Op::Gelu(attrs::Gelu {
            approximate: UnaryOp::Gelu { tanh: false },
        });
        let h = rec(&g, gelu, &[Some(&h)])?;
        let out = rec(&g, Op::Mul, &[Some(&h), Some(&c)])?;
        g.mark_output(&out)?;
        drop((xp, h, out));
        let e = exec(&g, 1, false)?;
        let st = e.stats();
        println!(
            "{:40} launches/run {} (fused {:?})",
            "  stats O1", st.launches_per_run, st.fused
        );
        b.time(&format!("{chain}_graph_O1"), 1, "GBps", bytes, || {
            e.run(None, &[&x], &[Some(&y)]).map(|_| ())
        })?;
        let copy = Tensor::empty(dev.clone(), &[n], DType::F32)?;
        b.time(
            &format!("copy_f32_{tag}"),
            1,
            "GBps",
            8.0 * n as f64,
            || dev.copy_d2d(x.ptr(), copy.ptr(), n * 4, Default::default()),
        )?;
        let get = |k: &str| b.results.get(k).map(|m| m.value).unwrap_or(f64::NAN);
        let fused = get(&format!("{chain}_graph_O1"));
        let cp = get(&format!("copy_f32_{tag}"));
        println!(
            "{:40} fused chain at {:.2}x of the copy bandwidth ({fused:.1} of {cp:.1} GB/s)",
            "",
            fused / cp
        );
        Ok(())
    });
}

/// torch_anchors_graph.py's mlp_train_step_b32: the 784-256-128-10 MLP, cross entropy, SGD
/// with momentum 0.9 (lr 0.05), batch 32: forward, backward and the six parameter updates,
/// eagerly (mlp_train_step_b32_eager) and recorded once then run by an executor
/// (..._graph_O1, ..._graph_O3 with mixed precision, ..._graph_O3_fp32 in exact f32; the
/// O3_fp32 figure, a device-graph replay with the anchor's f32 semantics, is also reported
/// under the anchor's name mlp_train_step_b32_cudagraph).
fn train_suite(b: &mut Bench, dev: &Dev) {
    use rocm_backend::graph::capture::GraphHandle;
    use rocm_backend::graph::exec::{Config, Executor};
    use rocm_backend::ops::registry::{Op, attrs};
    use rocm_backend::runtime::dispatch;
    type Outs = Vec<Option<Tensor>>;
    // One call, recorded into `g` or run now.
    let call =
        |g: Option<&GraphHandle>, op: Op, ins: &[Option<&Tensor>], outs: &[Grad]| -> Res<Outs> {
            Ok(match g {
                Some(g) => g.record(None, op, ins, outs)?,
                None => dispatch::run(None, &op, ins, outs)?,
            })
        };
    let dims = [784usize, 256, 128, 10];
    let params = || -> Res<Vec<(Tensor, Tensor, Tensor, Tensor)>> {
        (0..3)
            .map(|l| {
                let w = Tensor::randn(
                    dev.clone(),
                    &[dims[l + 1], dims[l]],
                    DType::F32,
                    50 + l as u64,
                )?;
                let bias = Tensor::zeros(dev.clone(), &[dims[l + 1]], DType::F32)?;
                let mw = Tensor::zeros(dev.clone(), &[dims[l + 1], dims[l]], DType::F32)?;
                let mb = Tensor::zeros(dev.clone(), &[dims[l + 1]], DType::F32)?;
                Ok((w, bias, mw, mb))
            })
            .collect()
    };
    let sgd = attrs::SgdStep {
        lr: 0.05,
        momentum: 0.9,
        dampening: 0.0,
        weight_decay: 0.0,
        nesterov: false,
        first_step: false,
    };
    let ce = attrs::CrossEntropy {
        reduction: Reduction::Mean,
        ignore_index: -100,
        label_smoothing: 0.0,
    };
    let ceb = attrs::CrossEntropyBackward {
        reduction: Reduction::Mean,
        ignore_index: -100,
        label_smoothing: 0.0,
    };
    // One step on `x`, `y`; returns the loss.
    let step = |g: Option<&GraphHandle>,
                p: &[(Tensor, Tensor, Tensor, Tensor)],
                x: &Tensor,
                y: &Tensor,
                one: &Tensor|
     -> Res<Tensor> {
        let mut acts = vec![x.clone()];
        let mut pre = vec![];
        let mut h = x.clone();
        for (l, (w, bias, _, _)) in p.iter().enumerate() {
            let z = call(
                g,
                Op::Linear,
                &[Some(&h), Some(w), Some(bias)],
                &[Grad::New],
            )?[0]
                .clone()
                .unwrap();
            pre.push(z.clone());
            h = if l < 2 {
                call(g, Op::Relu, &[Some(&z)], &[Grad::New])?[0]
                    .clone()
                    .unwrap()
            } else {
                z
            };
            acts.push(h.clone());
        }
        let loss = call(
            g,
            Op::CrossEntropy(ce.clone()),
            &[Some(&h), Some(y)],
            &[Grad::New],
        )?[0]
            .clone()
            .unwrap();
        let mut dy = call(
            g,
            Op::CrossEntropyBackward(ceb.clone()),
            &[Some(one), Some(&h), Some(y)],
            &[Grad::New],
        )?[0]
            .clone()
            .unwrap();
        for l in (0..3).rev() {
            if l < 2 {
                dy = call(
                    g,
                    Op::ReluBackward,
                    &[Some(&pre[l]), Some(&dy)],
                    &[Grad::New],
                )?[0]
                    .clone()
                    .unwrap();
            }
            let (w, bias, mw, mb) = &p[l];
            let want_dx = if l > 0 { Grad::New } else { Grad::Skip };
            let r = call(
                g,
                Op::LinearBackward,
                &[Some(&acts[l]), Some(w), Some(&dy)],
                &[want_dx, Grad::New, Grad::New],
            )?;
            let (dw, db) = (r[1].clone().unwrap(), r[2].clone().unwrap());
            call(
                g,
                Op::SgdStep(sgd.clone()),
                &[Some(w), Some(&dw), Some(mw)],
                &[],
            )?;
            call(
                g,
                Op::SgdStep(sgd.clone()),
                &[Some(bias), Some(&db), Some(mb)],
                &[],
            )?;
            if let Some(dx) = r[0].clone() {
                dy = dx;
            }
        }
        Ok(loss)
    };
    let inputs = || -> Res<(Tensor, Tensor, Tensor)> {
        let x = Tensor::randn(dev.clone(), &[32, 784], DType::F32, 7)?;
        let labels: Vec<u8> = (0..32i64)
            .flat_map(|i| (i * 7 % 10).to_ne_bytes())
            .collect();
        let y = Tensor::from_bytes(dev.clone(), &labels, &[32], DType::I64)?;
        let one = Tensor::from_f32(dev.clone(), &[1.0], &[])?;
        Ok((x, y, one))
    };
    b.run("mlp_train_step_b32_eager", |b| {
        let p = params()?;
        let (x, y, one) = inputs()?;
        b.time("mlp_train_step_b32_eager", 100, "us", 0.0, || {
            step(None, &p, &x, &y, &one).map(|_| ())
        })
    });
    for (level, keep) in [(1u32, false), (3, false), (3, true)] {
        let tag = if keep { "_fp32" } else { "" };
        let name = format!("mlp_train_step_b32_graph_O{level}{tag}");
        b.run(&name.clone(), |b| {
            let p = params()?;
            let (x, y, one) = inputs()?;
            let g = GraphHandle::new(dev.clone());
            let xp = g.input(&[32, 784], DType::F32)?;
            let yp = g.input(&[32], DType::I64)?;
            let loss = step(Some(&g), &p, &xp, &yp, &one)?;
            g.mark_output(&loss)?;
            let e = Executor::new(
                g.snapshot(),
                Config {
                    opt_level: level,
                    keep_fp32: keep,
                    ..Default::default()
                },
            )?;
            let s = rocm_backend::runtime::Stream::new(dev.clone())?;
            let out = Tensor::empty(dev.clone(), &[], DType::F32)?;
            b.time(&name, 100, "us", 0.0, || {
                e.run(Some(&s), &[&x, &y], &[Some(&out)]).map(|_| ())
            })?;
            let st = e.stats();
            println!(
                "{:40} nodes {} -> {}, launches/run {}, fused {:?}, device graph: {} ({})",
                format!("  stats train O{level}{tag}"),
                st.nodes_recorded,
                st.nodes_optimized,
                st.launches_per_run,
                st.fused,
                st.device_graph,
                st.device_graph_note
            );
            // The anchor's name: the O3 replay in exact f32, as the anchor runs it.
            if level == 3 && keep {
                let ms = b.results[&name].ms;
                b.results.insert(
                    "mlp_train_step_b32_cudagraph".into(),
                    Measure {
                        ms,
                        unit: "us",
                        value: ms * 1e3,
                    },
                );
            }
            Ok(())
        });
    }
}

/// torch_anchors_graph.py's ResNet-50 inference at batch 32, 224x224 (torchvision's
/// resnet50: bottleneck stages 3-4-6-3, stride on the 3x3 convolution, batch norm in
/// inference, fc 2048 -> 1000; random weights), recorded once through the Rust API the C
/// exports use and run by executors. f32: `..._graph_O0` (every op as recorded: the eager
/// sequence), `..._graph_O1` (conv+bn+relu folding, fusion, memory plan) and `..._graph_O3`
/// (O1 + device-graph replay, kept in f32: keep_fp32, TF32 off), the latter two also under
/// the anchor's names ..._eager (O0) and ..._cudagraph (O3). f16: the same in f16, recorded
/// with NCHW tensors; from O2 the executor runs the convolutions and their elementwise
/// readers channels-last (`passes::channels_last`), as the anchor runs channels_last.
fn resnet_suite(b: &mut Bench, dev: &Dev) {
    use rocm_backend::graph::capture::GraphHandle;
    use rocm_backend::graph::exec::{Config, Executor};
    use rocm_backend::ops::conv::{Activation, ConvAttrs};
    use rocm_backend::ops::pool::{PoolAttrs, PoolKind};
    use rocm_backend::ops::registry::{Op, attrs};
    if dev.kind() == DeviceKind::Cpu {
        println!(
            "{:40} skipped on the CPU (batch 32 at 224x224)",
            "resnet50_b32_*"
        );
        return;
    }
    let batch = 32;
    for (dt, tag) in [(DType::F32, "f32"), (DType::F16, "f16")] {
        let base = format!("resnet50_b32_{tag}_infer");
        if !b.wanted(&format!("{base}_graph_O3")) {
            continue;
        }
        let built = (|| -> Res<(GraphHandle, Tensor)> {
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[batch, 3, 224, 224], dt)?;
            let rec = |op: Op, ins: &[Option<&Tensor>]| -> Res<Tensor> {
                Ok(g.record(None, op, ins, &[Grad::New])?[0].clone().unwrap())
            };
            let param = |shape: &[usize], seed: u64, scale: f32| -> Res<Tensor> {
                let t = Tensor::randn(dev.clone(), shape, DType::F32, seed)?;
                let t = elementwise::unary(
                    None,
                    UnaryOp::Clamp {
                        min: -3.0,
                        max: 3.0,
                    },
                    &t,
                    None,
                )?;
                let sc = Tensor::from_f32(dev.clone(), &[scale], &[])?;
                let t = elementwise::binary(None, BinaryOp::Mul, &t, &sc, None)?;
                rocm_backend::runtime::data::cast(None, &t, dt, None)
            };
            let mut seed = 5000u64;
            let mut conv_bn =
                |x: &Tensor, cin: usize, cout: usize, k: usize, s: usize| -> Res<Tensor> {
                    seed += 3;
                    let w = param(
                        &[cout, cin, k, k],
                        seed,
                        (2.0 / (cin * k * k) as f32).sqrt(),
                    )?;
                    let a = ConvAttrs {
                        stride: vec![s, s],
                        padding: vec![k / 2, k / 2],
                        dilation: vec![1, 1],
                        groups: 1,
                        output_padding: vec![0, 0],
                    };
                    let y = rec(
                        Op::Conv(attrs::Conv {
                            params: (a, 2),
                            activation: Activation::None,
                        }),
                        &[Some(x), Some(&w), None],
                    )?;
                    let gamma = param(&[cout], seed + 1, 0.1)?;
                    let beta = param(&[cout], seed + 2, 0.1)?;
                    let mean = param(&[cout], seed + 3, 0.1)?;
                    let ones = rocm_backend::runtime::data::cast(
                        None,
                        &Tensor::from_f32(dev.clone(), &vec![1.0; cout], &[cout])?,
                        dt,
                        None,
                    )?;
                    let var = elementwise::binary(
                        None,
                        BinaryOp::Add,
                        &ones,
                        &elementwise::unary(None, UnaryOp::Abs, &gamma, None)?,
                        None,
                    )?;
                    let bn = Op::BatchNorm(attrs::BatchNorm {
                        training: false,
                        momentum: 0.1,
                        eps: 1e-5,
                    });
                    rec(
                        bn,
                        &[Some(&y), Some(&mean), Some(&var), Some(&gamma), Some(&beta)],
                    )
                };
            let relu = |x: &Tensor| rec(Op::Relu, &[Some(x)]);
            let mut h = relu(&conv_bn(&x, 3, 64, 7, 2)?)?;
            let pool = PoolAttrs {
                kernel: vec![3, 3],
                stride: vec![2, 2],
                padding: vec![1, 1],
                dilation: vec![1, 1],
                ceil_mode: false,
            };
            h = rec(
                Op::Pool(attrs::Pool {
                    mode: PoolKind::Max,
                    params: (pool, 2),
                }),
                &[Some(&h)],
            )?;
            let mut cin = 64;
            for (stage, blocks) in [3, 4, 6, 3].into_iter().enumerate() {
                let width = 64 << stage;
                for blk in 0..blocks {
                    let stride = if blk == 0 && stage > 0 { 2 } else { 1 };
                    let y = relu(&conv_bn(&h, cin, width, 1, 1)?)?;
                    let y = relu(&conv_bn(&y, width, width, 3, stride)?)?;
                    let y = conv_bn(&y, width, width * 4, 1, 1)?;
                    let short = if blk == 0 {
                        conv_bn(&h, cin, width * 4, 1, stride)?
                    } else {
                        h.clone()
                    };
                    h = relu(&rec(Op::Add, &[Some(&y), Some(&short)])?)?;
                    cin = width * 4;
                }
            }
            let p = rec(
                Op::AdaptiveAvgPool2d(attrs::AdaptiveAvgPool2d { out_h: 1, out_w: 1 }),
                &[Some(&h)],
            )?;
            let flat = p.reshape(&[batch, 2048])?;
            let fw = param(&[1000, 2048], 9001, 0.02)?;
            let fb = param(&[1000], 9002, 0.02)?;
            let logits = rec(Op::Linear, &[Some(&flat), Some(&fw), Some(&fb)])?;
            g.mark_output(&logits)?;
            Ok((g, logits))
        })();
        let (g, _) = match built {
            Ok(v) => v,
            Err(e) => {
                println!("{base:40} not recorded: {e}");
                continue;
            }
        };
        let xin = match Tensor::randn(dev.clone(), &[batch, 3, 224, 224], DType::F32, 77)
            .and_then(|t| rocm_backend::runtime::data::cast(None, &t, dt, None))
        {
            Ok(t) => t,
            Err(e) => {
                println!("{base:40} input: {e}");
                continue;
            }
        };
        let s = match rocm_backend::runtime::Stream::new(dev.clone()) {
            Ok(s) => s,
            Err(e) => {
                println!("{base:40} stream: {e}");
                continue;
            }
        };
        for (level, alias) in [(0u32, "eager"), (1, ""), (3, "cudagraph")] {
            let name = format!("{base}_graph_O{level}");
            b.run(&name.clone(), |b| {
                let e = Executor::new(
                    g.snapshot(),
                    Config { opt_level: level, keep_fp32: true, ..Default::default() },
                )?;
                let out = Tensor::empty(dev.clone(), &[batch, 1000], dt)?;
                b.time(&name, 3, "us", 0.0, || {
                    e.run(Some(&s), &[&xin], &[Some(&out)]).map(|_| ())
                })?;
                let ms = b.results[&name].ms;
                println!("{:40} {:.0} images/s", "", batch as f64 * 1e3 / ms);
                let st = e.stats();
                println!(
                    "{:40} nodes {} -> {}, launches/run {}, fused {:?}, peak {} MB of {} MB, device graph: {} ({})",
                    format!("  stats {tag} O{level}"),
                    st.nodes_recorded,
                    st.nodes_optimized,
                    st.launches_per_run,
                    st.fused,
                    st.planned_peak_bytes >> 20,
                    st.intermediate_bytes >> 20,
                    st.device_graph,
                    st.device_graph_note
                );
                if !alias.is_empty() {
                    let m = &b.results[&name];
                    let m = Measure { ms: m.ms, unit: m.unit, value: m.value };
                    b.results.insert(format!("{base}_{alias}"), m);
                }
                Ok(())
            });
        }
    }
}
