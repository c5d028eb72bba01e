//! Per-kernel timing: while the [`super::profiler`] is enabled (`RB_PROFILE=1`, or
//! `rb_profiler_enable`), every GPU kernel launch and GEMM is bracketed by two timing events
//! on its stream; [`drain`] (called before the profiler's summary or reset) waits for the
//! recorded events and records each time with the profiler. Off, a launch costs one load.

use super::GpuDevice;
use super::profiler::profiler;
use super::vendor::Vendor;
use crate::Result;
use crate::device::RawStream;
use parking_lot::Mutex;
use std::sync::Arc;

struct Pending {
    name: String,
    vendor: Arc<dyn Vendor>,
    ordinal: usize,
    start: u64,
    end: u64,
}

static PENDING: Mutex<Vec<Pending>> = Mutex::new(Vec::new());

fn enabled() -> bool {
    profiler().enabled()
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

/// Waits for the timed kernels and hands their times to the [`super::profiler`].
pub fn drain() -> Result<()> {
    let pending: Vec<Pending> = std::mem::take(&mut *PENDING.lock());
    let mut first_err = None;
    for p in pending {
        let r = p
            .vendor
            .bind(p.ordinal)
            .and_then(|_| p.vendor.event_synchronize(p.end))
            .and_then(|_| p.vendor.event_elapsed_ms(p.start, p.end));
        match r {
            Ok(ms) => {
                profiler().record(&p.name, ms as f64);
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
