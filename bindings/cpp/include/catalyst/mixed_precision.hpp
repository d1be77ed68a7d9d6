// mixed_precision.hpp — the compute precision of a model's products: with bf16 or f16 the
// matmuls (and attention's two products) read 16-bit copies of their operands and the
// device accumulates in f32 (docs/ops.md: matmul's f16/bf16 accumulate in at least f32 and
// round the result to the input dtype), while everything else (norms, softmax, the loss, the
// optimizer, the master weights) stays f32.
//
// The 16-bit copy of each weight is made once per training step and reused by every use of
// that weight in the step (the tied embedding, the three thirds of attention's qkv weight,
// every micro-batch), not once per use. The copy is a recorded cast of the f32 master
// weight, so autograd carries the gradient back through the cast (to f32) onto the master.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "catalyst/catalyst.hpp"

namespace catalyst::nn {

// "f32", "bf16" or "f16" to its dtype; false for anything else.
inline bool parse_precision(const std::string& text, ctl_dtype* out) {
  if (text == "f32") {
    *out = CTL_DTYPE_F32;
  } else if (text == "bf16") {
    *out = CTL_DTYPE_BF16;
  } else if (text == "f16") {
    *out = CTL_DTYPE_F16;
  } else {
    return false;
  }
  return true;
}
inline const char* precision_name(ctl_dtype dtype) {
  switch (dtype) {
    case CTL_DTYPE_BF16:
      return "bf16";
    case CTL_DTYPE_F16:
      return "f16";
    default:
      return "f32";
  }
}

// The per-step cache of 16-bit weight copies, shared by the modules of one model.
//
// A copy is valid while its master weight keeps its values, so the trainer calls new_step()
// after every optimizer step (and the loader after a checkpoint replaces the weights). Copies
// made with recording off (evaluation, sampling) carry no gradient, so they are kept apart
// from the recorded ones: a training forward never picks up an unrecorded copy.
class AutoCast {
 public:
  AutoCast(const Runtime& runtime, ctl_dtype compute) : runtime_(runtime), dtype_(compute) {
    if (compute != CTL_DTYPE_F32 && compute != CTL_DTYPE_BF16 && compute != CTL_DTYPE_F16) {
      throw Error(
          CTL_STATUS_INVALID_ARGUMENT,
          std::string("AutoCast: the compute precision must be f32, bf16 or f16, not ") + ctl_dtype_name(compute));
    }
  }
  ctl_dtype dtype() const { return dtype_; }
  bool active() const { return dtype_ != CTL_DTYPE_F32; }

  // The compute-precision copy of a parameter (weight or bias), made on its first use this step.
  // (By value: a reference into the cache would not survive the next insertion.)
  Tensor weight(const Tensor& w) {
    if (!active() || !w || w.dtype() == dtype_) return w;
    const bool recorded = recording() && w.requires_grad();
    for (const Entry& e : cache_) {
      if (e.master == w.get() && e.recorded == recorded) return e.copy;
    }
    cache_.push_back({w.get(), recorded, cast(w, dtype_)});
    ++casts_;
    return cache_.back().copy;
  }
  // An activation in the compute precision (a cast per use: activations change every call).
  Tensor input(const Tensor& x) const { return !active() || x.dtype() == dtype_ ? x : cast(x, dtype_); }
  // A product's 16-bit result back in f32, for the norms, softmax, residual adds and loss.
  Tensor output(const Tensor& y) const { return y.dtype() == CTL_DTYPE_F32 ? y : cast(y, CTL_DTYPE_F32); }

  // Forgets the copies: the master weights are about to change (or just did).
  void new_step() { cache_.clear(); }
  // Weight casts made so far (tests: one per weight per step, whatever the uses).
  int64_t weight_casts() const { return casts_; }

 private:
  // Whether autograd records now. The ABI has no getter, so this turns recording on and,
  // when it was off, off again: the trainer's runtime serves one thread.
  bool recording() const {
    const bool on = runtime_.set_grad_enabled(true);
    if (!on) runtime_.set_grad_enabled(false);
    return on;
  }
  struct Entry {
    ctl_tensor* master;  // identity only; the model's parameter holds the reference
    bool recorded;
    Tensor copy;
  };
  Runtime runtime_;
  ctl_dtype dtype_;
  std::vector<Entry> cache_;  // a few dozen weights: a linear scan beats hashing
  int64_t casts_ = 0;
};

}  // namespace catalyst::nn
