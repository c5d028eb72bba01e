//! The op-table generator (torchgen's role): from `src/ops/table.rs` it writes
//! * `src/ffi/eager/mod.rs` and `src/ffi/eager/<family>.rs`: the C exports of the eager ops;
//! * `src/ops/registry.rs`: `OpKind`, one attribute struct per op with attributes, `Op`;
//! * `src/runtime/dispatch.rs`: `run(stream, &Op, inputs, outputs)`, the runtime call of
//!   every op, for the graph executor;
//! * `bindings/python/rocm_backend/_ops_table.py`: the Python prototypes.
//!
//! build.rs includes this file and the table with `#[path]`, writes the output to OUT_DIR
//! (which `tests/generated.rs` compares with the committed files) and, with
//! `RB_GENERATE=1` (`make generate`), over the committed files before the crate compiles.

use crate::table::{Alias, Arg, Family, OpDef, OutKind, Ret};
use std::fmt::Write;

const BANNER: &str =
    "@generated from src/ops/table.rs by tools/opgen.rs; do not edit (`make generate`).";

/// Every generated file: (path relative to the crate root, contents).
pub fn generate(ops: &[OpDef]) -> Vec<(String, String)> {
    let mut files = vec![];
    let mut mods = String::new();
    writeln!(
        mods,
        "//! The eager ops' C exports, one module per op family.\n//!\n//! {BANNER}\n"
    )
    .unwrap();
    for fam in Family::ALL {
        let rows: Vec<&OpDef> = ops.iter().filter(|o| o.family == fam).collect();
        if rows.is_empty() {
            continue;
        }
        writeln!(
            mods,
            "#[rustfmt::skip]\npub mod {0};\npub use {0}::*;",
            fam.file()
        )
        .unwrap();
        files.push((
            format!("src/ffi/eager/{}.rs", fam.file()),
            ffi_family(fam, &rows),
        ));
    }
    files.push(("src/ffi/eager/mod.rs".into(), mods));
    files.push(("src/ops/registry.rs".into(), registry(ops)));
    files.push(("src/runtime/dispatch.rs".into(), dispatch(ops)));
    files.push((
        "bindings/python/rocm_backend/_ops_table.py".into(),
        python(ops),
    ));
    files
}

/// `layer_norm_backward` -> `LayerNormBackward`.
pub fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

// ------------------------------------------------------------------------------ C exports

/// The C parameters of one table parameter.
fn c_params(p: &crate::table::Param) -> Vec<(String, &'static str)> {
    let n = p.name.to_string();
    match p.arg {
        Arg::Tensor => vec![(n, "*const rb_tensor")],
        Arg::TensorMut => vec![(n, "*mut rb_tensor")],
        Arg::TensorOpt => vec![(n, "*const rb_tensor")],
        Arg::TensorOptMut => vec![(n, "*mut rb_tensor")],
        Arg::TensorList { len } => vec![(n, "*const *const rb_tensor"), (len.into(), "usize")],
        Arg::I64 | Arg::Usize | Arg::Step => vec![(n, "i64")],
        Arg::F64 => vec![(n, "f64")],
        Arg::F32 | Arg::Hyper | Arg::ClampMin | Arg::ClampMax => vec![(n, "f32")],
        Arg::Bool => vec![(n, "bool")],
        Arg::Flag
        | Arg::Dtype
        | Arg::Reduction
        | Arg::GeluApprox
        | Arg::Activation
        | Arg::PoolMode
        | Arg::Compare
        | Arg::ScatterReduce
        | Arg::CausalMode => vec![(n, "i32")],
        Arg::Dims { len } | Arg::Shape { len } => vec![(n, "*const i64"), (len.into(), "usize")],
        Arg::Shape4 => vec![(n, "*const i64")],
        Arg::OptF64 => vec![(n, "*const f64")],
        Arg::ConvParams => vec![(n, "*const rb_conv_params")],
        Arg::PoolParams => vec![(n, "*const rb_pool_params")],
        Arg::ConvParamsEx => vec![(n, "*const rb_conv_params_ex")],
        Arg::PoolParamsEx => vec![(n, "*const rb_pool_params_ex")],
    }
}

