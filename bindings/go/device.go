package catalyst

// #include <catalyst.h>
import "C"

import "runtime"

// DeviceKind is a ctl_device_kind.
type DeviceKind int32

// The kinds of ctl_device_kind.
const (
	KindCPU         DeviceKind = C.CTL_DEVICE_KIND_CPU
	KindGPU         DeviceKind = C.CTL_DEVICE_KIND_GPU
	KindAccelerator DeviceKind = C.CTL_DEVICE_KIND_ACCELERATOR
)

// Device is a ctl_device. The C pointer is borrowed from its runtime (or from the tensor
// it was read from), so a Device holds a reference to that owner until Close: a Device
// stays valid after its Runtime handle is closed. Safe for concurrent use.
type Device struct {
	ptr *C.ctl_device
	// Exactly one owner reference is held.
	runtime *C.ctl_runtime
	tensor  *C.ctl_tensor
}

func newRuntimeDevice(d *C.ctl_device, owner *C.ctl_runtime) *Device {
	C.ctl_runtime_retain(owner)
	dev := &Device{ptr: d, runtime: owner}
	runtime.SetFinalizer(dev, (*Device).Close)
	return dev
}

// The ABI has no getter from a device to its runtime, so a device read from a tensor
// keeps that tensor (and through it the runtime) alive instead.
func newTensorDevice(d *C.ctl_device, owner *C.ctl_tensor) *Device {
	C.ctl_tensor_retain(owner)
	dev := &Device{ptr: d, tensor: owner}
	runtime.SetFinalizer(dev, (*Device).Close)
	return dev
}

// Close drops the device's reference to its owner. Closing twice is harmless.
func (d *Device) Close() error {
	if d == nil || d.ptr == nil {
		return nil
	}
	C.ctl_runtime_release(d.runtime)
	C.ctl_tensor_release(d.tensor)
	d.ptr, d.runtime, d.tensor = nil, nil, nil
	runtime.SetFinalizer(d, nil)
	return nil
}

func (d *Device) handle() *C.ctl_device {
	if d == nil {
		return nil
	}
	return d.ptr
}

// DeviceInfo is ctl_device_info with Go strings.
type DeviceInfo struct {
	Name, Vendor, DriverVersion, PluginName string
	Kind                                    DeviceKind
	MemoryTotal, MemoryFree                 uint64 // bytes; 0 when unknown
	ComputeUnits                            uint32
	PCIBusID                                string // "" when none
	NUMANode                                int32  // -1 when unknown
	UUID                                    [16]byte
	HasUUID                                 bool
	DTypeMask                               uint32
	HostVisible                             bool
	Index                                   int
	MaxWorkGroupSize                        uint32
}

// Supports says whether the device claims dtype.
func (i DeviceInfo) Supports(dtype DType) bool {
	return dtype >= 0 && dtype < InvalidDType && i.DTypeMask&(1<<uint(dtype)) != 0
}

// Info describes the device.
func (d *Device) Info() (DeviceInfo, error) {
	var info C.ctl_device_info
	info.struct_size = C.CTL_DEVICE_INFO_STRUCT_SIZE
	err := statusError(C.ctl_device_get_info(d.handle(), &info))
	defer runtime.KeepAlive(d)
	if err != nil {
		return DeviceInfo{}, err
	}
	out := DeviceInfo{
		Name: C.GoString(info.name), Vendor: C.GoString(info.vendor),
		DriverVersion: C.GoString(info.driver_version), PluginName: C.GoString(info.plugin_name),
		Kind: DeviceKind(info.kind), MemoryTotal: uint64(info.memory_total), MemoryFree: uint64(info.memory_free),
		ComputeUnits: uint32(info.compute_units), PCIBusID: C.GoString(info.pci_bus_id),
		NUMANode: int32(info.numa_node), HasUUID: bool(info.has_uuid), DTypeMask: uint32(info.dtype_mask),
		HostVisible: bool(info.host_visible), Index: int(info.index), MaxWorkGroupSize: uint32(info.max_work_group_size),
	}
	for i := range out.UUID {
		out.UUID[i] = byte(info.uuid[i])
	}
	return out, nil
}

// Synchronize waits for all work queued on the device by its runtime.
func (d *Device) Synchronize() error {
	err := statusError(C.ctl_device_synchronize(d.handle()))
	runtime.KeepAlive(d)
	return err
}
