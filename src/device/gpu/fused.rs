//! Fused elementwise programs on GPUs ([`crate::ops::fused`]): a HIP C++ kernel generated per
//! program and input layout, compiled through the kernel JIT and its memory + disk cache
//! ([`super::jit::compile_cached`], keyed by the source's hash), loaded once per device and
//! kept in a map from (signature, input kinds, variant) to the loaded functions.
//!
//! * The arithmetic is the unfused kernels' own: the op-code `#define`s and the
//!   `rb_unary_f` / `rb_binary_f` device functions are copied verbatim from
//!   kernels/elementwise.hip ([`elementwise_device_functions`]) and called with constant op
//!   codes, so gelu, erf, exp... give the unfused ops' bits. Every arithmetic result passes
//!   through `RB_FZ_KEEP`, a barrier the compilers cannot see through, so no multiply of
//!   one op is contracted with an add of the next into an FMA (which the unfused ops, with a
//!   store in between, never do).
//! * Dense variant (every input dense with the output's shape, or a scalar): a grid-stride
//!   loop over vectors of `V` elements (16 bytes of the widest dense operand, e.g. 4 f32 or
//!   8 f16) loaded and stored as one aligned access each, no index arithmetic; scalar inputs
//!   are read once per thread; a second kernel with `V = 1` serves misaligned pointers.
//!   Threads `< n % V` also do the tail.
//! * Row variant (every broadcast or strided input contiguous along the innermost merged
//!   dimension, or constant along it: a per-channel bias over channels-last activations, a
//!   per-row scale, a view with a row pitch; rows a multiple of `V` long and aligned): a
//!   vector of `V` consecutive elements of a row per thread and loop trip, the outer offsets
//!   from the row index, row-read inputs loaded as vectors, per-row ones as one element.
//! * Strided variant (anything else: a permuted input, a broadcast across the innermost
//!   dimension of rows that do not fit): one element per thread and loop trip, each strided
//!   input's offset from the output index over the merged dimensions (at most [`MAX_DIMS`],
//!   the exact count compiled in), with 32-bit index division when the output has fewer than
//!   2^32 elements (the row variant likewise).
//! * The dense and row variants of programs that read, round to or store f16/bf16 compute
//!   each vector on a fast path first (one-instruction conversions) and again on the exact
//!   one (NaN payloads kept as the CPU keeps them) only when a result is NaN
//!   ([`fast_path`]).

use super::GpuDevice;
use super::elementwise::grid_x;
use super::jit;
use super::kernels::{binary_op, unary_op};
use crate::base::dtype::DType;
use crate::device::fused::{FusedPlan, InputKind};
use crate::device::{DevPtr, DeviceKind, FusedInput, RawStream};
use crate::ops::elementwise::CompareOp;
use crate::ops::fused::{FusedProgram, Instr};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::fmt::Write;
use std::sync::LazyLock;

/// Merged output dimensions the strided variant handles.
pub const MAX_DIMS: usize = 8;
/// Threads per block.
const BLOCK: u32 = 256;

/// The kernels of the dense variant: vector width `V`, and `V = 1`.
const DENSE_VEC: &str = "rb_fused_dense_v";
const DENSE_ONE: &str = "rb_fused_dense_1";
/// The kernels of the strided variant: 32-bit and 64-bit index arithmetic.
const STRIDED_32: &str = "rb_fused_strided_32";
const STRIDED_64: &str = "rb_fused_strided_64";
/// The kernels of the row variant: 32-bit and 64-bit index arithmetic.
const ROWS_32: &str = "rb_fused_rows_32";
const ROWS_64: &str = "rb_fused_rows_64";
/// Vectors per thread and loop trip of the row variant: `RB_FUSED_ROWS_U` in
/// `RB_GPU_KERNEL_DEFINES` (1 to 8), default 1 (an f16 bias+relu over [100352, 256] on an
/// H200: 0.67 of copy bandwidth at 1, 0.62 at 2, 0.50 at 4).
fn rows_unroll() -> usize {
    jit::kernel_define_in("RB_FUSED_ROWS_U", 1..=8, 1)
}

/// Which kernels a generated source holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    Dense,
    /// Over `nd` merged dimensions (1..=MAX_DIMS).
    Strided {
        nd: usize,
    },
    /// Over `nd` merged dimensions (2..=MAX_DIMS) read as rows
    /// ([`FusedPlan::rows_mask`]): a vector of consecutive elements of the innermost
    /// dimension per thread and loop trip, each strided input's offset from the row index
    /// over the outer dimensions; `bcast` bit `k`: input `k` is one value per row.
    Rows {
        nd: usize,
        bcast: u64,
        unroll: usize,
    },
}

/// A loaded generated module: its two kernels (dense: vector, scalar; strided and rows:
/// 32-bit, 64-bit index).
#[derive(Clone, Copy, Debug)]
struct Loaded {
    #[allow(dead_code)]
    module: u64,
    first: u64,
    second: u64,
}

/// A device's generated fused kernels, by (signature, input kinds, variant).
#[derive(Default)]
pub struct FusedCache {
    map: Mutex<HashMap<String, Loaded>>,
}

