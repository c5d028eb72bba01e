//! torch_anchors_graph.py's llama_decode_f16_8x4096: one decode step (batch 1, one new
//! token) through 8 Llama-style layers (d 4096, 32 heads of 128, SwiGLU 11008, RMSNorm,
//! rotate-half RoPE, a KV cache of 2048 positions, f16), weights `randn * 0.02` as the
//! anchor makes them. The step writes the new token's key and value into each layer's cache
//! at the last position (`index_copy` with the position in a device tensor), attends over the
//! whole cache, and adds the residuals, exactly as the anchor's `decode()`.
//!
//! Timed eagerly (`..._eager`), and recorded once then run by executors at O1 and O3 (the O3
//! figure, a device-graph replay, is also reported under the anchor's name `..._cudagraph`).
//! Each line prints `of_copy`: the bytes the step must read (weights + KV caches) per second
//! over the copy bandwidth measured in the same run (`copy_d2d_1GiB`), the anchor's measure.
//! The O3 result is checked against the eager step's.

use super::{Bench, Dev, Measure, Res};
use rocm_backend::device::DeviceKind;
use rocm_backend::graph::capture::GraphHandle;
use rocm_backend::graph::exec::{Config, Executor};
use rocm_backend::ops::elementwise::BinaryOp;
use rocm_backend::ops::registry::{Op, attrs};
use rocm_backend::runtime::eager::Grad;
use rocm_backend::runtime::{DType, Tensor, dispatch, elementwise};

const L: usize = 8;
const D: usize = 4096;
const H: usize = 32;
const HD: usize = 128;
const FF: usize = 11008;
const T: usize = 2048;

struct Layer {
    wq: Tensor,
    wk: Tensor,
    wv: Tensor,
    wo: Tensor,
    w1: Tensor,
    w3: Tensor,
    w2: Tensor,
    n1: Tensor,
    n2: Tensor,
    kc: Tensor,
    vc: Tensor,
}

/// The model's tensors besides its layers: the rotary caches and the position.
struct Shared {
    cos: Tensor,
    sin: Tensor,
    pos: Tensor,
}

/// One call, recorded into `g` or run now; its first result.
fn call(g: Option<&GraphHandle>, op: Op, ins: &[Option<&Tensor>]) -> Res<Tensor> {
    let outs = [Grad::New];
    let r = match g {
        Some(g) => g.record(None, op, ins, &outs)?,
        None => dispatch::run(None, &op, ins, &outs)?,
    };
    Ok(r[0].clone().expect("the op returns its result"))
}

/// An effect-only call (index_copy).
fn effect(g: Option<&GraphHandle>, op: Op, ins: &[Option<&Tensor>]) -> Res<()> {
    match g {
        Some(g) => g.record(None, op, ins, &[])?,
        None => dispatch::run(None, &op, ins, &[])?,
    };
    Ok(())
}

/// `randn(shape) * 0.02` in f16, as the anchor's `w()` makes its tensors.
fn w(dev: &Dev, shape: &[usize], seed: u64) -> Res<Tensor> {
    let scale = Tensor::from_f32(dev.clone(), &[0.02], &[])?;
    let scale = rocm_backend::runtime::data::cast(None, &scale, DType::F16, None)?;
    let t = Tensor::randn(dev.clone(), shape, DType::F16, seed)?;
    elementwise::binary(None, BinaryOp::Mul, &t, &scale, None)
}

