//! The profiler core: (kernel name, milliseconds) records and their summary (count, total,
//! mean, min and max per name). The GPU device feeds it event timings of its launches while
//! it is enabled. It is enabled by `RB_PROFILE=1` (read once, at first use) or
//! [`Profiler::set_enabled`]. Thread-safe.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, Ordering};

/// The timings of one kernel name.
#[derive(Clone, Debug, PartialEq)]
pub struct KernelSummary {
    pub name: String,
    pub count: u64,
    pub total_ms: f64,
    pub mean_ms: f64,
    pub min_ms: f64,
    pub max_ms: f64,
}

#[derive(Default)]
struct Acc {
    count: u64,
    total: f64,
    min: f64,
    max: f64,
}

/// Collects kernel timings.
pub struct Profiler {
    enabled: AtomicBool,
    records: Mutex<HashMap<String, Acc>>,
}

impl Profiler {
    pub fn new(enabled: bool) -> Self {
        Profiler {
            enabled: AtomicBool::new(enabled),
            records: Mutex::default(),
        }
    }
    pub fn enabled(&self) -> bool {
        self.enabled.load(Ordering::Relaxed)
    }
    pub fn set_enabled(&self, on: bool) {
        self.enabled.store(on, Ordering::Relaxed)
    }

    /// Adds one timing (ignored while disabled, or when `ms` is not a finite, non-negative
    /// number).
    pub fn record(&self, name: &str, ms: f64) {
        if !self.enabled() || !ms.is_finite() || ms < 0.0 {
            return;
        }
        let mut r = self.records.lock();
        let a = r.entry(name.to_string()).or_insert(Acc {
            count: 0,
            total: 0.0,
            min: f64::INFINITY,
            max: 0.0,
        });
        a.count += 1;
        a.total += ms;
        a.min = a.min.min(ms);
        a.max = a.max.max(ms);
    }

    /// Per-name summaries, the largest total first (ties by name).
    pub fn summary(&self) -> Vec<KernelSummary> {
        let r = self.records.lock();
        let mut v: Vec<KernelSummary> = r
            .iter()
            .map(|(n, a)| KernelSummary {
                name: n.clone(),
                count: a.count,
                total_ms: a.total,
                mean_ms: a.total / a.count as f64,
                min_ms: a.min,
                max_ms: a.max,
            })
            .collect();
        v.sort_by(|a, b| {
            b.total_ms
                .total_cmp(&a.total_ms)
                .then_with(|| a.name.cmp(&b.name))
        });
        v
    }

    /// The summary as a text table: a header line, then one line per kernel
    /// (`name count total_ms mean_ms min_ms max_ms`).
    pub fn summary_text(&self) -> String {
        let rows = self.summary();
        let w = rows.iter().map(|r| r.name.len()).max().unwrap_or(6).max(6);
        let mut s = format!(
            "{:<w$} {:>8} {:>12} {:>12} {:>12} {:>12}\n",
            "kernel", "count", "total_ms", "mean_ms", "min_ms", "max_ms"
        );
        for r in rows {
            let _ = writeln!(
                s,
                "{:<w$} {:>8} {:>12.4} {:>12.4} {:>12.4} {:>12.4}",
                r.name, r.count, r.total_ms, r.mean_ms, r.min_ms, r.max_ms
            );
        }
        s
    }

    /// Drops every record (the enabled flag stays).
    pub fn reset(&self) {
        self.records.lock().clear();
    }
}

static GLOBAL: LazyLock<Profiler> = LazyLock::new(|| {
    let on = std::env::var("RB_PROFILE")
        .map(|v| matches!(v.trim(), "1" | "true" | "on" | "yes"))
        .unwrap_or(false);
    Profiler::new(on)
});

/// The process-wide profiler.
pub fn profiler() -> &'static Profiler {
    &GLOBAL
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summarizes_per_name() {
        let p = Profiler::new(true);
        for ms in [1.0, 2.0, 3.0] {
            p.record("gemm", ms);
        }
        p.record("relu", 0.5);
        p.record("bad", f64::NAN);
        p.record("bad", -1.0);
        let s = p.summary();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].name, "gemm");
        assert_eq!((s[0].count, s[0].total_ms, s[0].mean_ms), (3, 6.0, 2.0));
        assert_eq!((s[0].min_ms, s[0].max_ms), (1.0, 3.0));
        assert_eq!(
            (s[1].name.as_str(), s[1].count, s[1].mean_ms),
            ("relu", 1, 0.5)
        );
        let t = p.summary_text();
        assert!(t.lines().nth(1).unwrap().starts_with("gemm"), "{t}");
        assert!(t.contains("6.0000"), "{t}");
        p.reset();
        assert!(p.summary().is_empty());
    }

    #[test]
    fn disabled_records_nothing() {
        let p = Profiler::new(false);
        p.record("k", 1.0);
        assert!(p.summary().is_empty());
        p.set_enabled(true);
        p.record("k", 1.0);
        assert_eq!(p.summary()[0].count, 1);
    }

    #[test]
    fn threads() {
        let p = std::sync::Arc::new(Profiler::new(true));
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let p = p.clone();
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        p.record(if i % 2 == 0 { "a" } else { "b" }, 0.25);
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
        let s = p.summary();
        assert_eq!(s.iter().map(|r| r.count).sum::<u64>(), 4000);
        assert_eq!(s[0].total_ms, 500.0);
    }
}
