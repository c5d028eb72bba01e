//! The handle registry under concurrent destroys (issue: two threads destroying the same
//! tensor or stream could both get SUCCESS). Look-up and removal are one step: in every
//! round exactly one of the racing destroys succeeds and the others get INVALID_HANDLE.

use rocm_backend::ffi::status::rb_status;
use rocm_backend::ffi::stream::{rb_stream, rb_stream_create, rb_stream_destroy};
use rocm_backend::ffi::tensor::{rb_tensor, rb_tensor_destroy, rb_tensor_zeros};
use std::sync::{Arc, Barrier};

const ROUNDS: usize = 2000;
const THREADS: usize = 4;

/// Races `THREADS` destroys of one handle per round; returns the successes per round.
fn race(make: impl Fn() -> usize, destroy: fn(usize) -> rb_status) {
    for round in 0..ROUNDS {
        let h = make();
        let barrier = Arc::new(Barrier::new(THREADS));
        let threads: Vec<_> = (0..THREADS)
            .map(|_| {
                let b = barrier.clone();
                std::thread::spawn(move || {
                    b.wait();
                    destroy(h)
                })
            })
            .collect();
        let st: Vec<rb_status> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let ok = st.iter().filter(|s| **s == rb_status::Success).count();
        let stale = st
            .iter()
            .filter(|s| **s == rb_status::InvalidHandle)
            .count();
        assert_eq!(
            (ok, stale),
            (1, THREADS - 1),
            "round {round}: statuses {st:?}"
        );
    }
}

#[test]
fn concurrent_tensor_destroy_succeeds_once() {
    race(
        || {
            let mut t: *mut rb_tensor = std::ptr::null_mut();
            let shape = [4i64];
            let st = unsafe { rb_tensor_zeros(c"cpu".as_ptr(), shape.as_ptr(), 1, 0, &mut t) };
            assert_eq!(st, rb_status::Success);
            t as usize
        },
        |h| unsafe { rb_tensor_destroy(h as *mut rb_tensor) },
    );
}

#[test]
fn concurrent_stream_destroy_succeeds_once() {
    race(
        || {
            let mut s: *mut rb_stream = std::ptr::null_mut();
            let st = unsafe { rb_stream_create(c"cpu".as_ptr(), &mut s) };
            assert_eq!(st, rb_status::Success);
            s as usize
        },
        |h| unsafe { rb_stream_destroy(h as *mut rb_stream) },
    );
}
