// optim.hpp — optimizers and the schedule around them: SGD with momentum, AdamW (the fused
// adamw_step op), warm-up plus cosine learning rate, and gradient clipping by global norm.
// Steps run with recording off and update parameters in place (ctl_op_run_into).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "catalyst/nn.hpp"

namespace catalyst::optim {

// Linear warm-up from 0 to `peak` over `warmup` steps, then a cosine down to `floor` at
// `total` steps (and `floor` after). `step` counts from 0.
inline double warmup_cosine(int64_t step, int64_t warmup, int64_t total, double peak, double floor) {
  if (warmup > 0 && step < warmup) return peak * double(step + 1) / double(warmup);
  if (step >= total) return floor;
  const double progress = double(step - warmup) / double(std::max<int64_t>(1, total - warmup));
  return floor + 0.5 * (peak - floor) * (1.0 + std::cos(M_PI * progress));
}

// The gradients' squared norms, one per parameter, gathered per device: the device half of
// clip_grad_norm. No host read happens here, so a captured graph can compute it
// (examples/gpt/graph_step.hpp). Each sum is kept in f32 (f64 for f64 gradients): a sum of
// f32, f16 or bf16 squares is already rounded to its dtype, and f32 holds it exactly, so a
// device without f64 computes it too and the host widens the same values a cast to f64 gave.
struct GradSquares {
  std::vector<Tensor> grads;             // the gradients, in parameter order (parameters without one skipped)
  std::vector<size_t> device_of_square;  // index into per_device, per gradient
  std::vector<Tensor> per_device;        // each device's squared norms in parameter order, concatenated
};

inline GradSquares grad_squares(const Runtime& runtime, const nn::NamedTensors& params) {
  NoGrad no_grad(runtime);
  GradSquares out;
  std::vector<Tensor> squares;
  std::vector<Device> devices;  // where the parameters live, in first-seen order
  for (const auto& [name, p] : params) {
    Tensor g = p.grad();
    if (!g) continue;
    const ctl_dtype square_dtype = g.dtype() == CTL_DTYPE_F64 ? CTL_DTYPE_F64 : CTL_DTYPE_F32;
    squares.push_back(cast(sum(g * g), square_dtype).reshape({1}));
    const Device d = g.device();
    const size_t k = size_t(std::find(devices.begin(), devices.end(), d) - devices.begin());
    if (k == devices.size()) devices.push_back(d);
    out.device_of_square.push_back(k);
    out.grads.push_back(std::move(g));
  }
  // One tensor per device, so the host half reads each device once for all its sums (a
  // wait for the device per parameter would stall a GPU every step).
  for (size_t k = 0; k < devices.size(); ++k) {
    // One dtype per device's tensor: f64 where any of its gradients is f64 (that device has
    // f64), else f32.
    bool wide = false;
    for (size_t i = 0; i < squares.size(); ++i) {
      wide = wide || (out.device_of_square[i] == k && squares[i].dtype() == CTL_DTYPE_F64);
    }
    std::vector<Tensor> mine;
    for (size_t i = 0; i < squares.size(); ++i) {
      if (out.device_of_square[i] != k) continue;
      mine.push_back(wide && squares[i].dtype() != CTL_DTYPE_F64 ? cast(squares[i], CTL_DTYPE_F64) : squares[i]);
    }
    out.per_device.push_back(concat(mine, 0));
  }
  return out;
}

// The host half of clip_grad_norm: reads the squared norms, adds them on the host in
// parameter order, so a model split over devices gets the one-device norm bit for bit, and
// scales the gradients by max_norm / norm when the norm is larger. Returns the norm.
inline double clip_with_squares(const Runtime& runtime, const GradSquares& squares, double max_norm) {
  NoGrad no_grad(runtime);
  std::vector<std::vector<double>> per_device;
  for (const Tensor& t : squares.per_device) {
    if (t.dtype() == CTL_DTYPE_F64) {
      per_device.push_back(t.to_vector<double>());
    } else {
      const std::vector<float> narrow = t.to_vector<float>();
      per_device.emplace_back(narrow.begin(), narrow.end());
    }
  }
  double total = 0;
  std::vector<size_t> next(per_device.size(), 0);
  for (size_t i = 0; i < squares.grads.size(); ++i) {
    const size_t k = squares.device_of_square[i];
    total += per_device[k][next[k]++];
  }
  const double norm = std::sqrt(total);
  if (max_norm > 0 && norm > max_norm) {
    const double scale = max_norm / (norm + 1e-6);
    for (const Tensor& g : squares.grads) copy_(g, g * scale);
  }
  return norm;
}

// The global L2 norm of the gradients; scales them by max_norm / norm when it is larger.
// Returns the norm before clipping. Parameters without a gradient are skipped.
inline double clip_grad_norm(const Runtime& runtime, const nn::NamedTensors& params, double max_norm) {
  return clip_with_squares(runtime, grad_squares(runtime, params), max_norm);
}

// Dynamic loss scaling for f16 products, whose gradients underflow to zero unscaled: the
// loss is multiplied by scale() before backward, and unscale_and_clip() divides the
// gradients by it again. A step whose scaled gradients hold an inf or NaN (the scale was
// too large for f16) is skipped: nothing is updated and the scale drops by `backoff`. After
// `growth_interval` good steps in a row the scale grows by `growth`, so it stays near the
// largest value that does not overflow. Disabled (bf16, f32), the scale is 1 and
// unscale_and_clip() is clip_grad_norm().
struct LossScaleOptions {
  double initial = 65536.0;  // 2^16; powers of two, so scaling and unscaling are exact
  double growth = 2.0;
  double backoff = 0.5;
  int64_t growth_interval = 200;
};

class LossScaler {
 public:
  LossScaler(bool enabled, LossScaleOptions options = {})
      : enabled_(enabled), o_(options), scale_(enabled ? options.initial : 1.0) {}
  bool enabled() const { return enabled_; }
  double scale() const { return scale_; }
  int64_t good_steps() const { return good_steps_; }        // good steps since the scale last changed
  int64_t skipped_steps() const { return skipped_steps_; }  // steps skipped in the whole run
  // For checkpoints: the state saved by the run being resumed.
  void set_state(double scale, int64_t good_steps, int64_t skipped_steps) {
    scale_ = scale;
    good_steps_ = good_steps;
    skipped_steps_ = skipped_steps;
  }

