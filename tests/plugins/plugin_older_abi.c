/* A plugin as a vendor would have built it against the smallest 1.0 form of the ABI and
 * loaded under a newer core:
 *  - its ctl_plugin_api is a struct of its own that ends at op_execute, with struct_size
 *    CTL_PLUGIN_API_MIN_STRUCT_SIZE; the bytes after it are poison (non-NULL junk), so a core
 *    that reads past struct_size calls junk and crashes instead of passing by luck;
 *  - device_properties writes only the prefix of ctl_plugin_device_properties it knows
 *    (through compute_units), so the core's defaults must show through for the rest.
 * It is a minimal synchronous host-memory device: FILL (f32, i32, i64, bool), COPY (any
 * dtype, any strides) and ADD (f32). Everything else is UNSUPPORTED from op_execute. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "catalyst_plugin.h"

/* ---- the older table: every entry through op_execute and nothing after ---------------- */
typedef struct older_plugin_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;
  const char* version;
  ctl_status* (*instance_create)(const ctl_host_api* host, ctl_plugin_instance** out_instance);
  void (*instance_destroy)(ctl_plugin_instance* instance);
  ctl_status* (*device_count)(ctl_plugin_instance* instance, uint32_t* out_count);
  ctl_status* (*device_get)(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device);
  ctl_status* (*device_properties)(ctl_plugin_device* device, ctl_plugin_device_properties* out_properties);
  ctl_status* (*buffer_allocate)(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer);
  void (*buffer_free)(ctl_plugin_device* device, ctl_plugin_buffer* buffer);
  ctl_status* (*buffer_write)(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, const void* source,
                              uint64_t size);
  ctl_status* (*buffer_read)(ctl_plugin_stream* stream, ctl_plugin_buffer* buffer, uint64_t offset, void* destination,
                             uint64_t size);
  ctl_status* (*stream_create)(ctl_plugin_device* device, ctl_plugin_stream** out_stream);
  void (*stream_destroy)(ctl_plugin_stream* stream);
  ctl_status* (*stream_synchronize)(ctl_plugin_stream* stream);
  ctl_status* (*op_execute)(ctl_plugin_stream* stream, const ctl_op_call* call);
} older_plugin_api;

/* C99 has no _Static_assert: a negative array size fails the build instead. */
typedef char older_table_is_the_minimum[sizeof(older_plugin_api) == CTL_PLUGIN_API_MIN_STRUCT_SIZE ? 1 : -1];
typedef char
    older_table_layout_matches[offsetof(older_plugin_api, op_execute) == offsetof(ctl_plugin_api, op_execute) ? 1 : -1];

/* The device properties this plugin knows: up to and including compute_units. */
#define OLDER_PROPERTIES_SIZE (offsetof(ctl_plugin_device_properties, compute_units) + sizeof(uint32_t))

/* ---- objects ----------------------------------------------------------------------------- */
typedef struct Instance {
  const ctl_host_api* host;
  int device; /* its address is the one device handle */
} Instance;

typedef struct Buffer {
  unsigned char* data;
  uint64_t size;
} Buffer;

typedef struct Stream {
  Instance* instance;
} Stream;

static Instance* instance_of_device(ctl_plugin_device* device) {
  return (Instance*)((char*)device - offsetof(Instance, device));
}

static ctl_status* fail(const ctl_host_api* host, ctl_status_code code, const char* message) {
  return host->status_create(host->context, code, message);
}

static ctl_status* instance_create(const ctl_host_api* host, ctl_plugin_instance** out_instance) {
  Instance* instance = (Instance*)host->alloc(host->context, sizeof(Instance), sizeof(void*));
  if (!instance) return fail(host, CTL_STATUS_OUT_OF_MEMORY, "older: no memory");
  instance->host = host;
  instance->device = 0;
  *out_instance = (ctl_plugin_instance*)instance;
  return NULL;
}

static void instance_destroy(ctl_plugin_instance* instance) {
  Instance* self = (Instance*)instance;
  self->host->free(self->host->context, self);
}

static ctl_status* device_count(ctl_plugin_instance* instance, uint32_t* out_count) {
  (void)instance;
  *out_count = 1;
  return NULL;
}

static ctl_status* device_get(ctl_plugin_instance* instance, uint32_t index, ctl_plugin_device** out_device) {
  Instance* self = (Instance*)instance;
  if (index != 0) return fail(self->host, CTL_STATUS_NOT_FOUND, "older: one device only");
  *out_device = (ctl_plugin_device*)&self->device;
  return NULL;
}

