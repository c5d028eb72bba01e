//! The graph executor on every device present (CPU always; CUDA and ROCm where there is
//! one, which each test names on stderr when it is absent): graphs recorded through the
//! Rust API the C exports use, run at O0..O3 against eager results; fusion counted by the
//! executor's stats; the memory plan; training steps; misuse; threads.

use rocm_backend::base::dtype::DType;
use rocm_backend::device::Device;
use rocm_backend::graph::capture::GraphHandle;
use rocm_backend::graph::exec::{Config, Executor};
use rocm_backend::ops::conv::{Activation, ConvAttrs};
use rocm_backend::ops::elementwise::{BinaryOp, UnaryOp};
use rocm_backend::ops::nn::Reduction;
use rocm_backend::ops::pool::{PoolAttrs, PoolKind};
use rocm_backend::ops::registry::{Op, attrs};
use rocm_backend::runtime::eager::Grad;
use rocm_backend::runtime::{Stream, Tensor, context};
use rocm_backend::{Error, ErrorKind};
use std::sync::Arc;

/// The tests run one at a time: a device-graph capture (O3) on a blocking stream fails, by
/// CUDA's rules, when another thread uses the legacy default stream meanwhile (which these
/// tests do: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT), so parallel test threads would make each
/// other fail depending on timing. The executor documents the same rule for its callers.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn devices() -> Vec<Arc<dyn Device>> {
    let mut v = vec![context::resolve(Some("cpu")).unwrap()];
    for name in ["cuda", "rocm"] {
        match context::resolve(Some(name)) {
            Ok(d) => v.push(d),
            Err(e) => eprintln!("graph: {name} cases skipped: {e}"),
        }
    }
    v
}

fn data(n: usize, seed: u64, scale: f32) -> Vec<f32> {
    (0..n)
        .map(|i| rocm_backend::ops::random::normal_f32(seed, i as u64) * scale)
        .collect()
}

fn t(dev: &Arc<dyn Device>, shape: &[usize], seed: u64, scale: f32) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_f32(dev.clone(), &data(n, seed, scale), shape).unwrap()
}

/// Records one op (no destination) and returns its first result.
fn rec(g: &GraphHandle, op: Op, ins: &[Option<&Tensor>]) -> Tensor {
    g.record(None, op, ins, &[Grad::New]).unwrap()[0]
        .clone()
        .unwrap()
}

fn close(a: &Tensor, b: &Tensor, tol: f64) {
    assert_eq!(a.shape(), b.shape());
    let (x, y) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
    for (i, (p, q)) in x.iter().zip(&y).enumerate() {
        let err = (p - q).abs() / (1.0 + q.abs());
        assert!(err <= tol, "element {i}: {p} vs {q} (tolerance {tol})");
    }
}

/// How many nodes the executor's passes made under `label` (its `fused` counts; 0: none).
fn fused_count(s: &rocm_backend::graph::exec::Stats, label: &str) -> usize {
    s.fused
        .iter()
        .find(|(n, _)| n == label)
        .map_or(0, |(_, c)| *c)
}

fn exec(g: &GraphHandle, level: u32) -> Executor {
    Executor::new(
        g.snapshot(),
        Config {
            opt_level: level,
            ..Default::default()
        },
    )
    .unwrap()
}

/// `exec` with `keep_fp32`: f32 at every level (no mixed precision on GPUs).
fn exec_f32(g: &GraphHandle, level: u32) -> Executor {
    Executor::new(
        g.snapshot(),
        Config {
            opt_level: level,
            keep_fp32: true,
            ..Default::default()
        },
    )
    .unwrap()
}

/// A 2-D convolution of a square kernel `k` (padding `k / 2`) at `stride`, then `act`.
fn conv2d_op(k: usize, stride: usize, act: Activation) -> Op {
    Op::Conv(attrs::Conv {
        params: (
            ConvAttrs {
                stride: vec![stride, stride],
                padding: vec![k / 2, k / 2],
                dilation: vec![1, 1],
                groups: 1,
                output_padding: vec![0, 0],
            },
            2,
        ),
        activation: act,
    })
}

/// 784-256-128-10 MLP parameters.
struct Mlp {
    w: Vec<Tensor>,
    b: Vec<Tensor>,
}

fn mlp(dev: &Arc<dyn Device>) -> Mlp {
    let dims = [784, 256, 128, 10];
    let mut w = vec![];
    let mut b = vec![];
    for l in 0..3 {
        w.push(t(dev, &[dims[l + 1], dims[l]], 10 + l as u64, 0.05));
        b.push(t(dev, &[dims[l + 1]], 20 + l as u64, 0.1));
    }
    Mlp { w, b }
}

/// Records the MLP forward on `x`; returns the logits.
fn record_mlp(g: &GraphHandle, m: &Mlp, x: &Tensor) -> Tensor {
    let mut h = x.clone();
    for l in 0..3 {
        h = rec(g, Op::Linear, &[Some(&h), Some(&m.w[l]), Some(&m.b[l])]);
        if l < 2 {
            h = rec(g, Op::Relu, &[Some(&h)]);
        }
    }
    h
}

fn eager_mlp(m: &Mlp, x: &Tensor) -> Tensor {
    use rocm_backend::runtime::prelude as nn;
    let mut h = x.clone();
    for l in 0..3 {
        h = nn::linear(None, &h, &m.w[l], Some(&m.b[l]), None).unwrap();
        if l < 2 {
            h = nn::unary(None, UnaryOp::Relu, &h, None).unwrap();
        }
    }
    h
}

#[test]
fn mlp_forward_every_level_matches_eager() {
    let _serial = serial();
    for dev in devices() {
        let m = mlp(&dev);
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[32, 784], DType::F32).unwrap();
        let y = record_mlp(&g, &m, &x);
        g.mark_output(&y).unwrap();
        assert_eq!(g.snapshot().num_nodes(), 5);
        let stream = Stream::new(dev.clone()).unwrap();
        for level in 0..=3 {
            let e = exec(&g, level);
            for run in 0..3u64 {
                let xin = t(&dev, &[32, 784], 100 + run, 1.0);
                let want = eager_mlp(&m, &xin);
                let out = e.run(Some(&stream), &[&xin], &[None]).unwrap();
                stream.synchronize().unwrap();
                // bf16 products from O2 on, except on the CPU (Device::faster_in_bf16)
                let bf16 = level >= 2 && dev.faster_in_bf16();
                let tol = if bf16 { 3e-2 } else { 1e-4 };
                close(&out[0], &want, tol);
            }
            let s = e.stats();
            eprintln!("{} O{level}: {s:?}", dev.name());
            assert_eq!(s.nodes_recorded, 5);
            match level {
                0 => assert_eq!(s.launches_per_run, 5),
                1 => {
                    // linear+relu twice, the last linear alone
                    assert_eq!(s.launches_per_run, 3);
                    assert_eq!(s.fused, vec![("matmul+bias+relu".to_string(), 2)]);
                    assert!(s.planned_peak_bytes > 0);
                    assert!(s.planned_peak_bytes <= s.intermediate_bytes);
                }
                2 => assert_eq!(
                    s.mixed_precision_nodes,
                    if dev.faster_in_bf16() { 3 } else { 0 }
                ),
                _ => {
                    if dev.name().starts_with("cpu") {
                        assert!(!s.device_graph, "{}", s.device_graph_note);
                    } else {
                        assert!(s.device_graph, "{}", s.device_graph_note);
                        assert!(s.replays >= 1);
                    }
                }
            }
        }
    }
}

#[test]
fn elementwise_chain_is_one_kernel() {
    let _serial = serial();
    for dev in devices() {
        for dtype in [DType::F32, DType::F16, DType::BF16] {
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[3, 1000], dtype).unwrap();
            let cast =
                |v: Tensor| rocm_backend::runtime::prelude::cast(None, &v, dtype, None).unwrap();
            let a = cast(t(&dev, &[3, 1000], 1, 1.0));
            let b = cast(t(&dev, &[1000], 2, 1.0));
            let c = cast(t(&dev, &[3, 1], 3, 1.0));
            // y = gelu(x * a + b) * c, with broadcast b and c
            let h = rec(&g, Op::Mul, &[Some(&x), Some(&a)]);
            let h = rec(&g, Op::Add, &[Some(&h), Some(&b)]);
            let gelu = Op::Gelu(attrs::Gelu {
                approximate: UnaryOp::Gelu { tanh: false },
            });
            let h = rec(&g, gelu, &[Some(&h)]);
            let y = rec(&g, Op::Mul, &[Some(&h), Some(&c)]);
            g.mark_output(&y).unwrap();
            let e0 = exec(&g, 0);
            let e1 = exec(&g, 1);
            let s = e1.stats();
            assert_eq!(s.launches_per_run, 1, "{s:?}");
            assert_eq!(s.fused, vec![("elementwise".to_string(), 1)]);
            let xin = cast(t(&dev, &[3, 1000], 9, 1.0));
            let r0 = e0.run(None, &[&xin], &[None]).unwrap();
            let r1 = e1.run(None, &[&xin], &[None]).unwrap();
            // the fused program rounds where the ops store: equal, not just close
            close(&r1[0], &r0[0], if dtype == DType::F32 { 1e-6 } else { 0.0 });
        }
    }
}

#[test]
fn parameters_are_bound_by_reference_and_new_shapes_replan() {
    let _serial = serial();
    for dev in devices() {
        let m = mlp(&dev);
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[32, 784], DType::F32).unwrap();
        let y = record_mlp(&g, &m, &x);
        g.mark_output(&y).unwrap();
        let e = exec(&g, 1);
        let xin = t(&dev, &[32, 784], 5, 1.0);
        let before = e.run(None, &[&xin], &[None]).unwrap();
        close(&before[0], &eager_mlp(&m, &xin), 1e-4);
        // overwrite a weight: the next run sees it
        let fresh = data(10 * 128, 77, 0.05);
        let bytes: Vec<u8> = fresh.iter().flat_map(|v| v.to_ne_bytes()).collect();
        dev.copy_h2d(&bytes, m.w[2].ptr(), Default::default())
            .unwrap();
        dev.synchronize().unwrap();
        let after = e.run(None, &[&xin], &[None]).unwrap();
        close(&after[0], &eager_mlp(&m, &xin), 1e-4);
        // a new batch size: planned again, results right both times
        let x8 = t(&dev, &[8, 784], 6, 1.0);
        for _ in 0..2 {
            let r = e.run(None, &[&x8], &[None]).unwrap();
            close(&r[0], &eager_mlp(&m, &x8), 1e-4);
        }
        assert_eq!(e.stats().plans, 2);
        // the recording itself changed no parameter: recorded graph and eager agree above
    }
}