/// The op-code `#define`s and the `rb_unary_f` and `rb_binary_f` device functions of
/// kernels/elementwise.hip, verbatim.
pub fn elementwise_device_functions() -> Result<&'static str> {
    static TEXT: LazyLock<std::result::Result<String, String>> = LazyLock::new(|| {
        let text = jit::ELEMENTWISE.text;
        let mut out = String::new();
        for l in text.lines() {
            let parts: Vec<&str> = l.split_whitespace().collect();
            if let ["#define", name, value] = parts[..]
                && (name.starts_with("RB_UNARY_") || name.starts_with("RB_BINARY_"))
                && value.parse::<i32>().is_ok()
            {
                out.push_str(l);
                out.push('\n');
            }
        }
        for sig in [
            "RB_DEVICE float rb_unary_f(",
            "RB_DEVICE float rb_binary_f(",
        ] {
            let start = text
                .find(sig)
                .ok_or_else(|| format!("kernels/elementwise.hip has no `{sig}`"))?;
            let open = start
                + text[start..]
                    .find('{')
                    .ok_or_else(|| format!("`{sig}` has no body"))?;
            let end = jit::block_end(text, open)
                .ok_or_else(|| format!("`{sig}`'s body does not close"))?;
            out.push_str(&text[start..end]);
            out.push('\n');
        }
        Ok(out)
    });
    TEXT.as_deref()
        .map_err(|e| Error::internal(format!("fused kernels: {e}")))
}

/// The C type a dtype is stored as in the generated code.
fn storage(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F16 | DType::BF16 => "rb_u16",
        DType::I32 => "rb_i32",
        DType::I64 => "rb_i64",
        DType::Bool | DType::U8 => "rb_u8",
        // Not fused (graph::passes fuses f32/f16/bf16/bool only); kept total.
        DType::F64 => "double",
        DType::I8 => "signed char",
        DType::I16 => "short",
    }
}

/// Elements per vector of the dense and row variants: 16 bytes of the widest operand that
/// is not a scalar (the output included), so every vector access is at most 16 bytes.
pub fn vector_width(prog: &FusedProgram, kinds: &[InputKind]) -> usize {
    let widest = prog
        .inputs
        .iter()
        .zip(kinds)
        .filter(|(_, k)| **k != InputKind::Scalar)
        .map(|(d, _)| d.size())
        .chain(std::iter::once(prog.out_dtype.size()))
        .max()
        .unwrap_or(4);
    (16 / widest).max(1)
}

/// An exact f32 literal.
fn lit(v: f32) -> String {
    format!("__int_as_float((int){:#010x}u)", v.to_bits())
}

fn compare_expr(op: CompareOp) -> &'static str {
    match op {
        CompareOp::Eq => "==",
        CompareOp::Ne => "!=",
        CompareOp::Lt => "<",
        CompareOp::Le => "<=",
        CompareOp::Gt => ">",
        CompareOp::Ge => ">=",
    }
}

/// The helpers every generated source has: loads, stores, rounding, clamp and the
/// contraction barrier.
const PRELUDE: &str = r#"
// ---- fused-kernel helpers (src/device/gpu/fused.rs) ----
#if defined(RB_HIP)
#define RB_FZ_KEEP(v) asm volatile("" : "+v"(v))
#else
// An add with an explicit rounding mode: ptxas never fuses it with the multiply before it.
#define RB_FZ_KEEP(v) asm volatile("add.rn.f32 %0, %0, 0f80000000;" : "+f"(v))
#endif
template <typename T, int V> struct alignas(sizeof(T) * V) rb_fz_vec { T v[V]; };
RB_DEVICE float rb_fz_in_f32(float x) { return x; }
RB_DEVICE float rb_fz_in_f16(rb_u16 x) { return rb_half_to_f32(x); }
RB_DEVICE float rb_fz_in_bf16(rb_u16 x) { return rb_bfloat_to_f32(x); }
RB_DEVICE float rb_fz_in_i32(rb_i32 x) { return (float)x; }
RB_DEVICE float rb_fz_in_i64(rb_i64 x) { return (float)x; }
RB_DEVICE float rb_fz_in_bool(rb_u8 x) { return x != 0 ? 1.0f : 0.0f; }
// Rust's saturating `as`: NaN is 0.
RB_DEVICE rb_i64 rb_fz_f2i64(float v) {
  if (v != v) return 0;
  if (v >= 9223372036854775807.0f) return 9223372036854775807ll;
  if (v <= -9223372036854775808.0f) return (-9223372036854775807ll - 1);
  return (rb_i64)v;
}
RB_DEVICE float rb_fz_out_f32(float v) { return v; }
RB_DEVICE rb_u16 rb_fz_out_f16(float v) { return rb_f32_to_half(v); }
RB_DEVICE rb_u16 rb_fz_out_bf16(float v) { return rb_f32_to_bfloat(v); }
RB_DEVICE rb_i32 rb_fz_out_i32(float v) { return (rb_i32)rb_fz_f2i64(v); }
RB_DEVICE rb_i64 rb_fz_out_i64(float v) { return rb_fz_f2i64(v); }
RB_DEVICE rb_u8 rb_fz_out_bool(float v) { return v != 0.0f ? 1 : 0; }
RB_DEVICE float rb_fz_round_f32(float v) { return v; }
RB_DEVICE float rb_fz_round_f16(float v) { return rb_half_to_f32(rb_f32_to_half(v)); }
RB_DEVICE float rb_fz_round_bf16(float v) { return rb_bfloat_to_f32(rb_f32_to_bfloat(v)); }
RB_DEVICE float rb_fz_round_i32(float v) { return truncf(v); }
RB_DEVICE float rb_fz_round_i64(float v) { return truncf(v); }
RB_DEVICE float rb_fz_round_bool(float v) { return v != 0.0f ? 1.0f : 0.0f; }
// The fast path's conversions where they differ from the exact ones above (fast_path in
// fused.rs; `conv` picks them): one instruction each on NVIDIA, the same bits except for NaN
// payloads.
RB_DEVICE float rb_fz_fin_f16(rb_u16 x) { return rb_half_to_f32_arith(x); }
RB_DEVICE rb_u16 rb_fz_fout_f16(float v) { return rb_f32_to_half_arith(v); }
RB_DEVICE rb_u16 rb_fz_fout_bf16(float v) { return rb_f32_to_bfloat_arith(v); }
RB_DEVICE float rb_fz_fround_f16(float v) { return rb_half_to_f32_arith(rb_f32_to_half_arith(v)); }
RB_DEVICE float rb_fz_fround_bf16(float v) { return rb_bfloat_to_f32(rb_f32_to_bfloat_arith(v)); }
// torch.clamp with tensor bounds: NaN anywhere gives NaN.
RB_DEVICE float rb_fz_clamp(float x, float lo, float hi) {
  if (x != x || lo != lo || hi != hi) return __int_as_float(0x7fc00000);
  float y = x < lo ? lo : x;
  return y > hi ? hi : y;
}
"#;