/// The `# Safety` lines of an export: what each dereferenced pointer must be.
fn safety(op: &OpDef) -> String {
    let mut parts = vec![];
    for p in op.params {
        let n = p.name;
        match p.arg {
            Arg::TensorList { len } => parts.push(format!(
                "`{n}` is NULL or points to `{len}` readable handles"
            )),
            Arg::Dims { len } | Arg::Shape { len } => parts.push(format!(
                "`{n}` is NULL or points to `{len}` readable int64_t"
            )),
            Arg::Shape4 => parts.push(format!("`{n}` is NULL or points to 4 readable int64_t")),
            Arg::OptF64 => parts.push(format!("`{n}` is NULL or points to a readable double")),
            Arg::ConvParams | Arg::PoolParams | Arg::ConvParamsEx | Arg::PoolParamsEx => {
                parts.push(format!("`{n}` is NULL or points to a readable struct"))
            }
            _ => {}
        }
    }
    for o in op.outputs {
        parts.push(match o.kind {
            OutKind::Out | OutKind::GradRequired | OutKind::Grad => format!(
                "`{}` is NULL or valid for reading and writing one handle",
                o.name
            ),
            OutKind::New | OutKind::NewOpt => {
                format!("`{}` is NULL or valid for writing one handle", o.name)
            }
        });
    }
    if parts.is_empty() {
        "Tensor and stream arguments are handles (checked on use); nothing is dereferenced.".into()
    } else {
        parts.join("; ") + "."
    }
}

/// The sentence on aliasing that every export with outputs carries (the in-place rule).
fn alias_doc(op: &OpDef) -> Option<String> {
    let dest = op
        .outputs
        .iter()
        .any(|o| matches!(o.kind, OutKind::Out | OutKind::Grad | OutKind::GradRequired));
    if !dest {
        return None;
    }
    let first = op
        .params
        .iter()
        .find(|p| p.arg.is_tensor())
        .map_or("x", |p| p.name);
    Some(match op.alias {
        Alias::Exact => "In place: a given output may be one of the inputs when it has the \
                         result's shape (the op then runs in place); an output that only partly \
                         overlaps an input is RB_STATUS_INVALID_ARGUMENT."
            .to_string(),
        Alias::Never => format!(
            "Not in place: a given output must not share memory with any input; one that \
             does is RB_STATUS_INVALID_ARGUMENT (\"output overlaps input '{first}'\")."
        ),
    })
}

fn doc_lines(out: &mut String, text: &str) {
    for l in text.lines() {
        if l.is_empty() {
            out.push_str("///\n");
        } else {
            writeln!(out, "/// {l}").unwrap();
        }
    }
}

/// The Rust binding of one parameter in an export body (after the handle look-ups).
fn convert(op: &OpDef, p: &crate::table::Param) -> Option<String> {
    let (n, opn) = (p.name, op.name);
    Some(match p.arg {
        Arg::Tensor => format!("let {n} = arc({n}, \"{n}\")?;"),
        Arg::TensorMut => {
            format!("let {n} = arc({n}, \"{n}\")?;\n        {n}.check_writable(\"{n}\")?;")
        }
        Arg::TensorOpt => format!("let {n} = arc_opt({n}, \"{n}\")?;"),
        Arg::TensorOptMut => format!(
            "let {n} = arc_opt({n}, \"{n}\")?;\n        if let Some(t) = &{n} {{\n            t.check_writable(\"{n}\")?;\n        }}"
        ),
        Arg::TensorList { len } => {
            format!("let {n} = unsafe {{ args::tensor_list({n}, {len}, \"{n}\", \"{opn}\") }}?;")
        }
        Arg::I64 | Arg::F64 | Arg::F32 | Arg::Bool => return None,
        Arg::Usize => format!("let {n} = args::non_negative({n}, \"{n}\")?;"),
        Arg::Step => format!("let {n} = args::step({n}, \"{opn}\")?;"),
        Arg::Hyper => format!("let {n} = f64::from({n});"),
        Arg::ClampMin | Arg::ClampMax => {
            format!("let {n} = args::bound(f64::from({n}), \"{opn}\")?;")
        }
        Arg::Flag => format!("let {n} = args::flag({n}, \"{n}\")?;"),
        Arg::Dtype => format!("let {n} = args::dtype({n}, \"{opn}\")?;"),
        Arg::Dims { len } => format!("let {n} = unsafe {{ args::dims({n}, {len}) }}?;"),
        Arg::Shape { len } => format!("let {n} = unsafe {{ args::shape({n}, {len}, \"{n}\") }}?;"),
        Arg::Shape4 => format!("let {n} = unsafe {{ args::shape({n}, 4, \"{n}\") }}?;"),
        Arg::OptF64 => format!("let {n} = unsafe {{ args::opt_f64({n}) }};"),
        Arg::Reduction => format!("let {n} = args::reduction({n}, \"{opn}\")?;"),
        Arg::GeluApprox => format!("let {n} = args::gelu({n})?;"),
        Arg::Activation => format!("let {n} = args::activation({n})?;"),
        Arg::PoolMode => format!("let {n} = args::pool_mode({n})?;"),
        Arg::Compare => format!("let {n} = args::compare({n}, \"{opn}\")?;"),
        Arg::ScatterReduce => {
            format!("let {n} = args::scatter_reduce({n}, \"{opn}\")?;")
        }
        Arg::ConvParams => format!("let {n} = unsafe {{ args::conv_params({n}) }}?;"),
        Arg::PoolParams => format!("let {n} = unsafe {{ args::pool_params({n}) }}?;"),
        Arg::CausalMode => format!("let {n} = args::causal({n}, \"{opn}\")?;"),
        Arg::ConvParamsEx => format!("let {n} = unsafe {{ args::conv_params_ex({n}) }}?;"),
        Arg::PoolParamsEx => format!("let {n} = unsafe {{ args::pool_params_ex({n}) }}?;"),
    })
}

