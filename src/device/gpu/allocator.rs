//! The caching device allocator, in the spirit of PyTorch's `CUDACachingAllocator`.
//!
//! Device memory is obtained from the vendor in *segments* (`raw_alloc`) and handed out in
//! *blocks* carved from them. A freed block goes back to a pool instead of the vendor, so the
//! next allocation of a similar size costs a hash-map look-up instead of a device-wide
//! `hipMalloc`/`hipFree` synchronization.
//!
//! * Sizes are rounded up to [`ROUND`] (512) bytes.
//! * Two pools: *small* (rounded size <= [`SMALL_SIZE`], 1 MiB) carves [`SMALL_SEGMENT`]
//!   (2 MiB) segments; *large* (> 1 MiB) gets segments of the size rounded up to
//!   [`LARGE_ROUND`] (2 MiB), so a big allocation takes exactly the segment it needs.
//! * Best fit: the smallest free block of the pool that is large enough and usable by the
//!   requesting stream. A block larger than needed is split (small pool: when at least 512
//!   bytes remain; large pool: when more than 1 MiB remains); on free a block is merged with
//!   its free neighbours of the same segment.
//! * Stream-ordered reuse: a freed block is reusable at once by the stream it was used on
//!   (work on one stream runs in order). Another stream may take it only after an event
//!   recorded on the freeing stream has completed; the event is recorded lazily, the first time
//!   another stream wants the block, which covers all work submitted before the free. A block
//!   that [`CachingAllocator::record_stream`] marked as used on other streams is withheld from
//!   the pool until events recorded on each of those streams at free time complete.
//! * Out of memory: synchronize the device, release every cached segment, retry once; then
//!   `ErrorKind::OutOfMemory` with the requested, allocated and reserved bytes.
//! * Device-graph capture ([`CachingAllocator::capture_begin`]): while a capture is active, a
//!   freed block is *held* instead of going back to the pool, since the captured graph may
//!   write into it on every replay; [`CachingAllocator::capture_end`] hands the captures'
//!   held blocks to the graph, and [`CachingAllocator::release_held`] frees them for real
//!   when the graph is destroyed (a block freed during several overlapping captures waits
//!   for all of them). Held blocks count as allocated until then. No event is recorded on a
//!   stream while a capture is active (a record on a capturing or legacy-default stream
//!   would break the capture): blocks that would need one are skipped.
//!
//! One mutex guards the state; every method may be called from any thread.

use crate::device::{DevPtr, RawStream};
use crate::{Error, ErrorKind, Result};
use parking_lot::Mutex;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// Rounding granularity of every block.
pub const ROUND: usize = 512;
/// Largest rounded size served by the small pool.
pub const SMALL_SIZE: usize = 1 << 20;
/// Segment size of the small pool.
pub const SMALL_SEGMENT: usize = 2 << 20;
/// Large-pool segments are multiples of this.
pub const LARGE_ROUND: usize = 2 << 20;

/// What the allocator needs from a device: raw memory, synchronization and events. The GPU
/// device implements it over its vendor table; tests implement it over host memory.
pub trait MemoryBackend: Send + Sync + 'static {
    /// Allocates a segment; `ErrorKind::OutOfMemory` when the device has no room.
    fn raw_alloc(&self, bytes: usize) -> Result<DevPtr>;
    fn raw_free(&self, ptr: DevPtr) -> Result<()>;
    /// (free, total) bytes of device memory.
    fn mem_info(&self) -> Result<(u64, u64)>;
    /// Waits for all work on the device.
    fn synchronize(&self) -> Result<()>;
    fn event_create(&self) -> Result<u64>;
    fn event_record(&self, event: u64, stream: RawStream) -> Result<()>;
    /// True when the work before the event's last record has completed.
    fn event_query(&self, event: u64) -> Result<bool>;
    fn event_destroy(&self, event: u64);
    fn host_alloc_pinned(&self, bytes: usize) -> Result<*mut u8>;
    fn host_free_pinned(&self, ptr: *mut u8) -> Result<()>;
}

/// Allocator settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocatorConfig {
    /// Cache freed blocks (true) or return every block to the device at once (false).
    pub pooling: bool,
    /// Bytes [`CachingAllocator::warmup`] reserves when given no sizes (0: nothing).
    pub initial_pool_bytes: u64,
    /// Upper bound on reserved bytes (0: no bound besides the device's memory). A request
    /// that would pass it frees the cache and retries, then fails with OutOfMemory.
    pub max_pool_bytes: u64,
}

impl Default for AllocatorConfig {
    fn default() -> Self {
        AllocatorConfig {
            pooling: true,
            initial_pool_bytes: 0,
            max_pool_bytes: 0,
        }
    }
}

/// Counters of one allocator. "Current" values are exact at all times; peaks and counters
/// restart at [`CachingAllocator::reset_stats`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes in blocks handed out and not yet freed (rounded sizes).
    pub allocated_bytes: u64,
    pub peak_allocated_bytes: u64,
    /// Bytes in segments obtained from the device.
    pub reserved_bytes: u64,
    pub peak_reserved_bytes: u64,
    /// Allocated bytes plus freed blocks still waiting for other streams' events.
    pub active_bytes: u64,
    pub peak_active_bytes: u64,
    /// Bytes the callers asked for (unrounded) in live blocks.
    pub requested_bytes: u64,
    pub num_allocations: u64,
    pub num_deallocations: u64,
    /// Allocations served from the cache.
    pub cache_hits: u64,
    /// Allocations that needed a new segment.
    pub cache_misses: u64,
    pub segment_allocations: u64,
    pub segment_frees: u64,
    /// Times an out-of-memory was answered by freeing the cache and retrying.
    pub num_alloc_retries: u64,
    /// Allocations that failed with OutOfMemory after the retry.
    pub num_ooms: u64,
    /// Segments held now.
    pub num_segments: u64,
    /// Blocks handed out now.
    pub num_active_blocks: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Pool {
    Small,
    Large,
}

/// Whether a free block may be taken by a stream other than its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ready {
    /// Any stream may take it.
    Clean,
    /// Freed on its stream; no event recorded yet.
    Unrecorded,
    /// An event (id, sequence number) was recorded on its stream after the free.
    Recorded(u64, u64),
}

#[derive(Debug)]
struct Block {
    size: usize,
    /// Base address of the segment holding the block.
    seg: u64,
    pool: Pool,
    stream: RawStream,
    allocated: bool,
    requested: usize,
    /// Other streams the block was used on (record_stream).
    uses: HashSet<RawStream>,
    /// Events that must complete before a freed block returns to the pool.
    pending: Vec<u64>,
    ready: Ready,
}

#[derive(Debug)]
struct Segment {
    size: usize,
}

struct State {
    config: AllocatorConfig,
    blocks: BTreeMap<u64, Block>,
    segments: HashMap<u64, Segment>,
    /// Free blocks in the pools, by (size, address).
    free: [BTreeSet<(usize, u64)>; 2],
    /// Freed blocks waiting for their record_stream events.
    waiting: Vec<u64>,
    /// Spare events for reuse.
    spare_events: Vec<u64>,
    event_seq: u64,
    stats: MemoryStats,
    /// False once an event completion made two free neighbours mergeable without merging
    /// them (they are merged at the next synchronization); for check_invariants.
    strict_merge: bool,
    /// Active device-graph captures, by token: the blocks freed since each began.
    captures: HashMap<u64, Vec<u64>>,
    next_capture: u64,
    /// Blocks freed while a capture was active, not yet released.
    held: HashMap<u64, Held>,
}

