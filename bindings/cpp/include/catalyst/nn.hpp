// nn.hpp — the pieces of a model, on catalyst.hpp: named parameters initialised from the
// counter-based generator (so one seed gives the same model on every device), Linear,
// Embedding, LayerNorm, causal multi-head self-attention, an MLP, and a GPT. Linear and
// attention run their products in the precision of an AutoCast when one is set
// (mixed_precision.hpp); without one everything is f32 as before.
#pragma once

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/mixed_precision.hpp"

namespace catalyst::nn {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Moves a parameter to `device` as a new leaf that requires gradients (a placement before
// training, not a step autograd should see). Nothing happens when it is there already.
inline void move_parameter(Tensor& p, Device device) {
  if (!p || p.device() == device) return;
  p = p.to(device);
  p.set_requires_grad(true);
}

// Draws parameters from one seed: each parameter takes the next `numel` counters of the
// generator, so the values depend only on the seed and the order of creation.
class Init {
 public:
  Init(Device device, ctl_dtype dtype, uint64_t seed) : device_(device), dtype_(dtype), seed_(seed) {}
  Tensor normal(const Shape& shape, double stddev) { return draw(shape, true, 0.0, stddev); }
  Tensor uniform(const Shape& shape, double bound) { return draw(shape, false, -bound, bound); }
  Tensor constant(const Shape& shape, double value) {
    Tensor t = Tensor::full(device_, dtype_, shape, value);
    t.set_requires_grad(true);
    return t;
  }
  Device device() const { return device_; }
  ctl_dtype dtype() const { return dtype_; }

 private:
  Tensor draw(const Shape& shape, bool normal, double a, double b) {
    Tensor t = random(device_, dtype_, shape, normal, seed_, offset_, a, b);
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    offset_ += static_cast<uint64_t>(n);
    t.set_requires_grad(true);
    return t;
  }
  Device device_;
  ctl_dtype dtype_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};

// y = x @ W + b with W [in, out] (PyTorch-style uniform(-1/sqrt(in), 1/sqrt(in)) init).
class Linear {
 public:
  Linear() = default;
  Linear(Init& init, int64_t in, int64_t out, bool bias = true, double stddev = -1)
      : weight(stddev > 0 ? init.normal({in, out}, stddev) : init.uniform({in, out}, 1.0 / std::sqrt(double(in)))) {
    if (bias) this->bias = init.constant({out}, 0.0);
  }
  Tensor operator()(const Tensor& x, ctl_activation activation = CTL_ACTIVATION_NONE) const {
    return autocast ? autocast->output(product(x, activation)) : product(x, activation);
  }
  // The product in the compute precision, not cast back: a caller that feeds it to another
  // product (the MLP's hidden layer) saves a round trip through f32.
  Tensor product(const Tensor& x, ctl_activation activation = CTL_ACTIVATION_NONE) const {
    MatmulOptions o;
    o.activation = activation;
    if (!autocast || !autocast->active()) return matmul(x, weight, bias, o);
    return matmul(autocast->input(x), autocast->weight(weight), autocast->weight(bias), o);
  }
  void collect(const std::string& prefix, NamedTensors& out) const {
    out.emplace_back(prefix + ".weight", weight);
    if (bias) out.emplace_back(prefix + ".bias", bias);
  }
  void to(Device device) {
    move_parameter(weight, device);
    move_parameter(bias, device);
  }
  Tensor weight, bias;
  std::shared_ptr<AutoCast> autocast;  // none: f32
};

// Rows of a [count, width] table looked up by integer ids.
class Embedding {
 public:
  Embedding() = default;
  Embedding(Init& init, int64_t count, int64_t width, double stddev = 0.02)
      : weight(init.normal({count, width}, stddev)) {}
  Tensor operator()(const Tensor& ids) const { return gather(weight, ids, 0); }
  void collect(const std::string& prefix, NamedTensors& out) const { out.emplace_back(prefix + ".weight", weight); }
  void to(Device device) { move_parameter(weight, device); }
  Tensor weight;
};

class LayerNorm {
 public:
  LayerNorm() = default;
  LayerNorm(Init& init, int64_t width) : weight(init.constant({width}, 1.0)), bias(init.constant({width}, 0.0)) {}
  Tensor operator()(const Tensor& x) const { return layer_norm(x, weight, bias, 1e-5); }
  void collect(const std::string& prefix, NamedTensors& out) const {
    out.emplace_back(prefix + ".weight", weight);
    out.emplace_back(prefix + ".bias", bias);
  }
  void to(Device device) {
    move_parameter(weight, device);
    move_parameter(bias, device);
  }
  Tensor weight, bias;
};

// Causal multi-head self-attention on [B, T, C]: softmax(q k^T / sqrt(d) + mask) v, where
// the mask is -inf above the diagonal (a position never sees the future).
class CausalSelfAttention {
 public:
  CausalSelfAttention() = default;
  CausalSelfAttention(Init& init, int64_t width, int64_t heads, double proj_stddev)
      : heads_(heads), qkv(init, width, 3 * width, true, 0.02), proj(init, width, width, true, proj_stddev) {}

  Tensor operator()(const Tensor& x, const Tensor& mask) const {
    const Shape s = x.shape();
    const int64_t B = s[0], T = s[1], C = s[2], H = heads_, D = C / H;
    // q, k and v each come from their third of the qkv weight (a strided view), rather than
    // from slices of one [B, T, 3C] product: the gradient of a slice is a zero-filled
    // tensor of the whole, so three slices of the activations cost three such tensors and
    // two full-size additions per step, where slices of the weight cost that on [C, 3C].
    // Under mixed precision the input, the weight and the bias are cast once each (the
    // cast copies are sliced), the products come out in 16 bits and only the scores go
    // back to f32, for the softmax.
    const bool mixed = autocast && autocast->active();
    const Tensor xc = mixed ? autocast->input(x) : x;
    const Tensor weight = mixed ? autocast->weight(qkv.weight) : qkv.weight;
    const Tensor bias = mixed ? autocast->weight(qkv.bias) : qkv.bias;
    auto head_view = [&](int64_t part) {  // [B, H, T, D], a view of x W[:, part] + b[part]
      const Tensor w = weight.slice(1, part * C, (part + 1) * C);
      const Tensor b = bias ? bias.slice(0, part * C, (part + 1) * C) : Tensor();
      return matmul(xc, w, b).reshape({B, T, H, D}).permute({0, 2, 1, 3});
    };
    Tensor q = head_view(0), k = head_view(1), v = head_view(2);
    MatmulOptions scores;
    scores.transpose_b = true;
    scores.alpha = 1.0 / std::sqrt(double(D));
    // [B, H, T, T]; the mask (in the products' dtype) is added as the product's bias.
    Tensor att = matmul(q, k, mask, scores);
    Tensor p = softmax(mixed ? autocast->output(att) : att, -1);
    Tensor y = matmul(mixed ? autocast->input(p) : p, v);  // [B, H, T, D]
    y = y.permute({0, 2, 1, 3}).contiguous().reshape({B, T, C});
    return proj(y);
  }
  void collect(const std::string& prefix, NamedTensors& out) const {
    qkv.collect(prefix + ".qkv", out);
    proj.collect(prefix + ".proj", out);
  }
  void to(Device device) {
    qkv.to(device);
    proj.to(device);
  }
  void set_autocast(const std::shared_ptr<AutoCast>& a) {
    autocast = a;
    qkv.autocast = a;
    proj.autocast = a;
  }

 private:
  int64_t heads_ = 1;

 public:
  Linear qkv, proj;
  std::shared_ptr<AutoCast> autocast;  // none: f32
};

class MLP {
 public:
  MLP() = default;
  MLP(Init& init, int64_t width, int64_t hidden, double proj_stddev)
      : fc(init, width, hidden, true, 0.02), proj(init, hidden, width, true, proj_stddev) {}
  // The hidden layer stays in the compute precision between the two products.
  Tensor operator()(const Tensor& x) const { return proj(fc.product(x, CTL_ACTIVATION_GELU_TANH)); }
  void collect(const std::string& prefix, NamedTensors& out) const {
    fc.collect(prefix + ".fc", out);
    proj.collect(prefix + ".proj", out);
  }
  void to(Device device) {
    fc.to(device);
    proj.to(device);
  }
  void set_autocast(const std::shared_ptr<AutoCast>& a) {
    fc.autocast = a;
    proj.autocast = a;
  }
  Linear fc, proj;
};

struct GPTConfig {
  int64_t vocab = 256;
  int64_t context = 128;
  int64_t width = 128;
  int64_t heads = 4;
  int64_t layers = 4;
};

// A pre-norm GPT: token + position embeddings, `layers` blocks of
// x + attention(ln(x)) and x + mlp(ln(x)), a final layer norm, and logits through the
// token embedding (tied weights).
class GPT {
 public:
  GPT(Device device, ctl_dtype dtype, const GPTConfig& config, uint64_t seed) : config_(config) {
    Init init(device, dtype, seed);
    const double proj_stddev = 0.02 / std::sqrt(2.0 * double(config.layers));  // residual branches
    wte = Embedding(init, config.vocab, config.width);
    wpe = Embedding(init, config.context, config.width);
    for (int64_t i = 0; i < config.layers; ++i) {
      Block b;
      b.ln1 = LayerNorm(init, config.width);
      b.attn = CausalSelfAttention(init, config.width, config.heads, proj_stddev);
      b.ln2 = LayerNorm(init, config.width);
      b.mlp = MLP(init, config.width, 4 * config.width, proj_stddev);
      blocks.push_back(std::move(b));
    }
    ln_f = LayerNorm(init, config.width);
    // The causal mask, a constant outside the record: 0 where j <= i, -inf where j > i.
    const int64_t T = config.context;
    // Built in f32, which every device has (0 and -inf are exact in every float dtype).
    std::vector<float> m(static_cast<size_t>(T * T));
    for (int64_t i = 0; i < T; ++i) {
      for (int64_t j = 0; j < T; ++j) m[i * T + j] = j <= i ? 0.0f : -std::numeric_limits<float>::infinity();
    }
    mask_ = cast(Tensor::from_vector<float>(device, {T, T}, m), dtype).detach();
    position_ids_ = arange(device, CTL_DTYPE_I64, T);
  }

  // Logits [B, T, vocab] for token ids [B, T] (i32 or i64), T <= context, on the device of
  // the last block (see place_blocks).
  Tensor logits(const Tensor& ids) const {
    const int64_t T = ids.dim(1);
    const Device first = wte.weight.device();
    Tensor positions = wpe(position_ids_.slice(0, 0, T));  // [T, C]
    Tensor x = wte(ids.device() == first ? ids : ids.to(first)) + positions;
    for (const Block& b : blocks) {
      const Device here = b.ln1.weight.device();
      // Activations cross to the next stage by a recorded move, so their gradients return.
      if (x.device() != here) x = x.transfer(here);
      const Tensor full_mask = autocast_ ? autocast_->weight(mask_on(here)) : mask_on(here);
      const Tensor mask = full_mask.slice(0, 0, T).slice(1, 0, T);
      x = x + b.attn(b.ln1(x), mask);
      x = x + b.mlp(b.ln2(x));
    }
    const Device last = ln_f.weight.device();
    if (x.device() != last) x = x.transfer(last);
    x = ln_f(x);
    MatmulOptions tied;
    tied.transpose_b = true;
    // The tied output weight lives with the embedding; a split model uses a recorded copy, so
    // both uses add to one gradient on the first device.
    const Tensor out_weight = wte.weight.device() == last ? wte.weight : wte.weight.transfer(last);
    if (!autocast_) return matmul(x, out_weight, {}, tied);
    return autocast_->output(matmul(autocast_->input(x), autocast_->weight(out_weight), {}, tied));
  }

  // Runs the products in `compute` (f32, bf16 or f16) from now on; the parameters stay as
  // they are (the master weights). With bf16 or f16, call new_step() whenever the weights
  // change (after each optimizer step, after loading them).
  void set_precision(const Runtime& runtime, ctl_dtype compute) {
    autocast_ = compute == CTL_DTYPE_F32 ? nullptr : std::make_shared<AutoCast>(runtime, compute);
    for (Block& b : blocks) {
      b.attn.set_autocast(autocast_);
      b.mlp.set_autocast(autocast_);
    }
  }
  ctl_dtype precision() const { return autocast_ ? autocast_->dtype() : wte.weight.dtype(); }
  void new_step() {
    if (autocast_) autocast_->new_step();
  }
  // The cast cache, or null under f32 (tests count its casts).
  const AutoCast* autocast() const { return autocast_.get(); }

  // Mean cross-entropy of the next-token predictions.
  Tensor loss(const Tensor& ids, const Tensor& targets) const {
    Tensor l = logits(ids);
    return cross_entropy(l, targets.device() == l.device() ? targets : targets.to(l.device()));
  }

  // A layer (pipeline) split: block i and its parameters move to block_devices[i]; the
  // embeddings stay with the first block, the final norm goes with the last. Call before
  // taking parameters() for an optimizer. The values do not change, so a split model
  // computes what the one-device model computes, moving activations between stages.
  void place_blocks(const std::vector<Device>& block_devices) {
    if (block_devices.size() != blocks.size()) {
      throw Error(CTL_STATUS_INVALID_ARGUMENT, "place_blocks: " + std::to_string(block_devices.size()) +
                                                   " devices for " + std::to_string(blocks.size()) + " blocks");
    }
    if (blocks.empty()) return;
    wte.to(block_devices.front());
    wpe.to(block_devices.front());
    position_ids_ =
        position_ids_.device() == block_devices.front() ? position_ids_ : position_ids_.to(block_devices.front());
    for (size_t i = 0; i < blocks.size(); ++i) {
      Block& b = blocks[i];
      b.ln1.to(block_devices[i]);
      b.attn.to(block_devices[i]);
      b.ln2.to(block_devices[i]);
      b.mlp.to(block_devices[i]);
      if (!mask_on_device(block_devices[i])) masks_.emplace_back(block_devices[i], mask_.to(block_devices[i]));
    }
    ln_f.to(block_devices.back());
  }

  NamedTensors parameters() const {
    NamedTensors out;
    wte.collect("wte", out);
    wpe.collect("wpe", out);
    for (size_t i = 0; i < blocks.size(); ++i) {
      const std::string p = "h." + std::to_string(i);
      blocks[i].ln1.collect(p + ".ln1", out);
      blocks[i].attn.collect(p + ".attn", out);
      blocks[i].ln2.collect(p + ".ln2", out);
      blocks[i].mlp.collect(p + ".mlp", out);
    }
    ln_f.collect("ln_f", out);
    return out;
  }
  const GPTConfig& config() const { return config_; }

  struct Block {
    LayerNorm ln1, ln2;
    CausalSelfAttention attn;
    MLP mlp;
  };
  Embedding wte, wpe;
  std::vector<Block> blocks;
  LayerNorm ln_f;

 private:
  const Tensor* mask_on_device(Device device) const {
    if (mask_.device() == device) return &mask_;
    for (const auto& [d, m] : masks_) {
      if (d == device) return &m;
    }
    return nullptr;
  }
  const Tensor& mask_on(Device device) const {
    const Tensor* m = mask_on_device(device);
    if (!m) throw Error(CTL_STATUS_INTERNAL, "GPT: no causal mask on " + device.name() + " (place_blocks first)");
    return *m;
  }

  GPTConfig config_;
  Tensor mask_;
  std::vector<std::pair<Device, Tensor>> masks_;  // copies of the mask on other stages' devices
  Tensor position_ids_;
  std::shared_ptr<AutoCast> autocast_;  // none: the products run in the parameters' dtype
};

}  // namespace catalyst::nn
