#!/usr/bin/env python3
"""Generates tests/amd/hip_rs_decls.inc from src/device/gpu/vendor/hip.rs.

Every declaration the Rust side makes about the AMD libraries becomes a compile-time check
that tests/amd/conformance.cpp runs against the real ROCm headers:

  * each `req`/`opt` entry of a `dyn_symbols!` table -> ABI_CHECK_FN(sym, <C++ type>), the
    Rust signature translated to a C++ function type and compared with decltype(&sym);
  * each `pub const` -> ABI_CHECK_VALUE(<header name>, value), the header name derived by rule
    (HIP_ERROR_OUT_OF_MEMORY -> hipErrorOutOfMemory, HIP_ATTR_WARP_SIZE ->
    hipDeviceAttributeWarpSize, ROCBLAS_OPERATION_NONE -> rocblas_operation_none, ...) or
    from OVERRIDES (struct sizes and offsets);
  * each `N => "name"` arm of the status-name functions (hip_error_name,
    rocblas_status_name) -> ABI_CHECK_VALUE(name, N).

A declaration the generator cannot translate is an error, so hip.rs and the checks cannot
drift apart silently.  `--check` regenerates in memory and fails if the committed file
differs (scripts/check-amd-conformance.sh runs it).

Items that exist only from HIP 6 on (names containing R0600) are guarded by
`#if HIP_VERSION_MAJOR >= 6`; each library's items by RB_CHECK_<LIB> (set by
conformance.cpp from which headers are present), so the same file also checks against
ROCm 5 headers.
"""
import argparse
import difflib
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
HIP_RS = ROOT / "src/device/gpu/vendor/hip.rs"
OUT = ROOT / "tests/amd/hip_rs_decls.inc"

PRIMS = {
    "c_void": "void", "c_char": "char", "c_schar": "signed char", "c_uchar": "unsigned char",
    "c_short": "short", "c_ushort": "unsigned short", "c_int": "int", "c_uint": "unsigned int",
    "c_long": "long", "c_ulong": "unsigned long", "c_longlong": "long long",
    "c_ulonglong": "unsigned long long", "c_float": "float", "c_double": "double",
    "usize": "size_t", "isize": "ptrdiff_t", "u8": "uint8_t", "i8": "int8_t",
    "u16": "uint16_t", "i16": "int16_t", "u32": "uint32_t", "i32": "int32_t",
    "u64": "uint64_t", "i64": "int64_t", "f32": "float", "f64": "double", "bool": "bool",
    # RCCL's ncclUniqueId, passed by value (vendor/nccl.rs: a 128-char struct).
    "NcclUniqueId": "ncclUniqueId",
}

# Rust constants whose header counterpart is not a same-named enum value or macro.
OVERRIDES = {
    "HIP_PROPS_R0600_SIZE": "sizeof(hipDeviceProp_tR0600)",
    "HIP_PROPS_R0600_GCN_ARCH_NAME": "offsetof(hipDeviceProp_tR0600, gcnArchName)",
    "MIOPEN_BFLOAT16": "miopenBFloat16",
    "MIOPEN_CONV_ALGO_PERF_SIZE": "sizeof(miopenConvAlgoPerf_t)",
    "NCCL_UNIQUE_ID_BYTES": "NCCL_UNIQUE_ID_BYTES",
    "HIPBLASLT_HEURISTIC_RESULT_SIZE": "sizeof(hipblasLtMatmulHeuristicResult_t)",
    "HIPBLASLT_ALGO_SIZE": "sizeof(hipblasLtMatmulAlgo_t)",
}

# Constant name prefix -> (header-name prefix, style).  Longest prefix wins.
CONST_RULES = [
    ("HIP_ERROR_", "hipError", "camel"),
    ("HIP_ATTR_", "hipDeviceAttribute", "camel"),
    ("HIP_MEMCPY_", "hipMemcpy", "camel"),
    ("HIP_EVENT_", "hipEvent", "camel"),
    ("HIP_STREAM_", "hipStream", "camel"),
    ("HIP_HOST_MALLOC_", "hipHostMalloc", "camel"),
    ("HIPRTC_", "HIPRTC_", "upper"),
    ("HIPBLASLT_", "HIPBLASLT_", "upper"),
    ("HIPBLAS_", "HIPBLAS_", "upper"),
    ("HIP_R_", "HIP_R_", "upper"),
    ("ROCBLAS_", "rocblas_", "lower"),
    ("MIOPEN_", "miopen", "camel"),
    ("NCCL_", "nccl", "camel"),
]

# Status-name functions: (function name, library).
NAME_FNS = {"hip_error_name": "HIP", "rocblas_status_name": "ROCBLAS", "miopen_status_name": "MIOPEN",
            "hipblas_status_name": "HIPBLASLT"}


def lib_of(name):
    # hipDataType values (hip/library_types.h) are declared for hipBLASLt only: checked with it.
    if name.startswith("HIP_R_"):
        return "HIPBLASLT"
    n = name.lower()
    for prefix, lib in (("hiprtc", "HIPRTC"), ("hipblas", "HIPBLASLT"), ("hip", "HIP"), ("rocblas", "ROCBLAS"), ("miopen", "MIOPEN"),
                        ("nccl", "RCCL")):
        if n.startswith(prefix):
            return lib
    raise SystemExit(f"gen_conformance: cannot tell which library {name} belongs to")


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    return re.sub(r"//[^\n]*", "", src)