fn weights(dev: &Dev) -> Res<(Vec<Layer>, Shared)> {
    let mut seed = 9000u64;
    let mut w = |shape: &[usize]| -> Res<Tensor> {
        seed += 1;
        w(dev, shape, seed)
    };
    let ones = |n: usize| -> Res<Tensor> {
        let t = Tensor::from_f32(dev.clone(), &vec![1.0; n], &[n])?;
        rocm_backend::runtime::data::cast(None, &t, DType::F16, None)
    };
    let mut layers = Vec::with_capacity(L);
    for _ in 0..L {
        layers.push(Layer {
            wq: w(&[D, D])?,
            wk: w(&[D, D])?,
            wv: w(&[D, D])?,
            wo: w(&[D, D])?,
            w1: w(&[FF, D])?,
            w3: w(&[FF, D])?,
            w2: w(&[D, FF])?,
            n1: ones(D)?,
            n2: ones(D)?,
            kc: w(&[1, H, T, HD])?,
            vc: w(&[1, H, T, HD])?,
        });
    }
    // cos/sin [T, HD/2] as the anchor computes them: angles in f32, rounded to f16.
    let half = HD / 2;
    let (mut c, mut s) = (Vec::with_capacity(T * half), Vec::with_capacity(T * half));
    for p in 0..T {
        for i in 0..half {
            let inv = 1.0f32 / 10000f32.powf((2 * i) as f32 / HD as f32);
            let a = p as f32 * inv;
            c.push(a.cos());
            s.push(a.sin());
        }
    }
    let f16 = |v: &[f32]| -> Res<Tensor> {
        let t = Tensor::from_f32(dev.clone(), v, &[T, half])?;
        rocm_backend::runtime::data::cast(None, &t, DType::F16, None)
    };
    let pos = Tensor::from_bytes(
        dev.clone(),
        &((T - 1) as i64).to_ne_bytes(),
        &[1],
        DType::I64,
    )?;
    Ok((
        layers,
        Shared {
            cos: f16(&c)?,
            sin: f16(&s)?,
            pos,
        },
    ))
}

/// The anchor's `decode()` from `x` [1, 1, D]: returns the new x.
fn decode(g: Option<&GraphHandle>, layers: &[Layer], sh: &Shared, x: &Tensor) -> Res<Tensor> {
    // F.rms_norm's default eps: torch.finfo(float16).eps.
    let norm = Op::RmsNorm(attrs::RmsNorm {
        normalized_shape: vec![D],
        eps: 0.0009765625,
    });
    let rope = Op::RopeCached(attrs::RopeCached {
        seq_dim: 1,
        interleaved: false,
    });
    let sdpa = Op::ScaledDotProductAttention(attrs::ScaledDotProductAttention {
        is_causal: false,
        scale: None,
    });
    let store = Op::IndexCopy(attrs::IndexCopy { dim: 2 });
    let mut x = x.clone();
    for p in layers {
        let h = call(g, norm.clone(), &[Some(&x), Some(&p.n1)])?;
        // [1, 1, D] -> [1, 1, H, HD] (seq dim 1) for the rotation; with one token that is also
        // the [1, H, 1, HD] attention layout.
        let proj = |w: &Tensor| -> Res<Tensor> {
            call(g, Op::Linear, &[Some(&h), Some(w), None])?.reshape(&[1, 1, H, HD])
        };
        let posid = Some(&sh.pos);
        let q = call(
            g,
            rope.clone(),
            &[Some(&proj(&p.wq)?), Some(&sh.cos), Some(&sh.sin), posid],
        )?;
        let k = call(
            g,
            rope.clone(),
            &[Some(&proj(&p.wk)?), Some(&sh.cos), Some(&sh.sin), posid],
        )?;
        let v = proj(&p.wv)?;
        let (q, k, v) = (
            q.reshape(&[1, H, 1, HD])?,
            k.reshape(&[1, H, 1, HD])?,
            v.reshape(&[1, H, 1, HD])?,
        );
        effect(g, store.clone(), &[Some(&p.kc), Some(&sh.pos), Some(&k)])?;
        effect(g, store.clone(), &[Some(&p.vc), Some(&sh.pos), Some(&v)])?;
        let a =
            call(g, sdpa.clone(), &[Some(&q), Some(&p.kc), Some(&p.vc)])?.reshape(&[1, 1, D])?;
        let o = call(g, Op::Linear, &[Some(&a), Some(&p.wo), None])?;
        x = call(g, Op::Add, &[Some(&x), Some(&o)])?;
        let h = call(g, norm.clone(), &[Some(&x), Some(&p.n2)])?;
        let gate = call(g, Op::Linear, &[Some(&h), Some(&p.w1), None])?;
        let gate = call(g, Op::Silu, &[Some(&gate)])?;
        let up = call(g, Op::Linear, &[Some(&h), Some(&p.w3), None])?;
        let m = call(g, Op::Mul, &[Some(&gate), Some(&up)])?;
        let dn = call(g, Op::Linear, &[Some(&m), Some(&p.w2), None])?;
        x = call(g, Op::Add, &[Some(&x), Some(&dn)])?;
    }
    Ok(x)
}

