//! `Device`: a device borrowed from its runtime (or from a tensor on it).

use std::marker::PhantomData;

use crate::dtype::DType;
use crate::error::{check, string_from, Result};
use crate::sys;

/// What kind of processor a device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeviceKind {
    Cpu,
    Gpu,
    Accelerator,
    /// A kind this binding does not know (a newer library).
    Other(u32),
}

/// A device's description (`ctl_device_info`), with its strings copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    pub vendor: String,
    pub driver_version: String,
    pub plugin_name: String,
    pub kind: DeviceKind,
    /// Bytes; 0 when unknown.
    pub memory_total: u64,
    /// Bytes at the time of the call; 0 when unknown.
    pub memory_free: u64,
    pub compute_units: u32,
    /// "dddd:bb:dd.f" in lower case, or "".
    pub pci_bus_id: String,
    /// None when unknown.
    pub numa_node: Option<i32>,
    pub uuid: Option<[u8; 16]>,
    /// Every dtype the device supports.
    pub dtypes: Vec<DType>,
    /// Buffers are ordinary host memory (zero-copy DLPack).
    pub host_visible: bool,
    /// Position in the runtime's device list.
    pub index: u32,
    /// The most work-items one work-group may have; 0 when that means nothing here.
    pub max_work_group_size: u32,
}

/// A device, borrowed: valid for `'a`, the borrow of the runtime or tensor it came from.
/// Copying it copies the borrow.
///
/// `Send` and `Sync`: catalyst.h says several threads may create tensors and run ops on one
/// device at once.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Device<'a> {
    raw: *mut sys::ctl_device,
    _owner: PhantomData<&'a ()>,
}

// SAFETY: catalyst.h ("Threads", since 1.4): every call that takes a device is thread-safe;
// submissions to one device from several threads are serialised by the library.
unsafe impl Send for Device<'_> {}
unsafe impl Sync for Device<'_> {}

impl<'a> Device<'a> {
    /// Wraps a borrowed device handle (NULL and stale handles make every call fail with the
    /// library's error, never crash: the library checks each handle it is given).
    ///
    /// # Safety
    /// `raw` is NULL or a device handle that stays valid for `'a`.
    pub unsafe fn from_raw(raw: *mut sys::ctl_device) -> Device<'a> {
        Device { raw, _owner: PhantomData }
    }

    /// The handle, borrowed.
    pub fn as_raw(&self) -> *mut sys::ctl_device {
        self.raw
    }

    /// The device's description.
    pub fn info(&self) -> Result<DeviceInfo> {
        let mut info = sys::ctl_device_info::zeroed();
        info.struct_size = sys::ctl_device_info::abi_size();
        // SAFETY: the device is valid for 'a; the strings are borrowed from it and copied here.
        unsafe {
            check(sys::ctl_device_get_info(self.raw, &mut info))?;
            Ok(DeviceInfo {
                name: string_from(info.name),
                vendor: string_from(info.vendor),
                driver_version: string_from(info.driver_version),
                plugin_name: string_from(info.plugin_name),
                kind: match info.kind {
                    sys::CTL_DEVICE_KIND_CPU => DeviceKind::Cpu,
                    sys::CTL_DEVICE_KIND_GPU => DeviceKind::Gpu,
                    sys::CTL_DEVICE_KIND_ACCELERATOR => DeviceKind::Accelerator,
                    other => DeviceKind::Other(other),
                },
                memory_total: info.memory_total,
                memory_free: info.memory_free,
                compute_units: info.compute_units,
                pci_bus_id: string_from(info.pci_bus_id),
                numa_node: if info.numa_node < 0 { None } else { Some(info.numa_node) },
                uuid: if info.has_uuid { Some(info.uuid) } else { None },
                dtypes: DType::ALL
                    .iter()
                    .copied()
                    .filter(|d| info.dtype_mask & sys::CTL_DTYPE_BIT(d.to_raw()) != 0)
                    .collect(),
                host_visible: info.host_visible,
                index: info.index,
                max_work_group_size: info.max_work_group_size,
            })
        }
    }

    /// Waits for all work queued on the device by this runtime.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the device is valid for 'a (or the library reports it).
        check(unsafe { sys::ctl_device_synchronize(self.raw) })
    }
}

impl std::fmt::Debug for Device<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.info() {
            Ok(info) => write!(f, "Device({})", info.name),
            Err(_) => write!(f, "Device({:p})", self.raw),
        }
    }
}