/// The borrow of one parameter that the runtime call sees.
fn borrow(p: &crate::table::Param) -> Option<String> {
    let n = p.name;
    Some(match p.arg {
        Arg::Tensor | Arg::TensorMut => format!("let {n}: &Tensor = &{n};"),
        Arg::TensorOpt | Arg::TensorOptMut => format!("let {n}: Option<&Tensor> = {n}.as_deref();"),
        Arg::TensorList { .. } => format!(
            "let {n}: Vec<&Tensor> = {n}.iter().map(|t| &**t).collect();\n        let {n}: &[&Tensor] = &{n};"
        ),
        _ => return None,
    })
}

fn ffi_export(op: &OpDef) -> String {
    let mut s = String::new();
    doc_lines(&mut s, op.doc);
    if let Some(a) = alias_doc(op) {
        s.push_str("///\n");
        for l in wrap(&a, 92) {
            writeln!(s, "/// {l}").unwrap();
        }
    }
    s.push_str("///\n/// # Safety\n");
    for l in wrap(&safety(op), 92) {
        writeln!(s, "/// {l}").unwrap();
    }
    let mut cps: Vec<(String, &str)> = vec![("stream".into(), "*mut rb_stream")];
    for p in op.params {
        cps.extend(c_params(p));
    }
    for o in op.outputs {
        cps.push((o.name.into(), "*mut *mut rb_tensor"));
    }
    if cps.len() > 7 {
        s.push_str("#[allow(clippy::too_many_arguments)]\n");
    }
    writeln!(
        s,
        "#[unsafe(no_mangle)]\npub unsafe extern \"C\" fn rb_{}(",
        op.name
    )
    .unwrap();
    for (n, t) in &cps {
        writeln!(s, "    {n}: {t},").unwrap();
    }
    writeln!(s, ") -> rb_status {{\n    guard(\"rb_{}\", || {{", op.name).unwrap();
    let body = |s: &mut String, l: &str| writeln!(s, "        {l}").unwrap();
    for p in op.params.iter().filter(|p| p.arg.is_tensor()) {
        body(&mut s, &convert(op, p).unwrap());
    }
    for p in op.params.iter().filter(|p| !p.arg.is_tensor()) {
        if let Some(c) = convert(op, p) {
            body(&mut s, &c);
        }
    }
    body(&mut s, "let s = stream_arg(stream)?;");
    for o in op.outputs {
        let ctor = match o.kind {
            OutKind::Out => "out",
            OutKind::Grad => "opt",
            OutKind::GradRequired => "out",
            OutKind::New => "new_only",
            OutKind::NewOpt => "new_opt",
        };
        body(
            &mut s,
            &format!(
                "let {n}_slot = unsafe {{ OutSlot::{ctor}({n}, \"{n}\") }}?;",
                n = o.name
            ),
        );
    }
    // The in-place rule: every destination is checked against every tensor input.
    let dests: Vec<_> = op
        .outputs
        .iter()
        .filter(|o| matches!(o.kind, OutKind::Out | OutKind::Grad | OutKind::GradRequired))
        .collect();
    if !dests.is_empty() {
        let mut inputs = vec![];
        for p in op.params {
            match p.arg {
                Arg::Tensor | Arg::TensorMut => {
                    inputs.push(format!("(\"{0}\", Some(&*{0}))", p.name))
                }
                Arg::TensorOpt | Arg::TensorOptMut => {
                    inputs.push(format!("(\"{0}\", {0}.as_deref())", p.name))
                }
                Arg::TensorList { .. } => {}
                _ => {}
            }
        }
        let list = op
            .params
            .iter()
            .find(|p| matches!(p.arg, Arg::TensorList { .. }));
        let exact = op.alias == Alias::Exact;
        for o in &dests {
            match list {
                None => body(
                    &mut s,
                    &format!(
                        "{}_slot.check_overlap(\"rb_{}\", &[{}], {exact})?;",
                        o.name,
                        op.name,
                        inputs.join(", ")
                    ),
                ),
                Some(l) => {
                    // The tensors beside the list are checked too.
                    if !inputs.is_empty() {
                        body(
                            &mut s,
                            &format!(
                                "{}_slot.check_overlap(\"rb_{}\", &[{}], {exact})?;",
                                o.name,
                                op.name,
                                inputs.join(", ")
                            ),
                        );
                    }
                    body(
                        &mut s,
                        &format!(
                            "{o}_slot.check_overlap_list(\"rb_{op}\", \"{l}\", &{l}, {exact})?;",
                            o = o.name,
                            op = op.name,
                            l = l.name
                        ),
                    )
                }
            }
        }
    }
    for p in op.params {
        if let Some(b) = borrow(p) {
            body(&mut s, &b);
        }
    }
    body(&mut s, "let s = s.as_deref();");
    for o in op.outputs {
        let b = match o.kind {
            OutKind::Out => format!("let {0} = {0}_slot.dest();", o.name),
            OutKind::Grad | OutKind::GradRequired => {
                format!("let {0} = {0}_slot.as_grad();", o.name)
            }
            OutKind::New => continue,
            OutKind::NewOpt => format!("let {0} = {0}_slot.wanted();", o.name),
        };
        body(&mut s, &b);
    }
    body(&mut s, &capture_hook(op));
    match op.ret {
        Ret::Unit => {
            body(&mut s, &format!("runtime::{}", op.call));
        }
        Ret::One => {
            body(&mut s, &format!("let r = runtime::{}?;", op.call));
            body(
                &mut s,
                &format!("unsafe {{ {}_slot.finish(r) }};", op.outputs[0].name),
            );
            body(&mut s, "Ok(())");
        }
        Ret::Tuple | Ret::Array | Ret::ArrayRequired => {
            let rs: Vec<String> = (0..op.outputs.len()).map(|i| format!("r{i}")).collect();
            let pat = if op.ret == Ret::Tuple {
                format!("({})", rs.join(", "))
            } else {
                format!("[{}]", rs.join(", "))
            };
            body(&mut s, &format!("let {pat} = runtime::{}?;", op.call));
            let fin: Vec<String> = op
                .outputs
                .iter()
                .zip(&rs)
                .map(|(o, r)| format!("{}_slot.finish({r});", o.name))
                .collect();
            body(
                &mut s,
                &format!(
                    "unsafe {{\n            {}\n        }}",
                    fin.join("\n            ")
                ),
            );
            body(&mut s, "Ok(())");
        }
    }
    s.push_str("    })\n}\n");
    s
}

