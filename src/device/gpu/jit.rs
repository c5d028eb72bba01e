//! Kernel JIT: the embedded kernel sources, compilation for the device's architecture
//! through the vendor's runtime compiler (hiprtc / NVRTC), a compiled-code cache keyed by
//! hash(source, options, arch, compiler version), per-device module and function tables,
//! and launches (timed by the profiler when it is on).

use super::GpuDevice;
use super::kernel_cache::{KernelCacheStats, KernelCompiler, kernel_cache};
use super::timing::Span;
use super::vendor::Vendor;
use crate::device::{DeviceKind, RawStream};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

/// An embedded kernel source file.
pub struct Source {
    pub name: &'static str,
    pub text: &'static str,
}

/// kernels/common.h, pasted where a source says `#include "common.h"`.
pub const COMMON_H: &str = include_str!("../../../kernels/common.h");
/// kernels/rows.h (the register-row building blocks), pasted where a source says
/// `#include "rows.h"` (after common.h).
pub const ROWS_H: &str = include_str!("../../../kernels/rows.h");

pub static ELEMENTWISE: Source = Source {
    name: "elementwise.hip",
    text: include_str!("../../../kernels/elementwise.hip"),
};

pub static POINTWISE: Source = Source {
    name: "pointwise.hip",
    text: include_str!("../../../kernels/pointwise.hip"),
};

pub static OPTIM: Source = Source {
    name: "optim.hip",
    text: include_str!("../../../kernels/optim.hip"),
};

pub static REDUCE: Source = Source {
    name: "reduce.hip",
    text: include_str!("../../../kernels/reduce.hip"),
};

pub static DATA: Source = Source {
    name: "data.hip",
    text: include_str!("../../../kernels/data.hip"),
};

pub static NORM: Source = Source {
    name: "norm.hip",
    text: include_str!("../../../kernels/norm.hip"),
};

pub static LOSS: Source = Source {
    name: "loss.hip",
    text: include_str!("../../../kernels/loss.hip"),
};

pub static ATTENTION: Source = Source {
    name: "attention.hip",
    text: include_str!("../../../kernels/attention.hip"),
};

pub static FLASH_ATTENTION: Source = Source {
    name: "flash_attention.hip",
    text: include_str!("../../../kernels/flash_attention.hip"),
};

pub static BLAS: Source = Source {
    name: "blas.hip",
    text: include_str!("../../../kernels/blas.hip"),
};

pub static POOL: Source = Source {
    name: "pool.hip",
    text: include_str!("../../../kernels/pool.hip"),
};

