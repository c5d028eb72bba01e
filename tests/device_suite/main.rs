//! The device suite: every test body runs on every device kind. Bodies live in the modules
//! below; each exports `tests()`. GPU trials are reported as ignored, with the reason printed
//! once, where that GPU is absent, and run for real where it is present.

mod common;
mod conv;
mod core_ops;
mod data;
mod dtypes_ext;
mod dtypes_ext_int;
mod dtypes_ext_nn;
mod dtypes_f64_dnn;
mod exported_ops;
mod fused;
mod halves;
mod kernels;
mod layout;
mod loss;
mod memory;
mod nn;
mod optim;
mod pointwise;
mod pointwise_sizes;
mod raw_kernels;
mod reduce;
mod selection;
mod transformer;

use common::{Body, devices};
use libtest_mimic::{Arguments, Trial};
use std::sync::RwLock;

/// On a GPU, tensors and the memory C API share one caching allocator, so the memory bodies
/// (which check allocator statistics and block reuse) run alone: they take this lock for
/// writing, every other trial for reading. So do the device-graph bodies (another trial's
/// work on the default stream would invalidate their capture) and the bandwidth ones.
static ALLOCATOR: RwLock<()> = RwLock::new(());

fn main() {
    let args = Arguments::from_args();
    let mut bodies: Vec<(&'static str, Body)> = Vec::new();
    bodies.extend(core_ops::tests());
    bodies.extend(conv::tests());
    bodies.extend(nn::tests());
    bodies.extend(kernels::tests());
    bodies.extend(memory::tests());
    bodies.extend(pointwise::tests());
    bodies.extend(pointwise_sizes::tests());
    bodies.extend(reduce::tests());
    bodies.extend(data::tests());
    bodies.extend(exported_ops::tests());
    bodies.extend(selection::tests());
    bodies.extend(dtypes_ext::tests());
    bodies.extend(dtypes_ext_nn::tests());
    bodies.extend(dtypes_ext_int::tests());
    bodies.extend(dtypes_f64_dnn::tests());
    bodies.extend(optim::tests());
    bodies.extend(raw_kernels::tests());
    bodies.extend(raw_kernels::tests_b());
    bodies.extend(loss::tests());
    bodies.extend(transformer::tests());
    bodies.extend(fused::tests());
    bodies.extend(halves::tests());
    bodies.extend(layout::tests());

    let mut trials = Vec::new();
    for d in devices() {
        if let Some(why) = &d.skip_reason {
            eprintln!("device_suite: {} tests skipped: {why}", d.label);
        }
        let large_skip = common::large_skip_reason(&d);
        if let (Some(why), None) = (&large_skip, &d.skip_reason) {
            eprintln!("device_suite: {} large_ tests ignored: {why}", d.label);
        }
        for (name, body) in &bodies {
            let dev = d.device.clone();
            let body = *body;
            let ignored =
                d.device.is_none() || (name.starts_with("large_") && large_skip.is_some());
            let exclusive = name.starts_with("memory_")
                || name.starts_with("device_graph_")
                || name.ends_with("_bandwidth");
            let trial = Trial::test(format!("{}::{name}", d.label), move || match &dev {
                Some(dev) if exclusive => {
                    let _alone = ALLOCATOR.write().unwrap_or_else(|e| e.into_inner());
                    body(dev)
                }
                Some(dev) => {
                    let _shared = ALLOCATOR.read().unwrap_or_else(|e| e.into_inner());
                    body(dev)
                }
                None => Ok(()),
            })
            .with_ignored_flag(ignored);
            trials.push(trial);
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