/// The recording branch of an export: on a stream being recorded into a graph
/// (`crate::graph::capture`), the call becomes a node instead of running eagerly.
fn capture_hook(op: &OpDef) -> String {
    let mut named = vec![];
    let mut ins = vec![];
    for p in op.params {
        let n = p.name;
        match p.arg {
            Arg::Tensor | Arg::TensorMut => {
                named.push(format!("__named.push((\"{n}\", Some({n})));"));
                ins.push(format!("__in.push(Some({n}));"));
            }
            Arg::TensorOpt | Arg::TensorOptMut => {
                named.push(format!("__named.push((\"{n}\", {n}));"));
                ins.push(format!("__in.push({n});"));
            }
            Arg::TensorList { .. } => {
                named.push(format!(
                    "__named.extend({n}.iter().map(|t| (\"{n}\", Some(*t))));"
                ));
                ins.push(format!("__in.extend({n}.iter().map(|t| Some(*t)));"));
            }
            _ => {}
        }
    }
    let c = camel(op.name);
    let opv = if has_attrs(op) {
        let fields: Vec<String> = op
            .params
            .iter()
            .filter(|p| attr_type(p.arg).is_some())
            .map(|p| match p.arg {
                Arg::Dims { .. } => format!("{0}: {0}.to_vec()", p.name),
                _ => format!("{0}: {0}.clone()", p.name),
            })
            .collect();
        format!("Op::{c}(attrs::{c} {{ {} }})", fields.join(", "))
    } else {
        format!("Op::{c}")
    };
    let grads: Vec<String> = op
        .outputs
        .iter()
        .map(|o| match o.kind {
            OutKind::Out => format!("{}.map_or(Grad::New, Grad::Into)", o.name),
            OutKind::Grad | OutKind::GradRequired => o.name.to_string(),
            OutKind::New => "Grad::New".into(),
            OutKind::NewOpt => format!("if {} {{ Grad::New }} else {{ Grad::Skip }}", o.name),
        })
        .collect();
    let fin: Vec<String> = op
        .outputs
        .iter()
        .enumerate()
        .map(|(k, o)| format!("{}_slot.finish(__r.get({k}).cloned().flatten());", o.name))
        .collect();
    let i = "            ";
    let mut h = String::new();
    h.push_str("if crate::graph::capture::active() {\n");
    writeln!(
        h,
        "{i}use crate::ops::registry::{{Op, attrs}};\n{i}use crate::runtime::eager::Grad;"
    )
    .unwrap();
    writeln!(
        h,
        "{i}let mut __named: Vec<(&str, Option<&Tensor>)> = Vec::new();"
    )
    .unwrap();
    for l in &named {
        writeln!(h, "{i}{l}").unwrap();
    }
    writeln!(
        h,
        "{i}if let Some(__g) = crate::graph::capture::recorder(\"rb_{}\", s, &__named)? {{",
        op.name
    )
    .unwrap();
    writeln!(h, "{i}    let mut __in: Vec<Option<&Tensor>> = Vec::new();").unwrap();
    for l in &ins {
        writeln!(h, "{i}    {l}").unwrap();
    }
    writeln!(
        h,
        "{i}    let __r = __g.record(s, {opv}, &__in, &[{}])?;",
        grads.join(", ")
    )
    .unwrap();
    if !fin.is_empty() {
        writeln!(h, "{i}    unsafe {{").unwrap();
        for l in &fin {
            writeln!(h, "{i}        {l}").unwrap();
        }
        writeln!(h, "{i}    }}").unwrap();
    }
    writeln!(h, "{i}    return Ok(());\n{i}}}").unwrap();
    h.push_str("        }");
    h
}