/// `rb_fz_body(x0, x1, ...)`: the program on one element's loaded inputs.
/// The conversion `kind` (`"in"`, `"out"` or `"round"`) of dtype `d` in the generated code:
/// on the fast path the prelude's one-instruction form where it differs (f16 loads, f16/bf16
/// stores and roundings), else the exact one.
fn conv(kind: &str, d: DType, fast: bool) -> String {
    let differs = match kind {
        "in" => d == DType::F16,
        _ => matches!(d, DType::F16 | DType::BF16),
    };
    let f = if fast && differs { "f" } else { "" };
    format!("rb_fz_{f}{kind}_{}", d.name())
}

/// The body's arguments for one element: per input its dtype and stored element (converted
/// with [`conv`]), or no dtype for a value already in f32 (a scalar's `u<k>`).
fn body_args(args: &[(Option<DType>, String)], fast: bool) -> String {
    let a: Vec<String> = args
        .iter()
        .map(|(d, x)| match d {
            Some(d) => format!("{}({x})", conv("in", *d, fast)),
            None => x.clone(),
        })
        .collect();
    a.join(", ")
}

/// `fast`: `rb_fz_body_fast`, whose roundings to f16/bf16 are the one-instruction
/// conversions (the same bits except for NaN payloads; see [`fast_path`]).
fn body(prog: &FusedProgram, out: &mut String, fast: bool) {
    let params: Vec<String> = (0..prog.inputs.len())
        .map(|k| format!("float x{k}"))
        .collect();
    let name = if fast {
        "rb_fz_body_fast"
    } else {
        "rb_fz_body"
    };
    let _ = writeln!(out, "RB_DEVICE float {name}({}) {{", params.join(", "));
    for (i, ins) in prog.instrs.iter().enumerate() {
        let _ = match *ins {
            Instr::Load(k) => writeln!(out, "  float r{i} = x{k};"),
            Instr::Const(c) => writeln!(out, "  float r{i} = {};", lit(c)),
            Instr::Unary(op, a) => {
                let (code, p0, p1) = unary_op(op);
                writeln!(
                    out,
                    "  float r{i} = rb_unary_f({}, r{a}, {}, {}); RB_FZ_KEEP(r{i});  // {}",
                    code.code,
                    lit(p0),
                    lit(p1),
                    code.name
                )
            }
            Instr::Binary(op, a, b) => {
                let code = binary_op(op);
                writeln!(
                    out,
                    "  float r{i} = rb_binary_f({}, r{a}, r{b}); RB_FZ_KEEP(r{i});  // {}",
                    code.code, code.name
                )
            }
            Instr::Compare(op, a, b) => writeln!(
                out,
                "  float r{i} = (r{a} {} r{b}) ? 1.0f : 0.0f;",
                compare_expr(op)
            ),
            Instr::Where(c, a, b) => writeln!(out, "  float r{i} = r{c} != 0.0f ? r{a} : r{b};"),
            Instr::ClampT(x, lo, hi) => {
                writeln!(out, "  float r{i} = rb_fz_clamp(r{x}, r{lo}, r{hi});")
            }
            Instr::Round(d, a) => writeln!(out, "  float r{i} = {}(r{a});", conv("round", d, fast)),
        };
    }
    let _ = writeln!(out, "  return r{};\n}}", prog.instrs.len() - 1);
}

/// The kernel parameters: one `const void*` per input, the output.
fn pointer_params(prog: &FusedProgram) -> String {
    let mut p: Vec<String> = (0..prog.inputs.len())
        .map(|k| format!("const void* __restrict__ in{k}"))
        .collect();
    p.push("void* __restrict__ out".into());
    p.join(", ")
}

fn pointer_args(prog: &FusedProgram) -> String {
    let mut p: Vec<String> = (0..prog.inputs.len()).map(|k| format!("in{k}")).collect();
    p.push("out".into());
    p.join(", ")
}

/// Whether the vector kernels compute `prog` on a fast path first: when it reads, rounds to
/// or stores f16/bf16 and stores a float. The exact conversions keep NaN payloads as the CPU
/// does, which costs a handful of integer instructions per conversion (an f16 bias+relu
/// over channels-last rows was bound by the integer pipe at 0.37 of copy bandwidth on an
/// H200); the fast path converts with one instruction each, and a vector whose result holds
/// a NaN (the only values whose bits can differ) is computed again on the exact path.
fn fast_path(prog: &FusedProgram) -> bool {
    let half = |d: &DType| matches!(d, DType::F16 | DType::BF16);
    let rounds = prog
        .instrs
        .iter()
        .any(|i| matches!(i, Instr::Round(d, _) if half(d)));
    prog.out_dtype.is_float() && (prog.inputs.iter().any(half) || rounds || half(&prog.out_dtype))
}

