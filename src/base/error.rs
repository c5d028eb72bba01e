//! The one error type of the library. Every fallible function returns [`Result`]; the C ABI
//! turns an [`Error`] into an `rb_status` and the thread's last-error message.

use std::fmt;

/// What went wrong, in the categories of the C ABI's `rb_status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    InvalidArgument,
    NullPointer,
    InvalidHandle,
    DeviceUnavailable,
    OutOfMemory,
    ShapeMismatch,
    DtypeMismatch,
    Unsupported,
    Compilation,
    /// An error reported by a vendor library (HIP, rocBLAS, MIOpen, CUDA, ...).
    Vendor,
    /// A bug inside the library, e.g. a caught panic.
    Internal,
    /// A wait (a collective for its peers) ran past its time limit.
    Timeout,
    /// A communicator, or a peer's, was aborted or destroyed while a collective needed it.
    Aborted,
}

/// An error with its category and a message for humans.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArgument, message)
    }
    pub fn shape(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::ShapeMismatch, message)
    }
    pub fn dtype(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::DtypeMismatch, message)
    }
    pub fn unsupported(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Unsupported, message)
    }
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::DeviceUnavailable, message)
    }
    pub fn oom(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::OutOfMemory, message)
    }
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, message)
    }
    pub fn vendor(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Vendor, message)
    }
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Timeout, message)
    }
    pub fn aborted(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Aborted, message)
    }
    /// Prefixes the message with `ctx: `, e.g. the name of the op that failed.
    pub fn context(mut self, ctx: &str) -> Self {
        self.message = format!("{ctx}: {}", self.message);
        self
    }
}

/// `bail!(kind, "fmt", args)` returns an [`Error`] early.
#[macro_export]
macro_rules! bail {
    ($ctor:ident, $($arg:tt)*) => {
        return Err($crate::base::error::Error::$ctor(format!($($arg)*)))
    };
}

/// `ensure!(cond, kind, "fmt", args)` returns an [`Error`] unless `cond` holds.
#[macro_export]
macro_rules! ensure {
    ($cond:expr, $ctor:ident, $($arg:tt)*) => {
        if !($cond) {
            return Err($crate::base::error::Error::$ctor(format!($($arg)*)));
        }
    };
}