/// A block freed during a device-graph capture.
#[derive(Clone, Copy, Debug)]
struct Held {
    /// The stream it was freed on (the free is replayed with it at release).
    stream: RawStream,
    /// Captures and graphs still holding it.
    refs: usize,
}

/// The caching allocator of one device. `Send + Sync`; see the module documentation.
pub struct CachingAllocator<B: MemoryBackend> {
    backend: Arc<B>,
    state: Mutex<State>,
}

/// Rounds a request up to the block granularity (0 bytes take one granule).
pub fn round_size(bytes: usize) -> Result<usize> {
    if bytes == 0 {
        return Ok(ROUND);
    }
    bytes
        .checked_add(ROUND - 1)
        .map(|b| b / ROUND * ROUND)
        .ok_or_else(|| Error::oom(format!("cannot allocate {bytes} bytes: the size overflows")))
}

fn pool_of(size: usize) -> Pool {
    if size <= SMALL_SIZE {
        Pool::Small
    } else {
        Pool::Large
    }
}

fn segment_size(size: usize) -> Result<usize> {
    if size <= SMALL_SIZE {
        Ok(SMALL_SEGMENT)
    } else {
        size.checked_add(LARGE_ROUND - 1)
            .map(|b| b / LARGE_ROUND * LARGE_ROUND)
            .ok_or_else(|| Error::oom(format!("cannot allocate {size} bytes: the size overflows")))
    }
}

fn should_split(pool: Pool, block: usize, want: usize) -> bool {
    let rest = block - want;
    match pool {
        Pool::Small => rest >= ROUND,
        Pool::Large => rest > SMALL_SIZE,
    }
}

fn pidx(p: Pool) -> usize {
    match p {
        Pool::Small => 0,
        Pool::Large => 1,
    }
}

fn mib(b: u64) -> String {
    format!("{b} bytes ({:.2} MiB)", b as f64 / (1u64 << 20) as f64)
}

impl State {
    fn bump_allocated(&mut self, size: usize, requested: usize) {
        let s = &mut self.stats;
        s.allocated_bytes += size as u64;
        s.peak_allocated_bytes = s.peak_allocated_bytes.max(s.allocated_bytes);
        s.active_bytes += size as u64;
        s.peak_active_bytes = s.peak_active_bytes.max(s.active_bytes);
        s.requested_bytes += requested as u64;
        s.num_active_blocks += 1;
    }
}

impl<B: MemoryBackend> CachingAllocator<B> {
    pub fn new(backend: B, config: AllocatorConfig) -> Self {
        Self::with_backend(Arc::new(backend), config)
    }

    /// An allocator over a backend shared with others (e.g. the pinned host pool).
    pub fn with_backend(backend: Arc<B>, config: AllocatorConfig) -> Self {
        CachingAllocator {
            backend,
            state: Mutex::new(State {
                config,
                blocks: BTreeMap::new(),
                segments: HashMap::new(),
                free: [BTreeSet::new(), BTreeSet::new()],
                waiting: Vec::new(),
                spare_events: Vec::new(),
                event_seq: 0,
                stats: MemoryStats::default(),
                strict_merge: true,
                captures: HashMap::new(),
                next_capture: 1,
                held: HashMap::new(),
            }),
        }
    }

    pub fn backend(&self) -> &Arc<B> {
        &self.backend
    }

    pub fn config(&self) -> AllocatorConfig {
        self.state.lock().config
    }

    /// Allocates `bytes` for use on `stream`.
    pub fn allocate(&self, bytes: usize, stream: RawStream) -> Result<DevPtr> {
        let size = round_size(bytes)?;
        let mut st = self.state.lock();
        self.process_waiting(&mut st);
        let pool = pool_of(size);
        if st.config.pooling
            && let Some(ptr) = self.find_free(&mut st, pool, size, stream)?
        {
            st.stats.cache_hits += 1;
            self.take_block(&mut st, ptr, size, bytes, stream);
            return Ok(DevPtr(ptr));
        }
        let seg_size = if st.config.pooling {
            segment_size(size)?
        } else {
            size
        };
        let seg = match self.alloc_segment(&mut st, seg_size, bytes, pool, size, stream)? {
            Ok(seg) => seg,
            Err(cached) => {
                // The synchronization of the OOM protocol freed a cached block.
                st.stats.cache_hits += 1;
                self.take_block(&mut st, cached, size, bytes, stream);
                return Ok(DevPtr(cached));
            }
        };
        st.stats.cache_misses += 1;
        st.blocks.insert(
            seg,
            Block {
                size: seg_size,
                seg,
                pool,
                stream,
                allocated: false,
                requested: 0,
                uses: HashSet::new(),
                pending: Vec::new(),
                ready: Ready::Clean,
            },
        );
        self.take_block(&mut st, seg, size, bytes, stream);
        Ok(DevPtr(seg))
    }

    /// Frees a block from [`Self::allocate`]. `stream` is the stream whose work last used it:
    /// when it is not the block's own stream it counts as a [`Self::record_stream`].
    /// A pointer this allocator did not hand out (or already freed) is InvalidArgument and
    /// changes nothing.
    pub fn deallocate(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        let mut st = self.state.lock();
        let st = &mut *st;
        match st.blocks.get(&ptr.0) {
            Some(b) if b.allocated && !st.held.contains_key(&ptr.0) => {}
            _ => {
                return Err(Error::invalid(format!(
                    "pointer {:#x} was not allocated by this device's allocator, or was already freed",
                    ptr.0
                )));
            }
        }
        if !st.captures.is_empty() {
            // A graph being captured may write into the block on every replay: hold it.
            st.held.insert(
                ptr.0,
                Held {
                    stream,
                    refs: st.captures.len(),
                },
            );
            for blocks in st.captures.values_mut() {
                blocks.push(ptr.0);
            }
            return Ok(());
        }
        self.deallocate_locked(st, ptr.0, stream);
        Ok(())
    }

    /// Starts holding the blocks freed from now on for a device-graph capture (see the
    /// module documentation); returns the capture's token for [`Self::capture_end`].
    pub fn capture_begin(&self) -> u64 {
        let mut st = self.state.lock();
        let token = st.next_capture;
        st.next_capture += 1;
        st.captures.insert(token, Vec::new());
        token
    }

    /// Ends capture `token` and returns the blocks freed while it was active. They stay
    /// held (by the graph) until [`Self::release_held`]; a capture that produced no graph
    /// releases them at once. An unknown token gives nothing.
    pub fn capture_end(&self, token: u64) -> Vec<DevPtr> {
        let mut st = self.state.lock();
        st.captures
            .remove(&token)
            .unwrap_or_default()
            .into_iter()
            .map(DevPtr)
            .collect()
    }

    /// Gives back blocks from [`Self::capture_end`]: each is freed for real (into the pool,
    /// ordered on the stream it was freed on) once no capture or graph holds it any more
    /// (while a capture is active, the active captures take it over instead). The caller
    /// has made sure no replay that may use them is still running.
    pub fn release_held(&self, blocks: &[DevPtr]) {
        let mut st = self.state.lock();
        let st = &mut *st;
        for p in blocks {
            let Some(h) = st.held.get_mut(&p.0) else {
                continue;
            };
            h.refs -= 1;
            if h.refs > 0 {
                continue;
            }
            if !st.captures.is_empty() {
                // Nothing returns to the pool while a capture is active (the free could
                // record an event on the capturing stream): the captures take it over.
                h.refs = st.captures.len();
                for blocks in st.captures.values_mut() {
                    blocks.push(p.0);
                }
                continue;
            }
            let stream = h.stream;
            st.held.remove(&p.0);
            self.deallocate_locked(st, p.0, stream);
        }
    }

