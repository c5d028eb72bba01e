//! The op registry generated from the op table: every row has a kind, the names round-trip,
//! backward pairings name real ops, and ops run through `runtime::dispatch::run` (the
//! executor's entry) give the eager result.

use rocm_backend::base::dtype::DType;
use rocm_backend::ops::elementwise::UnaryOp;
use rocm_backend::ops::registry::{Op, OpKind, attrs};
use rocm_backend::ops::table::{Arg, OPS};
use rocm_backend::runtime::eager::Grad;
use rocm_backend::runtime::{Tensor, context, dispatch};

#[test]
fn every_row_has_a_kind_and_its_backward_exists() {
    assert_eq!(OpKind::ALL.len(), OPS.len());
    for (k, row) in OpKind::ALL.iter().zip(OPS) {
        assert_eq!(k.name(), row.name);
        assert_eq!(OpKind::from_name(row.name), Some(*k));
        if !row.backward.is_empty() {
            assert!(
                OpKind::from_name(row.backward).is_some(),
                "{}: backward {} is not an op",
                row.name,
                row.backward
            );
        }
        // Python names and defaults are well-formed: a default only on a trailing run of
        // parameters in Python order is not required, but every list/dims kind has a length.
        for p in row.params {
            if let Arg::Dims { len } | Arg::Shape { len } | Arg::TensorList { len } = p.arg {
                assert!(!len.is_empty(), "{}.{}", row.name, p.name);
            }
        }
    }
    let mut names: Vec<&str> = OPS.iter().map(|o| o.name).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), OPS.len(), "op names are unique");
}

fn data(n: usize, seed: u64) -> Vec<f32> {
    (0..n)
        .map(|i| rocm_backend::ops::random::normal_f32(seed, i as u64))
        .collect()
}

#[test]
fn dispatch_matches_eager() {
    let cpu = context::resolve(Some("cpu")).unwrap();
    let a = Tensor::from_f32(cpu.clone(), &data(12, 1), &[3, 4]).unwrap();
    let b = Tensor::from_f32(cpu.clone(), &data(4, 2), &[4]).unwrap();
    let w = Tensor::from_f32(cpu.clone(), &data(20, 3), &[5, 4]).unwrap();

    // add (no attributes), gelu (an attribute), linear (an optional input), softmax.
    let cases: Vec<(Op, Vec<Option<&Tensor>>, Tensor)> = vec![
        (
            Op::Add,
            vec![Some(&a), Some(&b)],
            rocm_backend::runtime::elementwise::binary(
                None,
                rocm_backend::ops::elementwise::BinaryOp::Add,
                &a,
                &b,
                None,
            )
            .unwrap(),
        ),
        (
            Op::Gelu(attrs::Gelu {
                approximate: UnaryOp::Gelu { tanh: true },
            }),
            vec![Some(&a)],
            rocm_backend::runtime::elementwise::unary(None, UnaryOp::Gelu { tanh: true }, &a, None)
                .unwrap(),
        ),
        (
            Op::Linear,
            vec![Some(&a), Some(&w), None],
            rocm_backend::runtime::blas::linear(None, &a, &w, None, None).unwrap(),
        ),
        (
            Op::Softmax(attrs::Softmax { dim: -1 }),
            vec![Some(&a)],
            rocm_backend::runtime::softmax::softmax(None, &a, -1, None).unwrap(),
        ),
    ];
    for (op, inputs, want) in cases {
        let got = dispatch::run(None, &op, &inputs, &[Grad::New]).unwrap();
        assert_eq!(got.len(), 1, "{:?}", op.kind());
        let got = got[0].as_ref().unwrap();
        assert_eq!(got.shape(), want.shape(), "{:?}", op.kind());
        assert_eq!(got.dtype(), DType::F32);
        assert_eq!(
            got.to_f64_vec().unwrap(),
            want.to_f64_vec().unwrap(),
            "{:?}",
            op.kind()
        );
    }
    // A missing required input is an error naming it, not a panic.
    let e = dispatch::run(None, &Op::Add, &[Some(&a)], &[Grad::New]).unwrap_err();
    assert!(e.message.contains("'b'"), "{}", e.message);
}

/// The table's dtype rule (`ops::support::table_allows`, the default of
/// `Device::supports`) agrees with what the CPU device does, for every elementwise op whose
/// parameters are all tensors of one dtype, on every dtype.
#[test]
fn table_dtype_rule_matches_the_cpu_device() {
    use rocm_backend::ops::support::table_allows;
    use rocm_backend::ops::table::Family;
    let cpu = context::resolve(Some("cpu")).unwrap();
    let mut checked = 0;
    let mut wrong = vec![];
    for k in OpKind::ALL {
        let row = k.def();
        if row.family != Family::Elementwise
            || row.name.starts_with("where")
            // prelu's weight must match the input's channels, not any shape of [4].
            || row.name.starts_with("prelu")
            || !row.params.iter().all(|p| p.arg == Arg::Tensor)
        {
            continue;
        }
        for d in [
            DType::F32,
            DType::F16,
            DType::BF16,
            DType::I32,
            DType::I64,
            DType::Bool,
            DType::F64,
            DType::I8,
            DType::U8,
            DType::I16,
        ] {
            let t = Tensor::zeros(cpu.clone(), &[4], d).unwrap();
            let inputs: Vec<Option<&Tensor>> = row.params.iter().map(|_| Some(&t)).collect();
            let outs = vec![Grad::New; row.outputs.len()];
            let r = dispatch::run(None, &op_without_attrs(k), &inputs, &outs);
            if r.is_ok() != table_allows(k, &[d]) {
                wrong.push(format!(
                    "{} on {d}: table {}, device {:?}",
                    row.name,
                    table_allows(k, &[d]),
                    r.err().map(|e| e.message)
                ));
            }
            checked += 1;
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(checked >= 100, "only {checked} cases");
}

/// The `Op` of a kind that has no attributes.
fn op_without_attrs(k: OpKind) -> Op {
    macro_rules! find {
        ($($v:ident),*) => {
            match k {
                $(OpKind::$v => Op::$v,)*
                _ => panic!("{k:?} has attributes"),
            }
        };
    }
    find!(
        Add,
        Sub,
        Mul,
        Div,
        Pow,
        Maximum,
        Minimum,
        AddBackward,
        SubBackward,
        MulBackward,
        DivBackward,
        PowBackward,
        MaximumBackward,
        MinimumBackward,
        Relu,
        Neg,
        Abs,
        Sqrt,
        Exp,
        Log,
        Sin,
        Cos,
        Sigmoid,
        Tanh,
        Silu,
        Hardswish,
        ReluBackward,
        NegBackward,
        AbsBackward,
        SqrtBackward,
        ExpBackward,
        LogBackward,
        SinBackward,
        CosBackward,
        SigmoidBackward,
        TanhBackward,
        SiluBackward,
        HardswishBackward,
        Selu,
        Hardsigmoid,
        Softsign,
        Mish,
        Erf,
        Sign,
        Floor,
        Ceil,
        Round,
        Reciprocal,
        SeluBackward,
        HardsigmoidBackward,
        SoftsignBackward,
        MishBackward,
        ErfBackward,
        SignBackward,
        FloorBackward,
        CeilBackward,
        RoundBackward,
        ReciprocalBackward,
        Eq,
        Ne,
        Lt,
        Le,
        Gt,
        Ge,
        AddRelu,
        MulAdd
    )
}