/// The largest `|a - b| / (1 + |b|)` (NaN counts as infinite).
fn max_rel(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(a, b)| (a - b).abs() / (1.0 + b.abs()))
        .fold(
            0.0f32,
            |m, d| if d.is_nan() { f32::INFINITY } else { m.max(d) },
        )
}

/// The eager step on f32 copies of every tensor (the reference of the f16 steps).
fn f32_step(layers: &[Layer], sh: &Shared, x0: &Tensor) -> Res<Vec<f32>> {
    let f = |t: &Tensor| rocm_backend::runtime::data::cast(None, t, DType::F32, None);
    let wide = layers
        .iter()
        .map(|p| {
            Ok(Layer {
                wq: f(&p.wq)?,
                wk: f(&p.wk)?,
                wv: f(&p.wv)?,
                wo: f(&p.wo)?,
                w1: f(&p.w1)?,
                w3: f(&p.w3)?,
                w2: f(&p.w2)?,
                n1: f(&p.n1)?,
                n2: f(&p.n2)?,
                kc: f(&p.kc)?,
                vc: f(&p.vc)?,
            })
        })
        .collect::<Res<Vec<_>>>()?;
    let shw = Shared {
        cos: f(&sh.cos)?,
        sin: f(&sh.sin)?,
        pos: sh.pos.clone(),
    };
    host_f32(&decode(None, &wide, &shw, &f(x0)?)?)
}