static ctl_status* device_properties(ctl_plugin_device* device, ctl_plugin_device_properties* out) {
  ctl_plugin_device_properties p;
  size_t size = out->struct_size < OLDER_PROPERTIES_SIZE ? out->struct_size : OLDER_PROPERTIES_SIZE;
  (void)device;
  memset(&p, 0, sizeof p);
  p.struct_size = out->struct_size;
  p.next = out->next;
  p.name = "older test device";
  p.vendor = "Catalyst tests";
  p.driver_version = "1.0-min";
  p.kind = CTL_DEVICE_KIND_ACCELERATOR;
  p.memory_total = 1u << 20;
  p.memory_free = 1u << 19;
  p.compute_units = 3;
  memcpy(out, &p, size); /* nothing past compute_units is touched */
  return NULL;
}

static ctl_status* buffer_allocate(ctl_plugin_device* device, uint64_t size, ctl_plugin_buffer** out_buffer) {
  const ctl_host_api* host = instance_of_device(device)->host;
  Buffer* buffer = (Buffer*)host->alloc(host->context, sizeof(Buffer), sizeof(void*));
  if (!buffer) return fail(host, CTL_STATUS_OUT_OF_MEMORY, "older: no memory");
  buffer->data = (unsigned char*)host->alloc(host->context, size ? (size_t)size : 1, 64);
  if (!buffer->data) {
    host->free(host->context, buffer);
    return fail(host, CTL_STATUS_OUT_OF_MEMORY, "older: no memory");
  }
  buffer->size = size;
  *out_buffer = (ctl_plugin_buffer*)buffer;
  return NULL;
}

static void buffer_free(ctl_plugin_device* device, ctl_plugin_buffer* handle) {
  const ctl_host_api* host = instance_of_device(device)->host;
  Buffer* buffer = (Buffer*)handle;
  if (!buffer) return;
  host->free(host->context, buffer->data);
  host->free(host->context, buffer);
}

static ctl_status* buffer_write(ctl_plugin_stream* stream, ctl_plugin_buffer* handle, uint64_t offset,
                                const void* source, uint64_t size) {
  Buffer* buffer = (Buffer*)handle;
  if (offset > buffer->size || size > buffer->size - offset) {
    return fail(((Stream*)stream)->instance->host, CTL_STATUS_OUT_OF_RANGE, "older: write out of range");
  }
  if (size) memcpy(buffer->data + offset, source, (size_t)size);
  return NULL;
}

static ctl_status* buffer_read(ctl_plugin_stream* stream, ctl_plugin_buffer* handle, uint64_t offset, void* destination,
                               uint64_t size) {
  Buffer* buffer = (Buffer*)handle;
  if (offset > buffer->size || size > buffer->size - offset) {
    return fail(((Stream*)stream)->instance->host, CTL_STATUS_OUT_OF_RANGE, "older: read out of range");
  }
  if (size) memcpy(destination, buffer->data + offset, (size_t)size);
  return NULL;
}

static ctl_status* stream_create(ctl_plugin_device* device, ctl_plugin_stream** out_stream) {
  Instance* instance = instance_of_device(device);
  Stream* stream = (Stream*)instance->host->alloc(instance->host->context, sizeof(Stream), sizeof(void*));
  if (!stream) return fail(instance->host, CTL_STATUS_OUT_OF_MEMORY, "older: no memory");
  stream->instance = instance;
  *out_stream = (ctl_plugin_stream*)stream;
  return NULL;
}

static void stream_destroy(ctl_plugin_stream* stream) {
  const ctl_host_api* host = ((Stream*)stream)->instance->host;
  host->free(host->context, stream);
}

static ctl_status* stream_synchronize(ctl_plugin_stream* stream) {
  (void)stream;
  return NULL;
}

/* ---- ops: a strided walk over the output's shape ---------------------------------------- */
static size_t dtype_size(ctl_dtype dtype) {
  switch (dtype) {
    case CTL_DTYPE_F64:
    case CTL_DTYPE_I64:
      return 8;
    case CTL_DTYPE_F32:
    case CTL_DTYPE_I32:
      return 4;
    case CTL_DTYPE_F16:
    case CTL_DTYPE_BF16:
      return 2;
    default:
      return 1;
  }
}

static unsigned char* element(const ctl_tensor_view* view, const int64_t* index) {
  int64_t offset = 0;
  uint32_t i;
  for (i = 0; i < view->rank; ++i) offset += index[i] * view->strides[i];
  return ((Buffer*)view->buffer)->data + view->byte_offset + (uint64_t)offset * dtype_size(view->dtype);
}