fn ffi_family(fam: Family, rows: &[&OpDef]) -> String {
    let mut s = String::new();
    writeln!(
        s,
        "//! The C exports of the {} ops (the eager conventions: `rb_add` in the header's\n//! introduction). {BANNER}\n",
        fam.file()
    )
    .unwrap();
    s.push_str("#![allow(unused_imports, clippy::clone_on_copy, clippy::vec_init_then_push, clippy::get_first)]\n\n");
    s.push_str(
        "use crate::ffi::args;\nuse crate::ffi::handles::{arc, arc_opt};\n\
         use crate::ffi::types::{rb_conv_params, rb_conv_params_ex, rb_pool_params, rb_pool_params_ex};\nuse crate::ffi::status::{guard, rb_status};\n\
         use crate::ffi::stream::{rb_stream, stream_arg};\nuse crate::ffi::tensor::rb_tensor;\n\
         use crate::ffi::util::OutSlot;\nuse crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};\n\
         use crate::ops::nn::LossKind;\nuse crate::ops::data::ScatterReduce;\nuse crate::ops::optim::{AdamAttrs, SgdAttrs};\n\
         use crate::ops::reduce::ReduceOp;\nuse crate::runtime::{self, Tensor};\n",
    );
    for op in rows {
        s.push('\n');
        s.push_str(&ffi_export(op));
    }
    s
}

/// Greedy word wrap.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![];
    let mut cur = String::new();
    for w in text.split_whitespace() {
        if !cur.is_empty() && cur.len() + 1 + w.len() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(w);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}

// ------------------------------------------------------------------------------- registry