/// Raw calls (`rb_kernel_*`, `rb_blas_*`, `rb_dnn_*` on the caller's pointers) recorded
/// between eager ones: checked while recording (nothing runs then), run in order at every
/// executor run on the caller's memory, at every level (O3 captures them into the device
/// graph); a pointer into a placeholder is refused.
#[test]
fn raw_calls_are_recorded_in_order_on_every_level() {
    let _serial = serial();
    use rocm_backend::runtime::raw::kernel;
    for dev in devices() {
        let n = 1000;
        let stream = Stream::new(dev.clone()).unwrap();
        let acc = t(&dev, &[n], 7, 1.0);
        let step = t(&dev, &[n], 8, 0.5);
        let mut want_acc = acc.to_f64_vec().unwrap();
        let stepv = step.to_f64_vec().unwrap();
        let g = Arc::new(GraphHandle::new(dev.clone()));
        let x = g.input(&[n], DType::F32).unwrap();
        let y = rec(&g, Op::Relu, &[Some(&x)]);
        let (a, b) = (acc.ptr(), step.ptr());
        let ptrs = [("a", a), ("b", b), ("y", a)];
        let add =
            move |s: Option<&Stream>| kernel::binary(s, BinaryOp::Add, DType::F32, a, b, a, n);
        g.record_raw(&stream, "rb_kernel_add", &ptrs, Arc::new(add))
            .unwrap();
        // nothing ran while recording
        assert_eq!(acc.to_f64_vec().unwrap(), want_acc);
        // the call's own checks apply while recording
        let null = rocm_backend::device::DevPtr::NULL;
        let bad =
            move |s: Option<&Stream>| kernel::binary(s, BinaryOp::Add, DType::F32, a, null, a, n);
        let e = g
            .record_raw(&stream, "rb_kernel_add", &[("b", null)], Arc::new(bad))
            .unwrap_err();
        assert_eq!(e.kind, ErrorKind::NullPointer, "{e}");
        // a pointer into a placeholder is refused
        let into = y.ptr();
        let e = g
            .record_raw(&stream, "rb_kernel_add", &[("y", into)], Arc::new(add))
            .unwrap_err();
        assert!(e.message.contains("placeholder"), "{e}");
        // a recorded op after the raw call reads the caller's memory as it then is
        let z = rec(&g, Op::Add, &[Some(&y), Some(&acc)]);
        g.mark_output(&z).unwrap();
        assert_eq!(g.snapshot().num_nodes(), 3);
        for level in [0, 1, 3] {
            let e = exec(&g, level);
            for run in 0..3u64 {
                let xin = t(&dev, &[n], 300 + run, 1.0);
                let out = e.run(Some(&stream), &[&xin], &[None]).unwrap();
                stream.synchronize().unwrap();
                for (w, s) in want_acc.iter_mut().zip(&stepv) {
                    *w = (*w as f32 + *s as f32) as f64;
                }
                let xs = xin.to_f64_vec().unwrap();
                let want: Vec<f32> = xs
                    .iter()
                    .zip(&want_acc)
                    .map(|(x, a)| (x.max(0.0) as f32) + *a as f32)
                    .collect();
                let want = Tensor::from_f32(dev.clone(), &want, &[n]).unwrap();
                close(&out[0], &want, 1e-6);
                let got_acc = acc.to_f64_vec().unwrap();
                assert_eq!(got_acc, want_acc, "{} O{level} run {run}", dev.name());
            }
            let s = e.stats();
            assert_eq!(s.nodes_recorded, 3);
            assert_eq!(s.launches_per_run, 3, "{} O{level}: {s:?}", dev.name());
        }
    }
}

/// A recorded backward: the gradients a graph computes (marked as outputs) equal the eager
/// backward's and central finite differences of the eager loss, at O0, O1 and O3.
#[test]
fn recorded_gradients_match_eager_and_finite_differences() {
    let _serial = serial();
    use rocm_backend::runtime::dispatch;
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
    for dev in devices() {
        let (w1, b1) = (t(&dev, &[6, 5], 61, 0.5), t(&dev, &[6], 62, 0.1));
        let (w2, b2) = (t(&dev, &[3, 6], 63, 0.5), t(&dev, &[3], 64, 0.1));
        let x = t(&dev, &[4, 5], 65, 1.0);
        let labels: Vec<u8> = [0i64, 2, 1, 2]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let y = Tensor::from_bytes(dev.clone(), &labels, &[4], DType::I64).unwrap();
        let one = Tensor::from_f32(dev.clone(), &[1.0], &[]).unwrap();
        // The step's calls, recorded into `g` or run eagerly; returns (loss, dw1, dw2, db1).
        let run = |g: Option<&GraphHandle>, x: &Tensor, y: &Tensor, w1: &Tensor| {
            let call = |op: Op, ins: &[Option<&Tensor>], n: usize| -> Vec<Option<Tensor>> {
                let outs = vec![Grad::New; n];
                match g {
                    Some(g) => g.record(None, op, ins, &outs).unwrap(),
                    None => dispatch::run(None, &op, ins, &outs).unwrap(),
                }
            };
            let z1 = call(Op::Linear, &[Some(x), Some(w1), Some(&b1)], 1)[0]
                .clone()
                .unwrap();
            let h1 = call(Op::Relu, &[Some(&z1)], 1)[0].clone().unwrap();
            let z2 = call(Op::Linear, &[Some(&h1), Some(&w2), Some(&b2)], 1)[0]
                .clone()
                .unwrap();
            let loss = call(Op::CrossEntropy(ce.clone()), &[Some(&z2), Some(y)], 1)[0]
                .clone()
                .unwrap();
            let d2 = call(
                Op::CrossEntropyBackward(ceb.clone()),
                &[Some(&one), Some(&z2), Some(y)],
                1,
            )[0]
            .clone()
            .unwrap();
            let r2 = call(Op::LinearBackward, &[Some(&h1), Some(&w2), Some(&d2)], 3);
            let dh1 = r2[0].clone().unwrap();
            let dz1 = call(Op::ReluBackward, &[Some(&z1), Some(&dh1)], 1)[0]
                .clone()
                .unwrap();
            let r1 = call(Op::LinearBackward, &[Some(x), Some(w1), Some(&dz1)], 3);
            (
                loss,
                r1[1].clone().unwrap(),
                r2[1].clone().unwrap(),
                r1[2].clone().unwrap(),
            )
        };
        let eager = run(None, &x, &y, &w1);
        let g = GraphHandle::new(dev.clone());
        let xp = g.input(&[4, 5], DType::F32).unwrap();
        let yp = g.input(&[4], DType::I64).unwrap();
        let rec_out = run(Some(&g), &xp, &yp, &w1);
        for v in [&rec_out.0, &rec_out.1, &rec_out.2, &rec_out.3] {
            g.mark_output(v).unwrap();
        }
        // central differences of the eager loss in w1
        let base = w1.to_f64_vec().unwrap();
        let loss_at = |wv: &[f64]| -> f64 {
            let f: Vec<f32> = wv.iter().map(|v| *v as f32).collect();
            let wt = Tensor::from_f32(dev.clone(), &f, &[6, 5]).unwrap();
            run(None, &x, &y, &wt).0.to_f64_vec().unwrap()[0]
        };
        let eps = 1e-2;
        let mut fd = vec![];
        for i in [0usize, 7, 13, 29] {
            let (mut p, mut m) = (base.clone(), base.clone());
            p[i] += eps;
            m[i] -= eps;
            fd.push((i, (loss_at(&p) - loss_at(&m)) / (2.0 * eps)));
        }
        for level in [0, 1, 3] {
            let e = exec(&g, level);
            let out = e.run(None, &[&x, &y], &[None, None, None, None]).unwrap();
            // O3 includes O2's bf16 products: mixed-precision tolerance
            let tol = if level >= 2 { 3e-2 } else { 1e-5 };
            close(&out[0], &eager.0, tol);
            close(&out[1], &eager.1, tol);
            close(&out[2], &eager.2, tol);
            close(&out[3], &eager.3, tol);
            let dw1 = out[1].to_f64_vec().unwrap();
            let fd_tol = if level >= 2 { 3e-2 } else { 2e-3 };
            for (i, d) in &fd {
                assert!(
                    (dw1[*i] - d).abs() <= fd_tol + 2e-2 * d.abs(),
                    "{} O{level}: dL/dw1[{i}] = {} by the graph, {d} by finite differences",
                    dev.name(),
                    dw1[*i]
                );
            }
        }
    }
}