/* Advances a row-major multi-index over `shape`; false after the last element. */
static int next_index(uint32_t rank, const int64_t* shape, int64_t* index) {
  uint32_t i = rank;
  while (i-- > 0) {
    if (++index[i] < shape[i]) return 1;
    index[i] = 0;
  }
  return 0;
}

static int64_t numel_of(const ctl_tensor_view* view) {
  int64_t n = 1;
  uint32_t i;
  for (i = 0; i < view->rank; ++i) n *= view->shape[i];
  return n;
}

static ctl_status* op_execute(ctl_plugin_stream* stream, const ctl_op_call* call) {
  const ctl_host_api* host = ((Stream*)stream)->instance->host;
  const ctl_tensor_view* out;
  int64_t index[CTL_MAX_RANK] = {0};
  if (!call || call->output_count < 1 || !call->outputs[0]) {
    return fail(host, CTL_STATUS_INVALID_ARGUMENT, "older: malformed call");
  }
  out = call->outputs[0];
  if (numel_of(out) == 0) return NULL;
  switch (call->op) {
    case CTL_OP_FILL: {
      const double value = call->attrs ? ((const ctl_fill_attrs*)call->attrs)->value : 0.0;
      do {
        unsigned char* p = element(out, index);
        switch (out->dtype) {
          case CTL_DTYPE_F32: {
            float v = (float)value;
            memcpy(p, &v, 4);
            break;
          }
          case CTL_DTYPE_I32: {
            int32_t v = (int32_t)value;
            memcpy(p, &v, 4);
            break;
          }
          case CTL_DTYPE_I64: {
            int64_t v = (int64_t)value;
            memcpy(p, &v, 8);
            break;
          }
          case CTL_DTYPE_BOOL:
            *p = value != 0.0;
            break;
          default:
            return fail(host, CTL_STATUS_UNSUPPORTED, "older: fill of this dtype is unsupported");
        }
      } while (next_index(out->rank, out->shape, index));
      return NULL;
    }
    case CTL_OP_COPY: {
      const size_t size = dtype_size(out->dtype);
      if (call->input_count != 1 || !call->inputs[0] || call->inputs[0]->dtype != out->dtype) {
        return fail(host, CTL_STATUS_INVALID_ARGUMENT, "older: malformed copy");
      }
      do {
        memcpy(element(out, index), element(call->inputs[0], index), size);
      } while (next_index(out->rank, out->shape, index));
      return NULL;
    }
    case CTL_OP_ADD: {
      if (out->dtype != CTL_DTYPE_F32) {
        return fail(host, CTL_STATUS_UNSUPPORTED, "older: add supports f32 only");
      }
      do {
        float a, b, c;
        memcpy(&a, element(call->inputs[0], index), 4);
        memcpy(&b, element(call->inputs[1], index), 4);
        c = a + b;
        memcpy(element(out, index), &c, 4);
      } while (next_index(out->rank, out->shape, index));
      return NULL;
    }
    default:
      return fail(host, CTL_STATUS_UNSUPPORTED, "older: this op is unsupported by the older test plugin");
  }
}

#define POISON(n) ((const void*)(uintptr_t)(n))

/* ---- the table, followed by poison where a newer table would have optional entries ------- */
static const struct {
  older_plugin_api api;
  const void* poison[16];
} g_table = {{CTL_PLUGIN_API_MIN_STRUCT_SIZE, 1, 0, "older", "1.0-min", instance_create, instance_destroy, device_count,
              device_get, device_properties, buffer_allocate, buffer_free, buffer_write, buffer_read, stream_create,
              stream_destroy, stream_synchronize, op_execute},
             {POISON(0x0de1), POISON(0x0de2), POISON(0x0de3), POISON(0x0de4), POISON(0x0de5), POISON(0x0de6),
              POISON(0x0de7), POISON(0x0de8), POISON(0x0de9), POISON(0x0dea), POISON(0x0deb), POISON(0x0dec),
              POISON(0x0ded), POISON(0x0dee), POISON(0x0def), POISON(0x0df0)}};

CTL_EXPORT const ctl_plugin_api* ctl_plugin_query(uint32_t core_abi_major, uint32_t core_abi_minor,
                                                  const ctl_host_api* host) {
  (void)core_abi_minor;
  if (core_abi_major != 1) {
    host->log(host->context, CTL_LOG_ERROR, "older: built for ABI 1.x");
    return NULL;
  }
  return (const ctl_plugin_api*)(const void*)&g_table.api;
}