  // Divides the gradients by the scale and clips them to `max_norm` (0: no clipping) in one
  // pass. Returns the norm of the unscaled gradients, or false when the step must be skipped
  // (the gradients are then left as they are: zero them).
  bool unscale_and_clip(const Runtime& runtime, const nn::NamedTensors& params, double max_norm, double* out_norm) {
    if (!enabled_) {
      *out_norm = clip_grad_norm(runtime, params, max_norm);
      return true;
    }
    const double scaled = clip_grad_norm(runtime, params, 0.0);  // the norm alone
    if (!std::isfinite(scaled)) {
      ++skipped_steps_;
      good_steps_ = 0;
      scale_ *= o_.backoff;
      *out_norm = scaled;
      return false;
    }
    const double norm = scaled / scale_;
    double factor = 1.0 / scale_;
    if (max_norm > 0 && norm > max_norm) factor *= max_norm / (norm + 1e-6);
    {
      NoGrad no_grad(runtime);
      for (const auto& [name, p] : params) {
        const Tensor g = p.grad();
        if (g) copy_(g, g * factor);
      }
    }
    if (++good_steps_ >= o_.growth_interval) {
      good_steps_ = 0;
      scale_ *= o_.growth;
    }
    *out_norm = norm;
    return true;
  }

 private:
  bool enabled_;
  LossScaleOptions o_;
  double scale_;
  int64_t good_steps_ = 0;
  int64_t skipped_steps_ = 0;
};

// SGD with momentum: buf = momentum * buf + g; p -= lr * buf (PyTorch's SGD: the buffer
// starts at zero, so the first step's buffer is g), one fused sgd_step per parameter
// (ABI 1.2: a device whose plugin predates it answers UNSUPPORTED).
class SGD {
 public:
  SGD(nn::NamedTensors params, double momentum) : params_(std::move(params)), momentum_(momentum) {
    if (momentum_ != 0) {
      for (const auto& [name, p] : params_) buffers_.push_back(Tensor::zeros(p.device(), p.dtype(), p.shape()));
    }
  }
  void step(const Runtime& runtime, double lr) {
    NoGrad no_grad(runtime);
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i].second;
      Tensor g = p.grad();
      if (!g) continue;
      ctl_sgd_attrs a{};
      a.struct_size = CTL_SGD_ATTRS_STRUCT_SIZE;
      a.lr = lr;
      a.momentum = momentum_;
      run_into(CTL_OP_SGD_STEP, {&g}, &a, {&p, momentum_ != 0 ? &buffers_[i] : nullptr});
    }
  }
  void zero_grad() {
    for (const auto& [name, p] : params_) p.zero_grad();
  }

 private:
  nn::NamedTensors params_;
  std::vector<Tensor> buffers_;
  double momentum_;
};

