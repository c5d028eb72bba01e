//! Device selection: parsing device strings, the per-thread current device, and the
//! availability of each kind.

use crate::device::cpu::cpu_device;
use crate::device::gpu;
use crate::device::{Device, DeviceKind};
use crate::{Error, Result};
use parking_lot::Mutex;
use std::cell::RefCell;
use std::sync::Arc;

/// A parsed device string: "cpu", "rocm", "rocm:N", "cuda", "cuda:N" or "auto".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    Auto,
    Cpu,
    Rocm(usize),
    Cuda(usize),
}

impl DeviceSpec {
    pub fn parse(s: &str) -> Result<Self> {
        let s = s.trim();
        let ordinal = |rest: &str| -> Result<usize> {
            rest.parse::<usize>()
                .map_err(|_| Error::invalid(format!("'{s}' is not a device: bad ordinal '{rest}'")))
        };
        Ok(match s {
            "auto" => DeviceSpec::Auto,
            "cpu" | "cpu:0" => DeviceSpec::Cpu,
            "rocm" | "hip" => DeviceSpec::Rocm(0),
            "cuda" => DeviceSpec::Cuda(0),
            _ => {
                if let Some(r) = s.strip_prefix("rocm:").or_else(|| s.strip_prefix("hip:")) {
                    DeviceSpec::Rocm(ordinal(r)?)
                } else if let Some(r) = s.strip_prefix("cuda:") {
                    DeviceSpec::Cuda(ordinal(r)?)
                } else {
                    return Err(Error::invalid(format!(
                        "'{s}' is not a device (expected cpu, rocm, rocm:N, cuda, cuda:N or auto)"
                    )));
                }
            }
        })
    }
}

/// Why GPUs of `kind` cannot be used here, or `None` when at least one is usable.
pub fn unavailable_reason(kind: DeviceKind) -> Option<String> {
    match kind {
        DeviceKind::Cpu => None,
        k => gpu::registry::unavailable_reason(k),
    }
}

/// Number of usable GPUs of `kind` (0 where none or unavailable).
pub fn device_count(kind: DeviceKind) -> usize {
    match kind {
        DeviceKind::Cpu => 1,
        k => gpu::registry::device_count(k),
    }
}

/// The device a spec names; "auto" picks ROCm, then CUDA, then the CPU.
pub fn device(spec: DeviceSpec) -> Result<Arc<dyn Device>> {
    match spec {
        DeviceSpec::Cpu => Ok(cpu_device()),
        DeviceSpec::Auto => {
            for (kind, s) in [
                (DeviceKind::Rocm, DeviceSpec::Rocm(0)),
                (DeviceKind::Cuda, DeviceSpec::Cuda(0)),
            ] {
                if device_count(kind) > 0 {
                    return device(s);
                }
            }
            Ok(cpu_device())
        }
        DeviceSpec::Rocm(n) | DeviceSpec::Cuda(n) => {
            let kind = if matches!(spec, DeviceSpec::Rocm(_)) {
                DeviceKind::Rocm
            } else {
                DeviceKind::Cuda
            };
            if let Some(why) = unavailable_reason(kind) {
                return Err(Error::unavailable(format!(
                    "{}:{n} is unavailable: {why}",
                    kind.prefix()
                )));
            }
            // One Arc per ordinal, kept in the GPU registry.
            Ok(gpu::registry::device(kind, n)? as Arc<dyn Device>)
        }
    }
}

static PROCESS_DEFAULT: Mutex<Option<DeviceSpec>> = Mutex::new(None);

thread_local! {
    static CURRENT: RefCell<Option<Arc<dyn Device>>> = const { RefCell::new(None) };
}

/// Makes the device `spec` names current for the calling thread (and the default for threads
/// that have not chosen one). Nothing changes on failure.
pub fn set_device(spec: DeviceSpec) -> Result<Arc<dyn Device>> {
    let d = device(spec)?;
    CURRENT.with(|c| *c.borrow_mut() = Some(d.clone()));
    *PROCESS_DEFAULT.lock() = Some(match d.kind() {
        DeviceKind::Cpu => DeviceSpec::Cpu,
        DeviceKind::Rocm => DeviceSpec::Rocm(d.ordinal()),
        DeviceKind::Cuda => DeviceSpec::Cuda(d.ordinal()),
    });
    Ok(d)
}

/// The calling thread's current device: the one it set, else the process default (the last
/// device any thread set), else the CPU.
pub fn current_device() -> Arc<dyn Device> {
    if let Some(d) = CURRENT.with(|c| c.borrow().clone()) {
        return d;
    }
    let spec = *PROCESS_DEFAULT.lock();
    spec.and_then(|s| device(s).ok())
        .unwrap_or_else(|| cpu_device())
}

/// The device `s` names, or the current device when `s` is `None`.
pub fn resolve(s: Option<&str>) -> Result<Arc<dyn Device>> {
    match s {
        None => Ok(current_device()),
        Some(s) => device(DeviceSpec::parse(s)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parses_device_strings() {
        assert_eq!(DeviceSpec::parse("cpu").unwrap(), DeviceSpec::Cpu);
        assert_eq!(DeviceSpec::parse("rocm").unwrap(), DeviceSpec::Rocm(0));
        assert_eq!(DeviceSpec::parse("rocm:3").unwrap(), DeviceSpec::Rocm(3));
        assert_eq!(DeviceSpec::parse("cuda:1").unwrap(), DeviceSpec::Cuda(1));
        assert_eq!(DeviceSpec::parse("auto").unwrap(), DeviceSpec::Auto);
        assert!(DeviceSpec::parse("tpu").is_err());
        assert!(DeviceSpec::parse("cuda:x").is_err());
        assert!(DeviceSpec::parse("cuda:-1").is_err());
    }
}