/// The statements that compute one vector of `v` outputs into `o` (an `rb_fz_vec` of the
/// output's storage type): `args(fast)` are the body's arguments for element `j`. On the
/// fast path, a vector with a NaN result is computed again exactly.
fn emit_vector(
    s: &mut String,
    prog: &FusedProgram,
    v: &str,
    indent: &str,
    args: &[(Option<DType>, String)],
) {
    let od = prog.out_dtype;
    let (ot, on) = (storage(od), od.name());
    let _ = writeln!(s, "{indent}rb_fz_vec<{ot}, {v}> o;");
    if !fast_path(prog) {
        let _ = writeln!(
            s,
            "#pragma unroll\n{indent}for (int j = 0; j < {v}; ++j) o.v[j] = rb_fz_out_{on}(rb_fz_body({}));",
            body_args(args, false)
        );
        return;
    }
    let _ = writeln!(s, "{indent}float r[{v}];\n{indent}bool nan = false;");
    let _ = writeln!(
        s,
        "#pragma unroll\n{indent}for (int j = 0; j < {v}; ++j) {{ r[j] = rb_fz_body_fast({}); nan |= r[j] != r[j]; }}",
        body_args(args, true)
    );
    let _ = writeln!(
        s,
        "{indent}if (!nan) {{\n#pragma unroll\n{indent}  for (int j = 0; j < {v}; ++j) o.v[j] = {}(r[j]);\n{indent}}} else {{\n#pragma unroll\n{indent}  for (int j = 0; j < {v}; ++j) o.v[j] = rb_fz_out_{on}(rb_fz_body({}));\n{indent}}}",
        conv("out", od, true),
        body_args(args, false)
    );
}

/// The statements that turn `rem` (an index over the first `dims` merged dimensions, of the
/// kernel's index type `I`) into each strided input's offset `o<k>` (`strided`: those inputs,
/// in `RbFzLayout::st` order): innermost dimension first, the outermost taking what is left.
fn emit_offsets(s: &mut String, strided: &[usize], dims: usize, indent: &str) {
    for &k in strided {
        let _ = writeln!(s, "{indent}rb_i64 o{k} = 0;");
    }
    if dims > 1 {
        let _ = writeln!(
            s,
            "#pragma unroll\n{indent}for (int d = {}; d >= 1; --d) {{\n{indent}  const I e = (I)l.shape[d];\n{indent}  const I k = rem % e;\n{indent}  rem /= e;",
            dims - 1
        );
        for (j, &k) in strided.iter().enumerate() {
            let _ = writeln!(s, "{indent}  o{k} += (rb_i64)k * l.st[{j}][d];");
        }
        let _ = writeln!(s, "{indent}}}");
    }
    for (j, &k) in strided.iter().enumerate() {
        let _ = writeln!(s, "{indent}o{k} += (rb_i64)rem * l.st[{j}][0];");
    }
}