/// The Rust type of an attribute in the op's attribute struct.
fn attr_type(a: Arg) -> Option<&'static str> {
    Some(match a {
        Arg::I64 => "i64",
        Arg::Usize => "usize",
        Arg::Step => "u64",
        Arg::F64 | Arg::Hyper | Arg::ClampMin | Arg::ClampMax => "f64",
        Arg::F32 => "f32",
        Arg::Bool | Arg::Flag => "bool",
        Arg::Dtype => "DType",
        Arg::Dims { .. } => "Vec<i64>",
        Arg::Shape { .. } | Arg::Shape4 => "Vec<usize>",
        Arg::OptF64 => "Option<f64>",
        Arg::Reduction => "Reduction",
        Arg::GeluApprox => "UnaryOp",
        Arg::Activation => "Activation",
        Arg::PoolMode => "PoolKind",
        Arg::Compare => "CompareOp",
        Arg::ScatterReduce => "ScatterReduce",
        Arg::ConvParams => "(ConvAttrs, usize)",
        Arg::PoolParams => "(PoolAttrs, usize)",
        Arg::CausalMode => "Causal",
        Arg::ConvParamsEx => "(ConvAttrsEx, usize)",
        Arg::PoolParamsEx => "(PoolAttrsEx, usize)",
        _ => return None,
    })
}

fn has_attrs(op: &OpDef) -> bool {
    op.params.iter().any(|p| attr_type(p.arg).is_some())
}

fn registry(ops: &[OpDef]) -> String {
    let mut s = format!(
        "//! The op registry: one [`OpKind`] per row of the op table, one attribute struct per\n\
         //! op that has attributes, and [`Op`] (a kind with its attributes), the node type of\n\
         //! the graph executor. The runtime call of every op is `crate::runtime::dispatch::run`.\n\
         //!\n//! {BANNER}\n\n"
    );
    s.push_str(
        "use crate::base::dtype::DType;\nuse crate::ops::conv::{Activation, ConvAttrs, ConvAttrsEx};\n\
         use crate::ops::elementwise::{CompareOp, UnaryOp};\nuse crate::ops::nn::{Causal, Reduction};\nuse crate::ops::data::ScatterReduce;\n\
         use crate::ops::pool::{PoolAttrs, PoolAttrsEx, PoolKind};\nuse crate::ops::table::{OPS, OpDef};\n\n",
    );
    s.push_str("/// Every op of the table, in its order.\n#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]\npub enum OpKind {\n");
    for op in ops {
        writeln!(s, "    {},", camel(op.name)).unwrap();
    }
    s.push_str("}\n\n");
    writeln!(
        s,
        "impl OpKind {{\n    /// Every kind, in table order.\n    pub const ALL: [OpKind; {}] = [",
        ops.len()
    )
    .unwrap();
    for op in ops {
        writeln!(s, "        OpKind::{},", camel(op.name)).unwrap();
    }
    s.push_str("    ];\n\n");
    s.push_str(
        "    /// The op's row of the table.\n    pub fn def(self) -> &'static OpDef {\n        &OPS[self as usize]\n    }\n\n\
         \x20   /// The op's name (the C export is `rb_<name>`).\n    pub fn name(self) -> &'static str {\n        self.def().name\n    }\n\n\
         \x20   /// The kind of the op called `name`.\n    pub fn from_name(name: &str) -> Option<OpKind> {\n        OpKind::ALL.iter().copied().find(|k| k.name() == name)\n    }\n}\n\n",
    );
    s.push_str("/// The attribute struct of every op that has attributes (its non-tensor parameters).\npub mod attrs {\n    use super::*;\n");
    for op in ops.iter().filter(|o| has_attrs(o)) {
        writeln!(s, "\n    /// The attributes of `rb_{}`.\n    #[derive(Clone, Debug)]\n    pub struct {} {{", op.name, camel(op.name)).unwrap();
        for p in op.params {
            if let Some(t) = attr_type(p.arg) {
                writeln!(s, "        pub {}: {t},", p.name).unwrap();
            }
        }
        s.push_str("    }\n");
    }
    s.push_str("}\n\n");
    s.push_str("/// An op with its attributes.\n#[derive(Clone, Debug)]\npub enum Op {\n");
    for op in ops {
        if has_attrs(op) {
            writeln!(s, "    {0}(attrs::{0}),", camel(op.name)).unwrap();
        } else {
            writeln!(s, "    {},", camel(op.name)).unwrap();
        }
    }
    s.push_str("}\n\nimpl Op {\n    pub fn kind(&self) -> OpKind {\n        match self {\n");
    for op in ops {
        let c = camel(op.name);
        if has_attrs(op) {
            writeln!(s, "            Op::{c}(_) => OpKind::{c},").unwrap();
        } else {
            writeln!(s, "            Op::{c} => OpKind::{c},").unwrap();
        }
    }
    s.push_str("        }\n    }\n}\n");
    s
}

