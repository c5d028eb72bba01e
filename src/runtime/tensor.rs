//! Tensors: a dense, row-major block of one dtype on one device.

use crate::base::dtype::DType;
use crate::base::shape;
use crate::device::{DevPtr, Device};
use crate::runtime::stream::Stream;
use crate::{Error, Result};
use std::sync::Arc;

/// Device memory owned by one or more tensors; freed when the last one goes.
///
/// Memory the library did not allocate (a DLPack import) is *external*: its `owner` is
/// dropped instead of freeing it (the DLPack deleter runs then, exactly once), and it may be
/// read-only (no op writes it).
pub struct Buffer {
    device: Arc<dyn Device>,
    ptr: DevPtr,
    bytes: usize,
    owner: Option<ExternalOwner>,
    read_only: bool,
}

/// Counts tensor storage for the profiler's memory counters (a sample is taken only while
/// profiling).
fn memory_counter(device: &Arc<dyn Device>, delta: i64) {
    if delta == 0 {
        return;
    }
    crate::device::gpu::profiler::tensor_memory(
        device.kind() as usize,
        device.ordinal(),
        delta,
        || {
            let stats = device.memory_stats().ok();
            (
                device.name(),
                stats.map(|s| (s.allocated_bytes, s.reserved_bytes)),
            )
        },
    );
}

/// What keeps external memory alive; dropping it gives the memory back.
pub type ExternalOwner = Box<dyn std::any::Any + Send + Sync>;

impl std::fmt::Debug for Buffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Buffer")
            .field("device", &self.device)
            .field("ptr", &self.ptr)
            .field("bytes", &self.bytes)
            .field("external", &self.owner.is_some())
            .field("read_only", &self.read_only)
            .finish()
    }
}

impl Buffer {
    /// Allocates `bytes` on `device` (a zero-byte buffer holds no memory).
    pub fn new(device: Arc<dyn Device>, bytes: usize) -> Result<Self> {
        let ptr = if bytes == 0 {
            DevPtr::NULL
        } else {
            device.alloc(bytes)?
        };
        memory_counter(&device, bytes as i64);
        Ok(Buffer {
            device,
            ptr,
            bytes,
            owner: None,
            read_only: false,
        })
    }
    pub fn ptr(&self) -> DevPtr {
        self.ptr
    }
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        if let Some(owner) = self.owner.take() {
            // External memory: its owner's drop gives it back (never `device.free`).
            drop(owner);
        } else if !self.ptr.is_null() {
            self.device.free(self.ptr, self.bytes);
        }
        if self.owner.is_none() {
            memory_counter(&self.device, -(self.bytes as i64));
        }
    }
}

/// A dense row-major tensor. Cloning shares the storage.
#[derive(Clone, Debug)]
pub struct Tensor {
    buf: Arc<Buffer>,
    /// Bytes from the start of `buf` (non-zero only for views into an arena).
    offset: usize,
    shape: Vec<usize>,
    dtype: DType,
}

impl Tensor {
    /// Uninitialized storage.
    pub fn empty(device: Arc<dyn Device>, shape: &[usize], dtype: DType) -> Result<Self> {
        let bytes = shape::nbytes(shape, dtype)?;
        Ok(Tensor {
            buf: Arc::new(Buffer::new(device, bytes)?),
            offset: 0,
            shape: shape.to_vec(),
            dtype,
        })
    }

    pub fn zeros(device: Arc<dyn Device>, shape: &[usize], dtype: DType) -> Result<Self> {
        let t = Self::empty(device, shape, dtype)?;
        if t.nbytes() > 0 {
            let dev = t.device().clone();
            dev.memset(t.ptr(), 0, t.nbytes(), Default::default())?;
            dev.synchronize()?;
        }
        Ok(t)
    }

    /// A tensor holding a copy of `data`, which must be exactly `numel * dtype.size()` bytes.
    pub fn from_bytes(
        device: Arc<dyn Device>,
        data: &[u8],
        shape: &[usize],
        dtype: DType,
    ) -> Result<Self> {
        let t = Self::empty(device, shape, dtype)?;
        if data.len() != t.nbytes() {
            return Err(Error::invalid(format!(
                "host buffer has {} bytes, a {dtype} tensor of shape {shape:?} needs {}",
                data.len(),
                t.nbytes()
            )));
        }
        if !data.is_empty() {
            let dev = t.device().clone();
            dev.copy_h2d(data, t.ptr(), Default::default())?;
            dev.synchronize()?;
        }
        Ok(t)
    }

