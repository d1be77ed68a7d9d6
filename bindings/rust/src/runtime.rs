//! `Runtime` (loaded plugins and their devices) and `NoGrad`, the scope without recording.

use std::ffi::CString;
use std::marker::PhantomData;
use std::os::raw::c_char;
use std::ptr::{self, NonNull};

use crate::device::Device;
use crate::error::{check, string_from, Error, Result, StatusCode};
use crate::sys;

/// How to create a runtime. The default discovers the installed plugins, as
/// `ctl_runtime_create(NULL, ...)` does.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Plugin files to load before any discovered ones.
    pub plugin_paths: Vec<String>,
    /// Skip CATALYST_PLUGINS, CATALYST_PLUGIN_PATH and the installed directories.
    pub disable_discovery: bool,
    /// Add the core's reference kernels as a device named "reference".
    pub enable_reference_device: bool,
}

/// What discovery made of one candidate plugin file (`ctl_plugin_info`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginInfo {
    pub path: String,
    pub name: String,
    pub version: String,
    pub accepted: bool,
    pub reason: String,
    pub source: String,
    pub abi_major: u32,
    pub abi_minor: u32,
    pub device_count: usize,
}

/// A runtime: the loaded plugins and their devices. Clones share one runtime (a new
/// reference); the last one dropped releases it, and the runtime lives on while tensors on
/// its devices exist.
///
/// `Send` and `Sync`: catalyst.h says every call taking a runtime is thread-safe. Recording
/// for autograd is switched per runtime, for every thread at once (see [`Runtime::no_grad`]).
pub struct Runtime {
    raw: NonNull<sys::ctl_runtime>,
}

// SAFETY: catalyst.h ("Threads", since 1.4): runtimes are reference-counted with atomic
// counts and every call that takes one may run on several threads at once.
unsafe impl Send for Runtime {}
unsafe impl Sync for Runtime {}

impl Runtime {
    /// Creates a runtime with default discovery.
    pub fn new() -> Result<Runtime> {
        Runtime::create(ptr::null())
    }

    /// Creates a runtime with `options`.
    pub fn with_options(options: &RuntimeOptions) -> Result<Runtime> {
        let paths = options
            .plugin_paths
            .iter()
            .map(|p| {
                CString::new(p.as_str()).map_err(|_| {
                    Error::new(StatusCode::InvalidArgument, format!("plugin path {:?} contains a NUL byte", p))
                })
            })
            .collect::<Result<Vec<CString>>>()?;
        let pointers: Vec<*const c_char> = paths.iter().map(|p| p.as_ptr()).collect();
        let mut raw = sys::ctl_runtime_options::zeroed();
        raw.struct_size = sys::ctl_runtime_options::abi_size();
        raw.plugin_paths = if pointers.is_empty() { ptr::null() } else { pointers.as_ptr() };
        raw.plugin_path_count = pointers.len();
        raw.disable_discovery = options.disable_discovery;
        raw.enable_reference_device = options.enable_reference_device;
        Runtime::create(&raw)
    }

    fn create(options: *const sys::ctl_runtime_options) -> Result<Runtime> {
        let mut raw = ptr::null_mut();
        // SAFETY: options is NULL or a filled struct whose strings outlive the call.
        check(unsafe { sys::ctl_runtime_create(options, &mut raw) })?;
        NonNull::new(raw)
            .map(|raw| Runtime { raw })
            .ok_or_else(|| Error::new(StatusCode::Internal, "ctl_runtime_create succeeded without a runtime"))
    }

    /// Takes ownership of a reference to a runtime.
    ///
    /// # Safety
    /// `raw` is a runtime reference the caller owns; the returned value releases it.
    pub unsafe fn from_raw(raw: NonNull<sys::ctl_runtime>) -> Runtime {
        Runtime { raw }
    }

    /// The handle, still owned by `self`.
    pub fn as_raw(&self) -> *mut sys::ctl_runtime {
        self.raw.as_ptr()
    }