/// The generated HIP source of `prog` for inputs of `kinds` (before [`jit::prepare`]).
pub fn source(prog: &FusedProgram, kinds: &[InputKind], variant: Variant) -> Result<String> {
    let mut s = String::with_capacity(8192);
    let _ = writeln!(
        s,
        "// Generated by src/device/gpu/fused.rs: {} [{}] {:?}",
        prog.signature().replace('\n', " "),
        kinds.iter().map(|k| k.letter()).collect::<String>(),
        variant
    );
    s.push_str("#include \"common.h\"\n");
    s.push_str("// ---- from kernels/elementwise.hip ----\n");
    s.push_str(elementwise_device_functions()?);
    s.push_str(PRELUDE);
    body(prog, &mut s, false);
    let fast = fast_path(prog);
    if fast {
        body(prog, &mut s, true);
    }
    let od = prog.out_dtype;
    let (ot, on) = (storage(od), od.name());
    // Scalar inputs, read once per thread.
    let mut uniforms = String::new();
    for (k, d) in prog.inputs.iter().enumerate() {
        if kinds[k] == InputKind::Scalar {
            let _ = writeln!(
                uniforms,
                "  const float u{k} = rb_fz_in_{}(((const {}*)in{k})[0]);",
                d.name(),
                storage(*d)
            );
        }
    }
    // The body's arguments for element `at` (dense inputs indexed by `at`, strided ones by
    // their offset `o<k>`).
    let call = |at: &str, vec: Option<&str>| -> String {
        let args: Vec<String> = prog
            .inputs
            .iter()
            .enumerate()
            .map(|(k, d)| match kinds[k] {
                InputKind::Scalar => format!("u{k}"),
                InputKind::Dense => match vec {
                    Some(j) => format!("rb_fz_in_{}(a{k}.v[{j}])", d.name()),
                    None => format!(
                        "rb_fz_in_{}(((const {}*)in{k})[{at}])",
                        d.name(),
                        storage(*d)
                    ),
                },
                InputKind::Strided => {
                    format!(
                        "rb_fz_in_{}(((const {}*)in{k})[o{k}])",
                        d.name(),
                        storage(*d)
                    )
                }
            })
            .collect();
        format!("rb_fz_body({})", args.join(", "))
    };
    match variant {
        Variant::Dense => {
            if kinds.contains(&InputKind::Strided) {
                return Err(Error::internal(
                    "fused kernels: the dense variant of a strided input",
                ));
            }
            let v = vector_width(prog, kinds);
            let _ = writeln!(
                s,
                "template <int V>\nRB_DEVICE void rb_fz_dense({}, rb_u64 nv, rb_u64 n) {{",
                pointer_params(prog)
            );
            s.push_str(&uniforms);
            s.push_str("  for (rb_u64 i = rb_gid(); i < nv; i += rb_gstride()) {\n");
            for (k, d) in prog.inputs.iter().enumerate() {
                if kinds[k] == InputKind::Dense {
                    let t = storage(*d);
                    let _ = writeln!(
                        s,
                        "    const rb_fz_vec<{t}, V> a{k} = ((const rb_fz_vec<{t}, V>*)in{k})[i];"
                    );
                }
            }
            let args: Vec<(Option<DType>, String)> = prog
                .inputs
                .iter()
                .enumerate()
                .map(|(k, d)| match kinds[k] {
                    InputKind::Dense => (Some(*d), format!("a{k}.v[j]")),
                    _ => (None, format!("u{k}")),
                })
                .collect();
            emit_vector(&mut s, prog, "V", "    ", &args);
            let _ = writeln!(s, "    ((rb_fz_vec<{ot}, V>*)out)[i] = o;\n  }}");
            let _ = writeln!(
                s,
                "  if (V > 1) {{\n    const rb_u64 t = nv * V + rb_gid();\n    if (t < n) (({ot}*)out)[t] = rb_fz_out_{on}({});\n  }}\n}}",
                call("t", None)
            );
            for (name, width) in [(DENSE_VEC, v), (DENSE_ONE, 1)] {
                let _ = writeln!(
                    s,
                    "RB_KERNEL void {name}({}, rb_u64 nv, rb_u64 n) {{ rb_fz_dense<{width}>({}, nv, n); }}",
                    pointer_params(prog),
                    pointer_args(prog)
                );
            }
        }
        Variant::Strided { nd } => {
            if nd == 0 || nd > MAX_DIMS {
                return Err(Error::internal(format!(
                    "fused kernels: {nd} dimensions for the strided variant"
                )));
            }
            let strided: Vec<usize> = (0..kinds.len())
                .filter(|&k| kinds[k] == InputKind::Strided)
                .collect();
            let _ = writeln!(
                s,
                "struct RbFzLayout {{ rb_i64 shape[{nd}]; rb_i64 st[{}][{nd}]; }};",
                strided.len().max(1)
            );
            let _ = writeln!(
                s,
                "template <typename I>\nRB_DEVICE void rb_fz_strided({}, rb_u64 n, const RbFzLayout& l) {{",
                pointer_params(prog)
            );
            s.push_str(&uniforms);
            s.push_str("  for (rb_u64 g = rb_gid(); g < n; g += rb_gstride()) {\n");
            s.push_str("    I rem = (I)g;\n");
            emit_offsets(&mut s, &strided, nd, "    ");
            let _ = writeln!(
                s,
                "    (({ot}*)out)[g] = rb_fz_out_{on}({});\n  }}\n}}",
                call("g", None)
            );
            for (name, ty) in [(STRIDED_32, "rb_u32"), (STRIDED_64, "rb_u64")] {
                let _ = writeln!(
                    s,
                    "RB_KERNEL void {name}({}, rb_u64 n, RbFzLayout l) {{ rb_fz_strided<{ty}>({}, n, l); }}",
                    pointer_params(prog),
                    pointer_args(prog)
                );
            }
        }
        Variant::Rows { nd, bcast, unroll } => {
            if !(2..=MAX_DIMS).contains(&nd) {
                return Err(Error::internal(format!(
                    "fused kernels: {nd} dimensions for the row variant"
                )));
            }
            let strided: Vec<usize> = (0..kinds.len())
                .filter(|&k| kinds[k] == InputKind::Strided)
                .collect();
            let v = vector_width(prog, kinds);
            let _ = writeln!(
                s,
                "struct RbFzLayout {{ rb_i64 shape[{nd}]; rb_i64 st[{}][{nd}]; }};",
                strided.len().max(1)
            );
            // Vector i covers elements [i * V, i * V + V) of the output, all in one row:
            // the row's length is a multiple of V (the host checks), and so is every
            // row-read input's offset (its outer strides are multiples of V). A thread
            // takes `unroll` vectors a grid stride apart per trip and issues all their
            // loads before it computes.
            let u = unroll.max(1);
            let _ = writeln!(
                s,
                "template <typename I>\nRB_DEVICE void rb_fz_rows({}, rb_u64 nv, const RbFzLayout& l) {{",
                pointer_params(prog)
            );
            s.push_str(&uniforms);
            let _ = writeln!(s, "  const I per = (I)(l.shape[{}] / {v});", nd - 1);
            s.push_str("  const rb_u64 step = rb_gstride();\n");
            let _ = writeln!(
                s,
                "  for (rb_u64 i0 = rb_gid(); i0 < nv; i0 += step * {u}) {{"
            );
            let mut args = Vec::with_capacity(prog.inputs.len());
            let mut loads = String::new();
            for (k, d) in prog.inputs.iter().enumerate() {
                let t = storage(*d);
                let vec = format!("rb_fz_vec<{t}, {v}>");
                match kinds[k] {
                    InputKind::Scalar => args.push((None, format!("u{k}"))),
                    InputKind::Strided if bcast >> k & 1 == 1 => {
                        let _ = writeln!(s, "    {t} b{k}[{u}];");
                        let _ = writeln!(loads, "        b{k}[q] = ((const {t}*)in{k})[o{k}];");
                        args.push((Some(*d), format!("b{k}[q]")));
                    }
                    kind => {
                        // A vector: the output's own (dense) or along the row (strided).
                        let at = if kind == InputKind::Dense {
                            format!("((const {vec}*)in{k})[i]")
                        } else {
                            format!("*(const {vec}*)((const {t}*)in{k} + o{k} + col)")
                        };
                        let _ = writeln!(s, "    {vec} a{k}[{u}];");
                        let _ = writeln!(loads, "        a{k}[q] = {at};");
                        args.push((Some(*d), format!("a{k}[q].v[j]")));
                    }
                }
            }
            let _ = writeln!(
                s,
                "#pragma unroll\n    for (int q = 0; q < {u}; ++q) {{\n      const rb_u64 i = i0 + (rb_u64)q * step;\n      if (i < nv) {{"
            );
            s.push_str("        I rem = (I)i / per;\n");
            let _ = writeln!(s, "        const I col = ((I)i - rem * per) * {v};");
            emit_offsets(&mut s, &strided, nd - 1, "        ");
            s.push_str("        (void)col;\n");
            s.push_str(&loads);
            s.push_str("      }\n    }\n");
            let _ = writeln!(
                s,
                "#pragma unroll\n    for (int q = 0; q < {u}; ++q) {{\n      const rb_u64 i = i0 + (rb_u64)q * step;\n      if (i < nv) {{"
            );
            emit_vector(&mut s, prog, &v.to_string(), "        ", &args);
            let _ = writeln!(
                s,
                "        ((rb_fz_vec<{ot}, {v}>*)out)[i] = o;\n      }}\n    }}\n  }}\n}}"
            );
            for (name, ty) in [(ROWS_32, "rb_u32"), (ROWS_64, "rb_u64")] {
                let _ = writeln!(
                    s,
                    "RB_KERNEL void {name}({}, rb_u64 nv, RbFzLayout l) {{ rb_fz_rows<{ty}>({}, nv, l); }}",
                    pointer_params(prog),
                    pointer_args(prog)
                );
            }
        }
    }
    Ok(s)
}

