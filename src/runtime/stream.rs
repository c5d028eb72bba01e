//! Streams: ordered queues of work on one device.

use crate::Result;
use crate::device::{Device, RawStream};
use std::sync::Arc;

/// A stream on a device. The default stream of a device is not owned and never destroyed.
#[derive(Debug)]
pub struct Stream {
    device: Arc<dyn Device>,
    raw: RawStream,
    owned: bool,
}

impl Stream {
    /// A new stream on `device`.
    pub fn new(device: Arc<dyn Device>) -> Result<Self> {
        let raw = device.stream_create()?;
        Ok(Stream {
            device,
            raw,
            owned: true,
        })
    }
    /// The device's default stream.
    pub fn default_for(device: Arc<dyn Device>) -> Self {
        Stream {
            device,
            raw: RawStream::DEFAULT,
            owned: false,
        }
    }
    /// A non-owning view of `raw` on `device` (not destroyed on drop).
    pub fn borrowed(device: Arc<dyn Device>, raw: RawStream) -> Self {
        Stream {
            device,
            raw,
            owned: false,
        }
    }
    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }
    pub fn raw(&self) -> RawStream {
        self.raw
    }
    pub fn synchronize(&self) -> Result<()> {
        self.device.stream_synchronize(self.raw)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.owned {
            self.device.stream_destroy(self.raw);
        }
    }
}