struct AdamWOptions {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;  // applied to matrices only (rank >= 2), not to biases or norms
};

// AdamW through the fused adamw_step op; its state (moments and step count) can be saved
// and restored for bit-identical resumption.
class AdamW {
 public:
  AdamW(nn::NamedTensors params, AdamWOptions options) : params_(std::move(params)), o_(options) {
    for (const auto& [name, p] : params_) {
      m_.push_back(Tensor::zeros(p.device(), p.dtype(), p.shape()));
      v_.push_back(Tensor::zeros(p.device(), p.dtype(), p.shape()));
    }
  }
  // One adamw_step per parameter that has a gradient, in parameter order.
  void step(const Runtime& runtime, double lr) {
    NoGrad no_grad(runtime);
    ++steps_;
    for (size_t i = 0; i < params_.size(); ++i) {
      const Tensor& p = params_[i].second;
      Tensor g = p.grad();
      if (!g) continue;
      const ctl_adamw_attrs a = attrs(i, lr, steps_);
      run_into(CTL_OP_ADAMW_STEP, {&g}, &a, {&p, &m_[i], &v_[i]});
    }
  }
  // The attributes step() gives parameter `index` at learning rate `lr` on update number
  // `step` (1 for the first): what a captured step's nodes are updated with
  // (ctl_graph_set_node_attrs, examples/gpt/graph_step.hpp).
  ctl_adamw_attrs attrs(size_t index, double lr, int64_t step) const {
    ctl_adamw_attrs a{};
    a.struct_size = CTL_ADAMW_ATTRS_STRUCT_SIZE;
    a.lr = lr;
    a.beta1 = o_.beta1;
    a.beta2 = o_.beta2;
    a.eps = o_.eps;
    a.weight_decay = params_[index].second.rank() >= 2 ? o_.weight_decay : 0.0;
    a.step = static_cast<uint64_t>(step);
    return a;
  }
  size_t size() const { return params_.size(); }
  bool has_grad(size_t index) const { return bool(params_[index].second.grad()); }
  void zero_grad() {
    for (const auto& [name, p] : params_) p.zero_grad();
  }
  int64_t steps() const { return steps_; }
  void set_steps(int64_t steps) { steps_ = steps; }
  // The moments, named after their parameters, for checkpoints.
  nn::NamedTensors state() const {
    nn::NamedTensors out;
    for (size_t i = 0; i < params_.size(); ++i) {
      out.emplace_back("adamw.m." + params_[i].first, m_[i]);
      out.emplace_back("adamw.v." + params_[i].first, v_[i]);
    }
    return out;
  }

 private:
  nn::NamedTensors params_;
  AdamWOptions o_;
  std::vector<Tensor> m_, v_;
  int64_t steps_ = 0;
};

}  // namespace catalyst::optim