    /// A tensor over memory the library did not allocate (a DLPack import): `bytes` bytes at
    /// `ptr` on `device`, of which the tensor uses `shape`/`dtype` from `offset` bytes on.
    /// `owner` is dropped when the last tensor over the memory goes (that is where the
    /// memory is given back); a `read_only` tensor is refused as a destination. Fails when
    /// the view reaches past `bytes` or its size overflows; `owner` then comes back with the
    /// error, not dropped (the caller still owns the memory).
    ///
    /// # Safety
    /// `ptr..ptr+bytes` is memory of `device` that stays valid until `owner` is dropped.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn from_external(
        device: Arc<dyn Device>,
        ptr: DevPtr,
        bytes: usize,
        offset: usize,
        shape: &[usize],
        dtype: DType,
        read_only: bool,
        owner: ExternalOwner,
    ) -> std::result::Result<Self, (Error, ExternalOwner)> {
        let need = match shape::nbytes(shape, dtype) {
            Ok(n) => n,
            Err(e) => return Err((e, owner)),
        };
        if offset.checked_add(need).is_none_or(|end| end > bytes) {
            let e = Error::invalid(format!(
                "external memory: {need} bytes at offset {offset} reach past {bytes} bytes"
            ));
            return Err((e, owner));
        }
        Ok(Tensor {
            buf: Arc::new(Buffer {
                device,
                ptr,
                bytes,
                owner: Some(owner),
                read_only,
            }),
            offset,
            shape: shape.to_vec(),
            dtype,
        })
    }

    /// True for a tensor over read-only external memory (a DLPack import flagged
    /// read-only): ops refuse it as an output or an in-place argument.
    pub fn is_read_only(&self) -> bool {
        self.buf.read_only
    }

    /// Fails with INVALID_ARGUMENT when the tensor is read-only (`what` names it).
    pub fn check_writable(&self, what: &str) -> Result<()> {
        if self.is_read_only() {
            return Err(Error::invalid(format!(
                "{what} is read-only (imported from a DLPack tensor flagged read-only) and \
                 cannot be written"
            )));
        }
        Ok(())
    }

    /// An f32 tensor from a slice (convenience for Rust callers and tests).
    pub fn from_f32(device: Arc<dyn Device>, data: &[f32], shape: &[usize]) -> Result<Self> {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
        Self::from_bytes(device, &bytes, shape, DType::F32)
    }

    /// Standard normal samples, reproducible from `seed` on every device.
    pub fn randn(
        device: Arc<dyn Device>,
        shape: &[usize],
        dtype: DType,
        seed: u64,
    ) -> Result<Self> {
        let t = Self::empty(device, shape, dtype)?;
        t.device()
            .randn(Default::default(), dtype, t.ptr(), t.numel(), seed)?;
        Ok(t)
    }

    /// Integers uniform in `[low, high)`.
    pub fn randint(
        device: Arc<dyn Device>,
        shape: &[usize],
        dtype: DType,
        low: i64,
        high: i64,
        seed: u64,
    ) -> Result<Self> {
        if high <= low {
            return Err(Error::invalid(format!(
                "randint: high ({high}) must exceed low ({low})"
            )));
        }
        let t = Self::empty(device, shape, dtype)?;
        t.device().randint(
            Default::default(),
            dtype,
            t.ptr(),
            t.numel(),
            low,
            high,
            seed,
        )?;
        Ok(t)
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.buf.device
    }
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype.size()
    }
    /// Address of the first element (NULL for an empty tensor).
    pub fn ptr(&self) -> DevPtr {
        match self.offset {
            0 => self.buf.ptr(),
            _ if self.nbytes() == 0 => DevPtr::NULL,
            o => DevPtr(self.buf.ptr().0 + o as u64),
        }
    }

    /// A tensor of `shape` and `dtype` that shares `base`'s storage from `offset` bytes on
    /// (the graph executor's arena slots). Fails when it would reach past the storage.
    pub fn view_at(base: &Tensor, offset: usize, shape: &[usize], dtype: DType) -> Result<Self> {
        let bytes = shape::nbytes(shape, dtype)?;
        let start = base.offset + offset;
        if start
            .checked_add(bytes)
            .is_none_or(|end| end > base.buf.bytes())
        {
            return Err(Error::invalid(format!(
                "view of {bytes} bytes at {start} reaches past a buffer of {} bytes",
                base.buf.bytes()
            )));
        }
        Ok(Tensor {
            buf: base.buf.clone(),
            offset: start,
            shape: shape.to_vec(),
            dtype,
        })
    }

    /// An identity of the storage (equal for tensors that share it, e.g. a reshape).
    pub fn storage_id(&self) -> usize {
        Arc::as_ptr(&self.buf) as usize
    }

    /// The byte addresses `[start, end)` of this tensor's whole storage.
    pub fn storage_range(&self) -> (u64, u64) {
        let p = self.buf.ptr().0;
        (p, p + self.buf.bytes() as u64)
    }

    /// Byte offset of this tensor in its storage.
    pub fn storage_offset(&self) -> usize {
        self.offset
    }

    /// Copies the whole tensor into `dst` (exactly `nbytes()` long), waiting for `stream`.
    pub fn copy_to_host(&self, dst: &mut [u8], stream: Option<&Stream>) -> Result<()> {
        if dst.len() != self.nbytes() {
            return Err(Error::invalid(format!(
                "host buffer has {} bytes, the tensor has {}",
                dst.len(),
                self.nbytes()
            )));
        }
        if dst.is_empty() {
            return Ok(());
        }
        let raw = stream.map(|s| s.raw()).unwrap_or_default();
        self.device().copy_d2h(self.ptr(), dst, raw)?;
        self.device().stream_synchronize(raw)
    }

    /// The values as f64, whatever the dtype (tests, debugging).
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        let mut bytes = vec![0u8; self.nbytes()];
        self.copy_to_host(&mut bytes, None)?;
        Ok((0..self.numel())
            // SAFETY: `bytes` holds numel elements of dtype.
            .map(|i| unsafe { crate::device::cpu::elem::load_f64(self.dtype, bytes.as_ptr(), i) })
            .collect())
    }

    /// A copy on `device`: device-to-device on the same device, through host memory
    /// between devices. Waits for the copy.
    pub fn to_device(&self, device: Arc<dyn Device>) -> Result<Self> {
        let t = Self::empty(device, &self.shape, self.dtype)?;
        if self.nbytes() == 0 {
            return Ok(t);
        }
        if same_device(self.device(), t.device()) {
            let d = t.device().clone();
            d.copy_d2d(self.ptr(), t.ptr(), self.nbytes(), Default::default())?;
            d.synchronize()?;
        } else {
            let mut host = vec![0u8; self.nbytes()];
            self.copy_to_host(&mut host, None)?;
            let d = t.device().clone();
            d.copy_h2d(&host, t.ptr(), Default::default())?;
            d.synchronize()?;
        }
        Ok(t)
    }

    /// The same storage seen with another shape of the same element count.
    pub fn reshape(&self, shape: &[usize]) -> Result<Self> {
        if shape::numel(shape)? != self.numel() {
            return Err(Error::shape(format!(
                "reshape: cannot view {:?} ({} elements) as {shape:?}",
                self.shape,
                self.numel()
            )));
        }
        Ok(Tensor {
            buf: self.buf.clone(),
            offset: self.offset,
            shape: shape.to_vec(),
            dtype: self.dtype,
        })
    }

    /// True when both tensors live on the same device.
    pub fn same_device(&self, other: &Arc<dyn Device>) -> bool {
        same_device(self.device(), other)
    }
}

/// True when two device handles name the same device.
pub fn same_device(a: &Arc<dyn Device>, b: &Arc<dyn Device>) -> bool {
    a.kind() == b.kind() && a.ordinal() == b.ordinal()
}
