//! The CPU device's thread pool (`RB_NUM_THREADS`, default: all cores) and parallel loops.

use rayon::ThreadPool;
use std::sync::LazyLock;

static POOL: LazyLock<ThreadPool> = LazyLock::new(|| {
    rayon::ThreadPoolBuilder::new()
        .num_threads(configured_threads())
        .thread_name(|i| format!("rb-cpu-{i}"))
        .build()
        .expect("cannot start the CPU thread pool")
});

fn configured_threads() -> usize {
    std::env::var("RB_NUM_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
}

/// Threads the CPU device uses.
pub fn num_threads() -> usize {
    POOL.current_num_threads()
}

/// The CPU device's pool.
pub fn pool() -> &'static ThreadPool {
    &POOL
}

/// Runs `f(start, end)` over `0..n` in chunks of at least `grain` items, in parallel when
/// there is more than one chunk.
pub fn for_range(n: usize, grain: usize, f: impl Fn(usize, usize) + Sync) {
    if n == 0 {
        return;
    }
    let threads = num_threads();
    let grain = grain.max(1);
    if threads <= 1 || n <= grain {
        f(0, n);
        return;
    }
    let chunks = (n.div_ceil(grain)).min(threads * 4);
    let chunk = n.div_ceil(chunks);
    POOL.scope(|s| {
        let f = &f;
        for c in 1..chunks {
            let start = c * chunk;
            if start >= n {
                break;
            }
            let end = (start + chunk).min(n);
            s.spawn(move |_| f(start, end));
        }
        f(0, chunk.min(n));
    });
}

/// A raw address that may cross threads; the loops above hand out disjoint ranges.
#[derive(Clone, Copy)]
pub struct SendPtr<T>(pub *mut T);
unsafe impl<T> Send for SendPtr<T> {}
unsafe impl<T> Sync for SendPtr<T> {}

impl<T> SendPtr<T> {
    #[inline(always)]
    pub fn get(self) -> *mut T {
        self.0
    }
}

/// memmove in parallel chunks (non-overlapping chunks copy in parallel; overlapping
/// ranges copy serially).
///
/// # Safety
/// `src` must be readable and `dst` writable for `bytes` bytes.
pub unsafe fn copy(src: *const u8, dst: *mut u8, bytes: usize) {
    if bytes == 0 || std::ptr::eq(src, dst) {
        return;
    }
    let overlap =
        (src as usize) < (dst as usize + bytes) && (dst as usize) < (src as usize + bytes);
    if overlap || bytes < (1 << 20) {
        // SAFETY: caller's contract.
        unsafe { std::ptr::copy(src, dst, bytes) };
        return;
    }
    let s = SendPtr(src as *mut u8);
    let d = SendPtr(dst);
    for_range(bytes, 1 << 19, move |a, b| {
        // SAFETY: disjoint sub-ranges of the caller's buffers.
        unsafe { std::ptr::copy_nonoverlapping(s.get().add(a), d.get().add(a), b - a) }
    });
}
