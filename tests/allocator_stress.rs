//! Hammers one caching allocator from 8 threads (random sizes, random streams, frees on
//! other streams, record_stream, simulated stream completion) over the host-memory backend,
//! then checks that the stats balance and that nothing leaks.

use rocm_backend::device::gpu::allocator::{AllocatorConfig, CachingAllocator};
use rocm_backend::device::gpu::host::HostMemory;
use rocm_backend::device::{DevPtr, RawStream};
use std::sync::Arc;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn size(r: &mut Rng) -> usize {
    match r.below(100) {
        0..70 => 1 + r.below(64 << 10) as usize,
        70..95 => 1 + r.below(1 << 20) as usize,
        _ => (1 << 20) + r.below(8 << 20) as usize,
    }
}

/// Writes a tag at both ends of a block and checks it later: two live blocks that overlap
/// would overwrite each other's tags.
fn tag(p: DevPtr, n: usize, v: u64) {
    unsafe {
        (p.0 as *mut u8).copy_from_nonoverlapping(v.to_le_bytes().as_ptr(), n.min(8));
        if n >= 16 {
            ((p.0 as usize + n - 8) as *mut u8)
                .copy_from_nonoverlapping(v.to_le_bytes().as_ptr(), 8);
        }
    }
}
fn check_tag(p: DevPtr, n: usize, v: u64) {
    let mut a = [0u8; 8];
    unsafe { (p.0 as *const u8).copy_to_nonoverlapping(a.as_mut_ptr(), n.min(8)) };
    let k = n.min(8);
    assert_eq!(
        a[..k],
        v.to_le_bytes()[..k],
        "block {:#x} was overwritten",
        p.0
    );
    if n >= 16 {
        unsafe { ((p.0 as usize + n - 8) as *const u8).copy_to_nonoverlapping(a.as_mut_ptr(), 8) };
        assert_eq!(a, v.to_le_bytes(), "block {:#x} tail was overwritten", p.0);
    }
}

fn run(config: AllocatorConfig, capacity: Option<u64>) {
    let a = Arc::new(CachingAllocator::new(
        HostMemory::simulated(capacity),
        config,
    ));
    let threads: Vec<_> = (0..8u64)
        .map(|t| {
            let a = a.clone();
            std::thread::spawn(move || {
                let mut r = Rng(0x9e37_79b9_7f4a_7c15 ^ (t + 1).wrapping_mul(0x1234_5678_9abc));
                let mut live: Vec<(DevPtr, usize, RawStream, u64)> = Vec::new();
                let mut ooms = 0;
                for i in 0..3000u64 {
                    let b = a.backend();
                    match r.below(10) {
                        0..5 => {
                            let n = size(&mut r);
                            let s = RawStream(r.below(4));
                            match a.allocate(n, s) {
                                Ok(p) => {
                                    let v = (t << 48) | i;
                                    tag(p, n, v);
                                    live.push((p, n, s, v));
                                    if r.below(4) == 0 {
                                        b.submit(s);
                                    }
                                }
                                Err(e) => {
                                    assert_eq!(e.kind, rocm_backend::ErrorKind::OutOfMemory);
                                    ooms += 1;
                                }
                            }
                        }
                        5..9 if !live.is_empty() => {
                            let k = r.below(live.len() as u64) as usize;
                            let (p, n, s, v) = live.swap_remove(k);
                            check_tag(p, n, v);
                            let fs = if r.below(5) == 0 {
                                RawStream(r.below(4))
                            } else {
                                s
                            };
                            if r.below(8) == 0 {
                                a.record_stream(p, RawStream(r.below(4))).unwrap();
                            }
                            a.deallocate(p, fs).unwrap();
                        }
                        _ => b.complete(RawStream(r.below(4))),
                    }
                    if i % 500 == 0 {
                        a.check_invariants().unwrap();
                    }
                }
                for (p, n, s, v) in live {
                    check_tag(p, n, v);
                    a.deallocate(p, s).unwrap();
                }
                ooms
            })
        })
        .collect();
    let ooms: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
    a.check_invariants().unwrap();
    let s = a.stats();
    assert_eq!(s.allocated_bytes, 0);
    assert_eq!(s.requested_bytes, 0);
    assert_eq!(s.num_active_blocks, 0);
    assert_eq!(s.num_allocations, s.num_deallocations);
    assert_eq!(s.num_allocations, s.cache_hits + s.cache_misses);
    assert_eq!(s.num_ooms, ooms);
    let seg_sum: u64 = a.segments().iter().map(|s| s.1 as u64).sum();
    assert_eq!(s.reserved_bytes, seg_sum);
    assert_eq!(a.backend().used_bytes(), seg_sum);
    assert_eq!(s.segment_allocations - s.segment_frees, s.num_segments);
    assert!(s.peak_reserved_bytes >= s.peak_allocated_bytes);
    eprintln!("stress {config:?} capacity {capacity:?}: {s:?}");
    a.empty_cache().unwrap();
    let s = a.stats();
    assert_eq!(
        (s.reserved_bytes, s.active_bytes, s.num_segments),
        (0, 0, 0)
    );
    assert_eq!(a.backend().live_allocations(), 0, "segments leaked");
    assert_eq!(a.backend().live_events(), 0, "events leaked");
    let (allocs, frees, _) = a.backend().counters();
    assert_eq!(allocs, frees);
}

#[test]
fn eight_threads_pooling() {
    run(AllocatorConfig::default(), None);
}

#[test]
fn eight_threads_tight_memory() {
    // 64 MiB: out-of-memory and the free-and-retry path happen often.
    run(AllocatorConfig::default(), Some(64 << 20));
}

#[test]
fn eight_threads_no_pooling() {
    run(
        AllocatorConfig {
            pooling: false,
            ..AllocatorConfig::default()
        },
        None,
    );
}