    /// Bytes in held blocks (freed during a device-graph capture, not yet released).
    pub fn held_bytes(&self) -> u64 {
        let st = self.state.lock();
        st.held.keys().map(|p| st.blocks[p].size as u64).sum()
    }

    /// Frees allocated block `ptr` (checked by the caller) after its last use on `stream`.
    fn deallocate_locked(&self, st: &mut State, ptr: u64, stream: RawStream) {
        let b = st.blocks.get_mut(&ptr).expect("an allocated block");
        if stream != b.stream {
            b.uses.insert(stream);
        }
        b.allocated = false;
        let (size, requested) = (b.size, b.requested);
        b.requested = 0;
        st.stats.allocated_bytes -= size as u64;
        st.stats.requested_bytes -= requested as u64;
        st.stats.num_active_blocks -= 1;
        st.stats.num_deallocations += 1;
        if !b.uses.is_empty() {
            let uses: Vec<RawStream> = b.uses.drain().collect();
            let mut evs = Vec::with_capacity(uses.len());
            for s in uses {
                match self.get_event(&mut st.spare_events) {
                    Ok(ev) => {
                        if self.backend.event_record(ev, s).is_err() {
                            st.spare_events.push(ev);
                            // Without an event the only safe order is a full synchronization.
                            let _ = self.backend.synchronize();
                        } else {
                            evs.push(ev);
                        }
                    }
                    Err(_) => {
                        let _ = self.backend.synchronize();
                    }
                }
            }
            let b = st.blocks.get_mut(&ptr).expect("block exists");
            b.pending = evs;
            b.ready = Ready::Unrecorded;
            st.waiting.push(ptr);
            return;
        }
        b.ready = Ready::Unrecorded;
        self.free_block(st, ptr);
    }

    /// Marks the block holding `ptr` as used on `stream` too: when freed, it returns to the
    /// pool only after the work queued on `stream` until then has completed.
    pub fn record_stream(&self, ptr: DevPtr, stream: RawStream) -> Result<()> {
        let mut st = self.state.lock();
        let held = st.held.contains_key(&ptr.0);
        match st.blocks.get_mut(&ptr.0) {
            Some(b) if b.allocated && !held => {
                if stream != b.stream {
                    b.uses.insert(stream);
                }
                Ok(())
            }
            _ => Err(Error::invalid(format!(
                "record_stream: pointer {:#x} is not a live allocation of this device's allocator",
                ptr.0
            ))),
        }
    }

    /// The live allocation holding `[ptr, ptr + bytes)`, as (base, size asked for); InvalidArgument
    /// when the range is not inside one.
    pub fn check_range(&self, ptr: DevPtr, bytes: usize) -> Result<(DevPtr, usize)> {
        let st = self.state.lock();
        if let Some((&base, b)) = st.blocks.range(..=ptr.0).next_back()
            && b.allocated
            && !st.held.contains_key(&base)
        {
            let off = ptr.0 - base;
            let req = b.requested as u64;
            if off < req.max(1) {
                if off.checked_add(bytes as u64).is_some_and(|end| end <= req) {
                    return Ok((DevPtr(base), b.requested));
                }
                return Err(Error::invalid(format!(
                    "{bytes} bytes at {:#x} run past the end of the {req}-byte allocation at {base:#x}",
                    ptr.0
                )));
            }
        }
        Err(Error::invalid(format!(
            "{:#x} is not inside a live allocation of this device's allocator",
            ptr.0
        )))
    }

    /// Tells the allocator that `stream` is about to be destroyed; the caller has
    /// synchronized it (so all work it ran is complete). Its free blocks become usable by
    /// every stream, blocks still handed out on it count as the default stream's, and no
    /// event is ever recorded on it again. Call it before destroying the stream handle.
    pub fn stream_destroyed(&self, stream: RawStream) {
        if stream == RawStream::DEFAULT {
            return;
        }
        let mut st = self.state.lock();
        let st = &mut *st;
        for h in st.held.values_mut() {
            if h.stream == stream {
                h.stream = RawStream::DEFAULT;
            }
        }
        let mut spare = Vec::new();
        for (&p, b) in st.blocks.iter_mut() {
            b.uses.remove(&stream);
            if b.stream != stream {
                continue;
            }
            if b.allocated || st.waiting.contains(&p) {
                b.stream = RawStream::DEFAULT;
            } else {
                if let Ready::Recorded(ev, _) = b.ready {
                    spare.push(ev);
                }
                b.ready = Ready::Clean;
            }
        }
        st.spare_events.extend(spare);
        self.coalesce_all(st);
    }

    pub fn stats(&self) -> MemoryStats {
        self.state.lock().stats
    }

    /// Keeps the current values; resets peaks to them and the counters to zero.
    pub fn reset_stats(&self) {
        let mut st = self.state.lock();
        let s = st.stats;
        st.stats = MemoryStats {
            allocated_bytes: s.allocated_bytes,
            peak_allocated_bytes: s.allocated_bytes,
            reserved_bytes: s.reserved_bytes,
            peak_reserved_bytes: s.reserved_bytes,
            active_bytes: s.active_bytes,
            peak_active_bytes: s.active_bytes,
            requested_bytes: s.requested_bytes,
            num_segments: s.num_segments,
            num_active_blocks: s.num_active_blocks,
            ..MemoryStats::default()
        };
    }

    /// Synchronizes the device and returns every unused cached segment to it (clear_pool).
    pub fn empty_cache(&self) -> Result<()> {
        let mut st = self.state.lock();
        self.backend.synchronize()?;
        self.all_events_done(&mut st);
        self.release_cached(&mut st)?;
        for ev in st.spare_events.drain(..) {
            self.backend.event_destroy(ev);
        }
        Ok(())
    }

    /// (free, total) bytes of the device.
    pub fn memory_info(&self) -> Result<(u64, u64)> {
        self.backend.mem_info()
    }

    /// Changes the settings. Turning pooling off releases the cache.
    pub fn set_config(&self, config: AllocatorConfig) -> Result<()> {
        let was = {
            let mut st = self.state.lock();
            std::mem::replace(&mut st.config, config)
        };
        if was.pooling && !config.pooling {
            self.empty_cache()?;
        }
        Ok(())
    }

    /// Fills the cache: allocates each size on the default stream, then frees them all, so
    /// later requests of those sizes are cache hits. Empty `sizes` reserves
    /// `initial_pool_bytes` as one block. Nothing is cached when pooling is off.
    pub fn warmup(&self, sizes: &[usize]) -> Result<()> {
        let cfg = self.config();
        if !cfg.pooling {
            return Ok(());
        }
        let default;
        let sizes = if sizes.is_empty() {
            default = [cfg.initial_pool_bytes as usize];
            if default[0] == 0 {
                return Ok(());
            }
            &default[..]
        } else {
            sizes
        };
        let mut got = Vec::with_capacity(sizes.len());
        let mut res = Ok(());
        for &s in sizes {
            match self.allocate(s, RawStream::DEFAULT) {
                Ok(p) => got.push(p),
                Err(e) => {
                    res = Err(e);
                    break;
                }
            }
        }
        for p in got {
            self.deallocate(p, RawStream::DEFAULT)?;
        }
        res
    }

