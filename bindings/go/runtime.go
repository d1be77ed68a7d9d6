package catalyst

// #include <stdlib.h>
// #include <catalyst.h>
import "C"

import (
	"runtime"
	"unsafe"
)

// LogLevel is a level of ctl_log_level.
type LogLevel int32

// The levels of ctl_log_level.
const (
	LogDebug   LogLevel = C.CTL_LOG_DEBUG
	LogInfo    LogLevel = C.CTL_LOG_INFO
	LogWarning LogLevel = C.CTL_LOG_WARNING
	LogError   LogLevel = C.CTL_LOG_ERROR
	LogOff     LogLevel = C.CTL_LOG_OFF
)

// Options are ctl_runtime_options. The zero value discovers plugins as catalyst.h says
// and logs warnings to standard error. (A Go log callback is not offered: a C callback
// into Go from plugin threads would add a cgo-export layer for little gain.)
type Options struct {
	// Plugin files to load before any discovered ones.
	PluginPaths []string
	// Skip CATALYST_PLUGINS, CATALYST_PLUGIN_PATH and the installed directories.
	DisableDiscovery bool
	// Drop log lines below LogLevel; used only when SetLogLevel is true (else warnings).
	LogLevel    LogLevel
	SetLogLevel bool
	// Add the core's reference kernels as a device named "reference".
	EnableReferenceDevice bool
	// List candidate plugin files without loading any (the runtime has no devices).
	DiscoverOnly bool
}

// Runtime is a ctl_runtime: loaded plugins and their devices. Safe for concurrent use.
type Runtime struct {
	ptr *C.ctl_runtime
}

// NewRuntime loads plugins and enumerates their devices. opts may be nil.
func NewRuntime(opts *Options) (*Runtime, error) {
	if opts == nil {
		opts = &Options{}
	}
	var o C.ctl_runtime_options
	o.struct_size = C.CTL_RUNTIME_OPTIONS_STRUCT_SIZE
	// The path array goes to C inside a struct, so it must be C memory (cgo forbids Go
	// memory that holds Go pointers from crossing).
	if n := len(opts.PluginPaths); n > 0 {
		paths := (*[1 << 20]*C.char)(C.calloc(C.size_t(n), C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:n:n]
		for i, p := range opts.PluginPaths {
			paths[i] = C.CString(p)
		}
		defer func() {
			for _, p := range paths {
				C.free(unsafe.Pointer(p))
			}
			C.free(unsafe.Pointer(&paths[0]))
		}()
		o.plugin_paths = &paths[0]
		o.plugin_path_count = C.size_t(n)
	}
	o.disable_discovery = C.bool(opts.DisableDiscovery)
	o.log_level = C.ctl_log_level(opts.LogLevel)
	o.log_level_set = C.bool(opts.SetLogLevel)
	o.enable_reference_device = C.bool(opts.EnableReferenceDevice)
	o.discover_only = C.bool(opts.DiscoverOnly)
	var ptr *C.ctl_runtime
	if err := statusError(C.ctl_runtime_create(&o, &ptr)); err != nil {
		return nil, err
	}
	r := &Runtime{ptr: ptr}
	runtime.SetFinalizer(r, (*Runtime).Close)
	return r, nil
}

// Close drops this handle's reference. Devices and tensors keep the runtime alive for as
// long as they are open. Closing twice is harmless.
func (r *Runtime) Close() error {
	if r == nil || r.ptr == nil {
		return nil
	}
	C.ctl_runtime_release(r.ptr)
	r.ptr = nil
	runtime.SetFinalizer(r, nil)
	return nil
}

func (r *Runtime) handle() *C.ctl_runtime {
	if r == nil {
		return nil
	}
	return r.ptr
}

// DeviceCount is the number of devices (0 for a closed runtime).
func (r *Runtime) DeviceCount() int {
	n := int(C.ctl_runtime_device_count(r.handle()))
	runtime.KeepAlive(r)
	return n
}

// Device is the device at index i. Close it when done.
func (r *Runtime) Device(i int) (*Device, error) {
	var d *C.ctl_device
	h := r.handle()
	if i < 0 {
		i = -1 // size_t wraps it to a huge index: the ABI reports it as out of range
	}
	err := statusError(C.ctl_runtime_device(h, C.size_t(i), &d))
	defer runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	return newRuntimeDevice(d, h), nil
}

// Devices are all devices, in index order. Close each when done.
func (r *Runtime) Devices() ([]*Device, error) {
	out := make([]*Device, 0, r.DeviceCount())
	for i := 0; i < cap(out); i++ {
		d, err := r.Device(i)
		if err != nil {
			for _, d := range out {
				d.Close()
			}
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// DefaultDevice is the device CATALYST_DEVICE names, else the first GPU or accelerator,
// else the first device (ctl_runtime_default_device). Close it when done.
func (r *Runtime) DefaultDevice() (*Device, error) {
	var d *C.ctl_device
	h := r.handle()
	err := statusError(C.ctl_runtime_default_device(h, &d))
	defer runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	return newRuntimeDevice(d, h), nil
}

// FindDevice is the device `name` means: "cpu:0", "opencl", "reference" or an index.
func (r *Runtime) FindDevice(name string) (*Device, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var d *C.ctl_device
	h := r.handle()
	err := statusError(C.ctl_runtime_find_device(h, cname, &d))
	defer runtime.KeepAlive(r)
	if err != nil {
		return nil, err
	}
	return newRuntimeDevice(d, h), nil
}

// SetGradEnabled turns autograd recording on or off for ops on this runtime's devices and
// returns the previous setting. The switch is the runtime's, not the goroutine's: it
// applies to every goroutine running ops on the runtime's devices.
func (r *Runtime) SetGradEnabled(enabled bool) (previous bool, err error) {
	var prev C.bool
	err = statusError(C.ctl_runtime_set_grad_enabled(r.handle(), C.bool(enabled), &prev))
	runtime.KeepAlive(r)
	return bool(prev), err
}

// NoGrad runs fn with recording off and then restores the previous setting (runtime-wide,
// as SetGradEnabled).
func (r *Runtime) NoGrad(fn func() error) error {
	previous, err := r.SetGradEnabled(false)
	if err != nil {
		return err
	}
	defer r.SetGradEnabled(previous)
	return fn()
}

// PluginInfo is what discovery made of one candidate plugin file (ctl_plugin_info).
type PluginInfo struct {
	Path, Name, Version string
	Accepted            bool
	Reason, Source      string
	ABIMajor, ABIMinor  uint32
	DeviceCount         int
}

// Plugins are the candidate plugin files seen, accepted or rejected.
func (r *Runtime) Plugins() ([]PluginInfo, error) {
	h := r.handle()
	defer runtime.KeepAlive(r)
	n := int(C.ctl_runtime_plugin_count(h))
	out := make([]PluginInfo, 0, n)
	for i := 0; i < n; i++ {
		var info C.ctl_plugin_info
		info.struct_size = C.CTL_PLUGIN_INFO_STRUCT_SIZE
		if err := statusError(C.ctl_runtime_plugin_info(h, C.size_t(i), &info)); err != nil {
			return nil, err
		}
		out = append(out, PluginInfo{
			Path: C.GoString(info.path), Name: C.GoString(info.name), Version: C.GoString(info.version),
			Accepted: bool(info.accepted), Reason: C.GoString(info.reason), Source: C.GoString(info.source),
			ABIMajor: uint32(info.abi_major), ABIMinor: uint32(info.abi_minor), DeviceCount: int(info.device_count),
		})
	}
	return out, nil
}
