// dlpack_fuzzer.cpp — libFuzzer harness for ctl_tensor_from_dlpack and
// ctl_tensor_from_dlpack_versioned: DLManagedTensor and DLManagedTensorVersioned structs
// whose every field comes from the input (version, flags, device, ndim, dtype, shape,
// strides, byte_offset, and a data pointer into a real 256-byte buffer, past it, or NULL).
//
// The harness computes on its own, in 128-bit arithmetic, what the struct describes: the
// first and last byte of the view. Import must refuse what wraps around memory or is
// misaligned; when it accepts, the tensor must have the struct's shape, and when the view
// lies inside the buffer its elements read back through the core must be the buffer's.
// The deleter must not run on failure and must run exactly once after the last release.
// Views and an export are taken from accepted tensors, since they may carry strides no
// other path makes (huge strides on axes of size 1).
#include <dlpack/dlpack.h>

#include <memory>
#include <vector>

#include "dlpack_versioned.h"
#include "fuzz_support.h"

namespace {

using fuzz::Input;

constexpr size_t kBufferBytes = 256;

struct Producer {
  alignas(64) uint8_t buffer[kBufferBytes];
  int64_t shape[12];
  int64_t strides[12];
  int deleted = 0;
};

struct Decoded {
  DLTensor dl{};
  bool versioned = false;
  DLPackVersion version{1, 0};
  uint64_t flags = 0;
};

void delete_0x(DLManagedTensor* self) {
  ++static_cast<Producer*>(self->manager_ctx)->deleted;
}
void delete_versioned(DLManagedTensorVersioned* self) {
  ++static_cast<Producer*>(self->manager_ctx)->deleted;
}

Decoded decode(Input& in, Producer& p) {
  Decoded d;
  const uint8_t form = in.byte();
  d.versioned = form & 1;
  if (form & 2) d.version = {in.raw<uint32_t>(), in.raw<uint32_t>()};
  if (form & 4) d.flags = in.byte() < 128 ? uint64_t{1} << in.below(64) : in.raw<uint64_t>();
  const uint8_t device = in.byte();
  d.dl.device = {device < 200 ? kDLCPU : kDLCUDAHost, device % 17 == 16 ? in.raw<int32_t>() : 0};
  if (device >= 230) {
    // Any int, as a C producer may store: written as bytes, never held as the C++ enum.
    const int32_t type = in.raw<int32_t>();
    std::memcpy(&d.dl.device.device_type, &type, sizeof type);
  }
  const uint8_t rank = in.byte();
  d.dl.ndim = rank < 240 ? rank % 5 : static_cast<int32_t>(in.raw<int8_t>());
  static const DLDataType kDtypes[] = {{kDLFloat, 32, 1},  {kDLFloat, 64, 1}, {kDLFloat, 16, 1},
                                       {kDLBfloat, 16, 1}, {kDLInt, 8, 1},    {kDLUInt, 8, 1},
                                       {kDLInt, 32, 1},    {kDLInt, 64, 1},   {6, 8, 1}};
  const uint8_t type = in.byte();
  d.dl.dtype = type < 240 ? kDtypes[type % 9] : DLDataType{in.byte(), in.byte(), in.raw<uint16_t>()};
  for (auto& s : p.shape) s = in.dim();
  const uint8_t strided = in.byte();
  for (auto& s : p.strides) s = strided < 200 ? in.byte() % 9 : in.integer();
  d.dl.shape = (rank == 255 && d.dl.ndim > 0) ? nullptr : p.shape;
  d.dl.strides = strided % 3 == 0 ? nullptr : p.strides;
  const uint8_t where = in.byte();
  d.dl.data = where < 220 ? p.buffer : where < 240 ? nullptr : p.buffer + in.byte();
  const uint8_t offset = in.byte();
  d.dl.byte_offset = offset < 160   ? offset % 64
                     : offset < 200 ? UINT64_MAX - offset % 16
                     : offset < 220 ? static_cast<uint64_t>(in.integer())
                                    : in.raw<uint64_t>();
  return d;
}

// What the struct describes, in arithmetic that cannot overflow.
struct Extent {
  bool empty = false;
  unsigned __int128 first = 0;  // address of the first element
  unsigned __int128 last = 0;   // address of the last byte
  bool negative_stride = false;
};

Extent describe(const DLTensor& dl, size_t element_size) {
  Extent e;
  for (int32_t i = 0; i < dl.ndim; ++i) e.empty = e.empty || dl.shape[i] == 0;
  e.first = static_cast<unsigned __int128>(reinterpret_cast<uintptr_t>(dl.data)) + dl.byte_offset;
  unsigned __int128 span = 0;
  for (int32_t i = 0; i < dl.ndim && !e.empty; ++i) {
    int64_t stride = 1;
    if (dl.strides) {
      stride = dl.strides[i];
    } else {
      for (int32_t j = i + 1; j < dl.ndim; ++j) stride *= std::max<int64_t>(dl.shape[j], 1);
    }
    if (stride < 0) e.negative_stride = true;
    span += static_cast<unsigned __int128>(dl.shape[i] - 1) * static_cast<uint64_t>(stride);
  }
  e.last = e.first + span * element_size + element_size - 1;
  return e;
}

size_t dtype_size_of(const DLDataType& t) {
  return t.bits / 8;
}

void exercise(ctl_tensor* t, const DLTensor& dl, const Extent& e, const Producer& p) {
  ctl_tensor_info info{};
  info.struct_size = CTL_TENSOR_INFO_STRUCT_SIZE;
  if (!fuzz::ok(ctl_tensor_get_info(t, &info))) fuzz::fail("ctl_tensor_get_info failed on an import");
  if (info.rank != static_cast<size_t>(dl.ndim)) fuzz::fail("an import has the wrong rank");
  // An empty view keeps no strides of the producer's: it gets contiguous ones (catalyst.h).
  int64_t contiguous_stride = 1;
  for (int32_t i = dl.ndim; i-- > 0;) {
    const int64_t want = e.empty || !dl.strides ? contiguous_stride : dl.strides[i];
    contiguous_stride *= dl.shape[i] > 1 ? dl.shape[i] : 1;
    if (info.shape[i] != dl.shape[i]) fuzz::fail("an import has the wrong shape");
    if ((e.empty || dl.strides) && dl.shape[i] > 1 && info.strides[i] != want) fuzz::fail("an import lost a stride");
  }
  const auto base = reinterpret_cast<uintptr_t>(p.buffer);
  const bool inside = e.empty || (e.first >= base && e.last < base + kBufferBytes);
  if (!inside) return;  // the producer described memory it does not have: nothing may be read
  // Read back element by element from the buffer itself and compare.
  const std::vector<uint8_t> bytes = fuzz::host_bytes(t);
  const size_t size = dtype_size_of(dl.dtype);
  std::vector<int64_t> index(static_cast<size_t>(dl.ndim), 0);
  for (size_t k = 0; !e.empty && k * size < bytes.size(); ++k) {
    uint64_t offset = 0;
    for (int32_t i = 0; i < dl.ndim; ++i) offset += static_cast<uint64_t>(index[i] * info.strides[i]);
    const auto* element = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(e.first)) + offset * size;
    if (std::memcmp(element, bytes.data() + k * size, size) != 0) fuzz::fail("an import reads the wrong bytes");
    for (int32_t i = dl.ndim; i-- > 0;) {
      if (++index[i] < dl.shape[i]) break;
      index[i] = 0;
    }
  }
  // Views over the imported strides, and the export back.
  ctl_tensor* view = fuzz::sentinel();
  if (info.rank >= 2 && fuzz::ok(ctl_tensor_transpose(t, 0, -1, &view))) {
    fuzz::host_bytes(view);
    ctl_tensor* flat = fuzz::sentinel();
    const int64_t all = -1;
    if (fuzz::ok(ctl_tensor_reshape(view, 1, &all, &flat))) ctl_tensor_release(flat);
    ctl_tensor_release(view);
  }
  DLManagedTensor* exported = nullptr;
  if (fuzz::ok(ctl_tensor_to_dlpack(t, &exported))) {
    if (exported->dl_tensor.ndim != dl.ndim) fuzz::fail("an export has the wrong rank");
    exported->deleter(exported);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Runtime& rt = fuzz::Runtime::get();
  Input in(data, size);
  auto p = std::make_unique<Producer>();
  for (size_t i = 0; i < kBufferBytes; ++i) p->buffer[i] = static_cast<uint8_t>(i * 7 + 1);
  Decoded d = decode(in, *p);
  ctl_device* device = in.byte() < 230 ? rt.cpu : rt.reference;

  DLManagedTensor managed{d.dl, p.get(), &delete_0x};
  DLManagedTensorVersioned versioned{d.version, p.get(), &delete_versioned, d.flags, d.dl};
  ctl_tensor* t = fuzz::sentinel();
  ctl_status* status = d.versioned ? ctl_tensor_from_dlpack_versioned(device, &versioned, &t)
                                   : ctl_tensor_from_dlpack(device, &managed, &t);
  if (!fuzz::ok(status)) {
    if (t != fuzz::sentinel()) fuzz::fail("a failed import wrote its out-parameter");
    if (p->deleted) fuzz::fail("a failed import called the deleter");
    return 0;
  }
  if (!t || t == fuzz::sentinel()) fuzz::fail("an import succeeded without a tensor");
  // Accepted: the struct must describe addressable, aligned memory of a known dtype.
  const size_t element = dtype_size_of(d.dl.dtype);
  if (d.dl.dtype.lanes != 1 || element == 0) fuzz::fail("an import accepted a dtype it cannot hold");
  if (d.dl.ndim < 0 || d.dl.ndim > CTL_MAX_RANK) fuzz::fail("an import accepted an impossible ndim");
  if (d.versioned && (d.version.major != 1 || (d.flags & ~uint64_t{6}))) {
    fuzz::fail("an import accepted a version or flags it does not know");
  }
  const Extent e = describe(d.dl, element);
  if (e.negative_stride) fuzz::fail("an import accepted a negative stride");
  if (!e.empty) {
    if (!d.dl.data) fuzz::fail("an import accepted NULL data");
    if (e.last >= (static_cast<unsigned __int128>(1) << 64)) fuzz::fail("an import accepted memory that wraps");
    if (static_cast<uint64_t>(e.first) % element) fuzz::fail("an import accepted misaligned memory");
  }
  exercise(t, d.dl, e, *p);
  if (p->deleted) fuzz::fail("the deleter ran while the tensor lived");
  ctl_tensor_release(t);
  if (p->deleted != 1) fuzz::fail("the deleter did not run exactly once after the last release");
  return 0;
}