#[test]
fn training_step_updates_parameters_only_when_run() {
    let _serial = serial();
    for dev in devices() {
        let m = mlp(&dev);
        let copy = |v: &Tensor| v.to_device(dev.clone()).unwrap();
        let w_before: Vec<Vec<f64>> = m.w.iter().map(|w| w.to_f64_vec().unwrap()).collect();
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[32, 784], DType::F32).unwrap();
        let tgt = g.input(&[32], DType::I64).unwrap();
        // forward, keeping activations
        let mut acts = vec![x.clone()];
        let mut pre = vec![];
        let mut h = x.clone();
        for l in 0..3 {
            let z = rec(&g, Op::Linear, &[Some(&h), Some(&m.w[l]), Some(&m.b[l])]);
            pre.push(z.clone());
            h = if l < 2 {
                rec(&g, Op::Relu, &[Some(&z)])
            } else {
                z
            };
            acts.push(h.clone());
        }
        let ce = attrs::CrossEntropy {
            reduction: Reduction::Mean,
            ignore_index: -100,
            label_smoothing: 0.0,
        };
        let loss = rec(&g, Op::CrossEntropy(ce), &[Some(&h), Some(&tgt)]);
        let one = Tensor::from_f32(dev.clone(), &[1.0], &[]).unwrap();
        let ceb = attrs::CrossEntropyBackward {
            reduction: Reduction::Mean,
            ignore_index: -100,
            label_smoothing: 0.0,
        };
        let mut dy = rec(
            &g,
            Op::CrossEntropyBackward(ceb),
            &[Some(&one), Some(&h), Some(&tgt)],
        );
        let sgd = attrs::SgdStep {
            lr: 0.05,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            first_step: false,
        };
        for l in (0..3).rev() {
            if l < 2 {
                dy = rec(&g, Op::ReluBackward, &[Some(&pre[l]), Some(&dy)]);
            }
            let r = g
                .record(
                    None,
                    Op::LinearBackward,
                    &[Some(&acts[l]), Some(&m.w[l]), Some(&dy)],
                    &[Grad::New, Grad::New, Grad::New],
                )
                .unwrap();
            let (dx, dw, db) = (r[0].clone(), r[1].clone().unwrap(), r[2].clone().unwrap());
            g.record(
                None,
                Op::SgdStep(sgd.clone()),
                &[Some(&m.w[l]), Some(&dw), None],
                &[],
            )
            .unwrap();
            g.record(
                None,
                Op::SgdStep(sgd.clone()),
                &[Some(&m.b[l]), Some(&db), None],
                &[],
            )
            .unwrap();
            if let Some(dx) = dx {
                dy = dx;
            }
        }
        g.mark_output(&loss).unwrap();
        // recording ran every call once, but no parameter changed
        for (w, before) in m.w.iter().zip(&w_before) {
            assert_eq!(&w.to_f64_vec().unwrap(), before);
        }
        // eager reference on copies of the parameters
        let mr = Mlp {
            w: m.w.iter().map(copy).collect(),
            b: m.b.iter().map(copy).collect(),
        };
        let xin = t(&dev, &[32, 784], 40, 1.0);
        let labels: Vec<u8> = (0..32i64)
            .flat_map(|i| (i * 7 % 10).to_ne_bytes())
            .collect();
        let yin = Tensor::from_bytes(dev.clone(), &labels, &[32], DType::I64).unwrap();
        let mut after_o0: Vec<Vec<f64>> = vec![];
        for level in [0, 1, 3] {
            let e = exec(&g, level);
            // a fresh copy of the parameters for each level: reset to the start values
            for (dst, src) in m.w.iter().zip(&mr.w).chain(m.b.iter().zip(&mr.b)) {
                dev.copy_d2d(src.ptr(), dst.ptr(), src.nbytes(), Default::default())
                    .unwrap();
            }
            dev.synchronize().unwrap();
            let l1 = e.run(None, &[&xin, &yin], &[None]).unwrap();
            let l2 = e.run(None, &[&xin, &yin], &[None]).unwrap();
            let (a, b) = (
                l1[0].to_f64_vec().unwrap()[0],
                l2[0].to_f64_vec().unwrap()[0],
            );
            assert!(b < a, "O{level}: the loss falls after a step ({a} -> {b})");
            if level == 0 {
                // O0 equals the eager step to f32 accuracy
                let logits = eager_mlp(&mr, &xin);
                let want = rocm_backend::runtime::prelude::loss(
                    None,
                    rocm_backend::ops::nn::LossKind::CrossEntropy,
                    &logits,
                    &yin,
                    Reduction::Mean,
                    -100,
                    0.0,
                    None,
                )
                .unwrap();
                close(&l1[0], &want, 1e-5);
            }
            // the six SGD steps (same attributes) run as one grouped step from O1; the
            // parameters after two steps match O0's (O3 on a GPU: bf16 products)
            let params: Vec<Vec<f64>> =
                m.w.iter()
                    .chain(&m.b)
                    .map(|t| t.to_f64_vec().unwrap())
                    .collect();
            if level == 0 {
                after_o0 = params;
            } else {
                let cpu = dev.kind() == rocm_backend::device::DeviceKind::Cpu;
                let tol = if level >= 2 && !cpu { 2e-2 } else { 1e-5 };
                for (p, q) in params.iter().zip(&after_o0) {
                    for (a, b) in p.iter().zip(q) {
                        assert!(
                            (a - b).abs() <= tol * (1.0 + b.abs()),
                            "O{level}: {a} vs {b}"
                        );
                    }
                }
            }
            let s = e.stats();
            let groups = s
                .fused
                .iter()
                .find(|(n, _)| n == "sgd_step group")
                .map_or(0, |(_, c)| *c);
            assert_eq!(groups, usize::from(level >= 1), "O{level}: {s:?}");
            // The relu backwards read the relus' outputs, so both hidden products take
            // their relu in the epilogue from O1 (not at O2/O3 on a device that runs the
            // products in bf16: the mixed-precision pass moves activations into chains).
            let dense_relu = s
                .fused
                .iter()
                .find(|(n, _)| n == "matmul+bias+relu")
                .map_or(0, |(_, c)| *c);
            // The hidden layers' relu backward and linear backward are one node from O1.
            let relu_bwd = s
                .fused
                .iter()
                .find(|(n, _)| n == "relu_backward+linear_backward")
                .map_or(0, |(_, c)| *c);
            if level == 1 {
                assert_eq!(dense_relu, 2, "O{level}: {s:?}");
                assert_eq!(relu_bwd, 2, "O{level}: {s:?}");
            }
            eprintln!(
                "{} training O{level}: peak {} of {} intermediate bytes, {} launches",
                dev.name(),
                s.planned_peak_bytes,
                s.intermediate_bytes,
                s.launches_per_run
            );
        }
    }
}

/// A ResNet-50-shaped graph (bottleneck stages 3-4-6-3, batch 1 at 64x64 to keep the
/// recording quick on the CPU: the plan's ratio depends on the structure, not the size).
fn record_resnet50(g: &GraphHandle, dev: &Arc<dyn Device>, x: &Tensor) -> Tensor {
    let mut seed = 1000;
    let mut conv = |g: &GraphHandle, x: &Tensor, cin: usize, cout: usize, k: usize, s: usize| {
        seed += 1;
        let w = t(
            dev,
            &[cout, cin, k, k],
            seed,
            (2.0 / (cin * k * k) as f32).sqrt(),
        );
        let attrs = ConvAttrs {
            stride: vec![s, s],
            padding: vec![k / 2, k / 2],
            dilation: vec![1, 1],
            groups: 1,
            output_padding: vec![0, 0],
        };
        let y = rec(
            g,
            Op::Conv(attrs::Conv {
                params: (attrs, 2),
                activation: Activation::None,
            }),
            &[Some(x), Some(&w), None],
        );
        let ones = Tensor::from_f32(dev.clone(), &vec![1.0; cout], &[cout]).unwrap();
        let zeros = Tensor::from_f32(dev.clone(), &vec![0.0; cout], &[cout]).unwrap();
        let bn = Op::BatchNorm(attrs::BatchNorm {
            training: false,
            momentum: 0.1,
            eps: 1e-5,
        });
        rec(
            g,
            bn,
            &[
                Some(&y),
                Some(&zeros),
                Some(&ones),
                Some(&ones),
                Some(&zeros),
            ],
        )
    };
    let relu = |g: &GraphHandle, x: &Tensor| rec(g, Op::Relu, &[Some(x)]);
    let mut h = conv(g, x, 3, 64, 7, 2);
    h = relu(g, &h);
    let pool = PoolAttrs {
        kernel: vec![3, 3],
        stride: vec![2, 2],
        padding: vec![1, 1],
        dilation: vec![1, 1],
        ceil_mode: false,
    };
    h = rec(
        g,
        Op::Pool(attrs::Pool {
            mode: PoolKind::Max,
            params: (pool, 2),
        }),
        &[Some(&h)],
    );
    let mut cin = 64;
    for (stage, blocks) in [3, 4, 6, 3].into_iter().enumerate() {
        let width = 64 << stage;
        for b in 0..blocks {
            let stride = if b == 0 && stage > 0 { 2 } else { 1 };
            let mut y = relu(g, &conv(g, &h, cin, width, 1, 1));
            y = relu(g, &conv(g, &y, width, width, 3, stride));
            y = conv(g, &y, width, width * 4, 1, 1);
            let short = if b == 0 {
                conv(g, &h, cin, width * 4, 1, stride)
            } else {
                h.clone()
            };
            h = relu(g, &rec(g, Op::Add, &[Some(&y), Some(&short)]));
            cin = width * 4;
        }
    }
    rec(
        g,
        Op::AdaptiveAvgPool2d(attrs::AdaptiveAvgPool2d { out_h: 1, out_w: 1 }),
        &[Some(&h)],
    )
}

#[test]
fn memory_plan_of_resnet50_shaped_graph() {
    let _serial = serial();
    let dev = context::resolve(Some("cpu")).unwrap();
    let g = GraphHandle::new(dev.clone());
    let x = g.input(&[1, 3, 64, 64], DType::F32).unwrap();
    let y = record_resnet50(&g, &dev, &x);
    g.mark_output(&y).unwrap();
    for level in [1, 0] {
        let e = exec(&g, level);
        let s = e.stats();
        let plan = rocm_backend::graph::plan::plan(&g.snapshot());
        eprintln!(
            "resnet50-shaped O{level}: {} nodes -> {}, fused {:?}; recorded plan: peak {} of {} \
             intermediate bytes ({:.3}); executor plan: peak {} of {}",
            s.nodes_recorded,
            s.nodes_optimized,
            s.fused,
            plan.arena_bytes,
            plan.intermediate_bytes,
            plan.arena_bytes as f64 / plan.intermediate_bytes as f64,
            s.planned_peak_bytes,
            s.intermediate_bytes
        );
        assert!(plan.arena_bytes as f64 <= 0.3 * plan.intermediate_bytes as f64);
        if level == 1 {
            // every conv+bn pair folded at plan time (53 in ResNet-50), 33 with their relu
            assert!(s.fused.iter().any(|(n, c)| n == "conv+bn+relu" && *c == 33));
            assert!(s.fused.iter().any(|(n, c)| n == "conv+bn" && *c == 20));
            assert!(s.planned_peak_bytes as f64 <= 0.3 * s.intermediate_bytes as f64);
            let xin = t(&dev, &[1, 3, 64, 64], 3, 1.0);
            let r1 = e.run(None, &[&xin], &[None]).unwrap();
            let r0 = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
            // 50 layers of f32 through different but equivalent op sequences (conv_bn_relu
            // folds the batch norm into the convolution's epilogue): rounding differences
            // grow with depth.
            close(&r1[0], &r0[0], 5e-3);
        }
    }
}