/// `t`'s values as f32 on the host.
fn host_f32(t: &Tensor) -> Res<Vec<f32>> {
    let f = rocm_backend::runtime::data::cast(None, t, DType::F32, None)?;
    let mut bytes = vec![0u8; f.nbytes()];
    f.copy_to_host(&mut bytes, None)?;
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// `RB_BENCH_PROFILE=1`: one profiled O1 run (every node synchronized and timed, so each
/// figure includes a launch), summed by node name, largest first.
fn profile(
    g: &GraphHandle,
    s: &rocm_backend::runtime::Stream,
    x0: &Tensor,
    out: &Tensor,
) -> Res<()> {
    let e = Executor::new(
        g.snapshot(),
        Config {
            opt_level: 1,
            enable_profiling: true,
            ..Default::default()
        },
    )?;
    for _ in 0..2 {
        e.run(Some(s), &[x0], &[Some(out)])?;
    }
    let mut by: std::collections::BTreeMap<String, (usize, f64)> = Default::default();
    for (n, ms) in e.stats().node_ms {
        let a = by.entry(n).or_default();
        a.0 += 1;
        a.1 += ms;
    }
    let mut v: Vec<_> = by.into_iter().collect();
    v.sort_by(|a, b| b.1.1.total_cmp(&a.1.1));
    for (n, (k, ms)) in v {
        println!(
            "{:40} {k:4} nodes {:10.1} us  mean {:8.1} us",
            format!("  profile {n}"),
            ms * 1e3,
            ms * 1e3 / k as f64
        );
    }
    Ok(())
}

/// The bytes one step must read: every weight once and both caches (the anchor's count).
fn bytes_read() -> f64 {
    (L * (4 * D * D + 3 * D * FF + 2 * H * T * HD) * 2) as f64
}

pub(super) fn llama_suite(b: &mut Bench, dev: &Dev) {
    let base = "llama_decode_f16_8x4096";
    if dev.kind() == DeviceKind::Cpu {
        println!(
            "{:40} skipped on the CPU (3.5 GB of weights and caches)",
            format!("{base}_*")
        );
        return;
    }
    let names = [
        format!("{base}_eager"),
        format!("{base}_graph_O1"),
        format!("{base}_graph_O3"),
    ];
    if !names.iter().any(|n| b.wanted(n)) {
        return;
    }
    let built = weights(dev).and_then(|(layers, sh)| Ok((layers, sh, w(dev, &[1, 1, D], 8999)?)));
    let (layers, sh, x0) = match built {
        Ok(m) => m,
        Err(e) => {
            println!("{base:40} skipped: {:?}: {}", e.kind, e.message);
            return;
        }
    };
    let copy = b.results.get("copy_d2d_1GiB").map(|m| m.value);
    let report = |b: &Bench, name: &str| {
        if let (Some(m), Some(gbps)) = (b.results.get(name), copy) {
            let of_copy = bytes_read() / (m.ms * 1e-3) / 1e9 / gbps;
            println!(
                "{:40} of_copy={of_copy:.3} (copy {gbps:.0} GB/s)",
                format!("  {name}")
            );
        }
    };
    let eager_name = &names[0];
    let mut reference: Option<Vec<f32>> = None;
    b.run(eager_name, |b| {
        let out = decode(None, &layers, &sh, &x0)?;
        reference = Some(host_f32(&out)?);
        b.time(eager_name, 1, "us", 0.0, || {
            decode(None, &layers, &sh, &x0).map(|_| ())
        })?;
        report(b, eager_name);
        Ok(())
    });
    if reference.is_none() {
        reference = decode(None, &layers, &sh, &x0)
            .and_then(|t| host_f32(&t))
            .ok();
    }
    // The same step in f32 (the weights, caches and rotary tables widened): the executor's
    // fusions round once where the eager f16 ops round each step, so where an executor's
    // step is not within 2e-2 of the eager one it must be at least as close to this as the
    // eager step is.
    let exact = f32_step(&layers, &sh, &x0);
    let eager_err = match (&reference, &exact) {
        (Some(r), Ok(x)) => {
            let e = max_rel(r, x);
            println!(
                "{:40} max rel diff vs f32 {e:.2e}",
                format!("  {eager_name}")
            );
            Some(e)
        }
        (_, Err(e)) => {
            println!("{:40} no f32 step: {e}", format!("  {base}"));
            None
        }
        _ => None,
    };
    for (level, name) in [(1u32, &names[1]), (3, &names[2])] {
        b.run(name, |b| {
            let g = GraphHandle::new(dev.clone());
            let xp = g.input(&[1, 1, D], DType::F16)?;
            let y = decode(Some(&g), &layers, &sh, &xp)?;
            g.mark_output(&y)?;
            let e = Executor::new(
                g.snapshot(),
                Config {
                    opt_level: level,
                    ..Default::default()
                },
            )?;
            let s = rocm_backend::runtime::Stream::new(dev.clone())?;
            let out = Tensor::empty(dev.clone(), &[1, 1, D], DType::F16)?;
            e.run(Some(&s), &[&x0], &[Some(&out)])?;
            s.synchronize()?;
            if let Some(want) = &reference {
                let got = host_f32(&out)?;
                let worst = max_rel(&got, want);
                let vs_f32 = exact.as_ref().ok().map(|x| max_rel(&got, x));
                println!(
                    "{:40} max rel diff vs eager {worst:.2e}, vs f32 {}",
                    format!("  {name}"),
                    vs_f32.map_or("-".into(), |e| format!("{e:.2e}"))
                );
                let closer = matches!((vs_f32, eager_err), (Some(a), Some(e)) if a <= 1.5 * e);
                if worst > 2e-2 && !closer {
                    return Err(rocm_backend::Error::invalid(format!(
                        "{name}: the executor's step differs from the eager step by {worst}"
                    )));
                }
            }
            b.time(name, 1, "us", 0.0, || {
                e.run(Some(&s), &[&x0], &[Some(&out)]).map(|_| ())
            })?;
            report(b, name);
            let st = e.stats();
            println!(
                "{:40} nodes {} -> {}, launches/run {}, fused {:?}, device graph: {} ({})",
                format!("  stats llama O{level}"),
                st.nodes_recorded,
                st.nodes_optimized,
                st.launches_per_run,
                st.fused,
                st.device_graph,
                st.device_graph_note
            );
            if level == 1 && std::env::var_os("RB_BENCH_PROFILE").is_some() {
                profile(&g, &s, &x0, &out)?;
            }
            if level == 3 {
                let ms = b.results[name].ms;
                b.results.insert(
                    format!("{base}_cudagraph"),
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
