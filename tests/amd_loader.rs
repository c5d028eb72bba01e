//! The HIP loader against the real HIP runtime on a machine without an AMD GPU (CI: Debian
//! bookworm's libamdhip64-5, HIP 5.2, installed by scripts/amd-checks.sh).
//!
//! Runs only with RB_AMD_LOADER_TEST=1 (scripts/amd-checks.sh sets it); otherwise each trial
//! is reported ignored with that reason, since it needs the runtime installed and no AMD GPU
//! present. It asserts:
//!  1. `hip::load_tables()` finds libamdhip64 and resolves every REQUIRED symbol of the
//!     HipRuntime table, and (HIP 5.x: from libamdhip64 itself) of the Hiprtc table;
//!  2. independently of the loader's macro, each `req` name listed in hip.rs's dyn_symbols!
//!     tables for libamdhip64/hiprtc is exported by the library the loader opened (dlsym);
//!  3. MIOpen (not installed by libamdhip64-5) is loaded only when convolution asks for it:
//!     its absence makes `dnn()` answer Unsupported naming it, and nothing else fails;
//!  4. `rb_rocm_is_available()` is false, `rb_rocm_device_count()` is 0, and
//!     `rb_rocm_unavailable_reason()` names hipErrorNoDevice (100).

use libtest_mimic::{Arguments, Failed, Trial};
use rocm_backend::device::gpu::vendor::hip;
use std::ffi::CStr;

const HIP_RS: &str = include_str!("../src/device/gpu/vendor/hip.rs");

/// `req` symbols of each dyn_symbols! table in hip.rs, by table name.
fn required_by_table() -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    let mut in_table = false;
    for l in HIP_RS
        .lines()
        .map(|l| l.split("//").next().unwrap_or("").trim())
    {
        if l.starts_with("dyn_symbols!") {
            in_table = true;
        } else if in_table && l == "}" {
            in_table = false;
        } else if in_table {
            if let Some(r) = l.strip_prefix("pub struct ") {
                out.push((r.trim_end_matches('{').trim().to_string(), Vec::new()));
            } else if let Some(r) = l.strip_prefix("req ") {
                let name = r.split(':').next().unwrap().trim().to_string();
                out.last_mut().expect("entry before struct").1.push(name);
            }
        }
    }
    out
}

fn resolves_required_symbols() -> Result<(), Failed> {
    let v = hip::load_tables().map_err(|e| format!("load_tables failed: {e}"))?;
    eprintln!("libamdhip64: {}", v.hip.path);
    eprintln!("  optional symbols absent: {:?}", v.hip.missing_optional());
    let rtc = v
        .rtc
        .as_ref()
        .map_err(|e| format!("hiprtc table did not load: {e}"))?;
    eprintln!(
        "hiprtc: {} (optional absent: {:?})",
        rtc.path,
        rtc.missing_optional()
    );
    match &v.rocblas {
        Ok(r) => eprintln!("rocBLAS: {}", r.path),
        Err(e) => eprintln!("rocBLAS: not loaded (its feature is off): {e}"),
    }

    // Independent check: dlsym every `req` name hip.rs declares for the HIP runtime and
    // hiprtc in the libraries the loader chose.
    let tables = required_by_table();
    let mut checked = 0;
    for (table, path) in [("HipRuntime", &v.hip.path), ("Hiprtc", &rtc.path)] {
        let names = &tables
            .iter()
            .find(|(t, _)| t == table)
            .ok_or_else(|| format!("hip.rs has no dyn_symbols! table {table}"))?
            .1;
        // SAFETY: loading the HIP runtime runs its initializers, as the loader did.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| format!("{path}: {e}"))?;
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| unsafe { lib.get::<*const ()>(format!("{n}\0").as_bytes()) }.is_err())
            .collect();
        if !missing.is_empty() {
            return Err(format!("{path} lacks required {table} symbols {missing:?}").into());
        }
        eprintln!(
            "{table}: all {} required symbols resolve in {path}",
            names.len()
        );
        checked += names.len();
    }
    if checked < 20 {
        return Err(format!("only {checked} required symbols found in hip.rs").into());
    }
    Ok(())
}

fn miopen_absence_disables_only_convolution() -> Result<(), Failed> {
    use rocm_backend::device::gpu::vendor::Vendor;
    let v = hip::load_tables().map_err(|e| format!("load_tables failed: {e}"))?;
    match v.dnn() {
        Ok(d) => eprintln!("MIOpen present: {}", d.describe()),
        Err(e) => {
            eprintln!("dnn(): {:?}: {}", e.kind, e.message);
            if e.kind != rocm_backend::ErrorKind::Unsupported || !e.message.contains("MIOpen") {
                return Err(
                    format!("MIOpen's absence is not an Unsupported naming it: {e:?}").into(),
                );
            }
        }
    }
    Ok(())
}

fn unavailable_names_no_device() -> Result<(), Failed> {
    let available = rocm_backend::ffi::device::rb_rocm_is_available();
    let count = rocm_backend::ffi::device::rb_rocm_device_count();
    let p = rocm_backend::ffi::device::rb_rocm_unavailable_reason();
    if p.is_null() {
        return Err("rb_rocm_unavailable_reason() returned NULL".into());
    }
    // SAFETY: a NUL-terminated string owned by the library.
    let reason = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
    eprintln!("rb_rocm_is_available() = {available}, rb_rocm_device_count() = {count}");
    eprintln!("rb_rocm_unavailable_reason() = {reason:?}");
    if available || count != 0 {
        return Err("ROCm reported available on a machine without an AMD GPU".into());
    }
    if !(reason.contains("hipErrorNoDevice") && reason.contains("100")) {
        return Err(format!("the reason does not name hipErrorNoDevice (100): {reason:?}").into());
    }
    // The seed API answers consistently: rocm:0 cannot be selected, with the same cause.
    let c = std::ffi::CString::new("rocm:0").unwrap();
    let st = unsafe { rocm_backend::ffi::device::rb_set_device(c.as_ptr()) };
    if st == rocm_backend::ffi::status::rb_status::Success {
        return Err("rb_set_device(\"rocm:0\") succeeded without an AMD GPU".into());
    }
    Ok(())
}

fn main() {
    let args = Arguments::from_args();
    let enabled = std::env::var("RB_AMD_LOADER_TEST").as_deref() == Ok("1");
    if !enabled {
        eprintln!(
            "amd_loader: tests skipped: they need RB_AMD_LOADER_TEST=1, Debian's libamdhip64 \
             installed and no AMD GPU (scripts/amd-checks.sh sets this up)"
        );
    }
    let trials = vec![
        Trial::test(
            "hip_loader_resolves_every_required_symbol",
            resolves_required_symbols,
        ),
        Trial::test(
            "miopen_absence_disables_only_convolution",
            miopen_absence_disables_only_convolution,
        ),
        Trial::test(
            "rocm_unavailable_reason_names_hipErrorNoDevice",
            unavailable_names_no_device,
        ),
    ]
    .into_iter()
    .map(|t| t.with_ignored_flag(!enabled))
    .collect();
    libtest_mimic::run(&args, trials).exit();
}
