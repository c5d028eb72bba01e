//! The device suite: every test body runs on every device kind. Bodies live in the modules
//! below; each exports `tests()`. GPU trials are reported as ignored, with the reason printed
//! once, where that GPU is absent, and run for real where it is present.

mod common;
mod core_ops;
mod kernels;
mod memory;

use common::{Body, devices};
use libtest_mimic::{Arguments, Trial};

fn main() {
    let args = Arguments::from_args();
    let mut bodies: Vec<(&'static str, Body)> = Vec::new();
    bodies.extend(core_ops::tests());
    bodies.extend(kernels::tests());
    bodies.extend(memory::tests());

    let mut trials = Vec::new();
    for d in devices() {
        if let Some(why) = &d.skip_reason {
            eprintln!("device_suite: {} tests skipped: {why}", d.label);
        }
        for (name, body) in &bodies {
            let dev = d.device.clone();
            let body = *body;
            let trial = Trial::test(format!("{}::{name}", d.label), move || match &dev {
                Some(dev) => body(dev),
                None => Ok(()),
            })
            .with_ignored_flag(d.device.is_none());
            trials.push(trial);
        }
    }
    libtest_mimic::run(&args, trials).exit();
}