/// conv+bn(+relu) folding in each float dtype: f32 into one convolution with bias and relu,
/// f16/bf16 into a convolution on the scaled weight and an add of the shift (fused with the
/// relu); O1 equals O0 within the dtype's tolerance on every device; f32 at O2 folds too
/// (before the mixed precision's casts, where the device has it).
#[test]
fn conv_bn_folding_in_every_float_dtype() {
    let _serial = serial();
    use rocm_backend::runtime::data::cast;
    for dev in devices() {
        for (dt, tol) in [(DType::F32, 1e-4), (DType::F16, 2e-2), (DType::BF16, 6e-2)] {
            let c = |t: Tensor| cast(None, &t, dt, None).unwrap();
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[2, 3, 9, 8], dt).unwrap();
            let w = c(t(&dev, &[5, 3, 3, 3], 71, 0.3));
            let a = ConvAttrs {
                stride: vec![1, 1],
                padding: vec![1, 1],
                dilation: vec![1, 1],
                groups: 1,
                output_padding: vec![0, 0],
            };
            let y = rec(
                &g,
                Op::Conv(attrs::Conv {
                    params: (a, 2),
                    activation: Activation::None,
                }),
                &[Some(&x), Some(&w), None],
            );
            let mean = c(t(&dev, &[5], 72, 0.2));
            let var = c(Tensor::from_f32(dev.clone(), &[0.5, 1.0, 1.5, 2.0, 0.8], &[5]).unwrap());
            let gamma = c(t(&dev, &[5], 73, 1.0));
            let beta = c(t(&dev, &[5], 74, 0.2));
            let bn = Op::BatchNorm(attrs::BatchNorm {
                training: false,
                momentum: 0.1,
                eps: 1e-5,
            });
            let z = rec(
                &g,
                bn,
                &[Some(&y), Some(&mean), Some(&var), Some(&gamma), Some(&beta)],
            );
            let r = rec(&g, Op::Relu, &[Some(&z)]);
            g.mark_output(&r).unwrap();
            let xin = c(t(&dev, &[2, 3, 9, 8], 75, 1.0));
            let want = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
            let e = exec(&g, 1);
            let got = e.run(None, &[&xin], &[None]).unwrap();
            close(&got[0], &want[0], tol);
            let s = e.stats();
            let launches = if dt == DType::F32 { 1 } else { 2 };
            assert_eq!(s.launches_per_run, launches, "{} {dt}: {s:?}", dev.name());
            if dt == DType::F32 {
                // O2: where the device runs f32 products in bf16 (mixed precision), the
                // batch norm folds before the casts go in (the shift an add after a bf16
                // convolution, fused with the cast back and the relu); elsewhere as O1.
                let e2 = exec(&g, 2);
                let got = e2.run(None, &[&xin], &[None]).unwrap();
                let mixed = dev.faster_in_bf16();
                close(&got[0], &want[0], if mixed { 6e-2 } else { tol });
                let s2 = e2.stats();
                assert!(
                    s2.fused
                        .iter()
                        .any(|(n, c)| (n == "conv+bn+relu" || n == "conv+bn") && *c == 1),
                    "{} O2: the batch norm not folded: {s2:?}",
                    dev.name()
                );
                if mixed {
                    assert_eq!(s2.mixed_precision_nodes, 1, "{}: {s2:?}", dev.name());
                }
            }
        }
    }
}

/// A residual block's tail, conv(+bn) + add(shortcut) + relu: one conv+add+relu node in f32
/// (the CPU adds the residual in the convolution's epilogue, the GPUs in one kernel after the
/// convolution), on the CPU equal to O0 bit for bit (the same sums in the same order); with
/// no relu a conv+add node; not fused where the convolution's output has another reader (the
/// add+relu then stays a chain), nor where O3 runs the convolution in bf16 (mixed precision
/// on a GPU). Every level matches O0 everywhere.
#[test]
fn conv_add_relu_fusion() {
    let _serial = serial();
    for dev in devices() {
        let cpu = dev.kind() == rocm_backend::device::DeviceKind::Cpu;
        for (relu, second_reader) in [(true, false), (false, false), (true, true)] {
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[2, 8, 9, 9], DType::F32).unwrap();
            let w = t(&dev, &[8, 8, 3, 3], 81, 0.3);
            let b = t(&dev, &[8], 82, 0.5);
            let a = ConvAttrs {
                stride: vec![1, 1],
                padding: vec![1, 1],
                dilation: vec![1, 1],
                groups: 1,
                output_padding: vec![0, 0],
            };
            let conv = Op::Conv(attrs::Conv {
                params: (a, 2),
                activation: Activation::None,
            });
            let y = rec(&g, conv, &[Some(&x), Some(&w), Some(&b)]);
            let mut z = rec(&g, Op::Add, &[Some(&x), Some(&y)]);
            if relu {
                z = rec(&g, Op::Relu, &[Some(&z)]);
            }
            g.mark_output(&z).unwrap();
            if second_reader {
                let y2 = rec(&g, Op::Neg, &[Some(&y)]);
                g.mark_output(&y2).unwrap();
            }
            let xin = t(&dev, &[2, 8, 9, 9], 83, 1.0);
            let outs: &[Option<&Tensor>] = if second_reader {
                &[None, None]
            } else {
                &[None]
            };
            let want = exec(&g, 0).run(None, &[&xin], outs).unwrap();
            for level in [1, 3] {
                let e = exec(&g, level);
                let got = e.run(None, &[&xin], outs).unwrap();
                // O3 on a GPU runs the convolution in bf16 (mixed precision); the CPU keeps
                // f32 at every level (and is bit-equal below).
                let tol = if level >= 2 && !cpu { 3e-2 } else { 1e-5 };
                close(&got[0], &want[0], tol);
                let s = e.stats();
                let label = if relu { "conv+add+relu" } else { "conv+add" };
                let fused = s.fused.iter().any(|(n, c)| n == label && *c == 1);
                let mixed = level >= 2 && dev.faster_in_bf16();
                assert_eq!(
                    fused,
                    !mixed && !second_reader,
                    "{} O{level}: {s:?}",
                    dev.name()
                );
                if cpu && !second_reader {
                    assert_eq!(s.launches_per_run, 1, "{s:?}");
                    // (bit-equal unless the weights are packed, O2+: another summation order)
                    if fused_count(&s, "packed conv weights") == 0 {
                        let (p, q) = (got[0].to_f64_vec().unwrap(), want[0].to_f64_vec().unwrap());
                        assert!(p.iter().zip(&q).all(|(a, b)| a.to_bits() == b.to_bits()));
                    }
                }
            }
        }
    }
}

/// Whether the CPU device packs convolution weights here (AVX-512 and FMA, not turned off).
fn cpu_packs_conv_weights() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::env::var("RB_CONV_PACKED").map_or(true, |v| v.trim() != "0")
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// O2+ on the CPU: convolutions over parameters no node writes read weights packed when the
/// plan is made (a 3×3 conv+bias+relu, a strided 1×1, a conv+add+relu, and a weight read by
/// two convolutions of one input shape, packed once), matching O0 at every level. The
/// packed weights are the parameters' data at planning, as folded constants are: a weight
/// overwritten after is seen after `invalidate` (at O1, and on devices without a packed
/// form, at the next run). A weight the graph itself writes (a training step's) is never
/// packed.
/// `y1 = relu(conv3x3(x, w1, b1))`, `y2 = conv1x1/2(y1, w2)`, `y3 = relu(conv3x3(y2, w3) +
/// y2)` (a residual block's end) and `y4 = conv3x3(y3, w4)`.
fn conv_chain(g: &GraphHandle, x: &Tensor, w: [&Tensor; 4], b1: &Tensor) -> [Tensor; 4] {
    let conv = conv2d_op;
    let y1 = rec(
        g,
        conv(3, 1, Activation::Relu),
        &[Some(x), Some(w[0]), Some(b1)],
    );
    let y2 = rec(
        g,
        conv(1, 2, Activation::None),
        &[Some(&y1), Some(w[1]), None],
    );
    let c3 = rec(
        g,
        conv(3, 1, Activation::None),
        &[Some(&y2), Some(w[2]), None],
    );
    let s3 = rec(g, Op::Add, &[Some(&c3), Some(&y2)]);
    let y3 = rec(g, Op::Relu, &[Some(&s3)]);
    let y4 = rec(
        g,
        conv(3, 1, Activation::None),
        &[Some(&y3), Some(w[3]), None],
    );
    [y1, y2, y3, y4]
}

/// Values between packed convolutions stay in the blocked layout (the CPU's AVX-512
/// kernels): a residual stream, a strided 1×1, readers that are no convolution (an NCHW
/// copy is made for them) and graph outputs read the same values as at O0.
#[test]
fn conv_values_blocked_at_o2() {
    let _serial = serial();
    for dev in devices() {
        let cpu = dev.kind() == rocm_backend::device::DeviceKind::Cpu;
        let blocks = cpu && cpu_packs_conv_weights();
        let tol = if cpu { 1e-5 } else { 1e-4 };
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[2, 16, 20, 20], DType::F32).unwrap();
        let (w1, b1) = (t(&dev, &[32, 16, 3, 3], 81, 0.2), t(&dev, &[32], 82, 0.5));
        let w2 = t(&dev, &[32, 32, 1, 1], 83, 0.2);
        let w3 = t(&dev, &[32, 32, 3, 3], 84, 0.1);
        let w4 = t(&dev, &[48, 32, 3, 3], 85, 0.1);
        let [_, y2, y3, y4] = conv_chain(&g, &x, [&w1, &w2, &w3, &w4], &b1);
        // y2 also read by an op that is no convolution
        let z = rec(&g, Op::Sigmoid, &[Some(&y2)]);
        for o in [&y3, &y4, &z] {
            g.mark_output(o).unwrap();
        }
        let xin = t(&dev, &[2, 16, 20, 20], 86, 1.0);
        // y1, y2 and y3 (y4 is read by nothing packed and adds no residual)
        blocked_levels_match_o0(&g, &xin, 3, tol, false, if blocks { 3 } else { 0 });
    }
}

/// `g` (f32) at O1-O3, run twice each, gives O0's outputs (within `tol`; with `nan`, NaN
/// where O0 has NaN), and from O2 its "blocked conv layout" count is `blocked`.
fn blocked_levels_match_o0(
    g: &GraphHandle,
    xin: &Tensor,
    outs: usize,
    tol: f64,
    nan: bool,
    blocked: usize,
) {
    let none = vec![None; outs];
    let want = exec_f32(g, 0).run(None, &[xin], &none).unwrap();
    for level in [1, 2, 3] {
        let e = exec_f32(g, level);
        for _ in 0..2 {
            let got = e.run(None, &[xin], &none).unwrap();
            for (a, b) in got.iter().zip(&want) {
                assert_eq!(a.shape(), b.shape(), "O{level}");
                if !nan {
                    close(a, b, tol);
                    continue;
                }
                let (av, bv) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
                for (i, (p, q)) in av.iter().zip(&bv).enumerate() {
                    let err = (p - q).abs() / (1.0 + q.abs());
                    assert!(
                        p.is_nan() == q.is_nan() && (p.is_nan() || err <= tol),
                        "O{level} element {i}: {p} vs {q}"
                    );
                }
            }
        }
        let s = e.stats();
        assert_eq!(
            fused_count(&s, "blocked conv layout"),
            if level >= 2 { blocked } else { 0 },
            "O{level}: {s:?}"
        );
    }
}