/// Makes a HIP source compilable by the vendor's runtime compiler: `#include "common.h"`
/// is replaced by kernels/common.h, and on NVIDIA `#include <hip/hip_runtime.h>` (which
/// NVRTC lacks, and whose contents it has built in) is dropped.
pub fn prepare(source: &str, kind: DeviceKind) -> String {
    let mut out = String::with_capacity(source.len() + COMMON_H.len());
    for line in source.lines() {
        let t = line.trim();
        let header = if t == "#include \"common.h\""
            || t == "#include <rocm_backend/common.h>"
            || t == "#include \"rocm_backend/common.h\""
        {
            Some(COMMON_H)
        } else if t == "#include \"rows.h\"" {
            Some(ROWS_H)
        } else {
            None
        };
        if let Some(h) = header {
            for l in h.lines() {
                if l.trim() != "#pragma once" {
                    out.push_str(l);
                    out.push('\n');
                }
            }
            continue;
        }
        if kind == DeviceKind::Cuda
            && (t == "#include <hip/hip_runtime.h>" || t == "#include \"hip/hip_runtime.h\"")
        {
            out.push('\n');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// hiprtc / NVRTC behind the kernel cache's compiler interface.
struct VendorCompiler<'a>(&'a dyn Vendor);

impl KernelCompiler for VendorCompiler<'_> {
    fn compile(&self, source: &str, name: &str, options: &[String], arch: &str) -> Result<Vec<u8>> {
        self.0.rtc_compile(source, name, options, arch)
    }
    fn compiler_version(&self) -> String {
        self.0.rtc_version()
    }
}

/// Compiles `source` (already prepared) for `arch`, or returns the code from the kernel
/// cache (memory, then disk; keyed by source, options, architecture and compiler version).
pub fn compile_cached(
    vendor: &dyn Vendor,
    source: &str,
    name: &str,
    options: &[String],
    arch: &str,
) -> Result<Arc<Vec<u8>>> {
    kernel_cache().get_or_compile(&VendorCompiler(vendor), source, name, options, arch)
}

/// Statistics of the process's kernel cache.
pub fn cache_stats() -> KernelCacheStats {
    kernel_cache().stats()
}

/// `RB_GPU_KERNEL_DEFINES`: `NAME=VALUE` pairs (separated by spaces or commas) compiled into
/// every built-in source as `-DNAME=VALUE`, a tuning aid for the kernels' `#ifndef` knobs
/// (e.g. `RB_GEMV_GRP_U=8 RB_GEMV_GRP_PREFETCH=0`); the host reads the same values through
/// [`kernel_define`] where it plans launches by them. Pairs that are not of that form are
/// ignored (a warning on stderr); compiled modules are cached per set of defines.
pub struct BuiltinDefines {
    pairs: Vec<(String, String)>,
    options: Vec<String>,
}

/// The parsed `RB_GPU_KERNEL_DEFINES` (read once).
pub fn builtin_defines() -> &'static BuiltinDefines {
    static D: std::sync::LazyLock<BuiltinDefines> = std::sync::LazyLock::new(|| {
        parse_defines(&std::env::var("RB_GPU_KERNEL_DEFINES").unwrap_or_default())
    });
    &D
}

fn parse_defines(text: &str) -> BuiltinDefines {
    let ident = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !s.starts_with(|c: char| c.is_ascii_digit())
    };
    let value = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    };
    let mut pairs = vec![];
    for item in text.split([' ', ',']).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some((n, v)) if ident(n) && value(v) => pairs.push((n.to_string(), v.to_string())),
            None if ident(item) => pairs.push((item.to_string(), "1".to_string())),
            _ => eprintln!("rocm-backend: RB_GPU_KERNEL_DEFINES: ignoring {item:?} (NAME=VALUE)"),
        }
    }
    let options = pairs.iter().map(|(n, v)| format!("-D{n}={v}")).collect();
    BuiltinDefines { pairs, options }
}

/// The value `RB_GPU_KERNEL_DEFINES` gives `name`, if any (the last one given).
pub fn kernel_define(name: &str) -> Option<&'static str> {
    builtin_defines()
        .pairs
        .iter()
        .rev()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// A numeric knob of the built-in kernels as the host reads it: the value
/// `RB_GPU_KERNEL_DEFINES` gives `name` where it parses and lies in `range`, else `default`
/// (the kernel's own `#ifndef` default, which the caller repeats).
pub fn kernel_define_in(
    name: &str,
    range: std::ops::RangeInclusive<usize>,
    default: usize,
) -> usize {
    kernel_define(name)
        .and_then(|v| v.parse().ok())
        .filter(|v| range.contains(v))
        .unwrap_or(default)
}

/// A device's loaded built-in modules and resolved functions.
#[derive(Default)]
pub struct ModuleTable {
    builtin: Mutex<HashMap<&'static str, u64>>,
    functions: Mutex<HashMap<u64, HashMap<String, u64>>>,
}

impl ModuleTable {
    /// The function `kernel` of built-in source `src`, compiled and loaded on first use.
    pub fn builtin_function(
        &self,
        dev: &GpuDevice,
        src: &'static Source,
        kernel: &str,
    ) -> Result<u64> {
        let module = {
            let mut b = self.builtin.lock();
            match b.get(src.name) {
                Some(m) => *m,
                None => {
                    let text = prepare(src.text, dev.vendor.kind());
                    let code = compile_cached(
                        dev.vendor.as_ref(),
                        &text,
                        src.name,
                        &builtin_defines().options,
                        dev.arch(),
                    )?;
                    dev.bind()?;
                    let m = dev.vendor.module_load(&code)?;
                    b.insert(src.name, m);
                    m
                }
            }
        };
        self.function(dev, module, kernel)
    }