    /// (base, size) of every segment held, by address (for tests and diagnostics).
    pub fn segments(&self) -> Vec<(DevPtr, usize)> {
        let st = self.state.lock();
        let mut v: Vec<_> = st
            .segments
            .iter()
            .map(|(&p, s)| (DevPtr(p), s.size))
            .collect();
        v.sort_by_key(|s| s.0.0);
        v
    }

    /// Checks the internal invariants (blocks tile their segments, free sets match the
    /// blocks, no two mergeable free neighbours, stats match); for tests.
    pub fn check_invariants(&self) -> Result<()> {
        let st = self.state.lock();
        let strict = st
            .blocks
            .values()
            .all(|b| b.allocated || b.ready == Ready::Clean)
            && st.strict_merge;
        let bad = |m: String| Err(Error::internal(format!("allocator invariant: {m}")));
        let mut reserved = 0u64;
        let mut allocated = 0u64;
        let mut nblocks = 0u64;
        let mut waiting_bytes = 0u64;
        for (&seg, s) in &st.segments {
            reserved += s.size as u64;
            let mut at = seg;
            let end = seg + s.size as u64;
            let mut prev_free: Option<(RawStream, Ready)> = None;
            while at < end {
                let Some(b) = st.blocks.get(&at) else {
                    return bad(format!("hole at {at:#x} in segment {seg:#x}"));
                };
                if b.seg != seg {
                    return bad(format!("block {at:#x} names segment {:#x}", b.seg));
                }
                let in_free = st.free[pidx(b.pool)].contains(&(b.size, at));
                let waiting = st.waiting.contains(&at);
                if b.allocated {
                    allocated += b.size as u64;
                    nblocks += 1;
                    if in_free || waiting {
                        return bad(format!("allocated block {at:#x} is in a free list"));
                    }
                    prev_free = None;
                } else if waiting {
                    waiting_bytes += b.size as u64;
                    if in_free {
                        return bad(format!("waiting block {at:#x} is free too"));
                    }
                    prev_free = None;
                } else {
                    if !in_free {
                        return bad(format!("free block {at:#x} is not in its pool"));
                    }
                    // Neighbours freed on different streams may stay apart until their
                    // events are known to be complete; two clean ones never do.
                    if let Some((_, pr)) = prev_free
                        && pr == Ready::Clean
                        && b.ready == Ready::Clean
                        && strict
                    {
                        return bad(format!(
                            "free block {at:#x} was not merged with its free neighbour"
                        ));
                    }
                    prev_free = Some((b.stream, b.ready));
                }
                at += b.size as u64;
            }
            if at != end {
                return bad(format!("segment {seg:#x} blocks overrun its end"));
            }
        }
        let free_count: usize = st.free.iter().map(|f| f.len()).sum();
        let free_blocks = st
            .blocks
            .values()
            .filter(|b| !b.allocated)
            .count()
            .saturating_sub(st.waiting.len());
        if free_count != free_blocks {
            return bad(format!(
                "{free_count} blocks in the pools, {free_blocks} free blocks"
            ));
        }
        let s = &st.stats;
        if s.reserved_bytes != reserved
            || s.allocated_bytes != allocated
            || s.num_active_blocks != nblocks
            || s.active_bytes != allocated + waiting_bytes
            || s.num_segments != st.segments.len() as u64
        {
            return bad(format!(
                "stats {s:?} disagree with the blocks (reserved {reserved}, allocated {allocated}, blocks {nblocks}, waiting {waiting_bytes})"
            ));
        }
        Ok(())
    }

    // ---- internals (called with the lock held) ----

    fn get_event(&self, spare: &mut Vec<u64>) -> Result<u64> {
        match spare.pop() {
            Some(e) => Ok(e),
            None => self.backend.event_create(),
        }
    }

    /// True when stream `stream` may take free block `ptr` now; records or queries the
    /// block's event as needed.
    fn usable(&self, st: &mut State, ptr: u64, stream: RawStream) -> bool {
        let (bstream, ready) = {
            let b = &st.blocks[&ptr];
            (b.stream, b.ready)
        };
        if bstream == stream || ready == Ready::Clean {
            return true;
        }
        if ready == Ready::Unrecorded && !st.captures.is_empty() {
            // Recording the event could break an active capture (see the module docs).
            return false;
        }
        let ev = match ready {
            Ready::Recorded(ev, _) => ev,
            Ready::Unrecorded => {
                let Ok(ev) = self.get_event(&mut st.spare_events) else {
                    return false;
                };
                if self.backend.event_record(ev, bstream).is_err() {
                    st.spare_events.push(ev);
                    return false;
                }
                st.event_seq += 1;
                let seq = st.event_seq;
                st.blocks.get_mut(&ptr).expect("block").ready = Ready::Recorded(ev, seq);
                ev
            }
            Ready::Clean => unreachable!(),
        };
        if self.backend.event_query(ev).unwrap_or(false) {
            st.blocks.get_mut(&ptr).expect("block").ready = Ready::Clean;
            st.strict_merge = false;
            st.spare_events.push(ev);
            true
        } else {
            false
        }
    }

    fn find_free(
        &self,
        st: &mut State,
        pool: Pool,
        size: usize,
        stream: RawStream,
    ) -> Result<Option<u64>> {
        // Best fit among the blocks this stream may use; the walk is in (size, address)
        // order, so the first usable block is the smallest.
        let mut from = std::ops::Bound::Included((size, 0u64));
        loop {
            let next = st.free[pidx(pool)]
                .range((from, std::ops::Bound::Unbounded))
                .next()
                .copied();
            let Some((bsize, p)) = next else { break };
            if self.usable(st, p, stream) {
                return Ok(Some(p));
            }
            from = std::ops::Bound::Excluded((bsize, p));
        }
        Ok(None)
    }

    /// Hands out free block `ptr` (already chosen) for `size` bytes, splitting off the rest.
    fn take_block(
        &self,
        st: &mut State,
        ptr: u64,
        size: usize,
        requested: usize,
        stream: RawStream,
    ) {
        let (bsize, pool, seg, ready, bstream) = {
            let b = &st.blocks[&ptr];
            (b.size, b.pool, b.seg, b.ready, b.stream)
        };
        st.free[pidx(pool)].remove(&(bsize, ptr));
        let mut taken = bsize;
        if st.config.pooling && should_split(pool, bsize, size) {
            let rest = ptr + size as u64;
            // The remainder keeps the block's stream and readiness (an event recorded on the
            // block's stream covers the remainder as well).
            let rest_ready = if bstream == stream {
                ready
            } else {
                st.strict_merge = false;
                Ready::Clean
            };
            st.blocks.insert(
                rest,
                Block {
                    size: bsize - size,
                    seg,
                    pool,
                    stream: bstream,
                    allocated: false,
                    requested: 0,
                    uses: HashSet::new(),
                    pending: Vec::new(),
                    ready: rest_ready,
                },
            );
            st.free[pidx(pool)].insert((bsize - size, rest));
            taken = size;
        } else if let Ready::Recorded(ev, _) = ready {
            st.spare_events.push(ev);
        }
        let b = st.blocks.get_mut(&ptr).expect("block");
        b.size = taken;
        b.allocated = true;
        b.requested = requested;
        b.stream = stream;
        b.ready = Ready::Clean;
        b.uses.clear();
        st.stats.num_allocations += 1;
        st.bump_allocated(taken, requested);
    }