    /// Every candidate plugin file discovery saw, accepted or rejected.
    pub fn plugins(&self) -> Result<Vec<PluginInfo>> {
        // SAFETY: a live runtime.
        let count = unsafe { sys::ctl_runtime_plugin_count(self.as_raw()) };
        (0..count)
            .map(|index| {
                let mut info = sys::ctl_plugin_info::zeroed();
                info.struct_size = sys::ctl_plugin_info::abi_size();
                // SAFETY: the strings are borrowed from the runtime, which outlives the copies.
                unsafe {
                    check(sys::ctl_runtime_plugin_info(self.as_raw(), index, &mut info))?;
                    Ok(PluginInfo {
                        path: string_from(info.path),
                        name: string_from(info.name),
                        version: string_from(info.version),
                        accepted: info.accepted,
                        reason: string_from(info.reason),
                        source: string_from(info.source),
                        abi_major: info.abi_major,
                        abi_minor: info.abi_minor,
                        device_count: info.device_count,
                    })
                }
            })
            .collect()
    }

    /// The number of devices.
    pub fn device_count(&self) -> usize {
        // SAFETY: a live runtime.
        unsafe { sys::ctl_runtime_device_count(self.as_raw()) }
    }

    /// The device at `index` (NOT_FOUND past the end).
    pub fn device(&self, index: usize) -> Result<Device<'_>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live runtime; the device is borrowed from it, as Device<'_> says.
        check(unsafe { sys::ctl_runtime_device(self.as_raw(), index, &mut raw) })?;
        // SAFETY: a device of this runtime, valid while it is borrowed.
        Ok(unsafe { Device::from_raw(raw) })
    }

    /// Every device, in index order.
    pub fn devices(&self) -> Result<Vec<Device<'_>>> {
        (0..self.device_count()).map(|i| self.device(i)).collect()
    }

    /// The device a name means: "cpu", "cpu:1", "opencl:0", "reference" or an index ("2").
    pub fn find_device(&self, name: &str) -> Result<Device<'_>> {
        let name = CString::new(name).map_err(|_| {
            Error::new(StatusCode::InvalidArgument, format!("device name {:?} contains a NUL byte", name))
        })?;
        let mut raw = ptr::null_mut();
        // SAFETY: a live runtime and a NUL-terminated name.
        check(unsafe { sys::ctl_runtime_find_device(self.as_raw(), name.as_ptr(), &mut raw) })?;
        // SAFETY: as in device().
        Ok(unsafe { Device::from_raw(raw) })
    }

    /// The default device: CATALYST_DEVICE's, else the first GPU or accelerator, else the
    /// first device.
    pub fn default_device(&self) -> Result<Device<'_>> {
        let mut raw = ptr::null_mut();
        // SAFETY: a live runtime.
        check(unsafe { sys::ctl_runtime_default_device(self.as_raw(), &mut raw) })?;
        // SAFETY: as in device().
        Ok(unsafe { Device::from_raw(raw) })
    }

    /// Turns recording for autograd on or off and returns the previous setting. It holds for
    /// every thread that runs ops on this runtime's devices.
    pub fn set_grad_enabled(&self, enabled: bool) -> Result<bool> {
        let mut previous = false;
        // SAFETY: a live runtime; the flag is atomic in the library.
        check(unsafe { sys::ctl_runtime_set_grad_enabled(self.as_raw(), enabled, &mut previous) })?;
        Ok(previous)
    }

    /// Recording off until the guard is dropped, which restores the previous setting (for
    /// evaluation and optimizer steps). The switch is the runtime's, not the thread's.
    pub fn no_grad(&self) -> Result<NoGrad<'_>> {
        let previous = self.set_grad_enabled(false)?;
        Ok(NoGrad { runtime: self, previous, _not_send: PhantomData })
    }
}

impl Clone for Runtime {
    fn clone(&self) -> Runtime {
        // SAFETY: retain is thread-safe and the handle is live.
        unsafe { sys::ctl_runtime_retain(self.as_raw()) };
        Runtime { raw: self.raw }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        // SAFETY: this value owns one reference.
        unsafe { sys::ctl_runtime_release(self.as_raw()) };
    }
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime").field("raw", &self.raw).field("devices", &self.device_count()).finish()
    }
}

/// Recording for autograd switched off while it lives; dropping it restores the setting it
/// found. Not `Send`: guards are restored in the reverse order they were made, on the thread
/// that made them.
pub struct NoGrad<'a> {
    runtime: &'a Runtime,
    previous: bool,
    _not_send: PhantomData<*const ()>,
}

impl Drop for NoGrad<'_> {
    fn drop(&mut self) {
        // Only a dead runtime could make this fail, and the borrow keeps it alive.
        let _ = self.runtime.set_grad_enabled(self.previous);
    }
}