/// The source as the device's compiler takes it ([`jit::prepare`]: common.h inlined).
pub fn prepared_source(
    prog: &FusedProgram,
    kinds: &[InputKind],
    variant: Variant,
    kind: DeviceKind,
) -> Result<String> {
    Ok(jit::prepare(&source(prog, kinds, variant)?, kind))
}

/// Whether a launch that [`FusedPlan::rows_mask`] allows (`bcast`: the inputs that are one
/// value per row) can read its rows in vectors of `v`: rows of a multiple of `v` elements,
/// and every input read by vectors (dense ones and the strided ones read along the row)
/// 16-byte aligned, with outer strides that keep each row's start a multiple of `v`.
fn rows_fit(plan: &FusedPlan, inputs: &[FusedInput], out: DevPtr, bcast: u64, v: usize) -> bool {
    let Some(&inner) = plan.shape.last() else {
        return false;
    };
    if v < 2 || inner % v != 0 {
        return false;
    }
    let mut vec_ptrs = vec![out];
    for (k, (inp, kind)) in inputs.iter().zip(&plan.kinds).enumerate() {
        match kind {
            InputKind::Scalar => {}
            InputKind::Dense => vec_ptrs.push(inp.ptr),
            InputKind::Strided if bcast >> k & 1 == 1 => {}
            InputKind::Strided => {
                let outer = &plan.strides[k][..plan.shape.len() - 1];
                if outer.iter().any(|&st| st % v != 0) {
                    return false;
                }
                vec_ptrs.push(inp.ptr);
            }
        }
    }
    super::aligned16(&vec_ptrs)
}

impl GpuDevice {
    /// The loaded kernels of `prog` for `kinds` and `variant`, generated and compiled on
    /// first use (the code comes from the kernel cache when another process or an earlier
    /// run compiled the same source).
    fn fused_kernels(
        &self,
        prog: &FusedProgram,
        kinds: &[InputKind],
        variant: Variant,
    ) -> Result<Loaded> {
        let key = format!(
            "{}#{}#{:?}",
            prog.signature(),
            kinds.iter().map(|k| k.letter()).collect::<String>(),
            variant
        );
        // Held while compiling: a program compiles once per device, and other launches of
        // fused kernels wait for it rather than compile it again.
        let mut map = self.fused.map.lock();
        if let Some(l) = map.get(&key) {
            return Ok(*l);
        }
        let text = prepared_source(prog, kinds, variant, self.vendor().kind())?;
        let code =
            jit::compile_cached(self.vendor().as_ref(), &text, "fused.hip", &[], self.arch())
                .map_err(|e| e.context(&format!("fused kernel for {}", prog.signature())))?;
        self.bind()?;
        let module = self.vendor().module_load(&code)?;
        let names = match variant {
            Variant::Dense => [DENSE_VEC, DENSE_ONE],
            Variant::Strided { .. } => [STRIDED_32, STRIDED_64],
            Variant::Rows { .. } => [ROWS_32, ROWS_64],
        };
        let first = self.vendor().module_function(module, names[0]);
        let second = self.vendor().module_function(module, names[1]);
        let (first, second) = match (first, second) {
            (Ok(a), Ok(b)) => (a, b),
            (Err(e), _) | (_, Err(e)) => {
                let _ = self.vendor().module_unload(module);
                return Err(e);
            }
        };
        let l = Loaded {
            module,
            first,
            second,
        };
        map.insert(key, l);
        Ok(l)
    }

