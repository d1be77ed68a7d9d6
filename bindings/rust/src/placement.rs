//! Device-to-device moves that autograd records, and what each device has done (ABI 1.4's
//! placement section).

use crate::device::Device;
use crate::error::{check, Result};
use crate::sys;
use crate::tensor::{new_tensor, Tensor};

/// What a device has done since its runtime was created (`ctl_device_usage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DeviceUsage {
    /// Host-observed nanoseconds spent submitting ops and waiting for them.
    pub busy_ns: u64,
    /// Op calls run on the device.
    pub ops: u64,
    /// Bytes of tensor storage alive on it now, and the most there has been.
    pub memory_in_use: u64,
    pub memory_peak: u64,
    /// Bytes moved onto it from other devices, and from it to others.
    pub bytes_in: u64,
    pub bytes_out: u64,
}

impl Device<'_> {
    /// The device's counters.
    pub fn usage(&self) -> Result<DeviceUsage> {
        let mut raw = sys::ctl_device_usage::zeroed();
        raw.struct_size = sys::ctl_device_usage::abi_size();
        // SAFETY: the library checks the handle and fills at most struct_size bytes.
        check(unsafe { sys::ctl_device_get_usage(self.as_raw(), &mut raw) })?;
        Ok(DeviceUsage {
            busy_ns: raw.busy_ns,
            ops: raw.ops,
            memory_in_use: raw.memory_in_use,
            memory_peak: raw.memory_peak,
            bytes_in: raw.bytes_in,
            bytes_out: raw.bytes_out,
        })
    }
}

impl Tensor {
    /// A contiguous copy on `device` that autograd records (`ctl_tensor_transfer`):
    /// gradients reaching the copy flow back to `self` on its own device. For a model split
    /// over devices; [`Tensor::to_device`] is the unrecorded copy.
    pub fn transfer(&self, device: Device<'_>) -> Result<Tensor> {
        // SAFETY: the library checks both handles.
        new_tensor(|out| unsafe { sys::ctl_tensor_transfer(self.as_raw(), device.as_raw(), out) })
    }
}