// ------------------------------------------------------------------------------- dispatch

fn dispatch(ops: &[OpDef]) -> String {
    let mut s = format!(
        "//! The runtime call of every op of the registry: [`run`] takes an [`Op`] (kind and\n\
         //! attributes), its tensor inputs in the table's order (an optional input is `None`;\n\
         //! a list input takes all of them) and one [`Grad`] per output, and returns each\n\
         //! output that was made (`None` for a skipped or given one).\n\
         //!\n//! {BANNER}\n\n"
    );
    s.push_str(
        "#![allow(unused_imports, unused_variables, clippy::get_first, clippy::match_single_binding, clippy::needless_borrow)]\n\n\
         use crate::ops::elementwise::{BinaryOp, CompareOp, UnaryOp};\nuse crate::ops::nn::LossKind;\nuse crate::ops::data::ScatterReduce;\n\
         use crate::ops::optim::{AdamAttrs, SgdAttrs};\nuse crate::ops::reduce::ReduceOp;\n\
         use crate::ops::registry::*;\nuse crate::runtime::eager::Grad;\nuse crate::runtime::*;\n\
         use crate::{Error, Result};\n\n\
         fn required_input<'a>(op: &str, inputs: &[Option<&'a Tensor>], i: usize, name: &str) -> Result<&'a Tensor> {\n\
         \x20   inputs.get(i).copied().flatten().ok_or_else(|| Error::invalid(format!(\"{op}: input {i} ('{name}') is missing\")))\n}\n\n\
         fn dest<'a>(g: Option<&Grad<'a>>) -> Option<&'a Tensor> {\n    match g {\n        Some(Grad::Into(t)) => Some(t),\n        _ => None,\n    }\n}\n\n\
         fn grad<'a>(g: Option<&Grad<'a>>) -> Grad<'a> {\n    g.copied().unwrap_or(Grad::New)\n}\n\n\
         fn wanted(g: Option<&Grad<'_>>) -> bool {\n    !matches!(g, Some(Grad::Skip))\n}\n\n",
    );
    s.push_str(
        "/// Runs `op` eagerly on `stream` (None: the inputs' device's default stream).\n\
         pub fn run(\n    stream: Option<&Stream>,\n    op: &Op,\n    inputs: &[Option<&Tensor>],\n    outputs: &[Grad<'_>],\n) -> Result<Vec<Option<Tensor>>> {\n\
         \x20   let s = stream;\n    match op {\n",
    );
    for op in ops {
        let c = camel(op.name);
        if has_attrs(op) {
            writeln!(s, "        Op::{c}(attrs) => {{").unwrap();
        } else {
            writeln!(s, "        Op::{c} => {{").unwrap();
        }
        let mut i = 0;
        for p in op.params {
            let n = p.name;
            let line = match p.arg {
                Arg::Tensor | Arg::TensorMut => {
                    i += 1;
                    format!(
                        "let {n} = required_input(\"{}\", inputs, {}, \"{n}\")?;",
                        op.name,
                        i - 1
                    )
                }
                Arg::TensorOpt | Arg::TensorOptMut => {
                    i += 1;
                    format!("let {n} = inputs.get({}).copied().flatten();", i - 1)
                }
                Arg::TensorList { .. } => {
                    // The list takes every input from its position on.
                    let from = if i == 0 {
                        "inputs".to_string()
                    } else {
                        format!("inputs.get({i}..).unwrap_or(&[])")
                    };
                    format!(
                        "let {n}: Vec<&Tensor> = {from}.iter().copied().flatten().collect();\n            let {n}: &[&Tensor] = &{n};"
                    )
                }
                Arg::Dims { .. } => format!("let {n}: &[i64] = &attrs.{n};"),
                Arg::Shape { .. }
                | Arg::Shape4
                | Arg::ConvParams
                | Arg::PoolParams
                | Arg::ConvParamsEx
                | Arg::PoolParamsEx => {
                    format!("let {n} = &attrs.{n};")
                }
                _ => format!("let {n} = attrs.{n};"),
            };
            writeln!(s, "            {line}").unwrap();
        }
        for (k, o) in op.outputs.iter().enumerate() {
            let f = match o.kind {
                OutKind::Out => "dest",
                OutKind::Grad | OutKind::GradRequired => "grad",
                OutKind::New => continue,
                OutKind::NewOpt => "wanted",
            };
            writeln!(s, "            let {} = {f}(outputs.get({k}));", o.name).unwrap();
        }
        // `&x_shape` of a Shape attribute is already a reference: the call's `&` is harmless
        // (auto-deref), and `params.0`/`params.1` read the borrowed tuple.
        let call = op.call;
        match op.ret {
            Ret::Unit => writeln!(s, "            {call}?;\n            Ok(vec![])").unwrap(),
            Ret::One => writeln!(s, "            Ok(vec![Some({call}?)])").unwrap(),
            Ret::Tuple | Ret::Array | Ret::ArrayRequired => {
                let rs: Vec<String> = (0..op.outputs.len()).map(|i| format!("r{i}")).collect();
                let pat = if op.ret == Ret::Tuple {
                    format!("({})", rs.join(", "))
                } else {
                    format!("[{}]", rs.join(", "))
                };
                writeln!(s, "            let {pat} = {call}?;").unwrap();
                let items: Vec<String> = op
                    .outputs
                    .iter()
                    .zip(&rs)
                    .map(|(o, r)| match (op.ret, o.kind) {
                        (Ret::ArrayRequired, _) | (Ret::Tuple, OutKind::Out | OutKind::New) => {
                            format!("Some({r})")
                        }
                        _ => r.clone(),
                    })
                    .collect();
                writeln!(s, "            Ok(vec![{}])", items.join(", ")).unwrap();
            }
        }
        s.push_str("        }\n");
    }
    s.push_str("    }\n}\n");
    s
}