    /// [`crate::device::Device::fused_elementwise`] on this GPU.
    pub(super) fn fused_launch(
        &self,
        stream: RawStream,
        prog: &FusedProgram,
        inputs: &[FusedInput],
        out_shape: &[usize],
        out: DevPtr,
    ) -> Result<()> {
        let Some(plan) = FusedPlan::for_launch(prog, inputs, out_shape, out)? else {
            return Ok(());
        };
        let n = plan.numel as u64;
        let block = BLOCK.min(self.max_threads_per_block());
        let mut ptrs: Vec<u64> = inputs.iter().map(|i| i.ptr.0).collect();
        ptrs.push(out.0);
        let mut args: Vec<*mut c_void> = ptrs
            .iter()
            .map(|p| p as *const u64 as *mut c_void)
            .collect();
        if plan.is_dense() {
            let k = self.fused_kernels(prog, &plan.kinds, Variant::Dense)?;
            // Vector accesses need every dense operand aligned to its vector (at most 16
            // bytes; scalars are read element by element).
            let dense_ptrs: Vec<DevPtr> = inputs
                .iter()
                .zip(&plan.kinds)
                .filter(|(_, k)| **k == InputKind::Dense)
                .map(|(i, _)| i.ptr)
                .chain(std::iter::once(out))
                .collect();
            let (func, name, v) = if super::aligned16(&dense_ptrs) {
                (k.first, DENSE_VEC, vector_width(prog, &plan.kinds) as u64)
            } else {
                (k.second, DENSE_ONE, 1)
            };
            let nv = n / v;
            let blocks = grid_x((nv as usize).div_ceil(block as usize), name)?;
            args.push(&nv as *const u64 as *mut c_void);
            args.push(&n as *const u64 as *mut c_void);
            // SAFETY: the arguments are the kernel's parameters in order (pointers, nv, n),
            // each pointing at a live value; the plan keeps every access inside the buffers.
            unsafe {
                jit::launch(
                    self,
                    func,
                    name,
                    [blocks, 1, 1],
                    [block, 1, 1],
                    0,
                    stream,
                    args.as_mut_ptr(),
                    jit::Origin::Builtin,
                )
            }
        } else {
            let nd = plan.shape.len();
            if nd > MAX_DIMS {
                return Err(Error::unsupported(format!(
                    "fused_elementwise: {nd} dimensions after merging; the GPU kernels take at most {MAX_DIMS}"
                )));
            }
            // RbFzLayout: the shape, then each strided input's strides.
            let mut layout: Vec<i64> = plan.shape.iter().map(|&v| v as i64).collect();
            for (kind, st) in plan.kinds.iter().zip(&plan.strides) {
                if *kind == InputKind::Strided {
                    layout.extend(st.iter().map(|&v| v as i64));
                }
            }
            let v = vector_width(prog, &plan.kinds);
            let rows = plan
                .rows_mask()
                .filter(|&bcast| rows_fit(&plan, inputs, out, bcast, v));
            let (variant, names, count) = match rows {
                Some(bcast) => (
                    Variant::Rows {
                        nd,
                        bcast,
                        unroll: rows_unroll(),
                    },
                    [ROWS_32, ROWS_64],
                    n / v as u64,
                ),
                None => (Variant::Strided { nd }, [STRIDED_32, STRIDED_64], n),
            };
            let k = self.fused_kernels(prog, &plan.kinds, variant)?;
            let (func, name) = if n <= u32::MAX as u64 {
                (k.first, names[0])
            } else {
                (k.second, names[1])
            };
            let per_thread = match variant {
                Variant::Rows { unroll, .. } => unroll.max(1),
                _ => 1,
            };
            let threads = (count as usize).div_ceil(per_thread);
            let blocks = grid_x(threads.div_ceil(block as usize), name)?;
            args.push(&count as *const u64 as *mut c_void);
            args.push(layout.as_mut_ptr() as *mut c_void);
            // SAFETY: as above; the layout is the kernel's RbFzLayout by value (i64 fields,
            // no padding), read from the vector's storage.
            unsafe {
                jit::launch(
                    self,
                    func,
                    name,
                    [blocks, 1, 1],
                    [block, 1, 1],
                    0,
                    stream,
                    args.as_mut_ptr(),
                    jit::Origin::Builtin,
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::elementwise::{BinaryOp, UnaryOp};

    pub(crate) fn gelu_chain() -> FusedProgram {
        FusedProgram {
            inputs: vec![DType::F32; 4],
            instrs: vec![
                Instr::Load(0),
                Instr::Load(1),
                Instr::Binary(BinaryOp::Mul, 0, 1),
                Instr::Load(2),
                Instr::Binary(BinaryOp::Add, 2, 3),
                Instr::Unary(UnaryOp::Gelu { tanh: false }, 4),
                Instr::Load(3),
                Instr::Binary(BinaryOp::Mul, 5, 6),
            ],
            out_dtype: DType::F32,
        }
    }

    fn mixed() -> FusedProgram {
        FusedProgram {
            inputs: vec![DType::F16, DType::BF16, DType::I64, DType::Bool, DType::I32],
            instrs: vec![
                Instr::Load(0),
                Instr::Load(1),
                Instr::Binary(BinaryOp::Mul, 0, 1),
                Instr::Round(DType::F16, 2),
                Instr::Load(2),
                Instr::Load(3),
                Instr::Where(5, 3, 4),
                Instr::Const(-0.5),
                Instr::Load(4),
                Instr::ClampT(6, 7, 8),
                Instr::Compare(CompareOp::Ge, 9, 7),
                Instr::Unary(
                    UnaryOp::Clamp {
                        min: -1.0,
                        max: 2.0,
                    },
                    9,
                ),
                Instr::Binary(BinaryOp::Add, 10, 11),
            ],
            out_dtype: DType::BF16,
        }
    }

    #[test]
    fn device_functions_come_from_elementwise_hip() {
        let f = elementwise_device_functions().unwrap();
        assert!(f.contains("RB_DEVICE float rb_unary_f(int op, float x, float p0, float p1) {"));
        assert!(f.contains("case RB_UNARY_GELU: return 0.5f * x * (1.0f + erff("));
        assert!(f.contains("RB_DEVICE float rb_binary_f(int op, float a, float b) {"));
        assert!(f.contains("#define RB_UNARY_HARDSWISH 14"));
        assert!(f.contains("#define RB_BINARY_MINIMUM 6"));
        assert!(
            !f.contains("RB_UNARY_X4"),
            "a macro with parameters was copied"
        );
        assert!(
            !f.contains("rb_unary_t"),
            "more than the two functions was copied"
        );
        assert!(f.trim_end().ends_with('}'));
    }

    #[test]
    fn generated_sources_have_the_kernels() {
        let p = gelu_chain();
        let kinds = [InputKind::Dense; 4];
        let s = prepared_source(&p, &kinds, Variant::Dense, DeviceKind::Cuda).unwrap();
        assert!(s.contains("rb_f32_to_half"), "common.h is inlined");
        for k in [DENSE_VEC, DENSE_ONE] {
            assert!(s.contains(&format!("RB_KERNEL void {k}(")), "{k}");
        }
        assert!(s.contains("rb_fz_dense<4>"));
        assert!(!s.contains("rb_fz_body_fast("), "f32 only: no fast path");
        assert!(s.contains("rb_unary_f(3, r4,"), "{s}");
        assert_eq!(vector_width(&p, &kinds), 4);
        let m = mixed();
        let kinds = [
            InputKind::Dense,
            InputKind::Strided,
            InputKind::Scalar,
            InputKind::Strided,
            InputKind::Dense,
        ];
        let s = source(&m, &kinds, Variant::Strided { nd: 3 }).unwrap();
        for k in [STRIDED_32, STRIDED_64] {
            assert!(s.contains(&format!("RB_KERNEL void {k}(")), "{k}");
        }
        assert!(s.contains("rb_i64 st[2][3]"));
        assert!(s.contains("const float u2 = rb_fz_in_i64(((const rb_i64*)in2)[0]);"));
        assert!(source(&m, &kinds, Variant::Dense).is_err());
        assert!(source(&m, &kinds, Variant::Strided { nd: 9 }).is_err());
        // Rows: input 1 read along the row, input 3 one value per row; vectors of 4 (the
        // i32 input is the widest that is not a scalar).
        assert_eq!(vector_width(&m, &kinds), 4);
        let s = source(
            &m,
            &kinds,
            Variant::Rows {
                nd: 3,
                bcast: 0b1000,
                unroll: 4,
            },
        )
        .unwrap();
        for k in [ROWS_32, ROWS_64] {
            assert!(s.contains(&format!("RB_KERNEL void {k}(")), "{k}");
        }
        assert!(
            s.contains("for (int d = 1; d >= 1; --d)"),
            "the inner outer dimension"
        );
        assert!(
            s.contains("o1 += (rb_i64)rem * l.st[0][0];"),
            "the outermost"
        );
        assert!(
            s.contains("a1[q] = *(const rb_fz_vec<rb_u16, 4>*)((const rb_u16*)in1 + o1 + col);"),
            "{s}"
        );
        assert!(s.contains("b3[q] = ((const rb_u8*)in3)[o3];"));
        assert!(
            s.contains("a4[q] = ((const rb_fz_vec<rb_i32, 4>*)in4)[i];"),
            "dense by vector"
        );
        assert!(s.contains(
            "rb_fz_body(rb_fz_in_f16(a0[q].v[j]), rb_fz_in_bf16(a1[q].v[j]), u2, rb_fz_in_bool(b3[q]),"
        ));
        assert!(s.contains("i0 += step * 4"), "four vectors per trip");
        // f16/bf16: the fast path first, the exact one for a vector with a NaN.
        assert!(s.contains("r[j] = rb_fz_body_fast(rb_fz_fin_f16(a0[q].v[j]),"));
        assert!(s.contains("o.v[j] = rb_fz_fout_bf16(r[j]);"));
        assert!(s.contains("o.v[j] = rb_fz_out_bf16(rb_fz_body(rb_fz_in_f16(a0[q].v[j]),"));
        assert!(
            s.contains("float r3 = rb_fz_fround_f16(r2);"),
            "the fast body's rounding"
        );
        assert!(
            s.contains("float r3 = rb_fz_round_f16(r2);"),
            "the exact body's rounding"
        );
        assert!(
            source(
                &m,
                &kinds,
                Variant::Rows {
                    nd: 1,
                    bcast: 0,
                    unroll: 1
                }
            )
            .is_err()
        );
        let dense = [InputKind::Dense; 5];
        assert_eq!(vector_width(&m, &dense), 2, "i64 is the widest");
        let s = source(&m, &dense, Variant::Dense).unwrap();
        assert!(s.contains("rb_fz_dense<2>"));
    }

    /// Writes generated sources to `$RB_FUSED_DUMP_DIR` (when set) for the offline hipcc
    /// check of scripts/check-kernels.sh.
    #[test]
    fn dump_generated_sources() {
        let Ok(dir) = std::env::var("RB_FUSED_DUMP_DIR") else {
            return;
        };
        let dir = std::path::Path::new(&dir);
        std::fs::create_dir_all(dir).unwrap();
        let cases = [
            (
                "fused_gelu_dense",
                gelu_chain(),
                vec![InputKind::Dense; 4],
                Variant::Dense,
            ),
            (
                "fused_gelu_scalar",
                gelu_chain(),
                vec![
                    InputKind::Dense,
                    InputKind::Scalar,
                    InputKind::Scalar,
                    InputKind::Dense,
                ],
                Variant::Dense,
            ),
            (
                "fused_mixed_dense",
                mixed(),
                vec![InputKind::Dense; 5],
                Variant::Dense,
            ),
            (
                "fused_mixed_strided",
                mixed(),
                vec![
                    InputKind::Dense,
                    InputKind::Strided,
                    InputKind::Scalar,
                    InputKind::Strided,
                    InputKind::Dense,
                ],
                Variant::Strided { nd: 8 },
            ),
            (
                "fused_mixed_rows",
                mixed(),
                vec![
                    InputKind::Dense,
                    InputKind::Strided,
                    InputKind::Scalar,
                    InputKind::Strided,
                    InputKind::Dense,
                ],
                Variant::Rows {
                    nd: 4,
                    bcast: 0b1000,
                    unroll: 2,
                },
            ),
        ];
        for (name, p, kinds, v) in cases {
            let s = prepared_source(&p, &kinds, v, DeviceKind::Rocm).unwrap();
            std::fs::write(dir.join(format!("{name}.hip")), s).unwrap();
        }
    }
}
