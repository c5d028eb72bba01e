//! Per-kernel timing: when enabled (`RB_PROFILE=1` in the environment, or
//! [`set_enabled`]), every GPU kernel launch and GEMM is bracketed by two timing events on
//! its stream; [`summary`] waits for the recorded events and folds them into a count, total
//! and mean time per kernel name. Off, a launch costs one atomic load.

use super::GpuDevice;
use super::vendor::Vendor;
use crate::Result;
use crate::device::RawStream;
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

static ENABLED: LazyLock<AtomicBool> = LazyLock::new(|| {
    AtomicBool::new(std::env::var("RB_PROFILE").is_ok_and(|v| !v.is_empty() && v != "0"))
});

struct Pending {
    name: String,
    vendor: Arc<dyn Vendor>,
    ordinal: usize,
    start: u64,
    end: u64,
}

static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());
static TOTALS: Mutex<BTreeMap<String, (u64, f64)>> = Mutex::new(BTreeMap::new());

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

pub fn set_enabled(on: bool) {
    ENABLED.store(on, Ordering::Relaxed);
}

/// One kernel's timing, from before its launch to after.
pub struct Span {
    name: String,
    events: Option<(u64, u64)>,
}

impl Span {
    pub fn begin(dev: &GpuDevice, name: &str, stream: RawStream) -> Span {
        let mut events = None;
        if enabled() {
            let v = &dev.vendor;
            if let (Ok(a), Ok(b)) = (v.event_create(true), v.event_create(true)) {
                if v.event_record(a, stream).is_ok() {
                    events = Some((a, b));
                } else {
                    let _ = v.event_destroy(a);
                    let _ = v.event_destroy(b);
                }
            }
        }
        Span {
            name: name.to_string(),
            events,
        }
    }

    pub fn end(self, dev: &GpuDevice, stream: RawStream) {
        if let Some((a, b)) = self.events {
            let v = &dev.vendor;
            if v.event_record(b, stream).is_ok() {
                PENDING.lock().push(Pending {
                    name: self.name,
                    vendor: v.clone(),
                    ordinal: dev.ordinal,
                    start: a,
                    end: b,
                });
            } else {
                let _ = v.event_destroy(a);
                let _ = v.event_destroy(b);
            }
        }
    }
}

/// One line of the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelTime {
    pub name: String,
    pub count: u64,
    pub total_ms: f64,
    pub mean_ms: f64,
}

fn drain() -> Result<()> {
    let pending: Vec<Pending> = std::mem::take(&mut *PENDING.lock());
    let mut totals = TOTALS.lock();
    let mut first_err = None;
    for p in pending {
        let r = p
            .vendor
            .bind(p.ordinal)
            .and_then(|_| p.vendor.event_synchronize(p.end))
            .and_then(|_| p.vendor.event_elapsed_ms(p.start, p.end));
        match r {
            Ok(ms) => {
                let e = totals.entry(p.name).or_insert((0, 0.0));
                e.0 += 1;
                e.1 += ms as f64;
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
        let _ = p.vendor.event_destroy(p.start);
        let _ = p.vendor.event_destroy(p.end);
    }
    first_err.map_or(Ok(()), Err)
}

/// Waits for the timed kernels and returns count, total and mean milliseconds per kernel
/// name, sorted by total time, largest first.
pub fn summary() -> Result<Vec<KernelTime>> {
    drain()?;
    let mut v: Vec<KernelTime> = TOTALS
        .lock()
        .iter()
        .map(|(n, &(c, t))| KernelTime {
            name: n.clone(),
            count: c,
            total_ms: t,
            mean_ms: if c > 0 { t / c as f64 } else { 0.0 },
        })
        .collect();
    v.sort_by(|a, b| b.total_ms.total_cmp(&a.total_ms));
    Ok(v)
}

/// Forgets everything timed so far.
pub fn reset() -> Result<()> {
    let r = drain();
    TOTALS.lock().clear();
    r
}

/// The summary as a table for humans.
pub fn summary_text() -> Result<String> {
    let mut s = format!(
        "{:<40} {:>8} {:>12} {:>12}\n",
        "kernel", "count", "total ms", "mean ms"
    );
    for k in summary()? {
        s.push_str(&format!(
            "{:<40} {:>8} {:>12.4} {:>12.4}\n",
            k.name, k.count, k.total_ms, k.mean_ms
        ));
    }
    Ok(s)
}