class Types:
    def __init__(self, src):
        self.aliases = dict(re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?type\s+(\w+)\s*=\s*([^;]+);", src, re.M))

    def cxx(self, t):
        t = t.strip()
        if t.startswith("*mut "):
            inner = self.cxx(t[5:])
            return f"{inner}*"
        if t.startswith("*const "):
            inner = self.cxx(t[7:])
            return f"{inner} const*"
        if t == "()":
            return "void"
        last = t.split("::")[-1]
        if last in PRIMS:
            return PRIMS[last]
        if last in self.aliases:
            return self.cxx(self.aliases[last])
        raise SystemExit(f"gen_conformance: no C++ translation for Rust type '{t}' (add it to PRIMS "
                         f"or declare it as a `type` alias in hip.rs)")


def split_args(s):
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    return [a.strip() for a in out if a.strip()]


def camel(words):
    return "".join(w[:1].upper() + w[1:].lower() for w in words.split("_"))


def header_name(const):
    if const in OVERRIDES:
        return OVERRIDES[const]
    for prefix, hprefix, style in sorted(CONST_RULES, key=lambda r: -len(r[0])):
        if const.startswith(prefix):
            rest = const[len(prefix):]
            if style == "camel":
                return hprefix + camel(rest)
            if style == "lower":
                return hprefix + rest.lower()
            return hprefix + rest
    raise SystemExit(f"gen_conformance: no header name for constant {const} (add a rule or an "
                     f"OVERRIDES entry in tests/amd/gen_conformance.py)")


def parse(src):
    src = strip_comments(src)
    types = Types(src)
    fns, consts, names = [], [], []
    for block in re.finditer(r"dyn_symbols!\s*\{(.*?)\n\}", src, re.S):
        body = block.group(1)
        table = re.search(r"struct\s+(\w+)", body).group(1)
        entries = re.findall(r"\b(req|opt)\s+(\w+)\s*:\s*fn\s*\((.*?)\)\s*(?:->\s*([^;]+))?;", body, re.S)
        if not entries:
            raise SystemExit(f"gen_conformance: table {table} declares no symbols")
        for kind, sym, args, ret in entries:
            cargs = ", ".join(types.cxx(a) for a in split_args(args))
            cret = types.cxx(ret) if ret and ret.strip() else "void"
            fns.append((table, kind, sym, f"{cret}({cargs})"))
    for name, ty, value in re.findall(r"^\s*pub(?:\([^)]*\))?\s+const\s+(\w+)\s*:\s*([^=]+)=\s*([^;]+);", src, re.M):
        consts.append((name, header_name(name), value.strip().replace("_", "")))
    for fn_name in NAME_FNS:
        m = re.search(r"fn\s+" + fn_name + r"\s*\([^)]*\)[^{]*\{(.*?)\n\}", src, re.S)
        if not m:
            continue
        for num, cname in re.findall(r"(?m)^\s*(-?\d+)\s*=>\s*\"(\w+)\"", m.group(1)):
            names.append((fn_name, cname, num))
    return fns, consts, names


def guard(expr):
    return "HIP_VERSION_MAJOR >= 6" if "R0600" in expr else None


def emit(fns, consts, names):
    out = ["// GENERATED by tests/amd/gen_conformance.py from src/device/gpu/vendor/hip.rs.",
           "// Do not edit: run `python3 tests/amd/gen_conformance.py` after changing hip.rs.",
           f"// {len(fns)} functions, {len(consts)} constants, {len(names)} status names.", ""]

    def item(lib, expr, line):
        g = [f"RB_CHECK_{lib}"] + ([guard(expr)] if guard(expr) else [])
        out.append(f"#if {' && '.join(g)}")
        out.append(line)
        out.append("#endif")

    table = None
    for t, kind, sym, ty in fns:
        if t != table:
            out.append(f"\n// ---- dyn_symbols! table {t}")
            table = t
        item(lib_of(sym), sym, f"ABI_CHECK_FN({sym}, {ty});  // {kind}")
    out.append("\n// ---- constants")
    for name, hname, value in consts:
        m = re.match(r"(sizeof|offsetof)\((\w+)", hname)
        lib = lib_of(m.group(2) if m else hname)
        item(lib, hname, f"ABI_CHECK_VALUE({hname}, {value});  // {name}")
    out.append("\n// ---- status names")
    for fn_name, cname, num in names:
        item(NAME_FNS[fn_name], cname, f"ABI_CHECK_VALUE({cname}, {num});  // {fn_name}")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true", help="fail if the committed file is stale")
    ap.add_argument("--hip-rs", default=str(HIP_RS))
    ap.add_argument("--out", default=str(OUT))
    a = ap.parse_args()
    text = emit(*parse(pathlib.Path(a.hip_rs).read_text()))
    out = pathlib.Path(a.out)
    if a.check:
        old = out.read_text() if out.exists() else ""
        if old != text:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       str(out), "regenerated"))
            print(f"gen_conformance: {out} is stale; run python3 tests/amd/gen_conformance.py", file=sys.stderr)
            return 1
        print(f"gen_conformance: {out.name} is up to date with hip.rs", file=sys.stderr)
        return 0
    out.write_text(text)
    print(f"gen_conformance: wrote {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
