// checkpoint.hpp — the trainer's checkpoint: the weights, the AdamW moments and the run's
// counters in one safetensors file, and a loader that checks every field against the run
// that resumes it before it changes anything.
//
// A checkpoint is input: it may be truncated, edited by hand, written by another run or
// damaged on disk. Resuming from it must either continue exactly where the run stopped or
// refuse with a message that names the file, the field or tensor at fault and the value
// found, leaving the model, the optimizer, the sampler and the output folder as they were.
// So the loader first checks everything (every metadata field, and every tensor's presence,
// dtype, shape and values) and only then copies the tensors onto the device.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "catalyst/catalyst.hpp"
#include "catalyst/nn.hpp"
#include "catalyst/safetensors.hpp"
#include "catalyst/text_data.hpp"

namespace catalyst::gpt {

// What the run that resumes a checkpoint must share with the run that wrote it: the model's
// shape and precision, and what the data sampler's state depends on.
struct RunIdentity {
  nn::GPTConfig model;
  ctl_dtype dtype = CTL_DTYPE_F32;
  int64_t batch = 0;
  uint64_t seed = 0;
  uint64_t train_bytes = 0;           // the training split's size: the sampler draws windows from it
  ctl_dtype compute = CTL_DTYPE_F32;  // --precision: the products' dtype (f32, bf16 or f16)
};

// Where the run stands.
struct Progress {
  int64_t step = 0;             // steps done
  int64_t optimizer_steps = 0;  // AdamW's step count (one per training step)
  uint64_t sampler_state = 0;   // the training WindowSampler's state
  // f16's dynamic loss scaling (1, 0 and 0 otherwise): the scale, the good steps since it
  // last changed and the steps skipped (the optimizer did not step on those).
  double loss_scale = 1.0;
  int64_t loss_scale_good_steps = 0;
  int64_t skipped_steps = 0;
};

namespace detail {

inline std::string model_config_text(const nn::GPTConfig& c) {
  return "context=" + std::to_string(c.context) + " width=" + std::to_string(c.width) +
         " heads=" + std::to_string(c.heads) + " layers=" + std::to_string(c.layers);
}

inline const char* dtype_text(ctl_dtype dtype) {
  const auto* d = catalyst::detail::find_safetensors_dtype(dtype);
  return d ? d->name : "an unknown dtype";
}

inline std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// A whole decimal number with no sign, no spaces and no other characters, at most `limit`;
// false for anything else (so "-1", "1e3", " 5" and "" are refused, and nothing wraps).
inline bool parse_unsigned(const std::string& text, uint64_t limit, uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = value;
  return true;
}

// The inverse of an odd number modulo 2^64 (Newton's iteration doubles the correct low bits
// each round: 3, 6, 12, 24, 48, 96).
inline uint64_t inverse_mod_2_64(uint64_t odd) {
  uint64_t x = odd;  // correct to 3 bits, since odd * odd = 1 mod 8
  for (int i = 0; i < 5; ++i) x *= 2 - odd * x;
  return x;
}

// The first element of a floating-point tensor's bytes that is NaN or infinite (or, with
// `nonnegative`, below zero), described in words with its element index; empty if none.
// Read from the bits, so it works the same for every IEEE format the file may hold.
inline std::string first_bad_value(const unsigned char* bytes, size_t count, ctl_dtype dtype, bool nonnegative) {
  int size = 0, exponent_bits = 0;
  switch (dtype) {
    case CTL_DTYPE_F64:
      size = 8, exponent_bits = 11;
      break;
    case CTL_DTYPE_F32:
      size = 4, exponent_bits = 8;
      break;
    case CTL_DTYPE_F16:
      size = 2, exponent_bits = 5;
      break;
    case CTL_DTYPE_BF16:
      size = 2, exponent_bits = 8;
      break;
    default:
      return "";  // integers are always finite
  }
  const int bits = 8 * size;
  const uint64_t sign_mask = uint64_t{1} << (bits - 1);
  const uint64_t exponent_mask = ((uint64_t{1} << exponent_bits) - 1) << (bits - 1 - exponent_bits);
  const uint64_t magnitude_mask = sign_mask - 1;
  for (size_t i = 0; i < count; ++i) {
    uint64_t v = 0;
    std::memcpy(&v, bytes + i * static_cast<size_t>(size), static_cast<size_t>(size));  // little-endian host
    const bool negative = (v & sign_mask) != 0;
    std::string what;
    if ((v & exponent_mask) == exponent_mask) {
      what = (v & magnitude_mask) != exponent_mask ? "NaN" : negative ? "-inf" : "inf";
    } else if (nonnegative && negative && (v & magnitude_mask) != 0) {
      what = "a negative value";
      if (dtype == CTL_DTYPE_F32 || dtype == CTL_DTYPE_F64) {
        double d = 0;
        if (dtype == CTL_DTYPE_F32) {
          float f = 0;
          std::memcpy(&f, &v, 4);
          d = f;
        } else {
          std::memcpy(&d, &v, 8);
        }
        char text[40];
        std::snprintf(text, sizeof text, " (%.9g)", d);
        what += text;
      }
    }
    if (!what.empty()) return what + " at element " + std::to_string(i);
  }
  return "";
}

}  // namespace detail

// The checkpoint's metadata: the counters, and the identity a resuming run must match.
inline std::map<std::string, std::string> checkpoint_metadata(const RunIdentity& run, const Progress& progress) {
  char scale[40];
  std::snprintf(scale, sizeof scale, "%.17g", progress.loss_scale);  // round-trips exactly
  return {{"step", std::to_string(progress.step)},
          {"precision", nn::precision_name(run.compute)},
          {"loss_scale", scale},
          {"loss_scale_good_steps", std::to_string(progress.loss_scale_good_steps)},
          {"skipped_steps", std::to_string(progress.skipped_steps)},
          {"optimizer_steps", std::to_string(progress.optimizer_steps)},
          {"sampler_state", std::to_string(progress.sampler_state)},
          {"config", detail::model_config_text(run.model)},
          {"dtype", detail::dtype_text(run.dtype)},
          {"batch", std::to_string(run.batch)},
          {"seed", std::to_string(run.seed)},
          {"train_bytes", std::to_string(run.train_bytes)}};
}

// Writes the parameters and then the optimizer's moments, atomically (see safetensors.hpp).
inline void save_checkpoint(const std::string& path, const nn::NamedTensors& params, const nn::NamedTensors& moments,
                            const RunIdentity& run, const Progress& progress) {
  nn::NamedTensors all = params;
  all.insert(all.end(), moments.begin(), moments.end());
  save_safetensors(path, all, checkpoint_metadata(run, progress));
}

// Checks the checkpoint at `path` against the run (`params` and `moments` are the tensors it
// must fill, `max_step` the step the run trains to) and, only when every check passes,
// copies its tensors into them and returns its progress. Otherwise throws
// catalyst::Error(INVALID_ARGUMENT) naming the file, the field or tensor and the value, and
// has changed nothing. The moments named "adamw.v.*" are second moments: never negative.
inline Progress load_checkpoint(const Runtime& runtime, const std::string& path, const nn::NamedTensors& params,
                                const nn::NamedTensors& moments, const RunIdentity& run, int64_t max_step) {
  const SafetensorsFile file = load_safetensors(path);  // the format itself is checked there
  const std::string where = "checkpoint " + path + ": ";
  auto bad = [&](const std::string& message) { return Error(CTL_STATUS_INVALID_ARGUMENT, where + message); };
  auto field = [&](const std::string& key) -> const std::string& {
    auto it = file.metadata.find(key);
    if (it == file.metadata.end()) throw bad("the metadata field '" + key + "' is missing");
    return it->second;
  };
  auto number = [&](const std::string& key, uint64_t limit, const std::string& meaning) {
    const std::string& text = field(key);
    uint64_t value = 0;
    if (!detail::parse_unsigned(text, limit, &value)) {
      throw bad("the metadata field '" + key + "' is '" + text + "', not " + meaning);
    }
    return value;
  };

  // The run's identity first: a checkpoint of another model or run explains every later misfit.
  const std::string config = detail::model_config_text(run.model);
  if (field("config") != config) {
    throw bad("the metadata field 'config' is '" + field("config") + "', but this run's model is '" + config +
              "' (resume with the --context, --width, --heads and --layers it was trained with)");
  }
  if (field("dtype") != detail::dtype_text(run.dtype)) {
    throw bad("the metadata field 'dtype' is '" + field("dtype") + "', but this run's model is " +
              detail::dtype_text(run.dtype));
  }
  // Checkpoints from before --precision have no such field: they trained in f32.
  const auto precision_it = file.metadata.find("precision");
  const std::string precision = precision_it == file.metadata.end() ? "f32" : precision_it->second;
  if (precision != nn::precision_name(run.compute)) {
    throw bad("the metadata field 'precision' is '" + precision + "', but this run has --precision " +
              nn::precision_name(run.compute) + " (resume with the precision it was trained with)");
  }
  const uint64_t batch = number("batch", INT64_MAX, "a batch size");
  if (batch != static_cast<uint64_t>(run.batch)) {
    throw bad("the metadata field 'batch' is " + std::to_string(batch) + ", but this run has --batch " +
              std::to_string(run.batch) + " (resume with the batch size it was trained with)");
  }
  const uint64_t seed = number("seed", UINT64_MAX, "a seed (an unsigned 64-bit integer)");
  if (seed != run.seed) {
    throw bad("the metadata field 'seed' is " + std::to_string(seed) + ", but this run has --seed " +
              std::to_string(run.seed) + " (resume with the seed it was trained with)");
  }
  const uint64_t train_bytes = number("train_bytes", UINT64_MAX, "a byte count");
  if (train_bytes != run.train_bytes) {
    throw bad("the metadata field 'train_bytes' is " + std::to_string(train_bytes) + ", but this run's --data has " +
              std::to_string(run.train_bytes) + " bytes of training text (resume on the text it was trained on)");
  }

  // The counters.
  Progress progress;
  progress.step = static_cast<int64_t>(
      number("step", INT64_MAX, "a step count (a whole number from 0 to --steps " + std::to_string(max_step) + ")"));
  if (progress.step > max_step) {
    throw bad("the metadata field 'step' is " + std::to_string(progress.step) + ", past --steps " +
              std::to_string(max_step) + " (pass a larger --steps to train further)");
  }
  // Loss scaling: absent before --precision (f32: scale 1, nothing skipped).
  const bool scaled = file.metadata.count("loss_scale") != 0;
  if (scaled) {
    const std::string& text = field("loss_scale");
    char* end = nullptr;
    progress.loss_scale = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(progress.loss_scale) || progress.loss_scale <= 0) {
      throw bad("the metadata field 'loss_scale' is '" + text + "', not a positive finite number");
    }
    progress.loss_scale_good_steps = static_cast<int64_t>(number("loss_scale_good_steps", INT64_MAX, "a step count"));
    progress.skipped_steps = static_cast<int64_t>(
        number("skipped_steps", static_cast<uint64_t>(progress.step), "a step count (at most 'step')"));
  }
  if (run.compute != CTL_DTYPE_F16 && (progress.loss_scale != 1.0 || progress.skipped_steps != 0)) {
    throw bad("the metadata fields 'loss_scale' and 'skipped_steps' are " + field("loss_scale") + " and " +
              field("skipped_steps") + ", but only f16 scales the loss (1 and 0 expected)");
  }
  progress.optimizer_steps = static_cast<int64_t>(number("optimizer_steps", INT64_MAX, "a step count"));
  if (progress.optimizer_steps != progress.step - progress.skipped_steps) {
    throw bad("the metadata field 'optimizer_steps' is " + std::to_string(progress.optimizer_steps) +
              ", but 'step' is " + std::to_string(progress.step) + " and 'skipped_steps' " +
              std::to_string(progress.skipped_steps) +
              " (the trainer takes one optimizer step per step that was not skipped)");
  }
  // The sampler's state is a Weyl counter, seed + draws * increment (mod 2^64), so the number
  // of windows it has drawn can be read back from it: `step` batches of `batch` windows, plus
  // the rare redraw that keeps draws unbiased (each has a chance below train_bytes / 2^64).
  progress.sampler_state = number("sampler_state", UINT64_MAX, "a sampler state (an unsigned 64-bit integer)");
  {
    constexpr uint64_t kIncrement = 0x9E3779B97F4A7C15ull;  // splitmix64's, in text_data.hpp
    const uint64_t draws = (progress.sampler_state - seed) * detail::inverse_mod_2_64(kIncrement);
    const uint64_t needed = static_cast<uint64_t>(progress.step) * batch;
    if (draws < needed || draws - needed > needed / 1024 + 16) {
      throw bad("the metadata field 'sampler_state' is " + std::to_string(progress.sampler_state) +
                ", which is not where the data sampler stands after " + std::to_string(progress.step) +
                " steps of batch " + std::to_string(batch) + " from seed " + std::to_string(seed) + " (" +
                std::to_string(needed) + " window draws; this state is " + std::to_string(draws) +
                " draws from the seed)");
    }
  }

