// op_context.h — what every op kernel shares: the checked form of a tensor view, the
// per-call context (host, pool, error messages, scratch memory), and argument checks.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "catalyst/sdk/check.hpp"
#include "catalyst/sdk/raw_field.hpp"
#include "catalyst/sdk/status.hpp"
#include "catalyst_plugin.h"
#include "thread_pool.h"

namespace catalyst::cpu {

class BufferCache;

// A validated ctl_tensor_view: data already points at element [0, ...].
struct View {
  char* data = nullptr;
  ctl_dtype dtype = CTL_DTYPE_F32;
  size_t element_size = 0;
  uint32_t rank = 0;
  int64_t shape[CTL_MAX_RANK] = {};
  int64_t strides[CTL_MAX_RANK] = {};

  int64_t numel() const {
    int64_t n = 1;
    for (uint32_t i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  template <class T>
  T* as() const {
    return reinterpret_cast<T*>(data);
  }
  bool same_shape(const View& other) const {
    if (rank != other.rank) return false;
    for (uint32_t i = 0; i < rank; ++i) {
      if (shape[i] != other.shape[i]) return false;
    }
    return true;
  }
};

const char* op_name(ctl_op_id op);        // "add", ...; NULL for an unknown id
const char* dtype_name(ctl_dtype dtype);  // "f32", ...; "unknown"

struct OpContext {
  const ctl_host_api* host;
  ThreadPool* pool;
  const ctl_op_call* call;
  const char* name;              // the op's name, for messages
  BufferCache* cache = nullptr;  // the instance's, for large Scratch; null: none

  // A status whose message reads "cpu plugin: <op>: <formatted text>".
  [[gnu::format(printf, 3, 4)]] ctl_status* fail(ctl_status_code code, const char* format, ...) const;
  // NULL when an sdk check passed; else its status, with the same prefix.
  ctl_status* check(const sdk::Check& c) const { return c.ok() ? nullptr : fail(c.code, "%s", c.message); }

  unsigned threads() const { return pool ? pool->size() : 1u; }

  // Checks the counts of inputs and outputs against [min, max].
  ctl_status* expect_counts(uint32_t inputs_min, uint32_t inputs_max, uint32_t outputs_min, uint32_t outputs_max) const;
  // Reads input / output `index` into *out. With optional, a NULL (or missing) entry sets
  // *present to false instead of failing.
  ctl_status* input(uint32_t index, const char* what, View* out, bool optional = false, bool* present = nullptr) const;
  ctl_status* output(uint32_t index, const char* what, View* out, bool optional = false, bool* present = nullptr) const;
  // Copies the attribute struct into *out (zeroed first); fails when it is smaller than
  // `min_size`. Returns with *given false (and *out zeroed) when attrs is NULL.
  ctl_status* attrs(void* out, size_t out_size, size_t min_size, const char* struct_name, bool* given) const;

  ctl_status* expect_dtype(const View& v, const char* what, ctl_dtype dtype) const;
  ctl_status* expect_same_shape(const View& a, const char* a_name, const View& b, const char* b_name) const;
  // Checks that v has x's shape without its last axis (a norm's statistics, class ids).
  ctl_status* expect_leading_shape(const View& v, const char* v_name, const View& x, const char* x_name) const;
  // The shape of ops with one input x and one output y of x's shape (and of x's dtype
  // unless `same_dtype` is false): checks counts, reads both views.
  ctl_status* one_to_one(View* x, View* y, bool same_dtype = true) const;
};

// Scratch memory for one call, freed (or handed back) when the object goes out of scope.
// Up to BufferCache::kSmallBytes come from the small blocks the device keeps between calls
// (buffer_cache.h), so that a run of small ops neither calls the allocator nor takes a lock.
// Larger requests come from the device's BufferCache (context.cache) too, whose blocks stay
// mapped: through the host allocator the f32 sums of a 1024^3 f16 product (4 MiB) were
// mapped afresh on every call, and zeroing their pages took 5% of it. Without a cache, the
// host allocator serves them.
class Scratch {
 public:
  explicit Scratch(const OpContext& ctx) : host_(ctx.host) {}
  ~Scratch() { release(); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // Allocates `bytes` (64-byte aligned); OUT_OF_MEMORY status on failure.
  ctl_status* allocate(const OpContext& ctx, size_t bytes);
  template <class T>
  T* as() const {
    return static_cast<T*>(pointer_);
  }

 private:
  void release();

  const ctl_host_api* host_;
  void* pointer_ = nullptr;
  bool small_ = false;            // pointer_ is one of cache_'s small blocks
  BufferCache* cache_ = nullptr;  // pointer_ came from this cache (with this capacity, when large)
  size_t cached_capacity_ = 0;
};

// The integer stored in an enum field of a caller's struct (sdk/raw_field.hpp).
using sdk::raw_enum;

// *out = a * b; false when the product overflows int64.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

}  // namespace catalyst::cpu
