//! Everything GPU-generic: caching allocator, pinned host pool, kernel cache, profiler.
//! Nothing here names a vendor symbol; the vendor tables live in `vendor/`.

pub mod allocator;
pub mod host;
pub mod kernel_cache;
pub mod manager;
pub mod pinned;
pub mod profiler;