/// A max pooling between packed convolutions (ResNet's stem pool) pools their blocked
/// layout: the convolution before it writes blocked, the pooling reads and writes it as a
/// channels-last tensor of 16 channels, and the convolutions after it read it blocked; the
/// same values as at O0.
#[test]
fn pool_values_blocked_at_o2() {
    let _serial = serial();
    let conv = conv2d_op;
    for dev in devices() {
        let cpu = dev.kind() == rocm_backend::device::DeviceKind::Cpu;
        let blocks = cpu && cpu_packs_conv_weights();
        let tol = if cpu { 1e-5 } else { 1e-4 };
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[2, 16, 20, 20], DType::F32).unwrap();
        let (w1, b1) = (t(&dev, &[32, 16, 3, 3], 131, 0.2), t(&dev, &[32], 132, 0.5));
        let w2 = t(&dev, &[32, 32, 1, 1], 133, 0.2);
        let w3 = t(&dev, &[48, 32, 3, 3], 134, 0.1);
        let y1 = rec(
            &g,
            conv(3, 1, Activation::Relu),
            &[Some(&x), Some(&w1), Some(&b1)],
        );
        let pool = Op::Pool(attrs::Pool {
            mode: PoolKind::Max,
            params: (
                PoolAttrs {
                    kernel: vec![3, 3],
                    stride: vec![2, 2],
                    padding: vec![1, 1],
                    dilation: vec![1, 1],
                    ceil_mode: false,
                },
                2,
            ),
        });
        let p = rec(&g, pool, &[Some(&y1)]);
        let y2 = rec(
            &g,
            conv(1, 1, Activation::None),
            &[Some(&p), Some(&w2), None],
        );
        let y3 = rec(
            &g,
            conv(3, 1, Activation::Relu),
            &[Some(&p), Some(&w3), None],
        );
        for o in [&y2, &y3] {
            g.mark_output(o).unwrap();
        }
        // a NaN propagates through the pooling as PyTorch's does
        let mut xv = data(2 * 16 * 400, 135, 1.0);
        xv[3 * 400 + 47] = f32::NAN;
        let xin = Tensor::from_f32(dev.clone(), &xv, &[2, 16, 20, 20]).unwrap();
        // the pooled value (its producer's output and the readers' inputs with it)
        blocked_levels_match_o0(&g, &xin, 2, tol, true, if blocks { 1 } else { 0 });
    }
}

#[test]
fn conv_weights_packed_at_o2() {
    let _serial = serial();
    // f32 at every level (no mixed precision on GPUs: the packing is what is tested here)
    let exec = exec_f32;
    let conv = conv2d_op;
    for dev in devices() {
        let cpu = dev.kind() == rocm_backend::device::DeviceKind::Cpu;
        let packs = cpu && cpu_packs_conv_weights();
        // (GPUs: the library may pick another algorithm per level)
        let tol = if cpu { 1e-5 } else { 1e-4 };
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[2, 16, 20, 20], DType::F32).unwrap();
        let (w1, b1) = (t(&dev, &[40, 16, 3, 3], 91, 0.2), t(&dev, &[40], 92, 0.5));
        let w2 = t(&dev, &[24, 40, 1, 1], 93, 0.2);
        let w3 = t(&dev, &[24, 24, 3, 3], 94, 0.1);
        let [_, _, _, y4] = conv_chain(&g, &x, [&w1, &w2, &w3, &w3], &b1);
        g.mark_output(&y4).unwrap();
        let xin = t(&dev, &[2, 16, 20, 20], 95, 1.0);
        let want = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
        for level in [1, 2, 3] {
            let e = exec(&g, level);
            for _ in 0..2 {
                let got = e.run(None, &[&xin], &[None]).unwrap();
                close(&got[0], &want[0], tol);
            }
            let s = e.stats();
            let n = fused_count(&s, "packed conv weights");
            assert_eq!(
                n,
                if packs && level >= 2 { 4 } else { 0 },
                "O{level}: {s:?}"
            );
            assert_eq!(fused_count(&s, "conv+add+relu"), 1, "O{level}: {s:?}");
        }
        // A weight overwritten after planning: O2 keeps the packed copy until invalidate.
        let e2 = exec(&g, 2);
        let e1 = exec(&g, 1);
        let before = e2.run(None, &[&xin], &[None]).unwrap();
        let fresh = data(24 * 24 * 9, 96, 0.1);
        let bytes: Vec<u8> = fresh.iter().flat_map(|v| v.to_ne_bytes()).collect();
        dev.copy_h2d(&bytes, w3.ptr(), Default::default()).unwrap();
        dev.synchronize().unwrap();
        let want2 = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
        close(&e1.run(None, &[&xin], &[None]).unwrap()[0], &want2[0], tol);
        let stale = e2.run(None, &[&xin], &[None]).unwrap();
        if packs {
            close(&stale[0], &before[0], 0.0);
        } else {
            close(&stale[0], &want2[0], tol);
        }
        e2.invalidate();
        close(&e2.run(None, &[&xin], &[None]).unwrap()[0], &want2[0], tol);

        // A weight the graph updates (an SGD step on it after the convolution): not packed.
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[1, 16, 20, 20], DType::F32).unwrap();
        let w = t(&dev, &[16, 16, 3, 3], 97, 0.2);
        let dw = t(&dev, &[16, 16, 3, 3], 98, 1.0);
        let w_start = w.to_f64_vec().unwrap();
        let y = rec(
            &g,
            conv(3, 1, Activation::None),
            &[Some(&x), Some(&w), None],
        );
        let sgd = attrs::SgdStep {
            lr: 0.5,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            first_step: false,
        };
        g.record(None, Op::SgdStep(sgd), &[Some(&w), Some(&dw), None], &[])
            .unwrap();
        g.mark_output(&y).unwrap();
        let e = exec(&g, 2);
        assert_eq!(fused_count(&e.stats(), "packed conv weights"), 0);
        let xin = t(&dev, &[1, 16, 20, 20], 99, 1.0);
        let first = e.run(None, &[&xin], &[None]).unwrap();
        let second = e.run(None, &[&xin], &[None]).unwrap();
        // the second run's convolution reads the stepped weight: w - 0.5·dw
        let stepped: Vec<f32> = w_start
            .iter()
            .zip(dw.to_f64_vec().unwrap())
            .map(|(a, b)| (a - 0.5 * b) as f32)
            .collect();
        let ws = Tensor::from_f32(dev.clone(), &stepped, &[16, 16, 3, 3]).unwrap();
        let g0 = GraphHandle::new(dev.clone());
        let x0 = g0.input(&[1, 16, 20, 20], DType::F32).unwrap();
        let y0 = rec(
            &g0,
            conv(3, 1, Activation::None),
            &[Some(&x0), Some(&ws), None],
        );
        g0.mark_output(&y0).unwrap();
        let want = exec(&g0, 0).run(None, &[&xin], &[None]).unwrap();
        close(&second[0], &want[0], tol);
        assert!(
            first[0].to_f64_vec().unwrap() != second[0].to_f64_vec().unwrap(),
            "the step changed the weight between runs"
        );
    }
}

/// One weight read by two convolutions of one input shape with other attributes (a 1×1 at
/// stride 1 and at stride 2 over 28×28, which the CPU packs and does not): each gets what
/// its own geometry takes, and both match O0 at O2.
#[test]
fn conv_weight_shared_by_two_geometries() {
    let _serial = serial();
    for dev in devices() {
        let packs = dev.kind() == rocm_backend::device::DeviceKind::Cpu && cpu_packs_conv_weights();
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[1, 8, 28, 28], DType::F32).unwrap();
        let w = t(&dev, &[40, 8, 1, 1], 90, 0.3);
        let conv = |stride: usize| conv2d_op(1, stride, Activation::None);
        let y1 = rec(&g, conv(1), &[Some(&x), Some(&w), None]);
        let y2 = rec(&g, conv(2), &[Some(&x), Some(&w), None]);
        g.mark_output(&y1).unwrap();
        g.mark_output(&y2).unwrap();
        let xin = t(&dev, &[1, 8, 28, 28], 89, 1.0);
        let want = exec(&g, 0).run(None, &[&xin], &[None, None]).unwrap();
        let e = exec_f32(&g, 2);
        let got = e.run(None, &[&xin], &[None, None]).unwrap();
        let tol = if dev.kind() == rocm_backend::device::DeviceKind::Cpu {
            1e-5
        } else {
            1e-4
        };
        close(&got[0], &want[0], tol);
        close(&got[1], &want[1], tol);
        assert_eq!(
            fused_count(&e.stats(), "packed conv weights"),
            usize::from(packs)
        );
    }
}

