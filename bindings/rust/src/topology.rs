//! Where devices sit on the host and what lies between them (ABI 1.4's topology section).

use std::os::raw::c_char;
use std::ptr;

use crate::device::Device;
use crate::error::{check, string_from, Error, Result, StatusCode};
use crate::runtime::Runtime;
use crate::sys;

/// How a device was joined to the host's topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalityJoin {
    /// Not joined: `reason` says why.
    None,
    PciBusId,
    NumaNode,
    /// The plugin reports neither; the machine has one NUMA node.
    SoleNumaNode,
    /// A value this binding does not know (a newer library).
    Other(u32),
}

/// A device's place on the host (`ctl_device_locality`), strings copied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locality {
    /// A package or NUMA node is known to be nearest to the device.
    pub known: bool,
    pub joined_by: LocalityJoin,
    pub from_override: bool,
    pub package: Option<i32>,
    pub numa_node: Option<i32>,
    pub pci_bus_id: String,
    pub core_count: u32,
    pub pu_count: u32,
    pub cpuset: String,
    pub reason: String,
    pub topology_source: String,
}

fn known(value: i32) -> Option<i32> {
    if value < 0 {
        None
    } else {
        Some(value)
    }
}

impl Device<'_> {
    /// Where the device sits on the host. Unknown locality is an answer (`known` false), not
    /// an error.
    pub fn locality(&self) -> Result<Locality> {
        let mut raw = sys::ctl_device_locality::zeroed();
        raw.struct_size = sys::ctl_device_locality::abi_size();
        // SAFETY: the library checks the handle; strings are borrowed from the runtime, which
        // the device's borrow keeps alive while they are copied.
        unsafe {
            check(sys::ctl_device_get_locality(self.as_raw(), &mut raw))?;
            Ok(Locality {
                known: raw.known,
                joined_by: match raw.joined_by {
                    sys::CTL_LOCALITY_JOIN_NONE => LocalityJoin::None,
                    sys::CTL_LOCALITY_JOIN_PCI_BUS_ID => LocalityJoin::PciBusId,
                    sys::CTL_LOCALITY_JOIN_NUMA_NODE => LocalityJoin::NumaNode,
                    sys::CTL_LOCALITY_JOIN_SOLE_NUMA_NODE => LocalityJoin::SoleNumaNode,
                    other => LocalityJoin::Other(other),
                },
                from_override: raw.from_override,
                package: known(raw.package),
                numa_node: known(raw.numa_node),
                pci_bus_id: string_from(raw.pci_bus_id),
                core_count: raw.core_count,
                pu_count: raw.pu_count,
                cpuset: string_from(raw.cpuset),
                reason: string_from(raw.reason),
                topology_source: string_from(raw.topology_source),
            })
        }
    }
}

impl Runtime {
    /// The machine, devices, links and placement order as `catalyst topology` prints them:
    /// text, or JSON with `json`.
    pub fn describe_topology(&self, json: bool) -> Result<String> {
        let format = if json { sys::CTL_TOPOLOGY_FORMAT_JSON } else { sys::CTL_TOPOLOGY_FORMAT_TEXT };
        let mut capacity = 0usize;
        let mut buffer: Vec<u8> = Vec::new();
        // snprintf-style: the call reports the full length; a buffer too small for it (the
        // first call's, or one outgrown by a link measured meanwhile) is grown and filled again.
        loop {
            let mut length = 0usize;
            let data = if capacity == 0 { ptr::null_mut() } else { buffer.as_mut_ptr() as *mut c_char };
            // SAFETY: data is NULL with capacity 0, or valid for `capacity` bytes.
            check(unsafe { sys::ctl_runtime_topology_describe(self.as_raw(), format, data, capacity, &mut length) })?;
            if capacity > length {
                buffer.truncate(length);
                return String::from_utf8(buffer).map_err(|e| {
                    Error::new(StatusCode::Internal, format!("the topology description is not UTF-8: {}", e))
                });
            }
            capacity = length + 1;
            buffer = vec![0u8; capacity];
        }
    }
}
