//! Modules: a caller's own HIP kernel source compiled for a GPU (hiprtc on AMD, NVRTC on
//! NVIDIA, through the shared code cache), its functions, and their launches.

use crate::device::Device;
use crate::device::gpu::GpuDevice;
use crate::runtime::event::gpu_of;
use crate::runtime::stream::Stream;
use crate::runtime::tensor::same_device;
use crate::{Error, Result};
use std::ffi::c_void;
use std::sync::Arc;

/// A loaded module on one GPU.
pub struct Module {
    device: Arc<dyn Device>,
    gpu: Arc<GpuDevice>,
    raw: u64,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Module({})", self.device.name())
    }
}

impl Module {
    /// Compiles `source` (named `name` in diagnostics) with extra compiler `options` for
    /// `device`'s architecture and loads it. A compile error is ErrorKind::Compilation with
    /// the compiler's log.
    pub fn compile(
        device: Arc<dyn Device>,
        source: &str,
        name: &str,
        options: &[String],
    ) -> Result<Self> {
        let gpu = gpu_of(&device, "rb_module (a kernel module)")?;
        let raw = gpu.module_compile(source, name, options)?;
        Ok(Module { device, gpu, raw })
    }

    pub fn device(&self) -> &Arc<dyn Device> {
        &self.device
    }

    /// The `extern "C"` kernel `name` of this module.
    pub fn function(self: &Arc<Self>, name: &str) -> Result<Function> {
        let raw = self.gpu.module_function(self.raw, name)?;
        Ok(Function {
            module: self.clone(),
            raw,
            name: name.to_string(),
        })
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        self.gpu.module_unload(self.raw);
    }
}

/// A kernel of a module (keeps its module loaded).
#[derive(Debug)]
pub struct Function {
    module: Arc<Module>,
    raw: u64,
    name: String,
}

impl Function {
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Launches the kernel on `stream` (None: the device's default stream).
    ///
    /// # Safety
    /// `args` holds one pointer per kernel parameter, each to a live value of the
    /// parameter's type, as for hipModuleLaunchKernel / cuLaunchKernel; the kernel's memory
    /// accesses are the caller's responsibility.
    pub unsafe fn launch(
        &self,
        grid: [u32; 3],
        block: [u32; 3],
        shared_bytes: u32,
        stream: Option<&Stream>,
        args: *mut *mut c_void,
    ) -> Result<()> {
        let s = match stream {
            Some(s) if !same_device(s.device(), &self.module.device) => {
                return Err(Error::invalid(format!(
                    "launch of {}: the stream is on {}, the module on {}",
                    self.name,
                    s.device().name(),
                    self.module.device.name()
                )));
            }
            Some(s) => s.raw(),
            None => Default::default(),
        };
        // SAFETY: the caller's contract.
        unsafe {
            self.module.gpu.launch_function(
                self.raw,
                &self.name,
                grid,
                block,
                shared_bytes,
                s,
                args,
            )
        }
    }
}