/// A decode step's projections (one input row): q/k/v reading one input become one grouped
/// product, a projection and its residual add one `linear+add`, silu(gate) * up one
/// `linear+silu*mul` (one launch on GPUs; the CPU runs the replaced ops inside the node,
/// bit-equal to O0).
/// Two input rows are not a decode step: nothing groups. Results match O0.
#[test]
fn decode_linear_groups() {
    let _serial = serial();
    use rocm_backend::runtime::data::cast;
    for dev in devices() {
        for (dt, rows) in [
            (DType::F16, 1),
            (DType::BF16, 1),
            (DType::F32, 1),
            (DType::F16, 2),
        ] {
            let p = |shape: &[usize], seed: u64| {
                cast(None, &t(&dev, shape, seed, 0.2), dt, None).unwrap()
            };
            let (d, f) = (64, 96);
            let (wq, wk, wv, wo) = (p(&[d, d], 1), p(&[d, d], 2), p(&[d, d], 3), p(&[d, d], 4));
            let (w1, w3, w2) = (p(&[f, d], 5), p(&[f, d], 6), p(&[d, f], 7));
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[1, rows, d], dt).unwrap();
            let lin = |h: &Tensor, w: &Tensor| rec(&g, Op::Linear, &[Some(h), Some(w), None]);
            let (n1, n2) = (p(&[d], 9), p(&[d], 10));
            let norm = Op::RmsNorm(attrs::RmsNorm {
                normalized_shape: vec![d],
                eps: 1e-5,
            });
            let h = rec(&g, norm.clone(), &[Some(&x), Some(&n1)]);
            let q = lin(&h, &wq);
            let k = lin(&h, &wk);
            let v = lin(&h, &wv);
            let qk = rec(&g, Op::Mul, &[Some(&q), Some(&k)]);
            let a = rec(&g, Op::Add, &[Some(&qk), Some(&v)]);
            let o = lin(&a, &wo);
            let o = rec(&g, Op::Add, &[Some(&x), Some(&o)]);
            let h2 = rec(&g, norm, &[Some(&o), Some(&n2)]);
            let gate = lin(&h2, &w1);
            let gate = rec(&g, Op::Silu, &[Some(&gate)]);
            let up = lin(&h2, &w3);
            let m = rec(&g, Op::Mul, &[Some(&gate), Some(&up)]);
            let dn = lin(&m, &w2);
            let y = rec(&g, Op::Add, &[Some(&dn), Some(&o)]);
            g.mark_output(&y).unwrap();
            g.mark_output(&v).unwrap();
            let xin = p(&[1, rows, d], 8);
            let want = exec(&g, 0).run(None, &[&xin], &[None, None]).unwrap();
            // f32 at O3 on a GPU runs its products in bf16 (mixed precision): not a decode
            // step's linear any more; O1 keeps f32.
            let levels: &[u32] = if dt == DType::F32 { &[1] } else { &[1, 3] };
            for &level in levels {
                let e = exec(&g, level);
                let got = e.run(None, &[&xin], &[None, None]).unwrap();
                let tol = match dt {
                    DType::F32 => 1e-5,
                    DType::F16 => 1e-2,
                    _ => 4e-2,
                };
                close(&got[0], &want[0], tol);
                close(&got[1], &want[1], tol);
                if dev.kind() == rocm_backend::device::DeviceKind::Cpu {
                    for (a, b) in got.iter().zip(&want) {
                        let (p, q) = (a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap());
                        assert!(p.iter().zip(&q).all(|(a, b)| a.to_bits() == b.to_bits()));
                    }
                }
                let s = e.stats();
                let count = |label: &str| fused_count(&s, label);
                // every device groups them (the CPU runs the unfused ops inside the node:
                // bit-equal to O0 below)
                let on = rows == 1;
                let expect = |n: usize| if on { n } else { 0 };
                assert_eq!(
                    count("linear_x3"),
                    expect(1),
                    "{} {dt} O{level}: {s:?}",
                    dev.name()
                );
                assert_eq!(
                    count("linear+add"),
                    expect(2),
                    "{} {dt} O{level}: {s:?}",
                    dev.name()
                );
                assert_eq!(
                    count("linear+silu*mul"),
                    expect(1),
                    "{} {dt} O{level}: {s:?}",
                    dev.name()
                );
                // the o, gate/up and down products follow nodes that write nothing of
                // theirs; q/k/v is the first node (what runs before is the caller's)
                assert_eq!(
                    count("settled weights"),
                    expect(3),
                    "{} {dt} O{level}: {s:?}",
                    dev.name()
                );
            }
        }
    }
}

/// A grouped product right after a node that writes its weight (an index_copy into it) is
/// not marked settled (its weight loads wait for that write), one after a node that writes
/// nothing of its own is; the results match O0, which reads the written weight.
#[test]
fn decode_settled_weights() {
    let _serial = serial();
    use rocm_backend::runtime::data::cast;
    for dev in devices() {
        let dt = DType::F16;
        let p =
            |shape: &[usize], seed: u64| cast(None, &t(&dev, shape, seed, 0.3), dt, None).unwrap();
        let d = 64;
        let (w, w2, r, row) = (p(&[d, d], 1), p(&[d, d], 2), p(&[1, d], 3), p(&[1, d], 4));
        let pos = Tensor::from_bytes(dev.clone(), &3i64.to_ne_bytes(), &[1], DType::I64).unwrap();
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[1, 1, d], dt).unwrap();
        // row 3 of w replaced, then y = x·wᵀ + r (after a write of w, and a reshape view of x
        // that launches nothing), z = y·w2ᵀ + y (after a node without an effect)
        let store = Op::IndexCopy(attrs::IndexCopy { dim: 0 });
        g.record(None, store, &[Some(&w), Some(&pos), Some(&row)], &[])
            .unwrap();
        let x = x.reshape(&[1, d]).unwrap();
        let y = rec(&g, Op::Linear, &[Some(&x), Some(&w), None]);
        let y = rec(&g, Op::Add, &[Some(&y), Some(&r)]);
        let z = rec(&g, Op::Linear, &[Some(&y), Some(&w2), None]);
        let z = rec(&g, Op::Add, &[Some(&z), Some(&y)]);
        g.mark_output(&z).unwrap();
        let xin = p(&[1, 1, d], 5);
        let want = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
        for level in [1, 3] {
            let e = exec(&g, level);
            for _ in 0..3 {
                let got = e.run(None, &[&xin], &[None]).unwrap();
                close(&got[0], &want[0], 1e-2);
            }
            let s = e.stats();
            let count = |label: &str| fused_count(&s, label);
            assert_eq!(count("linear+add"), 2, "{} O{level}: {s:?}", dev.name());
            assert_eq!(
                count("settled weights"),
                1,
                "{} O{level}: {s:?}",
                dev.name()
            );
        }
    }
}

/// A decode step's new-token tensors (rope of q and k at the position, k and v copied into
/// the caches there) become one `rope+store` node on every device (one launch on a GPU
/// inside a device graph, the ops in order elsewhere), and with the q/k/v products before it
/// one `linear+rope+store` node (on a GPU inside a device graph the products' kernel rotates
/// and stores). Three steps at moving positions, from the same caches, against O0: the
/// attention output and both caches; O3 (a GPU's device graph: the one kernel) bit-equal to
/// O1 (the products, then the ops). Rotate-half and interleaved pairs, all features rotated
/// or half of them (trailing features copied), f16/bf16/f32, with and without an rms_norm
/// before the products (folded into them).
#[test]
fn decode_rope_store() {
    let _serial = serial();
    use rocm_backend::runtime::data::{cast, copy};
    for dev in devices() {
        // (the third shape: the decode attention's caches in ten key splits of two rounds,
        // positions in the first round of split 0 and of split 5, and in split 9's second)
        for (dt, (h, hd, tmax), at, interleaved, rot_dims, normed) in [
            (
                DType::F16,
                (4usize, 16usize, 8usize),
                [2i64, 5, 7],
                false,
                16usize,
                false,
            ),
            (DType::F32, (4, 16, 8), [2, 5, 7], false, 16, false),
            (DType::F16, (8, 128, 640), [2, 333, 639], false, 128, false),
            (DType::BF16, (4, 32, 8), [0, 6, 3], true, 16, true),
            (DType::F32, (2, 64, 8), [1, 7, 4], false, 32, true),
        ] {
            let d = h * hd;
            let p = |shape: &[usize], seed: u64| {
                cast(None, &t(&dev, shape, seed, 0.3), dt, None).unwrap()
            };
            let (wq, wk, wv) = (p(&[d, d], 1), p(&[d, d], 2), p(&[d, d], 3));
            let (cos, sin) = (p(&[tmax, rot_dims / 2], 4), p(&[tmax, rot_dims / 2], 5));
            let (k0, v0) = (p(&[1, h, tmax, hd], 6), p(&[1, h, tmax, hd], 7));
            let (kc, vc) = (p(&[1, h, tmax, hd], 6), p(&[1, h, tmax, hd], 7));
            let ids = |i: i64| {
                Tensor::from_bytes(dev.clone(), &i.to_ne_bytes(), &[1], DType::I64).unwrap()
            };
            let pos = ids(0);
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[1, 1, d], dt).unwrap();
            let x = if normed {
                let norm = Op::RmsNorm(attrs::RmsNorm {
                    normalized_shape: vec![d],
                    eps: 1e-5,
                });
                rec(&g, norm, &[Some(&x), Some(&p(&[d], 9))])
            } else {
                x
            };
            let rope = Op::RopeCached(attrs::RopeCached {
                seq_dim: 1,
                interleaved,
            });
            let proj = |w: &Tensor| {
                rec(&g, Op::Linear, &[Some(&x), Some(w), None])
                    .reshape(&[1, 1, h, hd])
                    .unwrap()
            };
            let rot = |y: &Tensor| {
                rec(
                    &g,
                    rope.clone(),
                    &[Some(y), Some(&cos), Some(&sin), Some(&pos)],
                )
            };
            let q = rot(&proj(&wq)).reshape(&[1, h, 1, hd]).unwrap();
            let k = rot(&proj(&wk)).reshape(&[1, h, 1, hd]).unwrap();
            let v = proj(&wv).reshape(&[1, h, 1, hd]).unwrap();
            let store = Op::IndexCopy(attrs::IndexCopy { dim: 2 });
            for (c, s) in [(&kc, &k), (&vc, &v)] {
                g.record(None, store.clone(), &[Some(c), Some(&pos), Some(s)], &[])
                    .unwrap();
            }
            let sdpa = Op::ScaledDotProductAttention(attrs::ScaledDotProductAttention {
                is_causal: false,
                scale: None,
            });
            let a = rec(&g, sdpa, &[Some(&q), Some(&kc), Some(&vc)]);
            g.mark_output(&a).unwrap();
            let xin = p(&[1, 1, d], 8);
            // (a device graph needs a stream of its own)
            let st = Stream::new(dev.clone()).unwrap();
            // three steps from the first caches: (output, k cache, v cache) after each
            let steps = |e: &Executor| {
                copy(Some(&st), &k0, &kc).unwrap();
                copy(Some(&st), &v0, &vc).unwrap();
                at.iter()
                    .map(|&i| {
                        copy(Some(&st), &ids(i), &pos).unwrap();
                        let y = e.run(Some(&st), &[&xin], &[None]).unwrap().remove(0);
                        let snap = |c: &Tensor| {
                            let o = Tensor::empty(dev.clone(), c.shape(), dt).unwrap();
                            copy(Some(&st), c, &o).unwrap();
                            o
                        };
                        let (kk, vv) = (snap(&kc), snap(&vc));
                        st.synchronize().unwrap();
                        (y, kk, vv)
                    })
                    .collect::<Vec<_>>()
            };
            let want = steps(&exec(&g, 0));
            let mut by_level = vec![];
            for level in [1, 3] {
                // f32 stays f32 at O3 (no bf16 products on GPUs): the same tolerance
                let e = Executor::new(
                    g.snapshot(),
                    Config {
                        opt_level: level,
                        keep_fp32: true,
                        ..Default::default()
                    },
                )
                .unwrap();
                let got = steps(&e);
                let tol = match dt {
                    DType::F32 => 1e-5,
                    DType::BF16 => 4e-2,
                    _ => 1e-2,
                };
                for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                    eprintln!("{} {dt} O{level} step {i}", dev.name());
                    close(&a.0, &b.0, tol);
                    close(&a.1, &b.1, tol);
                    close(&a.2, &b.2, tol);
                }
                let s = e.stats();
                let n = s
                    .fused
                    .iter()
                    .find(|(n, _)| n == "rope+store")
                    .map_or(0, |(_, c)| *c);
                assert_eq!(n, 1, "{} {dt} O{level}: {s:?}", dev.name());
                // the q/k/v products and the store as one node
                assert_eq!(
                    fused_count(&s, "linear+rope+store"),
                    1,
                    "{} {dt} O{level}: {s:?}",
                    dev.name()
                );
                // the attention right after the store reads the caches' other rows early
                assert_eq!(
                    fused_count(&s, "settled attention"),
                    1,
                    "{} {dt} O{level}: {s:?}",
                    dev.name()
                );
                // a GPU's O3 replays its device graph: the later steps ran the one kernel
                if level == 3 && !dev.name().starts_with("cpu") {
                    assert!(s.device_graph, "{}", s.device_graph_note);
                    assert!(s.replays >= 1, "{s:?}");
                }
                by_level.push(got);
            }
            let bits = |t: &Tensor| {
                let mut b = vec![0u8; t.nbytes()];
                t.copy_to_host(&mut b, None).unwrap();
                b
            };
            let mut differ = vec![];
            for (i, (a, b)) in by_level[0].iter().zip(&by_level[1]).enumerate() {
                for (what, x, y) in [("output", &a.0, &b.0), ("k", &a.1, &b.1), ("v", &a.2, &b.2)] {
                    let (bx, by) = (bits(x), bits(y));
                    let n = bx
                        .chunks(dt.size())
                        .zip(by.chunks(dt.size()))
                        .filter(|(p, q)| p != q)
                        .count();
                    if n > 0 {
                        differ.push(format!("step {i} {what}: {n} elements"));
                    }
                }
            }
            assert!(
                differ.is_empty(),
                "{} {dt} ({h} heads of {hd}, rot {rot_dims}, interleaved {interleaved}, norm {normed}): \
                 O3 differs from O1: {differ:?}",
                dev.name()
            );
        }
    }
}

