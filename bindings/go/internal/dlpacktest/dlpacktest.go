// Package dlpacktest makes DLManagedTensorVersioned capsules in C memory, well-formed or
// deliberately not, for the catalyst package's tests (cgo is not allowed in _test.go
// files). Each capsule owns 64 floats 0, 1, ..., 63 and counts its deleter's calls.
package dlpacktest

// #include <stdlib.h>
// #include <string.h>
// #cgo pkg-config: catalyst
// #include <catalyst_dlpack.h>
//
// static int dlpacktest_deleted;
//
// typedef struct {
//   DLManagedTensorVersioned managed;
//   int64_t shape[8];
//   int64_t strides[8];
//   float data[64];
// } dlpacktest_capsule;
//
// static void dlpacktest_delete(DLManagedTensorVersioned* self) {
//   __atomic_add_fetch(&dlpacktest_deleted, 1, __ATOMIC_SEQ_CST);
//   free(self->manager_ctx);
// }
//
// static DLManagedTensorVersioned* dlpacktest_new(void) {
//   dlpacktest_capsule* c = calloc(1, sizeof(dlpacktest_capsule));
//   if (!c) return NULL;
//   for (int i = 0; i < 64; ++i) c->data[i] = (float)i;
//   c->managed.version.major = 1;
//   c->managed.manager_ctx = c;
//   c->managed.deleter = dlpacktest_delete;
//   c->managed.dl_tensor.data = c->data;
//   c->managed.dl_tensor.device.device_type = kDLCPU;
//   c->managed.dl_tensor.shape = c->shape;
//   return &c->managed;
// }
// static int64_t* dlpacktest_shape(DLManagedTensorVersioned* m) { return ((dlpacktest_capsule*)m->manager_ctx)->shape; }
// static int64_t* dlpacktest_strides(DLManagedTensorVersioned* m) { return ((dlpacktest_capsule*)m->manager_ctx)->strides; }
// static int dlpacktest_deleted_count(void) { return __atomic_load_n(&dlpacktest_deleted, __ATOMIC_SEQ_CST); }
import "C"

import "unsafe"

// Spec describes a capsule; the zero value of each field is the well-formed choice except
// Shape (nil: a scalar) and the dtype (zero Code/Bits/Lanes: f32).
type Spec struct {
	DeviceType int32 // 0: kDLCPU
	Code, Bits uint8
	Lanes      uint16
	Shape      []int64
	Strides    []int64 // nil: contiguous
	ByteOffset uint64
	Flags      uint64
	Major      uint32 // 0: 1
	NullData   bool
	NullShape  bool // ndim > 0 with a NULL shape pointer
}

// New makes a capsule; the caller owns it (pass it to catalyst.DLPackFromPointer).
func New(s Spec) unsafe.Pointer {
	m := C.dlpacktest_new()
	dl := &m.dl_tensor
	if s.DeviceType != 0 {
		dl.device.device_type = C.DLDeviceType(s.DeviceType)
	}
	dl.dtype.code, dl.dtype.bits, dl.dtype.lanes = 2, 32, 1 // kDLFloat, 32 bits
	if s.Code != 0 || s.Bits != 0 || s.Lanes != 0 {
		dl.dtype.code, dl.dtype.bits, dl.dtype.lanes = C.uint8_t(s.Code), C.uint8_t(s.Bits), C.uint16_t(s.Lanes)
	}
	dl.ndim = C.int32_t(len(s.Shape))
	shape := unsafe.Slice((*int64)(unsafe.Pointer(C.dlpacktest_shape(m))), 8)
	copy(shape, s.Shape)
	if s.Strides != nil {
		strides := unsafe.Slice((*int64)(unsafe.Pointer(C.dlpacktest_strides(m))), 8)
		copy(strides, s.Strides)
		dl.strides = C.dlpacktest_strides(m)
	}
	dl.byte_offset = C.uint64_t(s.ByteOffset)
	m.flags = C.uint64_t(s.Flags)
	if s.Major != 0 {
		m.version.major = C.uint32_t(s.Major)
	}
	if s.NullData {
		dl.data = nil
	}
	if s.NullShape {
		dl.shape = nil
	}
	return unsafe.Pointer(m)
}

// Deleted is how many capsules' deleters have run, in this process.
func Deleted() int { return int(C.dlpacktest_deleted_count()) }