    /// One attempt at a new segment: the pool limit, then the backend.
    fn try_segment(&self, st: &mut State, seg_size: usize) -> Result<u64> {
        if st.config.max_pool_bytes > 0
            && st.stats.reserved_bytes + seg_size as u64 > st.config.max_pool_bytes
        {
            return Err(Error::oom("the pool's maximum size would be exceeded"));
        }
        let ptr = self.backend.raw_alloc(seg_size)?;
        st.segments.insert(ptr.0, Segment { size: seg_size });
        let s = &mut st.stats;
        s.segment_allocations += 1;
        s.num_segments += 1;
        s.reserved_bytes += seg_size as u64;
        s.peak_reserved_bytes = s.peak_reserved_bytes.max(s.reserved_bytes);
        Ok(ptr.0)
    }

    /// Gets a segment with the out-of-memory protocol: on OOM, synchronize the device;
    /// a cached block that this made usable serves the request (`Ok(Err(block))`); else
    /// release every cached segment and try once more.
    #[allow(clippy::too_many_arguments)]
    fn alloc_segment(
        &self,
        st: &mut State,
        seg_size: usize,
        requested: usize,
        pool: Pool,
        size: usize,
        stream: RawStream,
    ) -> Result<std::result::Result<u64, u64>> {
        let e = match self.try_segment(st, seg_size) {
            Ok(p) => return Ok(Ok(p)),
            Err(e) if e.kind == ErrorKind::OutOfMemory => e,
            Err(e) => return Err(e),
        };
        st.stats.num_alloc_retries += 1;
        self.backend.synchronize()?;
        self.all_events_done(st);
        if st.config.pooling
            && let Some(b) = self.find_free(st, pool, size, stream)?
        {
            return Ok(Err(b));
        }
        self.release_cached(st)?;
        match self.try_segment(st, seg_size) {
            Ok(p) => Ok(Ok(p)),
            Err(e2) if e2.kind == ErrorKind::OutOfMemory => {
                st.stats.num_ooms += 1;
                let (free, total) = self.backend.mem_info().unwrap_or((0, 0));
                let limit = if st.config.max_pool_bytes > 0 {
                    format!(", pool limit {}", mib(st.config.max_pool_bytes))
                } else {
                    String::new()
                };
                Err(Error::oom(format!(
                    "out of device memory: tried to allocate {} (segment of {}); {} allocated, {} reserved by the allocator, device free {} of {}{limit} ({}; first attempt: {})",
                    mib(requested as u64),
                    mib(seg_size as u64),
                    mib(st.stats.allocated_bytes),
                    mib(st.stats.reserved_bytes),
                    mib(free),
                    mib(total),
                    e2.message,
                    e.message
                )))
            }
            Err(e2) => Err(e2),
        }
    }

    /// Puts a freed, not-waiting block into its pool, merging it with free neighbours, and
    /// releases its segment when pooling is off and the segment is entirely free.
    fn free_block(&self, st: &mut State, ptr: u64) {
        let mut ptr = ptr;
        let (size, pool, seg) = {
            let b = &st.blocks[&ptr];
            (b.size, b.pool, b.seg)
        };
        st.stats.active_bytes -= size as u64;
        st.free[pidx(pool)].insert((size, ptr));
        // Merge with the previous block.
        let prev = st
            .blocks
            .range(..ptr)
            .next_back()
            .map(|(&p, b)| (p, b.size, b.seg));
        if let Some((p, psize, pseg)) = prev
            && pseg == seg
            && p + psize as u64 == ptr
            && self.mergeable(st, p, ptr)
        {
            self.merge(st, p, ptr);
            ptr = p;
        }
        let next = ptr + st.blocks[&ptr].size as u64;
        if st.blocks.get(&next).is_some_and(|b| b.seg == seg) && self.mergeable(st, ptr, next) {
            self.merge(st, ptr, next);
        }
        if !st.config.pooling {
            let b = &st.blocks[&ptr];
            if st.segments.get(&seg).is_some_and(|s| s.size == b.size) {
                let _ = self.release_segment(st, seg);
            }
        }
    }

    /// Whether free neighbours `a` and `b` (both in their pool) may be merged.
    fn mergeable(&self, st: &mut State, a: u64, b: u64) -> bool {
        let listed = |p: u64, st: &State| {
            let x = &st.blocks[&p];
            !x.allocated && st.free[pidx(x.pool)].contains(&(x.size, p))
        };
        if !listed(a, st) || !listed(b, st) {
            return false;
        }
        let (sa, ra) = (st.blocks[&a].stream, st.blocks[&a].ready);
        let (sb, rb) = (st.blocks[&b].stream, st.blocks[&b].ready);
        if sa == sb || ra == Ready::Clean || rb == Ready::Clean {
            return true;
        }
        // Different streams, both possibly busy: merge if one of them turns out to be done.
        for (p, r) in [(a, ra), (b, rb)] {
            if let Ready::Recorded(ev, _) = r
                && self.backend.event_query(ev).unwrap_or(false)
            {
                st.blocks.get_mut(&p).expect("block").ready = Ready::Clean;
                st.spare_events.push(ev);
                st.strict_merge = false;
                return true;
            }
        }
        false
    }

    /// Merges free block `b` into its free left neighbour `a` (both in their pool; the
    /// merged block is put back in it).
    fn merge(&self, st: &mut State, a: u64, b: u64) {
        let bb = st.blocks.remove(&b).expect("block");
        st.free[pidx(bb.pool)].remove(&(bb.size, b));
        let ab = st.blocks.get(&a).expect("block");
        st.free[pidx(ab.pool)].remove(&(ab.size, a));
        let (ra, rb, sa, sb) = (ab.ready, bb.ready, ab.stream, bb.stream);
        // The merged block must wait for whichever side is the more restrictive.
        let (stream, ready, spare) = if ra == Ready::Clean {
            (sb, rb, None)
        } else if rb == Ready::Clean {
            (sa, ra, None)
        } else {
            debug_assert_eq!(sa, sb);
            match (ra, rb) {
                (Ready::Unrecorded, Ready::Recorded(e, _)) => (sa, Ready::Unrecorded, Some(e)),
                (Ready::Recorded(e, _), Ready::Unrecorded) => (sa, Ready::Unrecorded, Some(e)),
                (Ready::Recorded(e1, s1), Ready::Recorded(e2, s2)) => {
                    if s1 >= s2 {
                        (sa, ra, Some(e2))
                    } else {
                        (sa, rb, Some(e1))
                    }
                }
                _ => (sa, Ready::Unrecorded, None),
            }
        };
        if let Some(e) = spare {
            st.spare_events.push(e);
        }
        let ab = st.blocks.get_mut(&a).expect("block");
        ab.size += bb.size;
        ab.stream = stream;
        ab.ready = ready;
        let (size, pool) = (ab.size, ab.pool);
        st.free[pidx(pool)].insert((size, a));
    }

    /// Moves waiting blocks whose events all completed into the pool.
    fn process_waiting(&self, st: &mut State) {
        if st.waiting.is_empty() {
            return;
        }
        let waiting = std::mem::take(&mut st.waiting);
        let mut done = Vec::new();
        for p in waiting {
            let b = st.blocks.get_mut(&p).expect("waiting block");
            let mut left = Vec::new();
            for ev in b.pending.drain(..) {
                if self.backend.event_query(ev).unwrap_or(false) {
                    st.spare_events.push(ev);
                } else {
                    left.push(ev);
                }
            }
            let b = st.blocks.get_mut(&p).expect("waiting block");
            if left.is_empty() {
                done.push(p);
            } else {
                b.pending = left;
                st.waiting.push(p);
            }
        }
        for p in done {
            self.free_block(st, p);
        }
    }