/// A decode step's residual stream: `y = linear(x, w1) + r`, `h = rms_norm(r)`, `z =
/// linear(h, w2) + y`, `u = linear(z, w4) + z`, `h2 = rms_norm(u)`, `o = linear(h2, w3)`
/// (Llama's layer boundary, then a last layer's norm before its head). `h`, the norm of an
/// input read only by the grouped `linear+add`, folds into it (`rms_norm+linear`: the
/// product reads r and scales its sums); `u` and `h2` (the norm of a product's result)
/// become one `linear+add+rms_norm` node; on every device. On a GPU at O3 with
/// `RB_GPU_NORM_TAIL=1` the device graph runs the latter as one pass (the product's last
/// block normalizing), which must give the bits of O1 (the node's ops in order) on every
/// replay; O1 and O3 stay within tolerance of O0.
/// Rows of 1024 and 1000 (a plan with a partial chunk), f16/bf16/f32.
#[test]
fn decode_add_norm() {
    let _serial = serial();
    use rocm_backend::runtime::data::{cast, copy};
    for dev in devices() {
        for dt in [DType::F16, DType::BF16, DType::F32] {
            for (k, n) in [(64usize, 1024usize), (48, 1000)] {
                let p = |shape: &[usize], seed: u64, sc: f32| {
                    cast(None, &t(&dev, shape, seed, sc), dt, None).unwrap()
                };
                let (w1, w2, w3) = (p(&[n, k], 1, 0.3), p(&[n, n], 2, 0.05), p(&[16, n], 3, 0.1));
                let w4 = p(&[n, n], 6, 0.05);
                let (n1, n2) = (p(&[n], 4, 1.0), p(&[n], 5, 1.0));
                let g = GraphHandle::new(dev.clone());
                let x = g.input(&[1, 1, k], dt).unwrap();
                let r = g.input(&[1, 1, n], dt).unwrap();
                let lin = |a: &Tensor, w: &Tensor| rec(&g, Op::Linear, &[Some(a), Some(w), None]);
                let add = |a: &Tensor, b: &Tensor| rec(&g, Op::Add, &[Some(a), Some(b)]);
                let norm = |a: &Tensor, w: &Tensor| {
                    rec(
                        &g,
                        Op::RmsNorm(attrs::RmsNorm {
                            normalized_shape: vec![n],
                            eps: 1e-5,
                        }),
                        &[Some(a), Some(w)],
                    )
                };
                let y = add(&lin(&x, &w1), &r);
                let h = norm(&r, &n1);
                let z = add(&lin(&h, &w2), &y);
                let u = add(&lin(&z, &w4), &z);
                let h2 = norm(&u, &n2);
                let o = lin(&h2, &w3);
                g.mark_output(&o).unwrap();
                g.mark_output(&u).unwrap();
                let st = Stream::new(dev.clone()).unwrap();
                let run = |e: &Executor| {
                    (0..3u64)
                        .map(|i| {
                            let (xi, ri) = (p(&[1, 1, k], 10 + i, 1.0), p(&[1, 1, n], 20 + i, 1.0));
                            let outs = e.run(Some(&st), &[&xi, &ri], &[None, None]).unwrap();
                            let snap = |c: &Tensor| {
                                let s = Tensor::empty(dev.clone(), c.shape(), dt).unwrap();
                                copy(Some(&st), c, &s).unwrap();
                                s
                            };
                            let v = (snap(&outs[0]), snap(&outs[1]));
                            st.synchronize().unwrap();
                            v
                        })
                        .collect::<Vec<_>>()
                };
                let want = run(&exec(&g, 0));
                let mut by_level = vec![];
                for level in [1, 3] {
                    let e = Executor::new(
                        g.snapshot(),
                        Config {
                            opt_level: level,
                            keep_fp32: true,
                            ..Default::default()
                        },
                    )
                    .unwrap();
                    let got = run(&e);
                    // O0 rounds after every op, O1/O3 once per fused node (and the folded
                    // norm's input not at all): u is about 5 in magnitude, where bf16's ulp
                    // is 1/32, so a cancelling element may differ by a few ulps.
                    let tol = match dt {
                        DType::F32 => 1e-4,
                        DType::F16 => 5e-2,
                        _ => 1.25e-1,
                    };
                    for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                        eprintln!("{} {dt} n {n} O{level} step {i}", dev.name());
                        close(&a.0, &b.0, tol);
                        close(&a.1, &b.1, tol);
                    }
                    let s = e.stats();
                    let count = |label: &str| fused_count(&s, label);
                    assert_eq!(
                        count("linear+add+rms_norm"),
                        1,
                        "{} {dt} O{level}: {s:?}",
                        dev.name()
                    );
                    assert_eq!(
                        count("rms_norm+linear"),
                        1,
                        "{} {dt} O{level}: {s:?}",
                        dev.name()
                    );
                    if level == 3 && !dev.name().starts_with("cpu") {
                        assert!(s.device_graph, "{}", s.device_graph_note);
                        assert!(s.replays >= 1, "{s:?}");
                    }
                    by_level.push(got);
                }
                // the one pass (O3's device graph) and the ops (O1): the same bits
                for (i, (a, b)) in by_level[1].iter().zip(&by_level[0]).enumerate() {
                    for (p, q) in [(&a.0, &b.0), (&a.1, &b.1)] {
                        let (pv, qv) = (p.to_f64_vec().unwrap(), q.to_f64_vec().unwrap());
                        assert!(
                            pv.iter().zip(&qv).all(|(u, v)| u == v),
                            "{} {dt} n {n} step {i}: O3 and O1 differ",
                            dev.name()
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn misuse_is_a_status() {
    let _serial = serial();
    let dev = context::resolve(Some("cpu")).unwrap();
    let m = mlp(&dev);
    let g = GraphHandle::new(dev.clone());
    let x = g.input(&[32, 784], DType::F32).unwrap();
    // no outputs yet
    let err = Executor::new(g.snapshot(), Config::default())
        .err()
        .unwrap();
    assert_eq!(err.kind, ErrorKind::InvalidArgument);
    let y = record_mlp(&g, &m, &x);
    g.mark_output(&y).unwrap();
    // a level beyond O3
    let bad = Config {
        opt_level: 4,
        ..Default::default()
    };
    assert_eq!(
        Executor::new(g.snapshot(), bad).err().unwrap().kind,
        ErrorKind::InvalidArgument
    );
    let e = exec(&g, 1);
    let xin = t(&dev, &[32, 784], 1, 1.0);
    let kind = |r: Result<Vec<Tensor>, Error>| r.err().unwrap().kind;
    assert_eq!(kind(e.run(None, &[], &[None])), ErrorKind::InvalidArgument);
    assert_eq!(
        kind(e.run(None, &[&xin, &xin], &[None])),
        ErrorKind::InvalidArgument
    );
    assert_eq!(kind(e.run(None, &[&xin], &[])), ErrorKind::InvalidArgument);
    let xi = Tensor::zeros(dev.clone(), &[32, 784], DType::I32).unwrap();
    assert_eq!(kind(e.run(None, &[&xi], &[None])), ErrorKind::DtypeMismatch);
    let x3 = t(&dev, &[32, 784, 1], 1, 1.0);
    assert_eq!(kind(e.run(None, &[&x3], &[None])), ErrorKind::ShapeMismatch);
    // a wrong inner size is the op's own shape error, and the executor stays usable
    let x_bad = t(&dev, &[32, 783], 1, 1.0);
    assert_eq!(
        kind(e.run(None, &[&x_bad], &[None])),
        ErrorKind::ShapeMismatch
    );
    let wrong_dest = Tensor::zeros(dev.clone(), &[3], DType::F32).unwrap();
    assert_eq!(
        kind(e.run(None, &[&xin], &[Some(&wrong_dest)])),
        ErrorKind::ShapeMismatch
    );
    let ok = e.run(None, &[&xin], &[None]).unwrap();
    close(&ok[0], &eager_mlp(&m, &xin), 1e-4);
    // a result written into a given destination is that tensor
    let dest = Tensor::zeros(dev.clone(), &[32, 10], DType::F32).unwrap();
    let r = e.run(None, &[&xin], &[Some(&dest)]).unwrap();
    assert_eq!(r[0].ptr(), dest.ptr());
    close(&dest, &ok[0], 0.0);
    // a recording that fails adds nothing
    let n = g.snapshot().num_nodes();
    let w_bad = t(&dev, &[5, 7], 1, 1.0);
    assert!(
        g.record(
            None,
            Op::Linear,
            &[Some(&y), Some(&w_bad), None],
            &[Grad::New]
        )
        .is_err()
    );
    assert_eq!(g.snapshot().num_nodes(), n);
    // marking a tensor the graph did not make
    assert_eq!(
        g.mark_output(&xin).err().unwrap().kind,
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        g.mark_output(&m.w[0]).err().unwrap().kind,
        ErrorKind::InvalidArgument
    );
}

#[test]
fn threads_each_with_an_executor_and_one_shared() {
    let _serial = serial();
    let dev = context::resolve(Some("cpu")).unwrap();
    let m = mlp(&dev);
    let g = GraphHandle::new(dev.clone());
    let x = g.input(&[32, 784], DType::F32).unwrap();
    let y = record_mlp(&g, &m, &x);
    g.mark_output(&y).unwrap();
    let xin = t(&dev, &[32, 784], 8, 1.0);
    let want = eager_mlp(&m, &xin);
    std::thread::scope(|s| {
        for i in 0..8 {
            let (g, xin, want) = (&g, &xin, &want);
            s.spawn(move || {
                let e = exec(g, i % 4);
                for _ in 0..5 {
                    let r = e.run(None, &[xin], &[None]).unwrap();
                    close(&r[0], want, if i % 4 >= 2 { 3e-2 } else { 1e-4 });
                }
            });
        }
    });
    // one executor from two threads: every call either runs right or is refused
    let e = exec(&g, 1);
    let busy = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..50 {
                    match e.run(None, &[&xin], &[None]) {
                        Ok(r) => close(&r[0], &want, 1e-4),
                        Err(err) => {
                            assert_eq!(err.kind, ErrorKind::InvalidArgument);
                            assert!(err.to_string().contains("another thread"), "{err}");
                            busy.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                    }
                }
            });
        }
    });
    eprintln!(
        "shared executor: {} of 100 calls refused as busy",
        busy.into_inner()
    );
}

#[test]
fn patterns_and_can_fuse() {
    let _serial = serial();
    use rocm_backend::graph::passes::{FusedPattern, can_fuse};
    assert_eq!(
        can_fuse(&["matmul", "add", "relu"]),
        Some(FusedPattern::MatmulBiasRelu)
    );
    assert_eq!(
        can_fuse(&["conv", "batch_norm", "relu"]),
        Some(FusedPattern::ConvBnRelu)
    );
    assert_eq!(can_fuse(&["mul", "add"]), Some(FusedPattern::MulAdd));
    assert_eq!(can_fuse(&["add", "relu"]), Some(FusedPattern::AddRelu));
    assert_eq!(can_fuse(&["relu", "add"]), None);
    // matmul + add(bias) + gelu becomes one dense node; add+relu becomes a fused chain
    for dev in devices() {
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[4, 16], DType::F32).unwrap();
        let w = t(&dev, &[16, 8], 1, 0.3);
        let b = t(&dev, &[8], 2, 0.3);
        let r = t(&dev, &[4, 8], 3, 1.0);
        let h = rec(&g, Op::Matmul, &[Some(&x), Some(&w)]);
        let h = rec(&g, Op::Add, &[Some(&h), Some(&b)]);
        let gelu = Op::Gelu(attrs::Gelu {
            approximate: UnaryOp::Gelu { tanh: true },
        });
        let h = rec(&g, gelu, &[Some(&h)]);
        let h = rec(&g, Op::Add, &[Some(&h), Some(&r)]);
        let y = rec(&g, Op::Relu, &[Some(&h)]);
        // a dead branch
        let _dead = rec(&g, Op::Exp, &[Some(&x)]);
        g.mark_output(&y).unwrap();
        let e1 = exec(&g, 1);
        let s = e1.stats();
        assert_eq!(s.dead_removed, 1);
        assert_eq!(s.launches_per_run, 2, "{s:?}");
        let mut f = s.fused.clone();
        f.sort();
        assert_eq!(
            f,
            vec![
                ("add+relu".to_string(), 1),
                ("matmul+bias+gelu".to_string(), 1)
            ]
        );
        let xin = t(&dev, &[4, 16], 4, 1.0);
        let r0 = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
        let r1 = e1.run(None, &[&xin], &[None]).unwrap();
        close(&r1[0], &r0[0], 1e-5);
        // constant folding: a parameter-only subgraph is computed once
        let g = GraphHandle::new(dev.clone());
        let x = g.input(&[4, 8], DType::F32).unwrap();
        let s2 = rec(&g, Op::Mul, &[Some(&b), Some(&b)]);
        let s2 = rec(&g, Op::Sqrt, &[Some(&s2)]);
        let y = rec(&g, Op::Add, &[Some(&x), Some(&s2)]);
        g.mark_output(&y).unwrap();
        let e = exec(&g, 1);
        assert_eq!(e.stats().folded, 2);
        assert_eq!(e.stats().launches_per_run, 1);
        let xin = t(&dev, &[4, 8], 5, 1.0);
        let want = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
        close(&e.run(None, &[&xin], &[None]).unwrap()[0], &want[0], 1e-6);
        let _ = BinaryOp::Add;
    }
}

#[test]
fn mixed_precision_and_keep_fp32() {
    let _serial = serial();
    for dev in devices() {
        let g = GraphHandle::new(dev.clone());
        // both products run in bf16; the bf16 -> f32 -> bf16 round trip between them goes
        let x = g.input(&[256, 1024], DType::F32).unwrap();
        let w = t(&dev, &[1024, 512], 1, 0.05);
        let w2 = t(&dev, &[512, 8], 2, 0.05);
        let h = rec(&g, Op::Matmul, &[Some(&x), Some(&w)]);
        let y = rec(&g, Op::Matmul, &[Some(&h), Some(&w2)]);
        g.mark_output(&y).unwrap();
        // the pass itself, on any device: both products rewritten
        let mut snap = g.snapshot();
        assert_eq!(rocm_backend::graph::passes::mixed_precision(&mut snap), 2);
        let e2 = exec(&g, 2);
        let s = e2.stats();
        let xin = t(&dev, &[256, 1024], 3, 1.0);
        let r2 = e2.run(None, &[&xin], &[None]).unwrap();
        let r0 = exec(&g, 0).run(None, &[&xin], &[None]).unwrap();
        if dev.faster_in_bf16() {
            assert_eq!(s.mixed_precision_nodes, 2, "{s:?}");
            // cast x, matmul, matmul, cast back: no cast between the products
            assert_eq!(s.launches_per_run, 4, "{s:?}");
            close(&r2[0], &r0[0], 3e-2);
        } else {
            // the CPU device keeps f32 products at O2: O1's plan, O0's results
            assert_eq!(s.mixed_precision_nodes, 0, "{s:?}");
            assert_eq!(s.launches_per_run, 2, "{s:?}");
            close(&r2[0], &r0[0], 1e-4);
        }
        // keep_fp32 turns it off
        let e = exec_f32(&g, 2);
        assert_eq!(e.stats().mixed_precision_nodes, 0);
        close(&e.run(None, &[&xin], &[None]).unwrap()[0], &r0[0], 1e-4);
    }
}

/// O2's channels-last pass: conv -> add(shift [C,1,1]) -> relu -> conv -> add(residual) ->
/// relu -> max pool in f16/bf16 gives O0's results on every device (the pass changes the graph only
/// where the device runs channels-last convolutions natively: cuDNN here), with both a
/// converted and a channels-first output read back.
#[test]
fn channels_last_at_o2_matches_o0() {
    let _serial = serial();
    use rocm_backend::runtime::data::cast;
    for dev in devices() {
        for (dt, tol) in [(DType::F16, 2e-2), (DType::BF16, 8e-2)] {
            let c = |t: Tensor| cast(None, &t, dt, None).unwrap();
            let g = GraphHandle::new(dev.clone());
            let x = g.input(&[2, 8, 9, 10], dt).unwrap();
            let w1 = c(t(&dev, &[16, 8, 3, 3], 81, 0.2));
            let w2 = c(t(&dev, &[16, 16, 3, 3], 82, 0.1));
            let shift = c(t(&dev, &[16, 1, 1], 83, 0.3));
            let a = ConvAttrs {
                stride: vec![1, 1],
                padding: vec![1, 1],
                dilation: vec![1, 1],
                groups: 1,
                output_padding: vec![0, 0],
            };
            let conv = |x: &Tensor, w: &Tensor| {
                rec(
                    &g,
                    Op::Conv(attrs::Conv {
                        params: (a.clone(), 2),
                        activation: Activation::None,
                    }),
                    &[Some(x), Some(w), None],
                )
            };
            let y1 = conv(&x, &w1);
            let z1 = rec(&g, Op::Add, &[Some(&y1), Some(&shift)]);
            let r1 = rec(&g, Op::Relu, &[Some(&z1)]);
            let y2 = conv(&r1, &w2);
            let z2 = rec(&g, Op::Add, &[Some(&y2), Some(&r1)]);
            let r2 = rec(&g, Op::Relu, &[Some(&z2)]);
            let pool = Op::Pool(attrs::Pool {
                mode: PoolKind::Max,
                params: (
                    PoolAttrs {
                        kernel: vec![3, 3],
                        stride: vec![2, 2],
                        padding: vec![1, 1],
                        dilation: vec![1, 1],
                        ceil_mode: false,
                    },
                    2,
                ),
            });
            let p2 = rec(&g, pool, &[Some(&r2)]);
            g.mark_output(&p2).unwrap();
            g.mark_output(&r1).unwrap();
            let xin = c(t(&dev, &[2, 8, 9, 10], 84, 1.0));
            let want = exec(&g, 0).run(None, &[&xin], &[None, None]).unwrap();
            let e = exec(&g, 2);
            for _ in 0..2 {
                let got = e.run(None, &[&xin], &[None, None]).unwrap();
                close(&got[0], &want[0], tol);
                close(&got[1], &want[1], tol);
            }
            let s = e.stats();
            let cl = s
                .fused
                .iter()
                .find(|(n, _)| n == "channels-last conv")
                .map_or(0, |c| c.1);
            if dev.name().starts_with("cuda") {
                assert_eq!(cl, 2, "{} {dt}: {s:?}", dev.name());
            } else {
                assert_eq!(cl, 0, "{} {dt}: {s:?}", dev.name());
            }
        }
    }
}
