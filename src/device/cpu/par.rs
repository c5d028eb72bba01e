//! The CPU device's thread pool (`RB_NUM_THREADS`, default: all cores) and parallel loops.
//!
//! A fork-join pool built for microsecond-scale ops (a dense layer at batch 32 is ~50 µs of
//! work): the calling thread takes part, `threads - 1` workers claim chunks from a shared
//! counter, and idle workers spin for [`SPIN`] before they park, as OpenMP runtimes and ONNX
//! Runtime's pool do. A general work-stealing pool (rayon) woke its sleeping workers and
//! blocked the caller on every loop: about 11 µs per parallel op on the 2-core benchmark
//! machine, against ~1 µs here. One loop runs on the pool at a time; a loop started while
//! the pool is busy (another thread's, or a nested one inside a chunk) runs on its caller.
//! A panic in a chunk is carried to the caller once every chunk has finished.
//! Every spin-wait yields the core after [`YIELD_AFTER`]: on a machine shared with other
//! processes the thread being waited for may be descheduled, and a spinning waiter would
//! take the very core it needs (a 2-thread GEMM on 2 busy cores ran at ~0.6 of one thread's
//! speed; yielding brought it back to one thread's).

use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long an idle worker spins for the next loop before it parks.
const SPIN: Duration = Duration::from_micros(200);

/// How long a waiter spins before each spin also yields the core (`sched_yield`: a no-op
/// when nothing else is runnable on it, so an idle machine loses nothing).
const YIELD_AFTER: Duration = Duration::from_micros(20);

/// One step of a spin-wait that began at `t` (`spins` steps ago).
#[inline]
fn spin_step(t: Instant, spins: &mut u32) {
    std::hint::spin_loop();
    *spins += 1;
    if spins.is_multiple_of(64) && t.elapsed() > YIELD_AFTER {
        std::thread::yield_now();
    }
}

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

/// The loop being run: `f` with its lifetime erased (the caller waits until no worker can
/// touch it before it returns).
#[derive(Clone, Copy)]
struct Job {
    f: *const (dyn Fn(usize, usize) + Sync),
    n: usize,
    chunk: usize,
    chunks: usize,
}

// SAFETY: `f` is Sync and outlives every use (see `Pool::run`).
unsafe impl Send for Job {}

struct Slot {
    job: Option<Job>,
    /// Workers parked on `wake`.
    parked: usize,
}

struct Pool {
    threads: usize,
    /// Bumped for every job; idle workers watch it.
    epoch: AtomicU64,
    slot: Mutex<Slot>,
    wake: Condvar,
    /// Next chunk to claim, chunks finished, workers still inside the job.
    next: AtomicUsize,
    done: AtomicUsize,
    inflight: AtomicUsize,
    panicked: AtomicBool,
    /// A caller owns the pool.
    busy: AtomicBool,
}

thread_local! {
    static IS_WORKER: Cell<bool> = const { Cell::new(false) };
}

static POOL: LazyLock<&'static Pool> = LazyLock::new(|| {
    let threads = configured_threads();
    let pool: &'static Pool = Box::leak(Box::new(Pool {
        threads,
        epoch: AtomicU64::new(0),
        slot: Mutex::new(Slot {
            job: None,
            parked: 0,
        }),
        wake: Condvar::new(),
        next: AtomicUsize::new(0),
        done: AtomicUsize::new(0),
        inflight: AtomicUsize::new(0),
        panicked: AtomicBool::new(false),
        busy: AtomicBool::new(false),
    }));
    for i in 1..threads {
        std::thread::Builder::new()
            .name(format!("rb-cpu-{i}"))
            .spawn(move || pool.worker())
            .expect("cannot start a CPU pool thread");
    }
    pool
});