    /// After a device synchronization: every event has completed.
    fn all_events_done(&self, st: &mut State) {
        let waiting = std::mem::take(&mut st.waiting);
        for &p in &waiting {
            let b = st.blocks.get_mut(&p).expect("waiting block");
            let evs: Vec<u64> = b.pending.drain(..).collect();
            st.spare_events.extend(evs);
        }
        let mut freed = Vec::new();
        for (_, b) in st.blocks.iter_mut() {
            if !b.allocated {
                if let Ready::Recorded(ev, _) = b.ready {
                    freed.push(ev);
                }
                b.ready = Ready::Clean;
            }
        }
        st.spare_events.extend(freed);
        for p in waiting {
            st.blocks.get_mut(&p).expect("block").ready = Ready::Clean;
            self.free_block(st, p);
        }
        self.coalesce_all(st);
    }

    /// Merges every pair of free neighbours that may be merged (after events completed).
    fn coalesce_all(&self, st: &mut State) {
        let addrs: Vec<u64> = st.blocks.keys().copied().collect();
        let mut prev: Option<u64> = None;
        for p in addrs {
            let Some(b) = st.blocks.get(&p) else { continue };
            let free = !b.allocated && st.free[pidx(b.pool)].contains(&(b.size, p));
            if !free {
                prev = None;
                continue;
            }
            if let Some(a) = prev {
                let ab = &st.blocks[&a];
                if ab.seg == b.seg && a + ab.size as u64 == p && self.mergeable(st, a, p) {
                    self.merge(st, a, p);
                    continue;
                }
            }
            prev = Some(p);
        }
        st.strict_merge = true;
    }

    /// Returns every entirely free segment to the backend.
    fn release_cached(&self, st: &mut State) -> Result<()> {
        let whole: Vec<u64> = st
            .segments
            .iter()
            .filter(|&(&seg, s)| {
                st.blocks.get(&seg).is_some_and(|b| {
                    b.size == s.size && st.free[pidx(b.pool)].contains(&(b.size, seg))
                })
            })
            .map(|(&seg, _)| seg)
            .collect();
        let mut res = Ok(());
        for seg in whole {
            if let Err(e) = self.release_segment(st, seg) {
                res = Err(e);
            }
        }
        res
    }

    fn release_segment(&self, st: &mut State, seg: u64) -> Result<()> {
        let size = st.segments[&seg].size;
        self.backend.raw_free(DevPtr(seg))?;
        let b = st.blocks.remove(&seg).expect("segment block");
        st.free[pidx(b.pool)].remove(&(b.size, seg));
        if let Ready::Recorded(ev, _) = b.ready {
            st.spare_events.push(ev);
        }
        st.segments.remove(&seg);
        let s = &mut st.stats;
        s.segment_frees += 1;
        s.num_segments -= 1;
        s.reserved_bytes -= size as u64;
        Ok(())
    }
}