// --------------------------------------------------------------------------------- Python

fn py_kind(a: Arg) -> &'static str {
    match a {
        Arg::Tensor | Arg::TensorMut => "T",
        Arg::TensorOpt | Arg::TensorOptMut => "T?",
        Arg::TensorList { .. } => "Ts",
        Arg::I64 | Arg::Usize | Arg::Step => "i64",
        Arg::F64 => "f64",
        Arg::F32 | Arg::Hyper => "f32",
        Arg::ClampMin => "lo",
        Arg::ClampMax => "hi",
        Arg::Bool => "bool",
        Arg::Flag => "b32",
        Arg::Dtype => "dtype",
        Arg::Dims { .. } | Arg::Shape { .. } => "dims",
        Arg::Shape4 => "shape4",
        Arg::OptF64 => "f64?",
        Arg::Reduction => "red",
        Arg::GeluApprox => "approx",
        Arg::Activation => "act",
        Arg::PoolMode => "pool",
        Arg::Compare => "cmp",
        Arg::ScatterReduce => "scat",
        Arg::ConvParams => "conv",
        Arg::PoolParams => "poolp",
        Arg::CausalMode => "causal",
        Arg::ConvParamsEx => "convx",
        Arg::PoolParamsEx => "poolx",
    }
}

fn python(ops: &[OpDef]) -> String {
    let mut s = format!(
        "\"\"\"The eager ops of the C API, one row each: (python name, C symbol, parameters,\n\
         outputs[, python order]). {BANNER}\n\nThe row format is described in _ops.py.\n\"\"\"\n\nOPS = [\n"
    );
    for op in ops {
        let name = if op.py.name.is_empty() {
            op.name
        } else {
            op.py.name
        };
        let params: Vec<String> = op
            .params
            .iter()
            .map(|p| {
                let mut e = format!("{}:{}", p.py_name(), py_kind(p.arg));
                if !p.default.is_empty() {
                    e.push('=');
                    e.push_str(p.default);
                }
                format!("{e:?}")
            })
            .collect();
        let outs: Vec<String> = if !op.py.returns.is_empty() {
            vec![format!("\"={}\"", op.py.returns)]
        } else {
            op.outputs
                .iter()
                .map(|o| format!("\"{}\"", o.name))
                .collect()
        };
        let tuple = |v: &[String]| {
            if v.len() == 1 {
                format!("({},)", v[0])
            } else {
                format!("({})", v.join(", "))
            }
        };
        write!(
            s,
            "    (\"{name}\", \"rb_{}\", {}, {}",
            op.name,
            tuple(&params),
            tuple(&outs)
        )
        .unwrap();
        if !op.py.order.is_empty() {
            let o: Vec<String> = op.py.order.iter().map(|x| format!("\"{x}\"")).collect();
            write!(s, ", {}", tuple(&o)).unwrap();
        }
        s.push_str("),\n");
    }
    s.push_str("]\n");
    s
}