impl Pool {
    /// Claims and runs chunks of `job` until none are left.
    fn work(&self, job: &Job) {
        loop {
            let c = self.next.fetch_add(1, Ordering::AcqRel);
            if c >= job.chunks {
                return;
            }
            let start = c * job.chunk;
            let end = (start + job.chunk).min(job.n);
            // SAFETY: the job's closure lives until every claimed chunk is done.
            let f = unsafe { &*job.f };
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(start, end))).is_err() {
                self.panicked.store(true, Ordering::Relaxed);
            }
            self.done.fetch_add(1, Ordering::AcqRel);
        }
    }

    fn worker(&self) {
        IS_WORKER.with(|w| w.set(true));
        let mut seen = 0u64;
        loop {
            // Spin for the next job, then park.
            let t = Instant::now();
            let mut spins = 0u32;
            while self.epoch.load(Ordering::Acquire) == seen {
                spin_step(t, &mut spins);
                if spins.is_multiple_of(64) && t.elapsed() > SPIN {
                    let mut g = self.slot.lock();
                    g.parked += 1;
                    while self.epoch.load(Ordering::Acquire) == seen {
                        self.wake.wait(&mut g);
                    }
                    g.parked -= 1;
                    break;
                }
            }
            let job = {
                let g = self.slot.lock();
                seen = self.epoch.load(Ordering::Acquire);
                match g.job {
                    Some(j) => {
                        self.inflight.fetch_add(1, Ordering::AcqRel);
                        j
                    }
                    None => continue,
                }
            };
            self.work(&job);
            self.inflight.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Runs `chunks` chunks of `chunk` items over `0..n` with the workers; the caller owns
    /// the pool (`busy`).
    fn run(&self, n: usize, chunk: usize, chunks: usize, f: &(dyn Fn(usize, usize) + Sync)) {
        // SAFETY (lifetime erasure): `f` is only called through the job by workers that
        // registered in `inflight` while the job was published; this function waits for
        // every chunk and for `inflight` to drop to 0 after withdrawing the job, so no call
        // to `f` can start or be running when it returns.
        let f: *const (dyn Fn(usize, usize) + Sync + '_) = f;
        let f: *const (dyn Fn(usize, usize) + Sync) = unsafe { std::mem::transmute(f) };
        let job = Job {
            f,
            n,
            chunk,
            chunks,
        };
        self.next.store(0, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        self.panicked.store(false, Ordering::Relaxed);
        {
            let mut g = self.slot.lock();
            g.job = Some(job);
            self.epoch.fetch_add(1, Ordering::AcqRel);
            if g.parked > 0 {
                self.wake.notify_all();
            }
        }
        self.work(&job);
        let (t, mut spins) = (Instant::now(), 0u32);
        while self.done.load(Ordering::Acquire) < chunks {
            spin_step(t, &mut spins);
        }
        self.slot.lock().job = None;
        while self.inflight.load(Ordering::Acquire) > 0 {
            spin_step(t, &mut spins);
        }
        if self.panicked.load(Ordering::Relaxed) {
            std::panic::resume_unwind(Box::new("a parallel chunk panicked"));
        }
    }
}

/// Threads the CPU device uses.
pub fn num_threads() -> usize {
    POOL.threads
}

/// Releases the pool when dropped (also on a panic carried to the caller).
struct Owner;
impl Drop for Owner {
    fn drop(&mut self) {
        POOL.busy.store(false, Ordering::Release);
    }
}

/// Runs `f(start, end)` over `0..n` in chunks of at least `grain` items, in parallel when
/// there is more than one chunk.
pub fn for_range(n: usize, grain: usize, f: impl Fn(usize, usize) + Sync) {
    if n == 0 {
        return;
    }
    let threads = num_threads();
    let grain = grain.max(1);
    if threads <= 1 || n <= grain || IS_WORKER.with(|w| w.get()) {
        f(0, n);
        return;
    }
    if POOL
        .busy
        .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        // Another loop owns the pool (another thread's, or this one's own, nested).
        f(0, n);
        return;
    }
    let _owner = Owner;
    let chunks = (n.div_ceil(grain)).min(threads * 4);
    let chunk = n.div_ceil(chunks);
    POOL.run(n, chunk, n.div_ceil(chunk), &f);
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

/// Elements per parallel task.
pub(crate) const GRAIN: usize = 1 << 15;

/// Rows per task so that a task touches about `GRAIN` elements.
pub(crate) fn row_grain(width: usize) -> usize {
    (GRAIN / width.max(1)).max(1)
}

/// Runs `f(start, end, acc)` over `0..n` in parallel, each task with its own zeroed `acc` of
/// `width` f64, and returns the sum of the accumulators.
pub(crate) fn par_reduce(
    n: usize,
    grain: usize,
    width: usize,
    f: impl Fn(usize, usize, &mut [f64]) + Sync,
) -> Vec<f64> {
    let total = Mutex::new(vec![0.0f64; width]);
    for_range(n, grain, |s, e| {
        let mut acc = vec![0.0f64; width];
        f(s, e, &mut acc);
        let mut t = total.lock();
        for (a, b) in t.iter_mut().zip(&acc) {
            *a += b;
        }
    });
    total.into_inner()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    /// Runs a loop and checks that every index was visited exactly once.
    fn visit_once(n: usize, grain: usize) {
        let hits: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(0)).collect();
        for_range(n, grain, |s, e| {
            assert!(s < e && e <= n, "chunk {s}..{e} of {n}");
            for h in &hits[s..e] {
                h.fetch_add(1, Ordering::Relaxed);
            }
        });
        for (i, h) in hits.iter().enumerate() {
            assert_eq!(
                h.load(Ordering::Relaxed),
                1,
                "index {i} of {n} (grain {grain})"
            );
        }
    }

    #[test]
    fn every_index_once() {
        for (n, grain) in [
            (0, 1),
            (1, 1),
            (2, 1),
            (7, 2),
            (1000, 1),
            (1000, 999),
            (1 << 16, 64),
        ] {
            visit_once(n, grain);
        }
        // Back to back, so workers are caught spinning, parking and waking.
        for i in 0..2000 {
            visit_once(64 + i % 7, 8);
            if i % 500 == 0 {
                std::thread::sleep(SPIN * 2);
            }
        }
    }

    #[test]
    fn nested_loops_run_on_their_caller() {
        let total = AtomicUsize::new(0);
        for_range(64, 1, |s, e| {
            for _ in s..e {
                for_range(100, 1, |a, b| {
                    total.fetch_add(b - a, Ordering::Relaxed);
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 6400);
    }

    #[test]
    fn loops_from_many_threads() {
        std::thread::scope(|s| {
            for t in 0..4usize {
                s.spawn(move || {
                    for i in 0..300usize {
                        let sum = AtomicUsize::new(0);
                        let n = 1000 + t * 10 + i % 13;
                        for_range(n, 16, |a, b| {
                            sum.fetch_add((a..b).sum::<usize>(), Ordering::Relaxed);
                        });
                        assert_eq!(sum.load(Ordering::Relaxed), n * (n - 1) / 2);
                    }
                });
            }
        });
    }

    #[test]
    fn a_panicking_chunk_reaches_the_caller_and_the_pool_survives() {
        let r = std::panic::catch_unwind(|| {
            // Any chunk reaching past 500 panics (also the single chunk of a loop that runs
            // on its caller because another test holds the pool).
            for_range(1000, 1, |s, e| {
                if e > 500 {
                    panic!("chunk {s}..{e}");
                }
            })
        });
        assert!(r.is_err(), "the panic was lost");
        visit_once(1000, 1);
    }
}