  // Every tensor the run needs, with the model's dtype and shape and finite values; and no
  // tensor the run does not know.
  std::set<std::string> expected;
  auto check = [&](const std::string& name, const Tensor& target, const char* role) {
    expected.insert(name);
    if (!file.contains(name)) throw bad("the tensor '" + name + "' (" + role + ") is missing");
    const SafetensorsEntry& e = file.entry(name);
    if (e.dtype != target.dtype()) {
      throw bad("the tensor '" + name + "' is " + detail::dtype_text(e.dtype) + ", but the model's " + role + " is " +
                detail::dtype_text(target.dtype()));
    }
    if (e.shape != target.shape()) {
      throw bad("the tensor '" + name + "' has the shape " + detail::shape_text(e.shape) + ", but the model's " + role +
                " has " + detail::shape_text(target.shape()));
    }
    const bool second_moment = name.rfind("adamw.v.", 0) == 0;
    const std::string wrong = detail::first_bad_value(file.data.data() + e.begin, static_cast<size_t>(target.numel()),
                                                      e.dtype, second_moment);
    if (!wrong.empty()) {
      throw bad("the tensor '" + name + "' holds " + wrong +
                (second_moment ? " (a second moment is finite and never negative)" : " (it must be finite)"));
    }
  };
  for (const auto& [name, p] : params) check(name, p, "parameter");
  for (const auto& [name, m] : moments) {
    check(name, m, name.rfind("adamw.v.", 0) == 0 ? "AdamW second moment" : "AdamW first moment");
  }
  for (const std::string& name : file.names()) {
    if (!expected.count(name)) throw bad("the tensor '" + name + "' is not part of this model or its optimizer");
  }

  // Everything checked: now, and only now, the tensors change.
  NoGrad no_grad(runtime);
  for (const auto* group : {&params, &moments}) {
    for (const auto& [name, t] : *group) copy_(t, file.tensor(name, t.device()));
  }
  return progress;
}

}  // namespace catalyst::gpt