impl<B: MemoryBackend> Drop for CachingAllocator<B> {
    fn drop(&mut self) {
        // Return what is cached; blocks still handed out stay with their owners.
        let _ = self.empty_cache();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::gpu::host::HostMemory;

    const S0: RawStream = RawStream::DEFAULT;
    const S1: RawStream = RawStream(1);
    const S2: RawStream = RawStream(2);

    fn sim(cap: Option<u64>) -> CachingAllocator<HostMemory> {
        CachingAllocator::new(HostMemory::simulated(cap), AllocatorConfig::default())
    }

    #[test]
    fn rounds_and_pools() {
        assert_eq!(round_size(0).unwrap(), 512);
        assert_eq!(round_size(1).unwrap(), 512);
        assert_eq!(round_size(512).unwrap(), 512);
        assert_eq!(round_size(513).unwrap(), 1024);
        assert!(round_size(usize::MAX).is_err());
        assert_eq!(segment_size(1000).unwrap(), SMALL_SEGMENT);
        assert_eq!(segment_size(SMALL_SIZE + 512).unwrap(), 2 << 20);
        assert_eq!(segment_size((5 << 20) + 512).unwrap(), 6 << 20);
        assert_eq!(segment_size(6 << 20).unwrap(), 6 << 20);
    }

    #[test]
    fn reuse_is_a_cache_hit() {
        let a = sim(None);
        let p = a.allocate(1000, S0).unwrap();
        a.deallocate(p, S0).unwrap();
        let q = a.allocate(1000, S0).unwrap();
        assert_eq!(p, q);
        let s = a.stats();
        assert_eq!((s.cache_hits, s.cache_misses), (1, 1));
        assert_eq!(s.segment_allocations, 1);
        assert_eq!(s.allocated_bytes, 1024);
        assert_eq!(s.reserved_bytes, SMALL_SEGMENT as u64);
        assert_eq!(s.requested_bytes, 1000);
        a.deallocate(q, S0).unwrap();
        a.check_invariants().unwrap();
    }

    #[test]
    fn split_and_merge() {
        let a = sim(None);
        let p1 = a.allocate(4096, S0).unwrap();
        let p2 = a.allocate(4096, S0).unwrap();
        let p3 = a.allocate(4096, S0).unwrap();
        // All three come from one small segment, back to back.
        assert_eq!(a.segments().len(), 1);
        assert_eq!(p2.0, p1.0 + 4096);
        assert_eq!(p3.0, p2.0 + 4096);
        a.check_invariants().unwrap();
        a.deallocate(p1, S0).unwrap();
        a.deallocate(p3, S0).unwrap();
        a.check_invariants().unwrap();
        // Freeing the middle merges all three and the tail back into one block.
        a.deallocate(p2, S0).unwrap();
        a.check_invariants().unwrap();
        // So the whole segment is one free block again: a 2 MiB - 512 request fits at p1.
        let big = a.allocate(SMALL_SIZE, S0).unwrap();
        assert_eq!(big, p1);
        assert_eq!(a.stats().segment_allocations, 1);
        a.deallocate(big, S0).unwrap();
        a.empty_cache().unwrap();
        assert_eq!(a.backend().live_allocations(), 0);
        assert_eq!(a.stats().reserved_bytes, 0);
    }

    #[test]
    fn large_pool_segments_and_split_threshold() {
        let a = sim(None);
        let p = a.allocate(3 << 20, S0).unwrap();
        assert_eq!(a.segments(), vec![(p, 4 << 20)]);
        a.deallocate(p, S0).unwrap();
        // 1.5 MiB from the 4 MiB block: 2.5 MiB remain (> 1 MiB), so it splits.
        let q = a.allocate(3 << 19, S0).unwrap();
        assert_eq!(q, p);
        let r = a.allocate(2 << 20, S0).unwrap();
        assert_eq!(r.0, p.0 + (3 << 19));
        assert_eq!(a.stats().segment_allocations, 1);
        // Small requests never come from the large pool.
        let s = a.allocate(100, S0).unwrap();
        assert_eq!(a.stats().segment_allocations, 2);
        for x in [q, r, s] {
            a.deallocate(x, S0).unwrap();
        }
        a.check_invariants().unwrap();
    }

    #[test]
    fn unknown_and_double_free_are_invalid() {
        let a = sim(None);
        let e = a.deallocate(DevPtr(0x1234), S0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidArgument);
        assert!(e.message.contains("0x1234"), "{}", e.message);
        let p = a.allocate(64, S0).unwrap();
        // An interior pointer is not an allocation either.
        assert_eq!(
            a.deallocate(p.offset(8), S0).unwrap_err().kind,
            ErrorKind::InvalidArgument
        );
        a.deallocate(p, S0).unwrap();
        assert_eq!(
            a.deallocate(p, S0).unwrap_err().kind,
            ErrorKind::InvalidArgument
        );
        assert_eq!(a.stats().num_deallocations, 1);
        a.check_invariants().unwrap();
    }

    #[test]
    fn check_range_bounds() {
        let a = sim(None);
        let p = a.allocate(100, S0).unwrap();
        assert_eq!(a.check_range(p, 100).unwrap(), (p, 100));
        assert_eq!(a.check_range(p.offset(50), 50).unwrap(), (p, 100));
        assert!(a.check_range(p.offset(50), 51).is_err());
        assert!(a.check_range(p.offset(100), 1).is_err());
        assert!(a.check_range(DevPtr(8), 1).is_err());
        assert!(a.check_range(p, usize::MAX).is_err());
        a.deallocate(p, S0).unwrap();
        assert!(a.check_range(p, 1).is_err());
    }

    #[test]
    fn blocks_freed_during_a_capture_are_held_until_released() {
        let a = sim(None);
        let p = a.allocate(3 << 20, S1).unwrap();
        let t = a.capture_begin();
        a.deallocate(p, S1).unwrap();
        // Not back in the pool: a same-size request (even on the same stream) gets another
        // block, and the held block still counts as allocated.
        let q = a.allocate(3 << 20, S1).unwrap();
        assert_ne!(q, p);
        assert_eq!(
            a.stats().allocated_bytes,
            2 * (4 << 20),
            "3 MiB takes a 4 MiB segment"
        );
        assert_eq!(a.held_bytes(), 4 << 20);
        // It is freed as far as its owner is concerned.
        assert!(a.deallocate(p, S1).is_err(), "double free");
        assert!(a.check_range(p, 16).is_err());
        assert!(a.record_stream(p, S2).is_err());
        a.check_invariants().unwrap();
        let held = a.capture_end(t);
        assert_eq!(held, vec![p]);
        // The graph holds it after the capture, too.
        let r = a.allocate(3 << 20, S1).unwrap();
        assert!(r != p && r != q);
        a.deallocate(r, S1).unwrap();
        a.release_held(&held);
        assert_eq!(a.held_bytes(), 0);
        let again = a.allocate(3 << 20, S1).unwrap();
        assert!(again == p || again == r, "a released block is reused");
        for x in [q, again] {
            a.deallocate(x, S1).unwrap();
        }
        a.check_invariants().unwrap();
        assert_eq!(a.stats().allocated_bytes, 0);
        assert!(a.capture_end(12345).is_empty(), "unknown token");
    }

    #[test]
    fn overlapping_captures_release_a_block_once_both_let_go() {
        let a = sim(None);
        let b = a.backend().clone();
        let p = a.allocate(3 << 20, S1).unwrap();
        let t1 = a.capture_begin();
        let t2 = a.capture_begin();
        a.deallocate(p, S1).unwrap();
        let g1 = a.capture_end(t1);
        a.release_held(&g1);
        assert_eq!(a.held_bytes(), 4 << 20, "capture 2 still holds it");
        // Freed while only capture 2 is active: held by it alone.
        let q = a.allocate(3 << 20, S1).unwrap();
        a.deallocate(q, S1).unwrap();
        let g2 = a.capture_end(t2);
        assert_eq!(g2, vec![p, q]);
        a.release_held(&g2);
        assert_eq!(a.held_bytes(), 0);
        a.check_invariants().unwrap();
        a.empty_cache().unwrap();
        assert_eq!(b.live_allocations(), 0);
    }

    #[test]
    fn a_release_during_another_capture_passes_the_block_to_it() {
        let a = sim(None);
        let p = a.allocate(3 << 20, S1).unwrap();
        let t1 = a.capture_begin();
        a.deallocate(p, S1).unwrap();
        let g1 = a.capture_end(t1);
        let t2 = a.capture_begin();
        a.release_held(&g1);
        assert_eq!(a.held_bytes(), 4 << 20, "held by capture 2 now");
        let g2 = a.capture_end(t2);
        assert_eq!(g2, vec![p]);
        a.release_held(&g2);
        assert_eq!(a.held_bytes(), 0);
        a.check_invariants().unwrap();
    }

    #[test]
    fn no_event_is_recorded_while_a_capture_is_active() {
        let a = sim(None);
        let b = a.backend().clone();
        let p = a.allocate(3 << 20, S1).unwrap();
        b.submit(S1);
        a.deallocate(p, S1).unwrap();
        b.complete(S1);
        // Taking p on S2 would record an event on S1 first (S1 may be the capturing
        // stream): during a capture S2 gets a new block instead.
        let t = a.capture_begin();
        let q = a.allocate(3 << 20, S2).unwrap();
        assert_ne!(q, p);
        assert_eq!(b.live_events(), 0);
        a.release_held(&a.capture_end(t));
        // After the capture, the usual event protocol hands p to S2.
        let r = a.allocate(3 << 20, S2).unwrap();
        assert_eq!(r, p);
        for x in [q, r] {
            a.deallocate(x, S2).unwrap();
        }
        a.check_invariants().unwrap();
    }

    #[test]
    fn stream_ordered_reuse() {
        let a = sim(None);
        let b = a.backend().clone();
        // Large blocks of 3 MiB fill their 4 MiB segments (no split), so placement is exact.
        let p = a.allocate(3 << 20, S1).unwrap();
        b.submit(S1); // a kernel on S1 uses p
        a.deallocate(p, S1).unwrap();
        // S1 may reuse at once: its later work runs after the kernel.
        let q = a.allocate(3 << 20, S1).unwrap();
        assert_eq!(q, p);
        b.submit(S1);
        a.deallocate(q, S1).unwrap();
        // S2 must not get p while S1's work is pending.
        let r = a.allocate(3 << 20, S2).unwrap();
        assert_ne!(r, p);
        // Once S1's work completes, S2 may take it.
        b.complete(S1);
        let t = a.allocate(3 << 20, S2).unwrap();
        assert_eq!(t, p);
        for x in [r, t] {
            a.deallocate(x, S2).unwrap();
        }
        a.check_invariants().unwrap();
        a.empty_cache().unwrap();
        assert_eq!(b.live_allocations(), 0);
        assert_eq!(b.live_events(), 0);
    }

    #[test]
    fn record_stream_withholds_until_events_complete() {
        let a = sim(None);
        let b = a.backend().clone();
        let p = a.allocate(4096, S0).unwrap();
        a.record_stream(p, S2).unwrap();
        b.submit(S2); // S2 reads p
        a.deallocate(p, S0).unwrap();
        let s = a.stats();
        assert_eq!(s.allocated_bytes, 0);
        assert_eq!(s.active_bytes, 4096); // waiting for S2
        a.check_invariants().unwrap();
        // Not even its own stream gets it back yet.
        let q = a.allocate(4096, S0).unwrap();
        assert_ne!(q, p);
        b.complete(S2);
        let r = a.allocate(4096, S0).unwrap();
        assert_eq!(r, p);
        a.deallocate(q, S0).unwrap();
        // Freeing on another stream than the allocation's counts as a use there.
        b.submit(S1);
        a.deallocate(r, S1).unwrap();
        assert_eq!(a.stats().active_bytes, 4096);
        a.check_invariants().unwrap();
        a.empty_cache().unwrap(); // synchronizes: everything returns
        let s = a.stats();
        assert_eq!((s.active_bytes, s.reserved_bytes), (0, 0));
        assert_eq!(b.live_allocations(), 0);
        assert!(a.record_stream(p, S1).is_err());
    }

    #[test]
    fn oom_frees_cache_and_retries_once() {
        // Room for two small segments.
        let a = sim(Some(2 * SMALL_SEGMENT as u64));
        let b = a.backend().clone();
        let x: Vec<_> = (0..4)
            .map(|_| a.allocate(SMALL_SIZE, S0).unwrap())
            .collect();
        assert_eq!(b.live_allocations(), 2);
        let y = a.allocate(SMALL_SIZE, S1);
        assert!(y.is_err(), "no room for a third segment");
        for p in x {
            a.deallocate(p, S0).unwrap();
        }
        // A 3 MiB request does not fit beside the cache: the cache is freed and it retries.
        let syncs = b.counters().2;
        let big = a.allocate(3 << 20, S0).unwrap();
        assert!(b.counters().2 > syncs, "the retry synchronizes first");
        let s = a.stats();
        assert_eq!(s.num_alloc_retries, 2);
        assert_eq!(s.num_ooms, 1);
        assert_eq!(s.segment_frees, 2);
        assert_eq!(s.reserved_bytes, 4 << 20);
        // Now nothing is cached and the device is full: a real OOM.
        let e = a.allocate(1, S0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
        assert!(e.message.contains("allocated"), "{}", e.message);
        assert!(e.message.contains("reserved"), "{}", e.message);
        assert!(e.message.contains("allocate 1 bytes"), "{}", e.message);
        let s = a.stats();
        assert_eq!((s.num_alloc_retries, s.num_ooms), (3, 2));
        a.deallocate(big, S0).unwrap();
        a.check_invariants().unwrap();
    }

    #[test]
    fn oom_synchronization_can_free_a_busy_cached_block() {
        // The device holds exactly one 4 MiB segment.
        let a = sim(Some(4 << 20));
        let b = a.backend().clone();
        let p = a.allocate(3 << 20, S1).unwrap();
        b.submit(S1);
        a.deallocate(p, S1).unwrap();
        // S2 cannot take p while S1 is busy and the device is full: the OOM protocol
        // synchronizes, after which p is usable, so the request is a cache hit.
        let q = a.allocate(3 << 20, S2).unwrap();
        assert_eq!(q, p);
        let s = a.stats();
        assert_eq!((s.num_alloc_retries, s.num_ooms), (1, 0));
        assert_eq!((s.segment_allocations, s.segment_frees), (1, 0));
        assert_eq!((s.cache_hits, s.cache_misses), (1, 1));
        a.deallocate(q, S2).unwrap();
        a.check_invariants().unwrap();
    }

    #[test]
    fn max_pool_bytes_limits_reserved() {
        let a = sim(None);
        a.set_config(AllocatorConfig {
            max_pool_bytes: 4 << 20,
            ..AllocatorConfig::default()
        })
        .unwrap();
        let p = a.allocate(3 << 20, S0).unwrap();
        let e = a.allocate(3 << 20, S0).unwrap_err();
        assert_eq!(e.kind, ErrorKind::OutOfMemory);
        assert!(e.message.contains("pool limit"), "{}", e.message);
        a.deallocate(p, S0).unwrap();
        let q = a.allocate(3 << 20, S0).unwrap();
        a.deallocate(q, S0).unwrap();
    }

    #[test]
    fn pooling_off_returns_memory_at_once() {
        let a = sim(None);
        let b = a.backend().clone();
        let p = a.allocate(100, S0).unwrap();
        a.deallocate(p, S0).unwrap();
        assert_eq!(b.live_allocations(), 1);
        a.set_config(AllocatorConfig {
            pooling: false,
            ..AllocatorConfig::default()
        })
        .unwrap();
        assert_eq!(b.live_allocations(), 0);
        let p = a.allocate(100, S0).unwrap();
        assert_eq!(a.stats().reserved_bytes, 512);
        a.deallocate(p, S0).unwrap();
        assert_eq!(b.live_allocations(), 0);
        let s = a.stats();
        assert_eq!((s.reserved_bytes, s.allocated_bytes), (0, 0));
        a.warmup(&[1 << 20]).unwrap();
        assert_eq!(b.live_allocations(), 0);
        a.check_invariants().unwrap();
    }

    #[test]
    fn warmup_makes_hits() {
        let a = sim(None);
        a.warmup(&[1000, 5 << 20]).unwrap();
        let s = a.stats();
        assert_eq!(s.allocated_bytes, 0);
        assert_eq!(s.reserved_bytes, (SMALL_SEGMENT + (6 << 20)) as u64);
        a.reset_stats();
        let p = a.allocate(1000, S0).unwrap();
        let q = a.allocate(5 << 20, S0).unwrap();
        let s = a.stats();
        assert_eq!((s.cache_hits, s.cache_misses), (2, 0));
        a.deallocate(p, S0).unwrap();
        a.deallocate(q, S0).unwrap();
    }

    #[test]
    fn destroyed_stream_blocks_become_shared() {
        let a = sim(None);
        let b = a.backend().clone();
        let p = a.allocate(3 << 20, S1).unwrap();
        let q = a.allocate(3 << 20, S1).unwrap();
        b.submit(S1);
        a.deallocate(p, S1).unwrap();
        // S2 cannot take p while S1 may be busy ...
        let r = a.allocate(3 << 20, S2).unwrap();
        assert_ne!(r, p);
        // ... but once S1 was synchronized and destroyed, it can, without events on S1.
        b.complete(S1);
        a.stream_destroyed(S1);
        let t = a.allocate(3 << 20, S2).unwrap();
        assert_eq!(t, p);
        // q was live on S1: it now belongs to the default stream.
        a.deallocate(q, S0).unwrap();
        // r and t are live; each took its whole 4 MiB block (1 MiB left is too small to split).
        assert_eq!(a.stats().active_bytes, 8 << 20);
        for x in [r, t] {
            a.deallocate(x, S2).unwrap();
        }
        a.check_invariants().unwrap();
        a.empty_cache().unwrap();
        assert_eq!(b.live_allocations(), 0);
    }

    #[test]
    fn reset_stats_keeps_current_values() {
        let a = sim(None);
        let p = a.allocate(10_000, S0).unwrap();
        let q = a.allocate(10_000, S0).unwrap();
        a.deallocate(q, S0).unwrap();
        let before = a.stats();
        assert_eq!(before.peak_allocated_bytes, 2 * 10_240);
        a.reset_stats();
        let s = a.stats();
        assert_eq!(s.allocated_bytes, before.allocated_bytes);
        assert_eq!(s.reserved_bytes, before.reserved_bytes);
        assert_eq!(s.peak_allocated_bytes, 10_240);
        assert_eq!(
            (s.num_allocations, s.num_deallocations, s.cache_misses),
            (0, 0, 0)
        );
        a.deallocate(p, S0).unwrap();
        let s = a.stats();
        assert_eq!((s.allocated_bytes, s.num_deallocations), (0, 1));
    }
}