    /// `name` in a loaded module, resolved once (the lookup allocates nothing: it runs on
    /// every launch).
    pub fn function(&self, dev: &GpuDevice, module: u64, name: &str) -> Result<u64> {
        let mut f = self.functions.lock();
        if let Some(x) = f.get(&module).and_then(|m| m.get(name)) {
            return Ok(*x);
        }
        dev.bind()?;
        let x = dev.vendor.module_function(module, name)?;
        f.entry(module).or_default().insert(name.to_string(), x);
        Ok(x)
    }

    /// Forgets the functions of a module that is being unloaded.
    pub fn forget(&self, module: u64) {
        self.functions.lock().remove(&module);
    }
}

/// The index just after the `}` that closes the `{` at `open` in C source `text` (braces
/// counted; the kernel sources have none in strings or comments where this is used).
pub fn block_end(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

/// Whose kernel a [`launch`] starts: one of the built-in sources, or a caller's own module.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Early (`Vendor::launch_early`) where `name` is of `kernels::EARLY` and the device has
    /// early launches.
    Builtin,
    /// Always a plain launch, whatever its name (`rb_function_launch`).
    Caller,
}

/// Launches `func` (named `name` for the profiler) on `dev`: early for the built-in kernels
/// of `kernels::EARLY` on devices with early launches, else plainly ([`Origin`]).
///
/// # Safety
/// `args` holds one pointer per kernel parameter, each to a live value of its type.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    dev: &GpuDevice,
    func: u64,
    name: &str,
    grid: [u32; 3],
    block: [u32; 3],
    shared_bytes: u32,
    stream: RawStream,
    args: *mut *mut c_void,
    origin: Origin,
) -> Result<()> {
    let early =
        origin == Origin::Builtin && dev.early_launch() && super::kernels::launches_early(name);
    if grid.contains(&0) || block.contains(&0) {
        return Err(Error::invalid(format!(
            "launch of {name}: grid {grid:?} and block {block:?} must be positive"
        )));
    }
    let threads = block[0] as u64 * block[1] as u64 * block[2] as u64;
    if threads > dev.max_threads_per_block() as u64 {
        return Err(Error::invalid(format!(
            "launch of {name}: {threads} threads per block exceed the device's {}",
            dev.max_threads_per_block()
        )));
    }
    dev.bind()?;
    let span = Span::begin(dev, name, stream);
    // SAFETY: the caller's contract; an early launch only for the built-in kernels that begin
    // with rb_pdl_enter() (kernels::EARLY, checked against the sources by its tests).
    unsafe {
        if early {
            dev.vendor
                .launch_early(func, grid, block, shared_bytes, stream, args)
        } else {
            dev.vendor
                .launch(func, grid, block, shared_bytes, stream, args)
        }
    }
    .map_err(|e| e.context(name))?;
    span.end(dev, stream);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn kernel_defines_parse() {
        let d = super::parse_defines("RB_GEMV_GRP_U=8, RB_X  bad=, 9A=1 A=b;c RB_Y=2");
        assert_eq!(
            d.options,
            ["-DRB_GEMV_GRP_U=8", "-DRB_X=1", "-Dbad=", "-DRB_Y=2"]
        );
        assert!(super::parse_defines("").options.is_empty());
    }

    use super::*;
    #[test]
    fn prepare_inlines_common_and_drops_hip_header_on_cuda() {
        let src = "#include <hip/hip_runtime.h>\n#include \"common.h\"\nRB_KERNEL void k() {}\n";
        let c = prepare(src, DeviceKind::Cuda);
        assert!(c.contains("rb_f32_to_half"));
        assert!(!c.contains("hip_runtime.h"));
        assert!(!c.contains("#pragma once"));
        let h = prepare(src, DeviceKind::Rocm);
        assert!(h.contains("#include <hip/hip_runtime.h>"));
        assert!(h.contains("RB_KERNEL void k()"));
    }
}
